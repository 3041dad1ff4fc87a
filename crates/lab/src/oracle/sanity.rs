//! Facts every kernel-side run must show, read from its decision lines: the witness that the
//! shim around the kernel's scheduler holds together (a lost request, a timer firing after
//! its cancel, a device over its depth or a leaked pointer would each break one).
//!
//! - lines come in time order;
//! - a bio is queued once; a request is inserted once, dispatched at most once and only
//!   while the scheduler holds it (not merged away), completed at most once and only after
//!   its dispatch; a request merged away was never dispatched;
//! - the device never holds more than `depth` requests, the scheduler's tags never exceed
//!   `nr_requests`;
//! - the idle timer: a cancel only when armed, a fire only when armed and at the armed
//!   expiry; with `slice_idle` 0 from boot (never changed) no arm at all;
//! - messages name objects (`q3`, `r12`), never print an address.

use std::collections::BTreeMap;

use super::scenario::Scenario;

/// What a run did, for properties over a scenario (shares of service).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub dispatched: u64,
    pub completed: u64,
    pub timer_fires: u64,
    /// Sectors dispatched per submitting pid (a merged request counts for its first bio's).
    pub sectors_by_pid: BTreeMap<u32, u64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Rq {
    Held,
    Merged,
    Dispatched,
    Completed,
}

struct State {
    now: u64,
    bio_pid: BTreeMap<u64, u32>,
    rqs: BTreeMap<u64, Rq>,
    in_device: u32,
    tags: u32,
    timer: Option<u64>,
    sum: Summary,
}

fn num<T: std::str::FromStr>(tok: Option<&&str>, line: &str) -> Result<T, String> {
    tok.and_then(|t| t.parse().ok())
        .ok_or_else(|| format!("malformed line '{line}'"))
}

/// Checks `out` (the kernel side's lines for `sc`); the run's summary, or the first broken
/// fact with its line number.
pub fn check(sc: &Scenario, out: &str) -> Result<Summary, String> {
    // strict_guarantees raises slice_idle to 8 ms when set: only a scenario that sets
    // slice_idle 0 at boot and touches neither again has idling off.
    let touches = |t: &&super::scenario::TunableSet| {
        t.name.starts_with("slice_idle") || t.name == "strict_guarantees"
    };
    let idle_off = sc.tunables.iter().filter(touches).count() == 1
        && sc
            .tunables
            .iter()
            .any(|t| t.name.starts_with("slice_idle") && t.value == "0" && t.at_ns.is_none());
    let mut st = State {
        now: 0,
        bio_pid: BTreeMap::new(),
        rqs: BTreeMap::new(),
        in_device: 0,
        tags: 0,
        timer: None,
        sum: Summary::default(),
    };
    for (n, line) in out.lines().enumerate() {
        // Messages are most lines: only their address check, without splitting them.
        if let Some(msg) = line.strip_prefix("L ") {
            if msg.contains("0x") {
                return Err(format!("line {}: an address in a message: '{line}'", n + 1));
            }
            continue;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        step(sc, &mut st, &toks, line, idle_off).map_err(|e| format!("line {}: {e}", n + 1))?;
    }
    Ok(st.sum)
}

fn step(
    sc: &Scenario,
    st: &mut State,
    t: &[&str],
    line: &str,
    idle_off: bool,
) -> Result<(), String> {
    let kind = *t.first().ok_or("empty line")?;
    let time: u64 = num(t.get(1), line)?;
    // Boot-time tunable lines carry time 0.
    if kind != "S" && time < st.now {
        return Err(format!("time goes back: '{line}'"));
    }
    st.now = st.now.max(time);
    match kind {
        "Q" => {
            let (bio, pid): (u64, u32) = (num(t.get(2), line)?, num(t.get(3), line)?);
            if st.bio_pid.insert(bio, pid).is_some() {
                return Err(format!("bio {bio} queued twice"));
            }
        }
        "I" => {
            let rq: u64 = num(t.get(2), line)?;
            if !st.bio_pid.contains_key(&rq) || st.rqs.insert(rq, Rq::Held).is_some() {
                return Err(format!("request {rq} inserted twice or without its bio"));
            }
            st.tags += 1;
            if st.tags > sc.device.nr_requests() {
                return Err(format!(
                    "{} tags in use, nr_requests {}",
                    st.tags,
                    sc.device.nr_requests()
                ));
            }
        }
        "A" => {
            let (next, into): (u64, u64) = (num(t.get(2), line)?, num(t.get(3), line)?);
            expect(st, next, Rq::Held, "merged away")?;
            expect(st, into, Rq::Held, "absorb a request")?;
            st.rqs.insert(into, Rq::Held);
            st.rqs.insert(next, Rq::Merged);
            st.tags -= 1;
        }
        "M" => {
            let into: u64 = num(t.get(3), line)?;
            expect(st, into, Rq::Held, "take a bio")?;
        }
        "D" => dispatch(sc, st, t, line)?,
        "C" => {
            let rq: u64 = num(t.get(2), line)?;
            expect(st, rq, Rq::Dispatched, "complete")?;
            st.rqs.insert(rq, Rq::Completed);
            st.in_device -= 1;
            st.tags -= 1;
            st.sum.completed += 1;
        }
        "H" => timer(st, t, line, idle_off)?,
        "S" | "W" | "R" | "X" => {}
        other => return Err(format!("unknown line kind '{other}'")),
    }
    Ok(())
}

fn expect(st: &State, rq: u64, want: Rq, what: &str) -> Result<(), String> {
    match st.rqs.get(&rq) {
        Some(&s) if s == want => Ok(()),
        _ => Err(format!("request {rq} cannot {what} in its state")),
    }
}

fn dispatch(sc: &Scenario, st: &mut State, t: &[&str], line: &str) -> Result<(), String> {
    let (rq, sectors): (u64, u64) = (num(t.get(2), line)?, num(t.get(4), line)?);
    expect(st, rq, Rq::Held, "be dispatched")?;
    st.rqs.insert(rq, Rq::Dispatched);
    st.in_device += 1;
    if st.in_device > sc.device.depth {
        return Err(format!(
            "{} requests in a device of depth {}",
            st.in_device, sc.device.depth
        ));
    }
    st.sum.dispatched += 1;
    let pid = st.bio_pid[&rq];
    *st.sum.sectors_by_pid.entry(pid).or_default() += sectors;
    Ok(())
}

fn timer(st: &mut State, t: &[&str], line: &str, idle_off: bool) -> Result<(), String> {
    match t.get(2).copied() {
        Some("arm") if idle_off => Err("idle timer armed with slice_idle 0".into()),
        Some("arm") => {
            let at: u64 = num(t.get(3), line)?;
            if at < st.now {
                return Err(format!("timer armed in the past: '{line}'"));
            }
            st.timer = Some(at);
            Ok(())
        }
        Some("cancel") if st.timer.is_some() => {
            st.timer = None;
            Ok(())
        }
        Some("fire") if st.timer == Some(st.now) => {
            st.timer = None;
            st.sum.timer_fires += 1;
            Ok(())
        }
        _ => Err(format!(
            "timer event out of place: '{line}' (armed for {:?})",
            st.timer
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn sc(text: &str) -> Scenario {
        super::super::scenario::parse_scenario(text, Path::new("t")).unwrap()
    }

    /// Each broken fact is caught: a second dispatch, a fire after a cancel, a device over
    /// its depth, an address in a message; a sound run passes and is summed.
    #[test]
    fn broken_runs_are_caught() {
        let s = sc("proc 1\n");
        let good =
            "Q 5 1 1 R 0 8\nI 5 1\nH 5 arm 9\nH 6 cancel\nD 6 1 0 8\nC 7 1\nL 7 - bfq q1 r1\n";
        let sum = check(&s, good).unwrap();
        assert_eq!(
            (sum.dispatched, sum.completed, sum.sectors_by_pid[&1]),
            (1, 1, 8)
        );
        let twice = "Q 5 1 1 R 0 8\nI 5 1\nD 6 1 0 8\nD 6 1 0 8\n";
        assert!(check(&s, twice).unwrap_err().contains("be dispatched"));
        let fire = "H 5 arm 9\nH 6 cancel\nH 9 fire\n";
        assert!(check(&s, fire).unwrap_err().contains("out of place"));
        let early = "H 5 arm 9\nH 8 fire\n";
        assert!(check(&s, early).is_err());
        let deep = "Q 5 1 1 R 0 8\nQ 5 2 1 R 80 8\nI 5 1\nI 5 2\nD 6 1 0 8\nD 6 2 80 8\n";
        assert!(check(&s, deep).unwrap_err().contains("depth 1"));
        assert!(check(&s, "L 5 - bfq put 0x55aa\n").is_err());
        let idle0 = sc("tunable slice_idle 0\nproc 1\n");
        assert!(check(&idle0, "H 5 arm 9\n").is_err());
    }
}
