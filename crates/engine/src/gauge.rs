//! In-flight gauges: how many requests the device held, and how deep each job's queue was,
//! weighted by the real time spent at each level.
//!
//! fio's `iodepth_level` counts submissions (the job's depth when it submits), which says
//! how full the queue was when the job refilled it, not how full it stayed: a job that lets
//! its queue drain and refills it at once shows the same counts as one that keeps it full.
//! These gauges answer the second question. The device's level is what the engine has
//! handed to the kernel (`io_uring_enter`) and not yet reaped; a job's level is fio's
//! `cur_depth`, its I/Os submitted and not yet reaped. Both change only at the engine's
//! own steps, stamped with the run's clock.

use iosched_core::Time;

/// Time at each level of one count, from its first change to its last.
#[derive(Clone, Debug)]
pub struct DepthGauge {
    level: u32,
    since: Option<Time>,
    /// Nanoseconds spent at each level, `0..=cap` (higher levels count at `cap`).
    time_at: Vec<u64>,
}

/// What a gauge measured: the time-weighted mean level, and the share of time in each of
/// fio's depth buckets (`0`, then `1`, `2` for 2–3, `4` for 4–7 ... up to the cap).
#[derive(Clone, Debug, PartialEq)]
pub struct DepthSummary {
    pub mean: f64,
    /// The highest level the gauge can record (the device cap, the job's `iodepth`).
    pub cap: u32,
    /// Nanoseconds the gauge ran.
    pub span_ns: u64,
    /// (bucket's lowest level, percent of the span), ascending, every bucket up to `cap`.
    pub percent: Vec<(u32, f64)>,
}

impl DepthGauge {
    /// A gauge of levels `0..=cap`, at 0, not yet running.
    pub fn new(cap: u32) -> DepthGauge {
        DepthGauge {
            level: 0,
            since: None,
            time_at: vec![0; cap as usize + 1],
        }
    }

    /// The count is `level` from `now` on. The gauge starts running at its first level
    /// above 0.
    pub fn set(&mut self, level: u32, now: Time) {
        match self.since {
            Some(since) => {
                let at = (self.level as usize).min(self.time_at.len() - 1);
                self.time_at[at] += now.saturating_sub(since);
                self.since = Some(now.max(since));
            }
            None if level > 0 => self.since = Some(now),
            None => {}
        }
        self.level = level;
    }

    /// The level now.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// The time-weighted summary up to the last change.
    pub fn summary(&self) -> DepthSummary {
        let cap = (self.time_at.len() - 1) as u32;
        let span: u64 = self.time_at.iter().sum();
        let weighted: f64 = self
            .time_at
            .iter()
            .enumerate()
            .map(|(level, &ns)| level as f64 * ns as f64)
            .sum();
        let mut percent = vec![(0, 0.0)];
        let mut low = 1;
        while low <= cap {
            percent.push((low, 0.0));
            low *= 2;
        }
        for (level, &ns) in self.time_at.iter().enumerate() {
            let bucket = bucket_of(level as u32);
            percent[bucket].1 += 100.0 * ns as f64 / span.max(1) as f64;
        }
        DepthSummary {
            mean: weighted / span.max(1) as f64,
            cap,
            span_ns: span,
            percent,
        }
    }
}

/// Index of `level`'s bucket: 0 for 0, then 1 + floor(log2(level)).
fn bucket_of(level: u32) -> usize {
    match level {
        0 => 0,
        _ => 1 + (31 - level.leading_zeros()) as usize,
    }
}

/// Where one clone's completed requests spent their time, summed over them (divided by the
/// run's time, each sum is by Little's law the mean number of its requests in that stage):
/// from the job's submission to the scheduler's dispatch (the scheduler's queue, and the
/// plug), from the dispatch to the `io_uring_enter` that took it (the engine's path: the rest
/// of the turn, a hand-over to its own thread), from there to the wake-up of the thread that
/// reaped it (the device, and the kernel's completion and wake-up), and from that wake-up to
/// the reap (the lock, the completions and steps before it in the same turn).
///
/// Choice: sums per clone, added at each completion, not a log per request: four additions
/// on the hot path, and what issue 32 asks (where the heavy job's eight requests wait) is a
/// mean count per stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageSums {
    /// Requests completed (a merged request once, for its own I/O's clone).
    pub requests: u64,
    pub queued_ns: u64,
    pub engine_ns: u64,
    pub device_ns: u64,
    pub reap_ns: u64,
    /// Requests dispatched on another clone's thread and handed to this one's.
    pub handed: u64,
}

impl StageSums {
    /// A request submitted at `submitted`, dispatched at `issued`, taken by the kernel at
    /// `sent`, reaped at `reaped` by a thread woken at `woke` (clamped into order, so a
    /// clock read before the stamp it follows counts as no time).
    pub fn add(&mut self, submitted: Time, issued: Time, sent: Time, woke: Time, reaped: Time) {
        let issued = issued.max(submitted);
        let sent = sent.max(issued);
        let woke = woke.clamp(sent, reaped.max(sent));
        let reaped = reaped.max(woke);
        self.requests += 1;
        self.queued_ns += issued - submitted;
        self.engine_ns += sent - issued;
        self.device_ns += woke - sent;
        self.reap_ns += reaped - woke;
    }
}

/// The run's gauges, as [`crate::EngineOutcome`] hands them back.
#[derive(Clone, Debug, PartialEq)]
pub struct InFlightSummary {
    /// Requests handed to the kernel and not yet reaped.
    pub device: DepthSummary,
    /// Each clone's depth, in clone order.
    pub clones: Vec<DepthSummary>,
    /// Each clone's requests' time by stage, in clone order.
    pub stages: Vec<StageSums>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_weighted_by_time_from_the_first_change_to_the_last() {
        let mut gauge = DepthGauge::new(32);
        gauge.set(0, 5);
        gauge.set(32, 100);
        gauge.set(31, 400);
        gauge.set(32, 500);
        gauge.set(0, 1100);
        let summary = gauge.summary();
        assert_eq!(summary.span_ns, 1000);
        assert!((summary.mean - (32.0 * 900.0 + 31.0 * 100.0) / 1000.0).abs() < 1e-9);
        let at = |low: u32| summary.percent.iter().find(|b| b.0 == low).unwrap().1;
        assert!((at(32) - 90.0).abs() < 1e-9);
        assert!((at(16) - 10.0).abs() < 1e-9);
        assert_eq!(at(0), 0.0);
        assert_eq!(
            summary.percent.iter().map(|b| b.0).collect::<Vec<_>>(),
            [0, 1, 2, 4, 8, 16, 32]
        );
    }

    /// Each request's time splits into the four stages and nothing is lost; a stamp out of
    /// order counts as no time, not as a wrap.
    #[test]
    fn stages_split_a_request_s_time() {
        let mut sums = StageSums::default();
        sums.add(100, 130, 150, 900, 910);
        sums.add(0, 10, 5, 3, 40);
        assert_eq!(sums.requests, 2);
        assert_eq!(sums.queued_ns, 30 + 10);
        assert_eq!(sums.engine_ns, 20);
        assert_eq!(sums.device_ns, 750);
        assert_eq!(sums.reap_ns, 10 + 30);
    }

    #[test]
    fn buckets_cover_k_to_2k_minus_one() {
        let buckets: Vec<usize> = [0, 1, 2, 3, 4, 7, 8, 31, 32].map(bucket_of).to_vec();
        assert_eq!(buckets, [0, 1, 2, 2, 3, 3, 4, 5, 6]);
    }
}
