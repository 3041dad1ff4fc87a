#!/usr/bin/env python3
"""The same fio jobs through the kernel's own schedulers (`iosched kernel`, fio) and through
iosched's engine (`iosched run` on the same device), interleaved, on one loop device.

For each scheduler and driver: the total throughput and its ratio to the same driver's
`none`/`noop`, each cgroup's share beside its weight-ideal share, p50 and p99 total latency
(fio's lat, submission to completion: the kernel's fio counts the scheduler's wait in clat,
the engine in slat), and the scheduler's messages per kind (the kernel's from ftrace's
`blk` tracer via `iosched kernel --trace`, the engine's from its own `--trace`, taken only
when the engine runs on one thread). Medians over the runs, with the range, so a difference
can be held against the run-to-run spread.

fio runs each job with `cgroup=` inside that cgroup, and a loop device serves each cgroup
with a worker of its own; the engine does the same with `engine_threads=cgroups` (one
submitting thread per job cgroup, in that cgroup), which is what `--engine-threads auto`
picks for such a job.

    sudo scripts/kernel-side-by-side.py examples/two-groups.fio --runs 3 \
        --schedulers none,mq-deadline,kyber,bfq --image /var/tmp/sbs.img

`--cap` adds, in each round, the heaviest job alone (its own section of the job file, in its
cgroup) through the kernel's `none` and the engine's noop: with weight shares the heavy job's
own depth bounds the total to `alone / ideal share` (the real-device counterpart of the
simulated *10 % cap*, docs/tasks/adaptive.md), and to `alone / (ideal − 0.02)` at the edge
of a 2-point tolerance; both are printed ÷ the two-job `none` total of the same round.

Needs root, fio and a loop device; the image is made if missing and then removed with the
loop device when the run ends. It is written through, so that reads reach the disk: a sparse
file's holes read as zeros without any device I/O, which made earlier runs measure a CPU-bound
device (`--sparse` keeps that for comparison). Prints Markdown.
"""

import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

# A queue's or the scheduler's tag in a message: bfq, bfq1000S, bfq0A, cfq1000S, cfq1000.
TAG = re.compile(r"^(bfq|cfq)(\d+[ASG]?)?$")

# The message table's row for the events ftrace lost.
LOST = "(events lost by ftrace)"

# The engine's names for the kernel's schedulers.
ENGINE_NAME = {"none": "noop", "mq-deadline": "mq-deadline", "kyber": "kyber", "bfq": "bfq"}


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def engine_schedulers(iosched):
    listing = sh([iosched, "schedulers"]).stdout
    names = set()
    for line in listing.splitlines():
        if line and not line.startswith(" ") and ":" in line:
            head = line.split(":")[0]
            names.add(head.split(" ")[0])
            if "(alias" in head:
                names.update(a.strip() for a in head.split("(alias")[1].rstrip(")").split(","))
    return names


def message_kinds(trace_path):
    """Scheduler messages per kind in a blkparse-style or ftrace text trace."""
    kinds = collections.Counter()
    with open(trace_path, errors="replace") as f:
        for line in f:
            words = line.split()
            if "m" not in words:
                continue
            rest = words[words.index("m") + 1:]
            if rest and rest[0] == "N":
                rest = rest[1:]
            # The queue's tag (bfq1000S, bfq0A, bfq) and, in the engine's messages, its
            # cgroup's path come before the message, in either order. A message's own first
            # word may start with "bfq" too (bfqq_served), so a tag is matched exactly.
            while rest and (TAG.match(rest[0]) or rest[0].startswith("/")):
                rest = rest[1:]
            if rest:
                kinds[rest[0].rstrip(":,")] += 1
    return kinds


def metrics(report, trace_path):
    jobs = report["jobs"]
    total = sum(j["read"]["bw_bytes"] + j["write"]["bw_bytes"] for j in jobs) / 1e6
    lat = {}
    for j in jobs:
        # lat (submission to completion), not clat: fio on the kernel counts the wait in
        # the kernel's scheduler in clat, the engine (whose scheduler runs before
        # io_uring) in slat, so only their sum compares.
        pct = j["read"]["lat_ns"].get("percentile") or {}
        lat[j["jobname"]] = (pct.get("50.000000", 0) / 1e3, pct.get("99.000000", 0) / 1e3)
    # Little's law per job: I/Os per second x mean time in the device (fio's clat from the
    # engine, which submits after its scheduler) and in the scheduler before it (slat). On
    # the kernel clat holds the kernel scheduler's wait too, so only the engine's split.
    flight = {}
    for j in jobs:
        read = j["read"]
        iops = read.get("iops", 0)
        flight[j["jobname"]] = tuple(iops * (read.get(kind) or {}).get("mean", 0) / 1e9
                                     for kind in ("clat_ns", "slat_ns"))
    shares = {}
    for group in report.get("iosched", {}).get("cgroups") or []:
        shares[group["path"]] = (group["share"], group.get("ideal_share"))
    if "trace" in report.get("iosched", {}):
        kinds = collections.Counter(report["iosched"]["trace"]["messages"])
        # Events ftrace dropped because its reader fell behind: the kernel's counts are
        # short by up to this many lines (messages and request events together).
        kinds[LOST] = report["iosched"]["trace"].get("lost_events", 0)
    elif trace_path:
        kinds = message_kinds(trace_path)
    else:
        kinds = None
    # The engine's cross-thread traffic: a request its scheduler released on another job's
    # thread is handed over to its own (a wake-up), and the CPU each request cost.
    wall = report.get("iosched", {}).get("wall_clock") or {}
    requests = max(report.get("iosched", {}).get("requests") or 1, 1)
    threads = (wall.get("handed_over", 0) / requests, wall.get("cross_thread_wakes", 0) / requests,
               wall.get("cpu_ns_per_request", 0) / 1e3)
    return {"mb_s": total, "lat": lat, "shares": shares, "messages": kinds, "flight": flight,
            "threads": threads}


def with_lat_percentiles(job, out_dir):
    """A copy of `job` that also reports total-latency percentiles (fio's
    `lat_percentiles`), in a [global] section before the job's own."""
    path = os.path.join(out_dir, "lat-" + os.path.basename(job))
    with open(job) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write("[global]\nlat_percentiles=1\n\n" + text)
    return path


def sections(job):
    """The job file's sections in order, as (name, lines): fio's INI, `;`/`#` comments kept."""
    out = []
    with open(job) as f:
        for number, line in enumerate(f, 1):
            head = line.strip()
            if head.startswith("[") and head.endswith("]"):
                out.append((head[1:-1], []))
            elif out:
                out[-1][1].append(line)
            elif head and head[0] not in ";#":
                sys.exit(f"{job}:{number}: an option before the first section")
    return out


def heaviest(job):
    """The heaviest job's name, its weight's ideal share among the jobs, and a job file of
    the global section and that job alone. Every job must set `cgroup_weight`: the ideal
    share is the weight's."""
    weights = {}
    for name, lines in sections(job):
        if name == "global":
            continue
        values = [ln.split("=", 1)[1].strip() for ln in lines
                  if ln.split("=")[0].strip() == "cgroup_weight" and "=" in ln]
        if not values or not values[-1].isdigit() or int(values[-1]) == 0:
            sys.exit(f"--cap: {job}: job [{name}] sets no cgroup_weight (1-10000)")
        weights[name] = int(values[-1])
    if len(weights) < 2:
        sys.exit(f"--cap: {job}: needs two or more jobs with cgroup_weight")
    name = max(weights, key=lambda n: (weights[n], n))
    return name, weights[name] / sum(weights.values())


def alone_job(job, name, out_dir):
    """A copy of `job` with its [global] section and job `name` only."""
    path = os.path.join(out_dir, "alone-" + os.path.basename(job))
    with open(path, "w") as f:
        for section, lines in sections(job):
            if section in ("global", name):
                f.write(f"[{section}]\n" + "".join(lines))
    return path


def names_cgroups(job):
    """Whether a job file puts a job in a cgroup (`cgroup=`)."""
    with open(job) as f:
        return any(line.split("=")[0].strip() == "cgroup" for line in f)


def run_one(iosched, driver, sched, job, device, out_dir, index, fifo=None,
            engine_threads="1", traced=True):
    trace = os.path.join(out_dir, f"{driver}-{sched}-{index}.txt") if traced else None
    # chrt: fio, a child of `iosched kernel`, inherits the class. The engine stays as it is:
    # it refills in the turn it reaps, and at SCHED_FIFO it starves the loop device's worker.
    prefix = ["chrt", "-f", str(fifo)] if fifo and driver == "kernel" else []
    if driver == "kernel":
        args = [iosched, "kernel", job, "--device", device, "--scheduler", sched]
        if trace:
            args += ["--trace", trace]
    else:
        args = [iosched, "run", job, "--device", device, "--scheduler",
                ENGINE_NAME.get(sched, sched),
                "--output-format", "json", "--eta", "never"]
        # A trace is one thread's: with several the engine's messages are not counted.
        if engine_threads == "1":
            if trace:
                args += ["--trace", trace]
        else:
            args += ["--set", f"engine_threads={engine_threads}"]
            trace = None
    report = json.loads(sh(prefix + args).stdout)
    return metrics(report, trace)


def spread(values, fmt="{:.1f}"):
    med = statistics.median(values)
    return f"{fmt.format(med)} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def table(results, schedulers):
    rows = ["| scheduler | driver | MB/s | ÷ none | ÷ kernel none | shares (ideal) "
            "| p50 / p99 lat µs |",
            "|---|---|---|---|---|---|---|"]
    for sched in schedulers:
        for driver in ("kernel", "engine"):
            runs = results.get((driver, sched))
            if not runs:
                continue
            base = results.get((driver, "none"))
            mb = [r["mb_s"] for r in runs]
            ratio = "—"
            if base:
                ratio = spread([a["mb_s"] / b["mb_s"] for a, b in zip(runs, base)], "{:.2f}")
            kernel_base = results.get(("kernel", "none"))
            to_kernel = "—"
            if kernel_base:
                to_kernel = spread([a["mb_s"] / b["mb_s"] for a, b in zip(runs, kernel_base)],
                                   "{:.2f}")
            shares = ", ".join(
                f"{path} {spread([r['shares'][path][0] * 100 for r in runs])} %"
                f" ({(runs[0]['shares'][path][1] or 0) * 100:.1f})"
                for path in sorted(runs[0]["shares"]))
            lats = ", ".join(
                f"{name} {statistics.median(r['lat'][name][0] for r in runs):.0f} / "
                f"{statistics.median(r['lat'][name][1] for r in runs):.0f}"
                for name in sorted(runs[0]["lat"]))
            rows.append(f"| {sched} | {driver} | {spread(mb)} | {ratio} | {to_kernel} | {shares} "
                        f"| {lats} |")
    return "\n".join(rows)


def flight_table(results, schedulers):
    """The engine's requests per job in the device and in its scheduler (Little's law)."""
    rows = ["\nIn flight per job, engine (IOPS × mean clat in the device, × mean slat in "
            "the scheduler; medians and ranges):\n",
            "| scheduler | job | in device | in scheduler | handed over / request "
            "| cross-thread wakes / request | CPU µs / request |", "|---|---|---|---|---|---|---|"]
    for sched in schedulers:
        runs = results.get(("engine", sched)) or []
        for name in sorted(runs[0]["flight"]) if runs else []:
            device = spread([r["flight"][name][0] for r in runs], "{:.2f}")
            queued = spread([r["flight"][name][1] for r in runs], "{:.2f}")
            engine = " | ".join(spread([r["threads"][i] for r in runs], "{:.2f}")
                                for i in range(3))
            rows.append(f"| {sched} | {name} | {device} | {queued} | {engine} |")
    return "\n".join(rows)


def cap_table(results, name, share):
    """The heavy job alone against the two jobs through the kernel's `none`, per round: the
    total that weight shares allow, and the most a 2-point tolerance allows."""
    pairs = results.get(("kernel", "none")) or []
    rows = [f"\nThe cap: [{name}] alone (ideal share {share * 100:.1f} %), ÷ the two-job "
            "kernel `none` total of the same round (medians and ranges):\n",
            "| alone through | MB/s | alone ÷ two-job none | cap: alone / "
            f"{share:.3f} ÷ none | edge: alone / {share - 0.02:.3f} ÷ none |",
            "|---|---|---|---|---|"]
    for driver in ("kernel", "engine"):
        alone = results.get((driver, "alone")) or []
        if not alone or not pairs:
            continue
        ratio = [a["mb_s"] / b["mb_s"] for a, b in zip(alone, pairs)]
        rows.append(f"| {driver} {'none' if driver == 'kernel' else 'noop'} "
                    f"| {spread([a['mb_s'] for a in alone])} | {spread(ratio, '{:.2f}')} "
                    f"| {spread([r / share for r in ratio], '{:.2f}')} "
                    f"| {spread([r / (share - 0.02) for r in ratio], '{:.2f}')} |")
    return "\n".join(rows)


def message_table(results, sched):
    kernel = results.get(("kernel", sched)) or []
    engine = results.get(("engine", sched)) or []
    # Untraced runs (the engine on several threads) count nothing: "—", not 0.
    kernel = [r for r in kernel if r["messages"] is not None]
    engine = [r for r in engine if r["messages"] is not None]
    kinds = set()
    for r in kernel + engine:
        kinds.update(r["messages"])
    if not kinds:
        return ""
    rows = [f"\nMessages per run, {sched} (median of the runs):\n",
            "| kind | kernel | engine |", "|---|---|---|"]
    for kind in sorted(kinds):
        k = statistics.median(r["messages"].get(kind, 0) for r in kernel) if kernel else "—"
        e = statistics.median(r["messages"].get(kind, 0) for r in engine) if engine else "—"
        rows.append(f"| {kind} | {k} | {e} |")
    return "\n".join(rows)


def make_image(image, size, sparse=False):
    """Creates `image` of `size` bytes: written through (one random 4 MiB block repeated,
    then fsync'd) unless `sparse`, whose holes would be read without touching the disk."""
    with open(image, "wb") as f:
        if sparse:
            f.truncate(size)
            return
        block = os.urandom(4 << 20)
        left = size
        while left > 0:
            left -= f.write(block[:min(left, len(block))])
        f.flush()
        os.fsync(f.fileno())


def attach(image, size, sparse=False):
    """A loop device over `image`, and whether the image was made here (then it is removed
    with the device)."""
    made = not os.path.exists(image)
    if made:
        make_image(image, size, sparse)
    # Direct I/O on the backing file, so the page cache does not serve the reads.
    try:
        return sh(["losetup", "--direct-io=on", "-f", "--show", image]).stdout.strip(), made
    except subprocess.CalledProcessError:
        if made:
            os.remove(image)
        raise


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("job")
    p.add_argument("--device", help="a block device to use (else a loop device over --image)")
    p.add_argument("--image", default="/var/tmp/iosched-side-by-side.img")
    p.add_argument("--image-size", type=int, default=1 << 30)
    p.add_argument("--sparse", action="store_true",
                   help="make a missing image sparse (reads of its holes touch no disk)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--schedulers", default="none,mq-deadline,kyber,bfq")
    p.add_argument("--iosched", default="target/release/iosched")
    p.add_argument("--engine-only", default="",
                   help="iosched's own schedulers (cfq, adaptive), run through the engine only")
    p.add_argument("--fifo", type=int, metavar="PRIO",
                   help="run the kernel driver's fio at SCHED_FIFO priority PRIO (chrt -f), so that "
                        "fio's wake-up latency on a busy machine does not give BFQ's queues "
                        "long think times (docs/tasks/kernel.md)")
    p.add_argument("--engine-threads", default="auto",
                   help="the engine's `engine_threads`: auto (the default) is `cgroups` when "
                        "the job names cgroups, so that each job's requests reach the kernel "
                        "from a thread in its cgroup, as fio's do (the loop device serves each "
                        "cgroup with its own worker), and 1 otherwise; a run of several "
                        "threads is not traced, so the engine's messages are not counted")
    p.add_argument("--no-trace", action="store_true",
                   help="trace neither driver, so that neither pays for a trace (throughput "
                        "like for like; no message tables)")
    p.add_argument("--cap", action="store_true",
                   help="also run the heaviest job alone through the kernel's none and the "
                        "engine's noop in each round, and print the total weight shares allow")
    args = p.parse_args()
    heavy = heaviest(args.job) if args.cap else None
    if args.fifo is not None and not 1 <= args.fifo <= 99:
        sys.exit(f"--fifo: {args.fifo} is not a SCHED_FIFO priority (1-99)")
    if os.geteuid() != 0:
        sys.exit("kernel-side-by-side: needs root (loop devices, sysfs, tracefs)")
    schedulers = args.schedulers.split(",")
    unknown = [s for s in schedulers if s not in ENGINE_NAME]
    if unknown:
        sys.exit(f"--schedulers: unknown {', '.join(unknown)} (none, mq-deadline, kyber, bfq)")
    in_engine = engine_schedulers(args.iosched)
    own = [s for s in args.engine_only.split(",") if s]
    missing = [s for s in own if s not in in_engine]
    if missing:
        sys.exit(f"--engine-only: iosched has no scheduler {', '.join(missing)}")
    engine_threads = args.engine_threads
    if engine_threads == "auto":
        engine_threads = "cgroups" if names_cgroups(args.job) else "1"
    if args.cap and "none" not in schedulers:
        sys.exit("--cap: the cap is against the kernel's none: add none to --schedulers")
    device, made = (args.device, False) if args.device else attach(args.image, args.image_size, args.sparse)
    results = collections.defaultdict(list)
    try:
        with tempfile.TemporaryDirectory() as out_dir:
            job = with_lat_percentiles(args.job, out_dir)
            alone = heavy and with_lat_percentiles(alone_job(args.job, heavy[0], out_dir),
                                                   out_dir)
            for index in range(args.runs):
                if alone:
                    for driver in ("kernel", "engine"):
                        results[(driver, "alone")].append(
                            run_one(args.iosched, driver, "none", alone, device, out_dir,
                                    index, args.fifo, engine_threads, False))
                for sched in schedulers + own:
                    for driver in ("kernel", "engine"):
                        if driver == "kernel" and sched in own:
                            continue
                        if driver == "engine" and ENGINE_NAME.get(sched, sched) not in in_engine:
                            continue
                        results[(driver, sched)].append(
                            run_one(args.iosched, driver, sched, job, device, out_dir,
                                    index, args.fifo, engine_threads,
                                    not args.no_trace))
    finally:
        if not args.device:
            subprocess.run(["losetup", "-d", device], check=False)
        if made:
            os.remove(args.image)
    load = open("/proc/loadavg").read().split()[:3]
    print(f"`{' '.join(sys.argv)}`, {args.runs} interleaved runs, engine_threads="
          f"{engine_threads}, load {' '.join(load)}\n")
    print(table(results, schedulers + own))
    print(flight_table(results, schedulers + own))
    if heavy:
        print(cap_table(results, *heavy))
    for sched in schedulers:
        print(message_table(results, sched))


if __name__ == "__main__":
    main()
