//! The file-system layer's results as people read them: the `writeback` object of the run's
//! `iosched` JSON and a block of text after fio's disk stats.

use std::fmt::Write as _;

use iosched_core::Time;
use iosched_writeback::PAGE_SIZE;
use serde_json::{json, Map, Value};

use super::FsOutcome;

const MIB: f64 = (1u64 << 20) as f64;

fn mib(pages: u64) -> f64 {
    (pages * PAGE_SIZE) as f64 / MIB
}

fn seconds(ns: Time) -> f64 {
    ns as f64 / 1e9
}

impl FsOutcome {
    /// The `writeback` object: knobs, thresholds, page counts, per-clone throttled time
    /// (`clones[i]` names clone `i`, e.g. `job (pid 1000)`), and the 100 ms time series of
    /// dirty bytes, writeback bytes and live writeback threads, one array each.
    pub fn to_json(&self, clones: &[(String, u32)]) -> Value {
        let knobs: Map<String, Value> = self
            .knobs
            .iter()
            .map(|(name, value)| {
                let value = value
                    .parse::<u64>()
                    .map(Value::from)
                    .unwrap_or_else(|_| Value::from(value.as_str()));
                (name.clone(), value)
            })
            .collect();
        let throttled: Vec<Value> = clones
            .iter()
            .zip(&self.throttled_ns)
            .map(|((job, pid), &ns)| json!({ "job": job, "pid": pid, "throttled_ns": ns }))
            .collect();
        let interval = match self.series.as_slice() {
            [first, second, ..] => second.time_ns - first.time_ns,
            _ => 0,
        };
        json!({
            "knobs": Value::Object(knobs),
            "dirty_limit_bytes": self.dirty_limit_pages * PAGE_SIZE,
            "dirty_background_bytes": self.dirty_background_pages * PAGE_SIZE,
            "dirty_peak_bytes": self.dirty_peak_pages * PAGE_SIZE,
            "pages_dirtied": self.pages_dirtied,
            "pages_written_back": self.pages_written_back,
            "pages_cancelled": self.pages_cancelled,
            "dirty_pages_at_end": self.dirty_pages_at_end,
            "buffered_read_bytes": self.read_bytes,
            "cache_hit_pages": self.cache_hit_pages,
            "evicted_pages": self.evicted_pages,
            "journal_commits": self.journal_commits,
            "flushers_peak": self.flushers_peak,
            "throttled": throttled,
            "series": {
                "interval_ns": interval,
                "time_ns": self.series.iter().map(|s| s.time_ns).collect::<Vec<_>>(),
                "dirty_bytes": self.series.iter().map(|s| s.dirty_bytes).collect::<Vec<_>>(),
                "writeback_bytes": self.series.iter().map(|s| s.writeback_bytes).collect::<Vec<_>>(),
                "flushers": self.series.iter().map(|s| s.flushers).collect::<Vec<_>>(),
            },
        })
    }

    /// A few lines for the normal output, after `Disk stats`.
    pub fn text(&self, clones: &[(String, u32)]) -> String {
        let knob = |name: &str| {
            self.knobs
                .iter()
                .find(|(k, _)| k == name)
                .map_or("", |(_, v)| v.as_str())
        };
        let mem_pages = knob("mem").parse::<u64>().unwrap_or(0) / PAGE_SIZE;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\nWriteback (mem={:.0}MiB, flusher={}, dirty_throttle={}):",
            mib(mem_pages),
            self.flusher_mode,
            knob("dirty_throttle"),
        );
        let _ = writeln!(
            out,
            "  dirty: limit={:.1}MiB, background={:.1}MiB, peak dirty+writeback={:.1}MiB, \
             left at end={:.1}MiB",
            mib(self.dirty_limit_pages),
            mib(self.dirty_background_pages),
            mib(self.dirty_peak_pages),
            mib(self.dirty_pages_at_end),
        );
        let _ = writeln!(
            out,
            "  pages: dirtied={}, written back={}, dropped unwritten={}, cache hits={}, evicted={}; \
             read from disk={:.1}MiB",
            self.pages_dirtied,
            self.pages_written_back,
            self.pages_cancelled,
            self.cache_hit_pages,
            self.evicted_pages,
            self.read_bytes as f64 / MIB,
        );
        let _ = writeln!(
            out,
            "  writeback threads: peak={}; journal commits={}",
            self.flushers_peak, self.journal_commits,
        );
        let throttled: Vec<String> = clones
            .iter()
            .zip(&self.throttled_ns)
            .map(|((job, pid), &ns)| format!("{job} (pid {pid})={:.3}s", seconds(ns)))
            .collect();
        if !throttled.is_empty() {
            let _ = writeln!(out, "  throttled: {}", throttled.join(", "));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::WbSample;

    fn outcome() -> FsOutcome {
        FsOutcome {
            throttled_ns: vec![1_500_000_000, 0],
            series: vec![
                WbSample {
                    time_ns: 0,
                    dirty_bytes: 0,
                    writeback_bytes: 0,
                    flushers: 0,
                },
                WbSample {
                    time_ns: 100_000_000,
                    dirty_bytes: 8192,
                    writeback_bytes: 4096,
                    flushers: 1,
                },
            ],
            knobs: vec![
                ("mem".into(), (64u64 << 20).to_string()),
                ("flusher".into(), "per-bdi".into()),
                ("dirty_throttle".into(), "io-less".into()),
            ],
            flusher_mode: "per-bdi".into(),
            flushers_peak: 1,
            pages_dirtied: 3,
            pages_written_back: 3,
            dirty_limit_pages: 3276,
            dirty_background_pages: 1638,
            ..FsOutcome::default()
        }
    }

    /// The JSON carries memory, per-clone throttled time and the series as arrays.
    #[test]
    fn json_names_memory_throttling_and_the_series() {
        let clones = [("w".to_string(), 1000), ("r".to_string(), 1001)];
        let value = outcome().to_json(&clones);
        assert_eq!(value["knobs"]["mem"], 64u64 << 20);
        assert_eq!(value["knobs"]["flusher"], "per-bdi");
        assert_eq!(value["throttled"][0]["throttled_ns"], 1_500_000_000u64);
        assert_eq!(value["throttled"][1]["pid"], 1001);
        assert_eq!(value["series"]["interval_ns"], 100_000_000u64);
        assert_eq!(value["series"]["dirty_bytes"][1], 8192);
        assert_eq!(value["series"]["flushers"][1], 1);
        assert_eq!(value["dirty_limit_bytes"], 3276u64 * 4096);
    }

    #[test]
    fn text_names_the_throttled_writer() {
        let clones = [("w".to_string(), 1000), ("r".to_string(), 1001)];
        let text = outcome().text(&clones);
        assert!(text.contains("mem=64MiB, flusher=per-bdi"), "{text}");
        assert!(text.contains("w (pid 1000)=1.500s"), "{text}");
    }
}
