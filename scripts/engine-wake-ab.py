#!/usr/bin/env python3
"""Interleaved A/B of the engine's CPU and wake-ups per request on one device: in each round
the kernel's `none` (fio through `iosched kernel`) first, then each binary and scheduler
through the engine (`engine_threads=cgroups`) under `perf record` of the engine's own
context switches (`sched:sched_switch`, counted where its threads are switched out),
`io_uring_enter` calls and `write`s (eventfd wake-ups of another worker).

Per run: MB/s and its ratio to the kernel's `none` of the same round, the heavy job's
share, the engine's CPU per request (its own getrusage), context switches per request (all
threads, then per worker: worker 0 holds the first job's clones, worker 1 the next), the
hand-overs and the wake-ups they cost per request, the load average, the requests the
kernel held on average (the device's time in queue over the run's time), and where the
first (heavy) job's requests were, by Little's law: in the scheduler, between the dispatch
and the `io_uring_enter` that took them, from there to the reaping thread's wake-up (the
device, the kernel's completion and the wake-up), and in the turn that reaped them. Medians and
ranges over the rounds. On a machine shared with other work the CPU and switches per
request are the comparable figures; the throughput follows the load.

    sudo scripts/engine-wake-ab.py examples/two-groups.fio --device /dev/loop0 --rounds 5 \
        --binary main=/tmp/iosched-main --binary new=target/release/iosched \
        --schedulers adaptive,bfq

Needs root and perf. Prints Markdown.
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile


def sh(args):
    return subprocess.run(args, check=True, capture_output=True, text=True)


def kernel_none(iosched, job, device):
    report = json.loads(sh([iosched, "kernel", job, "--device", device,
                            "--scheduler", "none"]).stdout)
    return sum(j["read"]["bw_bytes"] + j["write"]["bw_bytes"] for j in report["jobs"]) / 1e6


def kernel_inflight_ms(device):
    """The device's time in queue (`/sys/block/X/stat` field 11: every request's time in the
    block layer summed, ms): over a run's time, the mean requests the kernel held."""
    name = os.path.basename(os.path.realpath(device))
    with open(f"/sys/block/{name}/stat") as f:
        return int(f.read().split()[10])


def stage_counts(report):
    """The heavy (first) job's requests by stage, by Little's law (the engine's
    `inflight.jobs[].stages`, when the binary reports them)."""
    jobs = report["iosched"].get("inflight", {}).get("jobs", [])
    if not jobs or "stages" not in jobs[0]:
        return {}
    stages = jobs[0]["stages"]
    return {f"heavy_{stage}": stages[stage]["mean_count"]
            for stage in ("scheduler", "engine", "device", "reap")}


def runqueue(workers, elapsed_ns):
    """Worker 0's (the first job's) time runnable and not running, as a share of the run
    and per time slice (the engine's `wall_clock.workers`, from the kernel's schedstat)."""
    if not workers or not workers[0]["slices"]:
        return {}
    first = workers[0]
    return {"runqueue_pct": 100 * first["runqueue_ns"] / max(elapsed_ns, 1),
            "runqueue_us": first["runqueue_ns"] / first["slices"] / 1e3}


def engine_run(iosched, sched, job, device, out_dir):
    data = os.path.join(out_dir, "perf.data")
    events = ["sched:sched_switch", "syscalls:sys_enter_io_uring_enter",
              "syscalls:sys_enter_write"]
    args = ["perf", "record", "-q", "-o", data]
    for event in events:
        args += ["-e", event]
    args += ["--", iosched, "run", job, "--device", device, "--scheduler", sched,
             "--output-format", "json", "--eta", "never", "--set", "engine_threads=cgroups"]
    queued_ms = kernel_inflight_ms(device)
    report = json.loads(sh(args).stdout)
    queued_ms = kernel_inflight_ms(device) - queued_ms
    counts = collections.Counter()
    pid = None
    for line in sh(["perf", "script", "-i", data, "-F", "pid,tid,event"]).stdout.splitlines():
        words = line.split()
        if len(words) < 2:
            continue
        p, tid = words[0].split("/")
        pid = pid or p
        counts[(tid, words[1].rstrip(":"))] += 1
    os.remove(data)
    io = report["iosched"]
    wall = io["wall_clock"]
    requests = max(io["requests"], 1)
    total = sum(j["read"]["bw_bytes"] + j["write"]["bw_bytes"] for j in report["jobs"]) / 1e6
    shares = {g["path"]: g["share"] for g in io["cgroups"]}
    heavy = max(shares.values()) if shares else 0.0
    tids = sorted({tid for tid, _ in counts}, key=lambda t: (t != pid, int(t)))
    switch = "sched:sched_switch"
    per_thread = [counts[(tid, switch)] / requests for tid in tids]
    light_ios = min((j["read"]["total_ios"] for j in report["jobs"]), default=0)
    return {
        "mb_s": total,
        "heavy": heavy * 100,
        "cpu_us": wall.get("cpu_ns_per_request", 0) / 1e3,
        "switches": sum(counts[(tid, switch)] for tid in tids) / requests,
        "worker0": per_thread[0] if per_thread else 0.0,
        "worker1": per_thread[1] if len(per_thread) > 1 else 0.0,
        "light_wakes": (counts[(tids[1], switch)] / light_ios
                        if len(tids) > 1 and light_ios else 0.0),
        "enters": sum(counts[(tid, "syscalls:sys_enter_io_uring_enter")] for tid in tids)
        / requests,
        "writes": sum(counts[(tid, "syscalls:sys_enter_write")] for tid in tids) / requests,
        "handed": wall.get("handed_over", 0) / requests,
        "handover_wakes": wall.get("handover_wakes", 0) / requests,
        "kernel_inflight": queued_ms * 1e6 / max(io["elapsed_ns"], 1),
        **runqueue(wall.get("workers", []), io["elapsed_ns"]),
        **stage_counts(report),
    }


def spread(values, fmt="{:.2f}"):
    med = statistics.median(values)
    return f"{fmt.format(med)} ({fmt.format(min(values))}–{fmt.format(max(values))})"


COLUMNS = [("MB/s", "mb_s", "{:.0f}"), ("÷ kernel none", "ratio", "{:.2f}"),
           ("heavy %", "heavy", "{:.1f}"), ("CPU µs / req", "cpu_us", "{:.2f}"),
           ("switches / req", "switches", "{:.3f}"), ("worker 0", "worker0", "{:.3f}"),
           ("worker 1", "worker1", "{:.3f}"), ("worker 1 / light I/O", "light_wakes", "{:.2f}"),
           ("enters / req", "enters", "{:.3f}"), ("writes / req", "writes", "{:.4f}"),
           ("handed / req", "handed", "{:.4f}"), ("handover wakes / req", "handover_wakes",
                                                  "{:.4f}"),
           ("kernel in flight", "kernel_inflight", "{:.2f}"),
           ("worker 0 runnable %", "runqueue_pct", "{:.0f}"),
           ("µs / slice", "runqueue_us", "{:.0f}"),
           ("heavy: scheduler", "heavy_scheduler", "{:.2f}"),
           ("engine", "heavy_engine", "{:.2f}"), ("device", "heavy_device", "{:.2f}"),
           ("reap", "heavy_reap", "{:.2f}")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("job")
    p.add_argument("--device", required=True)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--binary", action="append", required=True, metavar="NAME=PATH")
    p.add_argument("--schedulers", default="adaptive,bfq")
    p.add_argument("--kernel", action="store_true",
                   help="also run the kernel's none first in each round (the ratio column)")
    p.add_argument("--raw", metavar="FILE", help="also write every run as a JSON line here")
    args = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("engine-wake-ab: needs root (perf, the device)")
    binaries = [b.split("=", 1) for b in args.binary]
    schedulers = args.schedulers.split(",")
    results = collections.defaultdict(list)
    loads = []
    with tempfile.TemporaryDirectory() as out_dir:
        for _ in range(args.rounds):
            loads.append(open("/proc/loadavg").read().split()[0])
            base = kernel_none(binaries[0][1], args.job, args.device) if args.kernel else None
            if base:
                results[("kernel", "none")].append({"mb_s": base, "ratio": 1.0})
            for sched in schedulers:
                for name, path in binaries:
                    run = engine_run(path, sched, args.job, args.device, out_dir)
                    run["ratio"] = run["mb_s"] / base if base else 0.0
                    results[(name, sched)].append(run)
    loads.append(open("/proc/loadavg").read().split()[0])
    print(f"`{' '.join(sys.argv)}`, {args.rounds} interleaved rounds, load (1 min) at each "
          f"round's start and the end: {' '.join(loads)}\n")
    print("| run | " + " | ".join(title for title, _, _ in COLUMNS) + " |")
    print("|---|" + "---|" * len(COLUMNS))
    for (name, sched), runs in results.items():
        cells = [spread([r[key] for r in runs], fmt) if key in runs[0] else "—"
                 for _, key, fmt in COLUMNS]
        print(f"| {sched} {name} | " + " | ".join(cells) + " |")
    # The same round's runs side by side: each binary after the first over the first.
    first = binaries[0][0]
    paired = [(name, sched) for sched in schedulers for name, _ in binaries[1:]]
    if paired:
        print(f"\nPer round, ÷ {first}'s run of the same round (medians and ranges):\n")
        print("| run | CPU µs / req | switches / req | enters / req | MB/s | kernel in flight |")
        print("|---|---|---|---|---|---|")
        for name, sched in paired:
            pairs = list(zip(results[(name, sched)], results[(first, sched)]))
            cells = [spread([a[key] / b[key] for a, b in pairs if b[key]])
                     for key in ("cpu_us", "switches", "enters", "mb_s", "kernel_inflight")]
            print(f"| {sched} {name} ÷ {first} | " + " | ".join(cells) + " |")
    if args.raw:
        with open(args.raw, "w") as f:
            for (name, sched), runs in results.items():
                for index, run in enumerate(runs):
                    f.write(json.dumps({"run": name, "scheduler": sched, "round": index,
                                        **run}) + "\n")


if __name__ == "__main__":
    main()
