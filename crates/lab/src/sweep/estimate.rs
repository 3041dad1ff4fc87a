//! A sweep's cost, told before the bulk of it runs. Points are grouped into strata by what
//! sets their simulation rate most (scheduler and device: CFQ costs about twice noop's CPU per
//! request, a disk serves a hundredth of an NVMe drive's requests), and the first point of
//! each stratum runs first (the pilots; their rows are kept, so they do not run again). Each
//! other point is assumed to simulate as its stratum's pilot did:
//!
//! - simulated requests: the pilot's requests (its device's reads and writes) times the
//!   point's planned time over the pilot's ([`crate::run::planned_ns`]: the jobs'
//!   `runtime`s) where both have one, else 1;
//! - core-seconds: those requests at the pilot's rate (its requests over the CPU time of
//!   the thread that ran it), since a point runs on one core;
//! - memory per worker: the peak resident memory of the process once the pilots have run
//!   (`VmHWM`), which a worker holding one point at a time does not exceed by much.
//!
//! At most [`MAX_PILOTS`] pilots run, and no more than a tenth of the points: a stratum past
//! those borrows the first pilot's requests and the pilots' pooled rate. Job files and
//! settings that differ within a stratum still move the figure: it sizes a cluster, it is
//! not a promise.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::AtomicBool;

use iosched_driver::spec::RunSpec;

use super::{describe, measure, SweepError, SweepRow, SweepSpec};

/// Pilots run before the rest, at most; each costs one point's time before the estimate shows.
pub const MAX_PILOTS: usize = 8;

/// What a sweep is expected to cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub points: usize,
    /// Requests the simulated devices are expected to serve, over every point.
    pub requests: f64,
    /// Requests per CPU-second over the pilots (their requests over their CPU time).
    pub rate_per_s: f64,
    /// The sum over points of each point's requests at its stratum's rate.
    pub core_seconds: f64,
    /// Peak resident memory of the process that ran the pilots, where the OS tells it.
    pub memory_bytes: Option<u64>,
    /// How many points ran as pilots.
    pub pilots: usize,
}

/// The pilots' rows, by point, and the estimate they gave.
pub struct Pilot {
    /// `(point index, its rows)`, in point order.
    pub done: Vec<(usize, Vec<SweepRow>)>,
    pub estimate: Estimate,
}

/// One pilot's measurement: requests served, CPU time spent, planned time.
#[derive(Clone, Copy)]
struct Sample {
    requests: f64,
    cpu_s: f64,
    planned_ns: Option<u64>,
}

/// For each point, its stratum's number (first-seen order) by scheduler and target.
fn strata(specs: &[RunSpec]) -> Vec<usize> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    specs
        .iter()
        .map(|spec| {
            let target = serde_json::to_string(&spec.target).unwrap_or_default();
            let key = format!("{}\u{0}{target}", spec.scheduler);
            let next = seen.len();
            *seen.entry(key).or_insert(next)
        })
        .collect()
}

/// The points that run as pilots: the first of each stratum, within the caps.
fn pilot_points(stratum_of: &[usize]) -> Vec<usize> {
    let cap = MAX_PILOTS.min(stratum_of.len().div_ceil(10)).max(1);
    let mut chosen = Vec::new();
    for (point, &stratum) in stratum_of.iter().enumerate() {
        if stratum == chosen.len() && chosen.len() < cap {
            chosen.push(point);
        }
    }
    chosen
}

/// Runs the pilots of `specs` (from [`super::specs`]) on `workers` threads and estimates the
/// rest from them.
pub fn pilot(
    sweep: &SweepSpec,
    specs: &[RunSpec],
    workers: usize,
    stop: &AtomicBool,
) -> Result<Pilot, SweepError> {
    if specs.is_empty() {
        return Err(SweepError {
            point: String::new(),
            error: Box::new(crate::run::RunError::Knob("the sweep has no points".into())),
        });
    }
    let stratum_of = strata(specs);
    let points = pilot_points(&stratum_of);
    let workers = super::workers_for(specs, workers);
    let measured = crate::pool::map_in_order(
        &points,
        workers,
        |&point| {
            let cpu_before = thread_cpu_ns();
            let result = measure(point, &specs[point], stop);
            let cpu_ns = match (cpu_before, thread_cpu_ns()) {
                (Some(before), Some(after)) => after.saturating_sub(before),
                _ => 0,
            };
            result.map(|m| (m, cpu_ns)).map_err(|error| SweepError {
                point: describe(sweep, point),
                error: Box::new(error),
            })
        },
        || {},
    );
    let mut done = Vec::with_capacity(points.len());
    let mut samples = Vec::with_capacity(points.len());
    for (&point, result) in points.iter().zip(measured) {
        let (m, cpu_ns) = result?;
        samples.push(Sample {
            requests: m.requests as f64,
            // A pilot too quick for the clock's tick: take 1 µs, which overstates the rate.
            cpu_s: cpu_ns.max(1_000) as f64 / 1e9,
            planned_ns: crate::run::planned_ns(&specs[point]),
        });
        done.push((point, m.rows));
    }
    let planned: Vec<Option<u64>> = specs.iter().map(crate::run::planned_ns).collect();
    let mut estimate = combine_counts(&stratum_of, &samples, &planned);
    estimate.memory_bytes = peak_resident_bytes();
    Ok(Pilot { done, estimate })
}

/// The estimate from the pilots' `samples` (stratum `s`'s pilot is `samples[s]` where it ran)
/// for points of strata `stratum_of` and planned times `planned`.
fn combine_counts(stratum_of: &[usize], samples: &[Sample], planned: &[Option<u64>]) -> Estimate {
    let pooled_cpu_s: f64 = samples.iter().map(|s| s.cpu_s).sum();
    let pooled_rate = samples.iter().map(|s| s.requests).sum::<f64>() / pooled_cpu_s;
    let (mut requests, mut core_seconds) = (0.0, 0.0);
    for (&point_planned, &stratum) in planned.iter().zip(stratum_of) {
        let (sample, rate) = match samples.get(stratum) {
            Some(s) => (s, s.requests / s.cpu_s),
            None => (&samples[0], pooled_rate),
        };
        let scale = match (point_planned, sample.planned_ns) {
            (Some(point), Some(pilot)) if pilot > 0 => point as f64 / pilot as f64,
            _ => 1.0,
        };
        let point_requests = sample.requests * scale;
        requests += point_requests;
        if rate > 0.0 {
            core_seconds += point_requests / rate;
        }
    }
    Estimate {
        points: stratum_of.len(),
        requests,
        rate_per_s: pooled_rate,
        core_seconds,
        memory_bytes: None,
        pilots: samples.len(),
    }
}

impl fmt::Display for Estimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "estimate: {} points, about {:.2e} simulated requests, about {:.0} core-seconds at \
             {:.2} M requests/s (measured on {} pilot point{}, one per scheduler and device)",
            self.points,
            self.requests,
            self.core_seconds,
            self.rate_per_s / 1e6,
            self.pilots,
            if self.pilots == 1 { "" } else { "s" }
        )?;
        if let Some(bytes) = self.memory_bytes {
            write!(
                f,
                ", about {} MiB per worker (peak resident memory after it)",
                bytes.div_ceil(1 << 20)
            )?;
        }
        Ok(())
    }
}

/// CPU time of the calling thread, from `/proc/thread-self/schedstat` (its first field, in
/// ns): a busy machine stretches a run's wall time, not its CPU time.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// `VmHWM` of `/proc/self/status`, in bytes.
fn peak_resident_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep_of(dir: &iosched_workload::scratch::ScratchDir, toml: &str) -> SweepSpec {
        std::fs::write(
            dir.join("j.fio"),
            "[j]\nrw=randread\nbs=4k\ndirect=1\nsize=1g\ntime_based\nruntime=${T}\n",
        )
        .unwrap();
        SweepSpec::parse(&dir.join("s.toml"), toml).unwrap()
    }

    /// Three points of a 1 s, 2 s and 3 s run: one stratum, so one pilot (1 s) measured and
    /// the others scaled by their planned time: the whole is six times the pilot's requests;
    /// the pilot's rows are the first point's as a full sweep measures them.
    #[test]
    fn scales_the_pilot_by_planned_time() {
        let dir = iosched_workload::scratch::ScratchDir::new("sweep-estimate");
        let text = "jobs = 'j.fio'\ndevices = 'hdd-7200'\n[env]\nT = ['1s', '2s', '3s']\n";
        let spec = sweep_of(&dir, text);
        let specs = super::super::specs(&spec).unwrap();
        let stop = AtomicBool::new(false);
        let pilot = pilot(&spec, &specs, 1, &stop).unwrap();
        let first = measure(0, &specs[0], &stop).unwrap();
        assert_eq!(pilot.done, vec![(0, first.rows.clone())]);
        assert!(first.requests > 100, "{}", first.requests);
        assert_eq!(pilot.estimate.points, 3);
        assert_eq!(pilot.estimate.pilots, 1);
        assert_eq!(pilot.estimate.requests, 6.0 * first.requests as f64);
        assert!(pilot.estimate.rate_per_s > 0.0);
        let swept = super::super::run_rest(&spec, &specs, pilot.done, 1, &|| {}, &stop);
        let whole = super::super::run(&spec, 1, &|| {}, &stop).unwrap();
        assert_eq!(swept.unwrap(), whole, "the pilot's rows stand for point 0");
    }

    /// Two devices that serve very different numbers of requests in the same time: each gets
    /// its own pilot, and the estimate counts each device's points at its own pilot's figure
    /// (with one pilot, the disk's points would be counted at the NVMe drive's requests).
    #[test]
    fn each_scheduler_and_device_gets_its_own_pilot() {
        let dir = iosched_workload::scratch::ScratchDir::new("sweep-estimate-strata");
        let text = "jobs = 'j.fio'\ndevices = ['nvme-gen4', 'hdd-7200']\n\
                    seeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n[env]\nT = '100ms'\n";
        let spec = sweep_of(&dir, text);
        let specs = super::super::specs(&spec).unwrap();
        let stop = AtomicBool::new(false);
        let pilot = pilot(&spec, &specs, 2, &stop).unwrap();
        let points: Vec<usize> = pilot.done.iter().map(|(p, _)| *p).collect();
        assert_eq!(points, vec![0, 10], "the first point of each device");
        let nvme = measure(0, &specs[0], &stop).unwrap().requests as f64;
        let hdd = measure(10, &specs[10], &stop).unwrap().requests as f64;
        assert!(nvme > 20.0 * hdd, "nvme {nvme} hdd {hdd}");
        assert_eq!(pilot.estimate.requests, 10.0 * nvme + 10.0 * hdd);
        assert_eq!(pilot.estimate.pilots, 2);
        let swept = super::super::run_rest(&spec, &specs, pilot.done, 2, &|| {}, &stop);
        let whole = super::super::run(&spec, 2, &|| {}, &stop).unwrap();
        assert_eq!(swept.unwrap(), whole, "pilot rows go back in point order");
    }

    /// Core-seconds add each point at its own stratum's rate; a stratum past the cap takes
    /// the pooled rate and the first pilot's requests.
    #[test]
    fn strata_past_the_cap_borrow_the_pooled_figures() {
        let sample = |requests: f64, cpu_s: f64| Sample {
            requests,
            cpu_s,
            planned_ns: None,
        };
        let stratum_of = [0, 0, 1, 1, 2];
        let samples = [sample(100.0, 1.0), sample(1000.0, 2.0)];
        let e = combine_counts(&stratum_of, &samples, &[None; 5]);
        // 2 × (100 at 100/s) + 2 × (1000 at 500/s) + (100 at 1100/3 per s)
        let pooled = 1100.0 / 3.0;
        assert_eq!(e.requests, 2.0 * 100.0 + 2.0 * 1000.0 + 100.0);
        assert!((e.core_seconds - (2.0 + 4.0 + 100.0 / pooled)).abs() < 1e-9);
        assert_eq!(pilot_points(&[0, 0, 1, 1, 2]), vec![0]);
        let many: Vec<usize> = (0..40).map(|p| p / 4).collect();
        assert_eq!(pilot_points(&many), vec![0, 4, 8, 12]);
    }
}
