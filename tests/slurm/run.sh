#!/bin/sh
# run.sh: Orion under a real Slurm cluster on this machine (scripts/slurm-cluster.sh, 2 nodes
# of the multi-host test bed; docs/cluster.md), as a user runs it. SGD MF
# (examples/sgd_mf.orn, 3 epochs of synthetic ratings) at 3 ranks over the 2 nodes:
#   - `sbatch --wait examples/slurm/sgd_mf.sbatch ARGS` (the documented job script),
#   - `srun --mpi=pmi2 -N 2 -n 3 ./sgd_mf ARGS`,
#   - `salloc -N 2 -n 3 mpiexec -n 3 ./sgd_mf ARGS` (hydra inside the allocation),
# each printing what `mpiexec -n 3` prints on one machine (every line, less the time and
# rate columns) and logging the same RMSEs to the last bit (--logdir's metrics.csv); the
# jobs' ranks ran on both nodes; `srun` without --mpi=pmi2 is stopped (exit 2) with a message
# naming the flag; and `slurm-cluster.sh down` leaves no daemon behind.
# Skipped (77) where the machine cannot run the daemons (slurm-cluster.sh says why).
# Environment: ORIONC, MPIEXEC, GEN_RATINGS, ROOT, WORK.
set -eu
: "${ORIONC:?}" "${MPIEXEC:?}" "${GEN_RATINGS:?}" "${ROOT:?}" "${WORK:?}"
W=$WORK/slurm
SC=$ROOT/scripts/slurm-cluster.sh
export ORN_SLURM_STATE="$W/state"
# a cluster left by a run that was killed (a CTest timeout)
[ ! -d "$ORN_SLURM_STATE" ] || "$SC" down || true
rm -rf "$W"
mkdir -p "$W"
cd "$W"

fail() {
  echo "slurm: FAIL: $*" >&2
  exit 1
}
trap '"$SC" down >/dev/null 2>&1 || true' EXIT

rc=0
env=$("$SC" up 2) || rc=$?
[ "$rc" -eq 0 ] || exit "$rc" # 77: skipped, with slurm-cluster.sh's reason
eval "$env"
name=$(cat "$ORN_SLURM_STATE/cluster")
pids="$(cat "$ORN_SLURM_STATE"/slurmctld.pid "$ORN_SLURM_STATE"/slurmd.*.pid)"
[ "$(echo "$pids" | wc -w)" -eq 3 ] || fail "expected slurmctld and 2 slurmd, found pids: $pids"

"$GEN_RATINGS" 3000 600 90000 5 7 syn.train syn.test
"$ORIONC" "$ROOT/examples/sgd_mf.orn" -o sgd_mf || fail "orionc examples/sgd_mf.orn"
args="--train=syn.train --test=syn.test --epochs=3"

# results: the output without the seconds and updates/s; the RMSEs logged at full precision
results() { # OUT LOGDIR
  sed 's/  [0-9.e+-]* s  [0-9.e+-]* updates\/s$//' "$1"
  grep rmse "$2/metrics.csv" | cut -d, -f1-3
}
# shellcheck disable=SC2086
"$MPIEXEC" -n 3 ./sgd_mf $args --logdir=ref >ref.out 2>&1 || { cat ref.out >&2; fail "mpiexec -n 3"; }
results ref.out ref >ref.txt
grep -q '^epoch   3  train rmse' ref.txt || { cat ref.out >&2; fail "mpiexec -n 3: no epoch 3"; }

# same RESULTS-OUT LOGDIR WHAT: the results equal the reference's
same() {
  results "$1" "$2" >"$1.txt"
  diff -u ref.txt "$1.txt" || fail "$3 printed other results than mpiexec -n 3 on one machine"
  echo "$3: the same results as mpiexec -n 3"
}

# the documented batch job
# shellcheck disable=SC2086
sb=$(sbatch --wait --parsable "$ROOT/examples/slurm/sgd_mf.sbatch" $args --logdir=sb) ||
  { cat sgd_mf-*.out >&2 2>/dev/null; fail "sbatch examples/slurm/sgd_mf.sbatch"; }
job=${sb%%;*}
[ -f "sgd_mf-$job.out" ] || fail "sbatch: no output file sgd_mf-$job.out"
same "sgd_mf-$job.out" sb "sbatch examples/slurm/sgd_mf.sbatch"
scontrol show job "$job" >job.txt
grep -q "NodeList=${name}h\[1-2\]" job.txt || { cat job.txt >&2; fail "the batch job did not run on both nodes"; }
grep -q "NumTasks=3 " job.txt || { cat job.txt >&2; fail "the batch job did not have 3 tasks"; }

# srun directly; where its ranks run
# shellcheck disable=SC2086
srun --mpi=pmi2 -N 2 -n 3 ./sgd_mf $args --logdir=sr >srun.out 2>&1 || { cat srun.out >&2; fail "srun --mpi=pmi2"; }
same srun.out sr "srun --mpi=pmi2 -N 2 -n 3"
# shellcheck disable=SC2016
srun --mpi=pmi2 -N 2 -n 3 sh -c 'echo "$PMI_RANK $(hostname)"' | sort >where.txt
printf '0 %sh1\n1 %sh1\n2 %sh2\n' "$name" "$name" "$name" | diff -u - where.txt ||
  fail "srun -N 2 -n 3 placed the ranks otherwise than 0, 1 on node 1 and 2 on node 2"

# hydra inside an allocation: its proxies reach mpiexec on the bridge's address (-iface;
# on a real cluster the login node's host name resolves and nothing is needed)
# shellcheck disable=SC2086
salloc --quiet -N 2 -n 3 "$MPIEXEC" -iface "${name}br" -n 3 ./sgd_mf $args --logdir=sa >salloc.out 2>&1 ||
  { cat salloc.out >&2; fail "salloc mpiexec"; }
same salloc.out sa "salloc -N 2 -n 3 mpiexec -n 3"

# srun without a process-management interface: every task alone, stopped
rc=0
# shellcheck disable=SC2086
srun -N 2 -n 3 ./sgd_mf $args >alone.out 2>&1 || rc=$?
[ "$rc" -ne 0 ] || { cat alone.out >&2; fail "srun without --mpi=pmi2 succeeded"; }
grep -q "^orion: error: srun started 3 tasks, but MPI sees each one alone .*srun --mpi=pmi2$" alone.out ||
  { cat alone.out >&2; fail "srun without --mpi=pmi2: no message naming the flag"; }
[ "$(grep -c '^orion: error' alone.out)" -eq 1 ] || { cat alone.out >&2; fail "the message was not printed once"; }
if grep -q '^sgd_mf:' alone.out; then fail "srun without --mpi=pmi2: a task ran the program"; fi
echo "srun without --mpi=pmi2: stopped with exit code 2 and the flag named"

"$SC" down
trap - EXIT
# (a zombie is not running: this machine's init may reap the daemons late)
for p in $pids; do
  st=$(sed 's/^.*) \([A-Za-z]\).*/\1/' "/proc/$p/stat" 2>/dev/null || echo gone)
  case $st in gone | Z | X) ;; *) fail "daemon pid $p still runs (state $st) after slurm-cluster.sh down" ;; esac
done
[ ! -d "$ORN_SLURM_STATE" ] || fail "slurm-cluster.sh down left $ORN_SLURM_STATE"
echo "slurm-cluster.sh down: no daemon left"
