//! Think gaps: a group that thinks is owed nothing of what the device moves meanwhile.
//!
//! Issue 32's bar is each group's share *while backlogged*: in generalized processor
//! sharing a flow with nothing outstanding is owed none of the service others get, and on
//! its return BFQ's B-WF2Q+ starts it at `max(its finish, the system virtual time)`
//! (`__bfq_activate_entity()`), the system virtual time having advanced meanwhile by each
//! served amount over the busy entities' summed weight (`bfq_bfqq_served()`:
//! `st->vtime += bfq_delta(served, st->wsum)`).
//!
//! Here a group that thinks within its idle window stays on the clock (so it can still be
//! waited for when that pays), but its virtual time follows the backlogged groups' through
//! the gap: [`Adaptive::gps_vtime`] advances at every completion by the completed bytes'
//! charge at the summed weight of the groups backlogged then (queued or in flight, as the
//! block layer's own measure counts them), and a thinking group is charged that advance.
//! It is the GPS rule `start = finish + (V(now) - V(gap start))` for a group whose finish
//! was the system's virtual time when it emptied, and it keeps the lead or lag the
//! allowance gave it. Two attempts that did otherwise flattened the shares
//! (docs/tasks/adaptive.md): raising a thinking group to the others' virtual time charged
//! it their requests in flight (finish tags, not start tags), and charged gaps that lasted
//! no time at all (a reader's next request arrives at its completion's instant, but the
//! dispatch in between saw it empty). Advanced by completions only, a gap of no time is
//! charged nothing.

use super::share::charge;
use super::Adaptive;
use crate::request::Time;

impl Adaptive {
    /// A request of group `g` of `bytes` completes at `now` (before its counts drop): the
    /// backlogged groups' virtual time advances by its charge at their summed weight, and
    /// `g`'s gap opens if that was its last request. Completions at one instant are one
    /// moment: a gap opened by one of them is not charged the others (two requests
    /// dispatched together finish together; the group's next one, sent at that instant,
    /// waited no time).
    pub(crate) fn gap_complete(&mut self, g: usize, bytes: u64, now: Time) {
        let backlogged = |x: &super::Group| x.pending > 0 || x.in_flight > 0;
        let weights: u64 = (0..self.groups.len())
            .filter(|&x| backlogged(&self.groups[x]))
            .map(|x| self.weight_now(x))
            .sum();
        self.gps_vtime += charge(bytes, weights);
        let v = self.gps_vtime;
        for group in &mut self.groups {
            if group.gap_from.is_some() && group.last_end == Some(now) {
                group.gap_from = Some(v);
            }
        }
        let group = &self.groups[g];
        if group.pending == 0 && group.in_flight == 1 {
            self.groups[g].gap_from = Some(v);
        }
    }

    /// Charges every thinking group the backlogged groups' progress since it was last
    /// charged. A group charged for a gap was not backlogged all window: its weight's
    /// share of the window is not owed (the allowance's error measure leaves it out).
    pub(crate) fn charge_gaps(&mut self) {
        let v = self.gps_vtime;
        for group in &mut self.groups {
            let Some(from) = group.gap_from else { continue };
            if group.active && v > from {
                group.vtime += v - from;
                group.left_in_window = true;
            }
            group.gap_from = Some(v);
        }
    }

    /// Group `g` queues a request: its gap, charged up to now, closes.
    pub(crate) fn gap_close(&mut self, g: usize) {
        self.charge_gaps();
        self.groups[g].gap_from = None;
    }
}
