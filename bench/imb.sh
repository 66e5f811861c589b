#!/usr/bin/env bash
# IMB-MPI1 on a quiet and on a busy host (one CPU hog, `yes > /dev/null`, per core), oxmpi
# against MPICH, printing each implementation's busy/quiet ratio (the issue's goal: <= 2).
#
#   bench/imb.sh [IMB_SRC]            # IMB_SRC: a directory with IMB's legacy C sources
#                                     # (intel/mpi-benchmarks' src_c: Makefile, IMB*.c/h)
#   ROUNDS=5 bench/imb.sh /tmp/imb-src
#   BASE_DIST=/elsewhere/target/oxmpi bench/imb.sh   # also a second oxmpi build ("base")
#
# Fetches nothing. With IMB_SRC, IMB-MPI1 is built from a copy of it (`make TARGET=MPI1`)
# once with oxmpi's mpicc and once with mpicc.mpich. Without it, bench/c/imb_lite.c (the
# same benchmark shapes and methodology, written here) stands in, with the same arguments.
# Each round runs every implementation quiet, then busy, back to back (interleaved), so
# the load of the machine is alike for all. Printed per implementation: the medians over
# the rounds of the whole run's wall time and of the sum of the timed loops (IMB's
# repetitions x t_avg over all rows), quiet and busy, and their ratios; the raw outputs
# stay in $WORK. Keep busy runs short: they disturb everything else on the host.
#
# Knobs (environment):
#   ARGS     IMB arguments (default: -npmin 2 -msglog 0:16 -time 1 PingPong Sendrecv
#            Exchange Allreduce Bcast Barrier; imb_lite ignores -npmin)
#   NP=2  ROUNDS=3  TIMEOUT=120 (s per run)  HOGS=$(nproc)
#   OXMPI_DIST  oxmpi's C toolchain (default target/oxmpi: bin/mpicc, bin/mpiexec)
#   BASE_DIST   a second oxmpi toolchain to compare against ("base" column)
#   IMPLS       which to run, from "oxmpi base mpich" (default: all that exist)
#   WORK        scratch directory (default /tmp/imb-work.$USER)
#   NICE        e.g. -20 (root): the job and the hogs run at this nice level, so that other
#               work on the host (builds) weighs little and each core holds one rank and one
#               hog of equal weight, the issue's case; empty (default): plain
#   MPICH is run plainly: never under chrt (it busy-polls and would starve the host).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$BENCH_DIR")"
IMB_SRC="${1:-}"
ARGS="${ARGS:--npmin 2 -msglog 0:16 -time 1 PingPong Sendrecv Exchange Allreduce Bcast Barrier}"
NP="${NP:-2}"
ROUNDS="${ROUNDS:-3}"
TIMEOUT="${TIMEOUT:-120}"
HOGS="${HOGS:-$(nproc)}"
OXMPI_DIST="${OXMPI_DIST:-$ROOT/target/oxmpi}"
BASE_DIST="${BASE_DIST:-}"
WORK="${WORK:-/tmp/imb-work.${USER:-$(id -un)}}"
NICE="${NICE:-}"
NICE_CMD=()
[ -n "$NICE" ] && NICE_CMD=(nice -n "$NICE")
mkdir -p "$WORK"
log() { echo "imb.sh: $*" >&2; }

# key -> "mpicc|launcher"
declare -A TOOLS
[ -x "$OXMPI_DIST/bin/mpicc" ] && TOOLS[oxmpi]="$OXMPI_DIST/bin/mpicc|$OXMPI_DIST/bin/mpiexec -n $NP"
[ -n "$BASE_DIST" ] && [ -x "$BASE_DIST/bin/mpicc" ] &&
    TOOLS[base]="$BASE_DIST/bin/mpicc|$BASE_DIST/bin/mpiexec -n $NP"
command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null &&
    TOOLS[mpich]="mpicc.mpich|mpiexec.mpich -n $NP"
IMPLS="${IMPLS:-oxmpi base mpich}"
RUN=()
for k in $IMPLS; do [ -n "${TOOLS[$k]:-}" ] && RUN+=("$k"); done
[ "${#RUN[@]}" -gt 0 ] || { log "error: no MPI found (cargo xtask dist for oxmpi; mpich)"; exit 1; }

# Builds the benchmark for implementation $1 into $WORK/bin/$1.
build() {
    local key=$1 cc=${TOOLS[$1]%%|*}
    mkdir -p "$WORK/bin"
    if [ -n "$IMB_SRC" ]; then
        [ -f "$IMB_SRC/IMB.c" ] || { log "error: $IMB_SRC has no IMB.c"; exit 1; }
        rm -rf "$WORK/src-$key"
        cp -a "$IMB_SRC" "$WORK/src-$key"
        make -C "$WORK/src-$key" -f Makefile TARGET=MPI1 CC="$cc" CFLAGS="-O2" \
            >"$WORK/build-$key.log" 2>&1 || { log "error: IMB build with $cc failed: $WORK/build-$key.log"; exit 1; }
        cp "$WORK/src-$key/IMB-MPI1" "$WORK/bin/$key"
    else
        "$cc" -O2 -o "$WORK/bin/$key" "$BENCH_DIR/c/imb_lite.c" >"$WORK/build-$key.log" 2>&1 ||
            { log "error: imb_lite build with $cc failed: $WORK/build-$key.log"; exit 1; }
    fi
}
for k in "${RUN[@]}"; do build "$k"; done
log "built $([ -n "$IMB_SRC" ] && echo IMB-MPI1 || echo imb_lite) for: ${RUN[*]}"

HOG_PIDS=()
stop_hogs() {
    local p
    for p in "${HOG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${HOG_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    HOG_PIDS=()
}
trap stop_hogs EXIT
start_hogs() {
    local i
    for ((i = 0; i < HOGS; i++)); do
        "${NICE_CMD[@]}" yes >/dev/null &
        HOG_PIDS+=($!)
    done
}

# The sum of the timed loops of one output, ms: imb_lite prints it; for IMB, the
# repetitions x the time column of every data row (t_avg where there is one, PingPong's
# and PingPing's t[usec] otherwise; Barrier's rows have no #bytes column).
loops_ms() {
    awk '
        /^TOTAL_LOOPS_MS/ { print $2; found = 1; exit }
        /^# Benchmarking/ { bench = $3 }
        /^ *[0-9]+( +[0-9.]+)+ *$/ {
            if (bench == "Barrier") { reps = $1; t = $4 }
            else if (NF >= 5) { reps = $2; t = $5 }
            else { reps = $2; t = $3 }
            sum += reps * t / 1000
        }
        END { if (!found) printf "%.1f\n", sum }' "$1"
}

# One run: $1 key, $2 quiet|busy, $3 round. Appends "key mode wall_s loops_ms" to $WORK/runs.
run_one() {
    local key=$1 mode=$2 round=$3 out="$WORK/out-$1-$2-$3.txt" t0 t1 rc=0
    [ "$mode" = busy ] && start_hogs
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout "$TIMEOUT" "${NICE_CMD[@]}" ${TOOLS[$key]#*|} "$WORK/bin/$key" $ARGS >"$out" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    [ "$mode" = busy ] && stop_hogs
    local wall
    wall=$(echo "$t1 - $t0" | bc)
    [ "$rc" = 0 ] || { log "warning: $key $mode round $round exited $rc (see $out)"; wall="$wall!"; }
    echo "$key $mode $wall $(loops_ms "$out")" >>"$WORK/runs"
    log "round $round $key $mode: ${wall} s, loops $(loops_ms "$out") ms"
}

: >"$WORK/runs"
for ((r = 1; r <= ROUNDS; r++)); do
    for k in "${RUN[@]}"; do
        run_one "$k" quiet "$r"
        run_one "$k" busy "$r"
    done
done

python3 - "$WORK/runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
keys = list(dict.fromkeys(r[0] for r in rows))
def med(key, mode, col):
    vals = [float(r[col].rstrip("!")) for r in rows if r[0] == key and r[1] == mode]
    return statistics.median(vals) if vals else float("nan")
print(f"load average now: {open('/proc/loadavg').read().split()[:3]}")
print("| MPI | wall quiet s | wall busy s | wall busy/quiet | loops quiet ms | loops busy ms | loops busy/quiet |")
print("|---|---:|---:|---:|---:|---:|---:|")
for k in keys:
    wq, wb, lq, lb = med(k, "quiet", 2), med(k, "busy", 2), med(k, "quiet", 3), med(k, "busy", 3)
    print(f"| {k} | {wq:.2f} | {wb:.2f} | {wb / wq:.2f} | {lq:.0f} | {lb:.0f} | {lb / lq:.2f} |")
PY
