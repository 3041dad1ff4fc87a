//! The replay of one job clone's share of a log, as a pure state machine: given `now` and the
//! completions of its I/Os it answers submit this, wake me at `t`, wait, or done — the same
//! [`Step`]s a [`crate::runner::JobRunner`] gives, so it runs inside one under both drivers.
//!
//! Three timings:
//! * **open loop** (fio's): each I/O at its recorded time from the clone's start, times scaled
//!   by `replay_time_scale`; a scheduler that serves faster cannot make the workload faster;
//! * **as fast as possible** (`replay_no_stall=1`): each I/O as soon as the queue depth
//!   (`iodepth`) has room;
//! * **closed loop** (iosched's `iosched_replay=closed`, captures only): an I/O waits for the
//!   I/O of its process it depended on, then for the recorded think time. The rule: I/O `j`
//!   depends on the I/O `i` of the same clone that completed last, in the capture, before `j`
//!   was queued; `j` goes out `queued(j) − completed(i)` after `i` completes in the replay.
//!   An I/O queued before any earlier one completed (a process keeping several in flight)
//!   keeps its recorded gap to the I/O before it. Async writes (write-back, no `S` flag) do
//!   not wait on anything and are not waited on: they keep their recorded times.
//!
//! Limits of the closed-loop rule: completion is the only dependency it sees. A process that
//! waited on something else (a lock, another process's I/O, a timer) is credited with a
//! think time that was really a wait; a process with several I/Os in flight is assumed to
//! have waited for the latest completion, which holds for a queue-depth-1 reader and is a
//! guess for asynchronous submitters. I/Os leave in their recorded order within a clone, so
//! async writes keep their times only when they run in a clone of their own (as `iosched
//! replay` arranges).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use iosched_core::Time;

use super::{ReplayLog, ReplaySpec, TraceIo};
use crate::generator::IoUnit;
use crate::runner::Step;

/// One clone's replay in progress.
#[derive(Clone, Debug)]
pub struct ReplaySource {
    log: Arc<ReplayLog>,
    spec: ReplaySpec,
    /// Indices into the log's I/Os that this clone replays, in order.
    ios: Vec<usize>,
    /// Closed loop: the local index of the I/O each one waits for.
    deps: Vec<Option<usize>>,
    next: usize,
    start: Time,
    depth: usize,
    issued_at: Vec<Time>,
    done_at: Vec<Option<Time>>,
    /// Submitted, not completed: the unit and its local index.
    in_flight: Vec<(IoUnit, usize)>,
}

impl ReplaySource {
    /// The replay of `spec`'s selection of `log`, starting at `start`, at most `depth` I/Os
    /// in flight.
    pub fn new(log: Arc<ReplayLog>, spec: &ReplaySpec, start: Time, depth: u32) -> ReplaySource {
        let ios: Vec<usize> = (0..log.ios.len())
            .filter(|&i| spec.selects(&log.ios[i]))
            .collect();
        let deps = if spec.closed_loop && !spec.no_stall {
            dependencies(&log, &ios)
        } else {
            vec![None; ios.len()]
        };
        ReplaySource {
            spec: spec.clone(),
            issued_at: vec![0; ios.len()],
            done_at: vec![None; ios.len()],
            deps,
            ios,
            log,
            next: 0,
            start,
            depth: depth.max(1) as usize,
            in_flight: Vec::new(),
        }
    }

    /// I/Os this clone replays in all.
    pub fn len(&self) -> usize {
        self.ios.len()
    }

    /// Whether it replays nothing.
    pub fn is_empty(&self) -> bool {
        self.ios.is_empty()
    }

    fn io(&self, local: usize) -> &TraceIo {
        &self.log.ios[self.ios[local]]
    }

    fn open_time(&self, local: usize) -> Time {
        self.start + self.spec.scale_time(self.io(local).time)
    }

    /// When I/O `local` may go; `None` while the I/O it depends on is still in flight.
    fn release(&self, local: usize) -> Option<Time> {
        if self.spec.no_stall {
            return Some(self.start);
        }
        let io = *self.io(local);
        if !self.spec.closed_loop || io.is_async_write() {
            return Some(self.open_time(local));
        }
        let after_previous = |prev: usize| -> Time {
            let gap = io.time.saturating_sub(self.io(prev).time);
            self.issued_at[prev] + self.spec.scale_time(gap)
        };
        let at = match self.deps[local] {
            Some(dep) => {
                let done = self.done_at[dep]?;
                let think = io
                    .time
                    .saturating_sub(self.io(dep).completed.unwrap_or(io.time));
                done + self.spec.scale_time(think)
            }
            None if local == 0 => self.open_time(0),
            None => after_previous(local - 1),
        };
        // Never before the previous I/O of the clone went out.
        Some(match local {
            0 => at,
            _ => at.max(self.issued_at[local - 1]),
        })
    }

    /// What the replay wants at `now`.
    pub fn next(&mut self, now: Time) -> Step {
        if self.next == self.ios.len() {
            return if self.in_flight.is_empty() {
                Step::Done
            } else {
                Step::Wait
            };
        }
        if self.in_flight.len() >= self.depth {
            return Step::Wait;
        }
        match self.release(self.next) {
            None => Step::Wait,
            Some(at) if at > now => Step::SleepUntil(at),
            Some(_) => {
                let local = self.next;
                let io = *self.io(local);
                let (file, offset) = self.spec.place(&io);
                let unit = IoUnit {
                    kind: io.kind,
                    file,
                    offset,
                    len: io.len,
                };
                self.next += 1;
                self.issued_at[local] = now;
                self.in_flight.push((unit, local));
                Step::Submit(unit)
            }
        }
    }

    /// One of its I/Os completed at `now` (the oldest in flight with the same unit).
    pub fn complete(&mut self, now: Time, unit: &IoUnit) {
        if let Some(pos) = self.in_flight.iter().position(|(u, _)| u == unit) {
            let (_, local) = self.in_flight.remove(pos);
            self.done_at[local] = Some(now);
        }
    }
}

/// Closed loop's dependencies: for each I/O (async writes excepted), the earlier one of the
/// list that completed last, in the capture, before it was queued.
fn dependencies(log: &ReplayLog, ios: &[usize]) -> Vec<Option<usize>> {
    let mut completed: BinaryHeap<Reverse<(Time, usize)>> = BinaryHeap::new();
    let mut latest: Option<(Time, usize)> = None;
    let mut deps = Vec::with_capacity(ios.len());
    for (local, &index) in ios.iter().enumerate() {
        let io = &log.ios[index];
        if io.is_async_write() {
            deps.push(None);
            continue;
        }
        while let Some(&Reverse((done, i))) = completed.peek() {
            if done > io.time {
                break;
            }
            completed.pop();
            if latest.is_none_or(|(t, _)| done >= t) {
                latest = Some((done, i));
            }
        }
        deps.push(latest.map(|(_, i)| i));
        if let Some(done) = io.completed {
            completed.push(Reverse((done, local)));
        }
    }
    deps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::IoKind;
    use crate::replay::{LogFormat, ReplayPart};

    /// A reader at queue depth 1: each read queued `think` after the previous completed,
    /// each served in `service` ns in the capture.
    fn qd1_reader(n: u64, service: Time, think: Time) -> ReplayLog {
        let mut ios = Vec::new();
        let mut t = 0;
        for i in 0..n {
            ios.push(TraceIo {
                time: t,
                pid: 5,
                kind: IoKind::Read,
                file: 0,
                offset: i * 4096,
                len: 4096,
                sync: true,
                meta: false,
                completed: Some(t + service),
            });
            t += service + think;
        }
        ReplayLog {
            path: "t".into(),
            format: LogFormat::Blktrace,
            files: vec!["/dev/replay".into()],
            ios,
            comms: Default::default(),
        }
    }

    /// Runs `source` on a device serving each I/O in `service` ns, one at a time; returns
    /// each submission time.
    fn run(mut source: ReplaySource, service: Time) -> Vec<Time> {
        let mut now = 0;
        let mut submitted = Vec::new();
        let mut pending: Vec<(Time, IoUnit)> = Vec::new();
        loop {
            match source.next(now) {
                Step::Submit(unit) => {
                    submitted.push(now);
                    let free = pending.last().map_or(now, |p| p.0.max(now));
                    pending.push((free + service, unit));
                }
                Step::SleepUntil(t) => {
                    let due = pending.first().map_or(t, |p| p.0.min(t));
                    now = due;
                    complete_due(&mut source, &mut pending, now);
                }
                Step::Wait => {
                    now = pending[0].0;
                    complete_due(&mut source, &mut pending, now);
                }
                Step::Done => return submitted,
            }
        }
    }

    fn complete_due(source: &mut ReplaySource, pending: &mut Vec<(Time, IoUnit)>, now: Time) {
        while pending.first().is_some_and(|p| p.0 <= now) {
            let (_, unit) = pending.remove(0);
            source.complete(now, &unit);
        }
    }

    #[test]
    fn open_loop_keeps_recorded_times_whatever_the_device() {
        let log = Arc::new(qd1_reader(4, 1_000, 100));
        let spec = ReplaySpec::new("t");
        // A device 10× faster: the reads still go out at 0, 1100, 2200, 3300.
        let fast = run(ReplaySource::new(log.clone(), &spec, 0, 64), 100);
        assert_eq!(fast, [0, 1_100, 2_200, 3_300]);
    }

    #[test]
    fn closed_loop_follows_the_replayed_completions() {
        let log = Arc::new(qd1_reader(4, 1_000, 100));
        let mut spec = ReplaySpec::new("t");
        spec.closed_loop = true;
        // Served in 100 ns now: each read 100 ns (think) after the previous completes.
        let fast = run(ReplaySource::new(log.clone(), &spec, 0, 64), 100);
        assert_eq!(fast, [0, 200, 400, 600]);
        // Served in 5000 ns: open loop would pile them up; closed loop waits.
        let slow = run(ReplaySource::new(log, &spec, 0, 64), 5_000);
        assert_eq!(slow, [0, 5_100, 10_200, 15_300]);
    }

    #[test]
    fn no_stall_fills_the_depth_and_time_scale_compresses() {
        let log = Arc::new(qd1_reader(4, 1_000, 100));
        let mut spec = ReplaySpec::new("t");
        spec.no_stall = true;
        let got = run(ReplaySource::new(log.clone(), &spec, 0, 2), 1_000);
        assert_eq!(got, [0, 0, 1_000, 2_000]);
        spec.no_stall = false;
        spec.time_scale = 200;
        let got = run(ReplaySource::new(log, &spec, 50, 64), 10);
        assert_eq!(got, [50, 600, 1_150, 1_700]);
    }

    #[test]
    fn async_writes_neither_wait_nor_are_waited_for() {
        let mut log = qd1_reader(3, 1_000, 100);
        // The middle I/O becomes a write-back write, completed late in the capture.
        log.ios[1].kind = IoKind::Write;
        log.ios[1].sync = false;
        log.ios[1].completed = Some(2_150);
        let log = Arc::new(log);
        let mut spec = ReplaySpec::new("t");
        spec.closed_loop = true;
        let deps = dependencies(&log, &[0, 1, 2]);
        assert_eq!(deps, [None, None, Some(0)]);
        spec.part = ReplayPart::Sync;
        let sync_only = ReplaySource::new(log, &spec, 0, 64);
        assert_eq!(sync_only.len(), 2);
    }
}
