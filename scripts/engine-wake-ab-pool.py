#!/usr/bin/env python3
"""Pools the --raw lines of several `scripts/engine-wake-ab.py` passes (the binaries named
base and new): medians and ranges per run, and the per-round ratios new ÷ base and
adaptive ÷ bfq over every round of every pass.

  scripts/engine-wake-ab-pool.py PASS1.jsonl PASS2.jsonl ...
"""
import json, statistics, sys
rows = []
for i, path in enumerate(sys.argv[1:]):
    for l in open(path):
        d = json.loads(l); d["pass"] = i; rows.append(d)
def med(xs):
    xs = sorted(xs); return f"{statistics.median(xs):.3g} ({xs[0]:.3g}–{xs[-1]:.3g})"
keys = ["mb_s", "ratio", "heavy", "cpu_us", "switches", "worker0", "worker1", "light_wakes", "enters", "handed", "handover_wakes"]
print("| run | n | " + " | ".join(keys) + " |")
print("|---|---|" + "---|" * len(keys))
for run, sched in [("kernel", "none"), ("base", "adaptive"), ("new", "adaptive"), ("base", "bfq"), ("new", "bfq")]:
    rs = [r for r in rows if r["run"] == run and r["scheduler"] == sched]
    cells = [med([r[k] for r in rs]) if all(k in r for r in rs) else "—" for k in keys]
    print(f"| {sched} {run} | {len(rs)} | " + " | ".join(cells) + " |")
print()
print("Per round, new ÷ base (same round), pooled:")
print("| scheduler | n | " + " | ".join(["mb_s", "cpu_us", "switches", "enters"]) + " |")
print("|---|---|---|---|---|---|")
for sched in ["adaptive", "bfq"]:
    ratios = {k: [] for k in ["mb_s", "cpu_us", "switches", "enters"]}
    for r in rows:
        if r["run"] != "new" or r["scheduler"] != sched: continue
        b = [x for x in rows if x["run"] == "base" and x["scheduler"] == sched and x["round"] == r["round"] and x["pass"] == r["pass"]][0]
        for k in ratios: ratios[k].append(r[k] / b[k])
    print(f"| {sched} | {len(ratios['mb_s'])} | " + " | ".join(med(v) for v in ratios.values()) + " |")
# adaptive new vs bfq new, same round
print()
print("Per round, adaptive ÷ bfq (same binary, same round), pooled:")
for run in ["base", "new"]:
    out = {k: [] for k in ["mb_s", "cpu_us", "switches"]}
    for r in rows:
        if r["run"] != run or r["scheduler"] != "adaptive": continue
        b = [x for x in rows if x["run"] == run and x["scheduler"] == "bfq" and x["round"] == r["round"] and x["pass"] == r["pass"]][0]
        for k in out: out[k].append(r[k] / b[k])
    print(f"| {run} | " + " | ".join(f"{k} {med(v)}" for k, v in out.items()) + " |")
