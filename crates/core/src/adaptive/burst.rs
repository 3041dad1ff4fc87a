//! Bursts: a group admitted to the device sends several of its queued requests at once.
//!
//! The share rules ([`super::share`], [`super::lend`]) admit a group one request at a time:
//! a light group paced at its share of a device gets one request out, waits for the heavy
//! group's clock to pass it, and sends the next. Its shares are right, but through a real
//! engine its worker thread then wakes once per request (issue 32's two QD8 readers at
//! 1000:100 on a loop device: 0.9-1.0 switches per light request, BFQ's light worker, which
//! serves its queue in budget-sized batches, 0.13), and those wake-ups cost the CPU the
//! device is waiting for.
//!
//! Rule: when a group is admitted by the ordinary checks (within the allowance or lent a
//! share, and past the injection bound), it may send more of its queued requests without
//! them until it has `burst` in the device, as long as it stays the candidate (the group
//! with the smallest virtual time and a request queued: a group behind it still goes
//! first) and as long as, after each one, the window's shares stay inside the tolerance:
//! every other group counted in the window keeps at least `100 - share_tolerance` % of its
//! weight-ideal part, and the bursting group holds at most `100 + lend + share_tolerance` %
//! (it may already be lent up to `100 + lend`). Each request is charged as before, so the
//! group leads the clock by the burst and then waits correspondingly longer: it moves the
//! same bytes over the window, in bunches.
//!
//! Choice of default: 8. On the loop device through the engine, quiet (load 0.6-1.1), the
//! same binary at `burst=8` moved 1.11 (0.94-1.16) and 1/0.89 (0.83-0.95) x the MB/s of
//! `burst=1` in two passes of 5 interleaved rounds, one in either order, with 0.57 x the
//! context switches and 0.79 x the CPU per request and the heavy share unchanged (90.3 %).
//! Loaded (load 5-9, other builds competing for the two CPUs) the same comparison read 0.71 x
//! in 17 rounds; the engine's CPU there, not the device, set the rate. What a burst costs:
//! a light burst queues ahead of the heavy job's next requests, so in simulation (no
//! wake-up cost) two QD8 readers at 1000:100 lose up to 2 % of the heavy job's MB/s on ufs31
//! (309 -> 303) and 0.6 % on nvme-gen4 (`docs/tasks/adaptive.md`, session 21).
//! Any value needs no per-device setting: what bounds a burst is the share check, relative
//! to the window's measured bytes (a burst stops by itself early in a window, when one
//! request is a large part of it); the count caps how bunched a group's latency gets. 8
//! lets a QD8 reader put its depth out at once, as BFQ's light queue on the loop device has
//! 7.9 of 8 out. The measured parallelism is not used: the loop device reads 1.1-4.1
//! (loaded) where 16 requests still gain, which would leave no burst at all.

use super::lend::{percent_of_ideal, Part};
use super::Adaptive;
use crate::request::Time;
use crate::trace::{DecisionKind, Trace};

impl Adaptive {
    /// Whether group `g`, the candidate, may send its next request as part of its burst.
    /// Ends the burst (and says why) when the shares would leave the tolerance.
    pub(crate) fn in_burst(&mut self, g: usize, now: Time, trace: &mut dyn Trace) -> bool {
        if self.groups[g].burst == 0 {
            return false;
        }
        let next = self.queues[self.pick_queue(g)]
            .fifo
            .front()
            .map_or(0, |rq| rq.bytes());
        if let Some(x) = self.burst_breaks_shares(g, next) {
            self.groups[g].burst = 0;
            if trace.enabled() {
                let bound = if x == g {
                    format!(
                        "pass {} %",
                        100 + self.tun.lend_pct + self.tun.share_tolerance_pct
                    )
                } else {
                    format!("fall under {} %", 100 - self.tun.share_tolerance_pct)
                };
                let reason = format!(
                    "burst of group {} ended: group {} would {bound} of its window share",
                    self.groups[g].id.0, self.groups[x].id.0
                );
                self.decide(
                    trace,
                    now,
                    DecisionKind::DispatchLimit,
                    Some(g),
                    &reason,
                    None,
                );
            }
            return false;
        }
        self.groups[g].burst -= 1;
        true
    }

    /// Group `g` was admitted by the ordinary checks: it may send more of its queued
    /// requests without them, up to `burst` in the device.
    pub(crate) fn start_burst(&mut self, g: usize, now: Time, trace: &mut dyn Trace) {
        let pending = self.groups[g].pending as u64;
        // Up to `burst` of its requests out, counting those already in the device: a group
        // that keeps many out wakes its threads little anyway, and bursting it ahead only
        // delays the others (seed 004's sixteen readers a group on nvme-gen4 lost 0.3-0.4 %
        // of their total when every admitted group sent 8 more).
        let out = u64::from(self.groups[g].in_flight) + 1;
        let more = self
            .tun
            .burst
            .saturating_sub(out)
            .min(pending.saturating_sub(1)) as u32;
        self.groups[g].burst = more;
        if more > 0 && trace.enabled() {
            let reason = format!(
                "group {} admitted: up to {more} more of its {pending} queued follow \
                 while every share stays within {}% (burst {})",
                self.groups[g].id.0, self.tun.share_tolerance_pct, self.tun.burst
            );
            self.decide(
                trace,
                now,
                DecisionKind::SelectGroup,
                Some(g),
                &reason,
                None,
            );
        }
    }

    /// The first group whose window share `next` more bytes of `g` would take out of the
    /// tolerance, if any: another group under `100 - tolerance` % of its weight-ideal
    /// part, or `g` over `100 + lend + tolerance` %.
    fn burst_breaks_shares(&self, g: usize, next: u64) -> Option<usize> {
        let tolerance = self.tun.share_tolerance_pct;
        let (total, weights) = self.window_parts();
        let total = total + next;
        (0..self.groups.len())
            .filter(|&x| self.owed_in_window(x))
            .find(|&x| {
                let extra = if x == g { next } else { 0 };
                let part = Part {
                    bytes: self.groups[x].window_bytes + extra,
                    weight: self.weight_now(x),
                };
                let percent = percent_of_ideal(part, total, weights.max(part.weight));
                if x == g {
                    percent > 100 + self.tun.lend_pct + tolerance
                } else {
                    percent + tolerance < 100
                }
            })
    }
}
