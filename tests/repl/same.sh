#!/bin/sh
# same.sh CASE NP: `orion run prog.orn ARGS` and the compiled program print the same output,
# exit the same way and save the same files at NP ranks (registered by CMakeLists.txt).
#
# Timings ("0.123 s", "... updates/s") are cut from both outputs. Where two runs of the
# compiled program differ (a schedule whose order of updates depends on timing), only the
# exit status and the number of output lines must agree; everywhere else, every byte.
#
# Environment: ORION, ORIONC, MPIEXEC, ROOT, WORK, GEN_RATINGS.
set -eu
: "${ORION:?}" "${ORIONC:?}" "${MPIEXEC:?}" "${ROOT:?}" "${WORK:?}"
case=$1 np=$2
S=$ROOT/tests/e2e
D=$S/data
W=$WORK/$case.np$np
rm -rf "$W"
mkdir -p "$W"
cd "$W"
export XDG_CACHE_HOME=$WORK/cache

fail() {
  echo "repl.same $case -n $np: FAIL: $*" >&2
  exit 1
}

files=""
case $case in
features) prog=$S/features.orn args="" ;;
features2) prog=$S/features2.orn args="--triplets=$D/small.triplets" ;;
windows) prog=$S/windows.orn args="--kw=11 --r=3 --lag=-2" ;;
gauss_seidel) prog=$ROOT/examples/gauss_seidel.orn args="--n=40 --sweeps=7 --out=grid.txt" files=grid.txt ;;
sgd_trace)
  prog=$S/sgd_trace.orn files="W.txt H.txt"
  args="--train=$D/ratings.train --test=$D/ratings.test --epochs=3 --wout=W.txt --hout=H.txt" ;;
edit_distance)
  prog=$S/edit_distance.orn args="--a=$D/seq_a.txt --b=$D/seq_b.txt"
  files="D.txt row_best.txt col_best.txt" ;;
sgd_side)
  prog=$S/sgd_side.orn files="W.txt H.txt"
  args="--train=$D/ratings.train --ufeat=$D/user.features --ifeat=$D/item.features --epochs=3" ;;
lda_trace)
  prog=$S/lda_trace.orn
  args="--data=$D/tokens.docword --topics=4 --iters=3 --alpha=0.1 --beta=0.01 --seed=7" ;;
slr_trace)
  prog=$S/slr_trace.orn
  args="--train=$D/tiny.libsvm --test=$D/tiny.libsvm --epochs=4 --step=0.05 --lam=0.0001" ;;
text) prog=$S/text.orn args="" ;;
text_oob) prog=$S/text.orn args="--oob=true" ;;
blas) prog=$S/blas.orn args="" ;;
blas_bad) prog=$S/blas.orn args="--bad=1" ;;
layout)
  "$GEN_RATINGS" 300 60 3000 5 7 syn.train syn.test
  prog=$S/layout.orn args="--train=$W/syn.train" files="layout_W.txt layout_H.bin layout_T.txt" ;;
errors1 | errors2 | errors3 | errors4 | errors5 | errors6)
  prog=$S/errors.orn args="--which=${case#errors}" ;;
sgd_mf)
  "$GEN_RATINGS" 300 60 3000 5 7 syn.train syn.test
  prog=$ROOT/examples/sgd_mf.orn args="--train=$W/syn.train --test=$W/syn.test --epochs=3" ;;
lda) prog=$ROOT/examples/lda.orn args="--data=$D/tokens.docword --topics=4 --iters=3" ;;
slr) prog=$ROOT/examples/slr.orn args="--train=$D/tiny.libsvm --test=$D/tiny.libsvm --epochs=5" ;;
als)
  "$GEN_RATINGS" 300 60 3000 5 7 syn.train syn.test
  awk '{ print $2, $1, $3 }' syn.train >syn.train_by_item
  prog=$ROOT/examples/als.orn
  args="--train=$W/syn.train --test=$W/syn.test --train_by_item=$W/syn.train_by_item --iters=2" ;;
help) prog=$ROOT/examples/sgd_mf.orn args="--help" ;;
badparam) prog=$ROOT/examples/sgd_mf.orn args="--epoch=3" ;;
*) fail "unknown case" ;;
esac

"$ORIONC" "$prog" -o prog || fail "orionc $prog"

# run DIR CMD...: CMD's stdout (timings cut), stderr (MPI_Abort's notices cut, each error
# message once, without its rank) and exit status in DIR
run() {
  dir=$1
  shift
  mkdir -p "$dir"
  set +e
  # shellcheck disable=SC2086
  (cd "$dir" && "$MPIEXEC" -n "$np" "$@" $args >raw.txt 2>rawerr.txt)
  echo "exit $?" >"$dir/status.txt"
  set -e
  sed -E -e 's/ [0-9.e+-]+ s( .*)?$//' -e "s#$W/prog#PROG#g" -e "s#$ORION run $prog#PROG#g" \
    "$dir/raw.txt" >"$dir/out.txt"
  grep -v -e '^Abort(' -e 'MPI_Abort' -e '^=*$' -e 'BAD TERMINATION' -e 'EXIT CODE' \
    -e 'CLEANING UP' -e 'YOUR APPLICATION' "$dir/rawerr.txt" |
    sed -E -e 's/^orion: rank [0-9]+: /orion: /' -e "s#$W/prog#PROG#g" -e "s#$ORION run $prog#PROG#g" |
    sort -u >"$dir/err.txt"
}

run c1 "$W/prog"
run c2 "$W/prog"
run r "$ORION" run "$prog"
cmp -s c1/status.txt r/status.txt ||
  { cat r/raw.txt r/rawerr.txt >&2; fail "compiled: $(cat c1/status.txt), orion run: $(cat r/status.txt)"; }
if cmp -s c1/out.txt c2/out.txt; then
  diff -u c1/out.txt r/out.txt || fail "orion run prints differently"
  diff -u c1/err.txt r/err.txt || fail "orion run reports differently"
else
  [ "$(wc -l <c1/out.txt)" -eq "$(wc -l <r/out.txt)" ] ||
    { diff -u c1/out.txt r/out.txt >&2; fail "orion run prints a different number of lines"; }
  echo "(the compiled program's output varies between runs at -n $np: lines counted only)"
fi
for f in $files; do
  if cmp -s "c1/$f" "c2/$f"; then
    cmp "c1/$f" "r/$f" || fail "$f differs"
  else
    [ -f "r/$f" ] || fail "orion run did not save $f"
  fi
done
cat r/out.txt r/err.txt
