#!/bin/sh
# run.sh CHECK [NP]: one end-to-end check (registered by tests/e2e/CMakeLists.txt).
#
# Environment (set by CTest): ORIONC, MPIEXEC, E2E_SRC (this folder), E2E_WORK (scratch
# in the build tree), E2E_BIN (the compiled programs; default $E2E_WORK/bin: tests/net runs
# these checks on the test bed with programs the e2e tests compiled), ROOT (the source
# tree), GS_REF, ED_REF, SGD_REPLAY, SGD_SIDE_REPLAY,
# LDA_REPLAY, SLR_REPLAY, GEN_RATINGS (helpers).
#
#   compile        orionc builds every program (generated C must compile with -Wall -Wextra
#                  -Werror) and the synthetic ratings are generated
#   compile_fastpaths  the same for fastpaths.orn alone (the features checks'), whose
#                  compilation takes as long as the others' together (a minute under the
#                  sanitizers): the other checks need not wait for it
#   features NP    features.orn and features2.orn print their .expected at every rank count;
#                  so does fastpaths.orn (fast view reductions against `for` loop sums: 0
#                  disagreements), and gather_rows.orn (rows of prefetched arrays gathered by
#                  a permutation against local copies: 0 disagreements), also fetched per
#                  loop (ORN_REPLICATE_MAX=0); held.orn (top-level loops reading dist
#                  arrays through whole copies) with copies and without
#   gauss_seidel NP  the saved grid equals the serial C reference (gs_ref) byte for byte, and
#                    no block of the ordered sweep fetches an element on demand (ORN_STATS);
#                    at several ranks, a 512 x 512 grid never moves (made in the sweep's bands)
#   sgd_replay NP  SGD MF factors equal a serial replay of the recorded block order (also
#                  with biases through buffers: partitioned and rotated targets)
#   edit_distance NP  the edit distance of two sequences (an ordered 2-D loop reading A[i - 1]
#                  and B[j - 1], writing row_best[i] and col_best[j]): output line and saved
#                  arrays equal the serial C reference (ed_ref) byte for byte, with B copied
#                  to every rank and with B travelling down the wavefront (ORN_REPLICATE_MAX=0)
#   sgd_side NP    SGD MF with sparse user and item side features (sgd_side.orn): W and H
#                  equal a serial replay of the recorded block order, with F copied to every
#                  rank and with F rotated as CSR blocks (ORN_REPLICATE_MAX=0, 2 x 2
#                  sub-blocks)
#   lda_replay NP  LDA (lda_trace.orn): topics, counts, topic totals (a buffer) and the
#                  log-likelihood accumulator equal a serial replay of the recorded order
#   slr_replay NP  SLR (slr_trace.orn) at the example's flush interval and at 7: weights (a
#                  buffer), loss and accuracy accumulators equal a serial replay, with w
#                  copied to every rank (own updates visible) and prefetched per round
#                  (ORN_REPLICATE_MAX=0: reads as of the last flush); with w over 4 MiB
#                  (its copy's flushes send the touched keys' records, averaged at the
#                  adaptive interval's floor); the same over dense rows (dlr_trace.orn,
#                  the buffer's target replicated)
#   sgd_rmse       -n 1 twice: identical; -n 2 and -n 3: test RMSE within 2% of -n 1
#   lda NP, slr NP the examples train on tiny data: the objective improves
#   orionc         -O0 -g --keep-c, --emit=c, a failing C compiler (exit 3, C kept), a link
#                  error (exit 1); -L. -lmylib runs without LD_LIBRARY_PATH (rpath), not
#                  with --no-rpath (exit 127); -Wl, options reach the linker
#   text NP        load_text (text.orn): lines with CRLF, an empty one and a last one without
#                  newline, a line used as a path, reads inside parallel_for: text.expected at
#                  every rank count; a missing file and an out-of-range index: message, exit 1
#   show NP        print of whole arrays and views (show.orn): dense nested brackets,
#                  summaries of large arrays, sparse stored elements: show.expected at every
#                  rank count; eprint of a view: one whole line per rank
#   csv NP         load_csv (csv.orn): commas or spaces, a header, quotes, CRLF, comment
#                  lines, a byte-order mark, f64/f32/i64, a transposed layout: csv.expected
#                  at every rank count; a ragged row, an empty field, a header read as
#                  data, no data: the message (path:line), exit 1
#   dist_vec NP    dot of a view with a whole 1-D dist array (dist_vec.orn) equal to the
#                  same sums as loops and with a local copy, bit for bit; a power iteration:
#                  dist_vec.expected at every rank count
#   bad_input NP   missing file, malformed line, bad params, run-time errors: the message
#                  names the file and line or the param; the exit code; no hang
#   bad_data NP    nan, inf and overflow in every loader's values (baddata.orn), integers
#                  too large for their field, params nan/inf/overflow, bytes of the file
#                  escaped, files that change while read, save/load errors without doubled
#                  prefixes: message (path:line), exit code; allow_nonfinite = true loads
#                  the values
#   layout NP      layout.orn stored in the chosen order prints (whole arrays and views too)
#                  and saves what the declared order does; placement.orn (arrays made where their first loop places
#                  them) prints what it prints at -n 1, and its push loop's first run
#                  moves nothing
#   blas NP        matmul_into, add_outer, solve_into (blas.orn) against naive loops, with
#                  views of dist arrays in a parallel_for: blas.expected at every rank count
#                  (bit-identical); a shape mismatch and a matrix that is not positive
#                  definite: message naming the line, exit 1
#   als NP         examples/als.orn on the synthetic ratings, twice: identical output; the
#                  test RMSE improves on the global mean's and is below 1.0; at several
#                  ranks, with a tiny cache, the evaluation loop never cuts or moves the
#                  ratings (the user half aligns them)
#   ckpt NP        checkpoint and resume of examples/sgd_mf.orn and examples/lda.orn, and of
#                  sgd_trace.orn and lda_trace.orn (which save their arrays), and of
#                  ckpt_buf.orn (buffers' settings and adaptive interval): killed with
#                  SIGKILL, or stopped by SIGTERM (exit 75), just after a checkpoint in mid-run,
#                  then resumed: the output before the checkpoint followed by the resumed
#                  run's is the uninterrupted run's output, and the saved arrays are its own,
#                  byte for byte (timings left out)
#   ckpt_state NP  the same for ckpt.orn (every kind of state; safe points in a `while` and
#                  a `for`; checkpoints in both); and a never-ending job: stopped by SIGTERM
#                  to one of its ranks (exit 75), resumed and killed with kill -9 of every
#                  rank, resumed from what is left and stopped again 2 iterations on
#   timeline NP    the timeline (--timeline=FILE, $ORN_TIMELINE) of sgd_mf and slr passes
#                  scripts/trace_check.py (every rank, nesting, loops' parts within the loop,
#                  the kinds expected); the output is the same without it; a trace with a
#                  rank's events removed fails the validator; an agreed error still writes
#                  it; a file that cannot be written is refused (exit 2);
#                  scripts/trace2svg.py renders it as well-formed SVG
#   managed NP     managed buffers (managed.orn): at one rank the serial weights; exact sums
#                  whatever goes early; bit-identical runs with fixed message sizes; the
#                  staleness-aware flush's averages; deltas sent early at several ranks
#   stats NP       $ORN_STATS=1 and --stats: one line per parallel_for of sgd_mf, numbers
#                  that make sense (runs, compute <= time, bytes 0 at one rank and > 0 for
#                  the 2d loop at several, imbalance >= 1); $ORN_STATS=runs: a line per run
#                  and rank too
#   metrics NP     log_metric with --logdir / $ORN_LOGDIR (sgd_mf, slr, lda, gauss_seidel):
#                  one event file and one CSV (rank 0 writes), which tfevents_check.py (its
#                  own decoder: records, CRC-32C, protobufs) finds equal to each other and
#                  to the printed objectives; the output unchanged; a second run appends;
#                  a damaged file fails the checker; a directory that cannot be made and a
#                  full disk: exit 2 naming the path
#   tensorboard NP the tensorboard package's EventAccumulator (tb_read.py, in the venv of
#                  scripts/tb-venv.sh) reads sgd_mf's scalars: tags, steps and values those
#                  of the CSV, which are those printed
#   progress NP    the progress line under script(1): on a terminal for the loads, the
#                  loops and the epochs (mpiexec: through rank 0's stdout), and the screen
#                  then shows exactly the program's output (term_render.py); none with
#                  --quiet, $ORN_PROGRESS=0, a long $ORN_PROGRESS_DELAY, stderr or stdout
#                  in a file, or without a terminal; $ORN_PROGRESS=1 forces it on stderr
#   xferq NP       need-ordered transfers (dsm/xferq.h) cut into 64-byte chunks through a
#                  256-byte window, and sent whole (ORN_XFER_CHUNK=0): SGD MF (rotated
#                  blocks), SGD MF with side features rotated as CSR blocks, the edit
#                  distance with B's blocks and ghost cells down the wavefront, SLR reading
#                  a copy of w (its tiles sent whole) and through prefetches
#                  (ORN_REPLICATE_MAX=0): byte-identical results both ways, equal to the
#                  serial replay of the recorded order (SGD MF, SLR with the copy) or the
#                  serial reference (edit distance)
#   ckpt_bad NP    refused checkpoints: a flipped byte in a rank file or in the manifest, a
#                  missing rank file, another rank count, another program, a param that
#                  differs, no checkpoint, --checkpoint into a directory that holds one
set -eu
: "${ORIONC:?}" "${MPIEXEC:?}" "${E2E_SRC:?}" "${E2E_WORK:?}" "${ROOT:?}"
check=$1
np=${2:-1}
S=$E2E_SRC
D=$S/data
B=${E2E_BIN:-$E2E_WORK/bin}

fail() {
  echo "e2e $check -n $np: FAIL: $*" >&2
  exit 1
}
run() { "$MPIEXEC" -n "$np" "$@"; }

if [ "$check" != compile ]; then
  W=$E2E_WORK/$check.np$np${E2E_TAG:+.$E2E_TAG} # E2E_TAG: a variant's own directory
  rm -rf "$W"
  mkdir -p "$W"
  cd "$W"
fi

# expect_fail CODE PATTERN CMD...: CMD exits CODE and its output contains PATTERN, and no
# message repeats its prefix ("save: save: ...")
expect_fail() {
  code=$1 pat=$2
  shift 2
  set +e
  "$@" >out.txt 2>&1
  rc=$?
  set -e
  [ "$rc" -eq "$code" ] || { cat out.txt >&2; fail "$* exited $rc, expected $code"; }
  [ -z "$pat" ] || grep -F -q -- "$pat" out.txt ||
    { cat out.txt >&2; fail "$*: no '$pat' in the output"; }
  ! grep -E -q '(^|[ :])([A-Za-z_]+): \2: ' out.txt ||
    { cat out.txt >&2; fail "$*: a doubled prefix in the output"; }
}

# col_of LINE NAME: the column of the first "NAME[" on line LINE of errors.orn
col_of() {
  sed -n "$1p" "$S/errors.orn" | awk -v n="$2[" '{ print index($0, n) }'
}

# col_last LINE NAME: the column of the last "NAME[" on line LINE of errors.orn
col_last() {
  sed -n "$1p" "$S/errors.orn" | awk -v n="$2[" '{ c = 0; while ((i = index(substr($0, c + 1), n)) > 0) { c += i }; print c }'
}

# caret_at LINE COL: out.txt shows line LINE of the source, a caret under column COL
caret_at() {
  grep -F -q -- "$(printf '%5d | ' "$1")$(sed -n "$1p" "$S/errors.orn")" out.txt ||
    { cat out.txt >&2; fail "no excerpt of line $1"; }
  grep -E -q -- "^      [|] {$2}\^" out.txt ||
    { cat out.txt >&2; fail "no caret at column $2"; }
}

# caret_case WHICH PATTERN COLUMN-FN NAME MESSAGE: errors --which=WHICH fails (exit 1) with
# "errors.orn:LINE:COL" and MESSAGE, the caret under COL: LINE the line of errors.orn matching
# PATTERN, COL the column COLUMN-FN (col_of, col_last) gives for NAME on it
caret_case() {
  l=$(grep -n "$2" "$S/errors.orn" | cut -d: -f1)
  expect_fail 1 "errors.orn:$l:$("$3" "$l" "$4")$5" run "$B/errors" --which="$1"
  caret_at "$l" "$("$3" "$l" "$4")"
}

# while_changing FILE PATTERN PROG ARGS...: run PROG under MPI while FILE grows a comment
# line at a time (from a loop in the background; PROG at the lowest priority, so that the
# loop keeps appending while PROG reads). PROG either read one version of the file (exit 0:
# try again) or fails with PATTERN; it must fail within 5 tries, or the change went
# unnoticed.
while_changing() {
  f=$1 pat=$2
  shift 2
  for try in 1 2 3 4 5; do
    (while :; do echo "# more" >>"$f"; done) &
    grower=$!
    grc=0
    nice -n 19 "$MPIEXEC" -n "$np" "$@" >out.txt 2>&1 || grc=$?
    kill "$grower"
    wait "$grower" 2>/dev/null || true
    if [ "$grc" -ne 0 ]; then
      [ "$grc" -eq 1 ] && grep -F -q -- "$pat" out.txt ||
        { tail -5 out.txt >&2; fail "$* (a file changing) exited $grc without '$pat'"; }
      echo "change noticed on try $try" >&2
      return 0
    fi
  done
  fail "$*: a file that changed while it was read was not noticed in 5 tries"
}

# field FILE KEY: the value of a "KEY value" line (a checkpoint's MANIFEST)
field() {
  awk -v k="$2" '$1 == k { print $2 }' "$1"
}

# notime FILE: the output without timings ("... 0.012 s ..." to the end of the line)
notime() {
  sed 's/ [0-9.e+-]* s .*//' "$1"
}

# ckpt_case DIR SIG N EXPECT_RC REF CMD...: in DIR, run CMD with --checkpoint=k
# --checkpoint-every=0; its last rank sends itself SIG just after the N-th checkpoint
# ($ORN_CKPT_SIGNAL); it must exit EXPECT_RC (any non-zero for "fail"). Then CMD --resume=k
# must print what REF (the uninterrupted run's output, in ../REF) printed after the
# checkpoint's stdout_lines lines, timings left out; the files it writes are left in DIR.
ckpt_case() {
  dir=$1 sig=$2 n=$3 want=$4 ref=$5
  shift 5
  mkdir -p "$dir"
  (
    cd "$dir"
    set +e
    export ORN_CKPT_SIGNAL="$n:$sig"
    "$@" --checkpoint=k --checkpoint-every=0 >stopped.txt 2>&1
    rc=$?
    unset ORN_CKPT_SIGNAL
    set -e
    if [ "$want" = fail ]; then
      [ "$rc" -ne 0 ] || fail "$dir: the run was not killed ($*)"
    else
      [ "$rc" -eq "$want" ] || { cat stopped.txt >&2; fail "$dir: exited $rc, expected $want ($*)"; }
    fi
    lines=$(field "$(newest k)" stdout_lines)
    "$@" --resume=k >resumed.txt 2>resumed.err ||
      { cat resumed.err >&2; fail "$dir: the resumed run failed ($*)"; }
    grep -q "resuming from k/ckpt-" resumed.err || fail "$dir: no 'resuming from' note"
    { head -n "$lines" "../$ref"; cat resumed.txt; } >joined.txt
    notime joined.txt >a.txt
    notime "../$ref" >b.txt
    diff -u b.txt a.txt || fail "$dir: output before the checkpoint + resumed output != the uninterrupted output"
    [ "$(wc -l <resumed.txt)" -lt "$(wc -l <"../$ref")" ] || fail "$dir: nothing was skipped"
  )
}

# newest DIR: the MANIFEST of DIR's newest complete checkpoint (not of a ckpt-N.tmp, whose
# MANIFEST may be written already when a run dies before renaming it)
newest() {
  ls -d "$1"/ckpt-*[0-9]/MANIFEST 2>/dev/null | sort | tail -n 1
}

# wait_ckpt DIR SEQ: wait (30 s at most) for a complete checkpoint numbered SEQ or more
# (else kill the background job $job and fail)
wait_ckpt() {
  i=0
  while [ "$i" -lt 600 ]; do
    m=$(newest "$1")
    [ -n "$m" ] && [ "$(field "$m" seq)" -ge "$2" ] && return 0
    sleep 0.05
    i=$((i + 1))
  done
  kill -9 "$job" 2>/dev/null || true
  fail "no checkpoint $2 in $1 after 30 s"
}

# ranks_of PID: the processes mpiexec PID started (through its proxy): the ranks
ranks_of() {
  for c in $(ps -o pid= --ppid "$1"); do ps -o pid= --ppid "$c"; done
}

# flip FILE OFFSET: invert the bits of one byte in place
flip() {
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  # shellcheck disable=SC2059
  printf "$(printf '\\%03o' $((255 - b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# last_field FILE WORD: the number after the last occurrence of WORD
last_field() {
  awk -v w="$2" '{ for (i = 1; i < NF; i++) if ($i == w) v = $(i + 1) } END { print v }' "$1"
}

case $check in
compile_fastpaths)
  mkdir -p "$B"
  ORN_CFLAGS="-Wall -Wextra -Werror" "$ORIONC" "$S/fastpaths.orn" -o "$B/fastpaths" ||
    fail "orionc fastpaths.orn"
  ;;
compile)
  mkdir -p "$B"
  # two compilers at a time (the other tests wait for these), each naming its program failing
  # shellcheck disable=SC2016
  printf '%s\0' "$ROOT"/examples/sgd_mf.orn "$ROOT"/examples/lda.orn "$ROOT"/examples/slr.orn \
    "$ROOT"/examples/gauss_seidel.orn "$S"/features.orn "$S"/features2.orn "$S"/sgd_trace.orn \
    "$S"/lda_trace.orn "$S"/slr_trace.orn "$S"/errors.orn "$S"/text.orn \
    "$ROOT"/examples/als.orn "$S"/blas.orn "$S"/layout.orn "$S"/edit_distance.orn \
    "$S"/sgd_side.orn "$S"/baddata.orn "$S"/ckpt.orn "$S"/managed.orn "$S"/dlr_trace.orn \
    "$S"/csr_rows.orn "$S"/sgd_default.orn "$S"/sgd_bias_trace.orn \
    "$S"/wave_buffer.orn "$S"/mf_buffers.orn "$S"/placement.orn "$S"/windows.orn \
    "$S"/gather_rows.orn "$S"/kept_copies.orn "$S"/ckpt_buf.orn "$S"/held.orn "$S"/show.orn "$S"/dist_vec.orn "$S"/csv.orn |
    B="$B" ORIONC="$ORIONC" ORN_CFLAGS="-Wall -Wextra -Werror" xargs -0 -n 1 -P 2 sh -c \
      '"$ORIONC" "$1" -o "$B/$(basename "$1" .orn)" || { echo "e2e: orionc $1 failed" >&2; exit 1; }' \
      sh || fail "orionc failed on a program (above)"
  "$ORIONC" --layout=declared "$S/layout.orn" -o "$B/layout_declared" || fail "orionc layout.orn"
  # the trace programs with a plain buffer(w): the default flush interval (slr_replay)
  for p in slr_trace dlr_trace; do
    sed 's/buffer(w, flush_every = flush)/buffer(w)/' "$S/$p.orn" >"$B/${p}_default.orn"
    grep -q '= buffer(w)$' "$B/${p}_default.orn" || fail "$p.orn: no buffer(w, flush_every = flush)"
    ORN_CFLAGS="-Wall -Wextra -Werror" "$ORIONC" "$B/${p}_default.orn" -o "$B/${p}_default" ||
      fail "orionc ${p}_default.orn"
  done
  "$GEN_RATINGS" 3000 600 90000 5 7 "$B/syn.train" "$B/syn.test"
  awk '{ print $2, $1, $3 }' "$B/syn.train" >"$B/syn.train_by_item"
  "$GEN_LIBSVM" 20000 5000 20 3 "$B/bq_s.train" "$B/bq_s.test"
  "$GEN_LIBSVM" 16000 100 20 4 "$B/bq_d.train" "$B/bq_d.test"
  "$GEN_LIBSVM" 1600 400 10 5 "$B/rp.libsvm" "$B/rp.test"
  # the same and one sample with feature 1,100,000: w of 4.4 MB (slr_replay's records path)
  { cat "$B/rp.libsvm"; echo "+1 3:0.25 1100000:0.5"; } >"$B/rpw.libsvm"
  ;;
layout)
  # the chosen storage order against the declared one: same output, same saved arrays
  "$ORIONC" --explain "$S/layout.orn" | grep -q '^  W  *dimension 0 is unit stride' ||
    fail "layout.orn: W is not stored transposed"
  "$ORIONC" --explain "$S/layout.orn" | grep -q '^  T .*stored as \[1, 2, 0\]' ||
    fail "layout.orn: T is not stored as [1, 2, 0]"
  for v in layout layout_declared; do
    mkdir -p "$v"
    (cd "$v" && run "$B/$v" --train="$B/syn.train" >out.txt 2>&1) ||
      { cat "$v/out.txt" >&2; fail "$v exited non-zero"; }
  done
  cat layout/out.txt
  diff -u layout_declared/out.txt layout/out.txt || fail "the chosen layout prints differently"
  cmp layout_declared/layout_W.txt layout/layout_W.txt || fail "saved W differs"
  cmp layout_declared/layout_H.bin layout/layout_H.bin || fail "saved H differs"
  cmp layout_declared/layout_T.txt layout/layout_T.txt || fail "saved T differs"
  # arrays made where their first loop places them (placement.orn): at several ranks the
  # push loop's first run moves nothing; the output is the one rank's (to 9 digits)
  awk 'BEGIN { for (s = 0; s < 300; s++) for (k = 0; k <= s % 3; k++)
                 printf "%d %d 1\n", s, (s * 7 + k * k * 13 + 1) % 300 }' >graph.txt
  ORN_STATS=runs run "$B/placement" --graph=graph.txt >place.txt 2>place.err ||
    { cat place.txt place.err >&2; fail "placement exited non-zero"; }
  "$MPIEXEC" -n 1 "$B/placement" --graph=graph.txt >place1.txt 2>&1 ||
    { cat place1.txt >&2; fail "placement -n 1 exited non-zero"; }
  grep -q '^pagerank: 300 nodes' place.txt || { cat place.txt >&2; fail "placement printed no result"; }
  cmp place.txt place1.txt || fail "placement prints otherwise than at -n 1"
  if [ "$np" != 1 ]; then
    push=$(($(grep -n 'dnext\[t\] += pr\[s\]' "$S/placement.orn" | cut -d: -f1) - 1))
    [ "$(grep -c "placement.orn:$push (1d) run 1: .* repartitioned 0," place.err)" = "$np" ] ||
      { grep "placement.orn:$push " place.err >&2; fail "the push loop's first run moved an array"; }
  fi
  ;;
blas)
  run "$B/blas" >out.txt 2>&1 || { cat out.txt >&2; fail "blas exited non-zero"; }
  diff -u "$S/blas.expected" out.txt || fail "output differs from blas.expected"
  l=$(grep -n 'matmul_into(T, A, B)' "$S/blas.orn" | cut -d: -f1)
  expect_fail 1 "blas.orn:$l: matmul_into: C is 5 x 4 but A B is 5 x 3" run "$B/blas" --bad=1
  l=$(grep -n 'solve_into(t, NP, t)' "$S/blas.orn" | cut -d: -f1)
  expect_fail 1 "blas.orn:$l: solve_into: A is not positive definite" run "$B/blas" --bad=2
  ;;
als)
  args="--train=$B/syn.train --test=$B/syn.test --train_by_item=$B/syn.train_by_item --iters=5"
  # shellcheck disable=SC2086
  for n in a b; do
    run "$B/als" $args >"als$n.txt" 2>&1 || { cat "als$n.txt" >&2; fail "als -n $np"; }
    sed 's/ [0-9.e+-]* s$//' "als$n.txt" >"rmse$n.txt"
  done
  cmp rmsea.txt rmseb.txt || fail "two runs at -n $np differ"
  cat rmsea.txt
  base=$(awk '/^global mean/ { print $NF }' rmsea.txt)
  r=$(last_field rmsea.txt rmse)
  [ "$(grep -c '^iteration' rmsea.txt)" -eq 5 ] || fail "expected 5 iterations"
  awk -v a="$base" -v b="$r" 'BEGIN { exit !(b < a && b < 1.0) }' ||
    fail "test RMSE $r does not improve on the global mean's $base"
  if [ "$np" -gt 1 ]; then
    # A small cache would make the evaluation loop cut the ratings by item too, which the
    # user half, aligning the ratings with its users, would undo at every iteration; the
    # ratings are an array another loop aligns, so the evaluation loop never cuts them
    # (layout.c rt_partition_args, blocking.c split_off), and none of its runs moves them.
    line=$(grep -n 'parallel_for (u, i), r in ratings' "$ROOT/examples/als.orn" | cut -d: -f1)
    # shellcheck disable=SC2086
    ORN_CACHE_BYTES=4K ORN_STATS=runs run "$B/als" $args >/dev/null 2>cut.txt ||
      { cat cut.txt >&2; fail "als with ORN_CACHE_BYTES=4K"; }
    awk -v at="als.orn:$line " 'index($0, at) && / run [0-9]+:/ { n++
        if (!/ repartitioned 0,/ || / sub-blocks [0-9]+x[2-9]/) bad = 1 }
      END { exit bad || n < 2 * 5 }' cut.txt ||
      { grep "als.orn:$line " cut.txt >&2; fail "the evaluation loop cut or moved the ratings"; }
  fi
  ;;
features)
  run "$B/features" >out.txt 2>&1 || { cat out.txt >&2; fail "features exited non-zero"; }
  diff -u "$S/features.expected" out.txt || fail "output differs from features.expected"
  run "$B/features2" --triplets="$D/small.triplets" >out2.txt 2>&1 ||
    { cat out2.txt >&2; fail "features2 exited non-zero"; }
  diff -u "$S/features2.expected" out2.txt || fail "output differs from features2.expected"
  run "$B/fastpaths" >out3.txt 2>&1 || { cat out3.txt >&2; fail "fastpaths exited non-zero"; }
  diff -u "$S/fastpaths.expected" out3.txt || fail "output differs from fastpaths.expected"
  # rows gathered by a permutation from prefetched arrays: copied whole before the loop,
  # and (ORN_REPLICATE_MAX=0) fetched per loop as ranges of the owners' tiles
  # (ORN_WINDOW_CHECK=1: a copy kept from an earlier run is fetched again and compared)
  # (ORN_REPLICA_MIN_KB=0: windows read node replicas of arrays of any size, dsm/replica.c)
  for cfg in "" "ORN_REPLICATE_MAX=0 ORN_REPLICA=off" "ORN_REPLICATE_MAX=0 ORN_REPLICA=off ORN_WINDOW_CHECK=1" \
    "ORN_REPLICATE_MAX=0 ORN_REPLICA=off ORN_XFER_CHUNK=4096 ORN_XFER_WINDOW=8192" \
    "ORN_REPLICATE_MAX=0 ORN_REPLICA_MIN_KB=0" "ORN_REPLICATE_MAX=0 ORN_REPLICA_MIN_KB=0 ORN_WINDOW_CHECK=1"; do
    # shellcheck disable=SC2086
    env $cfg "$MPIEXEC" -n "$np" "$B/gather_rows" >out5.txt 2>&1 ||
      { cat out5.txt >&2; fail "gather_rows ($cfg) exited non-zero"; }
    diff -u "$S/gather_rows.expected" out5.txt ||
      fail "gather_rows ($cfg): output differs from gather_rows.expected"
  done
  # whole copies (replicas; windows) kept between runs while every rank's generation of
  # the array stays; A changed between runs by a loop, element writes, a buffer
  # (kept_copies.orn); or node replicas, rewritten when a generation changed
  for cfg in "ORN_REPLICA=off" "ORN_REPLICATE_MAX=0 ORN_REPLICA=off" "ORN_REPLICATE_MAX=0 ORN_REPLICA=off ORN_WINDOW_CHECK=1" \
    "ORN_REPLICA_MIN_KB=0" "ORN_REPLICA_MIN_KB=0 ORN_WINDOW_CHECK=1" \
    "ORN_REPLICATE_MAX=0 ORN_REPLICA_MIN_KB=0" "ORN_REPLICATE_MAX=0 ORN_REPLICA_MIN_KB=0 ORN_WINDOW_CHECK=1"; do
    # shellcheck disable=SC2086
    env $cfg ORN_STATS=runs "$MPIEXEC" -n "$np" "$B/kept_copies" >out6.txt 2>stats6.txt ||
      { cat out6.txt stats6.txt >&2; fail "kept_copies ($cfg) exited non-zero"; }
    [ "$(cat out6.txt)" = "disagreements 0" ] ||
      { cat out6.txt >&2; fail "kept_copies ($cfg): a run read a stale copy"; }
    kl=$(grep -n '^    parallel_for i, v in y' "$S/kept_copies.orn" | head -1 | cut -d: -f1)
    kept=$(grep -c "kept_copies.orn:$kl .*, kept [0-9]" stats6.txt || true)
    shared=$(grep -c "kept_copies.orn:$kl .*, shared [0-9]" stats6.txt || true)
    case "$cfg:$np" in
    *:1) [ "$kept" -eq 0 ] && [ "$shared" -eq 0 ] || fail "kept_copies ($cfg): copies kept at -n 1" ;;
    *REPLICA_MIN*)
      [ "$kept" -eq 0 ] && [ "$shared" -ge 6 ] ||
        { cat stats6.txt >&2; fail "kept_copies ($cfg): the runs did not read node replicas"; } ;;
    *CHECK*:*) [ "$kept" -eq 0 ] || fail "kept_copies ($cfg): copies kept at -n $np" ;;
    *) [ "$kept" -ge 4 ] || { cat stats6.txt >&2; fail "kept_copies ($cfg): no copy kept between runs"; } ;;
    esac
  done
  # top-level loops that read dist arrays and write none hold them (held.orn: 9 holds in
  # the C, codegen/c_hold.c): the same output with whole copies (dsm/held.c; made at
  # several ranks, one a loop: the timeline's spans) and without ($ORN_HELD_MAX=0: none)
  [ "$("$ORIONC" --emit=c "$S/held.orn" | grep -c 'orn_std_hold(P_, ')" -eq 9 ] ||
    fail "held.orn: not 9 loops hold the arrays they read"
  for cfg in "" "ORN_HELD_MAX=0"; do
    # shellcheck disable=SC2086
    env $cfg "$MPIEXEC" -n "$np" "$B/held" --timeline=held.json >out7.txt 2>&1 ||
      { cat out7.txt >&2; fail "held ($cfg) exited non-zero"; }
    diff -u "$S/held.expected" out7.txt || fail "held ($cfg): output differs from held.expected"
    copies=$(grep -o '"whole copy"' held.json | wc -l)
    case "$cfg:$np" in
    *:1 | ORN_HELD_MAX=0:*) [ "$copies" -eq 0 ] || fail "held ($cfg): $copies whole copies" ;;
    *) [ "$copies" -ge "$np" ] && [ "$copies" -le $((10 * np)) ] ||
      fail "held: $copies whole copies at -n $np (not one a loop)" ;;
    esac
  done
  # node replicas made with the arrays that loops read at rows anywhere (codegen/c_stmt.c
  # read_anywhere): gather_rows.orn's gathered arrays, not fastpaths.orn's L (rows 0..5)
  [ "$("$ORIONC" --emit=c "$S/gather_rows.orn" | grep -c 'orn_std_dist_replica(P_, ')" -ge 2 ] ||
    fail "gather_rows.orn: no node replica made with the gathered arrays"
  [ "$("$ORIONC" --emit=c "$S/fastpaths.orn" | grep -c 'orn_std_dist_replica')" -eq 0 ] ||
    fail "fastpaths.orn: a node replica for an array read at a constant range of rows"
  # the row subscript A[P[i], j] of a `for` read once before it (lang/sema_rewrite.c 3.)
  [ "$("$ORIONC" --emit=c "$S/gather_rows.orn" | grep -o 'row_of_line[0-9]*_col[0-9]* .*= orn_' |
      cut -d' ' -f1 | sort -u | wc -l)" -eq 3 ] ||
    fail "gather_rows.orn: the row subscripts P[i] and Pb[i] are not read before their loops"
  # the jam across centres read from dist arrays the loop replicates (fastpaths.orn)
  [ "$("$ORIONC" --emit=c "$S/fastpaths.orn" | grep -c 'orn_std_jam_snap(P_, (&ja')" -ge 2 ] ||
    fail "fastpaths.orn: the centres in dist arrays are not jammed"
  # the jam's register partials as wide as the C compiler's vectors with the flags the C is
  # compiled with (tools/cc_driver.c orn_cc_vector_bytes; a load of a store of another
  # width is not forwarded): one typedef for 16 floats, 64 / (its bytes) vectors of it
  if [ "$(uname -m)" = x86_64 ]; then
    for t in "x86-64 - 16" "x86-64-v3 256 32" "x86-64-v4 512 64" "x86-64-v4 256 32"; do
      set -- $t
      fl=${2#-}
      got=$(ORN_CFLAGS=${fl:+-mprefer-vector-width=$fl} "$ORIONC" --emit=c -march="$1" "$S/fastpaths.orn" |
        grep -o 'typedef float jv[0-9]*_ __attribute__((vector_size([0-9]*)))' | grep -o '([0-9]*)' | sort -u)
      [ "$got" = "($3)" ] || fail "fastpaths.orn: register partials of $got bytes at -march=$1 ($2 bits preferred; want $3)"
    done
  fi
  # rows of a sparse loop: the row's tests made once per block (csr_rows.orn)
  "$ORIONC" --emit=c "$S/csr_rows.orn" >csr_rows.c || fail "csr_rows.orn: --emit=c"
  grep -q 'if (rok_ && cok_)' csr_rows.c || fail "csr_rows.orn: no block runs its rows without their tests"
  # G's rows gathered at the column key by the row `for` whose body has a loop are
  # prefetched (codegen/c_gather.c), once in the C; the element loops are not
  [ "$(grep -c 'orn_rt_box_prefetch(&X[0-9]*_, 2, ro[0-9]*_ + rc[0-9]*_\[j[0-9]*_ + 8\]' csr_rows.c)" -eq 1 ] ||
    fail "csr_rows.orn: G's rows are not prefetched once (the fast row loop)"
  [ "$(grep 'orn_rt_box_prefetch' csr_rows.c | grep -vc ' + rc[0-9]*_\[j[0-9]*_ + 8\]')" -eq 0 ] ||
    fail "csr_rows.orn: prefetches outside the row loop"
  run "$B/csr_rows" --data="$D/ratings.train" >out4.txt 2>&1 ||
    { cat out4.txt >&2; fail "csr_rows exited non-zero"; }
  grep -q '^csr_rows: 0 mismatches, rows 60, checksum 2273.625000000$' out4.txt ||
    { cat out4.txt >&2; fail "csr_rows: mismatches"; }
  # the filter through variables (ii = i + a ... G[ii, jj]) runs windows without tests too
  "$ORIONC" --emit=c "$S/windows.orn" |
    awk '/^\/\* parallel_for at /{ on = index($0, "windows.orn:'"$(grep -n 'h in HB$' "$S/windows.orn" | cut -d: -f1)"':") > 0 } on' |
    grep -q 'orn_rt_box_clip_win' || fail "windows.orn: the filter through variables has no window test"
  # guards proven over the fast range: GA's tests of its neighbours become range clips
  [ "$("$ORIONC" --emit=c "$S/windows.orn" |
      awk '/^\/\* parallel_for at /{ on = index($0, "windows.orn:'"$(grep -n 'v in GA$' "$S/windows.orn" | cut -d: -f1)"':") > 0 } on' |
      grep -c 'q_ = orn_rt_shift_sat')" -ge 3 ] || fail "windows.orn: GA's guards are not proven over its range"
  # and GC's clamps: the interior without min and max (both ends of j's clamp clip the range)
  [ "$("$ORIONC" --emit=c "$S/windows.orn" |
      awk '/^\/\* parallel_for at /{ on = index($0, "windows.orn:'"$(grep -n 'v in GC$' "$S/windows.orn" | cut -d: -f1)"':") > 0 } on' |
      grep -c 'q_ = orn_rt_shift_sat')" -ge 2 ] || fail "windows.orn: GC's clamps are not proven over its range"
  # windows: with the prefetched arrays' whole copies, and through the prefetch cache
  # (ORN_WINDOW_MB=0: boxes of the rank's own elements, so windows reach past them)
  for mb in "" 0; do
    ORN_WINDOW_MB=$mb run "$B/windows" >out4.txt 2>&1 || { cat out4.txt >&2; fail "windows exited non-zero"; }
    diff -u "$S/windows.expected" out4.txt || fail "output differs from windows.expected (ORN_WINDOW_MB=$mb)"
  done
  # run-time windows and a shift wider than some blocks (the halos set before each run)
  run "$B/windows" --kw=400 --r=150 --lag=-700 >out5.txt 2>&1 || { cat out5.txt >&2; fail "windows --kw=400"; }
  grep -q '^windows: 0 disagreements' out5.txt || { cat out5.txt >&2; fail "windows --kw=400 disagrees"; }
  cmp B.bin L.bin || fail "an array loaded in another storage order saved other bytes"
  ;;
gauss_seidel)
  run "$B/gauss_seidel" --n=40 --sweeps=7 --out=grid.txt >log.txt 2>&1 ||
    { cat log.txt >&2; fail "gauss_seidel exited non-zero"; }
  "$GS_REF" 40 7 ref.txt
  cmp grid.txt ref.txt || fail "the grid differs from the serial reference"
  # at several ranks the rows next to a block travel down the wavefront (ghost.c): no
  # prefetch pass, no round, no element fetched on demand
  ORN_STATS=runs run "$B/gauss_seidel" --n=40 --sweeps=2 --out=grid2.txt >stats.txt 2>&1 ||
    { cat stats.txt >&2; fail "gauss_seidel with ORN_STATS exited non-zero"; }
  if [ "$np" != 1 ]; then
    grep '(2d_ordered)' stats.txt | grep -qv 'rounds 0, .*prefetched 0, misses 0,' &&
      { cat stats.txt >&2; fail "the ordered sweep prefetched or fetched on demand"; }
    grep -q 'gauss_seidel.orn:.*(2d_ordered).*ghost rows [1-9]' stats.txt ||
      { cat stats.txt >&2; fail "no ghost rows travelled in the ordered sweep"; }
    # a grid large enough for several bands per rank (dealt cyclically) is made in the
    # sweep's bands (orn_rt_space_part), and the boundary and residual loops keep them:
    # nothing moves, at the first sweep either; the grid is the serial one
    ORN_STATS=runs run "$B/gauss_seidel" --n=512 --sweeps=2 --out=grid4.txt >stats4.txt 2>&1 ||
      { cat stats4.txt >&2; fail "gauss_seidel --n=512 exited non-zero"; }
    "$GS_REF" 512 2 ref4.txt
    cmp grid4.txt ref4.txt || fail "the 512 x 512 grid differs from the serial reference"
    [ "$(grep -c 'gauss_seidel.orn:.* run .*repartitioned 0,' stats4.txt)" -eq \
      "$(grep -c 'gauss_seidel.orn:.* run ' stats4.txt)" ] ||
      { cat stats4.txt >&2; fail "a loop moved the 512 x 512 grid"; }
  fi
  # without them (ORN_GHOST=off) the prefetch pass announces every read a block makes
  # outside its box (its runs skip only the reads proven local), so no block fetches an
  # element on demand; the grid is the same
  ORN_GHOST=off ORN_STATS=runs run "$B/gauss_seidel" --n=40 --sweeps=7 --out=grid3.txt \
    >stats3.txt 2>&1 || { cat stats3.txt >&2; fail "gauss_seidel (ORN_GHOST=off) exited non-zero"; }
  cmp grid3.txt ref.txt || fail "the grid (ORN_GHOST=off) differs from the serial reference"
  grep -q 'gauss_seidel.orn:.*(2d_ordered).*prefetched [1-9]' stats3.txt || [ "$np" = 1 ] ||
    { cat stats3.txt >&2; fail "the ordered sweep (ORN_GHOST=off) prefetched nothing"; }
  if grep '(2d_ordered)' stats3.txt | grep -qv 'misses 0,'; then
    cat stats3.txt >&2
    fail "a block of the ordered sweep fetched elements the prefetch pass did not announce"
  fi
  ;;
sgd_replay)
  # automatic sub-blocks (none at this size), then 3 x 2 sub-blocks per block (cache
  # blocking: the sub-blocks are in the trace with their boxes)
  line=$(grep -n 'parallel_for (u, i), r in ratings' "$S/sgd_trace.orn" | cut -d: -f1)
  for sb in auto 3x2; do
    ORN_SUBBLOCK=$sb ORN_TRACE=trace.txt run "$B/sgd_trace" --train="$D/ratings.train" \
      --test="$D/ratings.test" --epochs=3 --wout=W.txt --hout=H.txt >log.txt 2>&1 ||
      { cat log.txt >&2; fail "sgd_trace (ORN_SUBBLOCK=$sb)"; }
    "$SGD_REPLAY" "$D/ratings.train" "$D/ratings.test" trace.txt "$line" 3 5 0.05 0.9 0.05 0.1 \
      42 RW.txt RH.txt
    cmp W.txt RW.txt || fail "W differs from the serial replay (ORN_SUBBLOCK=$sb)"
    cmp H.txt RH.txt || fail "H differs from the serial replay (ORN_SUBBLOCK=$sb)"
  done
  # biases through buffers: bu partitioned, bi rotated (and updated at the next item's
  # block too); updates of the held blocks at once, the others at the flushes
  # (docs/language.md section 7)
  bl=$(grep -n 'parallel_for (u, i), r in ratings' "$S/sgd_bias_trace.orn" | cut -d: -f1)
  for sb in auto 3x2; do
    ORN_SUBBLOCK=$sb ORN_TRACE=trace.txt run "$B/sgd_bias_trace" --train="$D/ratings.train" \
      --test="$D/ratings.test" --epochs=3 >log.txt 2>&1 ||
      { cat log.txt >&2; fail "sgd_bias_trace (ORN_SUBBLOCK=$sb)"; }
    "$SGD_REPLAY" "$D/ratings.train" "$D/ratings.test" trace.txt "$bl" 3 5 0.05 0.9 0.05 0.1 \
      42 RW.txt RH.txt Rbu.txt Rbi.txt
    for f in W H bu bi; do
      cmp $f.txt R$f.txt || fail "$f differs from the serial replay (biases, ORN_SUBBLOCK=$sb)"
    done
  done
  # a buffer of a column array that travels down an ordered loop's wavefront
  run "$B/wave_buffer" >wave.txt 2>&1 || { cat wave.txt >&2; fail "wave_buffer"; }
  [ "$(cat wave.txt)" = 2380.0 ] || { cat wave.txt >&2; fail "wave_buffer: col sums to $(cat wave.txt), not 2380.0"; }
  # users and items swapped, the items spread out (120 items, 45 users): W is now less than
  # half of H, so from two ranks on the runtime rotates W (key 0) instead of the plan's H
  # (layout.c, rt_choose_orientation); ORN_ROTATE=planned keeps H. Both replay exactly.
  for f in train test; do
    awk '/^#/ { print; next } { print $2, 2 * $1 + 1, $3 }' "$D/ratings.$f" >"t.$f"
  done
  for mode in auto planned; do
    ORN_ROTATE=$mode ORN_STATS=runs ORN_TRACE=trace.txt run "$B/sgd_trace" --train=t.train \
      --test=t.test --epochs=3 --wout=W.txt --hout=H.txt >log.txt 2>stats.txt ||
      { cat log.txt stats.txt >&2; fail "sgd_trace, transposed (ORN_ROTATE=$mode)"; }
    "$SGD_REPLAY" t.train t.test trace.txt "$line" 3 5 0.05 0.9 0.05 0.1 42 RW.txt RH.txt
    cmp W.txt RW.txt || fail "W differs from the serial replay (transposed, ORN_ROTATE=$mode)"
    cmp H.txt RH.txt || fail "H differs from the serial replay (transposed, ORN_ROTATE=$mode)"
    # the same with biases: where W's side rotates, bu rotates and bi stays
    ORN_ROTATE=$mode ORN_TRACE=trace.txt run "$B/sgd_bias_trace" --train=t.train --test=t.test \
      --epochs=3 >log.txt 2>&1 || { cat log.txt >&2; fail "sgd_bias_trace, transposed"; }
    "$SGD_REPLAY" t.train t.test trace.txt "$bl" 3 5 0.05 0.9 0.05 0.1 42 RW.txt RH.txt \
      Rbu.txt Rbi.txt
    for f in W H bu bi; do
      cmp $f.txt R$f.txt || fail "$f differs from the serial replay (biases, transposed, $mode)"
    done
    want=1
    [ "$mode" = planned ] || [ "$np" -eq 1 ] || want=0
    grep -q "sgd_trace.orn:$line (2d) .* key $want rotates" stats.txt ||
      { grep "sgd_trace.orn:$line" stats.txt >&2; fail "transposed, ORN_ROTATE=$mode: key $want did not rotate"; }
  done
  ;;
edit_distance)
  mkdir ref
  "$ED_REF" "$D/seq_a.txt" "$D/seq_b.txt" ref >ref/out.txt
  for rmax in default 0; do
    mkdir "r$rmax"
    (cd "r$rmax" && if [ "$rmax" = default ]; then unset ORN_REPLICATE_MAX; else
      export ORN_REPLICATE_MAX=$rmax; fi &&
      ORN_STATS=runs run "$B/edit_distance" --a="$D/seq_a.txt" --b="$D/seq_b.txt" >out.txt 2>stats.txt) ||
      { cat "r$rmax/out.txt" "r$rmax/stats.txt" >&2; fail "edit_distance (ORN_REPLICATE_MAX=$rmax)"; }
    cat "r$rmax/out.txt"
    diff -u ref/out.txt "r$rmax/out.txt" || fail "the output differs from the serial reference"
    for f in D row_best col_best; do
      cmp "r$rmax/$f.txt" "ref/$f.txt" ||
        fail "$f differs from the serial reference (ORN_REPLICATE_MAX=$rmax)"
    done
  done
  # B's column blocks travelled with their ghost cells (more than one rank only)
  [ "$np" -eq 1 ] || grep -q 'edit_distance.orn:[0-9]* (2d_ordered).* ghosts [1-9]' r0/stats.txt ||
    { cat r0/stats.txt >&2; fail "B did not travel with ghost cells at ORN_REPLICATE_MAX=0"; }
  ;;
xferq)
  line=$(grep -n 'parallel_for (u, i), r in ratings' "$S/sgd_trace.orn" | cut -d: -f1)
  tl=$(grep -n 'parallel_for n, label in y$' "$S/slr_trace.orn" | cut -d: -f1)
  el=$(grep -n 'parallel_for n, label in yt$' "$S/slr_trace.orn" | cut -d: -f1)
  "$ED_REF" "$D/seq_a.txt" "$D/seq_b.txt" . >ed_ref.txt
  for v in "64 256" "0 0"; do
    c=c${v% *}
    mkdir "$c" "$c/replay" "$c/side" "$c/ed" "$c/slr" "$c/slr0"
    (cd "$c" && export ORN_XFER_CHUNK="${v% *}" ORN_XFER_WINDOW="${v#* }" &&
      ORN_TRACE=trace.txt run "$B/sgd_trace" --train="$D/ratings.train" \
        --test="$D/ratings.test" --epochs=3 --wout=W.txt --hout=H.txt >log.txt 2>&1 &&
      (cd side && ORN_REPLICATE_MAX=0 ORN_SUBBLOCK=2x2 run "$B/sgd_side" \
        --train="$D/ratings.train" --ufeat="$D/user.features" --ifeat="$D/item.features" \
        --epochs=3 >log.txt 2>&1) &&
      (cd ed && ORN_REPLICATE_MAX=0 run "$B/edit_distance" --a="$D/seq_a.txt" \
        --b="$D/seq_b.txt" >out.txt 2>&1) &&
      (cd slr && ORN_TRACE=trace.txt run "$B/slr_trace" --train="$D/tiny.libsvm" \
        --test="$D/tiny.libsvm" --epochs=4 --step=0.05 --lam=0.0001 --flush=7 >log.txt 2>&1) &&
      (cd slr0 && ORN_REPLICATE_MAX=0 run "$B/slr_trace" --train="$D/tiny.libsvm" \
        --test="$D/tiny.libsvm" --epochs=4 --step=0.05 --lam=0.0001 --flush=7 >log.txt 2>&1)) ||
      { cat "$c"/log.txt "$c"/*/log.txt "$c"/ed/out.txt >&2 2>/dev/null
        fail "a run with ORN_XFER_CHUNK=${v% *}"; }
    "$SGD_REPLAY" "$D/ratings.train" "$D/ratings.test" "$c/trace.txt" "$line" 3 5 0.05 0.9 \
      0.05 0.1 42 "$c/RW.txt" "$c/RH.txt"
    cmp "$c/W.txt" "$c/RW.txt" || fail "W differs from the serial replay ($c)"
    cmp "$c/H.txt" "$c/RH.txt" || fail "H differs from the serial replay ($c)"
    "$SLR_REPLAY" "$D/tiny.libsvm" "$D/tiny.libsvm" "$c/slr/trace.txt" "$tl" "$el" 4 0.05 \
      0.0001 "$c/replay"
    for f in w loss correct; do
      cmp "$c/slr/$f.txt" "$c/replay/$f.txt" || fail "SLR's $f differs from the serial replay ($c)"
    done
    diff -u ed_ref.txt "$c/ed/out.txt" || fail "the edit distance differs from the reference ($c)"
    for f in D row_best col_best; do
      cmp "$c/ed/$f.txt" "$f.txt" || fail "the edit distance's $f differs from the reference ($c)"
    done
  done
  # SLR reading w through prefetches (ORN_REPLICATE_MAX=0) reads it as of the round's start,
  # without the rank's own updates since (the slr_replay check replays that): the same
  # bytes both ways is the check here
  for f in W.txt H.txt side/W.txt side/H.txt slr/w.txt slr0/w.txt slr0/loss.txt; do
    cmp "c64/$f" "c0/$f" || fail "$f differs between 64-byte chunks and whole transfers"
  done
  ;;
timeline)
  PY=${PYTHON:-python3}
  args="--train=$D/ratings.train --test=$D/ratings.test --epochs=3"
  # shellcheck disable=SC2086
  run "$B/sgd_mf" $args --timeline=trace.json >out.txt 2>err.txt ||
    { cat out.txt err.txt >&2; fail "sgd_mf --timeline exited non-zero"; }
  req=loop,phase,compute,transfer,io
  [ "$np" -eq 1 ] || req=$req,wait
  "$PY" "$ROOT/scripts/trace_check.py" trace.json --ranks "$np" --require "$req" ||
    fail "the timeline of sgd_mf does not pass the validator"
  # shellcheck disable=SC2086
  run "$B/sgd_mf" $args >plain.txt 2>&1 || fail "sgd_mf exited non-zero"
  notime out.txt >a.txt
  notime plain.txt >b.txt
  diff -u b.txt a.txt || fail "the output with the timeline differs"
  # from the environment, with a buffer: flushes
  ORN_TIMELINE=slr.json run "$B/slr" --train="$D/tiny.libsvm" --test="$D/tiny.libsvm" \
    --epochs=2 >slr.txt 2>&1 || { cat slr.txt >&2; fail "slr with ORN_TIMELINE exited non-zero"; }
  "$PY" "$ROOT/scripts/trace_check.py" slr.json --ranks "$np" --require loop,compute,flush ||
    fail "the timeline of slr does not pass the validator"
  # a small recorder drops spans and says so; clocks measured on one host as across hosts
  # shellcheck disable=SC2086
  ORN_TIMELINE_MAX=30 ORN_TIMELINE_CLOCK=measure run "$B/sgd_mf" $args --timeline=small.json \
    >small.txt 2>&1 || { cat small.txt >&2; fail "sgd_mf with ORN_TIMELINE_MAX=30 exited non-zero"; }
  grep -q "timeline: small.json written without [0-9]* spans that did not fit" small.txt ||
    { cat small.txt >&2; fail "no note of the spans dropped"; }
  "$PY" "$ROOT/scripts/trace_check.py" small.json --ranks "$np" ||
    fail "the timeline that dropped spans does not pass the validator"
  # the validator fails a trace that lacks a rank's events
  "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"] if e.get("pid") != int(sys.argv[2])]
json.dump(d, open(sys.argv[3], "w"))' trace.json "$np" broken.json
  ! "$PY" "$ROOT/scripts/trace_check.py" broken.json --ranks "$np" 2>check.txt ||
    fail "the validator passed a trace without rank $((np - 1))"
  grep -q "no process for rank $((np - 1))" check.txt || { cat check.txt >&2; fail "no reason given"; }
  # an agreed error (a missing file) ends the run cleanly: the timeline is written
  expect_fail 1 "cannot open" run "$B/sgd_mf" --train="$D/ratings.train" --test=missing.txt \
    --timeline=err.json
  "$PY" "$ROOT/scripts/trace_check.py" err.json --ranks "$np" --require io ||
    fail "the timeline of a run that failed cleanly does not pass the validator"
  expect_fail 2 "timeline: no/such/dir/t.json: cannot write" run "$B/sgd_mf" $args \
    --timeline=no/such/dir/t.json
  "$PY" "$ROOT/scripts/trace2svg.py" trace.json -o trace.svg || fail "trace2svg failed"
  "$PY" -c 'import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
fills = {r.getAttribute("fill") for r in d.getElementsByTagName("rect")}
def own(e):
    return "".join(c.data for c in e.childNodes if c.nodeType == c.TEXT_NODE)
titles = [own(t) for t in d.getElementsByTagName("title")]
text = " ".join(own(t) for t in d.getElementsByTagName("text"))
need = ["#2e9e44", "#2f6fce"] + (["#d9412b"] if int(sys.argv[2]) > 1 else [])
assert all(f in fills for f in need), ("colours missing", need, fills)
assert all("rank %d" % r in text for r in range(int(sys.argv[2]))), "a rank has no row"
assert "compute" in text and "wait" in text and "transfer" in text, "no legend"' trace.svg "$np" ||
    fail "the SVG lacks rows, colours or the legend"
  # a window around the first block: its bar's tooltip names it (over the whole run, bars
  # narrower than two pixels merge into one that counts them, as they do on a busy machine)
  win=$("$PY" -c 'import json, sys
e = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
     if e.get("ph") == "X" and str(e.get("name", "")).startswith("block")]
assert e, "no block span"
print("--start=%.6f --end=%.6f" % (e[0]["ts"] / 1e3 - 0.01, (e[0]["ts"] + e[0]["dur"]) / 1e3 + 0.01))' \
    trace.json) || fail "the trace has no block span"
  # shellcheck disable=SC2086
  "$PY" "$ROOT/scripts/trace2svg.py" trace.json -o block.svg $win || fail "trace2svg $win failed"
  "$PY" -c 'import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
titles = ["".join(c.data for c in t.childNodes if c.nodeType == c.TEXT_NODE)
          for t in d.getElementsByTagName("title")]
assert any(t.startswith("block") for t in titles), "no tooltip names a block"' block.svg ||
    fail "the SVG of the first block has no tooltip naming it"
  ;;
metrics)
  PY=${PYTHON:-python3}
  args="--train=$D/ratings.train --test=$D/ratings.test --epochs=3"
  # shellcheck disable=SC2086
  run "$B/sgd_mf" $args --logdir=logs >out.txt 2>err.txt ||
    { cat out.txt err.txt >&2; fail "sgd_mf --logdir exited non-zero"; }
  # rank 0 alone writes: one event file, one CSV
  [ "$(ls logs | grep -c '^events\.out\.tfevents\.[0-9]*\.')" -eq 1 ] || { ls -l logs >&2; fail "not one event file"; }
  [ "$(wc -l <logs/metrics.csv)" -eq 11 ] || { cat logs/metrics.csv >&2; fail "metrics.csv: not a header and 10 values"; }
  # the files agree with each other (records, CRCs, protobufs, f32) and with what was printed
  "$PY" "$S/tfevents_check.py" logs --printed out.txt --tags train/rmse,test/rmse \
    --regex '^epoch +([0-9]+) +train rmse ([0-9.]+) +test rmse ([0-9.]+)' ||
    fail "sgd_mf's event file, CSV and printed values differ"
  "$PY" "$S/tfevents_check.py" logs --printed out.txt --tags test/rmse --step 0 \
    --regex '^global mean [0-9.]+: test rmse ([0-9.]+)' || fail "the baseline (step 0) differs"
  # the same output without --logdir; nothing written then
  # shellcheck disable=SC2086
  run "$B/sgd_mf" $args >plain.txt 2>&1 || fail "sgd_mf exited non-zero"
  notime out.txt >a.txt
  notime plain.txt >b.txt
  diff -u b.txt a.txt || fail "the output with --logdir differs"
  [ "$(ls | grep -c -e '^events' -e '^metrics')" -eq 0 ] || fail "files written without --logdir"
  # a second run into the same directory: a second event file, the CSV continued
  # shellcheck disable=SC2086
  run "$B/sgd_mf" $args --logdir logs >out2.txt 2>&1 || fail "sgd_mf --logdir logs exited non-zero"
  [ "$(ls logs | grep -c '^events\.out\.tfevents\.')" -eq 2 ] || fail "no second event file"
  [ "$(grep -c '^name,step' logs/metrics.csv)" -eq 1 ] || fail "a second header in metrics.csv"
  "$PY" "$S/tfevents_check.py" logs || fail "two runs' files do not agree"
  # $ORN_LOGDIR; the other examples' objectives
  ORN_LOGDIR=slr run "$B/slr" --train="$D/tiny.libsvm" --test="$D/tiny.libsvm" --epochs=4 \
    >slr.txt 2>&1 || { cat slr.txt >&2; fail "slr with ORN_LOGDIR exited non-zero"; }
  "$PY" "$S/tfevents_check.py" slr --printed slr.txt --tags train/log_loss,test/accuracy \
    --regex '^epoch +([0-9]+) +log-loss ([0-9.]+) +test accuracy ([0-9.]+)' || fail "slr's metrics"
  run "$B/lda" --data="$D/tokens.docword" --topics=4 --iters=3 --logdir=lda >lda.txt 2>&1 ||
    { cat lda.txt >&2; fail "lda --logdir exited non-zero"; }
  "$PY" "$S/tfevents_check.py" lda --printed lda.txt --tags log_likelihood_per_token \
    --regex '^iteration +([0-9]+) +log-likelihood/token (-?[0-9.]+)' || fail "lda's metrics"
  run "$B/gauss_seidel" --n=30 --sweeps=3 --out=grid.txt --logdir=gs >gs.txt 2>&1 ||
    { cat gs.txt >&2; fail "gauss_seidel --logdir exited non-zero"; }
  "$PY" "$S/tfevents_check.py" gs || fail "gauss_seidel's metrics"
  [ "$(grep -c '^max_residual,' gs/metrics.csv)" -eq 3 ] || fail "gauss_seidel: not 3 residuals"
  # the checker is not blind: a flipped byte in an event file fails it
  cp -r logs broken
  f=$(ls broken/events.out.tfevents.* | head -n 1)
  flip "$f" 60
  ! "$PY" "$S/tfevents_check.py" broken >check.txt 2>&1 || fail "the checker passed a damaged file"
  grep -q "CRC" check.txt || { cat check.txt >&2; fail "the checker did not name the CRC"; }
  # a directory that cannot be made, a disk that is full: exit 2 naming the path, at once
  # shellcheck disable=SC2086
  expect_fail 2 "error: --logdir: cannot create '/dev/null': Not a directory" \
    run "$B/sgd_mf" $args --logdir=/dev/null/runs
  mkdir full
  ln -s /dev/full full/metrics.csv
  # shellcheck disable=SC2086
  expect_fail 2 "error: ORN_LOGDIR: cannot write 'full/metrics.csv': No space left on device" \
    env ORN_LOGDIR=full "$MPIEXEC" -n "$np" "$B/sgd_mf" $args
  expect_fail 2 "--logdir needs a value: --logdir=DIR" run "$B/sgd_mf" --logdir
  ;;
tensorboard)
  # TensorBoard's own reader (scripts/tb-venv.sh makes a venv with the tensorboard package:
  # the fixture e2e.tensorboard_venv did; a venv that cannot be had fails this check)
  TBPY=$(sh "$ROOT/scripts/tb-venv.sh") || fail "no Python with the tensorboard package"
  PY=${PYTHON:-python3}
  args="--train=$B/syn.train --test=$B/syn.test --epochs=4"
  # shellcheck disable=SC2086
  run "$B/sgd_mf" $args --logdir=tb >out.txt 2>&1 || { cat out.txt >&2; fail "sgd_mf --logdir"; }
  cat out.txt
  "$TBPY" "$S/tb_read.py" tb train/rmse test/rmse time/epoch_s ||
    fail "TensorBoard does not read back what sgd_mf logged"
  # what TensorBoard read is the CSV (above), and the CSV is what the program printed
  "$PY" "$S/tfevents_check.py" tb --printed out.txt --tags train/rmse,test/rmse \
    --regex '^epoch +([0-9]+) +train rmse ([0-9.]+) +test rmse ([0-9.]+)' ||
    fail "the logged values are not the printed ones"
  ;;
progress)
  # the progress line on a terminal: script(1) gives the program a pseudo-terminal and
  # records what it shows; ORN_PROGRESS_DELAY=0 shows every load and loop at once
  command -v script >/dev/null 2>&1 || fail "script(1) (util-linux) not found"
  PY=${PYTHON:-python3}
  pargs="--train=$B/syn.train --test=$B/syn.test --epochs=3"
  cmd="$B/sgd_mf $pargs"
  [ "$np" -eq 1 ] || cmd="$MPIEXEC -n $np $cmd"
  on_tty() { # FILE ENV REDIRECTIONS: the command on a terminal, with ENV, recorded in FILE
    script -qfec "env ORN_PROGRESS_DELAY=0 $2 $cmd $3" "$1" >/dev/null </dev/null ||
      { cat "$1" >&2; fail "'$2 $cmd $3' exited non-zero on a terminal"; }
  }
  on_tty tty.txt "" ""
  grep -q 'parallel_for sgd_mf\.orn:[0-9]*: *[0-9]*%' tty.txt ||
    { cat -v tty.txt >&2; fail "no progress line for the loops"; }
  grep -q 'load_triplets(syn\.train): ' tty.txt || fail "no progress line for the loads"
  grep -q 'for sgd_mf\.orn:[0-9]*: ' tty.txt || fail "no progress line for the epochs"
  # the line never shares a line with output: the terminal ends up showing exactly what
  # the program prints (the line erased before each print and at the end of each task)
  "$PY" "$S/term_render.py" tty.txt >shown.txt || fail "the terminal output cannot be rendered"
  # shellcheck disable=SC2086
  run "$B/sgd_mf" $pargs >plain.txt 2>&1 || fail "sgd_mf exited non-zero"
  notime shown.txt >a.txt
  notime plain.txt >b.txt
  diff -u b.txt a.txt || fail "the terminal shows more or less than the program's output"
  ! grep -q -e 'parallel_for' -e 'load_triplets' plain.txt || fail "a progress line without a terminal"
  # --quiet, $ORN_PROGRESS=0, a long delay: no line
  on_tty quiet.txt "" --quiet
  on_tty off.txt ORN_PROGRESS=0 ""
  on_tty delay.txt ORN_PROGRESS_DELAY=1000 ""
  # stderr into a file: no line, in the file or on the terminal; stdout into a file: no
  # line in it
  on_tty err.txt "" "2>stderr.txt"
  on_tty outf.txt "" ">stdout.txt"
  for f in quiet.txt off.txt delay.txt err.txt stderr.txt stdout.txt; do
    ! grep -q -e 'parallel_for' -e 'load_triplets' "$f" || fail "$f: a progress line"
  done
  # $ORN_PROGRESS=1: on stderr even without a terminal
  # shellcheck disable=SC2086
  ORN_PROGRESS=1 ORN_PROGRESS_DELAY=0 run "$B/sgd_mf" $pargs >forced.txt 2>forced.err ||
    fail "ORN_PROGRESS=1 exited non-zero"
  grep -q 'parallel_for sgd_mf' forced.err || fail "ORN_PROGRESS=1: no line on stderr"
  ! grep -q 'parallel_for' forced.txt || fail "ORN_PROGRESS=1: a line on stdout"
  ;;
managed)
  # managed buffers (managed.orn): -n 1 is serial SGD (the same bits with and without a
  # budget); sums of exact deltas are the serial sums whatever is sent early; with fixed
  # message sizes two runs are bit-identical; staleness-aware flushes average c[0] over the
  # ranks and leave c[1 + i] whole; deltas go early at several ranks
  a="--train=$D/tiny.libsvm --epochs=4"
  fixed() { ORN_MANAGED_SUBROUNDS=8 ORN_MANAGED_LAG=1 ORN_MANAGED_ENTRIES=3 "$@"; }
  # shellcheck disable=SC2086
  run "$B/managed" $a --budget=0 --wout=w0.txt --cout=c0.txt >out0.txt || fail "budget 0"
  # shellcheck disable=SC2086
  fixed env ORN_STATS=runs "$MPIEXEC" -n "$np" "$B/managed" $a --wout=w1.txt --cout=c1.txt \
    >out1.txt 2>stats1.txt || { cat stats1.txt >&2; fail "managed"; }
  # shellcheck disable=SC2086
  fixed run "$B/managed" $a --wout=w2.txt --cout=c2.txt >out2.txt || fail "managed, again"
  # shellcheck disable=SC2086
  run "$B/managed" $a --wout=w3.txt --cout=c3.txt >out3.txt || fail "managed, measured budget"
  want="c[0] 4800.0 c[1] 8.0 sum 14400.0"
  for o in out0.txt out1.txt out2.txt out3.txt; do
    [ "$(cat $o)" = "$want" ] || fail "$o: $(cat $o), want $want (the serial sums)"
  done
  cmp c0.txt c1.txt && cmp c0.txt c3.txt || fail "the counts differ from the serial ones"
  cmp w1.txt w2.txt || fail "two runs with fixed message sizes differ"
  early=$(awk '{ for (i = 1; i < NF; i++) if ($i == "early") s += $(i + 1) } END { print s + 0 }' stats1.txt)
  if [ "$np" -eq 1 ]; then
    cmp w0.txt w1.txt || fail "at one rank a managed buffer is not serial SGD"
    [ "$early" -eq 0 ] || fail "$early deltas sent early at one rank"
  else
    [ "$early" -gt 0 ] || fail "no delta sent between flushes"
    cmp -s w0.txt w1.txt && fail "the managed weights equal the flushed ones (no early deltas applied?)"
  fi
  # shellcheck disable=SC2086
  run "$B/managed" $a --budget=0 --stale=true --cout=c4.txt >out4.txt || fail "staleness-aware"
  want="c[0] $((4 * 1200 / np)).0 c[1] 8.0 sum $((4 * 1200 / np + 8 * 1200)).0"
  [ "$(cat out4.txt)" = "$want" ] || fail "staleness-aware: $(cat out4.txt), want $want"
  # shellcheck disable=SC2086
  fixed run "$B/managed" $a --stale=true --wout=w5.txt --cout=c5.txt >out5.txt || fail "both"
  # shellcheck disable=SC2086
  fixed run "$B/managed" $a --stale=true --wout=w6.txt --cout=c6.txt >out6.txt || fail "both again"
  cmp w5.txt w6.txt && cmp c5.txt c6.txt || fail "staleness-aware managed runs differ"
  [ "$np" -gt 1 ] || cmp w0.txt w5.txt || fail "staleness-aware at one rank is not serial SGD"
  ;;
stats)
  args="--train=$D/ratings.train --test=$D/ratings.test --epochs=3"
  # shellcheck disable=SC2086
  ORN_STATS=1 run "$B/sgd_mf" $args >out.txt 2>stats.txt ||
    { cat stats.txt >&2; fail "sgd_mf with ORN_STATS=1 exited non-zero"; }
  cat stats.txt
  loops=$(grep -c 'parallel_for' "$ROOT/examples/sgd_mf.orn")
  train=$(grep -n 'parallel_for (u, i), r in ratings' "$ROOT/examples/sgd_mf.orn" | cut -d: -f1)
  grep -q "^orion: stats: $loops parallel_for locations, $np rank" stats.txt ||
    fail "no summary header for $loops loops at $np ranks"
  grep -q '^  loop  *strategy  *runs  *time s  *compute s  *wait s  *transfer s  *other s  *sent  *received  *imbalance$' \
    stats.txt || fail "no column header"
  [ "$(grep -c '^  sgd_mf\.orn:[0-9]' stats.txt)" -eq "$loops" ] || fail "not one line per loop"
  # label strategy runs time compute wait transfer other sent unit received unit imbalance
  awk -v np="$np" -v train="sgd_mf.orn:$train" '
    $1 ~ /^sgd_mf\.orn:/ {
      if (NF != 13) { print "bad line: " $0; bad = 1; next }
      if ($4 + 0 < 0 || $5 > $4 + 1e-6 || $6 + $7 > $4 + 1e-6) { print "times do not add up: " $0; bad = 1 }
      if ($3 < 1) { print "no runs: " $0; bad = 1 }
      if (np == 1 && ($9 != 0 || $11 != 0)) { print "bytes at one rank: " $0; bad = 1 }
      if ($13 != "-" && $13 + 0 < 0.999) { print "imbalance below 1: " $0; bad = 1 }
      if ($1 == train) {
        seen = 1
        if ($2 != "2d" || $3 != 3) { print "the training loop is not 2d with 3 runs: " $0; bad = 1 }
        if (np > 1 && !($9 > 0 && $11 > 0)) { print "no bytes for the 2d loop: " $0; bad = 1 }
        if ($5 <= 0) { print "no compute in the training loop: " $0; bad = 1 }
      }
    }
    END { if (!seen) print "no line for " train; exit bad || !seen }' stats.txt ||
    fail "the summary's numbers do not make sense"
  # --stats: the same lines
  # shellcheck disable=SC2086
  run "$B/sgd_mf" $args --stats >out2.txt 2>stats2.txt || fail "sgd_mf --stats exited non-zero"
  [ "$(grep -c '^  sgd_mf\.orn:' stats2.txt)" -eq "$loops" ] || fail "--stats: not one line per loop"
  # ORN_STATS=runs: also a line per loop run and rank
  # shellcheck disable=SC2086
  ORN_STATS=runs run "$B/sgd_mf" $args >out3.txt 2>stats3.txt || fail "ORN_STATS=runs exited non-zero"
  runs=$(awk '$1 ~ /^sgd_mf\.orn:/ { n += $3 } END { print n }' stats.txt)
  [ "$(grep -c '^orion: stats: rank [0-9]*: .*sgd_mf.orn:[0-9]* (.*) run [0-9]*: ' stats3.txt)" -eq $((runs * np)) ] ||
    fail "ORN_STATS=runs: not one line per run and rank"
  grep -q '^  sgd_mf\.orn:' stats3.txt || fail "ORN_STATS=runs: no summary"
  ;;
sgd_side)
  line=$(grep -n 'parallel_for (u, i), r in ratings' "$S/sgd_side.orn" | cut -d: -f1)
  for v in "auto default" "2x2 0"; do
    sb=${v% *} rmax=${v#* }
    mkdir "r$rmax"
    (cd "r$rmax" && if [ "$rmax" = default ]; then unset ORN_REPLICATE_MAX; else
      export ORN_REPLICATE_MAX=$rmax; fi &&
      ORN_SUBBLOCK=$sb ORN_TRACE=trace.txt run "$B/sgd_side" --train="$D/ratings.train" \
        --ufeat="$D/user.features" --ifeat="$D/item.features" --epochs=3 >log.txt 2>&1) ||
      { cat "r$rmax/log.txt" >&2; fail "sgd_side (ORN_SUBBLOCK=$sb ORN_REPLICATE_MAX=$rmax)"; }
    cat "r$rmax/log.txt"
    "$SGD_SIDE_REPLAY" "$D/ratings.train" "$D/user.features" "$D/item.features" \
      "r$rmax/trace.txt" "$line" 3 5 0.05 0.05 0.1 42 "r$rmax/RW.txt" "r$rmax/RH.txt"
    cmp "r$rmax/W.txt" "r$rmax/RW.txt" || fail "W differs from the serial replay (ORN_REPLICATE_MAX=$rmax)"
    cmp "r$rmax/H.txt" "r$rmax/RH.txt" || fail "H differs from the serial replay (ORN_REPLICATE_MAX=$rmax)"
  done
  ;;
lda_replay)
  # the three loops in program order: initial topics, sampler, log-likelihood
  lines=$(grep -n 'parallel_for' "$S/lda_trace.orn" | cut -d: -f1 | tr '\n' ' ')
  for sb in auto 2x3; do
    mkdir "s$sb" "s$sb/replay"
    (cd "s$sb" && ORN_SUBBLOCK=$sb ORN_TRACE=trace.txt run "$B/lda_trace" \
      --data="$D/tokens.docword" --topics=4 --iters=3 --alpha=0.1 --beta=0.01 --seed=7 \
      >log.txt 2>&1) || { cat "s$sb/log.txt" >&2; fail "lda_trace (ORN_SUBBLOCK=$sb)"; }
    # shellcheck disable=SC2086
    "$LDA_REPLAY" "$D/tokens.docword" "s$sb/trace.txt" $lines 4 3 0.1 0.01 7 "s$sb/replay"
    for f in z doc_topic word_topic topic_count ll; do
      cmp "s$sb/$f.txt" "s$sb/replay/$f.txt" ||
        fail "$f differs from the serial replay (ORN_SUBBLOCK=$sb)"
    done
  done
  ;;
buffer_quality)
  # SGD through plain buffers (sgd_default.orn, no option): at NP ranks the test accuracy
  # of sparse and of dense logistic regression is at most 0.5 points below one rank's,
  # which is serial SGD (the default flush interval, docs/language.md section 7; the old
  # flush per block ended 20-35 points below at 3 ranks)
  set -- --train="$B/bq_s.train" --test="$B/bq_s.test" --dtrain="$B/bq_d.train" \
    --dtest="$B/bq_d.test"
  run "$B/sgd_default" "$@" >par.txt 2>&1 || { cat par.txt >&2; fail "sgd_default -n $np"; }
  "$MPIEXEC" -n 1 "$B/sgd_default" "$@" >serial.txt 2>&1 || { cat serial.txt >&2; fail "sgd_default"; }
  for k in sparse dense; do
    a=$(grep "^$k accuracy" par.txt | awk '{ print $3 }')
    s=$(grep "^$k accuracy" serial.txt | awk '{ print $3 }')
    awk -v a="$a" -v s="$s" 'BEGIN { exit !(a != "" && a >= s - 0.005) }' ||
      fail "$k: test accuracy $a at -n $np, serial SGD $s"
  done
  # SGD MF with every update through a buffer (mf_buffers.orn): the test RMSE at most 0.01
  # above one rank's. The visiting order alone moves it that much at this size: the same
  # loops written in place (2d, exactly serializable) end 0.898 / 0.911 / 0.905 at -n 1..3;
  # before own blocks' updates were added at once, -n 2 ended at 0.967.
  set -- --train="$B/syn.train" --test="$B/syn.test"
  run "$B/mf_buffers" "$@" >mfpar.txt 2>&1 || { cat mfpar.txt >&2; fail "mf_buffers -n $np"; }
  "$MPIEXEC" -n 1 "$B/mf_buffers" "$@" >mfser.txt 2>&1 || { cat mfser.txt >&2; fail "mf_buffers"; }
  a=$(awk '/^test rmse/ { print $3 }' mfpar.txt)
  s=$(awk '/^test rmse/ { print $3 }' mfser.txt)
  echo "mf_buffers: test rmse $a at -n $np, $s at -n 1"
  awk -v a="$a" -v s="$s" 'BEGIN { exit !(a != "" && s != "" && a <= s + 0.01) }' ||
    fail "mf_buffers: test RMSE $a at -n $np, serial SGD $s"
  ;;
slr_replay)
  # the example's flush interval (64: one flush per rank at -n 1, blocks split across
  # rounds), 7 (many flushes, so reads of w are often stale) and 0: the program with a plain
  # buffer(w), whose interval is chosen per run from the flushes' changes where w is copied
  # (docs/language.md section 7)
  tl=$(grep -n 'parallel_for n, label in y$' "$S/slr_trace.orn" | cut -d: -f1)
  el=$(grep -n 'parallel_for n, label in yt$' "$S/slr_trace.orn" | cut -d: -f1)
  for flush in 64 7 0; do
    mkdir "f$flush" "f$flush/replay"
    data=$D/tiny.libsvm
    [ "$flush" != 0 ] || data=$B/rp.libsvm # 800 samples a rank at -n 2: several intervals
    # sub-blocks share their block's rounds
    prog=$B/slr_trace
    [ "$flush" != 0 ] || prog=$B/slr_trace_default
    (cd "f$flush" && ORN_SUBBLOCK=3x1 ORN_TRACE=trace.txt run "$prog" --train="$data" \
      --test="$data" --epochs=4 --step=0.05 --lam=0.0001 --flush="$flush" \
      >log.txt 2>&1) || { cat "f$flush/log.txt" >&2; fail "slr_trace --flush=$flush"; }
    ad=
    [ "$flush" != 0 ] || ad=adaptive # the interval's rule, which says which flushes average
    # shellcheck disable=SC2086
    "$SLR_REPLAY" "$data" "$data" "f$flush/trace.txt" "$tl" "$el" 4 0.05 \
      0.0001 "f$flush/replay" $ad
    for f in w loss correct; do
      cmp "f$flush/$f.txt" "f$flush/replay/$f.txt" ||
        fail "$f differs from the serial replay (flush $flush)"
    done
    # w prefetched per round instead of copied (ORN_REPLICATE_MAX=0): reads see it as of the
    # last flush, without the rank's own updates since
    mkdir "p$flush" "p$flush/replay"
    (cd "p$flush" && ORN_REPLICATE_MAX=0 ORN_TRACE=trace.txt run "$prog" \
      --train="$data" --test="$data" --epochs=4 --step=0.05 --lam=0.0001 \
      --flush="$flush" >log.txt 2>&1) || { cat "p$flush/log.txt" >&2; fail "slr_trace, no copy"; }
    "$SLR_REPLAY" "$data" "$data" "p$flush/trace.txt" "$tl" "$el" 4 0.05 \
      0.0001 "p$flush/replay" stale
    for f in w loss correct; do
      cmp "p$flush/$f.txt" "p$flush/replay/$f.txt" ||
        fail "no copy of w: $f differs from the serial replay (flush $flush)"
    done
  done
  # w over 4 MiB (RT_SNAPSHOT_MAX, runtime/buffer.c): the copy's flushes send records of
  # the keys each rank touched instead of diffing the whole copy, and average them where
  # the adaptive interval is at its floor (400 features shared by the samples: it is)
  mkdir wide wide/replay
  (cd wide && ORN_SUBBLOCK=3x1 ORN_TRACE=trace.txt run "$B/slr_trace_default" \
    --train="$B/rpw.libsvm" --test="$B/rpw.libsvm" --epochs=4 --step=0.05 --lam=0.0001 \
    --flush=0 >log.txt 2>&1) || { cat wide/log.txt >&2; fail "slr_trace, w over 4 MiB"; }
  "$SLR_REPLAY" "$B/rpw.libsvm" "$B/rpw.libsvm" wide/trace.txt "$tl" "$el" 4 0.05 0.0001 \
    wide/replay adaptive
  for f in w loss correct; do
    cmp "wide/$f.txt" "wide/replay/$f.txt" ||
      fail "w over 4 MiB: $f differs from the serial replay"
  done
  # the same over dense rows (dlr_trace.orn): w is replicated, not prefetched, and a rank's
  # reads see its own updates there too
  tl=$(grep -n 'parallel_for n, label in y$' "$S/dlr_trace.orn" | cut -d: -f1)
  el=$(grep -n 'parallel_for n, label in yt$' "$S/dlr_trace.orn" | cut -d: -f1)
  cl=$(grep -n 'parallel_for (n, f), x in X' "$S/dlr_trace.orn" | cut -d: -f1 | paste -sd, -)
  "$ORIONC" --explain "$S/dlr_trace.orn" | grep -q '^    w  *replicated' ||
    fail "dlr_trace.orn: w is no longer replicated (the case this check is for)"
  for flush in 64 7 0; do
    mkdir "d$flush" "d$flush/replay"
    data=$D/tiny.libsvm
    [ "$flush" != 0 ] || data=$B/rp.libsvm
    prog=$B/dlr_trace
    [ "$flush" != 0 ] || prog=$B/dlr_trace_default
    (cd "d$flush" && ORN_TRACE=trace.txt run "$prog" --train="$data" \
      --test="$data" --epochs=4 --step=0.05 --lam=0 --flush="$flush" >log.txt 2>&1) ||
      { cat "d$flush/log.txt" >&2; fail "dlr_trace --flush=$flush"; }
    ad=
    [ "$flush" != 0 ] || ad=adaptive
    # shellcheck disable=SC2086
    "$SLR_REPLAY" "$data" "$data" "d$flush/trace.txt" "$tl" "$el" 4 0.05 0 \
      "d$flush/replay" "dense=$cl" $ad
    for f in w loss correct; do
      cmp "d$flush/$f.txt" "d$flush/replay/$f.txt" ||
        fail "dense rows: $f differs from the serial replay (flush $flush)"
    done
  done
  ;;
sgd_rmse)
  args="--train=$B/syn.train --test=$B/syn.test --epochs=40 --step=0.03 --decay=0.97"
  # shellcheck disable=SC2086
  for n in 1 1b 2 3; do
    np=${n%b}
    run "$B/sgd_mf" $args >"rmse$n.txt" 2>&1 || { cat "rmse$n.txt" >&2; fail "sgd_mf -n $np"; }
  done
  np=1
  sed 's/ [0-9.e+-]* s .*//' rmse1.txt >a.txt
  sed 's/ [0-9.e+-]* s .*//' rmse1b.txt >b.txt
  cmp a.txt b.txt || fail "two runs at -n 1 differ"
  r1=$(last_field rmse1.txt rmse)
  for n in 2 3; do
    rn=$(last_field "rmse$n.txt" rmse)
    awk -v a="$r1" -v b="$rn" 'BEGIN { d = (b - a) / a; if (d < 0) d = -d; exit !(d <= 0.02) }' ||
      fail "test RMSE $rn at -n $n is not within 2% of $r1 at -n 1"
    echo "test RMSE: -n 1 $r1, -n $n $rn"
  done
  ;;
lda)
  run "$B/lda" --data="$D/tokens.docword" --topics=4 --iters=6 >out.txt 2>&1 ||
    { cat out.txt >&2; fail "lda exited non-zero"; }
  first=$(awk '/^iteration/ { print $4; exit }' out.txt)
  last=$(awk '/^iteration/ { v = $4 } END { print v }' out.txt)
  [ "$(grep -c '^iteration' out.txt)" -eq 6 ] || fail "expected 6 iterations"
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b > a && b < 0) }' ||
    fail "log-likelihood did not improve ($first -> $last)"
  ;;
slr)
  run "$B/slr" --train="$D/tiny.libsvm" --test="$D/tiny.libsvm" --epochs=20 >out.txt 2>&1 ||
    { cat out.txt >&2; fail "slr exited non-zero"; }
  acc=$(last_field out.txt accuracy)
  awk -v a="$acc" 'BEGIN { exit !(a >= 0.9) }' || fail "test accuracy $acc < 0.9"
  ;;
bad_input)
  printf '0 1 3.5\n1 2 4\n# comment\n2 0 x\n' >bad.triplets
  printf '+1 1:0.5 2:1\n-1 3:zero\n' >bad.libsvm
  printf '0 1 2\n1 2\n' >bad.docword
  expect_fail 1 "nope.train: cannot open" run "$B/sgd_mf" --train=nope.train
  line=$(grep -n 'load_triplets(train)' "$ROOT/examples/sgd_mf.orn" | cut -d: -f1)
  expect_fail 1 "sgd_mf.orn:$line: load_triplets: bad.triplets:4: expected a number" \
    run "$B/sgd_mf" --train=bad.triplets
  expect_fail 1 "bad.libsvm:2:" run "$B/slr" --train=bad.libsvm
  expect_fail 1 "bad.docword:2:" run "$B/lda" --data=bad.docword
  expect_fail 2 "invalid value 'x' for param '--epochs': expected an integer" \
    run "$B/sgd_mf" --epochs=x
  expect_fail 2 "invalid value '0.1.2' for param '--step'" run "$B/sgd_mf" --step=0.1.2
  expect_fail 2 "unknown param '--nope'" run "$B/sgd_mf" --nope=1
  expect_fail 2 "unknown param '--epoch' (did you mean '--epochs'?)" run "$B/sgd_mf" --epoch=3
  expect_fail 2 "param '--epochs' needs a value" run "$B/sgd_mf" --epochs
  expect_fail 1 "errors.orn:12:$(sed -n 12p "$S/errors.orn" | awk '{ print index($0, "div(") }'): division by zero in div()" \
    run "$B/errors" --which=1
  expect_fail 1 "errors.orn:18:5: index 8 is out of range for dimension 0 of a (extent 4)" run "$B/errors" --which=2
  expect_fail 1 "errors.orn:22: element-wise operation on views of different lengths" \
    run "$B/errors" --which=3
  expect_fail 7 "" run "$B/errors" --which=4
  expect_fail 1 "errors.orn:27:$(sed -n 27p "$S/errors.orn" | awk '{ print index($0, "randint(") }'): randint(0): the bound must be positive" \
    run "$B/errors" --which=5
  expect_fail 1 "errors.orn:35:$(col_of 35 w): index 3 is out of range for dimension 0 of w (extent 3)" \
    run "$B/errors" --which=6
  caret_at 35 "$(col_of 35 w)"
  expect_fail 1 "errors.orn:45: element-wise operation on views of different lengths (3 and 4)" \
    run "$B/errors" --which=7
  expect_fail 1 "errors.orn:49: element-wise operation on views of different lengths (3 and 4)" \
    run "$B/errors" --which=8
  expect_fail 1 "errors.orn:53:$(col_last 53 P): index 8 is out of range for dimension 0 of P (extent 8)" \
    run "$B/errors" --which=9
  caret_at 53 "$(col_last 53 P)"
  l=$(grep -n 'x = B\[0, i + 2\] \* y' "$S/errors.orn" | cut -d: -f1)
  c=$(col_of "$l" B)
  expect_fail 1 "errors.orn:$l:$c (partitioned): outside the array (its extents: 8 x 3)" \
    run "$B/errors" --which=10
  caret_at "$l" "$c"
  "$ORIONC" --explain "$S/errors.orn" | grep -q '^  W  *dimension 0 is unit stride' ||
    fail "errors.orn: W is no longer stored transposed (the next two checks test nothing)"
  l=$(grep -n 'x += W\[1, i + 10\]' "$S/errors.orn" | cut -d: -f1)
  expect_fail 1 "errors.orn:$l:$(col_of "$l" W) (partitioned): outside the array" \
    run "$B/errors" --which=11
  grep -F -q "read of W[1, 12] at " out.txt || { cat out.txt >&2; fail "the key is not W[1, 12]"; }
  l=$(grep -n 'y = W\[1, n + 4\]' "$S/errors.orn" | cut -d: -f1)
  expect_fail 1 "errors.orn:$l:$(col_of "$l" W): index 12 is out of range for dimension 1 of W (extent 8)" \
    run "$B/errors" --which=12
  l=$(grep -n 'HCB\[i64(x) \* i\] += 1' "$S/errors.orn" | cut -d: -f1)
  expect_fail 1 "errors.orn:$l:$(col_of "$l" HCB) (buffered): outside the array" \
    run "$B/errors" --which=13
  caret_at "$l" "$(col_of "$l" HCB)"
  grep -E -q "update of HCB\[[4-7]\] at " out.txt || { cat out.txt >&2; fail "no key of HCB"; }
  l=$(grep -n 'PB\[i, :\] += Q\[i, :\]' "$S/errors.orn" | cut -d: -f1)
  expect_fail 1 "errors.orn:$l: element-wise operation on views of different lengths (3 and 4)" \
    run "$B/errors" --which=14
  l=$(grep -n 'PB\[i + 3, :\] -= x \* P\[i, :\]' "$S/errors.orn" | cut -d: -f1)
  expect_fail 1 "errors.orn:$l:$(col_of "$l" PB): index 8 is out of range for dimension 0 of PB (extent 8)" \
    run "$B/errors" --which=15
  caret_at "$l" "$(col_of "$l" PB)"
  l=$(grep -n 'x = f64(randint(0))' "$S/errors.orn" | tail -1 | cut -d: -f1)
  expect_fail 1 "errors.orn:$l" run "$B/errors" --which=16
  grep -q "rank $((np - 1)): " out.txt || { cat out.txt >&2; fail "which=16: rank $((np - 1)) not named"; }
  ! grep -q "after the loop" out.txt || { cat out.txt >&2; fail "which=16: printed after the failed loop"; }
  l=$(grep -n 's += xs\[j + 1\] \* B\[PL\[i + 100\], j - 1\]' "$S/errors.orn" | cut -d: -f1)
  "$ORIONC" --emit=c "$S/errors.orn" | grep -q "row_of_line${l}_col[0-9]* .*= " ||
    fail "errors.orn: the row PL[i + 100] is not read before its loop (which=17 tests nothing)"
  expect_fail 1 "errors.orn:$l:$(col_of "$l" xs): index 2 is out of range for dimension 0 of xs" \
    run "$B/errors" --which=17
  expect_fail 1 "errors.orn:$l:$(col_of "$l" PL): index 10" run "$B/errors" --which=18
  caret_at "$l" "$(col_of "$l" PL)"
  # the second (third) use of an array on a line fails: the caret under it, not the first
  caret_case 19 'x = B\[i, 0\] + 2.0 \* B\[i + n, 1\]' col_last B " (partitioned): outside the array"
  caret_case 20 'v\[0\] = v\[1\] + v\[n\]' col_last v ": index 8 is out of range for dimension 0 of v"
  caret_case 21 'y = B\[0, 1\] + B\[1, 2\] \* B\[n, 0\]' col_last B \
    ": index 8 is out of range for dimension 0 of B"
  # top-level code fails alike on every rank: reported once, by rank 0 (orn_dsm_die_alike)
  [ "$(grep -c '^orion: rank' out.txt)" -eq 1 ] && grep -q '^orion: rank 0: ' out.txt ||
    { cat out.txt >&2; fail "a top-level error not reported once, by rank 0"; }
  caret_case 22 'B\[n + 1, 0\] = B\[0, 0\] + 1.0' col_of B ": index 9 is out of range for dimension 0 of B"
  caret_case 23 'y = sum(B\[1, :\]) + sum(B\[n + 2, :\])' col_last B \
    ": index 10 is out of range for dimension 0 of B"
  run "$B/sgd_mf" --help >help.txt 2>&1 || fail "--help exited non-zero"
  grep -q -- "--epochs  int    20" help.txt || fail "--help does not list --epochs"
  grep -q -- "--step    float  0.02 *learning rate$" help.txt ||
    fail "--help does not show the comment on step's line"
  grep -q -- "ORN_LIVENESS" help.txt || fail "--help does not list the ORN_* variables"
  ;;
bad_data)
  # good inputs, each replaced by a bad one in turn
  printf '0 0 1\n1 2 2.5\n2 1 -3\n' >t.triplets
  printf '+1 1:0.5 3:1\n-1 2:2\n' >x.libsvm
  printf '0 0 1.5\n1 1 2\n' >a.txt
  run "$B/baddata" >good.txt 2>&1 || { cat good.txt >&2; fail "baddata on good inputs"; }
  printf 'triplets 3 0\nlibsvm 3 0 2 0\ntext 2 0\nbinary 6 0\nlines 2\n' | diff -u - good.txt ||
    fail "baddata printed something else on good inputs"
  P="baddata.orn:$(grep -n '^dist R = load_triplets' "$S/baddata.orn" | cut -d: -f1)"
  L="baddata.orn:$(grep -n '^dist X, y = load_libsvm' "$S/baddata.orn" | cut -d: -f1)"
  T="baddata.orn:$(grep -n '^dist A = load(text' "$S/baddata.orn" | cut -d: -f1)"
  N=" is not a finite number (allow_nonfinite = true accepts nan and inf)"
  O=" (largest magnitude 3.40282347e+38; allow_nonfinite = true loads it as infinity)"
  # triplets: nan, inf, f32 overflow (also loaded with allow_nonfinite), a huge index
  printf '0 0 1\n# c\n1 2 nan\n2 0 4\n' >nan.triplets
  printf '0 0 1\n1 2 2\n2 2 -inf\n' >inf.triplets
  printf '0 0 1\n\n1 2 3\n2 2 1e39\n' >over.triplets
  printf '0 0 1\n99999999999999999999 2 3\n' >big.triplets
  expect_fail 1 "$P: load_triplets: nan.triplets:3: value 'nan'$N" run "$B/baddata" --triplets=nan.triplets
  expect_fail 1 "$P: load_triplets: inf.triplets:3: value '-inf'$N" run "$B/baddata" --triplets=inf.triplets
  expect_fail 1 "$P: load_triplets: over.triplets:4: value '1e39' overflows f32$O" \
    run "$B/baddata" --triplets=over.triplets
  expect_fail 1 "$P: load_triplets: big.triplets:2: row index '99999999999999999999' is too large" \
    run "$B/baddata" --triplets=big.triplets
  for f in nan inf over; do
    run "$B/baddata" --triplets=$f.triplets --allow=true >ok.txt 2>&1 ||
      { cat ok.txt >&2; fail "--allow=true did not load $f.triplets"; }
    grep -q '^triplets 3 1$' ok.txt || { cat ok.txt >&2; fail "$f.triplets: expected 1 non-finite value"; }
  done
  # the bytes of a bad field are escaped, never printed raw
  printf '0 0 1\n1 1 2\033[2J\377\001\n' >esc.triplets
  expect_fail 1 "esc.triplets:2: expected a number as value, found '2\\x1b[2J\\xff\\x01'" \
    run "$B/baddata" --triplets=esc.triplets
  if LC_ALL=C grep -q "$(printf '[\033\377\001]')" out.txt; then fail "raw bytes of the file in the message"; fi
  # libsvm: a label, a value, a feature index
  printf '+1 1:1\nnan 2:1\n' >nan.libsvm
  printf '+1 1:1 2:Infinity\n' >inf.libsvm
  printf '+1 1:1\n-1 99999999999999999999:1\n' >big.libsvm
  expect_fail 1 "$L: load_libsvm: nan.libsvm:2: label 'nan'$N" run "$B/baddata" --libsvm=nan.libsvm
  expect_fail 1 "$L: load_libsvm: inf.libsvm:1: feature value 'Infinity'$N" \
    run "$B/baddata" --libsvm=inf.libsvm
  expect_fail 1 "$L: load_libsvm: big.libsvm:2: feature index '99999999999999999999' is too large" \
    run "$B/baddata" --libsvm=big.libsvm
  run "$B/baddata" --libsvm=inf.libsvm --allow=true >ok.txt 2>&1 && grep -q '^libsvm 2 1 1 0$' ok.txt ||
    { cat ok.txt >&2; fail "--allow=true did not load inf.libsvm"; }
  # load of a text file: nan, overflow, a key too large
  printf '0 0 1\n1 1 NaN\n' >nan.txt
  printf '0 0 1\n1 1 -3.5e38\n' >over.txt
  printf '9223372036854775807 0 1\n' >big.txt
  expect_fail 1 "$T: load: nan.txt:2: value 'NaN'$N" run "$B/baddata" --text=nan.txt
  expect_fail 1 "$T: load: over.txt:2: value '-3.5e38' overflows f32$O" run "$B/baddata" --text=over.txt
  expect_fail 1 "$T: load: big.txt:1: key coordinate '9223372036854775807' is too large" \
    run "$B/baddata" --text=big.txt
  # a binary file: the element and its key
  expect_fail 1 "load: g.bin: element 4 (key (4)) is nan, not a finite number" \
    run "$B/baddata" --poison=true
  run "$B/baddata" --poison=true --allow=true >ok.txt 2>&1 && grep -q '^binary 6 1$' ok.txt ||
    { cat ok.txt >&2; fail "--allow=true did not load the binary nan"; }
  printf 'ORNARR garbage' >bad.bin
  expect_fail 1 "load: bad.bin: not an Orion array file" run "$B/baddata" --bin=bad.bin
  # save: the operation named once
  expect_fail 1 "save: nodir/r.txt: cannot open for writing" run "$B/baddata" --save_to=nodir/r.txt
  # docword: numbers too large
  printf '0 1 2\n1 2 2147483649\n' >big.docword
  printf '0 1 2\n99999999999999999999 2 1\n' >bigdoc.docword
  expect_fail 1 "big.docword:2: count '2147483649' is too large (at most 2147483648)" \
    run "$B/lda" --data=big.docword
  expect_fail 1 "bigdoc.docword:2: document id '99999999999999999999' is too large" \
    run "$B/lda" --data=bigdoc.docword
  # params: nan, inf, overflow, integers too large
  expect_fail 2 "invalid value 'nan' for param '--step': expected a finite number" run "$B/sgd_mf" --step=nan
  expect_fail 2 "invalid value '-inf' for param '--step': expected a finite number" run "$B/sgd_mf" --step=-inf
  expect_fail 2 "invalid value '1e400' for param '--step': too large for a float" run "$B/sgd_mf" --step=1e400
  expect_fail 2 "invalid value '99999999999999999999' for param '--epochs': too large for an int" \
    run "$B/sgd_mf" --epochs=99999999999999999999
  expect_fail 2 "invalid value 'x\\x1b[0m' for param '--epochs'" run "$B/sgd_mf" "--epochs=$(printf 'x\033[0m')"
  # files that change while they are read: load_text, a loader, load of a text file
  awk 'BEGIN { for (i = 0; i < 600000; i++) print i, i % 1000, 1.5 }' >grow.txt
  cp grow.txt grow.triplets
  cp grow.txt grow2.txt
  while_changing grow.txt "baddata.orn:$(grep -n '^text_lines = load_text' "$S/baddata.orn" |
    cut -d: -f1): load_text: grow.txt: read error: file changed while reading" \
    "$B/baddata" --lines=grow.txt
  while_changing grow.triplets "$P: load_triplets: grow.triplets: read error: file changed while reading" \
    "$B/baddata" --triplets=grow.triplets
  while_changing grow2.txt "$T: load: grow2.txt: read error: file changed while reading" \
    "$B/baddata" --text=grow2.txt
  ;;
text)
  printf 'inner.txt\r\nsecond line\n\nlast without newline' >list.txt
  printf 'x\ny\nz\n' >inner.txt
  run "$B/text" >out.txt 2>&1 || { cat out.txt >&2; fail "text exited non-zero"; }
  diff -u "$S/text.expected" out.txt || fail "output differs from text.expected"
  line=$(grep -n '^lines = load_text(list)' "$S/text.orn" | cut -d: -f1)
  expect_fail 1 "text.orn:$line: load_text: nope.txt: cannot open" \
    run "$B/text" --list=nope.txt
  line=$(grep -n 'print(lines\[len(lines)\])' "$S/text.orn" | cut -d: -f1)
  expect_fail 1 "text.orn:$line:11: index 4 is out of range for dimension 0 of lines (extent 4)" \
    run "$B/text" --oob=true
  ;;
show)
  # print of arrays and views: summaries of large ones read where they lie, the same text at
  # every rank count; eprint's line whole from every rank
  awk 'BEGIN { for (i = 0; i < 300; i++) for (j = 0; j < 40; j += 3) if ((i + j) % 5)
                 printf "%d %d %d\n", i, (j + i) % 40, i * 100 + j
               for (j = 0; j < 1200; j++) printf "300 %d %d\n", j, -j }' >big.triplets
  run "$B/show" --triplets="$D/small.triplets" --big=big.triplets --libsvm="$D/tiny.libsvm" \
    >out.txt 2>err.txt || { cat out.txt err.txt >&2; fail "show exited non-zero"; }
  diff -u "$S/show.expected" out.txt || fail "output differs from show.expected"
  [ "$(grep -c '^\[rank [0-9]\] M row 2: \[5.0, 5.25, 5.5, 5.75\]$' err.txt)" = "$np" ] ||
    { cat err.txt >&2; fail "eprint of a view: not one whole line per rank"; }
  ;;
csv)
  # a header, quotes, a blank and a comment line, CRLF; 1,200 rows so that every rank reads some
  { printf 'a, b ,"c"\r\n'
    awk 'BEGIN { for (i = 0; i < 1200; i++) {
                   printf "%d.5, %d,\"%g\"\n", i, -i, i / 8
                   if (i == 600) printf "\n# a comment\n" } }'; } >data.csv
  printf '\357\273\2771.25 2.5\t3\n 4 5 6 \n' >spaced.txt # a byte-order mark first
  printf '1,2\n3,4\n5,-6\n' >ints.csv
  run "$B/csv" >out.txt 2>&1 || { cat out.txt >&2; fail "csv exited non-zero"; }
  diff -u "$S/csv.expected" out.txt || fail "output differs from csv.expected"
  # csv_bad LINE ARG MESSAGE: csv with ARG fails at csv.orn:LINE with MESSAGE
  csv_bad() { expect_fail 1 "csv.orn:$1: load_csv: $3" run "$B/csv" "$2"; }
  lx=$(grep -n '^dist X = load_csv' "$S/csv.orn" | cut -d: -f1)
  ls=$(grep -n '^dist S = load_csv' "$S/csv.orn" | cut -d: -f1)
  awk 'BEGIN { print "x,y,z"; for (i = 0; i < 900; i++) print i "," i "," i; print "1,2" }' >ragged.csv
  printf 'x,y\n1,,3\n' >empty.csv
  printf 'u v\n1 2\n' >header.txt
  printf '\n# nothing\n' >none.txt
  csv_bad "$lx" --data=ragged.csv "ragged.csv:902: expected 3 values, as on line 2, found 2"
  csv_bad "$lx" --data=empty.csv "empty.csv:2: an empty field (a missing value)"
  csv_bad "$ls" --spaced=header.txt \
    "header.txt:1: expected an f32 value in column 0, found 'u' (a header line? load_csv(path, header = true))"
  csv_bad "$ls" --spaced=none.txt \
    "none.txt: expected lines of numbers apart by commas or spaces, found none"
  ;;
dist_vec)
  run "$B/dist_vec" >out.txt 2>&1 || { cat out.txt >&2; fail "dist_vec exited non-zero"; }
  diff -u "$S/dist_vec.expected" out.txt || fail "output differs from dist_vec.expected"
  ;;
ckpt)
  sgd="--train=$B/syn.train --test=$B/syn.test --epochs=10 --step=0.03 --decay=0.97"
  lda="--data=$D/tokens.docword --topics=4 --iters=8"
  # shellcheck disable=SC2086
  run "$B/sgd_mf" $sgd >sgd_ref.txt 2>&1 || { cat sgd_ref.txt >&2; fail "sgd_mf"; }
  # shellcheck disable=SC2086
  run "$B/lda" $lda >lda_ref.txt 2>&1 || { cat lda_ref.txt >&2; fail "lda"; }
  # shellcheck disable=SC2086
  ckpt_case sgd_kill 9 4 fail sgd_ref.txt run "$B/sgd_mf" $sgd
  # buffers keep their settings and adaptive interval across the checkpoint (ckpt_buf.orn)
  run "$B/ckpt_buf" >buf_ref.txt 2>&1 || { cat buf_ref.txt >&2; fail "ckpt_buf"; }
  ckpt_case buf_kill 9 3 fail buf_ref.txt run "$B/ckpt_buf"
  # shellcheck disable=SC2086
  ckpt_case lda_term 15 3 75 lda_ref.txt run "$B/lda" $lda
  grep -q "orion: stopped by a signal at .*lda.orn:[0-9]* (iteration counter 3): checkpoint k/ckpt-[0-9]* written" \
    lda_term/stopped.txt || { cat lda_term/stopped.txt >&2; fail "no message after SIGTERM"; }
  # the same loops saving their arrays: the saved files are the uninterrupted run's
  st="--train=$D/ratings.train --test=$D/ratings.test --epochs=5"
  lt="--data=$D/tokens.docword --topics=4 --iters=5"
  mkdir sgd_ref lda_ref
  # shellcheck disable=SC2086
  (cd sgd_ref && run "$B/sgd_trace" $st >out.txt 2>&1) || fail "sgd_trace"
  # shellcheck disable=SC2086
  (cd lda_ref && run "$B/lda_trace" $lt >out.txt 2>&1) || fail "lda_trace"
  # shellcheck disable=SC2086
  ckpt_case sgd_trace 9 2 fail sgd_ref/out.txt run "$B/sgd_trace" $st
  for f in W.txt H.txt; do cmp sgd_ref/$f sgd_trace/$f || fail "saved $f differs after resume"; done
  # shellcheck disable=SC2086
  ckpt_case lda_trace 15 2 75 lda_ref/out.txt run "$B/lda_trace" $lt
  for f in z.txt doc_topic.txt word_topic.txt topic_count.txt ll.txt; do
    cmp lda_ref/$f lda_trace/$f || fail "saved $f differs after resume"
  done
  ;;
ckpt_state)
  printf 'alpha\r\nbeta\n\ngamma' >list.txt
  mkdir ref
  (cd ref && run "$B/ckpt" --list=../list.txt >out.txt 2>&1) || { cat ref/out.txt >&2; fail "ckpt"; }
  # checkpoints 1-6 are in the while loop (6 iterations), 7-10 in the for loop
  for n in 1 3 7 9; do
    ckpt_case "kill$n" 9 "$n" fail ref/out.txt run "$B/ckpt" --list=../list.txt
    for f in A.bin B.txt C.txt E.bin L.txt; do
      cmp "ref/$f" "kill$n/$f" || fail "kill$n: saved $f differs after resume"
    done
  done
  ckpt_case term5 15 5 75 ref/out.txt run "$B/ckpt" --list=../list.txt
  # A job that never ends (checkpoints every 50 ms), so that signals from outside come
  # in mid-run whenever they are sent: (1) SIGTERM to one of its ranks (the last one
  # mpiexec's proxy started): a checkpoint at the next safe point, exit 75; (2) resumed,
  # and once it has written a checkpoint of its own, kill -9 of every rank; (3) resumed
  # from the newest complete checkpoint left, and stopped 2 iterations further on (a
  # SIGTERM its last rank sends itself). (A signal to mpiexec is forwarded to every rank,
  # but mpiexec's own exit code after it is not reliably the ranks'.)
  mkdir forever
  cd forever
  fv="--list=../list.txt --forever=true --checkpoint=k"
  # shellcheck disable=SC2086
  "$MPIEXEC" -n "$np" "$B/ckpt" $fv --checkpoint-every=0.05 >stopped.txt 2>&1 &
  job=$!
  wait_ckpt k 0
  kill -TERM "$(ranks_of "$job" | tail -n 1)"
  set +e
  wait "$job"
  rc=$?
  set -e
  [ "$rc" -eq 75 ] || { cat stopped.txt >&2; fail "SIGTERM: exited $rc, expected 75"; }
  grep -q "orion: stopped by a signal at .*ckpt.orn:[0-9]*" stopped.txt || fail "SIGTERM: no message"
  seq1=$(field "$(newest k)" seq)
  # shellcheck disable=SC2086
  "$MPIEXEC" -n "$np" "$B/ckpt" $fv --resume=k --checkpoint-every=0.05 >killed.txt 2>&1 &
  job=$!
  wait_ckpt k $((seq1 + 1))
  # every rank at once (mpiexec may end the others first once one is gone: no error then)
  # shellcheck disable=SC2046
  kill -9 $(ranks_of "$job") 2>/dev/null || true
  set +e
  wait "$job"
  rc=$?
  set -e
  [ "$rc" -ne 0 ] || fail "kill -9: mpiexec exited 0"
  it1=$(field "$(newest k)" iteration)
  set +e
  export ORN_CKPT_SIGNAL=2:15
  # shellcheck disable=SC2086
  run "$B/ckpt" $fv --resume=k --checkpoint-every=0 >resumed.txt 2>&1
  rc=$?
  unset ORN_CKPT_SIGNAL
  set -e
  [ "$rc" -eq 75 ] || { cat resumed.txt >&2; fail "resumed: exited $rc, expected 75"; }
  [ "$(ls -d k/ckpt-*)" = "$(ls -d k/ckpt-* | tail -n 1)" ] || fail "older checkpoints were kept"
  it2=$(field "$(newest k)" iteration)
  [ "$it2" -eq $((it1 + 2)) ] || fail "resumed at iteration $it1, stopped at $it2 (expected $((it1 + 2)))"
  ;;
ckpt_bad)
  printf 'a\nb\n' >list.txt
  args="--list=list.txt --iters=3 --rounds=2"
  export ORN_CKPT_SIGNAL=2:15
  # shellcheck disable=SC2086
  expect_fail 75 "" run "$B/ckpt" $args --checkpoint=good --checkpoint-every=0
  unset ORN_CKPT_SIGNAL
  c=$(ls -d good/ckpt-*)
  # shellcheck disable=SC2086
  expect_fail 2 "the directory holds a checkpoint already" run "$B/ckpt" $args --checkpoint=good
  # shellcheck disable=SC2086
  expect_fail 1 "differs from the checkpoint's value" run "$B/ckpt" $args --iters=4 --resume=good
  # shellcheck disable=SC2086
  expect_fail 1 "cannot open the checkpoint directory" run "$B/ckpt" $args --resume=none
  mkdir empty
  # shellcheck disable=SC2086
  expect_fail 1 "empty: no complete checkpoint" run "$B/ckpt" $args --resume=empty
  expect_fail 1 "written by another program" run "$B/sgd_mf" --resume=good
  other=$((np % 3 + 1))
  set +e
  "$MPIEXEC" -n "$other" "$B/ckpt" --resume=good >out.txt 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 1 ] && grep -q "was written by $np ranks, this job has $other" out.txt ||
    { cat out.txt >&2; fail "resume at -n $other of a checkpoint of -n $np: exit $rc"; }
  # a byte flipped in a rank file, then in the manifest; a rank file missing
  for victim in "rank-$((np - 1)).bin" MANIFEST; do
    rm -rf bad
    cp -r good bad
    f=$(ls -d bad/ckpt-*)/$victim
    flip "$f" $(($(wc -c <"$f") / 2))
    expect_fail 1 "the checkpoint is corrupt" run "$B/ckpt" --resume=bad
  done
  grep -q "MANIFEST: checksum mismatch" out.txt || fail "the manifest is not named"
  rm -rf bad
  cp -r good bad
  rm "$(ls -d bad/ckpt-*)/rank-0.bin"
  expect_fail 1 "rank-0.bin: cannot read" run "$B/ckpt" --resume=bad
  # an unfinished newer checkpoint is ignored (and said so); the good one still resumes
  mkdir "${c%/*}/ckpt-999999.tmp"
  run "$B/ckpt" --resume=good >out.txt 2>&1 || { cat out.txt >&2; fail "resume next to a .tmp"; }
  grep -q "ckpt-999999.tmp was left unfinished" out.txt || fail "the unfinished checkpoint is not mentioned"
  ;;
orionc)
  # the compile path itself: -O0 -g --keep-c, --emit=c, a C compiler that fails (an internal
  # error that keeps the C), an extern no library defines (a link error, exit 1)
  printf 'param k = 3\nprint("k", k * 2)\n' >p.orn
  "$ORIONC" -O0 -g --keep-c p.orn -o p || fail "orionc -O0 -g --keep-c"
  [ -s p.c ] || fail "--keep-c did not keep p.c"
  run ./p --k=4 >out.txt 2>&1 && grep -q '^k 8$' out.txt || fail "the -O0 program printed $(cat out.txt)"
  "$ORIONC" --emit=c p.orn -o q.c && grep -q 'orn_std_init' q.c || fail "--emit=c"
  # integer constants that wrap and a float divided by an integer constant 0 are the
  # language's arithmetic, not the C compiler's business: no warning reaches the user
  printf 'x = i32(2147483647) + i32(5)\ny = 9223372036854775807 + 1\nz = 1.0 / (3 - 3)\nprint(x, y, z)\n' >w.orn
  "$ORIONC" w.orn -o w >out.txt 2>&1 && [ ! -s out.txt ] || { cat out.txt >&2; fail "orionc w.orn printed something"; }
  run ./w >out.txt 2>&1 && [ "$(cat out.txt)" = "-2147483644 -9223372036854775808 inf" ] ||
    fail "w.orn printed $(cat out.txt)"
  ORN_CC=false expect_fail 3 "internal compiler error: the C compiler rejected the generated code; kept it at" \
    "$ORIONC" p.orn -o p2
  kept=$(sed -n 's/.*kept it at //p' out.txt)
  [ -s "$kept" ] || fail "the generated C was not kept"
  rm -f "$kept"
  printf 'extern fn orn_no_such_function(x: f64) -> f64\nprint(orn_no_such_function(1.0))\n' >l.orn
  expect_fail 1 "l.orn:1:11: error: extern fn 'orn_no_such_function' is not defined" "$ORIONC" l.orn -o l
  # -L. -lmylib: the program finds ./libmylib.so without LD_LIBRARY_PATH (an rpath), also
  # run from elsewhere; --no-rpath leaves it out (the loader fails: 127); -Wl, reaches the
  # linker (a map file, an rpath of its own)
  mkdir -p lib elsewhere
  printf 'double orn_e2e_twice(double x) { return 2 * x; }\n' >lib/mylib.c
  ${CC:-cc} -shared -fPIC lib/mylib.c -o lib/libmylib.so || fail "cc -shared"
  printf 'extern fn orn_e2e_twice(x: f64) -> f64\nprint(orn_e2e_twice(21.0))\n' >m.orn
  (cd lib && "$ORIONC" ../m.orn -L. -lmylib -o ../m) || fail "orionc -L. -lmylib"
  unset LD_LIBRARY_PATH
  (cd elsewhere && run ../m >../out.txt 2>&1) && [ "$(cat out.txt)" = "42.0" ] ||
    fail "-L. -lmylib: the program printed $(cat out.txt)"
  (cd lib && "$ORIONC" ../m.orn -L. -lmylib --no-rpath -o ../m2) || fail "orionc --no-rpath"
  rc=0
  ./m2 >out.txt 2>&1 || rc=$?
  [ "$rc" -eq 127 ] && grep -q 'libmylib.so' out.txt || fail "--no-rpath: exit $rc: $(cat out.txt)"
  "$ORIONC" m.orn -Llib -lmylib --no-rpath "-Wl,-rpath,$PWD/lib" -Wl,-Map=m3.map -o m3 ||
    fail "orionc -Wl,..."
  [ -s m3.map ] || fail "-Wl,-Map=m3.map wrote no map"
  run ./m3 >out.txt 2>&1 && [ "$(cat out.txt)" = "42.0" ] || fail "-Wl,-rpath: $(cat out.txt)"
  ;;
*)
  fail "unknown check"
  ;;
esac
