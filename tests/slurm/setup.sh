#!/usr/bin/env bash
# Installs, configures and starts a one-node Slurm cluster on this machine so
# that crates/oxmpi-tests/tests/slurm.rs can start ranks with `srun`.
#
# Idempotent: a second run finds the node idle and returns at once; a run
# after a reboot (daemons gone) starts them again. Needs root. Undo with
# tests/slurm/teardown.sh.
#
#   OXMPI_SLURM_CPUS   CPUs declared for the node (default: nproc, at least 2)
#   OXMPI_SLURM_WAIT   seconds to wait for the node to become idle (default 60)
set -euo pipefail

log() { echo "slurm-setup: $*"; }
# The daemons and runuser live in sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

if [ "$(id -u)" != 0 ]; then
    echo "slurm-setup: must run as root" >&2
    exit 1
fi

CONF_DIR=/etc/slurm
CONF=$CONF_DIR/slurm.conf
STATE=/var/spool/oxmpi-slurm
LOGS=/var/log/oxmpi-slurm
RUN=/run/oxmpi-slurm
WAIT=${OXMPI_SLURM_WAIT:-60}

# ---- packages --------------------------------------------------------------
# Debian's packages: slurmctld (controller), slurmd (node daemon),
# slurm-client (srun, sinfo, scontrol), munge (authentication). The srun
# plugin mpi/pmi2 ships in slurm-wlm-basic-plugins, a dependency of both.
missing=()
[ -x /usr/sbin/slurmctld ] || missing+=(slurmctld)
[ -x /usr/sbin/slurmd ] || missing+=(slurmd)
[ -x /usr/bin/srun ] || missing+=(slurm-client)
[ -x /usr/sbin/munged ] || missing+=(munge)
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # policy-rc.d may forbid starting services from maintainer scripts (as
    # in containers); we start the daemons ourselves below.
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- configuration -----------------------------------------------------------
HOST=$(hostname -s)
CPUS=${OXMPI_SLURM_CPUS:-$(nproc)}
[ "$CPUS" -ge 2 ] 2>/dev/null || CPUS=2

mkdir -p "$CONF_DIR" "$STATE/ctld" "$STATE/d" "$LOGS" "$RUN"

# Everything runs as root on 127.0.0.1: no cgroups (proctrack/linuxproc,
# task/none), no accounting, one partition holding the one node.
new_conf=$(cat <<EOF
# Written by oxmpi tests/slurm/setup.sh: a one-node test cluster.
ClusterName=oxmpi
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
InactiveLimit=0
KillWait=5
MinJobAge=60
SlurmctldTimeout=60
SlurmdTimeout=60
Waittime=0
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
)

conf_changed=0
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$new_conf" ]; then
    printf '%s\n' "$new_conf" >"$CONF"
    conf_changed=1
    log "wrote $CONF (node $HOST, $CPUS CPUs)"
fi
# slurmd refuses to start without cgroup.conf only when a cgroup plugin is
# configured; an empty plugstack.conf keeps spank quiet either way.
[ -f "$CONF_DIR/plugstack.conf" ] || : >"$CONF_DIR/plugstack.conf"

# ---- daemons -----------------------------------------------------------------
running() { # pidfile
    [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

# munge: the key comes with the package; make one if it is missing.
MUNGE_KEY=/etc/munge/munge.key
if [ ! -s "$MUNGE_KEY" ]; then
    log "creating $MUNGE_KEY"
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --keyfile="$MUNGE_KEY" --force
    else
        dd if=/dev/urandom of="$MUNGE_KEY" bs=1 count=1024 status=none
    fi
fi
chown -R munge:munge /etc/munge
chmod 0700 /etc/munge
chmod 0400 "$MUNGE_KEY"
mkdir -p /run/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge
chmod 0755 /run/munge

if ! running /run/munge/munged.pid; then
    log "starting munged"
    rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
    runuser -u munge -- /usr/sbin/munged
fi
for _ in $(seq 50); do
    if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
        break
    fi
    sleep 0.1
done
munge -n </dev/null | unmunge >/dev/null || { echo "slurm-setup: munge does not work" >&2; exit 1; }

if [ "$conf_changed" = 1 ]; then
    # New configuration: restart whatever runs with the old one.
    for pf in "$RUN/slurmd.pid" "$RUN/slurmctld.pid"; do
        if running "$pf"; then
            kill "$(cat "$pf")" 2>/dev/null || true
            for _ in $(seq 50); do running "$pf" || break; sleep 0.1; done
        fi
    done
fi

if ! running "$RUN/slurmctld.pid"; then
    log "starting slurmctld"
    # -i: ignore state files left by an earlier run with another config.
    /usr/sbin/slurmctld -i
fi
if ! running "$RUN/slurmd.pid"; then
    log "starting slurmd"
    /usr/sbin/slurmd
fi

# ---- wait for the node ---------------------------------------------------------
state=""
for _ in $(seq $((WAIT * 2))); do
    state=$(sinfo -h -n "$HOST" -o '%T' 2>/dev/null | head -n1 || true)
    case "$state" in
        idle|mixed|allocated) break ;;
        down*|drain*|fail*)
            # A node left down by an earlier run (or not yet registered).
            scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true ;;
    esac
    sleep 0.5
done
case "$state" in
    idle|mixed|allocated) log "node $HOST is $state" ;;
    *)
        echo "slurm-setup: node $HOST did not become idle (state: '${state:-none}')" >&2
        tail -n 20 "$LOGS/slurmctld.log" "$LOGS/slurmd.log" >&2 2>/dev/null || true
        exit 1 ;;
esac
