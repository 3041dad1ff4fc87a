//! `kyber`: Linux 6.12's Kyber. Kernel: `block/kyber-iosched.c`.
//!
//! Kyber keeps latency under per-domain targets by limiting how many requests of each kind
//! the device may hold. Requests are sorted into domains by operation ([`domain`]: reads,
//! writes, discards, other); each domain holds a pool of tokens and a request needs one to
//! be dispatched ([`sbitmap`]: the pools are the kernel's scalable bitmaps, bit for bit).
//! Dispatch ([`dispatch`]) serves the domains in turn, a batch at a time. Completions feed
//! latency histograms, and a timer a hundred milliseconds after the first of them reads
//! their percentiles and shrinks or grows the pools ([`latency`]). Two tunables set the
//! read and write targets ([`tunables`]). There is no sorting, no merging beyond bios, no
//! idling and no per-process state.
//!
//! What blk-mq does around the scheduler, and how iosched models it:
//! - CPUs and software queues: one CPU. The per-CPU latency histograms are one array, the
//!   software queue (`kyber_ctx_queue`) is one list per domain, and a freed token's CPU
//!   hint is that CPU's.
//! - hardware queues: one (`kyber_hctx_data`: the flushed lists, `cur_domain`, `batching`).
//! - scheduler tags: [`Kyber::limit_depth`] answers the shallow depth an async request
//!   allocates with (75 % of `nr_requests`, [`Kyber::depth_updated`]); the driver owns the
//!   tag pool. Domain tokens are kyber's own and live here.
//! - token waits: a domain without tokens answers nothing; the kernel re-runs the queue
//!   when a token comes back, which the drivers do after every completion.
//! - the timer: a jiffies timer ([`Kyber::timer_expires`]). The oracle's harness fires it
//!   at its tick; through the [`Elevator`] trait it fires at the first call at or after its
//!   expiry, before that call's work, which is the same: only a completion changes what it
//!   reads, and only a dispatch sees what it changes.
//! - timestamps: a request's total latency runs from its insertion (the kernel's tag
//!   allocation, `start_time_ns`), its I/O latency from its dispatch (`io_start_time_ns`).
//!
//! Decisions go to the trace as `domain_depth` (a pool resized), `latency_percentile` (a
//! percentile read), `throttled` (a domain out of tokens) and `stats_timer` (armed, fired),
//! their `reason` the kernel tracepoint's text.

pub mod dispatch;
pub mod domain;
pub mod latency;
pub mod sbitmap;
#[cfg(test)]
mod tests;
pub mod tunables;

use std::collections::VecDeque;

use crate::deadline::tunables::jiffies;
use crate::elevator::{Dispatch, Elevator};
use crate::id_table::IdTable;
use crate::request::{Op, Request, RequestId, Time, MAX_MERGE_SECTORS};
use crate::trace::{Decision, DecisionKind, Trace};
use crate::tunable::{TunableError, TunableSpec, TunableValue};
use domain::{sched_domain, DomainTokens, LATENCY_DOMAINS, NAMES, NUM_DOMAINS};
use latency::{Latency, TimerEvent};
use tunables::TUNABLES;

pub use dispatch::BioMerge;

/// `KYBER_ASYNC_PERCENT`: async requests may hold at most this share of the tags.
const ASYNC_PERCENT: u32 = 75;

/// A request waiting in kyber, with its allocation time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queued {
    rq: Request,
    start_ns: Time,
    /// `REQ_NOMERGE`: a merge found it full.
    nomerge: bool,
}

/// A dispatched request: its domain token and its two timestamps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InFlight {
    domain: u8,
    token: u32,
    start_ns: Time,
    io_start_ns: Time,
}

/// Kyber: `kyber_queue_data` and the one `kyber_hctx_data`.
#[derive(Debug)]
pub struct Kyber {
    tokens: DomainTokens,
    latency: Latency,
    /// kcq->rq_list[]: the software queue, per domain.
    kcq: [VecDeque<Queued>; NUM_DOMAINS],
    /// khd->rqs[]: flushed, waiting for a token.
    rqs: [VecDeque<Queued>; NUM_DOMAINS],
    cur_domain: usize,
    batching: u32,
    async_depth: u32,
    in_flight: IdTable<InFlight>,
    queued: usize,
    /// Largest request a merge may build, in sectors.
    pub max_sectors: u32,
}

impl Default for Kyber {
    fn default() -> Self {
        Kyber::new()
    }
}

impl Kyber {
    /// Kernel: kyber_init_sched() and kyber_init_hctx() on a queue of 256 requests.
    pub fn new() -> Kyber {
        Kyber {
            tokens: DomainTokens::new(),
            latency: Latency::new(),
            kcq: Default::default(),
            rqs: Default::default(),
            cur_domain: 0,
            batching: 0,
            async_depth: 256 * ASYNC_PERCENT / 100,
            in_flight: IdTable::default(),
            queued: 0,
            max_sectors: MAX_MERGE_SECTORS,
        }
    }

    /// The tunables table, for `iosched schedulers`.
    pub fn tunable_specs() -> &'static [TunableSpec] {
        &TUNABLES
    }

    /// Kernel: kyber_depth_updated(): async requests get 75 % of `nr_requests`.
    pub fn depth_updated(&mut self, nr_requests: u32) {
        self.async_depth = nr_requests * ASYNC_PERCENT / 100;
    }

    /// Kernel: kyber_limit_depth(): the shallow depth of an async request (op_is_sync()
    /// false: a write without `REQ_SYNC` or `REQ_FUA`); `None` for sync ones.
    pub fn limit_depth(&self, rq: &Request) -> Option<u32> {
        let sync = matches!(rq.op, Op::Read | Op::Flush) || rq.flags.sync || rq.flags.fua;
        (!sync).then_some(self.async_depth)
    }

    /// A domain's current token depth.
    pub fn domain_depth(&self, domain: usize) -> u32 {
        self.tokens.depth(domain)
    }

    /// The pending timer's expiry, if armed.
    pub fn timer_expires(&self) -> Option<Time> {
        self.latency.timer_expires()
    }

    /// Kernel: kyber_timer_fn(), fired at `now` (its expiry).
    pub fn run_timer(&mut self, now: Time, trace: &mut dyn Trace) {
        decide(trace, now, DecisionKind::StatsTimer, "fired", None);
        let events = self.latency.timer_fn(jiffies(now), &mut self.tokens);
        for e in events {
            match e {
                TimerEvent::Percentile(text) => {
                    decide(trace, now, DecisionKind::LatencyPercentile, &text, None)
                }
                TimerEvent::Adjust { domain, depth } => {
                    let text = format!("{} {depth}", NAMES[domain]);
                    decide(trace, now, DecisionKind::DomainDepth, &text, None);
                }
            }
        }
    }

    /// Fires a timer that expired at or before `now` (see the module doc).
    fn catch_up(&mut self, now: Time, trace: &mut dyn Trace) {
        while let Some(at) = self.timer_expires().filter(|&at| at <= now) {
            self.run_timer(at, trace);
        }
    }

    /// Kernel: kyber_dispatch_request(), with its `kyber_throttled` tracepoints.
    pub fn dispatch_at(&mut self, now: Time, trace: &mut dyn Trace) -> Option<Request> {
        self.dispatch_request(now, trace)
    }

    /// Kernel: kyber_completed_request() then kyber_finish_request(): the latency samples
    /// (reads, writes, discards), the timer, and the token back to its pool.
    pub fn complete_request(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace) {
        let f = self
            .in_flight
            .remove(rq.id)
            .unwrap_or_else(|| panic!("completion of {:?}, never dispatched", rq.id));
        let domain = usize::from(f.domain);
        assert_eq!(domain, sched_domain(rq.op), "request changed domain");
        if domain < LATENCY_DOMAINS {
            let (total, io) = (now - f.start_ns, now - f.io_start_ns);
            if let Some(expires) = self.latency.completed(domain, total, io, jiffies(now)) {
                let at = self.latency.timer_expires();
                debug_assert!(at.is_some(), "armed at jiffy {expires}");
                decide(trace, now, DecisionKind::StatsTimer, "armed", at);
            }
        }
        self.tokens.clear(domain, f.token);
    }
}

/// Pushes a decision when someone listens.
pub(crate) fn decide(
    trace: &mut dyn Trace,
    now: Time,
    kind: DecisionKind,
    reason: &str,
    value_ns: Option<u64>,
) {
    if trace.enabled() {
        trace.decision(
            now,
            &Decision {
                kind,
                queue: None,
                group: None,
                reason,
                value_ns,
            },
        );
    }
}

impl Kyber {
    /// O(n): every request is in one place, and tokens match requests in flight.
    fn check(&self) {
        assert_eq!(
            self.all_queued().count(),
            self.queued,
            "queued count is off"
        );
        for d in 0..NUM_DOMAINS {
            for q in self.kcq[d].iter().chain(self.rqs[d].iter()) {
                assert_eq!(sched_domain(q.rq.op), d, "request on the wrong domain");
            }
            let held = self
                .in_flight
                .values()
                .filter(|f| usize::from(f.domain) == d);
            assert_eq!(
                held.count() as u32,
                self.tokens.busy(d),
                "tokens and requests differ"
            );
        }
        assert!(
            self.batching <= domain::BATCH_SIZE[self.cur_domain],
            "batch overrun"
        );
    }
}

impl Elevator for Kyber {
    fn name(&self) -> &'static str {
        "kyber"
    }

    fn insert(&mut self, rq: Request, now: Time, trace: &mut dyn Trace) {
        self.catch_up(now, trace);
        self.insert_request(rq, false, now);
    }

    fn try_back_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        // A merge neither reads nor changes what the timer does: no catch-up here.
        // Choice: kyber's one walk tries both sides per request (blk_bio_list_merge());
        // the driver's back-then-front calls get it whole on the first.
        self.bio_merge(bio).map(|m| m.into)
    }

    fn dispatch(&mut self, now: Time, trace: &mut dyn Trace) -> Dispatch {
        self.catch_up(now, trace);
        match self.dispatch_at(now, trace) {
            Some(rq) => Dispatch::Request(rq),
            None => Dispatch::Empty,
        }
    }

    fn completed(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace) {
        self.catch_up(now, trace);
        self.complete_request(rq, now, trace);
    }

    fn timer(&mut self, now: Time, trace: &mut dyn Trace) {
        self.catch_up(now, trace);
    }

    fn queued(&self) -> usize {
        self.queued
    }

    fn tunables(&self) -> Vec<TunableValue> {
        TUNABLES
            .iter()
            .zip(self.latency.targets_ns)
            .map(|(spec, value)| TunableValue { spec, value })
            .collect()
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let (index, v) = tunables::parse(name, value)?;
        self.latency.targets_ns[index] = v;
        Ok(())
    }

    fn check_invariants(&self) {
        self.check();
    }
}
