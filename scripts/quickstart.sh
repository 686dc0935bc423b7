#!/bin/sh
# The README's first command: install what is missing, build Orion, and run the main job.
# For now the main job checks the four examples with `orionc --check` (front end and
# analysis); once code generation lands it trains examples/sgd_mf.orn on MovieLens.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release -j "$JOBS"
for f in examples/*.orn; do
  printf 'orionc --check %s ... ' "$f"
  build/release/tools/orionc --check "$f"
  echo ok
done
