#!/bin/sh
# deb.sh: the Debian package (cpack -G DEB; cmake/OrnInstall.cmake), built from this build
# into a scratch folder:
#   - dpkg-deb --info: the name, the version of orionc, and the dependencies (MPICH with its
#     headers, OpenBLAS, libffi, libedit, a C compiler, libc's headers);
#   - dpkg-deb --contents: every file is under /usr, owned by root: the executables, the
#     runtime, the headers, orion.pc, the CMake package, the manual pages;
#   - apt-get -s install: apt can install it here (its dependencies resolve);
#   - dpkg-deb -x into a scratch root: nothing in it names the source or build tree, its
#     executables are stripped, its orionc compiles a program that runs at -n 2 from
#     there (the prefix is relocatable), and its orion runs the same script;
#   - lintian, where it is installed: no error or warning but the two the repository
#     cannot answer yet (no-copyright-file: no license is chosen; no-changelog).
# Environment: BUILD, SRC, LIBDIR, MPIEXEC; SANITIZE=1 in a sanitizer build, which is
# never packaged: the test is skipped there (exit 77).
set -eu
: "${BUILD:?}" "${SRC:?}" "${LIBDIR:?}" "${MPIEXEC:?}"
fail() {
  echo "deb: FAIL: $*" >&2
  exit 1
}
if [ "${SANITIZE:-0}" = 1 ]; then
  echo "deb: skipped: a sanitizer build is not packaged"
  exit 77
fi
command -v dpkg-deb >/dev/null || { echo "deb: skipped: no dpkg-deb (not Debian)"; exit 77; }
SRC=$(cd "$SRC" && pwd -P)
BUILD=$(cd "$BUILD" && pwd -P)
T=$(mktemp -d "${TMPDIR:-/tmp}/orn-deb.XXXXXX")
trap 'rm -rf "$T"' EXIT

cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$T/pkg" >"$T/cpack.txt" 2>&1 ||
  { cat "$T/cpack.txt" >&2; fail "cpack -G DEB"; }
set -- "$T"/pkg/*.deb
[ $# -eq 1 ] && [ -f "$1" ] || fail "cpack made $# packages"
deb=$1
echo "deb: $(basename "$deb"), $(wc -c <"$deb") bytes"

dpkg-deb --info "$deb" >"$T/info.txt" || fail "dpkg-deb --info"
cat "$T/info.txt"
[ "$(dpkg-deb -f "$deb" Package)" = orion ] || fail "the package is not named orion"
version=$("$BUILD/tools/orionc" --version | sed 's/^orionc //')
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "version $(dpkg-deb -f "$deb" Version), not $version"
depends=$(dpkg-deb -f "$deb" Depends)
for d in mpich libmpich-dev 'libopenblas[0-9a-z-]*-dev' libopenblas0 libffi8 libedit2 libmpich12 \
         'gcc | c-compiler' libc6-dev; do
  printf '%s\n' "$depends" | tr ',' '\n' | sed 's/^ *//; s/ *(.*//' | grep -qx "$d" ||
    fail "Depends lacks $d: $depends"
done

dpkg-deb --contents "$deb" >"$T/contents.txt" || fail "dpkg-deb --contents"
awk '$2 != "root/root" { print; bad = 1 } END { exit bad }' "$T/contents.txt" ||
  fail "files not owned by root"
awk '{ print $6 }' "$T/contents.txt" | grep -v '^\./usr/' && fail "files outside /usr"
for f in bin/orionc bin/orion "$LIBDIR/orion/liborn_std.a" "$LIBDIR/orion/liborn_rt.a" \
         "$LIBDIR/orion/liborn_plan.a" "$LIBDIR/orion/liborn_dsm.a" \
         "$LIBDIR/orion/liborn_support.a" include/orion/orn_std.h include/orion/rt.h \
         include/orion/dsm.h include/orion/plan.h "$LIBDIR/pkgconfig/orion.pc" \
         "$LIBDIR/cmake/Orion/OrionConfig.cmake" "$LIBDIR/cmake/Orion/OrionConfigVersion.cmake" \
         share/man/man1/orionc.1.gz share/man/man1/orion.1.gz share/man/man7/orion.7.gz; do
  grep -q " \./usr/$f\$" "$T/contents.txt" || fail "the package lacks /usr/$f"
done

if command -v apt-get >/dev/null; then
  apt-get install -s "$deb" >"$T/apt.txt" 2>&1 && grep -q '^Conf orion ' "$T/apt.txt" ||
    { cat "$T/apt.txt" >&2; fail "apt-get cannot install the package"; }
fi

R=$T/root
dpkg-deb -x "$deb" "$R" || fail "dpkg-deb -x"
if grep -rlF -e "$SRC" -e "$BUILD" "$R" >"$T/refs.txt"; then
  cat "$T/refs.txt" >&2
  fail "packaged files name the source or build tree"
fi
for x in orionc orion; do
  readelf -S "$R/usr/bin/$x" | grep -q '\.debug_info' && fail "usr/bin/$x is not stripped"
done
mkdir "$T/w"
cd "$T/w"
printf 'param n = 1000\ndist A = fill(f64, 0.5, n)\ntotal = 0.0\nparallel_for i, a in A\n    total += a * i\nend\nprint(total)\n' >p.orn
"$R/usr/bin/orionc" p.orn -o p || fail "the extracted orionc cannot compile"
"$MPIEXEC" -n 2 ./p --n=100 >out.txt 2>&1 || { cat out.txt >&2; fail "the program at -n 2"; }
[ "$(cat out.txt)" = "2475.0" ] || fail "the program printed $(cat out.txt)"
XDG_CACHE_HOME="$T/cache" "$MPIEXEC" -n 2 "$R/usr/bin/orion" run p.orn --n=100 >out.txt 2>&1 ||
  { cat out.txt >&2; fail "the extracted orion"; }
[ "$(cat out.txt)" = "2475.0" ] || fail "orion run printed $(cat out.txt)"
echo "deb: the extracted orionc compiles, its program runs at -n 2; so does orion run (stripped)"

if command -v lintian >/dev/null; then
  lintian --tag-display-limit 0 "$deb" >"$T/lintian.txt" 2>&1 || true
  cat "$T/lintian.txt"
  grep -E '^[EW]: ' "$T/lintian.txt" | grep -vE ': (no-copyright-file|no-changelog)( |$)' &&
    fail "lintian reports the problems above"
  echo "deb: lintian: nothing but no-copyright-file and no-changelog"
else
  echo "deb: lintian is not installed: not run"
fi
