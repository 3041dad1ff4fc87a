//! Mechanics: seeks, head switches, settling and rotation (DiskSim's `mech_g1`).
//!
//! - **Seek** (`dm_mech_g1_seek_extracted`): the extracted table's time at an exact distance,
//!   else linear between the neighbouring points, extrapolated past the last; 0 cylinders
//!   cost nothing.
//! - **Positioning** (`dm_seek_time_g1`): the larger of the seek and the head switch (when the
//!   surface changes), plus the write settle for a write that moved at all.
//! - **Rotation**: the spindle turns at `rpm` from angle 0 at time 0; a sector is reached when
//!   its start angle ([`Layout::angle`]) next passes the head, and read or written in
//!   `1 / sectors per track` of a revolution.
//! - **Media access**: block after block in LBN order; moving to another track costs a
//!   positioning, then the wait for that track's next block. A run of blocks on one track is
//!   timed as consecutive sectors from the first one's place, so a slip inside a run is not
//!   charged its one sector.
//!
//! Times are f64 ms, as DiskSim's are. Choice: ms floats rather than the simulator's integer
//! ns, so that the model's arithmetic follows DiskSim's own and the replay's figures can be set
//! beside DiskSim's.

use super::layout::{Layout, Place};
use super::spec::DiskSpec;

/// Angles closer than this (revolutions, about 1e-6 of a sector) are the same angle.
const ANGLE_EPSILON: f64 = 1e-9;

/// Where the heads are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heads {
    pub cylinder: u32,
    pub head: u32,
}

/// One pass over consecutive sectors of one track.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pass {
    pub first_lbn: u64,
    pub sectors: u64,
    /// When the first sector starts passing under the head.
    pub start_ms: f64,
    pub sector_ms: f64,
}

impl Pass {
    /// When block `lbn` of this pass is fully read or written.
    pub fn done_ms(&self, lbn: u64) -> f64 {
        self.start_ms + (lbn - self.first_lbn + 1) as f64 * self.sector_ms
    }

    pub fn end_ms(&self) -> f64 {
        self.start_ms + self.sectors as f64 * self.sector_ms
    }
}

/// The drive's mechanism.
#[derive(Clone, Debug)]
pub struct Mechanics {
    curve: Vec<(u32, f64)>,
    equation: Vec<f64>,
    first_ten_ms: Vec<f64>,
    head_switch_ms: f64,
    write_settle_ms: f64,
    revolution_ms: f64,
}

impl Mechanics {
    pub fn new(spec: &DiskSpec) -> Mechanics {
        Mechanics {
            curve: spec.seek_curve.clone(),
            equation: spec.seek_equation.clone(),
            first_ten_ms: spec.first_ten_seeks_ms.clone(),
            head_switch_ms: spec.head_switch_ms,
            write_settle_ms: spec.write_settle_ms,
            revolution_ms: 60_000.0 / spec.rpm,
        }
    }

    pub fn revolution_ms(&self) -> f64 {
        self.revolution_ms
    }

    /// Seek time over `distance` cylinders.
    pub fn seek_ms(&self, distance: u32) -> f64 {
        if distance == 0 {
            return 0.0;
        }
        if self.curve.is_empty() {
            return self.equation_seek_ms(distance);
        }
        let index = self.curve.partition_point(|&(d, _)| d < distance);
        if let Some(&(d, t)) = self.curve.get(index) {
            if d == distance {
                return t;
            }
        }
        // Interpolate between index-1 and index, or extrapolate from the last two points.
        let upper = index.clamp(1, self.curve.len() - 1);
        if self.curve.len() == 1 {
            return self.curve[0].1;
        }
        let (d1, t1) = self.curve[upper - 1];
        let (d2, t2) = self.curve[upper];
        t1 + (f64::from(distance) - f64::from(d1)) * (t2 - t1) / (f64::from(d2) - f64::from(d1))
    }

    /// `dm_mech_g1_seek_1st10_plus_hpl`: the table up to 10 cylinders, then a + b·√d below
    /// the boundary and c + e·d from it.
    fn equation_seek_ms(&self, distance: u32) -> f64 {
        let index = distance as usize - 1;
        if let Some(&time) = self.first_ten_ms.get(index) {
            return time;
        }
        let [boundary, a, b, c, e, _] = self.equation[..] else {
            unreachable!("validated: six values")
        };
        let d = f64::from(distance);
        if d < boundary {
            a + b * d.sqrt()
        } else {
            c + e * d
        }
    }

    /// `dm_seek_time_g1`: moving the heads from `from` to `to`.
    pub fn positioning_ms(&self, from: Heads, to: Heads, write: bool) -> f64 {
        let seek = self.seek_ms(from.cylinder.abs_diff(to.cylinder));
        let switch = if from.head == to.head {
            0.0
        } else {
            self.head_switch_ms
        };
        let moved = seek.max(switch);
        if moved != 0.0 && write {
            // Older drives' settle is negative (they start writing before fully settled);
            // it never takes more than the move.
            (moved + self.write_settle_ms).max(0.0)
        } else {
            moved
        }
    }

    /// The wait from `now_ms` until angle `angle` (revolutions) passes the head.
    pub fn rotation_wait_ms(&self, now_ms: f64, angle: f64) -> f64 {
        let position = (now_ms / self.revolution_ms).rem_euclid(1.0);
        let ahead = (angle - position).rem_euclid(1.0);
        // A sector that starts where the previous one ended is reached at once; rounding must
        // not turn that into a whole revolution.
        if ahead > 1.0 - ANGLE_EPSILON {
            0.0
        } else {
            ahead * self.revolution_ms
        }
    }

    /// Reads or writes `count` blocks from `lbn` starting at `now_ms` with the heads at
    /// `heads`; returns the passes in order and leaves `heads` on the last track.
    pub fn access(
        &self,
        layout: &Layout,
        heads: &mut Heads,
        now_ms: f64,
        lbn: u64,
        count: u64,
        write: bool,
    ) -> Vec<Pass> {
        self.access_gated(layout, heads, now_ms, lbn, count, write, &|_| {
            f64::NEG_INFINITY
        })
    }

    /// As [`Mechanics::access`], but a block is written only once it is in the buffer
    /// (`ready_ms`): a sector whose data has not arrived when it reaches the head passes by,
    /// and the head writes it a revolution later (DiskSim's `disk_buffer_sector_done` with
    /// "Calc sector by sector").
    #[allow(clippy::too_many_arguments)]
    pub fn access_gated(
        &self,
        layout: &Layout,
        heads: &mut Heads,
        now_ms: f64,
        lbn: u64,
        count: u64,
        write: bool,
        ready_ms: &dyn Fn(u64) -> f64,
    ) -> Vec<Pass> {
        let mut passes = Vec::new();
        let mut time = now_ms;
        let mut next = lbn;
        let end = lbn + count;
        while next < end {
            let place = layout.locate(next);
            let last = layout.track_last_lbn(next).min(end - 1);
            let target = Heads {
                cylinder: place.cylinder,
                head: place.head,
            };
            time += self.positioning_ms(*heads, target, write);
            *heads = target;
            time += self.rotation_wait_ms(time, layout.angle(&place));
            let mut pass = self.pass(layout, &place, next, 0, time);
            for block in next..=last {
                let reached = pass.end_ms();
                let wait = ready_ms(block) - reached;
                if wait > 1e-9 {
                    let revolutions = (wait / self.revolution_ms).ceil();
                    if pass.sectors > 0 {
                        passes.push(pass);
                    }
                    pass.first_lbn = block;
                    pass.sectors = 0;
                    pass.start_ms = reached + revolutions * self.revolution_ms;
                }
                pass.sectors += 1;
            }
            time = pass.end_ms();
            passes.push(pass);
            next = last + 1;
        }
        passes
    }

    fn pass(&self, layout: &Layout, place: &Place, lbn: u64, sectors: u64, start_ms: f64) -> Pass {
        let sector_ms = self.revolution_ms / f64::from(layout.sectors_per_track(place.zone));
        Pass {
            first_lbn: lbn,
            sectors,
            start_ms,
            sector_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> (DiskSpec, Layout, Mechanics) {
        let spec = DiskSpec::parse(include_str!("testdata_small.toml")).unwrap();
        let layout = Layout::new(&spec);
        let mechanics = Mechanics::new(&spec);
        (spec, layout, mechanics)
    }

    #[test]
    fn an_equation_seek_takes_the_table_then_the_root_then_the_line() {
        // HP C2247A's figures: boundary 300, 3.81 + 0.33 sqrt(d), 7.75 + 0.0059 d.
        let (mut spec, ..) = tiny();
        spec.seek_curve.clear();
        spec.seek_equation = vec![300.0, 3.81, 0.33, 7.75, 0.0059, -1.0];
        spec.first_ten_seeks_ms = (1..=10).map(f64::from).collect();
        let mech = Mechanics::new(&spec);
        assert_eq!(mech.seek_ms(0), 0.0);
        assert_eq!(mech.seek_ms(7), 7.0);
        assert!((mech.seek_ms(100) - (3.81 + 3.3)).abs() < 1e-12);
        assert!((mech.seek_ms(1000) - (7.75 + 5.9)).abs() < 1e-12);
    }

    #[test]
    fn a_negative_write_settle_shortens_a_write_move_but_never_below_zero() {
        let (mut spec, ..) = tiny();
        spec.write_settle_ms = -0.75;
        let mech = Mechanics::new(&spec);
        let here = Heads {
            cylinder: 0,
            head: 0,
        };
        let next = Heads {
            cylinder: 2,
            head: 0,
        };
        assert!((mech.positioning_ms(here, next, true) - 0.75).abs() < 1e-12);
        spec.write_settle_ms = -5.0;
        let mech = Mechanics::new(&spec);
        assert_eq!(mech.positioning_ms(here, next, true), 0.0);
    }

    #[test]
    fn seeks_interpolate_between_measured_points_and_extrapolate_past_them() {
        let (_, _, mech) = tiny();
        assert_eq!(mech.seek_ms(0), 0.0);
        assert_eq!(mech.seek_ms(2), 1.5);
        assert!((mech.seek_ms(6) - 2.25).abs() < 1e-12);
        assert!((mech.seek_ms(14) - 3.75).abs() < 1e-12);
    }

    #[test]
    fn positioning_takes_the_larger_of_seek_and_switch_and_settles_writes() {
        let (_, _, mech) = tiny();
        let here = Heads {
            cylinder: 0,
            head: 0,
        };
        let other_head = Heads {
            cylinder: 0,
            head: 1,
        };
        assert_eq!(mech.positioning_ms(here, other_head, false), 0.5);
        assert_eq!(mech.positioning_ms(here, other_head, true), 0.75);
        assert_eq!(mech.positioning_ms(here, here, true), 0.0);
        assert_eq!(
            mech.positioning_ms(
                here,
                Heads {
                    cylinder: 1,
                    head: 1
                },
                false
            ),
            1.0
        );
    }

    #[test]
    fn a_transfer_across_a_track_loses_only_the_switch_and_skew() {
        let (_, layout, mech) = tiny();
        // 6000 rpm: 10 ms a revolution, 1 ms a sector on the first zone.
        let mut heads = Heads {
            cylinder: 0,
            head: 0,
        };
        let passes = mech.access(&layout, &mut heads, 0.0, 8, 4, false);
        assert_eq!(passes.len(), 2);
        assert!((passes[0].start_ms - 8.0).abs() < 1e-9);
        assert!((passes[0].end_ms() - 10.0).abs() < 1e-9);
        // Track 1 starts at angle 0.2 (2 ms); the 0.5 ms switch ends at 10.5 ms.
        assert!((passes[1].start_ms - 12.0).abs() < 1e-9);
        assert_eq!(
            heads,
            Heads {
                cylinder: 0,
                head: 1
            }
        );
    }
}
