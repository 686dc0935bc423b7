#!/bin/sh
# terminal.sh: `orion` in a real terminal (tmux): the prompt, the continuation prompt of an
# open block, history recall with the up arrow (and the history file), Ctrl-C abandoning
# typed input, the progress line of a long parallel_for, Ctrl-C stopping it with the
# session kept, :quit.
# Environment: ORION, WORK. Skipped (exit 77) without tmux.
set -eu
: "${ORION:?}" "${WORK:?}"
command -v tmux >/dev/null 2>&1 || { echo "tmux not found: skipped"; exit 77; }
W=$WORK/terminal
rm -rf "$W"
mkdir -p "$W"
S=orn_repl_$$
export TMUX_TMPDIR=$W
fail() {
  echo "repl.terminal: FAIL: $*" >&2
  tmux capture-pane -p -t "$S" >&2 2>/dev/null || true
  tmux kill-session -t "$S" 2>/dev/null || true
  exit 1
}
# wait_for TEXT [N]: until the screen shows TEXT at least N times (30 s)
wait_for() {
  i=0
  while [ "$(tmux capture-pane -p -t "$S" | grep -c -F -- "$1")" -lt "${2:-1}" ]; do
    i=$((i + 1))
    [ $i -lt 300 ] || fail "no '$1' (x${2:-1}) on the screen"
    sleep 0.1
  done
}
send() { tmux send-keys -t "$S" "$@"; }
# line TEXT: type TEXT literally (tmux reads "end" as the End key otherwise), then Enter
line() {
  tmux send-keys -t "$S" -l "$1"
  tmux send-keys -t "$S" Enter
}

tmux new-session -d -s "$S" -x 150 -y 50 \
  "trap '' INT; env XDG_CACHE_HOME=$W/cache ORION_HISTORY=$W/history ORN_PROGRESS_DELAY=0.5 $ORION; echo orion-ended; sleep 30"
wait_for "orion>"
line "x = 41"
wait_for "orion>" 2
line "fn f(v: i64) -> i64"
wait_for "   ...>"
line "return v + 1"
wait_for "   ...>" 2
line "end"
wait_for "orion>" 3
line "print(f(x))"
wait_for "42"
send Up
wait_for "orion> print(f(x))" 2
send Enter
wait_for "42" 2
# Ctrl-C drops what was typed, in a block too
line "parallel_for i, a in A"
wait_for "   ...>" 3
tmux send-keys -t "$S" -l "a = 1"
send C-c
wait_for "^C"
line "print(x + 2)"
wait_for "43"
# Ctrl-C stops a running loop; the session is kept
line "dist A = zeros(f64, 4000000)"
wait_for "orion>" 8
line "parallel_for i, a in A"
wait_for "   ...>" 4
line "for k in 0..20000"
wait_for "   ...>" 5
line "a += sqrt(f64(k + i))"
wait_for "   ...>" 6
line "end"
wait_for "   ...>" 7
line "end"
# the progress line shows the running loop (after ORN_PROGRESS_DELAY), and is erased
# before the message of the interrupt
wait_for "parallel_for <repl>:"
sleep 1
send C-c
wait_for "interrupted"
! tmux capture-pane -p -t "$S" | grep "interrupted" | grep -q "it/s" ||
  fail "the progress line shares a line with the message"
wait_for "orion>" 9
line "print(x - 1)"
wait_for "40"
line ":quit"
wait_for "orion-ended"
grep -q -F 'print(f(x))' "$W/history" || fail "the history file lacks 'print(f(x))'"
tmux kill-session -t "$S" 2>/dev/null || true
echo "repl.terminal: ok"
