//! A hardware RAID-0 LUN: a mapping layer over N independent disk models behind a controller.
//!
//! - **Mapping.** With stripe unit U and N disks, sector s lies in stripe element k = ⌊s/U⌋ on
//!   disk k mod N at disk sector ⌊k/N⌋·U + s mod U. A host command is split at element
//!   boundaries; pieces that land next to each other on one disk (elements k and k+N) are merged.
//!   The host command completes when its last piece does.
//! - **Controller.** One serial stage: each command costs `controller_overhead_ns` plus its bytes
//!   at `controller_bytes_per_s` (the RoC's throughput ceiling) before its pieces reach the disks.
//! - **Write-back cache (battery backed).** A write completes once copied into the cache
//!   (`cache_copy_bytes_per_s`) while the dirty data fits; when the cache is full, writes wait, in
//!   order, for destages to free room. The cache keeps dirty data per member disk as extents in
//!   disk-LBA order: a write's piece joins every extent of its disk it overlaps or abuts, so an
//!   interleaved sequential stream's 4 KiB writes build one run per disk (a stream's elements k
//!   and k+N lie next to each other on their disk). Destaging is an elevator per disk (C-LOOK:
//!   ascending from where the last destage ended, wrapping to the lowest extent), each destage
//!   one member write of up to `destage_max_bytes` off the front of an extent, at most
//!   `destage_per_disk` at a time per disk, host pieces going first; the member's SPTF orders
//!   those in flight. Because the cache survives power loss,
//!   `Op::Flush` and `fua` need nothing more than the controller stage. Choice: the member
//!   disks run with their own write caches off, as LSI firmware typically sets them.
//! - **Disks.** Each member is a full [`HddDevice`] with its own queue and SPTF; pieces that do
//!   not fit its queue wait in a per-disk FIFO at the controller.
//! - **Host view.** One LUN, rotational, with the deep host queue of megaraid_sas.
//!
//! Choice: the controller's adaptive read-ahead is not modelled (policy "No-read-ahead"); the
//! members' own read-ahead still serves sequential streams, since consecutive elements of one
//! disk are contiguous on it.

use std::collections::{BTreeMap, VecDeque};

use iosched_core::{Op, RequestId, Time, NSEC_PER_SEC, NSEC_PER_USEC, SECTOR_SIZE};
use rand_pcg::Pcg64Mcg;

use super::hdd::{HddDevice, HddParams};
use super::{Command, Device};

/// Parameters of the RAID-0 LUN.
#[derive(Clone, Debug, PartialEq)]
pub struct Raid0Params {
    pub name: String,
    /// Member disks.
    pub disks: u32,
    /// Stripe unit (bytes per element on one disk).
    pub stripe_unit_bytes: u64,
    /// The member disk model.
    pub member: HddParams,
    /// Controller time per host command.
    pub controller_overhead_ns: u64,
    /// Controller throughput ceiling, bytes per second.
    pub controller_bytes_per_s: u64,
    /// Copying write data into the cache, bytes per second.
    pub cache_copy_bytes_per_s: u64,
    /// Battery-backed write-back cache; 0 means write-through.
    pub write_cache_bytes: u64,
    /// Destage writes outstanding per disk at most.
    pub destage_per_disk: u32,
    /// Largest member write one destage makes from a dirty extent.
    pub destage_max_bytes: u64,
    /// Commands the LUN accepts (cmd_per_lun).
    pub queue_depth: u32,
}

impl Raid0Params {
    /// LSI 1078 (MegaRAID 8708ELP / PERC 6/i) RAID-0 over 8 × 10K SAS (device-models.md §1.2).
    pub fn lsi1078_8x10k() -> Raid0Params {
        let mut member = HddParams::sas_10k();
        member.name = "sas-10k-member".to_string();
        // §1.2: LSI firmware typically disables the disks' write caches (assumption).
        member.write_cache_bytes = 0;
        Raid0Params {
            name: "raid0-8x10k".to_string(),
            disks: 8,
            // §1.2: 64 KiB, the usual MegaRAID default (assumption).
            stripe_unit_bytes: 64 << 10,
            member,
            // §1.2: 30–100 µs per command (estimate).
            controller_overhead_ns: 50 * NSEC_PER_USEC,
            // §1.2: Dell PERC 6 report, RoC ceiling about 1.5 GB/s.
            controller_bytes_per_s: 1_500_000_000,
            // Estimate: PCIe x8 (gen 1) ≈ 2 GB/s into DDR2.
            cache_copy_bytes_per_s: 2_000_000_000,
            // §1.2: 256 MiB DDR2 with battery backup.
            write_cache_bytes: 256 << 20,
            // Estimate.
            destage_per_disk: 8,
            // Estimate: as the member disks' own destage limit (`HddParams::destage_max_bytes`).
            destage_max_bytes: 1 << 20,
            // §1.2: megaraid_sas cmd_per_lun 128 (2.6 era).
            queue_depth: 128,
        }
    }

    /// Checks the parameters; the message names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if self.disks == 0 {
            return Err("disks must be positive".to_string());
        }
        if self.stripe_unit_bytes == 0 || !self.stripe_unit_bytes.is_multiple_of(SECTOR_SIZE) {
            return Err("stripe_unit_bytes must be a positive multiple of 512".to_string());
        }
        for (field, value) in [
            ("controller_bytes_per_s", self.controller_bytes_per_s),
            ("cache_copy_bytes_per_s", self.cache_copy_bytes_per_s),
            ("destage_per_disk", u64::from(self.destage_per_disk)),
            ("destage_max_bytes", self.destage_max_bytes / SECTOR_SIZE),
            ("queue_depth", u64::from(self.queue_depth)),
        ] {
            if value == 0 {
                return Err(format!("{field} must be positive"));
            }
        }
        self.member.validate().map_err(|e| format!("member: {e}"))
    }
}

/// A piece of a host command (or of a destage) on one disk.
#[derive(Clone, Copy, Debug)]
struct Piece {
    disk: u32,
    lba: u64,
    sectors: u64,
    write: bool,
    slot: u32,
}

/// One member disk's dirty data in the controller cache.
#[derive(Clone, Debug, Default)]
struct DiskCache {
    /// Dirty extents, first disk LBA → sectors: disjoint and never touching.
    extents: BTreeMap<u64, u64>,
    /// Where the last destage on this disk ended: the elevator's position.
    cursor: u64,
}

/// A host command (id) or a destage (no id) waiting for its pieces.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    id: Option<RequestId>,
    remaining: u32,
    bytes: u64,
}

/// The RAID-0 LUN.
#[derive(Debug)]
pub struct Raid0Device {
    params: Raid0Params,
    members: Vec<HddDevice>,
    stripe_sectors: u64,
    capacity: u64,
    controller_free: Time,
    /// Pieces leaving the controller stage, by (time, sequence).
    issue: BTreeMap<(Time, u64), Piece>,
    /// Host pieces waiting for room in a disk's queue.
    overflow: Vec<VecDeque<Piece>>,
    /// Dirty data waiting for destage, per disk.
    cache: Vec<DiskCache>,
    destage_outstanding: Vec<u32>,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    dirty_bytes: u64,
    /// Writes waiting for cache room: (id, sector, sectors).
    blocked: VecDeque<(RequestId, u64, u64)>,
    done: BTreeMap<(Time, u64), RequestId>,
    next_seq: u64,
    in_flight: u32,
    /// Scratch: one merged piece per disk while splitting.
    split_scratch: Vec<Option<Piece>>,
    /// Scratch: the pieces of the command being split.
    staged: Vec<Piece>,
    member_done: Vec<RequestId>,
}

impl Raid0Device {
    /// Builds the LUN. Panics on parameters [`Raid0Params::validate`] rejects.
    pub fn new(params: Raid0Params) -> Raid0Device {
        if let Err(message) = params.validate() {
            panic!("invalid RAID-0 parameters: {message}");
        }
        let members: Vec<HddDevice> = (0..params.disks)
            .map(|_| HddDevice::new(params.member.clone()))
            .collect();
        let stripe_sectors = params.stripe_unit_bytes / SECTOR_SIZE;
        let per_disk = members[0].capacity_sectors() / stripe_sectors * stripe_sectors;
        let disks = params.disks as usize;
        Raid0Device {
            capacity: per_disk * u64::from(params.disks),
            stripe_sectors,
            members,
            controller_free: 0,
            issue: BTreeMap::new(),
            overflow: vec![VecDeque::new(); disks],
            cache: vec![DiskCache::default(); disks],
            destage_outstanding: vec![0; disks],
            slots: Vec::new(),
            free_slots: Vec::new(),
            dirty_bytes: 0,
            blocked: VecDeque::new(),
            done: BTreeMap::new(),
            next_seq: 0,
            in_flight: 0,
            split_scratch: vec![None; disks],
            staged: Vec::with_capacity(disks),
            member_done: Vec::new(),
            params,
        }
    }

    pub fn params(&self) -> &Raid0Params {
        &self.params
    }

    /// The member disks (for inspection in tests).
    pub fn members(&self) -> &[HddDevice] {
        &self.members
    }

    /// Dirty bytes in the cache, destages in flight included.
    pub fn dirty_bytes(&self) -> u64 {
        self.dirty_bytes
    }

    /// Dirty extents waiting for destage, over all disks.
    pub fn dirty_extents(&self) -> usize {
        self.cache.iter().map(|cache| cache.extents.len()).sum()
    }

    fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    fn new_slot(&mut self, id: Option<RequestId>, bytes: u64) -> u32 {
        let slot = Slot {
            id,
            remaining: 0,
            bytes,
        };
        match self.free_slots.pop() {
            Some(index) => {
                self.slots[index as usize] = slot;
                index
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Splits `sectors` at `sector` into per-disk pieces (merged per disk) and leaves them in
    /// `staged`. Returns the piece count.
    fn split(&mut self, sector: u64, sectors: u64, write: bool, slot: u32) -> u32 {
        let disks = u64::from(self.params.disks);
        let mut at = sector;
        let end = sector + sectors;
        while at < end {
            let element = at / self.stripe_sectors;
            let within = at % self.stripe_sectors;
            let chunk = (self.stripe_sectors - within).min(end - at);
            let disk = (element % disks) as usize;
            let lba = element / disks * self.stripe_sectors + within;
            match &mut self.split_scratch[disk] {
                Some(piece) if piece.lba + piece.sectors == lba => piece.sectors += chunk,
                Some(_) => unreachable!("pieces of one command on one disk are contiguous"),
                empty => {
                    *empty = Some(Piece {
                        disk: disk as u32,
                        lba,
                        sectors: chunk,
                        write,
                        slot,
                    })
                }
            }
            at += chunk;
        }
        let mut count = 0;
        for disk in 0..self.split_scratch.len() {
            if let Some(piece) = self.split_scratch[disk].take() {
                count += 1;
                self.staged.push(piece);
            }
        }
        count
    }

    fn controller_stage(&mut self, now: Time, bytes: u64) -> Time {
        let xfer = (u128::from(bytes) * u128::from(NSEC_PER_SEC))
            .div_ceil(u128::from(self.params.controller_bytes_per_s)) as u64;
        self.controller_free =
            now.max(self.controller_free) + self.params.controller_overhead_ns + xfer;
        self.controller_free
    }

    fn copy_ns(&self, bytes: u64) -> u64 {
        (u128::from(bytes) * u128::from(NSEC_PER_SEC))
            .div_ceil(u128::from(self.params.cache_copy_bytes_per_s)) as u64
    }

    /// Puts a write into the cache at `time`: each per-disk piece joins the dirty extents of its
    /// disk it overlaps or abuts; rewritten sectors are counted once.
    fn cache_write(&mut self, sector: u64, sectors: u64, time: Time, rng: &mut Pcg64Mcg) {
        self.split(sector, sectors, true, 0);
        for index in 0..self.staged.len() {
            let piece = self.staged[index];
            let added = Self::join(
                &mut self.cache[piece.disk as usize].extents,
                piece.lba,
                piece.sectors,
            );
            self.dirty_bytes += added * SECTOR_SIZE;
        }
        self.staged.clear();
        for disk in 0..self.members.len() {
            self.feed(disk, time, rng);
        }
    }

    /// Adds `[lba, lba + sectors)` to `extents`, joining every extent it overlaps or abuts.
    /// Returns the sectors that were not dirty before. O(log n) per extent joined.
    fn join(extents: &mut BTreeMap<u64, u64>, lba: u64, sectors: u64) -> u64 {
        let mut start = lba;
        let mut end = lba + sectors;
        let mut rewritten = 0;
        while let Some((&first, &length)) = extents.range(..=end).next_back() {
            let last = first + length;
            if last < start {
                break;
            }
            rewritten += last.min(lba + sectors).saturating_sub(first.max(lba));
            start = start.min(first);
            end = end.max(last);
            extents.remove(&first);
        }
        assert!(rewritten <= sectors, "extents overlap");
        extents.insert(start, end - start);
        sectors - rewritten
    }

    /// The next destage on `disk`, C-LOOK: the front of the first extent at or after the
    /// cursor, else of the lowest one, up to `destage_max_bytes`.
    fn next_destage(&mut self, disk: usize) -> Option<Piece> {
        let max_sectors = (self.params.destage_max_bytes / SECTOR_SIZE).max(1);
        let cache = &mut self.cache[disk];
        let (&lba, &length) = cache
            .extents
            .range(cache.cursor..)
            .next()
            .or_else(|| cache.extents.iter().next())?;
        cache.extents.remove(&lba);
        let sectors = length.min(max_sectors);
        if sectors < length {
            cache.extents.insert(lba + sectors, length - sectors);
        }
        cache.cursor = lba + sectors;
        let slot = self.new_slot(None, sectors * SECTOR_SIZE);
        self.slots[slot as usize].remaining = 1;
        Some(Piece {
            disk: disk as u32,
            lba,
            sectors,
            write: true,
            slot,
        })
    }

    /// Fills disk `disk`'s queue at `time`: host pieces first, then destages.
    fn feed(&mut self, disk: usize, time: Time, rng: &mut Pcg64Mcg) {
        let depth = self.members[disk].queue_depth();
        while self.members[disk].in_flight() < depth {
            let piece = if let Some(piece) = self.overflow[disk].pop_front() {
                piece
            } else if self.destage_outstanding[disk] < self.params.destage_per_disk {
                match self.next_destage(disk) {
                    Some(piece) => {
                        self.destage_outstanding[disk] += 1;
                        piece
                    }
                    None => break,
                }
            } else {
                break;
            };
            self.submit_piece(piece, time, rng);
        }
    }

    fn submit_piece(&mut self, piece: Piece, time: Time, rng: &mut Pcg64Mcg) {
        let command = Command {
            id: RequestId(u64::from(piece.slot)),
            op: if piece.write { Op::Write } else { Op::Read },
            sector: piece.lba,
            nr_sectors: piece.sectors as u32,
            fua: false,
        };
        // A member draws its spindle phase from the generator on its first command.
        self.members[piece.disk as usize].submit(time, command, rng);
    }

    /// Processes every internal event up to and including `now`.
    fn run_until(&mut self, now: Time, rng: &mut Pcg64Mcg) {
        loop {
            let issue = self.issue.keys().next().map(|&(time, _)| time);
            let mut member: Option<(Time, usize)> = None;
            for (index, disk) in self.members.iter().enumerate() {
                if let Some(time) = disk.next_internal_event() {
                    if member.is_none_or(|(best, _)| time < best) {
                        member = Some((time, index));
                    }
                }
            }
            let issue_first = match (issue, member) {
                (Some(a), Some((b, _))) => a <= b,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if issue_first {
                let time = issue.expect("issue event");
                if time > now {
                    break;
                }
                let (_, piece) = self.issue.pop_first().expect("issue event");
                self.overflow[piece.disk as usize].push_back(piece);
                self.feed(piece.disk as usize, time, rng);
            } else {
                let (time, disk) = member.expect("member event");
                if time > now {
                    break;
                }
                let mut finished = std::mem::take(&mut self.member_done);
                finished.clear();
                self.members[disk].advance(time, rng, &mut finished);
                for &id in &finished {
                    self.piece_done(id.0 as u32, disk, time, rng);
                }
                self.member_done = finished;
                self.feed(disk, time, rng);
            }
        }
    }

    fn piece_done(&mut self, slot_index: u32, disk: usize, time: Time, rng: &mut Pcg64Mcg) {
        let slot = &mut self.slots[slot_index as usize];
        slot.remaining -= 1;
        let is_destage = slot.id.is_none();
        if is_destage {
            self.destage_outstanding[disk] -= 1;
        }
        if slot.remaining > 0 {
            return;
        }
        let slot = *slot;
        self.free_slots.push(slot_index);
        match slot.id {
            Some(id) => {
                let seq = self.seq();
                self.done.insert((time, seq), id);
            }
            None => {
                self.dirty_bytes -= slot.bytes;
                self.admit_blocked(time, rng);
            }
        }
    }

    fn admit_blocked(&mut self, time: Time, rng: &mut Pcg64Mcg) {
        while let Some(&(id, sector, sectors)) = self.blocked.front() {
            let bytes = sectors * SECTOR_SIZE;
            if self.dirty_bytes + bytes > self.params.write_cache_bytes && self.dirty_bytes > 0 {
                break;
            }
            self.blocked.pop_front();
            self.cache_write(sector, sectors, time, rng);
            let done = time + self.copy_ns(bytes);
            let seq = self.seq();
            self.done.insert((done, seq), id);
        }
    }
}

impl Device for Raid0Device {
    fn name(&self) -> &str {
        &self.params.name
    }

    fn rotational(&self) -> bool {
        true
    }

    fn queue_depth(&self) -> u32 {
        self.params.queue_depth
    }

    fn capacity_sectors(&self) -> u64 {
        self.capacity
    }

    fn in_flight(&self) -> u32 {
        self.in_flight
    }

    fn submit(&mut self, now: Time, command: Command, rng: &mut Pcg64Mcg) {
        assert!(
            self.in_flight < self.params.queue_depth,
            "device queue overfilled"
        );
        self.run_until(now, rng);
        self.in_flight += 1;
        let sector = command.sector.min(self.capacity - 1);
        let sectors = u64::from(command.nr_sectors)
            .max(1)
            .min(self.capacity - sector);
        let bytes = sectors * SECTOR_SIZE;
        match command.op {
            Op::Flush | Op::Discard => {
                // Battery-backed cache: nothing volatile to flush. Discards are dropped.
                let done = self.controller_stage(now, 0);
                let seq = self.seq();
                self.done.insert((done, seq), command.id);
            }
            Op::Write if self.params.write_cache_bytes > 0 => {
                let staged = self.controller_stage(now, bytes);
                let fits = self.dirty_bytes + bytes <= self.params.write_cache_bytes
                    || self.dirty_bytes == 0;
                if fits && self.blocked.is_empty() {
                    // Choice: the copy finishes at `staged + copy`; the destage may start at
                    // `staged` (the data is on its way into the cache).
                    self.cache_write(sector, sectors, staged.max(now), rng);
                    let done = staged + self.copy_ns(bytes);
                    let seq = self.seq();
                    self.done.insert((done, seq), command.id);
                } else {
                    self.blocked.push_back((command.id, sector, sectors));
                }
            }
            Op::Read | Op::Write => {
                let write = command.op == Op::Write;
                let issue_at = self.controller_stage(now, bytes);
                let slot = self.new_slot(Some(command.id), bytes);
                let count = self.split(sector, sectors, write, slot);
                self.slots[slot as usize].remaining = count;
                for index in 0..self.staged.len() {
                    let piece = self.staged[index];
                    let seq = self.seq();
                    self.issue.insert((issue_at, seq), piece);
                }
                self.staged.clear();
            }
        }
    }

    fn next_event(&self) -> Option<Time> {
        if self.in_flight == 0 {
            return None;
        }
        let mut next = self.done.keys().next().map(|&(time, _)| time);
        let issue = self.issue.keys().next().map(|&(time, _)| time);
        for time in self
            .members
            .iter()
            .filter_map(HddDevice::next_internal_event)
            .chain(issue)
        {
            next = Some(next.map_or(time, |n: Time| n.min(time)));
        }
        next
    }

    fn advance(&mut self, now: Time, rng: &mut Pcg64Mcg, completed: &mut Vec<RequestId>) {
        self.run_until(now, rng);
        while let Some(entry) = self.done.first_entry() {
            if entry.key().0 > now {
                break;
            }
            completed.push(entry.remove());
            self.in_flight -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{RngCore, SeedableRng};

    /// The mapping puts consecutive stripe units on consecutive disks, and a command spanning
    /// more than one stripe row gives each disk one merged piece.
    #[test]
    fn split_maps_and_merges() {
        let mut device = Raid0Device::new(Raid0Params::lsi1078_8x10k());
        let unit = device.stripe_sectors;
        // Element 9 → disk 1, row 1.
        let count = device.split(9 * unit + 5, 3, false, 0);
        assert_eq!(count, 1);
        assert_eq!((device.staged[0].disk, device.staged[0].lba), (1, unit + 5));
        device.staged.clear();
        // 1 MiB from 0: 16 elements over 8 disks, two adjacent elements each.
        let count = device.split(0, 2048, false, 0);
        assert_eq!(count, 8);
        assert!(device
            .staged
            .iter()
            .all(|p| p.sectors == 2 * unit && p.lba == 0));
    }

    /// A host command completes after its last piece: a 1 MiB read waits for all 8 disks.
    #[test]
    fn command_completes_after_last_piece() {
        let mut device = Raid0Device::new(Raid0Params::lsi1078_8x10k());
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let command = Command {
            id: RequestId(1),
            op: Op::Read,
            sector: 0,
            nr_sectors: 2048,
            fua: false,
        };
        device.submit(0, command, &mut rng);
        let mut done = Vec::new();
        let mut last = 0;
        while done.is_empty() {
            last = device.next_event().expect("in flight");
            device.advance(last, &mut rng, &mut done);
        }
        assert_eq!(done, [RequestId(1)]);
        assert!(device.members().iter().all(|disk| disk.in_flight() == 0));
        assert!(last > 1_000_000, "{last}");
    }

    /// Writes are acknowledged from the battery-backed cache in microseconds, and drain.
    #[test]
    fn cached_writes_are_fast_and_destage() {
        let mut device = Raid0Device::new(Raid0Params::lsi1078_8x10k());
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let command = Command {
            id: RequestId(1),
            op: Op::Write,
            sector: 123_456,
            nr_sectors: 8,
            fua: false,
        };
        device.submit(0, command, &mut rng);
        let t = device.next_event().unwrap();
        assert!(t < 100_000, "{t}");
        let mut done = Vec::new();
        device.advance(t, &mut rng, &mut done);
        assert_eq!(done, [RequestId(1)]);
        device.advance(1_000_000_000, &mut rng, &mut done);
        assert_eq!(device.dirty_bytes, 0);
    }

    /// Extents join: two streams' interleaved 4 KiB pieces build one extent each, a rewrite
    /// counts no new sectors, and a write bridging two extents merges them.
    #[test]
    fn join_builds_one_extent_per_stream() {
        let mut extents = BTreeMap::new();
        let mut added = 0;
        for block in 0..16u64 {
            added += Raid0Device::join(&mut extents, 1_000 + block * 8, 8);
            added += Raid0Device::join(&mut extents, 90_000 + block * 8, 8);
        }
        assert_eq!(added, 256);
        assert_eq!(extents.len(), 2);
        assert_eq!(extents[&1_000], 128);
        // Rewrite across the end of stream A's run: only the part beyond it is new.
        assert_eq!(Raid0Device::join(&mut extents, 1_120, 16), 8);
        assert_eq!(extents[&1_000], 136);
        // Bridge the two runs.
        let gap = 90_000 - 1_136;
        assert_eq!(
            Raid0Device::join(&mut extents, 1_136, gap as u64),
            gap as u64
        );
        assert_eq!(extents.len(), 1);
        assert_eq!(extents[&1_000], 90_128 - 1_000);
    }

    /// Destages go in C-LOOK order from the cursor and cut extents at `destage_max_bytes`.
    #[test]
    fn destage_order_is_c_look() {
        let mut device = Raid0Device::new(Raid0Params::lsi1078_8x10k());
        let max = device.params.destage_max_bytes / SECTOR_SIZE;
        device.cache[0].extents.insert(100, 8);
        device.cache[0].extents.insert(5_000, max + 16);
        device.cache[0].extents.insert(900_000, 8);
        device.cache[0].cursor = 4_000;
        let order: Vec<(u64, u64)> = (0..4)
            .map(|_| {
                let piece = device.next_destage(0).expect("dirty");
                (piece.lba, piece.sectors)
            })
            .collect();
        assert_eq!(
            order,
            [(5_000, max), (5_000 + max, 16), (900_000, 8), (100, 8)]
        );
        assert!(device.next_destage(0).is_none());
    }

    /// Random 4 KiB writes filling the cache do not coalesce: one extent per block.
    #[test]
    fn random_writes_stay_separate_extents() {
        let mut device = Raid0Device::new(Raid0Params::lsi1078_8x10k());
        let mut rng = Pcg64Mcg::seed_from_u64(4);
        let mut offsets = Pcg64Mcg::seed_from_u64(5);
        let blocks = device.capacity_sectors() / 8;
        let mut done = Vec::new();
        let mut now = 0;
        for id in 0..20_000u64 {
            while device.in_flight() >= device.queue_depth() {
                now = device.next_event().expect("in flight");
                device.advance(now, &mut rng, &mut done);
            }
            let command = Command {
                id: RequestId(id),
                op: Op::Write,
                sector: offsets.next_u64() % blocks * 8,
                nr_sectors: 8,
                fua: false,
            };
            device.submit(now, command, &mut rng);
        }
        let waiting = device.dirty_extents() as u64;
        assert!(waiting > 10_000, "{waiting}");
        // Blocks waiting (destages in flight hold at most 8 per disk): all but a chance
        // neighbour or two are extents of their own.
        let blocks_waiting = device.dirty_bytes() / 4096 - 64;
        assert!(
            blocks_waiting * 100 <= waiting * 101,
            "{blocks_waiting} {waiting}"
        );
    }
}
