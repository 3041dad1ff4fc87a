//! Scheduler decisions as JSON lines (`--decisions`), and a fan-out to several trace sinks.
//!
//! [`DecisionLog`] writes one compact JSON object per [`Decision`]:
//! `{"t_ns":..,"kind":..,"queue":..,"group":..,"reason":..,"value_ns":..}`, absent values as
//! `null`, keys always in this order, so a run's log is byte-stable and greppable (`jq
//! 'select(.kind=="arm_idle")'`). Request events and free-text messages are not its business
//! and are ignored.
//!
//! [`TraceFanout`] lets a driver hand one `&mut dyn Trace` to a scheduler while the events go
//! to, say, a blktrace binary, blkparse text and the decision log at once.

use iosched_core::{Decision, MessageSubject, Request, RqEvent, Time, Trace};
use serde_json::{Map, Value};
use std::io::{self, Write};

/// The JSON object of one decision at time `now`.
pub fn decision_value(now: Time, d: &Decision<'_>) -> Value {
    let mut m = Map::new();
    m.insert("t_ns".into(), Value::from(now));
    m.insert("kind".into(), Value::from(d.kind.as_str()));
    m.insert("queue".into(), d.queue.map_or(Value::Null, Value::from));
    m.insert(
        "group".into(),
        d.group.map_or(Value::Null, |g| Value::from(g.0)),
    );
    m.insert("reason".into(), Value::from(d.reason));
    m.insert(
        "value_ns".into(),
        d.value_ns.map_or(Value::Null, Value::from),
    );
    Value::Object(m)
}

/// A [`Trace`] writing one JSON line per decision.
///
/// Write errors cannot travel through the [`Trace`] methods: the first one is kept, later
/// lines are dropped, and [`DecisionLog::finish`] returns it.
pub struct DecisionLog<W: Write> {
    out: W,
    error: Option<io::Error>,
    lines: u64,
}

impl<W: Write> DecisionLog<W> {
    /// A log writing into `out`.
    pub fn new(out: W) -> Self {
        DecisionLog {
            out,
            error: None,
            lines: 0,
        }
    }

    /// Decisions written so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Flushes and returns the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Trace for DecisionLog<W> {
    fn enabled(&self) -> bool {
        true
    }

    fn decision(&mut self, now: Time, decision: &Decision<'_>) {
        if self.error.is_some() {
            return;
        }
        let mut line = decision_value(now, decision).to_string();
        line.push('\n');
        match self.out.write_all(line.as_bytes()) {
            Ok(()) => self.lines += 1,
            Err(e) => self.error = Some(e),
        }
    }
}

/// Forwards every trace call to several sinks, in the order they were added.
#[derive(Default)]
pub struct TraceFanout<'a> {
    sinks: Vec<&'a mut dyn Trace>,
}

impl<'a> TraceFanout<'a> {
    /// A fan-out with no sinks (disabled until one is added).
    pub fn new() -> Self {
        TraceFanout { sinks: Vec::new() }
    }

    /// Adds a sink.
    pub fn push(&mut self, sink: &'a mut dyn Trace) {
        self.sinks.push(sink);
    }

    /// Number of sinks.
    pub fn len(&self) -> usize {
        self.sinks.len()
    }

    /// Whether there are no sinks.
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }
}

impl Trace for TraceFanout<'_> {
    /// True iff any sink listens.
    fn enabled(&self) -> bool {
        self.sinks.iter().any(|s| s.enabled())
    }

    fn request(&mut self, now: Time, event: RqEvent, rq: &Request) {
        for s in self.sinks.iter_mut().filter(|s| s.enabled()) {
            s.request(now, event, rq);
        }
    }

    fn message(&mut self, now: Time, subject: MessageSubject, text: &str) {
        for s in self.sinks.iter_mut().filter(|s| s.enabled()) {
            s.message(now, subject, text);
        }
    }

    fn decision(&mut self, now: Time, decision: &Decision<'_>) {
        for s in self.sinks.iter_mut().filter(|s| s.enabled()) {
            s.decision(now, decision);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_core::{testing, CgroupId, DecisionKind, NoTrace};

    fn arm_idle() -> Decision<'static> {
        Decision {
            kind: DecisionKind::ArmIdle,
            queue: Some(5122),
            group: Some(CgroupId::ROOT),
            reason: "sync queue empty, think time 1200ns < slice_idle",
            value_ns: Some(8_000_000),
        }
    }

    #[test]
    fn one_json_line_per_decision_in_fixed_key_order() {
        let mut log = DecisionLog::new(Vec::new());
        log.decision(4_000_000, &arm_idle());
        log.decision(
            5_000_000,
            &Decision {
                kind: DecisionKind::SelectQueue,
                queue: None,
                group: None,
                reason: "no \"busy\" queue",
                value_ns: None,
            },
        );
        log.message(5_000_001, MessageSubject::Device, "ignored");
        assert_eq!(log.lines(), 2);
        let text = String::from_utf8(log.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            "{\"t_ns\":4000000,\"kind\":\"arm_idle\",\"queue\":5122,\"group\":0,\"reason\":\"sync queue empty, think time 1200ns < slice_idle\",\"value_ns\":8000000}\n\
             {\"t_ns\":5000000,\"kind\":\"select_queue\",\"queue\":null,\"group\":null,\"reason\":\"no \\\"busy\\\" queue\",\"value_ns\":null}\n"
        );
    }

    /// Counts calls, to see what a fan-out forwards.
    #[derive(Default)]
    struct Counter {
        on: bool,
        calls: u32,
    }

    impl Trace for Counter {
        fn enabled(&self) -> bool {
            self.on
        }
        fn request(&mut self, _: Time, _: RqEvent, _: &Request) {
            self.calls += 1;
        }
        fn message(&mut self, _: Time, _: MessageSubject, _: &str) {
            self.calls += 1;
        }
        fn decision(&mut self, _: Time, _: &Decision<'_>) {
            self.calls += 1;
        }
    }

    #[test]
    fn fanout_is_enabled_iff_a_sink_is_and_forwards_to_enabled_sinks() {
        let mut off = Counter::default();
        let mut none = NoTrace;
        {
            let mut f = TraceFanout::new();
            assert!(!f.enabled());
            f.push(&mut off);
            f.push(&mut none);
            assert!(!f.enabled());
        }
        let mut on = Counter { on: true, calls: 0 };
        {
            let mut f = TraceFanout::new();
            f.push(&mut off);
            f.push(&mut on);
            assert!(f.enabled());
            f.request(0, RqEvent::Queue, &testing::read(1, 0, 8));
            f.message(1, MessageSubject::Device, "x");
            f.decision(2, &arm_idle());
        }
        assert_eq!(on.calls, 3);
        assert_eq!(off.calls, 0);
    }
}
