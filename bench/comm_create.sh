#!/usr/bin/env bash
# Communicator creation cost, oxmpi vs MPICH, on one machine.
#
#   bench/comm_create.sh                   # NPS="2 5 8", ITERS=1000, RUNS=3
#   NPS=2 ITERS=300 NO_BUILD=1 bench/comm_create.sh
#   RT=1 NPS=2 bench/comm_create.sh        # ranks under SCHED_FIFO (root; see below)
#
# bench/c/comm_create.c (µs per create+free pair of MPI_Comm_dup, _split, _create,
# _create_group, _idup, _split_type; the slowest rank's time) is built with oxmpi's mpicc
# (release toolchain, `cargo xtask dist`) and mpicc.mpich (required), run alternately RUNS
# times per rank count (each run limited to TIMEOUT seconds, default 300: MPICH busy-polls
# without sleeping, so oversubscribed it can take tens of ms per call), and the best
# (lowest) figure per call is kept. Ratio = MPICH / oxmpi (> 1: oxmpi is faster).
# Raw outputs in bench/build/raw-comm/.
#
# RT=1 runs both launchers (and so their ranks) under `chrt -f 10`: on a machine shared with
# other busy programs, a rank that waits for a CPU costs each creation a scheduler slice
# (milliseconds), which swamps the microseconds measured here; real-time ranks run at once
# (the kernel still keeps 5% of each second for the others). Use it with NPS up to the
# number of cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-3}
NPS=${NPS:-"2 5 8"}
ITERS=${ITERS:-1000}
TIMEOUT=${TIMEOUT:-300}
out=$root/bench/build/raw-comm
rt=()
if [ -n "${RT:-}" ]; then
    rt=(chrt -f 10)
fi
mkdir -p "$out"
rm -f "$out"/*.txt
if [ -z "${NO_BUILD:-}" ]; then
    (cd "$root" && cargo run -q -p xtask -- dist >/dev/null)
fi
ox=$root/target/oxmpi
command -v mpicc.mpich >/dev/null || { echo "comm_create.sh: mpicc.mpich is required" >&2; exit 1; }
"$ox/bin/mpicc" -O2 -o "$out/comm_create.oxmpi" "$root/bench/c/comm_create.c"
mpicc.mpich -O2 -o "$out/comm_create.mpich" "$root/bench/c/comm_create.c"
for run in $(seq 1 "$RUNS"); do
    for np in $NPS; do
        timeout "$TIMEOUT" "${rt[@]}" "$ox/bin/mpiexec" -n "$np" "$out/comm_create.oxmpi" "$ITERS" >>"$out/oxmpi.$np.txt" \
            || echo "oxmpi run $run on $np ranks failed or timed out" >&2
        timeout "$TIMEOUT" "${rt[@]}" mpiexec.mpich -n "$np" "$out/comm_create.mpich" "$ITERS" >>"$out/mpich.$np.txt" \
            || echo "MPICH run $run on $np ranks failed or timed out" >&2
    done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" $NPS <<'EOF'
import sys
raw, nps = sys.argv[1], sys.argv[2:]
def best(path):
    b = {}
    try:
        for line in open(path):
            p = line.split()
            if len(p) == 2:
                b[p[0]] = min(b.get(p[0], float("inf")), float(p[1]))
    except FileNotFoundError:
        pass
    return b
print("| ranks | call | oxmpi µs | MPICH µs | MPICH/oxmpi |")
print("|---|---|---|---|---|")
for np in nps:
    o, m = best(f"{raw}/oxmpi.{np}.txt"), best(f"{raw}/mpich.{np}.txt")
    order = ["dup", "split", "create", "create_group", "idup", "split_type"]
    for call in [c for c in order if c in o or c in m]:
        ov, mv = o.get(call), m.get(call)
        fmt = lambda v: "n/a" if v is None else f"{v:.1f}"
        ratio = f"{mv / ov:.2f}x" if ov and mv else "n/a"
        print(f"| {np} | {call} | {fmt(ov)} | {fmt(mv)} | {ratio} |")
EOF
