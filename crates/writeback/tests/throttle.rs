//! A scripted driver around the policy: one writer dirtying random pages as fast as the
//! throttle lets it, flushers whose requests take a fixed time. Proves the hard limit holds
//! (dirty + writeback never above the limit plus one writer's step) and that every page
//! dirtied is written back by an fsync at the end.

use std::collections::VecDeque;

use iosched_core::{Time, NSEC_PER_MSEC, NSEC_PER_USEC};
use iosched_writeback::{
    FlusherMode, FlusherStep, Notice, PageRange, QueueState, Throttle, Writeback, WritebackConfig,
    PAGE_SIZE,
};
use proptest::prelude::*;

const FILE_PAGES: u64 = 12_000;
/// Every writeback request takes this long at the device.
const SERVICE: Time = 200 * NSEC_PER_USEC;

/// The policy with its scripted writer, flushers and depth-1 device.
struct Rig {
    wb: Writeback,
    file: iosched_writeback::FileId,
    limit: u64,
    step_pages: u64,
    /// (completion time, range) of writeback in flight, FIFO like a device at depth 1.
    device: VecDeque<(Time, PageRange)>,
    /// Each flusher and when it next runs.
    flushers: Vec<(iosched_writeback::FlusherId, Time)>,
    rng: u64,
    writer_at: Time,
    written: u64,
    newly_dirtied: u64,
    peak: u64,
}

impl Rig {
    fn new(mode: FlusherMode, seed: u64, step_pages: u64) -> Rig {
        let mut config = WritebackConfig {
            flusher: mode,
            ..WritebackConfig::default()
        };
        config.set("mem", "64m").unwrap();
        let mut wb = Writeback::new(config, 1);
        let limit = wb.thresholds().limit;
        let file = wb.add_file(0, FILE_PAGES * PAGE_SIZE);
        Rig {
            wb,
            file,
            limit,
            step_pages,
            device: VecDeque::new(),
            flushers: Vec::new(),
            rng: seed | 1,
            writer_at: 0,
            written: 0,
            newly_dirtied: 0,
            peak: 0,
        }
    }

    /// The next event: the writer, a flusher, the device or the policy's timer.
    fn next_event(&self) -> Time {
        let device_at = self.device.front().map(|(t, _)| *t).unwrap_or(Time::MAX);
        let flusher_at = self.flushers.iter().map(|(_, t)| *t).min();
        let timer_at = self.wb.timer_at().unwrap_or(Time::MAX);
        let now = self
            .writer_at
            .min(device_at)
            .min(flusher_at.unwrap_or(Time::MAX))
            .min(timer_at);
        assert!(
            now < Time::MAX,
            "nothing left to run with writeback outstanding"
        );
        now
    }

    fn device_completes(&mut self, now: Time) {
        let (_, range) = self.device.pop_front().unwrap();
        self.wb.writeback_done(range, now);
        for entry in &mut self.flushers {
            entry.1 = entry.1.min(now);
        }
    }

    /// The writer dirties `step_pages` at a random place unless the throttle blocks it,
    /// and the hard limit is checked after each step.
    fn writer_steps(&mut self, now: Time) {
        match self.wb.balance_dirty_pages(self.step_pages, now) {
            Throttle::Block(pause) => self.writer_at = now + pause,
            throttle => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                let page = self.rng % (FILE_PAGES - self.step_pages);
                let bytes = self.step_pages * PAGE_SIZE;
                self.newly_dirtied += self.wb.write(self.file, page * PAGE_SIZE, bytes, now);
                self.written += self.step_pages;
                let pause = match throttle {
                    Throttle::Pause(p) => p,
                    _ => 0,
                };
                self.writer_at = now + NSEC_PER_USEC + pause;
            }
        }
        let cache = self.wb.cache();
        let held = cache.nr_dirty() + cache.nr_writeback();
        self.peak = self.peak.max(held);
        assert!(
            held <= self.limit + self.step_pages,
            "dirty {} + writeback {} over limit {} + {}",
            cache.nr_dirty(),
            cache.nr_writeback(),
            self.limit,
            self.step_pages
        );
    }

    /// Flushers the policy woke, and those due, run until they wait.
    fn flushers_run(&mut self, now: Time) {
        for notice in self.wb.take_notices() {
            let id = match notice {
                Notice::Spawned { id, .. } | Notice::Wake { id } => id,
            };
            self.flushers.retain(|(f, _)| *f != id);
            self.flushers.push((id, now));
        }
        let due: Vec<_> = self
            .flushers
            .iter()
            .filter(|(_, t)| *t <= now)
            .map(|(f, _)| *f)
            .collect();
        for id in due {
            self.flushers.retain(|(f, _)| *f != id);
            let wake_at = self.flusher_steps(id, now);
            if let Some(at) = wake_at {
                self.flushers.push((id, at));
            }
        }
    }

    /// One flusher submits until it waits; returns when it runs next (`None`: idle).
    fn flusher_steps(&mut self, id: iosched_writeback::FlusherId, now: Time) -> Option<Time> {
        loop {
            let queue = QueueState {
                async_requests: self.device.len() as u32,
                ..QueueState::default()
            };
            match self.wb.flusher_step(id, now, queue) {
                FlusherStep::Submit(range) => {
                    let start = self.device.back().map(|(t, _)| *t).unwrap_or(now).max(now);
                    self.device.push_back((start + SERVICE, range));
                }
                FlusherStep::WaitRequest => {
                    return Some(self.device.front().map(|(t, _)| *t).unwrap_or(now + 1))
                }
                FlusherStep::CongestionWait(t) | FlusherStep::SleepUntil(t) => return Some(t),
                FlusherStep::Idle | FlusherStep::Exit => return None,
            }
        }
    }

    /// end_fsync: every dirty page goes, and every page dirtied was written exactly once.
    fn fsync_writes_every_dirtied_page(&mut self, now: Time) {
        let wb = &mut self.wb;
        let before = wb.cache().written_back();
        let dirty = wb.cache().nr_dirty();
        let runs = wb.fsync_start(self.file);
        assert_eq!(runs.iter().map(|r| r.count).sum::<u64>(), dirty);
        for range in runs {
            wb.writeback_done(range, now);
        }
        assert_eq!(wb.cache().written_back() - before, dirty);
        assert_eq!(wb.cache().nr_dirty(), 0);
        assert!(wb.fsync_start(self.file).is_empty());
        assert_eq!(wb.cache().written_back(), self.newly_dirtied);
        wb.check_invariants();
    }
}

fn run(mode: FlusherMode, seed: u64, step_pages: u64) {
    let mut rig = Rig::new(mode, seed, step_pages);
    let mut now: Time = 0;
    for _ in 0..400_000 {
        now = rig.next_event();
        if Some(now) == rig.wb.timer_at() {
            rig.wb.timer(now);
        }
        if rig.device.front().is_some_and(|(t, _)| *t == now) {
            rig.device_completes(now);
        }
        if now == rig.writer_at {
            rig.writer_steps(now);
        }
        rig.flushers_run(now);
        if now > 1_000 * NSEC_PER_MSEC {
            // The writer stops; let writeback in flight (and queued in flushers) finish.
            rig.writer_at = Time::MAX;
            if rig.device.is_empty() && rig.wb.cache().nr_writeback() == 0 {
                break;
            }
        }
    }
    assert!(
        rig.written > rig.limit,
        "the writer never reached the limit"
    );
    assert!(
        rig.peak >= rig.wb.thresholds().freerun(),
        "throttling never engaged: peak {}",
        rig.peak
    );
    rig.wb.check_invariants();
    assert_eq!(rig.wb.cache().nr_writeback(), 0);
    rig.fsync_writes_every_dirtied_page(now);
}

#[test]
fn per_bdi_writer_stays_under_the_hard_limit() {
    run(FlusherMode::PerBdi, 7, 1);
}

#[test]
fn pdflush_writer_stays_under_the_hard_limit() {
    run(FlusherMode::Pdflush, 7, 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4))]
    #[test]
    fn hard_limit_holds_for_any_step(seed in 1u64..1000, step in 1u64..64, pdflush in any::<bool>()) {
        let mode = if pdflush { FlusherMode::Pdflush } else { FlusherMode::PerBdi };
        run(mode, seed, step);
    }
}
