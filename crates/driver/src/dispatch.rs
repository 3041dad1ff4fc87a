//! The dispatch pump: free device slots are offered to the scheduler (flushes first, past
//! it) until it has nothing for now or asks to idle. Kernel: __blk_run_queue() →
//! elv_dispatch_sort()/blk_peek_request() → the driver's request_fn.

use iosched_core::{Dispatch, Request, RqEvent, Trace};

use crate::{Backend, Driver};

impl<X: Copy> Driver<'_, X> {
    /// Offers free device slots to the scheduler until it has nothing for now. The
    /// scheduler is not asked while its last "nothing now" stands (`settled_until`): nothing
    /// has reached it since, and none of its clock-driven rules is due.
    pub fn pump_dispatch<B: Backend<Io = X>>(&mut self, b: &mut B, trace: &mut dyn Trace) {
        let depth = b.queue_depth();
        // Bounded: each pass either hands over a request or stops.
        while b.in_device() < depth {
            if let Some(id) = self.bypass.pop_front() {
                let request = self.in_flight[&id].request;
                self.issue(b, request, trace);
                continue;
            }
            let now = self.now;
            if self.settled_until.is_some_and(|until| now <= until) {
                break;
            }
            let elevator = &mut self.elevator;
            match b.in_scheduler(|| elevator.dispatch(now, trace)) {
                Dispatch::Request(request) => {
                    self.settled_until = None;
                    self.issue(b, request, trace);
                }
                Dispatch::IdleUntil(until) => {
                    assert!(until > now, "idle deadline not in the future");
                    if self.timer_at != Some(until) {
                        self.timer_at = Some(until);
                        b.arm_idle_timer(until);
                    }
                    self.settled_until = self.elevator.dispatch_settled_until(trace.enabled());
                    break;
                }
                Dispatch::Empty => {
                    self.settled_until = self.elevator.dispatch_settled_until(trace.enabled());
                    break;
                }
            }
        }
    }

    /// The scheduler's idle deadline came (the backend checked it is the armed one).
    pub fn fire_idle_timer<B: Backend<Io = X>>(&mut self, b: &mut B, trace: &mut dyn Trace) {
        self.timer_at = None;
        self.settled_until = None;
        let now = self.now;
        let elevator = &mut self.elevator;
        b.in_scheduler(|| elevator.timer(now, trace));
    }

    /// Marks `request` issued, exactly once, and hands it to the device (`D`).
    fn issue<B: Backend<Io = X>>(&mut self, b: &mut B, request: Request, trace: &mut dyn Trace) {
        let entry = self
            .in_flight
            .get_mut(&request.id)
            .expect("dispatched request was never submitted");
        assert!(entry.issued_at.is_none(), "request dispatched twice");
        entry.issued_at = Some(self.now);
        // The scheduler's copy may have grown by merges (a front merge moves its start).
        assert!(
            request.sector <= entry.request.sector
                && entry.request.end_sector() <= request.end_sector(),
            "merges only grow a request"
        );
        entry.request = request;
        trace.request(self.now, RqEvent::Issue, &request);
        b.issue(self, &request, trace);
    }
}
