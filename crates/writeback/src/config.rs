//! The writeback knobs, by their sysctl names (`/proc/sys/vm/dirty_*`), plus the few
//! simulator-only ones (`mem`, `flusher`, `flushers_per_bdi`, `dirty_throttle`,
//! `read_ahead_kb`, `max_sectors_kb`).
//!
//! Writing `dirty_bytes` zeroes `dirty_ratio` and the other way round, as the kernel's
//! `dirty_bytes_handler()` / `dirty_ratio_handler()` do; the same holds for the background
//! pair. Values are validated with the kernel's ranges.

use std::fmt;

use crate::PAGE_SIZE;

/// Which writeback thread model runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlusherMode {
    /// 2.6.32+: one flusher per backing device, created when it first has dirty data and
    /// exiting after idling; blocks on request allocation when the queue is full.
    PerBdi,
    /// ≤ 2.6.31: a global pool of 2–8 `pdflush` threads that back off when a queue is
    /// congested (`congestion_wait`).
    Pdflush,
}

impl FlusherMode {
    pub fn name(self) -> &'static str {
        match self {
            FlusherMode::PerBdi => "per-bdi",
            FlusherMode::Pdflush => "pdflush",
        }
    }
}

/// How `balance_dirty_pages()` throttles a writer over the dirty limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirtyThrottle {
    /// 3.2+: the writer sleeps for a time paced by the device's write bandwidth; only
    /// flushers write back.
    IoLess,
    /// ≤ 3.1: the writer writes back a chunk of the device's dirty pages itself
    /// (`writeback_inodes()` from `balance_dirty_pages()`), blocking on the request pool,
    /// and `congestion_wait()`s when it found nothing to write.
    Writeback,
}

impl DirtyThrottle {
    pub fn name(self) -> &'static str {
        match self {
            DirtyThrottle::IoLess => "io-less",
            DirtyThrottle::Writeback => "writeback",
        }
    }
}

/// Which request list's freed requests end a `congestion_wait(WRITE)`. Non-blocking
/// writeback backs off on the async list's congestion in every kernel modelled
/// (`bdi_write_congested()` reads `BDI_async_congested`, checked in the 2.6.30 source).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionList {
    /// The async list, as writeback means: the READ/WRITE lists before 2.6.30 and
    /// `BLK_RW_ASYNC` from 2.6.31 (8aa7e847d834, "Fix congestion_wait() sync/async vs
    /// read/write confusion", July 2009).
    Async,
    /// 2.6.30: 1faa16d22877 split the request lists into sync and async (index 1 and 0)
    /// but `congestion_wait(WRITE, HZ/10)` kept passing WRITE (1), so it slept on the
    /// *sync* list's wait queue (`congestion_wqh[1]`): async writeback freeing requests
    /// never woke it, and it slept its full 100 ms unless a sync request freed.
    Sync,
}

impl CongestionList {
    pub fn name(self) -> &'static str {
        match self {
            CongestionList::Async => "async",
            CongestionList::Sync => "sync",
        }
    }
}

/// How a file system's `writepages` walks a file in cyclic (background, throttled)
/// writeback: where it looks for dirty pages and where `mapping->writeback_index` is left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writepages {
    /// `write_cache_pages()`: from `writeback_index` to the end, then wrapping to the start
    /// within the same call; the index is left after the last page written.
    Generic,
    /// ext4's delayed-allocation `ext4_da_writepages()` as in 2.6.30, 2.6.31 and 2.6.32
    /// (read in those sources): a call wraps to the file's start only when it wrote nothing
    /// from `writeback_index` to the end, and leaves the index at where the call started
    /// plus the number of pages it wrote (`index += pages_written`), not after the last.
    Ext4Legacy,
}

impl Writepages {
    pub fn name(self) -> &'static str {
        match self {
            Writepages::Generic => "generic",
            Writepages::Ext4Legacy => "ext4-2.6.30",
        }
    }
}

/// Every knob of the writeback policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WritebackConfig {
    /// Simulated RAM, bytes (the dirtyable memory the ratios apply to). 4 GiB by default.
    pub mem_bytes: u64,
    /// `vm.dirty_ratio`, percent of memory: the hard limit where writers are throttled.
    pub dirty_ratio: u32,
    /// `vm.dirty_background_ratio`, percent: above this the flusher starts background writeback.
    pub dirty_background_ratio: u32,
    /// `vm.dirty_bytes`: the hard limit in bytes (0 = use the ratio).
    pub dirty_bytes: u64,
    /// `vm.dirty_background_bytes` (0 = use the ratio).
    pub dirty_background_bytes: u64,
    /// `vm.dirty_expire_centisecs`: data older than this is written by periodic writeback.
    pub dirty_expire_centisecs: u32,
    /// `vm.dirty_writeback_centisecs`: period of the flusher's periodic (kupdate) wake-up.
    pub dirty_writeback_centisecs: u32,
    /// `queue/read_ahead_kb`: the largest read-ahead window.
    pub read_ahead_kb: u32,
    /// `queue/max_sectors_kb`: the largest request writeback builds.
    pub max_sectors_kb: u32,
    /// `queue/nr_requests`: requests per cgroup and direction before submitters sleep; its
    /// congestion marks are where non-blocking writeback backs off.
    pub nr_requests: u32,
    pub flusher: FlusherMode,
    /// Flusher threads per device in `per-bdi` mode (the patch set's "several per device").
    pub flushers_per_bdi: u32,
    /// How writers over the dirty limit are throttled (`io-less`, the default, or the
    /// pre-3.2 `writeback`).
    pub dirty_throttle: DirtyThrottle,
    /// Which request list's frees end `congestion_wait()` (`async`, or `sync` for 2.6.30).
    pub congestion: CongestionList,
    /// How cyclic writeback walks a file (`generic`, or ext4's of 2.6.30–2.6.32).
    pub writepages: Writepages,
    /// CPUs of the machine, set by the driver (not a knob): they size the kernel's per-CPU
    /// dirtying ratelimit. 2 by default, the simulated machine's count.
    pub cpus: u64,
}

impl Default for WritebackConfig {
    fn default() -> Self {
        WritebackConfig {
            mem_bytes: 4 << 30,
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
            read_ahead_kb: 128,
            max_sectors_kb: 512,
            nr_requests: iosched_core::request_pool::DEFAULT_NR_REQUESTS,
            flusher: FlusherMode::PerBdi,
            flushers_per_bdi: 1,
            dirty_throttle: DirtyThrottle::IoLess,
            congestion: CongestionList::Async,
            writepages: Writepages::Generic,
            cpus: 2,
        }
    }
}

/// A knob that could not be set.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KnobError {
    Unknown(String),
    Invalid {
        name: String,
        value: String,
        expected: &'static str,
    },
}

impl fmt::Display for KnobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobError::Unknown(name) => write!(f, "unknown writeback knob '{name}'"),
            KnobError::Invalid {
                name,
                value,
                expected,
            } => write!(f, "{name}={value}: expected {expected}"),
        }
    }
}

impl std::error::Error for KnobError {}

/// Knob names in table order.
pub const KNOBS: &[&str] = &[
    "mem",
    "dirty_ratio",
    "dirty_background_ratio",
    "dirty_bytes",
    "dirty_background_bytes",
    "dirty_expire_centisecs",
    "dirty_writeback_centisecs",
    "read_ahead_kb",
    "max_sectors_kb",
    "nr_requests",
    "flusher",
    "flushers_per_bdi",
    "dirty_throttle",
    "congestion",
    "writepages",
];

/// What each knob means, in [`KNOBS`] order (for `iosched knobs`).
pub const KNOB_MEANINGS: &[&str] = &[
    "simulated memory: the page cache's size and what the dirty ratios apply to",
    "vm.dirty_ratio: percent of memory dirty+writeback where writers are throttled",
    "vm.dirty_background_ratio: percent of memory dirty where background writeback starts",
    "vm.dirty_bytes: the throttling limit in bytes (0 = use dirty_ratio)",
    "vm.dirty_background_bytes: the background threshold in bytes (0 = use the ratio)",
    "vm.dirty_expire_centisecs: age at which periodic writeback takes dirty data",
    "vm.dirty_writeback_centisecs: period of the flushers' periodic wake-up",
    "queue/read_ahead_kb: largest read-ahead window",
    "queue/max_sectors_kb: largest request writeback builds",
    "queue/nr_requests: requests per cgroup and direction before submitters sleep; writeback congests at 7/8",
    "per-bdi (2.6.32+: a thread per device) or pdflush (<= 2.6.31: a global 2-8 thread pool)",
    "per-bdi flusher threads per device",
    "io-less (3.2+: writers over the limit sleep) or writeback (<= 3.1: they write back a chunk)",
    "request list whose frees end congestion_wait(): async, or sync (2.6.30: congestion_wait(WRITE) sleeps its full 100 ms)",
    "how cyclic writeback walks a file: generic (write_cache_pages) or ext4-2.6.30 (ext4_da_writepages of 2.6.30-2.6.32: wraps only when it wrote nothing)",
];

/// Parses `4096`, `64k`, `4g` (binary multiples, as fio and the kernel's `memparse` read them).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    let lower = lower.trim_end_matches("ib").trim_end_matches('b');
    let (digits, shift) = match lower.chars().last()? {
        'k' => (&lower[..lower.len() - 1], 10),
        'm' => (&lower[..lower.len() - 1], 20),
        'g' => (&lower[..lower.len() - 1], 30),
        't' => (&lower[..lower.len() - 1], 40),
        _ => (lower, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

impl WritebackConfig {
    /// Whether `name` is one of this policy's knobs (the CLI splits `--set` with it).
    pub fn is_knob(name: &str) -> bool {
        KNOBS.contains(&name)
    }

    /// Sets one knob with the kernel's validation.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), KnobError> {
        let invalid = |expected| KnobError::Invalid {
            name: name.to_string(),
            value: value.to_string(),
            expected,
        };
        // A number in the knob's range, as u32, or the error naming that range.
        let bounded = |range: std::ops::RangeInclusive<u64>, expected| {
            value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| range.contains(n))
                .map(|n| n as u32)
                .ok_or_else(|| invalid(expected))
        };
        match name {
            "mem" => {
                let bytes = parse_size(value).ok_or_else(|| invalid("a size like 4g"))?;
                if bytes < 16 * PAGE_SIZE {
                    return Err(invalid("at least 64k"));
                }
                self.mem_bytes = bytes;
            }
            "dirty_ratio" => {
                self.dirty_ratio = bounded(0..=100, "a percentage 0..=100")?;
                self.dirty_bytes = 0;
            }
            "dirty_background_ratio" => {
                self.dirty_background_ratio = bounded(0..=100, "a percentage 0..=100")?;
                self.dirty_background_bytes = 0;
            }
            "dirty_bytes" => {
                // Kernel: dirty_bytes_min is two pages.
                self.dirty_bytes = parse_size(value)
                    .filter(|b| *b >= 2 * PAGE_SIZE)
                    .ok_or_else(|| invalid("bytes >= 8192"))?;
                self.dirty_ratio = 0;
            }
            "dirty_background_bytes" => {
                self.dirty_background_bytes = parse_size(value)
                    .filter(|b| *b >= 1)
                    .ok_or_else(|| invalid("bytes >= 1"))?;
                self.dirty_background_ratio = 0;
            }
            "dirty_expire_centisecs" => {
                self.dirty_expire_centisecs = bounded(0..=u64::from(u32::MAX), "centiseconds")?;
            }
            "dirty_writeback_centisecs" => {
                self.dirty_writeback_centisecs = bounded(0..=u64::from(u32::MAX), "centiseconds")?;
            }
            "read_ahead_kb" => self.read_ahead_kb = bounded(0..=1 << 20, "KiB 0..=1048576")?,
            "max_sectors_kb" => self.max_sectors_kb = bounded(4..=32768, "KiB 4..=32768")?,
            // The kernel's floor is BLKDEV_MIN_RQ (4).
            "nr_requests" => self.nr_requests = bounded(4..=65_536, "requests 4..=65536")?,
            "flushers_per_bdi" => self.flushers_per_bdi = bounded(1..=64, "1..=64")?,
            _ => return self.set_choice(name, value),
        }
        Ok(())
    }

    /// The knobs that take one of a few words.
    fn set_choice(&mut self, name: &str, value: &str) -> Result<(), KnobError> {
        let word = value.trim();
        let invalid = |expected| KnobError::Invalid {
            name: name.to_string(),
            value: value.to_string(),
            expected,
        };
        match name {
            "flusher" => {
                self.flusher = match word {
                    "per-bdi" | "bdi" => FlusherMode::PerBdi,
                    "pdflush" => FlusherMode::Pdflush,
                    _ => return Err(invalid("per-bdi or pdflush")),
                };
            }
            "dirty_throttle" => {
                self.dirty_throttle = match word {
                    "io-less" => DirtyThrottle::IoLess,
                    "writeback" => DirtyThrottle::Writeback,
                    _ => return Err(invalid("io-less or writeback")),
                };
            }
            "congestion" => {
                self.congestion = match word {
                    "async" => CongestionList::Async,
                    "sync" => CongestionList::Sync,
                    _ => return Err(invalid("async or sync")),
                };
            }
            "writepages" => {
                self.writepages = match word {
                    "generic" => Writepages::Generic,
                    "ext4-2.6.30" => Writepages::Ext4Legacy,
                    _ => return Err(invalid("generic or ext4-2.6.30")),
                };
            }
            _ => return Err(KnobError::Unknown(name.to_string())),
        }
        Ok(())
    }

    /// Every knob with its current value, in table order, for the JSON echo.
    pub fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("mem", self.mem_bytes.to_string()),
            ("dirty_ratio", self.dirty_ratio.to_string()),
            (
                "dirty_background_ratio",
                self.dirty_background_ratio.to_string(),
            ),
            ("dirty_bytes", self.dirty_bytes.to_string()),
            (
                "dirty_background_bytes",
                self.dirty_background_bytes.to_string(),
            ),
            (
                "dirty_expire_centisecs",
                self.dirty_expire_centisecs.to_string(),
            ),
            (
                "dirty_writeback_centisecs",
                self.dirty_writeback_centisecs.to_string(),
            ),
            ("read_ahead_kb", self.read_ahead_kb.to_string()),
            ("max_sectors_kb", self.max_sectors_kb.to_string()),
            ("nr_requests", self.nr_requests.to_string()),
            ("flusher", self.flusher.name().to_string()),
            ("flushers_per_bdi", self.flushers_per_bdi.to_string()),
            ("dirty_throttle", self.dirty_throttle.name().to_string()),
            ("congestion", self.congestion.name().to_string()),
            ("writepages", self.writepages.name().to_string()),
        ]
    }

    /// Pages in the simulated memory.
    pub fn mem_pages(&self) -> u64 {
        self.mem_bytes / PAGE_SIZE
    }

    /// Pages the page cache may hold: memory less what the kernel keeps from it by formula —
    /// the `struct page` array (64 bytes per 4 KiB page) and the free reserve up to the high
    /// watermark (`min_free_kbytes` = √(16 × memory in KiB), clamped to 128 KiB..64 MiB; high
    /// = 1.5 × min). Kernel text, slab and user space are not modelled: their size is the
    /// machine's, not the kernel's. Dirty limits apply to the same pages (the kernel's
    /// dirtyable memory is free plus file pages).
    pub fn cache_pages(&self) -> u64 {
        let mem = self.mem_pages();
        let struct_pages = mem * 64 / PAGE_SIZE;
        let kib = self.mem_bytes / 1024;
        let min_free_kib = ((16 * kib) as f64).sqrt() as u64;
        let high_kib = min_free_kib.clamp(128, 65_536) * 3 / 2;
        mem.saturating_sub(struct_pages + high_kib * 1024 / PAGE_SIZE)
            .max(16)
    }

    /// Largest writeback request, in pages.
    pub fn max_request_pages(&self) -> u64 {
        (u64::from(self.max_sectors_kb) * 1024 / PAGE_SIZE).max(1)
    }

    /// Largest read-ahead window, in pages.
    pub fn ra_pages(&self) -> u64 {
        u64::from(self.read_ahead_kb) * 1024 / PAGE_SIZE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_has_a_meaning() {
        assert_eq!(KNOBS.len(), KNOB_MEANINGS.len());
        let listed: Vec<&str> = WritebackConfig::default()
            .knobs()
            .iter()
            .map(|(name, _)| *name)
            .collect();
        assert_eq!(listed, KNOBS);
    }

    #[test]
    fn bytes_and_ratio_exclude_each_other() {
        let mut config = WritebackConfig::default();
        config.set("dirty_bytes", "64m").unwrap();
        assert_eq!(config.dirty_ratio, 0);
        assert_eq!(config.dirty_bytes, 64 << 20);
        config.set("dirty_ratio", "30").unwrap();
        assert_eq!(config.dirty_bytes, 0);
        assert_eq!(config.dirty_ratio, 30);
    }

    #[test]
    fn kernel_ranges_are_enforced() {
        let mut config = WritebackConfig::default();
        assert!(config.set("dirty_ratio", "101").is_err());
        assert!(
            config.set("dirty_bytes", "4096").is_err(),
            "below two pages"
        );
        assert!(config.set("flusher", "kworker").is_err());
        assert!(matches!(
            config.set("dirty_nosuch", "1"),
            Err(KnobError::Unknown(_))
        ));
        config.set("flusher", "pdflush").unwrap();
        assert_eq!(config.flusher, FlusherMode::Pdflush);
        assert!(config.set("dirty_throttle", "sleep").is_err());
        config.set("dirty_throttle", "writeback").unwrap();
        assert_eq!(config.dirty_throttle, DirtyThrottle::Writeback);
        assert!(config.set("congestion", "write").is_err());
        config.set("congestion", "sync").unwrap();
        assert_eq!(config.congestion, CongestionList::Sync);
        assert!(config.set("writepages", "ext4").is_err());
        config.set("writepages", "ext4-2.6.30").unwrap();
        assert_eq!(config.writepages, Writepages::Ext4Legacy);
        config.set("mem", "512m").unwrap();
        assert_eq!(config.mem_pages(), 131_072);
        // 512 MiB: 2048 pages of struct page, min_free_kbytes 2896 → high 4344 KiB = 1086
        // pages: the cache holds 127 938 pages, a 512 MiB file no longer fits.
        assert_eq!(config.cache_pages(), 131_072 - 2048 - 1086);
    }
}
