//! What the device is, as measured: its service time alone and how many requests it serves
//! at once.
//!
//! CFQ asks one question of the device (`hw_tag`: does it ever hold more than four
//! commands?) and BFQ measures its peak rate; neither asks what an idle window costs. On a
//! device that serves `P` requests at once, leaving it idle for `w` forgoes `P x w` of
//! service, so the same window that pays on a disk wastes 32 slots on a phone's UFS. The
//! gauge learns both numbers from completions, by Little's law: a request that was alone
//! in the device took the depth-1 service time `S1`; one dispatched at depth `d` that took
//! `R` saw the device serve `d x S1 / R` requests at once (about 1 on a disk, whose `R` grows
//! with `d`; about `d` on flash, whose `R` does not).

use crate::request::Time;

/// Parallelism is kept in hundredths.
pub const CENTI: u64 = 100;

/// The device as measured so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceGauge {
    /// Requests dispatched and not completed.
    pub in_flight: u32,
    /// Decaying mean response time of requests dispatched into an empty device (1/8 weight),
    /// for reads and for writes: a flash device's write cache answers writes in a few
    /// microseconds, which says nothing of its reads.
    service1_ns: [Option<Time>; 2],
    /// Decaying mean of `d x S1 / R` over requests dispatched at depth `d >= 2`, x100.
    parallelism_centi: u64,
    /// The most requests the device may hold.
    queue_depth: u32,
}

impl DeviceGauge {
    /// A device not measured yet. Choice: a rotational one is presumed serial and any other
    /// as parallel as its queue is deep, until completions say otherwise; both are facts the
    /// driver states, not settings.
    pub fn new(rotational: bool, queue_depth: u32) -> DeviceGauge {
        let queue_depth = queue_depth.max(1);
        let prior = if rotational {
            1
        } else {
            u64::from(queue_depth)
        };
        DeviceGauge {
            in_flight: 0,
            service1_ns: [None; 2],
            parallelism_centi: prior * CENTI,
            queue_depth,
        }
    }

    /// A request enters the device; returns its depth there (itself included).
    pub fn dispatched(&mut self) -> u32 {
        self.in_flight += 1;
        self.in_flight
    }

    /// A request in direction `dir` (0 reads, 1 writes) dispatched at `depth` completed
    /// after `response_ns`.
    pub fn completed(&mut self, dir: usize, depth: u32, response_ns: Time) {
        assert!(self.in_flight > 0, "completion with nothing in flight");
        self.in_flight -= 1;
        let response_ns = response_ns.max(1);
        let slot = &mut self.service1_ns[dir];
        // A request that took less than the depth-1 mean even with company shows the mean
        // is stale (the first requests of a run are not typical): it pulls the mean down.
        if depth <= 1 || slot.is_some_and(|s| response_ns < s) {
            *slot = Some(match *slot {
                Some(s) => s - s / 8 + response_ns / 8,
                None => response_ns,
            });
            return;
        }
        let Some(s1) = *slot else { return };
        let depth = u64::from(depth.min(self.queue_depth));
        let sample = (depth * s1 * CENTI / response_ns).clamp(CENTI, depth * CENTI);
        self.parallelism_centi = self.parallelism_centi - self.parallelism_centi / 16 + sample / 16;
    }

    /// Requests served at once, x100 (at least 100).
    pub fn parallelism_centi(&self) -> u64 {
        self.parallelism_centi.max(CENTI)
    }

    /// Depth-1 service time of reads (of writes, while no read was seen), once measured.
    pub fn service1_ns(&self) -> Option<Time> {
        self.service1_ns[0].or(self.service1_ns[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk: responses grow with depth, so parallelism settles near 1 even though 31
    /// commands fit in its queue.
    #[test]
    fn a_serial_device_measures_about_one() {
        let mut g = DeviceGauge::new(false, 31);
        g.dispatched();
        g.completed(0, 1, 8_000_000);
        for _ in 0..200 {
            for _ in 0..4 {
                g.dispatched();
            }
            for _ in 0..4 {
                g.completed(0, 4, 32_000_000);
            }
        }
        assert!(g.parallelism_centi() < 120, "{}", g.parallelism_centi());
    }

    /// Flash: four requests at once take as long as one, so parallelism approaches 4.
    #[test]
    fn a_parallel_device_measures_its_depth() {
        let mut g = DeviceGauge::new(true, 32);
        assert_eq!(g.parallelism_centi(), 100);
        g.dispatched();
        g.completed(0, 1, 100_000);
        for _ in 0..200 {
            for _ in 0..4 {
                g.dispatched();
            }
            for _ in 0..4 {
                g.completed(0, 4, 100_000);
            }
        }
        assert!(g.parallelism_centi() > 390, "{}", g.parallelism_centi());
    }
}
