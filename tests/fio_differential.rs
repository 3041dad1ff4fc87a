//! The differential suite: every job file of `tests/fio_corpus/` run by fio 3.33 on a file
//! (`ioengine=psync`, `direct=1`) and by iosched's engine on a copy of it, their iologs
//! (`write_iolog=diff.log`) compared. The outside reference is fio itself, run here.
//!
//! Each job file says how in its header:
//! - `# compare: exact` — the same I/O in the same order; `multiset` — the same I/O in any
//!   order (fio's random map: every block once a pass, so one pass is one set of blocks);
//!   `blocks` — the same blocks whatever the direction (a random mix over one random map).
//! - `per-direction` — each direction's offsets in the same order (a mix draws reads and
//!   writes at random, so their interleaving is not compared).
//! - `contiguous` — sequential with random sizes: each I/O starts where its direction's last
//!   ended (or back at the region's start), no block twice a pass.
//! - `map` — random with the random map and random sizes: no block twice a pass.
//! - `distribution` — the share of I/Os in each tenth of the range within 5 points, and the
//!   share on the hottest tenth of the blocks within 10 points.
//! - `properties` — only the properties below; `time-seq` — a time-based run, each
//!   direction's offsets from the start the same as far as the shorter run went;
//!   `time-random` — a time-based random run.
//!
//! Every mode also checks the byte totals (per direction; for a read/write mix their sum),
//! except the time-based ones, block alignment (to the largest power of two dividing all of
//! fio's offsets) and the range (`# range: START END`, the whole file by default).
//! `# more-than: N` — both runs did more than N data I/Os (a time-based job that fio runs
//! past its `io_size` or `number_ios`).
//! `# device: loop` runs both on loop devices (fio trims only block devices; needs root and
//! losetup, otherwise that file is skipped). `# known: REASON` marks a difference the guide
//! lists: the file still runs and is checked by its mode.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{skip, Loop};

const FILE_BYTES: usize = 16 << 20;

/// One line of an iolog: file, action, offset, length (syncs' offsets are not compared).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Op {
    file: String,
    action: String,
    offset: u64,
    len: u64,
}

fn parse_log(path: &Path) -> Result<Vec<Op>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut ops = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != 5 {
            continue; // the version line, add/open/close
        }
        let number = |s: &str| s.parse::<u64>().map_err(|e| format!("{line}: {e}"));
        let action = fields[2].to_string();
        let sync = action == "sync" || action == "datasync";
        ops.push(Op {
            file: fields[1].to_string(),
            offset: if sync { 0 } else { number(fields[3])? },
            len: number(fields[4])?,
            action,
        });
    }
    Ok(ops)
}

struct Header {
    mode: String,
    loop_device: bool,
    known: Option<String>,
    range: (u64, u64),
    positional: bool,
    more_than: Option<usize>,
}

fn header(text: &str) -> Header {
    let mut h = Header {
        mode: "exact".into(),
        loop_device: false,
        known: None,
        range: (0, FILE_BYTES as u64),
        positional: false,
        more_than: None,
    };
    for line in text.lines().filter_map(|l| l.strip_prefix("# ")) {
        if let Some(mode) = line.strip_prefix("compare: ") {
            h.mode = mode.trim().to_string();
        } else if line.trim() == "positional" {
            h.positional = true;
        } else if line.trim() == "device: loop" {
            h.loop_device = true;
        } else if let Some(reason) = line.strip_prefix("known: ") {
            h.known = Some(reason.trim().to_string());
        } else if let Some(n) = line.strip_prefix("more-than: ") {
            h.more_than = Some(n.trim().parse().unwrap());
        } else if let Some(range) = line.strip_prefix("range: ") {
            let v: Vec<u64> = range
                .split_whitespace()
                .map(|n| n.parse().unwrap())
                .collect();
            h.range = (v[0], v[1]);
        }
    }
    h
}

/// Deterministic non-zero content (no file-system signature for the engine to refuse).
fn content() -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..FILE_BYTES / 8)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()
        })
        .collect()
}

/// Makes `dir/f`: a 16 MiB file, or a link to a loop device over one.
fn prepare(dir: &Path, data: &[u8], loop_device: bool) -> Result<Option<Loop>, String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    if !loop_device {
        std::fs::write(dir.join("f"), data).map_err(|e| e.to_string())?;
        return Ok(None);
    }
    let image = dir.join("img");
    std::fs::write(&image, data).map_err(|e| e.to_string())?;
    let device = Loop::attach(&image.to_string_lossy()).ok_or("losetup failed")?;
    std::os::unix::fs::symlink(&device.0, dir.join("f")).map_err(|e| e.to_string())?;
    Ok(Some(device))
}

fn run(mut command: Command, what: &str) -> Result<(), String> {
    let out = command.output().map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Byte totals per action; a read/write mix compares their sum.
fn totals(ops: &[Op]) -> BTreeMap<String, u64> {
    let mut totals = BTreeMap::new();
    for op in ops.iter().filter(|op| op.len > 0) {
        *totals.entry(op.action.clone()).or_default() += op.len;
    }
    if totals.contains_key("read") && totals.contains_key("write") && !totals.contains_key("trim") {
        let sum = totals["read"] + totals["write"];
        totals.clear();
        totals.insert("read+write".into(), sum);
    }
    totals
}

fn data_ops(ops: &[Op]) -> impl Iterator<Item = &Op> {
    ops.iter().filter(|op| op.len > 0)
}

/// The largest power of two up to 1 MiB dividing every data offset.
fn alignment(ops: &[Op]) -> u64 {
    let mut align = 1 << 20;
    for op in data_ops(ops) {
        while op.offset % align != 0 {
            align /= 2;
        }
    }
    align
}

fn check_properties(fio: &[Op], ours: &[Op], h: &Header, totals_too: bool) -> Result<(), String> {
    if data_ops(ours).next().is_none() {
        return Err("iosched issued no I/O".into());
    }
    if let Some(n) = h.more_than {
        let (f, o) = (data_ops(fio).count(), data_ops(ours).count());
        if f <= n || o <= n {
            return Err(format!(
                "fio did {f} I/Os, iosched {o}: both should exceed {n}"
            ));
        }
    }
    // A read/write mix with a size per direction stops at the first I/O that reaches the
    // size, whichever direction it drew: the sum may differ by less than the larger size.
    let lens: std::collections::BTreeSet<u64> = data_ops(fio).map(|op| op.len).collect();
    let slack = match (
        totals(fio).get("read+write"),
        totals(ours).get("read+write"),
    ) {
        (Some(a), Some(b)) if lens.len() > 1 => a.abs_diff(*b) < *lens.last().unwrap(),
        _ => false,
    };
    if totals_too && !slack && totals(fio) != totals(ours) {
        return Err(format!(
            "byte totals: fio {:?}, iosched {:?}",
            totals(fio),
            totals(ours)
        ));
    }
    let align = alignment(fio);
    if let Some(op) = data_ops(ours).find(|op| op.offset % align != 0) {
        return Err(format!(
            "{op:?} is not aligned to {align} as all of fio's are"
        ));
    }
    let (lo, hi) = h.range;
    let single_file = fio.iter().all(|op| op.file == fio[0].file);
    if single_file {
        if let Some(op) = data_ops(ours).find(|op| op.offset < lo || op.offset + op.len > hi) {
            return Err(format!("{op:?} is outside {lo}..{hi}"));
        }
    }
    Ok(())
}

/// Each direction's ops, in order.
fn by_direction(ops: &[Op]) -> BTreeMap<String, Vec<&Op>> {
    let mut map: BTreeMap<String, Vec<&Op>> = BTreeMap::new();
    for op in ops {
        map.entry(op.action.clone()).or_default().push(op);
    }
    map
}

fn common_prefix_equal(fio: &[Op], ours: &[Op]) -> Result<(), String> {
    let (a, b) = (by_direction(fio), by_direction(ours));
    for (action, fio_ops) in &a {
        let our_ops = b.get(action).map(Vec::as_slice).unwrap_or(&[]);
        let n = fio_ops.len().min(our_ops.len());
        if let Some(i) = (0..n).find(|&i| fio_ops[i] != our_ops[i]) {
            return Err(format!(
                "{action} #{i}: fio {:?}, iosched {:?}",
                fio_ops[i], our_ops[i]
            ));
        }
    }
    Ok(())
}

/// No 512-byte sector used twice by one direction within a pass over `range` bytes.
fn no_reuse_within_a_pass(ops: &[Op], range: u64) -> Result<(), String> {
    for direction in by_direction(ops).values() {
        let ops: Vec<Op> = direction.iter().map(|&op| op.clone()).collect();
        no_reuse_in(&ops, range)?;
    }
    Ok(())
}

fn no_reuse_in(ops: &[Op], range: u64) -> Result<(), String> {
    let mut used = std::collections::HashSet::new();
    let mut done = 0;
    for op in data_ops(ops) {
        if done >= range {
            used.clear();
            done = 0;
        }
        for sector in op.offset / 512..(op.offset + op.len).div_ceil(512) {
            if !used.insert((op.file.clone(), sector)) {
                return Err(format!("{op:?} reuses a block within a pass"));
            }
        }
        done += op.len;
    }
    Ok(())
}

fn contiguous(ops: &[Op]) -> Result<(), String> {
    let mut last_end: BTreeMap<(&str, &str), (u64, u64)> = BTreeMap::new();
    for op in data_ops(ops) {
        let key = (op.file.as_str(), op.action.as_str());
        if let Some(&(first, end)) = last_end.get(&key) {
            if op.offset != end && op.offset != first {
                return Err(format!("{op:?} does not follow on from {end}"));
            }
        }
        let first = last_end.get(&key).map_or(op.offset, |&(first, _)| first);
        last_end.insert(key, (first, op.offset + op.len));
    }
    Ok(())
}

/// Share of data I/Os per tenth of the range, and on the hottest tenth of the blocks.
fn shape(ops: &[Op], (lo, hi): (u64, u64)) -> ([f64; 10], f64) {
    let data: Vec<&Op> = data_ops(ops).collect();
    let n = data.len().max(1) as f64;
    let mut tenths = [0.0; 10];
    let mut hits: BTreeMap<u64, u32> = BTreeMap::new();
    for op in &data {
        let tenth = ((op.offset - lo) * 10 / (hi - lo)).min(9) as usize;
        tenths[tenth] += 1.0 / n;
        *hits.entry(op.offset).or_default() += 1;
    }
    let mut counts: Vec<u32> = hits.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let blocks = ((hi - lo) / data.first().map_or(4096, |op| op.len)).max(10) as usize;
    let hot: u32 = counts.iter().take(blocks / 10).sum();
    (tenths, f64::from(hot) / n)
}

/// fio scatters zipf, pareto and normal by a hash and a random rotation, so where the hot
/// tenths fall differs run to run: their shares are compared sorted, and in place only for
/// distributions that are positional (`# positional`, `zoned`).
fn distribution(
    fio: &[Op],
    ours: &[Op],
    range: (u64, u64),
    positional: bool,
) -> Result<(), String> {
    let (mut fio_tenths, fio_hot) = shape(fio, range);
    let (mut our_tenths, our_hot) = shape(ours, range);
    let differ = |a: &[f64; 10], b: &[f64; 10]| a.iter().zip(b).any(|(a, b)| (a - b).abs() > 0.06);
    let mut off = positional && differ(&fio_tenths, &our_tenths);
    fio_tenths.sort_by(|a, b| b.total_cmp(a));
    our_tenths.sort_by(|a, b| b.total_cmp(a));
    off |= differ(&fio_tenths, &our_tenths);
    if off || (fio_hot - our_hot).abs() > 0.10 {
        return Err(format!(
            "shape: fio tenths {fio_tenths:.2?} hot {fio_hot:.2}, iosched {our_tenths:.2?} hot {our_hot:.2}"
        ));
    }
    Ok(())
}

/// `rw=randread:N`: each random offset is followed by N - 1 I/Os that go on from it (or
/// repeat it, `rw_sequencer=identical`).
fn runs(ops: &[Op], n: usize, identical: bool) -> Result<(), String> {
    let data: Vec<&Op> = data_ops(ops).collect();
    for (i, pair) in data.windows(2).enumerate() {
        if (i + 1) % n == 0 {
            continue;
        }
        let want = if identical {
            pair[0].offset
        } else {
            pair[0].offset + pair[0].len
        };
        if pair[1].offset != want {
            return Err(format!("I/O #{} {:?} breaks a run of {n}", i + 1, pair[1]));
        }
    }
    Ok(())
}

fn compare(fio: &[Op], ours: &[Op], h: &Header) -> Result<(), String> {
    let sorted = |ops: &[Op]| {
        let mut v = ops.to_vec();
        v.sort();
        v
    };
    // Totals are left out where chance decides them: time-based runs, random runs (a run
    // that meets the end of the file ends the job), listed differences.
    let totals_too =
        !h.mode.starts_with("time") && !h.mode.starts_with("runs") && h.known.is_none();
    check_properties(fio, ours, h, totals_too)?;
    if let Some(rest) = h.mode.strip_prefix("runs") {
        let identical = rest.starts_with("-identical");
        let n: usize = rest
            .trim_start_matches("-identical")
            .trim()
            .parse()
            .unwrap();
        return runs(fio, n, identical).and(runs(ours, n, identical));
    }
    match h.mode.as_str() {
        "exact" if fio != ours => {
            let i = (0..fio.len().min(ours.len()))
                .find(|&i| fio[i] != ours[i])
                .unwrap_or(fio.len().min(ours.len()));
            Err(format!(
                "I/O #{i}: fio {:?}, iosched {:?} ({} and {} I/Os)",
                fio.get(i),
                ours.get(i),
                fio.len(),
                ours.len()
            ))
        }
        "multiset" if sorted(fio) != sorted(ours) => Err(format!(
            "different I/O ({} and {} I/Os)",
            fio.len(),
            ours.len()
        )),
        "blocks" => {
            let blocks = |ops: &[Op]| {
                let mut v: Vec<(String, u64, u64)> = data_ops(ops)
                    .map(|op| (op.file.clone(), op.offset, op.len))
                    .collect();
                v.sort();
                v
            };
            (blocks(fio) == blocks(ours))
                .then_some(())
                .ok_or_else(|| "different blocks".to_string())
        }
        "per-direction" | "time-seq" => common_prefix_equal(fio, ours),
        "contiguous" => contiguous(fio)
            .and(contiguous(ours))
            .and_then(|_| no_reuse_within_a_pass(ours, h.range.1 - h.range.0)),
        "map" => no_reuse_within_a_pass(fio, h.range.1 - h.range.0)
            .and(no_reuse_within_a_pass(ours, h.range.1 - h.range.0)),
        "distribution" => distribution(fio, ours, h.range, h.positional),
        _ => Ok(()),
    }
}

/// fio's iolog of `job`. The clones of a `numjobs` job append to one log file from separate
/// processes, and fio 3.33 does not serialise them: now and then one clone's line lands inside
/// another's and the file does not parse. That is fio's log, not its I/O, so such a run is
/// repeated (at most three times) rather than compared.
fn fio_log(dir: &Path, job: &Path) -> Result<Vec<Op>, String> {
    let mut last = String::new();
    for _ in 0..3 {
        let _ = std::fs::remove_file(dir.join("diff.log"));
        let mut fio = Command::new("fio");
        fio.current_dir(dir)
            .args(["--output-format=json", "--output=fio.json"])
            .arg(job);
        run(fio, "fio")?;
        match parse_log(&dir.join("diff.log")) {
            Ok(ops) => return Ok(ops),
            Err(why) => last = why,
        }
    }
    Err(format!("fio's own iolog, three runs: {last}"))
}

/// Runs one job file both ways and compares; `Ok(None)` when it had to be skipped.
fn differential(job: &Path, base: &Path, data: &[u8]) -> Result<Option<Header>, String> {
    let text = std::fs::read_to_string(job).map_err(|e| e.to_string())?;
    let h = header(&text);
    let (fio_dir, our_dir) = (base.join("fio"), base.join("iosched"));
    let fio_device = match prepare(&fio_dir, data, h.loop_device) {
        Ok(device) => device,
        Err(why) if h.loop_device => {
            skip(
                &job.display().to_string(),
                &format!("needs a loop device ({why})"),
            );
            return Ok(None);
        }
        Err(why) => return Err(why),
    };
    let our_device = prepare(&our_dir, data, h.loop_device)?;
    let fio_ops = fio_log(&fio_dir, job)?;
    let mut ours = Command::new(env!("CARGO_BIN_EXE_iosched"));
    ours.current_dir(&our_dir)
        .arg("run")
        .arg(job)
        .args(["--device", "./f", "--output-format", "json", "--output"])
        .arg("iosched.json");
    run(ours, "iosched")?;
    drop((fio_device, our_device));
    let our_ops = parse_log(&our_dir.join("diff.log"))?;
    compare(&fio_ops, &our_ops, &h)?;
    Ok(Some(h))
}

fn fio_version() -> Option<String> {
    let out = Command::new("fio").arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn fio_and_iosched_issue_the_same_io() {
    let Some(version) = fio_version() else {
        return skip("fio_and_iosched_issue_the_same_io", "fio is not installed");
    };
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio_corpus");
    let mut jobs: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "fio"))
        .collect();
    jobs.sort();
    assert!(jobs.len() >= 60, "{} job files", jobs.len());
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio-differential");
    let data = content();
    // fio spends most of a small job waiting (start-up, clock calibration): four at a time.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = jobs.get(index) else { break };
                let stem = job.file_stem().unwrap().to_string_lossy().to_string();
                let result = differential(job, &base.join(&stem), &data);
                results.lock().unwrap().push((stem, result));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    let (mut exact, mut property, mut listed, mut skipped) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for (stem, result) in results {
        match result {
            Ok(None) => skipped += 1,
            Ok(Some(h)) if h.known.is_some() => listed += 1,
            Ok(Some(h)) if matches!(h.mode.as_str(), "exact" | "multiset" | "blocks") => exact += 1,
            Ok(Some(_)) => property += 1,
            Err(why) => failures.push(format!("{stem}: {why}")),
        }
    }
    eprintln!(
        "fio differential ({version}): {} job files: {exact} match I/O for I/O (in order or as \
         a set), {property} by property, {listed} listed differences, {skipped} skipped, {} failed",
        jobs.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Jobs that show by the file's content which wrote last: `a` writes 0xaa over the first
/// 64 KiB at 0.5 s, `d` 0xdd once `b` (a 4 KiB write) has ended, while `g` reads elsewhere for
/// 1 s. With `c` a `stonewall` job before `d`, fio 3.33 starts `d` with `c`, after `g` at 1 s
/// (its start loop stops at a stonewall it cannot start), so 0xdd is last; without it `d`
/// starts as `b` ends and 0xaa is last. Both seen with fio 3.33 here.
fn start_order_job(stonewall: bool) -> String {
    let stonewall = if stonewall { "stonewall\n" } else { "" };
    format!(
        "[global]\nioengine=psync\ndirect=1\nbs=4k\nfilename=f\n\
         [g]\nrw=read\noffset=8m\nsize=1m\ntime_based\nruntime=1\n\
         [a]\nrw=write\nsize=64k\nstartdelay=500ms\nbuffer_pattern=0xaa\n\
         [b]\nrw=write\noffset=4m\nsize=4k\nbuffer_pattern=0xbb\n\
         [c]\n{stonewall}rw=read\nsize=4k\n\
         [d]\nwait_for=b\nrw=write\nsize=64k\nbuffer_pattern=0xdd\n"
    )
}

/// The first 64 KiB of `dir/f` after `command` ran in `dir` on a fresh copy of `data`.
fn first_64k_after(dir: &Path, data: &[u8], mut command: Command, what: &str) -> Vec<u8> {
    prepare(dir, data, false).unwrap();
    command.current_dir(dir);
    run(command, what).unwrap();
    let mut bytes = std::fs::read(dir.join("f")).unwrap();
    bytes.truncate(64 << 10);
    bytes
}

/// The first 64 KiB of a fresh file after fio 3.33 ran `job_text` on it, and after
/// iosched's engine did (each in its own folder under `base`).
fn first_64k_by_both(base: &Path, name: &str, variant: bool, job_text: &str) -> (Vec<u8>, Vec<u8>) {
    let data = content();
    let _ = std::fs::create_dir_all(base);
    let job = base.join(format!("{name}-{variant}.fio"));
    std::fs::write(&job, job_text).unwrap();
    let mut fio = Command::new("fio");
    fio.args(["--output-format=json", "--output=fio.json"])
        .arg(&job);
    let theirs = first_64k_after(&base.join("fio"), &data, fio, "fio");
    let mut ours = Command::new(env!("CARGO_BIN_EXE_iosched"));
    ours.arg("run")
        .arg(&job)
        .args(["--device", "./f", "--output-format", "json", "--output"])
        .arg("iosched.json");
    let ours = first_64k_after(&base.join("iosched"), &data, ours, "iosched");
    (theirs, ours)
}

/// fio's start order (the outside reference: fio 3.33 run here on the same job file): a
/// `wait_for` job behind a `stonewall` job starts with it, not when its waitee ends.
#[test]
fn fio_and_iosched_start_jobs_in_the_same_order() {
    if fio_version().is_none() {
        return skip(
            "fio_and_iosched_start_jobs_in_the_same_order",
            "fio is not installed",
        );
    }
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio-start-order");
    for stonewall in [true, false] {
        let (theirs, ours) =
            first_64k_by_both(&base, "order", stonewall, &start_order_job(stonewall));
        let last = |bytes: &[u8]| bytes[0];
        assert_eq!(
            (last(&ours), ours == theirs),
            (last(&theirs), true),
            "stonewall {stonewall}: 0x{:x} written last by fio, 0x{:x} by iosched",
            last(&theirs),
            last(&ours)
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// `[a]` waits out a start delay and then writes 0xaa over the first 64 KiB; `[b]` reads one
/// block elsewhere and ends at once. `exitall` is on `[a]` only, or nowhere.
fn exitall_job(exitall: bool) -> String {
    let exitall = if exitall { "exitall\n" } else { "" };
    format!(
        "[global]\nioengine=psync\ndirect=1\nbs=4k\nfilename=f\n\
         [a]\n{exitall}rw=write\nsize=64k\nstartdelay=300ms\nbuffer_pattern=0xaa\n\
         [b]\nrw=read\noffset=4m\nsize=4k\n"
    )
}

/// fio 3.33's `exitall` (the outside reference: fio run here on the same job file) is one
/// run-wide flag, and a job that ends then stops its whole group, including the jobs not
/// started yet: `[b]`, without `exitall`, ends and `[a]` never starts, so the file keeps its
/// bytes; with no `exitall` at all `[a]` writes them.
#[test]
fn fio_and_iosched_stop_the_same_jobs_on_exitall() {
    if fio_version().is_none() {
        return skip(
            "fio_and_iosched_stop_the_same_jobs_on_exitall",
            "fio is not installed",
        );
    }
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio-exitall");
    for exitall in [true, false] {
        let (theirs, ours) = first_64k_by_both(&base, "exitall", exitall, &exitall_job(exitall));
        let written = |bytes: &[u8]| bytes.iter().all(|&b| b == 0xaa);
        assert_eq!(
            (written(&ours), ours == theirs),
            (written(&theirs), true),
            "exitall {exitall}: [a] wrote its bytes under fio: {}, under iosched: {}",
            written(&theirs),
            written(&ours)
        );
        assert_eq!(
            written(&theirs),
            !exitall,
            "fio itself: [a] writes only without exitall"
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}
