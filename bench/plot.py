#!/usr/bin/env python3
"""Draws PNG plots from the raw outputs of bench/compare.sh (one line per MPI).

    plot.py p2p  RAW_DIR OUT_DIR KEY=LABEL [KEY=LABEL ...]
    plot.py coll RAW_DIR OUT_DIR KEY=LABEL [KEY=LABEL ...]
    plot.py tcp  RAW_DIR OUT_DIR KEY=LABEL [KEY=LABEL ...]
    plot.py oversub RAW_DIR OUT_DIR KEY=LABEL [KEY=LABEL ...]

Same inputs and best-of rule as compare.py (lowest latency, highest bandwidth per size
over the runs). p2p and tcp draw <prefix>latency.png, <prefix>bandwidth.png and
<prefix>msgrate.png (messages per microsecond from osu_bw's windows of 64, 1 B-256 B;
prefix "tcp-" for tcp); coll draws coll-<collective>.png, one panel per rank count;
oversub (8 and 16 ranks on 2 cores) draws oversub-<collective>.png the same way.

Each run also writes OUT_DIR/STAMP-<mode>.md (date, machine, commit) and, with
--readme README.md, rewrites README's block between "<!-- PLOTS-BEGIN -->" and
"<!-- PLOTS-END -->" to show the plots of OUT_DIR with their stamps.

matplotlib is not a dependency of the project: compare.sh installs it with pip into a
virtual environment under bench/build/ at run time (and skips the plots if it cannot).
"""
import datetime
import glob
import os
import platform
import subprocess
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402
except ImportError as e:
    sys.exit(f"plot.py: matplotlib is missing ({e}); install it (pip install matplotlib, or Debian's "
             "python3-matplotlib) to draw the plots; bench/compare.sh does so in a virtual "
             "environment under bench/build/venv")

MODES = {"p2p": "Point-to-point, shared memory", "coll": "Collectives", "tcp": "Point-to-point over TCP",
         "oversub": "Oversubscribed collectives (more ranks than cores)"}
COLORS = {"oxmpi": "#c0392b", "oxmpi-c": "#e67e22", "mpich": "#2c3e50", "openmpi": "#27ae60"}


def parse(path, col=1):
    rows = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0].startswith("#") or len(parts) <= col:
                continue
            try:
                rows[int(parts[0])] = float(parts[col])
            except ValueError:
                continue
    return rows


def best(raw, name, key, pick, col=1):
    merged = {}
    for path in sorted(glob.glob(os.path.join(raw, f"{name}.{key}.*.txt"))):
        for size, v in parse(path, col).items():
            merged.setdefault(size, []).append(v)
    return {s: pick(v) for s, v in merged.items()}


def human(size):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return f"{size}B"


def axes(title, ylabel, logy=True):
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=110)
    ax.set_title(title)
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("message size")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    return fig, ax


def size_ticks(ax, sizes):
    pow2 = [s for s in sizes if s > 0 and (s & (s - 1)) == 0]
    step = max(1, -(-len(pow2) // 8))
    ticks = pow2[::step]
    ax.set_xticks(ticks)
    ax.set_xticklabels([human(s) for s in ticks])


def line(ax, data, key, label, scale=1.0, marker="o"):
    pts = sorted((s, v * scale) for s, v in data.items() if s > 0)
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, markersize=3, label=label,
                color=COLORS.get(key))
    return [p[0] for p in pts]


def save(fig, ax, path):
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print(f"plot.py: wrote {path}")
    return os.path.basename(path)


def p2p(raw, out, labels, prefix, where):
    made = []
    fig, ax = axes(f"Latency, 2 ranks{where} (osu_latency, lower is better)", "µs")
    sizes = set()
    for key, label in labels:
        sizes.update(line(ax, best(raw, "osu_latency", key, min), key, label))
    size_ticks(ax, sorted(sizes))
    made.append(save(fig, ax, os.path.join(out, f"{prefix}latency.png")))
    fig, ax = axes(f"Bandwidth, 2 ranks{where} (osu_bw, window of 64, higher is better)", "MB/s")
    sizes = set()
    for key, label in labels:
        sizes.update(line(ax, best(raw, "osu_bw", key, max), key, label))
    size_ticks(ax, sorted(sizes))
    made.append(save(fig, ax, os.path.join(out, f"{prefix}bandwidth.png")))
    fig, ax = axes(f"Message rate, 2 ranks{where} (osu_bw windows of 64, higher is better)",
                   "messages / µs", logy=False)
    for key, label in labels:
        bw = best(raw, "osu_bw", key, max)
        # MB/s over bytes per message = millions of messages per second = per µs.
        line(ax, {s: v / s for s, v in bw.items() if 0 < s <= 256}, key, label)
    ax.set_xticks([1, 4, 16, 64, 256])
    ax.set_xticklabels(["1B", "4B", "16B", "64B", "256B"])
    made.append(save(fig, ax, os.path.join(out, f"{prefix}msgrate.png")))
    return made


def coll(raw, out, labels, prefix="coll-"):
    made = []
    found = {}
    for path in glob.glob(os.path.join(raw, "*_np*.*.*.txt")):
        name = os.path.basename(path).split(".")[0]
        c, np_ = name.rsplit("_np", 1)
        found.setdefault(c, set()).add(int(np_))
    for c in sorted(found):
        nps = sorted(found[c])
        fig, axs = plt.subplots(1, len(nps), figsize=(5.0 * len(nps), 4.2), dpi=100, squeeze=False)
        for ax, n in zip(axs[0], nps):
            ax.set_title(f"{c}, {n} ranks")
            ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
            ax.set_ylabel("µs (lower is better)")
            sizes = set()
            for key, label in labels:
                data = best(raw, f"{c}_np{n}", key, min)
                pts = sorted(data.items())
                if not pts:
                    continue
                if c == "barrier":
                    ax.bar([label], [min(v for _, v in pts)], color=COLORS.get(key))
                    continue
                ax.set_xscale("log", base=2)
                ax.set_xlabel("message size")
                pts = [p for p in pts if p[0] > 0]
                sizes.update(s for s, _ in pts)
                ax.plot([s for s, _ in pts], [v for _, v in pts], marker="o", markersize=3, label=label,
                        color=COLORS.get(key))
            if c != "barrier" and sizes:
                size_ticks(ax, sorted(sizes))
                ax.legend()
        fig.tight_layout()
        path = os.path.join(out, f"{prefix}{c}.png")
        fig.savefig(path)
        plt.close(fig)
        print(f"plot.py: wrote {path}")
        made.append(os.path.basename(path))
    return made


def stamp():
    def run(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        except OSError:
            return ""
    commit = run("git", "rev-parse", "--short", "HEAD") or "unknown"
    if run("git", "status", "--porcelain", "--untracked-files=no"):
        commit += " (with uncommitted changes)"
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    try:
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
    except OSError:
        load = "?"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{platform.node()}, {os.cpu_count()} CPUs ({cpu or platform.machine()}), {platform.system()} {platform.release()}"
    return date, machine, commit, load


def readme_block(readme, out, files):
    rel = os.path.relpath(out, os.path.dirname(os.path.abspath(readme)))
    lines = ["<!-- PLOTS-BEGIN (bench/plot.py rewrites this block: do not edit) -->"]
    for mode in MODES:
        path = os.path.join(out, f"STAMP-{mode}.md")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            lines.append("")
            lines.append(f.read().strip())
        pngs = sorted(p for p in files.get(mode, []))
        lines.append("")
        lines.append(" ".join(f"![{p[:-4]}]({rel}/{p})" for p in pngs))
    lines.append("<!-- PLOTS-END -->")
    with open(readme) as f:
        text = f.read()
    begin, end = text.find("<!-- PLOTS-BEGIN"), text.find("<!-- PLOTS-END -->")
    if begin < 0 or end < begin:
        print(f"plot.py: no PLOTS-BEGIN/PLOTS-END block in {readme}; left alone", file=sys.stderr)
        return
    text = text[:begin] + "\n".join(lines) + text[end + len("<!-- PLOTS-END -->"):]
    with open(readme, "w") as f:
        f.write(text)
    print(f"plot.py: updated the plots block of {readme}")


def main(argv):
    readme = None
    if len(argv) > 1 and argv[0] == "--readme":
        readme, argv = argv[1], argv[2:]
    if len(argv) < 4 or argv[0] not in MODES:
        print(__doc__, file=sys.stderr)
        return 2
    mode, raw, out = argv[0], argv[1], argv[2]
    labels = [tuple(a.split("=", 1)) for a in argv[3:]]
    os.makedirs(out, exist_ok=True)
    if mode == "p2p":
        made = p2p(raw, out, labels, "", ", shared memory")
    elif mode == "tcp":
        made = p2p(raw, out, labels, "tcp-", ", TCP between two network namespaces")
    elif mode == "oversub":
        made = coll(raw, out, labels, "oversub-")
    else:
        made = coll(raw, out, labels)
    date, machine, commit, load = stamp()
    what = MODES[mode]
    with open(os.path.join(out, f"STAMP-{mode}.md"), "w") as f:
        f.write(f"**{what}** (`bench/compare.sh{'' if mode == 'p2p' else ' ' + mode}`): {date}, "
                f"{machine}, commit {commit}, load average at the end {load}.\n")
        f.write(f"<!-- files: {' '.join(made)} -->\n")
    if readme:
        files = {}
        for m in MODES:
            path = os.path.join(out, f"STAMP-{m}.md")
            if os.path.exists(path):
                with open(path) as f:
                    for l in f:
                        if l.startswith("<!-- files:"):
                            files[m] = l[len("<!-- files:"):-len("-->") - 1].split()
        readme_block(readme, out, files)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
