//! Queues and process contexts: creation, ioprio, references, exit.
//!
//! A process (io context) has a `bic` holding its sync queue and its reference to the shared
//! async queue of its (group, class, level). Queues are reference-counted as the kernel counts
//! them (the process, each allocated request, being on a service tree, being counted in the
//! weights tree, an async slot, a pending merge), because BFQ reads the count: a queue whose
//! process references are gone is never idled for (`bfqq_process_refs()`).
//!
//! Kernel: bfq_get_queue(), bfq_init_bfqq(), bfq_set_next_ioprio_data(),
//! bfq_check_ioprio_change(), bfq_async_queue_prio(), bic_set_bfqq(), bfq_init_rq(),
//! bfq_put_queue(), bfq_release_process_ref(), bfq_exit_bfqq(), bfq_exit_icq(),
//! bfq_put_cooperator(), bfq_init_entity().

use super::wf2q::{Entity, Owner};
use super::{
    ioprio_to_weight, Bfq, BfqQueue, BfqqData, Bic, QId, Slot, Ttime, CLASS_BE, CLASS_IDLE,
    CLASS_RT,
};
use super::{EId, GId, IOPRIO_NR_LEVELS};
use crate::request::{IoContextId, IoPrioClass, Request, Time};
use crate::trace::Trace;

/// Kernel: IOPRIO_CLASS_SHIFT.
const IOPRIO_CLASS_SHIFT: u32 = 13;

/// The kernel's `ioprio` value of a request's submitter: class << 13 | level; a task that
/// never set one has class NONE (its level then comes from its nice value: `nice`, when the
/// driver told it, else the request's level).
pub(crate) fn ioprio_value(rq: &Request, nice: Option<i32>) -> u32 {
    match rq.ioprio.class {
        // Kernel: task_nice_ioprio(), (nice + 20) / 5.
        IoPrioClass::None => nice.map_or(u32::from(rq.ioprio.level), |n| ((n + 20) / 5) as u32),
        class => (class as u32) << IOPRIO_CLASS_SHIFT | u32::from(rq.ioprio.level),
    }
}

fn prio_class(ioprio: u32) -> u32 {
    ioprio >> IOPRIO_CLASS_SHIFT
}

fn prio_level(ioprio: u32) -> u32 {
    ioprio & ((1 << IOPRIO_CLASS_SHIFT) - 1)
}

impl Bfq {
    /// Kernel: bfq_set_next_ioprio_data().
    pub(crate) fn set_next_ioprio_data(
        &mut self,
        q: QId,
        ioprio: u32,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let (class, level) = match prio_class(ioprio) {
            c if c == CLASS_RT => (CLASS_RT, prio_level(ioprio)),
            c if c == CLASS_BE => (CLASS_BE, prio_level(ioprio)),
            c if c == CLASS_IDLE => (CLASS_IDLE, IOPRIO_NR_LEVELS - 1),
            // IOPRIO_CLASS_NONE: task_nice_ioprio() / task_nice_ioclass() of a normal task.
            _ => (CLASS_BE, prio_level(ioprio)),
        };
        let level = level.min(IOPRIO_NR_LEVELS - 1);
        let bfqq = self.qm(q);
        bfqq.new_ioprio = level;
        bfqq.new_ioprio_class = class;
        let w = ioprio_to_weight(level);
        self.qem(q).new_weight = w;
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!("new_ioprio {level} new_weight {w}"),
        );
        self.qem(q).prio_changed = true;
    }

    /// A process's nice value, from which a task of ioprio class NONE takes its level
    /// (`task_nice_ioprio()`); without it the request's level stands for it.
    pub fn set_nice(&mut self, pid: u32, nice: i32) {
        self.nice.insert(pid, nice.clamp(-20, 19));
    }

    /// The process context of `rq`, created at its first request. Kernel:
    /// ioc_find_get_icq() in bfq_prepare_request().
    pub(crate) fn bic_for(&mut self, rq: &Request) -> IoContextId {
        self.bics.get_or_insert_with(rq.ioc, || Bic {
            bfqq: [None, None],
            ioprio: ioprio_value(rq, self.nice.get(&rq.pid).copied()),
            cgroup: None,
            data: BfqqData::default(),
            requests: 0,
            exited: false,
        });
        rq.ioc
    }

    /// Kernel: bic_set_bfqq().
    pub(crate) fn bic_set_bfqq(
        &mut self,
        bic: IoContextId,
        q: Option<QId>,
        is_sync: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let b = self.bics.get_mut(bic).expect("bic");
        let old = b.bfqq[usize::from(is_sync)];
        b.bfqq[usize::from(is_sync)] = q;
        if let Some(old) = old {
            if self.q(old).bic == Some(bic) {
                self.qm(old).bic = None;
            }
        }
        let b = self.bics.get_mut(bic).expect("bic");
        if let Some(q) = q.filter(|&q| b.data.stable_merge_bfqq == Some(q)) {
            b.data.stable_merge_bfqq = None;
            self.qm(q).stable_ref -= 1;
            self.put_queue(q, now, trace);
        }
    }

    /// Kernel: bfq_init_bfqq() + bfq_init_entity(): a new queue of group `g`.
    fn init_bfqq(
        &mut self,
        g: GId,
        ioprio: Option<u32>,
        pid: i32,
        is_sync: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> QId {
        let q = self.queues.len();
        let e = self.entities.len();
        // Until bfq_init_entity() the queue belongs to no group: its messages go to the root
        // group's log, as the kernel's do (bfqq_group() of a NULL parent).
        self.entities.push(Entity::new(Owner::Queue(q), 0, None, 0));
        let max_budget = (2 * self.max_budget()) / 3;
        self.queues.push(Some(new_queue(q, e, max_budget, now)));
        if let Some(ioprio) = ioprio {
            self.set_next_ioprio_data(q, ioprio, now, trace);
        }
        if is_sync {
            if !self.class_idle_new(q) {
                self.qm(q).has_short_ttime = true;
            }
            self.qm(q).sync = true;
            self.qm(q).just_created = true;
        }
        self.qm(q).pid = pid;
        // bfq_init_entity(): the weight and class take effect now, under group `g`.
        let parent = self.groups[g].entity;
        let ent = self.qem(q);
        ent.sched_data = g;
        ent.parent = parent;
        let w = self.qe(q).new_weight;
        let ent = self.qem(q);
        ent.weight = w;
        ent.orig_weight = w;
        let bfqq = self.qm(q);
        bfqq.ioprio = bfqq.new_ioprio;
        bfqq.ioprio_class = bfqq.new_ioprio_class;
        q
    }

    /// bfq_class_idle() before bfq_init_entity() copied the class (the kernel reads the
    /// still-zero `ioprio_class` there, so this is false).
    fn class_idle_new(&self, q: QId) -> bool {
        self.q(q).ioprio_class == CLASS_IDLE
    }

    /// Kernel: bfq_async_queue_prio(): the group's async slot for a class and level.
    fn async_slot(&mut self, g: GId, ioprio: u32) -> &mut Option<QId> {
        let group = &mut self.groups[g];
        match prio_class(ioprio) {
            c if c == CLASS_RT => &mut group.async_bfqq[0][prio_level(ioprio).min(7) as usize],
            c if c == CLASS_BE => &mut group.async_bfqq[1][prio_level(ioprio).min(7) as usize],
            c if c == CLASS_IDLE => &mut group.async_idle_bfqq,
            _ => &mut group.async_bfqq[1][4],
        }
    }

    /// Kernel: bfq_get_queue().
    pub(crate) fn get_queue(
        &mut self,
        rq: &Request,
        is_sync: bool,
        bic: IoContextId,
        respawn: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> QId {
        let ioprio = self.bics[&bic].ioprio;
        let g = self.bio_bfqg(rq);
        let q = match (!is_sync).then(|| *self.async_slot(g, ioprio)).flatten() {
            Some(q) => q,
            None => {
                let q = self.init_bfqq(g, Some(ioprio), rq.pid as i32, is_sync, now, trace);
                bfq_log_q!(self, trace, now, q, format_args!("allocated"));
                if !is_sync {
                    self.qm(q).ref_ += 1;
                    if self.tracing {
                        let p = self.ptr(0, q as u64);
                        let r = self.q(q).ref_;
                        bfq_log_q!(
                            self,
                            trace,
                            now,
                            q,
                            format_args!("get_queue, bfqq not in async: {p}, {r}"),
                        );
                    }
                    *self.async_slot(g, ioprio) = Some(q);
                }
                q
            }
        };
        self.qm(q).ref_ += 1;
        if is_sync && !respawn {
            return self.do_or_sched_stable_merge(q, bic, now, trace);
        }
        q
    }

    /// Kernel: bfq_check_ioprio_change(): the process changed its io priority.
    pub(crate) fn check_ioprio_change(
        &mut self,
        bic: IoContextId,
        rq: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let ioprio = ioprio_value(rq, self.nice.get(&rq.pid).copied());
        if self.bics[&bic].ioprio == ioprio {
            return;
        }
        self.bics.get_mut(bic).expect("bic").ioprio = ioprio;
        if let Some(old) = self.bics[&bic].bfqq[0] {
            let q = self.get_queue(rq, false, bic, true, now, trace);
            self.bic_set_bfqq(bic, Some(q), false, now, trace);
            self.release_process_ref(old, now, trace);
        }
        if let Some(q) = self.bics[&bic].bfqq[1] {
            self.set_next_ioprio_data(q, ioprio, now, trace);
        }
    }

    /// Kernel: bfq_init_rq(): the queue a new request goes to, with its references.
    pub(crate) fn init_rq(&mut self, slot: Slot, now: Time, trace: &mut dyn Trace) -> QId {
        let rq = self.h(slot).rq;
        let bic = self.h(slot).bic;
        let is_sync = rq.is_sync();
        self.check_ioprio_change(bic, &rq, now, trace);
        self.bic_update_cgroup(bic, &rq, now, trace);
        let q = self.get_bfqq_handle_split(bic, &rq, is_sync, now, trace);
        self.request_allocated(q);
        self.qm(q).ref_ += 1;
        self.bics.get_mut(bic).expect("bic").requests += 1;
        if self.tracing {
            let prq = self.ptr(1, rq.id.0);
            let pq = self.ptr(0, q as u64);
            let r = self.q(q).ref_;
            bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!("get_request {prq}: bfqq {pq}, {r}"),
            );
        }
        self.hm(slot).bfqq = q;
        if self.q(q).new_bfqq.is_none() && self.process_refs(q) == 1 {
            self.qm(q).bic = Some(bic);
        }
        if self.q(q).just_created && (self.burst_size > 0 || self.tot_busy_queues() == 0) {
            self.handle_burst(q, now);
        }
        q
    }

    /// Kernel: bfqq_request_allocated().
    pub(crate) fn request_allocated(&mut self, q: QId) {
        let mut at = Some(self.q(q).entity);
        while let Some(e) = at {
            self.em(e).allocated += 1;
            at = self.e(e).parent;
        }
    }

    /// Kernel: bfqq_request_freed().
    pub(crate) fn request_freed(&mut self, q: QId) {
        let mut at = Some(self.q(q).entity);
        while let Some(e) = at {
            self.em(e).allocated -= 1;
            at = self.e(e).parent;
        }
    }

    /// Kernel: bfq_put_queue(): drops a reference; the last one frees the queue.
    #[inline]
    pub(crate) fn put_queue(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        if self.tracing {
            self.log_put_queue(q, now, trace);
        }
        let b = self.qm(q);
        b.ref_ -= 1;
        if b.ref_ <= 0 {
            self.free_queue(q);
        }
    }

    #[cold]
    #[inline(never)]
    fn log_put_queue(&self, q: QId, now: Time, trace: &mut dyn Trace) {
        let p = self.ptr(0, q as u64);
        let r = self.q(q).ref_;
        bfq_log_q!(self, trace, now, q, format_args!("put_queue: {p} {r}"));
    }

    /// The rest of bfq_put_queue(): the last reference is gone.
    #[inline(never)]
    fn free_queue(&mut self, q: QId) {
        if self.q(q).in_burst_list {
            self.burst_list_del(q);
            if self.q(q).bic.is_some() && self.burst_size > 0 {
                self.burst_size -= 1;
            }
        }
        self.woken_list_del(q);
        let woken: Vec<QId> = self.qm(q).woken_list.drain(..).collect();
        for w in woken {
            let b = self.qm(w);
            b.waker_bfqq = None;
            b.woken_list_node = None;
        }
        if self.last_completed_rq_bfqq == Some(q) {
            self.last_completed_rq_bfqq = None;
        }
        let b = self.q(q);
        assert!(
            b.fifo.is_empty() && b.sort_list.is_empty(),
            "freed queue has requests"
        );
        assert_eq!(b.dispatched, 0, "freed queue has requests in the device");
        assert!(
            !self.qe(q).on_st_or_in_serv,
            "freed queue is on a service tree"
        );
        assert_ne!(self.in_service_queue, Some(q), "freed queue is in service");
        self.queues[q] = None;
    }

    /// Kernel: bfq_release_process_ref().
    pub(crate) fn release_process_ref(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let b = self.q(q);
        if b.busy && b.sort_list.is_empty() && self.in_service_queue != Some(q) {
            self.del_bfqq_busy(q, false, now, trace);
        }
        self.reassign_last_bfqq(q, None);
        self.put_queue(q, now, trace);
    }

    /// Kernel: bfq_reassign_last_bfqq().
    pub(crate) fn reassign_last_bfqq(&mut self, cur: QId, new: Option<QId>) {
        match self.qe(cur).parent {
            Some(p) if self.e(p).last_bfqq_created == Some(cur) => {
                self.em(p).last_bfqq_created = new
            }
            _ if self.last_bfqq_created == Some(cur) => self.last_bfqq_created = new,
            _ => {}
        }
    }

    /// Kernel: bfq_put_cooperator().
    pub(crate) fn put_cooperator(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let mut at = self.q(q).new_bfqq;
        while let Some(c) = at {
            at = self.q(c).new_bfqq;
            self.put_queue(c, now, trace);
        }
    }

    /// Kernel: bfq_exit_bfqq().
    fn exit_bfqq(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        if self.in_service_queue == Some(q) {
            self.bfqq_expire_inner(q, super::Expiration::BudgetTimeout, now, trace);
            self.schedule_dispatch(now, trace);
        }
        if self.tracing {
            let p = self.ptr(0, q as u64);
            let r = self.q(q).ref_;
            bfq_log_q!(self, trace, now, q, format_args!("exit_bfqq: {p}, {r}"));
        }
        self.put_cooperator(q, now, trace);
        self.release_process_ref(q, now, trace);
    }

    /// Kernel: bfq_exit_icq(): the process exited; its queues lose its reference.
    pub(crate) fn exit_icq(&mut self, ioc: IoContextId, now: Time, trace: &mut dyn Trace) {
        let Some(bic) = self.bics.get_mut(ioc) else {
            return;
        };
        bic.exited = true;
        if let Some(s) = bic.data.stable_merge_bfqq.take() {
            self.qm(s).stable_ref -= 1;
            self.put_queue(s, now, trace);
        }
        for is_sync in [true, false] {
            if let Some(q) = self.bics[&ioc].bfqq[usize::from(is_sync)] {
                self.bic_set_bfqq(ioc, None, is_sync, now, trace);
                self.exit_bfqq(q, now, trace);
            }
        }
        // The icq is freed once its last request finishes.
        if self.bics[&ioc].requests == 0 {
            self.bics.remove(ioc);
        }
    }
}

/// A queue as bfq_get_queue() zeroes it and bfq_init_bfqq() fills it, before its ioprio and
/// bfq_init_entity(): entity `entity`, budget `max_budget`, created at `now`.
fn new_queue(q: QId, entity: EId, max_budget: i64, now: Time) -> BfqQueue {
    let j = Bfq::jif(now);
    let smallest = Bfq::smallest_from_now(now);
    BfqQueue {
        id: q,
        entity,
        ref_: 0,
        stable_ref: 0,
        // Set after the ioprio message, which shows pid 0 (`bfq0A`).
        pid: 0,
        bic: None,
        ioprio: 0,
        ioprio_class: 0,
        new_ioprio: 0,
        new_ioprio_class: 0,
        last_serv_time_ns: 0,
        inject_limit: 0,
        decrease_time_jif: j,
        new_bfqq: None,
        pos_root: None,
        sort_list: Default::default(),
        next_rq: None,
        queued: [0, 0],
        meta_pending: 0,
        fifo: Default::default(),
        weight_counter: None,
        max_budget,
        budget_timeout: smallest,
        dispatched: 0,
        just_created: false,
        busy: false,
        wait_request: false,
        non_blocking_wait_rq: false,
        fifo_expire: false,
        has_short_ttime: false,
        // Marked after the ioprio message: `bfq%dA` there even for a sync queue.
        sync: false,
        io_bound: true,
        in_large_burst: false,
        softrt_update: false,
        coop: false,
        split_coop: false,
        ttime: Ttime {
            last_end_request: now + 1,
            ..Ttime::default()
        },
        io_start_time: now,
        tot_idle_time: 0,
        seek_history: 1,
        in_burst_list: false,
        last_request_pos: 0,
        wr_cur_max_time: 0,
        soft_rt_next_start: j,
        last_wr_start_finish: j,
        wr_coeff: 1,
        last_idle_bklogged: 0,
        service_from_backlogged: 0,
        service_from_wr: 0,
        wr_start_at_switch_to_srt: smallest,
        split_time: smallest,
        first_io_time: 0,
        creation_time: j,
        waker_bfqq: None,
        tentative_waker_bfqq: None,
        num_waker_detections: 0,
        waker_detection_started: 0,
        woken_list_node: None,
        woken_list: Default::default(),
        served_ns: 0,
        slices: 0,
    }
}
