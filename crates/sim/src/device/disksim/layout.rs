//! Layout and mapping: where a logical block lies on the platters (DiskSim's `layout_g1`).
//!
//! Zones are runs of physical cylinders with one track size, listed in LBN order; cylinders
//! outside every zone hold no blocks. Within a zone, blocks fill a cylinder's tracks in turn
//! (surface 0 first, or serpentine under mapping 1 and 2), skipping the zone's dead space at
//! its front, its spares and its slipped sectors as the sparing scheme places them:
//! - 7, spares at the end: each slip pushes every later block one sector on;
//! - 8, spares per range of cylinders: each range ends with `spares` unused sectors, and a slip
//!   pushes the later blocks of its range on;
//! - 9, spares per zone: the zone ends with `spares` unused sectors, and a slip pushes every
//!   later block of the zone on.
//!
//! A track's first sector starts at the angle `offset + track switches · track skew + cylinder
//! switches · cylinder skew` sectors (`g1_map_pbn_skew`), the switches counted from the zone's
//! first track, so sequential transfers lose only the switch time at a track boundary.
//! Kernel-style names: DiskSim's `ltop` is [`Layout::locate`].

use super::spec::{DiskSpec, ZoneSpec};

/// A block's physical place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub cylinder: u32,
    /// The surface whose head reads it.
    pub head: u32,
    /// The track's index within its cylinder in LBN order (equal to `head` without
    /// serpentine mapping).
    pub track_in_cylinder: u32,
    /// Physical sector within the track, from the track's first sector.
    pub sector: u32,
    pub zone: usize,
}

#[derive(Clone, Debug)]
struct Zone {
    spec: ZoneSpec,
    first_lbn: u64,
    blocks: u64,
}

/// The drive's LBN-to-physical mapping.
#[derive(Clone, Debug)]
pub struct Layout {
    zones: Vec<Zone>,
    surfaces: u32,
    mapping: u32,
    sparing: u32,
    range_cylinders: u32,
    capacity: u64,
}

impl Layout {
    pub fn new(spec: &DiskSpec) -> Layout {
        let mut zones = Vec::with_capacity(spec.zone.len());
        let mut first_lbn = 0;
        for zone in &spec.zone {
            let mut zone = zone.clone();
            zone.slips.sort_unstable();
            let blocks = zone_blocks(spec, &zone);
            zones.push(Zone {
                spec: zone,
                first_lbn,
                blocks,
            });
            first_lbn += blocks;
        }
        Layout {
            zones,
            surfaces: spec.surfaces,
            mapping: spec.mapping,
            sparing: spec.sparing,
            range_cylinders: spec.sparing_range_cylinders,
            capacity: first_lbn,
        }
    }

    /// Blocks the layout holds (DiskSim uses this, not the declared block count).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    pub fn sectors_per_track(&self, zone: usize) -> u32 {
        self.zones[zone].spec.sectors_per_track
    }

    /// Where `lbn` lies. `lbn` must be below [`Layout::capacity`].
    pub fn locate(&self, lbn: u64) -> Place {
        assert!(
            lbn < self.capacity,
            "lbn {lbn} past the capacity {}",
            self.capacity
        );
        let index = self
            .zones
            .partition_point(|zone| zone.first_lbn + zone.blocks <= lbn);
        let zone = &self.zones[index];
        let spt = u64::from(zone.spec.sectors_per_track);
        let per_cylinder = spt * u64::from(self.surfaces);
        let within = lbn - zone.first_lbn + u64::from(zone.spec.dead_space_sectors);
        let (cylinder_in_zone, offset) = match self.sparing {
            1 => per_track_spared(&zone.spec, within, spt, u64::from(self.surfaces)),
            3 => spares_per_track(&zone.spec, within, spt, u64::from(self.surfaces)),
            7 => slip_to_end(&zone.spec, within, per_cylinder),
            8 => per_range(
                &zone.spec,
                within,
                per_cylinder,
                u64::from(self.range_cylinders),
            ),
            _ => per_zone(&zone.spec, within, per_cylinder),
        };
        let track_in_cylinder = (offset / spt) as u32;
        let cylinder = zone.spec.first_cylinder + cylinder_in_zone as u32;
        Place {
            cylinder,
            head: self.surface(zone, cylinder, track_in_cylinder),
            track_in_cylinder,
            sector: (offset % spt) as u32,
            zone: index,
        }
    }

    /// `g1_surfno_on_cyl`: serpentine mappings reverse the surface order on alternate
    /// cylinders.
    fn surface(&self, zone: &Zone, cylinder: u32, track: u32) -> u32 {
        let reversed = match self.mapping {
            1 => (cylinder - zone.spec.first_cylinder) % 2 == 1,
            2 => cylinder % 2 == 1,
            _ => false,
        };
        if reversed {
            self.surfaces - track - 1
        } else {
            track
        }
    }

    /// The angle, in revolutions from the index, at which `place`'s sector starts.
    pub fn angle(&self, place: &Place) -> f64 {
        let zone = &self.zones[place.zone].spec;
        let cylinders = f64::from(place.cylinder - zone.first_cylinder);
        let switches =
            f64::from(place.track_in_cylinder) + f64::from(self.surfaces - 1) * cylinders;
        let sectors = zone.offset_sectors
            + switches * zone.track_skew_sectors
            + cylinders * zone.cylinder_skew_sectors
            + f64::from(place.sector);
        (sectors / f64::from(zone.sectors_per_track)).rem_euclid(1.0)
    }

    /// The last block on the track holding `lbn`.
    pub fn track_last_lbn(&self, lbn: u64) -> u64 {
        let place = self.locate(lbn);
        let same = |other: u64| {
            let p = self.locate(other);
            p.cylinder == place.cylinder && p.head == place.head
        };
        let (mut low, mut high) = (
            lbn,
            (lbn + u64::from(self.sectors_per_track(place.zone))).min(self.capacity - 1),
        );
        if same(high) {
            return high;
        }
        // Invariant: same(low), !same(high).
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if same(middle) {
                low = middle;
            } else {
                high = middle;
            }
        }
        low
    }

    /// The first block of the track holding `lbn`.
    pub fn track_first_lbn(&self, lbn: u64) -> u64 {
        let place = self.locate(lbn);
        let same = |other: u64| {
            let p = self.locate(other);
            p.cylinder == place.cylinder && p.head == place.head
        };
        let (mut low, mut high) = (
            lbn.saturating_sub(u64::from(self.sectors_per_track(place.zone))),
            lbn,
        );
        if same(low) {
            return low;
        }
        // Invariant: !same(low), same(high).
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if same(middle) {
                high = middle;
            } else {
                low = middle;
            }
        }
        high
    }
}

/// `dm_layout_g1_compute_blksinband` for the supported schemes.
fn zone_blocks(spec: &DiskSpec, zone: &ZoneSpec) -> u64 {
    let cylinders = u64::from(zone.last_cylinder - zone.first_cylinder + 1);
    let mut blocks = cylinders * u64::from(zone.sectors_per_track) * u64::from(spec.surfaces);
    blocks -= u64::from(zone.dead_space_sectors);
    let spares = u64::from(zone.spares);
    blocks -= match spec.sparing {
        1 => spares * u64::from(zone.sectors_per_track),
        3 => spares * cylinders * u64::from(spec.surfaces),
        7 => zone.slips.len() as u64,
        8 => spares * (cylinders / u64::from(spec.sparing_range_cylinders)),
        _ => spares,
    };
    blocks
}

/// Scheme 1 (`g1_ltop_trackspare`): spare tracks end the zone, and each slip is a whole
/// track that pushes every later track on.
fn per_track_spared(zone: &ZoneSpec, within: u64, spt: u64, surfaces: u64) -> (u64, u64) {
    let mut track = within / spt;
    for &slip in &zone.slips {
        if u64::from(slip) <= track {
            track += 1;
        }
    }
    (track / surfaces, (track % surfaces) * spt + within % spt)
}

/// Scheme 3 (`g1_ltop_sectpertrackspare`): each track ends with `spares` unused sectors, and
/// a slip pushes the later blocks of its track on.
fn spares_per_track(zone: &ZoneSpec, within: u64, spt: u64, surfaces: u64) -> (u64, u64) {
    let usable = spt - u64::from(zone.spares);
    let track = within / usable;
    let mut sector = within % usable;
    let first_on_track = track * spt;
    for &slip in &zone.slips {
        let slip = u64::from(slip);
        if slip >= first_on_track && slip - first_on_track <= sector {
            sector += 1;
        }
    }
    (track / surfaces, (track % surfaces) * spt + sector)
}

/// Scheme 9 (`g1_ltop_sectperzonespare`): (cylinder in zone, sector within the cylinder).
fn per_zone(zone: &ZoneSpec, within: u64, per_cylinder: u64) -> (u64, u64) {
    let mut slipped = 0;
    for &slip in &zone.slips {
        if u64::from(slip) <= within + slipped {
            slipped += 1;
        }
    }
    let physical = within + slipped;
    (physical / per_cylinder, physical % per_cylinder)
}

/// Scheme 7 (`g1_ltop_sectpercylspare` with slips to the end).
fn slip_to_end(zone: &ZoneSpec, within: u64, per_cylinder: u64) -> (u64, u64) {
    let usable = per_cylinder - u64::from(zone.spares);
    let mut cylinder = within / usable;
    let mut offset = within % usable;
    let first_on_cylinder = cylinder * per_cylinder;
    let mut slipped = 0;
    for &slip in &zone.slips {
        let slip = u64::from(slip);
        if slip / per_cylinder < cylinder
            || (slip >= first_on_cylinder && slip - first_on_cylinder <= offset + slipped)
        {
            slipped += 1;
        }
    }
    offset += slipped;
    cylinder += offset / usable;
    (cylinder, offset % usable)
}

/// Scheme 8 (`g1_ltop_sectperrangespare`).
fn per_range(zone: &ZoneSpec, within: u64, per_cylinder: u64, range: u64) -> (u64, u64) {
    let per_range = per_cylinder * range;
    let usable = per_range - u64::from(zone.spares);
    let range_index = within / usable;
    let mut offset = within % usable;
    let first_in_range = range_index * per_range;
    let mut slipped = 0;
    for &slip in &zone.slips {
        let slip = u64::from(slip);
        if slip >= first_in_range && slip - first_in_range <= offset + slipped {
            slipped += 1;
        }
    }
    offset += slipped;
    (
        range_index * range + offset / per_cylinder,
        offset % per_cylinder,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn small_spec(sparing: u32, slips: Vec<u32>) -> DiskSpec {
        let text = include_str!("testdata_small.toml");
        let mut spec = DiskSpec::parse(text).unwrap();
        spec.sparing = sparing;
        spec.zone[0].slips = slips;
        spec
    }

    #[test]
    fn blocks_fill_a_cylinders_tracks_then_the_next_cylinder() {
        let layout = Layout::new(&small_spec(9, vec![]));
        // 2 surfaces x 10 sectors: lbn 10 is surface 1, lbn 20 the next cylinder.
        assert_eq!(layout.locate(10).head, 1);
        assert_eq!(layout.locate(20).cylinder, 1);
        assert_eq!(layout.locate(20).sector, 0);
        // 4 cylinders x 20 minus 3 zone spares, then the second zone's 2 x 2 x 8.
        assert_eq!(layout.capacity(), 77 + 32);
        assert_eq!(layout.locate(77).cylinder, 10);
    }

    #[test]
    fn a_slip_pushes_later_blocks_one_sector_on() {
        let layout = Layout::new(&small_spec(9, vec![5]));
        assert_eq!(layout.locate(4).sector, 4);
        assert_eq!(layout.locate(5).sector, 6);
        let end_to_end = Layout::new(&small_spec(7, vec![5]));
        assert_eq!(end_to_end.locate(5).sector, 6);
        assert_eq!(end_to_end.locate(19).cylinder, 1);
    }

    #[test]
    fn track_sparing_slips_whole_tracks_and_track_spares_end_each_track() {
        // Scheme 1: 3 spare tracks in zone 0; slipping track 1 moves lbn 10 to track 2.
        let spared = Layout::new(&small_spec(1, vec![1]));
        assert_eq!(spared.locate(9).head, 0);
        assert_eq!((spared.locate(10).cylinder, spared.locate(10).head), (1, 0));
        assert_eq!(spared.capacity(), 80 - 30 + 32);
        // Scheme 3: each track of zone 0 ends with 3 spares, 7 blocks a track.
        let per_track = Layout::new(&small_spec(3, vec![]));
        assert_eq!(per_track.locate(7).head, 1);
        assert_eq!(per_track.locate(7).sector, 0);
        assert_eq!(per_track.capacity(), 8 * 7 + 32);
    }

    #[test]
    fn skews_shift_each_tracks_first_sector() {
        let layout = Layout::new(&small_spec(9, vec![]));
        // Track skew 2 and cylinder skew 3 sectors of 10.
        assert!((layout.angle(&layout.locate(10)) - 0.2).abs() < 1e-12);
        assert!((layout.angle(&layout.locate(20)) - 0.5).abs() < 1e-12);
        assert_eq!(layout.track_last_lbn(12), 19);
        assert_eq!(layout.track_first_lbn(12), 10);
    }
}
