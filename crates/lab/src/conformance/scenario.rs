//! The conformance scenario format: one directive per line, `#` starts a comment.
//!
//! A scenario names a device model, CFQ tunables, blkio cgroups, closed-loop processes and
//! open-loop arrivals, with times relative to an `origin` (the absolute time of scenario
//! time 0; the scheduler itself is created at absolute 0, "boot"). The format and its defaults
//! are the harness's (`../shared/conformance/cfq/README.md`); parsing is strict where the
//! harness was lenient: an unknown key or a malformed number is an error naming file:line.

use std::fmt;
use std::path::{Path, PathBuf};

use iosched_core::{CgroupId, CgroupSpec, IoPrio, IoPrioClass, ReqFlags};

/// 1000 s in ns: the default `origin`, a machine that has been up for a while.
pub const DEFAULT_ORIGIN_NS: u64 = 1_000_000_000_000;
/// 1 s in ns: the default `end`.
pub const DEFAULT_END_NS: u64 = 1_000_000_000;

/// The harness's device model: a fixed cost, a per-sector cost and a seek cost that grows
/// with the distance from where the previously dispatched request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceModel {
    /// Requests the device holds at once.
    pub depth: u32,
    pub rotational: bool,
    pub base_ns: u64,
    pub per_sector_ns: u64,
    pub seek_min_ns: u64,
    /// Extra seek cost per 1024 sectors of distance.
    pub seek_per_ksector_ns: u64,
    /// Seek cap; 0 means uncapped.
    pub seek_max_ns: u64,
}

impl Default for DeviceModel {
    fn default() -> Self {
        DeviceModel {
            depth: 1,
            rotational: true,
            base_ns: 100_000,
            per_sector_ns: 1000,
            seek_min_ns: 0,
            seek_per_ksector_ns: 0,
            seek_max_ns: 0,
        }
    }
}

impl DeviceModel {
    /// Service time of a request of `sectors` starting at `sector` when the previous one
    /// ended at `last_end`.
    pub fn service_ns(&self, sector: u64, sectors: u32, last_end: u64) -> u64 {
        let dist = sector.abs_diff(last_end);
        let mut seek = 0;
        if dist != 0 {
            seek = self.seek_min_ns + dist * self.seek_per_ksector_ns / 1024;
            if self.seek_max_ns != 0 {
                seek = seek.min(self.seek_max_ns);
            }
        }
        self.base_ns + self.per_sector_ns * u64::from(sectors) + seek
    }
}

/// A closed-loop process: `depth` requests at `start`, each completion issuing the next one
/// `think` ns later while before `stop` and `end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcSpec {
    pub pid: u32,
    pub cgroup: u32,
    pub ioprio: IoPrio,
    pub random: bool,
    pub write: bool,
    /// Writes only: sync (REQ_SYNC) rather than buffered writeback.
    pub sync: bool,
    pub flags: ReqFlags,
    pub depth: u32,
    pub think_ns: u64,
    pub size: u32,
    pub base: u64,
    pub span: u64,
    /// Sequential processes skip this many sectors between requests.
    pub gap: u64,
    pub start_ns: u64,
    /// `u64::MAX` when the process never stops.
    pub stop_ns: u64,
    pub seed: u64,
}

/// One open-loop arrival of a `depth=0` process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrivalSpec {
    pub time_ns: u64,
    pub pid: u32,
    pub write: bool,
    pub flags: ReqFlags,
    pub sector: u64,
    pub sectors: u32,
}

/// A parsed scenario; times are relative to `origin_ns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub origin_ns: u64,
    pub end_ns: u64,
    pub device: DeviceModel,
    /// (sysfs name, value, line) in file order.
    pub tunables: Vec<(String, String, usize)>,
    pub cgroups: Vec<CgroupSpec>,
    pub procs: Vec<ProcSpec>,
    pub arrivals: Vec<ArrivalSpec>,
}

/// What is wrong with a scenario line.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScenarioErrorKind {
    UnknownDirective(String),
    UnknownKey(String),
    BadNumber(String),
    MissingField(&'static str),
    UnknownPid(u32),
    UnknownCgroup(u32),
    Io(String),
}

/// A scenario error with its place: `scenarios/a.scn:3: unknown key 'bogus'`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: PathBuf,
    /// 1-based; 0 when the whole file is concerned.
    pub line: usize,
    pub kind: ScenarioErrorKind,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        match &self.kind {
            ScenarioErrorKind::UnknownDirective(d) => write!(f, ": unknown directive '{d}'"),
            ScenarioErrorKind::UnknownKey(k) => write!(f, ": unknown key '{k}'"),
            ScenarioErrorKind::BadNumber(t) => write!(f, ": bad number in '{t}'"),
            ScenarioErrorKind::MissingField(what) => write!(f, ": missing {what}"),
            ScenarioErrorKind::UnknownPid(pid) => write!(f, ": arrival for unknown pid {pid}"),
            ScenarioErrorKind::UnknownCgroup(cg) => write!(f, ": unknown cgroup {cg}"),
            ScenarioErrorKind::Io(e) => write!(f, ": {e}"),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Reads and parses a scenario file.
pub fn read_scenario(path: &Path) -> Result<Scenario, ScenarioError> {
    let kind = iosched_workload::input::InputKind::Scenario;
    let text = iosched_workload::input::read_text(path, kind).map_err(|e| ScenarioError {
        path: path.to_path_buf(),
        line: 0,
        kind: ScenarioErrorKind::Io(e.reason()),
    })?;
    parse_scenario(&text, path)
}

/// Parses scenario text; `path` only names the file in errors.
pub fn parse_scenario(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    let mut sc = Scenario {
        origin_ns: DEFAULT_ORIGIN_NS,
        end_ns: DEFAULT_END_NS,
        device: DeviceModel::default(),
        tunables: Vec::new(),
        cgroups: Vec::new(),
        procs: Vec::new(),
        arrivals: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        let err = |kind| ScenarioError {
            path: path.to_path_buf(),
            line: i + 1,
            kind,
        };
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.is_empty() || toks[0].starts_with('#') {
            continue;
        }
        parse_directive(&mut sc, &toks, i + 1).map_err(err)?;
    }
    validate(&sc).map_err(|kind| ScenarioError {
        path: path.to_path_buf(),
        line: 0,
        kind,
    })?;
    Ok(sc)
}

fn parse_directive(sc: &mut Scenario, toks: &[&str], line: usize) -> Result<(), ScenarioErrorKind> {
    let field = |n: usize, what: &'static str| -> Result<&str, ScenarioErrorKind> {
        toks.get(n)
            .copied()
            .ok_or(ScenarioErrorKind::MissingField(what))
    };
    match toks[0] {
        "end" => sc.end_ns = number(field(1, "end time")?)?,
        "origin" => sc.origin_ns = number(field(1, "origin time")?)?,
        "device" => parse_device(&mut sc.device, &toks[1..])?,
        "tunable" => sc.tunables.push((
            field(1, "tunable name")?.to_string(),
            field(2, "tunable value")?.to_string(),
            line,
        )),
        "cgroup" => sc.cgroups.push(CgroupSpec {
            id: CgroupId(number(field(1, "cgroup id")?)?),
            parent: CgroupId(number(field(2, "cgroup parent")?)?),
            weight: number(field(3, "cgroup weight")?)?,
            leaf_weight: number(field(4, "cgroup leaf weight")?)?,
        }),
        "proc" => sc.procs.push(parse_proc(&toks[1..])?),
        "arr" => sc.arrivals.push(ArrivalSpec {
            time_ns: number(field(1, "arrival time")?)?,
            pid: number(field(2, "arrival pid")?)?,
            write: field(3, "arrival direction")?.starts_with('W'),
            flags: match field(4, "arrival flags")? {
                "-" => ReqFlags::default(),
                f => parse_flags(f)?,
            },
            sector: number(field(5, "arrival sector")?)?,
            sectors: number(field(6, "arrival size")?)?,
        }),
        other => return Err(ScenarioErrorKind::UnknownDirective(other.to_string())),
    }
    Ok(())
}

fn number<T: std::str::FromStr>(tok: &str) -> Result<T, ScenarioErrorKind> {
    tok.parse()
        .map_err(|_| ScenarioErrorKind::BadNumber(tok.to_string()))
}

fn parse_device(dev: &mut DeviceModel, toks: &[&str]) -> Result<(), ScenarioErrorKind> {
    for tok in toks {
        let (key, value) = tok
            .split_once('=')
            .ok_or_else(|| ScenarioErrorKind::UnknownKey(tok.to_string()))?;
        match key {
            "depth" => dev.depth = number(value)?,
            "rotational" => dev.rotational = number::<u32>(value)? != 0,
            "base_ns" => dev.base_ns = number(value)?,
            "per_sector_ns" => dev.per_sector_ns = number(value)?,
            "seek_min_ns" => dev.seek_min_ns = number(value)?,
            "seek_per_ksector_ns" => dev.seek_per_ksector_ns = number(value)?,
            "seek_max_ns" => dev.seek_max_ns = number(value)?,
            _ => return Err(ScenarioErrorKind::UnknownKey(tok.to_string())),
        }
    }
    Ok(())
}

/// Request flags by letter: s REQ_SYNC, i REQ_IDLE, m REQ_META, p REQ_PRIO, f REQ_FUA.
fn parse_flags(s: &str) -> Result<ReqFlags, ScenarioErrorKind> {
    let mut f = ReqFlags::default();
    for c in s.chars() {
        match c {
            's' => f.sync = true,
            'i' => f.idle = true,
            'm' => f.meta = true,
            'p' => f.prio = true,
            'f' => f.fua = true,
            _ => return Err(ScenarioErrorKind::UnknownKey(format!("flags={s}"))),
        }
    }
    Ok(f)
}

/// `R:n`, `B:n` or `I:n` (level 4 when `:n` is left out).
fn parse_prio(v: &str) -> Result<IoPrio, ScenarioErrorKind> {
    let (class, level) = v.split_once(':').unwrap_or((v, "4"));
    let class = match class {
        "R" => IoPrioClass::RealTime,
        "B" => IoPrioClass::BestEffort,
        "I" => IoPrioClass::Idle,
        _ => return Err(ScenarioErrorKind::UnknownKey(format!("prio={v}"))),
    };
    Ok(IoPrio {
        class,
        level: number(level)?,
    })
}

fn parse_proc(toks: &[&str]) -> Result<ProcSpec, ScenarioErrorKind> {
    let pid = number(toks.first().ok_or(ScenarioErrorKind::MissingField("pid"))?)?;
    let mut p = ProcSpec {
        pid,
        cgroup: 0,
        ioprio: IoPrio::none(),
        random: false,
        write: false,
        sync: false,
        flags: ReqFlags::default(),
        depth: 0,
        think_ns: 0,
        size: 8,
        base: 0,
        span: 0,
        gap: 8,
        start_ns: 0,
        stop_ns: u64::MAX,
        seed: 0,
    };
    for tok in &toks[1..] {
        let (key, v) = tok
            .split_once('=')
            .ok_or_else(|| ScenarioErrorKind::UnknownKey(tok.to_string()))?;
        match key {
            "prio" => p.ioprio = parse_prio(v)?,
            "pattern" => p.random = v == "rand",
            "dir" => p.write = v.starts_with('W'),
            "flags" => p.flags = parse_flags(v)?,
            "cg" => p.cgroup = number(v)?,
            "sync" => p.sync = number::<u32>(v)? != 0,
            "depth" => p.depth = number(v)?,
            "think" => p.think_ns = number(v)?,
            "size" => p.size = number(v)?,
            "start" => p.start_ns = number(v)?,
            "stop" => p.stop_ns = number(v)?,
            "base" => p.base = number(v)?,
            "span" => p.span = number(v)?,
            "gap" => p.gap = number(v)?,
            "seed" => p.seed = number(v)?,
            _ => return Err(ScenarioErrorKind::UnknownKey(tok.to_string())),
        }
    }
    Ok(p)
}

/// Cross-line checks: arrivals name declared processes, processes and cgroups name
/// declared cgroups.
fn validate(sc: &Scenario) -> Result<(), ScenarioErrorKind> {
    let known_cg = |cg: u32| cg == 0 || sc.cgroups.iter().any(|c| c.id.0 == cg);
    for c in &sc.cgroups {
        if !known_cg(c.parent.0) {
            return Err(ScenarioErrorKind::UnknownCgroup(c.parent.0));
        }
    }
    for p in &sc.procs {
        if !known_cg(p.cgroup) {
            return Err(ScenarioErrorKind::UnknownCgroup(p.cgroup));
        }
    }
    for a in &sc.arrivals {
        if !sc.procs.iter().any(|p| p.pid == a.pid) {
            return Err(ScenarioErrorKind::UnknownPid(a.pid));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_harness() {
        let sc = parse_scenario("proc 7 pattern=seq dir=R depth=1\n", Path::new("t.scn")).unwrap();
        assert_eq!(sc.origin_ns, DEFAULT_ORIGIN_NS);
        assert_eq!(sc.end_ns, DEFAULT_END_NS);
        assert_eq!(sc.device, DeviceModel::default());
        assert_eq!((sc.procs[0].size, sc.procs[0].gap), (8, 8));
        assert_eq!(sc.procs[0].stop_ns, u64::MAX);
    }

    #[test]
    fn errors_name_file_and_line() {
        let err = parse_scenario("end 5\nproc 1 bogus=3\n", Path::new("s/a.scn")).unwrap_err();
        assert_eq!(err.to_string(), "s/a.scn:2: unknown key 'bogus=3'");
        let err = parse_scenario("device depth=x\n", Path::new("a.scn")).unwrap_err();
        assert_eq!(err.to_string(), "a.scn:1: bad number in 'x'");
        let err = parse_scenario("arr 1 9 R - 0 8\n", Path::new("a.scn")).unwrap_err();
        assert_eq!(err.to_string(), "a.scn: arrival for unknown pid 9");
    }

    /// Seek cost: none when contiguous, linear in distance, capped.
    #[test]
    fn device_model_seek_cost() {
        let dev = DeviceModel {
            seek_min_ns: 1000,
            seek_per_ksector_ns: 2048,
            seek_max_ns: 5000,
            ..DeviceModel::default()
        };
        assert_eq!(dev.service_ns(100, 8, 100), 100_000 + 8000);
        assert_eq!(dev.service_ns(1124, 8, 100), 100_000 + 8000 + 1000 + 2048);
        assert_eq!(dev.service_ns(1_000_000, 8, 0), 100_000 + 8000 + 5000);
    }
}
