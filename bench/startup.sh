#!/usr/bin/env bash
# Start-up time and memory per rank: oxmpi vs MPICH vs Open MPI on this host.
#
#   bench/startup.sh                 # (also: bench/compare.sh startup)
#   NS="2 16 64" RUNS=3 bench/startup.sh
#   NO_BUILD=1 bench/startup.sh      # use target/oxmpi as it is (cargo xtask dist)
#
# Start-up: wall-clock time of `mpiexec -n N hello_init` (bench/c/hello_init.c: MPI_Init,
# MPI_Finalize) for N in NS, RUNS passes interleaved over implementations; best and median.
# The issue's goal: 64 ranks on 2 cores in under 2 s.
# Memory: bench/c/footprint.c on N ranks, once per pass: per-rank RSS and PSS (shared
# pages divided among the processes that map them) and the size / resident / proportional
# share of the shared-memory segments each rank maps (the shm transport's rings), after
# MPI_Init and after an 8-byte MPI_Alltoall that touched every pair of ranks; the lowest
# PSS of the passes is kept. Both built with each MPI's mpicc: oxmpi's target/oxmpi/bin/mpicc,
# mpicc.mpich (required), mpicc.openmpi (skipped if absent).
# Tables go to bench/build/results-startup.md and the "startup" section of bench/RESULTS.md
# (RESULTS=0: left alone). Wall-clock times on a loaded machine are noise: compare the
# columns of one run (interleaved), not runs of different days.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
BUILD="$BENCH_DIR/build"
RAW="$BUILD/raw-startup"
NS="${NS:-2 16 64}"
RUNS="${RUNS:-3}"
TIMEOUT="${TIMEOUT:-120}"
CFLAGS="${CFLAGS:--O2}"
cd "$ROOT"
. "$BENCH_DIR/lib.sh"
log() { echo "startup.sh: $*" >&2; }
rm -rf "$RAW"
mkdir -p "$RAW"

if [ -z "${NO_BUILD:-}" ]; then
    log "cargo xtask dist (oxmpi)"
    cargo xtask dist >&2
fi
OX="$ROOT/target/oxmpi/bin"
[ -x "$OX/mpicc" ] && [ -x "$OX/mpiexec" ] || { log "error: $OX/mpicc or mpiexec missing (cargo xtask dist)"; exit 1; }
command -v mpicc.mpich >/dev/null || { log "error: mpicc.mpich not found (install mpich)"; exit 1; }

IMPLS=("oxmpi|oxmpi|$OX/mpicc|$OX/mpiexec" "mpich|MPICH|mpicc.mpich|mpiexec.mpich")
if command -v mpicc.openmpi >/dev/null; then
    IMPLS+=("openmpi|Open MPI|mpicc.openmpi|mpiexec.openmpi --allow-run-as-root --oversubscribe")
fi
for impl in "${IMPLS[@]}"; do
    IFS='|' read -r key _ cc _ <<<"$impl"
    for p in hello_init footprint; do
        $cc $CFLAGS -o "$BUILD/$p.$key" "$BENCH_DIR/c/$p.c"
    done
done

now() { date +%s.%N; }
for run in $(seq 1 "$RUNS"); do
    for n in $NS; do
        for impl in "${IMPLS[@]}"; do
            IFS='|' read -r key label _ launcher <<<"$impl"
            log "run $run/$RUNS: $n ranks, $label ($(cut -d' ' -f1-3 /proc/loadavg))"
            t0=$(now)
            # shellcheck disable=SC2086 # the launcher is a word list on purpose
            if timeout "$TIMEOUT" $launcher -n "$n" "$BUILD/hello_init.$key" >"$RAW/hello.$key.$n.$run.err" 2>&1; then
                echo "$n $(echo "$(now) - $t0" | bc)" >>"$RAW/startup.$key.txt"
            else
                echo "$n failed" >>"$RAW/startup.$key.txt"
            fi
            # shellcheck disable=SC2086
            timeout "$TIMEOUT" $launcher -n "$n" "$BUILD/footprint.$key" >"$RAW/footprint.$key.$n.$run.txt" \
                2>"$RAW/footprint.$key.$n.$run.err" || log "warning: footprint on $n ranks, $label failed"
        done
    done
done

python3 - "$RAW" "$NS" "${IMPLS[@]}" <<'PY' | tee "$BUILD/results-startup.md"
import glob, os, statistics, sys
raw, ns = sys.argv[1], [int(n) for n in sys.argv[2].split()]
impls = [i.split("|")[:2] for i in sys.argv[3:]]
print("### Start-up: `mpiexec -n N` of MPI_Init + MPI_Finalize (s), lower is better\n")
print("Best (median) of the passes; ratio = MPICH / oxmpi on the best (> 1: oxmpi faster). "
      "Goal: 64 ranks in under 2 s on this 2-core machine.\n")
print("| ranks | " + " | ".join(l for _, l in impls) + " | MPICH/oxmpi |")
print("|---:|" + "---:|" * (len(impls) + 1))
t = {}
for key, _ in impls:
    path = os.path.join(raw, f"startup.{key}.txt")
    for line in open(path) if os.path.exists(path) else []:
        n, v = line.split()
        t.setdefault((key, int(n)), []).append(None if v == "failed" else float(v))
for n in ns:
    row, best = [str(n)], {}
    for key, _ in impls:
        v = [x for x in t.get((key, n), []) if x is not None]
        bad = len(t.get((key, n), [])) - len(v)
        best[key] = min(v) if v else None
        row.append(f"{min(v):.2f} ({statistics.median(v):.2f})" + (f", {bad} failed" if bad else "") if v else "failed")
    r = best["mpich"] / best["oxmpi"] if best.get("mpich") and best.get("oxmpi") else None
    row.append(f"{r:.2f}" if r else "—")
    print("| " + " | ".join(row) + " |")
print()
print("### Memory per rank (MiB, mean over ranks; PSS counts a shared page once over its users)\n")
print("`shm` columns: the shared-memory segments each rank maps (mapped size, resident, "
      "proportional share). Lowest PSS of the passes.\n")
print("| ranks | MPI | phase | RSS | PSS | shm mapped | shm resident | shm PSS | RSS max |")
print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
for n in ns:
    for key, label in impls:
        rows = {}
        for path in glob.glob(os.path.join(raw, f"footprint.{key}.{n}.*.txt")):
            for line in open(path):
                p = line.split()
                if len(p) == 9 and not line.startswith("#"):
                    v = [int(x) for x in p[2:]]
                    if p[1] not in rows or v[1] < rows[p[1]][1]:
                        rows[p[1]] = v
        if not rows:
            print(f"| {n} | {label} | — | failed | | | | | |")
        for phase in ("init", "alltoall"):
            if phase in rows:
                v = rows[phase]
                mib = lambda k: f"{k / 1024:.1f}"
                print(f"| {n} | {label} | {phase} | {mib(v[0])} | {mib(v[1])} | {mib(v[2])} | "
                      f"{mib(v[3])} | {mib(v[4])} | {mib(v[5])} |")
print()
PY
results_section startup "Start-up time and memory per rank" "$BUILD/results-startup.md"
