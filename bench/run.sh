#!/usr/bin/env bash
# bench/run.sh [BUILD_DIR]: every benchmark of issue 8 in one command (bench/README.md).
#
# For each workload: generate (or fetch) its data, cached under the scratch directory;
# build the hand-written C baseline (gcc -O3 -march=native) and compile the .orn program
# (orionc -march=native); run C, .orn at mpirun -n 1 and at -n 2, REPS times, interleaved;
# print seconds per iteration (best of REPS: load on the machine only ever slows a run),
# the ratios .orn -n 1 / C and -n 1 / -n 2 against the issue's targets, peak memory (max
# RSS per rank, from /usr/bin/time) and a cross-check of the result figure each program
# prints (.orn at both rank counts against C, to the workload's tolerance).
#
# Environment:
#   WORKLOADS  default "mf_row mf_col mf_scalar pagerank stencil kmeans slr lda"
#   REPS       runs of each program (default 3)
#   QUICK=1    tiny sizes, for a smoke test (bench/CMakeLists.txt); no LIBMF, no network
#   CHECK=1    exit 1 when a row FAILED or a cross-check disagrees (QUICK sets it)
#   LIBMF=0    skip the LIBMF peer (default: run it with the MF workloads unless QUICK)
#   LIBLINEAR=0  skip the LIBLINEAR peer (default: run it with the slr workload unless
#              QUICK): L2-regularized logistic regression, -s 0 and -s 7, C = LIBLINEAR_C
#              (1, its default); slr.orn runs LIBLINEAR_EPOCHS (40) epochs at -n 1 and -n 2
#              with per-epoch test accuracy for the time-to-LIBLINEAR's-accuracy comparison
#   LIBMF_FORM, LIBMF_EPOCHS, LIBMF_ORN_ARGS  the .orn form (default mf_row), epochs (20)
#              and params (a tuned step schedule) run at -n 2 with per-epoch test RMSE for
#              the time-to-LIBMF's-RMSE comparison
#   ORN_BENCH_DIR  scratch directory (default BUILD_DIR/bench-run); MPIRUN (mpirun); CC (gcc)
#   Sizes (full / QUICK): USERS ITEMS RATINGS K MF_EPOCHS (100000 20000 10000000 100 5 /
#   2000 500 60000 16 15); PR_NODES PR_DEG PR_ITERS (1000000 10 10 / 20000 10 10);
#   ST_N ST_ITERS (4096 10 / 256 20); KM_N KM_D KM_K KM_ITERS (1000000 16 16 10 /
#   20000 16 16 10); SLR_N SLR_F SLR_Z SLR_EPOCHS (1000000 100000 20 5 / 20000 5000 20 5);
#   LDA_K LDA_ITERS (100 5 / 20 10), LDA_CORPUS (a docword file; default: Debian package
#   descriptions via bench/lda/fetch_corpus.sh, else the KJV verses via
#   scripts/fetch-data.sh; QUICK: a synthetic corpus).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/common/interleave.sh
. "$ROOT/bench/common/interleave.sh"
BUILD=$(cd "${1:-$ROOT/build/release}" && pwd) || exit 2
ORIONC=$BUILD/tools/orionc
[ -x "$ORIONC" ] || { echo "run.sh: no orionc in $BUILD (build Orion first)" >&2; exit 2; }
QUICK=${QUICK:-0}
CHECK=${CHECK:-$QUICK}
REPS=${REPS:-3}
MPIRUN=${MPIRUN:-mpirun}
CC=${CC:-gcc}
WORKLOADS=${WORKLOADS:-mf_row mf_col mf_scalar pagerank stencil kmeans slr lda}
if [ "$QUICK" = 1 ]; then LIBMF=${LIBMF:-0}; else LIBMF=${LIBMF:-1}; fi
if [ "$QUICK" = 1 ]; then LIBLINEAR=${LIBLINEAR:-0}; else LIBLINEAR=${LIBLINEAR:-1}; fi
LIBLINEAR_C=${LIBLINEAR_C:-1}
LIBLINEAR_EPOCHS=${LIBLINEAR_EPOCHS:-40}
LIBMF_FORM=${LIBMF_FORM:-mf_row}
LIBMF_EPOCHS=${LIBMF_EPOCHS:-20}
# plain SGD's step schedule tuned on the benchmark data for the time-to-RMSE comparison (the
# 5-epoch speed runs keep the programs' defaults, which the cross-checks against C use)
LIBMF_ORN_ARGS=${LIBMF_ORN_ARGS:---step=0.02 --decay=0.92 --init=0.05}
WORK=${ORN_BENCH_DIR:-$BUILD/bench-run}
if [ "$QUICK" = 1 ]; then
  USERS=${USERS:-2000} ITEMS=${ITEMS:-500} RATINGS=${RATINGS:-60000} K=${K:-16}
  MF_EPOCHS=${MF_EPOCHS:-15}
  PR_NODES=${PR_NODES:-20000} PR_DEG=${PR_DEG:-10} PR_ITERS=${PR_ITERS:-10}
  ST_N=${ST_N:-256} ST_ITERS=${ST_ITERS:-20}
  KM_N=${KM_N:-20000} KM_D=${KM_D:-16} KM_K=${KM_K:-16} KM_ITERS=${KM_ITERS:-10}
  SLR_N=${SLR_N:-20000} SLR_F=${SLR_F:-5000} SLR_Z=${SLR_Z:-20} SLR_EPOCHS=${SLR_EPOCHS:-5}
  LDA_K=${LDA_K:-20} LDA_ITERS=${LDA_ITERS:-10}
  WORK=$WORK-quick
else
  USERS=${USERS:-100000} ITEMS=${ITEMS:-20000} RATINGS=${RATINGS:-10000000} K=${K:-100}
  MF_EPOCHS=${MF_EPOCHS:-5}
  PR_NODES=${PR_NODES:-1000000} PR_DEG=${PR_DEG:-10} PR_ITERS=${PR_ITERS:-10}
  ST_N=${ST_N:-4096} ST_ITERS=${ST_ITERS:-10}
  KM_N=${KM_N:-1000000} KM_D=${KM_D:-16} KM_K=${KM_K:-16} KM_ITERS=${KM_ITERS:-10}
  SLR_N=${SLR_N:-1000000} SLR_F=${SLR_F:-100000} SLR_Z=${SLR_Z:-20} SLR_EPOCHS=${SLR_EPOCHS:-5}
  LDA_K=${LDA_K:-100} LDA_ITERS=${LDA_ITERS:-5}
fi
DATA=$WORK/data BIN=$WORK/bin LOGS=$WORK/logs RES=$WORK/results
mkdir -p "$DATA" "$BIN" "$LOGS"
rm -rf "$RES"; mkdir -p "$RES"
say() { echo "bench: $*" >&2; }

# ---- peak memory: /usr/bin/time -f %M (kB), per rank --------------------------------
TIME=/usr/bin/time
if ! [ -x "$TIME" ]; then
  say "installing Debian's 'time' package for peak-memory figures"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq time >/dev/null 2>&1 || true
fi
[ -x "$TIME" ] || { say "no /usr/bin/time: peak memory is not reported"; TIME=""; }
# rss PREFIX CMD...: run CMD, write its max RSS (kB) to PREFIX.<rank> (the MPI rank from
# the launcher's environment: MPICH/Hydra PMI_RANK, Open MPI OMPI_COMM_WORLD_RANK).
RSSWRAP=$BIN/rsswrap.sh
cat > "$RSSWRAP" <<EOF
#!/bin/sh
p=\$1; shift
r=\${PMI_RANK:-\${OMPI_COMM_WORLD_RANK:-\${PMIX_RANK:-0}}}
if [ -n "$TIME" ]; then exec $TIME -f %M -o "\$p.\$r" "\$@"; else exec "\$@"; fi
EOF
chmod +x "$RSSWRAP"

# ---- data, baselines and .orn programs ------------------------------------------------
CFLAGS="-O3 -march=native -ffp-contract=off -Wall"  # the .orn arithmetic: IEEE, no FMA contraction
declare -A DESC C_CMD ORN_ARGS ORN_PROG TOL FAIL
build_c() { # build_c NAME SOURCE: the baseline binary $BIN/NAME
  "$CC" $CFLAGS -o "$BIN/$1" "$2" -lm 2>"$LOGS/$1.build" ||
    { say "cannot build $2: $(head -3 "$LOGS/$1.build")"; return 1; }
}
build_gen() { [ -x "$BIN/$1" ] || "$CC" -O2 -o "$BIN/$1" "$2" -lm; }
compile_orn() { # compile_orn WORKLOAD SOURCE
  if "$ORIONC" -march=native "$2" -o "$BIN/$1" >"$LOGS/$1.orionc" 2>&1; then
    ORN_PROG[$1]=$BIN/$1
  else
    FAIL[$1]="orionc exit $?: $(grep -m1 -E 'error|internal' "$LOGS/$1.orionc" || tail -1 "$LOGS/$1.orionc")"
    say "$1: ${FAIL[$1]}"
  fi
}

prep_mf() {
  build_gen gen_ratings "$HERE/sgd_mf/gen_ratings.c"
  MFDATA=$DATA/ratings_${USERS}_${ITEMS}_${RATINGS}
  if [ ! -s "$MFDATA.test" ]; then
    say "generating $RATINGS ratings ($USERS users x $ITEMS items, rank-10 truth plus noise)"
    "$BIN/gen_ratings" "$USERS" "$ITEMS" "$RATINGS" 10 1 "$MFDATA.train.tmp" "$MFDATA.test.tmp" &&
      mv "$MFDATA.train.tmp" "$MFDATA.train" && mv "$MFDATA.test.tmp" "$MFDATA.test"
  fi
  [ "$BIN/mf_ref" -nt "$HERE/mf/mf_ref.c" ] || build_c mf_ref "$HERE/mf/mf_ref.c"
}
prep() {
  local w=$1
  case $w in
    mf_row|mf_col|mf_scalar)
      prep_mf
      local form=${w#mf_}
      DESC[$w]="SGD MF, ${form} form, $RATINGS ratings (90% train), $USERS users x $ITEMS items, K=$K, $MF_EPOCHS epochs"
      C_CMD[$w]="$BIN/mf_ref $MFDATA.train $MFDATA.test $MF_EPOCHS $K"
      ORN_ARGS[$w]="--train=$MFDATA.train --test=$MFDATA.test --epochs=$MF_EPOCHS --rank=$K"
      TOL[$w]=0.03
      compile_orn "$w" "$HERE/mf/$w.orn" ;;
    pagerank)
      build_gen gen_graph "$HERE/pagerank/gen_graph.c"
      local g=$DATA/graph_${PR_NODES}_${PR_DEG}.txt
      if [ ! -s "$g" ]; then
        say "generating a power-law graph, $PR_NODES nodes, average out-degree $PR_DEG"
        "$BIN/gen_graph" "$PR_NODES" "$PR_DEG" 1 "$g.tmp" && mv "$g.tmp" "$g"
      fi
      build_c pagerank_ref "$HERE/pagerank/pagerank_ref.c"
      DESC[$w]="PageRank, $PR_NODES nodes, ~$((PR_NODES * PR_DEG)) edges (power law), $PR_ITERS iterations"
      C_CMD[$w]="$BIN/pagerank_ref $g $PR_ITERS"
      ORN_ARGS[$w]="--graph=$g --iters=$PR_ITERS"
      TOL[$w]=1e-6
      compile_orn "$w" "$HERE/pagerank/pagerank.orn" ;;
    stencil)
      build_c jacobi_ref "$HERE/stencil/jacobi_ref.c"
      DESC[$w]="5-point Jacobi, $ST_N x $ST_N f64, 1 iteration = 2 sweeps, $ST_ITERS iterations"
      C_CMD[$w]="$BIN/jacobi_ref $ST_N $ST_ITERS"
      ORN_ARGS[$w]="--n=$ST_N --iters=$ST_ITERS"
      TOL[$w]=1e-9
      compile_orn "$w" "$HERE/stencil/jacobi.orn" ;;
    kmeans)
      build_gen gen_points "$HERE/kmeans/gen_points.c"
      local p=$DATA/points_${KM_N}_${KM_D}.bin
      if [ ! -s "$p" ]; then
        say "generating $KM_N points in $KM_D dimensions"
        "$BIN/gen_points" "$KM_N" "$KM_D" 16 1 "$p.tmp" && mv "$p.tmp" "$p"
      fi
      build_c kmeans_ref "$HERE/kmeans/kmeans_ref.c"
      DESC[$w]="k-means, $KM_N points x $KM_D dims f32, k=$KM_K, $KM_ITERS iterations"
      C_CMD[$w]="$BIN/kmeans_ref $p $KM_K $KM_ITERS"
      ORN_ARGS[$w]="--points=$p --k=$KM_K --iters=$KM_ITERS"
      TOL[$w]=1e-4
      compile_orn "$w" "$HERE/kmeans/kmeans.orn" ;;
    slr)
      build_gen gen_libsvm "$HERE/slr/gen_libsvm.c"
      local s=$DATA/slr_${SLR_N}_${SLR_F}_${SLR_Z}
      if [ ! -s "$s.test" ]; then
        say "generating $SLR_N samples x $SLR_F features, $SLR_Z non-zeros per row"
        "$BIN/gen_libsvm" "$SLR_N" "$SLR_F" "$SLR_Z" 1 "$s.train.tmp" "$s.test.tmp" &&
          mv "$s.train.tmp" "$s.train" && mv "$s.test.tmp" "$s.test"
      fi
      build_c slr_ref "$HERE/slr/slr_ref.c"
      DESC[$w]="SLR, $SLR_N samples x $SLR_F features, $SLR_Z nnz/row, $SLR_EPOCHS epochs"
      C_CMD[$w]="$BIN/slr_ref $s.train $s.test $SLR_EPOCHS"
      SLRDATA=$s
      ORN_ARGS[$w]="--train=$s.train --test=$s.test --epochs=$SLR_EPOCHS"
      TOL[$w]=0.01
      compile_orn "$w" "$HERE/slr/slr.orn" ;;
    lda)
      local c=${LDA_CORPUS:-}
      if [ -z "$c" ] && [ "$QUICK" = 1 ]; then
        build_gen gen_corpus "$HERE/lda/gen_corpus.c"
        c=$DATA/synthetic.docword
        [ -s "$c" ] || "$BIN/gen_corpus" 500 1000 10 50 1 "$c"
      elif [ -z "$c" ]; then
        c=$DATA/debdesc.docword
        if [ ! -s "$c" ]; then
          say "fetching the LDA corpus (Debian package descriptions)"
          "$HERE/lda/fetch_corpus.sh" "$c" || {
            say "Debian descriptions unavailable; using the KJV verses (scripts/fetch-data.sh)"
            c=$DATA/kjv_verse.docword
            [ -s "$c" ] || ORN_DATA=$DATA "$ROOT/scripts/fetch-data.sh" kjv >&2; }
        fi
      fi
      if [ ! -s "$c" ]; then FAIL[$w]="no corpus ($c)"; return; fi
      build_c lda_ref "$HERE/lda/lda_ref.c"
      DESC[$w]="LDA collapsed Gibbs, K=$LDA_K, $(basename "$c"): $(awk '{t += $3} END {print t}' "$c") tokens, $LDA_ITERS iterations"
      C_CMD[$w]="$BIN/lda_ref $c $LDA_K $LDA_ITERS"
      ORN_ARGS[$w]="--data=$c --topics=$LDA_K --iters=$LDA_ITERS"
      TOL[$w]=0.03
      compile_orn "$w" "$HERE/lda/lda.orn" ;;
    *) say "unknown workload '$w' (known: mf_row mf_col mf_scalar pagerank stencil kmeans slr lda)"
       exit 2 ;;
  esac
}

# ---- running --------------------------------------------------------------------------
# run_one WORKLOAD KIND NP CMD...: append "secs figure rss_kB" to $RES/WORKLOAD.KIND, or
# record why it failed in $RES/WORKLOAD.KIND.fail. NP 0 runs CMD directly (the C baseline).
run_one() {
  local w=$1 kind=$2 np=$3; shift 3
  local log=$LOGS/$w.$kind.log rp=$LOGS/$w.$kind.rss
  rm -f "$rp".*
  if [ "$np" = 0 ]; then "$RSSWRAP" "$rp" "$@" >"$log" 2>&1
  else "$MPIRUN" -n "$np" "$RSSWRAP" "$rp" "$@" >"$log" 2>&1
  fi
  local rc=$?
  local line; line=$(grep -m1 '^bench: ' "$log")
  if [ "$rc" != 0 ] || [ -z "$line" ]; then
    echo "exit $rc: $(grep -v '^Command exited' "$log" | grep -m1 -iE 'error|orion:|abort|signal' ||
      tail -1 "$log")" >"$RES/$w.$kind.fail"
    return
  fi
  local rss; rss=$(cat "$rp".* 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $1 > m { m = $1 } END { print m + 0 }')
  echo "$line" | awk -v rss="$rss" '{ print $2, $5, rss }' >>"$RES/$w.$kind"
}

interleave $WORKLOADS

# ---- report ---------------------------------------------------------------------------
mb() { [ -n "$1" ] && [ "$1" != 0 ] && awk -v k="$1" 'BEGIN { printf "%.0f MB", k / 1024 }' || echo "n/a"; }
bad=0
SUMMARY=$RES/summary
printf '%-10s %9s %9s %9s %7s %7s %8s %8s %8s  %s\n' workload "C s/it" "n1 s/it" "n2 s/it" \
  "n1/C" "n1/n2" "RSS C" "RSS n1" "RSS n2" check >"$SUMMARY"
echo
echo "Results: seconds per iteration, best of $REPS runs (other load only ever slows a run);"
echo "peak memory = max RSS of one process (per rank for .orn)."
for w in $WORKLOADS; do
  echo
  echo "== $w: ${DESC[$w]:-}"
  if [ -n "${FAIL[$w]:-}" ]; then
    echo "   FAILED (${FAIL[$w]})"
    printf '%-10s FAILED (%s)\n' "$w" "${FAIL[$w]}" >>"$SUMMARY"
    bad=1
    continue
  fi
  c=$(best "$RES/$w.c") n1=$(best "$RES/$w.n1") n2=$(best "$RES/$w.n2")
  row_c="-" row_1="-" row_2="-" rc="-" r1="-" r2="-" ratio1="-" ratio2="-" check=""
  show() { # show LABEL BEST KIND
    if [ -n "$2" ]; then
      printf '   %-18s %10.4f s/iter   peak RSS %8s   %s %s\n' "$1" "$(col "$2" 1)" \
        "$(mb "$(col "$2" 3)")" "$FIG" "$(col "$2" 2)"
    else
      echo "   $1  FAILED ($(cat "$RES/$w.$3.fail" 2>/dev/null || echo "no run"))"
    fi
  }
  FIG=$(grep -m1 '^bench: ' "$LOGS/$w.c.log" 2>/dev/null | awk '{ print $4 }')
  show "C baseline" "$c" c
  show ".orn mpirun -n 1" "$n1" n1
  show ".orn mpirun -n 2" "$n2" n2
  tgt1=1.15 tgt2=1.6
  case $w in mf_*) tgt1=1.10 tgt2=1.8 ;; esac
  if [ -n "$c" ] && [ -n "$n1" ]; then
    ratio1=$(awk -v a="$(col "$n1" 1)" -v b="$(col "$c" 1)" 'BEGIN { printf "%.2f", a / b }')
    echo "   .orn -n 1 / C       $ratio1   (target <= $tgt1)"
  fi
  if [ -n "$n1" ] && [ -n "$n2" ]; then
    ratio2=$(awk -v a="$(col "$n1" 1)" -v b="$(col "$n2" 1)" 'BEGIN { printf "%.2f", a / b }')
    echo "   .orn -n 1 / -n 2    $ratio2   (target >= $tgt2)"
  fi
  for kind in n1 n2; do
    b=$([ $kind = n1 ] && echo "$n1" || echo "$n2")
    if [ -z "$c" ] || [ -z "$b" ]; then check="${check}$kind:FAILED "; bad=1; continue; fi
    if awk -v a="$(col "$b" 2)" -v c="$(col "$c" 2)" -v t="${TOL[$w]}" \
         'BEGIN { d = a - c; if (d < 0) d = -d; s = c < 0 ? -c : c; exit !(d <= t * s) }'; then
      check="${check}$kind:ok "
    else
      check="${check}$kind:DIFFERS "; bad=1
    fi
  done
  echo "   cross-check of $FIG against C (relative tolerance ${TOL[$w]}): $check"
  printf '%-10s %9s %9s %9s %7s %7s %8s %8s %8s  %s\n' "$w" \
    "$([ -n "$c" ] && col "$c" 1 || echo FAILED)" "$([ -n "$n1" ] && col "$n1" 1 || echo FAILED)" \
    "$([ -n "$n2" ] && col "$n2" 1 || echo FAILED)" "$ratio1" "$ratio2" \
    "$(mb "$([ -n "$c" ] && col "$c" 3)")" "$(mb "$([ -n "$n1" ] && col "$n1" 3)")" \
    "$(mb "$([ -n "$n2" ] && col "$n2" 3)")" "$check" >>"$SUMMARY"
done

# ---- LIBMF, the MF peer ---------------------------------------------------------------
libmf() {
  local dir=$WORK/libmf
  if [ ! -x "$BIN/libmf_driver" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    local py; py=$(command -v python3 || command -v python) || { echo "no python/pip"; return 1; }
    "$py" -m pip download --no-binary :all: --no-deps libmf -d "$dir" >"$LOGS/libmf.pip" 2>&1 ||
      { echo "pip download failed: $(tail -1 "$LOGS/libmf.pip")"; return 1; }
    tar -xzf "$dir"/libmf-*.tar.gz -C "$dir" 2>/dev/null || { echo "cannot unpack the sdist"; return 1; }
    local src; src=$(dirname "$(find "$dir" -name mf.cpp | head -1)")
    [ -f "$src/mf.h" ] || { echo "the sdist has no mf.cpp/mf.h"; return 1; }
    # as LIBMF's own Makefile builds it (-O3, OpenMP, AVX), for this machine
    local simd=-DUSESSE
    grep -q avx /proc/cpuinfo && simd=-DUSEAVX
    g++ -O3 -march=native -pthread -fopenmp $simd -std=c++11 -I"$src" -o "$BIN/libmf_driver" \
      "$HERE/mf/libmf_driver.cpp" "$src/mf.cpp" >"$LOGS/libmf.build" 2>&1 ||
      { echo "build failed: $(grep -m1 error "$LOGS/libmf.build")"; return 1; }
  fi
  local t
  for t in 1 2; do
    rm -f "$RES/libmf.$t"
    for _ in $(seq 1 "$REPS"); do
      run_one libmf "$t" 0 "$BIN/libmf_driver" "$MFDATA.train" "$MFDATA.test" "$K" "$t" 20
    done
    [ -s "$RES/libmf.$t" ] || { echo "run failed: $(cat "$RES/libmf.$t.fail" 2>/dev/null)"; return 1; }
  done
  return 0
}
case " $WORKLOADS " in *" mf_"*)
  if [ "$LIBMF" = 1 ]; then
    echo
    echo "== LIBMF (PyPI libmf sdist, C++ -O3 -march=native -fopenmp, AVX), K=$K, 20 iterations"
    if why=$(libmf); then
      l1=$(best "$RES/libmf.1") l2=$(best "$RES/libmf.2")
      printf '   %-18s %10.4f s/iter   peak RSS %8s   test_rmse %s\n' "1 thread" "$(col "$l1" 1)" \
        "$(mb "$(col "$l1" 3)")" "$(col "$l1" 2)"
      printf '   %-18s %10.4f s/iter   peak RSS %8s   test_rmse %s\n' "2 threads" "$(col "$l2" 1)" \
        "$(mb "$(col "$l2" 3)")" "$(col "$l2" 2)"
      target=$(col "$l2" 2)
      l2tot=$(awk -v s="$(col "$l2" 1)" 'BEGIN { printf "%.3f", 20 * s }')
      if [ -n "${ORN_PROG[$LIBMF_FORM]:-}" ]; then
        log=$LOGS/libmf.orn.log
        "$MPIRUN" -n 2 "${ORN_PROG[$LIBMF_FORM]}" ${ORN_ARGS[$LIBMF_FORM]} --epochs="$LIBMF_EPOCHS" \
          --eval=true $LIBMF_ORN_ARGS >"$log" 2>&1
        reach=$(awk -v t="$target" '/test rmse/ { for (i = 1; i <= NF; i++) {
                  if ($i == "rmse" && $(i - 1) == "test") r = $(i + 1); if ($i == "cumulative") c = $(i + 1) }
                  if (r + 0 <= t + 0) { printf "%.3f s (epoch %d, test rmse %s)", c, $2, r; found = 1; exit } }
                  END { if (!found) printf "not reached in %s epochs (last test rmse %s)", '"$LIBMF_EPOCHS"', r }' "$log")
        echo "   time to LIBMF's 20-iteration test RMSE $target at 2 threads: LIBMF $l2tot s;"
        echo "   $LIBMF_FORM.orn at -n 2 (training time, evaluation excluded): $reach"
      else
        echo "   $LIBMF_FORM.orn is not available for the time-to-RMSE comparison"
      fi
    else
      echo "   LIBMF: unavailable ($why)"
    fi
  fi ;;
esac

# ---- LIBLINEAR, the logistic-regression peer ---------------------------------------------
liblinear() {
  local dir=$WORK/liblinear
  if [ ! -x "$BIN/liblinear_driver" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    local py; py=$(command -v python3 || command -v python) || { echo "no python/pip"; return 1; }
    "$py" -m pip download --no-binary :all: --no-deps liblinear-official -d "$dir" \
      >"$LOGS/liblinear.pip" 2>&1 ||
      { echo "pip download failed: $(tail -1 "$LOGS/liblinear.pip")"; return 1; }
    tar -xzf "$dir"/liblinear*.tar.gz -C "$dir" 2>/dev/null || { echo "cannot unpack the sdist"; return 1; }
    local src; src=$(dirname "$(find "$dir" -name linear.cpp | head -1)")
    [ -f "$src/linear.h" ] && [ -f "$src/newton.cpp" ] || { echo "the sdist has no linear.cpp/newton.cpp"; return 1; }
    # LIBLINEAR's own Makefile: -O3 (g++ and its bundled BLAS); here also for this machine
    g++ -O3 -march=native -std=c++11 -I"$src" -o "$BIN/liblinear_driver" \
      "$HERE/slr/liblinear_driver.cpp" "$src/linear.cpp" "$src/newton.cpp" "$src"/blas/*.c \
      >"$LOGS/liblinear.build" 2>&1 ||
      { echo "build failed: $(grep -m1 error "$LOGS/liblinear.build")"; return 1; }
  fi
  local s
  for s in 0 7; do
    rm -f "$RES/liblinear.$s"
    for _ in $(seq 1 "$REPS"); do
      run_one liblinear "$s" 0 "$BIN/liblinear_driver" "$SLRDATA.train" "$SLRDATA.test" "$s" "$LIBLINEAR_C"
    done
    [ -s "$RES/liblinear.$s" ] || { echo "run failed: $(cat "$RES/liblinear.$s.fail" 2>/dev/null)"; return 1; }
  done
  return 0
}
case " $WORKLOADS " in *" slr "*)
  if [ "$LIBLINEAR" = 1 ] && [ -n "${SLRDATA:-}" ]; then
    echo
    echo "== LIBLINEAR (PyPI liblinear-official sdist, C++ -O3 -march=native, one thread):"
    echo "   L2-regularized logistic regression, C = $LIBLINEAR_C, no bias, on the slr data"
    if why=$(liblinear); then
      b0=$(best "$RES/liblinear.0") b7=$(best "$RES/liblinear.7")
      printf '   %-24s train %8.3f s   peak RSS %8s   test_accuracy %s\n' "-s 0 (primal Newton)" \
        "$(col "$b0" 1)" "$(mb "$(col "$b0" 3)")" "$(col "$b0" 2)"
      printf '   %-24s train %8.3f s   peak RSS %8s   test_accuracy %s\n' "-s 7 (dual CD)" \
        "$(col "$b7" 1)" "$(mb "$(col "$b7" 3)")" "$(col "$b7" 2)"
      # the target: the faster solver's accuracy, and its time
      target=$(col "$b0" 2) ltime=$(col "$b0" 1) lname="-s 0"
      if awk -v a="$(col "$b7" 1)" -v b="$ltime" 'BEGIN { exit !(a < b) }'; then
        target=$(col "$b7" 2) ltime=$(col "$b7" 1) lname="-s 7"
      fi
      echo "   time to LIBLINEAR's test accuracy $target ($lname, $ltime s); slr.orn (SGD,"
      echo "   its defaults; training time, evaluation excluded):"
      if [ -n "${ORN_PROG[slr]:-}" ]; then
        for np in 1 2; do
          log=$LOGS/liblinear.orn.n$np.log
          "$MPIRUN" -n "$np" "${ORN_PROG[slr]}" ${ORN_ARGS[slr]} --epochs="$LIBLINEAR_EPOCHS" \
            --curve=true >"$log" 2>&1
          reach=$(awk -v t="$target" '$1 == "curve" { a = $5; if (a + 0 >= t + 0) {
                    printf "%.3f s (epoch %d, test accuracy %s)", $3, $2, a; found = 1; exit } }
                    END { if (!found) printf "not reached in %s epochs (last test accuracy %s)", '"$LIBLINEAR_EPOCHS"', a }' "$log")
          echo "     -n $np: $reach"
        done
      else
        echo "     slr.orn is not available"
      fi
    else
      echo "   LIBLINEAR: unavailable ($why)"
    fi
  fi ;;
esac

echo
echo "Summary (s/iter best of $REPS; targets: n1/C <= 1.15 (MF 1.10), n1/n2 >= 1.6 (MF 1.8)):"
cat "$SUMMARY"
echo "(logs: $LOGS)"
if [ "$CHECK" = 1 ] && [ "$bad" = 1 ]; then exit 1; fi
exit 0
