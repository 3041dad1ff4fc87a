//! The blktrace binary we write is read by the real `blkparse` and `btt`, and blkparse prints
//! exactly the lines our own blkparse-style text has.
//!
//! Two independent witnesses: if our binary layout or our text formatting drifts from the
//! tools', the line comparison fails. Skips with a note when the tools are not installed
//! (`apt-get install blktrace`); CI has them.

use iosched_core::{testing, CgroupId, MessageSubject, Op, Request, RqEvent, Trace};
use iosched_report::blkparse::BlkparseText;
use iosched_report::blktrace::{BlktraceBinary, TraceLabels};
use iosched_report::decisions::TraceFanout;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tool_available(name: &str) -> bool {
    Command::new(name).arg("-h").output().is_ok()
}

fn scratch_dir(name: &str) -> iosched_workload::scratch::ScratchDir {
    iosched_workload::scratch::ScratchDir::new(&format!("report-{name}"))
}

fn labels() -> TraceLabels {
    let mut l = TraceLabels::new(8, 16);
    l.set_comm(5122, "fio");
    l.set_comm(5200, "kworker/u8:1");
    l.set_cgroup_path(CgroupId(2), "/dbench");
    l
}

/// A small CFQ-like story: a sync reader with a back merge and a plug, an async writer in a
/// cgroup, a flush, CFQ notes of all three kinds, every request issued and completed.
fn drive(t: &mut dyn Trace) {
    let ms = 1_000_000u64;
    let reader = |id, sector, n| Request {
        pid: 5122,
        ..testing::read(id, sector, n)
    };
    let writer = |id, sector, n| Request {
        pid: 5200,
        cgroup: CgroupId(2),
        ..testing::request(id, Op::Write, sector, n, 5200)
    };
    let q = MessageSubject::Queue {
        pid: 5122,
        cgroup: CgroupId::ROOT,
        sync: true,
        noidle: false,
    };
    let wq = MessageSubject::Queue {
        pid: 5200,
        cgroup: CgroupId(2),
        sync: false,
        noidle: false,
    };
    let mut now = 1_000 * ms;
    for i in 0..4u64 {
        let a = reader(2 * i + 1, 2048 + 16 * i, 8);
        let b = Request {
            id: a.id,
            sector: a.sector + 8,
            ..a
        };
        let merged = Request {
            nr_sectors: 16,
            ..a
        };
        t.request(now, RqEvent::Queue, &a);
        t.request(now + 200, RqEvent::GetRq, &a);
        t.request(now + 300, RqEvent::Plug, &a);
        t.request(now + 1_000, RqEvent::Queue, &b);
        t.request(now + 1_100, RqEvent::BackMerge, &b);
        t.request(now + 1_500, RqEvent::Insert, &merged);
        t.message(now + 1_600, q, "insert_request");
        t.request(now + 1_700, RqEvent::Unplug, &a);
        t.message(now + 2_000, q, "set_active wl_class:0 wl_type:2");
        t.request(now + 2_500, RqEvent::Issue, &merged);
        t.message(now + 2_600, q, "activate rq, drv=1");
        t.request(now + 2_500 + 4 * ms, RqEvent::Complete, &merged);
        t.message(now + 2_600 + 4 * ms, q, "arm_idle: 8000000 group_idle: 0");
        now += 5 * ms;
    }
    for i in 0..3u64 {
        let w = writer(100 + i, 900_000 + 64 * i, 64);
        t.request(now, RqEvent::Queue, &w);
        t.request(now + 100, RqEvent::GetRq, &w);
        t.request(now + 200, RqEvent::Insert, &w);
        t.message(now + 300, wq, "insert_request");
        t.request(now + 400, RqEvent::Issue, &w);
        t.request(now + 400 + 2 * ms, RqEvent::Complete, &w);
        now += 3 * ms;
    }
    t.message(
        now,
        MessageSubject::Group(CgroupId(2)),
        "served: vt=123456 min_vt=0",
    );
    t.message(now + 1, MessageSubject::Device, "idle timer fired");
    let flush = Request {
        pid: 5200,
        ..testing::request(200, Op::Flush, 0, 0, 5200)
    };
    t.request(now + 10, RqEvent::Queue, &flush);
    t.request(now + 20, RqEvent::Issue, &flush);
    t.request(now + 30 + ms, RqEvent::Complete, &flush);
}

/// Writes the story as a binary `<dir>/sdb.blktrace.0` and returns it with our text.
fn write_both(dir: &Path) -> (PathBuf, String) {
    let base = dir.join("sdb");
    let mut bin = BlktraceBinary::create(&base, labels(), false).unwrap();
    let mut text = BlkparseText::new(Vec::new(), labels());
    {
        let mut fan = TraceFanout::new();
        fan.push(&mut bin);
        fan.push(&mut text);
        drive(&mut fan);
    }
    bin.finish().unwrap().commit().unwrap();
    let text = String::from_utf8(text.finish().unwrap()).unwrap();
    (base, text)
}

/// Compares `actual` with `tests/golden/<name>`, or rewrites it under `IOSCHED_BLESS=1`.
fn golden(name: &str, actual: &str) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "golden", name]
        .iter()
        .collect();
    if std::env::var_os("IOSCHED_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "{} differs; IOSCHED_BLESS=1 rewrites it\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

#[test]
fn blkparse_text_golden() {
    let dir = scratch_dir("golden");
    let (_, text) = write_both(&dir);
    golden("blkparse.txt", &text);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn same_story_twice_gives_identical_bytes() {
    let dir = scratch_dir("determinism");
    let (base, text1) = write_both(&dir);
    let bin1 = std::fs::read(BlktraceBinary::path_for(&base)).unwrap();
    let (_, text2) = write_both(&dir);
    let bin2 = std::fs::read(BlktraceBinary::path_for(&base)).unwrap();
    assert_eq!(bin1, bin2);
    assert_eq!(text1, text2);
    assert!(text1.contains(" m   N cfq5200A  /dbench insert_request\n"));
    assert!(text1.contains(" m   N /dbench served: vt=123456 min_vt=0\n"));
    assert!(text1.contains("  C  FW 0 [0]\n"), "{text1}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn blkparse_prints_our_lines_and_btt_sees_every_phase() {
    if !tool_available("blkparse") || !tool_available("btt") {
        eprintln!(
            "SKIPPED: {}: blkparse/btt not installed (apt-get install blktrace)",
            std::thread::current().name().unwrap_or("?")
        );
        return;
    }
    let dir = scratch_dir("tools");
    let (_, ours) = write_both(&dir);

    let out = Command::new("blkparse")
        .current_dir(&dir)
        .args(["-i", "sdb"])
        .output()
        .unwrap();
    assert!(out.status.success(), "blkparse failed: {out:?}");
    let theirs = String::from_utf8_lossy(&out.stdout);
    // blkparse's event lines are those before its per-CPU summary.
    let their_events: Vec<&str> = theirs
        .lines()
        .take_while(|l| l.starts_with("  8,16"))
        .collect();
    let our_events: Vec<&str> = ours.lines().collect();
    assert_eq!(
        their_events, our_events,
        "blkparse output:\n{theirs}\nours:\n{ours}"
    );
    assert!(theirs.contains("Reads Completed:"), "{theirs}");
    assert!(
        !theirs.contains("(null)"),
        "process names missing:\n{theirs}"
    );
    assert!(
        !theirs.contains("Skips: 1"),
        "sequence gaps reported:\n{theirs}"
    );

    let dump = Command::new("blkparse")
        .current_dir(&dir)
        .args(["-i", "sdb", "-d", "sdb.bin", "-O"])
        .output()
        .unwrap();
    assert!(dump.status.success(), "blkparse -d failed: {dump:?}");
    let btt = Command::new("btt")
        .current_dir(&dir)
        .args(["-i", "sdb.bin"])
        .output()
        .unwrap();
    assert!(btt.status.success(), "btt failed: {btt:?}");
    let report = String::from_utf8_lossy(&btt.stdout);
    for phase in ["Q2Q", "Q2G", "G2I", "I2D", "D2C", "Q2C"] {
        let row = report
            .lines()
            .find(|l| l.starts_with(phase))
            .unwrap_or_else(|| panic!("btt has no {phase} row:\n{report}"));
        let n: u64 = row
            .split_whitespace()
            .last()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no count in {row:?}"));
        assert!(n > 0, "{row}");
    }
    // Notes are echoed at the top of btt's report.
    assert!(report.contains("cfq5122S  / insert_request"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}
