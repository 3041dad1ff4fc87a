//! The dispatch pump: free device slots are offered to the scheduler (flushes first, past
//! it) until it has nothing for now or asks to idle. Kernel: __blk_run_queue() →
//! elv_dispatch_sort()/blk_peek_request() → the driver's request_fn.

use iosched_core::{Dispatch, Request, RqEvent, Time, Trace};

use crate::{Backend, Driver, Standing};

impl<X: Copy> Driver<'_, X> {
    /// Offers free device slots to the scheduler until it has nothing for now. The
    /// scheduler is not asked while its last "nothing now" stands: nothing has reached it
    /// since, and it says none of its clock-driven rules is due yet.
    #[inline]
    pub fn pump_dispatch<B: Backend<Io = X>>(&mut self, b: &mut B, trace: &mut dyn Trace) {
        // The usual answer after a completion under noop, found without the call: the
        // scheduler's "nothing now" stands and no flush waits (the loop below would stop
        // at its first pass).
        if let Standing::Until(Some(until)) = self.standing {
            if self.now <= until && self.bypass.is_empty() {
                return;
            }
        }
        self.pump(b, trace);
    }

    fn pump<B: Backend<Io = X>>(&mut self, b: &mut B, trace: &mut dyn Trace) {
        let depth = b.queue_depth();
        // Bounded: each pass either hands over a request or stops.
        while b.in_device() < depth {
            if !self.bypass.is_empty() {
                self.issue_bypassed(b, trace);
                continue;
            }
            let now = self.now;
            if let Standing::Unasked = self.standing {
                let until = self.elevator.dispatch_settled_until(trace.enabled());
                self.standing = Standing::Until(until);
            }
            if let Standing::Until(Some(until)) = self.standing {
                if now <= until {
                    break;
                }
            }
            if self.empty_when_drained && self.elevator.queued() == 0 {
                // `dispatch` would answer `Empty`, and keep answering it until something
                // reaches the scheduler (noop): not asked.
                self.standing = Standing::Until(Some(Time::MAX));
                break;
            }
            let elevator = &mut self.elevator;
            match b.in_scheduler(|| elevator.dispatch(now, trace)) {
                Dispatch::Request(request) => {
                    self.standing = Standing::No;
                    self.issue(b, request, trace);
                }
                Dispatch::IdleUntil(until) => {
                    assert!(until > now, "idle deadline not in the future");
                    if self.timer_at != Some(until) {
                        self.timer_at = Some(until);
                        b.arm_idle_timer(until);
                    }
                    self.standing = Standing::Unasked;
                    break;
                }
                Dispatch::Empty => {
                    self.standing = Standing::Unasked;
                    break;
                }
            }
        }
    }

    /// Hands the oldest flush (which bypasses the scheduler) to the device. Out of line: rare,
    /// and inlined it cost the pump's loop some 50 instructions a request in register moves.
    #[cold]
    #[inline(never)]
    fn issue_bypassed<B: Backend<Io = X>>(&mut self, b: &mut B, trace: &mut dyn Trace) {
        let id = self.bypass.pop_front().expect("a flush to issue");
        let request = self.in_flight[&id].request;
        self.issue(b, request, trace);
    }

    /// The scheduler's idle deadline came (the backend checked it is the armed one).
    pub fn fire_idle_timer<B: Backend<Io = X>>(&mut self, b: &mut B, trace: &mut dyn Trace) {
        self.timer_at = None;
        self.standing = Standing::No;
        let now = self.now;
        let elevator = &mut self.elevator;
        b.in_scheduler(|| elevator.timer(now, trace));
    }

    /// Marks `request` issued, exactly once, and hands it to the device (`D`).
    fn issue<B: Backend<Io = X>>(&mut self, b: &mut B, request: Request, trace: &mut dyn Trace) {
        let entry = self
            .in_flight
            .get_mut(request.id)
            .expect("dispatched request was never submitted");
        assert!(entry.issued_at().is_none(), "request dispatched twice");
        entry.issued_at = self.now;
        // The scheduler's copy may have grown by merges (a front merge moves its start).
        assert!(
            request.sector <= entry.request.sector
                && entry.request.end_sector() <= request.end_sector(),
            "merges only grow a request"
        );
        entry.request = request;
        self.trace_request(trace, RqEvent::Issue, &request);
        b.issue(self, &request, trace);
    }
}
