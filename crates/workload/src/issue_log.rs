//! fio's `write_iolog=FILE`: every I/O a clone issues, in fio's iolog version 3 format, so a
//! run of either driver can be set beside fio's own log of the same job I/O by I/O.
//!
//! The format (fio 3.33's `iolog.c`): a first line `fio version 3 iolog`, then one line per
//! event, each starting with the microseconds since the clone began logging: `T NAME add` for
//! each of the clone's files, `T NAME open`, `T NAME ACTION OFFSET LENGTH` per I/O as it is
//! queued (`read`, `write`, `trim`, `sync`, `datasync`; the offset is the byte offset in the
//! file) and `T NAME close` at the end. fio appends every clone of a job to the same file;
//! here each clone's block follows the previous clone's, in clone order.
//!
//! The recorder lives in the job lifecycle both drivers step ([`crate::lifecycle`]), so the
//! simulator and the engine log the same I/O for the same job and seed.

use iosched_core::Time;

use crate::generator::{IoKind, IoUnit};
use crate::job::JobSpec;
use crate::layout::Layout;

/// One issued I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IssueRecord {
    /// Nanoseconds since the clone started.
    pub since_start_ns: Time,
    pub kind: IoKind,
    /// The file, as an index into the layout's files.
    pub file: usize,
    pub offset: u64,
    pub len: u64,
}

/// The I/O of one clone whose job asked for `write_iolog`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CloneIssues {
    pub started_at: Time,
    pub finished_at: Option<Time>,
    pub records: Vec<IssueRecord>,
}

/// Every logging clone's issued I/O (`None` for clones that do not log).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IssueLog {
    pub clones: Vec<Option<CloneIssues>>,
    /// Each clone's job and its files (indices into the layout's files).
    clone_jobs: Vec<usize>,
    clone_files: Vec<Vec<usize>>,
    /// Some clone logs: without one, [`IssueLog::issued`] reads no clone's entry (issue 34:
    /// with 4096 clones that entry was a cache miss at every I/O).
    any: bool,
}

/// fio's name for an I/O's action in the log (`io_ddir_name()`).
fn action(kind: IoKind) -> &'static str {
    match kind {
        IoKind::Read => "read",
        IoKind::Write => "write",
        IoKind::Trim => "trim",
        IoKind::Fsync => "sync",
        IoKind::Fdatasync => "datasync",
        // Only dbench clients truncate, and fio has no such action; it never reaches a log
        // of a fio job.
        IoKind::Truncate => "truncate",
    }
}

impl IssueLog {
    /// An empty log for the clones of `layout`; only clones of jobs with `write_iolog` record.
    pub fn new(jobs: &[JobSpec], layout: &Layout) -> IssueLog {
        let any = layout
            .clones
            .iter()
            .any(|plan| jobs[plan.job].write_iolog.is_some());
        IssueLog {
            any,
            clones: layout
                .clones
                .iter()
                .map(|plan| {
                    jobs[plan.job]
                        .write_iolog
                        .as_ref()
                        .map(|_| CloneIssues::default())
                })
                .collect(),
            clone_jobs: layout.clones.iter().map(|plan| plan.job).collect(),
            clone_files: layout
                .clones
                .iter()
                .map(|plan| plan.files.clone())
                .collect(),
        }
    }

    /// The clone began at `now`.
    pub fn start(&mut self, clone: usize, now: Time) {
        if let Some(issues) = self.clones[clone].as_mut() {
            issues.started_at = now;
        }
    }

    /// The clone issued `unit` at `now`.
    /// A sync carries the offset of the clone's last data I/O, as fio's reused `io_u` does.
    #[inline]
    pub fn issued(&mut self, clone: usize, now: Time, unit: &IoUnit) {
        // Asked for every I/O of every clone; few log (issue 34: the call was 24 instructions).
        if self.any && self.clones[clone].is_some() {
            self.record(clone, now, unit);
        }
    }

    fn record(&mut self, clone: usize, now: Time, unit: &IoUnit) {
        if let Some(issues) = self.clones[clone].as_mut() {
            let file = self.clone_files[clone][unit.file];
            let offset = match unit.kind.ddir() {
                Some(_) => unit.offset,
                None => issues.records.last().map_or(0, |last| last.offset),
            };
            issues.records.push(IssueRecord {
                since_start_ns: now.saturating_sub(issues.started_at),
                kind: unit.kind,
                file,
                offset,
                len: unit.len,
            });
        }
    }

    /// The clone ended at `now`.
    pub fn finished(&mut self, clone: usize, now: Time) {
        if let Some(issues) = self.clones[clone].as_mut() {
            issues.finished_at = Some(now);
        }
    }

    /// The log files to write: each `write_iolog` path with its text, in first-use order.
    pub fn render(&self, jobs: &[JobSpec], layout: &Layout) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = Vec::new();
        for (clone, issues) in self.clones.iter().enumerate() {
            let Some(issues) = issues else { continue };
            let job = &jobs[self.clone_jobs[clone]];
            let path = job.write_iolog.clone().expect("a logging clone's job");
            let text = self.render_clone(clone, issues, layout);
            match files.iter_mut().find(|(p, _)| *p == path) {
                Some((_, existing)) => existing.push_str(&text),
                None => files.push((path, text)),
            }
        }
        files
    }

    fn render_clone(&self, clone: usize, issues: &CloneIssues, layout: &Layout) -> String {
        use std::fmt::Write;
        let name = |file: usize| layout.files[file].name.as_str();
        let mut text = String::from("fio version 3 iolog\n");
        for &file in &self.clone_files[clone] {
            let _ = writeln!(text, "0 {} add", name(file));
        }
        for &file in &self.clone_files[clone] {
            let _ = writeln!(text, "0 {} open", name(file));
        }
        for record in &issues.records {
            let _ = writeln!(
                text,
                "{} {} {} {} {}",
                record.since_start_ns / 1000,
                name(record.file),
                action(record.kind),
                record.offset,
                record.len
            );
        }
        let end_us = issues
            .finished_at
            .map_or(0, |end| end.saturating_sub(issues.started_at) / 1000);
        for &file in &self.clone_files[clone] {
            let _ = writeln!(text, "{end_us} {} close", name(file));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::lay_out;

    /// The lines fio 3.33 writes for one clone (checked against `fio --write_iolog` on this
    /// machine: version line, add, open, one line per I/O with the file's byte offset, close).
    #[test]
    fn a_clone_renders_as_fios_version_3_log() {
        let mut spec = JobSpec::sized("a", 1 << 20);
        spec.filenames = vec!["data".into()];
        spec.write_iolog = Some("a.log".into());
        let jobs = [spec, JobSpec::sized("quiet", 1 << 20)];
        let layout = lay_out(&jobs, None, 1).unwrap();
        let mut log = IssueLog::new(&jobs, &layout);
        assert!(
            log.clones[1].is_none(),
            "a job without write_iolog keeps no log"
        );
        log.start(0, 5_000);
        let unit = |kind, offset| IoUnit {
            kind,
            file: 0,
            offset,
            len: 4096,
        };
        log.issued(0, 7_000, &unit(IoKind::Read, 8192));
        log.issued(0, 12_500, &unit(IoKind::Trim, 0));
        log.issued(1, 12_500, &unit(IoKind::Read, 0));
        log.finished(0, 20_000);
        let files = log.render(&jobs, &layout);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "a.log");
        assert_eq!(
            files[0].1,
            "fio version 3 iolog\n0 data add\n0 data open\n2 data read 8192 4096\n\
             7 data trim 0 4096\n15 data close\n"
        );
    }
}
