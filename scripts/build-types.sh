#!/bin/sh
# build-types.sh: every CMake build type builds warning-clean (-DORN_WERROR=ON) with gcc and
# with clang, installs, and the installed compiler works. For each compiler and type, in
# build/types/COMPILER-TYPE: configure, build every target (what `cmake --build` builds on a
# fresh clone: the tools, the runtime, the tests' programs and benchmarks), `cmake
# --install` into a scratch prefix, and with that prefix's orionc compile
# examples/gauss_seidel.orn and run it at 2 ranks.
#
# Usage: scripts/build-types.sh [--compilers "gcc clang"] [--types "Release RelWithDebInfo
#        Debug MinSizeRel"] [--skip COMPILER-TYPE] [--jobs N]
#   --skip: one combination left out (scripts/test.sh --full: gcc-RelWithDebInfo, which its
#           release suite has just built with -DORN_WERROR=ON and installed in its tests)
#
# The tests themselves run on the RelWithDebInfo build and the sanitizer build
# (scripts/test.sh); what differs between types is the optimizer (-O0, -O2, -O3, -Os), which
# decides what gcc's and clang's flow warnings see (gcc 12's -Wmaybe-uninitialized broke
# Release before: issue 25), and NDEBUG, so building is the check. Each build takes about
# 30 to 60 s on 2 cores, all 8 about 6 minutes. Exit 0 when all pass, 1 otherwise (each
# failure named), 2 on bad usage.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
compilers="gcc clang"
types="Release RelWithDebInfo Debug MinSizeRel"
jobs=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
  case $1 in
  --compilers) compilers=${2:?--compilers needs a value}; shift 2 ;;
  --types) types=${2:?--types needs a value}; shift 2 ;;
  --jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
  --skip) skip="${skip:-} ${2:?--skip needs a value}"; shift 2 ;;
  *) sed -n '/^# Usage:/,/^#$/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
MPIEXEC=${MPIEXEC:-mpiexec}
failed=''
T=$(mktemp -d "${TMPDIR:-/tmp}/orn-types.XXXXXX")
trap 'rm -rf "$T"' EXIT

for cc in $compilers; do
  command -v "$cc" >/dev/null 2>&1 || { echo "build-types: $cc: not installed" >&2; failed="$failed $cc"; continue; }
  for type in $types; do
    case " ${skip:-} " in *" $cc-$type "*) continue ;; esac
    b=build/types/$cc-$type
    log=$T/$cc-$type.log
    t0=$(date +%s)
    what="$cc $type"
    if ! cmake -S . -B "$b" -DCMAKE_BUILD_TYPE="$type" -DCMAKE_C_COMPILER="$cc" -DORN_WERROR=ON >"$log" 2>&1; then
      what="$what: configure"
    elif ! cmake --build "$b" -j "$jobs" >>"$log" 2>&1; then
      what="$what: build"
    elif grep -q -i 'warning:' "$log"; then
      what="$what: warnings"
    elif ! cmake --install "$b" --prefix "$T/$cc-$type" >>"$log" 2>&1; then
      what="$what: install"
    elif ! (cd "$T" && "$T/$cc-$type/bin/orionc" "$ROOT/examples/gauss_seidel.orn" -o "gs-$cc-$type" &&
      "$MPIEXEC" -n 2 "./gs-$cc-$type" --n=64 --sweeps=5 --out="gs-$cc-$type.txt" &&
      [ -s "gs-$cc-$type.txt" ]) >>"$log" 2>&1; then
      what="$what: the installed orionc's program"
    else
      echo "build-types: $cc $type: built without warnings, installed, ran ($(($(date +%s) - t0)) s)"
      continue
    fi
    tail -n 30 "$log" >&2
    echo "build-types: FAIL: $what" >&2
    failed="$failed $cc-$type"
  done
done
[ -z "$failed" ] || { echo "build-types: failed:$failed" >&2; exit 1; }
echo "build-types: all passed"
