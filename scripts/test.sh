#!/bin/sh
# Build Orion and run its tests (warnings are errors: -DORN_WERROR=ON).
#
# Usage: scripts/test.sh [--full]
#   (default)  the release build (build/release, RelWithDebInfo) and its suite less the
#              tests labelled heavy or gpu: what a change is checked with, under 10 minutes
#              on 2 cores
#   --full     everything, as CI runs it (.ci/run): the release suite with every test, the
#              AddressSanitizer + UBSan build (build/asan, clang) and its suite less the
#              tests labelled heavy (which the release suite has just run), and every other
#              build type with gcc and clang (scripts/build-types.sh; gcc RelWithDebInfo
#              with -DORN_WERROR=ON is the release suite's own build)
#
# Label heavy: the slow tests whose checks the default suite makes at another rank count or
# more briefly (the REPL's runs at -n 1 and 3 beside -n 2, the 30-program differential
# campaign beside its regressions, the Debian package beside the installed prefix, the
# benchmarks' smoke run, liveness at -n 3). Label gpu: the GPU path's tests (emulated where
# no GPU is present). ctest -L/-LE pick them in a build folder by hand.
set -eu
cd "$(dirname "$0")/.."
full=0
case ${1:-} in
'') ;;
--full) full=1 ;;
*)
  sed -n '/^# Usage:/,/^#$/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
  ;;
esac
t0=$(date +%s)
scripts/install-deps.sh --slurm
JOBS=$(nproc 2>/dev/null || echo 2)
run_suite() { # name ctest-args cmake-args...
  dir=build/$1 args=$2
  shift 2
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORN_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
  # shellcheck disable=SC2086
  (cd "$dir" && ctest --output-on-failure -j "$JOBS" $args)
}
if [ "$full" = 1 ]; then
  run_suite release ""
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_suite asan "-LE ^heavy$" -DORN_SANITIZE=ON -DCMAKE_C_COMPILER=clang
  scripts/build-types.sh --jobs "$JOBS" --skip gcc-RelWithDebInfo
else
  run_suite release "-LE ^(heavy|gpu)$"
fi
# A build must leave the source tree clean (generated files live in build/).
if [ -n "$(git status --porcelain 2>/dev/null | grep -v '^??' || true)" ]; then
  echo "test.sh: the build modified tracked files:" >&2
  git status --porcelain >&2
  exit 1
fi
what="the release suite (less heavy and gpu)"
[ "$full" = 0 ] || what="the release and sanitizer suites and every build type"
echo "test.sh: $what passed in $(($(date +%s) - t0)) s"
