#!/usr/bin/env bash
# Side-by-side OSU-style benchmarks: oxmpi vs MPICH vs Open MPI.
#
#   bench/compare.sh                 # point-to-point: full run, 1 B .. 4 MiB, best of 3 runs
#   bench/compare.sh coll            # collectives (see "coll mode" below)
#   bench/compare.sh rma             # one-sided: bench/rma.sh (oxmpi, MPICH, Open MPI columns)
#   bench/compare.sh tcp             # point-to-point over TCP between two network namespaces
#                                    # (see "tcp mode" below; needs root)
#   bench/compare.sh oversub         # more ranks than cores: allreduce 8 B and barrier on 8
#                                    # and 16 ranks, osu_latency with CPU hogs running
#                                    # (see "oversub mode" below)
#   bench/compare.sh startup         # start-up time and memory per rank: bench/startup.sh
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
# bench/build/results.md. Every mode ends by drawing PNG plots (one line per MPI) into
# bench/plots/ and rewriting README's plots block with their date, machine and commit
# (see plots() below; NO_PLOTS=1 skips them, PLOT_README=0 leaves README alone).
#
# coll mode (`bench/compare.sh coll`): OSU-style bcast, allreduce, allgather, alltoall,
# barrier, reduce, gather, scatter, reduce_scatter, allgatherv, alltoallv and iallreduce
# (crates/oxmpi/examples/osu_coll.rs, bench/c/osu_coll.c) on NPS ranks, sizes
# 8 B, 32 B, ... (powers of 4) up to MAX_BYTES and MAX_BYTES itself; best (lowest) average
# latency of RUNS runs, interleaved per run over rank counts, collectives and
# implementations. Knobs (environment):
#   NPS="2 4 8"  COLLS="bcast allreduce allgather alltoall barrier reduce gather scatter
#                reduce_scatter allgatherv alltoallv iallreduce"  RUNS=3
#   LOOPS_<np>="LOOP LOOP_LARGE"  iterations up to / above 8 KiB (skip = LOOP/5, LOOP_LARGE/10);
#                defaults LOOPS_2="1000 100" (OSU's own), LOOPS_4="500 50", LOOPS_8="500 50",
#                else "200 20".
#   MPICH_LOOPS_<np>  the same for MPICH from 4 ranks on: defaults MPICH_LOOPS_4="20 5",
#                MPICH_LOOPS_8="10 3", else "10 3". On 2 cores 4 and 8 ranks are
#                oversubscribed and MPICH (busy polling, no yield) then takes 10-60 ms per
#                call, so it gets few calls. The others get many: with 10-20 calls a whole
#                timed loop of oxmpi or Open MPI lasts well under one scheduler slice, and
#                where the scheduler happened to switch decided the figure.
#   COLL_TIMEOUT=300  seconds per program run.
#   MIN_BYTES=0  the C programs also time 0-count calls (a 0 B row; bench/c/osu_coll.c's
#                fifth argument); COLLS may name any collective osu_coll.c knows
#                (the i* forms too): the oxmpi (Rust) column only runs the five of
#                RUST_COLLS; the others have the "oxmpi (C)" column.
#   ONLY="oxmpi" run only these implementation keys (oxmpi, mpich, openmpi, oxmpi-c).
#   ALGOS=1      also run oxmpi with every algorithm forced (OXMPI_<OP>_ALGORITHM) and add
#                a per-algorithm table to each collective.
# Raw outputs go to bench/build/raw-coll/, tables to bench/build/results-coll.md.
#
# tcp mode (`bench/compare.sh tcp`, as root): osu_latency and osu_bw with one rank on each of
# two "hosts", the network namespaces oxmpi-h1 and oxmpi-h2 of tests/netns/setup.sh (run here
# with N=2; it is idempotent and the namespaces are left in place, as the tests do), which
# talk TCP over veth legs on the bridge oxmpi-br0 (10.213.0.0/24). Compared: oxmpi (Rust
# examples; also "oxmpi (C)" when target/oxmpi/bin/mpicc exists, `cargo xtask dist`) and
# MPICH. Open MPI is not run. Launchers:
#   oxmpi: mpiexec -n 2 -hosts oxmpi-h1:1,oxmpi-h2:1 --launcher-exec "ip netns exec"
#          --pmi-bind 10.213.0.1 PROG
#   MPICH: mpiexec.mpich -launcher ssh -launcher-exec bench/tcp/netns-ssh -localhost 10.213.0.1
#          -hosts oxmpi-h1,oxmpi-h2 -n 2 -genv UCX_TLS tcp -genv UCX_NET_DEVICES eth0 PROG
#          (netns-ssh stands in for ssh: `ip netns exec HOST sh -c CMD`. -localhost makes the
#          proxies call back to the bridge address instead of this host's name, which
#          resolves to 127.0.0.1. UCX_TLS=tcp is needed: Debian's MPICH is ch4:ucx, and UCX
#          takes the namespaces for one host (same host name and boot id, shared /dev/shm and
#          PID space) and would otherwise use its shared-memory transports (sysv, posix, cma),
#          not the network. MPICH_UCX_ENV="VAR=VALUE ..." replaces these two variables.)
# Before the runs it checks and records in bench/build/raw-tcp/: that each launcher puts
# rank 0 in oxmpi-h1 and rank 1 in oxmpi-h2 (placement.txt), the transport UCX picked
# (mpich-ucx.txt, must be tcp on eth0 only) and oxmpi's TCP connection between the two
# namespace addresses (oxmpi-sockets.txt). Binaries are copied to bench/build/tcp-snap/ first,
# so that rebuilds by other people during the runs cannot change them. RUNS (default 5)
# interleaved passes, TIMEOUT (default 300) s per program run; a run that printed every size
# but then failed or timed out (MPICH sometimes hangs in MPI_Finalize here) keeps its data
# and is listed. Tables with run-to-run noise go to bench/build/results-tcp.md.
# oversub mode (`bench/compare.sh oversub`): the coll mode's runs with NPS="8 16" (on this
# 2-core machine, 4 and 8 ranks per core), COLLS="allreduce barrier" and MAX_BYTES=8 (the
# issue's figures), LOOPS_8="2000 20" LOOPS_16="1000 10" except for MPICH, which busy-polls
# and takes 20-70 ms a call there: MPICH_LOOP (default 200 at 8 ranks, 100 at 16) timed
# calls. (With 200 calls oxmpi's and Open MPI's timed loop lasted 1-2 ms, shorter than one
# scheduler slice, and a single descheduling decided the figure: 7 or 17-20 us for the
# same build.) Then a busy host: osu_latency (8 B)
# on 2 ranks quiet and again with HOGS (default: one per CPU) busy-looping processes, and
# the ratio busy/quiet per implementation (a rank whose peer is descheduled must sleep and
# be woken at once, not stall). Raw outputs: bench/build/raw-oversub/.
#
# Every mode but startup also replaces its section of bench/RESULTS.md (between the lines
# "<!-- compare.sh MODE BEGIN -->" and "<!-- compare.sh MODE END -->", appended at the end
# if missing) with the tables of the run and the date, machine and commit; RESULTS=0
# leaves RESULTS.md alone.
#
# Traffic only ever goes to the namespaces' addresses, the bridge address 10.213.0.1 (the
# launchers' PMI / control ports) and loopback.
set -euo pipefail

MODE="${1:-p2p}"
case "$MODE" in
    p2p | coll | tcp | oversub) ;;
    oversubscribed) MODE=oversub ;;
    rma) exec "$(dirname "${BASH_SOURCE[0]}")/rma.sh" ;;
    startup) exec "$(dirname "${BASH_SOURCE[0]}")/startup.sh" ;;
    *) echo "usage: $0 [p2p|coll|tcp|oversub|rma|startup]" >&2; exit 2 ;;
esac

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
BUILD="$BENCH_DIR/build"
RAW="$BUILD/raw"
[ "$MODE" = coll ] && RAW="$BUILD/raw-coll"
[ "$MODE" = tcp ] && RAW="$BUILD/raw-tcp"
[ "$MODE" = oversub ] && RAW="$BUILD/raw-oversub"
if [ "$MODE" = oversub ]; then
    NPS="${NPS:-8 16}"
    COLLS="${COLLS:-allreduce barrier}"
    MAX_BYTES="${MAX_BYTES:-8}"
    LOOPS_8="${LOOPS_8:-2000 20}"
    LOOPS_16="${LOOPS_16:-1000 10}"
fi
if [ "$MODE" = tcp ]; then RUNS="${RUNS:-5}"; else RUNS="${RUNS:-3}"; fi

# The implementations in the order run $1 takes them: reversed on even runs. This VM's
# cross-vCPU latency changes from one job to the next (MPICH's 8 B latency 0.20 us in one
# job, 0.69 in the next; bench/PROFILE.md coord36), and a fixed order would always give an
# implementation the same neighbour's aftermath; with RUNS >= 2 each one also runs first once.
in_run_order() {
    local run=$1
    shift
    (($#)) || return 0
    if ((run % 2 == 0)); then
        local i
        for ((i = $#; i >= 1; i--)); do printf '%s\n' "${!i}"; done
    else
        printf '%s\n' "$@"
    fi
}
MAX_BYTES="${MAX_BYTES:-4194304}"
if [ "$MODE" = tcp ]; then TIMEOUT="${TIMEOUT:-300}"; else TIMEOUT="${TIMEOUT:-600}"; fi
CFLAGS="${CFLAGS:--O2}"
NP=2

cd "$ROOT"
mkdir -p "$BUILD"
rm -rf "$RAW"
mkdir -p "$RAW"

log() { echo "compare.sh: $*" >&2; }

# results_section MODE TITLE FILE: bench/lib.sh
. "$BENCH_DIR/lib.sh"

# PNG plots (bench/plot.py) into bench/plots/, and README's plots block rewritten with
# their date, machine and commit. matplotlib comes from pip into a virtual environment
# under bench/build/ (never a dependency of the build); without it the plots are skipped.
# NO_PLOTS=1 skips them; PLOT_README=0 leaves README alone.
plots() { # mode
    [ -z "${NO_PLOTS:-}" ] || return 0
    local venv="$BUILD/venv"
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
        log "installing matplotlib into $venv (pip) for the plots"
        if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q matplotlib; } >&2; then
            log "warning: no matplotlib (python3 -m venv / pip failed): no plots"
            return 0
        fi
    fi
    local readme=()
    [ "${PLOT_README:-1}" = 0 ] || readme=(--readme "$ROOT/README.md")
    "$venv/bin/python" "$BENCH_DIR/plot.py" "${readme[@]}" "$1" "$RAW" "$BENCH_DIR/plots" "${labels[@]}" >&2 ||
        log "warning: plot.py failed: no plots"
}

# ---- build -------------------------------------------------------------------------
OXMPI_TARGET="${OXMPI_TARGET:-$ROOT/target/release}"
if [ -z "${NO_BUILD:-}" ]; then
    log "building oxmpi (release)"
    # --bins too: with --examples alone cargo builds no binary, so no mpiexec on a fresh clone.
    cargo build --release -p oxmpi-run -p oxmpi --bins --examples >&2
    # The C ABI and target/oxmpi/bin/mpicc, for the "oxmpi (C)" column: rebuilt every
    # time, or that column would measure whatever library an older build left there.
    log "cargo xtask dist (oxmpi C ABI)"
    cargo xtask dist >&2 || log "warning: cargo xtask dist failed: no \"oxmpi (C)\" column unless an older one exists"
fi
OXMPI_MPIEXEC="$OXMPI_TARGET/mpiexec"
OXMPI_EXAMPLES="$OXMPI_TARGET/examples"
if [ "$MODE" = coll ]; then BENCHES=(osu_coll);
elif [ "$MODE" = oversub ]; then BENCHES=(osu_coll osu_latency);
else BENCHES=(osu_latency osu_bw); fi
for f in "$OXMPI_MPIEXEC" "${BENCHES[@]/#/$OXMPI_EXAMPLES/}"; do
    [ -x "$f" ] || { log "error: $f missing (build oxmpi first)"; exit 1; }
done
OXMPI_C_LDFLAGS=""
OXMPI_MPICC="${OXMPI_MPICC:-$ROOT/target/oxmpi/bin/mpicc}"
if [ "$MODE" = tcp ]; then
    [ "$(id -u)" = 0 ] || { log "error: tcp mode needs root (network namespaces)"; exit 1; }
    command -v ip >/dev/null || { log "error: tcp mode needs iproute2 (ip)"; exit 1; }
    # Snapshot of the binaries under test: other people rebuild target/ concurrently.
    SNAP="$BUILD/tcp-snap"
    rm -rf "$SNAP"
    mkdir -p "$SNAP/examples" "$SNAP/lib"
    cp "$OXMPI_MPIEXEC" "$SNAP/mpiexec"
    for b in "${BENCHES[@]}"; do cp "$OXMPI_EXAMPLES/$b" "$SNAP/examples/$b"; done
    OXMPI_MPIEXEC="$SNAP/mpiexec"
    OXMPI_EXAMPLES="$SNAP/examples"
    oxlib="$(dirname "$OXMPI_MPICC")/../lib"
    if [ -x "$OXMPI_MPICC" ] && [ -e "$oxlib/libmpi.so.0" ]; then
        # Every soname the C programs may load (mpicc links libmpi_abi.so.1 now): a
        # missing one is found in target/ through the second run path, i.e. whatever
        # was rebuilt there since.
        for so in "$oxlib"/libmpi*.so.*; do cp -L "$so" "$SNAP/lib/"; done
        # The first run path wins: the C programs load the snapshot's libmpi.
        OXMPI_C_LDFLAGS="-Wl,-rpath,$SNAP/lib"
    fi
    log "snapshot of the oxmpi binaries of $OXMPI_TARGET in $SNAP"
fi

# Implementations, in table column order: "key|label|launcher" (the launcher without
# its "-n NP", added at run time). The binary of each benchmark is given by program() below.
IMPLS=()
IMPLS+=("oxmpi|oxmpi|$OXMPI_MPIEXEC")

# >>> HOOK: oxmpi C ABI ---------------------------------------------------------------
# When oxmpi ships its own C ABI and compiler wrapper (target/oxmpi/bin/mpicc), the very
# same C sources are built with it and run under oxmpi's mpiexec, as column "oxmpi (C)".
# Adjust OXMPI_MPICC / the launcher here if the layout ends up different.
if [ -x "$OXMPI_MPICC" ]; then
    log "compiling C benchmarks with $OXMPI_MPICC (oxmpi C ABI)"
    oxmpi_c_ok=1
    for b in "${BENCHES[@]}"; do
        if ! "$OXMPI_MPICC" $CFLAGS $OXMPI_C_LDFLAGS -o "$BUILD/$b.oxmpi-c" "$BENCH_DIR/c/$b.c" \
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

if [ "$MODE" = tcp ]; then
    log "tcp mode: Open MPI is not run"
elif command -v mpicc.openmpi >/dev/null && command -v mpiexec.openmpi >/dev/null; then
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

# ---- tcp mode: two network namespaces, run and report --------------------------------
if [ "$MODE" = tcp ]; then
    NS1=oxmpi-h1 NS2=oxmpi-h2 BRIDGE_IP=10.213.0.1 IP1=10.213.0.11 IP2=10.213.0.12
    MPICH_UCX_ENV="${MPICH_UCX_ENV:-UCX_TLS=tcp UCX_NET_DEVICES=eth0}"
    "$ROOT/tests/netns/setup.sh" 2 >&2
    mpich_genv=()
    for kv in $MPICH_UCX_ENV; do mpich_genv+=(-genv "${kv%%=*}" "${kv#*=}"); done
    launch() { # key PROGRAM ARGS... : one rank in each namespace, at most $LT (default $TIMEOUT) s
        local key=$1
        shift
        case "$key" in
            oxmpi | oxmpi-c)
                timeout "${LT:-$TIMEOUT}" "$OXMPI_MPIEXEC" -n 2 -hosts "$NS1:1,$NS2:1" --launcher-exec "ip netns exec" \
                    --pmi-bind "$BRIDGE_IP" "$@" ;;
            mpich)
                timeout "${LT:-$TIMEOUT}" mpiexec.mpich -launcher ssh -launcher-exec "$BENCH_DIR/tcp/netns-ssh" \
                    -localhost "$BRIDGE_IP" -hosts "$NS1,$NS2" -n 2 "${mpich_genv[@]}" "$@" ;;
        esac
    }
    # Preflight 1: each launcher puts rank 0 in oxmpi-h1 and rank 1 in oxmpi-h2.
    where='echo "rank ${PMI_RANK:-?} netns=$(ip netns identify) eth0=$(ip -4 -o addr show dev eth0 | awk "{print \$4}")"'
    : >"$RAW/placement.txt"
    for key in oxmpi mpich; do
        got="$(LT=60 launch "$key" /bin/sh -c "$where" | sort)" || true
        printf '%s:\n%s\n' "$key" "$got" >>"$RAW/placement.txt"
        if [ "$got" != "rank 0 netns=$NS1 eth0=$IP1/24"$'\n'"rank 1 netns=$NS2 eth0=$IP2/24" ]; then
            log "error: $key did not place one rank in each namespace:"$'\n'"$got"
            exit 1
        fi
    done
    log "placement ok: rank 0 in $NS1 ($IP1), rank 1 in $NS2 ($IP2), both launchers"
    # Preflight 2: the transport UCX picked for MPICH (its INFO lines name the lanes).
    LT=60 launch mpich -genv UCX_LOG_LEVEL info "$(program mpich osu_latency)" 8 >"$RAW/mpich-ucx.txt" 2>&1 || true
    if ! grep -q 'ep_cfg.*tcp/eth0' "$RAW/mpich-ucx.txt"; then
        log "warning: MPICH/UCX lanes are not tcp/eth0 (MPICH_UCX_ENV='$MPICH_UCX_ENV'):"
        grep 'ep_cfg' "$RAW/mpich-ucx.txt" | sed 's/^.*ep_cfg/  ep_cfg/' | sort -u >&2 || true
    elif grep 'ep_cfg' "$RAW/mpich-ucx.txt" | grep -qv 'tcp/eth0'; then
        log "warning: MPICH/UCX also uses other lanes than tcp/eth0; see $RAW/mpich-ucx.txt"
    else
        log "MPICH/UCX transport: tcp/eth0 only"
    fi
    # Preflight 3: oxmpi's connection between the namespace addresses, seen from oxmpi-h1.
    LT=120 launch oxmpi "$(program oxmpi osu_bw)" "$MAX_BYTES" >/dev/null 2>&1 &
    pf=$!
    : >"$RAW/oxmpi-sockets.txt"
    for _ in $(seq 1 50); do
        sleep 0.2
        ip netns exec "$NS1" ss -tn state established >"$RAW/oxmpi-sockets.txt" 2>&1 || true
        grep -q "$IP2:" "$RAW/oxmpi-sockets.txt" && break
    done
    wait "$pf" || log "warning: oxmpi preflight run failed"
    if grep -q "$IP1:.*$IP2:\|$IP2:.*$IP1:" "$RAW/oxmpi-sockets.txt"; then
        log "oxmpi: TCP connection $IP1 <-> $IP2 seen"
    else
        log "warning: no oxmpi TCP connection seen between $IP1 and $IP2 (see $RAW/oxmpi-sockets.txt)"
    fi
    : >"$RAW/load.txt"
    for run in $(seq 1 "$RUNS"); do
        for bench in osu_latency osu_bw; do
            mapfile -t order < <(in_run_order "$run" "${IMPLS[@]}")
            for impl in "${order[@]}"; do
                IFS='|' read -r key label _ <<<"$impl"
                [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $key "* ]] || continue
                out="$RAW/$bench.$key.$run.txt"
                log "run $run/$RUNS: $bench on $label over TCP ($(cut -d' ' -f1-3 /proc/loadavg))"
                echo "$run $bench $key $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW/load.txt"
                rc=0
                launch "$key" "$(program "$key" "$bench")" "$MAX_BYTES" >"$out" 2>"$out.err" || rc=$?
                if [ "$rc" != 0 ] && grep -q "^$MAX_BYTES[[:space:]]" "$out"; then
                    # Every size measured, then no clean exit (seen: MPICH hanging in
                    # MPI_Finalize over UCX tcp). The numbers stand; the exit is reported.
                    echo "exit status $rc after printing every size (124: killed after ${TIMEOUT} s)" >"$out.exit"
                    log "warning: $bench on $label (run $run): all sizes done, then exit status $rc; data kept"
                elif [ "$rc" != 0 ]; then
                    log "warning: $bench on $label (run $run) failed or timed out; see $out.err"
                    mv "$out" "$out.failed"
                fi
            done
        done
    done
    python3 "$BENCH_DIR/compare.py" --load "$RAW/load.txt" "$RAW" "${labels[@]}" | tee "$BUILD/results-tcp.md"
    results_section tcp "Point-to-point over TCP between two network namespaces" "$BUILD/results-tcp.md"
    plots tcp
    exit 0
fi

# ---- coll mode: run and report -------------------------------------------------------
if [ "$MODE" = coll ] || [ "$MODE" = oversub ]; then
    NPS="${NPS:-2 4 8}"
    # The C probe (bench/c/osu_coll.c) knows every OSU collective; the Rust example
    # (oxmpi column) only these five: for the others the oxmpi column is the C one.
    RUST_COLLS="bcast allreduce allgather alltoall barrier"
    # Default: the five, the other blocking OSU collectives and one non-blocking form.
    COLLS="${COLLS:-$RUST_COLLS reduce gather scatter reduce_scatter allgatherv alltoallv iallreduce}"
    TIMEOUT="${COLL_TIMEOUT:-300}" # per program run
    # MIN_BYTES=0: the C probes (bench/c/osu_coll.c) also time 0-count calls (a 0-byte
    # row); the Rust example takes no such argument.
    declare -A min_arg=()
    if [ -n "${MIN_BYTES:-}" ]; then
        for k in oxmpi-c mpich openmpi; do min_arg[$k]="$MIN_BYTES"; done
    fi
    algorithms() { # collective -> oxmpi algorithm names (crates/oxmpi-core/src/coll/<op>/mod.rs)
        case "$1" in
            bcast) echo "binomial scatter_ring chain shm" ;;
            allreduce) echo "recursive_doubling ring rabenseifner reduce_bcast shm" ;;
            allgather) echo "ring recursive_doubling bruck shm" ;;
            barrier) echo "dissemination shm" ;;
            alltoall) echo "pairwise bruck linear" ;;
        esac
    }
    : >"$RAW/load.txt"
    for run in $(seq 1 "$RUNS"); do
        for np in $NPS; do
            loops_var="LOOPS_$np"
            case "$np" in 2) dflt="1000 100" ;; 4 | 8) dflt="500 50" ;; *) dflt="200 20" ;; esac
            read -r loop loop_large <<<"${!loops_var:-$dflt}"
            mpich_loops_var="MPICH_LOOPS_$np"
            case "$np" in 2) mdflt="$loop $loop_large" ;; 4) mdflt="20 5" ;; *) mdflt="10 3" ;; esac
            read -r mpich_loop mpich_loop_large <<<"${!mpich_loops_var:-$mdflt}"
            for coll in $COLLS; do
                runs=()
                for impl in "${IMPLS[@]}"; do # ONLY="oxmpi mpich": keep these keys only
                    [ "${impl%%|*}" != oxmpi ] || [[ " $RUST_COLLS " == *" $coll "* ]] || continue
                    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" ${impl%%|*} "* ]] && runs+=("$impl")
                done
                if [ -n "${ALGOS:-}" ]; then
                    for alg in $(algorithms "$coll"); do
                        runs+=("oxalg-$alg|oxmpi $alg|env OXMPI_${coll^^}_ALGORITHM=$alg $OXMPI_MPIEXEC")
                    done
                fi
                mapfile -t runs < <(in_run_order "$run" "${runs[@]}")
                for impl in "${runs[@]}"; do
                    IFS='|' read -r key label launcher <<<"$impl"
                    out="$RAW/${coll}_np$np.$key.$run.txt"
                    l="$loop" ll="$loop_large" # MPICH busy-polls when oversubscribed: fewer calls
                    if [ "$MODE" = oversub ] && [ "$key" = mpich ]; then
                        l="${MPICH_LOOP:-$((np > 8 ? 100 : 200))}"
                    elif [ "$key" = mpich ]; then
                        l="$mpich_loop" ll="$mpich_loop_large"
                    fi
                    log "run $run/$RUNS: $coll on $np ranks, $label ($(cut -d' ' -f1-3 /proc/loadavg))"
                    echo "$run $np $coll $key $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW/load.txt"
                    # shellcheck disable=SC2086 # the launcher is a word list on purpose
                    if ! timeout "$TIMEOUT" $launcher -n "$np" "$(program "${key}" osu_coll)" "$coll" \
                        "$MAX_BYTES" "$l" "$ll" ${min_arg[$key]:-} >"$out" 2>"$out.err"; then
                        log "warning: $coll on $np ranks, $label (run $run) failed; see $out.err"
                        mv "$out" "$out.failed"
                    fi
                done
            done
        done
    done
    if [ "$MODE" = oversub ]; then
        # A busy host: osu_latency 8 B on 2 ranks, quiet, then with HOGS busy loops.
        HOGS="${HOGS:-$(nproc)}"
        for run in $(seq 1 "$RUNS"); do
            for phase in quiet busy; do
                hogs=()
                if [ "$phase" = busy ]; then
                    for _ in $(seq 1 "$HOGS"); do (while :; do :; done) & hogs+=($!); done
                fi
                mapfile -t order < <(in_run_order "$run" "${IMPLS[@]}")
                for impl in "${order[@]}"; do
                    IFS='|' read -r key label launcher <<<"$impl"
                    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $key "* ]] || continue
                    out="$RAW/hog-$phase.$key.$run.txt"
                    log "run $run/$RUNS: osu_latency 8 B, $label, $phase ($HOGS hogs when busy)"
                    # shellcheck disable=SC2086 # the launcher is a word list on purpose
                    timeout "$TIMEOUT" $launcher -n 2 "$(program "$key" osu_latency)" 8 >"$out" 2>"$out.err" ||
                        { log "warning: osu_latency ($label, $phase) failed"; mv "$out" "$out.failed"; }
                done
                for h in "${hogs[@]}"; do kill "$h" 2>/dev/null || true; done
                for h in "${hogs[@]}"; do wait "$h" 2>/dev/null || true; done
            done
        done
    fi
    python3 "$BENCH_DIR/compare.py" --coll "$RAW" "${labels[@]}" | tee "$BUILD/results-$MODE.md"
    if [ "$MODE" = oversub ]; then
        python3 "$BENCH_DIR/compare.py" --hog "$RAW" "${labels[@]}" | tee -a "$BUILD/results-$MODE.md"
        results_section oversub "More ranks than cores, and a busy host" "$BUILD/results-$MODE.md"
    else
        results_section coll "Collectives" "$BUILD/results-$MODE.md"
    fi
    plots "$MODE"
    exit 0
fi

# ---- run ---------------------------------------------------------------------------
for run in $(seq 1 "$RUNS"); do
    for bench in osu_latency osu_bw; do
        mapfile -t order < <(in_run_order "$run" "${IMPLS[@]}")
        for impl in "${order[@]}"; do
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
results_section p2p "Point-to-point, shared memory" "$BUILD/results.md"
plots p2p
