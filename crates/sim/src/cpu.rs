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
//! Choice: the run queue is FIFO over identical CPUs, non-preemptive per burst: a thread
//! asking for `ns` of CPU at `ready` runs on the CPU that frees first, from
//! `max(ready, free)` for `ns`. Requests reach the model in event order (nondecreasing
//! time), so booking each on the earliest-free CPU at once is exactly a FIFO queue served
//! by `ncpus` servers; bursts are short (microseconds), so CFS's fair share and FIFO differ
//! only in who of two waiting threads goes first. Kernel threads (writeback flushers) wait
//! in the same queue as processes.

use iosched_core::Time;

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
}

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

/// The machine's CPUs and what each simulated process used of them.
#[derive(Clone, Debug)]
pub struct Cpus {
    pub era: Era,
    /// When each CPU is next free.
    free_at: Vec<Time>,
    /// Per job clone.
    pub per_process: Vec<CpuUse>,
    /// A clone's next run is already booked (woken again meanwhile: nothing to add).
    pub booked: Vec<bool>,
    /// Kernel threads (writeback flushers), summed.
    pub kernel: CpuUse,
    /// Time threads spent waiting for a CPU.
    pub waited_ns: Time,
}

impl Cpus {
    /// `ncpus` CPUs (at least one) for `processes` job clones.
    pub fn new(era: Era, ncpus: u64, processes: usize) -> Cpus {
        Cpus {
            era,
            free_at: vec![0; ncpus.clamp(1, 4096) as usize],
            per_process: vec![CpuUse::default(); processes],
            booked: vec![false; processes],
            kernel: CpuUse::default(),
            waited_ns: 0,
        }
    }

    pub fn ncpus(&self) -> usize {
        self.free_at.len()
    }

    /// A thread ready at `ready` runs for `ns`: answers when it is done. No allocation;
    /// O(ncpus) (the first CPU to free wins, lowest index on ties: deterministic).
    pub fn run(&mut self, ready: Time, ns: Time) -> Time {
        if ns == 0 {
            return ready;
        }
        let mut best = 0;
        for (index, &free) in self.free_at.iter().enumerate() {
            if free <= ready {
                best = index;
                break;
            }
            if free < self.free_at[best] {
                best = index;
            }
        }
        let start = ready.max(self.free_at[best]);
        self.waited_ns += start - ready;
        self.free_at[best] = start + ns;
        start + ns
    }

    /// Process `index` runs `usr` + `sys` ns from `ready`; answers when it is done.
    pub fn run_process(&mut self, index: usize, ready: Time, usr: Time, sys: Time) -> Time {
        let end = self.run(ready, usr + sys);
        let used = &mut self.per_process[index];
        used.usr_ns += usr;
        used.sys_ns += sys;
        let slept = ready > used.ran_until;
        let waited = end - (usr + sys) > ready;
        if usr + sys > 0 && (slept || waited) {
            used.ctx += 1;
        }
        used.ran_until = used.ran_until.max(end);
        end
    }

    /// A kernel thread runs `sys` ns from `ready`; answers when it is done.
    pub fn run_kernel(&mut self, ready: Time, sys: Time) -> Time {
        self.kernel.sys_ns += sys;
        self.run(ready, sys)
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

    #[test]
    fn one_cpu_serialises_and_two_run_at_once() {
        let mut one = Cpus::new(era_with(0), 1, 2);
        assert_eq!(one.run(0, 10), 10);
        assert_eq!(one.run(0, 10), 20, "the second waits for the only CPU");
        assert_eq!(one.waited_ns, 10);
        let mut two = Cpus::new(era_with(0), 2, 2);
        assert_eq!(two.run(0, 10), 10);
        assert_eq!(two.run(0, 10), 10, "a second CPU takes it at once");
        assert_eq!(two.run(5, 10), 20, "the third waits for the first to free");
        assert_eq!(two.waited_ns, 5);
    }

    #[test]
    fn a_thread_ready_later_starts_when_ready() {
        let mut cpus = Cpus::new(era_with(0), 1, 1);
        assert_eq!(cpus.run(0, 10), 10);
        assert_eq!(cpus.run(50, 10), 60);
        assert_eq!(cpus.run(50, 0), 50, "no cost, no wait");
        assert_eq!(cpus.waited_ns, 0);
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
