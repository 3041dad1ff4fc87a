//! fio's normal and terse reports, line for line and field for field, against fio 3.33 itself.
//!
//! The same job file is run by fio and by the engine on the same file with
//! `--output-format=terse,normal`. What they measure differs run to run, so each report is
//! reduced to its shape: every number (with its k/Ki/M... prefix) becomes `N`, a latency's
//! auto-chosen unit becomes `(U)`, padding is dropped, and the `lat (usec) : 50=..` bucket
//! lines (present only for buckets that got I/O) become one marker, and so do a percentile
//! block's rows (with its count of entries: how many share a row follows the values'
//! width, which `fio_normal`'s unit tests hold). Everything else must be identical: the banner, each header, which series and percentile blocks appear, the cpu and
//! depth lines, the group summaries, the disk line; and each terse line must have fio's field
//! count, with its text fields equal. Two differences are by design and masked: the version
//! (`iosched-0.1.0` where fio prints `fio-3.33`) and the disk's name (fio names the disk
//! holding the file and reads that disk's counters, iosched names the file and counts its own
//! requests). Runs are time-based (1 s) so both tools have bandwidth samples.

mod common;

use std::process::Command;

use common::{fio3_available, skip, Scratch};

const CASES: [(&str, &str); 7] = [
    ("randread-qd4", "[rr]\nrw=randread\nbs=4k\niodepth=4\n"),
    (
        "mixed-clones-and-groups",
        "[a]\nrw=randrw\nbsrange=4k-16k\niodepth=2\nnumjobs=2\n\
         [b]\nstonewall\nrw=read\nbs=64k\nnumjobs=3\ngroup_reporting\n",
    ),
    (
        "sync-writes-with-lat-percentiles",
        "[w]\nioengine=psync\nrw=write\nbs=8k\nfsync=16\nlat_percentiles=1\n",
    ),
    (
        "threads-and-slat-percentiles",
        "[t]\nthread\nrw=randread\nbs=4k\niodepth=8\nslat_percentiles=1\n\
         percentile_list=50:99:99.9\nnumjobs=2\n",
    ),
    (
        "verify-after-write",
        // Writes held to ~1 s (bandwidth samples in both tools), then a verify pass that
        // fio does not rate-limit (~15 ms: no samples in either, however loaded).
        "[v]\nrw=randwrite\nbs=4k\niodepth=4\nverify=crc32c\ntime_based=0\nsize=2m\n\
         rate_iops=500\nruntime=10\n",
    ),
    (
        "rate-limited-mix-with-ramp",
        "[m]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=2\nrate_iops=500,200\nramp_time=200ms\n",
    ),
    (
        "disabled-series",
        "[d]\nrw=read\nbs=16k\niodepth=4\ndisable_slat=1\ndisable_clat=1\n",
    ),
];

fn job_text(body: &str, file: &str) -> String {
    format!(
        "[global]\nioengine=io_uring\ndirect=1\nsize=8m\nfilename={file}\ntime_based=1\n\
         runtime=1\n{body}"
    )
}

/// A number at `chars[at]`: digits, an optional fraction, an optional unit prefix
/// (k, K, M, G, T, P) and an optional `i`. Returns where it ends.
fn number_end(chars: &[char], mut at: usize) -> usize {
    let digits = |chars: &[char], mut at: usize| {
        while at < chars.len() && chars[at].is_ascii_digit() {
            at += 1;
        }
        at
    };
    at = digits(chars, at);
    if at + 1 < chars.len() && chars[at] == '.' && chars[at + 1].is_ascii_digit() {
        at = digits(chars, at + 1);
    }
    if at < chars.len() && "kKMGTP".contains(chars[at]) {
        at += 1;
        if at < chars.len() && chars[at] == 'i' {
            at += 1;
        }
    }
    at
}

/// One line reduced to its shape.
fn line_shape(line: &str) -> String {
    let mut line = line.to_string();
    for unit in ["(nsec)", "(usec)", "(msec)"] {
        line = line.replace(unit, "(U)");
    }
    // The bandwidth samples' unit (`bw (  KiB/s)`, `bw (  MiB/s)`) follows the speed too.
    for unit in ["  KiB/s)", "  MiB/s)", "  GiB/s)", "  TiB/s)"] {
        line = line.replace(unit, "U/s)");
    }
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c.is_ascii_digit() {
            at = number_end(&chars, at);
            out.push('N');
        } else if c.is_whitespace() {
            while at < chars.len() && chars[at].is_whitespace() {
                at += 1;
            }
            // Padding after `=` or `[` follows the number's width.
            if !(out.ends_with('=') || out.ends_with('[')) {
                out.push(' ');
            }
        } else {
            out.push(c);
            at += 1;
        }
    }
    out.trim_end().to_string()
}

/// The normal report's shape, line by line.
fn normal_shape(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut in_disks = false;
    for line in text.lines().filter(|line| !line.starts_with("3;")) {
        if line.starts_with("  lat (") {
            if lines.last().map(String::as_str) != Some("<latency buckets>") {
                lines.push("<latency buckets>".into());
            }
            continue;
        }
        // A percentile block's rows: how many entries fit a row follows the values' width
        // (fio's time_width), which follows what was measured, so only the entries count.
        if let Some(row) = line.strip_prefix("     |") {
            let entries = row.matches("th=[").count();
            match lines.last_mut() {
                Some(last) if last.starts_with("<percentiles ") => {
                    let so_far: usize =
                        last["<percentiles ".len()..last.len() - 1].parse().unwrap();
                    *last = format!("<percentiles {}>", so_far + entries);
                }
                _ => lines.push(format!("<percentiles {entries}>")),
            }
            continue;
        }
        if line.starts_with("fio-") || line.starts_with("iosched-") {
            lines.push("<version>".into());
            continue;
        }
        in_disks |= line.starts_with("Disk stats");
        let shape = line_shape(line);
        match shape.split_once(": ios=") {
            Some((_, rest)) if in_disks => lines.push(format!("<disk>: ios={rest}")),
            _ => lines.push(shape),
        }
    }
    lines
}

/// Each terse line's fields, numbers reduced as in the normal report; the version and the
/// disk's name (the first field after the 121 of a job) masked.
fn terse_shape(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|line| line.starts_with("3;"))
        .map(|line| {
            line.split(';')
                .enumerate()
                .map(|(i, field)| match i {
                    1 => "<version>".into(),
                    121 => "<disk>".into(),
                    _ => line_shape(field),
                })
                .collect()
        })
        .collect()
}

fn first_difference(ours: &[String], theirs: &[String]) -> String {
    let at = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    format!(
        "first difference at line {}:\n  iosched: {:?}\n  fio:     {:?}\n(iosched {} lines, fio {})",
        at + 1,
        ours.get(at),
        theirs.get(at),
        ours.len(),
        theirs.len()
    )
}

#[test]
fn normal_and_terse_reports_have_fios_shape() {
    if !fio3_available() {
        skip(
            "normal_and_terse_reports_have_fios_shape",
            "fio 3 is not installed",
        );
        return;
    }
    let scratch = Scratch::new("output-shape");
    let data = scratch.data_file("data.img", 8 << 20);
    for (name, body) in CASES {
        let job = scratch.file(&format!("{name}.fio"), &job_text(body, &data));
        // In the scratch folder: fio leaves a verify job's state file in its working folder.
        let fio = Command::new("fio")
            .current_dir(&scratch.0)
            .args([&job, "--output-format=terse,normal"])
            .output()
            .unwrap();
        assert!(fio.status.success(), "fio {name}: {fio:?}");
        let ours = Command::new(env!("CARGO_BIN_EXE_iosched"))
            .current_dir(&scratch.0)
            .args(["run", &job, "--device", &data, "--scheduler", "noop"])
            .args(["--output-format", "terse,normal", "--eta", "never"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&ours.stderr);
        if !ours.status.success() && stderr.contains("io_uring") {
            skip("normal_and_terse_reports_have_fios_shape", &stderr);
            return;
        }
        assert!(ours.status.success(), "iosched {name}: {stderr}");
        let (ours, theirs) = (
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&fio.stdout),
        );
        let (mut ours_normal, theirs_normal) = (normal_shape(&ours), normal_shape(&theirs));
        let (mut ours_terse, theirs_terse) = (terse_shape(&ours), terse_shape(&theirs));
        // fio prints disk stats only when it finds the disk under the file (not on every
        // file system); then there is nothing to compare ours with.
        if !theirs_normal
            .iter()
            .any(|line| line.starts_with("Disk stats"))
        {
            eprintln!("note: {name}: fio found no disk under the file; disk lines not compared");
            let at = ours_normal
                .iter()
                .position(|line| line.starts_with("Disk stats"));
            // The blank line before the block goes too.
            ours_normal.truncate(at.map_or(ours_normal.len(), |at| at.saturating_sub(1)));
            for line in &mut ours_terse {
                line.truncate(121);
            }
        }
        assert!(
            ours_normal == theirs_normal,
            "{name}: normal output: {}\n--- iosched ---\n{ours}\n--- fio ---\n{theirs}",
            first_difference(&ours_normal, &theirs_normal)
        );
        assert_eq!(ours_terse.len(), theirs_terse.len(), "{name}: terse lines");
        for (a, b) in ours_terse.iter().zip(&theirs_terse) {
            assert!(a == b, "{name}: terse: {}", first_difference(a, b));
        }
    }
}

#[test]
fn shapes_mask_numbers_units_and_padding_only() {
    assert_eq!(
        line_shape("    clat (usec): min=61, max=8546, avg=171.76, stdev= 603.84"),
        " clat (U): min=N, max=N, avg=N, stdev=N"
    );
    assert_eq!(
        line_shape("  read: IOPS=23.4k, BW=91.4MiB/s (95.9MB/s)(16.0MiB/175msec)"),
        line_shape("  read: IOPS=2367, BW=18.4MiB/s (19.3MB/s)(3836KiB/204msec)")
    );
    assert_eq!(
        line_shape("   bw (  KiB/s): min=  800, max=  800, per=100.00%"),
        line_shape("   bw (  MiB/s): min=  1.2, max=  3.4, per=99.80%")
    );
    assert_ne!(
        line_shape("  cpu          : usr=1.00%, sys=2.00%, ctx=3, majf=0, minf=0"),
        line_shape("  cpu          : usr=1.00%, sys=2.00%, ctx=3, majf=0")
    );
    let fio = "rr: (groupid=0, jobs=1): err= 0: pid=19564: Tue Nov 24 19:07:20 2026";
    assert_ne!(
        normal_shape(fio),
        normal_shape("rr: (groupid=0, jobs=1): err= 0: pid=1000: "),
        "a missing date is a difference"
    );
}
