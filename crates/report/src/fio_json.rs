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
    GroupStats, JobStats, RunResult, BATCH_KEYS, DDIR_COUNT, DEPTH_KEYS, LAT_KEYS_MS,
    LAT_KEYS_SHORT,
};
use crate::LatStat;
use emit::{Emit, Key, Tree};
use serde_json::{Map, Value};
use std::io::{self, Write};

mod emit;

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
    key: &str,
    stat: &LatStat,
    percentiles: Option<&[f64]>,
    flavor: Flavor,
) -> io::Result<()> {
    e.begin(key)?;
    e.uint("min", stat.min())?;
    e.uint("max", stat.max())?;
    e.float("mean", stat.mean())?;
    e.float("stddev", stat.stddev())?;
    e.uint("N", stat.count())?;
    if let Some(list) = percentiles {
        if stat.count() > 0 {
            e.begin("percentile")?;
            for (pct, v) in stat.percentiles(list) {
                e.uint(Key::Percentile(pct), v)?;
            }
            e.end()?;
            if flavor.bins {
                e.begin("bins")?;
                for (index, count) in stat.buckets() {
                    e.uint(Key::Number(crate::fio_plat::bucket_value(index)), count)?;
                }
                e.end()?;
            }
        }
    }
    e.end()
}

/// One direction's object (`jobs[i].read` etc.). Kernel-free analogue of fio's
/// `add_ddir_status_json()`.
pub fn ddir_object(job: &JobStats, ddir: usize, group: &GroupStats, flavor: Flavor) -> Value {
    let mut tree = Tree::new();
    // A tree never fails to take an entry.
    let _ = emit_ddir(&mut tree, job, ddir, group, flavor);
    tree.finish()
}

/// [`ddir_object`]'s entries, into `e`.
fn emit_ddir<E: Emit>(
    e: &mut E,
    job: &JobStats,
    ddir: usize,
    group: &GroupStats,
    flavor: Flavor,
) -> io::Result<()> {
    let d = &job.dirs[ddir];
    let list = |on: bool| on.then_some(job.percentile_list.as_slice());
    e.uint("io_bytes", d.io_bytes)?;
    e.uint("io_kbytes", d.io_bytes / 1024)?;
    e.uint("bw_bytes", job.bw_bytes(ddir))?;
    e.uint("bw", job.bw_kib(ddir))?;
    e.float("iops", job.iops(ddir))?;
    e.uint("runtime", job.dir_runtime_ms(ddir))?;
    e.uint("total_ios", d.total_ios + d.failed_ios)?;
    e.uint("short_ios", d.short_ios)?;
    e.uint("drop_ios", d.drop_ios)?;
    emit_lat(e, "slat_ns", &d.slat, list(job.slat_percentiles), flavor)?;
    emit_lat(e, "clat_ns", &d.clat, list(job.clat_percentiles), flavor)?;
    emit_lat(e, "lat_ns", d.lat(), list(job.lat_percentiles), flavor)?;
    let bw = job.bw_samples(ddir);
    let agg = if bw.samples > 0 {
        group.agg_percent(ddir, bw.mean)
    } else {
        0.0
    };
    e.uint("bw_min", bw.min)?;
    e.uint("bw_max", bw.max)?;
    e.float("bw_agg", agg)?;
    e.float("bw_mean", bw.mean)?;
    e.float("bw_dev", bw.stddev)?;
    e.uint("bw_samples", bw.samples)?;
    let io = job.iops_samples(ddir);
    e.uint("iops_min", io.min)?;
    e.uint("iops_max", io.max)?;
    e.float("iops_mean", io.mean)?;
    e.float("iops_stddev", io.stddev)?;
    e.uint("iops_samples", io.samples)
}

/// An object of floats under `key`, one per name of `keys`.
fn emit_keyed<E: Emit>(e: &mut E, key: &str, keys: &[&str], values: &[f64]) -> io::Result<()> {
    e.begin(key)?;
    for (k, &v) in keys.iter().zip(values) {
        e.float(*k, v)?;
    }
    e.end()
}

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
    e.string("jobname", &job.name)?;
    e.uint("groupid", u64::from(job.groupid))?;
    e.int("error", i64::from(job.error))?;
    e.int("eta", ETA_FINISHED)?;
    e.uint("elapsed", job.elapsed_s())?;
    e.begin("job options")?;
    for (k, v) in &job.options {
        e.string(k, v)?;
    }
    e.end()?;
    for (ddir, name) in DIR_NAMES.iter().enumerate() {
        e.begin(name)?;
        emit_ddir(e, job, ddir, group, flavor)?;
        e.end()?;
    }
    e.begin("sync")?;
    e.uint("total_ios", job.sync.count())?;
    // fio reports the sync series' percentiles if either clat or lat percentiles are on.
    let on = job.clat_percentiles || job.lat_percentiles;
    let sync_list = on.then_some(job.percentile_list.as_slice());
    emit_lat(e, "lat_ns", &job.sync, sync_list, flavor)?;
    e.end()?;
    e.uint("job_runtime", job.runtime_ms())?;
    e.float("usr_cpu", job.usr_cpu)?;
    e.float("sys_cpu", job.sys_cpu)?;
    e.uint("ctx", job.ctx)?;
    e.uint("majf", job.majf)?;
    e.uint("minf", job.minf)?;
    emit_job_tail(e, job)
}

/// The job's entries after its CPU figures: depth and latency distributions, error counts,
/// latency target settings and the steady-state criterion.
fn emit_job_tail<E: Emit>(e: &mut E, job: &JobStats) -> io::Result<()> {
    emit_keyed(e, "iodepth_level", &DEPTH_KEYS, &job.depth_dist())?;
    emit_keyed(e, "iodepth_submit", &BATCH_KEYS, &job.submit_dist())?;
    emit_keyed(e, "iodepth_complete", &BATCH_KEYS, &job.complete_dist())?;
    let lat = job.lat_dist();
    emit_keyed(e, "latency_ns", &LAT_KEYS_SHORT, &lat[0..10])?;
    emit_keyed(e, "latency_us", &LAT_KEYS_SHORT, &lat[10..20])?;
    emit_keyed(e, "latency_ms", &LAT_KEYS_MS, &lat[20..32])?;
    if job.continue_on_error {
        e.uint("total_err", job.total_err)?;
        e.int("first_error", i64::from(job.first_error))?;
    }
    e.uint("latency_depth", u64::from(job.latency_depth))?;
    e.uint("latency_target", job.latency_target_ns)?;
    e.float("latency_percentile", job.latency_percentile)?;
    e.uint("latency_window", job.latency_window_ns)?;
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
    let mut top = Map::new();
    top.insert("fio version".into(), Value::from(run.fio_version.as_str()));
    top.insert("timestamp".into(), Value::from(run.timestamp_s));
    top.insert("timestamp_ms".into(), Value::from(run.timestamp_ms));
    top.insert("time".into(), Value::from(run.time.as_str()));
    if !run.global_options.is_empty() {
        top.insert("global options".into(), options_object(&run.global_options));
    }
    top.insert("jobs".into(), jobs);
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
        top.insert("disk_util".into(), Value::Array(disks));
    }
    if !run.iosched.is_null() {
        top.insert("iosched".into(), run.iosched.clone());
    }
    Value::Object(top)
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
/// each job's object goes straight to `w` as text ([`emit::Text`]): a run of thousands of
/// jobs never builds a job's object as values (4096 jobs: 25 MB of text; as values, about
/// 480 K instructions per job to build, print and drop).
pub fn write_json_as<W: Write>(run: &RunResult, flavor: Flavor, w: &mut W) -> io::Result<()> {
    let Value::Object(top) = document(run, Value::Null) else {
        unreachable!("the document is an object");
    };
    let groups = run.groups();
    w.write_all(b"{")?;
    for (i, (key, value)) in top.iter().enumerate() {
        w.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
        serde_json::to_writer(&mut *w, key).map_err(io::Error::other)?;
        w.write_all(b" : ")?;
        if key == "jobs" {
            write_jobs(run, &groups, flavor, w)?;
        } else {
            // An entry of the document, nested one level as the whole document would be.
            let style = FioFormatter {
                indent: 1,
                has_value: false,
            };
            let mut ser = serde_json::Serializer::with_formatter(&mut *w, style);
            serde::Serialize::serialize(value, &mut ser).map_err(io::Error::other)?;
        }
    }
    w.write_all(if top.is_empty() { b"}\n" } else { b"\n}\n" })
}

/// The `jobs` array, each job written as text at nesting depth 2.
fn write_jobs<W: Write>(
    run: &RunResult,
    groups: &[GroupStats],
    flavor: Flavor,
    w: &mut W,
) -> io::Result<()> {
    w.write_all(b"[")?;
    let mut text = emit::Text::default();
    for (i, job) in run.jobs.iter().enumerate() {
        w.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
        text.open(2);
        emit_job(&mut text, job, &group_of(groups, job), flavor)?;
        text.close(2, w)?;
    }
    w.write_all(if run.jobs.is_empty() { b"]" } else { b"\n  ]" })
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
