//! Request builders shared by the schedulers' unit tests and property tests.

use crate::request::{CgroupId, IoContextId, IoPrio, Op, ReqFlags, Request, RequestId};

/// A sync read by process `id % 1000` (its own io context), in the root cgroup.
pub fn read(id: u64, sector: u64, nr_sectors: u32) -> Request {
    request(id, Op::Read, sector, nr_sectors, 1)
}

/// An async (buffered writeback) write.
pub fn async_write(id: u64, sector: u64, nr_sectors: u32) -> Request {
    request(id, Op::Write, sector, nr_sectors, 1)
}

/// A request from process `pid` (which is also its io context id).
pub fn request(id: u64, op: Op, sector: u64, nr_sectors: u32, pid: u32) -> Request {
    Request {
        id: RequestId(id),
        sector,
        nr_sectors,
        op,
        flags: ReqFlags::default(),
        pid,
        ioc: IoContextId(pid),
        cgroup: CgroupId::ROOT,
        ioprio: IoPrio::none(),
    }
}
