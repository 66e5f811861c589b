#!/usr/bin/env bash
# Stops the one-node Slurm cluster that tests/slurm/setup.sh started (slurmd,
# slurmctld, munged), by their pid files. Leaves packages and configuration
# in place, so setup.sh starts it again within seconds. Idempotent.
#
#   --purge   also remove the cluster's state, logs and /etc/slurm/slurm.conf
set -uo pipefail

RUN=/run/oxmpi-slurm
STATE=/var/spool/oxmpi-slurm
LOGS=/var/log/oxmpi-slurm

if [ "$(id -u)" != 0 ]; then
    echo "slurm-teardown: must run as root" >&2
    exit 1
fi

stop() { # name pidfile
    local pf=$2 pid
    [ -f "$pf" ] || return 0
    pid=$(cat "$pf" 2>/dev/null) || return 0
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        echo "slurm-teardown: stopping $1 ($pid)"
        kill "$pid" 2>/dev/null
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            kill -9 "$pid" 2>/dev/null
        fi
    fi
    rm -f "$pf"
}

stop slurmd "$RUN/slurmd.pid"
stop slurmctld "$RUN/slurmctld.pid"
stop munged /run/munge/munged.pid

if [ "${1:-}" = "--purge" ]; then
    if grep -q 'Written by oxmpi tests/slurm/setup.sh' /etc/slurm/slurm.conf 2>/dev/null; then
        rm -f /etc/slurm/slurm.conf
    fi
    rm -rf "$STATE" "$LOGS" "$RUN"
    echo "slurm-teardown: purged state, logs and configuration"
fi
exit 0
