//! `--device FILE.toml`: a custom device model, written in TOML.
//!
//! ```toml
//! # A slower desktop disk, starting from the hdd-7200 preset.
//! model = "hdd"            # hdd | raid0 | flash | fixed
//! base = "hdd-7200"        # optional: a preset of the same model to start from
//! name = "hdd-5400"
//! rpm = 5_400
//! media_rate_outer_bytes_per_s = 100_000_000
//! ```
//!
//! The model can also be the file's one table, `[hdd]` with the keys under it. Keys are the
//! parameter structs' field names ([`HddParams`], [`Raid0Params`] with the member disk's keys
//! under `member`, as `member.rpm = 15_000` or a `[raid0.member]` table, [`FlashParams`],
//! [`FixedParams`]). The `toml` crate reads the file; this module maps its keys onto the
//! parameters, so every error names the file and line: TOML syntax, an unknown key, a value of
//! the wrong type or range, or parameters the model rejects.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::de::{DeString, DeTable, DeValue, ValueDeserializer};
use toml::Spanned;

use super::disksim::{self, DiskSimDevice, DiskSpec};
use super::fixed::{FixedDevice, FixedParams};
use super::flash::{FlashDevice, FlashParams};
use super::hdd::{HddDevice, HddParams};
use super::raid0::{Raid0Device, Raid0Params};
use super::Device;

/// The models a file can name.
const MODELS: [&str; 5] = ["hdd", "raid0", "flash", "fixed", disksim::spec::MODEL];

/// What went wrong in a device file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceFileErrorKind {
    /// The file could not be read.
    Io(String),
    /// The text is not TOML.
    Syntax(String),
    /// Neither a `model` key nor a single `[hdd]`-style table.
    MissingModel,
    UnknownModel(String),
    UnknownBase(String),
    UnknownKey {
        model: String,
        key: String,
    },
    /// A value of the wrong type or out of range, with the TOML reader's reason.
    BadValue {
        key: String,
        reason: String,
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
            DeviceFileErrorKind::Syntax(message) => write!(f, "not TOML: {message}"),
            DeviceFileErrorKind::MissingModel => write!(
                f,
                "no model: write model = \"hdd\" | \"raid0\" | \"flash\" | \"fixed\", \
                 or put the keys under one [hdd]-style table"
            ),
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
            DeviceFileErrorKind::BadValue { key, reason } => {
                write!(f, "bad value for '{key}': {reason}")
            }
            DeviceFileErrorKind::Invalid(message) => write!(f, "invalid parameters: {message}"),
        }
    }
}

impl std::error::Error for DeviceFileError {}

/// Why a key could not be applied.
enum SetError {
    UnknownKey,
    BadValue(String),
}

impl From<toml::de::Error> for SetError {
    fn from(error: toml::de::Error) -> Self {
        SetError::BadValue(error.message().to_string())
    }
}

/// A key's value, read as the type of the field it sets.
fn read<'i, T: Deserialize<'i>>(value: &Spanned<DeValue<'i>>) -> Result<T, SetError> {
    Ok(T::deserialize(ValueDeserializer::from(value.clone()))?)
}

/// Generates a setter matching keys to fields by name; each value is read as its field's type.
macro_rules! setter {
    ($name:ident, $params:ty, { $($field:ident),* $(,)? }) => {
        fn $name(
            params: &mut $params,
            key: &str,
            value: &Spanned<DeValue<'_>>,
        ) -> Result<(), SetError> {
            match key {
                "name" => params.name = read(value)?,
                $(stringify!($field) => params.$field = read(value)?,)*
                _ => return Err(SetError::UnknownKey),
            }
            Ok(())
        }
    };
}

setter!(set_hdd, HddParams, {
    rpm, cylinders, heads, zones, media_rate_outer_bytes_per_s, media_rate_inner_bytes_per_s,
    seek_single_cyl_ns, seek_short_base_ns, seek_short_sqrt_ns, seek_short_linear_ns,
    seek_boundary_ppm, seek_long_base_ns, seek_long_linear_ns, write_settle_ns, head_switch_ns,
    read_overhead_ns, write_overhead_ns, cache_hit_overhead_ns, host_link_bytes_per_s,
    read_segments, read_segment_bytes, min_read_ahead_bytes, write_cache_bytes, write_segments,
    destage_max_bytes, queue_depth, sptf_age_limit_ns,
});

setter!(set_raid0, Raid0Params, {
    disks, stripe_unit_bytes, controller_overhead_ns, controller_bytes_per_s,
    cache_copy_bytes_per_s, write_cache_bytes, destage_per_disk, queue_depth,
});

setter!(set_flash, FlashParams, {
    capacity_bytes, queue_depth, executing_commands, host_link_bytes_per_s,
    host_link_full_duplex, host_command_ns, controller_cores, controller_read_ns,
    controller_write_ns, controller_write_per_4k_ns, channels, units_per_channel,
    channel_bytes_per_s, page_bytes, pages_per_block, read_page_ns, program_page_ns,
    erase_block_ns, write_buffer_bytes, over_provisioning_permille, steady_state,
});

setter!(set_fixed, FixedParams, {
    latency_ns, bandwidth_bytes_per_s, units, queue_depth, rotational, capacity_sectors,
});

/// The model a file describes, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceModel {
    Hdd(HddParams),
    Raid0(Raid0Params),
    Flash(FlashParams),
    Fixed(FixedParams),
    /// A DiskSim-validated drive (`model = "disksim-hdd"`, the whole file is its model).
    DiskSim(Box<DiskSpec>),
}

impl DeviceModel {
    /// Builds the device.
    pub fn build(&self) -> Box<dyn Device> {
        match self {
            DeviceModel::Hdd(params) => Box::new(HddDevice::new(params.clone())),
            DeviceModel::Raid0(params) => Box::new(Raid0Device::new(params.clone())),
            DeviceModel::Flash(params) => Box::new(FlashDevice::new(params.clone())),
            DeviceModel::Fixed(params) => Box::new(FixedDevice::new(params.clone())),
            DeviceModel::DiskSim(spec) => Box::new(DiskSimDevice::new(spec)),
        }
    }

    fn validate(&self) -> Result<(), String> {
        match self {
            DeviceModel::Hdd(params) => params.validate(),
            DeviceModel::Raid0(params) => params.validate(),
            DeviceModel::Flash(params) => params.validate(),
            DeviceModel::DiskSim(spec) => spec.validate(),
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

/// The 1-based line holding byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The value under `key` in `table`, with its key's span.
fn entry<'t, 'i>(
    table: &'t DeTable<'i>,
    key: &str,
) -> Option<(Range<usize>, &'t Spanned<DeValue<'i>>)> {
    table
        .iter()
        .find(|(name, _)| name.get_ref() == key)
        .map(|(name, value)| (name.span(), value))
}

/// A string value, or `None` for any other type.
fn as_str<'t>(value: &'t Spanned<DeValue<'_>>) -> Option<&'t str> {
    match value.get_ref() {
        DeValue::String(text) => Some(text),
        _ => None,
    }
}

/// The parameters a model starts from: the named `base` preset, or the model's reference one.
fn starting_point(model: &str, base: Option<&str>) -> Option<DeviceModel> {
    Some(match (model, base) {
        ("hdd", None | Some("hdd-7200")) => DeviceModel::Hdd(HddParams::hdd_7200()),
        ("hdd", Some("sas-10k")) => DeviceModel::Hdd(HddParams::sas_10k()),
        ("hdd", Some("atlas-10k-v")) => DeviceModel::Hdd(HddParams::atlas_10k_v()),
        ("raid0", None | Some("raid0-8x10k")) => DeviceModel::Raid0(Raid0Params::lsi1078_8x10k()),
        ("flash", None | Some("ssd-x25e")) => DeviceModel::Flash(FlashParams::x25e()),
        ("flash", Some("nvme-gen4")) => DeviceModel::Flash(FlashParams::nvme_gen4()),
        ("flash", Some("ufs31")) => DeviceModel::Flash(FlashParams::ufs31()),
        ("flash", Some("emmc51")) => DeviceModel::Flash(FlashParams::emmc51()),
        ("fixed", None | Some("fixed")) => DeviceModel::Fixed(FixedParams::default()),
        _ => return None,
    })
}

/// The model a file names and the table holding its keys.
struct ModelTable<'t, 'i> {
    model: &'t str,
    /// Where the model is named: the `model` key or the table's header.
    span: Range<usize>,
    table: &'t DeTable<'i>,
}

/// An error found before any key is applied, with where it is, if anywhere.
type Unplaced = (Option<Range<usize>>, DeviceFileErrorKind);

/// Where the model's keys are: the whole document after `model = "…"`, or its one `[hdd]`-style
/// table.
fn locate_model<'t, 'i>(document: &'t DeTable<'i>) -> Result<ModelTable<'t, 'i>, Unplaced> {
    if let Some((span, value)) = entry(document, "model") {
        let Some(name) = as_str(value).filter(|name| MODELS.contains(name)) else {
            let shown = as_str(value).map_or_else(|| "a non-string".to_string(), str::to_string);
            return Err((Some(span), DeviceFileErrorKind::UnknownModel(shown)));
        };
        return Ok(ModelTable {
            model: name,
            span,
            table: document,
        });
    }
    let mut keys = document.iter();
    match (keys.next(), keys.next()) {
        (Some((name, value)), None) if MODELS.contains(&name.get_ref().as_ref()) => {
            match value.get_ref() {
                DeValue::Table(table) => Ok(ModelTable {
                    model: name.get_ref(),
                    span: name.span(),
                    table,
                }),
                _ => Err((Some(name.span()), DeviceFileErrorKind::MissingModel)),
            }
        }
        _ => Err((None, DeviceFileErrorKind::MissingModel)),
    }
}

/// Sets one key of `params`; a RAID's `member` table sets the member disk's keys.
/// On error, returns the key as written (`member.rpm`), its span and the reason.
fn apply_key(
    params: &mut DeviceModel,
    key: &Spanned<DeString<'_>>,
    value: &Spanned<DeValue<'_>>,
) -> Result<(), (String, Range<usize>, SetError)> {
    let name: &str = key.get_ref();
    if let (DeviceModel::Raid0(raid), "member", DeValue::Table(member)) =
        (&mut *params, name, value.get_ref())
    {
        for (member_key, member_value) in member.iter() {
            set_hdd(&mut raid.member, member_key.get_ref(), member_value).map_err(|error| {
                let shown = format!("member.{}", member_key.get_ref());
                (shown, member_key.span(), error)
            })?;
        }
        return Ok(());
    }
    let result = match params {
        DeviceModel::Hdd(p) => set_hdd(p, name, value),
        DeviceModel::Raid0(p) => set_raid0(p, name, value),
        DeviceModel::Flash(p) => set_flash(p, name, value),
        DeviceModel::Fixed(p) => set_fixed(p, name, value),
        // Read whole by `DiskSpec`, never key by key.
        DeviceModel::DiskSim(_) => Err(SetError::UnknownKey),
    };
    result.map_err(|error| (name.to_string(), key.span(), error))
}

/// Parses device-file text; `path` only labels errors.
pub fn parse_device_text(path: &Path, text: &str) -> Result<DeviceModel, DeviceFileError> {
    let error = |span: Option<Range<usize>>, kind: DeviceFileErrorKind| DeviceFileError {
        path: path.to_path_buf(),
        line: span.map_or(0, |span| line_of(text, span.start)),
        kind,
    };
    let document = DeTable::parse(text).map_err(|toml_error| {
        let reason = toml_error.message().trim().to_string();
        error(toml_error.span(), DeviceFileErrorKind::Syntax(reason))
    })?;
    let ModelTable {
        model,
        span: model_span,
        table,
    } = locate_model(document.get_ref()).map_err(|(span, kind)| error(span, kind))?;
    if model == disksim::spec::MODEL {
        // Its own format (`disksim::spec`): every key required, none inherited.
        return DiskSpec::parse_located(text)
            .map(|spec| DeviceModel::DiskSim(Box::new(spec)))
            .map_err(|(line, message)| DeviceFileError {
                path: path.to_path_buf(),
                line,
                kind: DeviceFileErrorKind::Invalid(message),
            });
    }
    let base = entry(table, "base");
    let base_span = base.as_ref().map(|(span, _)| span.clone());
    let base_name = match &base {
        Some((_, value)) => Some(as_str(value).ok_or_else(|| {
            error(
                base_span.clone(),
                DeviceFileErrorKind::UnknownBase("(not a string)".into()),
            )
        })?),
        None => None,
    };
    let mut params = starting_point(model, base_name).ok_or_else(|| {
        let unknown = base_name.unwrap_or_default().to_string();
        error(base_span.clone(), DeviceFileErrorKind::UnknownBase(unknown))
    })?;
    for (key, value) in table.iter() {
        let name: &str = key.get_ref();
        if name == "model" || name == "base" {
            continue;
        }
        apply_key(&mut params, key, value).map_err(|(key_name, span, set_error)| {
            let kind = match set_error {
                SetError::UnknownKey => DeviceFileErrorKind::UnknownKey {
                    model: model.to_string(),
                    key: key_name,
                },
                SetError::BadValue(reason) => DeviceFileErrorKind::BadValue {
                    key: key_name,
                    reason,
                },
            };
            error(Some(span), kind)
        })?;
    }
    params
        .validate()
        .map_err(|message| error(Some(model_span), DeviceFileErrorKind::Invalid(message)))?;
    Ok(params)
}

/// Loads and builds the device a file describes.
pub fn load_device_file(path: impl AsRef<Path>) -> Result<Box<dyn Device>, DeviceFileError> {
    let path = path.as_ref();
    let kind = iosched_workload::input::InputKind::DeviceModel;
    let text = iosched_workload::input::read_text(path, kind).map_err(|e| DeviceFileError {
        path: path.to_path_buf(),
        line: 0,
        kind: DeviceFileErrorKind::Io(e.reason()),
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
        assert_eq!(params.rpm, 5400.0);
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
        assert_eq!((params.disks, params.member.rpm), (4, 15_000.0));
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

    /// A value of the wrong type or range names the key, its line and the TOML reader's reason.
    #[test]
    fn bad_value_is_reported() {
        let err = parse("model = \"flash\"\nsteady_state = 3\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(
            err.to_string()
                .starts_with("disk.dev:2: bad value for 'steady_state': invalid type: integer"),
            "{err}"
        );
        for text in [
            "model = \"hdd\"\nheads = 2.5\n",
            "model = \"hdd\"\nheads = 99999999999\n",
        ] {
            let err = parse(text).unwrap_err();
            assert_eq!(err.line, 2, "{err}");
            assert!(
                matches!(err.kind, DeviceFileErrorKind::BadValue { .. }),
                "{err}"
            );
        }
        let err = parse("model = \"raid0\"\n\n[member]\nheads = -1\n").unwrap_err();
        assert_eq!(
            (err.line, err.to_string().contains("'member.heads'")),
            (4, true),
            "{err}"
        );
    }

    /// Text that is not TOML is reported at its line, not read up to the error.
    #[test]
    fn toml_syntax_errors_name_the_line() {
        let err = parse("model = \"hdd\"\n\nrpm = = 3\n").unwrap_err();
        assert_eq!(err.line, 3, "{err}");
        assert!(matches!(err.kind, DeviceFileErrorKind::Syntax(_)), "{err}");
    }

    /// The model is a `model` key anywhere in the file, or the file's one `[model]` table;
    /// a missing or unknown model is an error, not a default.
    #[test]
    fn model_key_or_model_table() {
        let DeviceModel::Hdd(keyed) = parse("rpm = 5_400\nmodel = \"hdd\"\n").unwrap() else {
            panic!("not an hdd")
        };
        let tabled = parse("# a table\n[hdd]\nbase = \"sas-10k\"\nrpm = 5_400\n").unwrap();
        let DeviceModel::Hdd(tabled) = tabled else {
            panic!("not an hdd")
        };
        assert_eq!((keyed.rpm, tabled.rpm), (5_400.0, 5_400.0));
        assert_eq!(tabled.heads, HddParams::sas_10k().heads);
        let raid = parse("[raid0]\ndisks = 2\n[raid0.member]\nrpm = 15_000\n").unwrap();
        let DeviceModel::Raid0(raid) = raid else {
            panic!("not raid0")
        };
        assert_eq!((raid.disks, raid.member.rpm), (2, 15_000.0));
        for missing in ["# empty\n", "rpm = 1\n", "[hdd]\nrpm = 1\n[flash]\n"] {
            assert_eq!(
                parse(missing).unwrap_err().kind,
                DeviceFileErrorKind::MissingModel
            );
        }
        assert!(matches!(
            parse("model = \"tape\"\n").unwrap_err().kind,
            DeviceFileErrorKind::UnknownModel(_)
        ));
        let err = parse("model = \"flash\"\nbase = \"hdd-7200\"\n").unwrap_err();
        assert_eq!(
            (err.line, err.kind),
            (2, DeviceFileErrorKind::UnknownBase("hdd-7200".into()))
        );
    }

    /// Any TOML number is a spindle speed: `rpm = 5400.5` under an `[hdd]` table (both once
    /// refused by the hand-written reader) gives a revolution of 60 s / 5400.5, and the
    /// drive builds with it.
    #[test]
    fn a_fractional_rpm_under_a_model_table_is_read() {
        let model = parse("[hdd]\nbase = \"hdd-7200\"\nrpm = 5400.5\n").unwrap();
        let DeviceModel::Hdd(params) = &model else {
            panic!("not an hdd")
        };
        assert_eq!(params.rpm, 5400.5);
        assert_eq!(params.revolution_ns(), 11_110_082);
        assert_eq!(HddParams::hdd_7200().revolution_ns(), 8_333_333);
        assert!(model.build().capacity_sectors() > 0);
    }

    /// Parameters the model rejects are reported, not built (no panic).
    #[test]
    fn invalid_parameters_are_rejected() {
        let err = parse("model = \"hdd\"\nrpm = 0\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "disk.dev:1: invalid parameters: rpm must lie in 1000..=30000"
        );
    }

    /// A missing file is an I/O error naming the path.
    #[test]
    fn missing_file() {
        let err = load_device_file("/nonexistent/device.dev").err().unwrap();
        assert!(matches!(err.kind, DeviceFileErrorKind::Io(_)));
    }
}
