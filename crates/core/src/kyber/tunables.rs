//! Kyber's sysfs tunables. Kernel: KYBER_LAT_SHOW_STORE (block/kyber-iosched.c, 6.12).
//!
//! `read_lat_nsec` and `write_lat_nsec` are the latency targets of the read and write
//! domains, in ns. A store parses with kstrtoull() (an optional `+`, decimal digits, an
//! optional newline; out of 64-bit range is an error) and takes any value, 0 included.

use crate::tunable::{TunableError, TunableSpec};

pub(super) static TUNABLES: [TunableSpec; 2] = [
    TunableSpec {
        name: "read_lat_nsec",
        unit: "ns",
        default: 2_000_000,
        min: 0,
        max: u64::MAX,
        meaning: "target latency of reads; the domains are throttled to keep p99 under it",
        extension: false,
    },
    TunableSpec {
        name: "write_lat_nsec",
        unit: "ns",
        default: 10_000_000,
        min: 0,
        max: u64::MAX,
        meaning: "target latency of writes; the domains are throttled to keep p99 under it",
        extension: false,
    },
];

/// Kernel: kstrtoull(s, 10).
pub fn kstrtoull(s: &str) -> Option<u64> {
    let s = s.strip_prefix('+').unwrap_or(s);
    let s = s.strip_suffix('\n').unwrap_or(s);
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The table entry and the value, or the kernel's refusal.
pub(super) fn parse(name: &str, value: &str) -> Result<(usize, u64), TunableError> {
    let index = TUNABLES
        .iter()
        .position(|t| t.name == name)
        .ok_or_else(|| TunableError::Unknown {
            scheduler: "kyber",
            name: name.to_string(),
        })?;
    let v = kstrtoull(value).ok_or_else(|| TunableError::Invalid {
        name: name.to_string(),
        value: value.to_string(),
    })?;
    Ok((index, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kstrtoull: '+' and one trailing newline pass; signs, blanks, hex and overflow fail.
    #[test]
    fn parses_as_kstrtoull() {
        assert_eq!(kstrtoull("+7\n"), Some(7));
        assert_eq!(kstrtoull("18446744073709551615"), Some(u64::MAX));
        for bad in ["", "-1", " 1", "0x10", "18446744073709551616", "1\n\n", "+"] {
            assert_eq!(kstrtoull(bad), None, "{bad:?}");
        }
    }
}
