//! The files a run writes besides its results: the trace and decision files
//! ([`Outputs`](iosched_driver::spec::Outputs)), opened before the run starts so a bad path
//! fails before any work, and fio's job logs and iologs, written after it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use iosched_driver::spec::{Outputs, DEFAULT_TRACE_LIMIT};
use iosched_driver::stats::JobStats;
use iosched_report::blkparse::BlkparseText;
use iosched_report::blktrace::{BlktraceBinary, TraceLabels};
use iosched_report::decisions::{DecisionLog, TraceFanout};
use iosched_workload::extent::{clone_regions, run_ios};
use iosched_workload::issue_log::IssueLog;
use iosched_workload::layout::{lay_out, Layout};
use iosched_workload::JobSpec;

use super::RunError;

/// Trace labels naming the device `major,minor`, each process (pid, job name) and each
/// cgroup (id, path).
pub(crate) fn trace_labels(
    (major, minor): (u32, u32),
    processes: Vec<(u32, String)>,
    cgroups: Vec<(iosched_core::CgroupId, String)>,
) -> TraceLabels {
    let mut labels = TraceLabels::new(major, minor);
    for (pid, name) in processes {
        labels.set_comm(pid, &name);
    }
    for (id, path) in cgroups {
        labels.set_cgroup_path(id, &path);
    }
    labels
}

/// Bytes a file takes per fio I/O, for CFQ and for the schedulers that log no decisions.
/// Choice: measured on this machine (10000 I/Os, 4 KiB random direct reads beside buffered
/// sequential writes, `--device hdd-7200`): blkparse text 546 and 212 bytes (7.6 and 3.5
/// lines of ~71 bytes), the binary format 497 and 172, decisions 156 and 0; rounded up.
/// Many CFQ queues log more per I/O (64 rate-limited sequential readers: 897 bytes binary),
/// so the figure is a floor for such runs; the file still stops at the limit.
struct PerIo {
    cfq: u64,
    other: u64,
}

const TEXT_PER_IO: PerIo = PerIo {
    cfq: 560,
    other: 220,
};
const BINARY_PER_IO: PerIo = PerIo {
    cfq: 510,
    other: 180,
};
const DECISIONS_PER_IO: PerIo = PerIo { cfq: 160, other: 0 };

/// The trace and decision files' expected size, said before the run starts; a run whose
/// estimate is over `--trace-limit` is refused, since its file would be cut short anyway.
/// Jobs whose I/O count only the device decides (time-based, no rate) are named instead:
/// their files still stop at the limit.
pub(crate) fn check_trace_size(
    outputs: &Outputs,
    jobs: &[JobSpec],
    capacity: Option<u64>,
    seed: u64,
    scheduler: &str,
    notify: &mut dyn FnMut(&str),
) -> Result<(), RunError> {
    let files = [
        (outputs.trace.as_ref(), "--trace", TEXT_PER_IO),
        (outputs.decisions.as_ref(), "--decisions", DECISIONS_PER_IO),
    ];
    if files.iter().all(|(path, _, _)| path.is_none()) {
        return Ok(());
    }
    // A layout that fails is reported by the run itself; estimate from what is known.
    let layout = lay_out(jobs, capacity, seed).ok();
    let (ios, unbounded) = expected_run_ios(jobs, layout.as_ref());
    let limit = outputs.trace_limit.unwrap_or(DEFAULT_TRACE_LIMIT);
    for (path, flag, per_io) in files {
        let Some(path) = path else { continue };
        let binary = flag == "--trace" && path.extension().is_some_and(|ext| ext == "blktrace");
        let per_io = if binary { BINARY_PER_IO } else { per_io };
        let per_io = if scheduler == "cfq" {
            per_io.cfq
        } else {
            per_io.other
        };
        let estimate = ios.saturating_mul(per_io);
        let mut line = format!(
            "{flag} {}: about {} estimated ({ios} I/Os at ~{per_io} bytes each)",
            path.display(),
            human_bytes(estimate)
        );
        if !unbounded.is_empty() {
            line.push_str(&format!(
                ", plus the I/O of {} (time-based without a rate: the device decides how much)",
                unbounded.join(", ")
            ));
        }
        notify(&line);
        if estimate > limit {
            return Err(RunError::TraceTooLarge {
                flag,
                path: path.clone(),
                estimate,
                limit,
            });
        }
    }
    Ok(())
}

/// The job data I/Os a run is expected to complete, when every job's count is known before
/// it runs (none is time-based without a rate): a progress line's total, estimated as the
/// trace sizes are.
pub(crate) fn planned_ios(jobs: &[JobSpec], capacity: Option<u64>, seed: u64) -> Option<u64> {
    let layout = lay_out(jobs, capacity, seed).ok()?;
    let (ios, unbounded) = run_ios(jobs, &clone_regions(jobs, Some(&layout)));
    (unbounded.is_empty() && ios > 0).then_some(ios)
}

/// Expected I/Os of every clone together ([`run_ios`]), and the jobs nothing bounds ahead of
/// time, named for the caller's message.
fn expected_run_ios(jobs: &[JobSpec], layout: Option<&Layout>) -> (u64, Vec<String>) {
    let (total, unbounded) = run_ios(jobs, &clone_regions(jobs, layout));
    let names = unbounded
        .into_iter()
        .map(|index| format!("job '{}'", jobs[index].name))
        .collect();
    (total, names)
}

/// `bytes` in the largest binary unit that keeps it at least 1 (`1.5 GiB`).
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A writer that refuses to grow a file past `limit` bytes: a trace of a long run can
/// outgrow any disk, so it is cut at the limit (the sinks keep the first write error and
/// report it when finished).
pub(crate) struct Capped {
    out: BufWriter<File>,
    written: u64,
    limit: u64,
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written + buf.len() as u64 > self.limit {
            return Err(io::Error::other(format!(
                "reached --trace-limit ({} bytes); the file ends there",
                self.limit
            )));
        }
        let n = self.out.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

pub(crate) struct Sinks {
    text: Option<BlkparseText<Capped>>,
    binary: Option<BlktraceBinary<Capped>>,
    decisions: Option<DecisionLog<Capped>>,
    /// Each open file as its errors name it (`--decisions d.json`), in the order above.
    names: Vec<String>,
}

fn create(flag: &'static str, path: &Path, limit: u64) -> Result<Capped, RunError> {
    File::create(path)
        .map(|file| Capped {
            out: BufWriter::new(file),
            written: 0,
            limit,
        })
        .map_err(|source| RunError::Open {
            what: flag,
            path: path.to_path_buf(),
            source,
        })
}

impl Sinks {
    /// A trace name ending in `.blktrace` writes the binary format (`NAME.blktrace` →
    /// `NAME.blktrace.0`), any other name blkparse-style text.
    pub(crate) fn open(outputs: &Outputs, labels: TraceLabels) -> Result<Sinks, RunError> {
        let mut sinks = Sinks {
            text: None,
            binary: None,
            decisions: None,
            names: Vec::new(),
        };
        let limit = outputs.trace_limit.unwrap_or(DEFAULT_TRACE_LIMIT);
        if let Some(path) = &outputs.trace {
            if path.extension().is_some_and(|ext| ext == "blktrace") {
                let file = BlktraceBinary::<BufWriter<File>>::path_for(&path.with_extension(""));
                sinks.binary = Some(BlktraceBinary::new(
                    create("--trace", &file, limit)?,
                    labels,
                ));
                sinks.names.push(format!("--trace {}", file.display()));
            } else {
                sinks.text = Some(BlkparseText::new(create("--trace", path, limit)?, labels));
                sinks.names.push(format!("--trace {}", path.display()));
            }
        }
        if let Some(path) = &outputs.decisions {
            sinks.decisions = Some(DecisionLog::new(create("--decisions", path, limit)?));
            sinks.names.push(format!("--decisions {}", path.display()));
        }
        Ok(sinks)
    }

    /// Every open sink behind one [`Trace`].
    pub(crate) fn fanout(&mut self) -> TraceFanout<'_> {
        let mut fanout = TraceFanout::new();
        if let Some(sink) = self.text.as_mut() {
            fanout.push(sink);
        }
        if let Some(sink) = self.binary.as_mut() {
            fanout.push(sink);
        }
        if let Some(sink) = self.decisions.as_mut() {
            fanout.push(sink);
        }
        fanout
    }

    /// Flushes every file, each even when another failed; the first failure names its file
    /// by the flag that asked for it.
    pub(crate) fn finish(self) -> Result<(), RunError> {
        let results = [
            self.text.map(|sink| sink.finish()),
            self.binary.map(|sink| sink.finish()),
            self.decisions.map(|sink| sink.finish()),
        ];
        // Collected, not short-circuited: a file after a failed one is still flushed.
        let failures: Vec<RunError> = results
            .into_iter()
            .flatten()
            .zip(self.names)
            .filter_map(|(result, name)| {
                result
                    .and_then(|mut out| out.flush())
                    .err()
                    .map(|source| RunError::Write { what: name, source })
            })
            .collect();
        failures.into_iter().next().map_or(Ok(()), Err)
    }
}

/// fio's log files (`write_bw_log`...) of every clone that asked for them, in the current
/// directory as fio writes them, numbered from 1 in clone order. A clone whose logs cannot
/// be written does not keep the others' from being written: each failure is returned.
pub(crate) fn write_job_logs(clones: &[JobStats]) -> Vec<RunError> {
    clones
        .iter()
        .enumerate()
        .filter_map(|(index, stats)| {
            let log = stats.log.as_ref()?;
            log.write(Path::new("."), index + 1, stats.start_ns)
                .map_err(|source| RunError::Write {
                    what: "fio log files".to_string(),
                    source,
                })
                .err()
        })
        .collect()
}

/// fio's iologs (`write_iolog=FILE`) of the jobs that asked for them, relative to the current
/// directory, appended to what the file holds as fio appends.
pub(crate) fn write_issue_logs(log: &IssueLog, jobs: &[JobSpec], layout: &Layout) -> Vec<RunError> {
    log.render(jobs, layout)
        .into_iter()
        .filter_map(|(path, text)| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut file| file.write_all(text.as_bytes()))
                .map_err(|source| RunError::Write {
                    what: format!("write_iolog file {path}"),
                    source,
                })
                .err()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_workload::fio::{parse_str, ParseContext};

    /// What the trace-size check says of `text`'s jobs with a text trace under noop, and
    /// whether it refuses them at a 1 MiB limit.
    fn check(text: &str) -> (String, bool) {
        let jobs = parse_str(text, "t.fio", &ParseContext::default()).unwrap();
        let outputs = Outputs {
            trace: Some("t.txt".into()),
            trace_limit: Some(1 << 20),
            ..Default::default()
        };
        let mut said = String::new();
        let result = check_trace_size(
            &outputs,
            &jobs.jobs,
            Some(1 << 30),
            1,
            "noop",
            &mut |line| said.push_str(line),
        );
        (said, result.is_err())
    }

    /// fio 3.33 did 30 reads for `number_ios=10 loops=3` (the count holds per loop): 10000
    /// I/Os here, 2.1 MiB of text, refused. The check used to count 1000 and let it through.
    #[test]
    fn number_ios_counts_every_loop() {
        let (said, refused) = check("[j]\nrw=read\nbs=4k\nsize=64m\nnumber_ios=1000\nloops=10\n");
        assert!(said.contains("(10000 I/Os"), "{said}");
        assert!(refused, "{said}");
    }

    /// fio 3.33 ignores `io_size` in a time-based job (1 s of `io_size=64k` did 295941
    /// reads): the device decides its count, so the job is named, not counted as 16 I/Os.
    #[test]
    fn a_time_based_job_is_not_bounded_by_io_size() {
        let (said, refused) = check("[j]\nrw=read\nbs=4k\nio_size=64k\ntime_based\nruntime=1\n");
        assert!(
            said.contains("(0 I/Os") && said.contains("job 'j'"),
            "{said}"
        );
        assert!(!refused, "{said}");
    }
}
