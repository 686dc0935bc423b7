#!/bin/sh
# bench/sgd_mf/run.sh [BUILD_DIR]: the SGD MF benchmark (docs/performance.md).
#
# Generates synthetic ratings (default 4M ratings, 40k users, 8k items, rank-10 truth plus
# noise), builds the hand-written serial C baseline (sgd_ref.c, -O3 -march=native
# -ffast-math: reassociation allowed) and bench/sgd_mf/sgd_bench.orn (orionc -march=native,
# i.e. -O2 with IEEE scalar code), runs each REPS times interleaved and prints, for rank K
# (default 100), the best seconds per epoch of each and the ratios
#     .orn -n 1 / C        (target <= 1.10)
#     .orn -n 1 / .orn -n 2 (target >= 1.7)
# Environment: USERS ITEMS RATINGS K EPOCHS REPS, ORN_BENCH_DIR (scratch; default
# BUILD_DIR/bench-sgd_mf), MPIRUN (default mpirun). The best of REPS runs is reported
# because other load on the machine only ever makes a run slower.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build/release}" && pwd)
ORIONC=$BUILD/tools/orionc
[ -x "$ORIONC" ] || { echo "run.sh: no orionc in $BUILD (build Orion first)" >&2; exit 2; }
USERS=${USERS:-40000} ITEMS=${ITEMS:-8000} RATINGS=${RATINGS:-4000000}
K=${K:-100} EPOCHS=${EPOCHS:-3} REPS=${REPS:-3} MPIRUN=${MPIRUN:-mpirun}
WORK=${ORN_BENCH_DIR:-$BUILD/bench-sgd_mf}
mkdir -p "$WORK"
cd "$WORK"

cc -O2 -o gen_ratings "$HERE/gen_ratings.c" -lm
data=syn_${USERS}_${ITEMS}_${RATINGS}
if [ ! -s "$data.train" ]; then
  echo "bench: generating $RATINGS ratings ($USERS users x $ITEMS items, rank-10 truth)"
  ./gen_ratings "$USERS" "$ITEMS" "$RATINGS" 10 1 "$data.train" "$data.test"
fi
cc -O3 -march=native -ffast-math -o sgd_ref "$HERE/sgd_ref.c" -lm
"$ORIONC" -march=native "$HERE/sgd_bench.orn" -o sgd_bench

secs() { awk '/s per epoch/ { for (i = 1; i <= NF; i++) if ($i == "s") print $(i - 1) }' "$1"; }
best() { printf '%s\n' "$@" | sort -g | head -1; }
ref="" n1="" n2=""
r=0
while [ "$r" -lt "$REPS" ]; do
  r=$((r + 1))
  ./sgd_ref "$data.train" "$EPOCHS" "$K" >ref.log
  "$MPIRUN" -n 1 ./sgd_bench --train="$data.train" --epochs="$EPOCHS" --rank="$K" >n1.log
  "$MPIRUN" -n 2 ./sgd_bench --train="$data.train" --epochs="$EPOCHS" --rank="$K" >n2.log
  ref="$ref $(secs ref.log)" n1="$n1 $(secs n1.log)" n2="$n2 $(secs n2.log)"
  echo "bench: run $r: C $(secs ref.log) s, .orn -n 1 $(secs n1.log) s, -n 2 $(secs n2.log) s per epoch"
done
# shellcheck disable=SC2086
bref=$(best $ref) bn1=$(best $n1) bn2=$(best $n2)
echo
echo "SGD MF, $RATINGS ratings, $USERS users x $ITEMS items, rank $K, $EPOCHS epochs, best of $REPS"
echo "  hand-written C (-O3 -march=native -ffast-math)  $bref s/epoch"
echo "  sgd_bench.orn, mpirun -n 1                     $bn1 s/epoch"
echo "  sgd_bench.orn, mpirun -n 2                     $bn2 s/epoch"
awk -v c="$bref" -v a="$bn1" -v b="$bn2" 'BEGIN {
  printf "  .orn -n 1 / C          %.2f   (target <= 1.10)\n", a / c
  printf "  .orn -n 1 / .orn -n 2  %.2f   (target >= 1.7)\n", a / b }'
