#!/bin/sh
# scalar_diff.sh FROM TO: for each seed, random scalar code (scalar_gen.py) through `orion`
# twice, evaluated and compiled (ORN_REPL_COMPILE=1): the output must be the same, warnings
# of the C compiler included (none may show). Found: 0.0 - mod(100, 1) printing -0.0 when
# compiled (GCC's fold), -Woverflow and -Wdiv-by-zero warnings reaching the user.
# Environment: ORION, WORK, ROOT.
set -eu
: "${ORION:?}" "${WORK:?}" "${ROOT:?}"
W=$WORK/scalar_diff.$1.$2
rm -rf "$W"
mkdir -p "$W"
export XDG_CACHE_HOME=$W/cache
bad=0
for s in $(seq "$1" "$2"); do
  python3 "$ROOT/tests/repl/scalar_gen.py" "$s" 40 >"$W/p$s.in"
  "$ORION" <"$W/p$s.in" >"$W/e$s.out" 2>&1 || true
  ORN_REPL_COMPILE=1 "$ORION" <"$W/p$s.in" >"$W/c$s.out" 2>&1 || true
  if ! cmp -s "$W/e$s.out" "$W/c$s.out"; then
    echo "scalar_diff: seed $s: evaluated and compiled differ ($W/p$s.in):" >&2
    diff "$W/e$s.out" "$W/c$s.out" >&2 || true
    bad=1
  fi
done
exit $bad
