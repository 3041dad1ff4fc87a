//! Reads DiskSim 4.0's drive files and builds a [`DiskSpec`] from them.
//!
//! A drive's files form a chain: the `.parv` names its `.diskspecs` with `source FILE`; the
//! `disksim_disk` block there names the `.model` (`Model = source FILE`), whose `dm_mech_g1`
//! block names the `.seek` table (`Full seek curve = FILE`). DiskSim's parameter syntax is
//! `NAME { key = value, ... }` with values that are words, nested blocks or `[ ... ]` lists,
//! and `#` comments; this module reads it into a small tree and takes the keys it needs,
//! failing with the file and key when one is missing or malformed.

use std::path::{Path, PathBuf};

use super::spec::{ControllerSpec, DiskSpec, ZoneSpec, MODEL};

/// A value in a DiskSim parameter file.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Word(String),
    Block(Vec<(String, Value)>),
    List(Vec<Value>),
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Punct(char),
}

fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut word = String::new();
        for ch in line.chars() {
            if "{}[],=".contains(ch) {
                flush(&mut word, &mut tokens);
                tokens.push(Token::Punct(ch));
            } else {
                word.push(ch);
            }
        }
        flush(&mut word, &mut tokens);
    }
    tokens
}

fn flush(word: &mut String, tokens: &mut Vec<Token>) {
    let trimmed = word.trim();
    if !trimmed.is_empty() {
        tokens.push(Token::Word(trimmed.to_string()));
    }
    word.clear();
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Result<Token, String> {
        let token = self
            .tokens
            .get(self.at)
            .cloned()
            .ok_or("unexpected end of file")?;
        self.at += 1;
        Ok(token)
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.next()? {
            Token::Punct('[') => self.list(),
            Token::Punct('{') => self.block(),
            Token::Word(word) => {
                if self.peek() == Some(&Token::Punct('{')) {
                    self.at += 1;
                    self.block()
                } else {
                    Ok(Value::Word(word))
                }
            }
            Token::Punct(ch) => Err(format!("unexpected '{ch}'")),
        }
    }

    fn list(&mut self) -> Result<Value, String> {
        let mut items = Vec::new();
        loop {
            match self.peek() {
                Some(Token::Punct(']')) => {
                    self.at += 1;
                    return Ok(Value::List(items));
                }
                Some(Token::Punct(',')) => self.at += 1,
                _ => items.push(self.value()?),
            }
        }
    }

    fn block(&mut self) -> Result<Value, String> {
        let mut entries = Vec::new();
        loop {
            match self.next()? {
                Token::Punct('}') => return Ok(Value::Block(entries)),
                Token::Punct(',') => {}
                Token::Word(key) => {
                    if self.next()? != Token::Punct('=') {
                        return Err(format!("expected '=' after '{key}'"));
                    }
                    entries.push((key, self.value()?));
                }
                Token::Punct(ch) => return Err(format!("unexpected '{ch}' in a block")),
            }
        }
    }
}

/// The first block of a file (`KIND NAME { ... }`).
fn parse_block_file(path: &Path) -> Result<Vec<(String, Value)>, String> {
    let text = read(path)?;
    let mut parser = Parser {
        tokens: tokenize(&text),
        at: 0,
    };
    while let Some(token) = parser.peek() {
        if matches!(token, Token::Word(_))
            && parser.tokens.get(parser.at + 1) == Some(&Token::Punct('{'))
        {
            match parser
                .value()
                .map_err(|e| format!("{}: {e}", path.display()))?
            {
                Value::Block(entries) => return Ok(entries),
                _ => unreachable!("a word before '{{' parses as a block"),
            }
        }
        parser.at += 1;
    }
    Err(format!("{}: no parameter block", path.display()))
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map_err(|error| format!("{}: cannot read: {error}", path.display()))
}

/// Looks up keys in one block, naming the file in every error.
struct Block<'a> {
    file: &'a Path,
    entries: &'a [(String, Value)],
}

impl<'a> Block<'a> {
    fn get(&self, key: &str) -> Result<&'a Value, String> {
        self.entries
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
            .ok_or_else(|| format!("{}: missing '{key}'", self.file.display()))
    }

    fn word(&self, key: &str) -> Result<&'a str, String> {
        match self.get(key)? {
            Value::Word(word) => Ok(word),
            _ => Err(format!(
                "{}: '{key}' is not a single value",
                self.file.display()
            )),
        }
    }

    fn float(&self, key: &str) -> Result<f64, String> {
        let word = self.word(key)?;
        word.parse().map_err(|_| {
            format!(
                "{}: '{key}' = '{word}' is not a number",
                self.file.display()
            )
        })
    }

    fn int(&self, key: &str) -> Result<u32, String> {
        let word = self.word(key)?;
        word.parse()
            .map_err(|_| format!("{}: '{key}' = '{word}' is not a count", self.file.display()))
    }

    fn flag(&self, key: &str) -> Result<bool, String> {
        Ok(self.int(key)? != 0)
    }

    fn block(&self, key: &str) -> Result<Block<'a>, String> {
        match self.get(key)? {
            Value::Block(entries) => Ok(Block {
                file: self.file,
                entries,
            }),
            _ => Err(format!("{}: '{key}' is not a block", self.file.display())),
        }
    }

    fn list(&self, key: &str) -> Result<&'a [Value], String> {
        match self.get(key)? {
            Value::List(items) => Ok(items),
            _ => Err(format!("{}: '{key}' is not a list", self.file.display())),
        }
    }
}

/// The DiskSim files a drive's conversion read, relative to its `valid/` folder.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    pub parv: String,
    pub diskspecs: String,
    pub model: String,
    pub seek: String,
}

/// Converts the drive whose parameter file is `dir/NAME.parv`.
pub fn import_drive(dir: &Path, name: &str) -> Result<(DiskSpec, Chain), String> {
    let parv = format!("{name}.parv");
    let parv_text = read(&dir.join(&parv))?;
    let diskspecs = parv_text
        .lines()
        .find_map(|line| line.trim().strip_prefix("source "))
        .map(|file| file.trim().to_string())
        .ok_or_else(|| format!("{}: no 'source FILE' line", dir.join(&parv).display()))?;
    let specs_path = dir.join(&diskspecs);
    let specs_entries = parse_block_file(&specs_path)?;
    let specs = Block {
        file: &specs_path,
        entries: &specs_entries,
    };
    let model = source_name(specs.word("Model")?, &specs_path)?;
    let model_path = dir.join(&model);
    let model_entries = parse_block_file(&model_path)?;
    let disk = Block {
        file: &model_path,
        entries: &model_entries,
    };
    let mech = disk.block("Mechanical Model")?;
    let mut spec = empty_spec(name);
    // An extracted curve has its file; the older drives' equation lives in the model.
    let seek = match mech.word("Seek type")? {
        "extracted" => {
            let seek = mech.word("Full seek curve")?.to_string();
            spec.seek_curve = read_seek_curve(&dir.join(&seek))?;
            seek
        }
        "hplplus10" => {
            spec.seek_equation = floats(&mech, "HPL seek equation values")?;
            spec.first_ten_seeks_ms = floats(&mech, "First ten seek times")?;
            model.clone()
        }
        other => {
            return Err(format!(
                "{}: 'Seek type = {other}' is not supported (extracted, hplplus10)",
                mech.file.display()
            ))
        }
    };
    fill_mechanics(&mut spec, &disk, &mech)?;
    fill_layout(&mut spec, &disk.block("Layout Model")?)?;
    fill_cache(&mut spec, &specs)?;
    fill_controller(&mut spec, &specs)?;
    let (read_block, write_block) = bus_block_times(&dir.join(&parv))?;
    spec.controller.bus_read_block_ms = read_block;
    spec.controller.bus_write_block_ms = write_block;
    spec.validate()
        .map_err(|message| format!("{}: {message}", model_path.display()))?;
    Ok((
        spec,
        Chain {
            parv,
            diskspecs,
            model,
            seek,
        },
    ))
}

fn source_name(value: &str, path: &Path) -> Result<String, String> {
    value
        .strip_prefix("source ")
        .map(|file| file.trim().to_string())
        .ok_or_else(|| format!("{}: 'Model' is not 'source FILE'", path.display()))
}

/// `Seek distances measured: N` then `cylinders, ms[, stdev]` lines.
fn read_seek_curve(path: &Path) -> Result<Vec<(u32, f64)>, String> {
    let text = read(path)?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty());
    let count: usize = lines
        .next()
        .and_then(|(_, line)| line.trim().strip_prefix("Seek distances measured:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| {
            format!(
                "{}:1: expected 'Seek distances measured: N'",
                path.display()
            )
        })?;
    let mut curve = Vec::with_capacity(count.min(100_000));
    for (index, line) in lines.take(count) {
        let mut fields = line.split(',').map(str::trim);
        let distance = fields.next().and_then(|f| f.parse().ok());
        let time = fields.next().and_then(|f| f.parse().ok());
        match (distance, time) {
            (Some(distance), Some(time)) => curve.push((distance, time)),
            _ => {
                return Err(format!(
                    "{}:{}: expected 'cylinders, ms'",
                    path.display(),
                    index + 1
                ))
            }
        }
    }
    if curve.len() != count {
        return Err(format!(
            "{}: {} of {count} seek points",
            path.display(),
            curve.len()
        ));
    }
    Ok(curve)
}

fn empty_spec(name: &str) -> DiskSpec {
    DiskSpec {
        model: MODEL.to_string(),
        name: name.to_string(),
        rpm: 0.0,
        surfaces: 0,
        cylinders: 0,
        mapping: 0,
        sparing: 0,
        sparing_range_cylinders: 1,
        single_cylinder_seek_ms: 0.0,
        head_switch_ms: 0.0,
        write_settle_ms: 0.0,
        seek_curve: Vec::new(),
        seek_equation: Vec::new(),
        first_ten_seeks_ms: Vec::new(),
        bus_ms_per_sector: 0.0,
        read_hit_after_read_ms: 0.0,
        read_hit_after_write_ms: 0.0,
        read_miss_after_read_ms: 0.0,
        read_miss_after_write_ms: 0.0,
        write_hit_after_read_ms: 0.0,
        write_hit_after_write_ms: 0.0,
        write_miss_after_read_ms: 0.0,
        write_miss_after_write_ms: 0.0,
        segments: 0,
        segment_sectors: 0,
        write_segments: 0,
        separate_write_segment: false,
        prefetch_mode: 0,
        min_read_ahead_sectors: 0,
        max_read_ahead_sectors: 0,
        read_ahead_over_requested: false,
        read_any_free_blocks: false,
        fast_write_level: 0,
        read_hits_on_write_data: false,
        combine_sequential_writes: false,
        deferred_destage: false,
        write_hit_stops_prefetch: false,
        stop_prefetch_in_sector: false,
        controller: ControllerSpec::default(),
        zone: Vec::new(),
        queue: super::spec::QueueSpec::default(),
    }
}

/// A list of numbers.
fn floats(block: &Block, key: &str) -> Result<Vec<f64>, String> {
    block
        .list(key)?
        .iter()
        .map(|item| match item {
            Value::Word(word) => word.parse().ok(),
            _ => None,
        })
        .collect::<Option<Vec<f64>>>()
        .ok_or_else(|| format!("{}: '{key}' holds a non-number", block.file.display()))
}

fn fill_mechanics(spec: &mut DiskSpec, disk: &Block, mech: &Block) -> Result<(), String> {
    spec.surfaces = disk.int("Number of data surfaces")?;
    spec.cylinders = disk.int("Number of cylinders")?;
    spec.rpm = mech.float("Rotation speed (in rpms)")?;
    spec.single_cylinder_seek_ms = mech.float("Single cylinder seek time")?;
    spec.head_switch_ms = mech.float("Head switch time")?;
    spec.write_settle_ms = mech.float("Add. write settling delay")?;
    Ok(())
}

fn fill_layout(spec: &mut DiskSpec, layout: &Block) -> Result<(), String> {
    spec.mapping = layout.int("LBN-to-PBN mapping scheme")?;
    spec.sparing = layout.int("Sparing scheme used")?;
    spec.sparing_range_cylinders = layout.int("Rangesize for sparing")?;
    for (index, item) in layout.list("Zones")?.iter().enumerate() {
        let Value::Block(entries) = item else {
            return Err(format!(
                "{}: zone {index} is not a block",
                layout.file.display()
            ));
        };
        let zone = Block {
            file: layout.file,
            entries,
        };
        // (defect, remap) pairs; a defect remapped to itself changes nothing
        // (`g1_ltop_*` skip it), the only kind these drives list.
        let defects = zone.list("defects")?;
        if defects
            .chunks(2)
            .any(|pair| pair.len() != 2 || pair[0] != pair[1])
        {
            return Err(format!(
                "{}: zone {index}: remapped defects are not supported",
                layout.file.display()
            ));
        }
        let slips = zone
            .list("slips")?
            .iter()
            .map(|slip| match slip {
                Value::Word(word) => word.parse().ok(),
                _ => None,
            })
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| {
                format!(
                    "{}: zone {index}: a slip is not a sector number",
                    layout.file.display()
                )
            })?;
        spec.zone.push(ZoneSpec {
            first_cylinder: zone.int("First cylinder number")?,
            last_cylinder: zone.int("Last cylinder number")?,
            sectors_per_track: zone.int("Blocks per track")?,
            offset_sectors: zone.float("Offset of first block")?,
            dead_space_sectors: zone.int("Empty space at zone front")?,
            track_skew_sectors: zone.float("Skew for track switch")?,
            cylinder_skew_sectors: zone.float("Skew for cylinder switch")?,
            spares: zone.int("Number of spares")?,
            slips,
        });
    }
    Ok(())
}

fn fill_cache(spec: &mut DiskSpec, d: &Block) -> Result<(), String> {
    spec.bus_ms_per_sector = d.float("Bulk sector transfer time")?;
    spec.read_hit_after_read_ms = d.float("Read hit over. after read")?;
    spec.read_hit_after_write_ms = d.float("Read hit over. after write")?;
    spec.read_miss_after_read_ms = d.float("Read miss over. after read")?;
    spec.read_miss_after_write_ms = d.float("Read miss over. after write")?;
    spec.write_hit_after_read_ms = d.float("Write hit over. after read")?;
    spec.write_hit_after_write_ms = d.float("Write hit over. after write")?;
    spec.write_miss_after_read_ms = d.float("Write miss over. after read")?;
    spec.write_miss_after_write_ms = d.float("Write miss over. after write")?;
    spec.segments = d.int("Number of buffer segments")?;
    spec.segment_sectors = d.int("Segment size (in blks)")?;
    spec.write_segments = d.int("Maximum number of write segments")?;
    spec.separate_write_segment = d.flag("Use separate write segment")?;
    spec.prefetch_mode = d.int("Buffer continuous read")?;
    spec.min_read_ahead_sectors = d.int("Minimum read-ahead (blks)")?;
    spec.max_read_ahead_sectors = d.int("Maximum read-ahead (blks)")?;
    spec.read_ahead_over_requested = d.flag("Read-ahead over requested")?;
    spec.read_any_free_blocks = d.flag("Read any free blocks")?;
    spec.fast_write_level = d.int("Fast write level")?;
    spec.read_hits_on_write_data = d.flag("Allow read hits on write data")?;
    spec.combine_sequential_writes = d.flag("Combine seq writes")?;
    spec.write_hit_stops_prefetch = d.flag("Write hit stop prefetch")?;
    spec.stop_prefetch_in_sector = d.flag("Stop prefetch in sector")?;
    Ok(())
}

fn fill_controller(spec: &mut DiskSpec, d: &Block) -> Result<(), String> {
    let c = &mut spec.controller;
    c.read_completion_ms = d.float("Read completion overhead")?;
    c.write_completion_ms = d.float("Write completion overhead")?;
    c.data_prep_ms = d.float("Data preparation overhead")?;
    c.first_reselect_ms = d.float("First reselect overhead")?;
    c.read_disconnect_after_read_ms = d.float("Read disconnect afterread")?;
    c.read_disconnect_after_write_ms = d.float("Read disconnect afterwrite")?;
    c.write_disconnect_ms = d.float("Write disconnect overhead")?;
    c.minimum_seek_ms = d.float("Minimum seek delay")?;
    c.read_water_mark = d.float("High (read) water mark")?;
    c.water_mark_by_request_size = d.flag("Set watermark by reqsize")?;
    c.never_disconnect = d.flag("Never disconnect")?;
    c.read_ahead_on_idle_hit = d.flag("Read-ahead on idle hit")?;
    c.extra_write_disconnect = d.flag("Extra write disconnect")?;
    c.extra_command_ms = d.float("Extradisc command overhead")?;
    c.extra_seek_delta_ms = d.float("Extradisc seek delta")?;
    c.extra_disconnect_ms = d.float("Extradisc disconnect overhead")?;
    c.extra_inter_disconnect_ms = d.float("Extradisc inter-disconnect delay")?;
    c.extra_second_disconnect_ms = d.float("Extradisc 2nd disconnect overhead")?;
    c.other_reselect_ms = d.float("Other reselect overhead")?;
    Ok(())
}

/// The block transfer times of the bus the drive hangs on: in the `.parv`'s topology, the
/// last `disksim_bus INSTANCE [` before `disksim_disk`, whose instance is `instantiate [
/// INSTANCE ] as NAME` of the block `disksim_bus NAME { ... }`.
fn bus_block_times(parv: &Path) -> Result<(f64, f64), String> {
    let text = read(parv)?;
    let missing = |what: &str| format!("{}: {what}", parv.display());
    let topology = text
        .split_once("topology")
        .map(|(_, rest)| rest)
        .ok_or_else(|| missing("no topology"))?;
    let before_disk = topology
        .split_once("disksim_disk")
        .map(|(head, _)| head)
        .ok_or_else(|| missing("no disksim_disk in the topology"))?;
    let instance = before_disk
        .rsplit_once("disksim_bus")
        .and_then(|(_, rest)| rest.split('[').next())
        .map(str::trim)
        .ok_or_else(|| missing("no disksim_bus above the disk in the topology"))?;
    let name = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("instantiate"))
        .filter_map(|rest| rest.split_once(" as "))
        .find(|(instances, _)| {
            instances
                .trim_matches(|c: char| c == '[' || c == ']' || c.is_whitespace())
                .split(',')
                .any(|i| i.trim() == instance)
        })
        .map(|(_, name)| name.trim().to_string())
        .ok_or_else(|| missing(&format!("bus '{instance}' is never instantiated")))?;
    let mut parser = Parser {
        tokens: tokenize(&text),
        at: 0,
    };
    let header = format!("disksim_bus {name}");
    while parser.at < parser.tokens.len() {
        let at_header = matches!(parser.peek(), Some(Token::Word(w)) if squeeze(w) == header);
        if at_header && parser.tokens.get(parser.at + 1) == Some(&Token::Punct('{')) {
            let Value::Block(entries) = parser.value().map_err(|e| missing(&e))? else {
                return Err(missing("bus block"));
            };
            let bus = Block {
                file: parv,
                entries: &entries,
            };
            return Ok((
                bus.float("Read block transfer time")?,
                bus.float("Write block transfer time")?,
            ));
        }
        parser.at += 1;
    }
    Err(missing(&format!("no '{header} {{' block")))
}

/// `word` with each run of blanks as one space.
fn squeeze(word: &str) -> String {
    word.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The drives whose data the repository keeps: the ten drives of `valid/runvalid` (six
/// newer ones with write-back caches, then four older write-through ones), with DiskSim's own
/// demerit in ms.
// 0.318 ms is DiskSim's figure, not 1/π.
#[allow(clippy::approx_constant)]
pub const DRIVES: [(&str, f64); 10] = [
    ("cheetah9LP", 0.107),
    ("ibm18es", 0.135),
    ("atlas10k", 0.268),
    ("cheetah4LP", 0.318),
    ("barracuda", 0.349),
    ("atlas_III", 0.378),
    ("hp_c2247a", 0.090),
    ("hp_c3323a", 0.306),
    ("hp_c2490a", 0.254),
    ("dec_rz26", 0.340),
];

/// The DiskSim files a converted drive needs, for copying beside the model files.
pub fn chain_files(chain: &Chain) -> [PathBuf; 4] {
    [&chain.parv, &chain.diskspecs, &chain.model, &chain.seek].map(PathBuf::from)
}

/// The DiskSim commit whose `valid/` files the repository's data came from.
pub const DISKSIM_COMMIT: &str = "e0d4cc91371b3c7715b958b17999fe599d00c11f";

/// Converts every drive of [`DRIVES`] found in DiskSim's `valid` folder into `out`:
/// `DRIVE.toml`, the trace `DRIVE.trace` as is, and the DiskSim files read under
/// `out/source/`. Returns the drives written.
pub fn import_all(valid: &Path, out: &Path) -> Result<Vec<String>, String> {
    // Every drive converts, and its trace is there, before anything is written.
    let mut converted = Vec::new();
    for (name, _) in DRIVES {
        let (spec, chain) = import_drive(valid, name)?;
        let trace = valid.join(format!("{name}.trace"));
        if !trace.is_file() {
            return Err(format!("{}: no such trace", trace.display()));
        }
        converted.push((name, spec, chain));
    }
    let source = out.join("source");
    std::fs::create_dir_all(&source).map_err(|e| format!("{}: {e}", source.display()))?;
    for (name, spec, chain) in &converted {
        let sources = super::spec::Sources {
            commit: DISKSIM_COMMIT,
            parv: &chain.parv,
            diskspecs: &chain.diskspecs,
            model: &chain.model,
            seek: &chain.seek,
        };
        let text = super::spec::write_toml(spec, &sources);
        write(&out.join(format!("{name}.toml")), text.as_bytes())?;
        let trace = format!("{name}.trace");
        copy(&valid.join(&trace), &out.join(&trace))?;
        for file in chain_files(chain) {
            copy(&valid.join(&file), &source.join(&file))?;
        }
    }
    Ok(converted
        .into_iter()
        .map(|(name, ..)| name.to_string())
        .collect())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("{}: cannot copy: {e}", from.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_blocks_lists_and_comments_parse() {
        let text = "dm_disk X {\n  A b = 3, # note\n  L = dm_layout { Zones = [ z { s = \n [ 1, 2 ], d = [ ] } ] },\n  M = source f.model\n}";
        let mut parser = Parser {
            tokens: tokenize(text),
            at: 0,
        };
        let Value::Block(entries) = parser.value().unwrap() else {
            panic!("not a block")
        };
        let block = Block {
            file: Path::new("x"),
            entries: &entries,
        };
        assert_eq!(block.int("A b").unwrap(), 3);
        assert_eq!(block.word("M").unwrap(), "source f.model");
        let zones = block.block("L").unwrap();
        let Value::Block(zone) = &zones.list("Zones").unwrap()[0] else {
            panic!("zone")
        };
        let zone = Block {
            file: Path::new("x"),
            entries: zone,
        };
        assert_eq!(zone.list("s").unwrap().len(), 2);
        assert!(zone.list("d").unwrap().is_empty());
        assert!(block
            .int("missing")
            .unwrap_err()
            .contains("missing 'missing'"));
    }
}
