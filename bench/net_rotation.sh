#!/bin/sh
# bench/net_rotation.sh [BUILD_DIR]: the 2-D rotation's overlap on the multi-host test bed
# (docs/testbed.md; issue 12 items 4 and 5), one rank per host.
#
# For each profile (PROFILES, default "dc slow"), on 3 hosts: bench_rotation (SGD MF, K =
# $K, rotation against compute-only, alternating epochs) for each problem shape in SHAPES
# ("USERS:ITEMS:PER_USER", default a Netflix-like 500 ratings per item, the benchmark's
# own 67 per item, and the Netflix-like problem transposed: more items than users, where
# the runtime rotates W), twice, with E1 and E2 epochs; then, on 2 hosts, bench_xfer_order (a
# blocked reader's wait behind queued blocks; a transfer during computation with and
# without polls). Prints the benchmarks' lines and, per shape, the bytes all hosts' links
# carried per rotation epoch: the difference of the two runs' link counters over E2 - E1
# (loading and setup cancel out; the compute-only epochs send only their accumulators).
#
# Environment: PROFILES, SHAPES, K (100), E1 E2 (3 7), TIMELINE (a folder: each first run
# also writes DIR/rotation.PROFILE.SHAPE.json, checked with scripts/trace_check.py
# --overlap). Needs root (scripts/cluster.sh).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build/release}" && pwd)
CLUSTER=$ROOT/scripts/cluster.sh
PROFILES=${PROFILES:-dc slow}
SHAPES=${SHAPES:-100000:20000:100 40000:60000:100 20000:100000:500}
K=${K:-100} E1=${E1:-3} E2=${E2:-7}
TIMELINE=${TIMELINE:-}
ROT=$BUILD/bench/bench_rotation
ORDER=$BUILD/bench/bench_xfer_order
sent() { "$CLUSTER" stats "$1" | awk '{ s += $4 } END { print s }'; }
name=''
trap '[ -z "$name" ] || "$CLUSTER" down "$name"' EXIT
for p in $PROFILES; do
  echo "== profile $p, 3 hosts (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  name=$("$CLUSTER" up --hosts 3 --profile "$p" 2>/dev/null)
  for s in $SHAPES; do
    u=${s%%:*} rest=${s#*:}
    i=${rest%%:*} r=${rest#*:}
    b=''
    for e in "$E1" "$E2"; do
      tl=''
      if [ -n "$TIMELINE" ] && [ "$e" = "$E1" ]; then
        mkdir -p "$TIMELINE"
        tl=$TIMELINE/rotation.$p.$u.$i.json
      fi
      b0=$(sent "$name")
      "$CLUSTER" mpiexec "$name" -n 3 "$ROT" --users="$u" --items="$i" --per-user="$r" \
        --k="$K" --epochs="$e" ${tl:+--timeline="$tl"}
      b="$b $(($(sent "$name") - b0))"
      [ -z "$tl" ] || python3 "$ROOT/scripts/trace_check.py" "$tl" --overlap
    done
    echo "$b" | awk -v e="$((E2 - E1))" '{ printf "  links: %.2f MB per rotation epoch, all hosts\n", ($2 - $1) / e / 1e6 }'
  done
  "$CLUSTER" down "$name"
  name=''
  echo "== profile $p, 2 hosts"
  name=$("$CLUSTER" up --hosts 2 --profile "$p" 2>/dev/null)
  "$CLUSTER" mpiexec "$name" -n 2 "$ORDER"
  "$CLUSTER" down "$name"
  name=''
done
