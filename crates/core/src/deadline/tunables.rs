//! mq-deadline's sysfs tunables, stored as the kernel stores them.
//!
//! Kernel: the SHOW_/STORE_ macros of mq-deadline.c. A value is parsed as an `int`
//! (kstrtoint(): out of `int` range is an error), clamped into the attribute's range, and the
//! three times are kept in jiffies (`msecs_to_jiffies()`, rounding up to whole 4 ms jiffies at
//! HZ=250), so reading one back shows what the kernel shows (`read_expire` 3 reads back 4).

use crate::tunable::{TunableError, TunableSpec};

/// HZ of Debian's 6.12 kernel (CONFIG_HZ_250): one jiffy is 4 ms.
pub const HZ: u64 = 250;
/// One jiffy in ns.
pub const JIFFY_NS: u64 = 1_000_000_000 / HZ;
/// `INITIAL_JIFFIES` on a 64-bit kernel: the jiffies count at boot, 5 minutes before the
/// 32-bit wrap (only differences matter; kept so the numbers match the kernel's).
pub const INITIAL_JIFFIES: u64 = (-300i64 * HZ as i64) as u32 as u64;

/// Kernel: jiffies at time `now` (ns since boot).
pub fn jiffies(now: u64) -> u64 {
    INITIAL_JIFFIES + now / JIFFY_NS
}

/// Kernel: msecs_to_jiffies() at HZ=250 (HZ divides 1000: round up to whole jiffies).
pub fn msecs_to_jiffies(ms: u32) -> u64 {
    if (ms as i32) < 0 {
        // MAX_JIFFY_OFFSET
        return ((i64::MAX >> 1) - 1) as u64;
    }
    u64::from(ms).div_ceil(1000 / HZ)
}

/// Kernel: jiffies_to_msecs(), truncated to `unsigned int` as the kernel's return type is.
pub fn jiffies_to_msecs(j: u64) -> u32 {
    ((1000 / HZ).wrapping_mul(j)) as u32
}

const INT_MAX: u64 = i32::MAX as u64;

pub(super) static TUNABLES: [TunableSpec; 7] = [
    TunableSpec {
        name: "read_expire",
        unit: "ms",
        default: 500,
        min: 0,
        max: INT_MAX,
        meaning: "deadline of a read, from insertion (kept in 4 ms jiffies)",
        extension: false,
    },
    TunableSpec {
        name: "write_expire",
        unit: "ms",
        default: 5000,
        min: 0,
        max: INT_MAX,
        meaning: "deadline of a write, from insertion (kept in 4 ms jiffies)",
        extension: false,
    },
    TunableSpec {
        name: "writes_starved",
        unit: "batches",
        default: 2,
        min: 0,
        max: INT_MAX,
        meaning: "read batches that may pass a waiting write batch",
        extension: false,
    },
    TunableSpec {
        name: "front_merges",
        unit: "bool",
        default: 1,
        min: 0,
        max: 1,
        meaning: "try merging a bio in front of a queued request",
        extension: false,
    },
    TunableSpec {
        name: "async_depth",
        unit: "requests",
        default: 256,
        min: 1,
        max: INT_MAX,
        meaning: "scheduler tags async requests and writes may hold (default: nr_requests)",
        extension: false,
    },
    TunableSpec {
        name: "fifo_batch",
        unit: "requests",
        default: 16,
        min: 0,
        max: INT_MAX,
        meaning: "requests dispatched in one sector-sorted batch",
        extension: false,
    },
    TunableSpec {
        name: "prio_aging_expire",
        unit: "ms",
        default: 10_000,
        min: 0,
        max: INT_MAX,
        meaning: "age after which lower-priority requests go before higher ones",
        extension: false,
    },
];

/// Kernel: kstrtoint(s, 0, ..): an optional sign, then hex after `0x`, octal after a
/// leading `0`, decimal otherwise; one trailing newline allowed; out of `int` range refused.
fn kstrtoint(text: &str) -> Option<i32> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(hex) = digits.strip_prefix("0x").or(digits.strip_prefix("0X"))
    {
        (16, hex)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i64::from_str_radix(digits, radix).ok()?;
    i32::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// Kernel: kstrtoint() then the STORE_FUNCTION clamp: the value as the attribute keeps it
/// (before any jiffies conversion). `writes_starved` takes any `int` (STORE_INT with
/// INT_MIN): a negative one compares as a huge unsigned count, so writes are never forced.
pub(super) fn parse(name: &str, value: &str) -> Result<(&'static TunableSpec, i32), TunableError> {
    let spec = TUNABLES
        .iter()
        .find(|spec| spec.name == name)
        .ok_or_else(|| TunableError::Unknown {
            scheduler: "mq-deadline",
            name: name.to_string(),
        })?;
    let parsed = kstrtoint(value).ok_or_else(|| TunableError::Invalid {
        name: name.to_string(),
        value: value.to_string(),
    })?;
    let min = if name == "writes_starved" {
        i64::from(i32::MIN)
    } else {
        spec.min as i64
    };
    Ok((spec, i64::from(parsed).clamp(min, spec.max as i64) as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 3 ms is one 4 ms jiffy and reads back as 4 ms, as in the kernel at HZ=250.
    #[test]
    fn milliseconds_round_up_to_jiffies() {
        assert_eq!(msecs_to_jiffies(3), 1);
        assert_eq!(msecs_to_jiffies(500), 125);
        assert_eq!(msecs_to_jiffies(0), 0);
        assert_eq!(jiffies_to_msecs(msecs_to_jiffies(3)), 4);
    }

    #[test]
    fn out_of_int_range_is_refused_and_in_range_is_clamped() {
        assert!(parse("fifo_batch", "3000000000").is_err());
        assert_eq!(parse("async_depth", "0").unwrap().1, 1);
        assert_eq!(parse("front_merges", "9").unwrap().1, 1);
        assert_eq!(parse("writes_starved", "-1").unwrap().1, -1);
        assert_eq!(parse("fifo_batch", "-5").unwrap().1, 0);
        assert_eq!(parse("fifo_batch", "0x10\n").unwrap().1, 16);
        assert_eq!(parse("fifo_batch", "010").unwrap().1, 8);
        assert!(parse("fifo_batch", "08").is_err());
        assert!(parse("fifo_batch", "1.5").is_err());
    }
}
