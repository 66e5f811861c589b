#!/usr/bin/env bash
# Side-by-side OSU-style benchmarks: oxmpi vs MPICH vs Open MPI.
#
#   bench/compare.sh                 # point-to-point: full run, 1 B .. 4 MiB, best of 3 runs
#   bench/compare.sh coll            # collectives (see "coll mode" below)
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
#
# coll mode (`bench/compare.sh coll`): OSU-style bcast, allreduce, allgather, alltoall and
# barrier (crates/oxmpi/examples/osu_coll.rs, bench/c/osu_coll.c) on NPS ranks, sizes
# 8 B, 32 B, ... (powers of 4) up to MAX_BYTES and MAX_BYTES itself; best (lowest) average
# latency of RUNS runs, interleaved per run over rank counts, collectives and
# implementations. Knobs (environment):
#   NPS="2 4 8"  COLLS="bcast allreduce allgather alltoall barrier"  RUNS=3
#   LOOPS_<np>="LOOP LOOP_LARGE"  iterations up to / above 8 KiB (skip = LOOP/5, LOOP_LARGE/10);
#                defaults LOOPS_2="500 50", LOOPS_4="20 5", LOOPS_8="10 3", else "20 5".
#                Few iterations on 4 and 8 ranks: on 2 cores those are oversubscribed and
#                MPICH (busy polling, no yield) then takes 10-60 ms per call.
#   COLL_TIMEOUT=300  seconds per program run.
#   ONLY="oxmpi" run only these implementation keys (oxmpi, mpich, openmpi, oxmpi-c).
#   ALGOS=1      also run oxmpi with every algorithm forced (OXMPI_<OP>_ALGORITHM) and add
#                a per-algorithm table to each collective.
# Raw outputs go to bench/build/raw-coll/, tables to bench/build/results-coll.md.
set -euo pipefail

MODE="${1:-p2p}"
case "$MODE" in
    p2p | coll) ;;
    *) echo "usage: $0 [p2p|coll]" >&2; exit 2 ;;
esac

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
BUILD="$BENCH_DIR/build"
RAW="$BUILD/raw"
[ "$MODE" = coll ] && RAW="$BUILD/raw-coll"
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
if [ "$MODE" = coll ]; then BENCHES=(osu_coll); else BENCHES=(osu_latency osu_bw); fi
for f in "$OXMPI_MPIEXEC" "${BENCHES[@]/#/$OXMPI_EXAMPLES/}"; do
    [ -x "$f" ] || { log "error: $f missing (build oxmpi first)"; exit 1; }
done

# Implementations, in table column order: "key|label|launcher" (the launcher without
# its "-n NP", added at run time). The binary of each benchmark is given by program() below.
IMPLS=()
IMPLS+=("oxmpi|oxmpi|$OXMPI_MPIEXEC")

# >>> HOOK: oxmpi C ABI ---------------------------------------------------------------
# When oxmpi ships its own C ABI and compiler wrapper (target/oxmpi/bin/mpicc), the very
# same C sources are built with it and run under oxmpi's mpiexec, as column "oxmpi (C)".
# Adjust OXMPI_MPICC / the launcher here if the layout ends up different.
OXMPI_MPICC="${OXMPI_MPICC:-$ROOT/target/oxmpi/bin/mpicc}"
if [ -x "$OXMPI_MPICC" ]; then
    log "compiling C benchmarks with $OXMPI_MPICC (oxmpi C ABI)"
    oxmpi_c_ok=1
    for b in "${BENCHES[@]}"; do
        if ! "$OXMPI_MPICC" $CFLAGS -o "$BUILD/$b.oxmpi-c" "$BENCH_DIR/c/$b.c" \
            >"$BUILD/$b.oxmpi-c.log" 2>&1; then
            log "warning: $b does not build with the oxmpi C ABI yet (see $BUILD/$b.oxmpi-c.log);" \
                "no \"oxmpi (C)\" column"
            oxmpi_c_ok=
        fi
    done
    [ -n "$oxmpi_c_ok" ] && IMPLS+=("oxmpi-c|oxmpi (C)|$OXMPI_MPIEXEC")
fi
# <<< HOOK: oxmpi C ABI ---------------------------------------------------------------

if ! command -v mpicc.mpich >/dev/null || ! command -v mpiexec.mpich >/dev/null; then
    log "error: mpicc.mpich / mpiexec.mpich not found (install mpich)"
    exit 1
fi
log "compiling C benchmarks with mpicc.mpich"
for b in "${BENCHES[@]}"; do
    mpicc.mpich $CFLAGS -o "$BUILD/$b.mpich" "$BENCH_DIR/c/$b.c"
done
IMPLS+=("mpich|MPICH|mpiexec.mpich")

if command -v mpicc.openmpi >/dev/null && command -v mpiexec.openmpi >/dev/null; then
    log "compiling C benchmarks with mpicc.openmpi"
    for b in "${BENCHES[@]}"; do
        mpicc.openmpi $CFLAGS -o "$BUILD/$b.openmpi" "$BENCH_DIR/c/$b.c"
    done
    IMPLS+=("openmpi|Open MPI|mpiexec.openmpi --allow-run-as-root --oversubscribe")
else
    log "Open MPI not found: skipping it"
fi

program() { # key bench -> path of the binary
    case "$1" in
        oxmpi | oxalg-*) echo "$OXMPI_EXAMPLES/$2" ;;
        oxmpi-c) echo "$BUILD/$2.oxmpi-c" ;;
        *) echo "$BUILD/$2.$1" ;;
    esac
}

labels=()
for impl in "${IMPLS[@]}"; do
    IFS='|' read -r key label _ <<<"$impl"
    labels+=("$key=$label")
done

# ---- coll mode: run and report -------------------------------------------------------
if [ "$MODE" = coll ]; then
    NPS="${NPS:-2 4 8}"
    COLLS="${COLLS:-bcast allreduce allgather alltoall barrier}"
    TIMEOUT="${COLL_TIMEOUT:-300}" # per program run
    algorithms() { # collective -> oxmpi algorithm names (crates/oxmpi-core/src/coll/<op>/mod.rs)
        case "$1" in
            bcast) echo "binomial scatter_ring chain" ;;
            allreduce) echo "recursive_doubling ring rabenseifner reduce_bcast" ;;
            allgather) echo "ring recursive_doubling bruck" ;;
            alltoall) echo "pairwise bruck linear" ;;
        esac
    }
    : >"$RAW/load.txt"
    for run in $(seq 1 "$RUNS"); do
        for np in $NPS; do
            loops_var="LOOPS_$np"
            case "$np" in 2) dflt="500 50" ;; 4) dflt="20 5" ;; 8) dflt="10 3" ;; *) dflt="20 5" ;; esac
            read -r loop loop_large <<<"${!loops_var:-$dflt}"
            for coll in $COLLS; do
                runs=()
                for impl in "${IMPLS[@]}"; do # ONLY="oxmpi mpich": keep these keys only
                    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" ${impl%%|*} "* ]] && runs+=("$impl")
                done
                if [ -n "${ALGOS:-}" ]; then
                    for alg in $(algorithms "$coll"); do
                        runs+=("oxalg-$alg|oxmpi $alg|env OXMPI_${coll^^}_ALGORITHM=$alg $OXMPI_MPIEXEC")
                    done
                fi
                for impl in "${runs[@]}"; do
                    IFS='|' read -r key label launcher <<<"$impl"
                    out="$RAW/${coll}_np$np.$key.$run.txt"
                    log "run $run/$RUNS: $coll on $np ranks, $label ($(cut -d' ' -f1-3 /proc/loadavg))"
                    echo "$run $np $coll $key $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW/load.txt"
                    # shellcheck disable=SC2086 # the launcher is a word list on purpose
                    if ! timeout "$TIMEOUT" $launcher -n "$np" "$(program "${key}" osu_coll)" "$coll" \
                        "$MAX_BYTES" "$loop" "$loop_large" >"$out" 2>"$out.err"; then
                        log "warning: $coll on $np ranks, $label (run $run) failed; see $out.err"
                        mv "$out" "$out.failed"
                    fi
                done
            done
        done
    done
    python3 "$BENCH_DIR/compare.py" --coll "$RAW" "${labels[@]}" | tee "$BUILD/results-coll.md"
    exit 0
fi

# ---- run ---------------------------------------------------------------------------
for run in $(seq 1 "$RUNS"); do
    for bench in osu_latency osu_bw; do
        for impl in "${IMPLS[@]}"; do
            IFS='|' read -r key label launcher <<<"$impl"
            out="$RAW/$bench.$key.$run.txt"
            log "run $run/$RUNS: $bench on $label"
            # shellcheck disable=SC2086 # the launcher is a word list on purpose
            if ! timeout "$TIMEOUT" $launcher -n "$NP" "$(program "$key" "$bench")" "$MAX_BYTES" \
                >"$out" 2>"$out.err"; then
                log "warning: $bench on $label (run $run) failed; see $out.err"
                mv "$out" "$out.failed"
            fi
        done
    done
done

# ---- report ------------------------------------------------------------------------
python3 "$BENCH_DIR/compare.py" "$RAW" "${labels[@]}" | tee "$BUILD/results.md"
