//! `noop`: one FIFO, no reordering, no idling. Kernel: `noop-iosched.c` (mq: `none`).

use std::collections::VecDeque;

use crate::elevator::{Dispatch, Elevator};
use crate::request::{Request, RequestId, Time};
use crate::trace::Trace;
use crate::tunable::{parse_tunable, TunableError, TunableSpec, TunableValue};

/// How many of the newest requests a bio may merge with: the kernel finds the partner by a
/// hash on end sector; a short look back finds the same partners for ordinary streams.
const MERGE_LOOKBACK: usize = 16;

/// noop has no tunables.
static TUNABLES: [TunableSpec; 0] = [];

/// First in, first out.
#[derive(Debug, Default)]
pub struct Noop {
    fifo: VecDeque<Request>,
}

impl Noop {
    pub fn new() -> Noop {
        Noop::default()
    }

    /// The (empty) tunables table, for `iosched schedulers`.
    pub fn tunable_specs() -> &'static [TunableSpec] {
        &TUNABLES
    }
}

impl Elevator for Noop {
    fn name(&self) -> &'static str {
        "noop"
    }

    fn insert(&mut self, rq: Request, _now: Time, _trace: &mut dyn Trace) {
        self.fifo.push_back(rq);
    }

    /// noop merges too (the kernel's elevator merge hash works for every scheduler); the
    /// newest request is the likely partner of a sequential stream.
    fn try_back_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        if self.fifo.is_empty() {
            return None;
        }
        let target = self
            .fifo
            .iter_mut()
            .rev()
            .take(MERGE_LOOKBACK)
            .find(|rq| rq.can_back_merge(bio))?;
        target.nr_sectors += bio.nr_sectors;
        Some(target.id)
    }

    fn try_front_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        if self.fifo.is_empty() {
            return None;
        }
        let target = self
            .fifo
            .iter_mut()
            .rev()
            .take(MERGE_LOOKBACK)
            .find(|rq| bio.can_back_merge(rq))?;
        target.sector = bio.sector;
        target.nr_sectors += bio.nr_sectors;
        Some(target.id)
    }

    fn dispatch(&mut self, _now: Time, _trace: &mut dyn Trace) -> Dispatch {
        match self.fifo.pop_front() {
            Some(rq) => Dispatch::Request(rq),
            None => Dispatch::Empty,
        }
    }

    /// `dispatch` answers `Empty` only when the FIFO is empty, and then keeps answering it.
    fn dispatch_settled_until(&self, _traced: bool) -> Option<Time> {
        self.fifo.is_empty().then_some(Time::MAX)
    }

    /// `completed` does nothing: an empty FIFO stays empty.
    fn completion_keeps_dispatch_settled(&self) -> bool {
        true
    }

    /// An empty FIFO pops nothing and says nothing.
    fn nothing_queued_answers_empty(&self) -> bool {
        true
    }

    fn completed(&mut self, _rq: &Request, _now: Time, _trace: &mut dyn Trace) {}

    fn queued(&self) -> usize {
        self.fifo.len()
    }

    fn tunables(&self) -> Vec<TunableValue> {
        Vec::new()
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        parse_tunable("noop", &TUNABLES, name, value).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::read;
    use crate::trace::NoTrace;

    #[test]
    fn dispatches_in_arrival_order_regardless_of_sector() {
        let mut noop = Noop::new();
        for (id, sector) in [(1, 900), (2, 10), (3, 500)] {
            noop.insert(read(id, sector, 8), 0, &mut NoTrace);
        }
        let order: Vec<u64> = (0..3)
            .map(|_| match noop.dispatch(0, &mut NoTrace) {
                Dispatch::Request(rq) => rq.id.0,
                other => panic!("expected a request, got {other:?}"),
            })
            .collect();
        assert_eq!(order, [1, 2, 3]);
        assert_eq!(noop.dispatch(0, &mut NoTrace), Dispatch::Empty);
    }

    /// A completion changes nothing `dispatch` reads, so noop says a driver need not ask
    /// again after one (issue 34: one scheduler call fewer per request): an empty noop's
    /// settled answer stands across a completion, and asking shows the same `Empty`.
    #[test]
    fn completion_leaves_an_empty_fifo_settled() {
        let mut noop = Noop::new();
        noop.insert(read(1, 8, 8), 0, &mut NoTrace);
        let Dispatch::Request(rq) = noop.dispatch(0, &mut NoTrace) else {
            panic!("the request should dispatch");
        };
        assert_eq!(noop.dispatch(0, &mut NoTrace), Dispatch::Empty);
        assert_eq!(noop.dispatch_settled_until(false), Some(Time::MAX));
        noop.completed(&rq, 5, &mut NoTrace);
        assert!(noop.completion_keeps_dispatch_settled());
        assert_eq!(noop.dispatch_settled_until(false), Some(Time::MAX));
        assert_eq!(noop.dispatch(5, &mut NoTrace), Dispatch::Empty);
    }

    /// A bio that continues a queued request joins it; one that does not stays apart.
    #[test]
    fn contiguous_bio_back_merges() {
        let mut noop = Noop::new();
        noop.insert(read(1, 100, 8), 0, &mut NoTrace);
        assert_eq!(noop.try_back_merge(&read(2, 108, 8), 0), Some(RequestId(1)));
        assert_eq!(noop.try_back_merge(&read(3, 500, 8), 0), None);
        match noop.dispatch(0, &mut NoTrace) {
            Dispatch::Request(rq) => assert_eq!((rq.sector, rq.nr_sectors), (100, 16)),
            other => panic!("expected a request, got {other:?}"),
        }
    }
}
