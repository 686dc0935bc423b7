# script_lib.sh: what the machine-setup scripts share (sourced by cluster.sh and
# slurm-cluster.sh). Messages go to stderr prefixed with the script's name ($ME); usage
# prints the script's "# Usage:" comment block and exits 2; skip exits 77, a skipped test
# to CTest; die exits 1.
SKIP=77
say() { echo "$ME: $*" >&2; }
usage() {
  say "$*"
  sed -n '/^# Usage:/,/^#$/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
skip() {
  say "$* (skipped)"
  exit "$SKIP"
}
die() {
  say "$*"
  exit 1
}
