#!/usr/bin/env bash
# Byte-identity check for speed work (issue 34): runs the same set of simulations with two
# iosched binaries and compares every output byte for byte: fio JSON and json+ (the
# wall-clock `iosched` object removed; both as written and re-printed with sorted keys),
# terse, blkparse --trace (BFQ's bfq_log notes included), --decisions, and `iosched
# reproduce`; noop, deadline, cfq and bfq.
#
# Usage: scripts/compare-outputs.sh OLD_BINARY NEW_BINARY [--full]
#   --full also runs `reproduce` on the whole seed set (minutes); by default its --short
#   variant. Exit 0 when every output is identical, 1 with the differing files named.
set -euo pipefail

old=$(realpath "$1")
new=$(realpath "$2")
full=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/compare-outputs.XXXXXX)
trap 'rm -rf "$work"' EXIT

# 0.2 simulated seconds of the speed workload: every scheduler passes thousands of requests.
sed 's/^runtime=.*/runtime=200ms/' "$root/bench/jobs/speed-randread.fio" >"$work/speed.fio"
# A buffered writer beside a buffered reader: the page cache, writeback and the journal.
cat >"$work/buffered.fio" <<'EOF'
[global]
size=32m
bs=4k
time_based
runtime=2

[writer]
rw=randwrite

[reader]
rw=randread
EOF

# Drops the wall-clock figures (`wall_clock` objects, the only bytes allowed to differ between
# binaries) from a JSON file; prints the rest with sorted keys. Not JSON: printed unchanged.
strip_wall() {
    python3 -c '
import json, sys
text = open(sys.argv[1]).read()
try:
    data = json.loads(text)
except ValueError:
    sys.stdout.write(text)
    sys.exit(0)
def drop(value):
    if isinstance(value, dict):
        return {k: drop(v) for k, v in value.items() if k != "wall_clock"}
    if isinstance(value, list):
        return [drop(v) for v in value]
    return value
json.dump(drop(data), sys.stdout, indent=1, sort_keys=True)
' "$1"
}

# The JSON text as written, with only the lines of its `wall_clock` objects removed: the
# writer's own bytes (layout, number formatting), which the sorted dump above re-prints.
wall_free_text() {
    python3 -c '
import sys
depth = 0
for line in open(sys.argv[1]):
    if depth:
        depth += line.count("{") - line.count("}")
    elif line.lstrip().startswith("\"wall_clock\" : {"):
        depth = line.count("{") - line.count("}")
    else:
        sys.stdout.write(line)
' "$1"
}

run_set() {
    local bin=$1 out=$2
    mkdir -p "$out"
    local i=0
    for sched in noop deadline cfq bfq; do
        for job in speed buffered; do
            for device in nvme-gen4 hdd-7200; do
                i=$((i + 1))
                local tag="$sched-$job-$device"
                local trace=(--trace "$out/$tag.trace")
                # BFQ's bfq_log notes of the 2 s buffered run pass --trace-limit (1 GiB)
                [ "$sched-$job" = bfq-buffered ] && trace=()
                (cd "$work" && "$bin" run --eta never --scheduler "$sched" --device "$device" \
                    --output-format json --output "$out/$tag.json" \
                    "${trace[@]}" --decisions "$out/$tag.decisions" \
                    "$job.fio" >/dev/null 2>"$out/$tag.stderr")
                # the notes name the output files, which live in different folders
                sed -i "s|$out/|OUT/|g" "$out/$tag.stderr"
                strip_wall "$out/$tag.json" >"$out/$tag.stripped"
                wall_free_text "$out/$tag.json" >"$out/$tag.text"
                rm "$out/$tag.json"
                # the same run without sinks (the path that skips tracing): terse and json+
                (cd "$work" && "$bin" run --eta never --scheduler "$sched" --device "$device" \
                    --output-format terse,json+ "$job.fio" >"$out/$tag.raw" 2>/dev/null)
                wall_free_text "$out/$tag.raw" >"$out/$tag.terse"
                rm "$out/$tag.raw"
            done
        done
    done
    for example in two-groups slice-idle android-groups; do
        (cd "$root" && "$bin" run --eta never --scheduler cfq --device nvme-gen4 \
            --output-format terse "examples/$example.fio" >"$out/example-$example.terse" 2>&1) || true
    done
    # BFQ's groups, with its bfq_log messages (blkparse notes) and decisions
    for example in two-groups android-groups; do
        (cd "$root" && "$bin" run --eta never --scheduler bfq --device hdd-7200 \
            --output-format terse --trace "$out/example-$example-bfq.trace" \
            --decisions "$out/example-$example-bfq.decisions" \
            "examples/$example.fio" >"$out/example-$example-bfq.terse" 2>&1) || true
        sed -i "s|$out/|OUT/|g" "$out/example-$example-bfq.terse"
    done
    local short=--short
    [ "$full" = --full ] && short=
    (cd "$root" && "$bin" reproduce $short --output-format json >"$out/reproduce.raw" 2>/dev/null) || true
    strip_wall "$out/reproduce.raw" >"$out/reproduce.json"
    rm "$out/reproduce.raw"
}

run_set "$old" "$work/old"
run_set "$new" "$work/new"
status=0
for file in "$work"/old/*; do
    name=$(basename "$file")
    if ! cmp -s "$file" "$work/new/$name"; then
        echo "DIFFERS: $name"
        status=1
    fi
done
count=$(ls "$work/old" | wc -l)
bytes=$(cat "$work"/old/* | wc -c)
if [ $status = 0 ]; then
    echo "identical: $count files, $bytes bytes"
fi
exit $status
