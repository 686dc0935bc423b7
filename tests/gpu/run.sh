#!/bin/sh
# tests/gpu/run.sh: the GPU path of @gpu loops (docs/runtime.md, "GPU loop bodies").
#   run.sh ORIONC emulate PROG.orn   build PROG with and without --gpu; under ORN_GPU=emulate
#                                    at -n 1, 2, 3 (two shuffle seeds) it prints what the CPU
#                                    build prints, to the last bit
#   run.sh ORIONC broken PROG.orn    the deliberately wrong 2-D schedule (ORN_GPU_TEST_BROKEN)
#                                    gives a different result under the shuffled emulation
#   run.sh ORIONC device PROG.orn    on a GPU (nvidia-smi works) the real run equals the CPU
#                                    build; exit 77 (skipped: no GPU) otherwise
#   run.sh ORIONC nonvcc PROG.orn    --gpu without nvcc is a clear error (exit 2)
set -u
ORIONC=$1 MODE=$2 PROG=$3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if [ "$MODE" = nonvcc ]; then
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
if [ "$MODE" = device ] && ! nvidia-smi >/dev/null 2>&1; then
    echo "skipped: no GPU"
    exit 77
fi

"$ORIONC" "$PROG" -o "$W/cpu" || fail "CPU build"
"$ORIONC" --gpu "$PROG" -o "$W/gpu" || fail "--gpu build"
run() { # run N OUT [env...]
    n=$1 out=$2
    shift 2
    env "$@" mpirun -n "$n" "$W/$BIN" >"$out" 2>"$out.err" || { cat "$out.err"; fail "$BIN at -n $n"; }
}
for n in 1 2 3; do
    BIN=cpu run $n "$W/cpu.$n"
    case $MODE in
    emulate)
        for seed in 1 2; do
            BIN=gpu run $n "$W/emu.$n.$seed" ORN_GPU=emulate ORN_GPU_SEED=$seed ORN_GPU_TILES=4
            cmp -s "$W/cpu.$n" "$W/emu.$n.$seed" || { diff "$W/cpu.$n" "$W/emu.$n.$seed"; fail "emulation differs at -n $n (seed $seed)"; }
        done
        BIN=gpu run $n "$W/off.$n" ORN_GPU=off
        cmp -s "$W/cpu.$n" "$W/off.$n" || fail "ORN_GPU=off differs at -n $n"
        echo "ok: -n $n: emulation (2 seeds) and ORN_GPU=off equal the CPU build" ;;
    broken)
        BIN=gpu run $n "$W/emu.$n" ORN_GPU=emulate ORN_GPU_TILES=4
        cmp -s "$W/cpu.$n" "$W/emu.$n" || fail "the correct schedule differs at -n $n"
        BIN=gpu run $n "$W/bad.$n" ORN_GPU=emulate ORN_GPU_TILES=4 ORN_GPU_TEST_BROKEN=1
        if cmp -s "$W/cpu.$n" "$W/bad.$n"; then fail "the broken schedule went unnoticed at -n $n"; fi
        echo "ok: -n $n: the shuffled emulation shows the broken schedule" ;;
    device)
        BIN=gpu run $n "$W/dev.$n"
        cmp -s "$W/cpu.$n" "$W/dev.$n" || { diff "$W/cpu.$n" "$W/dev.$n"; fail "the GPU differs at -n $n"; } ;;
    esac
done
[ "$MODE" != emulate ] || grep -q "ORN_GPU=emulate" "$W/emu.1.1.err" || fail "emulation did not say so"
[ "$MODE" != emulate ] || ! grep -q "no GPU found" "$W/off.1.err" || fail "ORN_GPU=off said no GPU"
exit 0
