#!/usr/bin/env bash
# Instructions per one-sided call, oxmpi vs MPICH (and Open MPI if present): rank 0 of
# bench/c/rma_probe.c (2 ranks, MPI_Win_allocate, rank 1 waits in MPI_Barrier) runs
# under callgrind; the inclusive instruction count of each MPI call it repeats is divided
# by the number of calls. Counts do not depend on the machine's load (wall clock does:
# use bench/rma.sh on a quiet machine for that), except where a library waits for its
# target's progress (then its polling loops are counted too: said in the output).
#
#   bench/rma_count.sh                        # every probe op, runs of ITERS=3000 and 6000 calls
#   ONLY="put fop lockonly" NO_BUILD=1 bench/rma_count.sh
#   IMPLS="oxmpi" bench/rma_count.sh          # oxmpi only
#   CG_RANK=1 ONLY=pscw bench/rma_count.sh    # the target's side (post, wait) instead
#   OX=/other/worktree/target/oxmpi NO_BUILD=1 bench/rma_count.sh   # another oxmpi (before/after)
#
# Raw callgrind files in bench/build/raw-rma-count/ (deleted unless KEEP=1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ITERS=${ITERS:-3000}
out=$root/bench/build/raw-rma-count
mkdir -p "$out"
rm -f "$out"/*.cg "$out"/*.txt "$out"/*.err
if [ -z "${NO_BUILD:-}" ]; then
    (cd "$root" && cargo run -q -p xtask -- dist >/dev/null)
fi
command -v valgrind >/dev/null || { echo "rma_count.sh: valgrind is required" >&2; exit 1; }
ox=${OX:-$root/target/oxmpi}
impls=${IMPLS:-"oxmpi mpich openmpi"}
declare -A run
"$ox/bin/mpicc" -O2 -o "$out/probe.oxmpi" "$root/bench/c/rma_probe.c"
run[oxmpi]="$ox/bin/mpiexec -n 2"
if command -v mpicc.mpich >/dev/null; then
    mpicc.mpich -O2 -o "$out/probe.mpich" "$root/bench/c/rma_probe.c"
    run[mpich]="mpiexec.mpich -n 2"
fi
if command -v mpicc.openmpi >/dev/null; then
    mpicc.openmpi -O2 -o "$out/probe.openmpi" "$root/bench/c/rma_probe.c"
    run[openmpi]="mpiexec.openmpi --allow-run-as-root --oversubscribe -n 2"
fi
# Rank CG_RANK (default 0) under callgrind, the other plain.
printf '#!/bin/sh\ncgr=%s\n' "${CG_RANK:-0}" >"$out/rank0.sh"
cat >>"$out/rank0.sh" <<'EOF'
r=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-x}}
cg=$1; shift
if [ "$r" = "$cgr" ]; then
    exec valgrind -q --tool=callgrind --callgrind-out-file="$cg" "$@"
fi
exec "$@"
EOF
chmod +x "$out/rank0.sh"
# op: the calls counted (each made ITERS times).
declare -A calls=(
    [put]="Put Win_flush" [get]="Get Win_flush" [acc]="Accumulate Win_flush"
    [getacc]="Get_accumulate Win_flush" [fop]="Fetch_and_op Win_flush"
    [cas]="Compare_and_swap Win_flush" [lockonly]="Win_lock Win_unlock"
    [lockx]="Win_lock Win_unlock" [lock]="Win_lock Put Win_unlock"
    [lockall]="Win_lock_all Win_unlock_all" [rput]="Rput Wait" [rget]="Rget Wait"
    [racc]="Raccumulate Wait"
    [pscw]="Win_start Put Win_complete Win_post Win_wait"
    [pscwself]="Win_post Win_start Put Win_complete Win_wait"
)
ops=${ONLY:-"put get acc getacc fop cas lockonly lockx lock lockall rput rget racc"}
for op in $ops; do
    for impl in $impls; do
        [ -n "${run[$impl]:-}" ] || continue
        # Two lengths: the lower per-call average is kept (the first call's set-up is
        # spread wider in the longer run; a library that polls for its target's
        # progress polls more in some runs than in others).
        for k in 1 2; do
            cg=$out/$impl.$op.$k.cg
            timeout 900 ${run[$impl]} "$out/rank0.sh" "$cg" "$out/probe.$impl" "$op" $((ITERS * k)) >/dev/null 2>"$out/$impl.$op.err" || {
                echo "rma_count.sh: $impl $op failed (see $out/$impl.$op.err)" >&2
                continue
            }
            callgrind_annotate --inclusive=yes --threshold=100 "$cg" 2>/dev/null >"$out/$impl.$op.$k.txt" || true
        done
    done
done
python3 - "$out" "$ITERS" "$ops" "$impls" <<'EOF'
import re, sys, os
raw, iters, ops, impls = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
calls = {
    "put": "Put Win_flush", "get": "Get Win_flush", "acc": "Accumulate Win_flush",
    "getacc": "Get_accumulate Win_flush", "fop": "Fetch_and_op Win_flush",
    "cas": "Compare_and_swap Win_flush", "lockonly": "Win_lock Win_unlock",
    "lockx": "Win_lock Win_unlock", "lock": "Win_lock Put Win_unlock",
    "lockall": "Win_lock_all Win_unlock_all", "rput": "Rput Wait", "rget": "Rget Wait",
    "racc": "Raccumulate Wait",
    "pscw": "Win_start Put Win_complete Win_post Win_wait",
    "pscwself": "Win_post Win_start Put Win_complete Win_wait",
}
line_re = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+\S*?[:\s]P?MPI_(\w+?)(?:\s|$|\[|')")
def totals(p):
    best = {}
    for line in open(p):
        m = line_re.match(line)
        if m:
            n, f = int(m.group(1).replace(",", "")), m.group(2)
            best[f] = max(best.get(f, 0), n)
    return best
def counts(impl, op):
    p1, p2 = f"{raw}/{impl}.{op}.1.txt", f"{raw}/{impl}.{op}.2.txt"
    if not (os.path.exists(p1) and os.path.exists(p2)):
        return None
    a, b = totals(p1), totals(p2)
    return {f: min(a.get(f, b[f] * 2) * 2, b[f]) for f in b}
names = {"oxmpi": "oxmpi", "mpich": "MPICH", "openmpi": "Open MPI"}
cols = [i for i in impls if any(os.path.exists(f"{raw}/{i}.{o}.2.txt") for o in ops)]
print(f"Instructions per call (callgrind, rank 0, inclusive; the lower per-call average of runs of {iters} and {2 * iters} calls)\n")
print("| op | call | " + " | ".join(names[c] for c in cols) + "".join(f" | {names[c]}/oxmpi" for c in cols if c != "oxmpi") + " |")
print("|---|---|" + "---:|" * (2 * len(cols) - 1))
for op in ops:
    per = {c: counts(c, op) for c in cols}
    for f in calls[op].split():
        v = {c: (per[c] or {}).get(f) for c in cols}
        if all(x is None for x in v.values()):
            continue
        val = lambda x: "-" if x is None else f"{x / (2 * iters):,.0f}"
        row = [val(v[c]) for c in cols]
        for c in cols:
            if c != "oxmpi":
                o, x = v.get("oxmpi"), v[c]
                row.append("-" if not o or x is None else f"{x / o:.1f}")
        print(f"| {op} | MPI_{f} | " + " | ".join(row) + " |")
EOF
[ -n "${KEEP:-}" ] || rm -f "$out"/*.cg
