//! One parametrised flash device for SATA SSDs, NVMe, UFS and eMMC (MQSim's structure, reduced
//! to what scheduler experiments need).
//!
//! A command passes through these stages, each a resource with a busy-until time:
//!
//! 1. **Execution slots.** At most `executing_commands` commands are worked on at once; a legacy
//!    eMMC (no CMDQ) executes one while the driver holds a second one ready (`queue_depth` 2).
//! 2. **Host link.** Write data crosses the link before processing, read data after it, page by
//!    page as it leaves the flash. A half-duplex link (SATA, eMMC) is one resource for both
//!    directions; a full-duplex one (PCIe, UFS M-PHY) is two.
//! 3. **Controller / FTL.** `controller_cores` serial servers, each command costing
//!    `controller_read_ns` or `controller_write_ns` plus `controller_write_per_4k_ns` per 4 KiB
//!    written. This stage caps small-block IOPS (device-models.md §1.3: without it a 20-die
//!    X25-E would reach 100 K IOPS).
//! 4. **Flash array.** `channels` × `units_per_channel` independent units (dies or planes). A
//!    read occupies its unit for tR, then its channel for the transfer. Pages are placed as a
//!    sequential fill leaves them: logical page *p* lives on unit *p* mod units, so sequential
//!    reads stripe over all units and random reads spread evenly. Choice: the FTL's map is not
//!    stored; new writes go to the units round-robin (log-structured allocation) and later
//!    reads still find their data by the striped placement, which has the same spread.
//! 5. **Write buffer.** Writes complete once the controller has put them in the buffer; the
//!    buffer drains by programming full pages (channel transfer, then tPROG on the unit). When it
//!    is full, a write waits until programs free enough room. `fua` writes and `Op::Flush` wait
//!    until their data (flushes: all data) is programmed; a partial page is padded.
//! 6. **Garbage collection (simplified).** With `steady_state` (a preconditioned drive), every
//!    programmed page owes the greedy-GC work a steady state implies. Greedy GC under uniform
//!    random overwrites with spare fraction ρ has write amplification WA ≈ (1 + ρ) / (2ρ)
//!    (Desnoyers' approximation), so each random page costs (WA − 1) page copies (tR, two
//!    channel transfers and tPROG on its unit) plus WA/pages_per_block of an erase; a page written
//!    sequentially invalidates whole blocks and owes only 1/pages_per_block of an erase. The debt
//!    is paid on the unit as a busy period whenever it reaches one erase time. Without
//!    `steady_state` (a fresh drive, or an SLC cache that absorbs the run) there is no GC. A
//!    write counts as sequential when it starts where the previous write ended. ρ is the
//!    spare relative to the span the writes keep rewriting ([`super::gc`]): writes confined to
//!    a few GB of a full drive pay far less than writes over all of it.
//! 7. **Reads first on a unit.** As MQSim's default transaction scheduler (`TSU_OutofOrder`,
//!    GC in its non-urgent mode) does, a host read goes ahead of the programs and GC work
//!    queued on its unit and waits only for the flash operation running there: the rest of a
//!    program, or the current page copy of a GC busy period. The queued work moves back by
//!    the read's tR. Choice: the buffer room those programs free is not moved back with them.
//!
//! Resources are reserved in submission order (first come, first served per resource, host
//! reads ahead of queued programs per unit), so each command's completion is known when it is
//! submitted: per-command work is O(pages · programs queued on a unit) plus the completion
//! queue's insertion ([`Completions`]: O(1) when commands finish in about the order they came,
//! as same-sized reads do).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use iosched_core::{Op, RequestId, Time, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC, SECTOR_SIZE};
use rand_pcg::Pcg64Mcg;

use super::gc::GcCost;
use super::{Command, Device};

/// Parameters of a flash device. Units in the names; sources at the presets.
#[derive(Clone, Debug, PartialEq)]
pub struct FlashParams {
    pub name: String,
    pub capacity_bytes: u64,
    /// Commands the device (and its driver) hold at once.
    pub queue_depth: u32,
    /// Commands executed at once (1: eMMC without command queueing).
    pub executing_commands: u32,
    /// Host link payload rate, bytes per second.
    pub host_link_bytes_per_s: u64,
    /// Whether the link carries both directions at once.
    pub host_link_full_duplex: bool,
    /// Protocol and driver latency per command (command and status frames, interrupt); it delays
    /// the command without occupying the link.
    pub host_command_ns: u64,
    /// Controller cores, each serving one command at a time.
    pub controller_cores: u32,
    /// Controller time per read command.
    pub controller_read_ns: u64,
    /// Controller time per write command (also flush and discard).
    pub controller_write_ns: u64,
    /// Additional controller time per 4 KiB written (mapping updates, buffer management).
    pub controller_write_per_4k_ns: u64,
    /// Flash channels (buses).
    pub channels: u32,
    /// Independent units (dies or planes) per channel.
    pub units_per_channel: u32,
    /// Channel transfer rate, bytes per second.
    pub channel_bytes_per_s: u64,
    /// Flash page.
    pub page_bytes: u64,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// tR: page read into the unit's register.
    pub read_page_ns: u64,
    /// tPROG: page program.
    pub program_page_ns: u64,
    /// tBERS: block erase.
    pub erase_block_ns: u64,
    /// Volatile write-back buffer; 0 makes every write wait for its program.
    pub write_buffer_bytes: u64,
    /// Spare flash beyond the user capacity, per mille of the user capacity.
    pub over_provisioning_permille: u32,
    /// Preconditioned to steady state: random writes pay greedy-GC copies.
    pub steady_state: bool,
}

impl FlashParams {
    /// Intel X25-E 32 GB, SATA 3 Gb/s, SLC (device-models.md §1.3).
    pub fn x25e() -> FlashParams {
        FlashParams {
            name: "ssd-x25e".to_string(),
            capacity_bytes: 32_000_000_000,
            // SATA NCQ: 31 of 32 tags in Linux.
            queue_depth: 31,
            executing_commands: 31,
            // §1.3: SATA 3 Gb/s, about 270 MB/s usable, half duplex.
            host_link_bytes_per_s: 270_000_000,
            host_link_full_duplex: false,
            // Estimate: command and status FIS plus interrupt.
            host_command_ns: 5 * NSEC_PER_USEC,
            // §1.3: a single serial controller stage ...
            controller_cores: 1,
            // ... of 25–30 µs per command (estimate).
            controller_read_ns: 28 * NSEC_PER_USEC,
            controller_write_ns: 28 * NSEC_PER_USEC,
            // Estimate: sets the 170–210 MB/s sequential write ("controller-limited", §1.3).
            controller_write_per_4k_ns: 20 * NSEC_PER_USEC,
            // Tom's Hardware: 10 channels; §1.3: about 20 dies (assumption).
            channels: 10,
            units_per_channel: 2,
            // §1.3: calibrated so a 4 KiB device read takes about 75 µs (tR 25 + about 45).
            channel_bytes_per_s: 91_000_000,
            // §1.3: SLC, 4 KiB pages, 64 pages per block.
            page_bytes: 4096,
            pages_per_block: 64,
            read_page_ns: 25 * NSEC_PER_USEC,
            // §1.3: tPROG 200–250 µs, tBERS 1.5–2 ms.
            program_page_ns: 250 * NSEC_PER_USEC,
            erase_block_ns: 2 * NSEC_PER_MSEC,
            // Estimate: a small DRAM write buffer.
            write_buffer_bytes: 1 << 20,
            // §1.3: the raw:user ratio is unknown, a knob; 3.3 % puts steady-state 4 KiB random
            // writes on Intel's 3.3 K IOPS spec.
            over_provisioning_permille: 33,
            // §1.3: precondition before write experiments.
            steady_state: true,
        }
    }

    /// A modern PCIe Gen4 x4 client NVMe SSD, "980 PRO-like" (device-models.md §1.4).
    pub fn nvme_gen4() -> FlashParams {
        FlashParams {
            name: "nvme-gen4".to_string(),
            capacity_bytes: 1_000_000_000_000,
            // Linux io_queue_depth 1024.
            queue_depth: 1024,
            executing_commands: 1024,
            // Estimate: PCIe Gen4 x4 ≈ 7.9 GB/s raw, about 7.0 GB/s of payload.
            host_link_bytes_per_s: 7_000_000_000,
            host_link_full_duplex: true,
            // §1.4: 5–10 µs end to end software and interrupt; estimate 2 µs on the device side.
            host_command_ns: 2 * NSEC_PER_USEC,
            // §1.4: cores of 1–2 µs per command, a ceiling about 1 M IOPS.
            controller_cores: 2,
            controller_read_ns: 2 * NSEC_PER_USEC,
            controller_write_ns: 2 * NSEC_PER_USEC,
            controller_write_per_4k_ns: 0,
            // §1.4: 8 channels × 2 dies × 4 planes (estimate).
            channels: 8,
            units_per_channel: 8,
            // §1.4: Toggle DDR 4.0 ≈ 1.4 Gb/s per pin × 8.
            channel_bytes_per_s: 1_400_000_000,
            // §1.4: 16 KiB pages, 384–1 536 per block (estimate).
            page_bytes: 16 << 10,
            pages_per_block: 1024,
            // §1.4: Samsung 136L V-NAND tR < 45 µs.
            read_page_ns: 45 * NSEC_PER_USEC,
            // §1.4: SLC-mode program about 100–200 µs (estimate): writes land in the SLC cache.
            program_page_ns: 200 * NSEC_PER_USEC,
            // §1.4: tBERS 3–10 ms.
            erase_block_ns: 3_500 * NSEC_PER_USEC,
            // Estimate: part of the 1 GB DRAM buffers writes.
            write_buffer_bytes: 32 << 20,
            // §1.4: about 7 %.
            over_provisioning_permille: 70,
            // Choice: the SLC cache absorbs experiment-length writes, no steady-state GC.
            steady_state: false,
        }
    }

    /// UFS 3.1 phone storage (device-models.md §1.5).
    pub fn ufs31() -> FlashParams {
        FlashParams {
            name: "ufs31".to_string(),
            capacity_bytes: 256_000_000_000,
            // UFSHCI: 32 transfer-request slots.
            queue_depth: 32,
            executing_commands: 32,
            // §1.5: M-PHY HS-G4 × 2 lanes ≈ 2.3 GB/s, full duplex.
            host_link_bytes_per_s: 2_300_000_000,
            host_link_full_duplex: true,
            // Estimate: UPIU command and response.
            host_command_ns: 5 * NSEC_PER_USEC,
            // Estimate: one controller core; 10 µs caps random reads at Samsung's 100 K IOPS ...
            controller_cores: 1,
            controller_read_ns: 10 * NSEC_PER_USEC,
            // ... and 14 µs random writes at 70 K IOPS.
            controller_write_ns: 14 * NSEC_PER_USEC,
            controller_write_per_4k_ns: 0,
            // §1.5: 2–4 channels, 4–8 TLC dies (assumption): 4 channels × 2 dies × 2 planes.
            channels: 4,
            units_per_channel: 4,
            // Estimate: 800 MT/s × 8 bit.
            channel_bytes_per_s: 800_000_000,
            page_bytes: 16 << 10,
            // Estimate.
            pages_per_block: 1024,
            // §1.4: Samsung 96L V-NAND tR 50 µs.
            read_page_ns: 50 * NSEC_PER_USEC,
            // §1.5: writes land in the SLC WriteBooster buffer; SLC program 100–200 µs (§1.4).
            program_page_ns: 200 * NSEC_PER_USEC,
            erase_block_ns: 3_500 * NSEC_PER_USEC,
            // Estimate.
            write_buffer_bytes: 8 << 20,
            // Estimate.
            over_provisioning_permille: 70,
            // Choice: the WriteBooster buffer absorbs experiment-length writes.
            steady_state: false,
        }
    }

    /// eMMC 5.1 without command queueing (device-models.md §1.5).
    pub fn emmc51() -> FlashParams {
        FlashParams {
            name: "emmc51".to_string(),
            capacity_bytes: 64_000_000_000,
            // §1.5: Linux's legacy MMC queue holds 2 (one executing, one prepared).
            queue_depth: 2,
            executing_commands: 1,
            // §1.5: HS400, 8-bit DDR at 200 MHz = 400 MB/s, half duplex.
            host_link_bytes_per_s: 400_000_000,
            host_link_full_duplex: false,
            // Estimate: CMD and response on the CMD line.
            host_command_ns: 5 * NSEC_PER_USEC,
            controller_cores: 1,
            // Estimate: with tR and the transfers, a 4 KiB read takes about 95 µs, Samsung's
            // 11 K IOPS one at a time.
            controller_read_ns: 15 * NSEC_PER_USEC,
            // Estimate: puts one-at-a-time 4 KiB writes on Samsung's 13 K IOPS.
            controller_write_ns: 62 * NSEC_PER_USEC,
            controller_write_per_4k_ns: 0,
            // §1.5: 1–2 channels, 2–4 dies (assumption): one channel, 2 dies × 2 planes.
            channels: 1,
            units_per_channel: 4,
            // Estimate: 266 MT/s × 8 bit; sets the 250 MB/s sequential read.
            channel_bytes_per_s: 266_000_000,
            page_bytes: 16 << 10,
            // Estimate.
            pages_per_block: 256,
            // §1.4: Samsung 96L tR 50 µs.
            read_page_ns: 50 * NSEC_PER_USEC,
            // §1.4: TLC program 500 µs (Samsung 96L); sets the 125 MB/s sequential write.
            program_page_ns: 500 * NSEC_PER_USEC,
            erase_block_ns: 3_500 * NSEC_PER_USEC,
            // Estimate: controller SRAM.
            write_buffer_bytes: 512 << 10,
            over_provisioning_permille: 70,
            steady_state: false,
        }
    }

    /// Checks the parameters; the message names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("capacity_bytes", self.capacity_bytes),
            ("queue_depth", u64::from(self.queue_depth)),
            ("executing_commands", u64::from(self.executing_commands)),
            ("host_link_bytes_per_s", self.host_link_bytes_per_s),
            ("controller_cores", u64::from(self.controller_cores)),
            ("channels", u64::from(self.channels)),
            ("units_per_channel", u64::from(self.units_per_channel)),
            ("channel_bytes_per_s", self.channel_bytes_per_s),
            ("page_bytes", self.page_bytes),
            ("pages_per_block", u64::from(self.pages_per_block)),
        ];
        for (field, value) in positive {
            if value == 0 {
                return Err(format!("{field} must be positive"));
            }
        }
        let bounded = [
            ("capacity_bytes", self.capacity_bytes, 1, 1 << 50),
            ("queue_depth", u64::from(self.queue_depth), 1, 65_536),
            ("controller_cores", u64::from(self.controller_cores), 1, 256),
            ("channels", u64::from(self.channels), 1, 256),
            (
                "units_per_channel",
                u64::from(self.units_per_channel),
                1,
                256,
            ),
            ("page_bytes", self.page_bytes, 512, 1 << 20),
            (
                "host_link_bytes_per_s",
                self.host_link_bytes_per_s,
                1,
                1 << 40,
            ),
            ("channel_bytes_per_s", self.channel_bytes_per_s, 1, 1 << 40),
        ];
        for (field, value, low, high) in bounded {
            if !(low..=high).contains(&value) {
                return Err(format!("{field} must lie in {low}..={high}"));
            }
        }
        if !self.page_bytes.is_multiple_of(SECTOR_SIZE) {
            return Err("page_bytes must be a multiple of 512".to_string());
        }
        if self.capacity_bytes < self.page_bytes {
            return Err("capacity_bytes must hold at least one page".to_string());
        }
        Ok(())
    }
}

/// The flash device.
#[derive(Debug)]
pub struct FlashDevice {
    params: FlashParams,
    units: u32,
    /// Execution slots' free times, when fewer than the queue depth.
    slots: Option<BinaryHeap<Reverse<Time>>>,
    link_in_free: Time,
    link_out_free: Time,
    cores_free: Vec<Time>,
    /// Each channel's and each unit's resources, one record apiece (issue 34: a read touched
    /// six vectors, each a bounds-checked look-up).
    channel_state: Vec<Channel>,
    unit_state: Vec<Unit>,
    /// The longest a host read waits for a running GC busy period: one page copy.
    gc_op_ns: u64,
    /// GC per random page, following the hot span (`None`: a fresh drive, no GC).
    gc_cost: Option<GcCost>,
    gc_sequential_page_ns: u64,
    /// Bytes held by the write buffer, and their release times (program ends).
    buffer_used: u64,
    releases: BinaryHeap<Reverse<(Time, u64)>>,
    /// Bytes waiting for a full page, and whether any of them came from a random write.
    open_page_bytes: u64,
    open_page_random: bool,
    next_program_unit: u32,
    last_program_end: Time,
    last_write_end: u64,
    done: Completions,
    /// Per-command constants worked out once (issue 34: a division each, per request).
    shape: Shape,
    in_flight: u32,
    peak_in_flight: u32,
}

fn transfer_ns(bytes: u64, rate: u64) -> u64 {
    // The same quotient in u64 when the product fits (any transfer under 18 GB): a 128-bit
    // division is a library call, three of them per request (issue 34).
    match bytes.checked_mul(NSEC_PER_SEC) {
        Some(product) => product.div_ceil(rate),
        None => (u128::from(bytes) * u128::from(NSEC_PER_SEC)).div_ceil(u128::from(rate)) as u64,
    }
}

/// A divisor fixed for the run, by a shift when it is a power of two (the presets' are): a
/// 64-bit division costs tens of cycles, and a read needed three (issue 34).
#[derive(Clone, Copy, Debug)]
struct Divisor {
    value: u64,
    shift: Option<u32>,
}

impl Divisor {
    fn new(value: u64) -> Divisor {
        Divisor {
            value,
            shift: value.is_power_of_two().then(|| value.trailing_zeros()),
        }
    }

    fn div(self, x: u64) -> u64 {
        match self.shift {
            Some(shift) => x >> shift,
            None => x / self.value,
        }
    }

    fn rem(self, x: u64) -> u64 {
        match self.shift {
            Some(_) => x & (self.value - 1),
            None => x % self.value,
        }
    }
}

/// What every command of the device works out the same way.
#[derive(Clone, Copy, Debug)]
struct Shape {
    page_sectors: Divisor,
    units: Divisor,
    channels: Divisor,
    /// The three as a shift and two masks when all are powers of two (the presets'): one
    /// test a look-up instead of one a divisor (issue 34).
    pow2: Option<(u32, u64, u64)>,
    /// A whole page over a channel.
    page_xfer_ns: u64,
    /// The last transfer size asked for and its channel and host-link times (reads of one
    /// size ask again and again).
    last_bytes: u64,
    last_channel_ns: u64,
    last_link_ns: u64,
}

impl Shape {
    fn new(params: &FlashParams) -> Shape {
        let units = Divisor::new(u64::from(params.channels * params.units_per_channel));
        let page_sectors = Divisor::new(params.page_bytes / SECTOR_SIZE);
        let channels = Divisor::new(u64::from(params.channels));
        let pow2 = match (page_sectors.shift, units.shift, channels.shift) {
            (Some(page_shift), Some(_), Some(_)) => {
                Some((page_shift, units.value - 1, channels.value - 1))
            }
            _ => None,
        };
        Shape {
            page_sectors,
            units,
            channels,
            pow2,
            page_xfer_ns: transfer_ns(params.page_bytes, params.channel_bytes_per_s),
            last_bytes: 0,
            last_channel_ns: 0,
            last_link_ns: 0,
        }
    }

    /// The page holding `sector`, and the unit and channel it lives on.
    fn locate(&self, sector: u64) -> (u64, usize, usize) {
        if let Some((page_shift, unit_mask, channel_mask)) = self.pow2 {
            let page = sector >> page_shift;
            let unit = page & unit_mask;
            return (page, unit as usize, (unit & channel_mask) as usize);
        }
        let page = self.page_sectors.div(sector);
        let unit = self.units.rem(page);
        (page, unit as usize, self.channels.rem(unit) as usize)
    }

    /// `bytes` over a channel and over the host link.
    fn read_xfers(&mut self, bytes: u64, params: &FlashParams) -> (u64, u64) {
        if bytes != self.last_bytes {
            self.last_bytes = bytes;
            self.last_channel_ns = transfer_ns(bytes, params.channel_bytes_per_s);
            self.last_link_ns = transfer_ns(bytes, params.host_link_bytes_per_s);
        }
        (self.last_channel_ns, self.last_link_ns)
    }
}

/// One flash channel (bus).
#[derive(Clone, Copy, Debug, Default)]
struct Channel {
    /// When its last reserved transfer ends.
    free: Time,
    /// When its host read transfers are done.
    reads_free: Time,
    /// Entries of [`Unit::programs`] on its units: a read on a channel with none skips the
    /// walk over its units (a read-only run never programs; issue 34).
    programs: usize,
}

/// One flash unit (die or plane).
#[derive(Clone, Debug, Default)]
struct Unit {
    /// When its last reserved operation ends.
    free: Time,
    /// When its host reads are done (reads queue among themselves in order).
    reads_free: Time,
    /// Programs reserved and not yet over: (start, end, whether a GC busy period follows
    /// the program).
    programs: VecDeque<(Time, Time, bool)>,
    /// GC work it owes, paid once it reaches an erase time.
    gc_debt_ns: u64,
}

/// Commands in flight by completion time, earliest first; equal times in submission order
/// (what a heap of (time, sequence) pops). A sorted ring: a command finishing no earlier
/// than every other (the common case: same-sized reads finish about in the order they came)
/// goes on the back in O(1), others are placed by binary search, moving the shorter side;
/// the earliest pops off the front. A binary heap's pop sifted through log2(depth) levels
/// per request, and `VecDeque`'s general wrapping cost about 75 instructions more per
/// request than this power-of-two ring (issue 34).
#[derive(Clone, Debug)]
struct Completions {
    /// A power-of-two ring; `len` entries from `head`.
    ring: Vec<(Time, RequestId)>,
    head: usize,
    len: usize,
}

impl Completions {
    fn with_capacity(capacity: usize) -> Completions {
        Completions {
            ring: vec![(0, RequestId(0)); capacity.max(1).next_power_of_two()],
            head: 0,
            len: 0,
        }
    }

    fn mask(&self) -> usize {
        self.ring.len() - 1
    }

    fn time_at(&self, i: usize) -> Time {
        self.ring[(self.head + i) & self.mask()].0
    }

    /// Queues `id` to finish at `time`; answers whether it went to the front (the next
    /// event moved).
    fn push(&mut self, time: Time, id: RequestId) -> bool {
        if self.len == self.ring.len() {
            self.grow();
        }
        let mask = self.mask();
        if self.len == 0 || self.time_at(self.len - 1) <= time {
            self.ring[(self.head + self.len) & mask] = (time, id);
            self.len += 1;
            return self.len == 1;
        }
        // After every command finishing at or before `time`: ties keep their order.
        let (mut low, mut high) = (0, self.len);
        while low < high {
            let mid = (low + high) / 2;
            if self.time_at(mid) <= time {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        let at = low;
        if at < self.len / 2 {
            // Entries before `at` move one slot towards the front.
            self.head = (self.head + mask) & mask;
            for i in 0..at {
                self.ring[(self.head + i) & mask] = self.ring[(self.head + i + 1) & mask];
            }
        } else {
            for i in (at..self.len).rev() {
                self.ring[(self.head + i + 1) & mask] = self.ring[(self.head + i) & mask];
            }
        }
        self.ring[(self.head + at) & mask] = (time, id);
        self.len += 1;
        at == 0
    }

    /// Doubles the ring, its entries from the start.
    #[cold]
    fn grow(&mut self) {
        let mask = self.mask();
        let mut ring = Vec::with_capacity(2 * self.ring.len());
        ring.extend((0..self.len).map(|i| self.ring[(self.head + i) & mask]));
        ring.resize(2 * self.ring.len(), (0, RequestId(0)));
        self.ring = ring;
        self.head = 0;
    }

    fn peek_time(&self) -> Option<Time> {
        (self.len > 0).then(|| self.ring[self.head].0)
    }

    /// The earliest command, if it is done by `now`.
    fn pop_due(&mut self, now: Time) -> Option<RequestId> {
        if self.len == 0 {
            return None;
        }
        let (time, id) = self.ring[self.head];
        if time > now {
            return None;
        }
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(id)
    }
}

impl FlashDevice {
    /// Builds the device. Panics on parameters [`FlashParams::validate`] rejects.
    pub fn new(params: FlashParams) -> FlashDevice {
        if let Err(message) = params.validate() {
            panic!("invalid flash parameters: {message}");
        }
        let units = params.channels * params.units_per_channel;
        let page_xfer = transfer_ns(params.page_bytes, params.channel_bytes_per_s);
        let pages_per_block = u64::from(params.pages_per_block);
        let (gc_cost, gc_sequential_page_ns) = if params.steady_state {
            let rho = f64::from(params.over_provisioning_permille.max(1)) / 1000.0;
            let copy_ns = (params.read_page_ns + 2 * page_xfer + params.program_page_ns) as f64;
            let erase_per_page_ns = params.erase_block_ns as f64 / pages_per_block as f64;
            let cost = GcCost::new(rho, params.capacity_bytes, copy_ns, erase_per_page_ns);
            (Some(cost), params.erase_block_ns / pages_per_block)
        } else {
            (None, 0)
        };
        let slots = (params.executing_commands < params.queue_depth)
            .then(|| (0..params.executing_commands).map(|_| Reverse(0)).collect());
        FlashDevice {
            units,
            slots,
            link_in_free: 0,
            link_out_free: 0,
            cores_free: vec![0; params.controller_cores as usize],
            channel_state: vec![Channel::default(); params.channels as usize],
            unit_state: vec![Unit::default(); units as usize],
            gc_op_ns: params.read_page_ns + 2 * page_xfer + params.program_page_ns,
            gc_cost,
            gc_sequential_page_ns,
            buffer_used: 0,
            releases: BinaryHeap::new(),
            open_page_bytes: 0,
            open_page_random: false,
            next_program_unit: 0,
            last_program_end: 0,
            last_write_end: u64::MAX,
            done: Completions::with_capacity(params.queue_depth.min(4096) as usize),
            shape: Shape::new(&params),
            in_flight: 0,
            peak_in_flight: 0,
            params,
        }
    }

    pub fn params(&self) -> &FlashParams {
        &self.params
    }

    /// Most commands held at once so far.
    pub fn peak_in_flight(&self) -> u32 {
        self.peak_in_flight
    }

    /// Takes the earliest-free core at `ready`, busy for `cost`; returns when it is done.
    fn controller(&mut self, ready: Time, cost: u64) -> Time {
        // The first of the earliest-free cores.
        let mut index = 0;
        let mut free = self.cores_free[0];
        for (i, &core_free) in self.cores_free.iter().enumerate().skip(1) {
            if core_free < free {
                (index, free) = (i, core_free);
            }
        }
        let end = ready.max(free) + cost;
        self.cores_free[index] = end;
        end
    }

    /// Moves `bytes` over the host link, to the device (`inbound`) or from it; a half-duplex
    /// link is one resource for both directions. Returns when the transfer ends.
    fn link(&mut self, ready: Time, bytes: u64, inbound: bool) -> Time {
        let xfer = transfer_ns(bytes, self.params.host_link_bytes_per_s);
        self.link_for(ready, xfer, inbound)
    }

    /// [`FlashDevice::link`] for a transfer of `xfer` ns.
    fn link_for(&mut self, ready: Time, xfer: u64, inbound: bool) -> Time {
        if self.params.host_link_full_duplex {
            let free = if inbound {
                &mut self.link_in_free
            } else {
                &mut self.link_out_free
            };
            *free = ready.max(*free) + xfer;
            *free
        } else {
            let end = ready.max(self.link_in_free.max(self.link_out_free)) + xfer;
            self.link_in_free = end;
            self.link_out_free = end;
            end
        }
    }

    /// Programs one (possibly padded) page holding `bytes` of buffered data ready at `ready`.
    fn program_page(&mut self, ready: Time, bytes: u64, random: bool) -> Time {
        let unit = self.next_program_unit as usize;
        self.next_program_unit = (self.next_program_unit + 1) % self.units;
        let channel = self.shape.channels.rem(unit as u64) as usize;
        let xfer = self.shape.page_xfer_ns;
        let debt = if random {
            self.gc_cost.as_ref().map_or(0, GcCost::random_page_ns)
        } else {
            self.gc_sequential_page_ns
        };
        let on = &mut self.unit_state[unit];
        let bus = &mut self.channel_state[channel];
        let start = ready.max(bus.free).max(on.free);
        bus.free = start + xfer;
        let mut end = start + xfer + self.params.program_page_ns;
        on.gc_debt_ns += debt;
        let gc = on.gc_debt_ns >= self.params.erase_block_ns.max(1);
        if gc {
            end += on.gc_debt_ns;
            on.gc_debt_ns = 0;
        }
        on.free = end;
        on.programs.push_back((start, end, gc));
        bus.programs += 1;
        self.releases.push(Reverse((end, bytes)));
        self.last_program_end = self.last_program_end.max(end);
        end
    }

    /// Programs every full page in the buffer; with `pad`, the partial one too. Returns the
    /// last program's end.
    fn drain_open_pages(&mut self, ready: Time, pad: bool) -> Time {
        let mut last = ready;
        while self.open_page_bytes >= self.params.page_bytes {
            self.open_page_bytes -= self.params.page_bytes;
            let random = self.open_page_random;
            last = self.program_page(ready, self.params.page_bytes, random);
        }
        if pad && self.open_page_bytes > 0 {
            let bytes = self.open_page_bytes;
            self.open_page_bytes = 0;
            let random = self.open_page_random;
            last = self.program_page(ready, bytes, random);
        }
        if self.open_page_bytes == 0 {
            self.open_page_random = false;
        }
        last
    }

    /// When the buffer has room for `bytes`, at or after `ready`.
    fn buffer_room(&mut self, ready: Time, bytes: u64) -> Time {
        let mut at = ready;
        while let Some(&Reverse((time, released))) = self.releases.peek() {
            let fits = self.buffer_used + bytes <= self.params.write_buffer_bytes;
            if time > at && fits {
                break;
            }
            self.releases.pop();
            self.buffer_used -= released.min(self.buffer_used);
            at = at.max(time);
        }
        self.buffer_used += bytes;
        at
    }

    /// When a host read's data may cross `channel`, ready at `at`: after the reads before
    /// it and any program transfer under way then, not after program transfers queued later.
    fn channel_free_for_read(&self, channel: usize, at: Time) -> Time {
        let bus = &self.channel_state[channel];
        let mut t = at.max(bus.reads_free);
        if bus.programs == 0 {
            return t;
        }
        let xfer = self.shape.page_xfer_ns;
        let channels = self.params.channels as usize;
        loop {
            let busy_until = (channel..self.units as usize)
                .step_by(channels)
                .flat_map(|unit| self.unit_state[unit].programs.iter())
                .filter(|&&(start, _, _)| start <= t && t < start + xfer)
                .map(|&(start, _, _)| start + xfer)
                .max();
            match busy_until {
                Some(end) => t = end,
                None => return t,
            }
        }
    }

    /// A host read of one page on `unit`, ready at `ready`: it waits for the reads before it
    /// and for the flash operation running on the unit (a program's remainder, or one page
    /// copy of a GC busy period), not for programs queued behind; those move back by tR.
    /// Returns when the data is in the unit's register.
    fn read_on_unit(&mut self, unit: usize, channel: usize, ready: Time) -> Time {
        let tr = self.params.read_page_ns;
        let on = &mut self.unit_state[unit];
        if on.programs.is_empty() {
            // Every unit of a read-only run: nothing runs there, nothing moves back.
            let start = ready.max(on.reads_free);
            let data = start + tr;
            on.reads_free = data;
            on.free = if on.free > start { on.free + tr } else { data };
            return data;
        }
        while on.programs.front().is_some_and(|&(_, end, _)| end <= ready) {
            on.programs.pop_front();
            self.channel_state[channel].programs -= 1;
        }
        let running_until = match on.programs.front() {
            Some(&(start, end, true)) if start <= ready => end.min(ready + self.gc_op_ns),
            Some(&(start, end, false)) if start <= ready => end,
            _ => ready,
        };
        let start = running_until.max(on.reads_free);
        let data = start + tr;
        on.reads_free = data;
        for (program_start, program_end, _) in on.programs.iter_mut() {
            if *program_end > start {
                if *program_start >= start {
                    *program_start += tr;
                }
                *program_end += tr;
            }
        }
        on.free = if on.free > start { on.free + tr } else { data };
        data
    }

    fn read(&mut self, start: Time, lba: u64, sectors: u64) -> Time {
        let ready = self.controller(
            start + self.params.host_command_ns,
            self.params.controller_read_ns,
        );
        let mut done = ready;
        let mut sector = lba;
        let end = lba + sectors;
        while sector < end {
            let (page, unit, channel) = self.shape.locate(sector);
            let chunk_end = ((page + 1) * self.shape.page_sectors.value).min(end);
            let bytes = (chunk_end - sector) * SECTOR_SIZE;
            let data = self.read_on_unit(unit, channel, ready);
            let xfer_start = self.channel_free_for_read(channel, data);
            let (channel_ns, link_ns) = self.shape.read_xfers(bytes, &self.params);
            let xfer_end = xfer_start + channel_ns;
            let bus = &mut self.channel_state[channel];
            bus.reads_free = xfer_end;
            if bus.free <= xfer_start {
                bus.free = xfer_end;
            }
            done = done.max(self.link_for(xfer_end, link_ns, false));
            sector = chunk_end;
        }
        done
    }

    fn write(&mut self, start: Time, lba: u64, sectors: u64, fua: bool) -> Time {
        let bytes = sectors * SECTOR_SIZE;
        let arrived = self.link(start + self.params.host_command_ns, bytes, true);
        let units_4k = bytes.div_ceil(4096);
        let cost =
            self.params.controller_write_ns + units_4k * self.params.controller_write_per_4k_ns;
        let ready = self.controller(arrived, cost);
        let random = lba != self.last_write_end;
        self.last_write_end = lba + sectors;
        if let Some(gc) = &mut self.gc_cost {
            gc.note_write(lba * SECTOR_SIZE, bytes);
        }
        self.open_page_random |= random;
        if self.params.write_buffer_bytes == 0 {
            self.open_page_bytes += bytes;
            return self.drain_open_pages(ready, true).max(ready);
        }
        // The data enters the buffer a page at a time, so a write larger than the buffer
        // streams through it; the write completes when its last piece is in.
        let mut in_buffer = ready;
        let mut left = bytes;
        let mut programmed = ready;
        while left > 0 {
            let piece = left.min(self.params.page_bytes);
            left -= piece;
            in_buffer = self.buffer_room(in_buffer, piece);
            self.open_page_bytes += piece;
            programmed = self.drain_open_pages(in_buffer, fua && left == 0);
        }
        if fua {
            programmed.max(in_buffer)
        } else {
            in_buffer
        }
    }

    /// Answers whether the next event moved.
    fn finish(&mut self, time: Time, id: RequestId) -> bool {
        self.done.push(time, id)
    }
}

impl Device for FlashDevice {
    fn name(&self) -> &str {
        &self.params.name
    }

    fn rotational(&self) -> bool {
        false
    }

    fn queue_depth(&self) -> u32 {
        self.params.queue_depth
    }

    fn capacity_sectors(&self) -> u64 {
        self.params.capacity_bytes / SECTOR_SIZE
    }

    fn in_flight(&self) -> u32 {
        self.in_flight
    }

    fn submit(&mut self, now: Time, command: Command, rng: &mut Pcg64Mcg) {
        self.submit_moves_next(now, command, rng);
    }

    /// Only a command finishing before every other moves the next event.
    fn submit_moves_next(&mut self, now: Time, command: Command, _rng: &mut Pcg64Mcg) -> bool {
        assert!(
            self.in_flight < self.params.queue_depth,
            "device queue overfilled"
        );
        self.in_flight += 1;
        self.peak_in_flight = self.peak_in_flight.max(self.in_flight);
        let capacity = self.capacity_sectors();
        let lba = command.sector.min(capacity - 1);
        let sectors = u64::from(command.nr_sectors).max(1).min(capacity - lba);
        let start = match self.slots.as_mut() {
            Some(slots) => {
                let Reverse(free) = slots.pop().expect("a slot");
                now.max(free)
            }
            None => now,
        };
        let done = match command.op {
            Op::Read => self.read(start, lba, sectors),
            Op::Write => self.write(start, lba, sectors, command.fua),
            Op::Flush => {
                let ready = self.controller(
                    start + self.params.host_command_ns,
                    self.params.controller_write_ns,
                );
                let padded = self.drain_open_pages(ready, true);
                ready.max(padded).max(self.last_program_end)
            }
            Op::Discard => self.controller(
                start + self.params.host_command_ns,
                self.params.controller_write_ns,
            ),
        };
        if let Some(slots) = self.slots.as_mut() {
            slots.push(Reverse(done));
        }
        self.finish(done, command.id)
    }

    fn next_event(&self) -> Option<Time> {
        self.done.peek_time()
    }

    fn advance(&mut self, now: Time, _rng: &mut Pcg64Mcg, completed: &mut Vec<RequestId>) {
        while let Some(id) = self.done.pop_due(now) {
            self.in_flight -= 1;
            completed.push(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    fn command(id: u64, op: Op, sector: u64, nr_sectors: u32) -> Command {
        Command {
            id: RequestId(id),
            op,
            sector,
            nr_sectors,
            fua: false,
        }
    }

    /// `submit_moves_next` answers false only when the next event stayed: the simulator
    /// then keeps the event it armed (issue 34).
    #[test]
    fn submit_says_when_the_next_event_moves() {
        let mut device = FlashDevice::new(FlashParams::nvme_gen4());
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        let mut completed = Vec::new();
        let (mut now, mut moved, mut kept) = (0, 0, 0);
        for id in 0..3000u64 {
            let op = if id % 5 == 0 { Op::Write } else { Op::Read };
            let sector = (id * 104_729 % 2_000_000) * 8;
            if device.in_flight() == device.queue_depth() || id % 3 == 0 {
                if let Some(next) = device.next_event() {
                    now = now.max(next);
                    device.advance(now, &mut rng, &mut completed);
                }
            }
            let before = device.next_event();
            let says = device.submit_moves_next(now, command(id, op, sector, 8), &mut rng);
            assert_eq!(says, device.next_event() != before, "command {id}");
            if says {
                moved += 1;
            } else {
                kept += 1;
            }
        }
        assert!(moved > 0 && kept > 0, "moved {moved}, kept {kept}");
    }

    /// `Channel::programs` counts the programs queued on each channel's units, so a read
    /// that skips the walk when it is 0 skips only walks that would find nothing (issue 34).
    #[test]
    fn channel_program_counts_match_the_queues() {
        let mut device = FlashDevice::new(FlashParams::nvme_gen4());
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut completed = Vec::new();
        let channels = device.params.channels as usize;
        let mut now = 0;
        for id in 0..4000u64 {
            // Writes in bursts, reads across many pages; time moves on so programs end.
            let op = if id % 7 < 3 { Op::Write } else { Op::Read };
            let sector = (id * 7919 % 100_000) * 8;
            if device.in_flight() == device.queue_depth() {
                now = device.next_event().expect("a command in flight");
                device.advance(now, &mut rng, &mut completed);
            }
            device.submit(now, command(id, op, sector, 8), &mut rng);
            now += 2_000;
            device.advance(now, &mut rng, &mut completed);
            for channel in 0..channels {
                let queued: usize = (channel..device.units as usize)
                    .step_by(channels)
                    .map(|unit| device.unit_state[unit].programs.len())
                    .sum();
                assert_eq!(
                    device.channel_state[channel].programs, queued,
                    "channel {channel}"
                );
            }
        }
        assert!(
            device.channel_state.iter().any(|c| c.programs > 0),
            "no program queued"
        );
    }

    /// The completion ring pops as a heap of (time, sequence) does: earliest first, equal
    /// times in the order pushed, whether entries go on the back, before the middle or
    /// after it, across growth and wrap-around.
    #[test]
    fn completions_pop_as_a_time_sequence_heap() {
        let mut ring = Completions::with_capacity(4);
        let mut heap = BinaryHeap::new();
        let mut x = 99u64;
        let mut now = 0;
        for seq in 0..20_000u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            if (x >> 60) < 9 || ring.len == 0 {
                // Mostly later than what is queued, often tied, sometimes earlier.
                let time = now + (x >> 33) % 50 + if (x >> 20).is_multiple_of(5) { 0 } else { 40 };
                ring.push(time, RequestId(seq));
                heap.push(Reverse((time, seq)));
            } else {
                let Reverse((time, seq)) = heap.pop().unwrap();
                assert_eq!(ring.peek_time(), Some(time));
                if time > 0 {
                    assert_eq!(ring.pop_due(time - 1), None, "not due before its time");
                }
                assert_eq!(ring.pop_due(time), Some(RequestId(seq)));
                now = time;
            }
        }
        while let Some(Reverse((time, seq))) = heap.pop() {
            assert_eq!(ring.pop_due(u64::MAX), Some(RequestId(seq)), "{time}");
        }
        assert_eq!(ring.peek_time(), None);
    }

    /// A lone 4 KiB read on the X25-E takes the reference's 100–130 µs via the host.
    #[test]
    fn x25e_read_latency() {
        let mut device = FlashDevice::new(FlashParams::x25e());
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        device.submit(0, command(1, Op::Read, 800, 8), &mut rng);
        let t = device.next_event().unwrap();
        assert!((100_000..130_000).contains(&t), "{t}");
    }

    /// eMMC executes one command at a time: the second waits for the first.
    #[test]
    fn emmc_executes_one_at_a_time() {
        let mut device = FlashDevice::new(FlashParams::emmc51());
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        device.submit(0, command(1, Op::Read, 0, 8), &mut rng);
        let first = device.next_event().unwrap();
        device.submit(0, command(2, Op::Read, 1 << 20, 8), &mut rng);
        let mut done = Vec::new();
        device.advance(first, &mut rng, &mut done);
        assert_eq!(done, [RequestId(1)]);
        let second = device.next_event().unwrap();
        assert!(second >= 2 * first - 1_000, "{first} {second}");
    }

    /// A flush completes only after the buffered data is programmed.
    #[test]
    fn flush_waits_for_programs() {
        let mut device = FlashDevice::new(FlashParams::x25e());
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        device.submit(0, command(1, Op::Write, 0, 8), &mut rng);
        let write_done = device.next_event().unwrap();
        let mut done = Vec::new();
        device.advance(write_done, &mut rng, &mut done);
        device.submit(write_done, command(2, Op::Flush, 0, 0), &mut rng);
        let flush_done = device.next_event().unwrap();
        assert!(
            flush_done >= write_done + device.params().program_page_ns,
            "{write_done} {flush_done}"
        );
    }

    /// A read behind a full write buffer on a preconditioned X25-E waits only for the flash
    /// operation running on its unit (MQSim's default transaction scheduler serves user reads
    /// before queued programs and GC), not for the backlog: well under a millisecond, where
    /// queueing behind every buffered program and its GC took several (issue 15's p99 of
    /// 6.2 ms at QD1 in a 70/30 mix).
    #[test]
    fn reads_go_ahead_of_queued_programs() {
        let mut device = FlashDevice::new(FlashParams::x25e());
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut done = Vec::new();
        let mut now = 0;
        // Fill the 1 MiB buffer with random 4 KiB writes over the whole drive (GC debt on
        // every unit).
        for i in 0..600u64 {
            while device.in_flight() >= device.queue_depth() {
                now = device.next_event().unwrap();
                device.advance(now, &mut rng, &mut done);
            }
            device.submit(
                now,
                command(i, Op::Write, (i * 7_919_111 % X25E_PAGES) * 8, 8),
                &mut rng,
            );
        }
        while device.in_flight() > 0 {
            now = device.next_event().unwrap();
            device.advance(now, &mut rng, &mut done);
        }
        assert!(
            device.last_program_end > now + 5 * NSEC_PER_MSEC,
            "a backlog remains"
        );
        let mut worst = 0;
        for i in 0..20u64 {
            device.submit(now, command(1000 + i, Op::Read, i * 8, 8), &mut rng);
            let end = device.next_event().unwrap();
            device.advance(end, &mut rng, &mut done);
            worst = worst.max(end - now);
            now = end;
        }
        assert!(worst < NSEC_PER_MSEC, "worst read {worst} ns");
    }

    /// 4 KiB writes at depth 1, `span_pages` apart at random; the time the last one ends.
    fn write_run(params: FlashParams, sequential: bool, span_pages: u64) -> Time {
        let mut device = FlashDevice::new(params);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut now = 0;
        let mut done = Vec::new();
        for i in 0..4000u64 {
            let sector = if sequential {
                i * 8
            } else {
                (i * 7_919_111 % span_pages) * 8
            };
            device.submit(now, command(i, Op::Write, sector, 8), &mut rng);
            now = device.next_event().unwrap();
            done.clear();
            device.advance(now, &mut rng, &mut done);
        }
        now
    }

    /// 32 GB in 4 KiB pages: the X25-E's whole span.
    const X25E_PAGES: u64 = 7_812_500;

    /// Steady-state random writes are far slower than sequential ones (GC copies), a fresh
    /// drive's are not.
    #[test]
    fn steady_state_random_writes_pay_gc() {
        let random = write_run(FlashParams::x25e(), false, X25E_PAGES);
        let sequential = write_run(FlashParams::x25e(), true, X25E_PAGES);
        assert!(random > 3 * sequential, "{random} {sequential}");
        let fresh = FlashParams {
            steady_state: false,
            ..FlashParams::x25e()
        };
        assert!(write_run(fresh, false, X25E_PAGES) * 2 < random);
    }

    /// Seed 001's regime: random writes confined to 1.5 GB of the full drive pay far less GC
    /// than random writes over all of it (the spare serves only the hot span, [`super::gc`]).
    #[test]
    fn random_writes_in_a_small_span_pay_less_gc() {
        let whole = write_run(FlashParams::x25e(), false, X25E_PAGES);
        let hot = write_run(FlashParams::x25e(), false, 1_500_000_000 / 4096);
        assert!(hot * 3 < whole, "{hot} {whole}");
    }
}
