#!/usr/bin/env python3
"""Cost per simulated request with 4096 CFQ queues against one (issue 15, item 5).

Two runs of the same total I/O count on `nvme-gen4` under CFQ, 4 KiB random reads, direct,
iodepth=1: one process issuing them all (one CFQ queue) and 4096 processes issuing
1/4096 each (4096 queues). Prints:

* wall time and CPU time (user + system) per I/O of each, over interleaved rounds (one,
  many, one, many...), and the ratios many ÷ one per round: median and range, with the load
  average before and after (CPU time is less disturbed by other work on a shared machine);
* callgrind instruction counts and simulated first-level data-cache misses of one run of
  each (repeatable where wall time on a shared machine is not), for the whole process and
  for the simulation loop alone
  (`Simulation::run_until_stopped`: what remains once the per-job setup and the per-job
  output are left out), and their ratios;
* with --rss, the peak RSS of a 4096-process, 10 simulated-second run (the issue's
  memory figure, < 256 MiB);
* with --sweep 1,16,256,1024,4096, CPU time per I/O at each process count instead (the same
  total I/Os, interleaved rounds, under each of --schedulers), medians and ranges and each
  count's ratio to the first: where the cost per request steps up as the processes' state
  outgrows a cache level (issue 34);
* with --old OLD_BINARY, an interleaved A/B by time instead (old many, new many, old one,
  new one... per round): each binary's 4096-process wall and CPU time per I/O, the ratio
  new ÷ old per round, and each binary's many ÷ one ratio, medians and ranges, with the
  load average (issue 34: a machine shared with other work moves both binaries alike).

Usage: scripts/bench-scale.py [--binary target/release/iosched] [--ios 409600]
                              [--rounds 5] [--no-callgrind] [--rss] [--old OLD_BINARY]
                              [--sweep COUNTS [--schedulers cfq,noop]]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

JOB = """[global]
ioengine=libaio
direct=1
rw=randread
bs=4k
iodepth=1
{extra}
[{name}]
numjobs={numjobs}
size={size}
{amount}
"""

QUEUES = 4096


def job_file(directory, name, numjobs, ios_each, time_based=False):
    """Writes a job file; each clone reads `ios_each` blocks (or runs 10 s)."""
    if time_based:
        extra, amount, size = "time_based\nruntime=10\n", "", "64m"
    else:
        # A region as large as the I/Os, so the random map never runs dry.
        extra, amount = "", f"number_ios={ios_each}"
        size = f"{max(ios_each * 4, 64 * 1024)}k"
    path = os.path.join(directory, f"{name}.fio")
    with open(path, "w") as out:
        out.write(JOB.format(extra=extra, name=name, numjobs=numjobs, amount=amount, size=size))
    return path


def command(binary, job, output, scheduler="cfq"):
    return [binary, "run", job, "--device", "nvme-gen4", "--scheduler", scheduler,
            "--output-format", "json", "--output", output]


def total_ios(output):
    with open(output) as f:
        document = json.load(f)
    return sum(job["read"]["total_ios"] for job in document["jobs"])


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(binary, job, output, scheduler="cfq"):
    """Wall time and CPU time (user + system: less disturbed by other loads) of one run."""
    start, cpu = time.perf_counter(), cpu_seconds()
    subprocess.run(command(binary, job, output, scheduler), check=True,
                   stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    return elapsed, cpu_seconds() - cpu, total_ios(output)


def instructions(binary, job, output):
    """Instructions and first-level data-cache misses (reads + writes, callgrind's cache
    simulation: repeatable where the machine's own counters are not available) of one run,
    for the whole process and for the simulation loop (`Simulation::run_until_stopped`,
    inclusive) alone: {"whole": (Ir, D1 misses), "loop": (Ir, D1 misses)}."""
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as profile:
        subprocess.run(["valgrind", "--tool=callgrind", "--cache-sim=yes",
                        f"--callgrind-out-file={profile.name}"]
                       + command(binary, job, output), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes",
                                    "--show=Ir,D1mr,D1mw", profile.name],
                                   check=True, capture_output=True, text=True).stdout
    found = {}
    for line in annotated.splitlines():
        # Three counts, each followed by its share in parentheses, then the name.
        fields = [f.strip().replace(",", "") for f in line.split(")")[:3]]
        try:
            ir, d1mr, d1mw = (int(f.split("(")[0].strip() or 0) for f in fields)
        except ValueError:
            continue
        if "PROGRAM TOTALS" in line:
            found["whole"] = (ir, d1mr + d1mw)
        elif "Simulation::run_until_stopped" in line:
            # Several lines can name it (a binary built elsewhere lists its inlined copies
            # under other file names); the outermost, inclusive one is the largest.
            if ir > found.get("loop", (0, 0))[0]:
                found["loop"] = (ir, d1mr + d1mw)
    if len(found) < 2:
        raise RuntimeError("callgrind_annotate gave no totals (release build without symbols?)")
    return found


def callgrind(binary, one, many, out, ios):
    """Instruction counts and D1 misses per I/O, their ratios, and the per-process cost
    outside the loop (setting up a clone, writing its JSON object) with what it adds per I/O
    at other run lengths."""
    a, b = (instructions(binary, job, out) for job in (one, many))
    for label, key in (("whole process", "whole"), ("simulation loop", "loop")):
        (ir1, m1), (irn, mn) = a[key], b[key]
        print(f"callgrind {label}: 1 queue {ir1 / ios:.0f} instr/IO, "
              f"{QUEUES} queues {irn / ios:.0f} instr/IO, ratio {irn / ir1:.2f}; "
              f"D1 misses/IO {m1 / ios:.1f} vs {mn / ios:.1f}")
    whole1, loop1 = a["whole"][0], a["loop"][0]
    whole_n, loop_n = b["whole"][0], b["loop"][0]
    per_process = ((whole_n - loop_n) - (whole1 - loop1)) / (QUEUES - 1)
    print(f"outside the loop: {per_process / 1e3:.0f} K instructions per extra process "
          f"(setup, results, fio JSON)")
    for each in (100, 342, 1700):
        projected = (loop_n / ios + per_process / each) / (whole1 / ios)
        print(f"  projected whole-process ratio at {each} I/Os per process: {projected:.2f}")


def ab(old, new, one, many, out, ios, rounds):
    """Interleaved A/B of two binaries on both runs: each round runs old and new on the
    4096-process job, then on the one-process job, alternating which goes first."""
    ratios = {"new/old many": [], "new/old one": [], "old many/one": [], "new many/one": []}
    cpu = {key: [] for key in ratios}
    for round_ in range(rounds):
        order = [("old", old), ("new", new)]
        if round_ % 2:
            order.reverse()
        got = {}
        for job_name, job in (("many", many), ("one", one)):
            for name, binary in order:
                wall, cpu_s, n = timed(binary, job, out)
                assert n == ios, (n, ios)
                got[(name, job_name)] = (wall, cpu_s)
        for index, store in ((0, ratios), (1, cpu)):
            value = {k: v[index] for k, v in got.items()}
            store["new/old many"].append(value[("new", "many")] / value[("old", "many")])
            store["new/old one"].append(value[("new", "one")] / value[("old", "one")])
            store["old many/one"].append(value[("old", "many")] / value[("old", "one")])
            store["new many/one"].append(value[("new", "many")] / value[("new", "one")])
        print(f"  round {round_ + 1} (load {load()}): many ns/IO old "
              f"{got[('old', 'many')][0] / ios * 1e9:.0f} new {got[('new', 'many')][0] / ios * 1e9:.0f}; "
              f"one old {got[('old', 'one')][0] / ios * 1e9:.0f} new {got[('new', 'one')][0] / ios * 1e9:.0f}")
    for key in ratios:
        print(f"{key}: wall {describe(ratios[key])}; CPU {describe(cpu[key])}")


def sweep(binary, directory, out, ios, counts, schedulers, rounds):
    """CPU ns per I/O at each process count (each a divisor of `ios`), every count and
    scheduler once per round, the order reversed every other round."""
    jobs = {n: job_file(directory, f"p{n}", n, ios // n) for n in counts}
    runs = [(scheduler, n) for scheduler in schedulers for n in counts]
    cpu = {run: [] for run in runs}
    for round_ in range(rounds):
        for scheduler, n in (runs if round_ % 2 == 0 else runs[::-1]):
            _, cpu_s, done = timed(binary, jobs[n], out, scheduler)
            assert done == ios, (done, ios)
            cpu[(scheduler, n)].append(cpu_s / ios * 1e9)
        print(f"  round {round_ + 1} done (load {load()})")
    for scheduler in schedulers:
        base = statistics.median(cpu[(scheduler, counts[0])])
        for n in counts:
            values = cpu[(scheduler, n)]
            median = statistics.median(values)
            print(f"{scheduler} {n:5d} processes: CPU {median:.0f} ns/IO "
                  f"(range {min(values):.0f}-{max(values):.0f}), "
                  f"{median / base:.2f}x {counts[0]} process(es)")


def load():
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def describe(ratios):
    return f"median {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="target/release/iosched")
    parser.add_argument("--ios", type=int, default=QUEUES * 100,
                        help="total I/Os of each run (a multiple of 4096)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-callgrind", action="store_true")
    parser.add_argument("--rss", action="store_true")
    parser.add_argument("--old", help="an earlier binary: interleaved A/B by time against it")
    parser.add_argument("--sweep", help="process counts, comma-separated (each divides --ios)")
    parser.add_argument("--schedulers", default="cfq", help="with --sweep: comma-separated")
    args = parser.parse_args()
    if args.sweep:
        try:
            counts = [int(n) for n in args.sweep.split(",")]
        except ValueError:
            sys.exit(f"--sweep: not a list of process counts: {args.sweep!r}")
        if any(n < 1 or args.ios % n for n in counts):
            sys.exit(f"--sweep: every count must be at least 1 and divide --ios ({args.ios})")
        directory = tempfile.mkdtemp(prefix="bench-scale-")
        try:
            print(f"{args.ios} I/Os at {args.sweep} processes, nvme-gen4, randread 4k direct "
                  f"iodepth=1; load before {load()}")
            sweep(os.path.abspath(args.binary), directory, os.path.join(directory, "out.json"),
                  args.ios, counts, args.schedulers.split(","), args.rounds)
            print(f"load after {load()}")
        finally:
            shutil.rmtree(directory)
        return
    if args.ios % QUEUES:
        sys.exit("--ios must be a multiple of 4096")
    binary = os.path.abspath(args.binary)
    directory = tempfile.mkdtemp(prefix="bench-scale-")
    try:
        one = job_file(directory, "one", 1, args.ios)
        many = job_file(directory, "many", QUEUES, args.ios // QUEUES)
        out = os.path.join(directory, "out.json")
        print(f"{args.ios} I/Os: 1 process vs {QUEUES} processes, nvme-gen4, cfq, "
              f"randread 4k direct iodepth=1; load before {load()}")
        if args.old:
            ab(os.path.abspath(args.old), binary, one, many, out, args.ios, args.rounds)
            print(f"load after {load()}")
            return
        ratios, cpu_ratios = [], []
        for round_ in range(args.rounds):
            t1, c1, n1 = timed(binary, one, out)
            tn, cn, nn = timed(binary, many, out)
            assert n1 == nn == args.ios, (n1, nn)
            ratios.append(tn / t1)
            cpu_ratios.append(cn / c1)
            print(f"  round {round_ + 1} (load {load()}): 1 queue {t1 / n1 * 1e9:.0f} ns/IO "
                  f"(CPU {c1 / n1 * 1e9:.0f}), {QUEUES} queues {tn / nn * 1e9:.0f} ns/IO "
                  f"(CPU {cn / nn * 1e9:.0f}), ratio {tn / t1:.2f} (CPU {cn / c1:.2f})")
        print(f"wall time per I/O, {QUEUES} queues / 1: {describe(ratios)}")
        print(f"CPU time per I/O, {QUEUES} queues / 1: {describe(cpu_ratios)}; "
              f"load after {load()}")
        if not args.no_callgrind:
            if shutil.which("valgrind") is None:
                print("callgrind: SKIPPED (no valgrind)")
            else:
                callgrind(binary, one, many, out, args.ios)
        if args.rss:
            long_run = job_file(directory, "long", QUEUES, 0, time_based=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            subprocess.run(command(binary, long_run, out), check=True, stdout=subprocess.DEVNULL)
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            note = "" if peak > before else " (at most; an earlier run peaked higher)"
            print(f"peak RSS, {QUEUES} processes, 10 s: {peak / 1024:.1f} MiB{note}, "
                  f"{total_ios(out)} I/Os")
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
