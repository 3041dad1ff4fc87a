//! Shares: each group's virtual time, and the allowance that lets groups run ahead of the
//! slowest one, re-derived every window from what was measured.
//!
//! A group is charged `bytes x 1000 / weight` of virtual time when one of its requests is
//! dispatched (start-time fair queueing, as SFQ(D) does for storage: Jin, Chase and Kaur,
//! SIGMETRICS 2004). `V`, the virtual clock, is the smallest virtual time among the groups
//! that are *active*: with requests queued, or expected back within their idle window. A
//! group may dispatch while its virtual time is within the allowance `A` of `V`; past it, it
//! waits for the groups behind. Bytes then stay within `A x weight` of the weight-ideal
//! split however many requests are in the device at once, so CFQ's one-group-at-a-time rule
//! is not needed to hold weights: several groups share a parallel device, each held back
//! only once it is ahead by more than the allowance.
//!
//! The allowance is the adaptive part. Over a window in which `V` advanced by `dV`, a lead
//! of `A` is a relative error of about `A / dV`; so `A = tolerance x dV` of the window just
//! ended, halved for each window in which a group that stayed active was still off its
//! share by more than the tolerance (and doubled back once errors fall under half of it).

/// Virtual time of one byte at weight 1000.
pub const WEIGHT_SCALE: u64 = 1000;
/// The most halvings of the allowance.
const MAX_SHIFT: u32 = 6;
/// Smallest charge: a flush or discard still costs as much as one sector.
const MIN_CHARGE_BYTES: u64 = 512;

/// Virtual time a group of `weight` is charged for `bytes` (a cgroup weight, or in a
/// hierarchy an effective share in ppm: either way one scale for every group of a run).
pub fn charge(bytes: u64, weight: u64) -> u64 {
    bytes.max(MIN_CHARGE_BYTES) * WEIGHT_SCALE / weight.max(1)
}

/// One group's part in a window: its weight, the bytes it was given, and whether it stayed
/// active throughout (only such groups can be owed a share).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowGroup {
    pub weight: u32,
    pub bytes: u64,
    pub stayed_active: bool,
}

/// The largest relative error `|share - ideal| / ideal`, in hundredths of a percent, among
/// the groups that stayed active through the window; 0 with fewer than two.
pub fn max_share_error_bp(groups: &[WindowGroup]) -> u64 {
    let owed: Vec<&WindowGroup> = groups.iter().filter(|g| g.stayed_active).collect();
    let weights: u64 = owed.iter().map(|g| u64::from(g.weight)).sum();
    let bytes: u64 = owed.iter().map(|g| g.bytes).sum();
    if owed.len() < 2 || weights == 0 || bytes == 0 {
        return 0;
    }
    owed.iter()
        .map(|g| {
            // share / ideal = (bytes_g / bytes) / (w_g / weights), kept in integers.
            let got = u128::from(g.bytes) * u128::from(weights);
            let due = u128::from(bytes) * u128::from(g.weight);
            let diff = got.abs_diff(due);
            (diff * 10_000 / due.max(1)) as u64
        })
        .max()
        .unwrap_or(0)
}

/// The sliding window and the allowance it sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShareWindow {
    pub start: u64,
    v_at_start: u64,
    pub allowance: u64,
    pub shift: u32,
}

/// What a window's end decided, for the decision log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowVerdict {
    pub error_bp: u64,
    pub advance: u64,
    pub allowance: u64,
    pub shift: u32,
}

impl ShareWindow {
    pub fn new(now: u64, v: u64) -> ShareWindow {
        ShareWindow {
            start: now,
            v_at_start: v,
            allowance: 0,
            shift: 0,
        }
    }

    /// Ends the window at `now` with the virtual clock at `v`, and sets the next allowance.
    pub fn roll(
        &mut self,
        now: u64,
        v: u64,
        groups: &[WindowGroup],
        tolerance_pct: u64,
    ) -> WindowVerdict {
        let error_bp = max_share_error_bp(groups);
        if error_bp > tolerance_pct * 100 {
            self.shift = (self.shift + 1).min(MAX_SHIFT);
        } else if error_bp * 2 < tolerance_pct * 100 {
            self.shift = self.shift.saturating_sub(1);
        }
        let advance = v.saturating_sub(self.v_at_start);
        self.allowance = (advance * tolerance_pct / 100) >> self.shift;
        self.start = now;
        self.v_at_start = v;
        WindowVerdict {
            error_bp,
            advance,
            allowance: self.allowance,
            shift: self.shift,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(weight: u32, bytes: u64) -> WindowGroup {
        WindowGroup {
            weight,
            bytes,
            stayed_active: true,
        }
    }

    #[test]
    fn charge_is_inverse_to_weight() {
        assert_eq!(charge(4096, 1000), 4096);
        assert_eq!(charge(4096, 100), 40_960);
        assert_eq!(charge(0, 1000), 512);
    }

    /// 1000:100 served 10:1 is exact; served 1:1 the light group has 5.5 times its share.
    #[test]
    fn share_error_is_relative_to_the_ideal() {
        assert_eq!(max_share_error_bp(&[group(1000, 1000), group(100, 100)]), 0);
        assert_eq!(max_share_error_bp(&[group(1000, 1), group(100, 1)]), 45_000);
        let mut idle = group(100, 0);
        idle.stayed_active = false;
        assert_eq!(max_share_error_bp(&[group(1000, 5), idle]), 0);
    }

    /// Within tolerance the allowance is tolerance x advance; a violated window halves it,
    /// a good one doubles it back.
    #[test]
    fn allowance_follows_advance_and_violation() {
        let mut w = ShareWindow::new(0, 0);
        let fair = [group(1000, 1000), group(100, 100)];
        assert_eq!(w.roll(10, 1_000_000, &fair, 5).allowance, 50_000);
        let skewed = [group(1000, 1000), group(100, 200)];
        let verdict = w.roll(20, 2_000_000, &skewed, 5);
        assert_eq!((verdict.shift, verdict.allowance), (1, 25_000));
        assert_eq!(w.roll(30, 3_000_000, &fair, 5).allowance, 50_000);
    }
}
