#!/usr/bin/env python3
"""The same fio jobs under CFQ and BFQ in simulation, on several device presets: one
Markdown table of total MB/s, each cgroup's share beside its weight-ideal share, and each
job section's p99 completion latency (the worst of its `numjobs` clones).

    scripts/sim-cfq-bfq.py examples/two-groups.fio examples/two-readers.fio \
        scenarios/004/four-groups.fio --devices hdd-7200,ufs31 --schedulers cfq,bfq

`${VAR}` values for the job files come from the environment (four-groups.fio needs RUNTIME and
THREADS; this script sets the values of seed 004's table, 2s and 16, unless they are set).
The simulation is deterministic: one run per cell is the figure, not a sample.
"""

import argparse
import json
import os
import subprocess
import sys

DEFAULT_ENV = {"RUNTIME": "2s", "THREADS": "16"}


def run(iosched, job, scheduler, device):
    env = dict(os.environ)
    for key, value in DEFAULT_ENV.items():
        env.setdefault(key, value)
    args = [iosched, "run", job, "--scheduler", scheduler, "--device", device,
            "--output-format", "json"]
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def summary(report):
    jobs = report["jobs"]
    total = sum(j["read"]["bw_bytes"] + j["write"]["bw_bytes"] for j in jobs) / 1e6
    p99 = {}
    for j in jobs:
        worst = 0
        for side in ("read", "write"):
            pct = j[side].get("clat_ns", {}).get("percentile") or {}
            worst = max(worst, pct.get("99.000000", 0))
        p99[j["jobname"]] = max(p99.get(j["jobname"], 0), worst / 1e3)
    groups = report.get("iosched", {}).get("cgroups") or []
    shares = ", ".join(
        f"{g['path']} {100 * g['share']:.1f} ({100 * g['ideal_share']:.1f})"
        for g in groups if g.get("ideal_share") is not None)
    lat = ", ".join(f"{name} {us:,.0f}" for name, us in p99.items())
    return total, shares, lat


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jobs", nargs="+")
    parser.add_argument("--devices", default="hdd-7200,ufs31")
    parser.add_argument("--schedulers", default="cfq,bfq")
    parser.add_argument("--iosched", default="target/release/iosched")
    args = parser.parse_args()
    print("| job | device | scheduler | MB/s | share % (ideal %) | p99 clat µs |")
    print("|---|---|---|---|---|---|")
    for job in args.jobs:
        for device in args.devices.split(","):
            for scheduler in args.schedulers.split(","):
                total, shares, lat = summary(run(args.iosched, job, scheduler, device))
                name = os.path.basename(job)
                print(f"| {name} | {device} | {scheduler} | {total:.1f} | {shares} | {lat} |",
                      flush=True)


if __name__ == "__main__":
    main()
