//! mq-deadline's choice of the next request. Kernel: dd_dispatch_request(),
//! dd_dispatch_prio_aged_requests(), __dd_dispatch_request(), deadline_next_request(),
//! deadline_check_fifo(), started_after(), dd_start_request().

use super::tunables::jiffies;
use super::{
    direction, some_slot, time_after, Deadline, Held, Slot, NO_SLOT, PRIO_COUNT, READ, UNKNOWN,
    WRITE,
};
use crate::request::{Request, Time};

impl Deadline {
    /// Kernel: dd_dispatch_request(): the dispatch list first, then aged requests of the
    /// lower levels, then the levels in order; a level with requests queued or in flight
    /// holds back the ones below it.
    #[inline]
    pub fn dispatch_request(&mut self, now: Time) -> Option<Request> {
        let now_j = jiffies(now);
        if let Some(slot) = self.dispatch.pop_front() {
            let dir = direction(&self.held(slot).rq);
            return Some(self.start_request(dir, slot, false));
        }
        if let Some(rq) = self.dispatch_prio_aged(now_j) {
            return Some(rq);
        }
        for prio in 0..PRIO_COUNT {
            // A level with nothing queued has nothing to give, and looking costs nothing
            // in the kernel's state: only whether it holds the levels below matters.
            if self.fifo.is_empty(prio * 2 + READ) && self.fifo.is_empty(prio * 2 + WRITE) {
                if self.dd_queued(prio) != 0 {
                    return None;
                }
                continue;
            }
            let rq = self.dispatch_from(prio, now_j, now_j);
            if rq.is_some() || self.dd_queued(prio) != 0 {
                return rq;
            }
        }
        None
    }

    /// Kernel: dd_dispatch_prio_aged_requests(): with two or more levels busy, a BE or IDLE
    /// request inserted `prio_aging_expire` ago or earlier goes first.
    fn dispatch_prio_aged(&mut self, now_j: u64) -> Option<Request> {
        let busy = (0..PRIO_COUNT).filter(|&p| self.dd_queued(p) != 0).count();
        if busy < 2 {
            return None;
        }
        let latest_start = now_j.wrapping_sub(i64::from(self.prio_aging_expire) as u64);
        (1..PRIO_COUNT).find_map(|prio| self.dispatch_from(prio, latest_start, now_j))
    }

    /// Kernel: deadline_next_request(): the first request of `prio`'s `dir` tree at or after
    /// the position last dispatched from it.
    /// Known while no dispatch moves `latest_pos` elsewhere ([`Deadline::next`]).
    #[inline]
    fn next_request(&mut self, prio: usize, dir: usize) -> Option<Slot> {
        let tree = prio * 2 + dir;
        if self.next[tree] == UNKNOWN {
            let pos = self.latest_pos[prio][dir];
            self.next[tree] = self
                .sort
                .lower_bound(tree, pos, Self::sector_of(&self.sectors))
                .map_or(NO_SLOT, |n| n as Slot);
            self.after[tree] = UNKNOWN;
        }
        some_slot(self.next[tree])
    }

    /// Kernel: deadline_check_fifo(): the FIFO head's deadline has come.
    fn fifo_expired(&self, prio: usize, dir: usize, now_j: u64) -> bool {
        let head = self.fifo.first(prio * 2 + dir).expect("FIFO is not empty");
        let deadline = self.held(head).fifo_time;
        // time_is_before_eq_jiffies(): time_after_eq(jiffies, deadline)
        (now_j.wrapping_sub(deadline) as i64) >= 0
    }

    /// Kernel: started_after(): inserted after `latest_start`, as far as the FIFO deadline
    /// and the *current* expiry tell.
    fn started_after(&self, h: &Held, latest_start: u64) -> bool {
        let expire = i64::from(self.fifo_expire[direction(&h.rq)]) as u64;
        time_after(h.fifo_time.wrapping_sub(expire), latest_start)
    }

    /// Kernel: the direction choice of __dd_dispatch_request() when no batch continues:
    /// reads, unless writes wait and have been passed over `writes_starved` times.
    fn choose_direction(&mut self, prio: usize) -> Option<usize> {
        let reads = !self.fifo.is_empty(prio * 2 + READ);
        let writes = !self.fifo.is_empty(prio * 2 + WRITE);
        if reads {
            // `starved++ >= writes_starved`: unsigned, the tunable converted as C does.
            let passed = self.starved;
            let starve = writes && {
                self.starved = self.starved.wrapping_add(1);
                passed >= self.writes_starved as u32
            };
            if !starve {
                return Some(READ);
            }
        } else if !writes {
            return None;
        }
        self.starved = 0;
        Some(WRITE)
    }

    /// Kernel: __dd_dispatch_request(): continue the batch while it lasts, else pick a
    /// direction and start a batch at the FIFO head (expired, or nothing further up) or
    /// where the last one left off; nothing if the pick was inserted after `latest_start`.
    /// The FIFO deadline is checked against the current jiffies `now_j`.
    #[inline]
    fn dispatch_from(&mut self, prio: usize, latest_start: u64, now_j: u64) -> Option<Request> {
        // The kernel looks the next request up before testing the batch; the lookup has
        // no side effect, so an ended batch skips it.
        let mut pick = if self.batching < self.fifo_batch as u32 {
            self.next_request(prio, self.last_dir)
        } else {
            None
        };
        if pick.is_none() {
            let dir = self.choose_direction(prio)?;
            let next = self.next_request(prio, dir);
            let slot = match next {
                Some(next) if !self.fifo_expired(prio, dir, now_j) => next,
                _ => self.fifo.first(prio * 2 + dir).expect("FIFO is not empty"),
            };
            self.last_dir = dir;
            self.batching = 0;
            pick = Some(slot);
        }
        let slot = pick.expect("a request was picked");
        let held = self.held(slot);
        if self.started_after(held, latest_start) {
            return None;
        }
        let dir = direction(&held.rq);
        self.batching = self.batching.wrapping_add(1);
        let was_next = self.next[prio * 2 + dir] == slot;
        // deadline_remove_request() on the request as it leaves its slot.
        let held = self.release(slot);
        self.unlink(slot, held.in_tree.then_some(held.prio * 2 + dir));
        Some(self.started(held, dir, was_next))
    }

    /// Kernel: dd_start_request() for the request in `slot`.
    fn start_request(&mut self, dir: usize, slot: Slot, was_next: bool) -> Request {
        let held = self.release(slot);
        self.started(held, dir, was_next)
    }

    /// Kernel: dd_start_request(): remember the position, count the dispatch. When the
    /// request was its tree's next one, its successor (now known as next) is the next one
    /// at its position too; else the new position's next request is not known.
    fn started(&mut self, held: Held, dir: usize, was_next: bool) -> Request {
        if !was_next {
            self.forget_next(held.prio * 2 + dir);
        }
        self.latest_pos[held.prio][dir] = held.rq.sector;
        let stats = &mut self.stats[held.prio];
        stats.dispatched = stats.dispatched.wrapping_add(1);
        held.rq
    }
}
