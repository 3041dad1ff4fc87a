//! Layout and mapping: zones of equal cylinder count with falling sectors per track, LBAs
//! cylinder by cylinder from the outer diameter, and each track's skew.

use super::*;

impl HddDevice {
    /// Sustained media rate (track switches included) of the zone holding `lba`, bytes per second.
    pub fn media_rate_at(&self, lba: u64) -> u64 {
        let zone = &self.zones[self.zone_of(lba)];
        (u128::from(zone.spt) * u128::from(SECTOR_SIZE) * u128::from(NSEC_PER_SEC)
            / u128::from(zone.track_ns)) as u64
    }

    #[inline]
    pub(super) fn zone_of(&self, lba: u64) -> usize {
        self.zones
            .partition_point(|zone| zone.first_lba <= lba)
            .saturating_sub(1)
    }

    #[inline]
    pub(super) fn locate(&self, lba: u64) -> Location {
        let lba = lba.min(self.capacity - 1);
        let zone_index = self.zone_of(lba);
        let zone = &self.zones[zone_index];
        let offset = lba - zone.first_lba;
        let track = offset / zone.spt;
        let sector = offset % zone.spt;
        let heads = u64::from(self.params.heads);
        let cyl = zone.first_cyl + (track / heads) as u32;
        let head = (track % heads) as u32;
        let skewed = (sector + (track % zone.spt) * zone.skew_sectors) % zone.spt;
        Location {
            zone: zone_index as u32,
            cyl,
            head,
            angle_ns: skewed * self.rev_ns / zone.spt,
            sector,
        }
    }
}
