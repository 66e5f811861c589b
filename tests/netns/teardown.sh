#!/bin/sh
# Removes every namespace oxmpi-h* and the bridge oxmpi-br0 created by
# setup.sh (deleting a namespace deletes its veth pair). Idempotent; kills
# processes still running inside the namespaces first.
set -u
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^oxmpi-h[0-9]*$'); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
        kill -9 "$pid" 2>/dev/null
    done
    ip netns del "$ns"
done
ip link del oxmpi-br0 2>/dev/null
exit 0
