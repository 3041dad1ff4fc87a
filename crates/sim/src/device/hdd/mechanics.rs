//! Mechanics: the Ruemmler–Wilkes seek curve, head switches, write settle, the continuously
//! turning spindle, and media and host-link transfer times.

use super::*;

/// Distances below this have their seek time in a table (16 KiB): a workload confined to a
/// few GB of a disk seeks over a few hundred cylinders.
const SHORT_SEEKS: u32 = 4096;

impl HddDevice {
    /// Fills the seek lower-bound table: the suffix minimum of the seek time at each bucket's
    /// first distance. Exact lower bounds for seek curves that do not fall with distance (all
    /// the presets'); for others the pruning may rarely skip the best candidate.
    pub(super) fn build_seek_floor(&mut self) {
        let cylinders = self.params.cylinders;
        let mut shift = 0;
        while (cylinders >> shift) > 1024 {
            shift += 1;
        }
        let buckets = (cylinders >> shift) as usize + 1;
        let mut floor: Vec<u64> = (0..buckets)
            .map(|bucket| self.seek_ns((bucket as u32) << shift))
            .collect();
        for index in (0..buckets.saturating_sub(1)).rev() {
            floor[index] = floor[index].min(floor[index + 1]);
        }
        self.seek_floor_ns = floor;
        self.seek_bucket_shift = shift;
        let short = SHORT_SEEKS.min(cylinders.max(1));
        // A model whose seeks overflow u32 ns keeps the table up to there (the curve beyond).
        self.short_seeks_ns = (0..short)
            .map_while(|distance| u32::try_from(self.seek_curve_ns(distance)).ok())
            .collect();
    }

    /// A lower bound of the positioning time to `target` (seek only).
    #[inline]
    pub(super) fn positioning_floor(&self, target: &Location) -> u64 {
        let distance = self.cyl.abs_diff(target.cyl);
        self.seek_floor_ns[(distance >> self.seek_bucket_shift) as usize]
    }

    /// One revolution.
    pub fn revolution_ns(&self) -> u64 {
        self.rev_ns
    }

    /// Seek time over `distance` cylinders, before any write settle.
    #[inline]
    pub fn seek_ns(&self, distance: u32) -> u64 {
        match self.short_seeks_ns.get(distance as usize) {
            Some(&ns) => u64::from(ns),
            None => self.seek_curve_ns(distance),
        }
    }

    /// [`Self::seek_ns`] from the curve itself.
    pub(super) fn seek_curve_ns(&self, distance: u32) -> u64 {
        if distance == 0 {
            return 0;
        }
        if distance == 1 {
            return self.params.seek_single_cyl_ns;
        }
        let x = f64::from(distance) * self.inverse_stroke;
        let t = if x < self.seek_boundary {
            self.seek_a + self.seek_b * x.sqrt() + self.seek_f * x
        } else {
            self.seek_c + self.seek_e * x
        };
        (t as u64).max(self.params.seek_single_cyl_ns)
    }

    /// Seek (or head switch) plus rotational wait from the current head position, starting
    /// to move at `start`.
    pub(super) fn positioning_ns(&self, target: &Location, start: Time, write: bool) -> u64 {
        let distance = self.cyl.abs_diff(target.cyl);
        let mut seek = self.seek_ns(distance);
        if target.head != self.head {
            seek = seek.max(self.params.head_switch_ns);
        }
        if write && seek > 0 {
            seek += self.params.write_settle_ns;
        }
        let phase = self.phase_ns.unwrap_or(0);
        let platter = (start + seek + phase) % self.rev_ns;
        Self::wait_for(target.angle_ns, platter, self.rev_ns) + seek
    }

    /// Rotational wait from platter position `platter` until `angle` passes, both within
    /// [0, rev).
    #[inline]
    pub(super) fn wait_for(angle: u64, platter: u64, rev: u64) -> u64 {
        if angle >= platter {
            angle - platter
        } else {
            angle + rev - platter
        }
    }

    /// [`Self::positioning_ns`] for many candidates at one decision time: the platter's
    /// position at `time` is computed once, and each candidate's only by additions.
    #[inline]
    pub(super) fn positioning_from(
        &self,
        base_platter: u64,
        time: Time,
        target: &Location,
        start: Time,
        write: bool,
    ) -> u64 {
        let seek = self.seek_ns(self.cyl.abs_diff(target.cyl));
        self.positioning_after_seek(base_platter + (start - time), target, seek, write)
    }

    /// [`Self::positioning_from`] with the seek over the cylinders known (`seek`), the
    /// platter at `platter` (any multiple of revolutions past it) when the arm starts.
    #[inline]
    pub(super) fn positioning_after_seek(
        &self,
        platter: u64,
        target: &Location,
        seek: u64,
        write: bool,
    ) -> u64 {
        self.positioning_after_settle(platter, target, self.settled_seek(target, seek, write))
    }

    /// The arm's time to `target` before the rotational wait: the seek over the cylinders
    /// (`seek`), at least a head switch, plus the write settle. A lower bound of the
    /// positioning time.
    #[inline]
    pub(super) fn settled_seek(&self, target: &Location, mut seek: u64, write: bool) -> u64 {
        if target.head != self.head {
            seek = seek.max(self.params.head_switch_ns);
        }
        if write && seek > 0 {
            seek += self.params.write_settle_ns;
        }
        seek
    }

    /// [`Self::positioning_after_seek`] with the seek already settled ([`Self::settled_seek`]).
    #[inline]
    pub(super) fn positioning_after_settle(
        &self,
        platter: u64,
        target: &Location,
        seek: u64,
    ) -> u64 {
        let mut platter = platter + seek;
        while platter >= self.rev_ns {
            platter -= self.rev_ns;
        }
        Self::wait_for(target.angle_ns, platter, self.rev_ns) + seek
    }

    /// Media transfer of `sectors` starting at `location`: sector times plus a skew per
    /// track crossing.
    #[inline]
    pub(super) fn transfer_ns(&self, location: &Location, sectors: u64) -> u64 {
        let zone = &self.zones[location.zone as usize];
        let crossings = (location.sector + sectors.max(1) - 1) / zone.spt;
        (sectors + crossings * zone.skew_sectors) * self.rev_ns / zone.spt
    }

    pub(super) fn link_ns(&self, sectors: u64) -> u64 {
        (u128::from(sectors * SECTOR_SIZE) * u128::from(NSEC_PER_SEC)
            / u128::from(self.params.host_link_bytes_per_s)) as u64
    }
}
