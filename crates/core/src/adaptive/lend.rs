//! Work conservation: a group that cannot use its share lends it, within a bound.
//!
//! A group's virtual time only advances with its own service, so a group that is slow to
//! ask (one request at a time, think time between them) holds the virtual clock back and
//! every other group waits behind it once past the allowance, with the device under-filled:
//! on `nvme-gen4` seed 004's sixteen 4 KiB readers of the heaviest group keep 16 of 64
//! flash units busy and the other 48 threads wait for them. The group is not backlogged
//! while it waits for its own completions or thinks, so its unused share may go to others
//! (issue 32: every group within 10 % of its share *while backlogged*).
//!
//! Rule: when the candidate is past the allowance and the groups behind it have nothing
//! queued but requests in the device, those lenders' virtual times are moved up to the
//! candidate's less the allowance (the virtual clock jumps over service they did not ask
//! for), so it dispatches now. The
//! loan is bounded by what was measured over the current share window: every lender must
//! still hold at least `100 - lend` % of its weight-ideal share of the window's bytes, and
//! the borrower at most `100 + lend` %. A lender that comes back with requests queued is
//! served first as before; one that is below the bound is waited for as before.

use super::share::WEIGHT_SCALE;
use super::Adaptive;
use crate::request::Time;
use crate::trace::{DecisionKind, Trace};

/// One group's bytes in the current window against its weight-ideal part of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    pub bytes: u64,
    pub weight: u64,
}

/// `bytes / ideal` in percent, where `ideal = total x weight / weights`; 100 with no bytes
/// moved yet (nothing measured is nothing violated).
pub fn percent_of_ideal(part: Part, total: u64, weights: u64) -> u64 {
    let due = u128::from(total) * u128::from(part.weight);
    if due == 0 {
        return 100;
    }
    (u128::from(part.bytes) * u128::from(weights) * 100 / due) as u64
}

impl Adaptive {
    /// The window's bytes and the weights of the groups owed a part of them: every group
    /// active now or served in the window. Choice: a group away for part of the window is
    /// still owed its whole part, which only makes the bound stricter (it cannot open a
    /// loan that the groups' own shares would forbid).
    pub(crate) fn window_parts(&self) -> (u64, u64) {
        let counted = (0..self.groups.len()).filter(|&x| self.owed_in_window(x));
        counted.fold((0, 0), |(bytes, weights), x| {
            (
                bytes + self.groups[x].window_bytes,
                weights + self.weight_now(x),
            )
        })
    }

    /// Whether group `x` is owed a part of the window: active now or served in it.
    pub(crate) fn owed_in_window(&self, x: usize) -> bool {
        self.groups[x].active || self.groups[x].window_bytes > 0
    }

    /// Group `g`'s window bytes, with `extra` more of them moved, as a percentage of its
    /// weight-ideal part.
    pub(crate) fn window_percent(&self, g: usize, extra: u64) -> u64 {
        let (total, weights) = self.window_parts();
        let part = Part {
            bytes: self.groups[g].window_bytes + extra,
            weight: self.weight_now(g),
        };
        percent_of_ideal(part, total + extra, weights.max(part.weight))
    }

    /// Candidate `g` is past the allowance: lends it the unused share of the groups behind
    /// it when they have nothing queued and the window's shares allow; returns whether it
    /// may dispatch now.
    pub(crate) fn lend(&mut self, g: usize, now: Time, trace: &mut dyn Trace) -> bool {
        let lend = self.tun.lend_pct;
        if lend == 0 {
            return false;
        }
        // The borrower's bound holds after the loan: checked before it, a group of large
        // requests overshot it by one request each time (a 128 KiB reader beside 4 KiB
        // ones at 100:1000:100 held 111 % of its share over 1.8 s, lend 6 %).
        let next = self.queues[self.pick_queue(g)]
            .fifo
            .front()
            .map_or(0, |rq| rq.bytes());
        let after = self.window_percent(g, next);
        if after > 100 + lend {
            return false;
        }
        let allowance = self.window.map_or(0, |w| w.allowance);
        let floor = self.groups[g].vtime.saturating_sub(allowance);
        // No allocation on the dispatch path: the lenders are the groups behind the floor.
        let behind = |a: &Adaptive, h: usize| a.groups[h].active && a.groups[h].vtime < floor;
        // Only a group waiting on its own requests in the device lends (its depth limits
        // it): one thinking with nothing in flight is waited for, or leaves the clock, by
        // its think-time window as before. Lending in think gaps too cost seed 004's
        // seq+think case on ufs31 17 % of its total (1033 -> 855 MB/s, 1 s).
        let mut lenders = 0;
        for h in (0..self.groups.len()).filter(|&h| behind(self, h)) {
            let group = &self.groups[h];
            if group.pending > 0 || group.in_flight == 0 || self.window_percent(h, 0) + lend < 100 {
                return false;
            }
            lenders += 1;
        }
        if lenders == 0 {
            return false;
        }
        let mut lent = 0;
        for h in 0..self.groups.len() {
            if behind(self, h) {
                lent += (floor - self.groups[h].vtime) * self.weight_now(h) / WEIGHT_SCALE;
                self.groups[h].vtime = floor;
            }
        }
        self.vclock = self.vclock.max(floor);
        if trace.enabled() {
            let reason = format!(
                "group {} lent about {lent} bytes of share by {} group(s) with nothing \
                 queued (window share {}% of ideal after it, bound {lend}%)",
                self.groups[g].id.0, lenders, after
            );
            self.decide(trace, now, DecisionKind::Charge, Some(g), &reason, None);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1000:100 at 10:1 bytes is 100 % for both; the heavy group at 9:2 is 90 %; before
    /// any byte moves nothing is violated.
    #[test]
    fn percent_of_ideal_is_relative_to_the_weight() {
        let heavy = |bytes| Part {
            bytes,
            weight: 1000,
        };
        assert_eq!(percent_of_ideal(heavy(1000), 1100, 1100), 100);
        assert_eq!(percent_of_ideal(heavy(900), 1100, 1100), 90);
        assert_eq!(percent_of_ideal(heavy(0), 0, 1100), 100);
    }
}
