#!/bin/sh
# run.sh CHECK [ARG]: one check on the multi-host test bed (docs/testbed.md). Registered by
# tests/net/CMakeLists.txt; each runs inside `scripts/cluster.sh with --hosts 3 --profile P`,
# which sets $MPIEXEC to the cluster's mpiexec and $ORN_CLUSTER to its name. Rank r runs on
# host r + 1. Environment otherwise as for tests/e2e/run.sh, plus CLUSTER (cluster.sh) and
# PINGPONG.
#
#   links P        tests/net/pingpong between host 1 and hosts 2 and 3: every rank runs on
#                  its own host (the hosts' names); UCX uses tcp on eth0 and nothing else;
#                  what rank 0 sent each peer crossed that peer's link (the byte counters:
#                  no shared memory between hosts); the one-way latency is at least profile
#                  P's (where the latency is emulated) and the bandwidth at most its rate
#   smoke EXAMPLE  tests/e2e/run.sh's checks of one example at 3 hosts (the same checks as
#                  the shared-memory e2e runs): sgd_mf (sgd_rmse: -n 1 twice identical, -n 2
#                  and 3 within 2%; sgd_replay: SGD on sgd_trace.orn equals a serial replay),
#                  slr (slr and slr_replay), lda (lda and lda_replay), als, gauss_seidel,
#                  xferq (need-ordered transfers in 64-byte chunks and whole: the same
#                  results); and every host's link carried traffic
#   fault_kill     kill -9 of rank 1's process mid-run (liveness.orn, ORN_LIVENESS=2): the job
#                  ends non-zero within 30 s, its output names rank 1's pid and host (a
#                  survivor's line, or MPICH's banner when the process manager ended the
#                  survivors first), and no survivor blames another rank
#   fault_link     host 1's, then host 3's link taken down mid-run (rank 0 computing, rank 2
#                  waiting): within 30 s every survivor has exited and one of them named the
#                  lost rank, none blamed another; once the link is back up the job ends
#                  non-zero. (mpiexec cannot end before: it waits for the cut-off host's
#                  process manager, which it cannot reach.)
#   missing_file   a data file that host 2 does not have (its folder hidden under an empty
#                  tmpfs in host 2's mount namespace; docs/cluster.md): the job exits 1 and
#                  prints one error, naming rank 1, host 2 and the file's path; the same for
#                  an extern fn's shared library; a checkpoint folder host 2 does not see
#                  fails each checkpoint naming rank 1 and host 2, and the run goes on
set -eu
: "${ORIONC:?}" "${MPIEXEC:?}" "${E2E_SRC:?}" "${E2E_WORK:?}" "${CLUSTER:?}" "${ORN_CLUSTER:?}"
check=$1
W=$E2E_WORK/$check${2:+.$2}
rm -rf "$W"
mkdir -p "$W"
cd "$W"

fail() {
  echo "net $check${2:+ $2}: FAIL: $1" >&2
  exit 1
}

# stat_of HOST FIELD: the byte counter FIELD (sent or received) of host HOST's link
stat_of() {
  "$CLUSTER" stats "$ORN_CLUSTER" | awk -v h="$1" -v f="$2" '$2 == h { for (i = 3; i < NF; i++) if ($i == f) print $(i + 1) }'
}

# ns_of HOST: host HOST's namespace (and host name)
ns_of() {
  "$CLUSTER" info "$ORN_CLUSTER" | awk -v h="$1" '$1 == "host" && $2 == h { print $3 }'
}

# rank_pid R: the pid of rank R (MPICH's PMI_RANK) on host R + 1, waiting for it to start
rank_pid() {
  i=0
  while [ $i -lt 100 ]; do
    for p in $(ip netns pids "$(ns_of $(($1 + 1)))"); do
      case $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in "$PROG "*) ;; *) continue ;; esac
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

# start_job OUT: liveness.orn on 3 hosts, in the background (job); sets pids (rank 0's
# first)
start_job() {
  ORN_LIVENESS=2 "$MPIEXEC" -n 3 "$PROG" --secs=120 >"$1" 2>&1 &
  job=$!
  pids=''
  for q in 0 1 2; do
    p=$(rank_pid $q) ||
      { kill "$job" 2>/dev/null; cat "$1" >&2; fail "rank $q did not start on host $((q + 1))"; }
    pids="$pids $p"
  done
  sleep 1
}

# pid R: rank R's pid (after start_job)
pid() {
  echo "$pids" | awk -v r="$1" '{ print $(r + 1) }'
}

# blames R PID OUT SKIP: no line but rank SKIP's names another rank than R (pid PID) as lost;
# true if one names R
blames() {
  if grep "lost rank" "$3" | grep -v "^orion: rank $4 " | grep -v -q "lost rank $1 (pid $2 on "; then
    cat "$3" >&2
    fail "a message blames another rank than rank $1 (pid $2)"
  fi
  grep "^orion: rank [0-9]* (pid [0-9]* on [^)]*): lost rank $1 (pid $2 on " "$3" |
    grep -q -v "^orion: rank $4 "
}

case $check in
links)
  profile=$2
  b0=$(stat_of 2 received) c0=$(stat_of 3 received)
  # (UCX logs on stdout)
  UCX_LOG_LEVEL=info "$MPIEXEC" -n 3 "$PINGPONG" 100 8 >ucx.txt 2>&1 ||
    { cat ucx.txt >&2; fail "pingpong failed"; }
  grep '^peer ' ucx.txt >out.txt || true
  cat out.txt
  for h in 2 3; do
    grep -q "^peer $((h - 1)) host $(ns_of $h) " out.txt || fail "rank $((h - 1)) did not run on host $h"
    # 3 tries of 8 MiB from rank 0 to the peer on this host, and the latency rounds
    got=$(($(stat_of $h received) - $(if [ $h = 2 ]; then echo "$b0"; else echo "$c0"; fi)))
    [ "$got" -ge $((3 * 8 * 1048576)) ] ||
      fail "host $h's link received $got bytes, less than the 24 MiB sent to it"
    echo "host $h's link received $got bytes"
  done
  [ "$(grep -c 'ep_cfg\[[0-9]*\]' ucx.txt)" -ge 3 ] || { cat ucx.txt >&2; fail "no UCX transport lines"; }
  if grep 'ep_cfg\[[0-9]*\]' ucx.txt | sed 's/.*ep_cfg\[[0-9]*\]://' | tr ' ' '\n' | grep . |
    grep -v -q '^[a-z_]*(tcp/eth0)$'; then
    grep 'ep_cfg' ucx.txt >&2
    fail "UCX uses another transport than tcp on eth0"
  fi
  info=$("$CLUSTER" info "$ORN_CLUSTER" | head -n 1)
  echo "$info"
  case $profile in dc) rate=10 lat=50 ;; slow) rate=1 lat=200 ;; *) fail "profile $profile" ;; esac
  awk -v r="$rate" '{ if ($8 > 1.15 * r) { print "bandwidth", $8, "Gbit/s above the rate"; exit 1 } }' out.txt ||
    fail "the rate of profile $profile is not applied"
  case $info in
  *"latency not emulated"*) echo "latency: not emulated here (not checked)" ;;
  *)
    awk -v l="$lat" '{ if ($6 < 0.9 * l) { print "latency", $6, "us below", l; exit 1 } }' out.txt ||
      fail "the latency of profile $profile is not applied"
    ;;
  esac
  ;;
smoke)
  case $2 in
  sgd_mf) checks="sgd_rmse sgd_replay" ;;
  slr) checks="slr slr_replay" ;;
  lda) checks="lda lda_replay" ;;
  als) checks=als ;;
  gauss_seidel) checks=gauss_seidel ;;
  xferq) checks=xferq ;; # need-ordered transfers in 64-byte chunks and whole (tests/e2e)
  *) fail "unknown example" ;;
  esac
  for c in $checks; do
    sh "$E2E_SRC/run.sh" "$c" 3 || fail "e2e check $c failed on 3 hosts"
  done
  for h in 1 2 3; do
    s=$(stat_of $h sent)
    [ "$s" -gt 10000 ] || fail "host $h sent only $s bytes: did its rank run there?"
  done
  "$CLUSTER" stats "$ORN_CLUSTER"
  ;;
fault_kill | fault_link)
  "$ORIONC" "$E2E_SRC/liveness.orn" -o prog 2>/dev/null || fail "orionc liveness.orn"
  PROG=$W/prog
  if [ "$check" = fault_kill ]; then
    start_job kill.txt
    pid1=$(pid 1)
    t0=$(date +%s)
    kill -9 "$pid1"
    rc=0
    wait "$job" || rc=$?
    secs=$(($(date +%s) - t0))
    cat kill.txt
    [ "$rc" -ne 0 ] || fail "kill -9 of rank 1: the job succeeded"
    [ "$secs" -le 30 ] || fail "kill -9 of rank 1: the job took $secs s to end"
    if blames 1 "$pid1" kill.txt -1; then
      echo "a survivor named rank 1"
    elif grep -q "PID $pid1 RUNNING AT $(ns_of 2)\$" kill.txt; then
      echo "MPICH's banner named rank 1's process (the survivors were ended first)"
    else
      fail "nothing names rank 1 (pid $pid1 on $(ns_of 2))"
    fi
    exit 0
  fi
  for r in 0 2; do
    h=$((r + 1))
    start_job "link$h.txt"
    lost=$(pid $r)
    survivors=''
    for s in 0 1 2; do [ $s = $r ] || survivors="$survivors $(pid $s)"; done
    "$CLUSTER" link "$ORN_CLUSTER" $h down
    t0=$(date +%s)
    while :; do
      left=''
      for p in $survivors; do if kill -0 "$p" 2>/dev/null; then left="$left $p"; fi; done
      [ -n "$left" ] || break
      if [ $(($(date +%s) - t0)) -gt 30 ]; then
        "$CLUSTER" link "$ORN_CLUSTER" $h up
        kill "$job" 2>/dev/null || true
        cat "link$h.txt" >&2
        fail "host $h cut off: ranks (pids$left) still running after 30 s"
      fi
      sleep 0.1
    done
    secs=$(($(date +%s) - t0))
    "$CLUSTER" link "$ORN_CLUSTER" $h up
    t1=$(date +%s)
    rc=0
    wait "$job" || rc=$?
    cat "link$h.txt"
    [ "$rc" -ne 0 ] || fail "host $h cut off: the job succeeded"
    [ $(($(date +%s) - t1)) -le 30 ] || fail "host $h back: the job took over 30 s to end"
    blames $r "$lost" "link$h.txt" $r || fail "no survivor named rank $r (pid $lost on $(ns_of $h))"
    echo "host $h cut off: the survivors named rank $r and left within $secs s; the job ended with $rc"
  done
  ;;
missing_file)
  mkdir data
  printf '0 0 1.0\n1 1 2.0\n2 0 3.0\n3 1 4.0\n4 0 5.0\n5 1 1.5\n' >data/r.train
  printf 'param train = "data/r.train"\ndist R = load_triplets(train)\nprint(nnz(R))\n' >load.orn
  "$ORIONC" load.orn -o prog || fail "orionc load.orn"
  # the program, on host 2 with data/ hidden (a mount namespace of its own, as a node
  # without the file system that holds the data)
  cat >hide.sh <<'EOF2'
#!/bin/sh
if [ "$(hostname)" = "$HIDE_ON" ]; then
  exec unshare --mount sh -c 'mount -t tmpfs none "$HIDE_DIR" && exec "$@"' sh "$@"
fi
exec "$@"
EOF2
  chmod +x hide.sh
  "$MPIEXEC" -n 3 ./prog >ok.txt 2>&1 || { cat ok.txt >&2; fail "the job failed with the file on every host"; }
  grep -qx 6 ok.txt || fail "the job did not load the 6 ratings"
  h2=$(ns_of 2)
  # PROG run with data/ hidden on host 2 (output OUT) exits 1 and prints one error, a line
  # that starts with WANT
  hidden_fails() {
    local rc=0
    "$MPIEXEC" -genv HIDE_ON "$h2" -genv HIDE_DIR "$W/data" -n 3 ./hide.sh "$1" >"$2" 2>&1 || rc=$?
    cat "$2"
    [ "$rc" -eq 1 ] || fail "$1 exited $rc with data/ hidden on $h2, expected 1"
    awk -v w="$3" 'index($0, w) == 1 { found = 1 } END { exit !found }' "$2" ||
      fail "$1: no line '$3...'"
    [ "$(grep -c '^orion:' "$2")" -eq 1 ] || fail "$1: the error was not printed once"
  }
  hidden_fails ./prog out.txt \
    "orion: rank 1: load.orn:2: load_triplets: data/r.train: cannot open on host $h2: No such file or directory"
  # an extern fn's library that host 2 does not have: the same, before anything runs
  printf 'double orn_net_twice(double x);\ndouble orn_net_twice(double x) { return 2 * x; }\n' >twice.c
  ${CC:-cc} -shared -fPIC -o data/libtwice.so twice.c || fail "cc libtwice.so"
  printf 'extern "%s" fn orn_net_twice(x: f64) -> f64\nprint(orn_net_twice(21.0))\n' \
    "$W/data/libtwice.so" >ext.orn
  "$ORIONC" ext.orn -o ext || fail "orionc ext.orn"
  "$MPIEXEC" -n 3 ./ext >ok.txt 2>&1 || { cat ok.txt >&2; fail "the extern failed with the library on every host"; }
  grep -qx 42.0 ok.txt || fail "the extern did not print 42.0"
  hidden_fails ./ext ext.txt \
    "orion: rank 1: ext.orn:1: extern fn 'orn_net_twice': cannot load '$W/data/libtwice.so' on host $h2: "
  if grep -q '^42' ext.txt; then fail "a rank ran the program without the library"; fi
  # a checkpoint folder that host 2 does not see: each checkpoint fails naming rank 1 and
  # host 2, the previous one is kept, and the run goes on to its end
  mkdir ck
  printf 'total = 0\nfor i in 0..3\n    total += i\nend\nprint(total)\n' >ck.orn
  "$ORIONC" ck.orn -o ckp || fail "orionc ck.orn"
  rc=0
  # (stdout and stderr apart: mpiexec forwards them separately, and in one file rank 1's
  # messages can land inside rank 0's result line)
  "$MPIEXEC" -genv HIDE_ON "$h2" -genv HIDE_DIR "$W/ck" -n 3 ./hide.sh ./ckp --checkpoint=ck \
    --checkpoint-every=0 >ck.txt 2>ck.err || rc=$?
  cat ck.txt ck.err
  [ "$rc" -eq 0 ] || fail "the run with a checkpoint folder host 2 lacks exited $rc, expected 0"
  grep -qx 3 ck.txt || fail "the run did not print its result"
  grep -q "^orion: checkpoint: ck/ckpt-[0-9]*.tmp/rank-1.bin: cannot write: No such file or directory (rank 1 on host $h2) (ck.orn:2, " ck.err ||
    fail "no checkpoint failure naming rank 1 and host 2"
  ;;
*)
  fail "unknown check"
  ;;
esac
