#!/bin/sh
# tests/gpu/run.sh: the GPU path of @gpu loops (docs/runtime.md section 16).
#
#   run.sh build ORIONC BIN PROG.orn...   build each program twice into BIN: NAME.cpu (orionc)
#                                         and NAME.gpu (orionc --gpu, which must not warn: every
#                                         @gpu loop runs on the GPU path); the tests below share
#                                         these binaries (one nvcc compile per program)
#   run.sh nonvcc ORIONC PROG.orn         --gpu without nvcc is a clear error (exit 2)
#   run.sh examples ORIONC EXAMPLE.orn... each example with @gpu on every parallel_for: the
#                                         CUDA back end runs every loop (--emit=cuda, which
#                                         needs no nvcc, writes a kernel per loop and warns
#                                         about none)
#   run.sh cpupath ORIONC PROG.orn        every @gpu loop of PROG is one the CUDA back end does
#                                         not run: --emit=cuda warns about each, writes no
#                                         kernel
#   run.sh allgpu ORIONC EXAMPLE.orn...   each example with @gpu on every parallel_for, built
#                                         with --gpu, under ORN_GPU=emulate with the residency
#                                         check (ORN_GPU_CHECK=1) at -n 1, 2, 3 on the tests'
#                                         small data: no stale resident copy, no block on the
#                                         CPU path; sgd_mf and gauss_seidel equal the CPU
#                                         build, lda and slr (whose buffer updates apply at the
#                                         end of each call on the GPU path) give the same
#                                         output under two shuffle seeds
#   run.sh emulate BIN NAME               under ORN_GPU=emulate at -n 1, 2, 3, in two
#                                         configurations (shuffle seed, tiles per block,
#                                         sub-blocks or flush interval), the program's results
#                                         equal its oracle; ORN_GPU=off equals the CPU build;
#                                         no block fell back to the CPU path
#   run.sh broken BIN NAME                the deliberately wrong 2-D GPU schedule
#                                         (ORN_GPU_TEST_BROKEN=1) breaks the equality at every -n
#   run.sh broken_lanes BIN NAME          warp kernels without their __syncwarp barriers
#                                         (ORN_GPU_TEST_BROKEN=lanes): the emulated lanes, in
#                                         their shuffled order, break the equality at every -n
#   run.sh fallback BIN NAME              features_gpu with a randint bound of 0: the device
#                                         flags it, the block runs on the CPU body, which
#                                         reports the error with its line (exit 1), and the
#                                         program says a block fell back
#   run.sh resident BIN NAME              residency (sgd_mf_gpu): under the emulation with
#                                         ORN_STATS=runs, at -n 1 every run of the training
#                                         loop after its first copies nothing to the device
#                                         (arrays, ratings, keys and schedule stay there), at
#                                         -n 2 and 3 only the rotated blocks go in; results
#                                         equal the CPU build; and with the invalidation of
#                                         copies broken (ORN_GPU_TEST_BROKEN=stale) the check
#                                         (ORN_GPU_CHECK=1) stops the run on a stale copy
#   run.sh launches BIN NAME              the persistent kernel (sgd_mf_gpu): under the emulation
#                                         with ORN_STATS=runs at -n 1, 2, 3 and S = 3 and 24 tiles
#                                         per side, the training loop's launches and host-device
#                                         syncs per run are the same for both S (one launch per
#                                         block, one block per run at -n 1), its device barriers
#                                         2S - 2 per launch; results equal the CPU build
#   run.sh device BIN NAME                on a GPU (nvidia-smi works) the real run against the
#                                         oracle; exit 77 (skipped: no GPU) otherwise
#
# Oracles: sgd_mf_gpu, gauss_seidel_gpu and features_gpu equal the CPU build bit for bit (ordered loops,
# and unordered 2-D loops whose GPU wavefront keeps key order between dependent iterations).
# lda_gpu and slr_gpu read a buffer's target that they update: on the GPU path a call's
# updates apply at its end (docs/runtime.md section 16), so they equal the serial replay of
# the recorded order in that mode ($LDA_REPLAY / $SLR_REPLAY ... gpu), bit for bit. On a
# real GPU, exp and log are CUDA's: SLR's numbers and LDA's log-likelihood are compared
# within a relative 1e-4 and 1e-9 there, features_gpu's (whose normal draws take CUDA's log
# and cos: its sum of draws differed in the 16th digit on an H100) within 1e-12, everything
# else exactly.
# Environment (CTest): MPIEXEC, ROOT (the source tree), LDA_REPLAY, SLR_REPLAY.
set -u
MODE=$1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}

build_one() { # PROG.orn: NAME.cpu and NAME.gpu (SGD MF also NAME.gpurc) into $BIN
    prog=$1 name=$(basename "$1" .orn) err="$W/err.$(basename "$1" .orn)"
    "$ORIONC" "$prog" -o "$BIN/$name.cpu" || fail "CPU build of $prog"
    "$ORIONC" --gpu "$prog" -o "$BIN/$name.gpu" 2>"$err" || { cat "$err"; fail "--gpu build of $prog"; }
    [ ! -s "$err" ] || { cat "$err"; fail "--gpu build of $prog warned"; }
    # SGD MF also with the warps' row caches (compiled in only when asked)
    if [ "$name" = sgd_mf_gpu ]; then
        "$ORIONC" --gpu-rowcache "$prog" -o "$BIN/$name.gpurc" 2>"$err" ||
            { cat "$err"; fail "--gpu-rowcache build of $prog"; }
        [ ! -s "$err" ] || { cat "$err"; fail "--gpu-rowcache build of $prog warned"; }
    fi
    echo "ok: $name built (CPU and --gpu)"
}
if [ "$MODE" = build ]; then
    ORIONC=$2 BIN=$3
    shift 3
    mkdir -p "$BIN"
    # two builders (the GPU tests wait for them), each taking every other program
    build_lane() { # LANE PROG.orn...: the programs at positions LANE, LANE + 2, ...
        lane=$1 j=0
        shift
        for prog in "$@"; do
            [ $((j % 2)) != "$lane" ] || build_one "$prog"
            j=$((j + 1))
        done
    }
    build_lane 0 "$@" >"$W/lane0" 2>&1 &
    pid0=$!
    build_lane 1 "$@" >"$W/lane1" 2>&1 &
    pid1=$!
    ok=1
    wait "$pid0" || ok=0
    wait "$pid1" || ok=0
    cat "$W/lane0" "$W/lane1"
    [ "$ok" = 1 ] || exit 1
    exit 0
fi
if [ "$MODE" = nonvcc ]; then
    ORIONC=$2 PROG=$3
    ORN_NVCC=/nonexistent/nvcc "$ORIONC" --gpu "$PROG" -o "$W/p" 2>"$W/err"
    rc=$?
    cat "$W/err"
    [ $rc -eq 2 ] || fail "exit $rc, expected 2"
    grep -q "needs the CUDA compiler nvcc" "$W/err" || fail "no clear message"
    grep -q "ORN_NVCC" "$W/err" || fail "the message does not say how to point at nvcc"
    [ ! -e "$W/p" ] || fail "an executable was written"
    echo "ok: --gpu without nvcc is refused"
    exit 0
fi

if [ "$MODE" = examples ]; then
    ORIONC=$2
    shift 2
    for ex in "$@"; do
        name=$(basename "$ex" .orn)
        sed -E 's/^([[:space:]]*)(@ordered )?parallel_for/\1\2@gpu parallel_for/' "$ex" >"$W/$name.orn"
        loops=$(grep -c '@gpu parallel_for' "$W/$name.orn")
        [ "$loops" -gt 0 ] || fail "$name: no loop"
        "$ORIONC" --emit=cuda "$W/$name.orn" -o "$W/$name.cu" 2>"$W/err" || { cat "$W/err"; fail "$name: --emit=cuda"; }
        [ ! -s "$W/err" ] || { cat "$W/err"; fail "$name: a @gpu loop does not run on the GPU path"; }
        kernels=$(grep -c '^__global__ void .*orn_gpu_kern_' "$W/$name.cu")
        [ "$kernels" -eq "$loops" ] || fail "$name: $kernels kernels for $loops @gpu loops"
        echo "ok: $name: $loops loops, $kernels kernels"
    done
    exit 0
fi

if [ "$MODE" = cpupath ]; then
    ORIONC=$2 PROG=$3
    "$ORIONC" --emit=cuda "$PROG" -o "$W/p.cu" 2>"$W/err" || { cat "$W/err"; fail "--emit=cuda"; }
    loops=$(grep -c '^ *@gpu parallel_for' "$PROG")
    said=$(grep -c 'warning: this @gpu loop runs on the CPU' "$W/err")
    kernels=$(grep -c '^__global__ void .*orn_gpu_kern_' "$W/p.cu")
    [ "$said" -eq "$loops" ] || { cat "$W/err"; fail "$said warnings for $loops loops"; }
    [ "$kernels" -eq 0 ] || fail "$kernels kernels written"
    echo "ok: $loops loops on the CPU path, each said"
    exit 0
fi

if [ "$MODE" = allgpu ]; then
    ORIONC=$2
    shift 2
    : "${MPIEXEC:?}" "${ROOT:?}"
    D=$ROOT/tests/e2e/data
    # the output without timings ("  0.012 s  1.2e+07 tokens/s" ends a line)
    strip() { sed -E 's/  [0-9.]+ s  .*$//' "$1"; }
    for ex in "$@"; do
        name=$(basename "$ex" .orn)
        case $name in
        sgd_mf) args="--train=$D/ratings.train --test=$D/ratings.test --epochs=3" oracle=cpu ;;
        gauss_seidel) args="--n=40 --sweeps=4 --out=grid.txt" oracle=cpu ;;
        lda) args="--data=$D/tokens.docword --topics=4 --iters=3" oracle=seeds ;;
        slr) args="--train=$D/tiny.libsvm --test=$D/tiny.libsvm --epochs=3 --flush=16" oracle=seeds ;;
        *) fail "no arguments for $name" ;;
        esac
        sed -E 's/^([[:space:]]*)(@ordered )?parallel_for/\1\2@gpu parallel_for/' "$ex" >"$W/$name.orn"
        "$ORIONC" "$W/$name.orn" -o "$W/$name.cpu" || fail "$name: CPU build"
        "$ORIONC" --gpu "$W/$name.orn" -o "$W/$name.gpu" 2>"$W/err" || { cat "$W/err"; fail "$name: --gpu build"; }
        [ ! -s "$W/err" ] || { cat "$W/err"; fail "$name: a @gpu loop does not run on the GPU path"; }
        for n in 1 2 3; do
            for v in cpu 1 2; do
                d=$W/$name.$n.$v
                mkdir -p "$d"
                if [ "$v" = cpu ]; then
                    # shellcheck disable=SC2086
                    one=""
                    [ "$n" != 1 ] || one=ORN_BLOCKS_PER_RANK=1 # a @gpu loop's one block
                    # shellcheck disable=SC2086
                    (cd "$d" && env $one "$MPIEXEC" -n "$n" "$W/$name.cpu" $args >out 2>err) ||
                        { cat "$d/err"; fail "$name.cpu at -n $n"; }
                    continue
                fi
                # shellcheck disable=SC2086
                (cd "$d" && ORN_GPU=emulate ORN_GPU_CHECK=1 ORN_GPU_SEED=$v "$MPIEXEC" -n "$n" \
                    "$W/$name.gpu" $args >out 2>err) || { cat "$d/err"; fail "$name.gpu at -n $n (seed $v)"; }
                ! grep -q "ran on the CPU path\|resident copy" "$d/err" || { cat "$d/err"; fail "$name at -n $n (seed $v)"; }
            done
            c=$W/$name.$n.cpu a=$W/$name.$n.1 b=$W/$name.$n.2
            if [ "$oracle" = cpu ]; then
                for e in "$a" "$b"; do
                    [ "$(strip "$e/out")" = "$(strip "$c/out")" ] || { diff "$c/out" "$e/out"; fail "$name at -n $n: the emulation differs from the CPU build"; }
                    [ ! -f "$c/grid.txt" ] || cmp -s "$c/grid.txt" "$e/grid.txt" || fail "$name at -n $n: grid.txt differs"
                done
            else
                [ "$(strip "$a/out")" = "$(strip "$b/out")" ] || { diff "$a/out" "$b/out"; fail "$name at -n $n: two shuffle seeds differ"; }
            fi
        done
        echo "ok: $name: every loop on the GPU path, residency checked at -n 1, 2 and 3 ($oracle)"
    done
    exit 0
fi

BIN=$2 NAME=$3
: "${MPIEXEC:?}" "${ROOT:?}"
if [ "$MODE" = device ] && ! nvidia-smi >/dev/null 2>&1; then
    echo "skipped: no GPU"
    exit 77
fi
D=$ROOT/tests/e2e/data

# What each program runs with: ARGS, its two configurations (CONF1, CONF2: environment
# assignments and program options, as slr_gpu's flush interval), the files it saves (OUTS),
# its oracle.
case $NAME in
sgd_mf_gpu)
    ARGS="--train=$D/ratings.train --test=$D/ratings.test"
    # the first: rows of 10 factors; the second: 600 factors, so that a warp's lanes take
    # chunks of 4 elements and a tail. The emulation runs both also on the build with the
    # warps' row caches (codegen/cuda/cuda_rows.c, orionc --gpu-rowcache: RCBIN), where the
    # second's rows of 2,400 bytes are over the cache's 2,048 and are not cached
    CONF1="ORN_GPU_TILES=4" CONF2="ORN_GPU_TILES=3 ORN_SUBBLOCK=2x2 --rank=600"
    RCBIN=$NAME.gpurc OUTS="" ORACLE=cpu ;;
gauss_seidel_gpu)
    ARGS="--n=40 --sweeps=6 --out=grid.txt"
    CONF1="ORN_GPU_TILES=4" CONF2="ORN_GPU_TILES=3"
    OUTS="grid.txt" ORACLE=cpu ;;
features_gpu)
    ARGS=""
    CONF1="ORN_GPU_TILES=4" CONF2="ORN_BLOCKS_PER_RANK=3"
    OUTS="" ORACLE=cpu ;;
lda_gpu)
    ARGS="--data=$D/tokens.docword --topics=4 --iters=3 --alpha=0.1 --beta=0.01 --seed=7"
    CONF1="ORN_GPU_TILES=4" CONF2="ORN_GPU_TILES=3 ORN_SUBBLOCK=2x3"
    OUTS="z.txt doc_topic.txt word_topic.txt topic_count.txt ll.txt" ORACLE=lda ;;
slr_gpu)
    ARGS="--train=$D/tiny.libsvm --test=$D/tiny.libsvm --epochs=4 --step=0.05 --lam=0.0001"
    CONF1="--flush=64" CONF2="--flush=7"
    OUTS="w.txt loss.txt correct.txt" ORACLE=slr ;;
*) fail "unknown program $NAME" ;;
esac
SRC=$ROOT/tests/gpu/$NAME.orn
RCBIN=${RCBIN:-}

# run DIR N BIN CONF [env...]: run BIN at -n N in DIR (created) with CONF and the
# environment given; stdout to DIR/out, stderr to DIR/err
run() {
    dir=$1 n=$2 bin=$3 conf=$4
    shift 4
    mkdir -p "$dir"
    extra=""
    # shellcheck disable=SC2086
    # one rank: a @gpu loop runs as one block (runtime/layout.c), the CPU build as the
    # oracle too
    case $n.$bin in 1.*.cpu) set -- ORN_BLOCKS_PER_RANK=1 "$@" ;; esac
    # a configuration's words: environment assignments, and --options for the program
    for w in $conf; do
        case $w in --*) extra="$extra $w" ;; *) set -- "$@" "$w" ;; esac
    done
    # MPI itself failing to start (MPICH's UCX on a loaded machine: "init_worker ... No such
    # device") is retried once; any other failure is the test's
    for try in 1 2; do
        # shellcheck disable=SC2086
        (cd "$dir" && env "$@" ORN_TRACE=trace.txt "$MPIEXEC" -n "$n" "$BIN/$bin" $ARGS $extra \
            >out 2>err) && break
        if [ "$try" = 1 ] && grep -q "MPIR_init_comm_world" "$dir/err"; then continue; fi
        cat "$dir/err"
        fail "$bin at -n $n ($*)"
    done
    ! grep -q "ran on the CPU path" "$dir/err" || { cat "$dir/err"; fail "a block fell back to the CPU at -n $n ($conf)"; }
}

# numeq A B RTOL: the files hold the same words, numbers equal within RTOL (relative)
numeq() {
    awk -v r="$3" 'NR == FNR { a[FNR] = $0; n = FNR; next }
        { split(a[FNR], x); m = split($0, y); if (m != split(a[FNR], x)) bad = 1
          for (i = 1; i <= m; i++) if (x[i] != y[i]) {
              d = x[i] - y[i]; if (d < 0) d = -d; s = (x[i] < 0 ? -x[i] : x[i]) + 1e-30
              if (x[i] + 0 != x[i] || d > r * s) bad = 1 } }
        END { exit bad || FNR != n }' "$1" "$2"
}

# same DIR REF TOL: DIR's results equal REF's (a CPU run or a replay directory); TOL 0 is
# bit for bit, else numeq's tolerance for the numbers exp and log feed
same() {
    dir=$1 ref=$2 tol=$3
    for f in $OUTS; do
        if [ "$tol" = 0 ] || [ "$f" = z.txt ] || [ "$f" = doc_topic.txt ] ||
            [ "$f" = word_topic.txt ] || [ "$f" = topic_count.txt ] || [ "$f" = correct.txt ]; then
            cmp -s "$dir/$f" "$ref/$f" || return 1
        else
            numeq "$dir/$f" "$ref/$f" "$tol" || return 1
        fi
    done
    [ "$ORACLE" != cpu ] || [ "$tol" = 0 ] || { numeq "$dir/out" "$ref/out" "$tol"; return; }
    [ "$ORACLE" != cpu ] || cmp -s "$dir/out" "$ref/out"
}

# show DIR REF: what differs (for the log of a failure)
show() {
    for f in out $OUTS; do
        [ -f "$2/$f" ] && ! cmp -s "$1/$f" "$2/$f" && { echo "--- $f:"; diff "$2/$f" "$1/$f" | head -n 10; }
    done
    return 0
}

# oracle DIR: the serial replay of DIR's recorded order (GPU mode) into DIR/replay
oracle() {
    dir=$1
    mkdir -p "$dir/replay"
    case $ORACLE in
    lda)
        # shellcheck disable=SC2046
        "$LDA_REPLAY" "$D/tokens.docword" "$dir/trace.txt" \
            $(grep -n '^ *@gpu parallel_for' "$SRC" | cut -d: -f1) 4 3 0.1 0.01 7 "$dir/replay" gpu \
            >/dev/null || fail "lda_replay of $dir" ;;
    slr)
        tl=$(grep -n 'parallel_for n, label in y$' "$SRC" | cut -d: -f1)
        el=$(grep -n 'parallel_for n, label in yt$' "$SRC" | cut -d: -f1)
        "$SLR_REPLAY" "$D/tiny.libsvm" "$D/tiny.libsvm" "$dir/trace.txt" "$tl" "$el" 4 0.05 \
            0.0001 "$dir/replay" gpu >/dev/null || fail "slr_replay of $dir" ;;
    esac
}

# ref DIR CPUDIR: where DIR's results are checked against
ref() {
    if [ "$ORACLE" = cpu ]; then echo "$2"; else oracle "$1"; echo "$1/replay"; fi
}

if [ "$MODE" = fallback ]; then
    for n in 1 2; do
        # shellcheck disable=SC2086
        (cd "$W" && ORN_GPU=emulate "$MPIEXEC" -n "$n" "$BIN/$NAME.gpu" $ARGS --bound=0 \
            >out 2>err)
        rc=$?
        [ $rc -eq 1 ] || { cat "$W/err"; fail "-n $n: exit $rc, expected 1"; }
        grep -q "ran on the CPU path" "$W/err" || { cat "$W/err"; fail "-n $n: no fallback said"; }
        grep -q "$NAME.orn:[0-9]*:[0-9]*: randint(0): the bound must be positive" "$W/err" ||
            { cat "$W/err"; fail "-n $n: the CPU body did not report the error"; }
        echo "ok: -n $n: the block fell back to the CPU body, which reported the error"
    done
    exit 0
fi

# gpuin DIR LINE: the bytes each run of the loop at LINE copied to the device on rank 0
gpuin() {
    grep "rank 0: .*$NAME.orn:$2 " "$1/err" | sed -n 's/.*gpu in \([0-9]*\) B.*/\1/p'
}

# the counts of ORN_STATS=runs for DIR's runs of the loop at LINE on rank 0: "launches syncs
# barriers", a line per run
counts() {
    grep "rank 0: .*$NAME.orn:$2 " "$1/err" |
        sed -n 's/.*gpu launches \([0-9]*\), syncs \([0-9]*\), device barriers \([0-9]*\).*/\1 \2 \3/p'
}

if [ "$MODE" = launches ]; then
    line=$(grep -n '@gpu parallel_for (u, i), r in ratings' "$SRC" | cut -d: -f1)
    for n in 1 2 3; do
        c=$W/cpu.$n
        run "$c" "$n" "$NAME.cpu" "$CONF1"
        for S in 3 24; do
            e=$W/s$S.$n
            run "$e" "$n" "$NAME.gpu" "ORN_GPU_TILES=$S" ORN_GPU=emulate ORN_STATS=runs
            same "$e" "$c" 0 || { show "$e" "$c"; fail "-n $n, S = $S: results differ from the CPU build"; }
            counts "$e" "$line" >"$e/counts"
            [ "$(wc -l <"$e/counts")" -eq 3 ] || { cat "$e/err"; fail "-n $n: no statistics of 3 runs"; }
        done
        a=$W/s3.$n/counts b=$W/s24.$n/counts
        # launches and syncs per run do not depend on S; barriers on the device do (2S - 2 per
        # block: the wavefront's steps)
        [ "$(cut -d' ' -f1,2 "$a")" = "$(cut -d' ' -f1,2 "$b")" ] ||
            { paste "$a" "$b"; fail "-n $n: launches or syncs change with S"; }
        while read -r l s bar; do
            [ "$n" != 1 ] || [ "$l" -eq 1 ] || fail "-n 1: $l launches in a run (one block: 1)"
            [ "$s" -le $((8 * l)) ] || fail "-n $n: $s syncs for $l launches"
        done <"$a"
        read -r l3 s3 b3 <"$a"
        read -r l24 s24 b24 <"$b"
        [ "$b3" -eq $((4 * l3)) ] && [ "$b24" -eq $((46 * l24)) ] ||
            fail "-n $n: $b3 and $b24 device barriers for S = 3 and 24 ($l3 launches)"
        echo "ok: -n $n: per run $l3 launches, $s3 syncs at S = 3 and 24; device barriers $b3 and $b24"
    done
    exit 0
fi

if [ "$MODE" = resident ]; then
    line=$(grep -n '@gpu parallel_for (u, i), r in ratings' "$SRC" | cut -d: -f1)
    for n in 1 2 3; do
        c=$W/cpu.$n e=$W/res.$n
        run "$c" "$n" "$NAME.cpu" "$CONF1"
        run "$e" "$n" "$NAME.gpu" "$CONF1" ORN_GPU=emulate ORN_GPU_CHECK=1 ORN_STATS=runs
        same "$e" "$c" 0 || { show "$e" "$c"; fail "-n $n: results differ from the CPU build"; }
        gpuin "$e" "$line" >"$e/in"
        [ "$(wc -l <"$e/in")" -eq 3 ] || { cat "$e/err"; fail "-n $n: no statistics of 3 runs"; }
        first=$(head -n 1 "$e/in")
        [ "$first" -gt 0 ] || fail "-n $n: the first run copied nothing"
        for b in $(tail -n 2 "$e/in"); do
            if [ "$n" = 1 ]; then
                [ "$b" -eq 0 ] || fail "-n 1: a later run copied $b bytes in (first $first)"
            else
                [ "$b" -gt 0 ] && [ $((b * 3)) -lt "$first" ] ||
                    fail "-n $n: a later run copied $b bytes in (first $first)"
            fi
        done
        echo "ok: -n $n: the training loop copied $first bytes in, then $(tail -n 2 "$e/in" | paste -sd' ')"
    done
    b=$W/stale
    mkdir -p "$b"
    # two blocks per rank: a block's written copy overlaps the copies the other block used
    (cd "$b" && ORN_GPU=emulate ORN_GPU_CHECK=1 ORN_GPU_TEST_BROKEN=stale ORN_BLOCKS_PER_RANK=2 "$MPIEXEC" -n 1 \
        "$BIN/$NAME.gpu" $ARGS >out 2>err)
    rc=$?
    [ $rc -ne 0 ] && grep -q "resident copy of .* differs from the host" "$b/err" ||
        { cat "$b/err"; fail "the stale copy went unnoticed (exit $rc)"; }
    echo "ok: a stale resident copy stops the run: $(grep -o 'resident copy of [^ ]*' "$b/err" | head -n 1)"
    exit 0
fi

for n in 1 2 3; do
    case $MODE in
    emulate)
        i=0
        for conf in "$CONF1" "$CONF2"; do
            i=$((i + 1))
            c=$W/cpu.$n.$i
            run "$c" "$n" "$NAME.cpu" "$conf"
            for bin in "$NAME.gpu" $RCBIN; do
                e=$W/emu.$n.$i.$bin
                run "$e" "$n" "$bin" "$conf" ORN_GPU=emulate ORN_GPU_SEED=$i ORN_GPU_CHECK=1
                grep -q "ORN_GPU=emulate" "$e/err" || fail "the emulation did not say so"
                r=$(ref "$e" "$c")
                same "$e" "$r" 0 || { show "$e" "$r"; fail "-n $n ($conf, $bin): the emulation differs from its oracle"; }
            done
            o=$W/off.$n.$i
            run "$o" "$n" "$NAME.gpu" "$conf" ORN_GPU=off
            { same "$o" "$c" 0 && cmp -s "$o/out" "$c/out"; } ||
                { show "$o" "$c"; fail "-n $n ($conf): ORN_GPU=off differs from the CPU build"; }
            ! grep -q "no GPU found" "$o/err" || fail "ORN_GPU=off said no GPU"
        done
        echo "ok: -n $n: the emulation (2 configurations${RCBIN:+, with and without the row caches}) equals the $ORACLE oracle, ORN_GPU=off the CPU build" ;;
    broken | broken_lanes)
        # the deliberately wrong 2-D schedule, or warps without their barriers
        how=1 what="broken schedule" good="correct schedule"
        [ "$MODE" = broken ] || how=lanes what="missing warp barriers" good="warps with their barriers"
        c=$W/cpu.$n
        run "$c" "$n" "$NAME.cpu" "$CONF1"
        e=$W/emu.$n
        run "$e" "$n" "$NAME.gpu" "$CONF1" ORN_GPU=emulate
        same "$e" "$(ref "$e" "$c")" 0 || fail "-n $n: the $good differs"
        b=$W/bad.$n
        run "$b" "$n" "$NAME.gpu" "$CONF1" ORN_GPU=emulate ORN_GPU_TEST_BROKEN=$how
        if same "$b" "$(ref "$b" "$c")" 0; then fail "-n $n: the $what went unnoticed"; fi
        echo "ok: -n $n: the shuffled emulation shows the $what" ;;
    device)
        tol=0
        [ "$NAME" = lda_gpu ] && tol=1e-9
        [ "$NAME" = slr_gpu ] && tol=1e-4
        [ "$NAME" = features_gpu ] && tol=1e-12
        c=$W/cpu.$n
        run "$c" "$n" "$NAME.cpu" "$CONF1"
        g=$W/dev.$n
        run "$g" "$n" "$NAME.gpu" "$CONF1"
        r=$(ref "$g" "$c")
        same "$g" "$r" "$tol" || { show "$g" "$r"; fail "-n $n: the GPU differs from its oracle"; }
        echo "ok: -n $n: the GPU equals the $ORACLE oracle (tolerance $tol)" ;;
    esac
done
exit 0
