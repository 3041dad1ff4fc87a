//! fio's `--output-format=json`, field for field.
//!
//! The layout follows fio 3.33's `show_thread_status_json()` and `show_disk_util_json()`: the
//! same keys in the same order, the same units (latencies in ns, `bw` in KiB/s as an integer,
//! `iops` as a float, `runtime` in ms), and fio's text style — two-space indentation, `" : "`
//! between key and value, every float printed with six decimals (`%f`). Scripts that parse
//! fio's JSON read ours unchanged; `"fio version"` says `iosched-<version>` so nobody mistakes
//! a simulated run for a measured one, and a top-level `"iosched"` object carries what fio has
//! no field for.
//!
//! `"global options"` and `"disk_util"` appear only when non-empty, as in fio.

use crate::stats::{
    GroupStats, JobStats, RunResult, SampleStat, BATCH_KEYS, DDIR_COUNT, DEPTH_KEYS, LAT_KEYS_MS,
    LAT_KEYS_SHORT,
};
use crate::LatStat;
use emit::{baked, Baked, Emit, Key, Tree};
use serde_json::{Map, Value};
use std::io::{self, Write};

mod emit;

/// [`Emit::memo`] slots of a job's objects.
mod memo {
    /// `read`, `write`, `trim`.
    pub(super) const DIRS: usize = 0;
    pub(super) const SYNC: usize = 3;
    /// `iodepth_level` .. `latency_ms`.
    pub(super) const KEYED: usize = 4;
}

/// Names of the per-direction objects, by direction index.
const DIR_NAMES: [&str; DDIR_COUNT] = ["read", "write", "trim"];

/// fio prints `eta` as `INT_MAX` once a job has finished.
const ETA_FINISHED: i64 = 2_147_483_647;

/// A finite float as JSON; non-finite values (which JSON cannot hold) become 0.
fn float(x: f64) -> Value {
    Value::from(if x.is_finite() { x } else { 0.0 })
}

fn options_object(options: &[(String, String)]) -> Value {
    let mut m = Map::new();
    for (k, v) in options {
        m.insert(k.clone(), Value::from(v.as_str()));
    }
    Value::Object(m)
}

/// What differs between fio's `json` and `json+`: the latter adds each latency histogram's
/// non-empty buckets (`bins`, [`crate::fio_plat`]) wherever percentiles are printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flavor {
    pub bins: bool,
}

/// fio's `--output-format=json`.
pub const JSON: Flavor = Flavor { bins: false };
/// fio's `--output-format=json+`.
pub const JSON_PLUS: Flavor = Flavor { bins: true };

/// `{min, max, mean, stddev, N}` plus `percentile` (and with json+ `bins`) when `percentiles`
/// is given and the series has samples. Kernel-free analogue of fio's `add_ddir_lat_json()`.
fn emit_lat<E: Emit>(
    e: &mut E,
    key: Key<'static>,
    stat: &LatStat,
    percentiles: Option<&[f64]>,
    flavor: Flavor,
) -> io::Result<()> {
    e.begin(key)?;
    e.uint(baked!("min"), stat.min())?;
    e.uint(baked!("max"), stat.max())?;
    e.float(baked!("mean"), stat.mean())?;
    e.float(baked!("stddev"), stat.stddev())?;
    e.uint(baked!("N"), stat.count())?;
    if let Some(list) = percentiles {
        if stat.count() > 0 {
            e.begin(baked!("percentile"))?;
            for (pct, v) in stat.percentiles(list) {
                e.uint(Key::Percentile(pct), v)?;
            }
            e.end()?;
            if flavor.bins {
                e.begin(baked!("bins"))?;
                for (index, count) in stat.buckets() {
                    e.uint(Key::Number(crate::fio_plat::bucket_value(index)), count)?;
                }
                e.end()?;
            }
        }
    }
    e.end()
}

/// Whether [`emit_lat`] prints a `percentile` object (which no signature covers).
fn prints_percentiles(stat: &LatStat, percentiles: Option<&[f64]>) -> bool {
    percentiles.is_some() && stat.count() > 0
}

/// `stat`'s figures that [`emit_lat`] prints without percentiles, for a signature.
fn lat_signature(stat: &LatStat) -> [u64; 5] {
    [
        stat.min(),
        stat.max(),
        stat.mean().to_bits(),
        stat.stddev().to_bits(),
        stat.count(),
    ]
}

/// One direction's object (`jobs[i].read` etc.). Kernel-free analogue of fio's
/// `add_ddir_status_json()`.
pub fn ddir_object(job: &JobStats, ddir: usize, group: &GroupStats, flavor: Flavor) -> Value {
    let mut tree = Tree::new();
    // A tree never fails to take an entry.
    let _ = emit_ddir(&mut tree, &DirFigures::of(job, ddir, group), flavor);
    tree.finish()
}

/// Everything a direction's object prints: its counts, its three latency series (with
/// the percentiles each prints, if any) and its bandwidth and IOPS samples.
struct DirFigures<'a> {
    io_bytes: u64,
    bw_bytes: u64,
    bw_kib: u64,
    iops: f64,
    runtime_ms: u64,
    total_ios: u64,
    short_ios: u64,
    drop_ios: u64,
    /// slat, clat, lat.
    lats: [(&'a LatStat, Option<&'a [f64]>); 3],
    bw: SampleStat,
    bw_agg: f64,
    iops_samples: SampleStat,
}

/// Names of [`DirFigures::lats`].
static LAT_BAKED: [Baked; 3] = bake_all(["slat_ns", "clat_ns", "lat_ns"]);

impl<'a> DirFigures<'a> {
    fn of(job: &'a JobStats, ddir: usize, group: &GroupStats) -> DirFigures<'a> {
        let d = &job.dirs[ddir];
        let list = |on: bool| on.then_some(job.percentile_list.as_slice());
        let bw = job.bw_samples(ddir);
        let bw_agg = if bw.samples > 0 {
            group.agg_percent(ddir, bw.mean)
        } else {
            0.0
        };
        DirFigures {
            io_bytes: d.io_bytes,
            bw_bytes: job.bw_bytes(ddir),
            bw_kib: job.bw_kib(ddir),
            iops: job.iops(ddir),
            runtime_ms: job.dir_runtime_ms(ddir),
            total_ios: d.total_ios + d.failed_ios,
            short_ios: d.short_ios,
            drop_ios: d.drop_ios,
            lats: [
                (&d.slat, list(job.slat_percentiles)),
                (&d.clat, list(job.clat_percentiles)),
                (d.lat(), list(job.lat_percentiles)),
            ],
            bw,
            bw_agg,
            iops_samples: job.iops_samples(ddir),
        }
    }

    /// Every figure the object prints, or `None` when it prints percentiles.
    fn signature(&self) -> Option<[u64; 34]> {
        if self
            .lats
            .iter()
            .any(|&(stat, list)| prints_percentiles(stat, list))
        {
            return None;
        }
        let mut signature = [0u64; 34];
        signature[..8].copy_from_slice(&[
            self.io_bytes,
            self.bw_bytes,
            self.bw_kib,
            self.iops.to_bits(),
            self.runtime_ms,
            self.total_ios,
            self.short_ios,
            self.drop_ios,
        ]);
        for (i, &(stat, _)) in self.lats.iter().enumerate() {
            signature[8 + 5 * i..13 + 5 * i].copy_from_slice(&lat_signature(stat));
        }
        let (bw, io) = (&self.bw, &self.iops_samples);
        signature[23..].copy_from_slice(&[
            bw.min,
            bw.max,
            self.bw_agg.to_bits(),
            bw.mean.to_bits(),
            bw.stddev.to_bits(),
            bw.samples,
            io.min,
            io.max,
            io.mean.to_bits(),
            io.stddev.to_bits(),
            io.samples,
        ]);
        Some(signature)
    }
}

/// [`ddir_object`]'s entries, into `e`.
fn emit_ddir<E: Emit>(e: &mut E, f: &DirFigures<'_>, flavor: Flavor) -> io::Result<()> {
    e.uint(baked!("io_bytes"), f.io_bytes)?;
    e.uint(baked!("io_kbytes"), f.io_bytes / 1024)?;
    e.uint(baked!("bw_bytes"), f.bw_bytes)?;
    e.uint(baked!("bw"), f.bw_kib)?;
    e.float(baked!("iops"), f.iops)?;
    e.uint(baked!("runtime"), f.runtime_ms)?;
    e.uint(baked!("total_ios"), f.total_ios)?;
    e.uint(baked!("short_ios"), f.short_ios)?;
    e.uint(baked!("drop_ios"), f.drop_ios)?;
    for (name, &(stat, list)) in LAT_BAKED.iter().zip(&f.lats) {
        emit_lat(e, Key::Baked(name), stat, list, flavor)?;
    }
    let bw = &f.bw;
    e.uint(baked!("bw_min"), bw.min)?;
    e.uint(baked!("bw_max"), bw.max)?;
    e.float(baked!("bw_agg"), f.bw_agg)?;
    e.float(baked!("bw_mean"), bw.mean)?;
    e.float(baked!("bw_dev"), bw.stddev)?;
    e.uint(baked!("bw_samples"), bw.samples)?;
    let io = &f.iops_samples;
    e.uint(baked!("iops_min"), io.min)?;
    e.uint(baked!("iops_max"), io.max)?;
    e.float(baked!("iops_mean"), io.mean)?;
    e.float(baked!("iops_stddev"), io.stddev)?;
    e.uint(baked!("iops_samples"), io.samples)
}

/// An object of floats under `key`, one per name of `keys`; memo `slot` (most clones print
/// the same depth distributions).
fn emit_keyed<E: Emit>(
    e: &mut E,
    slot: usize,
    key: Key<'static>,
    keys: &'static [Baked],
    values: &[f64],
) -> io::Result<()> {
    let mut signature = [0u64; 16];
    for (bits, v) in signature.iter_mut().zip(values) {
        *bits = v.to_bits();
    }
    let signature = (values.len() <= signature.len()).then_some(&signature[..values.len()]);
    e.memo(slot, signature, |e| {
        e.begin(key)?;
        for (k, &v) in keys.iter().zip(values) {
            e.float(Key::Baked(k), v)?;
        }
        e.end()
    })
}

/// Baked [`DEPTH_KEYS`] and the like, for [`emit_keyed`].
const fn bake_all<const N: usize>(names: [&str; N]) -> [Baked; N] {
    let mut baked = [Baked::EMPTY; N];
    let mut i = 0;
    while i < N {
        baked[i] = Baked::new(names[i]);
        i += 1;
    }
    baked
}

static DEPTH_BAKED: [Baked; DEPTH_KEYS.len()] = bake_all(DEPTH_KEYS);
static BATCH_BAKED: [Baked; BATCH_KEYS.len()] = bake_all(BATCH_KEYS);
static LAT_SHORT_BAKED: [Baked; LAT_KEYS_SHORT.len()] = bake_all(LAT_KEYS_SHORT);
static LAT_MS_BAKED: [Baked; LAT_KEYS_MS.len()] = bake_all(LAT_KEYS_MS);
/// [`DIR_NAMES`], baked.
static DIR_BAKED: [Baked; DDIR_COUNT] = bake_all(DIR_NAMES);

/// One element of `jobs[]`. Kernel-free analogue of fio's `show_thread_status_json()`.
pub fn job_object(job: &JobStats, group: &GroupStats, flavor: Flavor) -> Value {
    let mut tree = Tree::new();
    // A tree never fails to take an entry.
    let _ = emit_job(&mut tree, job, group, flavor);
    tree.finish()
}

/// [`job_object`]'s entries, into `e`.
fn emit_job<E: Emit>(
    e: &mut E,
    job: &JobStats,
    group: &GroupStats,
    flavor: Flavor,
) -> io::Result<()> {
    e.string(baked!("jobname"), &job.name)?;
    e.uint(baked!("groupid"), u64::from(job.groupid))?;
    e.int(baked!("error"), i64::from(job.error))?;
    e.int(baked!("eta"), ETA_FINISHED)?;
    e.uint(baked!("elapsed"), job.elapsed_s())?;
    e.begin(baked!("job options"))?;
    for (k, v) in &job.options {
        e.string(k.as_str(), v)?;
    }
    e.end()?;
    for (ddir, name) in DIR_BAKED.iter().enumerate() {
        let figures = DirFigures::of(job, ddir, group);
        let signature = figures.signature();
        e.memo(memo::DIRS + ddir, signature.as_ref().map(|s| &s[..]), |e| {
            e.begin(Key::Baked(name))?;
            emit_ddir(e, &figures, flavor)?;
            e.end()
        })?;
    }
    // fio reports the sync series' percentiles if either clat or lat percentiles are on.
    let on = job.clat_percentiles || job.lat_percentiles;
    let sync_list = on.then_some(job.percentile_list.as_slice());
    let signature = lat_signature(&job.sync);
    let plain = !prints_percentiles(&job.sync, sync_list);
    e.memo(memo::SYNC, plain.then_some(&signature[..]), |e| {
        e.begin(baked!("sync"))?;
        e.uint(baked!("total_ios"), job.sync.count())?;
        emit_lat(e, baked!("lat_ns"), &job.sync, sync_list, flavor)?;
        e.end()
    })?;
    e.uint(baked!("job_runtime"), job.runtime_ms())?;
    e.float(baked!("usr_cpu"), job.usr_cpu)?;
    e.float(baked!("sys_cpu"), job.sys_cpu)?;
    e.uint(baked!("ctx"), job.ctx)?;
    e.uint(baked!("majf"), job.majf)?;
    e.uint(baked!("minf"), job.minf)?;
    emit_job_tail(e, job)
}

/// The job's entries after its CPU figures: depth and latency distributions, error counts,
/// latency target settings and the steady-state criterion.
fn emit_job_tail<E: Emit>(e: &mut E, job: &JobStats) -> io::Result<()> {
    let keyed: [(Key<'static>, &'static [Baked]); 6] = [
        (baked!("iodepth_level"), &DEPTH_BAKED),
        (baked!("iodepth_submit"), &BATCH_BAKED),
        (baked!("iodepth_complete"), &BATCH_BAKED),
        (baked!("latency_ns"), &LAT_SHORT_BAKED),
        (baked!("latency_us"), &LAT_SHORT_BAKED),
        (baked!("latency_ms"), &LAT_MS_BAKED),
    ];
    let lat = job.lat_dist();
    let values: [&[f64]; 6] = [
        &job.depth_dist(),
        &job.submit_dist(),
        &job.complete_dist(),
        &lat[0..10],
        &lat[10..20],
        &lat[20..32],
    ];
    for (i, ((key, names), values)) in keyed.into_iter().zip(values).enumerate() {
        emit_keyed(e, memo::KEYED + i, key, names, values)?;
    }
    if job.continue_on_error {
        e.uint(baked!("total_err"), job.total_err)?;
        e.int(baked!("first_error"), i64::from(job.first_error))?;
    }
    e.uint(baked!("latency_depth"), u64::from(job.latency_depth))?;
    e.uint(baked!("latency_target"), job.latency_target_ns)?;
    e.float(baked!("latency_percentile"), job.latency_percentile)?;
    e.uint(baked!("latency_window"), job.latency_window_ns)?;
    if let Some(ss) = &job.steadystate {
        emit_steadystate(e, ss)?;
    }
    Ok(())
}

/// The `steadystate` object of a job that set `ss_dur`. Kernel-free analogue of its part
/// of fio's `show_thread_status_json()`: fio prints the limit and the criterion through a
/// C `float` with `%f`, so they carry single precision.
fn emit_steadystate<E: Emit>(
    e: &mut E,
    ss: &iosched_workload::steady_state::SteadyStateReport,
) -> io::Result<()> {
    let spec = &ss.spec;
    let pct = if spec.percent { "%" } else { "" };
    let criterion_name = format!(
        "{}{}:{:.6}{pct}",
        if spec.iops { "iops" } else { "bw" },
        if spec.slope { "_slope" } else { "" },
        spec.limit as f32
    );
    let mean = |v: &[u64]| v.iter().sum::<u64>() / (v.len().max(1) as u64);
    let criterion = if ss.criterion.is_finite() {
        ss.criterion
    } else {
        0.0
    };
    e.begin("steadystate")?;
    e.string("ss", &criterion_name)?;
    e.uint("duration", u64::from(spec.window_s))?;
    e.uint("attained", u64::from(ss.attained))?;
    e.string("criterion", &format!("{:.6}{pct}", criterion as f32))?;
    e.float("max_deviation", ss.max_deviation)?;
    e.float("slope", ss.slope)?;
    e.begin("data")?;
    e.uint("bw_mean", mean(&ss.bw))?;
    e.uint("iops_mean", mean(&ss.iops))?;
    e.uints("iops", &ss.iops)?;
    e.uints("bw", &ss.bw)?;
    e.end()?;
    e.end()
}

/// The whole document as a JSON value, keys in fio's order.
pub fn to_value(run: &RunResult) -> Value {
    to_value_as(run, JSON)
}

/// The whole document in `flavor` (`json` or `json+`) as a JSON value.
pub fn to_value_as(run: &RunResult, flavor: Flavor) -> Value {
    let groups = run.groups();
    let jobs = run
        .jobs
        .iter()
        .map(|job| job_value(&groups, job, flavor))
        .collect();
    document(run, Value::Array(jobs))
}

/// One job's object, with its reporting group's figures.
fn job_value(groups: &[GroupStats], job: &JobStats, flavor: Flavor) -> Value {
    job_object(job, &group_of(groups, job), flavor)
}

/// `job`'s reporting group's figures (a default for a job in no group).
fn group_of<'g>(groups: &'g [GroupStats], job: &JobStats) -> std::borrow::Cow<'g, GroupStats> {
    match iosched_driver::stats::find_group(groups, job.groupid) {
        Some(group) => std::borrow::Cow::Borrowed(group),
        None => std::borrow::Cow::Owned(GroupStats::default()),
    }
}

/// The document around `jobs`, keys in fio's order.
fn document(run: &RunResult, jobs: Value) -> Value {
    let (mut top, tail) = document_parts(run);
    top.insert("jobs".into(), jobs);
    top.extend(tail);
    if !run.iosched.is_null() {
        top.insert("iosched".into(), run.iosched.clone());
    }
    Value::Object(top)
}

/// The document's entries before `jobs` and after it but for `iosched` (which follows
/// them), keys in fio's order.
fn document_parts(run: &RunResult) -> (Map<String, Value>, Map<String, Value>) {
    let mut top = Map::new();
    top.insert("fio version".into(), Value::from(run.fio_version.as_str()));
    top.insert("timestamp".into(), Value::from(run.timestamp_s));
    top.insert("timestamp_ms".into(), Value::from(run.timestamp_ms));
    top.insert("time".into(), Value::from(run.time.as_str()));
    if !run.global_options.is_empty() {
        top.insert("global options".into(), options_object(&run.global_options));
    }
    let mut tail = Map::new();
    if !run.disks.is_empty() {
        // fio 3.33's keys: its `read_sectors`/`write_sectors` came in a later release.
        let disks = run
            .disks
            .iter()
            .map(|d| {
                let mut m = Map::new();
                m.insert("name".into(), Value::from(d.name.as_str()));
                m.insert("read_ios".into(), Value::from(d.read_ios));
                m.insert("write_ios".into(), Value::from(d.write_ios));
                m.insert("read_merges".into(), Value::from(d.read_merges));
                m.insert("write_merges".into(), Value::from(d.write_merges));
                m.insert("read_ticks".into(), Value::from(d.read_ticks_ms));
                m.insert("write_ticks".into(), Value::from(d.write_ticks_ms));
                m.insert("in_queue".into(), Value::from(d.in_queue_ms));
                m.insert("util".into(), float(d.util_pct.min(100.0)));
                Value::Object(m)
            })
            .collect();
        tail.insert("disk_util".into(), Value::Array(disks));
    }
    (top, tail)
}

/// serde_json formatter printing fio's style: 2-space indent, `" : "`, floats as `%f`.
#[derive(Default)]
struct FioFormatter {
    indent: usize,
    has_value: bool,
}

impl FioFormatter {
    fn newline_indent<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.indent {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.indent += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.indent -= 1;
        if self.has_value {
            self.newline_indent(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline_indent(w)
    }
}

impl serde_json::ser::Formatter for FioFormatter {
    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        write!(w, "{value:.6}")
    }

    fn write_f32<W: ?Sized + Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        write!(w, "{value:.6}")
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b" : ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes any JSON value in fio's style, followed by a newline.
pub fn write_value<W: Write>(value: &Value, w: &mut W) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(&mut *w, FioFormatter::default());
    serde::Serialize::serialize(value, &mut ser).map_err(io::Error::other)?;
    w.write_all(b"\n")
}

/// Writes the run as fio's JSON document.
pub fn write_json<W: Write>(run: &RunResult, w: &mut W) -> io::Result<()> {
    write_json_as(run, JSON, w)
}

/// Writes the run as fio's `json+` document: `json` with each histogram's `bins`.
pub fn write_json_plus<W: Write>(run: &RunResult, w: &mut W) -> io::Result<()> {
    write_json_as(run, JSON_PLUS, w)
}

/// Writes the run in `flavor`, the same bytes as [`write_value`] of [`to_value_as`], but
/// as text straight from the figures ([`emit::Text`]): no job becomes values, and the
/// `iosched` object (one entry per queue) is written where it lies, not copied. Each job's
/// text goes to `w` as it is finished (4096 jobs: 25 MB of text; as values, about 480 K
/// instructions per job to build, print and drop).
pub fn write_json_as<W: Write>(run: &RunResult, flavor: Flavor, w: &mut W) -> io::Result<()> {
    let (head, tail) = document_parts(run);
    let groups = run.groups();
    let mut text = emit::Text::default();
    text.open();
    for (key, value) in &head {
        text.entry(key, value)?;
    }
    text.begin_array(baked!("jobs"))?;
    for job in &run.jobs {
        text.item();
        emit_job(&mut text, job, &group_of(&groups, job), flavor)?;
        text.end()?;
        text.flush(w)?;
    }
    text.end_array();
    for (key, value) in &tail {
        text.entry(key, value)?;
    }
    if !run.iosched.is_null() {
        text.entry("iosched", &run.iosched)?;
    }
    text.finish(w)
}

/// The run as fio's JSON document, newline-terminated.
pub fn to_string(run: &RunResult) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    write_json(run, &mut out).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn styled(v: &Value) -> String {
        let mut out = Vec::new();
        write_value(v, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn formatter_prints_fio_style() {
        let v = json!({"a": 1, "b": 2.5, "c": {"d": [1, 2]}, "e": {}, "f": []});
        assert_eq!(
            styled(&v),
            "{\n  \"a\" : 1,\n  \"b\" : 2.500000,\n  \"c\" : {\n    \"d\" : [\n      1,\n      2\n    ]\n  },\n  \"e\" : {},\n  \"f\" : []\n}\n"
        );
    }

    #[test]
    fn whole_floats_keep_six_decimals_and_nan_becomes_zero() {
        assert_eq!(styled(&float(0.0)), "0.000000\n");
        assert_eq!(styled(&float(f64::NAN)), "0.000000\n");
        assert_eq!(styled(&float(1676179.820180)), "1676179.820180\n");
    }
}
