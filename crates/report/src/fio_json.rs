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
use serde_json::{Map, Value};
use std::io::{self, Write};

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
fn lat_object(stat: &LatStat, percentiles: Option<&[f64]>, flavor: Flavor) -> Value {
    let mut m = Map::new();
    m.insert("min".into(), Value::from(stat.min()));
    m.insert("max".into(), Value::from(stat.max()));
    m.insert("mean".into(), float(stat.mean()));
    m.insert("stddev".into(), float(stat.stddev()));
    m.insert("N".into(), Value::from(stat.count()));
    if let Some(list) = percentiles {
        if stat.count() > 0 {
            let mut p = Map::new();
            for (pct, v) in stat.percentiles(list) {
                p.insert(format!("{pct:.6}"), Value::from(v));
            }
            m.insert("percentile".into(), Value::Object(p));
            if flavor.bins {
                let bins: Map<String, Value> = crate::fio_plat::bins(stat)
                    .into_iter()
                    .map(|(value, count)| (value.to_string(), Value::from(count)))
                    .collect();
                m.insert("bins".into(), Value::Object(bins));
            }
        }
    }
    Value::Object(m)
}

/// One direction's object (`jobs[i].read` etc.). Kernel-free analogue of fio's
/// `add_ddir_status_json()`.
pub fn ddir_object(job: &JobStats, ddir: usize, group: &GroupStats, flavor: Flavor) -> Value {
    let d = &job.dirs[ddir];
    let list = |on: bool| on.then_some(job.percentile_list.as_slice());
    let mut m = Map::new();
    m.insert("io_bytes".into(), Value::from(d.io_bytes));
    m.insert("io_kbytes".into(), Value::from(d.io_bytes / 1024));
    m.insert("bw_bytes".into(), Value::from(job.bw_bytes(ddir)));
    m.insert("bw".into(), Value::from(job.bw_kib(ddir)));
    m.insert("iops".into(), float(job.iops(ddir)));
    m.insert("runtime".into(), Value::from(job.dir_runtime_ms(ddir)));
    m.insert("total_ios".into(), Value::from(d.total_ios + d.failed_ios));
    m.insert("short_ios".into(), Value::from(d.short_ios));
    m.insert("drop_ios".into(), Value::from(d.drop_ios));
    let slat = lat_object(&d.slat, list(job.slat_percentiles), flavor);
    m.insert("slat_ns".into(), slat);
    let clat = lat_object(&d.clat, list(job.clat_percentiles), flavor);
    m.insert("clat_ns".into(), clat);
    let lat = lat_object(&d.lat, list(job.lat_percentiles), flavor);
    m.insert("lat_ns".into(), lat);
    let bw = job.bw_samples(ddir);
    let agg = if bw.samples > 0 {
        group.agg_percent(ddir, bw.mean)
    } else {
        0.0
    };
    m.insert("bw_min".into(), Value::from(bw.min));
    m.insert("bw_max".into(), Value::from(bw.max));
    m.insert("bw_agg".into(), float(agg));
    m.insert("bw_mean".into(), float(bw.mean));
    m.insert("bw_dev".into(), float(bw.stddev));
    m.insert("bw_samples".into(), Value::from(bw.samples));
    let io = job.iops_samples(ddir);
    m.insert("iops_min".into(), Value::from(io.min));
    m.insert("iops_max".into(), Value::from(io.max));
    m.insert("iops_mean".into(), float(io.mean));
    m.insert("iops_stddev".into(), float(io.stddev));
    m.insert("iops_samples".into(), Value::from(io.samples));
    Value::Object(m)
}

fn keyed(keys: &[&str], values: &[f64]) -> Value {
    let mut m = Map::new();
    for (k, &v) in keys.iter().zip(values) {
        m.insert((*k).to_string(), float(v));
    }
    Value::Object(m)
}

/// One element of `jobs[]`. Kernel-free analogue of fio's `show_thread_status_json()`.
pub fn job_object(job: &JobStats, group: &GroupStats, flavor: Flavor) -> Value {
    let mut m = Map::new();
    m.insert("jobname".into(), Value::from(job.name.as_str()));
    m.insert("groupid".into(), Value::from(job.groupid));
    m.insert("error".into(), Value::from(job.error));
    m.insert("eta".into(), Value::from(ETA_FINISHED));
    m.insert("elapsed".into(), Value::from(job.elapsed_s()));
    m.insert("job options".into(), options_object(&job.options));
    for (ddir, name) in DIR_NAMES.iter().enumerate() {
        m.insert((*name).into(), ddir_object(job, ddir, group, flavor));
    }
    let mut sync = Map::new();
    sync.insert("total_ios".into(), Value::from(job.sync.count()));
    // fio reports the sync series' percentiles if either clat or lat percentiles are on.
    let on = job.clat_percentiles || job.lat_percentiles;
    let sync_list = on.then_some(job.percentile_list.as_slice());
    sync.insert("lat_ns".into(), lat_object(&job.sync, sync_list, flavor));
    m.insert("sync".into(), Value::Object(sync));
    m.insert("job_runtime".into(), Value::from(job.runtime_ms()));
    m.insert("usr_cpu".into(), float(job.usr_cpu));
    m.insert("sys_cpu".into(), float(job.sys_cpu));
    m.insert("ctx".into(), Value::from(job.ctx));
    m.insert("majf".into(), Value::from(job.majf));
    m.insert("minf".into(), Value::from(job.minf));
    m.insert(
        "iodepth_level".into(),
        keyed(&DEPTH_KEYS, &job.depth_dist()),
    );
    m.insert(
        "iodepth_submit".into(),
        keyed(&BATCH_KEYS, &job.submit_dist()),
    );
    m.insert(
        "iodepth_complete".into(),
        keyed(&BATCH_KEYS, &job.complete_dist()),
    );
    let lat = job.lat_dist();
    m.insert("latency_ns".into(), keyed(&LAT_KEYS_SHORT, &lat[0..10]));
    m.insert("latency_us".into(), keyed(&LAT_KEYS_SHORT, &lat[10..20]));
    m.insert("latency_ms".into(), keyed(&LAT_KEYS_MS, &lat[20..32]));
    if job.continue_on_error {
        m.insert("total_err".into(), Value::from(job.total_err));
        m.insert("first_error".into(), Value::from(job.first_error));
    }
    m.insert("latency_depth".into(), Value::from(job.latency_depth));
    m.insert("latency_target".into(), Value::from(job.latency_target_ns));
    m.insert("latency_percentile".into(), float(job.latency_percentile));
    m.insert("latency_window".into(), Value::from(job.latency_window_ns));
    if let Some(ss) = &job.steadystate {
        m.insert("steadystate".into(), steadystate_object(ss));
    }
    Value::Object(m)
}

/// The `steadystate` object of a job that set `ss_dur`. Kernel-free analogue of its part
/// of fio's `show_thread_status_json()`: fio prints the limit and the criterion through a
/// C `float` with `%f`, so they carry single precision.
fn steadystate_object(ss: &iosched_workload::steady_state::SteadyStateReport) -> Value {
    let spec = &ss.spec;
    let pct = if spec.percent { "%" } else { "" };
    let criterion_name = format!(
        "{}{}:{:.6}{pct}",
        if spec.iops { "iops" } else { "bw" },
        if spec.slope { "_slope" } else { "" },
        spec.limit as f32
    );
    let mean = |v: &[u64]| v.iter().sum::<u64>() / (v.len().max(1) as u64);
    let mut data = Map::new();
    data.insert("bw_mean".into(), Value::from(mean(&ss.bw)));
    data.insert("iops_mean".into(), Value::from(mean(&ss.iops)));
    data.insert("iops".into(), Value::from(ss.iops.clone()));
    data.insert("bw".into(), Value::from(ss.bw.clone()));
    let mut m = Map::new();
    m.insert("ss".into(), Value::from(criterion_name));
    m.insert("duration".into(), Value::from(spec.window_s));
    m.insert("attained".into(), Value::from(u32::from(ss.attained)));
    let criterion = if ss.criterion.is_finite() {
        ss.criterion
    } else {
        0.0
    };
    m.insert(
        "criterion".into(),
        Value::from(format!("{:.6}{pct}", criterion as f32)),
    );
    m.insert("max_deviation".into(), float(ss.max_deviation));
    m.insert("slope".into(), float(ss.slope));
    m.insert("data".into(), Value::Object(data));
    Value::Object(m)
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
    let group = groups
        .iter()
        .find(|g| g.groupid == job.groupid)
        .cloned()
        .unwrap_or_default();
    job_object(job, &group, flavor)
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
/// each job's object is built, written and dropped in turn: a run of thousands of jobs never
/// holds the whole document as values (4096 jobs: about 130 MiB of values, 25 MB of text).
pub fn write_json_as<W: Write>(run: &RunResult, flavor: Flavor, w: &mut W) -> io::Result<()> {
    let top = document(run, Value::Null);
    let streamed = Streamed {
        top: &top,
        run,
        groups: &run.groups(),
        flavor,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut *w, FioFormatter::default());
    serde::Serialize::serialize(&streamed, &mut ser).map_err(io::Error::other)?;
    w.write_all(b"\n")
}

/// The document with its `jobs` entry serialized job by job (see [`write_json_as`]).
struct Streamed<'a> {
    top: &'a Value,
    run: &'a RunResult,
    groups: &'a [GroupStats],
    flavor: Flavor,
}

impl serde::Serialize for Streamed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        let Value::Object(top) = self.top else {
            return self.top.serialize(s);
        };
        let mut map = s.serialize_map(Some(top.len()))?;
        for (key, value) in top {
            if key != "jobs" {
                map.serialize_entry(key, value)?;
                continue;
            }
            struct Jobs<'b>(&'b Streamed<'b>);
            impl serde::Serialize for Jobs<'_> {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    let doc = self.0;
                    let mut seq = s.serialize_seq(Some(doc.run.jobs.len()))?;
                    for job in &doc.run.jobs {
                        seq.serialize_element(&job_value(doc.groups, job, doc.flavor))?;
                    }
                    seq.end()
                }
            }
            map.serialize_entry(key, &Jobs(self))?;
        }
        map.end()
    }
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
