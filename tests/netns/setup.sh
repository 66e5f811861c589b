#!/bin/sh
# Creates N network namespaces oxmpi-h1..oxmpi-hN ("hosts" for multi-host
# launcher/transport tests), each with loopback up and a veth leg on the
# bridge oxmpi-br0 in the root namespace:
#
#   oxmpi-br0 (root ns)   10.213.0.1/24
#   oxmpi-hK  (eth0)      10.213.0.(10+K)/24, default route via 10.213.0.1
#
# Only traffic among the namespaces, with the root namespace over the bridge
# (where mpiexec's PMI listener binds 10.213.0.1) and on each loopback is
# possible: nothing is forwarded or NATed off the bridge.
#
# Idempotent: re-running repairs/keeps what exists. Needs root (or
# CAP_NET_ADMIN + CAP_SYS_ADMIN) and iproute2 (`apt-get install iproute2`).
# Usage: setup.sh [N]   (default 2, at most 200)
set -eu
N=${1:-2}
BR=oxmpi-br0
NET=10.213.0
case $N in ''|*[!0-9]*) echo "setup.sh: N must be a number" >&2; exit 2;; esac
[ "$N" -ge 1 ] && [ "$N" -le 200 ] || { echo "setup.sh: N must be 1..200" >&2; exit 2; }
command -v ip >/dev/null || { echo "setup.sh: 'ip' (iproute2) is missing" >&2; exit 1; }

# Tests call this script from parallel threads: one at a time, or two runs both
# add the same namespace ("File exists") or one deletes a veth leg the other just
# made, and a job started in between loses its network.
if command -v flock >/dev/null 2>&1; then
    LOCKDIR=/run/lock
    [ -d "$LOCKDIR" ] && [ -w "$LOCKDIR" ] || LOCKDIR=${TMPDIR:-/tmp}
    exec 9>"$LOCKDIR/oxmpi-netns-setup.lock"
    flock 9
fi

if ! ip link show "$BR" >/dev/null 2>&1; then
    ip link add "$BR" type bridge
fi
ip addr replace "$NET.1/24" dev "$BR"
ip link set "$BR" up

i=1
while [ "$i" -le "$N" ]; do
    ns=oxmpi-h$i
    host=veth-oxh$i          # root-namespace end, on the bridge
    peer=veth-oxh$i-p        # namespace end, renamed eth0 inside
    if ! ip netns list | grep -qw "$ns"; then
        ip netns add "$ns"
    fi
    ip -n "$ns" link set lo up
    if ! ip -n "$ns" link show eth0 >/dev/null 2>&1; then
        ip link del "$host" >/dev/null 2>&1 || true
        ip link add "$host" type veth peer name "$peer"
        ip link set "$peer" netns "$ns"
        ip -n "$ns" link set "$peer" name eth0
    fi
    ip link set "$host" master "$BR"
    ip link set "$host" up
    ip -n "$ns" addr replace "$NET.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route replace default via "$NET.1" dev eth0
    i=$((i + 1))
done
echo "setup.sh: $N namespaces ready on $BR ($NET.0/24)"
