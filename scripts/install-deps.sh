#!/bin/sh
# Install everything Orion needs to build and test, on Debian 12 / Ubuntu, with apt.
# Idempotent: installs only what is missing. Run as root (or it uses sudo). iproute2 and
# iptables are for the multi-host test bed (docs/testbed.md; iptables feeds its delay line
# where the kernel has no tc netem).
set -eu
# The second line is for the install and package tests (tests/install): man renders the
# manual pages; cpack's Debian package asks dpkg-shlibdeps (dpkg-dev) and file for the
# shared libraries it needs; lintian checks the package (the test runs it when present).
# python3-venv: e2e.tensorboard reads log_metric's event files with the tensorboard package,
# which scripts/tb-venv.sh installs from PyPI into a venv (tests only); script(1), for the
# progress line's test, is in bsdutils, which every Debian has.
# With --slurm (scripts/test.sh, scripts/slurm-cluster.sh) also Slurm's daemons and
# commands, for the Slurm cluster on this machine and its test (tests/slurm,
# docs/cluster.md); their services are not started by the installation (a policy-rc.d
# below): slurm-cluster.sh runs its own daemons with its own configuration.
PKGS="cmake make gcc clang clang-format pkg-config re2c bison mpich libmpich-dev libffi-dev
      libopenblas-dev libedit-dev python3 python3-venv time tmux iproute2 iptables
      man-db dpkg-dev file lintian"
case ${1:-} in
'') ;;
--slurm) PKGS="$PKGS slurmctld slurmd slurm-client" ;;
*) echo "usage: install-deps.sh [--slurm]" >&2; exit 2 ;;
esac
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing$missing"
$SUDO apt-get update -qq
# no service starts while packages install (slurmd, slurmctld): a policy-rc.d that denies
# them, only where none exists, removed afterwards
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# scripts/install-deps.sh: no service starts while it installs\nexit 101\n' |
    $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  trap '$SUDO rm -f "$policy"' EXIT
fi
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
