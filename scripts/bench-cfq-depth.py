#!/usr/bin/env python3
"""Where CFQ's total goes: two groups at 1000:100 against fio at the depth CFQ keeps.

On a loop device over a file on the VM's disk, two 4 KiB random readers at QD8 in groups
weighted 1000:100 (bench-engine-vs-fio.py's two-group job), interleaved, every figure a
total / the kernel's `none` with both fio jobs (16 in flight):

- engine CFQ as Linux 4.20 (quantum 8), with `quantum=16`, with `slice_idle=0`, and with
  two worker threads; engine noop;
- one fio job on `none` at QD4, QD6 and QD8: what the device gives one queue at the depth
  CFQ keeps in it (CFQ serves one queue at a time).

Beside each engine row the engine's own device gauge (mean requests in flight), and the
heavy group's share (ideal 90.9 %). CFQ 4.20 lets an active queue keep only quantum/2
requests in flight while its slice is nearly used (cfq_may_dispatch with
cfq_slice_used_soon) and while the next queue waits, so the device holds 4-8 of its 8;
raising the quantum or dropping slice_idle lifts that cap, so the rows separate CFQ's own
rule from the engine's cost.

Usage: scripts/bench-cfq-depth.py [--pairs 5] [--runtime 3]. Needs root, losetup and fio.
"""

import argparse
import importlib.util
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "bench_engine_vs_fio", os.path.join(HERE, "bench-engine-vs-fio.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=int, default=3)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "iosched"],
                   cwd=bench.ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(bench.ROOT, "target"))
    iosched = os.path.join(target, "release", "iosched")
    with tempfile.TemporaryDirectory(prefix="iosched-bench-") as workdir:
        runner = bench.Runner(iosched, workdir, args.runtime)
        dev = bench.Device("/var/tmp", 512)
        try:
            measure(runner, iosched, dev.path, args.pairs)
        finally:
            dev.close()


def measure(r, iosched, dev, pairs):
    two = r.job("two-groups", bench.TWO_GROUPS)
    singles = {d: r.job(f"one-qd{d}", bench.SINGLE.format(rw="randread", depth=d))
               for d in (4, 6, 8)}

    def engine(scheduler, *settings):
        cmd = [iosched, "run", two, "--device", dev, "--scheduler", scheduler,
               "--output-format", "json"]
        for setting in settings:
            cmd += ["--set", setting]
        return lambda: r.sampled(cmd, dev)

    runs = [("kernel none, both jobs", lambda: r.kernel(two, dev, "none")),
            ("engine cfq", engine("cfq")),
            ("engine cfq quantum=16", engine("cfq", "quantum=16")),
            ("engine cfq slice_idle=0", engine("cfq", "slice_idle=0")),
            ("engine cfq 2 threads", engine("cfq", "engine_threads=2")),
            ("engine noop", engine("noop"))]
    runs += [(f"kernel none, 1 job QD{d}", lambda d=d: r.kernel(singles[d], dev, "none"))
             for d in singles]
    totals = {label: [] for label, _ in runs}
    gauge = {label: [] for label, _ in runs if label.startswith("engine")}
    shares = {label: [] for label, _ in runs if label.startswith("engine cfq")}
    print(f"# loop over /var/tmp ({dev}), {pairs} rounds; median (range); "
          f"load before {bench.load()}")
    for round_ in range(pairs):
        order = runs if round_ % 2 == 0 else runs[::-1]
        results = {label: run() for label, run in order}
        none = bench.iops(results["kernel none, both jobs"])
        for label, _ in runs:
            totals[label].append(bench.iops(results[label]) / none)
        for label in gauge:
            gauge[label].append(results[label]["iosched"]["inflight"]["device"]["mean"])
        for label in shares:
            result = results[label]
            shares[label].append(100.0 * bench.iops(result, "heavy") / bench.iops(result))
    for label, _ in runs:
        line = f"  {label:26} total / none's {bench.summary(totals[label])}"
        if label in gauge:
            line += f"; device in flight {statistics.mean(gauge[label]):.2f}"
        if label in shares:
            line += f"; heavy share % {bench.summary(shares[label])}"
        print(line)
    print(f"# load after {bench.load()}")


if __name__ == "__main__":
    main()
