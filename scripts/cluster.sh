#!/bin/sh
# cluster.sh: a multi-host test bed on one machine (docs/testbed.md). Each host is a Linux
# network namespace with its own host name, IP address and link (a veth pair) to one bridge
# in the root namespace; every link is shaped to a profile. MPI jobs run across the hosts
# over TCP (MPICH's hydra starts one proxy per host with `ip netns exec`; UCX is limited to
# its tcp transport on the hosts' links), so nothing passes between hosts through memory.
#
# Usage:
#   cluster.sh run [-n NP] [--hosts H] [--profile P] -- PROG ARGS...
#       create H hosts (default NP), run `mpiexec -n NP PROG ARGS` across them (ranks
#       placed on the hosts in turn), tear down; exit with mpiexec's status
#   cluster.sh with [--hosts H] [--profile P] -- CMD ARGS...
#       create H hosts (default 3), run CMD with $MPIEXEC set to a drop-in mpiexec for
#       them and $ORN_CLUSTER to the cluster's name, tear down; exit with CMD's status
#   cluster.sh up [--hosts H] [--profile P]     create; print the cluster's name
#   cluster.sh down NAME                         tear down (kills what runs on its hosts)
#   cluster.sh mpiexec NAME ARGS...              mpiexec ARGS across NAME's hosts
#   cluster.sh exec NAME HOST CMD ARGS...        run CMD on host HOST (1..H)
#   cluster.sh kill NAME HOST                    kill -9 every process on host HOST
#   cluster.sh link NAME HOST up|down            take host HOST's link down or up
#   cluster.sh stats NAME                        bytes and packets each host sent, received
#   cluster.sh info NAME                         hosts, addresses and the shaping in force
#   cluster.sh profiles                          list the profiles
#
# Profiles (every host's link, both directions): dc 10 Gbit/s and 50 us one-way latency (a
# 10 GbE data centre), slow 1 Gbit/s and 200 us, none (no shaping). The rate is a tc tbf on
# both ends of each link. The latency is added once per packet: by tc netem on the sending
# host where the kernel has netem, else by scripts/delayline.c on the receiving host (an
# NFQUEUE delay line: needs iptables and a C compiler, or $ORN_DELAYLINE), else not at all
# (said on stderr and by `info`).
#
# Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN), ip, tc, unshare and mpiexec. Where they are
# missing, or network namespaces are not allowed, it says why and exits 77 (a skipped test
# to CTest); usage errors exit 2. State lives in $ORN_CLUSTER_STATE (default
# /run/orion-cluster): one directory per cluster with its hostfile, hydra launcher and
# mpiexec. Cluster k uses the subnet $ORN_CLUSTER_NET.k.0/24 (default 10.251; host i is .i,
# the bridge .254), namespaces ornkh1.. (also the hosts' names), bridge ornkbr, links
# ornkv1.. (the root's end; eth0 inside each host).
set -eu

STATE=${ORN_CLUSTER_STATE:-/run/orion-cluster}
NET=${ORN_CLUSTER_NET:-10.251}
HERE=$(cd "$(dirname "$0")" && pwd)
ME=cluster.sh
# shellcheck source=scripts/script_lib.sh
. "$HERE/script_lib.sh"

# profile P: sets rate, burst and delay_us (empty rate: no shaping)
profile() {
  case $1 in
  dc) rate=10gbit burst=256kb delay_us=50 ;;
  slow) rate=1gbit burst=70kb delay_us=200 ;;
  none) rate='' burst='' delay_us=0 ;;
  *) usage "unknown profile '$1' (dc, slow, none)" ;;
  esac
}

# preflight: root and the tools (else exit 77)
preflight() {
  [ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces, veth links and tc qdiscs"
  for t in ip tc unshare mpiexec; do
    command -v "$t" >/dev/null 2>&1 || skip "needs '$t', which is not installed"
  done
}

# reap: tear down the clusters whose creator is gone (killed before it could: a test's
# timeout, say); `up` clusters are kept until `down`
reap() {
  for o in "$STATE"/*/owner; do
    [ -f "$o" ] || continue
    pid=$(cat "$o")
    r=${o%/owner}
    r=${r##*/}
    if [ "$pid" != up ] && ! kill -0 "$pid" 2>/dev/null; then
      say "cluster orn$r was left behind by process $pid, which is gone: tearing it down"
      teardown "$r"
    fi
  done
}

# alloc: take a free cluster number (a lock directory $STATE/k); sets k, dir, name
alloc() {
  mkdir -p "$STATE"
  reap
  k=1
  while [ "$k" -le 250 ]; do
    dir=$STATE/$k
    if ! ip -o addr show | grep -q " inet $NET\.$k\." && mkdir "$dir" 2>/dev/null; then
      name=orn$k
      return 0
    fi
    k=$((k + 1))
  done
  say "no free cluster number under $STATE (250 clusters up?)"
  exit 1
}

# fail_create WHAT: tear down the half-built cluster and skip, quoting tc's or ip's error
fail_create() {
  err=$(cat "$dir/err" 2>/dev/null || true)
  teardown "$k"
  skip "$1: $err"
}

# shape TC-ARGS...: tc TC-ARGS tbf at the profile's rate
shape() {
  tc "$@" tbf rate "$rate" burst "$burst" latency 5ms 2>"$dir/err"
}

# delayline: the delay line's binary ($ORN_DELAYLINE, or built once into $STATE); fails
# without a C compiler
delayline() {
  if [ -n "${ORN_DELAYLINE:-}" ]; then
    echo "$ORN_DELAYLINE"
    return 0
  fi
  bin=$STATE/delayline
  if [ ! -x "$bin" ] || [ -n "$(find "$HERE/delayline.c" -newer "$bin")" ]; then
    ${CC:-cc} -O2 -o "$bin.$$" "$HERE/delayline.c" 2>"$dir/err" || return 1
    mv "$bin.$$" "$bin"
  fi
  echo "$bin"
}

# latency_by: how the latency is added here: sets lat to netem, delayline or none (and why)
latency_by() {
  why='' lat=none
  [ "$delay_us" -gt 0 ] || return 0
  if tc -n "${name}h1" qdisc add dev lo root netem delay 1us 2>/dev/null; then
    tc -n "${name}h1" qdisc del dev lo root
    lat=netem
  elif ! command -v iptables >/dev/null 2>&1; then
    why="the kernel has no tc netem and iptables (for the delay line) is not installed"
  elif ! dl=$(delayline); then
    why="the kernel has no tc netem and the delay line does not compile: $(cat "$dir/err")"
  else
    lat=delayline
  fi
}

# start_delay NS I: a delay line on host I's incoming packets
start_delay() {
  setsid ip netns exec "$1" "$dl" 0 "$delay_us" </dev/null >"$dir/delay$2" 2>&1 &
  echo $! >"$dir/delay$2.pid"
  n=0
  until grep -qs ready "$dir/delay$2"; do
    n=$((n + 1))
    if [ "$n" -gt 100 ] || ! kill -0 "$(cat "$dir/delay$2.pid")" 2>/dev/null; then
      cp "$dir/delay$2" "$dir/err"
      fail_create "the delay line does not start"
    fi
    sleep 0.02
  done
  ip netns exec "$1" iptables -A INPUT -i eth0 -j NFQUEUE --queue-num 0 --queue-bypass \
    2>"$dir/err" || fail_create "cannot queue packets to the delay line with iptables"
}

# create H PROFILE OWNER: build cluster $k (after alloc) with H hosts
create() {
  h=$1 owner=$3
  profile "$2"
  echo "$owner" >"$dir/owner"
  echo "$h" >"$dir/nhosts"
  br=${name}br
  if ! ip netns add "${name}h1" 2>"$dir/err"; then
    err=$(cat "$dir/err")
    rm -rf "$dir"
    skip "cannot create a network namespace here: $err"
  fi
  ip link add "$br" type bridge 2>"$dir/err" || fail_create "cannot create a bridge"
  echo 1 >"/proc/sys/net/ipv6/conf/$br/disable_ipv6"
  ip addr add "$NET.$k.254/24" dev "$br"
  ip link set "$br" up
  latency_by
  : >"$dir/hosts"
  i=1
  while [ "$i" -le "$h" ]; do
    ns=${name}h$i v=${name}v$i
    [ "$i" -eq 1 ] || ip netns add "$ns"
    ip link add "$v" type veth peer name "${v}p" 2>"$dir/err" || fail_create "cannot create a veth link"
    echo 1 >"/proc/sys/net/ipv6/conf/$v/disable_ipv6"
    ip link set "${v}p" netns "$ns"
    ip -n "$ns" link set "${v}p" name eth0
    # IPv4 only, so that the links carry nothing but the jobs' traffic (and ARP)
    ip netns exec "$ns" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6'
    ip -n "$ns" addr add "$NET.$k.$i/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip link set "$v" master "$br"
    ip link set "$v" up
    if [ -n "$rate" ]; then
      # the rate both ways: to the host on the bridge's end of its link, from it on its own
      shape qdisc add dev "$v" root || fail_create "cannot shape links with tc tbf here"
      if [ "$lat" = netem ]; then
        tc -n "$ns" qdisc add dev eth0 root handle 1: netem delay "${delay_us}us" limit 100000 \
          2>"$dir/err" || fail_create "tc netem"
        shape -n "$ns" qdisc add dev eth0 parent 1:1 handle 10: || fail_create "tc tbf under netem"
      else
        shape -n "$ns" qdisc add dev eth0 root || fail_create "cannot shape links with tc tbf here"
      fi
    fi
    [ "$lat" != delayline ] || start_delay "$ns" "$i"
    echo "$ns" >>"$dir/hosts"
    i=$((i + 1))
  done
  # every address resolved once and for all (permanent neighbour entries): no ARP on the
  # links, and a link taken down and up again carries at once
  i=1
  while [ "$i" -le "$h" ]; do
    ip -n "${name}h$i" -o link show eth0 | sed 's|.*link/ether \([^ ]*\).*|\1|' >"$dir/mac$i"
    echo "neigh replace $NET.$k.$i lladdr $(cat "$dir/mac$i") dev $br nud permanent" >>"$dir/neigh0"
    i=$((i + 1))
  done
  ip -batch "$dir/neigh0" 2>"$dir/err" || fail_create "cannot set neighbour entries"
  i=1
  while [ "$i" -le "$h" ]; do
    j=1
    while [ "$j" -le "$h" ]; do
      [ "$i" -eq "$j" ] || echo "neigh replace $NET.$k.$j lladdr $(cat "$dir/mac$j") dev eth0 nud permanent"
      j=$((j + 1))
    done >"$dir/neigh$i"
    echo "neigh replace $NET.$k.254 lladdr $(cat "/sys/class/net/$br/address") dev eth0 nud permanent" \
      >>"$dir/neigh$i"
    ip -n "${name}h$i" -batch "$dir/neigh$i" 2>"$dir/err" || fail_create "cannot set neighbour entries"
    i=$((i + 1))
  done
  shaping="rate ${rate:-unlimited}${rate:+ (tc tbf)}, latency"
  case $lat in
  none) shaping="$shaping not emulated${why:+ ($why)}" ;;
  netem) shaping="$shaping ${delay_us} us (tc netem, on the sending host)" ;;
  delayline) shaping="$shaping ${delay_us} us (delay line, on the receiving host)" ;;
  esac
  echo "$2: $shaping" >"$dir/profile"
  say "$name: $h hosts on $NET.$k.0/24, profile $2: $shaping"
  # hydra's launcher: it runs `LAUNCHER -x HOST COMMAND` as it would run ssh; COMMAND is
  # shell words. The proxy (and so every rank) runs in HOST's namespace, named HOST.
  cat >"$dir/launch" <<'EOF'
#!/bin/sh
[ "$1" != -x ] || shift
h=$1
shift
exec ip netns exec "$h" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$h" "$*"
EOF
  # a drop-in mpiexec for the cluster: one proxy per host (so MPICH sees H nodes and shares
  # memory only between ranks on one host); mpiexec listens on the bridge's address; UCX
  # over TCP on eth0 only
  cat >"$dir/mpiexec" <<EOF
#!/bin/sh
exec mpiexec -f "$dir/hosts" -launcher ssh -launcher-exec "$dir/launch" -iface $br \\
  -genv UCX_TLS tcp -genv UCX_NET_DEVICES eth0 "\$@"
EOF
  chmod +x "$dir/launch" "$dir/mpiexec"
}

# teardown K: kill what runs on cluster K's hosts, delete its namespaces and links
teardown() {
  tn=orn$1
  for ns in $(ip netns list | awk -v p="^${tn}h[0-9]+\$" '$1 ~ p { print $1 }'); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  for l in $(ip -o link show | awk -F': ' -v p="^${tn}(br|v[0-9]+)(@|\$)" \
    '$2 ~ p { sub("@.*", "", $2); print $2 }'); do
    ip link del "$l" 2>/dev/null || true
  done
  rm -rf "${STATE:?}/$1"
}

# cluster NAME: sets k, dir and name of an existing cluster
cluster() {
  k=${1#orn}
  dir=$STATE/$k
  if [ -z "$k" ] || [ ! -f "$dir/hosts" ]; then usage "no cluster '$1'"; fi
  name=$1
}

# host N: the namespace of host N (1..H) of cluster $name
host() {
  case $1 in
  '' | *[!0-9]*) usage "host '$1': expected a number" ;;
  esac
  if [ "$1" -lt 1 ] || [ "$1" -gt "$(cat "$dir/nhosts")" ]; then usage "no host $1 in $name"; fi
  echo "${name}h$1"
}

[ $# -gt 0 ] || usage "a command is needed"
cmd=$1
shift
case $cmd in
profiles)
  echo "dc    10 Gbit/s, 50 us one-way latency (a 10 GbE data centre)"
  echo "slow  1 Gbit/s, 200 us one-way latency"
  echo "none  no shaping (the veth links' own speed)"
  ;;
up | run | with)
  np='' hosts='' prof=dc
  while [ $# -gt 0 ]; do
    case $1 in
    -n) np=${2:?-n needs a value}; shift 2 ;;
    --hosts) hosts=${2:?--hosts needs a value}; shift 2 ;;
    --profile) prof=${2:?--profile needs a value}; shift 2 ;;
    --) shift; break ;;
    *) usage "unknown option '$1'" ;;
    esac
  done
  profile "$prof"
  [ "$cmd" = up ] || [ $# -gt 0 ] || usage "$cmd: a program is needed after --"
  [ -n "$hosts" ] || hosts=${np:-3}
  [ -n "$np" ] || np=$hosts
  case $hosts$np in *[!0-9]*) usage "-n and --hosts take numbers" ;; esac
  if [ "$hosts" -lt 1 ] || [ "$hosts" -gt 200 ]; then usage "--hosts: 1 to 200"; fi
  preflight
  if [ "$cmd" = up ]; then
    alloc
    create "$hosts" "$prof" up
    echo "$name"
    exit 0
  fi
  # The job runs in the background (stdin passed on) and the script waits for it, so that a
  # signal to this script is handled at once: the job is stopped and the cluster torn down.
  k='' job=''
  trap '[ -z "$k" ] || teardown "$k"' EXIT
  for s in INT:130 TERM:143 HUP:129; do
    # shellcheck disable=SC2064
    trap "[ -z \"\$job\" ] || kill -TERM \"\$job\" 2>/dev/null; exit ${s#*:}" "${s%:*}"
  done
  alloc
  create "$hosts" "$prof" $$
  exec 3<&0
  if [ "$cmd" = run ]; then
    "$dir/mpiexec" -n "$np" "$@" <&3 &
  else
    MPIEXEC=$dir/mpiexec ORN_CLUSTER=$name "$@" <&3 &
  fi
  job=$!
  rc=0
  wait "$job" || rc=$?
  exit "$rc"
  ;;
down)
  [ $# -eq 1 ] || usage "down NAME"
  preflight
  cluster "$1"
  teardown "$k"
  ;;
mpiexec)
  [ $# -ge 1 ] || usage "mpiexec NAME ARGS..."
  cluster "$1"
  shift
  exec "$dir/mpiexec" "$@"
  ;;
exec)
  [ $# -ge 3 ] || usage "exec NAME HOST CMD ARGS..."
  cluster "$1"
  ns=$(host "$2")
  shift 2
  exec ip netns exec "$ns" "$@"
  ;;
kill)
  # every process of the host but its delay line (part of the network, not of the host)
  [ $# -eq 2 ] || usage "kill NAME HOST"
  cluster "$1"
  ns=$(host "$2")
  keep=$(cat "$dir/delay$2.pid" 2>/dev/null || true)
  pids=$(ip netns pids "$ns" | grep -v -x "${keep:-none}" || true)
  # shellcheck disable=SC2086
  [ -z "$pids" ] || kill -9 $pids
  ;;
link)
  [ $# -eq 3 ] || usage "link NAME HOST up|down"
  cluster "$1"
  host "$2" >/dev/null
  case $3 in up | down) ;; *) usage "link: up or down" ;; esac
  ip link set "${name}v$2" "$3"
  if [ "$3" = up ]; then
    # until both ends carry again
    n=0
    until { [ "$(cat "/sys/class/net/${name}v$2/operstate")" = up ] &&
      ip -n "${name}h$2" -o link show eth0 | grep -q 'state UP'; } || [ "$n" -ge 100 ]; do
      sleep 0.02
      n=$((n + 1))
    done
  fi
  ;;
stats)
  # the root's end of a link transmits what its host receives, and receives what it sends
  [ $# -eq 1 ] || usage "stats NAME"
  cluster "$1"
  i=1
  while [ "$i" -le "$(cat "$dir/nhosts")" ]; do
    s=/sys/class/net/${name}v$i/statistics
    echo "host $i sent $(cat "$s/rx_bytes") bytes $(cat "$s/rx_packets") packets" \
      "received $(cat "$s/tx_bytes") bytes $(cat "$s/tx_packets") packets"
    i=$((i + 1))
  done
  ;;
info)
  [ $# -eq 1 ] || usage "info NAME"
  cluster "$1"
  echo "cluster $name: $(cat "$dir/nhosts") hosts, profile $(cat "$dir/profile")"
  echo "mpiexec $dir/mpiexec"
  i=1
  while [ "$i" -le "$(cat "$dir/nhosts")" ]; do
    echo "host $i ${name}h$i $NET.$k.$i"
    i=$((i + 1))
  done
  ;;
*)
  usage "unknown command '$cmd'"
  ;;
esac
