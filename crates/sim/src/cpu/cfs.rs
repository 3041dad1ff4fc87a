//! CFS, as Linux's `kernel/sched/fair.c` runs threads on a machine's CPUs (5.10, the
//! kernel of 2022's Android phones; CFS until EEVDF replaced it in 6.6): runnable threads
//! wait ordered by `vruntime`, the one with the least runs next, and a running thread keeps
//! its CPU for its time slice while others wait, or until it sleeps.
//!
//! The tunables are the kernel's defaults scaled as `sched_tunable_scaling=log` scales them
//! (`get_update_sysctl_factor()`, `update_sysctl()`): each normalized value times
//! `1 + ilog2(min(ncpus, 8))`. 5.10's normalized values: `sched_latency` 6 ms,
//! `sched_min_granularity` 0.75 ms, `sched_wakeup_granularity` 1 ms, `sched_nr_latency` 8
//! (= latency / min_granularity). The slice of a thread among `nr` runnable ones of equal
//! weight is `sched_slice()`: the period `__sched_period(nr)` (latency, or `nr` x
//! min_granularity past `sched_nr_latency`) shared by weight, i.e. `max(latency / nr,
//! min_granularity)`. All threads here are nice 0 (weight 1024), so `calc_delta_fair()` is
//! the identity and `vruntime` advances by the time run.
//!
//! What the kernel does and this does:
//! - `check_preempt_tick()`: the running thread yields once it has run more than its slice
//!   since it was picked, or, past `min_granularity`, when it is more than a slice of
//!   vruntime ahead of the leftmost waiting thread.
//! - `check_preempt_wakeup()` / `wakeup_preempt_entity()`: a thread that wakes with no CPU
//!   free marks a CPU for rescheduling when that CPU's thread is more than
//!   `wakeup_granularity` of vruntime ahead of it.
//! - `place_entity()`: a waking thread's vruntime is raised to at least `min_vruntime -
//!   latency / 2` (`GENTLE_FAIR_SLEEPERS`); a new thread starts at `min_vruntime` plus one
//!   virtual slice (`START_DEBIT`).
//!
//! Choice: one run queue for all CPUs, not one per CPU. The kernel keeps per-CPU queues and
//! balances them (`select_idle_sibling()` sends a waking thread to an idle CPU,
//! `newidle_balance()` pulls work to a CPU about to go idle); the model gives the balanced
//! limit: no CPU idles while a thread waits, and a slice is computed from the runnable
//! threads per CPU, `ceil(runnable / ncpus)`.
//!
//! Choice: a thread's CPU bursts (a system call, a copy) are not interrupted; preemption
//! takes effect at the running thread's next burst. Bursts are microseconds and slices
//! milliseconds. The kernel checks the slice at its tick (up to 1/HZ late, `HRTICK` off);
//! the model checks it at the next burst, as `HRTICK` would.
//!
//! Choice: a thread whose burst ended at `t` and that asks for its next burst at the same
//! instant is still running (it never left the CPU). One that asks later slept in between.
//! Whether it will ask again is known only once every event of the instant has run, so a
//! CPU is handed to a waiting thread by a check one nanosecond later ([`Cfs::next_check`]),
//! and the waiting thread's burst starts at `t`, when the CPU freed.

use std::collections::BTreeSet;

use iosched_core::Time;

/// CFS's tunables for a machine, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfsTunables {
    /// `sysctl_sched_latency`: the period in which every runnable thread runs once.
    pub latency_ns: Time,
    /// `sysctl_sched_min_granularity`: the shortest slice.
    pub min_granularity_ns: Time,
    /// `sysctl_sched_wakeup_granularity`: how far ahead in vruntime a running thread must
    /// be for a waking one to preempt it.
    pub wakeup_granularity_ns: Time,
}

impl CfsTunables {
    /// The normalized values times `sched_tunable_scaling=log`'s factor for `ncpus`.
    /// Kernel: get_update_sysctl_factor(), update_sysctl().
    pub fn scaled(normalized: CfsTunables, ncpus: usize) -> CfsTunables {
        let cpus = ncpus.clamp(1, 8) as u64;
        let factor = 1 + u64::from(cpus.ilog2());
        CfsTunables {
            latency_ns: normalized.latency_ns * factor,
            min_granularity_ns: normalized.min_granularity_ns * factor,
            wakeup_granularity_ns: normalized.wakeup_granularity_ns * factor,
        }
    }

    /// The slice of one of `nr` runnable threads of equal weight.
    /// Kernel: sched_slice(), __sched_period().
    pub fn slice_ns(&self, nr: u64) -> Time {
        let nr = nr.max(1);
        // sched_nr_latency = latency / min_granularity (8 at the kernel's defaults).
        let nr_latency = (self.latency_ns / self.min_granularity_ns.max(1)).max(1);
        let period = if nr > nr_latency {
            nr * self.min_granularity_ns
        } else {
            self.latency_ns
        };
        (period / nr).max(self.min_granularity_ns)
    }
}

/// One thread as CFS sees it.
#[derive(Clone, Copy, Debug, Default)]
struct Thread {
    vruntime: Time,
    /// `sum_exec_runtime`, and its value when the thread was last picked
    /// (`prev_sum_exec_runtime`): the difference is the time run in this slice.
    sum_exec: Time,
    prev_sum_exec: Time,
    /// The thread has run before (a new one is placed with `START_DEBIT`).
    seen: bool,
    /// Waiting in the run queue: since when, and for how long a burst.
    queued: Option<(Time, Time)>,
}

/// One CPU: the thread on it and when its current burst ends.
#[derive(Clone, Copy, Debug, Default)]
struct Cpu {
    current: Option<usize>,
    burst_end: Time,
    /// `need_resched` set by a wakeup: the thread yields at its next burst.
    resched: bool,
}

/// The CPUs and the run queue. Bursts that start are collected in [`Cfs::started`] for the
/// caller to continue (a thread asking for CPU learns at once whether it runs).
#[derive(Clone, Debug)]
pub struct Cfs {
    pub tunables: CfsTunables,
    cpus: Vec<Cpu>,
    threads: Vec<Thread>,
    /// Waiting threads by (vruntime, arrival, thread).
    queue: BTreeSet<(Time, u64, usize)>,
    arrivals: u64,
    min_vruntime: Time,
    /// Bursts started by the last call: (thread, start, end).
    pub started: Vec<(usize, Time, Time)>,
    /// Time threads spent waiting in the queue.
    pub waited_ns: Time,
}

impl Cfs {
    /// `ncpus` CPUs (at least one) with `normalized` tunables scaled for them.
    pub fn new(normalized: CfsTunables, ncpus: usize) -> Cfs {
        let ncpus = ncpus.clamp(1, 4096);
        Cfs {
            tunables: CfsTunables::scaled(normalized, ncpus),
            cpus: vec![Cpu::default(); ncpus],
            threads: Vec::new(),
            queue: BTreeSet::new(),
            arrivals: 0,
            min_vruntime: 0,
            started: Vec::new(),
            waited_ns: 0,
        }
    }

    pub fn ncpus(&self) -> usize {
        self.cpus.len()
    }

    /// Thread `thread` (any index; the table grows) asks at `now` for a burst of `ns` > 0.
    /// It runs at once or waits; either way [`Cfs::started`] lists the bursts this call
    /// started (it, or none).
    pub fn request(&mut self, thread: usize, now: Time, ns: Time) {
        assert!(ns > 0, "a burst takes time");
        if thread >= self.threads.len() {
            self.threads.resize(thread + 1, Thread::default());
        }
        assert!(
            self.threads[thread].queued.is_none(),
            "thread already waits"
        );
        self.started.clear();
        self.settle(now);
        match self.cpus.iter().position(|cpu| cpu.current == Some(thread)) {
            Some(cpu) => {
                assert!(
                    self.cpus[cpu].burst_end == now,
                    "a burst is not interrupted"
                );
                self.continue_on(cpu, thread, now, ns);
            }
            None => self.wake(thread, now, ns),
        }
        self.update_min_vruntime();
    }

    /// [`Cfs::request`] when it runs the thread at once because no thread waits: when its
    /// burst ends, without touching [`Cfs::started`]; callers try it first. In one pass over the CPUs: the
    /// settling, the look-ups of the thread's own CPU and of a free one, and
    /// `update_min_vruntime()`'s minimum are what the general path computes, found together
    /// (reproduce's runs ask for a burst millions of times, and almost always find a CPU).
    /// None when a thread waits or every CPU is busy: [`Cfs::request`] then decides, and
    /// the settling this may have done changes nothing it would do.
    pub fn run_uncontended(&mut self, thread: usize, now: Time, ns: Time) -> Option<Time> {
        if !self.queue.is_empty() {
            return None;
        }
        assert!(ns > 0, "a burst takes time");
        if thread >= self.threads.len() {
            self.threads.resize(thread + 1, Thread::default());
        }
        let (mut own, mut free) = (None, None);
        // The other running threads: how many, and their least vruntime.
        let (mut others, mut least) = (0, Time::MAX);
        for (index, cpu) in self.cpus.iter_mut().enumerate() {
            match cpu.current {
                // The thread on it slept (see `settle`).
                Some(_) if cpu.burst_end < now => {
                    cpu.current = None;
                    cpu.resched = false;
                    free = free.or(Some(index));
                }
                Some(current) if current == thread => own = Some(index),
                Some(current) => {
                    others += 1;
                    least = least.min(self.threads[current].vruntime);
                }
                None => free = free.or(Some(index)),
            }
        }
        let cpu = match (own, free) {
            (Some(cpu), _) => {
                assert!(
                    self.cpus[cpu].burst_end == now,
                    "a burst is not interrupted"
                );
                cpu
            }
            (None, Some(cpu)) => {
                self.place_with(thread, others + 1);
                let this = &mut self.threads[thread];
                this.prev_sum_exec = this.sum_exec;
                cpu
            }
            (None, None) => return None,
        };
        let end = self.burst(cpu, thread, now, ns);
        let least = least.min(self.threads[thread].vruntime);
        self.min_vruntime = self.min_vruntime.max(least);
        Some(end)
    }

    /// The instant a CPU may free for a waiting thread: one ns after the earliest burst end
    /// (by then every event of that instant has run). None while nothing waits.
    pub fn next_check(&self) -> Option<Time> {
        if self.queue.is_empty() {
            return None;
        }
        self.cpus.iter().map(|cpu| cpu.burst_end + 1).min()
    }

    /// Hands CPUs whose thread went to sleep to waiting threads ([`Cfs::started`]).
    pub fn check(&mut self, now: Time) {
        self.started.clear();
        self.settle(now);
        self.update_min_vruntime();
    }

    /// CPUs whose thread's burst ended before `now` and that asked for nothing since are
    /// free (the thread slept); waiting threads take them.
    fn settle(&mut self, now: Time) {
        for index in 0..self.cpus.len() {
            let cpu = &mut self.cpus[index];
            if cpu.current.is_some() && cpu.burst_end < now {
                cpu.current = None;
                cpu.resched = false;
            }
            if cpu.current.is_none() {
                let free_since = cpu.burst_end;
                if let Some(&(_, _, next)) = self.queue.first() {
                    self.dequeue(next);
                    self.start(index, next, free_since);
                }
            }
        }
    }

    /// The thread on `cpu` asks for its next burst: it keeps the CPU unless its slice is
    /// over or a wakeup asked it to yield, and a thread waits. Kernel: check_preempt_tick().
    fn continue_on(&mut self, cpu: usize, thread: usize, now: Time, ns: Time) {
        let Some(&(left_vruntime, _, _)) = self.queue.first() else {
            return self.run(cpu, thread, now, ns);
        };
        let nr = self.runnable_per_cpu();
        let ideal = self.tunables.slice_ns(nr);
        let this = self.threads[thread];
        let ran = this.sum_exec - this.prev_sum_exec;
        let ahead = this.vruntime.saturating_sub(left_vruntime);
        let expired = ran > ideal || (ran >= self.tunables.min_granularity_ns && ahead > ideal);
        if !(expired || self.cpus[cpu].resched) {
            return self.run(cpu, thread, now, ns);
        }
        // put_prev_entity(), then pick_next_entity(): the leftmost, which may be it again.
        self.enqueue(thread, now, ns);
        let (_, _, next) = *self.queue.first().expect("queued");
        self.dequeue(next);
        self.start(cpu, next, now);
    }

    /// A thread that slept (or is new) asks for CPU: placed by `place_entity()`, it runs on
    /// a free CPU or waits, marking a CPU to yield if it is far enough behind that CPU's
    /// thread. Kernel: enqueue_entity(), check_preempt_wakeup().
    fn wake(&mut self, thread: usize, now: Time, ns: Time) {
        self.place(thread);
        if let Some(cpu) = self.cpus.iter().position(|cpu| cpu.current.is_none()) {
            let this = &mut self.threads[thread];
            this.prev_sum_exec = this.sum_exec;
            return self.run(cpu, thread, now, ns);
        }
        self.enqueue(thread, now, ns);
        // The CPU whose thread is furthest ahead is the one a wakeup would preempt.
        let (cpu, ahead) = self
            .cpus
            .iter()
            .enumerate()
            .map(|(index, cpu)| {
                let current = self.threads[cpu.current.expect("busy")].vruntime;
                (index, current)
            })
            .max_by_key(|&(index, vruntime)| (vruntime, std::cmp::Reverse(index)))
            .expect("a CPU");
        let vdiff = ahead.saturating_sub(self.threads[thread].vruntime);
        if vdiff > self.tunables.wakeup_granularity_ns {
            self.cpus[cpu].resched = true;
        }
    }

    /// Kernel: place_entity(): a sleeper gets at most half a latency of credit; a new
    /// thread starts a virtual slice behind (START_DEBIT).
    fn place(&mut self, thread: usize) {
        self.place_with(thread, self.runnable() + 1);
    }

    /// [`Cfs::place`] with `runnable` threads, this one included.
    fn place_with(&mut self, thread: usize, runnable: usize) {
        let floor = self.min_vruntime;
        let this = &mut self.threads[thread];
        if this.seen {
            let credit = self.tunables.latency_ns / 2;
            this.vruntime = this.vruntime.max(floor.saturating_sub(credit));
        } else {
            this.seen = true;
            let nr = runnable.div_ceil(self.cpus.len()) as u64;
            this.vruntime = this.vruntime.max(floor + self.tunables.slice_ns(nr));
        }
    }

    /// `thread` is picked on `cpu` (a new slice) and runs its waiting burst from `at`.
    /// Kernel: set_next_entity().
    fn start(&mut self, cpu: usize, thread: usize, at: Time) {
        let this = &mut self.threads[thread];
        let (since, ns) = this.queued.take().expect("a waiting burst");
        this.prev_sum_exec = this.sum_exec;
        let start = at.max(since);
        self.waited_ns += start - since;
        self.run(cpu, thread, start, ns);
    }

    fn run(&mut self, cpu: usize, thread: usize, start: Time, ns: Time) {
        let end = self.burst(cpu, thread, start, ns);
        self.started.push((thread, start, end));
    }

    /// `thread` runs on `cpu` from `start` for `ns`: when it is done.
    #[inline]
    fn burst(&mut self, cpu: usize, thread: usize, start: Time, ns: Time) -> Time {
        let this = &mut self.threads[thread];
        this.sum_exec += ns;
        this.vruntime += ns;
        let cpu = &mut self.cpus[cpu];
        if cpu.current != Some(thread) {
            cpu.resched = false;
        }
        cpu.current = Some(thread);
        cpu.burst_end = start + ns;
        start + ns
    }

    fn enqueue(&mut self, thread: usize, now: Time, ns: Time) {
        for cpu in &mut self.cpus {
            if cpu.current == Some(thread) {
                cpu.current = None;
            }
        }
        let this = &mut self.threads[thread];
        this.queued = Some((now, ns));
        self.arrivals += 1;
        self.queue.insert((this.vruntime, self.arrivals, thread));
    }

    fn dequeue(&mut self, thread: usize) {
        let vruntime = self.threads[thread].vruntime;
        let key = *self
            .queue
            .range((vruntime, 0, 0)..)
            .find(|&&(_, _, t)| t == thread)
            .expect("queued thread");
        self.queue.remove(&key);
    }

    /// Runnable threads per CPU, as a balanced machine spreads them.
    fn runnable_per_cpu(&self) -> u64 {
        self.runnable().div_ceil(self.cpus.len()) as u64
    }

    /// Threads running or waiting for a CPU.
    fn runnable(&self) -> usize {
        self.cpus.iter().filter(|c| c.current.is_some()).count() + self.queue.len()
    }

    /// Kernel: update_min_vruntime(): never backwards.
    fn update_min_vruntime(&mut self) {
        let running = self.cpus.iter().filter_map(|cpu| cpu.current);
        let least = running
            .map(|thread| self.threads[thread].vruntime)
            .chain(self.queue.first().map(|&(vruntime, _, _)| vruntime))
            .min();
        if let Some(least) = least {
            self.min_vruntime = self.min_vruntime.max(least);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::LINUX_CFS;

    const MS: Time = 1_000_000;
    const US: Time = 1_000;

    /// `ncpus` CPUs running with the tunables Linux scales for `tunables_for` CPUs.
    fn cfs(ncpus: usize, tunables_for: usize) -> Cfs {
        let mut cfs = Cfs::new(LINUX_CFS, ncpus);
        cfs.tunables = CfsTunables::scaled(LINUX_CFS, tunables_for);
        cfs
    }

    /// Each thread's stretches on a CPU, (start, end), when `threads` CPU-bound threads
    /// (each asking for its next `burst` the instant its last one ends) run until `until`.
    fn cpu_bound(
        cfs: &mut Cfs,
        threads: usize,
        burst: Time,
        until: Time,
    ) -> Vec<Vec<(Time, Time)>> {
        let mut stretches = vec![Vec::<(Time, Time)>::new(); threads];
        let mut running = BTreeSet::new();
        let mut record = |cfs: &Cfs, running: &mut BTreeSet<(Time, usize)>| {
            for &(thread, start, end) in &cfs.started {
                running.insert((end, thread));
                let own: &mut Vec<(Time, Time)> = &mut stretches[thread];
                match own.last_mut() {
                    Some(last) if last.1 == start => last.1 = end,
                    _ => own.push((start, end)),
                }
            }
        };
        for thread in 0..threads {
            cfs.request(thread, 0, burst);
            record(cfs, &mut running);
        }
        while let Some((end, thread)) = running.pop_first() {
            if end >= until {
                break;
            }
            cfs.request(thread, end, burst);
            record(cfs, &mut running);
        }
        stretches
    }

    #[test]
    fn tunables_scale_by_one_plus_ilog2_of_up_to_8_cpus() {
        // update_sysctl(): factor 1 + ilog2(min(ncpus, 8)): 1, 2, 3 (4 CPUs), 4 (8 or more).
        let eight = CfsTunables::scaled(LINUX_CFS, 8);
        assert_eq!(eight.latency_ns, 24 * MS);
        assert_eq!(eight.min_granularity_ns, 3 * MS);
        assert_eq!(eight.wakeup_granularity_ns, 4 * MS);
        assert_eq!(CfsTunables::scaled(LINUX_CFS, 64), eight);
        assert_eq!(CfsTunables::scaled(LINUX_CFS, 2).latency_ns, 12 * MS);
        assert_eq!(CfsTunables::scaled(LINUX_CFS, 6).latency_ns, 18 * MS);
        assert_eq!(CfsTunables::scaled(LINUX_CFS, 1), LINUX_CFS);
    }

    /// Three CPU-bound threads on one CPU with 8 CPUs' tunables: sched_slice() gives each
    /// max(24 ms / 3, 3 ms) = 8 ms (nr 3 <= sched_nr_latency 8, so the period is the
    /// latency), and check_preempt_tick() yields once delta_exec > 8 ms, i.e. at the first
    /// 100 µs burst boundary past it: every stretch is 8.1 ms, and the three share the CPU.
    #[test]
    fn three_cpu_bound_threads_get_a_third_of_the_latency_each() {
        let mut cfs = cfs(1, 8);
        assert_eq!(cfs.tunables.slice_ns(3), 8 * MS);
        let stretches = cpu_bound(&mut cfs, 3, 100 * US, 240 * MS);
        for (thread, own) in stretches.iter().enumerate() {
            let done = &own[..own.len() - 1];
            assert!(done.len() >= 8, "thread {thread}: {own:?}");
            for &(start, end) in done {
                assert_eq!(end - start, 8 * MS + 100 * US, "thread {thread} at {start}");
            }
        }
        // Round robin once the start-up debit is paid: no thread runs twice in a row.
        let mut order: Vec<(Time, usize)> = stretches
            .iter()
            .enumerate()
            .flat_map(|(thread, own)| own.iter().map(move |&(start, _)| (start, thread)))
            .collect();
        order.sort();
        assert!(
            order.windows(2).all(|pair| pair[0].1 != pair[1].1),
            "{order:?}"
        );
    }

    /// Ten threads on one CPU (8 CPUs' tunables): past sched_nr_latency the period stretches
    /// to 10 x 3 ms (__sched_period()), so each slice is min_granularity, 3 ms.
    #[test]
    fn past_nr_latency_slices_are_min_granularity() {
        let mut cfs = cfs(1, 8);
        assert_eq!(cfs.tunables.slice_ns(10), 3 * MS);
        let stretches = cpu_bound(&mut cfs, 10, 100 * US, 300 * MS);
        for own in &stretches {
            for &(start, end) in &own[..own.len() - 1] {
                assert_eq!(end - start, 3 * MS + 100 * US);
            }
        }
    }

    /// Four CPU-bound threads on two CPUs (2 CPUs' tunables: latency 12 ms): two runnable
    /// per CPU, slices of 6 ms, and no CPU idles while a thread waits. (At start-up a new
    /// thread placed a debit behind can preempt one placed further: the first stretch is
    /// not a slice.)
    #[test]
    fn two_cpus_four_threads_share_by_slices() {
        let mut cfs = cfs(2, 2);
        let stretches = cpu_bound(&mut cfs, 4, 100 * US, 120 * MS);
        let mut busy = 0;
        for own in &stretches {
            for &(start, end) in &own[1..own.len() - 1] {
                assert_eq!(end - start, 6 * MS + 100 * US, "{stretches:?}");
            }
            busy += own.iter().map(|&(s, e)| e.min(120 * MS) - s).sum::<Time>();
        }
        assert!(busy >= 2 * 120 * MS - 4 * 100 * US, "busy {busy}");
    }

    /// The one-pass path for a request while nothing waits decides as the general path:
    /// eight threads asking for bursts (continuing on their CPU or after a sleep) on 1
    /// to 3 CPUs, with the CPU checks run when due, start the same bursts in both, with the
    /// same waits and min_vruntime. (The general path alone is what the kernel-derived
    /// tests above pin down.)
    #[test]
    fn the_uncontended_path_decides_as_the_general_one() {
        use proptest::prelude::*;
        let steps = proptest::collection::vec((0usize..8, 0u64..4, 1u64..2_000), 1..400);
        proptest!(|(ncpus in 1usize..4, steps in steps)| {
            let mut fast = cfs(ncpus, ncpus);
            let mut general = cfs(ncpus, ncpus);
            // When each thread's burst ends; None while it waits for a CPU.
            let mut ends: Vec<Option<Time>> = vec![Some(0); 8];
            let mut now = 0;
            for (thread, gap, ns) in steps {
                let Some(end) = ends[thread] else { continue };
                // Continuing on its CPU (asks as its burst ends) or after a sleep.
                let at = now.max(end + [0, 0, 10, 5 * MS][gap as usize]);
                while let Some(check) = fast.next_check().filter(|&c| c <= at) {
                    prop_assert_eq!(general.next_check(), Some(check));
                    fast.check(check);
                    general.check(check);
                    prop_assert_eq!(&fast.started, &general.started);
                    for &(t, _, e) in &fast.started {
                        ends[t] = Some(e);
                    }
                }
                now = at;
                // The simulator's order (`Cpus::request`): the one-pass path first.
                fast.started.clear();
                match fast.run_uncontended(thread, now, ns) {
                    Some(end) => fast.started.push((thread, now, end)),
                    None => fast.request(thread, now, ns),
                }
                general.request(thread, now, ns);
                prop_assert_eq!(&fast.started, &general.started);
                prop_assert_eq!(fast.waited_ns, general.waited_ns);
                prop_assert_eq!(fast.min_vruntime, general.min_vruntime);
                ends[thread] = None;
                for &(t, _, e) in &fast.started {
                    ends[t] = Some(e);
                }
            }
        });
    }

    /// When a thread sleeps, the waiting one takes its CPU at the instant it freed (found by
    /// the check one ns later). A thread that wakes is placed at most half a latency behind
    /// min_vruntime (place_entity()); more than wakeup_granularity (1 ms on 1 CPU) behind the
    /// running thread, it preempts that thread at its next burst (check_preempt_wakeup()),
    /// before that thread's slice (3 ms for two) or min_granularity (0.75 ms) is used.
    #[test]
    fn a_sleeping_thread_frees_its_cpu_and_a_waking_one_preempts() {
        let mut cfs = cfs(1, 1);
        // Thread 0: vruntime 6 ms (START_DEBIT, alone) + 10 ms run = 16 ms.
        cfs.request(0, 0, 10 * MS);
        // Thread 1: min_vruntime 16 ms + a slice for two, 3 ms = 19 ms; it waits.
        cfs.request(1, 0, 100 * US);
        assert!(cfs.started.is_empty(), "the new thread waits");
        assert_eq!(cfs.next_check(), Some(10 * MS + 1));
        // Thread 0 asks for nothing more at 10 ms: it slept; thread 1 starts at 10 ms.
        cfs.check(10 * MS + 1);
        assert_eq!(cfs.started, vec![(1, 10 * MS, 10 * MS + 100 * US)]);
        for burst in 1..4 {
            cfs.request(1, 10 * MS + burst * 100 * US, 100 * US);
        }
        // At 10.35 ms thread 1's vruntime is 19.4 ms, min_vruntime too: thread 0 wakes at
        // max(16, 19.4 - 3) = 16.4 ms, 3 ms behind: more than the 1 ms granularity.
        cfs.request(0, 10 * MS + 350 * US, 100 * US);
        assert!(cfs.started.is_empty());
        cfs.request(1, 10 * MS + 400 * US, 100 * US);
        assert_eq!(
            cfs.started,
            vec![(0, 10 * MS + 400 * US, 10 * MS + 500 * US)]
        );
        assert_eq!(cfs.waited_ns, 10 * MS + 50 * US);
    }
}
