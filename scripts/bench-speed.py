#!/usr/bin/env python3
"""Interleaved A/B benchmark of the simulator's speed (issue 34).

Runs issue 34's workload (`bench/jobs/speed-randread.fio`: 16 clones of 4 KiB random reads at
iodepth 4 for 5 simulated seconds, ~2.5 M requests on `nvme-gen4`) under each scheduler with
two iosched binaries, alternating which goes first in each round, and prints per binary and
scheduler:

* CPU time (user + system, from the child's rusage) per run: best, median and range, and
  the requests simulated per CPU second (best of the rounds: the issue's figure);
* the per-round ratio new / old of CPU time: median and range;
* with --callgrind, the instruction count of one shorter run of each (`--callgrind-runtime`,
  default 200 ms of simulated time) per request, which repeats to a few parts in a million
  on a busy machine where CPU time does not;
* the load average before and after (CPU time is disturbed less than wall time by other
  work, but not undisturbed: read the ranges).

Usage: scripts/bench-speed.py --old OLD_BINARY [--new target/release/iosched] [--rounds 3]
           [--schedulers cfq,noop] [--device nvme-gen4] [--callgrind]
           [--callgrind-runtime 200ms]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(ROOT, "bench", "jobs", "speed-randread.fio")


def load():
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def requests_of(path):
    """Requests the run's jobs completed (reads, writes, trims), from its fio JSON."""
    with open(path) as f:
        data = json.load(f)
    return sum(job.get(d, {}).get("total_ios", 0) for job in data["jobs"]
               for d in ("read", "write", "trim"))


def timed_run(binary, scheduler, device, job, out):
    """One run; answers (CPU seconds user + system, wall seconds, requests)."""
    cmd = [binary, "run", "--eta", "never", "--scheduler", scheduler, "--device", device,
           "--output-format", "json", "--output", out, job]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed: {stderr}")
    return usage.ru_utime + usage.ru_stime, wall, requests_of(out)


def instructions(binary, scheduler, device, job, directory):
    """Instructions of one run under callgrind, and its requests."""
    out = os.path.join(directory, "cg.json")
    log = os.path.join(directory, "cg.log")
    cmd = ["valgrind", "--tool=callgrind", f"--log-file={log}",
           f"--callgrind-out-file={os.path.join(directory, 'cg.out')}",
           binary, "run", "--eta", "never", "--scheduler", scheduler, "--device", device,
           "--output-format", "json", "--output", out, job]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(log) as f:
        match = re.search(r"Collected : (\d+)", f.read())
    return int(match.group(1)), requests_of(out)


def spread(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", required=True, help="the binary before")
    parser.add_argument("--new", default=os.path.join(ROOT, "target", "release", "iosched"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--schedulers", default="cfq,noop")
    parser.add_argument("--device", default="nvme-gen4")
    parser.add_argument("--job", default=JOB)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--callgrind-runtime", default="200ms")
    args = parser.parse_args()
    binaries = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    schedulers = args.schedulers.split(",")
    print(f"load before: {load()}")
    print(f"job: {os.path.relpath(args.job, ROOT)} on {args.device}; old {binaries['old']}, "
          f"new {binaries['new']}")
    directory = tempfile.mkdtemp(prefix="bench-speed.")
    try:
        cpu = {(b, s): [] for b in binaries for s in schedulers}
        count = {}
        for round_no in range(args.rounds):
            order = ["old", "new"] if round_no % 2 == 0 else ["new", "old"]
            for scheduler in schedulers:
                for which in order:
                    out = os.path.join(directory, "run.json")
                    seconds, wall, requests = timed_run(
                        binaries[which], scheduler, args.device, args.job, out)
                    cpu[(which, scheduler)].append(seconds)
                    count[(which, scheduler)] = requests
                    print(f"round {round_no + 1} {scheduler:8} {which}: {seconds:.3f} s CPU, "
                          f"{wall:.3f} s wall, {requests} requests", flush=True)
        print(f"\nload after the timed rounds: {load()}")
        print(f"{'scheduler':9} {'binary':6} {'requests':>9} {'CPU s median (range)':>24} "
              f"{'best M req/CPU s':>17}")
        for scheduler in schedulers:
            for which in binaries:
                times, requests = cpu[(which, scheduler)], count[(which, scheduler)]
                print(f"{scheduler:9} {which:6} {requests:>9} {spread(times):>24} "
                      f"{requests / min(times) / 1e6:>17.2f}")
            if count[("old", scheduler)] != count[("new", scheduler)]:
                print(f"  WARNING: {scheduler}: the binaries simulated different request counts")
            ratios = [n / o for n, o in zip(cpu[("new", scheduler)], cpu[("old", scheduler)])]
            print(f"{scheduler:9} new/old CPU time per round: {spread(ratios)}")
        if args.callgrind and shutil.which("valgrind"):
            with open(args.job) as f:
                text = f.read()
            short = os.path.join(directory, "short.fio")
            with open(short, "w") as f:
                f.write(re.sub(r"(?m)^runtime=.*$", f"runtime={args.callgrind_runtime}", text))
            print(f"\ncallgrind, runtime={args.callgrind_runtime} (instructions of the whole "
                  f"process per request)")
            for scheduler in schedulers:
                per = {}
                for which in binaries:
                    total, requests = instructions(
                        binaries[which], scheduler, args.device, short, directory)
                    per[which] = total / requests
                    print(f"{scheduler:9} {which:6} {total:>14,} instructions, {requests} "
                          f"requests, {per[which]:,.0f} per request", flush=True)
                print(f"{scheduler:9} new/old instructions: {per['new'] / per['old']:.3f}")
            print(f"load after callgrind: {load()}")
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
