#!/bin/sh
# bench/gpu/device.sh: everything a lent GPU is for, in one call (docs/performance.md, "GPU").
#
#   bench/gpu/device.sh prepare [BUILD]   here (no GPU needed): builds Orion (BUILD, default
#                                         build/release), the benchmark and test programs with
#                                         and without --gpu, the peer cuMF_SGD (from
#                                         ../shared/peers/cumf_sgd), the data generators, and
#                                         copies MPICH's run-time files: all packed into
#                                         .device/device.tgz (.gitignore), about 25 MB
#   bench/gpu/device.sh run               on the device machine, from the repository root,
#                                         with .device carried: the device tests, then SGD MF
#                                         (K = 128) on a Netflix-shaped set (480,189 x 17,770,
#                                         100 M ratings), on 10 M ratings and on 10 M with
#                                         uniform items against the CPU
#                                         build on every core and against cuMF_SGD (same data,
#                                         K, epochs; both test RMSEs), LDA and SLR against the
#                                         CPU build on every core, an S sweep, the band
#                                         pipeline against the steps with each of the two
#                                         device barriers, the row cache against none,
#                                         the pipeline's profile
#                                         (ORN_GPU_PROFILE) of SGD MF and LDA, and an ncu
#                                         summary of the training kernel; every figure under
#                                         $OUT (default ./device-out), summary.txt first
#   bench/gpu/device.sh dry               prepare, then run: without a GPU it stops at the
#                                         first device call (exit 0), with everything before
#                                         it done
#
# The device machine has CUDA, nvcc and ncu but no MPICH, parser generators or libffi, and
# no network: so everything is built here and carried (the run call:
#   run(command="bench/gpu/device.sh run", carry=[".device"], timeout_s=540)).
# Budget: the run keeps to about 8 minutes (each stage has its own time limit, and a stage
# that runs out is said in summary.txt, not hidden). Never asserts on timings.
# Environment: NP (ranks of the CPU builds: every core), EPOCHS (5), BIG (100000000 ratings),
# SMALL (10000000), OUT.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEV=$ROOT/.device
MODE=${1:-}

prepare() {
    BUILD=$(cd "${1:-$ROOT/build/release}" 2>/dev/null && pwd) || BUILD=$ROOT/build/release
    if [ ! -x "$BUILD/tools/orionc" ]; then
        cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
        cmake --build "$BUILD" -j "$(nproc)"
    fi
    rm -rf "$DEV"
    mkdir -p "$DEV/bin" "$DEV/mpi/lib" "$DEV/src"
    ORIONC=$BUILD/tools/orionc
    # the device's CPU is another x86-64 than this one: a level every x86-64 server has
    export ORN_CFLAGS="${ORN_CFLAGS:-} -march=x86-64-v3 -mtune=generic"
    gpuify() { sed -E 's/^([[:space:]]*)(@ordered )?parallel_for/\1\2@gpu parallel_for/' "$1"; }
    for ex in sgd_mf lda slr; do
        gpuify "$ROOT/examples/$ex.orn" >"$DEV/src/$ex.orn"
        "$ORIONC" "$DEV/src/$ex.orn" -march=x86-64-v3 -o "$DEV/bin/$ex.cpu"
        "$ORIONC" --gpu "$DEV/src/$ex.orn" -march=x86-64-v3 -o "$DEV/bin/$ex.gpu"
    done
    # SGD MF with the warps' row caches, compiled in only when asked (stage rowcache_on)
    "$ORIONC" --gpu-rowcache "$DEV/src/sgd_mf.orn" -march=x86-64-v3 -o "$DEV/bin/sgd_mf.gpurc"
    # the device tests' programs (tests/gpu/run.sh device) and their replay oracles
    mkdir -p "$DEV/bin/tests"
    for p in sgd_mf_gpu gauss_seidel_gpu lda_gpu slr_gpu features_gpu; do
        "$ORIONC" "$ROOT/tests/gpu/$p.orn" -march=x86-64-v3 -o "$DEV/bin/tests/$p.cpu"
        "$ORIONC" --gpu "$ROOT/tests/gpu/$p.orn" -march=x86-64-v3 -o "$DEV/bin/tests/$p.gpu"
    done
    for t in lda_replay slr_replay; do
        f=$(find "$BUILD/tests" -name "$t" -type f -perm -u+x | head -n 1)
        [ -n "$f" ] || { echo "device.sh: $t not built in $BUILD" >&2; exit 1; }
        cp "$f" "$DEV/bin/$t"
    done
    cc -O2 -march=x86-64-v3 -o "$DEV/bin/gen_mf" "$ROOT/bench/gpu/gen_mf.c" -lm
    cc -O2 -march=x86-64-v3 -o "$DEV/bin/mf_rmse" "$ROOT/bench/gpu/mf_rmse.c" -lm
    cc -O2 -march=x86-64-v3 -o "$DEV/bin/gen_corpus" "$ROOT/bench/lda/gen_corpus.c" -lm
    cc -O2 -march=x86-64-v3 -o "$DEV/bin/gen_libsvm" "$ROOT/bench/slr/gen_libsvm.c" -lm
    peer=$ROOT/../shared/peers/cumf_sgd
    if [ -x "$peer/build.sh" ]; then
        "$peer/build.sh" "$DEV/cumf" >"$DEV/cumf.log" 2>&1 || { cat "$DEV/cumf.log"; exit 1; }
        cp "$DEV/cumf/cumf_sgd" "$DEV/bin/cumf_sgd"
        rm -rf "$DEV/cumf"
    else
        echo "device.sh: no peer at $peer: cuMF_SGD will be left out" >&2
    fi
    # MPICH's launcher and libraries, and UCX's transport modules (the device has none)
    hydra=$(readlink -f "$(command -v mpiexec)")
    cp "$hydra" "$DEV/mpi/mpiexec"
    cp "$(dirname "$hydra")/hydra_pmi_proxy" "$DEV/mpi/"
    for f in "$DEV/bin/sgd_mf.cpu" "$DEV/mpi/mpiexec" "$DEV/mpi/hydra_pmi_proxy"; do
        ldd "$f" | awk '$3 ~ /^\// { print $3 }'
    done | sort -u | while read -r lib; do
        case $(basename "$lib") in
        libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libcuda* | libnvidia*) ;;
        *) cp -L "$lib" "$DEV/mpi/lib/" ;;
        esac
    done
    ucx=$(dirname "$(ldd "$DEV/bin/sgd_mf.cpu" | awk '/libucp/ { print $3 }')")/ucx
    [ ! -d "$ucx" ] || cp -rL "$ucx" "$DEV/mpi/ucx"
    find "$DEV/bin" "$DEV/mpi" -type f \( -perm -u+x -o -name "*.so*" \) -exec strip --strip-debug {} + 2>/dev/null || true
    git -C "$ROOT" rev-parse HEAD >"$DEV/commit" 2>/dev/null || echo unknown >"$DEV/commit"
    # packed: MPICH's library alone is 40 MB, and a carried tree may hold 64 MiB in all
    tar -C "$DEV" -czf "$ROOT/.device.tgz" .
    rm -rf "$DEV"
    mkdir -p "$DEV"
    mv "$ROOT/.device.tgz" "$DEV/device.tgz"
    echo "device.sh: prepared .device/device.tgz, $(du -sh "$DEV/device.tgz" | cut -f1) (commit $(tar -xzOf "$DEV/device.tgz" ./commit))"
}

# ------------------------------------------------------------------ on the device
run() {
    [ -f "$DEV/device.tgz" ] || { echo "device.sh: no .device/device.tgz: run 'bench/gpu/device.sh prepare' here and carry .device" >&2; exit 2; }
    W=${WORK:-/tmp/orion-device}
    rm -rf "$W"
    mkdir -p "$W/tree"
    tar -C "$W/tree" -xzf "$DEV/device.tgz"
    DEV=$W/tree
    OUT=${OUT:-$ROOT/device-out}
    mkdir -p "$OUT"
    S=$OUT/summary.txt
    : >"$S"
    say() { echo "$*" | tee -a "$S"; }
    export PATH="$DEV/mpi:$PATH" LD_LIBRARY_PATH="$DEV/mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    [ ! -d "$DEV/mpi/ucx" ] || export UCX_MODULE_DIR="$DEV/mpi/ucx"
    export HYDRA_LAUNCHER=fork
    NP=${NP:-$(nproc)} EPOCHS=${EPOCHS:-5} BIG=${BIG:-100000000} SMALL=${SMALL:-10000000}
    MPIEXEC="$DEV/mpi/mpiexec"
    B=$DEV/bin
    say "device.sh run: commit $(cat "$DEV/commit"), $(date -u +%FT%TZ), $NP cores"
    START=$(date +%s) BUDGET=${BUDGET:-450}
    # a stage: NAME LIMIT command... (its output in $W/NAME.log, its time said); none starts
    # past the budget
    stage() {
        name=$1 lim=$2
        shift 2
        st_t0=$(date +%s)
        if [ $((st_t0 - START)) -gt "$BUDGET" ]; then
            say "stage $name: skipped (past the $BUDGET s budget)"
            return 0
        fi
        if timeout "$lim" "$@" >"$W/$name.log" 2>&1; then st_rc=0; else st_rc=$?; fi
        st_el=$(($(date +%s) - st_t0))
        if [ "$st_rc" = 124 ]; then say "stage $name: ran out of its $lim s"; else say "stage $name: exit $st_rc, $st_el s"; fi
        return 0
    }
    # MPI itself, before anything that needs the device
    stage mpi 30 "$MPIEXEC" -n 2 "$B/sgd_mf.cpu" --help
    if ! nvidia-smi -L >"$W/gpu.txt" 2>&1; then
        say "dry run: no GPU here; everything before the first device call is done"
        exit 0
    fi
    say "device: $(head -n 1 "$W/gpu.txt")"
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader >>"$S" 2>&1 || true
    # 1. the device tests: every GPU program keeps its oracle at -n 1, 2, 3
    for p in sgd_mf_gpu gauss_seidel_gpu lda_gpu slr_gpu features_gpu; do
        stage "test_$p" 60 env MPIEXEC="$MPIEXEC" ROOT="$ROOT" LDA_REPLAY="$B/lda_replay" \
            SLR_REPLAY="$B/slr_replay" sh "$ROOT/tests/gpu/run.sh" device "$B/tests" "$p"
        cat "$W/test_$p.log" >>"$W/tests.log"
    done
    # 2. data: the Netflix-shaped set in NP parts at once, and the 10 M set
    gen() { # NAME USERS ITEMS RATINGS [SKEW]
        d=$W/$1
        mkdir -p "$d"
        i=0
        while [ $i -lt "$NP" ]; do
            "$B/gen_mf" "$2" "$3" "$4" 1 $i "$NP" "$d/tr.$i" "$d/te.$i" "$d/bin.$i" ${5:+"$5"} &
            i=$((i + 1))
        done
        wait
        i=0
        : >"$d/train"; : >"$d/test"; : >"$d/train.bin"
        while [ $i -lt "$NP" ]; do
            cat "$d/tr.$i" >>"$d/train"; cat "$d/te.$i" >>"$d/test"; cat "$d/bin.$i" >>"$d/train.bin"
            rm -f "$d/tr.$i" "$d/te.$i" "$d/bin.$i"
            i=$((i + 1))
        done
        echo "$1: $(wc -l <"$d/train") training, $(wc -l <"$d/test") test ratings"
    }
    gen big 480189 17770 "$BIG" >"$W/data_big.log" 2>&1 && say "$(cat "$W/data_big.log")" || say "data big: failed"
    gen small 480189 17770 "$SMALL" >"$W/data_small.log" 2>&1 && say "$(cat "$W/data_small.log")" || say "data small: failed"
    # the same size with items drawn uniformly: no item with a long chain of updates, which
    # bounds the serializable schedule on the skewed sets (docs/performance.md)
    gen uniform 480189 17770 "$SMALL" 1 >"$W/data_uniform.log" 2>&1 && say "$(cat "$W/data_uniform.log")" || say "data uniform: failed"
    # 3. SGD MF, K = 128: GPU at one rank, CPU on every core, cuMF_SGD
    best() { awk '/^(epoch|iteration)/ { for (i = 1; i <= NF; i++) if ($i == "s") { s = $(i - 1); if (b == "" || s < b) b = s } } END { print b }' "$1"; }
    last_rmse() { awk '/test rmse/ { for (i = 1; i <= NF; i++) if ($i == "rmse") r = $(i + 1) } END { print r }' "$1"; }
    mf() { # SET
        d=$W/$1
        n=$(wc -l <"$d/train")
        a="--train=$d/train --test=$d/test --epochs=$EPOCHS --rank=128 --step=0.005 --lam=0.05"
        # shellcheck disable=SC2086
        stage "mf_${1}_gpu" 150 env ORN_STATS=runs "$MPIEXEC" -n 1 "$B/sgd_mf.gpu" $a
        # shellcheck disable=SC2086
        stage "mf_${1}_cpu" 120 "$MPIEXEC" -n "$NP" "$B/sgd_mf.cpu" $a
        g=$(best "$W/mf_${1}_gpu.log") c=$(best "$W/mf_${1}_cpu.log")
        say "sgd_mf $1 ($n ratings, K = 128, $EPOCHS epochs): GPU best epoch ${g:-?} s, test rmse $(last_rmse "$W/mf_${1}_gpu.log"); CPU $NP ranks ${c:-?} s, test rmse $(last_rmse "$W/mf_${1}_cpu.log")"
        [ -z "$g" ] || [ -z "$c" ] || awk -v g="$g" -v c="$c" -v n="$n" 'BEGIN { printf "  GPU %.3g updates/s, CPU %.3g updates/s, GPU / CPU %.2f\n", n / g, n / c, c / g }' | tee -a "$S"
        grep "(2d)" "$W/mf_${1}_gpu.log" | tail -n 1 | sed 's/.*\(gpu in .*\)/  training loop: \1/' >>"$S" || true
        if [ -x "$B/cumf_sgd" ]; then
            (cd "$d" && stage "mf_${1}_cumf" 90 "$B/cumf_sgd" -g 0 -l 0.05 -a 0.08 -b 0.3 -u 1 -v 1 -x 1 -y 1 -s 6864 -k 128 -t "$EPOCHS" train.bin cumf.model)
            say "  cuMF_SGD: $(grep -i -m 3 'updates\|time' "$W/mf_${1}_cumf.log" | tr '\n' ' ')"
            say "  cuMF_SGD $("$B/mf_rmse" "$d/cumf.model" "$d/test" 2>&1)"
        fi
    }
    mf small
    mf uniform
    # the warps' row cache (codegen/cuda/cuda_rows.c, off by default) against none, on both
    # 10 M sets
    for set in small uniform; do
        stage "rowcache_on_$set" 60 "$MPIEXEC" -n 1 "$B/sgd_mf.gpurc" --train="$W/$set/train" --test="$W/$set/test" --epochs=3 --rank=128
        say "  $set with the row cache (orionc --gpu-rowcache): best epoch $(best "$W/rowcache_on_$set.log") s (without it: mf_$set above)"
    done
    # where the band pipeline's time goes (ORN_GPU_PROFILE: cycles waiting for the band above,
    # in tiles, publishing; tiles and iterations), 2 epochs of each 10 M set: the training
    # loop's lines (the evaluation loop is 2-D too)
    for set in small uniform; do
        stage "prof_$set" 120 env ORN_GPU_PROFILE=1 "$MPIEXEC" -n 1 "$B/sgd_mf.gpu" --train="$W/$set/train" --test="$W/$set/test" --epochs=2 --rank=128 --step=0.005 --lam=0.05
        grep "gpu profile" "$W/prof_$set.log" | sed "s/^/  profile $set: /" >>"$S" || true
    done
    mf big
    # 5. LDA and SLR: GPU at one rank against the CPU build on every core
    "$B/gen_corpus" 20000 5000 100 100 1 "$W/corpus.docword" >/dev/null 2>&1 || true
    stage lda_gpu 90 "$MPIEXEC" -n 1 "$B/lda.gpu" --data="$W/corpus.docword" --topics=100 --iters=5
    stage lda_cpu 90 "$MPIEXEC" -n "$NP" "$B/lda.cpu" --data="$W/corpus.docword" --topics=100 --iters=5
    stage lda_prof 90 env ORN_GPU_PROFILE=1 "$MPIEXEC" -n 1 "$B/lda.gpu" --data="$W/corpus.docword" --topics=100 --iters=2
    grep "gpu profile" "$W/lda_prof.log" | sed "s/^/  profile lda: /" >>"$S" || true
    say "lda (2 M tokens, 100 topics): best iteration GPU $(best "$W/lda_gpu.log") s, CPU $NP ranks $(best "$W/lda_cpu.log") s; last lines: $(tail -n 1 "$W/lda_gpu.log") | $(tail -n 1 "$W/lda_cpu.log")"
    "$B/gen_libsvm" 200000 100000 50 1 "$W/slr.train" "$W/slr.test" >/dev/null 2>&1 || true
    stage slr_gpu 90 "$MPIEXEC" -n 1 "$B/slr.gpu" --train="$W/slr.train" --test="$W/slr.test" --epochs=5
    stage slr_cpu 90 "$MPIEXEC" -n "$NP" "$B/slr.cpu" --train="$W/slr.train" --test="$W/slr.test" --epochs=5
    say "slr (200,000 x 100,000, 50 per row): best epoch GPU $(best "$W/slr_gpu.log") s, CPU $NP ranks $(best "$W/slr_cpu.log") s; last lines: $(tail -n 1 "$W/slr_gpu.log") | $(tail -n 1 "$W/slr_cpu.log")"
    # 4. the S sweep on the 10 M set (the cost model's choice against others)
    for t in 500 1000 2000 4000 8000; do
        # shellcheck disable=SC2086
        stage "sweep_$t" 60 env ORN_GPU_TILES=$t "$MPIEXEC" -n 1 "$B/sgd_mf.gpu" --train="$W/small/train" --test="$W/small/test" --epochs=3 --rank=128
        say "  S = $t: best epoch $(best "$W/sweep_$t.log") s"
    done
    # the band pipeline against the barrier steps (ORN_GPU_PIPELINE=0), and their two barriers
    stage steps_counter 60 env ORN_GPU_PIPELINE=0 "$MPIEXEC" -n 1 "$B/sgd_mf.gpu" --train="$W/small/train" --test="$W/small/test" --epochs=3 --rank=128
    stage steps_coop 60 env ORN_GPU_PIPELINE=0 ORN_GPU_BARRIER=coop "$MPIEXEC" -n 1 "$B/sgd_mf.gpu" --train="$W/small/train" --test="$W/small/test" --epochs=3 --rank=128
    say "  steps with a barrier instead of the band pipeline (the small set's GPU run above): atomic counter best epoch $(best "$W/steps_counter.log") s, grid.sync() $(best "$W/steps_coop.log") s"
    # 6. the training kernel under ncu (one launch, after the first)
    if command -v ncu >/dev/null 2>&1; then
        stage ncu 90 ncu --section SpeedOfLight --section Occupancy --section LaunchStats \
            -k regex:orn_gpu_kern --launch-skip 3 --launch-count 1 \
            "$B/sgd_mf.gpu" --train="$W/small/train" --test="$W/small/test" --epochs=2 --rank=128
    fi
    for f in tests mf_small_gpu mf_big_gpu ncu prof_small prof_uniform lda_prof; do
        [ ! -f "$W/$f.log" ] || cp "$W/$f.log" "$OUT/$f.log"
    done
    cat "$W"/mf_*_cpu.log "$W"/mf_*_cumf.log "$W"/sweep_*.log "$W"/lda_*.log "$W"/slr_*.log >"$OUT/other.log" 2>/dev/null || true
    say "done: $(date -u +%FT%TZ)"
}

case $MODE in
prepare) shift; prepare "$@" ;;
run) run ;;
dry) shift; prepare "$@"; OUT=${OUT:-$(mktemp -d)} run ;;
*) sed -n '2,30p' "$0"; exit 2 ;;
esac
