//! The trace and decision files a run writes (`--trace`, `--decisions`) and fio's job log
//! files, shared by the simulator's and the engine's `run`. Opened before the run starts, so a bad path fails
//! before any work.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::Context;
use iosched_core::Trace;
use iosched_report::blkparse::BlkparseText;
use iosched_report::blktrace::{BlktraceBinary, TraceLabels};
use iosched_report::decisions::DecisionLog;

use super::Failure;

pub(crate) struct Sinks {
    text: Option<BlkparseText<BufWriter<File>>>,
    binary: Option<BlktraceBinary<BufWriter<File>>>,
    decisions: Option<DecisionLog<BufWriter<File>>>,
}

fn create(flag: &str, path: &Path) -> Result<BufWriter<File>, Failure> {
    File::create(path)
        .map(BufWriter::new)
        .with_context(|| format!("{flag} {}", path.display()))
        .map_err(Failure::input)
}

impl Sinks {
    /// `trace` ending in `.blktrace` writes the binary format (`NAME.blktrace` →
    /// `NAME.blktrace.0`), any other name blkparse-style text.
    pub(crate) fn open(
        trace: Option<&Path>,
        decisions: Option<&Path>,
        labels: TraceLabels,
    ) -> Result<Sinks, Failure> {
        let mut sinks = Sinks {
            text: None,
            binary: None,
            decisions: None,
        };
        if let Some(path) = trace {
            if path.extension().is_some_and(|ext| ext == "blktrace") {
                let file = BlktraceBinary::<BufWriter<File>>::path_for(&path.with_extension(""));
                sinks.binary = Some(BlktraceBinary::new(create("--trace", &file)?, labels));
            } else {
                sinks.text = Some(BlkparseText::new(create("--trace", path)?, labels));
            }
        }
        if let Some(path) = decisions {
            sinks.decisions = Some(DecisionLog::new(create("--decisions", path)?));
        }
        Ok(sinks)
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut dyn Trace> {
        let text = self.text.as_mut().map(|s| s as &mut dyn Trace);
        let binary = self.binary.as_mut().map(|s| s as &mut dyn Trace);
        let decisions = self.decisions.as_mut().map(|s| s as &mut dyn Trace);
        text.into_iter().chain(binary).chain(decisions)
    }

    pub(crate) fn finish(self) -> Result<(), Failure> {
        let flush = |result: io::Result<BufWriter<File>>| {
            result
                .and_then(|mut out| out.flush())
                .context("writing the trace")
                .map_err(Failure::run)
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
pub fn write_job_logs(clones: &[iosched_report::stats::JobStats]) -> Result<(), Failure> {
    for (index, stats) in clones.iter().enumerate() {
        if let Some(log) = &stats.log {
            log.write(Path::new("."), index + 1, stats.start_ns)
                .map_err(|e| Failure::run(anyhow::anyhow!("writing fio log files: {e}")))?;
        }
    }
    Ok(())
}

/// fio's iologs (`write_iolog=FILE`) of the jobs that asked for them, relative to the current
/// directory, appended to what the file holds as fio appends.
pub fn write_issue_logs(
    log: &iosched_workload::issue_log::IssueLog,
    jobs: &[iosched_workload::JobSpec],
    layout: &iosched_workload::layout::Layout,
) -> Result<(), Failure> {
    for (path, text) in log.render(jobs, layout) {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .with_context(|| format!("writing write_iolog file {path}"))
            .map_err(Failure::run)?;
    }
    Ok(())
}
