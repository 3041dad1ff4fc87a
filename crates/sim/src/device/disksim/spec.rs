//! The model file of a DiskSim-validated drive (`DRIVE.toml`), as `iosched calibrate
//! --disksim-import` writes it and the validated model reads it.
//!
//! Every key is one DiskSim parameter, renamed to the project's style with its unit last; the
//! file written by the importer names, beside each key, the DiskSim file and parameter it came
//! from. Times are in ms, as in DiskSim's own files.

use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

/// One zone (DiskSim `dm_layout_g1_zone`): a run of *physical* cylinders with one track size.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ZoneSpec {
    pub first_cylinder: u32,
    pub last_cylinder: u32,
    pub sectors_per_track: u32,
    /// Angle of the zone's first block, in sectors.
    pub offset_sectors: f64,
    /// Blocks left unused at the zone's front.
    pub dead_space_sectors: u32,
    pub track_skew_sectors: f64,
    pub cylinder_skew_sectors: f64,
    pub spares: u32,
    /// Slipped sectors, numbered from the zone's first physical sector.
    pub slips: Vec<u32>,
}

/// The validated drive's parameters.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    pub model: String,
    pub name: String,
    pub rpm: f64,
    pub surfaces: u32,
    pub cylinders: u32,
    /// LBN-to-PBN mapping: 0 every cylinder starts on surface 0; 1 and 2 serpentine.
    pub mapping: u32,
    /// DiskSim sparing scheme: 7 slips to the end, 8 spares per range of cylinders, 9 spares
    /// per zone.
    pub sparing: u32,
    pub sparing_range_cylinders: u32,
    pub single_cylinder_seek_ms: f64,
    pub head_switch_ms: f64,
    pub write_settle_ms: f64,
    /// (distance in cylinders, seek time in ms), increasing distances; empty when the drive
    /// gives a seek equation instead.
    pub seek_curve: Vec<(u32, f64)>,
    /// Ruemmler and Wilkes' seek equation (DiskSim "HPL seek equation values", `Seek type =
    /// hplplus10`): [boundary in cylinders, a, b, c, e, single-cylinder or -1]; a + b·√d ms
    /// below the boundary, c + e·d from it. Empty with a measured curve.
    pub seek_equation: Vec<f64>,
    /// The seek times over 1 to 10 cylinders, which the equation leaves to a table ("First ten
    /// seek times"). Empty with a measured curve.
    pub first_ten_seeks_ms: Vec<f64>,
    pub bus_ms_per_sector: f64,
    pub read_hit_after_read_ms: f64,
    pub read_hit_after_write_ms: f64,
    pub read_miss_after_read_ms: f64,
    pub read_miss_after_write_ms: f64,
    pub write_hit_after_read_ms: f64,
    pub write_hit_after_write_ms: f64,
    pub write_miss_after_read_ms: f64,
    pub write_miss_after_write_ms: f64,
    pub segments: u32,
    pub segment_sectors: u32,
    pub write_segments: u32,
    pub separate_write_segment: bool,
    /// DiskSim "Buffer continuous read": 0 none, 1 to the track's end, 2 to the cylinder's
    /// end, 3 until the segment is full, 4 a track ahead of a sequential stream.
    pub prefetch_mode: u32,
    pub min_read_ahead_sectors: u32,
    pub max_read_ahead_sectors: u32,
    pub read_ahead_over_requested: bool,
    pub read_any_free_blocks: bool,
    /// 0 write-through, 1 write-back for appending streams, 2 write-back.
    pub fast_write_level: u32,
    pub read_hits_on_write_data: bool,
    pub combine_sequential_writes: bool,
    pub write_hit_stops_prefetch: bool,
    /// With write-back, buffered writes wait in their segments and the heads write them
    /// later, nearest first: while the drive is idle, when a write finds every write segment
    /// dirty, and for a flush or a FUA write. Off (every validated drive, as DiskSim's disk
    /// model): each buffered write goes to the media at once, in arrival order.
    #[serde(default)]
    pub deferred_destage: bool,
    /// A read-ahead may stop in the middle of a sector; otherwise only at sector boundaries.
    pub stop_prefetch_in_sector: bool,
    /// The drive's side of the SCSI bus: transfer rates and the overheads of disconnecting,
    /// reselecting and completing.
    pub controller: ControllerSpec,
    pub zone: Vec<ZoneSpec>,
    /// The drive's own command queue (DiskSim's disk `Max queue length` and `Scheduler`);
    /// absent in the converted files, whose drives were validated one command at a time.
    #[serde(default)]
    pub queue: QueueSpec,
}

/// How many commands the drive holds and how it picks the next one.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// Commands held at once (DiskSim "Max queue length"; NCQ or TCQ tags). 1 in every
    /// validation run of `valid/`.
    pub depth: u32,
    /// DiskSim "Scheduling policy" (`disksim_ioqueue.h`): 1 first come first served, 8
    /// shortest positioning time first (`SPTF_OPT`).
    pub policy: u32,
    /// A command that has waited this long is served before any positioning-time choice,
    /// oldest first (ms; 0: never).
    pub age_limit_ms: f64,
}

impl Default for QueueSpec {
    fn default() -> QueueSpec {
        QueueSpec {
            depth: 1,
            policy: POLICY_FCFS,
            age_limit_ms: 0.0,
        }
    }
}

/// DiskSim's `FCFS`.
pub const POLICY_FCFS: u32 = 1;
/// DiskSim's `SPTF_OPT`: the queued command the heads reach soonest.
pub const POLICY_SPTF: u32 = 8;

/// The drive's bus protocol (DiskSim's `disksim_disk` overheads and its bus's transfer
/// times). The newer drives of `valid/` set every overhead here to 0; the older ones spend
/// most of a cache hit's time in them.
/// `Default`: every overhead 0 and every protocol switch off (a drive with no bus protocol).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ControllerSpec {
    /// The bus's time per block read or written (`disksim_bus` "Read/Write block transfer
    /// time"); a block takes the larger of this and `bus_ms_per_sector`.
    pub bus_read_block_ms: f64,
    pub bus_write_block_ms: f64,
    /// Sent with a read's or a write's completion ("Read/Write completion overhead").
    pub read_completion_ms: f64,
    pub write_completion_ms: f64,
    /// Before a data transfer starts ("Data preparation overhead").
    pub data_prep_ms: f64,
    /// Taking the bus back to send data or a completion ("First reselect overhead").
    pub first_reselect_ms: f64,
    /// Letting the bus go after a read miss's command ("Read disconnect afterread/afterwrite")
    /// and after a write's data ("Write disconnect overhead").
    pub read_disconnect_after_read_ms: f64,
    pub read_disconnect_after_write_ms: f64,
    pub write_disconnect_ms: f64,
    /// A read miss reconnects once this fraction of its blocks is buffered ("High (read) water
    /// mark", by request size when "Set watermark by reqsize", else by segment size).
    pub read_water_mark: f64,
    pub water_mark_by_request_size: bool,
    /// The drive keeps the bus through a command ("Never disconnect").
    pub never_disconnect: bool,
    /// A read hit with the heads idle starts a read-ahead ("Read-ahead on idle hit").
    pub read_ahead_on_idle_hit: bool,
    /// The least positioning time of a write that does not follow the previous one
    /// ("Minimum seek delay").
    pub minimum_seek_ms: f64,
    /// A write that does not append to the previous write disconnects once more before its
    /// data ("Extra write disconnect"): the command takes `extra_command_ms` (the heads wait
    /// `extra_seek_delta_ms` more), the drive disconnects (`extra_disconnect_ms`), waits
    /// `extra_inter_disconnect_ms`, reselects and takes the data, disconnects again
    /// (`extra_second_disconnect_ms`) and reselects for the completion with
    /// `other_reselect_ms` ("Extradisc ..." overheads, "Other reselect overhead").
    pub extra_write_disconnect: bool,
    pub extra_command_ms: f64,
    pub extra_seek_delta_ms: f64,
    pub extra_disconnect_ms: f64,
    pub extra_inter_disconnect_ms: f64,
    pub extra_second_disconnect_ms: f64,
    pub other_reselect_ms: f64,
}

/// The `model` value of these files.
pub const MODEL: &str = "disksim-hdd";

impl DiskSpec {
    /// Reads a model file; the error names the file and, for TOML errors, the line.
    pub fn load(path: &Path) -> Result<DiskSpec, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("{}: cannot read: {error}", path.display()))?;
        DiskSpec::parse(&text).map_err(|message| format!("{}: {message}", path.display()))
    }

    /// Parses a model file's text.
    pub fn parse(text: &str) -> Result<DiskSpec, String> {
        DiskSpec::parse_located(text).map_err(|(line, message)| match line {
            0 => message,
            line => format!("line {line}: {message}"),
        })
    }

    /// Parses a model file's text; an error comes with its 1-based line (0: the whole file).
    pub fn parse_located(text: &str) -> Result<DiskSpec, (usize, String)> {
        let spec: DiskSpec = toml::from_str(text).map_err(|error| {
            let line = error.span().map_or(0, |span| {
                text[..span.start.min(text.len())].matches('\n').count() + 1
            });
            (line, error.message().trim().to_string())
        })?;
        spec.validate().map_err(|message| (0, message))?;
        Ok(spec)
    }

    /// Rejects parameters the model cannot run with.
    pub fn validate(&self) -> Result<(), String> {
        if self.model != MODEL {
            return Err(format!("model is '{}', expected '{MODEL}'", self.model));
        }
        if self.rpm.is_nan() || self.rpm <= 0.0 || self.surfaces == 0 || self.zone.is_empty() {
            return Err("rpm, surfaces and at least one zone are required".to_string());
        }
        if ![1, 3, 7, 8, 9].contains(&self.sparing) || self.mapping > 2 {
            return Err(format!(
                "sparing {} / mapping {} not supported",
                self.sparing, self.mapping
            ));
        }
        if self.sparing_range_cylinders == 0 {
            return Err("sparing_range_cylinders must be at least 1".to_string());
        }
        self.validate_seek()?;
        self.validate_controller()?;
        self.validate_queue()?;
        if self.segments == 0 || self.segment_sectors == 0 || self.prefetch_mode > 4 {
            return Err("segments, segment_sectors > 0 and prefetch_mode 0-4 are required".into());
        }
        if self.fast_write_level > 2 {
            return Err(format!(
                "fast_write_level {} is not 0, 1 or 2",
                self.fast_write_level
            ));
        }
        for (index, zone) in self.zone.iter().enumerate() {
            // Choice: a zone may end past `cylinders`, as hp_c2490a's last does (2498-2629 of
            // 2629 cylinders); DiskSim maps it regardless and `cylinders` decides nothing.
            if zone.sectors_per_track == 0
                || zone.first_cylinder > zone.last_cylinder
                || zone.last_cylinder > self.cylinders.saturating_add(1000)
            {
                return Err(format!("zone {index}: bad cylinders or sectors per track"));
            }
            self.check_zone_room(index, zone)?;
        }
        if self
            .zone
            .windows(2)
            .any(|w| w[0].last_cylinder >= w[1].first_cylinder)
        {
            return Err("zones must be listed by increasing, disjoint cylinders".to_string());
        }
        Ok(())
    }

    /// A measured curve, or the equation with its ten first seeks.
    fn validate_seek(&self) -> Result<(), String> {
        if self.seek_curve.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err("seek_curve needs increasing distances".to_string());
        }
        let equation = !self.seek_equation.is_empty() || !self.first_ten_seeks_ms.is_empty();
        if self.seek_curve.is_empty() == equation
            && (self.seek_equation.len() == 6) == equation
            && (self.first_ten_seeks_ms.len() == 10) == equation
            && self.seek_equation.first().is_none_or(|&b| b >= 1.0)
        {
            return Ok(());
        }
        Err(
            "give seek_curve, or seek_equation (6 values, boundary >= 1) and 10 \
             first_ten_seeks_ms"
                .to_string(),
        )
    }

    fn validate_queue(&self) -> Result<(), String> {
        let q = &self.queue;
        if !(1..=256).contains(&q.depth) {
            return Err(format!("queue.depth {} must lie in 1..=256", q.depth));
        }
        if ![POLICY_FCFS, POLICY_SPTF].contains(&q.policy) {
            return Err(format!(
                "queue.policy {} is not {POLICY_FCFS} (FCFS) or {POLICY_SPTF} (SPTF)",
                q.policy
            ));
        }
        if !(0.0..1e7).contains(&q.age_limit_ms) {
            return Err("queue.age_limit_ms must lie in 0..1e7 ms".to_string());
        }
        Ok(())
    }

    fn validate_controller(&self) -> Result<(), String> {
        let c = &self.controller;
        let times = [
            c.bus_read_block_ms,
            c.bus_write_block_ms,
            c.read_completion_ms,
            c.write_completion_ms,
            c.data_prep_ms,
            c.first_reselect_ms,
            c.read_disconnect_after_read_ms,
            c.read_disconnect_after_write_ms,
            c.write_disconnect_ms,
            c.minimum_seek_ms,
            c.extra_command_ms,
            c.extra_seek_delta_ms,
            c.extra_disconnect_ms,
            c.extra_inter_disconnect_ms,
            c.extra_second_disconnect_ms,
            c.other_reselect_ms,
            self.bus_ms_per_sector,
        ];
        if times.iter().any(|t| !(0.0..1e6).contains(t)) {
            return Err("controller times and bus_ms_per_sector must lie in 0..1e6 ms".into());
        }
        if !(0.0..=1.0).contains(&c.read_water_mark) {
            return Err("controller.read_water_mark must lie in 0..=1".to_string());
        }
        Ok(())
    }

    /// The dead space, spares and slips must leave the zone blocks to hold (the layout
    /// subtracts them).
    fn check_zone_room(&self, index: usize, zone: &ZoneSpec) -> Result<(), String> {
        let spt = u64::from(zone.sectors_per_track);
        let per_cylinder = spt * u64::from(self.surfaces);
        let cylinders = u64::from(zone.last_cylinder - zone.first_cylinder + 1);
        let spares = u64::from(zone.spares);
        let taken = u64::from(zone.dead_space_sectors)
            + match self.sparing {
                1 => spares * spt,
                3 => spares * cylinders * u64::from(self.surfaces),
                7 => zone.slips.len() as u64,
                8 => spares * (cylinders / u64::from(self.sparing_range_cylinders)),
                _ => spares,
            };
        let per_unit = match self.sparing {
            1 => per_cylinder * cylinders,
            3 => spt,
            7 => per_cylinder,
            8 => per_cylinder * u64::from(self.sparing_range_cylinders),
            _ => per_cylinder * cylinders,
        };
        if taken >= cylinders * per_cylinder || spares >= per_unit {
            return Err(format!(
                "zone {index}: dead space, spares and slips leave no blocks"
            ));
        }
        Ok(())
    }
}

/// Where each key came from, for the comments of a written model file.
pub struct Sources<'a> {
    pub commit: &'a str,
    pub parv: &'a str,
    pub diskspecs: &'a str,
    pub model: &'a str,
    pub seek: &'a str,
}

fn push(out: &mut String, source: &str, key: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "# {source}\n{key} = {value}");
}

/// Writes `spec` as a model file whose comments name each value's DiskSim source.
pub fn write_toml(spec: &DiskSpec, sources: &Sources) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {}: converted by `iosched calibrate --disksim-import` from DiskSim 4.0's valid/\n\
         # (github.com/benh/disksim, commit {}): {} -> {} -> {} -> {}.\n\
         # Times in ms, as in DiskSim's files.",
        spec.name, sources.commit, sources.parv, sources.diskspecs, sources.model, sources.seek
    );
    let _ = writeln!(out, "model = \"{}\"\nname = \"{}\"", spec.model, spec.name);
    write_mechanics(&mut out, spec, sources);
    write_cache(&mut out, spec, sources.diskspecs);
    write_controller(&mut out, spec, sources);
    write_zones(&mut out, spec, sources.model);
    write_queue(&mut out, spec);
    out
}

fn write_mechanics(out: &mut String, spec: &DiskSpec, sources: &Sources) {
    let m = sources.model;
    push(
        out,
        &format!("{m}: Rotation speed (in rpms)"),
        "rpm",
        float(spec.rpm),
    );
    push(
        out,
        &format!("{m}: Number of data surfaces"),
        "surfaces",
        spec.surfaces,
    );
    push(
        out,
        &format!("{m}: Number of cylinders"),
        "cylinders",
        spec.cylinders,
    );
    push(
        out,
        &format!("{m}: LBN-to-PBN mapping scheme"),
        "mapping",
        spec.mapping,
    );
    push(
        out,
        &format!("{m}: Sparing scheme used"),
        "sparing",
        spec.sparing,
    );
    let range = format!("{m}: Rangesize for sparing");
    push(
        out,
        &range,
        "sparing_range_cylinders",
        spec.sparing_range_cylinders,
    );
    let single = format!("{m}: Single cylinder seek time");
    push(
        out,
        &single,
        "single_cylinder_seek_ms",
        float(spec.single_cylinder_seek_ms),
    );
    push(
        out,
        &format!("{m}: Head switch time"),
        "head_switch_ms",
        float(spec.head_switch_ms),
    );
    let settle = format!("{m}: Add. write settling delay");
    push(out, &settle, "write_settle_ms", float(spec.write_settle_ms));
    write_seek(out, spec, sources);
}

/// The measured curve, or the equation and its first ten seeks.
fn write_seek(out: &mut String, spec: &DiskSpec, sources: &Sources) {
    let (m, s) = (sources.model, sources.seek);
    let points: Vec<String> = spec
        .seek_curve
        .iter()
        .map(|(d, t)| format!("[{d}, {}]", float(*t)))
        .collect();
    let curve = if points.is_empty() {
        "[]".to_string()
    } else {
        format!("[\n  {},\n]", points.join(",\n  "))
    };
    push(
        out,
        &format!("{s}: Seek distances measured (cylinders, ms)"),
        "seek_curve",
        curve,
    );
    let list = |values: &[f64]| {
        let items: Vec<String> = values.iter().map(|v| float(*v)).collect();
        format!("[{}]", items.join(", "))
    };
    push(
        out,
        &format!("{m}: HPL seek equation values"),
        "seek_equation",
        list(&spec.seek_equation),
    );
    push(
        out,
        &format!("{m}: First ten seek times"),
        "first_ten_seeks_ms",
        list(&spec.first_ten_seeks_ms),
    );
}

/// HP C2247A's extra write disconnect, as (DiskSim parameter, key, value).
fn extra_disconnect(c: &ControllerSpec) -> [(&'static str, &'static str, f64); 6] {
    [
        (
            "Extradisc command overhead",
            "extra_command_ms",
            c.extra_command_ms,
        ),
        (
            "Extradisc seek delta",
            "extra_seek_delta_ms",
            c.extra_seek_delta_ms,
        ),
        (
            "Extradisc disconnect overhead",
            "extra_disconnect_ms",
            c.extra_disconnect_ms,
        ),
        (
            "Extradisc inter-disconnect delay",
            "extra_inter_disconnect_ms",
            c.extra_inter_disconnect_ms,
        ),
        (
            "Extradisc 2nd disconnect overhead",
            "extra_second_disconnect_ms",
            c.extra_second_disconnect_ms,
        ),
        (
            "Other reselect overhead",
            "other_reselect_ms",
            c.other_reselect_ms,
        ),
    ]
}

fn write_controller(out: &mut String, spec: &DiskSpec, sources: &Sources) {
    let (d, p) = (sources.diskspecs, sources.parv);
    let c = &spec.controller;
    let _ = writeln!(out, "\n[controller]");
    let bus = format!("{p}: the drive's disksim_bus");
    let read = format!("{bus}: Read block transfer time");
    push(out, &read, "bus_read_block_ms", float(c.bus_read_block_ms));
    let write = format!("{bus}: Write block transfer time");
    push(
        out,
        &write,
        "bus_write_block_ms",
        float(c.bus_write_block_ms),
    );
    let floats = [
        (
            "Read completion overhead",
            "read_completion_ms",
            c.read_completion_ms,
        ),
        (
            "Write completion overhead",
            "write_completion_ms",
            c.write_completion_ms,
        ),
        ("Data preparation overhead", "data_prep_ms", c.data_prep_ms),
        (
            "First reselect overhead",
            "first_reselect_ms",
            c.first_reselect_ms,
        ),
        (
            "Read disconnect afterread",
            "read_disconnect_after_read_ms",
            c.read_disconnect_after_read_ms,
        ),
        (
            "Read disconnect afterwrite",
            "read_disconnect_after_write_ms",
            c.read_disconnect_after_write_ms,
        ),
        (
            "Write disconnect overhead",
            "write_disconnect_ms",
            c.write_disconnect_ms,
        ),
        ("Minimum seek delay", "minimum_seek_ms", c.minimum_seek_ms),
        (
            "High (read) water mark",
            "read_water_mark",
            c.read_water_mark,
        ),
    ];
    for (param, key, value) in floats.into_iter().chain(extra_disconnect(c)) {
        push(out, &format!("{d}: {param}"), key, float(value));
    }
    let bools = [
        (
            "Set watermark by reqsize",
            "water_mark_by_request_size",
            c.water_mark_by_request_size,
        ),
        ("Never disconnect", "never_disconnect", c.never_disconnect),
        (
            "Read-ahead on idle hit",
            "read_ahead_on_idle_hit",
            c.read_ahead_on_idle_hit,
        ),
        (
            "Extra write disconnect",
            "extra_write_disconnect",
            c.extra_write_disconnect,
        ),
    ];
    for (param, key, value) in bools {
        push(out, &format!("{d}: {param}"), key, value);
    }
}

fn write_cache(out: &mut String, spec: &DiskSpec, d: &str) {
    write_cache_overheads(out, spec, d);
    write_cache_segments(out, spec, d);
}

/// The controller's per-command overheads and the bus's transfer time.
fn write_cache_overheads(out: &mut String, spec: &DiskSpec, d: &str) {
    let floats: [(&str, &str, f64); 9] = [
        (
            "Bulk sector transfer time",
            "bus_ms_per_sector",
            spec.bus_ms_per_sector,
        ),
        (
            "Read hit over. after read",
            "read_hit_after_read_ms",
            spec.read_hit_after_read_ms,
        ),
        (
            "Read hit over. after write",
            "read_hit_after_write_ms",
            spec.read_hit_after_write_ms,
        ),
        (
            "Read miss over. after read",
            "read_miss_after_read_ms",
            spec.read_miss_after_read_ms,
        ),
        (
            "Read miss over. after write",
            "read_miss_after_write_ms",
            spec.read_miss_after_write_ms,
        ),
        (
            "Write hit over. after read",
            "write_hit_after_read_ms",
            spec.write_hit_after_read_ms,
        ),
        (
            "Write hit over. after write",
            "write_hit_after_write_ms",
            spec.write_hit_after_write_ms,
        ),
        (
            "Write miss over. after read",
            "write_miss_after_read_ms",
            spec.write_miss_after_read_ms,
        ),
        (
            "Write miss over. after write",
            "write_miss_after_write_ms",
            spec.write_miss_after_write_ms,
        ),
    ];
    for (param, key, value) in floats {
        push(out, &format!("{d}: {param}"), key, float(value));
    }
}

/// How the buffer is cut into segments and how reads and writes use them.
fn write_cache_segments(out: &mut String, spec: &DiskSpec, d: &str) {
    let ints: [(&str, &str, u32); 7] = [
        ("Number of buffer segments", "segments", spec.segments),
        (
            "Segment size (in blks)",
            "segment_sectors",
            spec.segment_sectors,
        ),
        (
            "Maximum number of write segments",
            "write_segments",
            spec.write_segments,
        ),
        (
            "Buffer continuous read",
            "prefetch_mode",
            spec.prefetch_mode,
        ),
        (
            "Minimum read-ahead (blks)",
            "min_read_ahead_sectors",
            spec.min_read_ahead_sectors,
        ),
        (
            "Maximum read-ahead (blks)",
            "max_read_ahead_sectors",
            spec.max_read_ahead_sectors,
        ),
        (
            "Fast write level",
            "fast_write_level",
            spec.fast_write_level,
        ),
    ];
    for (param, key, value) in ints {
        push(out, &format!("{d}: {param}"), key, value);
    }
    let bools: [(&str, &str, bool); 7] = [
        (
            "Use separate write segment",
            "separate_write_segment",
            spec.separate_write_segment,
        ),
        (
            "Read-ahead over requested",
            "read_ahead_over_requested",
            spec.read_ahead_over_requested,
        ),
        (
            "Read any free blocks",
            "read_any_free_blocks",
            spec.read_any_free_blocks,
        ),
        (
            "Allow read hits on write data",
            "read_hits_on_write_data",
            spec.read_hits_on_write_data,
        ),
        (
            "Combine seq writes",
            "combine_sequential_writes",
            spec.combine_sequential_writes,
        ),
        (
            "Write hit stop prefetch",
            "write_hit_stops_prefetch",
            spec.write_hit_stops_prefetch,
        ),
        (
            "Stop prefetch in sector",
            "stop_prefetch_in_sector",
            spec.stop_prefetch_in_sector,
        ),
    ];
    for (param, key, value) in bools {
        push(out, &format!("{d}: {param}"), key, value);
    }
    // iosched's own keys, written only where a drive departs from DiskSim's model (never
    // for a converted drive), so a preset written out reads back as the same drive.
    if spec.deferred_destage {
        push(out, "iosched: destage deferred", "deferred_destage", true);
    }
}

/// The `[queue]` table, when the drive holds more than DiskSim's one command.
fn write_queue(out: &mut String, spec: &DiskSpec) {
    let q = &spec.queue;
    if *q == QueueSpec::default() {
        return;
    }
    let _ = writeln!(out, "\n[queue]");
    push(out, "iosched: commands held", "depth", q.depth);
    push(out, "iosched: 1 FCFS, 8 SPTF", "policy", q.policy);
    push(
        out,
        "iosched: oldest first after",
        "age_limit_ms",
        float(q.age_limit_ms),
    );
}

fn write_zones(out: &mut String, spec: &DiskSpec, m: &str) {
    for zone in &spec.zone {
        let _ = writeln!(out, "\n# {m}: dm_layout_g1_zone\n[[zone]]");
        let _ = writeln!(out, "first_cylinder = {}", zone.first_cylinder);
        let _ = writeln!(out, "last_cylinder = {}", zone.last_cylinder);
        let _ = writeln!(out, "sectors_per_track = {}", zone.sectors_per_track);
        let _ = writeln!(out, "offset_sectors = {}", float(zone.offset_sectors));
        let _ = writeln!(out, "dead_space_sectors = {}", zone.dead_space_sectors);
        let _ = writeln!(
            out,
            "track_skew_sectors = {}",
            float(zone.track_skew_sectors)
        );
        let _ = writeln!(
            out,
            "cylinder_skew_sectors = {}",
            float(zone.cylinder_skew_sectors)
        );
        let _ = writeln!(out, "spares = {}", zone.spares);
        let slips: Vec<String> = zone.slips.iter().map(u32::to_string).collect();
        let _ = writeln!(out, "slips = [{}]", slips.join(", "));
    }
}

/// A float as TOML: always with a decimal point.
fn float(value: f64) -> String {
    let text = format!("{value}");
    if text.contains('.') || text.contains('e') {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = include_str!("testdata_small.toml");

    #[test]
    fn a_zone_without_room_for_blocks_is_refused() {
        let text = TINY.replace("spares = 3", "spares = 80");
        let error = DiskSpec::parse(&text).unwrap_err();
        assert!(
            error.contains("zone 0: dead space, spares and slips leave no blocks"),
            "{error}"
        );
    }

    #[test]
    fn an_unknown_key_names_its_line() {
        let text = TINY.replace("rpm = 6000.0", "rpm = 6000.0\nbogus = 1");
        let (line, message) = DiskSpec::parse_located(&text).unwrap_err();
        assert_eq!(
            line,
            text.lines().position(|l| l == "bogus = 1").unwrap() + 1
        );
        assert!(message.contains("bogus"), "{message}");
    }

    #[test]
    fn a_drive_gives_a_seek_curve_or_a_whole_equation() {
        let both = TINY.replace(
            "seek_equation = []",
            "seek_equation = [300.0, 1.0, 1.0, 1.0, 1.0, -1.0]",
        );
        assert!(DiskSpec::parse(&both)
            .unwrap_err()
            .contains("seek_equation"));
        let short = TINY
            .replace(
                "seek_curve = [[1, 1.0], [2, 1.5], [10, 3.0]]",
                "seek_curve = []",
            )
            .replace(
                "seek_equation = []",
                "seek_equation = [300.0, 1.0, 1.0, 1.0, 1.0, -1.0]",
            );
        assert!(DiskSpec::parse(&short)
            .unwrap_err()
            .contains("first_ten_seeks_ms"));
        let whole = short.replace(
            "first_ten_seeks_ms = []",
            "first_ten_seeks_ms = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]",
        );
        assert!(DiskSpec::parse(&whole).is_ok());
    }

    #[test]
    fn overlapping_zones_are_refused() {
        let text = TINY.replace("first_cylinder = 10", "first_cylinder = 3");
        assert!(DiskSpec::parse(&text).unwrap_err().contains("disjoint"));
    }
}
