//! The oracle's scenario format: one directive per line, `#` starts a comment. The C driver
//! (`oracle/driver/scenario.c`) reads the same files; both are strict (an unknown directive or
//! key, or a malformed number, is an error naming file:line).
//!
//! ```text
//! origin NS          scenario time 0 is this absolute time (default 1000 s after boot)
//! end NS             events at or after origin+end are dropped (default 1 s)
//! device depth=D nr_requests=N rotational=0|1 base_ns=B per_sector_ns=P seek_min_ns=S0
//!        seek_per_ksector_ns=K seek_max_ns=SMAX max_sectors=M
//! tunable NAME VALUE [at=NS]     through the scheduler's sysfs store; without at=, at boot
//! proc PID [prio=N|R|B|I:level] pattern=seq|rand dir=R|W [sync=0|1] depth=N think=NS
//!      size=SECTORS base=SECTOR [span=..] [gap=..] [start=NS] [stop=NS] [seed=N]
//! arr NS PID R|W FLAGS|- SECTOR SECTORS      FLAGS: s sync, f FUA, h insert at head
//! exit NS PID        the process issues nothing more
//! cgroup PATH [weight=W]         a cgroup (`/a/b`, parent declared first), bfq.weight W
//! cgweight PATH W [at=NS]        writes W to PATH's bfq.weight (at boot without at=)
//! ```
//! BFQ scenarios add `proc ... cgroup=PATH nice=N` (default the root cgroup, nice 0) and
//! `device ... capacity=SECTORS` (default 2^31); a process of class `N` takes its class and
//! level from nice, as the kernel does.
//! Defaults: depth 1, nr_requests 2 * min(depth, 128), rotational, base 100 µs, 1 µs per
//! sector, no seek cost, max_sectors 2560; a process is BE level 4, depth 1, 8 sectors,
//! gap 0, seed = pid. A sequential process's next bio starts `gap` sectors after its last
//! one ends (wrapping at base+span when span is set); a random one picks one of span/size
//! size-aligned slots from a splitmix64 stream seeded with `seed`.

use std::fmt;
use std::path::{Path, PathBuf};

use iosched_core::{IoPrio, IoPrioClass};

/// 1000 s in ns: the default `origin`, a machine that has been up for a while.
pub const DEFAULT_ORIGIN_NS: u64 = 1_000_000_000_000;

/// The device: how many requests it holds, the tag pool, and the service-time model
/// (a fixed cost, a per-sector cost, a seek cost growing with distance, capped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device {
    pub depth: u32,
    /// 0: blk-mq's default, 2 * min(depth, 128).
    pub nr_requests: u32,
    pub rotational: bool,
    pub base_ns: u64,
    pub per_sector_ns: u64,
    pub seek_min_ns: u64,
    pub seek_per_ksector_ns: u64,
    pub seek_max_ns: u64,
    pub max_sectors: u32,
    /// get_capacity() in sectors (BFQ's single actuator covers it).
    pub capacity: u64,
}

impl Default for Device {
    fn default() -> Self {
        Device {
            depth: 1,
            nr_requests: 0,
            rotational: true,
            base_ns: 100_000,
            per_sector_ns: 1000,
            seek_min_ns: 0,
            seek_per_ksector_ns: 0,
            seek_max_ns: 0,
            max_sectors: 2560,
            capacity: 1 << 31,
        }
    }
}

impl Device {
    /// blk_mq_init_sched(): the scheduler's tags.
    pub fn nr_requests(&self) -> u32 {
        if self.nr_requests != 0 {
            self.nr_requests
        } else {
            2 * self.depth.min(128)
        }
    }

    /// Service time of `sectors` at `sector` after a request that ended at `last_end`: the
    /// same model as CFQ's conformance harness, so both oracles' devices agree.
    pub fn service_ns(&self, sector: u64, sectors: u32, last_end: u64) -> u64 {
        let model = crate::conformance::scenario::DeviceModel {
            depth: self.depth,
            rotational: self.rotational,
            base_ns: self.base_ns,
            per_sector_ns: self.per_sector_ns,
            seek_min_ns: self.seek_min_ns,
            seek_per_ksector_ns: self.seek_per_ksector_ns,
            seek_max_ns: self.seek_max_ns,
        };
        model.service_ns(sector, sectors, last_end)
    }
}

/// A closed-loop process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    pub ioprio: IoPrio,
    pub random: bool,
    pub write: bool,
    pub sync: bool,
    pub depth: u32,
    pub size: u32,
    pub think_ns: u64,
    pub base: u64,
    pub span: u64,
    pub gap: u64,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub seed: u64,
    /// The process's cgroup: "" is the root, else `/a/b`.
    pub cgroup: String,
    pub nice: i32,
}

/// One open-loop bio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time_ns: u64,
    pub pid: u32,
    pub write: bool,
    pub sync: bool,
    pub fua: bool,
    pub head: bool,
    pub sector: u64,
    pub sectors: u32,
}

/// A tunable store, at boot (`at_ns` None) or at a scenario time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunableSet {
    pub name: String,
    pub value: String,
    pub at_ns: Option<u64>,
    /// `cgweight`: the cgroup whose `bfq.weight` is written (name is `bfq.weight`).
    pub cgroup: Option<String>,
}

/// A cgroup (declared after its parent) with its initial bfq.weight (0: the default, 100).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cgroup {
    pub path: String,
    pub weight: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Scenario {
    pub origin_ns: u64,
    pub end_ns: u64,
    pub device: Device,
    pub tunables: Vec<TunableSet>,
    pub procs: Vec<Proc>,
    pub arrivals: Vec<Arrival>,
    /// (time, pid)
    pub exits: Vec<(u64, u32)>,
    pub cgroups: Vec<Cgroup>,
}

/// A scenario error with its place: `a.scn:3: unknown key 'bogus'`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: PathBuf,
    /// 1-based; 0 when the whole file is concerned.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Reads and parses a scenario file.
pub fn read_scenario(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        path: path.to_path_buf(),
        line: 0,
        message: e.to_string(),
    })?;
    parse_scenario(&text, path)
}

/// Parses scenario text; `path` only names the file in errors.
pub fn parse_scenario(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    let mut sc = Scenario {
        origin_ns: DEFAULT_ORIGIN_NS,
        end_ns: 1_000_000_000,
        ..Scenario::default()
    };
    for (i, line) in text.lines().enumerate() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.is_empty() || toks[0].starts_with('#') {
            continue;
        }
        directive(&mut sc, &toks).map_err(|message| ScenarioError {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        })?;
    }
    validate(&sc).map_err(|message| ScenarioError {
        path: path.to_path_buf(),
        line: 0,
        message,
    })?;
    Ok(sc)
}

fn number<T: std::str::FromStr>(tok: &str) -> Result<T, String> {
    if tok.starts_with(['-', '+']) {
        return Err(format!("bad number in '{tok}'"));
    }
    tok.parse().map_err(|_| format!("bad number in '{tok}'"))
}

fn flag(tok: &str) -> Result<bool, String> {
    match tok {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(format!("expected 0 or 1 in '{tok}'")),
    }
}

fn prio(tok: &str) -> Result<IoPrio, String> {
    let bad = || format!("bad priority '{tok}'");
    let (class, level) = tok.split_once(':').ok_or_else(bad)?;
    let class = match class {
        "N" => IoPrioClass::None,
        "R" => IoPrioClass::RealTime,
        "B" => IoPrioClass::BestEffort,
        "I" => IoPrioClass::Idle,
        _ => return Err(bad()),
    };
    let level: u8 = level.parse().map_err(|_| bad())?;
    if level > 7 || tok.len() != 3 {
        return Err(bad());
    }
    Ok(IoPrio { class, level })
}

fn key_values<'a>(toks: &[&'a str]) -> Result<Vec<(&'a str, &'a str)>, String> {
    toks.iter()
        .map(|t| {
            t.split_once('=')
                .ok_or_else(|| format!("unknown key '{t}'"))
        })
        .collect()
}

fn directive(sc: &mut Scenario, toks: &[&str]) -> Result<(), String> {
    match (toks[0], toks.len()) {
        ("origin", 2) => sc.origin_ns = number(toks[1])?,
        ("end", 2) => sc.end_ns = number(toks[1])?,
        ("device", _) => device(&mut sc.device, &toks[1..])?,
        ("tunable", 3 | 4) => sc.tunables.push(tunable(toks)?),
        ("tunable", _) => return Err("expected `tunable NAME VALUE [at=NS]`".into()),
        ("proc", n) if n >= 2 => sc.procs.push(proc(toks)?),
        ("arr", 7) => sc.arrivals.push(arrival(toks)?),
        ("arr", _) => return Err("expected `arr NS PID R|W FLAGS SECTOR SECTORS`".into()),
        ("exit", 3) => sc.exits.push((number(toks[1])?, number(toks[2])?)),
        ("cgroup", 2 | 3) => {
            let g = cgroup(sc, toks)?;
            sc.cgroups.push(g);
        }
        ("cgroup", _) => return Err("expected `cgroup PATH [weight=W]`".into()),
        ("cgweight", 3 | 4) => sc.tunables.push(cgweight(sc, toks)?),
        ("cgweight", _) => return Err("expected `cgweight PATH W [at=NS]`".into()),
        (other, _) => return Err(format!("unknown directive '{other}'")),
    }
    Ok(())
}

/// A cgroup path as written (`/` or `/a/b`), stored without the root's `/`.
fn cgroup_path(tok: &str) -> Result<String, String> {
    let ok = |c: char| c == '/' || c == '-' || c == '_' || c.is_ascii_alphanumeric();
    let bad = !tok.starts_with('/')
        || tok.len() >= 64
        || (tok.len() > 1 && tok.ends_with('/'))
        || tok.contains("//")
        || !tok.chars().all(ok);
    if bad {
        return Err(format!("bad cgroup path '{tok}'"));
    }
    Ok(if tok == "/" {
        String::new()
    } else {
        tok.to_string()
    })
}

fn cgroup(sc: &Scenario, toks: &[&str]) -> Result<Cgroup, String> {
    let path = cgroup_path(toks[1])?;
    let known = |p: &str| sc.cgroups.iter().any(|g| g.path == p);
    if path.is_empty() || known(&path) {
        return Err(format!("cgroup declared twice (or the root) '{}'", toks[1]));
    }
    let parent = &path[..path.rfind('/').unwrap_or(0)];
    if !parent.is_empty() && !known(parent) {
        return Err(format!("parent not declared for '{}'", toks[1]));
    }
    let weight = match toks.get(2) {
        None => 0,
        Some(t) => number(
            t.strip_prefix("weight=")
                .ok_or_else(|| format!("unknown key '{t}'"))?,
        )?,
    };
    if sc.cgroups.len() == 64 {
        return Err("too many 'cgroup'".into());
    }
    Ok(Cgroup { path, weight })
}

fn cgweight(sc: &Scenario, toks: &[&str]) -> Result<TunableSet, String> {
    let path = cgroup_path(toks[1])?;
    if path.is_empty() || !sc.cgroups.iter().any(|g| g.path == path) {
        return Err(format!("undeclared cgroup '{}'", toks[1]));
    }
    let mut t = tunable(&[
        "tunable",
        "bfq.weight",
        toks[2],
        toks.get(3).copied().unwrap_or(""),
    ])?;
    if toks.len() == 3 {
        t.at_ns = None;
    }
    t.cgroup = Some(path);
    Ok(t)
}

fn tunable(toks: &[&str]) -> Result<TunableSet, String> {
    let at_ns = match toks.get(3) {
        None | Some(&"") => None,
        Some(t) => Some(number(
            t.strip_prefix("at=")
                .ok_or_else(|| format!("unknown key '{t}'"))?,
        )?),
    };
    if toks[1].len() >= 32 || toks[2].len() >= 32 {
        return Err(format!("too long '{}'", toks[1]));
    }
    Ok(TunableSet {
        name: toks[1].to_string(),
        value: toks[2].to_string(),
        at_ns,
        cgroup: None,
    })
}

fn device(d: &mut Device, toks: &[&str]) -> Result<(), String> {
    for (k, v) in key_values(toks)? {
        match k {
            "depth" => d.depth = number(v)?,
            "nr_requests" => d.nr_requests = number(v)?,
            "rotational" => d.rotational = flag(v)?,
            "base_ns" => d.base_ns = number(v)?,
            "per_sector_ns" => d.per_sector_ns = number(v)?,
            "seek_min_ns" => d.seek_min_ns = number(v)?,
            "seek_per_ksector_ns" => d.seek_per_ksector_ns = number(v)?,
            "seek_max_ns" => d.seek_max_ns = number(v)?,
            "max_sectors" => d.max_sectors = number(v)?,
            "capacity" => d.capacity = number(v)?,
            _ => return Err(format!("unknown key '{k}'")),
        }
    }
    Ok(())
}

fn proc(toks: &[&str]) -> Result<Proc, String> {
    let pid: u32 = number(toks[1])?;
    let mut p = Proc {
        pid,
        ioprio: IoPrio {
            class: IoPrioClass::BestEffort,
            level: 4,
        },
        random: false,
        write: false,
        sync: false,
        depth: 1,
        size: 8,
        think_ns: 0,
        base: 0,
        span: 0,
        gap: 0,
        start_ns: 0,
        stop_ns: u64::MAX,
        seed: u64::from(pid),
        cgroup: String::new(),
        nice: 0,
    };
    for (k, v) in key_values(&toks[2..])? {
        match k {
            "prio" => p.ioprio = prio(v)?,
            "pattern" if v == "seq" || v == "rand" => p.random = v == "rand",
            "dir" if v == "R" || v == "W" => p.write = v == "W",
            "pattern" | "dir" => return Err(format!("bad {k} '{v}'")),
            "sync" => p.sync = flag(v)?,
            "depth" => p.depth = number(v)?,
            "size" => p.size = number(v)?,
            "think" => p.think_ns = number(v)?,
            "base" => p.base = number(v)?,
            "span" => p.span = number(v)?,
            "gap" => p.gap = number(v)?,
            "start" => p.start_ns = number(v)?,
            "stop" => p.stop_ns = number(v)?,
            "seed" => p.seed = number(v)?,
            "cgroup" => p.cgroup = cgroup_path(v)?,
            "nice" => {
                p.nice = v.parse().map_err(|_| format!("bad nice '{v}'"))?;
                if !(-20..=19).contains(&p.nice) {
                    return Err(format!("bad nice '{v}'"));
                }
            }
            _ => return Err(format!("unknown key '{k}'")),
        }
    }
    if p.size == 0 {
        return Err("size must be positive".into());
    }
    Ok(p)
}

fn arrival(toks: &[&str]) -> Result<Arrival, String> {
    let mut a = Arrival {
        time_ns: number(toks[1])?,
        pid: number(toks[2])?,
        write: match toks[3] {
            "R" => false,
            "W" => true,
            d => return Err(format!("bad direction '{d}'")),
        },
        sync: false,
        fua: false,
        head: false,
        sector: number(toks[5])?,
        sectors: number(toks[6])?,
    };
    if toks[4] != "-" {
        for c in toks[4].chars() {
            match c {
                's' => a.sync = true,
                'f' => a.fua = true,
                'h' => a.head = true,
                _ => return Err(format!("unknown flag in '{}'", toks[4])),
            }
        }
    }
    if a.sectors == 0 {
        return Err(format!("sectors must be positive in '{}'", toks[6]));
    }
    Ok(a)
}

/// Cross-line checks: arrivals and exits name declared processes.
fn validate(sc: &Scenario) -> Result<(), String> {
    let known = |pid: u32| sc.procs.iter().any(|p| p.pid == pid);
    if let Some(a) = sc.arrivals.iter().find(|a| !known(a.pid)) {
        return Err(format!("arrival for unknown pid {}", a.pid));
    }
    if let Some((_, pid)) = sc.exits.iter().find(|(_, pid)| !known(*pid)) {
        return Err(format!("exit of unknown pid {pid}"));
    }
    let declared = |c: &str| c.is_empty() || sc.cgroups.iter().any(|g| g.path == c);
    if let Some(p) = sc.procs.iter().find(|p| !declared(&p.cgroup)) {
        return Err(format!(
            "process {} in undeclared cgroup '{}'",
            p.pid, p.cgroup
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_file_and_line() {
        let err = parse_scenario("end 5\nproc 1 bogus=3\n", Path::new("s/a.scn")).unwrap_err();
        assert_eq!(err.to_string(), "s/a.scn:2: unknown key 'bogus'");
        let err = parse_scenario("device depth=x\n", Path::new("a.scn")).unwrap_err();
        assert_eq!(err.to_string(), "a.scn:1: bad number in 'x'");
        let err = parse_scenario("proc 1\narr 1 9 R - 0 8\n", Path::new("a.scn")).unwrap_err();
        assert_eq!(err.to_string(), "a.scn: arrival for unknown pid 9");
    }

    /// BFQ's additions: a cgroup tree, weights at boot and mid-run, a process's cgroup and
    /// nice; a cgroup before its parent, or a process in an unknown one, is refused.
    #[test]
    fn cgroups_weights_and_nice() {
        let text = "cgroup /a weight=300\ncgroup /a/b\ncgweight /a/b 50 at=7\n\
                    cgweight /a 20\nproc 1 cgroup=/a/b nice=-5\nproc 2 cgroup=/\n";
        let sc = parse_scenario(text, Path::new("t")).unwrap();
        assert_eq!(sc.cgroups.len(), 2);
        assert_eq!(
            (sc.cgroups[0].path.as_str(), sc.cgroups[0].weight),
            ("/a", 300)
        );
        assert_eq!(sc.tunables[0].cgroup.as_deref(), Some("/a/b"));
        assert_eq!(sc.tunables[0].at_ns, Some(7));
        assert_eq!(sc.tunables[1].at_ns, None);
        assert_eq!(
            (sc.procs[0].cgroup.as_str(), sc.procs[0].nice),
            ("/a/b", -5)
        );
        assert_eq!(sc.procs[1].cgroup, "");
        let err = parse_scenario("cgroup /a/b\n", Path::new("t")).unwrap_err();
        assert_eq!(err.to_string(), "t:1: parent not declared for '/a/b'");
        let err = parse_scenario("proc 1 cgroup=/x\n", Path::new("t")).unwrap_err();
        assert_eq!(err.to_string(), "t: process 1 in undeclared cgroup '/x'");
        let err = parse_scenario("proc 1 nice=30\n", Path::new("t")).unwrap_err();
        assert_eq!(err.to_string(), "t:1: bad nice '30'");
    }

    #[test]
    fn defaults_and_tag_pool() {
        let sc = parse_scenario("device depth=200\nproc 7 prio=R:2\n", Path::new("t")).unwrap();
        assert_eq!(sc.device.nr_requests(), 256);
        assert_eq!(sc.procs[0].ioprio.class, IoPrioClass::RealTime);
        assert_eq!(
            (sc.procs[0].size, sc.procs[0].gap, sc.procs[0].seed),
            (8, 0, 7)
        );
    }
}
