//! The section layer: from lines to validated jobs.
//!
//! fio keeps one default job (`def_thread`). A `[global*]` section (the name *starts with*
//! "global": fio compares six characters) applies its options to that default; a job
//! section starts from a copy of the default as it is at that point, so each global section
//! affects only the jobs after it — also in later job files. Within a section `kb_base` is
//! applied first (fio sorts a section's options by priority), then the options in order, so
//! of `rwmixread` and `rwmixwrite` the later one wins.
//!
//! A finished job is checked as a whole (options that are fine alone but not together) and
//! gets its reporting group: `stonewall` or `new_group` opens a new group once the current
//! one has a job (`add_job()` in fio's init.c). Every job file after the first puts an
//! implicit `stonewall` on its first job.

use super::error::{ParseError, ParseErrorKind};
use super::expand::expand_line;
use super::lines::{Line, LineKind};
use super::options::{self, check_kind, resolve_ioprio, Arg, OptDef};
use super::ParseContext;
use crate::job::{BlockSizes, JobSet, JobSpec, Origin, StridedZones, Workload};

/// A job under construction: the spec plus what can only be resolved once all of a job's
/// options are known.
#[derive(Clone, Debug)]
pub(crate) struct Draft {
    pub spec: JobSpec,
    /// `name=`, overriding the section name.
    pub name: Option<String>,
    pub new_group: bool,
    pub prio: Option<u8>,
    pub prioclass: Option<u8>,
    /// Explicit `iodepth_low` (default: `iodepth`).
    pub iodepth_low: Option<u32>,
    /// Explicit `iodepth_batch_complete_max` (default: the minimum).
    pub batch_complete_max: Option<u32>,
    /// `bs=` per direction.
    pub bs: [u64; 3],
    /// `bsrange=` per direction.
    pub bsrange: [Option<(u64, u64)>; 3],
    /// `bssplit=` per direction, resolved to percentages summing to 100.
    pub bssplit: [Option<Vec<(u64, u32)>>; 3],
    /// `zonemode=`: `Some(true)` strided, `Some(false)` none, unset: strided when a
    /// zonesize is given (fio's rule).
    pub zonemode_strided: Option<bool>,
    pub zonesize: u64,
    pub zonerange: u64,
    pub zoneskip: u64,
}

impl Draft {
    fn new() -> Draft {
        Draft {
            spec: JobSpec::new(""),
            name: None,
            new_group: false,
            prio: None,
            prioclass: None,
            iodepth_low: None,
            batch_complete_max: None,
            bs: [4096; 3],
            bsrange: [None; 3],
            bssplit: [None, None, None],
            zonemode_strided: None,
            zonesize: 0,
            zonerange: 0,
            zoneskip: 0,
        }
    }

    /// Resolve and check the draft as a whole. The error names the option concerned.
    fn finalize(
        self,
        section: &str,
        origin: Origin,
        warnings: &mut Vec<String>,
    ) -> Result<JobSpec, (String, String)> {
        let Draft {
            mut spec,
            name,
            prio,
            prioclass,
            iodepth_low,
            batch_complete_max,
            bs,
            bsrange,
            bssplit,
            zonemode_strided,
            zonesize,
            zonerange,
            zoneskip,
            ..
        } = self;
        spec.name = name.unwrap_or_else(|| section.to_string());
        spec.origin = origin;
        name_bare_logs(&mut spec)?;

        // Choice: fio keeps bs, bsrange and bssplit in separate fields and bssplit wins at
        // I/O time; we rank bssplit over bsrange over bs per direction the same way.
        for dir in 0..3 {
            spec.bs[dir] = match (&bssplit[dir], bsrange[dir]) {
                (Some(split), _) => BlockSizes::Split(split.clone()),
                (None, Some((min, max))) if min == max => BlockSizes::Fixed(min),
                (None, Some((min, max))) => BlockSizes::Range { min, max },
                (None, None) => BlockSizes::Fixed(bs[dir]),
            };
        }

        if spec.workload == Workload::Dbench4 && spec.direct {
            return Err((
                "iosched_workload".into(),
                "dbench4 works through the page cache: it needs direct=0".into(),
            ));
        }

        check_verify(&mut spec)?;

        fix_depths(&mut spec, iodepth_low, batch_complete_max)?;

        spec.zones = strided_zones(zonemode_strided, zonesize, zonerange, zoneskip)?;

        spec.ioprio = resolve_ioprio(prio, prioclass);
        crate::replay::finalize_job(&mut spec, warnings)
            .map_err(|why| ("read_iolog".into(), why))?;
        settle_late_options(&mut spec, warnings);
        assert!(spec.numjobs >= 1, "numjobs is range-checked at parse");
        assert!(spec.rwmixread <= 100, "rwmixread is range-checked at parse");
        Ok(spec)
    }
}

type OptionError = (String, String);

/// A bare log option names its log after the job, so the job's name must be a file name.
fn name_bare_logs(spec: &mut JobSpec) -> Result<(), OptionError> {
    let logs = [
        ("write_bw_log", &mut spec.log_bw),
        ("write_iops_log", &mut spec.log_iops),
        ("write_lat_log", &mut spec.log_lat),
        ("write_hist_log", &mut spec.log_hist),
    ];
    for (option, prefix) in logs {
        let Some(prefix) = prefix else { continue };
        if prefix.is_empty() {
            // A bare log option: fio names the log after the job, so the job's name
            // becomes a file name and must be one.
            iosched_gate::check_name("the job name, which names its log files,", &spec.name)
                .map_err(|why| (option.to_string(), why))?;
            prefix.clone_from(&spec.name);
        }
    }
    Ok(())
}

/// fio's verify fix-ups and the combinations it refuses.
fn check_verify(spec: &mut JobSpec) -> Result<(), OptionError> {
    // fio: a pattern with no method set selects verify=pattern.
    if spec.verify_pattern.is_some() && spec.verify.is_none() {
        spec.verify = Some("pattern".to_string());
    }
    if spec.verify_only {
        // fio: "does not support workloads with the time_based option set".
        if spec.time_based {
            return Err((
                "verify_only".into(),
                "checks a sized workload's blocks once: it cannot run with time_based".into(),
            ));
        }
        if spec.verify.is_none() {
            return Err((
                "verify_only".into(),
                "needs verify= (the method the data was written with)".into(),
            ));
        }
    }
    Ok(())
}

/// Depth knobs, with fio's fix-ups (fixup_options()).
fn fix_depths(
    spec: &mut JobSpec,
    iodepth_low: Option<u32>,
    batch_complete_max: Option<u32>,
) -> Result<(), OptionError> {
    if spec.iodepth == 0 {
        return Err(("iodepth".into(), "must be at least 1".into()));
    }
    if spec.iodepth_batch_submit == 0 || spec.iodepth_batch_submit > spec.iodepth {
        spec.iodepth_batch_submit = spec.iodepth;
    }
    let complete_min = spec.iodepth_batch_complete_min;
    let complete_max = batch_complete_max.unwrap_or(complete_min);
    if complete_max < complete_min {
        return Err((
            "iodepth_batch_complete_max".into(),
            format!("{complete_max} is below iodepth_batch_complete_min ({complete_min})"),
        ));
    }
    // Choice: nothing can complete more than is in flight; clamp both to iodepth.
    spec.iodepth_batch_complete_max = complete_max.min(spec.iodepth);
    spec.iodepth_batch_complete_min = complete_min.min(spec.iodepth_batch_complete_max);
    spec.iodepth_low = match iodepth_low {
        Some(low) if low != 0 && low <= spec.iodepth => low,
        _ => spec.iodepth,
    };
    Ok(())
}

/// `zonemode=strided` (or a bare zonesize) as one record.
fn strided_zones(
    strided: Option<bool>,
    zonesize: u64,
    zonerange: u64,
    zoneskip: u64,
) -> Result<Option<StridedZones>, OptionError> {
    let zones = match strided.unwrap_or(zonesize > 0) {
        false => None,
        true if zonesize == 0 => {
            return Err((
                "zonemode".into(),
                "zonemode=strided needs a zonesize".into(),
            ))
        }
        true => Some(StridedZones {
            size: zonesize,
            range: if zonerange == 0 { zonesize } else { zonerange },
            skip: zoneskip,
        }),
    };
    Ok(zones)
}

/// Options whose meaning depends on others, settled once all are read.
fn settle_late_options(spec: &mut JobSpec, warnings: &mut Vec<String>) {
    if spec.pre_read {
        // Pre-reading fills the cache that invalidation would drop.
        spec.invalidate = false;
    }
    if spec.time_based && spec.runtime_ns.is_none() {
        warnings.push("time_based without runtime: fio runs until it is stopped".to_string());
    }
    if spec.cgroup_weight.is_some() && spec.cgroup.is_none() {
        warnings.push("cgroup_weight without cgroup has no effect".to_string());
    }
    if spec.thinktime_spin_ns > spec.thinktime_ns {
        // The spin is the busy part of the think time; it cannot be longer.
        warnings.push("thinktime_spin is longer than thinktime; using thinktime".to_string());
        spec.thinktime_spin_ns = spec.thinktime_ns;
    }
}

/// One `[section]` with its option lines.
struct Section {
    name: String,
    origin: Origin,
    options: Vec<(Origin, String)>,
}

/// An option line after expansion, split at `=`, with its table entry.
struct ParsedOption {
    origin: Origin,
    key: String,
    value: Option<String>,
    def: &'static OptDef,
    /// The line before expansion, for error messages.
    written: String,
}

/// Builds a [`JobSet`] from the lines of one or more job files.
pub(crate) struct Builder<'c> {
    ctx: &'c ParseContext,
    defaults: Draft,
    set: JobSet,
    group_id: u32,
    jobs_in_group: u32,
    /// Job clones so far (`numjobs` summed), against `ctx.clone_limit`.
    clones: u64,
}

fn error(origin: &Origin, kind: ParseErrorKind) -> ParseError {
    ParseError::new(&origin.path, origin.line, kind)
}

impl<'c> Builder<'c> {
    pub(crate) fn new(ctx: &'c ParseContext) -> Builder<'c> {
        Builder {
            ctx,
            defaults: Draft::new(),
            set: JobSet::default(),
            group_id: 0,
            jobs_in_group: 0,
            clones: 0,
        }
    }

    /// Add the jobs of one job file; `file_index` 0 is the first file.
    pub(crate) fn add_file(
        &mut self,
        lines: Vec<Line>,
        file_index: usize,
    ) -> Result<(), ParseError> {
        let mut sections: Vec<Section> = Vec::new();
        for line in lines {
            match line.kind {
                LineKind::Section(name) => sections.push(Section {
                    name,
                    origin: line.origin,
                    options: Vec::new(),
                }),
                LineKind::Option(text) => match sections.last_mut() {
                    Some(section) => section.options.push((line.origin, text)),
                    // The line layer already rejects these; stay an error, not a panic.
                    None => return Err(error(&line.origin, ParseErrorKind::OutsideSection(text))),
                },
            }
        }
        let mut first_job_of_file = true;
        for section in sections {
            let options = self.parse_options(&section)?;
            if section.name.starts_with("global") {
                let mut defaults = self.defaults.clone();
                self.apply_all(&mut defaults, &options)?;
                self.defaults = defaults;
                self.set.global_options.extend(options.iter().map(echo));
                continue;
            }
            let mut draft = self.defaults.clone();
            self.apply_all(&mut draft, &options)?;
            if file_index > 0 && first_job_of_file {
                draft.spec.stonewall = true;
            }
            first_job_of_file = false;
            // Blame the numjobs= line that pushes the run over (the section's if inherited).
            let numjobs_at = options
                .iter()
                .rfind(|option| option.key == "numjobs")
                .map_or(&section.origin, |option| &option.origin);
            self.count_clones(draft.spec.numjobs, numjobs_at)?;
            self.add_job(draft, &section, options.iter().map(echo).collect())?;
        }
        Ok(())
    }

    /// The finished set; an error if no file defined a job.
    pub(crate) fn finish(self, path: &str) -> Result<JobSet, ParseError> {
        if self.set.jobs.is_empty() {
            return Err(ParseError::new(path, 0, ParseErrorKind::NoJobs));
        }
        Ok(self.set)
    }

    fn parse_options(&self, section: &Section) -> Result<Vec<ParsedOption>, ParseError> {
        let mut out = Vec::new();
        for (origin, raw) in &section.options {
            let expanded = expand_line(raw, self.ctx).map_err(|why| {
                let (key, value) = raw.split_once('=').unwrap_or((raw, ""));
                error(
                    origin,
                    ParseErrorKind::BadValue {
                        option: key.trim_end().to_string(),
                        value: value.to_string(),
                        why,
                    },
                )
            })?;
            let (key, value) = match expanded.split_once('=') {
                Some((k, v)) => (k.trim_end().to_string(), Some(v.to_string())),
                None => (expanded.clone(), None),
            };
            let def = options::find(&key).ok_or_else(|| {
                let kind = match options::foreign_engines_of(&key) {
                    Some(engines) => ParseErrorKind::EngineOption {
                        option: key.clone(),
                        engines,
                    },
                    None => ParseErrorKind::UnknownOption(key.clone()),
                };
                error(origin, kind)
            })?;
            out.push(ParsedOption {
                origin: origin.clone(),
                key,
                value,
                def,
                written: raw.clone(),
            });
        }
        Ok(out)
    }

    /// Apply a section's options to `draft`: `kb_base` first, then the rest in order.
    fn apply_all(&mut self, draft: &mut Draft, options: &[ParsedOption]) -> Result<(), ParseError> {
        let (first, rest): (Vec<&ParsedOption>, Vec<&ParsedOption>) =
            options.iter().partition(|o| o.def.name == "kb_base");
        for option in first.into_iter().chain(rest) {
            self.apply_one(draft, option)?;
        }
        Ok(())
    }

    fn apply_one(&mut self, draft: &mut Draft, option: &ParsedOption) -> Result<(), ParseError> {
        let def = option.def;
        let may_be_bare = matches!(def.kind, options::Kind::Set | options::Kind::MaybeText);
        if option.value.is_none() && !may_be_bare {
            return Err(error(
                &option.origin,
                ParseErrorKind::MissingValue(option.key.clone()),
            ));
        }
        let mut warnings = Vec::new();
        let mut arg = Arg {
            text: option.value.as_deref(),
            kb_base: draft.spec.kb_base,
            warnings: &mut warnings,
        };
        let result = check_kind(def, &mut arg).and_then(|()| match def.apply {
            Some(apply) => apply(draft, &mut arg),
            None => Ok(()),
        });
        if let Err(mut why) = result {
            if option.written.contains('$') {
                why = format!("{why} (expanded from '{}')", option.written);
            }
            return Err(error(
                &option.origin,
                ParseErrorKind::BadValue {
                    option: option.key.clone(),
                    value: option.value.clone().unwrap_or_default(),
                    why,
                },
            ));
        }
        if def.apply.is_none() && !self.set.ignored_options.iter().any(|n| n == def.name) {
            self.set.ignored_options.push(def.name.to_string());
        }
        for w in warnings {
            self.warn(&option.origin, &format!("{}: {w}", option.key));
        }
        Ok(())
    }

    fn warn(&mut self, origin: &Origin, message: &str) {
        self.set
            .warnings
            .push(format!("{}:{}: {message}", origin.path, origin.line));
    }

    /// Adds a job's clones to the run's count; too many for the machine's memory is an error
    /// at `origin`, before anything is allocated for them.
    fn count_clones(&mut self, numjobs: u32, origin: &Origin) -> Result<(), ParseError> {
        self.clones += u64::from(numjobs);
        if self.clones > self.ctx.clone_limit {
            return Err(error(
                origin,
                ParseErrorKind::TooManyClones {
                    clones: self.clones,
                    limit: self.ctx.clone_limit,
                    available_mib: self.ctx.available_mib,
                },
            ));
        }
        Ok(())
    }

    fn add_job(
        &mut self,
        draft: Draft,
        section: &Section,
        echoed: Vec<(String, String)>,
    ) -> Result<(), ParseError> {
        let new_group = draft.new_group;
        let mut warnings = Vec::new();
        let mut spec = draft
            .finalize(&section.name, section.origin.clone(), &mut warnings)
            .map_err(|(option, why)| {
                error(&section.origin, ParseErrorKind::Invalid { option, why })
            })?;
        for w in warnings {
            self.warn(&section.origin, &w);
        }
        if let Some(target) = &spec.wait_for {
            let earlier = self.set.jobs.iter().filter(|j| &j.name == target).count();
            if earlier == 0 {
                return Err(error(
                    &section.origin,
                    ParseErrorKind::Invalid {
                        option: "wait_for".into(),
                        why: format!("no earlier job is named '{target}'"),
                    },
                ));
            }
            if earlier > 1 {
                let msg = format!("wait_for={target}: {earlier} earlier jobs have that name; fio waits for the first");
                self.warn(&section.origin, &msg);
            }
        }
        if (spec.stonewall || new_group) && self.jobs_in_group > 0 {
            self.group_id += 1;
            self.jobs_in_group = 0;
        }
        spec.group_id = self.group_id;
        self.jobs_in_group += 1;
        spec.options = echoed;
        self.set.jobs.push(spec);
        Ok(())
    }
}

/// The (key, value) pair fio echoes; bare options echo an empty value.
fn echo(option: &ParsedOption) -> (String, String) {
    (option.key.clone(), option.value.clone().unwrap_or_default())
}
