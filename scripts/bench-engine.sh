#!/usr/bin/env bash
# IOPS of the io_uring engine (`iosched run --device`, schedulers noop and cfq) beside fio's
# own io_uring engine on the kernel's `none` scheduler, on a loop device over /dev/shm (RAM,
# so the device is as fast as this machine gets and scheduler overhead shows).
#
# Usage: scripts/bench-engine.sh [RUNTIME_S=5] [BACKING_MIB=512] [REPS=1]
# With REPS > 1 every runner is measured REPS times and the best run is kept (the machine is
# shared: the best run is the one least disturbed).
# Needs root, losetup and fio. Prints one line per (workload, runner) and the ratios, plus the
# scheduler's own wall time per request as the engine measures it around every scheduler call.
set -euo pipefail

runtime=${1:-5}
backing_mib=${2:-512}
reps=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
target_dir=${CARGO_TARGET_DIR:-$root/target}

if [ "$(id -u)" != 0 ]; then echo "bench-engine: needs root (loop devices)" >&2; exit 2; fi
command -v fio >/dev/null || { echo "bench-engine: fio missing (apt-get install fio)" >&2; exit 2; }

(cd "$root" && cargo build --release --quiet --bin iosched)
iosched=$target_dir/release/iosched

work=$(mktemp -d)
image=/dev/shm/iosched-bench-$$.img
dev=""
cleanup() {
    if [ -n "$dev" ]; then losetup -d "$dev" || true; fi
    rm -f "$image"
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

truncate -s "${backing_mib}M" "$image"
dev=$(losetup -f --show --direct-io=on "$image" 2>/dev/null || losetup -f --show "$image")
name=$(basename "$dev")
echo none > "/sys/block/$name/queue/scheduler"
size_mib=$((backing_mib / 2))

echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus, $dev over $image, runtime ${runtime}s, best of $reps"
echo "# sched_ns/req: time inside the scheduler's calls per request, net of (and with) the clock reads"
printf '%-14s %-12s %12s %8s %18s %12s\n' workload runner iops ratio sched_ns/req cpu_ns/req

for rw in randread randwrite; do
    for depth in 1 32; do
        cat > "$work/job.fio" <<JOB
[bench]
ioengine=io_uring
direct=1
bs=4k
rw=$rw
iodepth=$depth
size=${size_mib}m
time_based
runtime=$runtime
JOB
        fio_line=""
        for _ in $(seq "$reps"); do
            fio --name=bench --filename="$dev" --offset=1m --size="${size_mib}m" \
                --ioengine=io_uring --direct=1 --bs=4k --rw=$rw --iodepth=$depth \
                --time_based --runtime="$runtime" --output-format=json > "$work/fio.json"
            line=$(python3 - "$work/fio.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
iops = j["read"]["iops"] + j["write"]["iops"]
total_ios = j["read"]["total_ios"] + j["write"]["total_ios"]
runtime_s = max(j["job_runtime"], 1) / 1000.0
cpu_ns = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runtime_s * 1e9 / max(total_ios, 1)
print(f"{iops:.0f} {cpu_ns:.0f}")
PY
)
            if [ -z "$fio_line" ] || [ "${line% *}" -gt "${fio_line% *}" ]; then fio_line=$line; fi
        done
        fio_iops=${fio_line% *}
        printf '%-14s %-12s %12s %8s %18s %12s\n' "$rw-qd$depth" fio-none "$fio_iops" 1.00 - "${fio_line#* }"
        for sched in noop cfq; do
            best=""
            for _ in $(seq "$reps"); do
                if ! "$iosched" run "$work/job.fio" --device "$dev" --scheduler "$sched" \
                    --output-format json > "$work/$sched.json" 2> "$work/$sched.err"; then
                    best="failed: $(tail -1 "$work/$sched.err")"
                    break
                fi
                line=$(python3 - "$work/$sched.json" "$fio_iops" "$rw-qd$depth" "engine-$sched" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
w = d["iosched"]["wall_clock"]
iops = j["read"]["iops"] + j["write"]["iops"]
sched = f"{w['scheduler_ns_per_request']:.0f} ({w['scheduler_ns_per_request_with_clock']:.0f})"
print(f"{iops:.0f} {sys.argv[3]:<14} {sys.argv[4]:<12} {iops:12.0f} {iops / float(sys.argv[2]):8.2f} "
      f"{sched:>18} {w['cpu_ns_per_request']:12.0f}")
PY
)
                if [ -z "$best" ] || [ "${line%% *}" -gt "${best%% *}" ]; then best=$line; fi
            done
            case "$best" in
                failed:*) printf '%-14s %-12s %s\n' "$rw-qd$depth" "engine-$sched" "$best" ;;
                *) echo "${best#* }" ;;
            esac
        done
    done
done
