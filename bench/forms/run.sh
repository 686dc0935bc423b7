#!/usr/bin/env bash
# bench/forms/run.sh [BUILD_DIR]: the forms corpus of issue 24 in one command
# (bench/README.md, "The forms corpus"): each algorithm written in the ways people write it,
# each form against a hand-written C baseline.
#
# For each form: generate its data (cached under the scratch directory), build the C
# baseline (gcc -O3 -march=native -ffp-contract=off -fopenmp-simd; arrays of 2 MiB or more
# on transparent huge pages, bench/common/bench.h) and compile the .orn
# program (orionc -march=native); run C, .orn at mpirun -n 1 and at -n 2, REPS times,
# interleaved; print seconds per iteration (best of REPS: load on the machine only ever
# slows a run), the ratios .orn -n 1 / C (target <= 1.10) and -n 1 / -n 2 (target >= 1.7),
# what two cores give the C baseline itself (2C/C: two copies run at once, run_c2 below) and
# the program itself (2N/N: two copies at -n 1 at once, run_o2: the memory bus's bound on
# n1/n2 for the program's own loops), and a cross-check of the result figure each program prints (.orn at both rank counts
# against C, to the form's relative tolerance). Every program prints
# "bench: S s/iter  NAME X": S the mean seconds of its timed iterations (loading and
# evaluation excluded), X its result figure.
#
# Environment:
#   FORMS      the forms to run (default: all, in the order of the table below)
#   REPS       runs of each program (default 3)
#   QUICK=1    tiny sizes, REPS=1, CHECK=1: the smoke test (ctest -R bench_forms_quick)
#   CHECK=1    exit 1 when a program fails or a cross-check disagrees (QUICK sets it)
#   CFLAGS_EXTRA   more flags for the C baselines (the .orn side: ORN_CFLAGS, see orionc)
#   ORN_BENCH_DIR  scratch directory (default BUILD_DIR/bench-forms); MPIRUN (mpirun); CC (gcc)
#   Sizes (full / QUICK):
#     KM_N KM_D KM_K KM_ITERS     k-means points          1000000 16 16 10 / 20000 16 16 5
#     PR_NODES PR_DEG PR_ITERS    PageRank graph          500000 8 10 / 20000 8 10
#     HEAT_N HEAT_ITERS           1-D heat                8000000 20 / 100000 10
#     BL_H BL_W BL_ITERS          3x3 blur                2000 2000 20 / 120 90 5
#     CONV_N CONV_KW CONV_ITERS   1-D convolution         4000000 9 10 / 100000 9 5
#     CS_ROWS CS_COLS CS_ITERS    row running sums        4096 2048 10 / 64 300 5
#     ST_N ST_ITERS               2-D Jacobi              4096 10 / 256 10
#     GS_N GS_SWEEPS              Gauss-Seidel (ordered)  2048 10 / 200 5
#     USERS ITEMS RATINGS K MF_EPOCHS  SGD MF             100000 20000 10000000 100 5 /
#                                                         2000 500 60000 16 10
#     LR_N LR_D LR_ITERS          dense logistic regr.    500000 64 10 / 5000 32 10
#                                 (standardize: the same matrix, LR_ITERS iterations)
#     SM_K SM_ITERS               softmax regression      10 5 / 10 2 (on the k-means f32 points)
#     MV_N MV_M MV_ITERS          matrix-vector           4096 4096 20 / 256 256 10
#     RED_N RED_BINS RED_ITERS    histogram, statistics   16000000 256 10 / 100000 256 10
#     SLR_N SLR_F SLR_Z SLR_EPOCHS  sparse LR            1000000 100000 20 5 / 20000 5000 20 5
#     LDA_DOCS LDA_WORDS LDA_LEN LDA_K LDA_ITERS  LDA, synthetic corpus
#                                                         20000 10000 100 100 5 / 300 500 40 10 5
#     ALS_K ALS_ITERS             ALS on the MF ratings   10 10 / 10 10 (with fewer iterations
#                                 the test RMSEs from the two initial draws differ by > 3%)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
ROOT=$(cd "$BENCH/.." && pwd)
# shellcheck source=bench/common/interleave.sh
. "$ROOT/bench/common/interleave.sh"
BUILD=$(cd "${1:-$ROOT/build/release}" && pwd) || exit 2
ORIONC=${ORIONC:-$BUILD/tools/orionc}
[ -x "$ORIONC" ] || { echo "forms/run.sh: no orionc in $BUILD (build Orion first)" >&2; exit 2; }
QUICK=${QUICK:-0}
CHECK=${CHECK:-$QUICK}
if [ "$QUICK" = 1 ]; then REPS=${REPS:-1}; else REPS=${REPS:-3}; fi
MPIRUN=${MPIRUN:-mpirun}
CC=${CC:-gcc}
ALL="kmeans_buf kmeans_view kmeans_f32 kmeans_dist pagerank_push pagerank_pull pagerank_contrib heat1d conv1d
     conv1d_rev cumsum_rows jacobi2d gauss_seidel gauss_seidel9 mf_row mf_col mf_scalar mf_scalar_row logreg_scalar logreg_view logreg_f32 softmax
     standardize blur2d blur2d_clamp slr matvec_row matvec_view matvec_foreach matvec_col matvec_elem gather_view gather_row gather_rowx colsum rowdiff histogram stats_acc
     lda als"
FORMS=${FORMS:-$ALL}
WORK=${ORN_BENCH_DIR:-$BUILD/bench-forms}
if [ "$QUICK" = 1 ]; then
  KM_N=${KM_N:-20000} KM_D=${KM_D:-16} KM_K=${KM_K:-16} KM_ITERS=${KM_ITERS:-5}
  PR_NODES=${PR_NODES:-20000} PR_DEG=${PR_DEG:-8} PR_ITERS=${PR_ITERS:-10}
  HEAT_N=${HEAT_N:-100000} HEAT_ITERS=${HEAT_ITERS:-10}
  BL_H=${BL_H:-120} BL_W=${BL_W:-90} BL_ITERS=${BL_ITERS:-5}
  CONV_N=${CONV_N:-100000} CONV_KW=${CONV_KW:-9} CONV_ITERS=${CONV_ITERS:-5}
  CS_ROWS=${CS_ROWS:-64} CS_COLS=${CS_COLS:-300} CS_ITERS=${CS_ITERS:-5}
  ST_N=${ST_N:-256} ST_ITERS=${ST_ITERS:-10}
  GS_N=${GS_N:-200} GS_SWEEPS=${GS_SWEEPS:-5}
  USERS=${USERS:-2000} ITEMS=${ITEMS:-500} RATINGS=${RATINGS:-60000} K=${K:-16}
  MF_EPOCHS=${MF_EPOCHS:-10}
  LR_N=${LR_N:-5000} LR_D=${LR_D:-32} LR_ITERS=${LR_ITERS:-10}
  SM_K=${SM_K:-10} SM_ITERS=${SM_ITERS:-2}
  MV_N=${MV_N:-256} MV_M=${MV_M:-256} MV_ITERS=${MV_ITERS:-10}
  RED_N=${RED_N:-100000} RED_BINS=${RED_BINS:-256} RED_ITERS=${RED_ITERS:-10}
  SLR_N=${SLR_N:-20000} SLR_F=${SLR_F:-5000} SLR_Z=${SLR_Z:-20} SLR_EPOCHS=${SLR_EPOCHS:-5}
  LDA_DOCS=${LDA_DOCS:-300} LDA_WORDS=${LDA_WORDS:-500} LDA_LEN=${LDA_LEN:-40}
  LDA_K=${LDA_K:-10} LDA_ITERS=${LDA_ITERS:-5}
  ALS_K=${ALS_K:-10} ALS_ITERS=${ALS_ITERS:-10}
  WORK=$WORK-quick
else
  KM_N=${KM_N:-1000000} KM_D=${KM_D:-16} KM_K=${KM_K:-16} KM_ITERS=${KM_ITERS:-10}
  PR_NODES=${PR_NODES:-500000} PR_DEG=${PR_DEG:-8} PR_ITERS=${PR_ITERS:-10}
  HEAT_N=${HEAT_N:-8000000} HEAT_ITERS=${HEAT_ITERS:-20}
  BL_H=${BL_H:-2000} BL_W=${BL_W:-2000} BL_ITERS=${BL_ITERS:-20}
  CONV_N=${CONV_N:-4000000} CONV_KW=${CONV_KW:-9} CONV_ITERS=${CONV_ITERS:-10}
  CS_ROWS=${CS_ROWS:-4096} CS_COLS=${CS_COLS:-2048} CS_ITERS=${CS_ITERS:-10}
  ST_N=${ST_N:-4096} ST_ITERS=${ST_ITERS:-10}
  GS_N=${GS_N:-2048} GS_SWEEPS=${GS_SWEEPS:-10}
  USERS=${USERS:-100000} ITEMS=${ITEMS:-20000} RATINGS=${RATINGS:-10000000} K=${K:-100}
  MF_EPOCHS=${MF_EPOCHS:-5}
  LR_N=${LR_N:-500000} LR_D=${LR_D:-64} LR_ITERS=${LR_ITERS:-10}
  SM_K=${SM_K:-10} SM_ITERS=${SM_ITERS:-5}
  MV_N=${MV_N:-4096} MV_M=${MV_M:-4096} MV_ITERS=${MV_ITERS:-20}
  RED_N=${RED_N:-16000000} RED_BINS=${RED_BINS:-256} RED_ITERS=${RED_ITERS:-10}
  SLR_N=${SLR_N:-1000000} SLR_F=${SLR_F:-100000} SLR_Z=${SLR_Z:-20} SLR_EPOCHS=${SLR_EPOCHS:-5}
  LDA_DOCS=${LDA_DOCS:-20000} LDA_WORDS=${LDA_WORDS:-10000} LDA_LEN=${LDA_LEN:-100}
  LDA_K=${LDA_K:-100} LDA_ITERS=${LDA_ITERS:-5}
  ALS_K=${ALS_K:-10} ALS_ITERS=${ALS_ITERS:-10}
fi
DATA=$WORK/data BIN=$WORK/bin LOGS=$WORK/logs RES=$WORK/results
mkdir -p "$DATA" "$BIN" "$LOGS"
rm -rf "$RES"; mkdir -p "$RES"
say() { echo "forms: $*" >&2; }

# ---- data, baselines and .orn programs ------------------------------------------------
# the .orn arithmetic (IEEE, no FMA contraction) and its one vectorizer hint, `omp simd`
CFLAGS="-O3 -march=native -ffp-contract=off -fopenmp-simd -Wall ${CFLAGS_EXTRA:-}"
declare -A DESC C_CMD ORN_ARGS ORN_PROG TOL LOWER FAIL
build_c() { # build_c NAME SOURCE [FLAGS...]: the baseline binary $BIN/NAME (FLAGS: -D, -l, ...)
  local name=$1 src=$2; shift 2
  [ -x "$BIN/$name" ] && [ "$BIN/$name" -nt "$src" ] && [ "$BIN/$name" -nt "$BENCH/common/bench.h" ] &&
    return 0
  "$CC" $CFLAGS -o "$BIN/$name" "$src" "$@" -lm 2>"$LOGS/$name.build" ||
    { say "cannot build $src: $(head -3 "$LOGS/$name.build")"; return 1; }
}
build_gen() { [ -x "$BIN/$1" ] && [ "$BIN/$1" -nt "$2" ] || "$CC" -O2 -o "$BIN/$1" "$2" -lm; }
compile_orn() { # compile_orn FORM SOURCE
  if "$ORIONC" -march=native "$2" -o "$BIN/$1" >"$LOGS/$1.orionc" 2>&1; then
    ORN_PROG[$1]=$BIN/$1
  else
    FAIL[$1]="orionc exit $?: $(grep -m1 -E 'error|internal' "$LOGS/$1.orionc" || tail -1 "$LOGS/$1.orionc")"
    say "$1: ${FAIL[$1]}"
  fi
}
cached() { # cached FILE CMD...: run CMD (which writes FILE.tmp) unless FILE exists
  local f=$1; shift
  [ -s "$f" ] && return 0
  "$@" && mv "$f.tmp" "$f"
}

# one generator per kind of data, each run once and shared by the forms that use it
data_points() { # f64 points for the k-means forms
  build_gen gen_dense "$HERE/gen_dense.c"
  KMP=$DATA/points_${KM_N}_${KM_D}_f64.bin
  cached "$KMP" "$BIN/gen_dense" "$KM_N" "$KM_D" 16 1 f64 "$KMP.tmp"
}
data_points32() { # f32 points for kmeans_f32 (bench/kmeans)
  build_gen gen_points "$BENCH/kmeans/gen_points.c"
  KMP32=$DATA/points_${KM_N}_${KM_D}_f32.bin
  cached "$KMP32" "$BIN/gen_points" "$KM_N" "$KM_D" 16 1 "$KMP32.tmp"
}
data_graph() { # "dst src 1/outdeg" lines (bench/pagerank) and the push form's "src dst w"
  build_gen gen_graph "$BENCH/pagerank/gen_graph.c"
  GRAPH=$DATA/graph_${PR_NODES}_${PR_DEG}.txt EDGES=$DATA/edges_${PR_NODES}_${PR_DEG}.txt
  cached "$GRAPH" "$BIN/gen_graph" "$PR_NODES" "$PR_DEG" 1 "$GRAPH.tmp" >/dev/null
  [ -s "$EDGES" ] || { awk '{ print $2, $1, $3 }' "$GRAPH" >"$EDGES.tmp" && mv "$EDGES.tmp" "$EDGES"; }
}
data_ratings() { # synthetic ratings (bench/sgd_mf/gen_ratings.c), as bench/run.sh's MF
  build_gen gen_ratings "$BENCH/sgd_mf/gen_ratings.c"
  MFDATA=$DATA/ratings_${USERS}_${ITEMS}_${RATINGS}
  if [ ! -s "$MFDATA.test" ]; then
    "$BIN/gen_ratings" "$USERS" "$ITEMS" "$RATINGS" 10 1 "$MFDATA.train.tmp" "$MFDATA.test.tmp" &&
      mv "$MFDATA.train.tmp" "$MFDATA.train" && mv "$MFDATA.test.tmp" "$MFDATA.test"
  fi
}
data_by_item() { # the training ratings transposed, "item user rating", for ALS's item half
  data_ratings || return 1
  [ -s "$MFDATA.train_by_item" ] ||
    { awk '{ print $2, $1, $3 }' "$MFDATA.train" >"$MFDATA.train_by_item.tmp" &&
      mv "$MFDATA.train_by_item.tmp" "$MFDATA.train_by_item"; }
}
data_labelled() { # data_labelled f32|f64: rows and labels for the logistic regressions
  build_gen gen_dense "$HERE/gen_dense.c"
  LRX=$DATA/lr_${LR_N}_${LR_D}_$1.bin LRY=$DATA/lr_${LR_N}_${LR_D}_$1.labels.bin
  if [ ! -s "$LRY" ]; then
    "$BIN/gen_dense" "$LR_N" "$LR_D" 4 2 "$1" "$LRX.tmp" "$LRY.tmp" &&
      mv "$LRX.tmp" "$LRX" && mv "$LRY.tmp" "$LRY"
  fi
}
data_matrix() { # a dense f64 matrix for the matrix-vector forms
  build_gen gen_dense "$HERE/gen_dense.c"
  MVA=$DATA/matrix_${MV_N}_${MV_M}.bin
  cached "$MVA" "$BIN/gen_dense" "$MV_N" "$MV_M" 1 3 f64 "$MVA.tmp"
}
data_libsvm() { # sparse classification data (bench/slr/gen_libsvm.c), as bench/run.sh's slr
  build_gen gen_libsvm "$BENCH/slr/gen_libsvm.c"
  SLRD=$DATA/slr_${SLR_N}_${SLR_F}_${SLR_Z}
  if [ ! -s "$SLRD.test" ]; then
    "$BIN/gen_libsvm" "$SLR_N" "$SLR_F" "$SLR_Z" 1 "$SLRD.train.tmp" "$SLRD.test.tmp" &&
      mv "$SLRD.train.tmp" "$SLRD.train" && mv "$SLRD.test.tmp" "$SLRD.test"
  fi
}
data_corpus() { # a synthetic LDA corpus (bench/lda/gen_corpus.c)
  build_gen gen_corpus "$BENCH/lda/gen_corpus.c"
  CORPUS=$DATA/corpus_${LDA_DOCS}_${LDA_WORDS}_${LDA_LEN}.docword
  cached "$CORPUS" "$BIN/gen_corpus" "$LDA_DOCS" "$LDA_WORDS" 10 "$LDA_LEN" 1 "$CORPUS.tmp"
}

# prep FORM: data, baseline, program, command lines, tolerance and description of FORM
prep() {
  local f=$1 src=$HERE/$1.orn
  case $f in
    kmeans_buf|kmeans_view|kmeans_dist)
      data_points && build_c kmeans_ref "$BENCH/kmeans/kmeans_ref.c" -DKMEANS_F64 || { FAIL[$f]="no data or baseline"; return; }
      local how="scalar for-j distances, sums and counts through buffers"
      [ "$f" = kmeans_view ] && how="dot of view differences, row-view buffer updates"
      [ "$f" = kmeans_dist ] && how="the centers a dist array updated by a parallel_for, scalar distances, buffers"
      DESC[$f]="k-means, $how; $KM_N x $KM_D f64 points, k=$KM_K, $KM_ITERS iterations"
      C_CMD[$f]="$BIN/kmeans_ref $KMP $KM_K $KM_ITERS"
      ORN_ARGS[$f]="--points=$KMP --k=$KM_K --iters=$KM_ITERS"
      TOL[$f]=1e-6 ;;
    kmeans_f32)
      data_points32 && build_c kmeans_ref32 "$BENCH/kmeans/kmeans_ref.c" ||
        { FAIL[$f]="no data or baseline"; return; }
      src=$BENCH/kmeans/kmeans.orn
      DESC[$f]="k-means, bench/kmeans/kmeans.orn: f32 points, sums and counts in one f64 buffer; $KM_N x $KM_D, k=$KM_K, $KM_ITERS iterations"
      C_CMD[$f]="$BIN/kmeans_ref32 $KMP32 $KM_K $KM_ITERS"
      ORN_ARGS[$f]="--points=$KMP32 --k=$KM_K --iters=$KM_ITERS"
      TOL[$f]=1e-4 ;;
    softmax)
      data_points32 && build_c softmax_ref "$HERE/softmax_ref.c" || { FAIL[$f]="no data or baseline"; return; }
      DESC[$f]="softmax regression by SGD, K=$SM_K classes, W read by row views, dW[k, :] -= s * X[i, :] through a buffer; $KM_N x $KM_D f32 points, $SM_ITERS epochs"
      C_CMD[$f]="$BIN/softmax_ref $KMP32 $SM_K $SM_ITERS"
      ORN_ARGS[$f]="--data=$KMP32 --K=$SM_K --iters=$SM_ITERS"
      TOL[$f]=0.05 LOWER[$f]=1 ;; # -n 1: the same bits; -n 2: another SGD, at most 5% worse
    pagerank_push|pagerank_pull|pagerank_contrib)
      data_graph && build_c pagerank_ref "$BENCH/pagerank/pagerank_ref.c" ||
        { FAIL[$f]="no data or baseline"; return; }
      local how="push: next[t] += pr[s] / outdeg[s] through a buffer, edges keyed (src, dst)"
      [ "$f" = pagerank_pull ] && how="pull: acc[d] += w * pr[s], links keyed (dst, src)"
      [ "$f" = pagerank_contrib ] && how="pull with pr[s] / outdeg(s) formed once per node (bench/pagerank/pagerank.orn)" &&
        src=$BENCH/pagerank/pagerank.orn
      DESC[$f]="PageRank $how; $PR_NODES nodes, ~$((PR_NODES * PR_DEG)) edges, $PR_ITERS iterations"
      C_CMD[$f]="$BIN/pagerank_ref $GRAPH $PR_ITERS"
      if [ "$f" = pagerank_push ]; then ORN_ARGS[$f]="--graph=$EDGES --iters=$PR_ITERS"
      else ORN_ARGS[$f]="--graph=$GRAPH --iters=$PR_ITERS"; fi
      TOL[$f]=1e-6 ;;
    blur2d)
      build_c blur2d_ref "$HERE/blur2d_ref.c" || { FAIL[$f]="no baseline"; return; }
      DESC[$f]="3x3 box blur through variables tested against the extents, then copied back; $BL_H x $BL_W f32, $BL_ITERS iterations"
      C_CMD[$f]="$BIN/blur2d_ref $BL_H $BL_W $BL_ITERS"
      ORN_ARGS[$f]="--h=$BL_H --w=$BL_W --iters=$BL_ITERS"
      TOL[$f]=1e-6 ;;
    blur2d_clamp)
      build_c blur2d_ref "$HERE/blur2d_ref.c" || { FAIL[$f]="no baseline"; return; }
      DESC[$f]="3x3 box blur, subscripts clamped to the edge through variables, then copied back; $BL_H x $BL_W f32, $BL_ITERS iterations"
      C_CMD[$f]="$BIN/blur2d_ref $BL_H $BL_W $BL_ITERS clamp"
      ORN_ARGS[$f]="--h=$BL_H --w=$BL_W --iters=$BL_ITERS"
      TOL[$f]=1e-6 ;;
    heat1d)
      build_c heat1d_ref "$HERE/heat1d_ref.c" || { FAIL[$f]="no baseline"; return; }
      DESC[$f]="1-D heat, double-buffered, $HEAT_N f64 points, 1 iteration = 2 sweeps, $HEAT_ITERS iterations"
      C_CMD[$f]="$BIN/heat1d_ref $HEAT_N $HEAT_ITERS"
      ORN_ARGS[$f]="--n=$HEAT_N --iters=$HEAT_ITERS"
      TOL[$f]=1e-9 ;;
    conv1d)
      build_c conv1d_ref "$HERE/conv1d_ref.c" || { FAIL[$f]="no baseline"; return; }
      DESC[$f]="1-D convolution, f32, a window of run-time width through a scalar for k; $CONV_N outputs, width $CONV_KW, $CONV_ITERS iterations"
      C_CMD[$f]="$BIN/conv1d_ref $CONV_N $CONV_KW $CONV_ITERS"
      ORN_ARGS[$f]="--n=$CONV_N --kw=$CONV_KW --iters=$CONV_ITERS"
      TOL[$f]=1e-6 ;;
    conv1d_rev)
      build_c conv1d_ref "$HERE/conv1d_ref.c" || { FAIL[$f]="no baseline"; return; }
      DESC[$f]="1-D convolution from the window's end, X[i + kw - 1 - k] (a window moved by a shift known at run time); $CONV_N outputs, width $CONV_KW, $CONV_ITERS iterations"
      C_CMD[$f]="$BIN/conv1d_ref $CONV_N $CONV_KW $CONV_ITERS rev"
      ORN_ARGS[$f]="--n=$CONV_N --kw=$CONV_KW --iters=$CONV_ITERS"
      TOL[$f]=1e-6 ;;
    cumsum_rows)
      build_c cumsum_ref "$HERE/cumsum_ref.c" || { FAIL[$f]="no baseline"; return; }
      DESC[$f]="running sums along each row, R[r, j] = R[r, j - 1] + X[r, j], $CS_ROWS x $CS_COLS f64, $CS_ITERS iterations"
      C_CMD[$f]="$BIN/cumsum_ref $CS_ROWS $CS_COLS $CS_ITERS"
      ORN_ARGS[$f]="--nrows=$CS_ROWS --ncols=$CS_COLS --iters=$CS_ITERS"
      TOL[$f]=1e-9 ;; # the same elements; the sums of all of them round differently
    gauss_seidel)
      build_c gs_ref "$HERE/gs_ref.c" || { FAIL[$f]="no baseline"; return; }
      DESC[$f]="Gauss-Seidel, @ordered in place (a wavefront of blocks), $GS_N x $GS_N f64, 1 iteration = 1 sweep, $GS_SWEEPS sweeps"
      C_CMD[$f]="$BIN/gs_ref $GS_N $GS_SWEEPS"
      ORN_ARGS[$f]="--n=$GS_N --sweeps=$GS_SWEEPS"
      TOL[$f]=1e-9 ;;
    gauss_seidel9)
      build_c gs_ref "$HERE/gs_ref.c" || { FAIL[$f]="no baseline"; return; }
      DESC[$f]="9-point Gauss-Seidel, @ordered in place (a skewed schedule: the upper-right neighbour), $GS_N x $GS_N f64, $GS_SWEEPS sweeps"
      C_CMD[$f]="$BIN/gs_ref $GS_N $GS_SWEEPS 9"
      ORN_ARGS[$f]="--n=$GS_N --sweeps=$GS_SWEEPS"
      TOL[$f]=1e-9 ;;
    jacobi2d)
      build_c jacobi_ref "$BENCH/stencil/jacobi_ref.c" || { FAIL[$f]="no baseline"; return; }
      src=$BENCH/stencil/jacobi.orn
      DESC[$f]="2-D 5-point Jacobi (bench/stencil/jacobi.orn), $ST_N x $ST_N f64, 1 iteration = 2 sweeps, $ST_ITERS iterations"
      C_CMD[$f]="$BIN/jacobi_ref $ST_N $ST_ITERS"
      ORN_ARGS[$f]="--n=$ST_N --iters=$ST_ITERS"
      TOL[$f]=1e-9 ;;
    mf_row|mf_col|mf_scalar|mf_scalar_row)
      data_ratings && build_c mf_ref "$BENCH/mf/mf_ref.c" || { FAIL[$f]="no data or baseline"; return; }
      local how
      case $f in
        mf_row) how="row views W[u, :], W (users, K) (bench/mf, the blessed form)"; src=$BENCH/mf/$f.orn ;;
        mf_col) how="column views W[:, u], W (K, users) (bench/mf)"; src=$BENCH/mf/$f.orn ;;
        mf_scalar) how="for-k scalar loop over columns W[k, u], W (K, users) (bench/mf)"; src=$BENCH/mf/$f.orn ;;
        mf_scalar_row) how="for-k scalar loop over rows W[u, k], W (users, K)" ;;
      esac
      DESC[$f]="SGD MF, $how; $RATINGS ratings, $USERS x $ITEMS, K=$K, $MF_EPOCHS epochs"
      C_CMD[$f]="$BIN/mf_ref $MFDATA.train $MFDATA.test $MF_EPOCHS $K"
      ORN_ARGS[$f]="--train=$MFDATA.train --test=$MFDATA.test --epochs=$MF_EPOCHS --rank=$K"
      TOL[$f]=0.03 ;;
    logreg_scalar|logreg_view|logreg_f32)
      local t=f64 ref=logreg_ref flags=()
      [ "$f" = logreg_f32 ] && t=f32 ref=logreg_ref32 flags=(-DREAL_F32)
      data_labelled $t && build_c $ref "$HERE/logreg_ref.c" "${flags[@]}" ||
        { FAIL[$f]="no data or baseline"; return; }
      local how="for-j margin, gradient through a buffer element by element"
      [ "$f" != logreg_scalar ] && how="dot(X[i, :], w) margin, gradient through a buffer by row view"
      DESC[$f]="dense logistic regression, full-batch GD, $how; $LR_N x $LR_D $t, $LR_ITERS iterations"
      C_CMD[$f]="$BIN/$ref $LRX $LRY $LR_ITERS"
      ORN_ARGS[$f]="--data=$LRX --labels=$LRY --iters=$LR_ITERS"
      TOL[$f]=1e-6
      [ $t = f32 ] && TOL[$f]=1e-4 ;;
    standardize)
      data_labelled f64 && build_c standardize_ref "$HERE/standardize_ref.c" ||
        { FAIL[$f]="no data or baseline"; return; }
      DESC[$f]="standardize the columns: sums through buffers, means and deviations by column, every element scaled in place; $LR_N x $LR_D f64, $LR_ITERS iterations"
      C_CMD[$f]="$BIN/standardize_ref $LRX $LR_ITERS"
      ORN_ARGS[$f]="--data=$LRX --iters=$LR_ITERS"
      TOL[$f]=1e-9 ;;
    slr)
      data_libsvm && build_c slr_ref "$BENCH/slr/slr_ref.c" || { FAIL[$f]="no data or baseline"; return; }
      src=$BENCH/slr/slr.orn
      DESC[$f]="sparse logistic regression by SGD, buffered weights (bench/slr/slr.orn); $SLR_N x $SLR_F, $SLR_Z nnz/row, $SLR_EPOCHS epochs"
      C_CMD[$f]="$BIN/slr_ref $SLRD.train $SLRD.test $SLR_EPOCHS"
      ORN_ARGS[$f]="--train=$SLRD.train --test=$SLRD.test --epochs=$SLR_EPOCHS"
      TOL[$f]=0.01 ;;
    matvec_row|matvec_view|matvec_foreach|matvec_col|matvec_elem)
      data_matrix && build_c matvec_ref "$HERE/matvec_ref.c" || { FAIL[$f]="no data or baseline"; return; }
      local how="y[i] = for-j sum over row i"
      [ "$f" = matvec_view ] && how="y[i] = dot(A[i, :], x)"
      [ "$f" = matvec_foreach ] && how="y[i] = for (j, a) in A[i, :] sum of a * x[j]"
      [ "$f" = matvec_col ] && how="one iteration per column, for-i dy[i] += A[i, j] * x[j] through a buffer"
      [ "$f" = matvec_elem ] && how="one iteration per element, dy[i] += a * x[j] through a buffer"
      DESC[$f]="matrix-vector y = A x, $how; $MV_N x $MV_M f64, $MV_ITERS iterations"
      C_CMD[$f]="$BIN/matvec_ref $MVA $MV_ITERS"
      ORN_ARGS[$f]="--data=$MVA --iters=$MV_ITERS"
      TOL[$f]=1e-9 ;;
    gather_view|gather_row|gather_rowx)
      data_matrix && build_c matvec_ref "$HERE/matvec_ref.c" || { FAIL[$f]="no data or baseline"; return; }
      local how="dot(A[P[i], :], x)"
      [ "$f" = gather_row ] && how="a for-j sum of A[P[i], j] * x[j]"
      [ "$f" = gather_rowx ] && how="a for-j sum of x[j] * A[P[i], j]"
      DESC[$f]="rows gathered by a permutation P (a dist array), y[i] = $how; $MV_N x $MV_M f64, $MV_ITERS iterations"
      C_CMD[$f]="$BIN/matvec_ref $MVA $MV_ITERS gather"
      ORN_ARGS[$f]="--data=$MVA --iters=$MV_ITERS"
      TOL[$f]=1e-9 ;;
    rowdiff)
      data_matrix && build_c matvec_ref "$HERE/matvec_ref.c" || { FAIL[$f]="no data or baseline"; return; }
      DESC[$f]="row second differences, for j in 0..m with if j > 0 and j < m - 1 around the sum of squares; $MV_N x $MV_M f64, $MV_ITERS iterations"
      C_CMD[$f]="$BIN/matvec_ref $MVA $MV_ITERS rowdiff"
      ORN_ARGS[$f]="--data=$MVA --iters=$MV_ITERS"
      TOL[$f]=1e-9 ;;
    colsum)
      data_matrix && build_c matvec_ref "$HERE/matvec_ref.c" || { FAIL[$f]="no data or baseline"; return; }
      DESC[$f]="column sums, one iteration per element, ds[j] += a through a buffer; $MV_N x $MV_M f64, $MV_ITERS iterations"
      C_CMD[$f]="$BIN/matvec_ref $MVA $MV_ITERS colsum"
      ORN_ARGS[$f]="--data=$MVA --iters=$MV_ITERS"
      TOL[$f]=1e-9 ;;
    histogram|stats_acc)
      build_c reduce_ref "$HERE/reduce_ref.c" || { FAIL[$f]="no baseline"; return; }
      if [ "$f" = histogram ]; then
        DESC[$f]="histogram, i64 counts through a buffer; $RED_N f64 values, $RED_BINS bins, $RED_ITERS iterations"
        C_CMD[$f]="$BIN/reduce_ref histogram $RED_N $RED_BINS $RED_ITERS"
        ORN_ARGS[$f]="--n=$RED_N --bins=$RED_BINS --iters=$RED_ITERS"
        TOL[$f]=0
      else
        DESC[$f]="sum, sum of squares, min and max through accumulators; $RED_N f64 values, $RED_ITERS iterations"
        C_CMD[$f]="$BIN/reduce_ref stats $RED_N $RED_ITERS"
        ORN_ARGS[$f]="--n=$RED_N --iters=$RED_ITERS"
        TOL[$f]=1e-9
      fi ;;
    lda)
      data_corpus && build_c lda_ref "$BENCH/lda/lda_ref.c" || { FAIL[$f]="no data or baseline"; return; }
      src=$BENCH/lda/lda.orn
      DESC[$f]="LDA collapsed Gibbs (bench/lda/lda.orn), synthetic corpus $LDA_DOCS docs x $LDA_LEN tokens, $LDA_WORDS words, K=$LDA_K, $LDA_ITERS iterations"
      C_CMD[$f]="$BIN/lda_ref $CORPUS $LDA_K $LDA_ITERS"
      ORN_ARGS[$f]="--data=$CORPUS --topics=$LDA_K --iters=$LDA_ITERS"
      TOL[$f]=0.03 ;;
    als)
      data_by_item || { FAIL[$f]="no data"; return; }
      # bench/als/als_ref.c: serial C, rank-1 updates as loops, dposv; it prints a line per
      # iteration, which its wrapper turns into the bench line (mean s/iter, last test RMSE)
      local blas; blas=$(pkg-config --cflags --libs openblas 2>/dev/null) ||
        { FAIL[$f]="no OpenBLAS for the C baseline (pkg-config openblas)"; return; }
      # shellcheck disable=SC2086
      build_c als_ref "$BENCH/als/als_ref.c" $blas || { FAIL[$f]="no baseline"; return; }
      cat >"$BIN/als_ref_bench" <<EOF
#!/bin/sh
"$BIN/als_ref" "\$@" | awk '{ print } \$1 == "iteration" { t += \$(NF - 1); n++; r = \$(NF - 2) }
  END { if (n) printf "bench: %.6f s/iter  test_rmse %s\\n", t / n, r }'
EOF
      chmod +x "$BIN/als_ref_bench"
      DESC[$f]="ALS (examples/als.orn's loops: add_outer into a local matrix, solve_into per row), $RATINGS ratings, $USERS x $ITEMS, K=$ALS_K, $ALS_ITERS iterations"
      C_CMD[$f]="$BIN/als_ref_bench $MFDATA.train $MFDATA.test $ALS_ITERS $ALS_K 0.1"
      ORN_ARGS[$f]="--train=$MFDATA.train --test=$MFDATA.test --train_by_item=$MFDATA.train_by_item --iters=$ALS_ITERS --rank=$ALS_K"
      TOL[$f]=0.03 ;;
    *) say "unknown form '$f' (known: $(echo $ALL))"; exit 2 ;;
  esac
  compile_orn "$f" "$src"
}

# ---- running --------------------------------------------------------------------------
# run_one FORM KIND NP CMD...: append "secs figure" to $RES/FORM.KIND, or record why it
# failed in $RES/FORM.KIND.fail. NP 0 runs CMD directly (the C baseline).
run_one() {
  local f=$1 kind=$2 np=$3; shift 3
  local log=$LOGS/$f.$kind.log
  if [ "$np" = 0 ]; then "$@" >"$log" 2>&1
  else "$MPIRUN" -n "$np" "$@" >"$log" 2>&1
  fi
  local rc=$?
  local line; line=$(grep -m1 '^bench: ' "$log")
  if [ "$rc" != 0 ] || [ -z "$line" ]; then
    echo "exit $rc: $(grep -m1 -iE 'error|orion:|abort|signal' "$log" || tail -1 "$log")" >"$RES/$f.$kind.fail"
    return
  fi
  echo "$line" | awk '{ print $2, $5 }' >>"$RES/$f.$kind"
}

# run_pair FORM KIND CMD...: two copies of CMD at once, one per core; appends the slower
# copy's "secs figure" to $RES/FORM.KIND.
run_pair() {
  local f=$1 kind=$2 i pids=() line worst=""
  shift 2
  for i in 1 2; do
    "$@" >"$LOGS/$f.$kind.$i.log" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}" || { echo "exit $?" >"$RES/$f.$kind.fail"; return; }
  for i in 1 2; do
    line=$(grep -m1 '^bench: ' "$LOGS/$f.$kind.$i.log" | awk '{ print $2, $5 }')
    [ -n "$line" ] || { echo "no result" >"$RES/$f.$kind.fail"; return; }
    if [ -z "$worst" ] || awk -v a="${line%% *}" -v b="${worst%% *}" 'BEGIN { exit !(a > b) }'; then
      worst=$line
    fi
  done
  echo "$worst" >>"$RES/$f.$kind"
}

# run_c2 FORM: two copies of the C baseline at once. 2 x C / C2 is what two cores give the
# baseline itself: where the two copies share one memory bus, the bound on any n1/n2 (a form
# whose C pair scales 1.5x cannot be expected to scale 1.7x at -n 2).
# shellcheck disable=SC2086
run_c2() { run_pair "$1" c2 ${C_CMD[$1]}; }

# run_o2 FORM: two copies of the .orn program at -n 1 at once (interleave.sh calls it after
# the -n 2 run). 2 x n1 / that is what two cores give the program's own loops, which run
# faster than the C in some forms and so press the bus harder: n1/n2 near it means the
# runtime loses nothing between the ranks, the rest is the machine.
# shellcheck disable=SC2086
run_o2() { run_pair "$1" o2 "$MPIRUN" -n 1 "${ORN_PROG[$1]}" ${ORN_ARGS[$1]}; }

interleave $FORMS

# ---- report ---------------------------------------------------------------------------
TGT1=1.10 TGT2=1.7
bad=0
SUMMARY=$RES/summary
printf '%-16s %10s %10s %10s %6s %6s %6s %6s  %s\n' form "C s/it" "n1 s/it" "n2 s/it" "n1/C" \
  "n1/n2" "2C/C" "2N/N" "targets, check" >"$SUMMARY"
echo
echo "Results: seconds per iteration, best of $REPS runs (other load only ever slows a run)."
for f in $FORMS; do
  echo
  echo "== $f: ${DESC[$f]:-}"
  if [ -n "${FAIL[$f]:-}" ]; then
    echo "   FAILED (${FAIL[$f]})"
    printf '%-16s FAILED (%s)\n' "$f" "${FAIL[$f]}" >>"$SUMMARY"
    bad=1
    continue
  fi
  c=$(best "$RES/$f.c") n1=$(best "$RES/$f.n1") n2=$(best "$RES/$f.n2") c2=$(best "$RES/$f.c2")
  o2=$(best "$RES/$f.o2")
  ratio1="-" ratio2="-" bound="-" obound="-" check="" tg=""
  FIG=$(grep -m1 '^bench: ' "$LOGS/$f.c.log" 2>/dev/null | awk '{ print $4 }')
  show() { # show LABEL BEST KIND
    if [ -n "$2" ]; then
      printf '   %-18s %12.6f s/iter   %s %s\n' "$1" "$(col "$2" 1)" "$FIG" "$(col "$2" 2)"
    else
      echo "   $1  FAILED ($(cat "$RES/$f.$3.fail" 2>/dev/null || echo "no run"))"
    fi
  }
  show "C baseline" "$c" c
  show ".orn mpirun -n 1" "$n1" n1
  show ".orn mpirun -n 2" "$n2" n2
  if [ -n "$c" ] && [ -n "$n1" ]; then
    ratio1=$(awk -v a="$(col "$n1" 1)" -v b="$(col "$c" 1)" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
    ok=$(awk -v r="$ratio1" -v t=$TGT1 'BEGIN { print (r <= t) ? "ok" : "MISS" }')
    echo "   .orn -n 1 / C       $ratio1   (target <= $TGT1: $ok)"
    tg="n1/C:$ok "
  fi
  if [ -n "$c" ] && [ -n "$c2" ]; then
    bound=$(awk -v a="$(col "$c" 1)" -v b="$(col "$c2" 1)" 'BEGIN { printf "%.2f", (b > 0) ? 2 * a / b : 0 }')
    echo "   two C copies at once: each $(col "$c2" 1) s/iter, 2 x C / that = $bound (what two cores give C)"
  fi
  if [ -n "$n1" ] && [ -n "$o2" ]; then
    obound=$(awk -v a="$(col "$n1" 1)" -v b="$(col "$o2" 1)" 'BEGIN { printf "%.2f", (b > 0) ? 2 * a / b : 0 }')
    echo "   two .orn -n 1 at once: each $(col "$o2" 1) s/iter, 2 x n1 / that = $obound (what two cores give the program)"
  fi
  if [ -n "$n1" ] && [ -n "$n2" ]; then
    ratio2=$(awk -v a="$(col "$n1" 1)" -v b="$(col "$n2" 1)" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
    ok=$(awk -v r="$ratio2" -v t=$TGT2 'BEGIN { print (r >= t) ? "ok" : "MISS" }')
    echo "   .orn -n 1 / -n 2    $ratio2   (target >= $TGT2: $ok)"
    tg="${tg}n1/n2:$ok "
  fi
  for kind in n1 n2; do
    b=$([ $kind = n1 ] && echo "$n1" || echo "$n2")
    if [ -z "$c" ] || [ -z "$b" ]; then check="${check}$kind:FAILED "; bad=1; continue; fi
    if awk -v a="$(col "$b" 2)" -v c="$(col "$c" 2)" -v t="${TOL[$f]}" -v low="${LOWER[$f]:-0}" \
         'BEGIN { d = a - c; if (d < 0 && !low) d = -d; s = c < 0 ? -c : c; exit !(d <= t * s) }'; then
      check="${check}$kind:ok "
    else
      check="${check}$kind:DIFFERS "; bad=1
    fi
  done
  echo "   cross-check of $FIG against C (relative tolerance ${TOL[$f]}${LOWER[$f]:+, or any lower}): $check"
  printf '%-16s %10s %10s %10s %6s %6s %6s %6s  %s\n' "$f" \
    "$([ -n "$c" ] && col "$c" 1 || echo FAILED)" "$([ -n "$n1" ] && col "$n1" 1 || echo FAILED)" \
    "$([ -n "$n2" ] && col "$n2" 1 || echo FAILED)" "$ratio1" "$ratio2" "$bound" "$obound" \
    "$tg$check" >>"$SUMMARY"
done

echo
echo "Summary (s/iter best of $REPS; targets: n1/C <= $TGT1, n1/n2 >= $TGT2; timings need an idle machine):"
cat "$SUMMARY"
echo "(logs: $LOGS)"
if [ "$CHECK" = 1 ] && [ "$bad" = 1 ]; then exit 1; fi
exit 0
