//! Waker detection: a queue whose requests keep arriving just after another queue's request
//! completes (within 4 ms, three times in a row within `128 * slice_idle`) is *woken* by that
//! queue. While BFQ idles for the waker, the woken queue's requests are served instead
//! (idling would wait for I/O that only the woken queue's progress can bring), and vice
//! versa: see [`Bfq::select_queue`](super::Bfq).
//!
//! Kernel: bfq_check_waker(), and the woken-list upkeep of bfq_add_bfqq_busy() and
//! bfq_put_queue().

use super::{Bfq, QId};
use crate::request::Time;
use crate::trace::Trace;

impl Bfq {
    /// Kernel: bfq_check_waker().
    pub(crate) fn check_waker(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let Some(last) = self.last_completed_rq_bfqq else {
            return;
        };
        if last == q
            || self.q(q).has_short_ttime
            || now.wrapping_sub(self.last_completion) >= 4_000_000
        {
            return;
        }
        let window = 128 * u64::from(self.tun.slice_idle);
        let b = self.q(q);
        if Some(last) != b.tentative_waker_bfqq || now > b.waker_detection_started + window {
            let b = self.qm(q);
            b.tentative_waker_bfqq = Some(last);
            b.num_waker_detections = 1;
            b.waker_detection_started = now;
            let name = self.bfqq_name(last);
            bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!("set tentative waker {name}")
            );
        } else {
            self.qm(q).num_waker_detections += 1;
        }
        if self.q(q).num_waker_detections == 3 {
            let b = self.qm(q);
            b.waker_bfqq = Some(last);
            b.tentative_waker_bfqq = None;
            let name = self.bfqq_name(last);
            bfq_log_q!(self, trace, now, q, format_args!("set waker {name}"));
            self.woken_list_del(q);
            self.qm(last).woken_list.push_front(q);
            self.qm(q).woken_list_node = Some(last);
        }
    }

    /// Takes `q` off its waker's woken list. Kernel: hlist_del_init(&bfqq->woken_list_node).
    pub(crate) fn woken_list_del(&mut self, q: QId) {
        if let Some(w) = self.qm(q).woken_list_node.take() {
            if let Some(waker) = self.queues[w].as_mut() {
                waker.woken_list.retain(|&x| x != q);
            }
        }
    }
}
