//! A run as intervals on one clock: each request's life (inserted, issued, completed), each
//! queue's slices, each idle window with why it was armed and whether it paid off, each
//! preemption — built from the decision log and the trace that [`super::input`] read.
//!
//! An idle window runs from `arm_idle` to the `idle_end`, slice expiry or next queue
//! selection that closes it. It was **used** when a request the idling waited for arrived in
//! it (one of the queue's own for `queue idle`, any of its group's for `group idle`): with a
//! trace, that is read from the trace's insertions, a second witness beside the scheduler's
//! own `idle_end` reason, which alone decides when there is no trace. Otherwise it was
//! **wasted**: the disk sat idle for nothing.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::input::{Action, Clock, DecisionRecord, TraceEvent, TraceInput};

/// One request's life; times are on the timeline's clock (ns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Io {
    /// The submitter's pid: its queue's lane.
    pub pid: u32,
    pub sector: u64,
    pub sectors: u32,
    pub write: bool,
    pub insert_ns: Option<u64>,
    pub issue_ns: Option<u64>,
    pub complete_ns: Option<u64>,
}

/// A queue's time as the active queue. Kernel: __cfq_set_active_queue() to
/// __cfq_slice_expired().
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    pub pid: u32,
    pub group: Option<u32>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Why it was chosen (`select_queue`'s reason).
    pub chosen: String,
    /// Why it ended (`slice_expired`'s reason).
    pub ended: String,
}

/// Whether an idle window paid off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Used,
    Wasted,
}

/// The disk held idle for a queue or its group. Kernel: cfq_arm_slice_timer().
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleWindow {
    pub pid: u32,
    pub group: Option<u32>,
    /// Armed as group idle (`group_idle`), waiting for any queue of the group.
    pub group_idle: bool,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The timer's length.
    pub armed_ns: u64,
    /// Why it was armed.
    pub why: String,
    /// What ended it.
    pub ended: String,
    pub outcome: Outcome,
}

/// A new request's queue took the disk from the active one. Kernel: cfq_preempt_queue().
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preemption {
    pub t_ns: u64,
    pub pid: u32,
    pub victim: Option<u32>,
    pub reason: String,
}

/// A refusal to idle, and why (`no_idle`). Kernel: cfq_should_idle().
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoIdle {
    pub t_ns: u64,
    pub pid: u32,
    pub reason: String,
}

/// A queue's lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueLane {
    pub pid: u32,
    /// Command name from the trace, if it gave one.
    pub comm: Option<String>,
    pub group: Option<u32>,
}

/// A cgroup's lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupLane {
    pub id: u32,
    pub path: String,
}

/// Everything a timeline draws.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub queues: Vec<QueueLane>,
    pub groups: Vec<GroupLane>,
    pub ios: Vec<Io>,
    pub slices: Vec<Slice>,
    pub idles: Vec<IdleWindow>,
    pub preemptions: Vec<Preemption>,
    pub no_idle: Vec<NoIdle>,
    /// The first and last instant anything happened.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Where the time axis reads 0: the decision log's clock's zero (its `t_ns` are what
    /// `--from` and `--to` name), or without one the trace's first event (as blkparse counts;
    /// a kernel trace's clock is the machine's uptime).
    pub origin_ns: u64,
}

impl Timeline {
    /// The timeline of a run from its decision log and trace (either may be absent, not
    /// both). A blkparse text trace counts from its first event while the decision log
    /// counts on the run's clock; see [`trace_offset`] for how the two are lined up.
    pub fn build(decisions: &[DecisionRecord], trace: Option<&TraceInput>) -> Timeline {
        let mut events: Vec<TraceEvent> = trace.map(|t| t.events.clone()).unwrap_or_default();
        let offset = trace.map_or(0, |t| trace_offset(decisions, t));
        for e in &mut events {
            e.t_ns = e.t_ns.saturating_add(offset);
        }
        let start = first_time(decisions, &events);
        let end = last_time(decisions, &events);
        let mut timeline = Timeline {
            start_ns: start,
            end_ns: end,
            origin_ns: if decisions.is_empty() { start } else { 0 },
            ios: requests(&events),
            ..Timeline::default()
        };
        Decisions::new(end).replay(decisions, &mut timeline);
        let arrivals = arrivals(&events);
        if let (true, Some(trace)) = (decisions.is_empty(), trace) {
            let none = BTreeMap::new();
            let arrived = arrivals.as_ref().unwrap_or(&none);
            timeline.idles = kernel_idles(&trace.idle_timer, &timeline.ios, arrived, end);
        }
        let groups = queue_groups(decisions);
        for window in &mut timeline.idles {
            if let Some(arrived) = &arrivals {
                window.outcome = witnessed(window, arrived, &groups);
            }
        }
        timeline.lanes(decisions, trace);
        timeline
    }

    fn lanes(&mut self, decisions: &[DecisionRecord], trace: Option<&TraceInput>) {
        let groups = queue_groups(decisions);
        let mut pids: BTreeSet<u32> = decisions.iter().filter_map(|d| d.queue).collect();
        pids.extend(self.ios.iter().map(|io| io.pid));
        self.queues = pids
            .into_iter()
            .map(|pid| QueueLane {
                pid,
                comm: trace.and_then(|t| t.comms.get(&pid).cloned()),
                group: groups.get(&pid).copied(),
            })
            .collect();
        let ids: BTreeSet<u32> = decisions.iter().filter_map(|d| d.group).collect();
        self.groups = ids
            .into_iter()
            .map(|id| GroupLane {
                id,
                path: group_path(id, &groups, trace),
            })
            .collect();
    }
}

/// A group's path: from the notes framing a queue of it, else `/` for the root (id 0, as
/// CFQ numbers it) and `group N` for others.
fn group_path(id: u32, groups: &BTreeMap<u32, u32>, trace: Option<&TraceInput>) -> String {
    let named = trace.and_then(|t| {
        groups
            .iter()
            .filter(|(_, g)| **g == id)
            .find_map(|(pid, _)| t.cgroups.get(pid).cloned())
    });
    named.unwrap_or_else(|| {
        if id == 0 {
            "/".into()
        } else {
            format!("group {id}")
        }
    })
}

/// Nanoseconds to add to a trace's times to put them on the decision log's clock.
///
/// Choice: a binary or ftrace trace is on the recorder's clock already (0). A blkparse text
/// counts from its first event, whose time on the run's clock is not written; CFQ selects a
/// queue within the dispatch call that issues the first request, so the first `select_queue`
/// and the first issue (`D`) are the same instant, and the difference is the offset.
pub fn trace_offset(decisions: &[DecisionRecord], trace: &TraceInput) -> u64 {
    if trace.clock != Some(Clock::SinceFirstEvent) {
        return 0;
    }
    let selected = decisions.iter().find(|d| d.kind == "select_queue");
    let issued = trace.events.iter().find(|e| e.action == Action::Issue);
    match (selected, issued) {
        (Some(d), Some(e)) => d.t_ns.saturating_sub(e.t_ns),
        _ => 0,
    }
}

fn first_time(decisions: &[DecisionRecord], events: &[TraceEvent]) -> u64 {
    let d = decisions.first().map(|d| d.t_ns);
    let e = events.first().map(|e| e.t_ns);
    d.into_iter().chain(e).min().unwrap_or(0)
}

fn last_time(decisions: &[DecisionRecord], events: &[TraceEvent]) -> u64 {
    let d = decisions.last().map(|d| d.t_ns);
    let e = events.last().map(|e| e.t_ns);
    d.into_iter().chain(e).max().unwrap_or(0)
}

/// The group of each queue, from the decisions naming both.
fn queue_groups(decisions: &[DecisionRecord]) -> BTreeMap<u32, u32> {
    decisions
        .iter()
        .filter_map(|d| Some((d.queue?, d.group?)))
        .collect()
}

/// Requests matched up by sector: an issue takes the oldest inserted request starting at its
/// sector, a completion the oldest issued one (a kernel completes in interrupt context, so
/// its pid says nothing; the owner is the pid that queued or inserted the request).
fn requests(events: &[TraceEvent]) -> Vec<Io> {
    let mut ios: Vec<Io> = Vec::new();
    let mut owner: BTreeMap<u64, u32> = BTreeMap::new();
    let mut waiting: BTreeMap<u64, VecDeque<usize>> = BTreeMap::new();
    let mut issued: BTreeMap<u64, VecDeque<usize>> = BTreeMap::new();
    for e in events {
        match e.action {
            Action::Queue => {
                owner.insert(e.sector, e.pid);
            }
            Action::FrontMerge => {
                // The request that started after this bio now starts at its sector.
                let moved = waiting.remove(&(e.sector + u64::from(e.sectors)));
                if let Some(moved) = moved {
                    waiting.entry(e.sector).or_default().extend(moved);
                }
            }
            Action::Insert => {
                let pid = owner.get(&e.sector).copied().unwrap_or(e.pid);
                waiting.entry(e.sector).or_default().push_back(ios.len());
                ios.push(new_io(e, pid, Some(e.t_ns)));
            }
            Action::Issue => {
                let index = match waiting.get_mut(&e.sector).and_then(VecDeque::pop_front) {
                    Some(index) => index,
                    None => {
                        let pid = owner.get(&e.sector).copied().unwrap_or(e.pid);
                        ios.push(new_io(e, pid, None));
                        ios.len() - 1
                    }
                };
                ios[index].issue_ns = Some(e.t_ns);
                ios[index].sectors = e.sectors;
                issued.entry(e.sector).or_default().push_back(index);
            }
            Action::Complete => {
                if let Some(index) = issued.get_mut(&e.sector).and_then(VecDeque::pop_front) {
                    ios[index].complete_ns = Some(e.t_ns);
                }
            }
        }
    }
    ios
}

fn new_io(e: &TraceEvent, pid: u32, insert_ns: Option<u64>) -> Io {
    Io {
        pid,
        sector: e.sector,
        sectors: e.sectors,
        write: e.write,
        insert_ns,
        issue_ns: None,
        complete_ns: None,
    }
}

/// When each pid's requests reached the scheduler (its insertions; a trace without them,
/// its queued bios), or `None` when the trace says neither.
fn arrivals(events: &[TraceEvent]) -> Option<BTreeMap<u32, Vec<u64>>> {
    let has_insert = events.iter().any(|e| e.action == Action::Insert);
    let wanted = if has_insert {
        Action::Insert
    } else {
        Action::Queue
    };
    let mut by_pid: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for e in events.iter().filter(|e| e.action == wanted) {
        by_pid.entry(e.pid).or_default().push(e.t_ns);
    }
    (!by_pid.is_empty()).then_some(by_pid)
}

/// Used iff a request the window waited for arrived within it (ends included: a reader that
/// resubmits at the completion arrives at the very instant idling is armed).
fn witnessed(
    window: &IdleWindow,
    arrivals: &BTreeMap<u32, Vec<u64>>,
    groups: &BTreeMap<u32, u32>,
) -> Outcome {
    let waited_for = |pid: u32| {
        pid == window.pid
            || (window.group_idle
                && window.group.is_some()
                && groups.get(&pid) == window.group.as_ref())
    };
    let arrived = arrivals
        .iter()
        .filter(|(pid, _)| waited_for(**pid))
        .any(|(_, times)| {
            let from = times.partition_point(|&t| t < window.start_ns);
            times.get(from).is_some_and(|&t| t <= window.end_ns)
        });
    if arrived {
        Outcome::Used
    } else {
        Outcome::Wasted
    }
}

/// BFQ's idle windows from a kernel capture's timer events, for want of a decision log.
///
/// Choice: BFQ arms its idle timer when the in-service queue empties at a completion, so the
/// window is the queue of the request completed last before the arm. It ends when the timer
/// fires, the timer is armed again, or a request of that queue arrives (the kernel cancels the
/// timer then; the cancel is not traced), whichever comes first. Timer ends and arrivals are
/// times on the same ftrace clock.
fn kernel_idles(
    timer: &[(u64, bool)],
    ios: &[Io],
    arrivals: &BTreeMap<u32, Vec<u64>>,
    end: u64,
) -> Vec<IdleWindow> {
    let mut completions: Vec<(u64, u32)> = ios
        .iter()
        .filter_map(|io| Some((io.complete_ns?, io.pid)))
        .collect();
    completions.sort_unstable();
    let mut out = Vec::new();
    for (index, &(start, armed)) in timer.iter().enumerate() {
        if !armed {
            continue;
        }
        let before = completions.partition_point(|&(t, _)| t <= start);
        let Some(&(_, pid)) = before.checked_sub(1).and_then(|i| completions.get(i)) else {
            continue;
        };
        let next_timer = timer.get(index + 1).copied();
        let arrival = arrivals.get(&pid).and_then(|times| {
            let from = times.partition_point(|&t| t < start);
            times.get(from).copied()
        });
        let (mut until, mut ended) = (end, "capture ended");
        if let Some((t, fired)) = next_timer {
            (until, ended) = (
                t,
                if fired {
                    "idle timer fired"
                } else {
                    "re-armed"
                },
            );
        }
        if let Some(t) = arrival.filter(|&t| t < until) {
            (until, ended) = (t, "request arrived");
        }
        out.push(IdleWindow {
            pid,
            group: None,
            group_idle: false,
            start_ns: start,
            end_ns: until,
            armed_ns: 0,
            why: "bfq_idle_slice_timer armed".into(),
            ended: ended.into(),
            outcome: by_reason(ended),
        });
    }
    out
}

/// The scheduler's own word on an idle window, for when no trace witnesses arrivals.
fn by_reason(ended: &str) -> Outcome {
    if ended == "request arrived" || ended.starts_with("small request") {
        Outcome::Used
    } else {
        Outcome::Wasted
    }
}

/// Replays the decision log: who is active, which idle window is open.
struct Decisions {
    end_ns: u64,
    active: Option<Slice>,
    idle: Option<IdleWindow>,
    /// The last `wait_busy` (time, pid, reason): idling right after it is paid for it.
    wait_busy: Option<(u64, u32, String)>,
}

impl Decisions {
    fn new(end_ns: u64) -> Decisions {
        Decisions {
            end_ns,
            active: None,
            idle: None,
            wait_busy: None,
        }
    }

    fn replay(mut self, decisions: &[DecisionRecord], out: &mut Timeline) {
        for d in decisions {
            let Some(pid) = d.queue else { continue };
            match d.kind.as_str() {
                "select_queue" => self.select(d, pid, out),
                "slice_expired" => {
                    self.close_idle(d.t_ns, &d.reason, out);
                    self.close_slice(d.t_ns, &d.reason, out);
                }
                "arm_idle" => self.arm(d, pid, out),
                "idle_end" => self.close_idle(d.t_ns, &d.reason, out),
                "wait_busy" => self.wait_busy = Some((d.t_ns, pid, d.reason.clone())),
                "preempt" => out.preemptions.push(Preemption {
                    t_ns: d.t_ns,
                    pid,
                    victim: self.active.as_ref().map(|s| s.pid),
                    reason: d.reason.clone(),
                }),
                "no_idle" => out.no_idle.push(NoIdle {
                    t_ns: d.t_ns,
                    pid,
                    reason: d.reason.clone(),
                }),
                _ => {}
            }
        }
        let end = self.end_ns;
        if let Some(idle) = &self.idle {
            // Still armed when the log ends: the timer would have fired at its length.
            let until = idle.start_ns.saturating_add(idle.armed_ns).min(end);
            self.close_idle(until, "log ended", out);
        }
        self.close_slice(end, "log ended", out);
    }

    fn select(&mut self, d: &DecisionRecord, pid: u32, out: &mut Timeline) {
        self.close_idle(d.t_ns, "another queue selected", out);
        self.close_slice(d.t_ns, "another queue selected", out);
        // Busy-waiting belongs to the slice it extended.
        self.wait_busy = None;
        self.active = Some(Slice {
            pid,
            group: d.group,
            start_ns: d.t_ns,
            end_ns: d.t_ns,
            chosen: d.reason.clone(),
            ended: String::new(),
        });
    }

    fn arm(&mut self, d: &DecisionRecord, pid: u32, out: &mut Timeline) {
        self.close_idle(d.t_ns, "re-armed", out);
        let mut why = d.reason.clone();
        if let Some((_, _, reason)) = self.wait_busy.take().filter(|w| w.1 == pid) {
            why = format!("{why}; {reason}");
        }
        self.idle = Some(IdleWindow {
            pid,
            group: d.group,
            group_idle: d.reason.contains("group idle"),
            start_ns: d.t_ns,
            end_ns: d.t_ns,
            armed_ns: d.value_ns.unwrap_or(0),
            why,
            ended: String::new(),
            outcome: Outcome::Wasted,
        });
    }

    fn close_idle(&mut self, t_ns: u64, ended: &str, out: &mut Timeline) {
        if let Some(mut idle) = self.idle.take() {
            idle.end_ns = t_ns.max(idle.start_ns);
            idle.ended = ended.to_string();
            idle.outcome = by_reason(ended);
            out.idles.push(idle);
        }
    }

    fn close_slice(&mut self, t_ns: u64, ended: &str, out: &mut Timeline) {
        if let Some(mut slice) = self.active.take() {
            slice.end_ns = t_ns.max(slice.start_ns);
            slice.ended = ended.to_string();
            out.slices.push(slice);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::input::{read_decisions, read_trace};
    use super::*;
    use std::path::Path;

    const MS: u64 = 1_000_000;

    /// A hand-made run of queue 1000 on CFQ: selected at 0, idles at 10 ms (8 ms armed) and
    /// again at 30 ms; the first window ends when the timer fires, the second when a request
    /// arrives at 33 ms; the slice ends at 40 ms.
    const DECISIONS: &str = r#"
{"t_ns":0,"kind":"select_queue","queue":1000,"group":0,"reason":"first of the serving tree","value_ns":null}
{"t_ns":10000000,"kind":"arm_idle","queue":1000,"group":0,"reason":"queue idle","value_ns":8000000}
{"t_ns":18000000,"kind":"idle_end","queue":1000,"group":0,"reason":"idle timer fired","value_ns":null}
{"t_ns":30000000,"kind":"arm_idle","queue":1000,"group":0,"reason":"queue idle","value_ns":8000000}
{"t_ns":33000000,"kind":"idle_end","queue":1000,"group":0,"reason":"request arrived","value_ns":null}
{"t_ns":40000000,"kind":"slice_expired","queue":1000,"group":0,"reason":"slice used","value_ns":null}
"#;

    fn decisions() -> Vec<DecisionRecord> {
        read_decisions(Path::new("hand.dec"), DECISIONS).unwrap()
    }

    /// With no trace, the scheduler's reason decides: the window the timer ended was
    /// wasted, the one a request ended was used; each has its armed length and why.
    #[test]
    fn idle_window_is_wasted_when_the_timer_fires_and_used_when_a_request_arrives() {
        let t = Timeline::build(&decisions(), None);
        assert_eq!(t.idles.len(), 2);
        let (first, second) = (&t.idles[0], &t.idles[1]);
        assert_eq!((first.start_ns, first.end_ns), (10 * MS, 18 * MS));
        assert_eq!(first.outcome, Outcome::Wasted);
        assert_eq!(first.armed_ns, 8 * MS);
        assert_eq!(first.why, "queue idle");
        assert_eq!(second.outcome, Outcome::Used);
        assert_eq!(t.slices.len(), 1);
        assert_eq!((t.slices[0].start_ns, t.slices[0].end_ns), (0, 40 * MS));
        assert_eq!(t.slices[0].ended, "slice used");
    }

    /// With a trace, arrivals decide: a request of queue 1000 inserted at 15 ms falls in the
    /// first window, so it was used even though the timer ended it (CFQ's must_dispatch
    /// case); none arrived in [30, 33] ms, so the second was wasted whatever the log says.
    #[test]
    fn idle_window_outcome_is_witnessed_by_the_trace_arrivals() {
        let trace = "  8,0 0 1 0.000000000 1000 I RS 0 + 8 [r1]\n\
                     \x20 8,0 0 2 0.000000000 1000 D RS 0 + 8 [r1]\n\
                     \x20 8,0 0 3 0.015000000 1000 I RS 8 + 8 [r1]\n\
                     \x20 8,0 0 4 0.034000000 1000 I RS 16 + 8 [r1]\n";
        let trace = read_trace(Path::new("t.txt"), trace.as_bytes()).unwrap();
        let t = Timeline::build(&decisions(), Some(&trace));
        assert_eq!(t.idles[0].outcome, Outcome::Used);
        assert_eq!(t.idles[1].outcome, Outcome::Wasted);
    }

    /// Group idle waits for the whole group: a request of another queue in the same group
    /// makes it used; a queue of another group does not.
    #[test]
    fn group_idle_is_used_by_any_queue_of_the_group() {
        let log = r#"
{"t_ns":0,"kind":"select_queue","queue":1,"group":3,"reason":"x","value_ns":null}
{"t_ns":0,"kind":"select_queue","queue":2,"group":3,"reason":"x","value_ns":null}
{"t_ns":0,"kind":"select_queue","queue":9,"group":4,"reason":"x","value_ns":null}
{"t_ns":5000000,"kind":"arm_idle","queue":1,"group":3,"reason":"group idle","value_ns":2000000}
{"t_ns":7000000,"kind":"idle_end","queue":1,"group":3,"reason":"idle timer fired","value_ns":null}
"#;
        let decisions = read_decisions(Path::new("g.dec"), log).unwrap();
        let other_group = "  8,0 0 1 0.006000000 9 I RS 0 + 8 [x]\n";
        let trace = read_trace(Path::new("t"), other_group.as_bytes()).unwrap();
        assert_eq!(
            Timeline::build(&decisions, Some(&trace)).idles[0].outcome,
            Outcome::Wasted
        );
        let same_group = format!("{other_group}  8,0 0 2 0.006500000 2 I RS 64 + 8 [y]\n");
        let trace = read_trace(Path::new("t"), same_group.as_bytes()).unwrap();
        let t = Timeline::build(&decisions, Some(&trace));
        assert!(t.idles[0].group_idle);
        assert_eq!(t.idles[0].outcome, Outcome::Used);
    }

    /// A preemption names the queue it took the disk from; a kernel trace's completion (pid
    /// 0, interrupt context) is matched to its request by sector and lands in the owner's lane.
    #[test]
    fn preemption_names_its_victim_and_completions_find_their_request() {
        let log = r#"
{"t_ns":0,"kind":"select_queue","queue":1,"group":0,"reason":"x","value_ns":null}
{"t_ns":4000000,"kind":"preempt","queue":2,"group":0,"reason":"rule 5: sync preempts async","value_ns":null}
"#;
        let decisions = read_decisions(Path::new("p.dec"), log).unwrap();
        let t = Timeline::build(&decisions, None);
        assert_eq!(t.preemptions[0].victim, Some(1));
        assert_eq!(t.preemptions[0].pid, 2);
        let trace = "  8,0 0 1 0.000000000 7 Q RS 100 + 8 [a]\n\
                     \x20 8,0 0 2 0.000001000 7 I RS 100 + 8 [a]\n\
                     \x20 8,0 0 3 0.000002000 55 D RS 100 + 8 [kworker]\n\
                     \x20 8,0 0 4 0.000009000 0 C RS 100 + 8 [0]\n";
        let trace = read_trace(Path::new("k"), trace.as_bytes()).unwrap();
        let t = Timeline::build(&[], Some(&trace));
        assert_eq!(t.ios.len(), 1);
        assert_eq!(t.ios[0].pid, 7);
        assert_eq!(t.ios[0].issue_ns, Some(2_000));
        assert_eq!(t.ios[0].complete_ns, Some(9_000));
    }

    /// A blkparse text counts from its first event; the decision log from the run's start.
    /// A run whose first request comes at 10 ms lines up by its first issue.
    #[test]
    fn text_trace_is_shifted_onto_the_decision_clock() {
        let log = r#"{"t_ns":10000000,"kind":"select_queue","queue":1,"group":0,"reason":"x","value_ns":null}"#;
        let decisions = read_decisions(Path::new("d"), log).unwrap();
        let trace = "  8,0 0 1 0.000000000 1 I RS 0 + 8 [a]\n\
                     \x20 8,0 0 2 0.000000000 1 D RS 0 + 8 [a]\n\
                     \x20 8,0 0 3 0.002000000 1 C RS 0 + 8 [0]\n";
        let trace = read_trace(Path::new("t"), trace.as_bytes()).unwrap();
        let t = Timeline::build(&decisions, Some(&trace));
        assert_eq!(t.ios[0].issue_ns, Some(10 * MS));
        assert_eq!(t.ios[0].complete_ns, Some(12 * MS));
    }

    /// A kernel capture under BFQ has no decision log: its idle timer's events make the
    /// windows, each the queue of the request completed last. Armed at 2 ms after pid 7's
    /// completion, ended by 7's next request at 2.5 ms: used. Armed again at 4 ms and fired at
    /// 12 ms with nothing from 7: wasted.
    #[test]
    fn kernel_bfq_idle_windows_come_from_its_timer_events() {
        let line = |t: &str, body: &str| format!("  fio-7 [000] d..1. {t}: {body}\n");
        let timer = |t: &str, event: &str| {
            line(
                t,
                &format!("{event}: hrtimer=00000000f3 function=bfq_idle_slice_timer expires=1"),
            )
        };
        let text = [
            line("100.001000", "7,1    I  RS 0 + 8 [fio]"),
            line("100.001100", "7,1    D  RS 0 + 8 [fio]"),
            line("100.002000", "7,1    C  RS 0 + 8 [0]"),
            timer("100.002000", "hrtimer_start"),
            line("100.002500", "7,1    I  RS 8 + 8 [fio]"),
            line("100.002600", "7,1    D  RS 8 + 8 [fio]"),
            line("100.004000", "7,1    C  RS 8 + 8 [0]"),
            timer("100.004000", "hrtimer_start"),
            timer("100.012000", "hrtimer_expire_entry"),
        ]
        .concat();
        let trace = read_trace(Path::new("k.txt"), text.as_bytes()).unwrap();
        let t = Timeline::build(&[], Some(&trace));
        let windows: Vec<(u64, u64, Outcome)> = t
            .idles
            .iter()
            .map(|w| (w.start_ns - t.origin_ns, w.end_ns - t.origin_ns, w.outcome))
            .collect();
        assert_eq!(
            windows,
            [
                (MS, MS + MS / 2, Outcome::Used),
                (3 * MS, 11 * MS, Outcome::Wasted)
            ]
        );
        assert!(t.idles.iter().all(|w| w.pid == 7));
    }
}
