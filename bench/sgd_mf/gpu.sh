#!/bin/sh
# bench/sgd_mf/gpu.sh [BUILD_DIR]: SGD MF (bench/sgd_mf/sgd_bench.orn) with every loop on the
# GPU (@gpu, orionc --gpu) at one rank, against the same program's CPU build on NP ranks (by
# default every core), on synthetic ratings (gen_ratings.c: USERS x ITEMS, RATINGS ratings,
# 10 % held out). Prints each run's epochs (seconds, updates per second) and the ratio of the
# best GPU epoch to the best CPU epoch. Results differ between the two (another order of the
# updates, as between rank counts); both print the training RMSE. Never asserts on timings.
#
# Environment: USERS (100000), ITEMS (20000), RATINGS (11000000), K (128), EPOCHS (5), NP
# (nproc), MPIRUN (mpiexec), ORN_BENCH_DIR (scratch, default BUILD_DIR/bench-sgd_gpu),
# BIN (a folder with gen_ratings, sgd_gpu and sgd_cpu built already: nothing is built; for
# a GPU machine without the build tools), ORN_CFLAGS and ORN_NVCC_ARCH (orionc's).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
USERS=${USERS:-100000} ITEMS=${ITEMS:-20000} RATINGS=${RATINGS:-11000000}
K=${K:-128} EPOCHS=${EPOCHS:-5} NP=${NP:-$(nproc)} MPIRUN=${MPIRUN:-mpiexec}
if [ -n "${BIN:-}" ]; then
  BIN=$(cd "$BIN" && pwd)
  WORK=${ORN_BENCH_DIR:-$(mktemp -d)}
else
  BUILD=$(cd "${1:-$ROOT/build/release}" && pwd)
  WORK=${ORN_BENCH_DIR:-$BUILD/bench-sgd_gpu}
  BIN=$WORK
  mkdir -p "$WORK"
  cc -O2 -o "$BIN/gen_ratings" "$HERE/gen_ratings.c" -lm
  sed -E 's/^([[:space:]]*)parallel_for/\1@gpu parallel_for/' "$HERE/sgd_bench.orn" >"$WORK/sgd_gpu.orn"
  "$BUILD/tools/orionc" --gpu "$WORK/sgd_gpu.orn" -o "$BIN/sgd_gpu"
  "$BUILD/tools/orionc" "$HERE/sgd_bench.orn" -o "$BIN/sgd_cpu"
fi
mkdir -p "$WORK"
cd "$WORK"
data=syn_${USERS}_${ITEMS}_${RATINGS}
if [ ! -s "$data.train" ]; then
  "$BIN/gen_ratings" "$USERS" "$ITEMS" "$RATINGS" 10 1 "$data.train" "$data.test"
fi
a="--train=$data.train --epochs=$EPOCHS --rank=$K"
echo "== GPU, 1 rank ($USERS users x $ITEMS items, $RATINGS ratings less 10 %, K = $K)"
# shellcheck disable=SC2086
ORN_STATS=runs "$MPIRUN" -n 1 "$BIN/sgd_gpu" $a >gpu.out 2>gpu.err || { cat gpu.out gpu.err; exit 1; }
cat gpu.out
grep -m 3 "sgd_gpu.orn:3[0-9] " gpu.err | cut -c1-400 || true
echo "== CPU, $NP ranks"
# shellcheck disable=SC2086
"$MPIRUN" -n "$NP" "$BIN/sgd_cpu" $a >cpu.out 2>cpu.err || { cat cpu.out cpu.err; exit 1; }
cat cpu.out
best() { awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "s") { s = $(i - 1); if (b == "" || s < b) b = s } } END { print b }' "$1"; }
g=$(best gpu.out) c=$(best cpu.out)
awk -v g="$g" -v c="$c" -v n="$RATINGS" -v np="$NP" 'BEGIN { t = n * 0.9
  printf "best epoch: GPU %.4f s (%.3g updates/s), CPU on %s ranks %.4f s (%.3g updates/s); GPU speed-up %.2f\n",
    g, t / g, np, c, t / c, c / g }'
