#!/bin/sh
# Build Orion and run every test: the normal build, then the ASan+UBSan build.
# Usage: scripts/test.sh [--fast]   (--fast: skip the sanitizer build)
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
JOBS=$(nproc 2>/dev/null || echo 2)
run_suite() { # name cmake-args...
  dir=build/$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
  (cd "$dir" && ctest --output-on-failure -j "$JOBS")
}
run_suite release
if [ "${1:-}" != "--fast" ]; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_suite asan -DORN_SANITIZE=ON -DCMAKE_C_COMPILER=clang
fi
# A build must leave the source tree clean (generated files live in build/).
if [ -n "$(git status --porcelain 2>/dev/null | grep -v '^??' || true)" ]; then
  echo "test.sh: the build modified tracked files:" >&2
  git status --porcelain >&2
  exit 1
fi
echo "test.sh: all suites passed"
