//! iosched's scheduler core: the elevator interface and the schedulers, as pure policy.
//!
//! Nothing here reads a clock, performs I/O or starts a thread: drivers pass `now` in
//! nanoseconds with every call, and receive requests, idle deadlines and trace messages back.
//!
//! ```
//! use iosched_core::{new_elevator, DeviceInfo, Dispatch, NoTrace, testing};
//!
//! let device = DeviceInfo { rotational: true, queue_depth: 1 };
//! let mut noop = new_elevator("noop", device).unwrap();
//! noop.insert(testing::read(1, 2048, 8), 0, &mut NoTrace);
//! assert!(matches!(noop.dispatch(0, &mut NoTrace), Dispatch::Request(_)));
//! ```
#![forbid(unsafe_code)]

pub mod adaptive;
pub mod bfq;
pub mod cfq;
pub mod deadline;
pub mod elevator;
pub(crate) mod elv_hash;
pub mod id_map;
pub mod id_slab;
pub mod id_table;
pub mod kyber;
pub mod noop;
pub(crate) mod rbtree;
pub mod request;
pub mod request_pool;
pub mod seq_table;
pub mod testing;
pub mod trace;
pub mod tunable;
pub mod uptime;

pub use elevator::{CgroupSpec, DeviceInfo, Dispatch, Elevator, ServiceSummary};
pub use request::{
    CgroupId, IoContextId, IoPrio, IoPrioClass, Op, ReqFlags, Request, RequestId, Time,
    NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC, SECTOR_SIZE,
};
pub use trace::{Decision, DecisionKind, MessageSubject, NoTrace, RqEvent, Trace};
pub use tunable::{TunableError, TunableSpec, TunableValue};
pub use uptime::{Uptime, DEFAULT_UPTIME_NS};

/// A scheduler users can select, with its tunables table.
#[derive(Clone, Copy, Debug)]
pub struct SchedulerInfo {
    pub name: &'static str,
    /// The kernel's names for the same policy, accepted wherever `name` is.
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub tunables: &'static [TunableSpec],
}

/// Every scheduler, in the order `iosched schedulers` lists them.
pub fn schedulers() -> Vec<SchedulerInfo> {
    vec![
        SchedulerInfo {
            name: "noop",
            aliases: &["none"],
            summary: "one FIFO, no reordering, no idling",
            tunables: noop::Noop::tunable_specs(),
        },
        SchedulerInfo {
            name: "mq-deadline",
            aliases: &["deadline"],
            summary: "mq-deadline (Linux 6.12): sector-sorted batches, read/write FIFOs with deadlines, RT/BE/IDLE levels with aging",
            tunables: deadline::Deadline::tunable_specs(),
        },
        SchedulerInfo {
            name: "bfq",
            aliases: &[],
            summary: "Budget Fair Queueing (Linux 6.12): B-WF2Q+ over queues and groups, sector budgets, idling, weight raising",
            tunables: bfq::Bfq::tunable_specs(),
        },
        SchedulerInfo {
            name: "cfq",
            aliases: &[],
            summary: "Completely Fair Queuing (Linux 4.20): per-process time slices, idling, cgroup weights",
            tunables: cfq::Cfq::tunable_specs(),
        },
        SchedulerInfo {
            name: "kyber",
            aliases: &[],
            summary: "Kyber (Linux 6.12): per-operation domains with token pools sized by a timer to keep p99 latency under read/write targets",
            tunables: kyber::Kyber::tunable_specs(),
        },
        SchedulerInfo {
            name: "adaptive",
            aliases: &[],
            summary: "iosched's own: groups share by weight within a tolerance while several are in the device at once; idle windows from measured think times, service time and parallelism",
            tunables: adaptive::Adaptive::tunable_specs(),
        },
    ]
}

/// The name did not match any scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownScheduler(pub String);

impl std::fmt::Display for UnknownScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = schedulers().iter().map(|s| s.name).collect();
        write!(
            f,
            "unknown scheduler '{}' (known: {}; none and deadline are aliases of noop and \
             mq-deadline",
            self.0,
            names.join(", ")
        )?;
        // The kernel's own blk-mq schedulers are run by fio against a real device instead.
        if matches!(self.0.as_str(), "bfq") {
            write!(f, "; the kernel's {} runs with `iosched kernel`", self.0)?;
        }
        write!(f, ")")
    }
}

impl std::error::Error for UnknownScheduler {}

/// Why [`configured_elevator`] could not build a scheduler.
#[derive(Debug)]
pub enum ElevatorError {
    Unknown(UnknownScheduler),
    Tunable(TunableError),
}

/// The scheduler named `name` for `device` as a driver runs it: behind the uptime clock
/// that starts it `uptime_ns` after boot ([`Uptime`]), with `tunables` set in order (what
/// `--set` gives). The simulator and the engine build theirs here.
pub fn configured_elevator(
    name: &str,
    device: DeviceInfo,
    uptime_ns: Time,
    tunables: &[(String, String)],
) -> Result<Box<dyn Elevator>, ElevatorError> {
    // noop and CFQ (the issue 34 workload's) wrapped as their own types: Uptime's calls
    // into them are static. Built as new_elevator() builds them.
    let mut elevator: Box<dyn Elevator> = match canonical_name(name) {
        Some("noop") => Box::new(Uptime::new(Box::new(noop::Noop::new()), uptime_ns)),
        Some("cfq") => Box::new(Uptime::new(Box::new(cfq::Cfq::new(device)), uptime_ns)),
        _ => {
            let elevator = new_elevator(name, device).map_err(ElevatorError::Unknown)?;
            Box::new(Uptime::new(elevator, uptime_ns))
        }
    };
    for (tunable, value) in tunables {
        elevator
            .set_tunable(tunable, value)
            .map_err(ElevatorError::Tunable)?;
    }
    Ok(elevator)
}

/// The scheduler `name` names (itself or through an alias), if known.
fn canonical_name(name: &str) -> Option<&'static str> {
    // An alias resolves through the one list `iosched schedulers` prints.
    schedulers()
        .into_iter()
        .find(|s| s.name == name || s.aliases.contains(&name))
        .map(|s| s.name)
}

/// Builds the scheduler named `name` for a device.
pub fn new_elevator(name: &str, device: DeviceInfo) -> Result<Box<dyn Elevator>, UnknownScheduler> {
    match canonical_name(name) {
        Some("noop") => Ok(Box::new(noop::Noop::new())),
        Some("mq-deadline") => {
            // blk_mq_init_sched(): nr_requests is twice the device's depth, at most 256;
            // dd_init_hctx() sets async_depth from it.
            let mut dd = deadline::Deadline::new();
            dd.depth_updated(2 * device.queue_depth.min(128));
            Ok(Box::new(dd))
        }
        Some("bfq") => Ok(Box::new(bfq::Bfq::new(device, 0))),
        Some("kyber") => {
            // blk_mq_init_sched(): nr_requests as for mq-deadline; kyber_depth_updated().
            let mut kyber = kyber::Kyber::new();
            kyber.depth_updated(2 * device.queue_depth.min(128));
            Ok(Box::new(kyber))
        }
        // Non-rotational devices get slice_idle = 0, as cfq_registered_queue() does.
        Some("cfq") => Ok(Box::new(cfq::Cfq::new(device))),
        Some("adaptive") => Ok(Box::new(adaptive::Adaptive::new(device))),
        _ => Err(UnknownScheduler(name.to_string())),
    }
}
