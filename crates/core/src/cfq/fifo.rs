//! FIFO expiry: each request carries a deadline (`fifo_expire_sync`/`_async` after arrival);
//! once per slice the active queue looks at its oldest request and, if the deadline passed,
//! serves it next regardless of elevator order and dispatch limits (`must_dispatch`).
//! Kernel: cfq_check_fifo().

use super::queue::RqRef;
use super::{Cfq, QId};
use crate::request::Time;

impl Cfq {
    /// Kernel: cfq_check_fifo(): consumes the once-per-slice check (`fifo_expire` flag).
    pub(crate) fn check_fifo(&mut self, q: QId, now: Time) -> Option<RqRef> {
        let cfqq = &mut self.queues[q];
        if cfqq.fifo_expire {
            return None;
        }
        cfqq.fifo_expire = true;
        let &(_, slot) = cfqq
            .fifo
            .iter()
            .find(|&&(seq, slot)| self.pending[slot as usize].seq == seq)?;
        let head = &self.pending[slot as usize];
        if now < head.fifo_time {
            return None;
        }
        Some((head.key(), slot))
    }
}
