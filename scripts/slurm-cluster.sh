#!/bin/sh
# slurm-cluster.sh: a real Slurm cluster on this machine, for trying and testing Orion's jobs
# under Slurm as on a research cluster (docs/cluster.md). Debian's own daemons: one
# slurmctld, and one slurmd per node, each node a host of the multi-host test bed
# (scripts/cluster.sh, docs/testbed.md): its own network namespace, address and host name,
# so Slurm and MPI see separate machines that talk over TCP. Files are shared (one file
# system, as with NFS on a real cluster).
#
# Usage:
#   slurm-cluster.sh up [NODES]   start a cluster of NODES nodes (default 2); prints the line
#                                 `export SLURM_CONF=...` that points sbatch, srun, salloc,
#                                 sinfo and scontrol at it: eval "$(slurm-cluster.sh up 2)"
#   slurm-cluster.sh env          print that line again (while the cluster is up)
#   slurm-cluster.sh status       the nodes (sinfo) and the daemons' pids
#   slurm-cluster.sh down         stop every daemon and job, remove the nodes
#
# One cluster at a time per state folder: $ORN_SLURM_STATE (default /run/orion-slurm)
# holds slurm.conf, the daemons' logs, spool and pid files. Node i is host i of test-bed
# cluster K (ornKh1 ..., address $ORN_CLUSTER_NET.K.i); slurmctld runs in the root network
# namespace on the bridge's address (.254) and port 16800 + K, so clusters in different
# state folders do not collide.
#
# The daemons authenticate nothing (AuthType=auth/none, CredType=cred/none: Debian's build
# has both plugins), so no munge daemon is needed; a real cluster uses auth/munge. Jobs run
# as root. Every node offers the machine's cores (at least 2), shared with the other nodes
# as the test bed's hosts share them.
#
# Needs root, network namespaces (cluster.sh), a cgroup file system at /sys/fs/cgroup
# (slurmd 22.05 will not start without one), nsenter and unshare, and Debian's slurmctld,
# slurmd and slurm-client (scripts/install-deps.sh --slurm installs them, and this script
# runs it when they are missing). Where the machine cannot run the daemons it says why and exits
# 77 (a skipped test to CTest); usage errors exit 2; a daemon that fails exits 1 after its
# log.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${ORN_SLURM_STATE:-/run/orion-slurm}
ME=slurm-cluster.sh
# shellcheck source=scripts/script_lib.sh
. "$HERE/script_lib.sh"

# preflight: root, the tools (installed when missing), a cgroup file system
preflight() {
  [ "$(id -u)" -eq 0 ] || skip "needs root to run slurmd and make network namespaces"
  missing=''
  for t in slurmctld slurmd srun sbatch sinfo scontrol; do
    command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
  done
  if [ -n "$missing" ]; then
    say "missing:$missing; installing Slurm (scripts/install-deps.sh --slurm)"
    "$HERE/install-deps.sh" --slurm >&2 || skip "cannot install Slurm's packages"
    for t in $missing; do
      command -v "$t" >/dev/null 2>&1 || skip "needs '$t', which is still not installed"
    done
  fi
  for t in nsenter unshare ip; do
    command -v "$t" >/dev/null 2>&1 || skip "needs '$t', which is not installed"
  done
  grep -qs ' /sys/fs/cgroup[ /]' /proc/mounts ||
    skip "slurmd needs a cgroup file system mounted at /sys/fs/cgroup, and there is none"
}

# proc_alive PID: PID is a running process (not a zombie waiting to be reaped)
proc_alive() {
  st=$(sed 's/^.*) \([A-Za-z]\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# pid_alive FILE: the pid in FILE is a running process
pid_alive() {
  pid=$(cat "$1" 2>/dev/null) || return 1
  case $pid in '' | *[!0-9]*) return 1 ;; esac
  proc_alive "$pid"
}

# wait_dead FILES...: wait up to 5 s until none of the pids in FILES runs; false if one does
wait_dead() {
  n=0
  while [ "$n" -lt 50 ]; do
    alive=''
    for f in "$@"; do if pid_alive "$f"; then alive="$alive $f"; fi; done
    [ -n "$alive" ] || return 0
    sleep 0.1
    n=$((n + 1))
  done
  return 1
}

# conf NAME K NODES: write $STATE/slurm.conf for test-bed cluster NAME (number K)
conf() {
  net=${ORN_CLUSTER_NET:-10.251}
  cpus=$(nproc 2>/dev/null || echo 2)
  [ "$cpus" -ge 2 ] || cpus=2
  mkdir -p "$STATE/ctld" "$STATE/spool"
  {
    echo "# written by scripts/slurm-cluster.sh for test-bed cluster $1"
    echo "ClusterName=orion$2"
    # slurmctld runs where its host name (gethostname, up to the first dot) is this one
    echo "SlurmctldHost=$(uname -n | cut -d. -f1)($net.$2.254)"
    echo "SlurmctldPort=$((16800 + $2))"
    echo "SlurmdPort=6818"
    echo "AuthType=auth/none"
    echo "CredType=cred/none"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "StateSaveLocation=$STATE/ctld"
    echo "SlurmdSpoolDir=$STATE/spool/%n"
    echo "SlurmctldPidFile=$STATE/slurmctld.pid"
    echo "SlurmdPidFile=$STATE/slurmd.%n.pid"
    echo "SlurmctldLogFile=$STATE/slurmctld.log"
    echo "SlurmdLogFile=$STATE/slurmd.%n.log"
    # no cgroups for processes and tasks: the nodes share one kernel's hierarchy
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "SchedulerType=sched/builtin"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    # as on most clusters, no MPI plugin unless srun asks (docs/cluster.md: --mpi=pmi2)
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    # the nodes' CPUs are what this file says, not what each slurmd counts (shared cores)
    echo "SlurmdParameters=config_overrides"
    echo "MinJobAge=600"
    # a node whose slurmd is gone is down after 30 s (default 300): its jobs end then
    echo "SlurmdTimeout=30"
    echo "KillWait=5"
    i=1
    while [ "$i" -le "$3" ]; do
      echo "NodeName=${1}h$i NodeAddr=$net.$2.$i CPUs=$cpus State=UNKNOWN"
      i=$((i + 1))
    done
    echo "PartitionName=orion Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$STATE/slurm.conf"
}

# stop: every daemon and job of the cluster in $STATE (what runs on its nodes dies with
# them: cluster.sh kills every process in their namespaces), then the state
stop() {
  if pid_alive "$STATE/slurmctld.pid"; then kill "$(cat "$STATE/slurmctld.pid")" 2>/dev/null || true; fi
  if [ -s "$STATE/cluster" ]; then
    "$HERE/cluster.sh" down "$(cat "$STATE/cluster")" 2>/dev/null || true
  fi
  # the pid files name this cluster's daemons: what still runs after 5 s is killed
  if ! wait_dead "$STATE"/slurmctld.pid "$STATE"/slurmd.*.pid; then
    for f in "$STATE"/slurmctld.pid "$STATE"/slurmd.*.pid; do
      if pid_alive "$f"; then kill -9 "$(cat "$f")" 2>/dev/null || true; fi
    done
    wait_dead "$STATE"/slurmctld.pid "$STATE"/slurmd.*.pid ||
      say "a daemon (pid files in $STATE) survived kill -9"
  fi
  rm -rf "${STATE:?}"
}

# start_ctld: start slurmctld and wait until it answers; false if it exits first. It writes
# its own pid file, which is rewritten (emptied first) while it starts: until it answers,
# its liveness is that of the background job, which lives as long as slurmctld does (setsid
# -w: where setsid has to fork, it waits for slurmctld)
start_ctld() {
  rm -f "$STATE/slurmctld.pid" "$STATE/slurmctld.log"
  setsid -w slurmctld -D -f "$SLURM_CONF" </dev/null >"$STATE/slurmctld.out" 2>&1 &
  ctld=$!
  n=0
  until scontrol ping 2>/dev/null | grep -q 'is UP'; do
    n=$((n + 1))
    proc_alive "$ctld" || return 1
    if [ "$n" -ge 150 ]; then
      kill "$ctld" 2>/dev/null || true
      fail_up "slurmctld does not answer after 30 s" "$STATE/slurmctld.out" "$STATE/slurmctld.log"
    fi
    sleep 0.2
  done
}

# show_logs FILE...: the end of each file that is not empty, on stderr
show_logs() {
  for f in "$@"; do
    [ -s "$f" ] || continue
    echo "--- the end of $f:" >&2
    tail -n 20 "$f" >&2
  done
}

# fail_up WHAT LOG...: show the logs' ends, take down what started, exit 1
fail_up() {
  say "$1"
  shift
  show_logs "$@"
  stop
  exit 1
}

[ $# -gt 0 ] || usage "a command is needed"
cmd=$1
shift
case $cmd in
up)
  nodes=${1:-2}
  case $nodes in '' | *[!0-9]*) usage "up: NODES is a number" ;; esac
  if [ "$nodes" -lt 1 ] || [ "$nodes" -gt 64 ]; then usage "up: 1 to 64 nodes"; fi
  preflight
  if [ -s "$STATE/cluster" ]; then
    die "a cluster is up already ($(cat "$STATE/cluster"), state in $STATE): slurm-cluster.sh down first"
  fi
  rm -rf "${STATE:?}"
  mkdir -p "$STATE"
  # the nodes' hosts (unshaped links: Slurm's and MPI's traffic at the veth's speed);
  # cluster.sh skips (77) where network namespaces cannot be made
  rc=0
  name=$("$HERE/cluster.sh" up --hosts "$nodes" --profile none) || rc=$?
  if [ "$rc" -ne 0 ]; then
    rm -rf "${STATE:?}"
    exit "$rc"
  fi
  echo "$name" >"$STATE/cluster"
  k=${name#orn}
  conf "$name" "$k" "$nodes"
  export SLURM_CONF="$STATE/slurm.conf"
  # slurmctld in the root namespace (it reaches the nodes over the bridge); one that exits
  # while starting is shown and started again, twice at most
  tries=1
  until start_ctld; do
    [ "$tries" -lt 3 ] ||
      fail_up "slurmctld exited while starting, $tries times" "$STATE/slurmctld.out" "$STATE/slurmctld.log"
    say "slurmctld exited while starting (try $tries); starting it again"
    show_logs "$STATE/slurmctld.out" "$STATE/slurmctld.log"
    tries=$((tries + 1))
    sleep 1
  done
  pid_alive "$STATE/slurmctld.pid" ||
    fail_up "slurmctld answers, but its pid file $STATE/slurmctld.pid names no running process" \
      "$STATE/slurmctld.log"
  # a slurmd per node, in the node's network namespace and with its host name (nsenter,
  # not `ip netns exec`, which mounts a /sys without the cgroup file system slurmd needs)
  i=1
  while [ "$i" -le "$nodes" ]; do
    h=${name}h$i
    # shellcheck disable=SC2016
    setsid nsenter "--net=/run/netns/$h" unshare --uts sh -c 'hostname "$1" && exec slurmd -D -f "$2"' \
      sh "$h" "$SLURM_CONF" </dev/null >"$STATE/slurmd.$h.out" 2>&1 &
    i=$((i + 1))
  done
  # ready when every node is idle
  n=0
  while :; do
    idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | grep -c . || true)
    [ "$idle" -lt "$nodes" ] || break
    n=$((n + 1))
    if [ "$n" -ge 150 ]; then
      sinfo -N >&2 || true
      fail_up "the nodes did not come up within 30 s" "$STATE/slurmd.${name}h1.out" \
        "$STATE/slurmd.${name}h1.log"
    fi
    sleep 0.2
  done
  say "up: $nodes nodes ${name}h1..${name}h$nodes (test-bed cluster $name), slurmctld pid $(cat "$STATE/slurmctld.pid"); take it down with: $0 down"
  echo "export SLURM_CONF=$SLURM_CONF"
  ;;
env)
  [ -s "$STATE/cluster" ] || die "no cluster is up (state folder $STATE)"
  echo "export SLURM_CONF=$STATE/slurm.conf"
  ;;
status)
  [ -s "$STATE/cluster" ] || die "no cluster is up (state folder $STATE)"
  SLURM_CONF=$STATE/slurm.conf sinfo -N
  for f in "$STATE"/slurmctld.pid "$STATE"/slurmd.*.pid; do
    [ -f "$f" ] || continue
    d=${f##*/}
    if pid_alive "$f"; then echo "${d%.pid}: pid $(cat "$f")"; else echo "${d%.pid}: not running"; fi
  done
  ;;
down)
  [ $# -eq 0 ] || usage "down takes no arguments"
  [ "$(id -u)" -eq 0 ] || skip "needs root"
  if [ ! -d "$STATE" ]; then
    say "no cluster is up (state folder $STATE)"
    exit 0
  fi
  stop
  say "down: every daemon stopped"
  ;;
*)
  usage "unknown command '$cmd'"
  ;;
esac
