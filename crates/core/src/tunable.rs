//! Named tunables, as sysfs names them under `/sys/block/<dev>/queue/iosched/`.
//!
//! Each scheduler owns one static table of [`TunableSpec`]s; the same table feeds
//! `iosched schedulers`, `--set KEY=VALUE` and the JSON echo of a run's settings.

use std::fmt;

/// One entry of a scheduler's tunables table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TunableSpec {
    /// The sysfs file name (`slice_idle`, `read_expire`, ...).
    pub name: &'static str,
    /// Unit of the value as written to and read from sysfs (`ms`, `us`, `requests`, `bool`...).
    pub unit: &'static str,
    /// The kernel's default, in `unit`.
    pub default: u64,
    /// Smallest accepted value; smaller writes are clamped up, as the kernel's store does.
    pub min: u64,
    /// Largest accepted value; larger writes are clamped down.
    pub max: u64,
    /// One line: what the knob does.
    pub meaning: &'static str,
    /// True for iosched's own switches (the seeds' changes), false for kernel tunables.
    pub extension: bool,
}

/// A tunable's current value beside its description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TunableValue {
    pub spec: &'static TunableSpec,
    pub value: u64,
}

/// Why a `set` was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TunableError {
    /// The scheduler has no tunable of that name.
    Unknown {
        scheduler: &'static str,
        name: String,
    },
    /// The value is not a non-negative integer.
    Invalid { name: String, value: String },
}

impl fmt::Display for TunableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TunableError::Unknown { scheduler, name } => {
                write!(f, "scheduler '{scheduler}' has no tunable '{name}'")
            }
            TunableError::Invalid { name, value } => {
                write!(
                    f,
                    "tunable '{name}': '{value}' is not a non-negative integer"
                )
            }
        }
    }
}

impl std::error::Error for TunableError {}

/// Looks `name` up in `table` and parses `value` the way sysfs' `kstrtoul`-based stores do
/// (decimal, surrounding whitespace ignored), clamped into the entry's range.
pub fn parse_tunable(
    scheduler: &'static str,
    table: &'static [TunableSpec],
    name: &str,
    value: &str,
) -> Result<(&'static TunableSpec, u64), TunableError> {
    let spec =
        table
            .iter()
            .find(|spec| spec.name == name)
            .ok_or_else(|| TunableError::Unknown {
                scheduler,
                name: name.to_string(),
            })?;
    let parsed: u64 = value.trim().parse().map_err(|_| TunableError::Invalid {
        name: name.to_string(),
        value: value.to_string(),
    })?;
    Ok((spec, parsed.clamp(spec.min, spec.max)))
}

#[cfg(test)]
mod tests {
    use super::*;

    static TABLE: [TunableSpec; 1] = [TunableSpec {
        name: "quantum",
        unit: "requests",
        default: 8,
        min: 1,
        max: u32::MAX as u64,
        meaning: "test",
        extension: false,
    }];

    #[test]
    fn clamps_into_range_like_sysfs() {
        let (_, value) = parse_tunable("t", &TABLE, "quantum", " 0\n").unwrap();
        assert_eq!(value, 1);
    }

    #[test]
    fn rejects_unknown_names_and_bad_values() {
        assert!(matches!(
            parse_tunable("t", &TABLE, "nosuch", "1"),
            Err(TunableError::Unknown { .. })
        ));
        assert!(matches!(
            parse_tunable("t", &TABLE, "quantum", "-3"),
            Err(TunableError::Invalid { .. })
        ));
    }
}
