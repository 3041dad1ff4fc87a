#!/usr/bin/env python3
"""Issue 32's measurements in simulation: share error against total throughput, one point per
scheduler and setting, for seed 004's four groups, two sequential readers on a disk and a
bursty reader. Writes a markdown table to stdout and an SVG plot (no plotting library needed).

  scripts/adaptive-frontier.py [--bin target/release/iosched] [--runtime 2s]
                               [--svg docs/tasks/adaptive-frontier.svg]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "scenarios", "004")
EX = os.path.join(ROOT, "examples", "adaptive")

# (label, job file, extra environment, devices)
SHARE_CASES = [
    ("seq", os.path.join(SEED, "group-idle.fio"), {}, ["ufs31", "nvme-gen4"]),
    ("seq+think", os.path.join(EX, "four-seq-think.fio"), {}, ["ufs31", "nvme-gen4"]),
    ("rand 16", os.path.join(SEED, "four-groups.fio"), {"THREADS": "16"}, ["ufs31", "nvme-gen4"]),
    ("rand 32+pressure", os.path.join(SEED, "four-groups-pressure.fio"), {"THREADS": "32"},
     ["ufs31", "nvme-gen4"]),
]
SETTINGS = [
    ("noop", "noop", []),
    ("cfq gi=0", "cfq", ["group_idle=0"]),
    ("cfq gi=1ms", "cfq", ["group_idle_us=1000"]),
    ("cfq gi=8ms", "cfq", ["group_idle=8"]),
    ("bfq", "bfq", []),
    ("adaptive", "adaptive", []),
]


def run(binary, job, device, scheduler, sets, env):
    cmd = [binary, "run", job, "--device", device, "--scheduler", scheduler,
           "--output-format", "json"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, env={**os.environ, **env}, check=True, capture_output=True,
                         text=True).stdout
    sched = json.loads(out)["iosched"]
    seconds = sched["simulated_time_ns"] / 1e9
    groups = sched["cgroups"]
    total = sum(
        d["io_kbytes"] for j in json.loads(out)["jobs"] for d in (j["read"], j["write"])
    ) * 1024 / seconds / 1e6
    error = max((abs(g["share"] - g["ideal_share"]) / g["ideal_share"] for g in groups),
                default=0.0)
    # The same over the moments each group was backlogged (iosched_driver::backlog): a group
    # that thinks or has nothing outstanding is owed nothing of what moves meanwhile.
    berror = max((abs(g["share"] - g["backlogged_ideal_share"]) / g["backlogged_ideal_share"]
                  for g in groups if g.get("backlogged_ideal_share")), default=0.0)
    wasted = sum(s["idle_wasted_ns"] for s in sched["service"]) / 1e6
    return {"total": total, "error": 100 * error, "berror": 100 * berror, "wasted_ms": wasted,
            "shares": [round(100 * g["share"], 1) for g in groups]}


def heaviest_alone(job):
    """The job file's [global] and first job (the heaviest group) alone, as a temporary file."""
    lines = open(job).read().splitlines(keepends=True)
    heads = [i for i, line in enumerate(lines) if line.startswith("[")]
    cut = heads[2] if len(heads) > 2 else len(lines)
    f = tempfile.NamedTemporaryFile("w", suffix=".fio", delete=False)
    f.write("".join(lines[:cut]))
    f.close()
    return f.name


def legend_lines(lx, y):
    """The lines' legend: the issue's bars (red, dashed) and the weight-holding bound (grey)."""
    out = []
    for name, style in [("bars: 10 %, 0.95 × noop", 'stroke="#c00" stroke-dasharray="3,3"'),
                        ("bound: heaviest alone × 1900/1000", 'stroke="#999"')]:
        out.append(f'<line x1="{lx - 4}" x2="{lx + 16}" y1="{y}" y2="{y}" {style}/>'
                   f'<text x="{lx + 20}" y="{y + 4}">{name}</text>')
        lx += 180
    return out


def svg(points, path):
    """One panel per case: x = total / noop's, y = largest relative share error against the
    share owed while backlogged (%, the issue's bar); red
    dashed: the issue's bars (10 %, 0.95 x noop), grey: the weight-holding bound."""
    cases = sorted({p["case"] for p in points}, key=[p["case"] for p in points].index)
    colors = {"noop": "#888", "cfq gi=0": "#9ecae1", "cfq gi=1ms": "#4292c6",
              "cfq gi=8ms": "#08519c", "bfq": "#e6550d", "adaptive": "#31a354"}
    cols, w, h, m = 4, 260, 220, 40
    rows = (len(cases) + cols - 1) // cols
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * w}" '
           f'height="{rows * h + 30}" font-family="sans-serif" font-size="10">']
    for i, case in enumerate(cases):
        ox, oy = (i % cols) * w, (i // cols) * h
        px0, py0, pw, ph = ox + m, oy + 20, w - m - 10, h - m - 20
        out.append(f'<text x="{ox + w / 2}" y="{oy + 12}" text-anchor="middle">{case}</text>')
        out.append(f'<rect x="{px0}" y="{py0}" width="{pw}" height="{ph}" fill="none" '
                   'stroke="#000"/>')
        # y: share error 0..100 % (clipped), the 10 % bar dashed; x: 0..1.1 of noop's total.
        ymax = 100.0
        y10 = py0 + ph - ph * 10 / ymax
        out.append(f'<line x1="{px0}" x2="{px0 + pw}" y1="{y10}" y2="{y10}" stroke="#c00" '
                   'stroke-dasharray="3,3"/>')
        x95 = px0 + pw * 0.95 / 1.1
        out.append(f'<line x1="{x95}" x2="{x95}" y1="{py0}" y2="{py0 + ph}" stroke="#c00" '
                   'stroke-dasharray="3,3"/>')
        out.append(f'<text x="{px0 + pw / 2}" y="{py0 + ph + 25}" text-anchor="middle">'
                   'total / noop</text>')
        # The weight-holding bound (grey): the heaviest group alone, scaled by the weights.
        bound = next(p["bound"] for p in points if p["case"] == case)
        xb = px0 + pw * min(bound, 1.1) / 1.1
        out.append(f'<line x1="{xb}" x2="{xb}" y1="{py0}" y2="{py0 + ph}" stroke="#999"/>')
        out.append(f'<text x="{ox + 10}" y="{py0 + ph / 2}" transform="rotate(-90 {ox + 10} '
                   f'{py0 + ph / 2})" text-anchor="middle">max share error while backlogged %</text>')
        for tick in (0, 0.5, 1.0):
            x = px0 + pw * tick / 1.1
            out.append(f'<text x="{x}" y="{py0 + ph + 12}" text-anchor="middle">{tick}</text>')
        for tick in (0, 50, 100):
            y = py0 + ph - ph * tick / ymax
            out.append(f'<text x="{px0 - 3}" y="{y + 3}" text-anchor="end">{tick}</text>')
        for p in points:
            if p["case"] != case:
                continue
            x = px0 + pw * min(p["ratio"], 1.1) / 1.1
            y = py0 + ph - ph * min(p["error"], ymax) / ymax
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colors[p["setting"]]}">'
                       f'<title>{p["setting"]}: {p["ratio"]:.2f}, {p["error"]:.1f} %</title>'
                       '</circle>')
    lx = 10
    for name, color in colors.items():
        out.append(f'<circle cx="{lx}" cy="{rows * h + 15}" r="4" fill="{color}"/>'
                   f'<text x="{lx + 7}" y="{rows * h + 19}">{name}</text>')
        lx += 90
    out.extend(legend_lines(lx, rows * h + 15))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "iosched"))
    ap.add_argument("--runtime", default="2s")
    ap.add_argument("--svg")
    args = ap.parse_args()
    env = {"RUNTIME": args.runtime}
    points = []
    print("| case | device | scheduler | total MB/s | × noop | × bound | × 10 % cap "
          "| max share error % | while backlogged % | shares % |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    for label, job, extra, devices in SHARE_CASES:
        for device in devices:
            # The most a weight-holding scheduler can move: the heaviest group (1000 of
            # 1900) at its rate alone, every other group at its weight beside it.
            alone = heaviest_alone(job)
            heavy = run(args.bin, alone, device, "noop", [], {**env, **extra})["total"]
            os.unlink(alone)
            noop = None
            bound = None
            for name, sched, sets in SETTINGS:
                r = run(args.bin, job, device, sched, sets, {**env, **extra})
                noop = noop or r["total"]
                bound = bound or min(noop, heavy * 1900 / 1000)
                # With every group within 10 %, the heaviest keeps at least
                # 1 - 1.1 x 900/1900 = 0.4789 of the total (the others at +10 % each).
                cap = min(noop, heavy / (1 - 1.1 * 900 / 1900))
                ratio = r["total"] / noop
                points.append({"case": f"{label} · {device}", "setting": name, "ratio": ratio,
                               "error": r["berror"], "bound": bound / noop})
                print(f"| {label} | {device} | {name} | {r['total']:.0f} | {ratio:.2f} | "
                      f"{r['total'] / bound:.2f} | {r['total'] / cap:.2f} | {r['error']:.1f} | "
                      f"{r['berror']:.1f} | {r['shares']} |", flush=True)
    print()
    print("| case | scheduler | total MB/s | wasted idle ms |")
    print("|---|---|---:|---:|")
    for label, job, device, runtime in [
        ("two seq readers", os.path.join(EX, "two-seq-hdd.fio"), "hdd-7200", "4s"),
        ("bursty + steady", os.path.join(EX, "bursty.fio"), "ufs31", args.runtime),
    ]:
        for name, sched, sets in SETTINGS:
            r = run(args.bin, job, device, sched, sets, {"RUNTIME": runtime})
            print(f"| {label} · {device} | {name} | {r['total']:.1f} | {r['wasted_ms']:.1f} |",
                  flush=True)
    if args.svg:
        svg(points, args.svg)


if __name__ == "__main__":
    sys.exit(main())
