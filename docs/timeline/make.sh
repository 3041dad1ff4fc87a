#!/usr/bin/env bash
# Redraws the pictures of this folder: a simulated CFQ run of two sequential readers on a
# 7200 rpm disk, and seed 004's group_idle run (scenarios/004/group-idle.fio, the row
# group_idle_us=1000, on ufs31), each recorded with --decisions and --trace, then drawn with
# `iosched plot --timeline`, whole and zoomed on a slice switch, as PNG and HTML.
# Usage: docs/timeline/make.sh [IOSCHED]   (default: target/release/iosched)
set -euo pipefail
cd "$(dirname "$0")/../.."
iosched=${1:-target/release/iosched}
out=docs/timeline
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$iosched" run "$out/two-readers.fio" --scheduler cfq --device hdd-7200 \
  --decisions "$work/two.dec" --trace "$work/two.txt" --output-format json --output "$work/two.json"
draw() { "$iosched" plot "$work/$1.json" --timeline --decisions "$work/$1.dec" --trace "$work/$1.txt" "${@:2}"; }
rm -f "$out"/two-readers*.png "$out"/two-readers.html "$out"/seed004-group-idle*
draw two --out "$out/two-readers.png"
draw two --out "$out/two-readers.html"
draw two --out "$out/two-readers-switch.png" --from 95 --to 125

# The same readers under deadline, which never idles: the contrast.
"$iosched" run "$out/two-readers.fio" --scheduler deadline --device hdd-7200 \
  --decisions "$work/dl.dec" --trace "$work/dl.txt" --output-format json --output "$work/dl.json"
rm -f "$out/two-readers-deadline.png"
draw dl --out "$out/two-readers-deadline.png" --from 95 --to 125

RUNTIME=200ms "$iosched" run scenarios/004/group-idle.fio --scheduler cfq --device ufs31 \
  --set group_idle_us=1000 --decisions "$work/g.dec" --trace "$work/g.txt" \
  --output-format json --output "$work/g.json"
draw g --out "$out/seed004-group-idle.png"
draw g --out "$out/seed004-group-idle.html"
draw g --out "$out/seed004-group-idle-switch.png" --from 95 --to 105
