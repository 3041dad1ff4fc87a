#!/usr/bin/env python3
"""The most a block device can move while one job keeps a weighted share (issue 32).

Issue 32 asks for the heavy job of `examples/two-groups.fio` (two QD8 random readers, weights
1000:100) within 2 points of 90.9 % at 0.90 x the kernel's `none` total. A schedule that holds
that share keeps the light job to about one request in flight, so the device's own rate with
the heavy job at QD8 and the light job at QD1 (or QD2) bounds what any scheduler can reach.
This runs, in interleaved rounds, the pair at 8+8, 8+1 and 8+2 through fio on the kernel's
`none` (`iosched kernel`) and through the engine's noop (`engine_threads=cgroups`: one
submitting thread per job cgroup, as fio has), and the 8+8 pair under the engine's
`adaptive`; it prints each run's total over the kernel's 8+8 and the heavy job's share.

Usage: scripts/loop-share-ceiling.py --device /dev/loopN [--rounds 5] [--iosched BINARY]
The device's data is only read (random reads); lay it out with written data first (a loop
device over an image filled from /dev/urandom), or the reads hit holes.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIR = os.path.join(ROOT, "examples", "two-groups.fio")


def light_at(depth, directory):
    """The pair's job file with the light job at `depth` in flight."""
    with open(PAIR) as f:
        text = f.read()
    if "cgroup=light\n" not in text:
        sys.exit(f"{PAIR}: no `cgroup=light` line to set the light job's depth under")
    path = os.path.join(directory, f"pair-8-{depth}.fio")
    with open(path, "w") as f:
        f.write(text.replace("cgroup=light\n", f"cgroup=light\niodepth={depth}\n"))
    return path


def runs(iosched, device, directory):
    jobs = {"8+8": PAIR, "8+1": light_at(1, directory), "8+2": light_at(2, directory)}
    engine = ["--output-format", "json", "--eta", "never", "--set", "engine_threads=cgroups"]
    out = []
    for name, job in jobs.items():
        out.append((f"kernel none {name}",
                    [iosched, "kernel", job, "--device", device, "--scheduler", "none"]))
    for name, job in jobs.items():
        out.append((f"engine noop {name}",
                    [iosched, "run", job, "--device", device, "--scheduler", "noop"] + engine))
    out.append(("engine adaptive 8+8",
                [iosched, "run", PAIR, "--device", device, "--scheduler", "adaptive"] + engine))
    return out


def measure(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {result.returncode}: {result.stderr.strip()}")
    jobs = {j["jobname"]: j["read"]["bw_bytes"] / 1e6 for j in json.loads(result.stdout)["jobs"]}
    total = sum(jobs.values())
    return total, 100 * jobs.get("heavy", 0) / total if total else 0.0


def spread(values, fmt):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–" \
           f"{fmt.format(max(values))})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", required=True, help="a block device holding written data")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iosched", default=os.path.join(ROOT, "target", "release", "iosched"))
    args = parser.parse_args()
    if args.rounds < 1:
        sys.exit("--rounds: at least 1")
    loads = [os.getloadavg()[0]]
    results = {}
    with tempfile.TemporaryDirectory() as directory:
        plan = runs(args.iosched, args.device, directory)
        for round_ in range(args.rounds):
            # Alternate the order so that a drift in the machine hits every run alike.
            for name, command in plan if round_ % 2 == 0 else plan[::-1]:
                results.setdefault(name, []).append(measure(command))
            loads.append(os.getloadavg()[0])
    reference = [total for total, _ in results["kernel none 8+8"]]
    print(f"`{' '.join(sys.argv)}`, {args.rounds} interleaved rounds, load (1 min) at the start "
          f"and after each round: {' '.join(f'{x:.2f}' for x in loads)}\n")
    print("| jobs (heavy + light in flight) | MB/s | ÷ kernel none 8+8 | heavy's share % |")
    print("|---|---|---|---|")
    for name, _ in plan:
        totals = [total for total, _ in results[name]]
        ratios = [total / base for total, base in zip(totals, reference)]
        shares = [share for _, share in results[name]]
        print(f"| {name} | {spread(totals, '{:.1f}')} | {spread(ratios, '{:.2f}')} "
              f"| {spread(shares, '{:.1f}')} |")


if __name__ == "__main__":
    main()
