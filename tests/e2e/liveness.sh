#!/bin/sh
# liveness.sh NP: a busy rank is never taken for dead; a stopped or killed rank is named
# (dsm/live.h). Registered by tests/e2e/CMakeLists.txt; environment as for run.sh.
#
#   busy     rank 0 runs a serial loop for 6 s, 6 times the liveness limit: it succeeds
#   stop R   SIGSTOP of each rank R in turn (limit 2 s): the job ends non-zero within 30 s,
#            a survivor's message names rank R and its pid, and no message blames another
#            rank
#   kill R   kill -9 of each rank R in turn: the job ends non-zero within 30 s and no
#            message blames another rank. MPICH's process manager kills the survivors at
#            once when a rank dies, so they do not always get to speak first: how many runs
#            had a survivor's line naming R is printed, not required
#   flush    SIGSTOP of the last rank while the ranks flush a buffer through shared memory
#            (liveness_flush.orn): a survivor names it, waiting in the flush
set -eu
: "${ORIONC:?}" "${MPIEXEC:?}" "${E2E_SRC:?}" "${E2E_WORK:?}"
np=$1
W=$E2E_WORK/liveness.np$np
rm -rf "$W"
mkdir -p "$W"
cd "$W"
fail() {
  echo "e2e liveness -n $np: FAIL: $*" >&2
  exit 1
}
"$ORIONC" "$E2E_SRC/liveness.orn" -o prog 2>/dev/null || fail "orionc liveness.orn"
PROG=$W/prog

# busy: 6 s of serial work against a 1 s limit
ORN_LIVENESS=1 "$MPIEXEC" -n "$np" "$PROG" --secs=6 >busy.txt 2>&1 ||
  { cat busy.txt >&2; fail "a busy rank was taken for dead"; }
[ "$(cat busy.txt)" = 4.0 ] || { cat busy.txt >&2; fail "busy: wrong output"; }
[ "$np" -gt 1 ] || exit 0

# pid_of R: the pid of rank R of our running job (MPICH's PMI_RANK), waiting for it to start
pid_of() {
  i=0
  while [ $i -lt 100 ]; do
    for p in $(pgrep -f "^$PROG" || true); do
      if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "PMI_RANK=$1"; then
        echo "$p"
        return 0
      fi
    done
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

# hit SIG R OUT [MPIEXEC FLAGS]: start the job, send SIG to rank R, wait for the end; sets
# rc, secs and pid
hit() {
  sig=$1 r=$2 out=$3
  shift 3
  t0=$(date +%s)
  ORN_LIVENESS=2 "$MPIEXEC" "$@" -n "$np" "$PROG" --secs=120 >"$out" 2>&1 &
  job=$!
  pid=$(pid_of "$r") || { kill $job; fail "rank $r did not start"; }
  sleep 1
  kill "-$sig" "$pid"
  set +e
  wait $job
  rc=$?
  set -e
  secs=$(($(date +%s) - t0))
  [ "$rc" -ne 0 ] || { cat "$out" >&2; fail "$sig of rank $r: the job succeeded"; }
  [ "$secs" -le 30 ] || { cat "$out" >&2; fail "$sig of rank $r: the job took $secs s"; }
}

# blames R PID OUT: no message names another rank as lost; true if one names R (pid PID)
blames() {
  if grep "lost rank" "$3" | grep -v -q "lost rank $1 (pid $2 on "; then
    cat "$3" >&2
    fail "a message blames another rank than rank $1 (pid $2)"
  fi
  grep -q "^orion: rank [0-9]* (pid [0-9]* on [^)]*): lost rank $1 (pid $2 on " "$3"
}

r=0 named=0
while [ $r -lt "$np" ]; do
  hit STOP $r stop$r.txt
  kill -9 "$pid" 2>/dev/null || true
  blames $r "$pid" stop$r.txt || { cat stop$r.txt >&2; fail "nobody names the stopped rank $r"; }
  hit KILL $r kill$r.txt
  if blames $r "$pid" kill$r.txt; then named=$((named + 1)); fi
  r=$((r + 1))
done
# flush: SIGSTOP of the last rank of a buffered loop whose flushes wait in barriers in the
# host's shared memory (runtime/buffer.c, shm_whole): a survivor waiting there names it
"$ORIONC" "$E2E_SRC/liveness_flush.orn" -o flushprog 2>/dev/null || fail "orionc liveness_flush.orn"
PROG=$W/flushprog
r=$((np - 1))
t0=$(date +%s)
ORN_LIVENESS=2 "$MPIEXEC" -n "$np" "$PROG" >flush.txt 2>&1 &
job=$!
pid=$(pid_of "$r") || { kill $job; fail "rank $r did not start"; }
sleep 1
kill -STOP "$pid"
set +e
wait $job
rc=$?
set -e
kill -9 "$pid" 2>/dev/null || true
[ "$rc" -ne 0 ] || { cat flush.txt >&2; fail "STOP in a flush: the job succeeded"; }
[ $(($(date +%s) - t0)) -le 30 ] || { cat flush.txt >&2; fail "STOP in a flush: over 30 s"; }
blames $r "$pid" flush.txt || { cat flush.txt >&2; fail "nobody names rank $r stopped in a flush"; }
grep -q "waiting for it in: buffer flush" flush.txt ||
  { cat flush.txt >&2; fail "the survivors were not waiting in the flush"; }
echo "liveness -n $np: ok; after kill -9, a survivor named the rank in $named of $np runs"
