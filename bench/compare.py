#!/usr/bin/env python3
"""Turns the raw outputs of bench/compare.sh into markdown tables.

    compare.py RAW_DIR KEY=LABEL [KEY=LABEL ...]

RAW_DIR holds <bench>.<key>.<run>.txt files in OSU format ('#' header lines, then
"size value" rows). For each implementation the best value per size over the runs is
kept: the lowest latency, the highest bandwidth. Columns follow the KEY=LABEL order.
The ratio column compares oxmpi (Rust API) with MPICH, oriented so that > 1 means oxmpi
is better: latency MPICH/oxmpi, bandwidth oxmpi/MPICH.
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


def main():
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


if __name__ == "__main__":
    main()
