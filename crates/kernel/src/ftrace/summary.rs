//! Counts of what a kernel trace holds: request events by action, the scheduler's messages
//! by kind, its idle timer armed and fired. These are what a run's JSON carries, so a
//! kernel run's messages can be set beside the engine's.

use std::collections::BTreeMap;

use serde_json::{json, Value};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceSummary {
    pub lines: u64,
    /// blk events by action (`Q`, `G`, `I`, `D`, `C`, ...).
    pub events: BTreeMap<String, u64>,
    /// Scheduler messages (`m` lines) by kind: the message's first word after the queue's
    /// tag (`bfq15014S add_request 1` is `add_request`).
    pub messages: BTreeMap<String, u64>,
    pub idle_timer_armed: u64,
    pub idle_timer_fired: u64,
    /// Events the ring buffer dropped because the reader fell behind.
    pub lost: Option<u64>,
}

impl TraceSummary {
    /// Counts one line of ftrace's output.
    pub fn add(&mut self, line: &str) {
        self.lines += 1;
        if line.contains("function=bfq_idle_slice_timer") {
            if line.contains("hrtimer_start:") {
                self.idle_timer_armed += 1;
            } else if line.contains("hrtimer_expire_entry:") {
                self.idle_timer_fired += 1;
            }
            return;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(dev) = tokens.iter().position(|t| is_dev_pair(t)) else {
            return;
        };
        // With blk-cgroup the device pair is followed by the cgroup's id pair.
        let mut at = dev + 1;
        if tokens.get(at).is_some_and(|t| is_dev_pair(t)) {
            at += 1;
        }
        match tokens.get(at) {
            Some(&"m") => {
                let kind = message_kind(&tokens[at + 1..]);
                *self.messages.entry(kind).or_default() += 1;
            }
            Some(action) => *self.events.entry((*action).to_string()).or_default() += 1,
            None => {}
        }
    }

    pub fn to_json(&self, file: &str) -> Value {
        json!({
            "file": file,
            "lines": self.lines,
            "events": self.events,
            "messages": self.messages,
            "idle_timer": {"armed": self.idle_timer_armed, "fired": self.idle_timer_fired},
            "lost_events": self.lost,
        })
    }
}

fn is_dev_pair(token: &str) -> bool {
    token
        .split_once(',')
        .is_some_and(|(a, b)| is_number(a) && is_number(b))
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// `N bfq15014S add_request 1` → `add_request`; `N bfq [bfq_limit_depth] wr_busy 0` →
/// `[bfq_limit_depth]`; `N bfq dispatch requests: 1 busy queues` → `dispatch`.
fn message_kind(rest: &[&str]) -> String {
    let words: Vec<&str> = rest.iter().skip_while(|w| **w == "N").copied().collect();
    let mut words = words.iter();
    let first = words.next().copied().unwrap_or("");
    // A queue's or group's tag (`bfq15014S`, `bfq`, `cfq1000S`) comes before the message.
    let kind = if is_tag(first) {
        words.next().copied().unwrap_or("")
    } else {
        first
    };
    kind.trim_end_matches([':', ',']).to_string()
}

fn is_tag(word: &str) -> bool {
    ["bfq", "cfq"].iter().any(|prefix| {
        word.strip_prefix(prefix).is_some_and(|rest| {
            rest.bytes()
                .all(|b| b.is_ascii_digit() || b"ASG/_-".contains(&b) || b.is_ascii_alphabetic())
                && !rest.starts_with('_')
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as this machine's 6.18 kernel wrote them for a `dd` on a loop device under bfq.
    const LINES: &str = "\
              dd-15014   [001] d..1. 11964.448670:   7,0    Q  RS 0 + 8 [dd]
              dd-15014   [001] dN... 11964.448735:   7,0   1,0  m   N bfq [bfq_limit_depth] wr_busy 0 sync 1 depth 256
              dd-15014   [001] dN.1. 11964.448757:   7,0    G  RS 0 + 8 [dd]
              dd-15014   [001] dN.1. 11964.448779:   7,0   1,0  m   N bfq15014S add_request 1
              dd-15014   [001] dN.1. 11964.448788:   7,0   1,0  m   N bfq15014S calc_finish: serv 1024, w 1200
              dd-15014   [001] dN.1. 11964.448794:   7,0   1,0  m   N bfq dispatch requests: 1 busy queues
          <idle>-0       [001] d.h1. 11964.449001: hrtimer_expire_entry: hrtimer=00000000b2 function=bfq_idle_slice_timer now=11964449001
              dd-15014   [001] d..1. 11964.448800: hrtimer_start: hrtimer=00000000b2 function=bfq_idle_slice_timer expires=1 softexpires=1 mode=REL
              dd-15014   [001] dN.1. 11964.448810:   7,0    D  RS 0 + 8 [dd]
";

    #[test]
    fn events_messages_and_timers_are_counted_by_kind() {
        let mut summary = TraceSummary::default();
        for line in LINES.lines() {
            summary.add(line);
        }
        assert_eq!(summary.lines, 9);
        assert_eq!(summary.events["Q"], 1);
        assert_eq!(summary.events["G"], 1);
        assert_eq!(summary.events["D"], 1);
        assert_eq!(summary.messages["[bfq_limit_depth]"], 1);
        assert_eq!(summary.messages["add_request"], 1);
        assert_eq!(summary.messages["calc_finish"], 1);
        assert_eq!(summary.messages["dispatch"], 1);
        assert_eq!((summary.idle_timer_armed, summary.idle_timer_fired), (1, 1));
        assert!(!summary.events.contains_key("m"));
    }
}
