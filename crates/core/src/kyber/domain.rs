//! Scheduling domains and their tokens. Kernel: kyber_sched_domain(), kyber_depth[],
//! kyber_batch_size[], kyber_resize_domain(), kyber_get_domain_token(),
//! rq_clear_domain_token() (block/kyber-iosched.c, 6.12).
//!
//! Requests are split by operation into four domains (reads, writes, discards, everything
//! else). Each domain may have only as many requests in the device as it holds tokens; the
//! token pools start at their maximum depths and the timer ([`super::latency`]) shrinks
//! and grows them. A dispatched request carries its token until it finishes.

use super::sbitmap::Sbitmap;
use crate::request::Op;

/// `KYBER_READ` .. `KYBER_OTHER`.
pub const READ: usize = 0;
pub const WRITE: usize = 1;
pub const DISCARD: usize = 2;
pub const OTHER: usize = 3;
/// `KYBER_NUM_DOMAINS`.
pub const NUM_DOMAINS: usize = 4;
/// Domains with latency targets and histograms: all but `OTHER`.
pub const LATENCY_DOMAINS: usize = OTHER;

/// Kernel: kyber_domain_names[].
pub const NAMES: [&str; NUM_DOMAINS] = ["READ", "WRITE", "DISCARD", "OTHER"];

/// Kernel: kyber_depth[]: each domain's device-wide maximum of requests in flight.
pub const MAX_DEPTH: [u32; NUM_DOMAINS] = [256, 128, 64, 16];

/// Kernel: kyber_batch_size[]: requests dispatched in a row from one domain.
pub const BATCH_SIZE: [u32; NUM_DOMAINS] = [16, 8, 1, 1];

/// Kernel: kyber_sched_domain(): the domain of an operation (flushes are `OTHER`).
pub fn sched_domain(op: Op) -> usize {
    match op {
        Op::Read => READ,
        Op::Write => WRITE,
        Op::Discard => DISCARD,
        Op::Flush => OTHER,
    }
}

/// Kernel: kqd->domain_tokens[]: one token pool per domain.
#[derive(Clone, Debug)]
pub struct DomainTokens {
    pools: [Sbitmap; NUM_DOMAINS],
}

impl Default for DomainTokens {
    fn default() -> Self {
        DomainTokens::new()
    }
}

impl DomainTokens {
    /// Kernel: kyber_queue_data_alloc(): every pool at its domain's maximum depth.
    pub fn new() -> DomainTokens {
        DomainTokens {
            pools: MAX_DEPTH.map(Sbitmap::new),
        }
    }

    /// The domain's current depth (`domain_tokens[d].sb.depth`).
    pub fn depth(&self, domain: usize) -> u32 {
        self.pools[domain].depth()
    }

    /// Tokens of the domain held by requests in flight.
    pub fn busy(&self, domain: usize) -> u32 {
        self.pools[domain].busy()
    }

    /// Kernel: kyber_get_domain_token() (the wait-queue dance only re-runs the queue, which
    /// the drivers do anyway: see [`super::sbitmap`]).
    pub fn get(&mut self, domain: usize) -> Option<u32> {
        self.pools[domain].get()
    }

    /// Kernel: rq_clear_domain_token(): a finished request returns its token.
    pub fn clear(&mut self, domain: usize, token: u32) {
        self.pools[domain].clear(token);
    }

    /// Kernel: kyber_resize_domain(): the depth clamped to 1..=max; the new depth if it
    /// changed (the kernel's `kyber_adjust` tracepoint fires then).
    pub fn resize(&mut self, domain: usize, depth: u32) -> Option<u32> {
        let depth = depth.clamp(1, MAX_DEPTH[domain]);
        if depth == self.pools[domain].depth() {
            return None;
        }
        self.pools[domain].resize(depth);
        Some(depth)
    }
}
