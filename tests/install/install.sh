#!/bin/sh
# install.sh: Orion installed as a user installs it (registered by CMakeLists.txt here), as
# close to "build, cmake --install to a prefix, delete the build tree" as a test inside the
# build tree can be:
#   1. cmake --install BUILD into a scratch prefix, then the prefix moved elsewhere;
#   2. no file of the prefix names the source or the build tree (grep, binaries included;
#      not in a sanitizer build, whose instrumentation keeps source paths);
#   3. installed.sh, copied into the scratch folder with its inputs, runs with the source
#      and build trees hidden: in a private mount namespace (unshare) an empty tmpfs lies
#      over each, so nothing can be read from them. Where unshare is not allowed (an
#      unprivileged container) it runs with them in place, and says so; step 2 stands.
# Environment: BUILD, SRC (the trees), LIBDIR (CMAKE_INSTALL_LIBDIR), MPIEXEC, CC (Orion's
# C compiler), SANITIZE=1 in a sanitizer build; LSAN_OPTIONS as the other tests (its
# suppressions file is copied too).
set -eu
: "${BUILD:?}" "${SRC:?}" "${LIBDIR:?}" "${MPIEXEC:?}" "${CC:=cc}"
fail() {
  echo "install: FAIL: $*" >&2
  exit 1
}
SRC=$(cd "$SRC" && pwd -P)
BUILD=$(cd "$BUILD" && pwd -P)
T=$(mktemp -d "${TMPDIR:-/tmp}/orn-install.XXXXXX")
T=$(cd "$T" && pwd -P)
trap 'rm -rf "$T"' EXIT

cmake --install "$BUILD" --prefix "$T/stage/orion" >"$T/install.txt" ||
  { cat "$T/install.txt" >&2; fail "cmake --install"; }
mv "$T/stage/orion" "$T/moved"
P=$T/moved
for f in bin/orionc bin/orion "$LIBDIR/orion/liborn_std.a" include/orion/orn_std.h \
         "$LIBDIR/pkgconfig/orion.pc" "$LIBDIR/cmake/Orion/OrionConfig.cmake" share/man/man1/orionc.1.gz \
         share/man/man1/orion.1.gz share/man/man7/orion.7.gz share/doc/orion/language.md; do
  [ -f "$P/$f" ] || fail "not installed: $f"
done
if [ "${SANITIZE:-0}" = 1 ]; then
  # clang's ASan and UBSan metadata (source locations, type names) keep absolute paths that
  # -ffile-prefix-map does not reach; step 3 still shows that nothing reads the trees
  echo "install: sanitizer build: the grep for the trees' paths is left to the release build"
elif grep -rlF -e "$SRC" -e "$BUILD" "$P" >"$T/refs.txt"; then
  cat "$T/refs.txt" >&2
  fail "installed files name the source or build tree"
fi

W=$T/work
mkdir -p "$W"
cp "$SRC/tests/install/installed.sh" "$SRC/examples/sgd_mf.orn" "$SRC/tests/e2e/data/ratings.train" \
  "$SRC/tests/e2e/data/ratings.test" "$SRC/tests/dsm/lsan.supp" "$W/"
LSAN_OPTIONS=$(printf '%s' "${LSAN_OPTIONS:-}" | sed "s|suppressions=[^:]*|suppressions=$W/lsan.supp|")
export P W LIBDIR MPIEXEC LSAN_OPTIONS CC

# shellcheck disable=SC2016 # expanded by the shell in the namespace
hide='mount -t tmpfs -o size=64k,mode=0 orn-hidden "$SRC" &&
      case "$BUILD/" in "$SRC"/*) ;; *) mount -t tmpfs -o size=64k,mode=0 orn-hidden "$BUILD" ;; esac &&
      [ ! -e "$SRC/CMakeLists.txt" ] && [ ! -e "$BUILD/CMakeCache.txt" ] && cd "$W" && exec sh installed.sh'
export SRC BUILD
case "$T/" in
"$SRC"/* | "$BUILD"/*) unshare="" ;; # the scratch folder itself would be hidden
*)
  if unshare --mount --propagation private true 2>/dev/null; then
    unshare="unshare --mount --propagation private"
  elif unshare --user --map-root-user --mount --propagation private true 2>/dev/null; then
    unshare="unshare --user --map-root-user --mount --propagation private"
  else
    unshare=""
  fi
  ;;
esac
if [ -n "$unshare" ]; then
  echo "install: the source and build trees are hidden ($unshare)"
  $unshare sh -c "$hide"
else
  echo "install: unshare is not allowed here: installed.sh runs with the trees in place"
  cd "$W" && sh installed.sh
fi
