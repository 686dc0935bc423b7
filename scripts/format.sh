#!/bin/sh
# Apply .clang-format to every C source and header of the project, or with --check list
# the files that are not formatted and exit 1. Generated files and test inputs are skipped.
set -eu
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null 2>&1 || { echo "format.sh: clang-format not found (apt-get install clang-format)" >&2; exit 2; }
files=$(git ls-files '*.c' '*.h' | grep -v '^tests/golden/\|^tests/fuzz/corpus/' || true)
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in $files; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "not formatted: $f (run scripts/format.sh)"; bad=1; }
  done
  exit $bad
fi
# shellcheck disable=SC2086
clang-format -i $files
