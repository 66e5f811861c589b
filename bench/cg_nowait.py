#!/usr/bin/env python3
"""Inclusive Ir of one function minus the Ir of the waits it calls (wait_flag*,
wait_free, wait_release), whose spinning depends on scheduling: a callgrind figure
that compares builds of the shared-memory collectives (bench/PROFILE.md, shm12).

    callgrind_annotate --inclusive=yes --tree=calling --threshold=100 callgrind.out.PID \\
        | bench/cg_nowait.py oxmpi_core::coll::shm::allreduce::allreduce

Prints: inclusive, waits, inclusive - waits.
"""
import re
import sys

WAITS = ("wait_flag", "wait_free", "wait_release")
fn = sys.argv[1]


def num(s):
    return int(s.replace(",", ""))


incl, waits, cur = None, 0, None
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \([ \d.]+%\)  \*  (.*)$", line)
    if m:
        cur = m.group(2)
        name = cur.split(":", 1)[1] if ":" in cur else cur
        if incl is None and name.startswith(fn) and cur.rstrip().endswith("]"):
            incl = num(m.group(1))
        continue
    m = re.match(r"\s*([\d,]+) \([ \d.]+%\)  >   (.*)$", line)
    if m and cur and (":" + fn) in cur and any(w in m.group(2) for w in WAITS):
        waits += num(m.group(1))
if incl is None:
    sys.exit(f"{fn}: not in the profile")
print(incl, waits, incl - waits)
