#!/bin/sh
# bench/net_slr_acc.sh [BUILD_DIR]: SLR's test accuracy and time on the multi-host test bed
# (docs/testbed.md), one rank per host, on a real data set held out from every test: the
# grants set of Debian's r-cran-modeldata (scripts/fetch-data.sh grants), its 8,190 training
# rows shuffled with a fixed seed and split 4:1 into training and test rows (the set's own
# test rows are a later year's, so their accuracy measures the drift more than the training).
#
# For each host count it runs bench/slr/slr.orn in four modes -- today's flushes (flush),
# staleness-aware flushes (stale), managed communication (managed: budget $BUDGET), both
# (managed+stale) -- REPS times each, and the serial C reference (bench/slr/slr_ref.c) once
# on the root namespace. Prints per mode: seconds per epoch (the program's, evaluation
# excluded; the best of REPS runs, all listed), the last epoch's training log-loss and the
# test accuracy (of the best run; the flush and stale modes are the same bits at every run).
# Every run also evaluates the test accuracy after each epoch (slr --curve, not timed): the
# best run's curve -- training seconds so far, log-loss, accuracy per epoch -- goes to
# WORK/curves.csv (hosts 0: serial C), and each mode's time to TARGET is printed: the
# training seconds until its test accuracy first reaches TARGET (default: serial C's
# accuracy after the last epoch less 0.5 points).
#
# Environment: PROFILE (slow), HOSTS ("1 2 3 4"), EPOCHS (8), FLUSH (10000), BUDGET (0.5),
# REPS (2), TARGET, ORN_DATA (data/), ORN_BENCH_DIR (scratch, default BUILD_DIR/bench-net),
# CC (cc).
# Needs root (scripts/cluster.sh).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build/release}" && pwd)
CLUSTER=$ROOT/scripts/cluster.sh
PROFILE=${PROFILE:-slow}
HOSTS=${HOSTS:-1 2 3 4}
EPOCHS=${EPOCHS:-8} FLUSH=${FLUSH:-10000} BUDGET=${BUDGET:-0.5} REPS=${REPS:-2}
DATA=${ORN_DATA:-$ROOT/data}
WORK=${ORN_BENCH_DIR:-$BUILD/bench-net}
[ -s "$DATA/grants_train.libsvm" ] || ORN_DATA=$DATA "$ROOT/scripts/fetch-data.sh" grants
mkdir -p "$WORK"
cd "$WORK"
# a fixed shuffle (an LCG keyed on the row number), then every fifth row to the test set
awk 'BEGIN { s = 12345 } { s = (s * 1103515245 + 12345) % 2147483648; printf "%d\t%s\n", s, $0 }' \
  "$DATA/grants_train.libsvm" | sort -n -k1,1 | cut -f2- >grants.shuf
awk 'NR % 5 == 0' grants.shuf >grants_ho.test
awk 'NR % 5 != 0' grants.shuf >grants_ho.train
if [ ! -x slr_ref ]; then ${CC:-cc} -O2 -o slr_ref "$HERE/slr/slr_ref.c" -lm; fi
"$BUILD/tools/orionc" "$HERE/slr/slr.orn" -o slr
a="--train=grants_ho.train --test=grants_ho.test --epochs=$EPOCHS --flush=$FLUSH --curve=true"
SLR_CURVE=1 ./slr_ref grants_ho.train grants_ho.test "$EPOCHS" >ref.out
TARGET=${TARGET:-$(awk '/^bench:/ { printf "%.6f", $5 - 0.005 }' ref.out)}
echo "profile $PROFILE, grants held out ($(wc -l <grants_ho.train) train, $(wc -l <grants_ho.test) test rows), $EPOCHS epochs, flush every $FLUSH, budget $BUDGET, target accuracy $TARGET"
# reached FILE: the first curve line of FILE at or above TARGET
reached() {
  awk -v t="$TARGET" '/^curve/ { e = $2 } /^curve/ && $5 >= t - 1e-9 && !done { printf "  time to %.4f: %.5f s (epoch %d)", t, $3, $2; done = 1 }
    END { if (!done) printf "  time to %.4f: not reached in %d epochs", t, e }' "$1"
}
awk '/log-loss/ { l = $4 } /^bench:/ { printf "serial C: %.5f s/epoch  log-loss %s  test accuracy %s", $2, l, $5 }' ref.out
reached ref.out
echo
echo "hosts,mode,epoch,seconds,logloss,accuracy" >curves.csv
awk '/^curve/ { printf "0,serial,%d,%s,%s,%s\n", $2, $3, $4, $5 }' ref.out >>curves.csv
name=''
trap '[ -z "$name" ] || "$CLUSTER" down "$name"' EXIT
for h in $HOSTS; do
  name=$("$CLUSTER" up --hosts "$h" --profile "$PROFILE" 2>/dev/null)
  for mode in flush stale managed managed+stale; do
    case $mode in
      flush) m="" ;;
      stale) m="--stale=true" ;;
      managed) m="--budget=$BUDGET" ;;
      managed+stale) m="--budget=$BUDGET --stale=true" ;;
    esac
    : >"out.$h.$mode"
    r=0
    while [ "$r" -lt "$REPS" ]; do
      # shellcheck disable=SC2086
      ORN_STATS=runs "$CLUSTER" mpiexec "$name" -n "$h" ./slr $a $m >"run.out" 2>"run.err" ||
        { cat run.out run.err >&2; exit 1; }
      early=$(awk '{ for (i = 1; i < NF; i++) if ($i == "early") s += $(i + 1) } END { print s + 0 }' run.err)
      awk -v e="$early" '/log-loss/ { l = $4 } /^bench:/ { print $2, l, $5, e }' run.out >>"out.$h.$mode"
      cp run.out "run.$h.$mode.$r"
      r=$((r + 1))
    done
    awk -v h="$h" -v mode="$mode" '{ all = all " " $1; if (best == "" || $1 < best) { best = $1; l = $2; acc = $3; e = $4 } }
      END { printf "hosts %d  %-14s %.5f s/epoch (runs:%s)  log-loss %s  test accuracy %s  early deltas %d",
            h, mode, best, all, l, acc, e }' "out.$h.$mode"
    b=$(awk '{ if (best == "" || $1 < best) { best = $1; i = NR - 1 } } END { print i }' "out.$h.$mode")
    reached "run.$h.$mode.$b"
    echo
    awk -v h="$h" -v mode="$mode" '/^curve/ { printf "%d,%s,%d,%s,%s,%s\n", h, mode, $2, $3, $4, $5 }' \
      "run.$h.$mode.$b" >>curves.csv
  done
  "$CLUSTER" down "$name"
  name=''
done
