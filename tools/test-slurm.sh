#!/bin/sh
# make test-slurm: docs/cluster.md's Slurm recipe on a single-node Slurm started here and
# stopped at the end.  Writes a slurm.conf for this host in a temporary folder, starts munged,
# slurmctld and slurmd (their own ports, sockets and state there: nothing of a Slurm already
# configured on the machine is touched), submits the shards as a job array and the merge as a
# job that depends on it (afterok), and checks the merged file against one process's
# `stats --corpus` (byte for byte: sentences exact, means equal).  Prints SKIP and the reason,
# exit 77, where Slurm cannot start: not installed (Debian: slurm-wlm munge), not root, no
# munge key, or a daemon that would not come up (its log is shown).
# Usage: tools/test-slurm.sh BUILD_DIR
set -u
BUILD=${1:-build}
A=$(cd "$BUILD" && pwd)/app/attnscope
skip() { echo "SKIP: $*"; exit 77; }
for c in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v $c >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
  command -v $c >/dev/null 2>&1 || skip "$c is not installed (Debian: apt-get install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd runs jobs as their users and needs root here"
[ -r /etc/munge/munge.key ] || skip "no munge key /etc/munge/munge.key (Debian's munge package makes one)"
[ -x "$A" ] || { echo "FAIL: no $A (build first)"; exit 1; }

T=$(mktemp -d /tmp/atn-slurm-XXXXXX)
chmod 755 "$T"
stop() {
  for p in slurmd slurmctld munged; do
    [ -s "$T/$p.pid" ] && kill "$(cat "$T/$p.pid")" 2>/dev/null
  done
  sleep 1
  rm -rf "$T"
}
trap stop EXIT INT TERM
show_log() { echo "--- $1"; tail -n 15 "$1" 2>/dev/null; }

HOST=$(hostname -s)
CPUS=$(nproc)
mkdir -p "$T/state" "$T/spool" "$T/munge" "$T/parts"
chmod 700 "$T/munge"
# munged as root on its own socket
munged --force --socket="$T/munge/munge.sock" --pid-file="$T/munged.pid" --log-file="$T/munged.log" \
  --seed-file="$T/munge/seed" --key-file=/etc/munge/munge.key >/dev/null 2>&1 ||
  { show_log "$T/munged.log"; skip "munged would not start"; }
cat >"$T/slurm.conf" <<EOF
ClusterName=attnscope-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=atntest Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$T/slurm.conf"
slurmctld -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 || { show_log "$T/slurmctld.log"; skip "slurmctld would not start"; }
slurmd -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 || { show_log "$T/slurmd.log"; skip "slurmd would not start"; }
up=""
for _ in $(seq 1 30); do
  state=$(scontrol show node "$HOST" 2>/dev/null | sed -n 's/.*State=\([A-Z+_]*\).*/\1/p' | head -n 1)
  case "$state" in IDLE*|MIXED*|ALLOCATED*) up=1; break ;; esac
  sleep 1
done
[ -n "$up" ] || { show_log "$T/slurmctld.log"; show_log "$T/slurmd.log"; skip "the node did not come up (state: ${state:-none})"; }

# the corpus, and the reference from one process
python3 - "$T/c.txt" <<'EOF'
import random, sys
rng = random.Random(38)
words = "the cat sat on a mat , and dog ran to park . she said that he would come home soon ;".split()
with open(sys.argv[1], "w") as f:
    for i in range(200):
        f.write("\n" if i % 31 == 4 else " ".join(rng.choice(words) for _ in range(rng.randint(2, 20))) + "\n")
EOF
cd "$T" || exit 1
"$A" stats --model demo --corpus c.txt -o whole.safetensors 2>/dev/null || { echo "FAIL: stats --corpus"; exit 1; }
"$A" stats --model demo --corpus c.txt --format json -o whole.json 2>/dev/null || exit 1

# docs/cluster.md's array script, with this build's attnscope and 4 shards
cat >array.sh <<EOF
#!/bin/sh
#SBATCH --job-name=attn-stats
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --output=$T/stats-%A_%a.log
N=\$(( SLURM_ARRAY_TASK_MAX + 1 ))
exec "$A" stats --model demo --corpus "$T/c.txt" --shard "\$SLURM_ARRAY_TASK_ID/\$N" --checkpoint-every 20 \\
  --resume -o "$T/parts/part-\$SLURM_ARRAY_TASK_ID.safetensors"
EOF
jid=$(sbatch --parsable array.sh) || { show_log "$T/slurmctld.log"; echo "FAIL: sbatch"; exit 1; }
mid=$(sbatch --parsable --dependency=afterok:"$jid" --output="$T/merge.log" --wrap \
  "\"$A\" stats merge $T/parts/part-*.safetensors -o $T/all.safetensors") || { echo "FAIL: sbatch merge"; exit 1; }
echo "array job $jid, merge job $mid"
final=""
for _ in $(seq 1 240); do
  final=$(scontrol show job "$mid" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case "$final" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
  sleep 1
done
if [ "$final" != COMPLETED ]; then
  echo "FAIL: the merge job ended $final"
  for f in "$T"/stats-*.log "$T/merge.log"; do show_log "$f"; done
  show_log "$T/slurmd.log"
  exit 1
fi
cat "$T/merge.log"
"$A" stats --from all.safetensors --format json -o from.json 2>/dev/null || { echo "FAIL: stats --from"; exit 1; }
if ! cmp -s whole.safetensors all.safetensors; then
  echo "FAIL: the merged file differs from one process's"
  exit 1
fi
python3 - whole.json from.json <<'EOF' || exit 1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["sentences"] == b["sentences"] and a["tokens"] == b["tokens"], "counts differ"
for x, y in zip(a["heads"], b["heads"]):
    for k, v in x.items():
        if isinstance(v, float):
            assert abs(v - y[k]) <= 1e-9 * abs(v) + 1e-15, f"{x['layer']}:{x['head']} {k}: {y[k]} != {v}"
print(f"{a['sentences']} sentences; every mean within 1e-9 of stats --corpus")
EOF
echo "ok: Slurm array + dependent merge equal stats --corpus byte for byte"
