//! The request as every scheduler sees it: a small `Copy` value of ids and numbers.
//!
//! Paths and names (cgroup paths, job names) are interned by the driver; the core only ever
//! holds integer ids, so requests are cheap to copy and compare.

/// Virtual or real time in nanoseconds. The driver owns the clock; the core only receives it.
pub type Time = u64;

/// One millisecond in [`Time`] units.
pub const NSEC_PER_MSEC: Time = 1_000_000;
/// One microsecond in [`Time`] units.
pub const NSEC_PER_USEC: Time = 1_000;
/// One second in [`Time`] units.
pub const NSEC_PER_SEC: Time = 1_000_000_000;
/// 512 bytes: the block layer's sector.
pub const SECTOR_SIZE: u64 = 512;
/// 2560 sectors (1280 KiB): `BLK_DEF_MAX_SECTORS`, the largest request a merge may build
/// (the default `max_sectors_kb`).
pub const MAX_MERGE_SECTORS: u32 = 2560;

/// Unique id of a request, assigned by the driver; never reused within a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

/// Id of an I/O context (the kernel's `io_context`): one per process, or shared by threads
/// created with `CLONE_IO`. CFQ keys its sync queues on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IoContextId(pub u32);

/// Id of a blkio cgroup. [`CgroupId::ROOT`] always exists; others are announced to the
/// scheduler with [`crate::Elevator::add_cgroup`] before their first request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CgroupId(pub u32);

impl CgroupId {
    /// The root cgroup, `/`.
    pub const ROOT: CgroupId = CgroupId(0);
}

/// The operation a request performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Read,
    Write,
    /// Cache flush (`REQ_PREFLUSH` without data).
    Flush,
    /// Discard / trim.
    Discard,
}

impl Op {
    /// Index used for per-direction arrays: reads 0, everything that writes 1.
    pub fn data_dir(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Write | Op::Flush | Op::Discard => 1,
        }
    }
}

/// I/O priority class, numbered as `ioprio_set(2)` numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoPrioClass {
    /// No priority set: the kernel derives class and level from the task's nice value.
    None = 0,
    RealTime = 1,
    BestEffort = 2,
    Idle = 3,
}

/// A task's I/O priority: class and level 0 (highest) ..= 7 (lowest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IoPrio {
    pub class: IoPrioClass,
    pub level: u8,
}

impl IoPrio {
    /// `IOPRIO_NORM`: the level a task gets from nice 0.
    pub const NORM: u8 = 4;
    /// Levels per class (`IOPRIO_BE_NR`).
    pub const LEVELS: u8 = 8;

    /// The default of a task that never called `ioprio_set`.
    pub const fn none() -> IoPrio {
        IoPrio {
            class: IoPrioClass::None,
            level: IoPrio::NORM,
        }
    }
}

impl Default for IoPrio {
    fn default() -> Self {
        IoPrio::none()
    }
}

/// Request flags the schedulers look at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReqFlags {
    /// `REQ_SYNC`: reads, O_DIRECT writes and fsync-driven writes; not buffered writeback.
    pub sync: bool,
    /// `REQ_META`: file-system metadata.
    pub meta: bool,
    /// `REQ_PRIO`: boosted metadata (CFQ lets it preempt).
    pub prio: bool,
    /// `REQ_IDLE`: the submitter will send more soon; a sync write without it is "noidle".
    pub idle: bool,
    /// `REQ_FUA`: forced unit access.
    pub fua: bool,
}

/// One request as handed to a scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub id: RequestId,
    /// First sector (512 B units).
    pub sector: u64,
    /// Length in sectors; 0 for a flush.
    pub nr_sectors: u32,
    pub op: Op,
    pub flags: ReqFlags,
    /// Issuing task, printed in traces.
    pub pid: u32,
    pub ioc: IoContextId,
    pub cgroup: CgroupId,
    pub ioprio: IoPrio,
}

impl Request {
    /// One past the last sector.
    pub fn end_sector(&self) -> u64 {
        self.sector + u64::from(self.nr_sectors)
    }

    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        u64::from(self.nr_sectors) * SECTOR_SIZE
    }

    /// Whether `bio` may be appended to this request: it starts where this one ends, does
    /// the same operation with the same sync-ness, and the result stays within
    /// [`MAX_MERGE_SECTORS`]. Kernel: blk_rq_merge_ok() + elv_bio_merge_ok(), back side.
    pub fn can_back_merge(&self, bio: &Request) -> bool {
        self.end_sector() == bio.sector
            && self.op == bio.op
            && matches!(self.op, Op::Read | Op::Write)
            && self.is_sync() == bio.is_sync()
            && self.flags.fua == bio.flags.fua
            && self.nr_sectors + bio.nr_sectors <= MAX_MERGE_SECTORS
    }

    /// Whether the block layer would treat this request as synchronous (`rq_is_sync()` via
    /// `op_is_sync()` in include/linux/blk_types.h, 4.20 and 6.12 alike: every read, and
    /// writes flagged `REQ_SYNC` or `REQ_FUA`; a FUA write has a waiter just as a sync one).
    pub fn is_sync(&self) -> bool {
        self.op == Op::Read || self.flags.sync || self.flags.fua
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(flags: ReqFlags) -> Request {
        Request {
            id: RequestId(1),
            sector: 0,
            nr_sectors: 8,
            op: Op::Write,
            flags,
            pid: 1,
            ioc: IoContextId(1),
            cgroup: CgroupId(0),
            ioprio: IoPrio::none(),
        }
    }

    // op_is_sync() in the kernel: REQ_FUA alone makes a write synchronous, so CFQ puts it
    // on a sync queue and BFQ/mq-deadline count it in their sync budgets.
    #[test]
    fn fua_write_is_sync_as_op_is_sync_says() {
        let plain = write(ReqFlags::default());
        let fua = write(ReqFlags {
            fua: true,
            ..ReqFlags::default()
        });
        assert!(!plain.is_sync());
        assert!(fua.is_sync());
        // A sync write and a FUA write differ in FUA, so they still never merge.
        let sync = write(ReqFlags {
            sync: true,
            ..ReqFlags::default()
        });
        let mut next = fua;
        next.sector = sync.end_sector();
        assert!(!sync.can_back_merge(&next));
    }
}
