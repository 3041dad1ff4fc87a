#!/usr/bin/env python3
"""Parse-and-start cost of many jobs (issue 28, item 4): 20,000 sections must take seconds.

Runs `iosched run` on a simulated device (`fixed`, noop) with job files of N tiny sections
(`[jK]` reading one 4 KiB block of its own file) for N = 2,000, 8,000 and 20,000, and one
section with `numjobs=20000`. Each job does one I/O, so the time is the job files' parsing,
the layout, the processes' start and end, and the report (fio's normal output, to
/dev/null): what grows with the job count. Prints the CPU time (user + system, from the
children's rusage) of each, median and range of --rounds rounds, with the time per job and
the growth from the previous size, and the load average before and after.

Usage: scripts/bench-job-count.py [--binary target/release/iosched] [--rounds 3]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

SECTION = "[j{index}]\nrw=read\nbs=4k\nsize=4k\n"
NUMJOBS = "[j]\nrw=read\nbs=4k\nsize=4k\nnumjobs={count}\n"


def job_files(directory):
    """(label, jobs, path) of every case."""
    cases = []
    for count in (2000, 8000, 20000):
        path = os.path.join(directory, f"sections-{count}.fio")
        with open(path, "w") as out:
            out.write("".join(SECTION.format(index=i) for i in range(count)))
        cases.append((f"{count} sections", count, path))
    path = os.path.join(directory, "numjobs-20000.fio")
    with open(path, "w") as out:
        out.write(NUMJOBS.format(count=20000))
    cases.append(("numjobs=20000", 20000, path))
    return cases


def cpu_seconds(binary, path, directory):
    """CPU time of one run; fails loudly if the run fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        [binary, "run", path, "--device", "fixed", "--scheduler", "noop"],
        cwd=directory,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"{path}: exit {result.returncode}: {result.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="target/release/iosched")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    print(f"# {binary}; CPU time of `iosched run FILE --device fixed --scheduler noop`")
    print(f"# median (range) of {args.rounds} rounds; load before {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="iosched-job-count-") as directory:
        cases = job_files(directory)
        times = {label: [] for label, _, _ in cases}
        # Interleaved rounds: a burst of other work on the machine spreads over the cases.
        for _ in range(args.rounds):
            for label, _, path in cases:
                times[label].append(cpu_seconds(binary, path, directory))
        previous = None
        for label, count, _ in cases:
            median = statistics.median(times[label])
            growth = ""
            if previous and label.endswith("sections"):
                growth = f"  x{median / previous[1]:.2f} for x{count / previous[0]:.1f} jobs"
            print(
                f"  {label:<16} {median:8.3f} s ({min(times[label]):.3f}-"
                f"{max(times[label]):.3f})  {median / count * 1e6:7.1f} us/job{growth}"
            )
            if label.endswith("sections"):
                previous = (count, median)
    print(f"# load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
