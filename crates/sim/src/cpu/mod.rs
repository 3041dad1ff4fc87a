//! Simulated CPUs: a machine's `ncpus` processors, the CPU time each process and kernel
//! thread spends on system calls, page-cache copies, page faults, dirtying and the writeback
//! walk, and the run queue a thread waits in while every CPU is busy.
//!
//! The costs are set once per *machine era* ([`ERAS`], `--set cpu_era=NAME`; the table and
//! its sources are in `docs/machine-models.md`), never per scenario. The number of CPUs is
//! the simulated machine's `cpus` knob (the one job files read as `$ncpus` and the dirty
//! ratelimit is computed from). Without `cpu_era` the model is off and a run is what it was
//! before it existed: buffered operations cost the flat `page_cpu_ns` delay, nothing
//! contends and fio's `usr_cpu`/`sys_cpu` stay 0.
//!
//! The CPUs are shared as Linux's CFS shares them ([`cfs`]): a thread that needs CPU while
//! every CPU is busy waits in a run queue ordered by vruntime, and a running thread keeps
//! its CPU for its time slice (`max(sched_latency / nr, min_granularity)`, the kernel's
//! defaults scaled for the CPU count) across consecutive bursts, or until it sleeps.
//! Kernel threads (writeback flushers) wait in the same queue as processes.

use iosched_core::Time;

use crate::event::{Event, EventQueue};

pub mod cfs;

use cfs::{Cfs, CfsTunables};

/// Per-operation CPU costs of one machine era (ns, bytes per µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Era {
    pub name: &'static str,
    /// What machine the era stands for.
    pub machine: &'static str,
    /// A read or write system call's fixed kernel cost (entry and exit, the file and
    /// page-cache lookup), excluding the copy.
    pub syscall_ns: Time,
    /// The kernel's page-cache copy rate (`copy_to_user`/`copy_from_user`), bytes per µs
    /// (= MB/s); also a user-space `memcpy` into a mapping.
    pub copy_bytes_per_us: u64,
    /// A page allocated into the page cache or a write fault on a mapped page
    /// (`page_mkwrite`), per page.
    pub fault_ns: Time,
    /// Dirtying a page (`set_page_dirty`, accounting, tagging), per page newly dirtied.
    pub dirty_ns: Time,
    /// The writeback walk per page written back (finding it, clearing dirty, setting
    /// writeback, mapping it to its block, adding it to a bio).
    pub writeback_ns: Time,
    /// The application's own user time per I/O (fio's bookkeeping between calls).
    pub usr_per_io_ns: Time,
    /// CFS's tunables before `sched_tunable_scaling=log` scales them for the CPU count.
    pub cfs: CfsTunables,
}

/// CFS's normalized defaults in Linux 5.10's `kernel/sched/fair.c`
/// (`normalized_sysctl_sched_latency` 6 ms, `..._min_granularity` 0.75 ms,
/// `..._wakeup_granularity` 1 ms; the same in 4.x). Scaled by `1 + ilog2(min(ncpus, 8))`.
pub const LINUX_CFS: CfsTunables = CfsTunables {
    latency_ns: 6_000_000,
    min_granularity_ns: 750_000,
    wakeup_granularity_ns: 1_000_000,
};

/// The eras (see `docs/machine-models.md` for the sources). `zero` costs nothing: with it a
/// run is the model-off run with `page_cpu_ns=0`, which the tests use to show that the model
/// adds its costs and nothing else.
pub const ERAS: [Era; 4] = [
    Era {
        name: "server-2009",
        machine: "Nehalem Xeon (5500 series, 2.9 GHz), Linux 2.6.30",
        syscall_ns: 600,
        copy_bytes_per_us: 4_000,
        fault_ns: 1_000,
        dirty_ns: 300,
        writeback_ns: 2_000,
        usr_per_io_ns: 600,
        cfs: LINUX_CFS,
    },
    Era {
        name: "desktop-2016",
        machine: "Skylake Core i7 (4 GHz), Linux 4.x",
        syscall_ns: 400,
        copy_bytes_per_us: 10_000,
        fault_ns: 500,
        dirty_ns: 200,
        writeback_ns: 1_000,
        usr_per_io_ns: 300,
        cfs: LINUX_CFS,
    },
    Era {
        name: "phone-2022",
        machine: "Android phone SoC (Cortex-A710 class, 2.5 GHz), Linux 5.10",
        syscall_ns: 700,
        copy_bytes_per_us: 6_000,
        fault_ns: 1_000,
        dirty_ns: 400,
        writeback_ns: 2_000,
        usr_per_io_ns: 600,
        cfs: LINUX_CFS,
    },
    Era {
        name: "zero",
        machine: "no CPU costs (checks the model)",
        syscall_ns: 0,
        copy_bytes_per_us: 0,
        fault_ns: 0,
        dirty_ns: 0,
        writeback_ns: 0,
        usr_per_io_ns: 0,
        cfs: LINUX_CFS,
    },
];

/// The era called `name`.
pub fn era(name: &str) -> Option<Era> {
    ERAS.iter().find(|era| era.name == name).copied()
}

impl Era {
    /// CPU time to copy `bytes` (0 when the era's copy costs nothing).
    pub fn copy_ns(&self, bytes: u64) -> Time {
        if self.copy_bytes_per_us == 0 {
            return 0;
        }
        (bytes * 1000).div_ceil(self.copy_bytes_per_us)
    }
}

/// CPU time one thread has used, as `getrusage()` splits it, and its context switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuUse {
    pub usr_ns: Time,
    pub sys_ns: Time,
    /// Context switches (fio's `ctx`, voluntary and involuntary): the thread ran after
    /// sleeping, or waited for a CPU.
    pub ctx: u64,
    /// When the thread last left a CPU.
    pub ran_until: Time,
}

/// The machine's CPUs, the CFS scheduler sharing them ([`cfs`]) and what each simulated
/// process used of them.
#[derive(Clone, Debug)]
pub struct Cpus {
    pub era: Era,
    cfs: Cfs,
    /// Per job clone.
    pub per_process: Vec<CpuUse>,
    /// A clone's next run is already asked for (woken again meanwhile: nothing to add).
    pub booked: Vec<bool>,
    /// Kernel threads (writeback flushers), summed.
    pub kernel: CpuUse,
    /// The kernel threads by key (a flusher's id): CFS thread `processes + slot`.
    kernel_threads: Vec<u32>,
    /// What a waiting thread does once its burst is done: an event, after a delay.
    pending: Vec<Option<(Event, Time)>>,
    /// The pending `Event::CpuCheck`, if any.
    check_at: Option<Time>,
}

impl Cpus {
    /// `ncpus` CPUs (at least one) for `processes` job clones.
    pub fn new(era: Era, ncpus: u64, processes: usize) -> Cpus {
        Cpus {
            era,
            cfs: Cfs::new(era.cfs, ncpus.clamp(1, 4096) as usize),
            per_process: vec![CpuUse::default(); processes],
            booked: vec![false; processes],
            kernel: CpuUse::default(),
            kernel_threads: Vec::new(),
            pending: Vec::new(),
            check_at: None,
        }
    }

    pub fn ncpus(&self) -> usize {
        self.cfs.ncpus()
    }

    /// Time threads spent waiting for a CPU.
    pub fn waited_ns(&self) -> Time {
        self.cfs.waited_ns
    }

    /// CFS thread `thread` asks at `ready` for `ns` of CPU: when it runs at once, when it
    /// is done; when it waits, None, and `then` is pushed `delay` after its burst ends.
    fn request(
        &mut self,
        thread: usize,
        ready: Time,
        ns: Time,
        then: (Event, Time),
        events: &mut EventQueue,
    ) -> Option<Time> {
        if ns == 0 {
            return Some(ready);
        }
        // Nothing waits and a CPU is free (the usual case): no run queue, no check to arm.
        if let Some(end) = self.cfs.run_uncontended(thread, ready, ns) {
            return Some(end);
        }
        self.cfs.request(thread, ready, ns);
        let mut own = None;
        for index in 0..self.cfs.started.len() {
            let (started, _, end) = self.cfs.started[index];
            if started == thread {
                own = Some(end);
            } else {
                self.resume(started, end, ready, events);
            }
        }
        if own.is_none() {
            if thread >= self.pending.len() {
                self.pending.resize(thread + 1, None);
            }
            self.pending[thread] = Some(then);
        }
        self.arm_check(ready, events);
        own
    }

    /// A waiting thread got its CPU: its continuation runs when the burst is done.
    fn resume(&mut self, thread: usize, end: Time, now: Time, events: &mut EventQueue) {
        let (event, delay) = self.pending[thread].take().expect("a waiting thread");
        if let Some(used) = self.per_process.get_mut(thread) {
            used.ran_until = used.ran_until.max(end);
        }
        events.push((end + delay).max(now), event);
    }

    fn arm_check(&mut self, now: Time, events: &mut EventQueue) {
        let Some(at) = self.cfs.next_check() else {
            return;
        };
        if self.check_at.is_none_or(|armed| at < armed || armed <= now) {
            self.check_at = Some(at.max(now));
            events.push(at.max(now), Event::CpuCheck);
        }
    }

    /// `Event::CpuCheck`: CPUs whose thread slept go to waiting threads.
    pub(crate) fn check(&mut self, now: Time, events: &mut EventQueue) {
        if self.check_at != Some(now) {
            return;
        }
        self.check_at = None;
        self.cfs.check(now);
        for index in 0..self.cfs.started.len() {
            let (thread, _, end) = self.cfs.started[index];
            self.resume(thread, end, now, events);
        }
        self.arm_check(now, events);
    }

    /// Process `index` runs `usr` + `sys` ns from `ready`: when it runs at once, when it is
    /// done; else None, and `then` is pushed `delay` after it is done.
    pub(crate) fn run_process(
        &mut self,
        index: usize,
        ready: Time,
        (usr, sys): (Time, Time),
        then: (Event, Time),
        events: &mut EventQueue,
    ) -> Option<Time> {
        let used = &mut self.per_process[index];
        used.usr_ns += usr;
        used.sys_ns += sys;
        let slept = ready > used.ran_until;
        let done = self.request(index, ready, usr + sys, then, events);
        let used = &mut self.per_process[index];
        let waited = done.is_none_or(|end| end - (usr + sys) > ready);
        if usr + sys > 0 && (slept || waited) {
            used.ctx += 1;
        }
        if let Some(end) = done {
            used.ran_until = used.ran_until.max(end);
        }
        done
    }

    /// Kernel thread `key` (a flusher's id) runs `sys` ns from `ready`, as
    /// [`Cpus::run_process`] does.
    pub(crate) fn run_kernel(
        &mut self,
        key: u32,
        ready: Time,
        sys: Time,
        then: (Event, Time),
        events: &mut EventQueue,
    ) -> Option<Time> {
        self.kernel.sys_ns += sys;
        let slot = match self.kernel_threads.iter().position(|&k| k == key) {
            Some(slot) => slot,
            None => {
                self.kernel_threads.push(key);
                self.kernel_threads.len() - 1
            }
        };
        let thread = self.per_process.len() + slot;
        self.request(thread, ready, sys, then, events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn era_with(syscall_ns: Time) -> Era {
        Era {
            syscall_ns,
            ..era("zero").unwrap()
        }
    }

    /// Runs the queue's CPU checks; answers the other events with their times.
    fn drain(cpus: &mut Cpus, events: &mut EventQueue) -> Vec<(Time, Event)> {
        let mut seen = Vec::new();
        while let Some((now, event)) = events.pop() {
            match event {
                Event::CpuCheck => cpus.check(now, events),
                other => seen.push((now, other)),
            }
        }
        seen
    }

    #[test]
    fn one_cpu_serialises_and_two_run_at_once() {
        let mut events = EventQueue::new();
        let mut one = Cpus::new(era_with(0), 1, 2);
        let then = (Event::Run(1), 0);
        assert_eq!(one.run_process(0, 0, (0, 10), then, &mut events), Some(10));
        assert_eq!(one.run_process(1, 0, (0, 10), then, &mut events), None);
        assert_eq!(drain(&mut one, &mut events), vec![(20, Event::Run(1))]);
        assert_eq!(one.waited_ns(), 10, "the second waits for the only CPU");
        let mut two = Cpus::new(era_with(0), 2, 3);
        assert_eq!(two.run_process(0, 0, (0, 10), then, &mut events), Some(10));
        assert_eq!(two.run_process(1, 0, (0, 10), then, &mut events), Some(10));
        let then = (Event::Run(2), 0);
        assert_eq!(two.run_process(2, 5, (0, 10), then, &mut events), None);
        assert_eq!(drain(&mut two, &mut events), vec![(20, Event::Run(2))]);
        assert_eq!(two.waited_ns(), 5, "the third waits for the first to free");
        assert_eq!(two.per_process[2].ctx, 1);
    }

    #[test]
    fn a_thread_ready_later_starts_when_ready() {
        let mut events = EventQueue::new();
        let mut cpus = Cpus::new(era_with(0), 1, 1);
        let then = (Event::Run(0), 0);
        assert_eq!(cpus.run_process(0, 0, (0, 10), then, &mut events), Some(10));
        assert_eq!(
            cpus.run_process(0, 50, (0, 10), then, &mut events),
            Some(60)
        );
        assert_eq!(cpus.run_process(0, 60, (0, 0), then, &mut events), Some(60));
        assert_eq!(cpus.waited_ns(), 0);
        assert!(events.pop().is_none(), "no thread waits, no check");
    }

    #[test]
    fn copy_cost_follows_the_eras_rate() {
        let desktop = era("desktop-2016").unwrap();
        // 10 000 bytes/µs: a 4 KiB page in 410 ns.
        assert_eq!(desktop.copy_ns(4096), 410);
        assert_eq!(era("zero").unwrap().copy_ns(4096), 0);
        assert!(era("no-such").is_none());
    }
}
