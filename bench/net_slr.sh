#!/bin/sh
# bench/net_slr.sh [BUILD_DIR]: SLR (bench/slr/slr.orn: a buffer flushed every $FLUSH
# samples per rank, today's bulk flushes) on the multi-host test bed (docs/testbed.md), one
# rank per host: seconds per epoch and bytes sent per epoch at each host count.
#
# Each host count runs twice, E1 and E2 epochs; bytes per epoch are the difference of the
# bytes all hosts sent (their links' counters) divided by E2 - E1, so that loading, setup
# and the final evaluation cancel out; seconds per epoch are the E2 runs' own average
# (evaluation excluded), the best of REPS runs (load on the machine only slows a run).
# Prints one line per host count (at 1 host nothing is sent: a few bytes either way are the
# process manager's).
#
# Environment: PROFILE (slow), HOSTS ("1 2 3 4"), SLR_N SLR_F SLR_Z (200000 100000 20:
# samples, features, non-zeros per row), FLUSH (10000), E1 E2 (2 6), REPS (3), ARGS (more
# arguments of the program, e.g. "--budget=0.5 --stale=true": managed communication and
# staleness-aware flushes), ORN_BENCH_DIR (scratch, default BUILD_DIR/bench-net), CC (cc).
# Needs root (scripts/cluster.sh).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build/release}" && pwd)
CLUSTER=$ROOT/scripts/cluster.sh
PROFILE=${PROFILE:-slow}
HOSTS=${HOSTS:-1 2 3 4}
SLR_N=${SLR_N:-200000} SLR_F=${SLR_F:-100000} SLR_Z=${SLR_Z:-20}
FLUSH=${FLUSH:-10000} E1=${E1:-2} E2=${E2:-6} REPS=${REPS:-3} ARGS=${ARGS:-}
WORK=${ORN_BENCH_DIR:-$BUILD/bench-net}
mkdir -p "$WORK"
cd "$WORK"
if [ ! -x gen_libsvm ]; then ${CC:-cc} -O2 -o gen_libsvm "$HERE/slr/gen_libsvm.c" -lm; fi
d=slr_${SLR_N}_${SLR_F}_${SLR_Z}
if [ ! -s "$d.test" ]; then ./gen_libsvm "$SLR_N" "$SLR_F" "$SLR_Z" 1 "$d.train" "$d.test"; fi
"$BUILD/tools/orionc" "$HERE/slr/slr.orn" -o slr
# sent CLUSTER: the bytes all its hosts have sent
sent() { "$CLUSTER" stats "$1" | awk '{ s += $4 } END { print s }'; }
name=''
trap '[ -z "$name" ] || "$CLUSTER" down "$name"' EXIT
echo "profile $PROFILE, $SLR_N samples x $SLR_F features, $SLR_Z nnz/row, flush every $FLUSH $ARGS"
for h in $HOSTS; do
  name=$("$CLUSTER" up --hosts "$h" --profile "$PROFILE" 2>/dev/null)
  b=''
  for e in "$E1" "$E2"; do
    b0=$(sent "$name")
    # shellcheck disable=SC2086
    "$CLUSTER" mpiexec "$name" -n "$h" ./slr --train="$d.train" --test="$d.test" \
      --epochs="$e" --flush="$FLUSH" $ARGS >"out.$h.$e" 2>&1 || { cat "out.$h.$e" >&2; exit 1; }
    b="$b $(($(sent "$name") - b0))"
  done
  r=1
  while [ "$r" -lt "$REPS" ]; do
    # shellcheck disable=SC2086
    "$CLUSTER" mpiexec "$name" -n "$h" ./slr --train="$d.train" --test="$d.test" \
      --epochs="$E2" --flush="$FLUSH" $ARGS >>"out.$h.$E2" 2>&1 || { cat "out.$h.$E2" >&2; exit 1; }
    r=$((r + 1))
  done
  "$CLUSTER" down "$name"
  name=''
  per=$(echo "$b" | awk -v e="$((E2 - E1))" '{ p = ($2 - $1) / e; print (p < 0 && p > -1e4) ? 0 : p }')
  awk -v h="$h" -v per="$per" '/^bench:/ { if (best == "" || $2 < best) best = $2; acc = $5; all = all " " $2 }
    END { printf "hosts %d  %.4f s/epoch (runs:%s)  %.2f MB sent per epoch  test accuracy %s\n",
          h, best, all, per / 1e6, acc }' "out.$h.$E2"
done
