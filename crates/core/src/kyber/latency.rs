//! Latency histograms and the timer that resizes the domains. Kernel: add_latency_sample(),
//! kyber_completed_request(), flush_latency_buckets(), calculate_percentile(),
//! kyber_timer_fn() (block/kyber-iosched.c, 6.12).
//!
//! Every completed read, write or discard adds two samples, its total latency (from the
//! request's allocation) and its I/O latency (from its dispatch), to histograms of eight
//! buckets a quarter of the domain's target wide (the last is open). The first completion
//! arms a timer 100 ms (`HZ / 10`) out; later ones may only bring it closer
//! (timer_reduce()). When it fires, the per-CPU histograms are summed in, and a domain's
//! percentile is read once it has 500 samples or one second has passed since its first
//! read attempt. If any domain's p90 I/O latency is past its target the device is
//! congested: every domain with a p99 total latency (this window's or the last one seen)
//! is scaled by (p99 bucket + 1) / 4, so good domains shrink. Otherwise only domains whose
//! p99 is past their target grow by that factor. Depths stay within 1..=max.
//!
//! How the core models blk-mq here: per-CPU histograms are pinned to one CPU (one array
//! summed at each timer run, as flush_latency_buckets() does); the timer is a jiffies timer
//! that fires at the tick its expiry names ([`Latency::timer_expires`]): the drivers fire
//! it before the other events of that instant.

use super::domain::{DomainTokens, LATENCY_DOMAINS, NAMES};
use crate::deadline::tunables::{HZ, INITIAL_JIFFIES, JIFFY_NS};

/// `KYBER_LATENCY_SHIFT`: buckets are target / 4 wide.
pub const LATENCY_SHIFT: u32 = 2;
/// `KYBER_GOOD_BUCKETS`: buckets at or under the target.
pub const GOOD_BUCKETS: usize = 1 << LATENCY_SHIFT;
/// `KYBER_LATENCY_BUCKETS`.
pub const LATENCY_BUCKETS: usize = 2 << LATENCY_SHIFT;
/// `KYBER_TOTAL_LATENCY`, `KYBER_IO_LATENCY`.
pub const TOTAL: usize = 0;
pub const IO: usize = 1;
/// Kernel: kyber_latency_type_names[].
const TYPE_NAMES: [&str; 2] = ["total", "I/O"];
/// Kernel: kyber_latency_targets[]: 2 ms reads, 10 ms writes, 5 s discards.
pub const DEFAULT_TARGETS_NS: [u64; LATENCY_DOMAINS] = [2_000_000, 10_000_000, 5_000_000_000];
/// Samples after which a percentile is read without waiting for the one-second window.
const MIN_SAMPLES: u32 = 500;

type Histograms = [[[u32; LATENCY_BUCKETS]; 2]; LATENCY_DOMAINS];

/// A percentile read (`kyber_latency` tracepoint), or a domain resized (`kyber_adjust`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimerEvent {
    /// The tracepoint's text: `READ I/O p90 3/4 samples=512`.
    Percentile(String),
    /// `domain`'s depth became `depth`.
    Adjust { domain: usize, depth: u32 },
}

/// Kernel: the latency half of struct kyber_queue_data, plus its timer.
#[derive(Clone, Debug)]
pub struct Latency {
    /// kqd->cpu_latency, one CPU's.
    cpu: Histograms,
    /// kqd->latency_buckets: what the timer has gathered and not yet read.
    buckets: Histograms,
    /// kqd->latency_timeout[]: jiffies, 0 when no window is open.
    timeout: [u64; LATENCY_DOMAINS],
    /// kqd->domain_p99[]: the last p99 bucket seen, -1 if none.
    domain_p99: [i32; LATENCY_DOMAINS],
    /// kqd->latency_targets[], ns.
    pub targets_ns: [u64; LATENCY_DOMAINS],
    /// kqd->timer: its expiry in jiffies while pending.
    timer: Option<u64>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency::new()
    }
}

/// Kernel: time_after(a, b) on jiffies.
fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}

/// Kernel: add_latency_sample()'s bucket: a quarter-target wide, the last open.
pub fn bucket_of(target_ns: u64, latency_ns: u64) -> usize {
    if latency_ns == 0 {
        return 0;
    }
    let divisor = (target_ns >> LATENCY_SHIFT).max(1);
    ((latency_ns - 1) / divisor).min(LATENCY_BUCKETS as u64 - 1) as usize
}

impl Latency {
    /// Kernel: kyber_queue_data_alloc(): no p99 yet, default targets, timer idle.
    pub fn new() -> Latency {
        Latency {
            cpu: [[[0; LATENCY_BUCKETS]; 2]; LATENCY_DOMAINS],
            buckets: [[[0; LATENCY_BUCKETS]; 2]; LATENCY_DOMAINS],
            timeout: [0; LATENCY_DOMAINS],
            domain_p99: [-1; LATENCY_DOMAINS],
            targets_ns: DEFAULT_TARGETS_NS,
            timer: None,
        }
    }

    /// The pending timer's expiry as a time (ns on the jiffies clock), if armed.
    pub fn timer_expires(&self) -> Option<u64> {
        self.timer
            .map(|j| j.wrapping_sub(INITIAL_JIFFIES).wrapping_mul(JIFFY_NS))
    }

    /// Kernel: kyber_completed_request() for a latency domain: both samples, then
    /// timer_reduce(jiffies + HZ / 10). Answers the new expiry (jiffies) if the timer moved.
    pub fn completed(
        &mut self,
        domain: usize,
        total_ns: u64,
        io_ns: u64,
        now_j: u64,
    ) -> Option<u64> {
        let target = self.targets_ns[domain];
        self.cpu[domain][TOTAL][bucket_of(target, total_ns)] += 1;
        self.cpu[domain][IO][bucket_of(target, io_ns)] += 1;
        let expires = now_j + HZ / 10;
        match self.timer {
            Some(t) if !time_after(t, expires) => None,
            _ => {
                self.timer = Some(expires);
                Some(expires)
            }
        }
    }

    /// Kernel: calculate_percentile(): the bucket holding the `percentile`th sample, or -1
    /// while the window lacks samples (fewer than 500 and under a second old).
    fn percentile(
        &mut self,
        domain: usize,
        kind: usize,
        percentile: u32,
        now_j: u64,
        out: &mut Vec<TimerEvent>,
    ) -> i32 {
        let buckets = &mut self.buckets[domain][kind];
        let samples = buckets.iter().fold(0u32, |s, &b| s.wrapping_add(b));
        if samples == 0 {
            return -1;
        }
        if self.timeout[domain] == 0 {
            self.timeout[domain] = (now_j + HZ).max(1);
        }
        // time_is_after_jiffies(timeout): the window is still open.
        if samples < MIN_SAMPLES && time_after(self.timeout[domain], now_j) {
            return -1;
        }
        self.timeout[domain] = 0;
        let mut left = samples.wrapping_mul(percentile).wrapping_add(99) / 100;
        let mut bucket = 0;
        while bucket < LATENCY_BUCKETS - 1 {
            if buckets[bucket] >= left {
                break;
            }
            left -= buckets[bucket];
            bucket += 1;
        }
        *buckets = [0; LATENCY_BUCKETS];
        out.push(TimerEvent::Percentile(format!(
            "{} {} p{percentile} {}/{} samples={samples}",
            NAMES[domain],
            TYPE_NAMES[kind],
            bucket + 1,
            GOOD_BUCKETS
        )));
        bucket as i32
    }

    /// Kernel: kyber_timer_fn(), run at jiffies `now_j`: what it read and resized, in order.
    pub fn timer_fn(&mut self, now_j: u64, tokens: &mut DomainTokens) -> Vec<TimerEvent> {
        self.timer = None;
        for (sum, cpu) in self.buckets.iter_mut().zip(self.cpu.iter_mut()) {
            for (s, c) in sum.iter_mut().flatten().zip(cpu.iter_mut().flatten()) {
                *s = s.wrapping_add(std::mem::take(c));
            }
        }
        let mut out = Vec::new();
        let mut bad = false;
        for domain in 0..LATENCY_DOMAINS {
            if self.percentile(domain, IO, 90, now_j, &mut out) >= GOOD_BUCKETS as i32 {
                bad = true;
            }
        }
        for domain in 0..LATENCY_DOMAINS {
            let mut p99 = self.percentile(domain, TOTAL, 99, now_j, &mut out);
            // A domain's p99 is kept for the next congested window, and used up by it.
            if bad {
                if p99 < 0 {
                    p99 = self.domain_p99[domain];
                }
                self.domain_p99[domain] = -1;
            } else if p99 >= 0 {
                self.domain_p99[domain] = p99;
            }
            if p99 < 0 {
                continue;
            }
            if bad || p99 >= GOOD_BUCKETS as i32 {
                let orig = tokens.depth(domain);
                let depth = (orig * (p99 as u32 + 1)) >> LATENCY_SHIFT;
                if let Some(depth) = tokens.resize(domain, depth) {
                    out.push(TimerEvent::Adjust { domain, depth });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets are a quarter-target wide, upper bounds inclusive: with a 2 ms target,
    /// 500 µs is bucket 0, 500.001 µs bucket 1, 2 ms bucket 3, anything past 3.5 ms bucket 7.
    #[test]
    fn buckets_are_quarter_targets_inclusive() {
        assert_eq!(bucket_of(2_000_000, 0), 0);
        assert_eq!(bucket_of(2_000_000, 500_000), 0);
        assert_eq!(bucket_of(2_000_000, 500_001), 1);
        assert_eq!(bucket_of(2_000_000, 2_000_000), 3);
        assert_eq!(bucket_of(2_000_000, 9_000_000), 7);
        assert_eq!(bucket_of(0, 5), 4, "a zero target divides by 1");
    }

    /// Congestion (a p90 I/O latency past target) shrinks a good domain: 500 reads of
    /// 1 ms total (bucket 1 of a 2 ms target) and 2.1 ms in the device (bucket 4) make the
    /// window bad, and the p99 total of bucket 1 scales 256 down to 256 * 2 / 4 = 128.
    #[test]
    fn congestion_shrinks_good_domains() {
        let mut lat = Latency::new();
        let mut tokens = DomainTokens::new();
        let j = INITIAL_JIFFIES + 1000;
        for _ in 0..500 {
            lat.completed(0, 1_000_000, 2_100_000, j);
        }
        let events = lat.timer_fn(j + 25, &mut tokens);
        assert_eq!(tokens.depth(0), 128);
        assert_eq!(
            events.last(),
            Some(&TimerEvent::Adjust {
                domain: 0,
                depth: 128
            })
        );
        assert_eq!(
            events[0],
            TimerEvent::Percentile("READ I/O p90 5/4 samples=500".into())
        );
    }

    /// Too few samples wait for the one-second window: 10 samples give no percentile at
    /// the first timer run, and do at a run a second later.
    #[test]
    fn few_samples_wait_a_second() {
        let mut lat = Latency::new();
        let mut tokens = DomainTokens::new();
        let j = INITIAL_JIFFIES + 1000;
        for _ in 0..10 {
            lat.completed(1, 1, 1, j);
        }
        assert!(lat.timer_fn(j + 25, &mut tokens).is_empty());
        lat.completed(1, 1, 1, j + 25);
        let later = lat.timer_fn(j + 25 + HZ, &mut tokens);
        assert_eq!(
            later[0],
            TimerEvent::Percentile("WRITE I/O p90 1/4 samples=11".into())
        );
    }

    /// The timer is armed by the first completion and only ever brought closer.
    #[test]
    fn timer_reduce_never_pushes_later() {
        let mut lat = Latency::new();
        assert_eq!(lat.completed(0, 1, 1, 100), Some(125));
        assert_eq!(lat.completed(0, 1, 1, 110), None);
        assert_eq!(
            lat.timer_expires(),
            Some(125u64.wrapping_sub(INITIAL_JIFFIES).wrapping_mul(JIFFY_NS))
        );
    }
}
