# interleave.sh: the timing loop that bench/run.sh and bench/forms/run.sh share (sourced).
# `interleave NAME...` prepares every name (prep NAME), then REPS times runs each one's C
# baseline and its .orn program at -n 1 and -n 2 one after the other -- interleaved, so
# that a slow spell of the machine hits every variant alike -- and says the last times.
# The caller defines REPS, RES (the directory of the per-variant result files NAME.c,
# NAME.n1, NAME.n2), the associative arrays FAIL, C_CMD, ORN_PROG and ORN_ARGS, and the
# functions prep NAME, run_one NAME KIND RANKS CMD... and say TEXT.
interleave() {
  local w r
  for w in "$@"; do prep "$w"; done
  for r in $(seq 1 "$REPS"); do
    for w in "$@"; do
      [ -n "${FAIL[$w]:-}" ] && continue
      # shellcheck disable=SC2086
      run_one "$w" c 0 ${C_CMD[$w]}
      # the caller's optional run_c2 NAME: two copies of the baseline at once
      if declare -F run_c2 >/dev/null; then run_c2 "$w"; fi
      if [ -n "${ORN_PROG[$w]:-}" ]; then
        # shellcheck disable=SC2086
        run_one "$w" n1 1 "${ORN_PROG[$w]}" ${ORN_ARGS[$w]}
        # shellcheck disable=SC2086
        run_one "$w" n2 2 "${ORN_PROG[$w]}" ${ORN_ARGS[$w]}
        # the caller's optional run_o2 NAME: two copies of the program at -n 1 at once
        if declare -F run_o2 >/dev/null; then run_o2 "$w"; fi
      fi
      say "run $r/$REPS $w: C $(tail -qn1 "$RES/$w.c" 2>/dev/null | cut -d' ' -f1)," \
          ".orn -n 1 $(tail -qn1 "$RES/$w.n1" 2>/dev/null | cut -d' ' -f1)," \
          "-n 2 $(tail -qn1 "$RES/$w.n2" 2>/dev/null | cut -d' ' -f1) s/iter"
    done
  done
}

# The fastest run of a result file ("secs figure ..."), and field N of such a line.
best() { [ -s "$1" ] && sort -g "$1" | head -1; }
col() { echo "$1" | cut -d' ' -f"$2"; }
