//! Disk counters in `/proc/diskstats` terms, kept by a driver from its own request events
//! (allocation, completion, merge) and turned into fio's `disk_util` numbers at the end.

use iosched_core::{Time, NSEC_PER_MSEC};

use crate::stats::DiskStats;

/// What the kernel's `part_stat` would hold for the device, counted by either driver.
#[derive(Clone, Debug, Default)]
pub struct DiskAccounting {
    /// Completed requests, by data direction (0 read, 1 write).
    ios: [u64; 2],
    /// Bios merged into queued requests, by direction.
    merges: [u64; 2],
    sectors: [u64; 2],
    /// Time from allocation to completion, summed per direction.
    ticks_ns: [u64; 2],
    /// Requests allocated and not yet completed (the kernel's `in_flight`).
    outstanding: u64,
    busy_since: Time,
    io_ticks_ns: u64,
    in_queue_ns: u128,
    last_change: Time,
}

impl DiskAccounting {
    /// Time-weighted occupancy up to `now`; a clock that stands still adds nothing.
    #[inline]
    fn account(&mut self, now: Time) {
        let since = now.saturating_sub(self.last_change);
        self.in_queue_ns += u128::from(self.outstanding) * u128::from(since);
        self.last_change = now.max(self.last_change);
    }

    /// A request was allocated (the device is busy from the first until the last is done).
    #[inline]
    pub fn start(&mut self, now: Time) {
        self.account(now);
        if self.outstanding == 0 {
            self.busy_since = now;
        }
        self.outstanding += 1;
    }

    /// A request allocated with [`DiskAccounting::start`] completed.
    #[inline]
    pub fn done(&mut self, now: Time) {
        self.account(now);
        assert!(self.outstanding > 0, "disk in-flight count went negative");
        self.outstanding -= 1;
        if self.outstanding == 0 {
            self.io_ticks_ns += now.saturating_sub(self.busy_since);
        }
    }

    /// A completed data request of direction `dir` (0 read, 1 write): its size and its time
    /// since allocation. Flushes are not counted, as in `/proc/diskstats` before 5.5.
    pub fn data_completed(&mut self, dir: usize, sectors: u32, submitted_at: Time, now: Time) {
        self.ios[dir] += 1;
        self.sectors[dir] += u64::from(sectors);
        self.ticks_ns[dir] += now.saturating_sub(submitted_at);
    }

    /// A bio of direction `dir` joined a queued request.
    pub fn merged(&mut self, dir: usize) {
        self.merges[dir] += 1;
    }

    /// The counters as fio prints them, over `elapsed_ns` of run time.
    pub fn stats(&self, name: String, elapsed_ns: Time) -> DiskStats {
        let elapsed = elapsed_ns.max(1);
        DiskStats {
            name,
            read_ios: self.ios[0],
            write_ios: self.ios[1],
            read_sectors: self.sectors[0],
            write_sectors: self.sectors[1],
            read_merges: self.merges[0],
            write_merges: self.merges[1],
            read_ticks_ms: self.ticks_ns[0] / NSEC_PER_MSEC,
            write_ticks_ms: self.ticks_ns[1] / NSEC_PER_MSEC,
            in_queue_ms: (self.in_queue_ns / u128::from(NSEC_PER_MSEC)) as u64,
            util_pct: (self.io_ticks_ns as f64 * 100.0 / elapsed as f64).min(100.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_time_counts_overlapping_requests_once() {
        let mut disk = DiskAccounting::default();
        disk.start(0);
        disk.start(10);
        disk.done(30);
        disk.done(40);
        // Idle from 40 to 100: busy 40 of 100 ns.
        disk.start(100);
        disk.done(100);
        let stats = disk.stats("sda".to_string(), 100);
        assert!((stats.util_pct - 40.0).abs() < 1e-9, "{}", stats.util_pct);
    }

    #[test]
    fn queue_time_weights_each_outstanding_request() {
        let mut disk = DiskAccounting::default();
        disk.start(0);
        disk.start(0);
        disk.done(2 * NSEC_PER_MSEC);
        disk.done(3 * NSEC_PER_MSEC);
        // Two requests for 2 ms, then one for 1 ms.
        assert_eq!(disk.stats(String::new(), 1).in_queue_ms, 5);
    }

    #[test]
    fn data_and_merges_are_counted_per_direction() {
        let mut disk = DiskAccounting::default();
        disk.data_completed(1, 8, 0, 3 * NSEC_PER_MSEC);
        disk.data_completed(0, 16, NSEC_PER_MSEC, 2 * NSEC_PER_MSEC);
        disk.merged(1);
        let stats = disk.stats(String::new(), 1);
        assert_eq!((stats.read_ios, stats.write_ios), (1, 1));
        assert_eq!((stats.read_sectors, stats.write_sectors), (16, 8));
        assert_eq!((stats.read_ticks_ms, stats.write_ticks_ms), (1, 3));
        assert_eq!((stats.read_merges, stats.write_merges), (0, 1));
    }

    #[test]
    #[should_panic(expected = "went negative")]
    fn completing_more_than_started_is_a_bug() {
        let mut disk = DiskAccounting::default();
        disk.done(1);
    }
}
