#!/usr/bin/env bash
# One-sided (RMA) benchmarks, oxmpi vs MPICH, 2 ranks on one machine.
#
#   bench/rma.sh                      # RUNS=5 interleaved runs, best value per size
#   RUNS=3 NO_BUILD=1 bench/rma.sh    # reuse target/oxmpi (cargo xtask dist)
#
# bench/c/osu_rma.c (OSU-style put/get/accumulate/fetch_and_op/compare_and_swap latency
# with lock_all + flush, put bandwidth with 64 puts per flush, put latency with fences)
# is compiled with oxmpi's mpicc (release toolchain from `cargo xtask dist`) and with
# mpicc.mpich, both -O2, and run alternately RUNS times. Per test and size the best value
# is kept (lowest latency, highest bandwidth). Ratio: > 1 means oxmpi is better
# (latency MPICH/oxmpi, bandwidth oxmpi/MPICH). Raw outputs in bench/build/raw-rma/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-5}
out=$root/bench/build/raw-rma
mkdir -p "$out"
rm -f "$out"/*.txt
if [ -z "${NO_BUILD:-}" ]; then
    (cd "$root" && cargo run -q -p xtask -- dist >/dev/null)
fi
ox=$root/target/oxmpi
command -v mpicc.mpich >/dev/null || { echo "rma.sh: mpicc.mpich is required" >&2; exit 1; }
"$ox/bin/mpicc" -O2 -o "$out/osu_rma.oxmpi" "$root/bench/c/osu_rma.c"
mpicc.mpich -O2 -o "$out/osu_rma.mpich" "$root/bench/c/osu_rma.c"
for run in $(seq 1 "$RUNS"); do
    timeout 600 "$ox/bin/mpiexec" -n 2 "$out/osu_rma.oxmpi" >"$out/oxmpi.$run.txt" || echo "oxmpi run $run failed" >&2
    timeout 600 mpiexec.mpich -n 2 "$out/osu_rma.mpich" >"$out/mpich.$run.txt" || echo "mpich run $run failed" >&2
done
python3 - "$out" <<'EOF'
import glob, sys, collections
raw = sys.argv[1]
best = {}
order = []
for key in ("oxmpi", "mpich"):
    for f in sorted(glob.glob(f"{raw}/{key}.*.txt")):
        test = None
        for line in open(f):
            line = line.strip()
            if line.startswith("#"):
                test = line[1:].strip()
                if test not in order:
                    order.append(test)
                continue
            if not line or test is None:
                continue
            size, val = line.split()
            k = (test, int(size), key)
            v = float(val)
            bw = test.endswith("_bw")
            if k not in best or (v > best[k] if bw else v < best[k]):
                best[k] = v
for test in order:
    bw = test.endswith("_bw")
    unit = "MB/s" if bw else "us"
    print(f"\n### {test} ({unit}, best of runs)\n")
    print(f"| bytes | oxmpi | MPICH | ratio |")
    print("|---:|---:|---:|---:|")
    sizes = sorted({s for (t, s, _) in best if t == test})
    for s in sizes:
        o, m = best.get((test, s, "oxmpi")), best.get((test, s, "mpich"))
        if o is None or m is None:
            continue
        r = (o / m) if bw else (m / o if o > 0 else float("inf"))
        print(f"| {s} | {o:.2f} | {m:.2f} | {r:.2f} |")
EOF
