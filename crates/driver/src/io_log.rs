//! fio's per-job log files (`write_bw_log`, `write_iops_log`, `write_lat_log` with
//! `log_avg_msec`), in fio 3.x's format: one line `time_ms, value, ddir, bs, offset` per
//! sample. Without averaging every I/O is a sample (bandwidth as bytes per ms of completion
//! latency, IOPS 1, latencies in ns); with `log_avg_msec=N` each N ms window
//! gives one line per direction (KiB/s, IOPS, mean ns) with `bs` 0, as fio writes them.
//!
//! `write_hist_log` with `log_hist_msec=N` gives `PREFIX_clat_hist.N.log`: per direction,
//! each time a completion finds N ms gone since the direction's window opened, one line
//! `time_ms, ddir, bs, count0, ..., countK` holding the window's completion latencies in
//! fio's histogram buckets ([`crate::fio_plat`]; `log_hist_coarseness=c` sums runs of 2^c
//! buckets, so K+1 = 1856 / 2^c). fio's `add_clat_sample()` and `flush_hist_samples()`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use iosched_gate::GateError;
use iosched_workload::extent::clone_regions;
use iosched_workload::JobSpec;

use crate::stats::DDIR_COUNT;

/// fio's name for log `kind` (`bw`, `clat_hist`...) of job clone `number` (1-based).
pub fn file_name(prefix: &str, kind: &str, number: usize) -> String {
    format!("{prefix}_{kind}.{number}.log")
}

/// Every file the jobs' log options (`write_iolog`, `write_bw_log`...) will write, with the
/// option that names it, clones numbered from 1 in order as fio numbers them.
pub fn job_log_paths(jobs: &[JobSpec]) -> Vec<(&'static str, PathBuf)> {
    let mut paths = Vec::new();
    for job in jobs {
        if let Some(path) = &job.write_iolog {
            paths.push(("write_iolog", PathBuf::from(path)));
        }
    }
    for (index, clone) in clone_regions(jobs, None).iter().enumerate() {
        let spec = &jobs[clone.job];
        let kinds = [
            ("write_bw_log", &spec.log_bw, &["bw"][..]),
            ("write_iops_log", &spec.log_iops, &["iops"][..]),
            ("write_lat_log", &spec.log_lat, &["lat", "clat", "slat"][..]),
            ("write_hist_log", &spec.log_hist, &["clat_hist"][..]),
        ];
        for (option, prefix, names) in kinds {
            let Some(prefix) = prefix else { continue };
            for name in names {
                paths.push((option, PathBuf::from(file_name(prefix, name, index + 1))));
            }
        }
    }
    paths
}

/// Checks every file of [`job_log_paths`] before a run (the simulator's, the engine's or
/// fio's, which writes them itself): paths from a job file stay below the current directory
/// and pass the output gate. `force` is the command line's `--force`.
pub fn check_job_logs(jobs: &[JobSpec], force: bool) -> Result<(), (&'static str, GateError)> {
    for (option, path) in job_log_paths(jobs) {
        iosched_gate::confined(&path, force)
            .and_then(|()| iosched_gate::check(&path, force).map(drop))
            .map_err(|error| (option, error))?;
    }
    Ok(())
}

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
    /// `write_hist_log` prefix.
    pub hist: Option<String>,
    /// `log_hist_msec`, in ms (0: the histogram log stays empty, as fio leaves it).
    pub hist_msec: u64,
    /// `log_hist_coarseness` (0..=6).
    pub hist_coarseness: u32,
    /// `clat_percentiles=0`: fio never fills the histogram its log copies, so every line's
    /// buckets read 0 (fio 3.33 on this machine: lines at each window, all zero).
    pub hist_unfilled: bool,
}

impl LogRequest {
    pub fn is_empty(&self) -> bool {
        self.bw.is_none() && self.iops.is_none() && self.lat.is_none() && self.hist.is_none()
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
    /// in ms from `epoch_ns` (when the job's statistics began, after any ramp), each through
    /// the output gate (`force`: the command line's `--force`).
    pub fn write(
        &self,
        dir: &Path,
        number: usize,
        epoch_ns: u64,
        force: bool,
    ) -> Result<Vec<PathBuf>, GateError> {
        let mut written = Vec::new();
        let mut put = |prefix: &str, kind: &str, text: String| -> Result<(), GateError> {
            let path = dir.join(file_name(prefix, kind, number));
            iosched_gate::write_file(&path, text.as_bytes(), force)?;
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
        if let Some(prefix) = &self.request.hist {
            put(prefix, "clat_hist", self.render_hist(epoch_ns))?;
        }
        Ok(written)
    }

    /// The histogram log's lines. Kernel-free analogue of the `hist_msec` part of fio's
    /// `add_clat_sample()` and of `flush_hist_samples()`.
    fn render_hist(&self, epoch_ns: u64) -> String {
        let mut out = String::new();
        if self.request.hist_msec == 0 {
            return out;
        }
        let mut windows: [HistWindow; DDIR_COUNT] = Default::default();
        // (ms, direction, bytes, counts by fio bucket), in the order fio writes them.
        let mut lines: Vec<(u64, usize, u64, Vec<u64>)> = Vec::new();
        for s in &self.samples {
            let elapsed_ms = s.at_ns.saturating_sub(epoch_ns) / 1_000_000;
            let window = &mut windows[s.ddir];
            window.last = Some((elapsed_ms, s.bytes));
            let clat_ns = (!self.request.hist_unfilled).then_some(s.clat_ns);
            if let Some(counts) = window.add(elapsed_ms, clat_ns, self.request.hist_msec) {
                window.last_line = Some(lines.len());
                lines.push((elapsed_ms, s.ddir, s.bytes, counts));
            }
        }
        // Choice: fio drops the completions of each direction's last, unfinished window;
        // we write them as a final line at the direction's last completion, so the log
        // holds every completion and fio's tools find the percentiles the JSON reports. A
        // final line at the ms of the direction's last line is folded into that line:
        // fio-histo-log-pctiles.py cannot take two lines of one direction at one ms.
        for (ddir, window) in windows.iter_mut().enumerate() {
            let Some((last_ms, bytes)) = window.last else {
                continue;
            };
            if window.open.iter().all(|&c| c == 0) {
                continue;
            }
            let counts = std::mem::take(&mut window.open);
            match window.last_line {
                Some(index) if lines[index].0 == last_ms => {
                    for (total, c) in lines[index].3.iter_mut().zip(counts) {
                        *total += c;
                    }
                }
                _ => lines.push((last_ms, ddir, bytes, counts)),
            }
        }
        for (at_ms, ddir, bytes, counts) in &lines {
            self.hist_line(&mut out, *at_ms, *ddir, *bytes, counts);
        }
        out
    }

    /// One histogram line: time, direction, block size, then the buckets summed by runs of
    /// 2^coarseness.
    fn hist_line(&self, out: &mut String, at_ms: u64, ddir: usize, bytes: u64, counts: &[u64]) {
        let stride = 1usize << self.request.hist_coarseness;
        let _ = write!(out, "{at_ms}, {ddir}, {bytes}");
        for run in counts.chunks(stride) {
            let _ = write!(out, ", {}", run.iter().sum::<u64>());
        }
        out.push('\n');
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

/// One direction's histogram window (fio's `struct io_hist`).
#[derive(Clone, Debug)]
struct HistWindow {
    /// When the window opened, ms since the epoch (fio's `hist_last`; `None` before the
    /// first completion).
    opened_ms: Option<u64>,
    /// Completion latencies since the window opened, by fio bucket.
    open: Vec<u64>,
    /// The last completion: ms and bytes.
    last: Option<(u64, u64)>,
    /// Index of the direction's last line.
    last_line: Option<usize>,
}

impl Default for HistWindow {
    fn default() -> Self {
        HistWindow {
            opened_ms: None,
            open: vec![0; crate::fio_plat::PLAT_NR as usize],
            last: None,
            last_line: None,
        }
    }
}

impl HistWindow {
    /// Adds a completion at `elapsed_ms`; returns the window's counts when it closes.
    fn add(&mut self, elapsed_ms: u64, clat_ns: Option<u64>, hist_msec: u64) -> Option<Vec<u64>> {
        if let Some(clat_ns) = clat_ns {
            self.open[crate::fio_plat::bucket_index(clat_ns) as usize] += 1;
        }
        // fio treats a window opened at 0 ms as not yet opened.
        let opened = match self.opened_ms {
            Some(ms) if ms > 0 => ms,
            _ => {
                self.opened_ms = Some(elapsed_ms);
                elapsed_ms
            }
        };
        let this_window = elapsed_ms - opened;
        if this_window < hist_msec {
            return None;
        }
        // The next window opens where this one should have closed, absorbing the drift.
        self.opened_ms = Some(elapsed_ms - (this_window - hist_msec));
        let fresh = vec![0; self.open.len()];
        Some(std::mem::replace(&mut self.open, fresh))
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
            ..LogRequest::default()
        }
    }

    fn hist_request(msec: u64, coarseness: u32) -> LogRequest {
        LogRequest {
            hist: Some("j".into()),
            hist_msec: msec,
            hist_coarseness: coarseness,
            ..LogRequest::default()
        }
    }

    /// One parsed line: ms, ddir, bs, and the non-zero bins as (bin, count).
    type HistLine = (u64, u64, u64, Vec<(usize, u64)>);

    /// The log's lines and the number of bins on each.
    fn hist_lines(dir: &Path) -> (Vec<HistLine>, Vec<usize>) {
        let text = std::fs::read_to_string(dir.join("j_clat_hist.2.log")).unwrap();
        text.lines()
            .map(|line| {
                let v: Vec<u64> = line.split(", ").map(|f| f.parse().unwrap()).collect();
                let bins = v[3..]
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(|(i, &c)| (i, c))
                    .collect();
                ((v[0], v[1], v[2], bins), v.len() - 3)
            })
            .unzip()
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
        let files = log.write(&dir, 2, 5_000_000, false).unwrap();
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
        log.write(&dir, 2, 0, false).unwrap();
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

    /// fio 3.33 on this machine (`log_hist_msec=100`, psync randrw on a file): the first
    /// line comes 100 ms after the direction's first completion, at the completion that
    /// closes the window, with its block size and 3 + 1856 fields. Here the read window
    /// opens at 8 ms and closes at 108 ms, the next closes at 209; each direction's open
    /// window ends the log, reads first.
    #[test]
    fn hist_windows_close_at_the_completion_after_log_hist_msec() {
        let dir = iosched_workload::scratch::ScratchDir::new("histlog");
        let mut log = IoLog::new(hist_request(100, 0));
        log.record(5_000_000 + 8_000_000, 0, 4096, 0, 100); // opens the read window at 8 ms
        log.record(5_000_000 + 50_000_000, 0, 4096, 0, 130);
        log.record(5_000_000 + 108_400_000, 0, 8192, 0, 131); // 108 ms: closes it
        log.record(5_000_000 + 150_000_000, 1, 4096, 0, 1_000_000); // write window opens
        log.record(5_000_000 + 209_000_000, 0, 4096, 0, 100); // 209 - 108 >= 100: closes
        log.record(5_000_000 + 210_000_000, 0, 4096, 0, 100); // left open: the final line
        log.write(&dir, 2, 5_000_000, false).unwrap();
        let (lines, widths) = hist_lines(&dir);
        assert!(widths.iter().all(|&w| w == 1856));
        let million = crate::fio_plat::bucket_index(1_000_000) as usize;
        assert_eq!(
            lines,
            vec![
                (108, 0, 8192, vec![(100, 1), (129, 2)]),
                (209, 0, 4096, vec![(100, 1)]),
                (210, 0, 4096, vec![(100, 1)]),
                (150, 1, 4096, vec![(million, 1)]),
            ]
        );
    }

    /// A final partial window at the ms of the direction's last line joins that line, and
    /// `log_hist_coarseness=2` sums runs of 4 buckets (464 bins).
    #[test]
    fn hist_final_window_folds_and_coarseness_sums_buckets() {
        let dir = iosched_workload::scratch::ScratchDir::new("histfold");
        let mut log = IoLog::new(hist_request(10, 2));
        log.record(1_000_000, 0, 4096, 0, 100);
        log.record(11_200_000, 0, 4096, 0, 101);
        log.record(11_900_000, 0, 4096, 0, 103);
        log.write(&dir, 2, 0, false).unwrap();
        let (lines, widths) = hist_lines(&dir);
        assert_eq!(widths, vec![464]);
        assert_eq!(lines, vec![(11, 0, 4096, vec![(25, 3)])]);
    }

    /// fio 3.33 with `clat_percentiles=0 write_hist_log=h log_hist_msec=10` (psync
    /// randread on a file): a line per window as usual, every bucket 0.
    #[test]
    fn hist_log_without_clat_percentiles_has_empty_buckets_as_fios() {
        let dir = iosched_workload::scratch::ScratchDir::new("histunfilled");
        let mut log = IoLog::new(LogRequest {
            hist_unfilled: true,
            ..hist_request(10, 0)
        });
        for ms in [1u64, 12, 25] {
            log.record(ms * 1_000_000, 0, 4096, 0, 100);
        }
        log.write(&dir, 2, 0, false).unwrap();
        let (lines, widths) = hist_lines(&dir);
        assert!(!lines.is_empty());
        assert!(widths.iter().all(|&w| w == 1856));
        assert!(lines.iter().all(|line| line.3.is_empty()), "{lines:?}");
    }

    #[test]
    fn hist_log_without_log_hist_msec_is_empty_as_fios() {
        let dir = iosched_workload::scratch::ScratchDir::new("histnone");
        let mut log = IoLog::new(hist_request(0, 0));
        log.record(1_000_000, 0, 4096, 0, 100);
        log.write(&dir, 2, 0, false).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("j_clat_hist.2.log")).unwrap(),
            ""
        );
    }
}
