#!/bin/sh
# metrics.sh NP: log_metric in `orion` (docs/repl.md): in the REPL with $ORN_LOGDIR, by the
# evaluator (no piece compiled) and with every piece compiled (ORN_REPL_COMPILE=1), the same
# CSV; `orion run examples/sgd_mf.orn --logdir DIR` logs what the compiled program logs.
# Environment: ORION, ORIONC, MPIEXEC, ROOT, WORK, GEN_RATINGS.
set -eu
: "${ORION:?}" "${ORIONC:?}" "${MPIEXEC:?}" "${ROOT:?}" "${WORK:?}" "${GEN_RATINGS:?}"
np=$1
W=$WORK/metrics.np$np
rm -rf "$W"
mkdir -p "$W"
cd "$W"
fail() {
  echo "repl.metrics -n $np: FAIL: $*" >&2
  exit 1
}
run() { if [ "$np" -eq 1 ]; then "$@"; else "$MPIEXEC" -n "$np" "$@"; fi; }
# name,step,value of a metrics.csv (wall times differ)
values() { cut -d, -f1-3 "$1"; }

cat >in.orn <<'EOF'
loss = 1.0
for epoch in 0..4
    loss = loss * 0.5
    log_metric("train/loss", epoch, loss)
end
log_metric("steps", 4, i32(4))
log_metric("neg", -3, -2.5e-300)
print("logged", loss)
EOF
cat >want.csv <<'EOF'
name,step,value
train/loss,0,0.5
train/loss,1,0.25
train/loss,2,0.125
train/loss,3,0.0625
steps,4,4
neg,-3,-2.5e-300
EOF
for mode in eval compiled; do
  rm -rf cache
  if [ "$mode" = compiled ]; then c=1; else c=0; fi
  XDG_CACHE_HOME=$W/cache ORN_REPL_COMPILE=$c ORN_LOGDIR=$mode run "$ORION" <in.orn >$mode.txt 2>&1 ||
    { cat $mode.txt >&2; fail "orion ($mode) exited non-zero"; }
  grep -q '^logged 0.0625$' $mode.txt || { cat $mode.txt >&2; fail "$mode: no output"; }
  values $mode/metrics.csv >$mode.csv
  diff -u want.csv $mode.csv || fail "$mode: metrics.csv differs"
  [ "$(ls $mode | grep -c '^events\.out\.tfevents\.')" -eq 1 ] || fail "$mode: not one event file"
  # the evaluator compiles nothing; ORN_REPL_COMPILE=1 compiles every piece
  n=$(find cache -name '*.so' 2>/dev/null | wc -l)
  if [ "$mode" = eval ]; then [ "$n" -eq 0 ] || fail "the evaluator compiled $n pieces"; fi
  if [ "$mode" = compiled ]; then [ "$n" -gt 0 ] || fail "nothing was compiled"; fi
done
# an empty name: a run-time error naming the line, the session goes on
printf 'log_metric("", 1, 2.0)\nprint("after")\n' | XDG_CACHE_HOME=$W/cache run "$ORION" >empty.txt 2>&1 || true
grep -q '<stdin>:1: log_metric: the name is empty' empty.txt || { cat empty.txt >&2; fail "no error for an empty name"; }
grep -q '^after$' empty.txt || fail "the session did not go on after the error"
# orion run and the compiled program log the same values
"$GEN_RATINGS" 300 60 3000 5 7 syn.train syn.test
args="--train=syn.train --test=syn.test --epochs=3"
"$ORIONC" "$ROOT/examples/sgd_mf.orn" -o sgd_mf
# shellcheck disable=SC2086
run ./sgd_mf $args --logdir=compiled_run >a.txt 2>&1 || { cat a.txt >&2; fail "sgd_mf"; }
# shellcheck disable=SC2086
XDG_CACHE_HOME=$W/cache run "$ORION" run "$ROOT/examples/sgd_mf.orn" $args --logdir orion_run >b.txt 2>&1 ||
  { cat b.txt >&2; fail "orion run sgd_mf"; }
grep -v '^time/' compiled_run/metrics.csv | cut -d, -f1-3 >a.csv
grep -v '^time/' orion_run/metrics.csv | cut -d, -f1-3 >b.csv
[ "$(wc -l <a.csv)" -eq 8 ] || { cat a.csv >&2; fail "sgd_mf: not 7 values"; }
diff -u a.csv b.csv || fail "orion run logs other values than the compiled program"
echo "repl.metrics -n $np: ok"
