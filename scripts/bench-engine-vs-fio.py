#!/usr/bin/env python3
"""The engine against fio on the same loop devices, interleaved, with medians and ranges.

Three questions, each asked on a loop device over /dev/shm (CPU cost dominates) and over a
file on the VM's disk (a real queue), with every pair run back to back (A, B, A, B ...) so
that load on this shared machine hits both sides alike:

1. engine noop / fio IOPS (fio's io_uring on the kernel's `none`): 4 KiB randread and
   randwrite at QD1 and QD32;
2. two groups weighted 1000:100, a 4 KiB random reader at QD8 in each: engine CFQ's heavy
   share (ideal 90.9 %) and its total / kernel none's total, beside the kernel's BFQ;
3. a QD1 random reader (weight 1000) beside a QD32 random-write hog (weight 100): the
   reader's p99 completion latency and the hog's throughput / its rate under `none`, for
   engine CFQ, kernel none, BFQ and mq-deadline.

Usage: scripts/bench-engine-vs-fio.py [--pairs 5] [--runtime 3] [--mib 512] [--only shm|disk]
Needs root, losetup and fio. Prints the load average before and after each section.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed: {out.stderr.strip()[-400:]}")
    return json.loads(out.stdout)


class Device:
    """A loop device over a fresh backing file, detached and removed on exit."""

    def __init__(self, directory, mib):
        fd, self.image = tempfile.mkstemp(prefix="iosched-bench-", suffix=".img", dir=directory)
        os.close(fd)
        os.truncate(self.image, mib << 20)
        self.path = subprocess.run(
            ["losetup", "-f", "--show", "--direct-io=on", self.image],
            capture_output=True, text=True, check=True).stdout.strip()

    def close(self):
        subprocess.run(["losetup", "-d", self.path], check=False)
        os.unlink(self.image)


class Runner:
    def __init__(self, iosched, workdir, runtime):
        self.iosched, self.workdir, self.runtime = iosched, workdir, runtime

    def job(self, name, text):
        path = os.path.join(self.workdir, name + ".fio")
        with open(path, "w") as f:
            f.write(text.replace("RUNTIME", str(self.runtime)))
        return path

    def engine(self, job, dev, sched):
        return run_json([self.iosched, "run", job, "--device", dev, "--scheduler", sched,
                         "--output-format", "json"])

    def kernel(self, job, dev, sched):
        return run_json([self.iosched, "kernel", job, "--device", dev, "--scheduler", sched,
                         "--output-format", "json"])


def iops(result, name=None):
    return sum(j["read"]["iops"] + j["write"]["iops"] for j in result["jobs"]
               if name is None or j["jobname"] == name)


def p99_us(result, name):
    job = next(j for j in result["jobs"] if j["jobname"] == name)
    side = job["read"] if job["read"]["total_ios"] else job["write"]
    pct = side["clat_ns"].get("percentile", {})
    return pct.get("99.000000", 0.0) / 1000.0


def summary(values):
    return (f"{statistics.median(values):8.3f} ({min(values):.3f}-{max(values):.3f})")


SINGLE = """[bench]
ioengine=io_uring
direct=1
bs=4k
rw={rw}
iodepth={depth}
size=128m
time_based
runtime=RUNTIME
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

READER_HOG = """[global]
ioengine=io_uring
direct=1
bs=4k
size=64m
time_based
runtime=RUNTIME
[reader]
cgroup=bench-reader
cgroup_weight=1000
rw=randread
iodepth=1
[hog]
cgroup=bench-hog
cgroup_weight=100
rw=randwrite
iodepth=32
offset=64m
"""


def engine_vs_fio(r, dev, pairs):
    for rw in ("randread", "randwrite"):
        for depth in (1, 32):
            job = r.job(f"{rw}-{depth}", SINGLE.format(rw=rw, depth=depth))
            ratios = []
            for _ in range(pairs):
                fio = iops(r.kernel(job, dev, "none"))
                eng = iops(r.engine(job, dev, "noop"))
                ratios.append(eng / fio)
            print(f"  engine noop / fio, {rw} QD{depth}: {summary(ratios)}")


def two_groups(r, dev, pairs):
    job = r.job("two-groups", TWO_GROUPS)
    rows = {"engine cfq": [], "kernel bfq": []}
    totals = {"engine cfq": [], "kernel bfq": []}
    for _ in range(pairs):
        none = iops(r.kernel(job, dev, "none"))
        for label, result in (("engine cfq", r.engine(job, dev, "cfq")),
                              ("kernel bfq", r.kernel(job, dev, "bfq"))):
            total = iops(result)
            rows[label].append(100.0 * iops(result, "heavy") / total)
            totals[label].append(total / none)
    for label in rows:
        print(f"  {label}: heavy share % {summary(rows[label])}, "
              f"total / none's {summary(totals[label])}")


def reader_hog(r, dev, pairs):
    job = r.job("reader-hog", READER_HOG)
    runners = [("kernel none", lambda: r.kernel(job, dev, "none")),
               ("engine cfq", lambda: r.engine(job, dev, "cfq")),
               ("kernel bfq", lambda: r.kernel(job, dev, "bfq")),
               ("kernel mq-deadline", lambda: r.kernel(job, dev, "mq-deadline"))]
    p99 = {label: [] for label, _ in runners}
    hog = {label: [] for label, _ in runners}
    for _ in range(pairs):
        base = None
        for label, run in runners:
            result = run()
            p99[label].append(p99_us(result, "reader"))
            rate = iops(result, "hog")
            base = rate if base is None else base
            hog[label].append(rate / base)
    for label, _ in runners:
        print(f"  {label:18}: reader p99 us {summary(p99[label])}, "
              f"hog / none's {summary(hog[label])}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=int, default=3)
    parser.add_argument("--mib", type=int, default=512)
    parser.add_argument("--only", choices=["shm", "disk"])
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root (loop devices, cgroups)")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "iosched"],
                   cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    iosched = os.path.join(target, "release", "iosched")
    places = [("shm", "/dev/shm"), ("disk", "/var/tmp")]
    with tempfile.TemporaryDirectory(prefix="iosched-bench-") as workdir:
        runner = Runner(iosched, workdir, args.runtime)
        for name, directory in places:
            if args.only and args.only != name:
                continue
            dev = Device(directory, args.mib)
            try:
                print(f"# loop over {directory} ({dev.path}), {args.pairs} pairs, "
                      f"{args.runtime} s each; median (range)")
                for section in (engine_vs_fio, two_groups, reader_hog):
                    print(f"# {section.__name__}: load before {load()}")
                    section(runner, dev.path, args.pairs)
                print(f"# load after {load()}")
            finally:
                dev.close()


if __name__ == "__main__":
    main()
