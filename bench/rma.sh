#!/usr/bin/env bash
# One-sided (RMA) benchmarks, oxmpi vs MPICH vs Open MPI, 2 ranks on one machine.
# Also `bench/compare.sh rma`.
#
#   bench/rma.sh                      # RUNS=5 interleaved runs, best value per size
#   RUNS=3 NO_BUILD=1 bench/rma.sh    # reuse target/oxmpi (cargo xtask dist)
#   ONLY="put fop" bench/rma.sh       # only these tests (osu_rma.c's names)
#
# bench/c/osu_rma.c (OSU-style put/get/accumulate/get_accumulate/fetch_and_op/
# compare_and_swap latency with lock_all + flush, put bandwidth with 64 puts per flush,
# put latency with fences and with post/start/complete/wait, put/get/fetch_and_op with
# lock/unlock per operation) is compiled with oxmpi's
# mpicc (release toolchain from `cargo xtask dist`), mpicc.mpich (required) and
# mpicc.openmpi (skipped if absent), all -O2, and run alternately RUNS times. Per test and
# size the best value is kept (lowest latency, highest bandwidth). Ratios: > 1 means oxmpi
# is better (latency other/oxmpi, bandwidth oxmpi/other). Raw outputs in
# bench/build/raw-rma/.
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
ompi=""
if command -v mpicc.openmpi >/dev/null && command -v mpiexec.openmpi >/dev/null; then
    mpicc.openmpi -O2 -o "$out/osu_rma.openmpi" "$root/bench/c/osu_rma.c"
    ompi=1
else
    echo "rma.sh: Open MPI not found, its column stays empty" >&2
fi
tests=${ONLY:-""}
for run in $(seq 1 "$RUNS"); do
    for t in ${tests:-all}; do
        arg=$t; [ "$t" = all ] && arg=""
        timeout 600 "$ox/bin/mpiexec" -n 2 "$out/osu_rma.oxmpi" $arg >>"$out/oxmpi.$run.txt" || echo "oxmpi run $run ($t) failed" >&2
        timeout 600 mpiexec.mpich -n 2 "$out/osu_rma.mpich" $arg >>"$out/mpich.$run.txt" || echo "mpich run $run ($t) failed" >&2
        if [ -n "$ompi" ]; then
            timeout 600 mpiexec.openmpi --allow-run-as-root --oversubscribe -n 2 "$out/osu_rma.openmpi" $arg >>"$out/openmpi.$run.txt" || echo "openmpi run $run ($t) failed" >&2
        fi
    done
done
python3 - "$out" <<'EOF'
import glob, sys, collections
raw = sys.argv[1]
best = {}
order = []
for key in ("oxmpi", "mpich", "openmpi"):
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
def ratio(o, x, bw):
    if o is None or x is None or (x <= 0 if bw else o <= 0):
        return "-"
    return f"{(o / x) if bw else (x / o if o > 0 else float('inf')):.2f}"
def val(v):
    return "-" if v is None else f"{v:.2f}"
for test in order:
    bw = test.endswith("_bw")
    unit = "MB/s" if bw else "us"
    print(f"\n### {test} ({unit}, best of runs)\n")
    print("| bytes | oxmpi | MPICH | Open MPI | vs MPICH | vs Open MPI |")
    print("|---:|---:|---:|---:|---:|---:|")
    sizes = sorted({s for (t, s, _) in best if t == test})
    for s in sizes:
        o, m, p = (best.get((test, s, k)) for k in ("oxmpi", "mpich", "openmpi"))
        if o is None:
            continue
        print(f"| {s} | {val(o)} | {val(m)} | {val(p)} | {ratio(o, m, bw)} | {ratio(o, p, bw)} |")
EOF
