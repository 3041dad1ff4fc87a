#!/usr/bin/env python3
"""The engine on one worker thread against two (`--set engine_threads=2`), interleaved.

On a loop device over /dev/shm (CPU cost dominates, so a second CPU can show), with every
pair run back to back and the order alternating (1, 2, then 2, 1 ...) so that load on this
shared machine hits both sides alike:

1. engine noop, two 4 KiB random readers at QD32: IOPS with 2 threads / IOPS with 1, and
   each / fio's io_uring on the kernel's `none` (same job file, same device, same pair);
2. engine CFQ, two groups weighted 1000:100, a 4 KiB random reader at QD8 in each: the heavy
   group's share (ideal 90.9 %) with 1 and with 2 threads, and total IOPS 2 threads / 1.

For the 2-thread runs the queue lock's cost, as the engine measures it (iosched.wall_clock):
time held and time waited per request, and the share of acquisitions that found it held.
Prints the load average before and after each section.

Usage: scripts/bench-engine-threads.py [--pairs 5] [--runtime 3] [--mib 512]
Needs root, losetup and fio.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TWO_READERS = """[global]
ioengine=io_uring
direct=1
bs=4k
iodepth=32
size=128m
rw=randread
time_based
runtime=RUNTIME
[a]
[b]
offset=128m
"""

TWO_GROUPS = """[global]
ioengine=io_uring
direct=1
bs=4k
iodepth=8
size=64m
rw=randread
time_based
runtime=RUNTIME
[heavy]
cgroup=bench-heavy
cgroup_weight=1000
[light]
cgroup=bench-light
cgroup_weight=100
offset=64m
"""


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed: {out.stderr.strip()[-400:]}")
    return json.loads(out.stdout)


def summary(values):
    return f"{statistics.median(values):8.3f} ({min(values):.3f}-{max(values):.3f})"


def iops(result, name=None):
    return sum(j["read"]["iops"] + j["write"]["iops"] for j in result["jobs"]
               if name is None or j["jobname"] == name)


class Bench:
    def __init__(self, iosched, workdir, device, runtime):
        self.iosched, self.workdir, self.device = iosched, workdir, device
        self.runtime = runtime

    def job(self, name, text):
        path = os.path.join(self.workdir, name + ".fio")
        with open(path, "w") as f:
            f.write(text.replace("RUNTIME", str(self.runtime)))
        return path

    def engine(self, job, sched, threads):
        return run_json([self.iosched, "run", job, "--device", self.device, "--scheduler",
                         sched, "--set", f"engine_threads={threads}", "--output-format",
                         "json"])

    def fio(self, job):
        return run_json([self.iosched, "kernel", job, "--device", self.device,
                         "--scheduler", "none", "--output-format", "json"])


def lock_line(results):
    clocks = [r["iosched"]["wall_clock"] for r in results]
    held = [c["lock_held_ns_per_request"] for c in clocks]
    wait = [c["lock_wait_ns_per_request"] for c in clocks]
    contended = [100.0 * c["lock_contended_per_request"] / c["lock_acquisitions_per_request"]
                 for c in clocks]
    per_turn = [1.0 / c["lock_acquisitions_per_request"] for c in clocks]
    wakes = [r["iosched"]["wall_clock"]["cross_thread_wakes"] for r in results]
    return (f"    lock (2 threads): held ns/request {summary(held)}; waited ns/request "
            f"{summary(wait)}; acquisitions found held % {summary(contended)}; requests per "
            f"acquisition {summary(per_turn)}; cross-thread wake-ups {summary(wakes)}")


def readers(b, pairs):
    job = b.job("two-readers", TWO_READERS)
    gain, one, two, fio, two_runs = [], [], [], [], []
    for pair in range(pairs):
        order = [("fio", lambda: b.fio(job)), (1, lambda: b.engine(job, "noop", 1)),
                 (2, lambda: b.engine(job, "noop", 2))]
        results = {label: run() for label, run in (order if pair % 2 == 0 else order[::-1])}
        assert results[2]["iosched"]["wall_clock"]["engine_threads"] == 2
        gain.append(iops(results[2]) / iops(results[1]))
        one.append(iops(results[1]) / iops(results["fio"]))
        two.append(iops(results[2]) / iops(results["fio"]))
        fio.append(iops(results["fio"]) / 1000)
        two_runs.append(results[2])
    print(f"  noop 2 x QD32 randread: 2 threads / 1 thread IOPS {summary(gain)}")
    print(f"    engine / fio: 1 thread {summary(one)}, 2 threads {summary(two)}; "
          f"fio kIOPS {summary(fio)}")
    print(lock_line(two_runs))


def groups(b, pairs):
    job = b.job("two-groups", TWO_GROUPS)
    share = {1: [], 2: []}
    total = {1: [], 2: []}
    two_runs = []
    for pair in range(pairs):
        order = [1, 2] if pair % 2 == 0 else [2, 1]
        results = {threads: b.engine(job, "cfq", threads) for threads in order}
        for threads, result in results.items():
            share[threads].append(100.0 * iops(result, "heavy") / iops(result))
            total[threads].append(iops(result) / 1000)
        two_runs.append(results[2])
    gain = [t2 / t1 for t1, t2 in zip(total[1], total[2])]
    print(f"  cfq 2 x QD8 at 1000:100: heavy share % 1 thread {summary(share[1])}, "
          f"2 threads {summary(share[2])} (ideal 90.909)")
    print(f"    total kIOPS 1 thread {summary(total[1])}, 2 threads {summary(total[2])}; "
          f"2 / 1 {summary(gain)}")
    print(lock_line(two_runs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=int, default=3)
    parser.add_argument("--mib", type=int, default=512)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root (loop devices)")
    iosched = os.path.join(ROOT, "target", "release", "iosched")
    if not os.path.exists(iosched):
        sys.exit("bench: build first: cargo build --release")
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    print(f"commit {head}, {os.cpu_count()} CPUs, {args.pairs} pairs of {args.runtime} s")
    workdir = tempfile.mkdtemp(prefix="iosched-threads-")
    fd, image = tempfile.mkstemp(prefix="iosched-threads-", suffix=".img", dir="/dev/shm")
    os.close(fd)
    device = None
    try:
        subprocess.run(["dd", "if=/dev/zero", f"of={image}", "bs=1M", f"count={args.mib}",
                        "status=none"], check=True)
        device = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", image],
                                capture_output=True, text=True, check=True).stdout.strip()
        b = Bench(iosched, workdir, device, args.runtime)
        print(f"loop over /dev/shm ({device}), load before: {load()}")
        readers(b, args.pairs)
        print(f"  load: {load()}")
        groups(b, args.pairs)
        print(f"  load after: {load()}")
    finally:
        if device:
            subprocess.run(["losetup", "-d", device], check=False)
        os.unlink(image)
        for name in os.listdir(workdir):
            os.unlink(os.path.join(workdir, name))
        os.rmdir(workdir)


if __name__ == "__main__":
    main()
