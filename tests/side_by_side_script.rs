//! `scripts/kernel-side-by-side.py` counts the engine's scheduler messages by kind from the
//! trace file the engine writes. Checked here against that file as `iosched run --trace`
//! writes it: a BFQ message whose first word starts with "bfq" (`bfqq_served 8 secs`) was
//! once taken for a queue's tag and counted under its number ("8", "1057"), so the table
//! showed no `bfqq_served` for the engine and rows of numbers instead.

mod common;

use std::process::Command;

use common::{iosched, skip, Scratch};

/// Two weighted random readers, short enough for a debug build.
const JOB: &str = "\
[global]
ioengine=libaio
direct=1
rw=randread
bs=4k
iodepth=8
size=8m
runtime=30ms
time_based

[heavy]
cgroup=heavy
cgroup_weight=1000

[light]
cgroup=light
cgroup_weight=100
";

/// The script's `message_kinds` over `trace`, as `kind count` lines.
fn kinds_by_script(trace: &str) -> Vec<(String, u64)> {
    let program = "for kind, n in sorted(sbs.message_kinds(sys.argv[2]).items()):\n\
        \x20   print(kind, n)\n";
    with_script(program, &[trace])
        .lines()
        .map(|line| {
            let (kind, n) = line.rsplit_once(' ').expect("kind count");
            (kind.to_string(), n.parse().expect("a count"))
        })
        .collect()
}

#[test]
fn engine_bfq_messages_are_counted_under_their_own_kind() {
    if !common::tool_available("python3") {
        skip(
            "engine_bfq_messages_are_counted_under_their_own_kind",
            "no python3",
        );
        return;
    }
    let scratch = Scratch::new("side-by-side-script");
    let job = scratch.file("two-groups.fio", JOB);
    let trace = scratch.path("bfq.txt");
    let out = iosched(&[
        "run",
        &job,
        "--scheduler",
        "bfq",
        "--device",
        "ufs31",
        "--trace",
        &trace,
    ]);
    common::assert_ran(&out);
    let text = std::fs::read_to_string(&trace).unwrap();
    let dispatched = text.lines().filter(|l| l.contains(" D ")).count() as u64;
    assert!(dispatched > 100, "too short a run: {dispatched} dispatches");
    let kinds = kinds_by_script(&trace);
    let numeric: Vec<_> = kinds
        .iter()
        .filter(|(kind, _)| kind.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    assert!(numeric.is_empty(), "numbers counted as kinds: {numeric:?}");
    // bfq_bfqq_served() logs once per dispatched request, and again for a budget timeout's
    // charge at expiry.
    let served = kinds.iter().find(|(kind, _)| kind == "bfqq_served");
    assert!(
        served.is_some_and(|(_, n)| *n >= dispatched),
        "bfqq_served {served:?} for {dispatched} dispatches"
    );
}

/// Runs `program` (Python) with the script loaded as `sbs` and `args` as `sys.argv[2:]`;
/// returns what it printed.
fn with_script(program: &str, args: &[&str]) -> String {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/kernel-side-by-side.py"
    );
    let load = "import importlib.util, sys, json\n\
        spec = importlib.util.spec_from_file_location('sbs', sys.argv[1])\n\
        sbs = importlib.util.module_from_spec(spec)\n\
        spec.loader.exec_module(sbs)\n";
    let out = Command::new("python3")
        .args(["-c", &format!("{load}{program}"), script])
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// fio on the kernel counts a request's wait in the kernel's scheduler in clat; the engine,
/// whose scheduler runs before io_uring, counts it in slat (see `stamp_sent` in the
/// engine). The table's latency columns compared the two clats; they now compare lat
/// (slat + clat), which the job file asks fio and the engine to give percentiles of.
#[test]
fn latency_columns_compare_total_latency() {
    if !common::tool_available("python3") {
        skip("latency_columns_compare_total_latency", "no python3");
        return;
    }
    let scratch = Scratch::new("side-by-side-lat");
    let job = scratch.file("two-groups.fio", JOB);
    let copy = with_script(
        "print(sbs.with_lat_percentiles(sys.argv[2], sys.argv[3]))",
        &[&job, &scratch.path("")],
    );
    let out = iosched(&[
        "run",
        copy.trim(),
        "--scheduler",
        "bfq",
        "--device",
        "ufs31",
        "--output-format",
        "json",
    ]);
    let report = common::json_of(&out);
    let lat = &report["jobs"][1]["read"]["lat_ns"]["percentile"]["99.000000"];
    assert!(
        lat.as_u64().is_some_and(|ns| ns > 0),
        "no lat percentiles: {lat}"
    );
    // metrics() on a report whose lat and clat differ reads lat.
    let fake = r#"{"jobs": [{"jobname": "j", "read": {"bw_bytes": 1,
        "clat_ns": {"percentile": {"50.000000": 1000, "99.000000": 2000}},
        "lat_ns": {"percentile": {"50.000000": 5000, "99.000000": 9000}}},
        "write": {"bw_bytes": 0}}]}"#;
    let got = with_script(
        "print(sbs.metrics(json.loads(sys.argv[2]), '/dev/null')['lat']['j'])",
        &[fake],
    );
    assert_eq!(got.trim(), "(5.0, 9.0)");
}

/// A job that names cgroups runs the engine with one submitting thread per cgroup (`auto`
/// picks `engine_threads=cgroups`), as fio runs each job in its cgroup; such engine runs are
/// untraced, and the message table shows "—" for them, not zero counts.
#[test]
fn cgroup_jobs_run_the_engine_per_cgroup_and_untraced_runs_count_no_messages() {
    if !common::tool_available("python3") {
        skip(
            "cgroup_jobs_run_the_engine_per_cgroup_and_untraced_runs_count_no_messages",
            "no python3",
        );
        return;
    }
    let scratch = Scratch::new("side-by-side-cgroups");
    let grouped = scratch.file("grouped.fio", JOB);
    let plain = scratch.file("plain.fio", "[a]\nrw=randread\nsize=1m\n");
    let names = with_script(
        "print(sbs.names_cgroups(sys.argv[2]), sbs.names_cgroups(sys.argv[3]))",
        &[&grouped, &plain],
    );
    assert_eq!(names.trim(), "True False");
    let table = with_script(
        "k = {'messages': {'dispatch': 4}}\n\
         e = {'messages': None}\n\
         print(sbs.message_table({('kernel', 'bfq'): [k], ('engine', 'bfq'): [e]}, 'bfq'))",
        &[],
    );
    assert!(table.contains("| dispatch | 4 | — |"), "{table}");
}

/// `--cap`: the heaviest job alone (the [global] section and its own, so it runs in its
/// cgroup as in the pair) and the total weight shares allow, `alone / ideal share`, with the
/// 2-point edge, each over the same round's two-job `none` total. Issue 32's real-device
/// counterpart of the simulated 10 % cap.
#[test]
fn cap_runs_the_heaviest_job_alone_and_divides_by_its_share() {
    if !common::tool_available("python3") {
        skip(
            "cap_runs_the_heaviest_job_alone_and_divides_by_its_share",
            "no python3",
        );
        return;
    }
    let scratch = Scratch::new("side-by-side-cap");
    let job = scratch.file("two-groups.fio", JOB);
    let alone = with_script(
        "name, share = sbs.heaviest(sys.argv[2])\n\
         print(name, round(share, 4))\n\
         print(open(sbs.alone_job(sys.argv[2], name, sys.argv[3])).read())",
        &[&job, &scratch.path("")],
    );
    assert!(alone.starts_with("heavy 0.9091\n[global]\n"), "{alone}");
    assert!(alone.contains("[heavy]\ncgroup=heavy\n"), "{alone}");
    assert!(!alone.contains("[light]"), "{alone}");
    // Alone 80 MB/s against a pair's 100: 0.80 of it, 0.88 at exact shares, 0.90 at the
    // 2-point edge (80 / 0.889 / 100).
    let table = with_script(
        "r = {('kernel', 'none'): [{'mb_s': 100.0}], ('kernel', 'alone'): [{'mb_s': 80.0}]}\n\
         print(sbs.cap_table(r, 'heavy', 1000 / 1100))",
        &[],
    );
    assert!(
        table.contains("| kernel none | 80.0 (80.0–80.0) | 0.80 (0.80–0.80) | 0.88 (0.88–0.88) | 0.90 (0.90–0.90) |"),
        "{table}"
    );
    let unweighted = scratch.file("plain.fio", "[a]\nrw=randread\n[b]\nrw=randread\n");
    let out = Command::new("python3")
        .args([
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/scripts/kernel-side-by-side.py"
            ),
            &unweighted,
            "--cap",
        ])
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("job [a] sets no cgroup_weight"), "{stderr}");
}

/// The loop device's image is written through unless `--sparse`: reads of a sparse file's
/// holes return zeros without any device I/O, so a side-by-side on it measured a CPU-bound
/// device (session 20: 744 MB/s under the kernel's `none` on holes, 244 MB/s on written
/// data). Every block of a made image is allocated; a sparse one holds none.
#[test]
fn images_are_written_through_unless_sparse() {
    if !common::tool_available("python3") {
        skip("images_are_written_through_unless_sparse", "no python3");
        return;
    }
    let scratch = Scratch::new("side-by-side-image");
    let (written, sparse) = (scratch.path("written.img"), scratch.path("sparse.img"));
    let size = 9 << 20;
    let out = with_script(
        "import os\n\
         sbs.make_image(sys.argv[2], int(sys.argv[4]))\n\
         sbs.make_image(sys.argv[3], int(sys.argv[4]), sparse=True)\n\
         for p in sys.argv[2:4]: print(os.stat(p).st_size, os.stat(p).st_blocks * 512)",
        &[&written, &sparse, &size.to_string()],
    );
    let sizes: Vec<Vec<u64>> = out
        .lines()
        .map(|line| line.split(' ').map(|n| n.parse().unwrap()).collect())
        .collect();
    assert_eq!(sizes[0][0], size, "{out}");
    assert!(sizes[0][1] >= size, "written image not allocated: {out}");
    assert_eq!(sizes[1][0], size, "{out}");
    assert!(sizes[1][1] < size / 8, "sparse image allocated: {out}");
}
