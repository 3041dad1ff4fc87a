//! `--device FILE`: a custom device model from a tiny `key = value` file (a TOML subset).
//!
//! ```text
//! # A slower desktop disk, starting from the hdd-7200 preset.
//! model = "hdd"            # hdd | raid0 | flash | fixed
//! base = "hdd-7200"        # optional: a preset of the same model to start from
//! name = "hdd-5400"
//! rpm = 5_400
//! media_rate_outer_bytes_per_s = 100_000_000
//! ```
//!
//! Keys are the parameter structs' field names ([`HddParams`], [`Raid0Params`] with `member.`
//! keys for the member disk, [`FlashParams`], [`FixedParams`]). Values are integers
//! (underscores allowed), `true`/`false`, or double-quoted strings; `#` starts a comment.
//! `model` must come first. Every error names the file and line: an unknown key, a value of the
//! wrong kind, or parameters the model rejects.

use std::fmt;
use std::path::{Path, PathBuf};

use super::fixed::{FixedDevice, FixedParams};
use super::flash::{FlashDevice, FlashParams};
use super::hdd::{HddDevice, HddParams};
use super::raid0::{Raid0Device, Raid0Params};
use super::Device;

/// What went wrong in a device file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceFileErrorKind {
    /// The file could not be read.
    Io(String),
    /// A line is not `key = value`.
    Syntax(String),
    /// The first key is not `model`.
    MissingModel,
    UnknownModel(String),
    UnknownBase(String),
    UnknownKey {
        model: String,
        key: String,
    },
    BadValue {
        key: String,
        expected: &'static str,
    },
    /// The parameters as a whole are rejected by the model.
    Invalid(String),
}

/// An error in a device file, printing as `path:line: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFileError {
    pub path: PathBuf,
    /// 1-based; 0 when the error concerns the whole file.
    pub line: usize,
    pub kind: DeviceFileErrorKind,
}

impl fmt::Display for DeviceFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: ", self.path.display(), self.line)?;
        } else {
            write!(f, "{}: ", self.path.display())?;
        }
        match &self.kind {
            DeviceFileErrorKind::Io(message) => write!(f, "cannot read: {message}"),
            DeviceFileErrorKind::Syntax(message) => write!(f, "{message}"),
            DeviceFileErrorKind::MissingModel => {
                write!(
                    f,
                    "the first key must be model = \"hdd\" | \"raid0\" | \"flash\" | \"fixed\""
                )
            }
            DeviceFileErrorKind::UnknownModel(model) => write!(
                f,
                "unknown model '{model}' (expected hdd, raid0, flash or fixed)"
            ),
            DeviceFileErrorKind::UnknownBase(base) => {
                write!(f, "unknown base preset '{base}' for this model")
            }
            DeviceFileErrorKind::UnknownKey { model, key } => {
                write!(f, "unknown key '{key}' for model {model}")
            }
            DeviceFileErrorKind::BadValue { key, expected } => {
                write!(f, "bad value for '{key}': expected {expected}")
            }
            DeviceFileErrorKind::Invalid(message) => write!(f, "invalid parameters: {message}"),
        }
    }
}

impl std::error::Error for DeviceFileError {}

/// A parsed value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Int(u64),
    Bool(bool),
    Str(String),
}

/// Why a key could not be applied.
enum SetError {
    UnknownKey,
    BadValue(&'static str),
}

fn want_u64(value: &Value) -> Result<u64, SetError> {
    match value {
        Value::Int(v) => Ok(*v),
        _ => Err(SetError::BadValue("a non-negative integer")),
    }
}

fn want_u32(value: &Value) -> Result<u32, SetError> {
    match value {
        Value::Int(v) => u32::try_from(*v).map_err(|_| SetError::BadValue("an integer below 2^32")),
        _ => Err(SetError::BadValue("a non-negative integer")),
    }
}

fn want_bool(value: &Value) -> Result<bool, SetError> {
    match value {
        Value::Bool(v) => Ok(*v),
        _ => Err(SetError::BadValue("true or false")),
    }
}

fn want_str(value: &Value) -> Result<String, SetError> {
    match value {
        Value::Str(v) => Ok(v.clone()),
        _ => Err(SetError::BadValue("a double-quoted string")),
    }
}

/// Generates a setter matching keys to fields by name, each field with its value kind.
macro_rules! setter {
    ($name:ident, $params:ty, { $($field:ident : $want:ident),* $(,)? }) => {
        fn $name(params: &mut $params, key: &str, value: &Value) -> Result<(), SetError> {
            match key {
                "name" => params.name = want_str(value)?,
                $(stringify!($field) => params.$field = $want(value)?,)*
                _ => return Err(SetError::UnknownKey),
            }
            Ok(())
        }
    };
}

setter!(set_hdd, HddParams, {
    rpm: want_u32, cylinders: want_u32, heads: want_u32, zones: want_u32,
    media_rate_outer_bytes_per_s: want_u64, media_rate_inner_bytes_per_s: want_u64,
    seek_single_cyl_ns: want_u64, seek_short_base_ns: want_u64, seek_short_sqrt_ns: want_u64,
    seek_short_linear_ns: want_u64, seek_boundary_ppm: want_u32, seek_long_base_ns: want_u64,
    seek_long_linear_ns: want_u64, write_settle_ns: want_u64, head_switch_ns: want_u64,
    read_overhead_ns: want_u64, write_overhead_ns: want_u64, cache_hit_overhead_ns: want_u64,
    host_link_bytes_per_s: want_u64, read_segments: want_u32, read_segment_bytes: want_u64,
    min_read_ahead_bytes: want_u64,
    write_cache_bytes: want_u64, write_segments: want_u32, destage_max_bytes: want_u64,
    queue_depth: want_u32, sptf_age_limit_ns: want_u64,
});

setter!(set_raid0_own, Raid0Params, {
    disks: want_u32, stripe_unit_bytes: want_u64, controller_overhead_ns: want_u64,
    controller_bytes_per_s: want_u64, cache_copy_bytes_per_s: want_u64,
    write_cache_bytes: want_u64, destage_per_disk: want_u32, queue_depth: want_u32,
});

fn set_raid0(params: &mut Raid0Params, key: &str, value: &Value) -> Result<(), SetError> {
    match key.strip_prefix("member.") {
        Some(member_key) => set_hdd(&mut params.member, member_key, value),
        None => set_raid0_own(params, key, value),
    }
}

setter!(set_flash, FlashParams, {
    capacity_bytes: want_u64, queue_depth: want_u32, executing_commands: want_u32,
    host_link_bytes_per_s: want_u64, host_link_full_duplex: want_bool, host_command_ns: want_u64,
    controller_cores: want_u32, controller_read_ns: want_u64, controller_write_ns: want_u64,
    controller_write_per_4k_ns: want_u64, channels: want_u32, units_per_channel: want_u32,
    channel_bytes_per_s: want_u64, page_bytes: want_u64, pages_per_block: want_u32,
    read_page_ns: want_u64, program_page_ns: want_u64, erase_block_ns: want_u64,
    write_buffer_bytes: want_u64, over_provisioning_permille: want_u32, steady_state: want_bool,
});

setter!(set_fixed, FixedParams, {
    latency_ns: want_u64, bandwidth_bytes_per_s: want_u64, units: want_u32,
    queue_depth: want_u32, rotational: want_bool, capacity_sectors: want_u64,
});

/// Parses one value.
fn parse_value(text: &str) -> Option<Value> {
    if let Some(rest) = text.strip_prefix('"') {
        let inner = rest.strip_suffix('"')?;
        if inner.contains('"') {
            return None;
        }
        return Some(Value::Str(inner.to_string()));
    }
    match text {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    if text.is_empty() || text.starts_with('_') || text.ends_with('_') {
        return None;
    }
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().map(Value::Int)
}

/// Strips a `#` comment that is not inside a string.
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    for (index, c) in line.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '#' if !in_string => return &line[..index],
            _ => {}
        }
    }
    line
}

/// The model a file describes, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceModel {
    Hdd(HddParams),
    Raid0(Raid0Params),
    Flash(FlashParams),
    Fixed(FixedParams),
}

impl DeviceModel {
    /// Builds the device.
    pub fn build(&self) -> Box<dyn Device> {
        match self {
            DeviceModel::Hdd(params) => Box::new(HddDevice::new(params.clone())),
            DeviceModel::Raid0(params) => Box::new(Raid0Device::new(params.clone())),
            DeviceModel::Flash(params) => Box::new(FlashDevice::new(params.clone())),
            DeviceModel::Fixed(params) => Box::new(FixedDevice::new(params.clone())),
        }
    }

    fn validate(&self) -> Result<(), String> {
        match self {
            DeviceModel::Hdd(params) => params.validate(),
            DeviceModel::Raid0(params) => params.validate(),
            DeviceModel::Flash(params) => params.validate(),
            DeviceModel::Fixed(params) => {
                if params.units == 0 {
                    Err("units must be positive".to_string())
                } else if params.bandwidth_bytes_per_s == 0 {
                    Err("bandwidth_bytes_per_s must be positive".to_string())
                } else if params.queue_depth == 0 {
                    Err("queue_depth must be positive".to_string())
                } else if params.capacity_sectors == 0 {
                    Err("capacity_sectors must be positive".to_string())
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// Parses device-file text; `path` only labels errors.
pub fn parse_device_text(path: &Path, text: &str) -> Result<DeviceModel, DeviceFileError> {
    let error = |line: usize, kind: DeviceFileErrorKind| DeviceFileError {
        path: path.to_path_buf(),
        line,
        kind,
    };
    let mut model: Option<(String, DeviceModel)> = None;
    let mut model_line = 0;
    let mut keys_seen = 0usize;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let Some((key, value_text)) = line.split_once('=') else {
            return Err(error(
                line_no,
                DeviceFileErrorKind::Syntax(format!("expected key = value, found '{line}'")),
            ));
        };
        let key = key.trim();
        let value_text = value_text.trim();
        let valid_key = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !valid_key {
            return Err(error(
                line_no,
                DeviceFileErrorKind::Syntax(format!("bad key '{key}'")),
            ));
        }
        let Some(value) = parse_value(value_text) else {
            return Err(error(
                line_no,
                DeviceFileErrorKind::Syntax(format!("bad value '{value_text}' for '{key}'")),
            ));
        };
        keys_seen += 1;
        if key == "model" {
            if keys_seen != 1 {
                return Err(error(line_no, DeviceFileErrorKind::MissingModel));
            }
            let Value::Str(name) = value else {
                return Err(error(
                    line_no,
                    DeviceFileErrorKind::BadValue {
                        key: key.to_string(),
                        expected: "a double-quoted model name",
                    },
                ));
            };
            let params = match name.as_str() {
                "hdd" => DeviceModel::Hdd(HddParams::hdd_7200()),
                "raid0" => DeviceModel::Raid0(Raid0Params::lsi1078_8x10k()),
                "flash" => DeviceModel::Flash(FlashParams::x25e()),
                "fixed" => DeviceModel::Fixed(FixedParams::default()),
                _ => return Err(error(line_no, DeviceFileErrorKind::UnknownModel(name))),
            };
            model = Some((name, params));
            model_line = line_no;
            continue;
        }
        let Some((model_name, params)) = model.as_mut() else {
            return Err(error(line_no, DeviceFileErrorKind::MissingModel));
        };
        if key == "base" {
            let Value::Str(base) = &value else {
                return Err(error(
                    line_no,
                    DeviceFileErrorKind::BadValue {
                        key: key.to_string(),
                        expected: "a double-quoted preset name",
                    },
                ));
            };
            let based = match (model_name.as_str(), base.as_str()) {
                ("hdd", "hdd-7200") => DeviceModel::Hdd(HddParams::hdd_7200()),
                ("hdd", "sas-10k") => DeviceModel::Hdd(HddParams::sas_10k()),
                ("hdd", "atlas-10k-v") => DeviceModel::Hdd(HddParams::atlas_10k_v()),
                ("raid0", "raid0-8x10k") => DeviceModel::Raid0(Raid0Params::lsi1078_8x10k()),
                ("flash", "ssd-x25e") => DeviceModel::Flash(FlashParams::x25e()),
                ("flash", "nvme-gen4") => DeviceModel::Flash(FlashParams::nvme_gen4()),
                ("flash", "ufs31") => DeviceModel::Flash(FlashParams::ufs31()),
                ("flash", "emmc51") => DeviceModel::Flash(FlashParams::emmc51()),
                ("fixed", "fixed") => DeviceModel::Fixed(FixedParams::default()),
                _ => {
                    return Err(error(
                        line_no,
                        DeviceFileErrorKind::UnknownBase(base.clone()),
                    ))
                }
            };
            *params = based;
            continue;
        }
        let result = match params {
            DeviceModel::Hdd(p) => set_hdd(p, key, &value),
            DeviceModel::Raid0(p) => set_raid0(p, key, &value),
            DeviceModel::Flash(p) => set_flash(p, key, &value),
            DeviceModel::Fixed(p) => set_fixed(p, key, &value),
        };
        match result {
            Ok(()) => {}
            Err(SetError::UnknownKey) => {
                return Err(error(
                    line_no,
                    DeviceFileErrorKind::UnknownKey {
                        model: model_name.clone(),
                        key: key.to_string(),
                    },
                ))
            }
            Err(SetError::BadValue(expected)) => {
                return Err(error(
                    line_no,
                    DeviceFileErrorKind::BadValue {
                        key: key.to_string(),
                        expected,
                    },
                ))
            }
        }
    }
    let Some((_, params)) = model else {
        return Err(error(0, DeviceFileErrorKind::MissingModel));
    };
    params
        .validate()
        .map_err(|message| error(model_line, DeviceFileErrorKind::Invalid(message)))?;
    Ok(params)
}

/// Loads and builds the device a file describes.
pub fn load_device_file(path: impl AsRef<Path>) -> Result<Box<dyn Device>, DeviceFileError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| DeviceFileError {
        path: path.to_path_buf(),
        line: 0,
        kind: DeviceFileErrorKind::Io(e.to_string()),
    })?;
    parse_device_text(path, &text).map(|model| model.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<DeviceModel, DeviceFileError> {
        parse_device_text(Path::new("disk.dev"), text)
    }

    /// A file starting from a preset changes only the keys it names.
    #[test]
    fn base_and_overrides() {
        let model = parse(
            "# slower disk\nmodel = \"hdd\"\nbase = \"sas-10k\"\nname = \"slow\" # comment\nrpm = 5_400\n",
        )
        .unwrap();
        let DeviceModel::Hdd(params) = model else {
            panic!("not an hdd")
        };
        assert_eq!(params.rpm, 5400);
        assert_eq!(params.name, "slow");
        assert_eq!(params.heads, HddParams::sas_10k().heads);
    }

    /// RAID member keys use the `member.` prefix.
    #[test]
    fn raid_member_keys() {
        let model = parse("model = \"raid0\"\ndisks = 4\nmember.rpm = 15000\n").unwrap();
        let DeviceModel::Raid0(params) = model else {
            panic!("not raid0")
        };
        assert_eq!((params.disks, params.member.rpm), (4, 15_000));
        assert_eq!(model_build_name(&DeviceModel::Raid0(params)), "raid0-8x10k");
    }

    fn model_build_name(model: &DeviceModel) -> String {
        model.build().name().to_string()
    }

    /// An unknown key names file, line and key.
    #[test]
    fn unknown_key_is_reported_with_line() {
        let err = parse("model = \"flash\"\n\nbogus = 3\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "disk.dev:3: unknown key 'bogus' for model flash"
        );
    }

    /// A value of the wrong kind names the key and what was expected.
    #[test]
    fn bad_value_is_reported() {
        let err = parse("model = \"flash\"\nsteady_state = 3\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "disk.dev:2: bad value for 'steady_state': expected true or false"
        );
        let err = parse("model = \"hdd\"\nrpm = 7.2e3\n").unwrap_err();
        assert_eq!(err.line, 2);
        let err = parse("model = \"hdd\"\nrpm = 99999999999\n").unwrap_err();
        assert!(matches!(err.kind, DeviceFileErrorKind::BadValue { .. }));
    }

    /// `model` must come first; a missing or unknown model is an error, not a default.
    #[test]
    fn model_must_come_first() {
        assert_eq!(
            parse("rpm = 1\nmodel = \"hdd\"\n").unwrap_err().kind,
            DeviceFileErrorKind::MissingModel
        );
        assert_eq!(
            parse("# empty\n").unwrap_err().kind,
            DeviceFileErrorKind::MissingModel
        );
        assert!(matches!(
            parse("model = \"tape\"\n").unwrap_err().kind,
            DeviceFileErrorKind::UnknownModel(_)
        ));
    }

    /// Parameters the model rejects are reported, not built (no panic).
    #[test]
    fn invalid_parameters_are_rejected() {
        let err = parse("model = \"hdd\"\nrpm = 0\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "disk.dev:1: invalid parameters: rpm must be positive"
        );
    }

    /// A missing file is an I/O error naming the path.
    #[test]
    fn missing_file() {
        let err = load_device_file("/nonexistent/device.dev").err().unwrap();
        assert!(matches!(err.kind, DeviceFileErrorKind::Io(_)));
    }
}
