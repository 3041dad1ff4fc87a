//! `noop`: one FIFO, no reordering, no idling. Kernel: `noop-iosched.c` (mq: `none`).

use std::collections::VecDeque;

use crate::elevator::{Dispatch, Elevator};
use crate::request::{Request, Time};
use crate::trace::Trace;
use crate::tunable::{parse_tunable, TunableError, TunableSpec, TunableValue};

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

    fn dispatch(&mut self, _now: Time, _trace: &mut dyn Trace) -> Dispatch {
        match self.fifo.pop_front() {
            Some(rq) => Dispatch::Request(rq),
            None => Dispatch::Empty,
        }
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
}
