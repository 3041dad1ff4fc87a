//! What the scenario generators share: the seeded stream they draw from, and the device
//! line, whose choices differ by scheduler but whose shape does not.

use std::fmt::Write as _;

use super::harness::splitmix64;

/// A splitmix64 stream; scenario `i` of seed `s` starts at `s * 1_000_003 + i`.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn for_scenario(seed: u64, index: u64) -> Self {
        Rng(seed.wrapping_mul(1_000_003).wrapping_add(index))
    }

    pub(super) fn next(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }

    /// Uniform in `lo..=hi`.
    pub(super) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    pub(super) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize]
    }

    pub(super) fn pick_str<'a>(&mut self, items: &'a [String]) -> &'a str {
        &items[(self.next() % items.len() as u64) as usize]
    }

    pub(super) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The values a generator's device line is drawn from.
pub(super) struct DeviceChoices {
    pub depths: &'static [u64],
    pub nr_requests: &'static [u64],
    pub base_ns: &'static [u64],
}

/// One `device` line: depth, `nr_requests`, the rotational flag and a service model, with a
/// seek model on rotational devices and sometimes a request size cap.
pub(super) fn device_line(r: &mut Rng, out: &mut String, choices: &DeviceChoices) {
    let depth = r.pick(choices.depths);
    let nr = r.pick(choices.nr_requests);
    let rot = r.chance(50);
    let base = r.pick(choices.base_ns);
    let per = r.pick(&[0, 100, 1000, 5000]);
    let _ = write!(
        out,
        "device depth={depth} nr_requests={nr} rotational={} base_ns={base} per_sector_ns={per}",
        u8::from(rot)
    );
    if rot {
        let (smin, per_k, cap) = (
            r.range(0, 3_000_000),
            r.range(0, 50_000),
            r.range(0, 8_000_000),
        );
        let _ = write!(
            out,
            " seek_min_ns={smin} seek_per_ksector_ns={per_k} seek_max_ns={cap}"
        );
    }
    if r.chance(20) {
        let _ = write!(out, " max_sectors={}", r.pick(&[16, 64, 256]));
    }
    out.push('\n');
}
