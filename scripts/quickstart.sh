#!/bin/sh
# The README's first command: install what is missing, build Orion, fetch MovieLens, compile
# examples/sgd_mf.orn and train it on two ranks.
#
#   scripts/quickstart.sh [--param=value ...]     (passed to the program, e.g. --epochs=5)
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release -j "$JOBS"
scripts/fetch-data.sh movielens
echo "quickstart: orionc examples/sgd_mf.orn -o build/sgd_mf"
build/release/tools/orionc examples/sgd_mf.orn -o build/sgd_mf
echo "quickstart: mpirun -n 2 build/sgd_mf --train=data/movielens_small.train --test=data/movielens_small.test $*"
mpirun -n 2 build/sgd_mf --train=data/movielens_small.train --test=data/movielens_small.test "$@"
