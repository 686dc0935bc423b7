#!/bin/sh
# installed.sh: what a user does with an installed Orion (run by install.sh from a copy in
# the scratch folder, while the source and build trees are hidden where that is allowed).
# Environment: P (the moved prefix), LIBDIR (its lib folder, relative), W (a scratch folder
# holding sgd_mf.orn, ratings.train, ratings.test), MPIEXEC; CC, the C compiler Orion was
# built with (a sanitizer build's runtime wants its own compiler's sanitizers).
set -eu
: "${P:?}" "${LIBDIR:?}" "${W:?}" "${MPIEXEC:?}" "${CC:=cc}"
fail() {
  echo "install: FAIL: $*" >&2
  exit 1
}
cd "$W"
export PATH="$P/bin:$PATH"
[ "$(command -v orionc)" = "$P/bin/orionc" ] || fail "orionc is not the installed one"

# the installed orionc compiles examples/sgd_mf.orn; it trains at -n 2
"$P/bin/orionc" --version | grep -q '^orionc [0-9]' || fail "orionc --version"
"$P/bin/orionc" sgd_mf.orn -o sgd_mf || fail "the installed orionc cannot compile sgd_mf.orn"
"$MPIEXEC" -n 2 ./sgd_mf --train=ratings.train --test=ratings.test --epochs=3 >sgd.txt 2>&1 ||
  { cat sgd.txt >&2; fail "sgd_mf at -n 2"; }
cat sgd.txt
head -1 sgd.txt | grep -q '^sgd_mf: 60 users x 45 items, 872 training and 70 test ratings' ||
  fail "sgd_mf loaded other data"
[ "$(grep -c '^epoch .* test rmse [0-9.]*  ' sgd.txt)" -eq 3 ] || fail "sgd_mf: not 3 epochs"

# the installed orion runs a script with a compiled piece (a parallel_for)
printf 'dist A = fill(f64, 1.5, 100)\ntotal = 0.0\nparallel_for i, a in A\n    total += a\nend\nprint(total)\n' >s.orn
XDG_CACHE_HOME="$W/cache" "$MPIEXEC" -n 2 "$P/bin/orion" run s.orn >orion.txt 2>&1 ||
  { cat orion.txt >&2; fail "orion run"; }
[ "$(cat orion.txt)" = "150.0" ] || fail "orion run printed $(cat orion.txt)"

# an orionc copied away from its runtime says what is missing (not the linker's words)
mkdir -p lone
cp "$P/bin/orionc" lone/
if lone/orionc s.orn -o lone/s 2>lone.txt; then fail "a lone orionc compiled"; fi
grep -q "the Orion runtime is missing" lone.txt || { cat lone.txt >&2; fail "lone orionc"; }

# pkg-config: the flags compile and link C that calls the runtime
export PKG_CONFIG_PATH="$P/$LIBDIR/pkgconfig"
flags=$(pkg-config --cflags --libs orion) || fail "pkg-config --cflags --libs orion"
echo "pkg-config: $flags"
[ "$(readlink -f "$(pkg-config --variable=orionc orion)")" = "$(readlink -f "$P/bin/orionc")" ] ||
  fail "pkg-config --variable=orionc orion: $(pkg-config --variable=orionc orion)"
cat >tiny.c <<'C'
#include <stdio.h>

#include "orn_std.h"

int main(int argc, char **argv)
{
    OrnStdProg p;
    orn_std_init(&p, &argc, &argv, "tiny.c", NULL, 0);
    int64_t dims[1] = {100};
    OrnDsmArray *a = orn_std_dist_new(&p, ORN_DSM_F64, 1, dims, ORN_STD_FILL, 1.5, 0, "A", 1);
    double s = orn_std_dist_sum(&p, a, 2);
    if (orn_rt_rank(p.rt) == 0) printf("ranks %d sum %g\n", orn_rt_size(p.rt), s);
    orn_dsm_free(a);
    return orn_std_finish(&p);
}
C
# shellcheck disable=SC2086
"$CC" tiny.c -o tiny $flags || fail "$CC tiny.c \$(pkg-config --cflags --libs orion)"
"$MPIEXEC" -n 2 ./tiny >tiny.txt 2>&1 || { cat tiny.txt >&2; fail "tiny"; }
[ "$(cat tiny.txt)" = "ranks 2 sum 150" ] || fail "tiny printed $(cat tiny.txt)"

# CMake: find_package(Orion) configures; Orion::runtime builds the C program,
# orion_add_executable the .orn one
mkdir -p proj
cp tiny.c s.orn proj/
cat >proj/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.20)
project(uses_orion C)
find_package(Orion 0.1 REQUIRED)
add_executable(tiny tiny.c)
target_link_libraries(tiny PRIVATE Orion::runtime)
orion_add_executable(s SOURCE s.orn OPTIONS -O2)
message(STATUS "orionc: ${ORION_ORIONC}")
CM
cmake -S proj -B proj/build -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$CC" >cmake.txt 2>&1 ||
  { cat cmake.txt >&2; fail "a project with find_package(Orion) does not configure"; }
grep -q "orionc: $P/bin/orionc" cmake.txt || { cat cmake.txt >&2; fail "ORION_ORIONC"; }
cmake --build proj/build >>cmake.txt 2>&1 || { cat cmake.txt >&2; fail "the CMake project"; }
"$MPIEXEC" -n 2 proj/build/tiny >tiny2.txt 2>&1 && [ "$(cat tiny2.txt)" = "ranks 2 sum 150" ] ||
  { cat tiny2.txt >&2; fail "tiny built by CMake"; }
"$MPIEXEC" -n 2 proj/build/s >s.txt 2>&1 && [ "$(cat s.txt)" = "150.0" ] ||
  { cat s.txt >&2; fail "s.orn built by orion_add_executable"; }

# every installed manual page renders without a warning
n=0
for page in "$P"/share/man/man*/*; do
  MANWIDTH=80 man --warnings -l "$page" >page.txt 2>warn.txt || fail "man -l $page"
  [ ! -s warn.txt ] || { cat warn.txt >&2; fail "man -l $page warns"; }
  [ "$(wc -l <page.txt)" -gt 40 ] || fail "$page renders to $(wc -l <page.txt) lines"
  n=$((n + 1))
done
[ "$n" -eq 3 ] || fail "$n manual pages installed, not 3"
echo "install: the moved prefix works: orionc, orion, pkg-config, CMake, $n manual pages"
