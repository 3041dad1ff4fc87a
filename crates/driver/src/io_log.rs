//! fio's per-job log files (`write_bw_log`, `write_iops_log`, `write_lat_log` with
//! `log_avg_msec`), in fio 3.x's format: one line `time_ms, value, ddir, bs, offset` per
//! sample. Without averaging every I/O is a sample (bandwidth as bytes per ms of completion
//! latency, IOPS 1, latencies in ns); with `log_avg_msec=N` each N ms window
//! gives one line per direction (KiB/s, IOPS, mean ns) with `bs` 0, as fio writes them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::stats::DDIR_COUNT;

/// Which logs a job asked for, each with its file prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogRequest {
    pub bw: Option<String>,
    pub iops: Option<String>,
    pub lat: Option<String>,
    /// `log_avg_msec`, in ns (0: one sample per I/O).
    pub avg_ns: u64,
    /// Submission latency is measured (async engines); fio leaves the slat log of a
    /// synchronous engine empty.
    pub slat: bool,
}

impl LogRequest {
    pub fn is_empty(&self) -> bool {
        self.bw.is_none() && self.iops.is_none() && self.lat.is_none()
    }
}

/// One I/O as the logs see it.
#[derive(Clone, Copy, Debug)]
struct Sample {
    /// Completion time, ns (the driver's clock).
    at_ns: u64,
    ddir: usize,
    bytes: u64,
    slat_ns: u64,
    clat_ns: u64,
}

/// The samples of one job clone.
#[derive(Clone, Debug)]
pub struct IoLog {
    request: LogRequest,
    samples: Vec<Sample>,
}

impl IoLog {
    pub fn new(request: LogRequest) -> IoLog {
        IoLog {
            request,
            samples: Vec::new(),
        }
    }

    /// An I/O completed at `at_ns`.
    pub fn record(&mut self, at_ns: u64, ddir: usize, bytes: u64, slat_ns: u64, clat_ns: u64) {
        assert!(ddir < DDIR_COUNT, "direction index {ddir} out of range");
        self.samples.push(Sample {
            at_ns,
            ddir,
            bytes,
            slat_ns,
            clat_ns,
        });
    }

    /// Writes the requested logs of job clone `number` (1-based, as fio numbers them) in
    /// `dir`: `PREFIX_bw.N.log`, `PREFIX_iops.N.log`, `PREFIX_{lat,clat,slat}.N.log`, times
    /// in ms from `epoch_ns` (when the job's statistics began, after any ramp).
    pub fn write(&self, dir: &Path, number: usize, epoch_ns: u64) -> std::io::Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        let mut put = |prefix: &str, kind: &str, text: String| -> std::io::Result<()> {
            let path = dir.join(format!("{prefix}_{kind}.{number}.log"));
            std::fs::write(&path, text)?;
            written.push(path);
            Ok(())
        };
        if let Some(prefix) = &self.request.bw {
            put(prefix, "bw", self.render(Metric::Bw, epoch_ns))?;
        }
        if let Some(prefix) = &self.request.iops {
            put(prefix, "iops", self.render(Metric::Iops, epoch_ns))?;
        }
        if let Some(prefix) = &self.request.lat {
            put(prefix, "lat", self.render(Metric::Lat, epoch_ns))?;
            put(prefix, "clat", self.render(Metric::Clat, epoch_ns))?;
            let slat = if self.request.slat {
                self.render(Metric::Slat, epoch_ns)
            } else {
                String::new()
            };
            put(prefix, "slat", slat)?;
        }
        Ok(written)
    }

    fn render(&self, metric: Metric, epoch_ns: u64) -> String {
        let mut out = String::new();
        if self.request.avg_ns == 0 {
            for s in &self.samples {
                let value = match metric {
                    // fio: bytes per ms of completion latency (bytes × 10⁶ / ns).
                    Metric::Bw => s.bytes * 1_000_000 / s.clat_ns.max(1),
                    Metric::Iops => 1,
                    Metric::Lat => s.slat_ns + s.clat_ns,
                    Metric::Clat => s.clat_ns,
                    Metric::Slat => s.slat_ns,
                };
                let _ = writeln!(
                    out,
                    "{}, {value}, {}, {}, 0",
                    s.at_ns.saturating_sub(epoch_ns) / 1_000_000,
                    s.ddir,
                    s.bytes
                );
            }
            return out;
        }
        // Averaged: per window end and direction, (bytes, I/Os, latency sum).
        let window = self.request.avg_ns;
        let mut windows: BTreeMap<(u64, usize), (u64, u64, u64)> = BTreeMap::new();
        for s in &self.samples {
            let end = (s.at_ns.saturating_sub(epoch_ns) / window + 1) * window;
            let entry = windows.entry((end, s.ddir)).or_default();
            entry.0 += s.bytes;
            entry.1 += 1;
            entry.2 += match metric {
                Metric::Lat => s.slat_ns + s.clat_ns,
                Metric::Slat => s.slat_ns,
                _ => s.clat_ns,
            };
        }
        for ((end, ddir), (bytes, ios, lat_sum)) in windows {
            let value = match metric {
                Metric::Bw => bytes * 1_000_000_000 / window / 1024,
                Metric::Iops => ios * 1_000_000_000 / window,
                Metric::Lat | Metric::Clat | Metric::Slat => lat_sum / ios,
            };
            let _ = writeln!(out, "{}, {value}, {ddir}, 0, 0", end / 1_000_000);
        }
        out
    }
}

#[derive(Clone, Copy)]
enum Metric {
    Bw,
    Iops,
    Lat,
    Clat,
    Slat,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(avg_ms: u64) -> LogRequest {
        LogRequest {
            bw: Some("j".into()),
            iops: Some("j".into()),
            lat: Some("j".into()),
            avg_ns: avg_ms * 1_000_000,
            slat: true,
        }
    }

    fn read(log: &Path, kind: &str) -> Vec<String> {
        std::fs::read_to_string(log.join(format!("j_{kind}.2.log")))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// One line per I/O, fio 3.33's columns: 4 KiB in 310.722 µs is 13182 bytes per ms.
    #[test]
    fn per_io_lines_match_fios() {
        let dir = iosched_workload::scratch::ScratchDir::new("iolog");
        let mut log = IoLog::new(request(0));
        log.record(7_500_000, 0, 4096, 671, 310_722);
        let files = log.write(&dir, 2, 5_000_000).unwrap();
        assert_eq!(files.len(), 5);
        assert_eq!(read(&dir, "bw"), ["2, 13182, 0, 4096, 0"]);
        assert_eq!(read(&dir, "iops"), ["2, 1, 0, 4096, 0"]);
        assert_eq!(read(&dir, "lat"), ["2, 311393, 0, 4096, 0"]);
        assert_eq!(read(&dir, "clat"), ["2, 310722, 0, 4096, 0"]);
        assert_eq!(read(&dir, "slat"), ["2, 671, 0, 4096, 0"]);
    }

    /// `log_avg_msec=100`: a line per window and direction at the window's end, `bs` 0.
    #[test]
    fn averaged_windows_give_rates_and_means() {
        let dir = iosched_workload::scratch::ScratchDir::new("iologavg");
        let mut log = IoLog::new(request(100));
        // 200 reads of 4 KiB in the first 100 ms, one write in the second window.
        for i in 0..200 {
            log.record(i * 500_000, 0, 4096, 1_000, 99_000 + i);
        }
        log.record(150_000_000, 1, 8192, 0, 50_000);
        log.write(&dir, 2, 0).unwrap();
        assert_eq!(read(&dir, "bw"), ["100, 8000, 0, 0, 0", "200, 80, 1, 0, 0"]);
        assert_eq!(
            read(&dir, "iops"),
            ["100, 2000, 0, 0, 0", "200, 10, 1, 0, 0"]
        );
        assert_eq!(
            read(&dir, "clat"),
            ["100, 99099, 0, 0, 0", "200, 50000, 1, 0, 0"]
        );
    }
}
