#!/usr/bin/env bash
# Side-by-side OSU-style point-to-point benchmarks: oxmpi vs MPICH vs Open MPI.
#
#   bench/compare.sh                 # full run, 1 B .. 4 MiB, best of 3 runs
#   RUNS=5 MAX_BYTES=65536 bench/compare.sh
#   OXMPI_TARGET=/elsewhere/target/release NO_BUILD=1 bench/compare.sh
#                                    # use already built oxmpi binaries (mpiexec, examples/)
#
# Builds oxmpi (release) and its Rust examples osu_latency / osu_bw, compiles
# bench/c/osu_*.c with mpicc.mpich (required) and mpicc.openmpi (skipped if absent),
# runs every program on 2 ranks RUNS times, interleaving implementations (run 1 of each,
# then run 2 of each, ...), keeps the best value per size (lowest latency, highest
# bandwidth) and prints markdown tables (bench/compare.py). MPICH and Open MPI are only
# used here for comparison; oxmpi never depends on them.
#
# Artifacts and raw outputs go to bench/build/ (git-ignored); the tables also go to
# bench/build/results.md.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
BUILD="$BENCH_DIR/build"
RAW="$BUILD/raw"
RUNS="${RUNS:-3}"
MAX_BYTES="${MAX_BYTES:-4194304}"
TIMEOUT="${TIMEOUT:-600}"
CFLAGS="${CFLAGS:--O2}"
NP=2

cd "$ROOT"
mkdir -p "$BUILD"
rm -rf "$RAW"
mkdir -p "$RAW"

log() { echo "compare.sh: $*" >&2; }

# ---- build -------------------------------------------------------------------------
OXMPI_TARGET="${OXMPI_TARGET:-$ROOT/target/release}"
if [ -z "${NO_BUILD:-}" ]; then
    log "building oxmpi (release)"
    # --bins too: with --examples alone cargo builds no binary, so no mpiexec on a fresh clone.
    cargo build --release -p oxmpi-run -p oxmpi --bins --examples >&2
fi
OXMPI_MPIEXEC="$OXMPI_TARGET/mpiexec"
OXMPI_EXAMPLES="$OXMPI_TARGET/examples"
for f in "$OXMPI_MPIEXEC" "$OXMPI_EXAMPLES/osu_latency" "$OXMPI_EXAMPLES/osu_bw"; do
    [ -x "$f" ] || { log "error: $f missing (build oxmpi first)"; exit 1; }
done

# Implementations, in table column order: "key|label|launcher". The binary of each
# benchmark is given by program() below.
IMPLS=()
IMPLS+=("oxmpi|oxmpi|$OXMPI_MPIEXEC -n $NP")

# >>> HOOK: oxmpi C ABI ---------------------------------------------------------------
# When oxmpi ships its own C ABI and compiler wrapper (target/oxmpi/bin/mpicc), the very
# same C sources are built with it and run under oxmpi's mpiexec, as column "oxmpi (C)".
# Adjust OXMPI_MPICC / the launcher here if the layout ends up different.
OXMPI_MPICC="${OXMPI_MPICC:-$ROOT/target/oxmpi/bin/mpicc}"
if [ -x "$OXMPI_MPICC" ]; then
    log "compiling C benchmarks with $OXMPI_MPICC (oxmpi C ABI)"
    for b in osu_latency osu_bw; do
        "$OXMPI_MPICC" $CFLAGS -o "$BUILD/$b.oxmpi-c" "$BENCH_DIR/c/$b.c"
    done
    IMPLS+=("oxmpi-c|oxmpi (C)|$OXMPI_MPIEXEC -n $NP")
fi
# <<< HOOK: oxmpi C ABI ---------------------------------------------------------------

if ! command -v mpicc.mpich >/dev/null || ! command -v mpiexec.mpich >/dev/null; then
    log "error: mpicc.mpich / mpiexec.mpich not found (install mpich)"
    exit 1
fi
log "compiling C benchmarks with mpicc.mpich"
for b in osu_latency osu_bw; do
    mpicc.mpich $CFLAGS -o "$BUILD/$b.mpich" "$BENCH_DIR/c/$b.c"
done
IMPLS+=("mpich|MPICH|mpiexec.mpich -n $NP")

if command -v mpicc.openmpi >/dev/null && command -v mpiexec.openmpi >/dev/null; then
    log "compiling C benchmarks with mpicc.openmpi"
    for b in osu_latency osu_bw; do
        mpicc.openmpi $CFLAGS -o "$BUILD/$b.openmpi" "$BENCH_DIR/c/$b.c"
    done
    IMPLS+=("openmpi|Open MPI|mpiexec.openmpi --allow-run-as-root --oversubscribe -n $NP")
else
    log "Open MPI not found: skipping it"
fi

program() { # key bench -> path of the binary
    case "$1" in
        oxmpi) echo "$OXMPI_EXAMPLES/$2" ;;
        oxmpi-c) echo "$BUILD/$2.oxmpi-c" ;;
        *) echo "$BUILD/$2.$1" ;;
    esac
}

# ---- run ---------------------------------------------------------------------------
for run in $(seq 1 "$RUNS"); do
    for bench in osu_latency osu_bw; do
        for impl in "${IMPLS[@]}"; do
            IFS='|' read -r key label launcher <<<"$impl"
            out="$RAW/$bench.$key.$run.txt"
            log "run $run/$RUNS: $bench on $label"
            # shellcheck disable=SC2086 # the launcher is a word list on purpose
            if ! timeout "$TIMEOUT" $launcher "$(program "$key" "$bench")" "$MAX_BYTES" \
                >"$out" 2>"$out.err"; then
                log "warning: $bench on $label (run $run) failed; see $out.err"
                mv "$out" "$out.failed"
            fi
        done
    done
done

# ---- report ------------------------------------------------------------------------
labels=()
for impl in "${IMPLS[@]}"; do
    IFS='|' read -r key label _ <<<"$impl"
    labels+=("$key=$label")
done
python3 "$BENCH_DIR/compare.py" "$RAW" "${labels[@]}" | tee "$BUILD/results.md"
