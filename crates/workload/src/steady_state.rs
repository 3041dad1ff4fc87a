//! fio's steady-state termination (`ss=`, `ss_dur=`, `ss_ramp=`): once a second the rate of a
//! job (or of its reporting group, with `group_reporting`) is sampled; after the ramp, when a
//! window of `ss_dur` seconds of samples either stays within a limit of its mean (`iops:`,
//! `bw:`) or has a least-squares slope under a limit (`iops_slope:`, `bw_slope:`), the job
//! ends, as fio's `steadystate_check()` ends it.

use iosched_core::{Time, NSEC_PER_SEC};

/// What `ss=` watches and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyStateSpec {
    /// IOPS (`iops`) rather than bytes per second (`bw`).
    pub iops: bool,
    /// The slope of a linear fit (`_slope`) rather than the largest deviation from the mean.
    pub slope: bool,
    /// The limit: a percentage of the window's mean, or an absolute rate.
    pub limit: f64,
    pub percent: bool,
    /// `ss_dur`: seconds in the window (the criterion is off while 0).
    pub window_s: u32,
    /// `ss_ramp`: samples count from one second after this.
    pub ramp_ns: Time,
}

impl SteadyStateSpec {
    /// fio's default criterion, `iops_slope:0.01%`, with no window yet.
    pub fn fio_default() -> SteadyStateSpec {
        SteadyStateSpec {
            iops: true,
            slope: true,
            limit: 0.01,
            percent: true,
            window_s: 0,
            ramp_ns: 0,
        }
    }

    /// Reads `ss=`'s value (`iops:10%`, `bw_slope:1%`, `iops:2000`) into `self`.
    pub fn parse_criterion(&mut self, text: &str) -> Result<(), String> {
        let (what, limit) = text
            .split_once(':')
            .ok_or_else(|| format!("expected METRIC:LIMIT, e.g. iops:10% (got '{text}')"))?;
        (self.iops, self.slope) = match what.trim() {
            "iops" => (true, false),
            "iops_slope" => (true, true),
            "bw" => (false, false),
            "bw_slope" => (false, true),
            other => {
                return Err(format!(
                    "unknown metric '{other}' (iops, iops_slope, bw or bw_slope)"
                ))
            }
        };
        let limit = limit.trim();
        let (number, percent) = match limit.strip_suffix('%') {
            Some(number) => (number, true),
            None => (limit, false),
        };
        self.limit = number
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("bad limit '{limit}'"))?;
        self.percent = percent;
        Ok(())
    }
}

/// What fio reports of a steady-state criterion (its per-job `steadystate` object): the
/// criterion, whether it was met, the last evaluation and the window's samples.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyStateReport {
    pub spec: SteadyStateSpec,
    pub attained: bool,
    /// The last evaluation of the criterion (a percentage of the mean with `%`), signed for
    /// a slope; 0 before the window first filled.
    pub criterion: f64,
    /// The largest deviation from the mean (deviation criteria) and the slope per second
    /// (slope criteria) at the last evaluation; the other stays 0, as in fio.
    pub max_deviation: f64,
    pub slope: f64,
    /// The window's per-second samples, oldest first, zero-padded to `ss_dur` entries:
    /// I/Os and bytes per second.
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
}

/// One job's (or one group's) samples and verdict.
#[derive(Clone, Debug)]
pub struct SteadyState {
    spec: SteadyStateSpec,
    /// When the job started: samples fall on whole seconds from here.
    epoch: Time,
    /// Completed I/Os and bytes so far, and at the last sample.
    ios: u64,
    bytes: u64,
    sampled_ios: u64,
    sampled_bytes: u64,
    next_sample: Time,
    /// The last `window_s` samples after the ramp, oldest first.
    window: std::collections::VecDeque<f64>,
    /// The same samples as (I/Os, bytes) per second, for the report.
    rates: std::collections::VecDeque<(u64, u64)>,
    /// The last evaluation: (deviation, slope, criterion).
    last: (f64, f64, f64),
    attained: bool,
}

impl SteadyState {
    pub fn new(spec: SteadyStateSpec, epoch: Time) -> SteadyState {
        assert!(spec.window_s > 0, "steady state without a window");
        SteadyState {
            spec,
            epoch,
            ios: 0,
            bytes: 0,
            sampled_ios: 0,
            sampled_bytes: 0,
            next_sample: epoch + NSEC_PER_SEC,
            window: std::collections::VecDeque::new(),
            rates: std::collections::VecDeque::new(),
            last: (0.0, 0.0, 0.0),
            attained: false,
        }
    }

    pub fn is_attained(&self) -> bool {
        self.attained
    }

    /// What fio prints of this criterion. Kernel-free analogue of the `steadystate` part of
    /// fio's `show_thread_status_json()`.
    pub fn report(&self) -> SteadyStateReport {
        let width = self.spec.window_s as usize;
        let mut iops: Vec<u64> = self.rates.iter().map(|&(ios, _)| ios).collect();
        let mut bw: Vec<u64> = self.rates.iter().map(|&(_, bytes)| bytes).collect();
        iops.resize(width, 0);
        bw.resize(width, 0);
        let (deviation, slope, criterion) = self.last;
        SteadyStateReport {
            spec: self.spec,
            attained: self.attained,
            criterion,
            max_deviation: if self.spec.slope { 0.0 } else { deviation },
            slope: if self.spec.slope { slope } else { 0.0 },
            iops,
            bw,
        }
    }

    /// An I/O of `bytes` completed at `now`; returns true when steady state is reached
    /// (once: later calls return false).
    pub fn completed(&mut self, now: Time, bytes: u64) -> bool {
        if self.attained {
            return false;
        }
        // Seconds that ended before this completion are sampled without it.
        while self.next_sample <= now {
            self.sample();
            if self.attained {
                return true;
            }
        }
        self.ios += 1;
        self.bytes += bytes;
        false
    }

    /// The rate of the second that ends at `next_sample`.
    fn sample(&mut self) {
        let at = self.next_sample;
        self.next_sample += NSEC_PER_SEC;
        let rate = (self.ios - self.sampled_ios, self.bytes - self.sampled_bytes);
        let value = if self.spec.iops { rate.0 } else { rate.1 } as f64;
        self.sampled_ios = self.ios;
        self.sampled_bytes = self.bytes;
        // fio records from one second after the ramp (`FIO_SS_RAMP_OVER`).
        if self.spec.ramp_ns > 0 && at - self.epoch < self.spec.ramp_ns + NSEC_PER_SEC {
            return;
        }
        self.window.push_back(value);
        self.rates.push_back(rate);
        if self.window.len() > self.spec.window_s as usize {
            self.window.pop_front();
            self.rates.pop_front();
        }
        if self.window.len() == self.spec.window_s as usize {
            self.last = self.evaluate();
            self.attained = self.last.2.abs() < self.spec.limit;
        }
    }

    /// fio's criterion over a full window: largest deviation from the mean, or the slope of
    /// the least-squares line (per sample), as a percentage of the mean if asked. Returns
    /// (deviation, slope, criterion); the criterion is signed for a slope.
    fn evaluate(&self) -> (f64, f64, f64) {
        let n = self.window.len() as f64;
        let mean = self.window.iter().sum::<f64>() / n;
        let deviation = self
            .window
            .iter()
            .map(|y| (y - mean).abs())
            .fold(0.0, f64::max);
        let slope = {
            let sum_x = n * (n - 1.0) / 2.0;
            let sum_x_sq = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
            let sum_y: f64 = self.window.iter().sum();
            let sum_xy: f64 = self
                .window
                .iter()
                .enumerate()
                .map(|(x, y)| x as f64 * y)
                .sum();
            let denominator = sum_x_sq - sum_x * sum_x / n;
            if denominator == 0.0 {
                0.0
            } else {
                (sum_xy - sum_x * sum_y / n) / denominator
            }
        };
        let measure = if self.spec.slope { slope } else { deviation };
        let criterion = if !self.spec.percent {
            measure
        } else if mean == 0.0 {
            f64::INFINITY
        } else {
            100.0 * measure / mean
        };
        (deviation, slope, criterion)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str, window_s: u32, ramp_s: u64) -> SteadyStateSpec {
        let mut spec = SteadyStateSpec::fio_default();
        spec.parse_criterion(text).unwrap();
        spec.window_s = window_s;
        spec.ramp_ns = ramp_s * NSEC_PER_SEC;
        spec
    }

    /// Feeds `rate(second)` I/Os evenly in each second; returns the second in which steady
    /// state is declared.
    fn run(state: &mut SteadyState, rate: impl Fn(u64) -> u64) -> Option<u64> {
        for second in 0..120 {
            let n = rate(second);
            for i in 0..n {
                let at = second * NSEC_PER_SEC + i * NSEC_PER_SEC / n.max(1);
                if state.completed(at, 4096) {
                    return Some(second);
                }
            }
        }
        None
    }

    #[test]
    fn a_flat_rate_is_steady_once_the_window_fills_after_the_ramp() {
        let mut state = SteadyState::new(spec("iops:10%", 5, 3), 0);
        // Ramp 3 s: samples count from the one taken at 4 s; those at 4..=8 s fill the
        // window, and the first I/O at 8 s sees it.
        assert_eq!(run(&mut state, |_| 1000), Some(8));
        assert!(state.is_attained());
        let report = state.report();
        assert!(report.attained);
        assert_eq!(report.iops, vec![1000; 5]);
        assert_eq!(report.bw, vec![4096 * 1000; 5]);
        assert_eq!(
            (report.criterion, report.max_deviation, report.slope),
            (0.0, 0.0, 0.0)
        );
    }

    /// fio's report before the window fills: zeros after the samples so far, nothing
    /// evaluated; a falling rate's slope is negative.
    #[test]
    fn the_report_pads_the_window_and_keeps_the_slopes_sign() {
        let mut state = SteadyState::new(spec("iops_slope:0.1%", 4, 0), 0);
        assert_eq!(run(&mut state, |s| 2000 - 10 * s), None);
        let mut state2 = SteadyState::new(spec("iops_slope:0.1%", 4, 0), 0);
        for second in 0..3u64 {
            for i in 0..100 {
                state2.completed(second * NSEC_PER_SEC + i * 10_000_000, 512);
            }
        }
        let report = state2.report();
        assert_eq!(report.iops, vec![100, 100, 0, 0]);
        assert_eq!(report.bw, vec![51_200, 51_200, 0, 0]);
        assert_eq!(report.criterion, 0.0);
        let falling = state.report();
        assert!(!falling.attained);
        assert!(
            falling.slope < 0.0 && falling.criterion < 0.0,
            "{falling:?}"
        );
        assert_eq!(falling.max_deviation, 0.0);
    }

    #[test]
    fn a_rising_rate_is_not_steady_until_it_levels_off() {
        let mut state = SteadyState::new(spec("iops_slope:1%", 5, 0), 0);
        let at = run(&mut state, |s| if s < 20 { 500 + 100 * s } else { 2500 });
        // The slope (100 IOPS a second) stays above 1 % of the mean while the rate climbs;
        // the window of the samples at 20..=24 s (2400 then four of 2500) has a slope of 20,
        // 0.8 % of its mean: the first under the limit.
        assert_eq!(at, Some(24));
    }

    #[test]
    fn a_noisy_rate_beyond_the_deviation_limit_never_settles() {
        let mut state = SteadyState::new(spec("bw:5%", 4, 0), 0);
        assert_eq!(
            run(&mut state, |s| if s % 2 == 0 { 900 } else { 1100 }),
            None
        );
    }

    #[test]
    fn criteria_parse_as_fio_writes_them() {
        let parsed = spec("bw_slope:0.5%", 1, 0);
        assert!(!parsed.iops && parsed.slope && parsed.percent && parsed.limit == 0.5);
        let absolute = spec("iops:2000", 1, 0);
        assert!(absolute.iops && !absolute.slope && !absolute.percent && absolute.limit == 2000.0);
        let mut bad = SteadyStateSpec::fio_default();
        assert!(bad.parse_criterion("lat:1%").is_err());
        assert!(bad.parse_criterion("iops").is_err());
        assert!(bad.parse_criterion("iops:x%").is_err());
    }
}
