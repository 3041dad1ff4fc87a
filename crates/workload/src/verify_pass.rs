//! fio's verify phase as I/O, the same under both drivers: a job with `verify=` and
//! `do_verify=1` that wrote data reads every block it wrote back once its writing is done,
//! in file and offset order (fio's `verify_sort`), at most `iodepth` reads at a time. Checking
//! the data is the real engine's business; the simulator only issues the reads.

use std::collections::{BTreeMap, VecDeque};

use iosched_core::Time;

use crate::generator::{IoKind, IoUnit};
use crate::job::{JobSpec, RwMode};
use crate::runner::JobRunner;

/// What a job in its read-back does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyStep {
    /// Read this block back; it should carry this tag.
    Read(IoUnit, u64),
    /// Reads are in flight (or the depth is used): wait for a completion.
    Wait,
    /// The read-back is over and a time-based job writes another pass now.
    NextPass,
    /// The read-back is over and so is the job.
    Done,
}

/// Blocks written, then read back.
#[derive(Clone, Debug)]
pub struct VerifyPass {
    /// Last length written at each (file, offset), with the writer's tag for the block (the
    /// engine's data seed: a block another writer overwrote carries another one).
    written: BTreeMap<(usize, u64), (u64, u64)>,
    /// Once started: blocks still to read, with their tags.
    queue: Option<VecDeque<(usize, u64, u64, u64)>>,
    in_flight: u32,
    depth: u32,
}

impl VerifyPass {
    /// The pass of a job that will read back what it writes; `None` when it will not
    /// (no `verify=`, `do_verify=0`, or a job that only reads: fio checks those reads as
    /// they arrive and has nothing to read back).
    pub fn for_job(spec: &JobSpec) -> Option<VerifyPass> {
        // A verify_only job checks as it reads: it writes nothing to read back.
        let read_only = matches!(spec.rw, RwMode::Read | RwMode::RandRead) || spec.verify_only;
        (spec.verify.is_some() && spec.do_verify && !read_only).then(|| VerifyPass {
            written: BTreeMap::new(),
            queue: None,
            in_flight: 0,
            depth: spec.effective_depth(),
        })
    }

    /// A write of the job completed without error; `tag` is what the block will carry.
    pub fn wrote(&mut self, unit: &IoUnit, tag: u64) {
        if unit.kind == IoKind::Write {
            self.written
                .insert((unit.file, unit.offset), (unit.len, tag));
        }
    }

    /// The job's writing is over: start reading back. `false` when nothing was written.
    pub fn start(&mut self) -> bool {
        assert!(self.queue.is_none(), "verify pass started twice");
        if self.written.is_empty() {
            return false;
        }
        self.queue = Some(
            self.written
                .iter()
                .map(|(&(file, offset), &(len, tag))| (file, offset, len, tag))
                .collect(),
        );
        true
    }

    /// Whether the pass runs: the job's I/O completing now are its reads.
    pub fn is_active(&self) -> bool {
        self.queue.is_some()
    }

    /// The next read-back, if one may go now, with the tag its block should carry.
    pub fn next_read(&mut self) -> Option<(IoUnit, u64)> {
        let queue = self.queue.as_mut()?;
        if self.in_flight >= self.depth {
            return None;
        }
        let (file, offset, len, tag) = queue.pop_front()?;
        self.in_flight += 1;
        let read = IoUnit {
            kind: IoKind::Read,
            file,
            offset,
            len,
        };
        Some((read, tag))
    }

    /// A read-back completed.
    pub fn read_done(&mut self) {
        assert!(self.in_flight > 0, "verify read completed twice");
        self.in_flight -= 1;
    }

    /// Every read-back has been issued and completed.
    pub fn is_drained(&self) -> bool {
        self.queue.as_ref().is_some_and(VecDeque::is_empty) && self.in_flight == 0
    }

    /// The next step of a read-back under way at `now`: it stops reading at the job's
    /// runtime, and when it is over a time-based job's `runner` may start another pass.
    pub fn step(&mut self, runner: &mut JobRunner, now: Time) -> VerifyStep {
        assert!(self.is_active(), "no read-back under way");
        if runner.runtime_over(now) {
            self.abandon();
        }
        if let Some((read, tag)) = self.next_read() {
            return VerifyStep::Read(read, tag);
        }
        if !self.is_drained() {
            return VerifyStep::Wait;
        }
        if runner.next_pass(now) {
            self.reset();
            return VerifyStep::NextPass;
        }
        VerifyStep::Done
    }

    /// The read-back is over and the job writes again: the next pass reads back what it
    /// writes then.
    fn reset(&mut self) {
        assert!(
            self.in_flight == 0,
            "verify pass reset with reads in flight"
        );
        self.written.clear();
        self.queue = None;
    }

    /// A stop (an error, `exitall`, a signal): nothing more is read back.
    pub fn abandon(&mut self) {
        if let Some(queue) = self.queue.as_mut() {
            queue.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> JobSpec {
        let mut spec = JobSpec::new("w");
        spec.rw = RwMode::RandWrite;
        spec.verify = Some("crc32c".into());
        spec.iodepth = 2;
        spec.ioengine = crate::job::IoEngine::Libaio;
        spec.direct = true;
        spec
    }

    fn write(file: usize, offset: u64) -> IoUnit {
        IoUnit {
            kind: IoKind::Write,
            file,
            offset,
            len: 4096,
        }
    }

    #[test]
    fn reads_back_each_written_block_once_in_offset_order() {
        let mut pass = VerifyPass::for_job(&writer()).unwrap();
        for (file, offset) in [(1, 0), (0, 8192), (0, 0), (0, 8192)] {
            pass.wrote(&write(file, offset), offset);
        }
        assert!(pass.start());
        let mut order = Vec::new();
        while !pass.is_drained() {
            while let Some((read, tag)) = pass.next_read() {
                assert_eq!(read.kind, IoKind::Read);
                assert_eq!(tag, read.offset, "each block's own tag");
                order.push((read.file, read.offset));
            }
            assert!(pass.in_flight <= 2, "never more than iodepth reads");
            pass.read_done();
        }
        assert_eq!(order, [(0, 0), (0, 8192), (1, 0)]);
    }

    #[test]
    fn no_pass_without_verify_or_for_a_reader() {
        let mut spec = writer();
        spec.do_verify = false;
        assert!(VerifyPass::for_job(&spec).is_none());
        let mut reader = writer();
        reader.rw = RwMode::RandRead;
        assert!(VerifyPass::for_job(&reader).is_none());
        let mut idle = VerifyPass::for_job(&writer()).unwrap();
        assert!(!idle.start(), "nothing written: nothing to read back");
    }

    #[test]
    fn abandoning_stops_new_reads_but_waits_for_those_in_flight() {
        let mut pass = VerifyPass::for_job(&writer()).unwrap();
        for offset in [0, 4096, 8192] {
            pass.wrote(&write(0, offset), 0);
        }
        pass.start();
        assert!(pass.next_read().is_some());
        pass.abandon();
        assert!(pass.next_read().is_none());
        assert!(!pass.is_drained());
        pass.read_done();
        assert!(pass.is_drained());
    }
}
