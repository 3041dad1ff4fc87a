//! One job clone as a pure state machine, stepped by a driver.
//!
//! The driver asks [`JobRunner::next`] what the job wants at `now` — submit an I/O, sleep
//! until a time (think time, rate limit), wait for a completion, or nothing more — and
//! reports completions with [`JobRunner::complete`]. The simulator and the real engine step
//! the same runners; only who supplies `now` and who performs the I/O differs.

use iosched_core::Time;

use crate::extent::{self, counted_dirs};
use crate::generator::{FileRegion, IoGenerator, IoKind, IoUnit};
use crate::job::{JobSpec, RwMode, DDIR_WRITE};
use crate::replay::source::ReplaySource;
use crate::rng::Rng;

/// What the job wants next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Submit this I/O now (the driver calls `next` again straight away: a job may submit
    /// several I/Os at one instant).
    Submit(IoUnit),
    /// Nothing before this time (think time or a rate limit).
    SleepUntil(Time),
    /// Nothing until one of the job's I/Os completes.
    Wait,
    /// The job has finished: everything it submitted has completed.
    Done,
}

/// One clone of a job, running.
///
/// Laid out in declaration order (`repr(C)`), what a plain job's every I/O touches first
/// (`next_plain`, `issue_plain`, `complete`), then its generator (issue 34: with 4096 clones
/// every clone's runner is out of cache at its every I/O, and each line it touches is a
/// miss).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct JobRunner {
    /// Submitted and not yet reaped by the job.
    in_flight: u32,
    /// Completed but not yet reaped (reaping happens `complete_min` at a time).
    completed_unreaped: u32,
    depth: u32,
    complete_min: u32,
    iodepth_low: u32,
    think_counter: u32,
    /// Nothing but depth and limits decides the next step: no replay, rate limit, think
    /// time, `fsync=`, `verify_only` or scripted unit (see [`JobRunner::next_plain`]).
    plain: bool,
    finished_submitting: bool,
    sync_in_flight: bool,
    /// The queue filled up; wait until it drains to `iodepth_low`.
    draining_to_low: bool,
    thinktime_on_issue: bool,
    /// A think is due once the I/Os in flight have completed (fio's `io_u_quiesce()`).
    think_after_quiesce: bool,
    /// `verify_only`: the job's writes are issued as reads (checked, by the engine).
    verify_only: bool,
    wrote_anything: bool,
    sync_pending: bool,
    writes_since_sync: u32,
    /// The directions whose bytes count toward the size (fio's `io_bytes_exceeded()`).
    counted: [bool; 3],
    /// `read_iolog=`: the job replays a recorded workload instead of generating one.
    replay: Option<Box<ReplaySource>>,
    think_until: Time,
    thinktime_ns: Time,
    runtime_end: Option<Time>,
    bytes_limit: Option<u64>,
    ios_limit: Option<u64>,
    bytes_issued: u64,
    ios_issued: u64,
    /// Bytes of this pass in the directions [`JobRunner::bytes_counted`] adds, kept as they
    /// are issued.
    pass_bytes_counted: u64,
    rng: Rng,
    bytes_issued_dir: [u64; 3],
    /// Bytes of this pass per direction as the job's mode counts them toward its size.
    pass_bytes_dir: [u64; 3],
    ios_issued_dir: [u64; 3],
    generator: IoGenerator,
    rate_start: Time,
    rate_bytes: [Option<u64>; 3],
    rate_iops: [Option<u64>; 3],
    /// `rate_process=poisson`: mean I/Os per second of each rate-limited direction, and when
    /// its next I/O is due.
    poisson_iops: [Option<f64>; 3],
    poisson_due: [Time; 3],
    thinktime_blocks: u32,
    thinktime_quiesce: bool,
    fsync_every: u32,
    fsync_kind: IoKind,
    end_fsync: bool,
    /// end_fsync: files synced so far (fio fsyncs each of the clone's files in turn).
    end_fsync_files: usize,
    /// A unit drawn but held back by a rate limit (a scripted one: dbench, trimwrite).
    held: Option<IoUnit>,
    /// The direction drawn for the next I/O, held back by a rate limit.
    held_kind: Option<IoKind>,
    /// A time-based job that verifies: it writes `size` a pass, reads it back, and goes on
    /// with another pass while time remains (fio breaks its write loop at `size` for this).
    passes_until_runtime: bool,
}

impl JobRunner {
    /// A runner for one clone starting at `start` (after any start delay), working on
    /// `regions` of its files. `rng` is the clone's own stream.
    pub fn new(spec: &JobSpec, regions: Vec<FileRegion>, start: Time, rng: Rng) -> JobRunner {
        let generator = IoGenerator::new(spec, regions);
        let depth = spec.effective_depth();
        let region_bytes = generator.total_region_bytes();
        let read_only = matches!(spec.rw, RwMode::Read | RwMode::RandRead);
        let passes_until_runtime =
            spec.time_based && spec.verify.is_some() && spec.do_verify && !read_only;
        // The limits fio 3.33 stops at, as extent.rs estimates them: `io_size` (else the
        // region) and `number_ios` over every loop, neither for a time-based job, which only
        // breaks at `size` to read back what it wrote.
        let bytes_limit = extent::clone_bytes(spec, region_bytes)
            .or(passes_until_runtime.then_some(region_bytes));
        let runtime_end = spec
            .runtime_ns
            .filter(|&runtime| runtime > 0)
            .map(|runtime| start + spec.ramp_time_ns + runtime);
        // fio turns a byte rate into I/Os of the direction's smallest block (`usec_for_io()`).
        let poisson_iops = [0, 1, 2].map(|ddir| {
            if !spec.rate_poisson {
                return None;
            }
            match (spec.rate_iops[ddir], spec.rate[ddir]) {
                (Some(iops), _) if iops > 0 => Some(iops as f64),
                (_, Some(bytes)) if bytes > 0 => Some(bytes as f64 / spec.bs[ddir].min() as f64),
                _ => None,
            }
        });
        let fsync_kind = if spec.fsync > 0 {
            IoKind::Fsync
        } else {
            IoKind::Fdatasync
        };
        let replay = spec.replay.as_ref().and_then(|replay| {
            let log = replay.log.clone()?;
            Some(Box::new(ReplaySource::new(log, replay, start, depth)))
        });
        let plain = replay.is_none()
            && spec
                .rate
                .iter()
                .chain(&spec.rate_iops)
                .all(|r| r.is_none_or(|r| r == 0))
            && poisson_iops.iter().all(Option::is_none)
            && spec.thinktime_ns == 0
            && !spec.verify_only
            && spec.fsync.max(spec.fdatasync) == 0
            && !generator.may_script();
        JobRunner {
            plain,
            pass_bytes_counted: 0,
            replay,
            generator,
            rng,
            depth,
            complete_min: spec.iodepth_batch_complete_min.clamp(1, depth),
            iodepth_low: match spec.iodepth_low {
                0 => depth,
                low => low.min(depth),
            },
            in_flight: 0,
            completed_unreaped: 0,
            draining_to_low: false,
            runtime_end,
            bytes_limit,
            ios_limit: extent::clone_count_cap(spec),
            bytes_issued: 0,
            ios_issued: 0,
            rate_start: start,
            rate_bytes: spec.rate,
            rate_iops: spec.rate_iops,
            bytes_issued_dir: [0; 3],
            ios_issued_dir: [0; 3],
            pass_bytes_dir: [0; 3],
            counted: [0, 1, 2].map(|ddir| counted_dirs(spec.rw).contains(&ddir)),
            poisson_iops,
            poisson_due: [start; 3],
            thinktime_ns: spec.thinktime_ns,
            thinktime_blocks: spec.thinktime_blocks.max(1),
            thinktime_on_issue: spec.thinktime_on_issue,
            thinktime_quiesce: spec.thinktime_quiesce,
            verify_only: spec.verify_only,
            think_counter: 0,
            think_after_quiesce: false,
            think_until: start,
            fsync_every: spec.fsync.max(spec.fdatasync),
            fsync_kind,
            writes_since_sync: 0,
            sync_pending: false,
            sync_in_flight: false,
            end_fsync: spec.end_fsync,
            end_fsync_files: 0,
            wrote_anything: false,
            finished_submitting: false,
            held: None,
            held_kind: None,
            passes_until_runtime,
        }
    }

    /// Whether the job's `runtime` is over at `now`.
    pub fn runtime_over(&self, now: Time) -> bool {
        self.runtime_end.is_some_and(|end| now >= end)
    }

    /// After a read-back: a time-based verify job starts another pass of writes while time
    /// remains. False when the job is done.
    pub fn next_pass(&mut self, now: Time) -> bool {
        if !self.passes_until_runtime || self.runtime_over(now) || self.in_flight > 0 {
            return false;
        }
        self.bytes_issued = 0;
        self.pass_bytes_dir = [0; 3];
        self.pass_bytes_counted = 0;
        self.finished_submitting = false;
        true
    }

    /// I/Os submitted and not yet reaped.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Completions still to come before the job reaps its next group
    /// (`iodepth_batch_complete_min` less those already in; 0 with nothing in flight): fio's
    /// `min` of the `io_getevents(min, max)` it waits in.
    pub fn completions_wanted(&self) -> u32 {
        if self.in_flight == 0 {
            return 0;
        }
        let pending = self.in_flight - self.completed_unreaped;
        self.complete_min
            .saturating_sub(self.completed_unreaped)
            .clamp(1, pending.max(1))
    }

    /// The size of each of the clone's files (see [`IoGenerator::set_file_bytes`]).
    pub fn set_file_bytes(&mut self, bytes: Vec<u64>) {
        self.generator.set_file_bytes(bytes);
    }

    /// Bytes submitted so far.
    pub fn bytes_issued(&self) -> u64 {
        self.bytes_issued
    }

    /// Stops submitting new I/O (e.g. `exitall`, SIGINT); in-flight I/O still completes.
    pub fn stop(&mut self) {
        self.finished_submitting = true;
        self.held = None;
        self.held_kind = None;
        // Stopped for good: no further pass of a time-based verify job either.
        self.passes_until_runtime = false;
    }

    /// Bytes this pass toward the job's size: fio counts reads and writes of a mixed job,
    /// the writes of any other writing job (trimwrite's trims do not count, so it trims and
    /// writes `size` each), else the reads, else the trims.
    #[inline]
    fn bytes_counted(&self) -> u64 {
        if self.verify_only {
            return self.bytes_issued;
        }
        self.pass_bytes_counted
    }

    #[inline]
    fn limits_reached(&self, now: Time) -> bool {
        self.runtime_end.is_some_and(|end| now >= end)
            || self
                .bytes_limit
                .is_some_and(|limit| self.bytes_counted() >= limit)
            || self.ios_limit.is_some_and(|limit| self.ios_issued >= limit)
    }

    /// Earliest time the rate limits allow an I/O of direction `kind`.
    fn rate_allows_at(&self, kind: IoKind) -> Time {
        let Some(ddir) = kind.ddir() else {
            return 0;
        };
        if self.poisson_iops[ddir].is_some() {
            return self.poisson_due[ddir];
        }
        let mut at = 0;
        if let Some(rate) = self.rate_bytes[ddir].filter(|&r| r > 0) {
            let due = u128::from(self.bytes_issued_dir[ddir]) * 1_000_000_000 / u128::from(rate);
            at = at.max(self.rate_start + due as Time);
        }
        if let Some(iops) = self.rate_iops[ddir].filter(|&r| r > 0) {
            let due = u128::from(self.ios_issued_dir[ddir]) * 1_000_000_000 / u128::from(iops);
            at = at.max(self.rate_start + due as Time);
        }
        at
    }

    fn issue(&mut self, unit: IoUnit, now: Time) -> Step {
        // fio's verify_only: the workload runs as written, its writes turned into reads that
        // check what an earlier run left there.
        let unit = if self.verify_only && unit.kind == IoKind::Write {
            IoUnit {
                kind: IoKind::Read,
                ..unit
            }
        } else {
            unit
        };
        self.in_flight += 1;
        match unit.kind.ddir() {
            Some(ddir) => {
                self.count_data(ddir, unit.len);
                if let Some(iops) = self.poisson_iops[ddir] {
                    // Exponential gaps of mean 1/iops: fio's `-log(U) / iops`.
                    let gap = -(1.0 - self.rng.unit()).ln() / iops;
                    self.poisson_due[ddir] += (gap * 1e9) as Time;
                }
                if ddir == DDIR_WRITE
                    && self.fsync_every > 0
                    && self.writes_since_sync >= self.fsync_every
                {
                    self.sync_pending = true;
                }
            }
            None => self.sync_in_flight = true,
        }
        if self.in_flight >= self.depth && self.iodepth_low < self.depth {
            self.draining_to_low = true;
        }
        if unit.kind.ddir().is_some() {
            // fio checks for a think after every submission (`handle_thinktime()` in do_io()'s
            // loop), so a count reached while it quiesced stalls again at the next one.
            if self.thinktime_on_issue {
                self.think_counter += 1;
            }
            self.check_think(now);
        }
        Step::Submit(unit)
    }

    /// The sync `fsync=N` / `fdatasync=N` asks for, on the file fio would pick for the next
    /// I/O: fio chooses the file (advancing the round robin) before it turns the I/O into a
    /// sync (`set_io_u_file()` then `fill_io_u()`).
    fn sync_unit(&mut self) -> IoUnit {
        IoUnit {
            kind: self.fsync_kind,
            file: self.generator.next_file(&mut self.rng),
            offset: 0,
            len: 0,
        }
    }

    /// Whether [`JobRunner::next`] at `now` would answer [`Step::Wait`] and change nothing:
    /// a driver that just submitted asks this instead of stepping again (the second ask per
    /// wake-up was a tenth of a request's cost). False where `next` would do anything else,
    /// or would wait only after changing state (its limits just reached, a drain ending).
    #[inline]
    pub fn waits(&self, now: Time) -> bool {
        if self.replay.is_some() {
            return false;
        }
        if self.sync_in_flight {
            return true;
        }
        if !self.finished_submitting && self.limits_reached(now) {
            return false;
        }
        if self.finished_submitting {
            return self.in_flight > 0;
        }
        if self.think_after_quiesce {
            return true;
        }
        if self.think_until > now {
            return false;
        }
        if self.sync_pending {
            return self.in_flight > 0;
        }
        if self.draining_to_low {
            return self.in_flight > self.iodepth_low;
        }
        self.in_flight == self.depth
    }

    /// What the job wants at `now`.
    #[inline]
    pub fn next(&mut self, now: Time) -> Step {
        if self.plain
            && !self.finished_submitting
            && !self.sync_in_flight
            && !self.draining_to_low
            && self.think_until <= now
            && !self.limits_reached(now)
        {
            return self.next_plain(now);
        }
        self.next_general(now)
    }

    /// [`JobRunner::next`] by every rule.
    fn next_general(&mut self, now: Time) -> Step {
        if self.replay.is_some() {
            return self.next_replayed(now);
        }
        if self.sync_in_flight {
            return Step::Wait;
        }
        if !self.finished_submitting && self.limits_reached(now) {
            // The pass (or the job) is done; a time-based verify job may still go again.
            self.finished_submitting = true;
            self.held = None;
            self.held_kind = None;
        }
        if self.finished_submitting {
            if self.in_flight > 0 {
                return Step::Wait;
            }
            // fio syncs every N writes before the next I/O; after the last one there is none.
            self.sync_pending = false;
            let files = self.generator.regions().len();
            if self.end_fsync && self.wrote_anything && self.end_fsync_files < files {
                let file = self.end_fsync_files;
                self.end_fsync_files += 1;
                return self.issue(
                    IoUnit {
                        kind: IoKind::Fsync,
                        file,
                        offset: 0,
                        len: 0,
                    },
                    now,
                );
            }
            return Step::Done;
        }
        if self.think_after_quiesce {
            return Step::Wait;
        }
        if self.think_until > now {
            return Step::SleepUntil(self.think_until);
        }
        if self.sync_pending {
            if self.in_flight > 0 {
                return Step::Wait;
            }
            self.sync_pending = false;
            self.writes_since_sync = 0;
            let unit = self.sync_unit();
            return self.issue(unit, now);
        }
        if self.draining_to_low {
            if self.in_flight > self.iodepth_low {
                return Step::Wait;
            }
            self.draining_to_low = false;
        }
        let free = self.depth - self.in_flight;
        // fio commits what it has queued whenever it must wait for completions, so
        // `iodepth_batch_submit` groups submissions without holding free slots back: the
        // queue refills continuously (formats.md §5.1).
        if free == 0 {
            return Step::Wait;
        }
        if self.held.is_some() || self.generator.next_is_scripted() {
            let unit = match self.held.take() {
                Some(unit) => unit,
                None => self.generator.next(&mut self.rng),
            };
            let allowed_at = self.rate_allows_at(unit.kind);
            if allowed_at > now {
                self.held = Some(unit);
                return Step::SleepUntil(allowed_at);
            }
            return self.issue(unit, now);
        }
        let drawn = match self.held_kind.take() {
            Some(kind) => kind,
            None => self.generator.choose_kind(&mut self.rng),
        };
        match self.rate_direction(drawn, now) {
            Ok(kind) => {
                let unit = self.generator.next_of_kind(kind, &mut self.rng);
                if self.generator.exhausted() {
                    // Every pass over the files is over before the size was reached (gaps,
                    // runs past the end): fio ends the job there.
                    self.finished_submitting = true;
                    return self.next(now);
                }
                self.issue(unit, now)
            }
            Err((kind, at)) => {
                self.held_kind = Some(kind);
                Step::SleepUntil(at)
            }
        }
    }

    /// [`JobRunner::next`] for a plain job (no replay, rate limit, think time, sync or
    /// scripted unit, so none of those checks can answer) with submission under way and no
    /// drain or limit reached: what the general steps come to then, without them (issue 34:
    /// they were ~100 instructions of every I/O).
    #[inline]
    fn next_plain(&mut self, now: Time) -> Step {
        if self.in_flight == self.depth {
            return Step::Wait;
        }
        let kind = self.generator.choose_kind(&mut self.rng);
        let unit = self.generator.next_of_kind(kind, &mut self.rng);
        if self.generator.exhausted() {
            self.finished_submitting = true;
            return self.next(now);
        }
        self.issue_plain(unit)
    }

    /// The counters a data I/O of `len` bytes in direction `ddir` moves as it is issued.
    #[inline]
    fn count_data(&mut self, ddir: usize, len: u64) {
        self.bytes_issued += len;
        self.ios_issued += 1;
        self.bytes_issued_dir[ddir] += len;
        self.pass_bytes_dir[ddir] += len;
        if self.counted[ddir] {
            self.pass_bytes_counted += len;
        }
        self.ios_issued_dir[ddir] += 1;
        if ddir == DDIR_WRITE {
            self.wrote_anything = true;
            self.writes_since_sync += 1;
        }
    }

    /// [`JobRunner::issue`] of a plain job's data I/O: no `verify_only`, Poisson rate, sync
    /// count or think time to consult, so only the counters move.
    #[inline]
    fn issue_plain(&mut self, unit: IoUnit) -> Step {
        let ddir = unit.kind.ddir().expect("a plain job issues data I/O");
        self.in_flight += 1;
        self.count_data(ddir, unit.len);
        if self.in_flight >= self.depth && self.iodepth_low < self.depth {
            self.draining_to_low = true;
        }
        if self.thinktime_on_issue {
            self.think_counter += 1;
        }
        Step::Submit(unit)
    }

    /// A replaying job's next step: its log's, until `runtime` or a stop ends it.
    fn next_replayed(&mut self, now: Time) -> Step {
        if self.runtime_over(now) {
            self.finished_submitting = true;
        }
        if self.finished_submitting {
            return if self.in_flight > 0 {
                Step::Wait
            } else {
                Step::Done
            };
        }
        let Some(source) = self.replay.as_mut() else {
            return Step::Done;
        };
        match source.next(now) {
            Step::Submit(unit) => self.issue(unit, now),
            other => other,
        }
    }

    /// fio's `rate_ddir()`: a direction ahead of its rate hands its turn to the other one of
    /// a mixed job if that one is behind; if both are ahead, the job sleeps until the first
    /// of them may go, and goes with that one. `Err` carries the direction and the time.
    fn rate_direction(&self, kind: IoKind, now: Time) -> Result<IoKind, (IoKind, Time)> {
        let allowed_at = self.rate_allows_at(kind);
        if allowed_at <= now {
            return Ok(kind);
        }
        let other = match kind {
            IoKind::Read => IoKind::Write,
            IoKind::Write => IoKind::Read,
            _ => return Err((kind, allowed_at)),
        };
        if !self.generator.mixes_in(other) {
            return Err((kind, allowed_at));
        }
        let other_at = self.rate_allows_at(other);
        if other_at <= now {
            Ok(other)
        } else if allowed_at <= other_at {
            Err((kind, allowed_at))
        } else {
            Err((other, other_at))
        }
    }

    /// One of the job's I/Os completed at `now`.
    #[inline]
    pub fn complete(&mut self, now: Time, unit: &IoUnit) {
        if let Some(source) = self.replay.as_mut() {
            source.complete(now, unit);
        }
        assert!(
            self.in_flight > self.completed_unreaped,
            "completion without an I/O in flight"
        );
        if unit.kind.ddir().is_none() {
            self.sync_in_flight = false;
        }
        self.completed_unreaped += 1;
        if self.completed_unreaped >= self.complete_min || self.completed_unreaped == self.in_flight
        {
            self.in_flight -= self.completed_unreaped;
            self.completed_unreaped = 0;
        }
        if !self.thinktime_on_issue && unit.kind.ddir().is_some() {
            // Completions while quiescing count toward the next think, as fio's `io_blocks`
            // do (its `last_thinktime_blocks` is taken before `io_u_quiesce()`).
            self.think_counter += 1;
            self.check_think(now);
        }
        if self.think_after_quiesce && self.in_flight == 0 {
            self.think_after_quiesce = false;
            self.think_until = now + self.thinktime_ns;
        }
    }

    /// Every `thinktime_blocks` I/Os (issued or completed, per `thinktime_blocks_type`) the
    /// job stalls for `thinktime`: fio first waits for what it has in flight, then sleeps.
    fn check_think(&mut self, now: Time) {
        if self.thinktime_ns == 0
            || self.think_after_quiesce
            || self.think_counter < self.thinktime_blocks
        {
            return;
        }
        self.think_counter = 0;
        if self.thinktime_quiesce && self.in_flight > 0 {
            self.think_after_quiesce = true;
        } else {
            self.think_until = now + self.thinktime_ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{IoEngine, RwMode};

    fn spec() -> JobSpec {
        let mut spec = JobSpec::new("t");
        spec.size = Some(crate::job::SizeOrPercent::Bytes(64 * 1024));
        spec
    }

    fn region() -> Vec<FileRegion> {
        region_of(64 * 1024)
    }

    fn region_of(len: u64) -> Vec<FileRegion> {
        vec![FileRegion { start: 0, len }]
    }

    /// Runs a runner against an instant device; returns (submissions, finish time).
    fn run(runner: &mut JobRunner, service_ns: Time) -> (Vec<IoUnit>, Time) {
        let mut now = 0;
        let mut submitted = Vec::new();
        let mut in_device: Vec<(Time, IoUnit)> = Vec::new();
        for _ in 0..100_000 {
            match runner.next(now) {
                Step::Submit(unit) => {
                    submitted.push(unit);
                    in_device.push((now + service_ns, unit));
                }
                Step::SleepUntil(t) => now = t,
                Step::Wait => {
                    in_device.sort_by_key(|(t, _)| *t);
                    let (t, unit) = in_device.remove(0);
                    now = now.max(t);
                    runner.complete(now, &unit);
                }
                Step::Done => return (submitted, now),
            }
        }
        panic!("runner did not finish");
    }

    #[test]
    fn trimwrite_trims_and_writes_the_size_each() {
        // fio 3.33 on a loop device, `rw=trimwrite bs=64k size=32m`: 32 MiB trimmed and 32
        // MiB written (iosched stopped at 16 MiB of each).
        let mut spec = spec();
        spec.rw = RwMode::TrimWrite;
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        let (submitted, _) = run(&mut runner, 1000);
        let bytes = |kind| -> u64 {
            submitted
                .iter()
                .filter(|unit| unit.kind == kind)
                .map(|unit| unit.len)
                .sum()
        };
        assert_eq!(
            (bytes(IoKind::Trim), bytes(IoKind::Write)),
            (64 << 10, 64 << 10)
        );
    }

    /// `waits()` answers true only where `next()` waits and changes nothing (the driver skips
    /// that call on its word), and it does answer true at a full queue: checked step by step
    /// over jobs that wait for every reason `next()` has (depth, drain to `iodepth_low`,
    /// fsync, think time with and without quiescing first, end of the job).
    #[test]
    fn waits_is_next_waiting_without_a_change() {
        let mut specs = Vec::new();
        for (depth, low, fsync, think, end_fsync) in [
            (4, 0, 0, 0, false),
            (8, 2, 0, 0, false),
            (4, 0, 3, 0, true),
            (4, 0, 0, 700, false),
            (1, 0, 2, 300, true),
        ] {
            let mut spec = spec();
            spec.rw = RwMode::RandWrite;
            spec.ioengine = IoEngine::Libaio;
            spec.direct = true;
            spec.iodepth = depth;
            spec.iodepth_low = low;
            spec.fsync = fsync;
            spec.thinktime_ns = think;
            spec.end_fsync = end_fsync;
            specs.push(spec);
        }
        let mut timed = specs[0].clone();
        timed.time_based = true;
        timed.runtime_ns = Some(20_000);
        specs.push(timed);
        let mut sleeps_in_flight = specs[3].clone();
        sleeps_in_flight.thinktime_quiesce = false;
        specs.push(sleeps_in_flight);
        let mut full_queue_waits = 0;
        for spec in &specs {
            let mut runner = JobRunner::new(spec, region(), 0, Rng::new(3));
            let (mut now, mut in_device) = (0, Vec::new());
            loop {
                let claimed = runner.waits(now);
                let before = format!("{runner:?}");
                let step = runner.next(now);
                if claimed {
                    assert_eq!(step, Step::Wait, "{spec:?} at {now}");
                    assert_eq!(
                        format!("{runner:?}"),
                        before,
                        "waits() but next() changed state"
                    );
                    full_queue_waits += usize::from(runner.in_flight() == runner.depth);
                }
                match step {
                    Step::Submit(unit) => in_device.push((now + 1000, unit)),
                    Step::SleepUntil(t) => now = t,
                    Step::Wait => {
                        let (t, unit) = in_device.remove(0);
                        now = now.max(t);
                        runner.complete(now, &unit);
                    }
                    Step::Done => break,
                }
            }
        }
        assert!(full_queue_waits > 0);
    }

    #[test]
    fn sync_engine_keeps_one_io_in_flight_and_covers_size_once() {
        let mut runner = JobRunner::new(&spec(), region(), 0, Rng::new(1));
        let (submitted, end) = run(&mut runner, 1000);
        assert_eq!(submitted.len(), 16);
        assert_eq!(end, 16 * 1000);
    }

    #[test]
    fn async_engine_fills_to_iodepth() {
        let mut spec = spec();
        spec.ioengine = IoEngine::Libaio;
        spec.direct = true;
        spec.iodepth = 4;
        spec.iodepth_low = 4;
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        let (submitted, end) = run(&mut runner, 1000);
        assert_eq!(submitted.len(), 16);
        // Four at a time: four rounds of service.
        assert_eq!(end, 4 * 1000);
    }

    /// A spec that leaves `iodepth_low` unset refills after each completion, as fio does when
    /// `iodepth_low` is not given (fio 3.33 sets it to `iodepth`); before, a hand-built spec
    /// drained its queue to one before refilling.
    #[test]
    fn unset_iodepth_low_refills_after_each_completion() {
        let mut spec = spec();
        spec.ioengine = IoEngine::Libaio;
        spec.direct = true;
        spec.iodepth = 4;
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        let mut in_flight = Vec::new();
        while let Step::Submit(unit) = runner.next(0) {
            in_flight.push(unit);
        }
        assert_eq!(in_flight.len(), 4);
        runner.complete(10, &in_flight[0]);
        assert!(matches!(runner.next(10), Step::Submit(_)));
    }

    /// Buffered libaio submits synchronously: depth 1 whatever iodepth says.
    #[test]
    fn buffered_libaio_is_synchronous() {
        let mut spec = spec();
        spec.ioengine = IoEngine::Libaio;
        spec.iodepth = 4;
        assert_eq!(spec.effective_depth(), 1);
    }

    #[test]
    fn thinktime_stalls_after_each_completion() {
        let mut spec = spec();
        spec.thinktime_ns = 500;
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        let (_, end) = run(&mut runner, 1000);
        // 16 services, 15 think periods between them (the last completion ends the job).
        assert_eq!(end, 16 * 1000 + 15 * 500);
    }

    /// `verify_only`: the same offsets a write job would write, issued as reads, no fsyncs.
    #[test]
    fn verify_only_reads_where_the_job_would_write() {
        let mut writer = spec();
        writer.rw = RwMode::RandWrite;
        writer.fsync = 4;
        let mut checker = writer.clone();
        checker.verify_only = true;
        let (written, _) = run(&mut JobRunner::new(&writer, region(), 0, Rng::new(5)), 10);
        let (read, _) = run(&mut JobRunner::new(&checker, region(), 0, Rng::new(5)), 10);
        let data = |units: &[IoUnit], kind| -> Vec<(u64, u64)> {
            units
                .iter()
                .filter(|u| u.kind == kind)
                .map(|u| (u.offset, u.len))
                .collect()
        };
        assert_eq!(data(&read, IoKind::Read), data(&written, IoKind::Write));
        assert_eq!(read.len(), 16, "reads only: {read:?}");
    }

    /// The order of queues (Q), completions (C) and sleeps (S) of a job under a device that
    /// completes its oldest I/O whenever the job waits.
    fn think_pattern(spec: &JobSpec) -> String {
        let mut runner = JobRunner::new(spec, region_of(12 * 4096), 0, Rng::new(1));
        let (mut now, mut pattern) = (0, String::new());
        let mut in_flight = std::collections::VecDeque::new();
        for _ in 0..1000 {
            match runner.next(now) {
                Step::Submit(unit) => {
                    pattern.push('Q');
                    in_flight.push_back(unit);
                }
                Step::Wait => {
                    now += 1;
                    runner.complete(now, &in_flight.pop_front().expect("a wait with I/O"));
                    pattern.push('C');
                }
                Step::SleepUntil(at) => {
                    assert_eq!(at, now + spec.thinktime_ns, "a think starts at once");
                    pattern.push('S');
                    now = at;
                }
                Step::Done => return pattern,
            }
        }
        panic!("the job never ended: {pattern}");
    }

    fn libaio_qd4_thinking_every_two() -> JobSpec {
        let mut spec = spec();
        spec.ioengine = IoEngine::Libaio;
        spec.direct = true;
        spec.iodepth = 4;
        spec.size = Some(crate::job::SizeOrPercent::Bytes(12 * 4096));
        spec.thinktime_ns = 20_000_000;
        spec.thinktime_blocks = 2;
        spec
    }

    /// fio 3.33 run on this machine (`--debug=io`, libaio, direct, iodepth=4, thinktime=20ms,
    /// thinktime_blocks=2, 12 I/Os) queues and completes in exactly this order: it quiesces
    /// before each sleep, completions while quiescing count toward the next think, and a
    /// count already reached stalls again right after the next submission.
    #[test]
    fn thinktime_quiesces_as_fio_does() {
        let spec = libaio_qd4_thinking_every_two();
        assert_eq!(think_pattern(&spec), "QQQQCQCCCCSQCSQQQQCCCCSQCSQC");
    }

    /// `thinktime_blocks_type=issue` counts submissions and still quiesces before sleeping.
    #[test]
    fn thinktime_on_issue_quiesces_after_each_batch() {
        let mut spec = libaio_qd4_thinking_every_two();
        spec.thinktime_blocks = 4;
        spec.thinktime_on_issue = true;
        assert_eq!(think_pattern(&spec), "QQQQCCCCSQQQQCCCCSQQQQCCCC");
    }

    /// aio-stress with `usleep(1000)` after each io_submit of four
    /// (`iosched_thinktime_quiesce=0`): the sleep starts with the four in flight.
    #[test]
    fn thinktime_without_quiesce_sleeps_with_ios_in_flight() {
        let mut spec = libaio_qd4_thinking_every_two();
        spec.iodepth_low = 4;
        spec.thinktime_ns = 1_000_000;
        spec.thinktime_blocks = 4;
        spec.thinktime_on_issue = true;
        spec.thinktime_quiesce = false;
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        for _ in 0..4 {
            assert!(matches!(runner.next(0), Step::Submit(_)));
        }
        assert_eq!(runner.next(0), Step::SleepUntil(1_000_000));
    }

    #[test]
    fn rate_iops_spaces_submissions() {
        let mut spec = spec();
        spec.rate_iops = [Some(1000), None, None];
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        let (_, end) = run(&mut runner, 1000);
        // The 16th read may start at 15 ms.
        assert_eq!(end, 15_000_000 + 1000);
    }

    /// `rate=1m,2m` on a 50/50 mix: each direction keeps its own rate, the read's turns going
    /// to writes while reads are ahead (fio gives read 1 MiB/s, write 2 MiB/s).
    #[test]
    fn a_mixed_job_keeps_each_directions_rate() {
        let mut spec = spec();
        spec.rw = RwMode::RandRw;
        spec.size = Some(crate::job::SizeOrPercent::Bytes(64 << 20));
        spec.time_based = true;
        spec.runtime_ns = Some(2_000_000_000);
        spec.rate = [Some(1 << 20), Some(2 << 20), None];
        let mut runner = JobRunner::new(&spec, region_of(64 << 20), 0, Rng::new(3));
        let (submitted, end) = run(&mut runner, 1000);
        let bytes = |kind| {
            submitted
                .iter()
                .filter(|unit: &&IoUnit| unit.kind == kind)
                .map(|unit| unit.len)
                .sum::<u64>() as f64
        };
        let seconds = end as f64 / 1e9;
        let read = bytes(IoKind::Read) / seconds / f64::from(1 << 20);
        let write = bytes(IoKind::Write) / seconds / f64::from(1 << 20);
        assert!((0.95..=1.05).contains(&read), "read {read} MiB/s");
        assert!((1.9..=2.1).contains(&write), "write {write} MiB/s");
    }

    /// `rate_process=poisson`: the mean rate holds and the gaps vary as an exponential's do
    /// (standard deviation close to the mean), where the linear process spaces them evenly.
    #[test]
    fn poisson_rate_keeps_the_mean_with_exponential_gaps() {
        let mut spec = spec();
        spec.size = Some(crate::job::SizeOrPercent::Bytes(64 << 20));
        spec.rate_iops = [Some(1000), None, None];
        spec.rate_poisson = true;
        let mut runner = JobRunner::new(&spec, region_of(64 << 20), 0, Rng::new(5));
        let mut now = 0;
        let mut issued = Vec::new();
        while issued.len() < 4000 {
            match runner.next(now) {
                Step::Submit(unit) => {
                    issued.push(now);
                    runner.complete(now, &unit);
                }
                Step::SleepUntil(at) => now = at,
                other => panic!("{other:?}"),
            }
        }
        let gaps: Vec<f64> = issued.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((0.95e6..1.05e6).contains(&mean), "mean gap {mean} ns");
        assert!((0.9..1.1).contains(&(sd / mean)), "sd/mean {}", sd / mean);
    }

    /// A time-based verify job writes `size` a pass; after its read-back it goes again while
    /// time remains, and never once stopped (exitall, a signal, an error).
    #[test]
    fn a_time_based_verify_job_writes_in_passes_until_stopped() {
        let mut spec = spec();
        spec.rw = RwMode::RandWrite;
        spec.verify = Some("crc32c".into());
        spec.time_based = true;
        spec.runtime_ns = Some(1_000_000_000);
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        let (submitted, end) = run(&mut runner, 1000);
        assert_eq!(submitted.len(), 16, "one pass of size (64 KiB of 4 KiB)");
        assert!(!runner.next_pass(1_000_000_000), "never past the runtime");
        assert!(runner.next_pass(end));
        let (again, _) = run(&mut runner, 1000);
        assert_eq!(again.len(), 16);
        runner.stop();
        assert!(!runner.next_pass(end));
    }

    #[test]
    fn runtime_ends_a_time_based_job() {
        let mut spec = spec();
        spec.time_based = true;
        spec.runtime_ns = Some(1_000_000);
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        let (submitted, end) = run(&mut runner, 1000);
        assert_eq!(submitted.len(), 1000);
        assert_eq!(end, 1_000_000);
    }

    /// fio 3.33 here: a time-based job runs its whole runtime whatever its `io_size` or
    /// `number_ios` (1 s of `io_size=64k` did 295941 reads, of `number_ios=10` 7404428).
    #[test]
    fn time_based_ignores_io_size_and_number_ios() {
        for (io_size, number_ios) in [(Some(8192), None), (None, Some(2))] {
            let mut spec = spec();
            spec.time_based = true;
            spec.runtime_ns = Some(1_000_000);
            spec.io_size = io_size;
            spec.number_ios = number_ios;
            let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
            let (submitted, end) = run(&mut runner, 1000);
            assert_eq!((submitted.len(), end), (1000, 1_000_000), "{io_size:?}");
        }
    }

    /// fio 3.33 here: `number_ios=10 loops=3` read 30 blocks, one after another.
    #[test]
    fn number_ios_counts_every_loop() {
        let mut spec = spec();
        spec.number_ios = Some(3);
        spec.loops = 3;
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        let (submitted, _) = run(&mut runner, 1000);
        let offsets: Vec<u64> = submitted.iter().map(|unit| unit.offset).collect();
        assert_eq!(offsets, (0..9).map(|i| i * 4096).collect::<Vec<_>>());
    }

    #[test]
    fn fsync_every_n_writes_waits_for_the_writes() {
        let mut spec = spec();
        spec.rw = RwMode::Write;
        spec.fsync = 4;
        spec.end_fsync = true;
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        let (submitted, _) = run(&mut runner, 1000);
        let syncs = submitted
            .iter()
            .filter(|unit| unit.kind == IoKind::Fsync)
            .count();
        // 16 writes: a sync before the 5th, 9th and 13th (fio syncs before the next I/O, so
        // none follows the 16th), plus end_fsync; fio 3.33's iolog of this job lists 4.
        assert_eq!(syncs, 4);
        assert_eq!(submitted.last().unwrap().kind, IoKind::Fsync);
    }

    /// As fio: `fsync=N` syncs the file the round robin offers next (and so moves it on),
    /// `end_fsync` each file in turn.
    #[test]
    fn fsync_takes_the_next_file_in_rotation_and_end_fsync_every_file() {
        let mut spec = spec();
        spec.rw = RwMode::Write;
        spec.fsync = 1;
        spec.end_fsync = true;
        let regions = vec![
            FileRegion {
                start: 0,
                len: 16 * 1024,
            };
            3
        ];
        let mut runner = JobRunner::new(&spec, regions, 0, Rng::new(1));
        let (submitted, _) = run(&mut runner, 1000);
        let data: Vec<&IoUnit> = submitted
            .iter()
            .filter(|unit| unit.kind != IoKind::Fsync)
            .collect();
        // fio syncs before the next write, so the last write has no sync of its own.
        let files = data.len() * 2 - 1;
        // Writes and fsyncs alternate and share one rotation: 0 written, 1 synced, 2 written...
        for (index, unit) in submitted[..files].iter().enumerate() {
            assert_eq!(unit.file, index % 3, "{index}: {submitted:?}");
            let kind = if index % 2 == 0 {
                IoKind::Write
            } else {
                IoKind::Fsync
            };
            assert_eq!(unit.kind, kind, "{index}");
        }
        let end_syncs: Vec<usize> = submitted[files..].iter().map(|unit| unit.file).collect();
        assert_eq!(end_syncs, [0, 1, 2]);
    }

    #[test]
    fn batch_complete_min_reaps_in_groups() {
        let mut spec = spec();
        spec.ioengine = IoEngine::IoUring;
        spec.iodepth = 4;
        spec.iodepth_batch_complete_min = 4;
        spec.iodepth_batch_complete_max = 4;
        let mut runner = JobRunner::new(&spec, region(), 0, Rng::new(1));
        for _ in 0..4 {
            assert!(matches!(runner.next(0), Step::Submit(_)));
        }
        let unit = IoUnit {
            kind: IoKind::Read,
            file: 0,
            offset: 0,
            len: 4096,
        };
        assert_eq!(
            runner.completions_wanted(),
            4,
            "fio waits in io_getevents(4, ..)"
        );
        runner.complete(10, &unit);
        assert_eq!(runner.next(10), Step::Wait, "one completion is not a batch");
        assert_eq!(runner.completions_wanted(), 3);
        for _ in 0..3 {
            runner.complete(10, &unit);
        }
        assert_eq!(
            runner.completions_wanted(),
            0,
            "nothing in flight, nothing to wait for"
        );
        assert!(matches!(runner.next(10), Step::Submit(_)));
    }
}
