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
use iosched_workload::issue_log::IssueLog;
use iosched_workload::layout::Layout;
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
        };
        let limit = outputs.trace_limit.unwrap_or(DEFAULT_TRACE_LIMIT);
        if let Some(path) = &outputs.trace {
            if path.extension().is_some_and(|ext| ext == "blktrace") {
                let file = BlktraceBinary::<BufWriter<File>>::path_for(&path.with_extension(""));
                sinks.binary = Some(BlktraceBinary::new(
                    create("--trace", &file, limit)?,
                    labels,
                ));
            } else {
                sinks.text = Some(BlkparseText::new(create("--trace", path, limit)?, labels));
            }
        }
        if let Some(path) = &outputs.decisions {
            sinks.decisions = Some(DecisionLog::new(create("--decisions", path, limit)?));
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

    pub(crate) fn finish(self) -> Result<(), RunError> {
        let flush = |result: io::Result<Capped>| {
            result
                .and_then(|mut out| out.flush())
                .map_err(|source| RunError::Write {
                    what: "the trace".to_string(),
                    source,
                })
        };
        if let Some(sink) = self.text {
            flush(sink.finish())?;
        }
        if let Some(sink) = self.binary {
            flush(sink.finish())?;
        }
        if let Some(sink) = self.decisions {
            flush(sink.finish())?;
        }
        Ok(())
    }
}

/// fio's log files (`write_bw_log`...) of every clone that asked for them, in the current
/// directory as fio writes them, numbered from 1 in clone order.
pub(crate) fn write_job_logs(clones: &[JobStats]) -> Result<(), RunError> {
    for (index, stats) in clones.iter().enumerate() {
        if let Some(log) = &stats.log {
            log.write(Path::new("."), index + 1, stats.start_ns)
                .map_err(|source| RunError::Write {
                    what: "fio log files".to_string(),
                    source,
                })?;
        }
    }
    Ok(())
}

/// fio's iologs (`write_iolog=FILE`) of the jobs that asked for them, relative to the current
/// directory, appended to what the file holds as fio appends.
pub(crate) fn write_issue_logs(
    log: &IssueLog,
    jobs: &[JobSpec],
    layout: &Layout,
) -> Result<(), RunError> {
    for (path, text) in log.render(jobs, layout) {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .map_err(|source| RunError::Write {
                what: format!("write_iolog file {path}"),
                source,
            })?;
    }
    Ok(())
}
