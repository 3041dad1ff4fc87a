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

fn run(mode: FlusherMode, seed: u64, step_pages: u64) {
    let mut config = WritebackConfig {
        flusher: mode,
        ..WritebackConfig::default()
    };
    config.set("mem", "64m").unwrap();
    let mut wb = Writeback::new(config, 1);
    let limit = wb.thresholds().limit;
    let file_pages = 12_000u64;
    let file = wb.add_file(0, file_pages * PAGE_SIZE);
    // (completion time, range) of writeback in flight, FIFO like a device at depth 1.
    let mut device: VecDeque<(Time, PageRange)> = VecDeque::new();
    let mut flushers: Vec<(iosched_writeback::FlusherId, Time)> = Vec::new();
    let mut rng = seed | 1;
    let mut now: Time = 0;
    let mut writer_at: Time = 0;
    let mut written = 0u64;
    let mut newly_dirtied = 0u64;
    let service = 200 * NSEC_PER_USEC;
    let mut peak = 0;
    for _ in 0..400_000 {
        // Next event: writer, a flusher, or the device.
        let device_at = device.front().map(|(t, _)| *t).unwrap_or(Time::MAX);
        let flusher_at = flushers.iter().map(|(_, t)| *t).min().unwrap_or(Time::MAX);
        let timer_at = wb.timer_at().unwrap_or(Time::MAX);
        now = writer_at.min(device_at).min(flusher_at).min(timer_at);
        assert!(
            now < Time::MAX,
            "nothing left to run with writeback outstanding"
        );
        if now == timer_at {
            wb.timer(now);
        }
        if now == device_at {
            let (_, range) = device.pop_front().unwrap();
            wb.writeback_done(range, now);
            for entry in &mut flushers {
                entry.1 = entry.1.min(now);
            }
        }
        if now == writer_at {
            match wb.balance_dirty_pages(step_pages, now) {
                Throttle::Block(pause) => writer_at = now + pause,
                throttle => {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let page = rng % (file_pages - step_pages);
                    newly_dirtied += wb.write(file, page * PAGE_SIZE, step_pages * PAGE_SIZE, now);
                    written += step_pages;
                    let pause = match throttle {
                        Throttle::Pause(p) => p,
                        _ => 0,
                    };
                    writer_at = now + NSEC_PER_USEC + pause;
                }
            }
            let cache = wb.cache();
            peak = peak.max(cache.nr_dirty() + cache.nr_writeback());
            assert!(
                cache.nr_dirty() + cache.nr_writeback() <= limit + step_pages,
                "dirty {} + writeback {} over limit {limit} + {step_pages}",
                cache.nr_dirty(),
                cache.nr_writeback()
            );
        }
        for notice in wb.take_notices() {
            let id = match notice {
                Notice::Spawned { id, .. } | Notice::Wake { id } => id,
            };
            flushers.retain(|(f, _)| *f != id);
            flushers.push((id, now));
        }
        let due: Vec<_> = flushers
            .iter()
            .filter(|(_, t)| *t <= now)
            .map(|(f, _)| *f)
            .collect();
        for id in due {
            flushers.retain(|(f, _)| *f != id);
            loop {
                let queue = QueueState {
                    async_requests: device.len() as u32,
                    ..QueueState::default()
                };
                match wb.flusher_step(id, now, queue) {
                    FlusherStep::Submit(range) => {
                        let start = device.back().map(|(t, _)| *t).unwrap_or(now).max(now);
                        device.push_back((start + service, range));
                    }
                    FlusherStep::WaitRequest => {
                        flushers.push((id, device.front().map(|(t, _)| *t).unwrap_or(now + 1)));
                        break;
                    }
                    FlusherStep::CongestionWait(t) | FlusherStep::SleepUntil(t) => {
                        flushers.push((id, t));
                        break;
                    }
                    FlusherStep::Idle | FlusherStep::Exit => break,
                }
            }
        }
        if now > 1_000 * NSEC_PER_MSEC {
            // The writer stops; let writeback in flight (and queued in flushers) finish.
            writer_at = Time::MAX;
            if device.is_empty() && wb.cache().nr_writeback() == 0 {
                break;
            }
        }
    }
    assert!(written > limit, "the writer never reached the limit");
    assert!(
        peak >= wb.thresholds().freerun(),
        "throttling never engaged: peak {peak}"
    );
    wb.check_invariants();
    assert_eq!(wb.cache().nr_writeback(), 0);
    // end_fsync: every dirty page goes, and every page dirtied was written exactly once.
    let before = wb.cache().written_back();
    let dirty = wb.cache().nr_dirty();
    let runs = wb.fsync_start(file);
    assert_eq!(runs.iter().map(|r| r.count).sum::<u64>(), dirty);
    for range in runs {
        wb.writeback_done(range, now);
    }
    assert_eq!(wb.cache().written_back() - before, dirty);
    assert_eq!(wb.cache().nr_dirty(), 0);
    assert!(wb.fsync_start(file).is_empty());
    assert_eq!(wb.cache().written_back(), newly_dirtied);
    wb.check_invariants();
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
