#!/usr/bin/env python3
"""The engine against fio on the same loop devices, interleaved, with medians and ranges.

Three questions, each asked on a loop device over /dev/shm (CPU cost dominates) and over a
file on the VM's disk (a real queue), with every pair run back to back (A, B, A, B ...) so
that load on this shared machine hits both sides alike:

1. engine noop / fio IOPS (fio's io_uring on the kernel's `none`): 4 KiB randread and
   randwrite at QD1 and QD32;
2. two groups weighted 1000:100, a 4 KiB random reader at QD8 in each: engine CFQ's heavy
   share (ideal 90.9 %) and its total / kernel none's total, beside engine noop and the
   kernel's BFQ, and beside one fio job at QD8 and at QD16 on `none` (what the device gives
   one process at the depth CFQ keeps in it, and at both jobs' depth);
3. a QD1 random reader (weight 1000) beside a QD32 random-write hog (weight 100): the
   reader's p99 completion latency and the hog's throughput / its rate under `none`, for
   engine CFQ, kernel none, BFQ and mq-deadline.

Pairs alternate which side goes first. The disk-backed image is written out with data
first, so reads reach the disk instead of reading holes. Beside each ratio the script
prints the device's mean in-flight count, sampled from /sys/block/<loop>/inflight every
5 ms during each run, for both sides (the engine's own gauge, iosched.inflight, says the
same from inside).

The QD1 randread rows run a third side in every pair: `bare_qd1` (crates/engine/examples),
a bare io_uring loop with fio's ring and fio's two system calls per I/O and nothing else.
Engine / bare says what the engine's own code costs; bare / fio what no io_uring loop that
does only fio's system calls gets on this machine. Its involuntary context switches per
I/O (the loop's worker preempting it on its CPU) tell the fast placement from the slow.

Each engine/fio row also prints both sides' IOPS, the ratio of their medians (less swayed
than the median of per-pair ratios when single runs land far apart), and each side's CPU
time per I/O (user, system; fio's job process, the engine's one thread). At QD1 on this VM a
run lands either near 40 k IOPS or near 4 k (the submitter and the loop's worker on one CPU,
or on two that each halt between I/Os), for either side at random, so one pair can say 0.1
or 10; read the IOPS ranges and use more pairs there.

Usage: scripts/bench-engine-vs-fio.py [--pairs 5] [--runtime 3] [--mib 512] [--only shm|disk]
                                      [--rows randwrite-1,randread]
`--rows` runs only the engine/fio rows named (`RW` or `RW-DEPTH`), not the other sections.
Needs root, losetup and fio. Prints the load average before and after each section.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

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
        # Data everywhere: a hole reads as zeros without touching the disk.
        subprocess.run(["dd", "if=/dev/zero", f"of={self.image}", "bs=1M", f"count={mib}",
                        "conv=fsync", "status=none"], check=True)
        self.path = subprocess.run(
            ["losetup", "-f", "--show", "--direct-io=on", self.image],
            capture_output=True, text=True, check=True).stdout.strip()

    def close(self):
        subprocess.run(["losetup", "-d", self.path], check=False)
        os.unlink(self.image)


class Sampler:
    """Mean of the device's in-flight count (reads + writes), read every 5 ms while a run
    is under way."""

    def __init__(self, dev):
        self.file = f"/sys/block/{os.path.basename(dev)}/inflight"
        self.samples = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.stop.is_set():
            with open(self.file) as f:
                self.samples.append(sum(int(v) for v in f.read().split()))
            time.sleep(0.005)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *args):
        self.stop.set()
        self.thread.join()

    def mean(self):
        busy = [v for v in self.samples if v > 0] or [0]
        # Setup and teardown (file lay-out, cgroups) show as zeros: the busy part counts.
        return statistics.mean(busy)


class Runner:
    def __init__(self, iosched, workdir, runtime):
        self.iosched, self.workdir, self.runtime = iosched, workdir, runtime
        self.bare_qd1 = os.path.join(os.path.dirname(iosched), "examples", "bare_qd1")
        self.inflight = []

    def job(self, name, text):
        path = os.path.join(self.workdir, name + ".fio")
        with open(path, "w") as f:
            f.write(text.replace("RUNTIME", str(self.runtime)))
        return path

    def sampled(self, cmd, dev):
        with Sampler(dev) as sampler:
            result = run_json(cmd)
        self.inflight.append(sampler.mean())
        return result

    def engine(self, job, dev, sched):
        return self.sampled([self.iosched, "run", job, "--device", dev, "--scheduler", sched,
                             "--output-format", "json"], dev)

    def bare(self, dev):
        return self.sampled([self.bare_qd1, dev, str(self.runtime)], dev)

    def kernel(self, job, dev, sched):
        return self.sampled([self.iosched, "kernel", job, "--device", dev, "--scheduler", sched,
                             "--output-format", "json"], dev)


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


def cpu_us_per_io(result):
    """(user, system) CPU microseconds per I/O of the first job: fio's usr_cpu and sys_cpu
    are percent of the job's runtime (the engine reports the same for its thread)."""
    job = result["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    runtime_us = job["job_runtime"] * 1000.0
    return tuple(job[key] / 100.0 * runtime_us / max(ios, 1) for key in ("usr_cpu", "sys_cpu"))


def wanted(rows, rw, depth):
    return rows is None or rw in rows or f"{rw}-{depth}" in rows


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


def engine_vs_fio(r, dev, pairs, rows=None):
    for rw in ("randread", "randwrite"):
        for depth in (1, 32):
            if not wanted(rows, rw, depth):
                continue
            job = r.job(f"{rw}-{depth}", SINGLE.format(rw=rw, depth=depth))
            ratios, fio_iops, eng_iops, fio_depth, eng_depth, gauge = [], [], [], [], [], []
            cpu = {"fio": [], "engine": []}
            if rw == "randread" and depth == 1:
                bare_vs(r, job, dev, pairs)
                continue
            for pair in range(pairs):
                # Alternate who goes first, so a trend in the load hits both sides alike.
                if pair % 2 == 0:
                    fio, eng = r.kernel(job, dev, "none"), r.engine(job, dev, "noop")
                    fio_depth.append(r.inflight[-2])
                    eng_depth.append(r.inflight[-1])
                else:
                    eng, fio = r.engine(job, dev, "noop"), r.kernel(job, dev, "none")
                    eng_depth.append(r.inflight[-2])
                    fio_depth.append(r.inflight[-1])
                ratios.append(iops(eng) / iops(fio))
                fio_iops.append(iops(fio) / 1000)
                eng_iops.append(iops(eng) / 1000)
                cpu["fio"].append(cpu_us_per_io(fio))
                cpu["engine"].append(cpu_us_per_io(eng))
                gauge.append(eng["iosched"]["inflight"]["device"]["mean"])
            print(f"  engine noop / fio, {rw} QD{depth}: {summary(ratios)}; fio kIOPS "
                  f"{summary(fio_iops)}; in flight (sampled) fio {statistics.mean(fio_depth):.1f}"
                  f", engine {statistics.mean(eng_depth):.1f} (its gauge "
                  f"{statistics.mean(gauge):.1f})")
            per_io = "; ".join(
                f"{side} {statistics.median(u for u, _ in v):.2f} usr + "
                f"{statistics.median(k for _, k in v):.2f} sys" for side, v in cpu.items())
            print(f"    engine kIOPS {summary(eng_iops)}; ratio of medians "
                  f"{statistics.median(eng_iops) / statistics.median(fio_iops):.3f}; "
                  f"CPU us per I/O (median) {per_io}")


def bare_vs(r, job, dev, pairs):
    """QD1 randread: engine noop, fio on `none` and the bare loop, the order rotated each
    round so that each goes first, second and third equally often."""
    sides = {"engine": lambda: iops(r.engine(job, dev, "noop")),
             "fio": lambda: iops(r.kernel(job, dev, "none")),
             "bare": lambda: r.bare(dev)}
    order = ["fio", "engine", "bare"]
    got = {name: [] for name in sides}
    involuntary = []
    for round_ in range(pairs):
        for name in order[round_ % 3:] + order[:round_ % 3]:
            result = sides[name]()
            if name == "bare":
                involuntary.append(result["involuntary_switches_per_io"])
                result = result["iops"]
            got[name].append(result / 1000)
    ratio = lambda a, b: [x / y for x, y in zip(got[a], got[b])]
    print(f"  engine noop / fio, randread QD1: {summary(ratio('engine', 'fio'))}; "
          f"engine / bare {summary(ratio('engine', 'bare'))}; bare / fio "
          f"{summary(ratio('bare', 'fio'))}")
    print("    kIOPS " + "; ".join(f"{name} {summary(v)}" for name, v in got.items())
          + f"; bare's involuntary switches per I/O {summary(involuntary)}")


def two_groups(r, dev, pairs):
    job = r.job("two-groups", TWO_GROUPS)
    # Where none's total comes from: one fio process at the depth CFQ keeps in the device
    # (one queue at a time, at most `quantum`), and one process at both jobs' depth.
    one8 = r.job("one-qd8", SINGLE.format(rw="randread", depth=8))
    one16 = r.job("one-qd16", SINGLE.format(rw="randread", depth=16))
    labels = ("engine cfq", "engine noop", "kernel bfq", "kernel none 1 job QD8",
              "kernel none 1 job QD16")
    rows = {label: [] for label in labels}
    totals = {label: [] for label in labels}
    gauge = {label: [] for label in ("engine cfq", "engine noop")}
    for pair in range(pairs):
        first = [("none", lambda: r.kernel(job, dev, "none")),
                 ("engine cfq", lambda: r.engine(job, dev, "cfq")),
                 ("engine noop", lambda: r.engine(job, dev, "noop")),
                 ("kernel bfq", lambda: r.kernel(job, dev, "bfq")),
                 ("kernel none 1 job QD8", lambda: r.kernel(one8, dev, "none")),
                 ("kernel none 1 job QD16", lambda: r.kernel(one16, dev, "none"))]
        order = first if pair % 2 == 0 else first[::-1]
        results = {label: run() for label, run in order}
        none = iops(results["none"])
        for label in labels:
            result = results[label]
            total = iops(result)
            heavy = iops(result, "heavy") if len(result["jobs"]) > 1 else total
            rows[label].append(100.0 * heavy / total)
            totals[label].append(total / none)
        for label in gauge:
            gauge[label].append(results[label]["iosched"]["inflight"]["device"]["mean"])
    for label in rows:
        extra = (f"; device in flight (its gauge) {statistics.mean(gauge[label]):.1f}"
                 if label in gauge else "")
        print(f"  {label}: heavy share % {summary(rows[label])}, "
              f"total / none's {summary(totals[label])}{extra}")


def reader_hog(r, dev, pairs):
    job = r.job("reader-hog", READER_HOG)
    runners = [("kernel none", lambda: r.kernel(job, dev, "none")),
               ("engine cfq", lambda: r.engine(job, dev, "cfq")),
               ("kernel bfq", lambda: r.kernel(job, dev, "bfq")),
               ("kernel mq-deadline", lambda: r.kernel(job, dev, "mq-deadline"))]
    p99 = {label: [] for label, _ in runners}
    hog = {label: [] for label, _ in runners}
    for pair in range(pairs):
        order = runners if pair % 2 == 0 else runners[::-1]
        results = {label: run() for label, run in order}
        base = iops(results["kernel none"], "hog")
        for label, _ in runners:
            p99[label].append(p99_us(results[label], "reader"))
            hog[label].append(iops(results[label], "hog") / base)
    for label, _ in runners:
        print(f"  {label:18}: reader p99 us {summary(p99[label])}, "
              f"hog / none's {summary(hog[label])}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=int, default=3)
    parser.add_argument("--mib", type=int, default=512)
    parser.add_argument("--only", choices=["shm", "disk"])
    parser.add_argument("--rows", help="only these engine/fio rows: RW or RW-DEPTH, commas")
    args = parser.parse_args()
    rows = None
    if args.rows:
        rows = set(args.rows.split(","))
        known = {f"{rw}-{d}" for rw in ("randread", "randwrite") for d in (1, 32)}
        known |= {"randread", "randwrite"}
        if not rows <= known:
            sys.exit(f"bench: --rows: unknown {sorted(rows - known)}; known {sorted(known)}")
    if os.geteuid() != 0:
        sys.exit("bench: needs root (loop devices, cgroups)")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "iosched"],
                   cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "iosched-engine",
                    "--example", "bare_qd1"], cwd=ROOT, check=True)
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
                if rows is not None:
                    print(f"# engine_vs_fio ({args.rows}): load before {load()}")
                    engine_vs_fio(runner, dev.path, args.pairs, rows)
                for section in (engine_vs_fio, two_groups, reader_hog) if rows is None else ():
                    print(f"# {section.__name__}: load before {load()}")
                    section(runner, dev.path, args.pairs)
                print(f"# load after {load()}")
            finally:
                dev.close()


if __name__ == "__main__":
    main()
