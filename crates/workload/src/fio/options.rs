//! The option table: every fio option we accept, its aliases, its value kind, and what it
//! does to a [`Draft`].
//!
//! The kind decides the checks every option gets before its own code runs, as fio's option
//! types do (`__handle_option()`):
//!
//! * [`Kind::Set`] options (fio's `FIO_OPT_STR_SET`) may be written bare (`time_based`) or
//!   with an integer (`time_based=0` turns them off);
//! * every other kind needs a value: `direct` alone is an error;
//! * [`Kind::Enum`] values are matched exactly (up to a `:` postfix), so a blank after `=`
//!   (`rw = randread`) is an error, as in fio; numbers skip such blanks.
//!
//! Options whose `apply` is `None` mean nothing to a simulator or engine (logging, CPU
//! affinity, buffer contents...): their value is still checked by kind, and the job set lists
//! their names once in `ignored_options`.

use iosched_core::{IoPrio, IoPrioClass};

use super::build::Draft;
use super::value::{
    self, parse_byte_range, parse_bytes, parse_int_flag, parse_size, parse_time_us, per_direction,
    SizeValue, TimeUnit,
};
use crate::job::{
    ExitWhat, FadviseHint, FileService, IoEngine, RandomDistribution, RwMode, RwSequencer,
    SizeOrPercent, Workload, WriteData,
};

/// How an option's value is written.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// May be bare; `=N` sets it to N != 0.
    Set,
    /// Needs `=0` or `=1`.
    Bool,
    /// An integer (fio reads units here too: `iodepth=1k` is 1024).
    Int,
    /// A time with this default unit.
    Time(TimeUnit),
    /// One of these words, optionally followed by `:postfix`.
    Enum(&'static [&'static str]),
    /// Free text, or a format the option parses itself.
    Text,
    /// Free text, or nothing (the log options: fio then names the log after the job).
    MaybeText,
}

/// What an option's code sees: its value and where to put warnings.
pub(crate) struct Arg<'a> {
    pub text: Option<&'a str>,
    pub kb_base: u32,
    pub warnings: &'a mut Vec<String>,
}

pub(crate) type ApplyFn = fn(&mut Draft, &mut Arg<'_>) -> Result<(), String>;

pub(crate) struct OptDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// `None`: accepted and ignored.
    pub apply: Option<ApplyFn>,
}

impl<'a> Arg<'a> {
    fn text(&self) -> &'a str {
        self.text.unwrap_or("")
    }

    /// A "set" option's value: bare means on.
    fn flag(&mut self) -> Result<bool, String> {
        match self.text {
            None => Ok(true),
            Some(t) => parse_int_flag(t).map(|v| v != 0),
        }
    }

    /// A bool option's value: 0 or 1.
    fn bool01(&mut self) -> Result<bool, String> {
        match parse_int_flag(self.text())? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(format!("expected 0 or 1, got {v}")),
        }
    }

    fn warn_ignored_tail(&mut self) {
        let text = self.text();
        if let Some(tail) = value::ignored_tail(text) {
            let msg = format!("fio reads only the first value of '{text}' and ignores '{tail}'");
            self.warnings.push(msg);
        }
    }

    /// A single integer within `lo..=hi`.
    fn int_in(&mut self, lo: i64, hi: i64) -> Result<i64, String> {
        let v = match parse_size(self.text(), self.kb_base, self.warnings)? {
            SizeValue::Bytes(v) => v,
            SizeValue::Percent(_) => return Err("a percentage is not allowed here".to_string()),
        };
        self.warn_ignored_tail();
        if v < lo || v > hi {
            return Err(format!("out of range {lo}..={hi}"));
        }
        Ok(v)
    }

    fn u32_in(&mut self, lo: u32, hi: u32) -> Result<u32, String> {
        self.int_in(i64::from(lo), i64::from(hi)).map(|v| v as u32)
    }

    fn bytes(&mut self) -> Result<u64, String> {
        let v = parse_bytes(self.text(), self.kb_base, self.warnings)?;
        self.warn_ignored_tail();
        Ok(v)
    }

    fn size_or_percent(&mut self) -> Result<SizeOrPercent, String> {
        let v = match parse_size(self.text(), self.kb_base, self.warnings)? {
            SizeValue::Bytes(b) => {
                SizeOrPercent::Bytes(u64::try_from(b).map_err(|_| "negative size".to_string())?)
            }
            SizeValue::Percent(p) if (1..=100).contains(&p) => SizeOrPercent::Percent(p as f64),
            SizeValue::Percent(p) => return Err(format!("percentage {p} is not in 1..=100")),
        };
        self.warn_ignored_tail();
        Ok(v)
    }

    fn time_ns(&mut self, unit: TimeUnit) -> Result<u64, String> {
        let us = parse_time_us(self.text(), unit, self.warnings)?;
        us.checked_mul(1000)
            .ok_or_else(|| "time too large".to_string())
    }

    /// Per-direction byte values, each at least `min`.
    fn dir_bytes(&mut self, min: u64) -> Result<[Option<u64>; 3], String> {
        let kb_base = self.kb_base;
        let text = self.text().to_string();
        per_direction(&text, false, self.warnings, |t, w| {
            let v = parse_bytes(t, kb_base, w)?;
            if v < min {
                return Err(format!("{v} is below the minimum {min}"));
            }
            Ok(v)
        })
    }

    /// Per-direction integers in `lo..=hi`.
    fn dir_ints(&mut self, lo: u64, hi: u64) -> Result<[Option<u64>; 3], String> {
        let kb_base = self.kb_base;
        let text = self.text().to_string();
        per_direction(&text, false, self.warnings, |t, w| {
            let v = parse_bytes(t, kb_base, w)?;
            if v < lo || v > hi {
                return Err(format!("{v} is out of range {lo}..={hi}"));
            }
            Ok(v)
        })
    }

    /// `word[:postfix]`.
    /// Free text, kept as fio keeps it (a blank after `=` stays part of the value).
    fn string(&mut self) -> String {
        let text = self.text();
        if text.starts_with([' ', '\t']) {
            self.warnings.push(format!(
                "'{text}': fio keeps the blank after '=' as part of the value"
            ));
        }
        text.to_string()
    }

    fn keyword(&self) -> (&'a str, Option<&'a str>) {
        match self.text().split_once(':') {
            Some((word, post)) => (word, Some(post)),
            None => (self.text(), None),
        }
    }
}

/// `rate=0` means no limit.
fn nonzero(values: [Option<u64>; 3], into: &mut [Option<u64>; 3]) {
    for (slot, v) in into.iter_mut().zip(values) {
        if let Some(v) = v {
            *slot = (v != 0).then_some(v);
        }
    }
}

const RW_MODES: &[&str] = &[
    "read",
    "write",
    "trim",
    "randread",
    "randwrite",
    "randtrim",
    "rw",
    "readwrite",
    "randrw",
    "trimwrite",
    "randtrimwrite",
];
pub(crate) const ENGINES: &[&str] = &[
    "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "mmap", "posixaio", "null",
];
const VERIFY: &[&str] = &[
    "0",
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "sha256",
    "sha512",
    "sha1",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "pattern",
    "meta",
    "null",
];

fn apply_rw(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let (word, postfix) = a.keyword();
    let mode = match word {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "trim" => RwMode::Trim,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "randtrim" => RwMode::RandTrim,
        "rw" | "readwrite" => RwMode::ReadWrite,
        "randrw" => RwMode::RandRw,
        "trimwrite" => RwMode::TrimWrite,
        "randtrimwrite" => RwMode::RandTrimWrite,
        other => return Err(format!("unknown mode '{other}'")),
    };
    // fio's str_rw_cb() resets the postfix before reading a new one.
    let mut suffix = 0;
    if let Some(post) = postfix.filter(|p| !p.is_empty()) {
        if mode.is_random() {
            suffix = match post.parse::<i64>() {
                Ok(n) if n >= 1 => n,
                _ => return Err(format!("':{post}' must be a count of I/Os (>= 1)")),
            };
        } else {
            suffix = match parse_size(post, a.kb_base, a.warnings)? {
                SizeValue::Bytes(b) => b,
                SizeValue::Percent(_) => return Err("the gap cannot be a percentage".to_string()),
            };
        }
    }
    d.spec.rw = mode;
    d.spec.rw_suffix = suffix;
    Ok(())
}

fn apply_rw_sequencer(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.rw_sequencer = match a.keyword().0 {
        "identical" => RwSequencer::Identical,
        _ => RwSequencer::Sequential,
    };
    Ok(())
}

fn apply_rwmixread(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.rwmixread = a.u32_in(0, 100)?;
    Ok(())
}

fn apply_rwmixwrite(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.rwmixread = 100 - a.u32_in(0, 100)?;
    Ok(())
}

fn apply_bs(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    for (slot, v) in d.bs.iter_mut().zip(a.dir_bytes(1)?) {
        if let Some(v) = v {
            *slot = v;
        }
    }
    Ok(())
}

fn apply_bsrange(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let kb_base = a.kb_base;
    let text = a.text().to_string();
    let ranges = per_direction(&text, true, a.warnings, |t, w| {
        let (lo, hi) = parse_byte_range(t, kb_base, w)?;
        if lo == 0 {
            return Err("block sizes must be > 0".to_string());
        }
        Ok((lo, hi))
    })?;
    for (slot, r) in d.bsrange.iter_mut().zip(ranges) {
        if r.is_some() {
            *slot = r;
        }
    }
    Ok(())
}

/// Most entries fio allows per direction (`BSSPLIT_MAX`).
const BSSPLIT_MAX: usize = 64;

/// One direction of `bssplit`: `size/pct:size/:size/pct...`.
fn parse_bssplit_dir(
    text: &str,
    kb_base: u32,
    warnings: &mut Vec<String>,
) -> Result<Vec<(u64, u32)>, String> {
    let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
    for item in text.split(':').filter(|s| !s.trim().is_empty()) {
        let (size, pct) = match item.split_once('/') {
            Some((s, p)) => (s, p.trim()),
            None => (item, ""),
        };
        let size = parse_bytes(size, kb_base, warnings)?;
        if size == 0 {
            return Err("block sizes must be > 0".to_string());
        }
        let pct = if pct.is_empty() {
            None
        } else {
            let p: f64 = pct.parse().map_err(|_| format!("bad percentage '{pct}'"))?;
            if !(0.0..=100.0).contains(&p) {
                return Err(format!("percentage {pct} is not in 0..=100"));
            }
            if p.fract() != 0.0 {
                warnings.push(format!("bssplit percentage {pct} rounded to {}", p.round()));
            }
            Some(p.round() as u32)
        };
        entries.push((size, pct));
    }
    if entries.is_empty() {
        return Err("no block sizes".to_string());
    }
    if entries.len() > BSSPLIT_MAX {
        return Err(format!("more than {BSSPLIT_MAX} block sizes"));
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    if given > 100 {
        return Err(format!("percentages add up to {given}%, more than 100"));
    }
    let missing = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    // Entries without a percentage share what the others leave (none missing: unused).
    let share = (100 - given).checked_div(missing).unwrap_or(0);
    let mut resolved: Vec<(u64, u32)> = entries
        .iter()
        .map(|(s, p)| (*s, p.unwrap_or(share)))
        .collect();
    // fio sorts by size and draws r in 0..100 against the running sum: whatever the listed
    // percentages leave over lands on the last (largest) size.
    resolved.sort_by_key(|e| e.0);
    let total: u32 = resolved.iter().map(|e| e.1).sum();
    if total < 100 {
        if missing == 0 {
            warnings.push(format!(
                "bssplit '{text}' adds up to {total}%; fio gives the remaining {}% to the largest size",
                100 - total
            ));
        }
        if let Some(last) = resolved.last_mut() {
            last.1 += 100 - total;
        }
    }
    Ok(resolved)
}

fn apply_bssplit(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let kb_base = a.kb_base;
    let text = a.text().to_string();
    let groups: Vec<&str> = text.split(',').collect();
    let mut any = false;
    for (dir, group) in groups.iter().enumerate().take(3) {
        if group.trim().is_empty() {
            continue;
        }
        let split = parse_bssplit_dir(group, kb_base, a.warnings)?;
        any = true;
        let last = if dir + 1 < groups.len() { dir } else { 2 };
        for slot in &mut d.bssplit[dir..=last] {
            *slot = Some(split.clone());
        }
    }
    if !any {
        return Err("empty value".to_string());
    }
    Ok(())
}

fn apply_blockalign(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    for (slot, v) in d.spec.blockalign.iter_mut().zip(a.dir_bytes(1)?) {
        if v.is_some() {
            *slot = v;
        }
    }
    Ok(())
}

fn apply_bs_unaligned(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.bs_unaligned = a.flag()?;
    Ok(())
}

fn apply_ioengine(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.ioengine =
        match a.keyword().0 {
            "sync" => IoEngine::Sync,
            "psync" => IoEngine::Psync,
            "vsync" => IoEngine::Vsync,
            "pvsync" => IoEngine::Pvsync,
            "pvsync2" => IoEngine::Pvsync2,
            "libaio" => IoEngine::Libaio,
            "io_uring" => IoEngine::IoUring,
            "mmap" => IoEngine::Mmap,
            "posixaio" => IoEngine::PosixAio,
            // Known to fio, but its I/O never leaves the process: nothing reaches a scheduler.
            "null" => return Err(
                "the null engine completes I/O without issuing any: there is nothing to schedule"
                    .to_string(),
            ),
            other => return Err(format!("unsupported ioengine '{other}'")),
        };
    Ok(())
}

/// iosched's own option: a workload generator fio cannot express.
fn apply_iosched_workload(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.workload = match a.keyword().0 {
        "fio" => Workload::Fio,
        "dbench4" => Workload::Dbench4,
        other => return Err(format!("unknown workload '{other}' (fio or dbench4)")),
    };
    Ok(())
}

fn apply_iodepth(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.iodepth = a.u32_in(1, u32::MAX)?;
    Ok(())
}

fn apply_iodepth_batch_submit(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.iodepth_batch_submit = a.u32_in(0, u32::MAX)?;
    Ok(())
}

fn apply_iodepth_batch_complete_min(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.iodepth_batch_complete_min = a.u32_in(0, u32::MAX)?;
    Ok(())
}

fn apply_iodepth_batch_complete_max(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.batch_complete_max = Some(a.u32_in(0, u32::MAX)?);
    Ok(())
}

fn apply_iodepth_low(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.iodepth_low = Some(a.u32_in(0, u32::MAX)?);
    Ok(())
}

fn apply_direct(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.direct = a.bool01()?;
    Ok(())
}

fn apply_buffered(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.direct = !a.bool01()?;
    Ok(())
}

fn apply_numjobs(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.numjobs = a.u32_in(1, u32::MAX)?;
    Ok(())
}

fn apply_thread(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.thread = a.flag()?;
    Ok(())
}

/// `size=0` (like `io_size=0`, `number_ios=0`) is fio's "not set": the whole file.
fn apply_size(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.size = match a.size_or_percent()? {
        SizeOrPercent::Bytes(0) => None,
        size => Some(size),
    };
    Ok(())
}

fn apply_io_size(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.io_size = Some(a.bytes()?).filter(|b| *b != 0);
    Ok(())
}

fn apply_number_ios(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.number_ios = Some(a.bytes()?).filter(|n| *n != 0);
    Ok(())
}

fn apply_filesize(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let range = parse_byte_range(a.text(), a.kb_base, a.warnings)?;
    if range.0 == 0 {
        return Err("file sizes must be > 0".to_string());
    }
    d.spec.filesize = Some(range);
    Ok(())
}

fn apply_nrfiles(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.nrfiles = a.u32_in(1, u32::MAX)?;
    Ok(())
}

fn apply_filename(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.filenames = value::split_escaped_colons(&a.string());
    Ok(())
}

fn apply_directory(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.directories = value::split_escaped_colons(&a.string());
    Ok(())
}

fn apply_file_service_type(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let (word, post) = a.keyword();
    let count = |post: Option<&str>| -> Result<u32, String> {
        match post.filter(|p| !p.is_empty()) {
            None => Ok(1),
            Some(p) => p
                .parse::<u32>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("':{p}' must be a count of I/Os (>= 1)")),
        }
    };
    d.spec.file_service = match word {
        "roundrobin" => FileService::RoundRobin { n: count(post)? },
        "random" => FileService::Random { n: count(post)? },
        "sequential" => FileService::Sequential,
        other => {
            a.warnings.push(format!(
                "file_service_type={other} is approximated by uniform random file choice"
            ));
            FileService::Random { n: 1 }
        }
    };
    Ok(())
}

fn apply_offset(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.offset = a.size_or_percent()?;
    Ok(())
}

fn apply_offset_align(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let align = a.bytes()?;
    d.spec.offset_align = (align > 0).then_some(align);
    Ok(())
}

fn apply_offset_increment(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    match a.size_or_percent()? {
        SizeOrPercent::Bytes(b) => {
            d.spec.offset_increment = b;
            d.spec.offset_increment_pct = None;
        }
        SizeOrPercent::Percent(p) => {
            d.spec.offset_increment = 0;
            d.spec.offset_increment_pct = Some(p);
        }
    }
    Ok(())
}

fn apply_runtime(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let ns = a.time_ns(TimeUnit::Seconds)?;
    d.spec.runtime_ns = (ns != 0).then_some(ns);
    Ok(())
}

fn apply_time_based(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.time_based = a.flag()?;
    Ok(())
}

fn apply_ramp_time(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.ramp_time_ns = a.time_ns(TimeUnit::Seconds)?;
    Ok(())
}

/// `startdelay=T` or a range `T1-T2` (also `:`/`,`): first value is the low end, last the
/// high end, as fio stores them; swapped when low > high.
fn apply_startdelay(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let text = a.text().to_string();
    let mut values = Vec::new();
    for el in value::split_list(&text, false) {
        if !el.own.trim().is_empty() {
            values.push(parse_time_us(el.rest, TimeUnit::Seconds, a.warnings)?);
        }
    }
    let (Some(&first), Some(&last)) = (values.first(), values.last()) else {
        return Err("empty value".to_string());
    };
    let ns = |us: u64| {
        us.checked_mul(1000)
            .ok_or_else(|| "time too large".to_string())
    };
    d.spec.startdelay_ns = (ns(first.min(last))?, ns(first.max(last))?);
    Ok(())
}

fn apply_loops(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.loops = a.u32_in(1, u32::MAX)?;
    Ok(())
}

fn apply_thinktime(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.thinktime_ns = a.time_ns(TimeUnit::Micros)?;
    Ok(())
}

fn apply_thinktime_spin(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.thinktime_spin_ns = a.time_ns(TimeUnit::Micros)?;
    Ok(())
}

fn apply_thinktime_blocks(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.thinktime_blocks = a.u32_in(1, u32::MAX)?;
    Ok(())
}

fn apply_thinktime_blocks_type(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.thinktime_on_issue = a.keyword().0 == "issue";
    Ok(())
}

fn apply_thinktime_quiesce(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.thinktime_quiesce = a.bool01()?;
    Ok(())
}

fn apply_rate(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    nonzero(a.dir_bytes(0)?, &mut d.spec.rate);
    Ok(())
}

fn apply_rate_iops(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    nonzero(a.dir_ints(0, u64::MAX)?, &mut d.spec.rate_iops);
    Ok(())
}

/// A log's file prefix: the value, or (bare) empty for "the job's name", resolved once the
/// name is known.
fn log_prefix(a: &mut Arg<'_>) -> Option<String> {
    Some(a.text.map(str::trim).unwrap_or("").to_string())
}

fn apply_write_bw_log(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.log_bw = log_prefix(a);
    Ok(())
}

fn apply_write_iolog(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let path = a.text.map(str::trim).unwrap_or("");
    if path.is_empty() {
        return Err("write_iolog needs a file name".to_string());
    }
    d.spec.write_iolog = Some(path.to_string());
    Ok(())
}

fn apply_write_iops_log(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.log_iops = log_prefix(a);
    Ok(())
}

fn apply_write_lat_log(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.log_lat = log_prefix(a);
    Ok(())
}

fn apply_log_avg_msec(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.log_avg_ns = a.int_in(0, i64::from(u32::MAX))? as u64 * 1_000_000;
    Ok(())
}

fn apply_write_hist_log(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.log_hist = log_prefix(a);
    Ok(())
}

fn apply_log_hist_msec(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.log_hist_msec = a.int_in(0, i64::from(u32::MAX))? as u64;
    Ok(())
}

/// fio's range for `log_hist_coarseness`: 0 (every bucket) to 6 (64 buckets a bin).
fn apply_log_hist_coarseness(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.log_hist_coarseness = a.int_in(0, 6)? as u32;
    Ok(())
}

fn apply_zero_buffers(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    if a.flag()? {
        d.spec.write_data = WriteData::Zeros;
    }
    Ok(())
}

fn apply_refill_buffers(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    if a.flag()? && d.spec.write_data != WriteData::Zeros {
        d.spec.write_data = WriteData::Refilled;
    }
    Ok(())
}

fn apply_scramble_buffers(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let scramble = a.bool01()?;
    match (scramble, d.spec.write_data) {
        (false, WriteData::Scrambled) => d.spec.write_data = WriteData::AsIs,
        (true, WriteData::AsIs) => d.spec.write_data = WriteData::Scrambled,
        _ => {}
    }
    Ok(())
}

fn apply_flow(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    // Older fio took signed flows (one job +8, the other -1); the weights are their sizes.
    d.spec.flow_weight = a.int_in(-1_000_000, 1_000_000)?.unsigned_abs();
    Ok(())
}

fn apply_flow_id(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.flow_id = a.int_in(0, i64::from(u32::MAX))? as u32;
    Ok(())
}

fn apply_flow_sleep(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.flow_sleep_ns = a.time_ns(TimeUnit::Micros)?;
    Ok(())
}

fn apply_zonemode(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.zonemode_strided = match a.keyword().0 {
        "none" => Some(false),
        "strided" => Some(true),
        "zbd" => return Err("zoned block devices (zbd) are not modelled".to_string()),
        other => return Err(format!("unknown zonemode '{other}'")),
    };
    Ok(())
}

fn apply_zonesize(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.zonesize = a.bytes()?;
    Ok(())
}

fn apply_zonerange(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.zonerange = a.bytes()?;
    Ok(())
}

fn apply_zoneskip(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.zoneskip = a.bytes()?;
    Ok(())
}

fn apply_ss(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.steady_state.parse_criterion(a.text())
}

fn apply_ss_dur(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    // fio keeps whole seconds of samples.
    let seconds = a.time_ns(TimeUnit::Seconds)? / 1_000_000_000;
    d.spec.steady_state.window_s = u32::try_from(seconds).map_err(|_| "too long".to_string())?;
    Ok(())
}

fn apply_ss_ramp(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.steady_state.ramp_ns = a.time_ns(TimeUnit::Seconds)?;
    Ok(())
}

fn apply_rate_process(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.rate_poisson = a.keyword().0 == "poisson";
    Ok(())
}

fn apply_rate_min(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    nonzero(a.dir_bytes(0)?, &mut d.spec.rate_min);
    Ok(())
}

fn apply_rate_iops_min(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    nonzero(a.dir_ints(0, u64::MAX)?, &mut d.spec.rate_iops_min);
    Ok(())
}

fn apply_prio(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.prio = Some(a.int_in(0, i64::from(IoPrio::LEVELS) - 1)? as u8);
    Ok(())
}

fn apply_prioclass(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.prioclass = Some(a.int_in(0, 3)? as u8);
    Ok(())
}

/// fio's ioprio rules: `prio` alone gives best-effort at that level, `prioclass` alone gives
/// that class at level 0 (not the nice-derived 4), neither leaves the task's default.
pub(crate) fn resolve_ioprio(prio: Option<u8>, prioclass: Option<u8>) -> IoPrio {
    let class = |c: u8| match c {
        1 => Some(IoPrioClass::RealTime),
        2 => Some(IoPrioClass::BestEffort),
        3 => Some(IoPrioClass::Idle),
        _ => None,
    };
    match (prio, prioclass.map(class)) {
        (None, None) | (_, Some(None)) => IoPrio::none(),
        (Some(level), None) => IoPrio {
            class: IoPrioClass::BestEffort,
            level,
        },
        (level, Some(Some(class))) => IoPrio {
            class,
            level: level.unwrap_or(0),
        },
    }
}

fn apply_nice(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.nice = a.int_in(-20, 19)? as i32;
    Ok(())
}

/// `cgroup=a/b` (leading slash dropped); `cgroup=/` is the root group itself, named so that
/// `cgroup_weight` can set the root's weight.
fn apply_cgroup(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let text = a.string();
    // Each component names a cgroup directory: never `..` out of the run's own group.
    for component in text.split('/').filter(|c| !c.is_empty()) {
        iosched_gate::check_name("cgroup", component)?;
    }
    d.spec.cgroup = Some(text.trim_start_matches('/').to_string());
    Ok(())
}

/// fio's `cpus_allowed`: CPU numbers and inclusive ranges, comma-separated (`0,5,8-15`).
fn apply_cpus_allowed(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let text = a.text();
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        let cpu = |s: &str| {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|&c| c < MAX_CPUS)
                .ok_or_else(|| format!("'{part}' is not a CPU number or range below {MAX_CPUS}"))
        };
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last) = (cpu(first)?, cpu(last)?);
                if first > last {
                    return Err(format!("range '{part}' runs backwards"));
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(cpu(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    d.spec.cpus_allowed = Some(cpus);
    Ok(())
}

/// fio's `cpumask`: a bit per allowed CPU, decimal or `0x` hex.
fn apply_cpumask(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let text = a.text().trim();
    let mask = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse::<u64>(),
    }
    .ok()
    .filter(|&mask| mask != 0)
    .ok_or_else(|| format!("'{text}' is not a non-zero CPU bit mask"))?;
    d.spec.cpus_allowed = Some((0..64).filter(|cpu| mask >> cpu & 1 == 1).collect());
    Ok(())
}

/// CPU numbers accepted in `cpus_allowed` (the kernel's default `NR_CPUS` on x86-64).
const MAX_CPUS: u32 = 8192;

fn apply_cgroup_weight(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.cgroup_weight = Some(a.u32_in(100, 1000)?);
    Ok(())
}

fn apply_fsync(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.fsync = a.u32_in(0, u32::MAX)?;
    Ok(())
}

fn apply_fdatasync(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.fdatasync = a.u32_in(0, u32::MAX)?;
    Ok(())
}

fn apply_end_fsync(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.end_fsync = a.bool01()?;
    Ok(())
}

fn apply_fsync_on_close(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.fsync_on_close = a.bool01()?;
    Ok(())
}

fn apply_sync(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    // Choice: O_DSYNC counts as synchronous writes too; JobSpec keeps one flag.
    d.spec.sync_writes = matches!(a.keyword().0, "1" | "sync" | "dsync");
    Ok(())
}

/// `fill_device=1`: fio 3.33 writes until the target is full (ENOSPC or EDQUOT), on a
/// regular file until its file system is (checked here: a 64 KiB sequential write job on a
/// file in a 16 MiB tmpfs wrote 16 MiB, stopped at ENOSPC and exited 0). iosched neither simulates nor allows filling a file system, so it
/// refuses rather than ignore it; `fill_device=0` is fio's default and accepted.
fn apply_fill_device(_d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    if a.bool01()? {
        return Err(
            "fio writes until the device or file system is full (ENOSPC); iosched \
                    does not fill a file system or device: give size= instead"
                .to_string(),
        );
    }
    Ok(())
}

fn apply_overwrite(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.overwrite = a.bool01()?;
    Ok(())
}

fn apply_pre_read(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.pre_read = a.bool01()?;
    Ok(())
}

fn apply_fadvise_hint(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.fadvise_hint = match a.keyword().0 {
        "0" => FadviseHint::None,
        "1" => FadviseHint::ByPattern,
        "random" => FadviseHint::Random,
        "sequential" => FadviseHint::Sequential,
        _ => FadviseHint::NoReuse,
    };
    Ok(())
}

fn apply_invalidate(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.invalidate = a.bool01()?;
    Ok(())
}

fn float_postfix(post: Option<&str>, what: &str) -> Result<f64, String> {
    let text = post.unwrap_or("").split(':').next().unwrap_or("");
    text.trim()
        .parse::<f64>()
        .map_err(|_| format!("{what} needs a number after ':'"))
}

/// Resolve a column of percentages where empty entries share what the others leave
/// (`zoned:50/5:30/15:20/` gives the last zone 80% of the range). The leftover of the
/// integer division goes to the last empty entry.
fn share_remainder(column: &[Option<u32>]) -> Vec<u32> {
    let given: u32 = column.iter().flatten().sum();
    let missing = column.iter().filter(|p| p.is_none()).count() as u32;
    let left = 100u32.saturating_sub(given);
    let share = left.checked_div(missing).unwrap_or(0);
    let last_missing = column.iter().rposition(|p| p.is_none());
    column
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            Some(p) => *p,
            None if Some(i) == last_missing => left - share * (missing - 1),
            None => share,
        })
        .collect()
}

/// `zoned:access/size:access/size...` (first direction only).
fn parse_zoned(post: &str, warnings: &mut Vec<String>) -> Result<Vec<(u32, u32)>, String> {
    let mut groups = post.split(',');
    let first = groups.next().unwrap_or("");
    if groups.any(|g| !g.trim().is_empty()) {
        warnings
            .push("zoned: only the first (read) zone list is used for all directions".to_string());
    }
    let pct = |t: &str| -> Result<Option<u32>, String> {
        let t = t.trim();
        if t.is_empty() {
            return Ok(None);
        }
        t.parse::<u32>()
            .ok()
            .filter(|p| *p <= 100)
            .map(Some)
            .ok_or_else(|| format!("bad zone percentage '{t}'"))
    };
    let mut access = Vec::new();
    let mut size = Vec::new();
    for zone in first.split(':').filter(|z| !z.trim().is_empty()) {
        let (a, s) = zone
            .split_once('/')
            .ok_or_else(|| format!("zone '{zone}' is not access%/size%"))?;
        access.push(pct(a)?);
        size.push(pct(s)?);
    }
    let zones: Vec<(u32, u32)> = share_remainder(&access)
        .into_iter()
        .zip(share_remainder(&size))
        .collect();
    let access_total: u32 = zones.iter().map(|z| z.0).sum();
    let size_total: u32 = zones.iter().map(|z| z.1).sum();
    if access_total != 100 || size_total != 100 {
        return Err(format!(
            "zone percentages must add up to 100 (access {access_total}, size {size_total})"
        ));
    }
    Ok(zones)
}

fn apply_random_distribution(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let (word, post) = a.keyword();
    let (word, post) = (word.to_string(), post.map(str::to_string));
    let center = post.as_deref().is_some_and(|p| p.contains(':'));
    let dist = match word.as_str() {
        "random" => RandomDistribution::Uniform,
        "zipf" => {
            let theta = float_postfix(post.as_deref(), "zipf")?;
            if theta <= 0.0 || theta == 1.0 {
                return Err("zipf theta must be > 0 and not 1.0".to_string());
            }
            RandomDistribution::Zipf { theta }
        }
        "pareto" => {
            let h = float_postfix(post.as_deref(), "pareto")?;
            if h <= 0.0 || h >= 1.0 {
                return Err("pareto h must be in (0, 1)".to_string());
            }
            RandomDistribution::Pareto { h }
        }
        "normal" | "gauss" => {
            // fio takes a bare `normal` as a deviation of 0.
            let sigma_pct = match post.as_deref() {
                None | Some("") => 0.0,
                _ => float_postfix(post.as_deref(), "normal")?,
            };
            if sigma_pct < 0.0 {
                return Err("normal deviation must be >= 0".to_string());
            }
            RandomDistribution::Normal { sigma_pct }
        }
        "zoned" => {
            let zones = parse_zoned(post.as_deref().unwrap_or(""), a.warnings)?;
            RandomDistribution::Zoned(zones)
        }
        other => return Err(format!("'{other}' is not supported")),
    };
    if center && word != "zoned" {
        a.warnings.push(format!(
            "random_distribution={word}: the center value is ignored"
        ));
    }
    d.spec.random_distribution = dist;
    Ok(())
}

fn apply_percentage_random(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    for (slot, v) in d.spec.percentage_random.iter_mut().zip(a.dir_ints(0, 100)?) {
        if let Some(v) = v {
            *slot = v as u32;
        }
    }
    Ok(())
}

fn apply_norandommap(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.norandommap = a.flag()?;
    Ok(())
}

fn apply_randseed(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.randseed = a.bytes()?;
    Ok(())
}

fn apply_randrepeat(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.randrepeat = a.bool01()?;
    Ok(())
}

fn apply_kb_base(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let v = a.int_in(0, i64::from(u32::MAX))?;
    if v != 1000 && v != 1024 {
        return Err("kb_base must be 1000 or 1024".to_string());
    }
    d.spec.kb_base = v as u32;
    Ok(())
}

fn apply_verify(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let method = a.keyword().0;
    d.spec.verify = (method != "0").then(|| method.to_string());
    Ok(())
}

fn apply_verify_pattern(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.verify_pattern = Some(crate::pattern::Pattern::parse(a.text())?);
    Ok(())
}

fn apply_buffer_pattern(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.buffer_pattern = Some(crate::pattern::Pattern::parse(a.text())?);
    Ok(())
}

fn apply_verify_fatal(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.verify_fatal = a.bool01()?;
    Ok(())
}

fn apply_continue_on_error(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.errors.set_continue(a.text())
}

fn apply_ignore_error(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.errors.set_ignore(a.text())
}

fn apply_verify_only(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.verify_only = a.flag()?;
    Ok(())
}

fn apply_do_verify(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.do_verify = a.bool01()?;
    Ok(())
}

/// Most entries of `percentile_list` (`FIO_IO_U_LIST_MAX_LEN`).
const PERCENTILES_MAX: usize = 20;

fn apply_percentile_list(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let mut list = Vec::new();
    for item in a.text().split(':') {
        let p: f64 = item
            .trim()
            .parse()
            .map_err(|_| format!("'{item}' is not a number"))?;
        if !(0.0..=100.0).contains(&p) {
            return Err(format!("{p} is not in 0..=100"));
        }
        list.push(p);
    }
    if list.len() > PERCENTILES_MAX {
        return Err(format!("more than {PERCENTILES_MAX} percentiles"));
    }
    d.spec.percentile_list = list;
    Ok(())
}

fn apply_slat_percentiles(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.slat_percentiles = a.bool01()?;
    Ok(())
}

fn apply_disable_slat(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.disable_slat = a.bool01()?;
    Ok(())
}

fn apply_disable_clat(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.disable_clat = a.bool01()?;
    Ok(())
}

fn apply_disable_lat(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.disable_lat = a.bool01()?;
    Ok(())
}

fn apply_clat_percentiles(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.clat_percentiles = a.bool01()?;
    Ok(())
}

fn apply_lat_percentiles(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.lat_percentiles = a.bool01()?;
    Ok(())
}

fn apply_stonewall(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.stonewall = a.flag()?;
    Ok(())
}

fn apply_new_group(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.new_group = a.flag()?;
    Ok(())
}

fn apply_wait_for(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.wait_for = Some(a.string());
    Ok(())
}

fn apply_group_reporting(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.group_reporting = a.flag()?;
    Ok(())
}

fn apply_exitall(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.exitall = a.flag()?;
    Ok(())
}

fn apply_exit_what(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.exit_what = match a.keyword().0 {
        "group" => ExitWhat::Group,
        "stonewall" => ExitWhat::Stonewall,
        "all" => ExitWhat::All,
        other => {
            return Err(format!(
                "unknown exit_what '{other}' (group, stonewall or all)"
            ))
        }
    };
    Ok(())
}

fn apply_name(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.name = Some(a.string());
    Ok(())
}

/// The replay settings of a job, created by whichever of `read_iolog` and `replay_*` comes
/// first (a job with `replay_*` but no log drops them when it is finalised).
fn replay_of(d: &mut Draft) -> &mut crate::replay::ReplaySpec {
    d.spec
        .replay
        .get_or_insert_with(|| crate::replay::ReplaySpec::new(""))
}

/// `read_iolog=`: reads the log now, so a bad log stops the job file at this line.
fn apply_read_iolog(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let path = a.string();
    let log = crate::replay::ReplayLog::load_shared(std::path::Path::new(&path))
        .map_err(|e| e.to_string())?;
    let replay = replay_of(d);
    replay.path = path;
    replay.log = Some(log);
    Ok(())
}

fn apply_replay_no_stall(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    replay_of(d).no_stall = a.bool01()?;
    Ok(())
}

fn apply_replay_redirect(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    replay_of(d).redirect = Some(a.string());
    Ok(())
}

fn apply_replay_align(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let align = a.bytes()?;
    if align != 0 && !align.is_power_of_two() {
        return Err(format!("{align} is not a power of 2"));
    }
    replay_of(d).align = align;
    Ok(())
}

fn apply_replay_scale(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    replay_of(d).scale = u64::from(a.u32_in(1, u32::MAX)?);
    Ok(())
}

fn apply_replay_time_scale(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    replay_of(d).time_scale = a.u32_in(1, u32::MAX)?;
    Ok(())
}

/// `replay_skip=read,write,trim,sync`: directions left out of the replay.
fn apply_replay_skip(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    use crate::replay::{SKIP_READ, SKIP_SYNC, SKIP_TRIM, SKIP_WRITE};
    let mut skip = 0;
    for word in a.text().split(',').map(str::trim) {
        skip |= match word {
            "read" => SKIP_READ,
            "write" => SKIP_WRITE,
            "trim" => SKIP_TRIM,
            "sync" => SKIP_SYNC,
            other => {
                return Err(format!(
                    "unknown direction '{other}' (read, write, trim, sync)"
                ))
            }
        };
    }
    replay_of(d).skip = skip;
    Ok(())
}

/// `iosched_replay=open|closed` (iosched's own): the replay's timing.
fn apply_iosched_replay(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    replay_of(d).closed_loop = a.keyword().0 == "closed";
    Ok(())
}

/// `iosched_replay_pids=1,2`: only these processes' I/O of a capture (iosched's own).
fn apply_iosched_replay_pids(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    let pids = a
        .text()
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<u32>()
                .map_err(|_| format!("'{p}' is not a pid"))
        })
        .collect::<Result<Vec<u32>, String>>()?;
    replay_of(d).pids = Some(pids);
    Ok(())
}

/// `iosched_replay_part=all|sync|async` (iosched's own): a process's async writes apart.
fn apply_iosched_replay_part(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    use crate::replay::ReplayPart;
    replay_of(d).part = match a.keyword().0 {
        "sync" => ReplayPart::Sync,
        "async" => ReplayPart::AsyncWrites,
        _ => ReplayPart::All,
    };
    Ok(())
}

fn apply_description(d: &mut Draft, a: &mut Arg<'_>) -> Result<(), String> {
    d.spec.description = Some(a.text().to_string());
    Ok(())
}

const fn opt(
    name: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    apply: ApplyFn,
) -> OptDef {
    OptDef {
        name,
        aliases,
        kind,
        apply: Some(apply),
    }
}

const fn ignored(name: &'static str, aliases: &'static [&'static str], kind: Kind) -> OptDef {
    OptDef {
        name,
        aliases,
        kind,
        apply: None,
    }
}

use Kind::{Bool, Enum, Int, MaybeText, Set, Text, Time};
const SECONDS: Kind = Time(TimeUnit::Seconds);
const MICROS: Kind = Time(TimeUnit::Micros);

/// Every option we know, in fio's names.
pub(crate) static OPTIONS: &[OptDef] = &[
    // Direction and pattern.
    opt("rw", &["readwrite"], Enum(RW_MODES), apply_rw),
    opt(
        "rw_sequencer",
        &[],
        Enum(&["sequential", "identical"]),
        apply_rw_sequencer,
    ),
    opt("rwmixread", &[], Int, apply_rwmixread),
    opt("rwmixwrite", &[], Int, apply_rwmixwrite),
    // Block sizes.
    opt("bs", &["blocksize"], Text, apply_bs),
    opt("bsrange", &["blocksize_range"], Text, apply_bsrange),
    opt("bssplit", &[], Text, apply_bssplit),
    opt("ba", &["blockalign"], Text, apply_blockalign),
    opt(
        "bs_unaligned",
        &["blocksize_unaligned"],
        Set,
        apply_bs_unaligned,
    ),
    // Engine and depth.
    opt("ioengine", &[], Enum(ENGINES), apply_ioengine),
    opt(
        "iosched_workload",
        &[],
        Enum(&["fio", "dbench4"]),
        apply_iosched_workload,
    ),
    opt("iodepth", &[], Int, apply_iodepth),
    opt(
        "iodepth_batch_submit",
        &["iodepth_batch"],
        Int,
        apply_iodepth_batch_submit,
    ),
    opt(
        "iodepth_batch_complete_min",
        &["iodepth_batch_complete"],
        Int,
        apply_iodepth_batch_complete_min,
    ),
    opt(
        "iodepth_batch_complete_max",
        &[],
        Int,
        apply_iodepth_batch_complete_max,
    ),
    opt("iodepth_low", &[], Int, apply_iodepth_low),
    opt("direct", &[], Bool, apply_direct),
    opt("buffered", &[], Bool, apply_buffered),
    opt("numjobs", &[], Int, apply_numjobs),
    // fio 3.33 also takes `threads` (its own examples use it).
    opt("thread", &["threads"], Set, apply_thread),
    // Files and regions.
    opt("size", &[], Text, apply_size),
    opt("io_size", &["io_limit"], Text, apply_io_size),
    opt("number_ios", &[], Int, apply_number_ios),
    opt("filesize", &[], Text, apply_filesize),
    opt("nrfiles", &["nr_files"], Int, apply_nrfiles),
    opt("filename", &[], Text, apply_filename),
    opt("directory", &[], Text, apply_directory),
    opt(
        "file_service_type",
        &[],
        Enum(&[
            "roundrobin",
            "random",
            "sequential",
            "zipf",
            "pareto",
            "normal",
            "gauss",
        ]),
        apply_file_service_type,
    ),
    opt("offset", &["fileoffset"], Text, apply_offset),
    opt("offset_align", &[], Int, apply_offset_align),
    opt("offset_increment", &[], Text, apply_offset_increment),
    // Time.
    opt("runtime", &["timeout"], SECONDS, apply_runtime),
    opt("time_based", &[], Set, apply_time_based),
    opt("ramp_time", &[], SECONDS, apply_ramp_time),
    opt("startdelay", &[], SECONDS, apply_startdelay),
    opt("loops", &["loop"], Int, apply_loops),
    opt("thinktime", &[], MICROS, apply_thinktime),
    opt("thinktime_spin", &[], MICROS, apply_thinktime_spin),
    opt("thinktime_blocks", &[], Int, apply_thinktime_blocks),
    opt(
        "thinktime_blocks_type",
        &[],
        Enum(&["complete", "issue"]),
        apply_thinktime_blocks_type,
    ),
    opt(
        "iosched_thinktime_quiesce",
        &[],
        Bool,
        apply_thinktime_quiesce,
    ),
    opt("rate", &[], Text, apply_rate),
    opt("rate_iops", &[], Text, apply_rate_iops),
    opt(
        "rate_process",
        &[],
        Enum(&["linear", "poisson"]),
        apply_rate_process,
    ),
    opt("rate_min", &["ratemin"], Text, apply_rate_min),
    opt("rate_iops_min", &[], Text, apply_rate_iops_min),
    // Priorities and cgroups.
    opt("prio", &[], Int, apply_prio),
    opt("prioclass", &[], Int, apply_prioclass),
    opt("nice", &[], Int, apply_nice),
    opt("cgroup", &[], Text, apply_cgroup),
    opt("cgroup_weight", &[], Int, apply_cgroup_weight),
    // Syncing and caching.
    opt("fsync", &[], Int, apply_fsync),
    opt("fdatasync", &[], Int, apply_fdatasync),
    opt("end_fsync", &[], Bool, apply_end_fsync),
    opt("fsync_on_close", &[], Bool, apply_fsync_on_close),
    opt(
        "sync",
        &[],
        Enum(&["none", "0", "sync", "1", "dsync"]),
        apply_sync,
    ),
    opt("overwrite", &[], Bool, apply_overwrite),
    opt("pre_read", &[], Bool, apply_pre_read),
    opt("invalidate", &[], Bool, apply_invalidate),
    // Randomness.
    opt(
        "random_distribution",
        &[],
        Enum(&[
            "random",
            "zipf",
            "pareto",
            "normal",
            "gauss",
            "zoned",
            "zoned_abs",
        ]),
        apply_random_distribution,
    ),
    opt("percentage_random", &[], Text, apply_percentage_random),
    opt("norandommap", &[], Set, apply_norandommap),
    opt("randseed", &[], Int, apply_randseed),
    opt("randrepeat", &["allrandrepeat"], Bool, apply_randrepeat),
    // Units, verification, reporting, ordering.
    opt("kb_base", &[], Int, apply_kb_base),
    opt("verify", &[], Enum(VERIFY), apply_verify),
    opt("do_verify", &[], Bool, apply_do_verify),
    opt("verify_only", &[], Set, apply_verify_only),
    opt("percentile_list", &[], Text, apply_percentile_list),
    opt("slat_percentiles", &[], Bool, apply_slat_percentiles),
    opt("clat_percentiles", &[], Bool, apply_clat_percentiles),
    opt("lat_percentiles", &[], Bool, apply_lat_percentiles),
    opt("stonewall", &["wait_for_previous"], Set, apply_stonewall),
    opt("new_group", &[], Set, apply_new_group),
    opt("wait_for", &[], Text, apply_wait_for),
    opt("group_reporting", &[], Set, apply_group_reporting),
    opt("exitall", &[], Set, apply_exitall),
    opt(
        "exit_what",
        &[],
        Enum(&["group", "stonewall", "all"]),
        apply_exit_what,
    ),
    opt("name", &[], Text, apply_name),
    opt("description", &[], Text, apply_description),
    // Replay of a recorded workload.
    opt("read_iolog", &[], Text, apply_read_iolog),
    opt("replay_no_stall", &[], Bool, apply_replay_no_stall),
    opt("replay_redirect", &[], Text, apply_replay_redirect),
    opt("replay_align", &[], Int, apply_replay_align),
    opt("replay_scale", &[], Int, apply_replay_scale),
    opt("replay_time_scale", &[], Int, apply_replay_time_scale),
    opt("replay_skip", &[], Text, apply_replay_skip),
    opt(
        "iosched_replay",
        &[],
        Enum(&["open", "closed"]),
        apply_iosched_replay,
    ),
    opt("iosched_replay_pids", &[], Text, apply_iosched_replay_pids),
    opt(
        "iosched_replay_part",
        &[],
        Enum(&["all", "sync", "async"]),
        apply_iosched_replay_part,
    ),
    // Accepted, meaningless to a simulator or engine.
    ignored(
        "random_generator",
        &[],
        Enum(&["tausworthe", "lfsr", "tausworthe64"]),
    ),
    ignored("unit_base", &[], Int),
    ignored("significant_figures", &[], Int),
    ignored("exec_prerun", &[], Text),
    ignored("exec_postrun", &[], Text),
    ignored("ioscheduler", &[], Text),
    opt("write_lat_log", &[], MaybeText, apply_write_lat_log),
    opt("write_bw_log", &[], MaybeText, apply_write_bw_log),
    opt("write_iops_log", &[], MaybeText, apply_write_iops_log),
    opt("write_iolog", &[], Text, apply_write_iolog),
    opt("log_avg_msec", &[], Int, apply_log_avg_msec),
    opt("write_hist_log", &[], MaybeText, apply_write_hist_log),
    opt("log_hist_msec", &[], Int, apply_log_hist_msec),
    opt("log_hist_coarseness", &[], Int, apply_log_hist_coarseness),
    ignored("log_prio", &[], Bool),
    opt(
        "zonemode",
        &[],
        Enum(&["none", "strided", "zbd"]),
        apply_zonemode,
    ),
    opt("zonesize", &[], Int, apply_zonesize),
    opt("zonerange", &[], Int, apply_zonerange),
    opt("zoneskip", &[], Int, apply_zoneskip),
    opt("ss", &["steadystate"], Text, apply_ss),
    opt("ss_dur", &["steadystate_duration"], SECONDS, apply_ss_dur),
    opt(
        "ss_ramp",
        &["steadystate_ramp_time"],
        SECONDS,
        apply_ss_ramp,
    ),
    ignored("log_max_value", &[], Bool),
    ignored("log_offset", &[], Bool),
    ignored("log_compression", &[], Int),
    ignored("per_job_logs", &[], Bool),
    ignored("bwavgtime", &[], Int),
    ignored("iopsavgtime", &[], Int),
    opt("cpus_allowed", &[], Text, apply_cpus_allowed),
    ignored("cpus_allowed_policy", &[], Enum(&["shared", "split"])),
    opt("cpumask", &[], Text, apply_cpumask),
    ignored("numa_cpu_nodes", &[], Text),
    ignored("numa_mem_policy", &[], Text),
    ignored("gtod_reduce", &[], Bool),
    ignored("gtod_cpu", &[], Int),
    ignored(
        "clocksource",
        &[],
        Enum(&["gettimeofday", "clock_gettime", "cpu"]),
    ),
    opt("disable_lat", &[], Bool, apply_disable_lat),
    opt("disable_clat", &[], Bool, apply_disable_clat),
    opt("disable_slat", &[], Bool, apply_disable_slat),
    ignored("disable_bw_measurement", &["disable_bw"], Bool),
    ignored("disk_util", &[], Bool),
    ignored("stats", &[], Bool),
    ignored(
        "unified_rw_reporting",
        &[],
        Enum(&["none", "mixed", "both", "0", "1", "2"]),
    ),
    opt("zero_buffers", &[], Set, apply_zero_buffers),
    opt("refill_buffers", &[], Set, apply_refill_buffers),
    opt("scramble_buffers", &[], Bool, apply_scramble_buffers),
    ignored("buffer_compress_percentage", &[], Int),
    ignored("buffer_compress_chunk", &[], Int),
    opt("buffer_pattern", &[], Text, apply_buffer_pattern),
    ignored("dedupe_percentage", &[], Int),
    ignored("dedupe_mode", &[], Enum(&["repeat", "working_set"])),
    ignored("dedupe_working_set_percentage", &[], Int),
    ignored("dedupe_global", &[], Bool),
    ignored(
        "fallocate",
        &[],
        Enum(&["none", "native", "posix", "keep", "truncate", "0", "1"]),
    ),
    ignored("create_on_open", &[], Bool),
    ignored("create_serialize", &[], Bool),
    ignored("create_fsync", &[], Bool),
    ignored("create_only", &[], Bool),
    ignored("allow_file_create", &[], Bool),
    ignored("allow_mounted_write", &[], Bool),
    ignored("unlink", &[], Bool),
    ignored("unlink_each_loop", &[], Bool),
    ignored("file_append", &[], Bool),
    opt("fill_device", &["fill_fs"], Bool, apply_fill_device),
    ignored("filename_format", &[], Text),
    ignored("lockfile", &[], Text),
    ignored("lockmem", &[], Int),
    ignored("iomem", &["mem"], Text),
    ignored("iomem_align", &["mem_align"], Int),
    ignored("hugepage-size", &[], Int),
    ignored("cgroup_nodelete", &[], Bool),
    opt("continue_on_error", &[], Text, apply_continue_on_error),
    ignored("error_dump", &[], Bool),
    ignored("exitall_on_error", &[], Set),
    ignored("uid", &[], Int),
    ignored("gid", &[], Int),
    ignored("verify_interval", &[], Int),
    opt("verify_pattern", &[], Text, apply_verify_pattern),
    opt("verify_fatal", &[], Bool, apply_verify_fatal),
    ignored("verify_dump", &[], Bool),
    ignored("verify_async", &[], Int),
    ignored("verify_backlog", &[], Int),
    ignored("verify_offset", &[], Int),
    ignored("verify_state_save", &[], Bool),
    ignored("experimental_verify", &[], Bool),
    ignored("rate_cycle", &[], Int),
    ignored("rate_ignore_thinktime", &[], Bool),
    ignored("latency_target", &[], MICROS),
    ignored("latency_window", &[], MICROS),
    ignored("latency_percentile", &[], Text),
    ignored("max_latency", &[], MICROS),
    ignored("cmdprio_percentage", &[], Text),
    ignored("cmdprio_class", &[], Text),
    ignored("cmdprio", &[], Text),
    ignored("cmdprio_bssplit", &[], Text),
    ignored("io_submit_mode", &[], Enum(&["inline", "offload"])),
    ignored("fixedbufs", &[], Set),
    ignored("registerfiles", &[], Set),
    ignored("sqthread_poll", &[], Set),
    ignored("sqthread_poll_cpu", &[], Int),
    ignored("hipri", &[], Set),
    ignored("nonvectored", &[], Int),
    ignored("force_async", &[], Int),
    ignored("userspace_reap", &[], Set),
    ignored("softrandommap", &[], Bool),
    opt(
        "fadvise_hint",
        &[],
        Enum(&["0", "1", "random", "sequential", "noreuse"]),
        apply_fadvise_hint,
    ),
    ignored("openfiles", &[], Int),
    ignored("write_barrier", &[], Int),
    opt("ignore_error", &[], Text, apply_ignore_error),
    ignored("use_os_rand", &[], Bool),
    ignored("verifysort", &[], Bool),
    ignored("verifysort_nr", &[], Int),
    ignored("verify_backlog_batch", &[], Int),
    ignored("verify_async_cpus", &[], Text),
    opt("flow", &[], Int, apply_flow),
    opt("flow_id", &[], Int, apply_flow_id),
    ignored("flow_watermark", &[], Int),
    opt("flow_sleep", &[], MICROS, apply_flow_sleep),
    ignored("bs_is_seq_rand", &[], Bool),
];

/// Options of fio 3.33's engines that iosched does not drive, by engine (each engine's own
/// option table in fio's `engines/`). Options such an engine shares with one iosched drives
/// (`hipri`, `nowait`, `sqthread_poll`...) are in [`OPTIONS`].
pub(crate) const FOREIGN_ENGINE_OPTIONS: &[(&str, &[&str])] = &[
    (
        "cpuio",
        &["cpuload", "cpumode", "cpuchunks", "exit_on_io_done"],
    ),
    (
        "dfs",
        &["pool", "cont", "chunk_size", "object_class", "svcl"],
    ),
    ("e4defrag", &["donorname", "inplace"]),
    (
        "exec",
        &["program", "arguments", "grace_time", "std_redirect"],
    ),
    ("filestat", &["stat_type"]),
    (
        "http",
        &[
            "https",
            "http_host",
            "http_user",
            "http_pass",
            "http_s3_key",
            "http_s3_keyid",
            "http_swift_auth_token",
            "http_s3_region",
            "http_s3_sse_customer_key",
            "http_s3_sse_customer_algorithm",
            "http_s3_storage_class",
            "http_mode",
            "http_verbose",
        ],
    ),
    ("libcufile", &["gpu_dev_ids", "cuda_io"]),
    (
        "libhdfs",
        &[
            "namenode",
            "hostname",
            "port",
            "hdfsdirectory",
            "chunk_size",
            "single_instance",
            "hdfs_use_direct",
        ],
    ),
    ("libiscsi", &["initiator"]),
    ("mtd", &["skip_bad"]),
    ("nbd", &["uri"]),
    (
        "net",
        &[
            "hostname",
            "port",
            "protocol",
            "nodelay",
            "listen",
            "pingpong",
            "interface",
            "ttl",
            "window_size",
            "mss",
        ],
    ),
    ("nfs", &["nfs_url"]),
    (
        "rados",
        &[
            "clustername",
            "pool",
            "clientname",
            "conf",
            "busy_poll",
            "touch_objects",
        ],
    ),
    (
        "rbd",
        &["clustername", "rbdname", "pool", "clientname", "busy_poll"],
    ),
    ("rdma", &["hostname", "bindname", "port", "verb"]),
    ("sg", &["readfua", "writefua", "sg_write_mode", "stream_id"]),
    (
        "xnvme",
        &[
            "xnvme_be",
            "xnvme_async",
            "xnvme_sync",
            "xnvme_admin",
            "xnvme_dev_nsid",
            "xnvme_iovec",
        ],
    ),
    ("windowsaio", &["no_completion_thread"]),
];

/// The engines (fio's names, "a, b or c") whose option `name` is, when iosched drives none
/// of them.
pub(crate) fn foreign_engines_of(name: &str) -> Option<String> {
    let engines: Vec<&str> = FOREIGN_ENGINE_OPTIONS
        .iter()
        .filter(|(_, options)| options.contains(&name))
        .map(|(engine, _)| *engine)
        .collect();
    match engines.as_slice() {
        [] => None,
        [one] => Some((*one).to_string()),
        [init @ .., last] => Some(format!("{} or {last}", init.join(", "))),
    }
}

/// The option called `name` (exactly, or by an alias).
pub(crate) fn find(name: &str) -> Option<&'static OptDef> {
    OPTIONS
        .iter()
        .find(|o| o.name == name || o.aliases.contains(&name))
}

/// Checks every option gets by kind before (or instead of) its own code.
pub(crate) fn check_kind(def: &OptDef, arg: &mut Arg<'_>) -> Result<(), String> {
    match def.kind {
        Kind::Set => arg.flag().map(drop),
        Kind::Bool => arg.bool01().map(drop),
        // Options with code parse (and warn about) their own numbers.
        Kind::Int | Kind::Time(_) if def.apply.is_some() => Ok(()),
        Kind::Int => parse_size(arg.text(), arg.kb_base, arg.warnings).map(drop),
        Kind::Time(unit) => parse_time_us(arg.text(), unit, arg.warnings).map(drop),
        Kind::Enum(values) => {
            let text = arg.text();
            if text.starts_with([' ', '\t']) {
                return Err(format!(
                    "fio matches this value exactly and a blank after '=' breaks it (write '{}={}')",
                    def.name,
                    text.trim_start()
                ));
            }
            let word = arg.keyword().0;
            if values.contains(&word) {
                Ok(())
            } else {
                Err(format!("expected one of: {}", values.join(", ")))
            }
        }
        Kind::Text | Kind::MaybeText => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for o in OPTIONS {
            for name in std::iter::once(&o.name).chain(o.aliases) {
                assert!(seen.insert(*name), "duplicate option name {name}");
            }
        }
    }

    #[test]
    fn prio_alone_is_best_effort_and_prioclass_alone_is_level_zero() {
        assert_eq!(resolve_ioprio(None, None), IoPrio::none());
        assert_eq!(
            resolve_ioprio(Some(6), None),
            IoPrio {
                class: IoPrioClass::BestEffort,
                level: 6
            }
        );
        assert_eq!(
            resolve_ioprio(None, Some(1)),
            IoPrio {
                class: IoPrioClass::RealTime,
                level: 0
            }
        );
        assert_eq!(
            resolve_ioprio(Some(3), Some(3)),
            IoPrio {
                class: IoPrioClass::Idle,
                level: 3
            }
        );
    }

    #[test]
    fn bssplit_empty_percentages_share_the_remainder() {
        let mut w = Vec::new();
        let split = parse_bssplit_dir("4k/50:1k/:32k/", 1024, &mut w).unwrap();
        assert_eq!(split, vec![(1024, 25), (4096, 50), (32768, 25)]);
        assert!(w.is_empty());
        let split = parse_bssplit_dir("4k/:8k/:16k/", 1024, &mut w).unwrap();
        assert_eq!(split, vec![(4096, 33), (8192, 33), (16384, 34)]);
    }

    #[test]
    fn bssplit_over_100_is_an_error() {
        let err = parse_bssplit_dir("4k/60:8k/50", 1024, &mut Vec::new()).unwrap_err();
        assert!(err.contains("110%"), "{err}");
    }
}
