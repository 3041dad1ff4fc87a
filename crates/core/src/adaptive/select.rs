//! The dispatch rule: whom the next free slot of the device goes to, and when it stays free.
//!
//! In order: (1) on a device measured serial, a sequential queue with a short think time
//! keeps the device for up to `slice_ms` (CFQ's `slice_idle` gain on disks, with the window
//! from the queue's measured think times); (2) the group with the smallest virtual time and
//! a request queued is served if it is within the allowance of the virtual clock; (3) else
//! the group behind it is waited for: until its request in flight completes, or for its
//! idle window after that; (4) while a group that is behind has nothing queued, others'
//! requests are injected only while fewer of them are in the device than its measured
//! parallelism leaves beside the waited-for group's own (BFQ learns an injection limit from
//! the waiting queue's latency; this one follows from the device's measured parallelism, so
//! it is right from the first request and on any device).

use super::device::CENTI;
use super::share::{charge, WindowGroup, WEIGHT_SCALE};
use super::{Adaptive, Idle, InFlight};
use crate::cfq::think_time::{seeky, CFQQ_SECT_THR_NONROT, CFQQ_SEEK_THR};
use crate::elevator::Dispatch;
use crate::request::{Request, Time};
use crate::trace::{DecisionKind, Trace};

impl Adaptive {
    /// The idle window a think-time distribution earns, or why it earns none.
    pub(crate) fn window_for(&self, think: &super::ThinkDist) -> Result<Time, &'static str> {
        if self.tun.idle_cost == 0 {
            return Err("idle_cost is 0");
        }
        let s1 = self
            .device
            .service1_ns()
            .ok_or("no depth-1 service time measured yet")?;
        let window = if think.valid() {
            think
                .quantile_ns(self.tun.idle_quantile_pct)
                .ok_or("think time past any window")?
        } else {
            2 * s1
        };
        if window > self.tun.idle_max_ns {
            return Err("think time past idle_max_ms");
        }
        if window * self.device.parallelism_centi() > self.tun.idle_cost * s1 * CENTI {
            return Err("window x parallelism costs more than idle_cost service times");
        }
        Ok(window)
    }

    /// Whether the device is measured serial.
    pub(crate) fn serial(&self) -> bool {
        self.device.parallelism_centi() < self.tun.serial_parallelism_centi
    }

    /// Whether group `g`, with nothing queued, is expected to send again soon: with requests
    /// in flight, unless its think times say it seldom comes back soon (waiting for a
    /// completion costs no idle: the device is busy with the group's own requests); with
    /// none, within the window its think times earn.
    fn expected(&self, g: usize, now: Time) -> bool {
        let group = &self.groups[g];
        if group.in_flight > 0 {
            return !group.think.valid()
                || group
                    .think
                    .quantile_ns(self.tun.idle_quantile_pct)
                    .is_some_and(|w| w <= self.tun.idle_max_ns);
        }
        let Ok(window) = self.window_for(&group.think) else {
            return false;
        };
        group.last_end.is_some_and(|end| now < end + window)
    }

    /// Deactivates groups no longer expected, and advances the virtual clock.
    fn refresh(&mut self, now: Time) {
        self.charge_gaps();
        for g in 0..self.groups.len() {
            if self.groups[g].active && self.groups[g].pending == 0 && !self.expected(g, now) {
                self.groups[g].active = false;
                self.groups[g].left_in_window = true;
            }
        }
        let min = self
            .groups
            .iter()
            .filter(|g| g.active)
            .map(|g| g.vtime)
            .min();
        if let Some(min) = min {
            self.vclock = self.vclock.max(min);
        }
    }

    /// Ends the share window when due, and re-derives the allowance from it.
    fn roll_window(&mut self, now: Time, trace: &mut dyn Trace) {
        let vclock = self.vclock;
        let start = self
            .window
            .get_or_insert_with(|| super::ShareWindow::new(now, vclock))
            .start;
        if now < start + self.tun.share_window_ns {
            return;
        }
        let groups: Vec<WindowGroup> = (0..self.groups.len())
            .map(|g| WindowGroup {
                weight: self.weight_now(g) as u32,
                bytes: self.groups[g].window_bytes,
                stayed_active: self.groups[g].active && !self.groups[g].left_in_window,
            })
            .collect();
        let tolerance = self.tun.share_tolerance_pct;
        let window = self.window.as_mut().expect("the window was set above");
        let verdict = window.roll(now, vclock, &groups, tolerance);
        for g in &mut self.groups {
            g.window_bytes = 0;
            g.left_in_window = false;
        }
        if trace.enabled() {
            let p = self.device.parallelism_centi();
            let reason = format!(
                "allowance {} (tolerance {}% of advance {}, halved {}x): max share error \
                 {}.{:02}%; device parallelism {}.{:02}, depth-1 service {} us",
                verdict.allowance,
                tolerance,
                verdict.advance,
                verdict.shift,
                verdict.error_bp / 100,
                verdict.error_bp % 100,
                p / CENTI,
                p % CENTI,
                self.device.service1_ns().unwrap_or(0) / 1000
            );
            self.decide(trace, now, DecisionKind::Adapt, None, &reason, None);
        }
    }

    /// Kernel counterpart: the dispatch half of cfq_dispatch_requests()/bfq_dispatch_request().
    pub(crate) fn select(&mut self, now: Time, trace: &mut dyn Trace) -> Dispatch {
        self.roll_window(now, trace);
        self.refresh(now);
        if let Some(answer) = self.anticipate(now, trace) {
            return answer;
        }
        let candidate = self
            .groups
            .iter()
            .enumerate()
            .filter(|(_, g)| g.pending > 0)
            .min_by_key(|(g, group)| (group.vtime, *g))
            .map(|(g, _)| g);
        let Some(g) = candidate else {
            return Dispatch::Empty;
        };
        if !self.in_burst(g, now, trace) {
            let allowance = self.window.map_or(0, |w| w.allowance);
            if self.groups[g].vtime > self.vclock + allowance && !self.lend(g, now, trace) {
                return self.wait_behind(g, now, trace);
            }
            if let Some(answer) = self.inject_bound(g, now, trace) {
                return answer;
            }
            self.start_burst(g, now, trace);
        }
        let q = self.pick_queue(g);
        Dispatch::Request(self.dispatch_queue(q, now, trace))
    }

    /// The slowest active group has nothing queued and `g` is past the allowance: wait for it.
    fn wait_behind(&mut self, g: usize, now: Time, trace: &mut dyn Trace) -> Dispatch {
        let h = self
            .groups
            .iter()
            .enumerate()
            .filter(|(_, group)| group.active)
            .min_by_key(|(h, group)| (group.vtime, *h))
            .map(|(h, _)| h)
            .expect("a group behind the clock is active");
        assert!(h != g, "the candidate is not behind itself");
        assert_eq!(
            self.groups[h].pending, 0,
            "the group behind has nothing queued"
        );
        if trace.enabled() {
            let reason = format!(
                "group {} is {} past the clock (allowance {})",
                self.groups[g].id.0,
                self.groups[g].vtime - self.vclock,
                self.window.map_or(0, |w| w.allowance)
            );
            self.decide(
                trace,
                now,
                DecisionKind::DispatchLimit,
                Some(h),
                &reason,
                None,
            );
        }
        self.wait_for(h, None, now, trace)
    }

    /// Waits for group `h` (or its queue `q`): until its completion, or its window after it.
    fn wait_for(
        &mut self,
        h: usize,
        q: Option<usize>,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Dispatch {
        let (in_flight, last_end, think) = match q {
            Some(q) => {
                let queue = &self.queues[q];
                (queue.in_flight, queue.last_end, queue.think)
            }
            None => {
                let group = &self.groups[h];
                (group.in_flight, group.last_end, group.think)
            }
        };
        if in_flight > 0 {
            return Dispatch::Empty;
        }
        match (self.window_for(&think), last_end) {
            (Ok(window), Some(end)) if now < end + window => {
                self.arm(h, q, end + window, window, now, trace)
            }
            _ => Dispatch::Empty,
        }
    }

    /// Arms (or keeps) the idle timer for group `h`.
    fn arm(
        &mut self,
        h: usize,
        q: Option<usize>,
        until: Time,
        window: Time,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Dispatch {
        let same = self.idle.is_some_and(|i| i.group == h && i.queue == q);
        if !same {
            self.end_idle(now, false, trace);
            self.idle = Some(Idle {
                group: h,
                queue: q,
                since: now,
                until,
            });
            if trace.enabled() {
                let think = if q.is_some() { "queue" } else { "group" };
                let reason = format!(
                    "{think} think-time window {} us (p{} of its gaps; parallelism {}.{:02})",
                    window / 1000,
                    self.tun.idle_quantile_pct,
                    self.device.parallelism_centi() / CENTI,
                    self.device.parallelism_centi() % CENTI
                );
                self.decide(
                    trace,
                    now,
                    DecisionKind::ArmIdle,
                    Some(h),
                    &reason,
                    Some(until - now),
                );
            }
        }
        Dispatch::IdleUntil(until)
    }

    /// Ends the current idle, by an arrival (used) or the timer (`wasted`).
    pub(crate) fn end_idle(&mut self, now: Time, wasted: bool, trace: &mut dyn Trace) {
        let Some(idle) = self.idle.take() else {
            return;
        };
        let end = now.min(idle.until).max(idle.since);
        let summary = &mut self.groups[idle.group].summary;
        summary.idled_ns += end - idle.since;
        if wasted {
            summary.idle_wasted_ns += end - idle.since;
        }
        let reason = if wasted {
            "timer: nothing arrived"
        } else {
            "ended before the timer"
        };
        self.decide(
            trace,
            now,
            DecisionKind::IdleEnd,
            Some(idle.group),
            reason,
            Some(end - idle.since),
        );
    }

    /// The idle deadline passed: the group (or queue) waited for did not come.
    pub(crate) fn idle_timer(&mut self, now: Time, trace: &mut dyn Trace) {
        let Some(idle) = self.idle else { return };
        if now < idle.until {
            return;
        }
        if idle.queue.is_some() {
            self.end_slice(now, "anticipated queue did not come", trace);
        }
        self.end_idle(now, true, trace);
        self.refresh(now);
    }

    /// Groups behind `g` with nothing queued, and whether `g` may be injected beside them.
    fn inject_bound(&mut self, g: usize, now: Time, trace: &mut dyn Trace) -> Option<Dispatch> {
        let vtime = self.groups[g].vtime;
        let behind =
            |group: &super::Group| group.active && group.pending == 0 && group.vtime < vtime;
        let lagging = self.groups.iter().enumerate().filter(|(_, x)| behind(x));
        let h = lagging.min_by_key(|(h, x)| (x.vtime, *h)).map(|(h, _)| h)?;
        let lag_in_flight: u32 = self
            .groups
            .iter()
            .filter(|x| behind(x))
            .map(|x| x.in_flight)
            .sum();
        let units = (self.device.parallelism_centi() / CENTI) as u32;
        let limit = units.saturating_sub(lag_in_flight.max(1)).max(1);
        let others = self.device.in_flight - lag_in_flight;
        if others >= limit && self.lag_is_owed(vtime) {
            if trace.enabled() {
                let reason = format!(
                    "group {} held: {others} of {limit} others in flight beside group {} \
                     behind it, short of its share",
                    self.groups[g].id.0, self.groups[h].id.0
                );
                self.decide(
                    trace,
                    now,
                    DecisionKind::DispatchLimit,
                    Some(h),
                    &reason,
                    None,
                );
            }
            return Some(self.wait_for(h, None, now, trace));
        }
        if trace.enabled() {
            let reason = format!(
                "group {} beside group {} behind it: {} of {limit} others in flight",
                self.groups[g].id.0, self.groups[h].id.0, others
            );
            self.decide(trace, now, DecisionKind::Inject, Some(g), &reason, None);
        }
        None
    }

    /// Whether a group behind `vtime` with nothing queued is short of its weight-ideal part
    /// of the window's bytes. Choice: only then are others held to the parallelism its
    /// requests leave. A group that has had its part is not owed a free unit: holding
    /// the others for it idled the device: on the loop device the gauge reads 1.1–4.1
    /// (issue 32's two QD8 readers, loaded) where 16 requests still gain, so a light
    /// reader with its requests out, lent beyond its share, held the heavy one to 1–3.
    fn lag_is_owed(&self, vtime: u64) -> bool {
        (0..self.groups.len()).any(|x| {
            let group = &self.groups[x];
            group.active
                && group.pending == 0
                && group.vtime < vtime
                && self.window_percent(x, 0) < 100
        })
    }

    /// The group's queue with the smallest virtual time and a request queued.
    pub(super) fn pick_queue(&self, g: usize) -> usize {
        self.groups[g]
            .queues
            .iter()
            .copied()
            .filter(|&q| !self.queues[q].fifo.is_empty())
            .min_by_key(|&q| (self.queues[q].vtime, q))
            .expect("a group with requests queued has a queue with one")
    }

    /// Hands `q`'s oldest request to the device and charges its group and queue.
    fn dispatch_queue(&mut self, q: usize, now: Time, trace: &mut dyn Trace) -> Request {
        let rq = self.queues[q]
            .fifo
            .pop_front()
            .expect("queue has a request");
        let g = self.queues[q].group;
        self.queued -= 1;
        let weight = self.weight_now(g);
        let group = &mut self.groups[g];
        group.pending -= 1;
        if group.pending == 0 {
            group.burst = 0;
        }
        group.vtime += charge(rq.bytes(), weight);
        group.window_bytes += rq.bytes();
        group.in_flight += 1;
        group.qclock = group.qclock.max(self.queues[q].vtime);
        let queue = &mut self.queues[q];
        queue.vtime += charge(rq.bytes(), WEIGHT_SCALE);
        queue.in_flight += 1;
        let depth = self.device.dispatched();
        let info = InFlight {
            at: now,
            depth,
            group: g,
            queue: q,
        };
        assert!(
            self.in_flight.insert(rq.id, info).is_none(),
            "dispatched twice"
        );
        if self.serial()
            && !seeky(self.queues[q].seek_history)
            && self.active_queue.map(|(a, _)| a) != Some(q)
        {
            self.active_queue = Some((q, now));
            let reason = "sequential queue on a serial device: anticipated";
            self.decide_queue(trace, now, DecisionKind::SelectQueue, q, reason);
        }
        rq
    }

    /// On a serial device, keeps the device for the anticipated sequential queue.
    fn anticipate(&mut self, now: Time, trace: &mut dyn Trace) -> Option<Dispatch> {
        let (q, since) = self.active_queue?;
        let g = self.queues[q].group;
        let allowance = self.window.map_or(0, |w| w.allowance);
        let reason = if !self.serial() {
            "device measured parallel"
        } else if now >= since + self.tun.slice_ns {
            "slice used"
        } else if self.groups[g].vtime > self.vclock + allowance {
            "group past the allowance"
        } else if !self.queues[q].fifo.is_empty() {
            return Some(Dispatch::Request(self.dispatch_queue(q, now, trace)));
        } else if seeky(self.queues[q].seek_history) {
            "queue turned seeky"
        } else if self.queued == 0 || self.queues[q].in_flight > 0 {
            // Nothing else to serve, or the queue's next request follows its completion.
            return Some(Dispatch::Empty);
        } else {
            match self.wait_for(g, Some(q), now, trace) {
                Dispatch::IdleUntil(t) => return Some(Dispatch::IdleUntil(t)),
                _ => "think time past the window",
            }
        };
        self.end_slice(now, reason, trace);
        None
    }

    /// Stops anticipating the active queue.
    pub(crate) fn end_slice(&mut self, now: Time, reason: &str, trace: &mut dyn Trace) {
        if let Some((q, _)) = self.active_queue.take() {
            let g = self.queues[q].group;
            self.groups[g].summary.slices += 1;
            self.decide_queue(trace, now, DecisionKind::SliceExpired, q, reason);
        }
    }

    /// A request arrives: think time and seekiness are sampled, the group (re)joins the
    /// clock, and an idle for it ends.
    pub(crate) fn arrive(&mut self, q: usize, rq: &Request, now: Time, trace: &mut dyn Trace) {
        let g = self.queues[q].group;
        if self.groups[g].gap_from.is_some() {
            self.gap_close(g);
        }
        let rotational = self.rotational;
        let queue = &mut self.queues[q];
        if queue.fifo.is_empty() && queue.in_flight == 0 {
            if queue.gap_open {
                queue
                    .think
                    .sample(now.saturating_sub(queue.last_end.unwrap_or(now)));
                queue.gap_open = false;
            }
            queue.vtime = queue.vtime.max(self.groups[g].qclock);
        }
        let far = if rotational {
            queue.last_pos != 0 && queue.last_pos.abs_diff(rq.sector) > CFQQ_SEEK_THR
        } else {
            u64::from(rq.nr_sectors) < CFQQ_SECT_THR_NONROT
        };
        queue.seek_history = queue.seek_history << 1 | u32::from(far);
        queue.last_pos = rq.end_sector();
        let group = &mut self.groups[g];
        // The group's gap: from its last completion to the next request it queues, however
        // many of its processes are still in flight (what a wait for it would last).
        if group.pending == 0 && group.gap_open {
            group
                .think
                .sample(now.saturating_sub(group.last_end.unwrap_or(now)));
            group.gap_open = false;
        }
        if !group.active {
            // Rejoin at the clock as it stands now: no credit for the time away.
            self.refresh(now);
            let group = &mut self.groups[g];
            group.active = true;
            group.vtime = group.vtime.max(self.vclock);
        }
        self.groups[g].pending += 1;
        if self.idle.is_some_and(|i| i.group == g) {
            self.end_idle(now, false, trace);
        }
    }

    /// The device finished `rq`.
    pub(crate) fn complete(&mut self, rq: &Request, now: Time) {
        let info = self
            .in_flight
            .remove(&rq.id)
            .unwrap_or_else(|| panic!("completion of request {} never dispatched", rq.id.0));
        let dir = rq.op.data_dir();
        self.device
            .completed(dir, info.depth, now.saturating_sub(info.at));
        self.gap_complete(info.group, rq.bytes(), now);
        let group = &mut self.groups[info.group];
        group.in_flight -= 1;
        group.last_end = Some(now);
        group.gap_open = true;
        group.summary.served_ns += now.saturating_sub(info.at);
        let queue = &mut self.queues[info.queue];
        queue.in_flight -= 1;
        queue.last_end = Some(now);
        queue.gap_open = true;
    }
}
