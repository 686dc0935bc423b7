#!/bin/sh
# transcript.sh NAME NP [compiled]: `orion` reading transcripts/NAME.in from a pipe at NP ranks prints
# transcripts/NAME.expected (stdout and stderr together; at more than one rank the lines
# are compared in sorted order, since ranks write stderr concurrently). @DIR@ in the input
# stands for the transcripts folder, @USERLIB@ for the test's shared library. The expected
# output is NAME.expected at one rank, NAME.npNP.expected at NP. With `compiled`, every
# piece is compiled (ORN_REPL_COMPILE=1), none evaluated: the output must be the same.
# Environment: ORION, MPIEXEC, ROOT, WORK, USERLIB.
set -eu
: "${ORION:?}" "${MPIEXEC:?}" "${ROOT:?}" "${WORK:?}" "${USERLIB:?}"
name=$1 np=$2 mode=${3:-}
[ "$mode" = compiled ] && export ORN_REPL_COMPILE=1
T=$ROOT/tests/repl/transcripts
W=$WORK/t_$name.np$np$mode
rm -rf "$W"
mkdir -p "$W"
cd "$W"
export XDG_CACHE_HOME=$WORK/cache
sed -e "s#@DIR@#$T#g" -e "s#@USERLIB@#$USERLIB#g" "$T/$name.in" >in.orn
set +e
# one rank: a singleton, so stdout and stderr reach out.txt in the order they are written.
# Several: mpiexec forwards them through separate pipes, so a line of one may land inside
# a line of the other in a shared file; they are caught apart and compared sorted.
if [ "$np" -eq 1 ]; then
  "$ORION" <in.orn >out.txt 2>&1
  echo "exit $?" >>out.txt
else
  "$MPIEXEC" -n "$np" "$ORION" <in.orn >out.txt 2>err.txt
  echo "exit $?" >>out.txt
  cat err.txt >>out.txt
fi
set -e
sed -i -e "s#$T#@DIR@#g" -e "s#$USERLIB#@USERLIB@#g" -e 's/^time: [0-9.]* s$/time: T s/' out.txt
exp=$T/$name.expected
[ "$np" -eq 1 ] || exp=$T/$name.np$np.expected
if [ "${ORN_GOLDEN_UPDATE:-}" = 1 ] && [ -z "$mode" ]; then
  cp out.txt "$exp"
  exit 0
fi
if [ "$np" -gt 1 ]; then
  sort "$exp" >exp.sorted
  sort out.txt >out.sorted
  diff -u exp.sorted out.sorted || { cat out.txt >&2; echo "transcript $name -n $np: FAIL" >&2; exit 1; }
else
  diff -u "$exp" out.txt || { echo "transcript $name -n $np: FAIL" >&2; exit 1; }
fi
