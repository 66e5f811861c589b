#!/usr/bin/env bash
# Instructions per MPI_Start + MPI_Wait (and per MPI_Start alone) of a persistent 8-byte
# allreduce (bench/c/pcoll_probe.c), oxmpi vs MPICH, under callgrind: each rank's count
# inside the two calls (--toggle-collect) in runs of 200 and 2200 iterations, the
# difference divided by 2000 (so init and finalize drop out), averaged over the ranks.
# Counts do not depend on the machine's load, except where a rank waits for its peer
# inside MPI_Wait (2 ranks): its polling is counted too, so "Start+Wait" on 2 ranks is
# noisy; "Start" and the 1-rank (MPI_COMM_SELF) figures are exact.
#
#   bench/pcoll_count.sh            # oxmpi (after `cargo xtask dist`) and MPICH if present
#   NO_BUILD=1 bench/pcoll_count.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/build/raw-pcoll-count
mkdir -p "$out"
if [ -z "${NO_BUILD:-}" ]; then
    (cd "$root" && cargo run -q -p xtask -- dist >/dev/null)
fi
command -v valgrind >/dev/null || { echo "pcoll_count.sh: valgrind is required" >&2; exit 1; }
ox=$root/target/oxmpi
"$ox/bin/mpicc" -O2 -o "$out/probe.oxmpi" "$root/bench/c/pcoll_probe.c"
impls="oxmpi"
if command -v mpicc.mpich >/dev/null; then
    mpicc.mpich -O2 -o "$out/probe.mpich" "$root/bench/c/pcoll_probe.c"
    impls="$impls mpich"
fi
# per-iteration count: IMPL NP MODE TOGGLES...
count() {
    local impl=$1 np=$2 mode=$3
    shift 3
    local launcher="$ox/bin/mpiexec"
    [ "$impl" = mpich ] && launcher=mpiexec.mpich
    local tot=()
    for it in 200 2200; do
        rm -f "$out"/cg.*
        $launcher -n "$np" valgrind --tool=callgrind "$@" --callgrind-out-file="$out/cg.%p" \
            "$out/probe.$impl" "$it" "$mode" >/dev/null 2>&1
        local s=0
        for f in "$out"/cg.*; do
            s=$((s + $(grep -E '^(summary|totals):' "$f" | head -1 | awk '{print $2}')))
        done
        tot+=($((s / np)))
    done
    rm -f "$out"/cg.*
    echo $(((tot[1] - tot[0]) / 2000))
}
# The name callgrind gives a call (MPI_X, or its alias PMPI_X): the outer one when
# both appear (a shim calling the body), as toggling both would switch twice.
name_of() {
    local impl=$1 call=$2 launcher="$ox/bin/mpiexec"
    [ "$impl" = mpich ] && launcher=mpiexec.mpich
    rm -f "$out"/cg.*
    $launcher -n 1 valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" \
        "$out/probe.$impl" 10 s >/dev/null 2>&1
    if grep -qE "^c?fn=\([0-9]+\) $call\$" "$out"/cg.*; then echo "$call"; else echo "P$call"; fi
    rm -f "$out"/cg.*
}
printf '%-7s %-6s %12s %12s\n' impl ranks Start+Wait Start
for impl in $impls; do
    ts=$(name_of "$impl" MPI_Start) tw=$(name_of "$impl" MPI_Wait)
    for np in 1 2; do
        mode=w
        [ "$np" = 1 ] && mode=s
        sw=$(count "$impl" "$np" "$mode" --toggle-collect=$ts --toggle-collect=$tw)
        s=$(count "$impl" "$np" "$mode" --toggle-collect=$ts)
        printf '%-7s %-6s %12s %12s\n' "$impl" "$np" "$sw" "$s"
    done
done
