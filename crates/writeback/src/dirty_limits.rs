//! Dirty thresholds and writer throttling.
//!
//! Thresholds follow `global_dirty_limits()`: `dirty_bytes` (rounded up to pages) when set,
//! else `dirty_ratio` percent of dirtyable memory; the background threshold likewise from
//! its pair, halved to below the hard limit when it is not already below it.
//!
//! Choice: dirtyable memory is the page cache's capacity
//! ([`WritebackConfig::cache_pages`]: memory less the struct page array and the free
//! reserve); the simulator has no anonymous memory to subtract.
//!
//! Throttling follows the IO-less `balance_dirty_pages()` of 3.2+ in shape, reduced:
//! - at or below the *freerun* ceiling `(background + limit) / 2` writers run free;
//! - between freerun and the limit a writer that dirtied `n` pages sleeps for
//!   `n / rate`, where `rate` is the estimated write bandwidth scaled down linearly from
//!   1 at freerun to 1/64 at the limit (the kernel's `pos_ratio` is a cubic; linear keeps the
//!   same end points), capped at `MAX_PAUSE` (200 ms);
//! - above the limit the writer may not dirty more: it sleeps `MAX_PAUSE` and asks again
//!   ([`Throttle::Block`]). Dirty + writeback pages therefore never exceed the limit by more
//!   than one writer's step.
//!
//! With `dirty_throttle=writeback` the pre-3.2 rule applies instead: a writer finding dirty
//! plus writeback pages over the limit writes back `sync_writeback_pages()` of them itself
//! ([`Throttle::WriteBack`]) and then dirties on; it is asked again only after a CPU's
//! ratelimit of pages, so the limit may be exceeded by that much.
//!
//! The bandwidth estimate is `bdi_update_write_bandwidth()` reduced: pages whose writeback
//! completed in each 200 ms period, folded in with weight 1/4; 100 MB/s to start (INIT_BW).

use iosched_core::{Time, NSEC_PER_MSEC, NSEC_PER_SEC};

use crate::config::WritebackConfig;
use crate::PAGE_SIZE;

/// 200 ms: the longest single throttling sleep (the kernel's MAX_PAUSE, HZ/5).
pub const MAX_PAUSE_NS: Time = 200 * NSEC_PER_MSEC;
/// 200 ms: the bandwidth estimation period (BANDWIDTH_INTERVAL).
pub const BANDWIDTH_INTERVAL_NS: Time = 200 * NSEC_PER_MSEC;
/// 100 MB/s in pages per second: the initial bandwidth guess (INIT_BW).
pub const INIT_BW_PAGES: u64 = (100 << 20) / PAGE_SIZE;

/// The two thresholds, in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyThresholds {
    /// Above this the flusher writes back in the background.
    pub background: u64,
    /// Above this writers are stopped.
    pub limit: u64,
}

impl DirtyThresholds {
    /// Kernel: global_dirty_limits().
    pub fn from_config(config: &WritebackConfig) -> DirtyThresholds {
        let mem = config.cache_pages();
        let limit = if config.dirty_bytes > 0 {
            config.dirty_bytes.div_ceil(PAGE_SIZE)
        } else {
            mem * u64::from(config.dirty_ratio) / 100
        };
        let mut background = if config.dirty_background_bytes > 0 {
            config.dirty_background_bytes.div_ceil(PAGE_SIZE)
        } else {
            mem * u64::from(config.dirty_background_ratio) / 100
        };
        if background >= limit {
            background = limit / 2;
        }
        DirtyThresholds { background, limit }
    }

    /// Where throttling starts.
    pub fn freerun(&self) -> u64 {
        (self.background + self.limit) / 2
    }
}

/// What `balance_dirty_pages` tells a writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throttle {
    /// Carry on.
    None,
    /// The write happens; then sleep this long.
    Pause(Time),
    /// Over the limit: do not dirty anything yet; sleep this long and ask again.
    Block(Time),
    /// Over the limit, pre-3.2 (`dirty_throttle=writeback`): write back up to this many of
    /// the device's dirty pages yourself ([`crate::Writeback::writer_writeback`]), then
    /// dirty.
    WriteBack { chunk: u64 },
}

/// 16..=1024 pages: how many pages a CPU dirties between `balance_dirty_pages()` calls
/// (`ratelimit_pages`, from `writeback_set_ratelimit()`: memory / (CPUs × 32), at most 4 MiB).
pub fn ratelimit_pages(mem_pages: u64, cpus: u64) -> u64 {
    (mem_pages / (cpus.max(1) * 32)).clamp(16, (4 << 20) / PAGE_SIZE)
}

/// What a throttled writer writes back per round before ≤ 3.1's `balance_dirty_pages()`
/// lets it go: `sync_writeback_pages()`, one and a half times the ratelimit.
pub fn sync_writeback_pages(mem_pages: u64, cpus: u64) -> u64 {
    let ratelimit = ratelimit_pages(mem_pages, cpus);
    ratelimit + ratelimit / 2
}

/// ≤ 3.1's test in `balance_dirty_pages()`: the writer must write back when dirty plus
/// writeback pages exceed the limit (the per-device share of it is the whole limit with
/// one busy device) and background writeback alone is not catching up (above freerun).
pub fn over_limit_legacy(thresholds: DirtyThresholds, nr: u64) -> bool {
    nr > thresholds.limit && nr >= thresholds.freerun()
}

/// Estimated write bandwidth of one device.
#[derive(Clone, Copy, Debug)]
pub struct Bandwidth {
    pages_per_s: u64,
    period_start: Time,
    period_pages: u64,
}

impl Default for Bandwidth {
    fn default() -> Self {
        Bandwidth {
            pages_per_s: INIT_BW_PAGES,
            period_start: 0,
            period_pages: 0,
        }
    }
}

impl Bandwidth {
    pub fn pages_per_s(&self) -> u64 {
        self.pages_per_s
    }

    /// `pages` finished writeback at `now`. Kernel: bdi_update_write_bandwidth(), reduced.
    pub fn completed(&mut self, pages: u64, now: Time) {
        self.period_pages += pages;
        let elapsed = now.saturating_sub(self.period_start);
        if elapsed >= BANDWIDTH_INTERVAL_NS {
            let measured = (u128::from(self.period_pages) * u128::from(NSEC_PER_SEC)
                / u128::from(elapsed)) as u64;
            self.pages_per_s = ((3 * self.pages_per_s + measured) / 4).max(1);
            self.period_start = now;
            self.period_pages = 0;
        }
    }
}

/// Kernel: balance_dirty_pages(), reduced (see the module text). `nr` is dirty + writeback
/// pages *before* the writer dirties `pages` more.
pub fn balance_dirty_pages(
    thresholds: DirtyThresholds,
    nr: u64,
    pages: u64,
    bandwidth: &Bandwidth,
) -> Throttle {
    let freerun = thresholds.freerun();
    if nr <= freerun {
        return Throttle::None;
    }
    if nr >= thresholds.limit {
        return Throttle::Block(MAX_PAUSE_NS);
    }
    let span = (thresholds.limit - freerun).max(1);
    let left = thresholds.limit - nr;
    // rate = bw × left/span, floored at bw/64.
    let bw = u128::from(bandwidth.pages_per_s().max(1));
    let rate = (bw * u128::from(left) / u128::from(span))
        .max(bw / 64)
        .max(1);
    let pause = u128::from(pages) * u128::from(NSEC_PER_SEC) / rate;
    Throttle::Pause((pause as Time).min(MAX_PAUSE_NS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_thresholds_are_ten_and_twenty_percent_of_dirtyable_memory() {
        let config = WritebackConfig::default();
        let thresholds = DirtyThresholds::from_config(&config);
        let dirtyable = config.cache_pages();
        assert!(dirtyable < config.mem_pages());
        assert_eq!(thresholds.limit, dirtyable / 5);
        assert_eq!(thresholds.background, dirtyable / 10);
    }

    #[test]
    fn background_above_limit_is_halved() {
        let mut config = WritebackConfig::default();
        config.set("dirty_bytes", "40m").unwrap();
        config.set("dirty_background_bytes", "80m").unwrap();
        let thresholds = DirtyThresholds::from_config(&config);
        assert_eq!(thresholds.limit, 10240);
        assert_eq!(thresholds.background, 5120);
    }

    /// Proves the pause grows as dirty memory approaches the limit, and blocks past it.
    #[test]
    fn pause_grows_towards_the_limit() {
        let thresholds = DirtyThresholds {
            background: 1000,
            limit: 2000,
        };
        let bw = Bandwidth::default();
        assert_eq!(
            balance_dirty_pages(thresholds, 1500, 1, &bw),
            Throttle::None
        );
        let Throttle::Pause(near) = balance_dirty_pages(thresholds, 1900, 1, &bw) else {
            panic!("expected a pause")
        };
        let Throttle::Pause(far) = balance_dirty_pages(thresholds, 1600, 1, &bw) else {
            panic!("expected a pause")
        };
        assert!(near > far, "{near} <= {far}");
        assert_eq!(
            balance_dirty_pages(thresholds, 2000, 1, &bw),
            Throttle::Block(MAX_PAUSE_NS)
        );
    }

    #[test]
    fn write_chunk_is_one_and_a_half_ratelimits() {
        // 4 GiB, 2 CPUs: 16384 pages by the formula, capped at 4 MiB = 1024 pages.
        assert_eq!(sync_writeback_pages((4 << 30) / PAGE_SIZE, 2), 1536);
        // 64 MiB: 256 pages.
        assert_eq!(sync_writeback_pages((64 << 20) / PAGE_SIZE, 2), 384);
        // Tiny memory: the floor of 16.
        assert_eq!(sync_writeback_pages(100, 2), 24);
    }

    #[test]
    fn bandwidth_follows_completions() {
        let mut bw = Bandwidth::default();
        // 51200 pages/s measured for 2 s.
        for step in 1..=10 {
            bw.completed(10_240, step * BANDWIDTH_INTERVAL_NS);
        }
        assert!(bw.pages_per_s() > 45_000, "{}", bw.pages_per_s());
    }
}
