//! Value syntax: sizes, times, flags and per-direction lists, read the way fio reads them.
//!
//! fio parses a number with `strtoll()` and then looks for a unit right after the digits
//! (`str_to_decimal()`, `get_mult_bytes()`, `get_mult_time()`). Several quirks follow, all
//! reproduced here and reported as warnings where they silently change a value:
//!
//! * sizes: `k m g t p` (with or without `b`) are powers of `kb_base` (1024 by default),
//!   while `KiB MiB ...` are powers of the *other* base (1000 by default) — fio inverts them
//!   for old scripts. `0x` hex takes no unit. `N%` is a percentage where allowed. An unknown
//!   unit letter is ignored (`4q` is 4 bytes). A decimal point ends the number and hides the
//!   unit (`1.5g` is 1 byte).
//! * times: `us`/`usec`, `ms`/`msec` (prefix match), then exactly `s`, `m` (minutes), `h`,
//!   `d`; anything else multiplies by one microsecond — so `runtime=2sec` is 2 µs. Without a
//!   unit the option's default applies (seconds or microseconds).
//! * a blank after `=` is skipped by `strtoll()` but not by the unit scan, so `bs= 4k` is
//!   4 bytes and `runtime= 1m` is one second.
//! * lists: `read,write,trim` separated by commas; without a comma `:` and then `-` separate
//!   too (so `bs=4k-16k` is 4k reads and 16k writes, not a range). A value propagates to the
//!   later directions unless a comma follows it.
//!
//! Where fio would quietly read garbage as 0 (`bs=abc`), we return an error instead.

use super::expr::{self, ExprMode};

/// The unit a time option uses when the value has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimeUnit {
    Seconds,
    Micros,
}

/// A size as written: bytes, or a percentage (`N%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum SizeValue {
    Bytes(i64),
    Percent(i64),
}

/// Text before the first comma: fio cuts every numeric value there.
fn before_comma(text: &str) -> &str {
    text.split(',').next().unwrap_or("")
}

/// The integer `strtoll()` would read: optional blanks and sign, then decimal digits or
/// `0x` and hex digits. Returns (value, index after the digits); no digits is an error.
fn leading_integer(s: &str) -> Result<(i64, usize), String> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    let mut negative = false;
    if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
        negative = bytes[i] == b'-';
        i += 1;
    }
    let hex = bytes.len() > i + 1 && bytes[i] == b'0' && (bytes[i + 1] | 0x20) == b'x';
    let (radix, start) = if hex { (16, i + 2) } else { (10, i) };
    let mut end = start;
    while end < bytes.len() && (bytes[end] as char).is_digit(radix) {
        end += 1;
    }
    if end == start {
        return Err("not a number".to_string());
    }
    let magnitude =
        i64::from_str_radix(&s[start..end], radix).map_err(|_| "number too large".to_string())?;
    Ok((if negative { -magnitude } else { magnitude }, end))
}

fn is_separator(c: char) -> bool {
    matches!(c, ':' | '-' | ',' | '/')
}

/// The multiplier of a size unit (lower-cased, cut at a separator), or `None` for `%`.
/// Returns (multiplier, recognised).
fn size_unit(unit: &str, kb_base: i64) -> (Option<i64>, bool) {
    let other_base: i64 = if kb_base == 1000 { 1024 } else { 1000 };
    let iec = [("kib", 1), ("mib", 2), ("gib", 3), ("tib", 4), ("pib", 5)];
    for (name, pow) in iec {
        if unit.starts_with(name) {
            return (Some(other_base.pow(pow)), true);
        }
    }
    let pow = match unit.as_bytes().first() {
        Some(b'k') => 1,
        Some(b'm') => 2,
        Some(b'g') => 3,
        Some(b't') => 4,
        Some(b'p') => 5,
        Some(b'%') => return (None, true),
        Some(b'b') => return (Some(1), true),
        _ => return (Some(1), false),
    };
    (Some(kb_base.pow(pow)), true)
}

/// Parse a size the way `str_to_decimal(kilo=1)` does. `text` may run on past this value
/// (list elements do); only what precedes the first comma is read.
pub(crate) fn parse_size(
    text: &str,
    kb_base: u32,
    warnings: &mut Vec<String>,
) -> Result<SizeValue, String> {
    let s = before_comma(text);
    if s.starts_with('(') {
        let v = expr::eval(s, ExprMode::Size)?;
        return Ok(SizeValue::Bytes(v.int));
    }
    let (number, end) = leading_integer(s)?;
    let rest = &s[end..];
    let hex = s.contains("0x") || s.contains("0X");
    let unit_start = rest.chars().next();
    if hex || !unit_start.is_some_and(|c| c.is_ascii_alphabetic() || c == '%') {
        if rest.starts_with('.') {
            warnings.push(format!(
                "'{}': fio stops at the decimal point and reads {number}",
                s.trim()
            ));
        }
        return Ok(SizeValue::Bytes(number));
    }
    if s.starts_with([' ', '\t']) {
        warnings.push(format!(
            "'{s}': the blank after '=' makes fio ignore the unit; this is {number} bytes"
        ));
        return Ok(SizeValue::Bytes(number));
    }
    let unit: String = rest
        .chars()
        .take_while(|c| !is_separator(*c))
        .collect::<String>()
        .to_ascii_lowercase();
    let (mult, known) = size_unit(&unit, i64::from(kb_base));
    if !known {
        warnings.push(format!(
            "'{}': fio ignores the unknown unit '{unit}' and reads {number}",
            s.trim()
        ));
    }
    match mult {
        None => Ok(SizeValue::Percent(number)),
        Some(m) => number
            .checked_mul(m)
            .map(SizeValue::Bytes)
            .ok_or_else(|| "value too large".to_string()),
    }
}

/// A non-negative byte count (percentages rejected).
pub(crate) fn parse_bytes(
    text: &str,
    kb_base: u32,
    warnings: &mut Vec<String>,
) -> Result<u64, String> {
    match parse_size(text, kb_base, warnings)? {
        SizeValue::Bytes(b) => u64::try_from(b).map_err(|_| "negative size".to_string()),
        SizeValue::Percent(_) => Err("a percentage is not allowed here".to_string()),
    }
}

/// Parse a time the way `str_to_decimal(kilo=0)` does; the result is in microseconds.
pub(crate) fn parse_time_us(
    text: &str,
    unit: TimeUnit,
    warnings: &mut Vec<String>,
) -> Result<u64, String> {
    let s = before_comma(text);
    let default_mult: i64 = match unit {
        TimeUnit::Seconds => 1_000_000,
        TimeUnit::Micros => 1,
    };
    let value = if s.starts_with('(') {
        // Bare numbers in parentheses are microseconds; options counted in seconds are
        // then cut to whole seconds (`ival / 1000000`, times the default unit).
        let us = expr::eval(s, ExprMode::Time)?.int;
        if unit == TimeUnit::Seconds {
            let whole = us / 1_000_000 * 1_000_000;
            if whole != us {
                warnings.push(format!(
                    "'{s}' is {us} µs (bare numbers in parentheses are µs); fio keeps whole seconds: {} s",
                    whole / 1_000_000
                ));
            }
            whole
        } else {
            us
        }
    } else {
        let (number, _) = leading_integer(s)?;
        // get_mult_time(): skip digits and signs from the very start, then read the unit.
        let unit_at = s
            .find(|c: char| !(c.is_ascii_digit() || c == '+' || c == '-'))
            .unwrap_or(s.len());
        let rest = &s[unit_at..];
        let mult = if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            if s.starts_with([' ', '\t']) && s.contains(|c: char| c.is_ascii_alphabetic()) {
                warnings.push(format!(
                    "'{s}': the blank after '=' makes fio ignore the unit; the default unit applies"
                ));
            }
            default_mult
        } else {
            let word = rest.to_ascii_lowercase();
            match word.as_str() {
                w if w.starts_with("us") => 1,
                w if w.starts_with("ms") => 1000,
                "s" => 1_000_000,
                "m" => 60_000_000,
                "h" => 3_600_000_000,
                "d" => 86_400_000_000,
                _ => {
                    warnings.push(format!(
                        "'{}': fio does not know the time unit '{rest}' and reads {number} µs",
                        s.trim()
                    ));
                    1
                }
            }
        };
        number
            .checked_mul(mult)
            .ok_or_else(|| "value too large".to_string())?
    };
    u64::try_from(value).map_err(|_| "negative time".to_string())
}

/// What fio silently ignores after a single number and its unit (`*1024` in `size=8*1024`,
/// `-2g` in `size=1g-2g`, `,8` in `iodepth=4,8`), if anything.
pub(crate) fn ignored_tail(text: &str) -> Option<&str> {
    if text.starts_with('(') {
        return None;
    }
    let t = text.trim_start_matches([' ', '\t']);
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    let end = if t.len() > 1 && t.as_bytes()[0] == b'0' && (t.as_bytes()[1] | 0x20) == b'x' {
        2 + t[2..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(t.len() - 2)
    } else {
        let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        digits
            + t[digits..]
                .find(|c: char| !(c.is_ascii_alphabetic() || c == '%'))
                .unwrap_or(t.len() - digits)
    };
    let tail = &t[end..];
    (!tail.trim().is_empty() && !tail.starts_with('.')).then_some(tail)
}

/// `check_int()`: an integer for bool and "set" options.
pub(crate) fn parse_int_flag(text: &str) -> Result<i64, String> {
    leading_integer(text)
        .map(|(v, _)| v)
        .map_err(|_| "expected 0 or 1".to_string())
}

/// One element of a per-direction list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ListElement<'a> {
    /// Direction index (0 read, 1 write, 2 trim; higher ones are ignored).
    pub dir: usize,
    /// The text from this element to the end, as fio hands it to the value parser.
    pub rest: &'a str,
    /// Just this element's text.
    pub own: &'a str,
    /// Whether a separator followed (if not, the value propagates to later directions).
    pub more: bool,
}

/// Split a per-direction value as `handle_option()` does. With `commas_only`, `:` and `-`
/// are not separators (ranges use them).
pub(crate) fn split_list(text: &str, commas_only: bool) -> Vec<ListElement<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut dir = 0;
    loop {
        let sep = match rest.find(',') {
            Some(i) => Some(i),
            None if commas_only => None,
            None => rest.find(':').or_else(|| rest.find('-')),
        };
        let own = sep.map_or(rest, |i| &rest[..i]);
        out.push(ListElement {
            dir,
            rest,
            own,
            more: sep.is_some(),
        });
        match sep {
            Some(i) => rest = &rest[i + 1..],
            None => break,
        }
        dir += 1;
    }
    out
}

/// Values for read, write, trim from a list, `None` where the list leaves the default.
pub(crate) fn per_direction<T: Clone>(
    text: &str,
    commas_only: bool,
    warnings: &mut Vec<String>,
    mut parse: impl FnMut(&str, &mut Vec<String>) -> Result<T, String>,
) -> Result<[Option<T>; 3], String> {
    let mut out: [Option<T>; 3] = [None, None, None];
    let mut any = false;
    let elements = split_list(text, commas_only);
    if !text.contains(',') && elements.len() == 2 && !commas_only {
        warnings.push(format!(
            "'{text}' is not a range: without a comma fio reads '{}' for reads and '{}' for writes and trims",
            elements[0].own, elements[1].own
        ));
    }
    for el in elements {
        if el.own.trim().is_empty() {
            continue;
        }
        if el.dir > 2 {
            warnings.push(format!("'{text}': values after the third are ignored"));
            break;
        }
        let v = parse(el.rest, warnings)?;
        any = true;
        let last = if el.more { el.dir } else { 2 };
        for slot in out.iter_mut().take(last + 1).skip(el.dir) {
            *slot = Some(v.clone());
        }
    }
    if !any {
        return Err("empty value".to_string());
    }
    Ok(out)
}

/// A `low-high` (or `low:high`) byte range; a single value is a range of one. Swapped when
/// low > high, as fio swaps them.
pub(crate) fn parse_byte_range(
    text: &str,
    kb_base: u32,
    warnings: &mut Vec<String>,
) -> Result<(u64, u64), String> {
    let s = before_comma(text);
    let cut = s.find('-').or_else(|| s.find(':'));
    let (lo, hi) = match cut {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, s),
    };
    let lo = parse_bytes(lo, kb_base, warnings)?;
    let hi = parse_bytes(hi, kb_base, warnings)?;
    Ok((lo.min(hi), lo.max(hi)))
}

/// Split at `:` except where escaped as `\:` (fio's file and directory lists). Empty names
/// are dropped.
pub(crate) fn split_escaped_colons(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> i64 {
        match parse_size(text, 1024, &mut Vec::new()).unwrap() {
            SizeValue::Bytes(b) => b,
            SizeValue::Percent(p) => panic!("{text} gave {p}%"),
        }
    }

    #[test]
    fn kib_is_1000_and_k_is_1024_under_default_kb_base() {
        assert_eq!(bytes("10k"), 10240);
        assert_eq!(bytes("10KiB"), 10000);
        assert_eq!(bytes("1MiB"), 1_000_000);
        assert_eq!(bytes("4kb"), 4096);
        assert_eq!(bytes("1G"), 1 << 30);
    }

    #[test]
    fn kb_base_1000_flips_both_spellings() {
        let mut w = Vec::new();
        assert_eq!(parse_size("10k", 1000, &mut w), Ok(SizeValue::Bytes(10000)));
        assert_eq!(
            parse_size("10KiB", 1000, &mut w),
            Ok(SizeValue::Bytes(10240))
        );
    }

    #[test]
    fn hex_values_take_no_unit() {
        assert_eq!(bytes("0x10"), 16);
        assert_eq!(bytes("0x1f"), 31);
    }

    #[test]
    fn blank_after_equals_drops_the_size_unit() {
        let mut w = Vec::new();
        assert_eq!(parse_size(" 4k", 1024, &mut w), Ok(SizeValue::Bytes(4)));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn decimal_point_ends_the_number() {
        let mut w = Vec::new();
        assert_eq!(parse_size("1.5g", 1024, &mut w), Ok(SizeValue::Bytes(1)));
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn garbage_is_an_error_not_zero() {
        assert!(parse_size("abc", 1024, &mut Vec::new()).is_err());
        assert!(parse_size("", 1024, &mut Vec::new()).is_err());
    }

    #[test]
    fn percent_is_reported_as_such() {
        assert_eq!(
            parse_size("20%", 1024, &mut Vec::new()),
            Ok(SizeValue::Percent(20))
        );
        assert!(parse_bytes("20%", 1024, &mut Vec::new()).is_err());
    }

    #[test]
    fn sec_suffix_is_microseconds() {
        let mut w = Vec::new();
        assert_eq!(parse_time_us("2sec", TimeUnit::Seconds, &mut w), Ok(2));
        assert_eq!(w.len(), 1);
        assert_eq!(
            parse_time_us("2s", TimeUnit::Seconds, &mut w),
            Ok(2_000_000)
        );
        assert_eq!(parse_time_us("2", TimeUnit::Seconds, &mut w), Ok(2_000_000));
        assert_eq!(parse_time_us("2", TimeUnit::Micros, &mut w), Ok(2));
        assert_eq!(parse_time_us("3MS", TimeUnit::Micros, &mut w), Ok(3000));
        assert_eq!(
            parse_time_us("2m", TimeUnit::Micros, &mut w),
            Ok(120_000_000)
        );
        assert_eq!(
            parse_time_us("1h", TimeUnit::Seconds, &mut w),
            Ok(3_600_000_000)
        );
        assert_eq!(parse_time_us("5usec", TimeUnit::Seconds, &mut w), Ok(5));
    }

    #[test]
    fn parenthesised_time_defaults_to_microseconds() {
        let mut w = Vec::new();
        assert_eq!(parse_time_us("(10+5)", TimeUnit::Micros, &mut w), Ok(15));
        assert_eq!(
            parse_time_us("(2s+1s)", TimeUnit::Seconds, &mut w),
            Ok(3_000_000)
        );
        assert!(w.is_empty());
        // 1500 ms in a seconds option keeps whole seconds.
        assert_eq!(
            parse_time_us("(1500ms)", TimeUnit::Seconds, &mut w),
            Ok(1_000_000)
        );
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn lists_propagate_unless_a_comma_follows() {
        let parse = |t: &str, w: &mut Vec<String>| parse_bytes(t, 1024, w);
        let mut w = Vec::new();
        assert_eq!(
            per_direction("8k,32k", false, &mut w, parse),
            Ok([Some(8192), Some(32768), Some(32768)])
        );
        assert_eq!(
            per_direction("8k,32k,", false, &mut w, parse),
            Ok([Some(8192), Some(32768), None])
        );
        assert_eq!(
            per_direction(",8k", false, &mut w, parse),
            Ok([None, Some(8192), Some(8192)])
        );
        assert_eq!(
            per_direction("4k", false, &mut w, parse),
            Ok([Some(4096), Some(4096), Some(4096)])
        );
        assert!(w.is_empty());
        assert_eq!(
            per_direction("4k-16k", false, &mut w, parse),
            Ok([Some(4096), Some(16384), Some(16384)])
        );
        assert_eq!(
            per_direction("4k:16k", false, &mut w, parse),
            Ok([Some(4096), Some(16384), Some(16384)])
        );
        assert_eq!(w.len(), 2);
    }

    #[test]
    fn ranges_swap_when_low_exceeds_high() {
        let mut w = Vec::new();
        assert_eq!(parse_byte_range("8k-1k", 1024, &mut w), Ok((1024, 8192)));
        assert_eq!(parse_byte_range("1k:4k", 1024, &mut w), Ok((1024, 4096)));
        assert_eq!(parse_byte_range("4k", 1024, &mut w), Ok((4096, 4096)));
    }

    #[test]
    fn escaped_colons_stay_in_file_names() {
        assert_eq!(
            split_escaped_colons(r"/dev/sda:/mnt/a\:b:c"),
            vec![
                "/dev/sda".to_string(),
                "/mnt/a:b".to_string(),
                "c".to_string()
            ]
        );
    }
}
