#!/usr/bin/env python3
"""Turns the raw outputs of bench/compare.sh into markdown tables.

    compare.py RAW_DIR KEY=LABEL [KEY=LABEL ...]
    compare.py --coll RAW_DIR KEY=LABEL [KEY=LABEL ...]     (bench/compare.sh coll)
    compare.py --load LOAD_TXT RAW_DIR KEY=LABEL [...]      (bench/compare.sh tcp)
    compare.py --hog RAW_DIR KEY=LABEL [...]                (bench/compare.sh oversub)

RAW_DIR holds <bench>.<key>.<run>.txt files in OSU format ('#' header lines, then
"size value" rows). For each implementation the best value per size over the runs is
kept: the lowest latency, the highest bandwidth. Columns follow the KEY=LABEL order.
The ratio column compares oxmpi (Rust API) with MPICH, oriented so that > 1 means oxmpi
is better: latency MPICH/oxmpi, bandwidth oxmpi/MPICH.

--coll: RAW_DIR holds <coll>_np<N>.<key>.<run>.txt files (osu_coll output: "size avg min
max iterations" rows). Per collective and rank count, the lowest average latency over the
runs is kept; ratio = MPICH / oxmpi (> 1: oxmpi faster). Files of keys oxalg-<name>
(oxmpi with OXMPI_<OP>_ALGORITHM=<name>) add a per-algorithm table. Also prints the
run-to-run spread (noise) and the failed runs (*.failed, VALIDATION FAILED).

Point-to-point also prints the message rate (osu_mbw_mr's figure for one pair: osu_bw's
windows of 64 non-blocking sends, messages/us = MB/s / size) for 1 B .. 256 B, with the
issue's goal (>= 1.5x MPICH's), and, where an "oxmpi (C)" column exists, its ratios too.

--hog: RAW_DIR holds hog-quiet.<key>.<run>.txt and hog-busy.<key>.<run>.txt (osu_latency
8 B on 2 ranks without and with CPU hogs); prints best and median latency per phase and
the slowdown busy/quiet per implementation.

--load LOAD_TXT (point-to-point): also print the run-to-run spread per implementation, the
1-minute load average at the program starts (LOAD_TXT lines: "run bench key load1 load5
load15") and the failed runs.
"""
import glob
import os
import statistics
import sys

BENCHES = [
    # name, title, unit, best-of function, ratio (ox, mpich) -> float
    ("osu_latency", "Latency (us), lower is better", "us", min,
     "MPICH/oxmpi (>1: oxmpi faster)", lambda ox, ref: ref / ox),
    ("osu_bw", "Bandwidth (MB/s), higher is better", "MB/s", max,
     "oxmpi/MPICH (>1: oxmpi faster)", lambda ox, ref: ox / ref),
]


def parse(path):
    rows = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) < 2:
                continue
            try:
                rows[int(parts[0])] = float(parts[1])
            except ValueError:
                continue
    return rows


def all_runs(raw, bench, key):
    runs = sorted(glob.glob(os.path.join(raw, f"{bench}.{key}.*.txt")))
    merged = {}
    for path in runs:
        for size, value in parse(path).items():
            merged.setdefault(size, []).append(value)
    return merged, len(runs)


def best(raw, bench, key, pick):
    merged, n = all_runs(raw, bench, key)
    return {s: pick(v) for s, v in merged.items()}, n


def human(size):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def fmt(v):
    return "—" if v is None else f"{v:.2f}"


# Tables come in this order; any other collective found in the raw directory (osu_coll.c
# knows the i* forms too) follows, alphabetically.
COLLS = ["bcast", "allreduce", "allgather", "alltoall", "barrier", "reduce", "gather",
         "scatter", "reduce_scatter", "allgatherv", "alltoallv", "iallreduce"]


def coll_main(raw, impls):
    import re
    files = glob.glob(os.path.join(raw, "*_np*.*.*.txt*"))
    pat = re.compile(r"^(\w+)_np(\d+)\.([\w-]+)\.(\d+)\.txt(\.failed)?$")
    ok, failed = {}, []  # (coll, np, key) -> {size: [values]}
    for path in files:
        m = pat.match(os.path.basename(path))
        if not m:
            continue
        coll, np_, key, run, bad = m.group(1), int(m.group(2)), m.group(3), int(m.group(4)), m.group(5)
        if bad:
            err = ""
            if os.path.exists(path[:-len(".failed")] + ".err"):
                with open(path[:-len(".failed")] + ".err") as f:
                    lines = [l.strip() for l in f if "VALIDATION" in l or "error" in l.lower()
                             or "fatal" in l.lower() or "abort" in l.lower()]
                err = "; ".join(lines[:3])
            failed.append((coll, np_, key, run, err or "non-zero exit or timeout"))
            continue
        d = ok.setdefault((coll, np_, key), {})
        for size, v in parse(path).items():
            d.setdefault(size, []).append(v)
    found = {k[0] for k in ok}
    colls = [c for c in COLLS if c in found] + sorted(found - set(COLLS))
    nps = sorted({k[1] for k in ok})
    labels = dict(impls)
    algs = {}
    for (coll, _, key) in ok:
        if key.startswith("oxalg-"):
            algs.setdefault(coll, set()).add(key)
    nruns = max([len(v) for d in ok.values() for v in d.values()] or [0])
    print(f"Best (lowest) average latency in us over up to {nruns} run(s); "
          "ratio = MPICH / oxmpi (> 1: oxmpi faster).\n")
    summary = []
    vs_best = {}  # (coll, np) -> [(size, faster of MPICH and Open MPI / oxmpi (C))]
    for coll in colls:
        if coll == "barrier":
            print("### barrier — latency (us), lower is better\n")
            head = ["ranks"] + [l for _, l in impls] + ["MPICH/oxmpi"]
            print("| " + " | ".join(head) + " |")
            print("|" + "|".join(["---:"] * len(head)) + "|")
            for n in nps:
                vals = [min(ok[(coll, n, k)][0]) if 0 in ok.get((coll, n, k), {}) else None
                        for k, _ in impls]
                byk = dict(zip([k for k, _ in impls], vals))
                ox, ref = byk.get("oxmpi"), byk.get("mpich")
                r = ref / ox if ox and ref else None
                summary.append((coll, n, [r] if r else []))
                print("| " + " | ".join([str(n)] + [fmt(v) for v in vals] + [fmt(r)]) + " |")
            print()
            continue
        for n in nps:
            data = {k: {s: min(v) for s, v in ok.get((coll, n, k), {}).items()} for k, _ in impls}
            sizes = sorted(set().union(*[set(d) for d in data.values()]))
            if not sizes:
                continue
            print(f"### {coll}, {n} ranks — average latency (us), lower is better\n")
            head = ["size"] + [l for _, l in impls] + ["MPICH/oxmpi"]
            print("| " + " | ".join(head) + " |")
            print("|" + "|".join(["---:"] * len(head)) + "|")
            ratios = []
            for s_ in sizes:
                vals = [data[k].get(s_) for k, _ in impls]
                ox = data.get("oxmpi", {}).get(s_) or data.get("oxmpi-c", {}).get(s_)
                ref = data.get("mpich", {}).get(s_)
                r = ref / ox if ox and ref else None
                if r:
                    ratios.append(r)
                oc = data.get("oxmpi-c", {}).get(s_) or data.get("oxmpi", {}).get(s_)
                others = [v for v in (ref, data.get("openmpi", {}).get(s_)) if v]
                if oc and others:
                    vs_best.setdefault((coll, n), []).append((s_, min(others) / oc))
                print("| " + " | ".join([human(s_)] + [fmt(v) for v in vals] + [fmt(r)]) + " |")
            print()
            summary.append((coll, n, ratios))
            keys = sorted(algs.get(coll, ()))
            if keys:
                adata = {k: {s: min(v) for s, v in ok.get((coll, n, k), {}).items()} for k in keys}
                print(f"oxmpi algorithms forced (OXMPI_{coll.upper()}_ALGORITHM), {n} ranks; "
                      "**bold** = fastest of the forced ones; last column: default selection "
                      "(column oxmpi above) / fastest forced.\n")
                head = ["size", "oxmpi default"] + [k[len("oxalg-"):] for k in keys] + ["default/best"]
                print("| " + " | ".join(head) + " |")
                print("|" + "|".join(["---:"] * len(head)) + "|")
                for s_ in sizes:
                    av = [adata[k].get(s_) for k in keys]
                    present = [v for v in av if v is not None]
                    b = min(present) if present else None
                    cells = [f"**{v:.2f}**" if v is not None and v == b else fmt(v) for v in av]
                    d = data.get("oxmpi", {}).get(s_)
                    print("| " + " | ".join([human(s_), fmt(d)] + cells +
                                            [fmt(d / b if d and b else None)]) + " |")
                print()
    print("### Summary — MPICH/oxmpi over the sizes (> 1: oxmpi faster)\n")
    print("| collective | ranks | geometric mean | min | max | sizes oxmpi faster |")
    print("|---|---:|---:|---:|---:|---:|")
    for coll, n, rs in summary:
        if not rs:
            print(f"| {coll} | {n} | — | — | — | — |")
            continue
        g = statistics.geometric_mean(rs)
        print(f"| {coll} | {n} | {g:.2f} | {min(rs):.2f} | {max(rs):.2f} | "
              f"{sum(r > 1 for r in rs)}/{len(rs)} |")
    print()
    print("### Against the faster of MPICH and Open MPI, per size (oxmpi (C); > 1: oxmpi faster)\n")
    print("The issue's goal: every collective at or below both at every size. Sizes where oxmpi (C)"
          " (the oxmpi column where there is no C one) is slower than the faster of the two:\n")
    print("| collective | ranks | sizes at or below | worst ratio | sizes behind (ratio) |")
    print("|---|---:|---:|---:|---|")
    for (coll, n), rs in vs_best.items():
        behind = [f"{human(s_)} ({r:.2f})" for s_, r in rs if r < 1]
        print(f"| {coll} | {n} | {len(rs) - len(behind)}/{len(rs)} | {min(r for _, r in rs):.2f} | "
              f"{', '.join(behind) or '—'} |")
    print()
    print("### Noise — run-to-run spread (slowest run / fastest run), median over sizes\n")
    head = ["collective", "ranks"] + [l for _, l in impls]
    print("| " + " | ".join(head) + " |")
    print("|---|---:|" + "|".join(["---:"] * len(impls)) + "|")
    for coll in colls:
        for n in nps:
            cells = []
            for k, _ in impls:
                d = ok.get((coll, n, k), {})
                sp = [max(v) / min(v) for v in d.values() if len(v) > 1 and min(v) > 0]
                cells.append(f"{statistics.median(sp):.2f} ({len(max(d.values(), key=len))} runs)"
                             if sp else "—")
            print("| " + " | ".join([coll, str(n)] + cells) + " |")
    print()
    print("### Failed runs\n")
    if not failed:
        print("None: every run exited 0 and passed its result check.\n")
    for coll, n, key, run, err in sorted(failed):
        print(f"- {coll}, {n} ranks, {labels.get(key, key)}, run {run}: {err}")
    print()


def p2p_noise(raw, impls, load_txt):
    print("### Noise — run-to-run spread (slowest run / fastest run), median and max over sizes\n")
    head = ["benchmark"] + [label for _, label in impls]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "|".join(["---:"] * len(impls)) + "|")
    for bench, *_ in BENCHES:
        cells = []
        for key, _ in impls:
            merged, n = all_runs(raw, bench, key)
            sp = [max(v) / min(v) for v in merged.values() if len(v) > 1 and min(v) > 0]
            cells.append(f"{statistics.median(sp):.2f} / {max(sp):.2f} ({n} runs)" if sp else "—")
        print("| " + " | ".join([bench] + cells) + " |")
    print()
    if load_txt and os.path.exists(load_txt):
        loads = []
        with open(load_txt) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 4:
                    try:
                        loads.append(float(parts[3]))
                    except ValueError:
                        pass
        if loads:
            print(f"1-minute load average at the {len(loads)} program starts (2 vCPUs): "
                  f"min {min(loads):.2f}, median {statistics.median(loads):.2f}, "
                  f"max {max(loads):.2f}.\n")
    failed = sorted(glob.glob(os.path.join(raw, "*.txt.failed")))
    print("### Failed runs\n")
    if not failed:
        print("None: every run exited 0 within the time limit.\n")
    for path in failed:
        print(f"- {os.path.basename(path)[:-len('.txt.failed')]} (see {os.path.basename(path)[:-len('.failed')]}.err)")
    print()
    late = sorted(glob.glob(os.path.join(raw, "*.txt.exit")))
    if late:
        print("Runs that printed every size, then did not exit cleanly (data kept):\n")
        for path in late:
            with open(path) as f:
                why = f.read().strip()
            print(f"- {os.path.basename(path)[:-len('.txt.exit')]}: {why}")
        print()


def msgrate(raw, impls):
    """Message rate (msg/us) from osu_bw's windows of 64: MB/s / size, 1 B .. 256 B."""
    data = {key: best(raw, "osu_bw", key, max)[0] for key, _ in impls}
    sizes = [s for s in sorted(set().union(*[set(d) for d in data.values()])) if 1 <= s <= 256]
    if not sizes:
        return
    has_c = any(key == "oxmpi-c" for key, _ in impls)
    print("### Message rate — messages/us (osu_bw windows of 64 = osu_mbw_mr, one pair), "
          "higher is better\n")
    head = ["size"] + [label for _, label in impls] + ["oxmpi/MPICH"] + (["oxmpi (C)/MPICH"] if has_c else [])
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---:"] * len(head)) + "|")
    worst = {}
    for s in sizes:
        vals = [data[key].get(s) / s if data[key].get(s) else None for key, _ in impls]
        row = [human(s)] + [fmt(v) for v in vals]
        ref = data.get("mpich", {}).get(s)
        for key in ["oxmpi"] + (["oxmpi-c"] if has_c else []):
            ox = data.get(key, {}).get(s)
            r = ox / ref if ox and ref else None
            if r is not None:
                worst[key] = min(worst.get(key, r), r)
            row.append(fmt(r))
        print("| " + " | ".join(row) + " |")
    print()
    for key, r in worst.items():
        verdict = "MET" if r >= 1.5 else "NOT MET"
        print(f"- message rate 1-256 B >= 1.5x MPICH ({key}): **{verdict}** (lowest ratio {r:.2f})")
    print()


def hog_main(raw, impls):
    print("### Busy host — osu_latency 8 B, 2 ranks, without and with CPU hogs\n")
    print("Best and median of the runs (us); slowdown = busy / quiet (best, median). "
          "Goal: a descheduled peer costs no stall, slowdown <= 2.\n")
    print("| MPI | quiet best | quiet median | busy best | busy median | slowdown best | slowdown median |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key, label in impls:
        row, vals = [label], {}
        for phase in ("quiet", "busy"):
            runs, _ = all_runs(raw, f"hog-{phase}", key)
            v = runs.get(8, [])
            vals[phase] = (min(v), statistics.median(v)) if v else (None, None)
            row += [fmt(vals[phase][0]), fmt(vals[phase][1])]
        for i in (0, 1):
            q, b = vals["quiet"][i], vals["busy"][i]
            row.append(fmt(b / q) if q and b else "—")
        print("| " + " | ".join(row) + " |")
    print()


def main():
    load_txt = None
    if len(sys.argv) > 1 and sys.argv[1] == "--hog":
        if len(sys.argv) < 4:
            sys.exit(__doc__)
        hog_main(sys.argv[2], [a.split("=", 1) for a in sys.argv[3:]])
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--load":
        load_txt = sys.argv[2]
        del sys.argv[1:3]
    if len(sys.argv) > 1 and sys.argv[1] == "--coll":
        if len(sys.argv) < 4:
            sys.exit(__doc__)
        coll_main(sys.argv[2], [a.split("=", 1) for a in sys.argv[3:]])
        return
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    raw = sys.argv[1]
    impls = [a.split("=", 1) for a in sys.argv[2:]]
    checks = []
    for bench, title, unit, pick, ratio_name, ratio in BENCHES:
        data, nruns = {}, {}
        for key, _ in impls:
            data[key], nruns[key] = best(raw, bench, key, pick)
        sizes = sorted(set().union(*[set(d) for d in data.values()]))
        runs_note = ", ".join(f"{label}: {nruns[key]} run(s)" for key, label in impls)
        print(f"### {bench} — {title}\n")
        print(f"Best of the successful runs per size ({runs_note}). "
              f"Ratio column: {ratio_name}.\n")
        head = ["size"] + [label for _, label in impls] + [ratio_name]
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join(["---:"] * len(head)) + "|")
        for s in sizes:
            vals = [data[key].get(s) for key, _ in impls]
            ox, ref = data.get("oxmpi", {}).get(s), data.get("mpich", {}).get(s)
            r = ratio(ox, ref) if ox and ref else None
            print("| " + " | ".join([human(s)] + [fmt(v) for v in vals] + [fmt(r)]) + " |")
        print()
        if bench == "osu_latency":
            checks.append(("8 B latency no worse than MPICH", bench, 8, data, ratio, unit))
        else:
            checks.append(("1 MiB bandwidth at least MPICH's", bench, 1 << 20, data, ratio,
                           unit))
    msgrate(raw, impls)
    print("### Targets\n")
    for name, bench, size, data, ratio, unit in checks:
        ox, ref = data.get("oxmpi", {}).get(size), data.get("mpich", {}).get(size)
        if ox is None or ref is None:
            print(f"- {name}: no data")
            continue
        r = ratio(ox, ref)
        verdict = "MET" if r >= 1.0 else "NOT MET"
        print(f"- {name}: **{verdict}** (best of runs) — oxmpi {ox:.2f} {unit} vs MPICH "
              f"{ref:.2f} {unit} (ratio {r:.2f})")
        med = {}
        for key in ("oxmpi", "mpich"):
            vals, _ = all_runs(raw, bench, key)
            med[key] = statistics.median(vals[size]) if vals.get(size) else None
        if med["oxmpi"] and med["mpich"]:
            print(f"  - medians: oxmpi {med['oxmpi']:.2f} {unit} vs MPICH {med['mpich']:.2f} {unit} "
                  f"(ratio {ratio(med['oxmpi'], med['mpich']):.2f})")
    print()
    if load_txt is not None:
        p2p_noise(raw, impls, load_txt)


if __name__ == "__main__":
    main()
