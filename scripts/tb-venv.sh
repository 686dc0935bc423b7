#!/bin/sh
# tb-venv.sh: a Python virtual environment holding the tensorboard package, for the test that
# reads log_metric's event files back with TensorBoard's own reader (tests/e2e/tb_read.py).
# For the tests only: Orion itself never needs Python or TensorBoard.
#
# Made once (pip install from PyPI, about 20 s and 180 MB) and kept outside the build trees,
# in $ORN_TB_VENV or ${XDG_CACHE_HOME:-$HOME/.cache}/orion/tb-venv, so the release and the
# sanitizer builds, and later runs, share it; a venv that cannot import the reader is made
# again. Prints the venv's python on stdout; exits 1 with pip's reason when it cannot be
# made (no network, no python3-venv): the test then fails, it is not skipped.
# Environment: PYTHON (default python3).
set -eu
PY=${PYTHON:-python3}
V=${ORN_TB_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/orion/tb-venv}
# The version is pinned so that every machine reads the files with the same TensorBoard.
PKG="tensorboard==2.21.0"
ready() {
  "$V/bin/python" -c 'from tensorboard.backend.event_processing import event_accumulator' \
    >/dev/null 2>&1
}
mkdir -p "$(dirname "$V")"
# one maker at a time (ctest -j, several build trees)
if command -v flock >/dev/null 2>&1; then
  exec 9>"$V.lock"
  flock 9
fi
if ! ready; then
  rm -rf "$V"
  log=$(mktemp)
  if ! { "$PY" -m venv "$V" && "$V/bin/python" -m pip install --disable-pip-version-check \
           --no-input --quiet "$PKG"; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    rm -rf "$V"
    echo "tb-venv.sh: cannot install $PKG into $V with $PY (needs PyPI and python3-venv)" >&2
    exit 1
  fi
  rm -f "$log"
  ready || { echo "tb-venv.sh: $PKG installed but its event reader does not import" >&2; exit 1; }
fi
echo "$V/bin/python"
