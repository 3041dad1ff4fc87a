//! Two ways to emit one job's part of fio's JSON: as a `serde_json::Value` tree ([`Tree`], for
//! callers that read the figures back) or straight as fio-styled text ([`Text`], for
//! `--output-format=json`).
//!
//! The layout (which keys, in which order) is written once, against [`Emit`]; the two
//! emitters only differ in where the entries go. Text is what a run of thousands of jobs
//! prints, and building a tree of maps per job only to print and drop it cost about 480 K
//! instructions per job (issue 15: most of a 4096-process run's cost outside its simulation
//! loop). [`Text`] writes the same bytes as [`super::write_value`] of the tree: serde_json's
//! string escapes (it calls serde_json for any string that needs one), integers in decimal,
//! every float as `%f` (`{:.6}`), two-space indentation, `" : "` between key and value, and
//! an empty object as `{}`.

use serde_json::{Map, Value};
use std::io::{self, Write};

/// An object key: a name, a percentile (printed `%f`, as fio's `"99.900000"`) or a number
/// (json+'s bucket values).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Key<'a> {
    Name(&'a str),
    Percentile(f64),
    Number(u64),
}

impl<'a> From<&'a str> for Key<'a> {
    fn from(name: &'a str) -> Key<'a> {
        Key::Name(name)
    }
}

impl Key<'_> {
    fn to_key_string(self) -> String {
        match self {
            Key::Name(name) => name.to_string(),
            Key::Percentile(p) => format!("{p:.6}"),
            Key::Number(n) => n.to_string(),
        }
    }
}

/// Entries of nested JSON objects, in order. Floats that JSON cannot hold (NaN, infinities)
/// are written as 0, as [`super::float`] does.
pub(crate) trait Emit {
    fn uint<'k>(&mut self, key: impl Into<Key<'k>>, value: u64) -> io::Result<()>;
    fn int(&mut self, key: &str, value: i64) -> io::Result<()>;
    fn float<'k>(&mut self, key: impl Into<Key<'k>>, value: f64) -> io::Result<()>;
    fn string(&mut self, key: &str, value: &str) -> io::Result<()>;
    /// An array of unsigned integers.
    fn uints(&mut self, key: &str, values: &[u64]) -> io::Result<()>;
    /// Opens an object under `key`; entries go into it until [`Emit::end`].
    fn begin(&mut self, key: &str) -> io::Result<()>;
    fn end(&mut self) -> io::Result<()>;
}

/// A finite float, else 0 (JSON has no NaN or infinity).
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Builds a `serde_json::Value` object.
pub(crate) struct Tree {
    /// Open objects, innermost last, each with the key it goes under in its parent.
    open: Vec<(String, Map<String, Value>)>,
}

impl Tree {
    pub(crate) fn new() -> Tree {
        Tree {
            open: vec![(String::new(), Map::new())],
        }
    }

    /// The outermost object.
    pub(crate) fn finish(mut self) -> Value {
        debug_assert_eq!(self.open.len(), 1, "an object left open");
        Value::Object(self.open.pop().map(|(_, m)| m).unwrap_or_default())
    }

    fn put(&mut self, key: Key<'_>, value: Value) -> io::Result<()> {
        if let Some((_, map)) = self.open.last_mut() {
            map.insert(key.to_key_string(), value);
        }
        Ok(())
    }
}

impl Emit for Tree {
    fn uint<'k>(&mut self, key: impl Into<Key<'k>>, value: u64) -> io::Result<()> {
        self.put(key.into(), Value::from(value))
    }

    fn int(&mut self, key: &str, value: i64) -> io::Result<()> {
        self.put(key.into(), Value::from(value))
    }

    fn float<'k>(&mut self, key: impl Into<Key<'k>>, value: f64) -> io::Result<()> {
        self.put(key.into(), Value::from(finite(value)))
    }

    fn string(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.put(key.into(), Value::from(value))
    }

    fn uints(&mut self, key: &str, values: &[u64]) -> io::Result<()> {
        self.put(key.into(), Value::from(values.to_vec()))
    }

    fn begin(&mut self, key: &str) -> io::Result<()> {
        self.open.push((key.to_string(), Map::new()));
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        if self.open.len() > 1 {
            if let Some((key, map)) = self.open.pop() {
                return self.put(Key::Name(&key), Value::Object(map));
            }
        }
        Ok(())
    }
}

/// A newline and up to 32 levels of two-space indentation, written as one slice.
const NEWLINE_INDENT: &[u8; 65] =
    b"\n                                                                ";

/// Writes fio-styled JSON text into a buffer that the caller hands on to its writer (one
/// job at a time: a few kilobytes, where a write call per token would cost more than the
/// tokens).
#[derive(Default)]
pub(crate) struct Text {
    buf: Vec<u8>,
    /// Nesting depth of the entries being written.
    depth: usize,
    /// No entry written yet in the innermost open object.
    first: bool,
}

impl Text {
    /// Opens an object whose opening brace is at nesting `depth` (what precedes the brace
    /// is the caller's).
    pub(crate) fn open(&mut self, depth: usize) {
        self.buf.push(b'{');
        self.depth = depth + 1;
        self.first = true;
    }

    /// Closes every object down to nesting `depth` (the one [`Text::open`] opened), writes
    /// the text to `w` and empties the buffer.
    pub(crate) fn close<W: Write + ?Sized>(&mut self, depth: usize, w: &mut W) -> io::Result<()> {
        while self.depth > depth {
            self.close_object();
        }
        w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    fn newline(&mut self, depth: usize) {
        match NEWLINE_INDENT.get(..1 + 2 * depth) {
            Some(slice) => self.buf.extend_from_slice(slice),
            None => {
                self.buf.push(b'\n');
                (0..depth).for_each(|_| self.buf.extend_from_slice(b"  "));
            }
        }
    }

    /// The separator before an entry (`,` after the first), its line, and `"key" : `.
    fn key(&mut self, key: Key<'_>) -> io::Result<()> {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.newline(self.depth);
        match key {
            Key::Name(name) => self.quoted(name)?,
            Key::Percentile(p) => {
                self.buf.push(b'"');
                write_float(&mut self.buf, p)?;
                self.buf.push(b'"');
            }
            Key::Number(n) => {
                self.buf.push(b'"');
                write_uint(&mut self.buf, n);
                self.buf.push(b'"');
            }
        }
        self.buf.extend_from_slice(b" : ");
        Ok(())
    }

    /// A JSON string: as is when nothing in it needs an escape, else through serde_json's
    /// own escaping (control characters, `"` and `\`).
    fn quoted(&mut self, s: &str) -> io::Result<()> {
        if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
            return serde_json::to_writer(&mut self.buf, s).map_err(io::Error::other);
        }
        self.buf.push(b'"');
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(b'"');
        Ok(())
    }

    fn close_object(&mut self) {
        self.depth -= 1;
        if !self.first {
            self.newline(self.depth);
        }
        self.first = false;
        self.buf.push(b'}');
    }
}

/// `value` as `%f` (`{:.6}`). A whole number (most of a job's floats are 0 or whole) is
/// its digits and `.000000`, which is what `{:.6}` prints for it, without the general
/// exact decimal conversion.
pub(crate) fn write_float(buf: &mut Vec<u8>, value: f64) -> io::Result<()> {
    const EXACT: f64 = (1u64 << 53) as f64;
    if (0.0..EXACT).contains(&value) && value.fract() == 0.0 && value.is_sign_positive() {
        write_uint(buf, value as u64);
        buf.extend_from_slice(b".000000");
        Ok(())
    } else {
        write!(buf, "{value:.6}")
    }
}

/// `value` in decimal, as serde_json (and `{}`) print it.
fn write_uint(buf: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

impl Emit for Text {
    fn uint<'k>(&mut self, key: impl Into<Key<'k>>, value: u64) -> io::Result<()> {
        self.key(key.into())?;
        write_uint(&mut self.buf, value);
        Ok(())
    }

    fn int(&mut self, key: &str, value: i64) -> io::Result<()> {
        self.key(key.into())?;
        write!(self.buf, "{value}")
    }

    fn float<'k>(&mut self, key: impl Into<Key<'k>>, value: f64) -> io::Result<()> {
        self.key(key.into())?;
        write_float(&mut self.buf, finite(value))
    }

    fn string(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.key(key.into())?;
        self.quoted(value)
    }

    fn uints(&mut self, key: &str, values: &[u64]) -> io::Result<()> {
        self.key(key.into())?;
        self.buf.push(b'[');
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.newline(self.depth + 1);
            write_uint(&mut self.buf, *value);
        }
        if !values.is_empty() {
            self.newline(self.depth);
        }
        self.buf.push(b']');
        Ok(())
    }

    fn begin(&mut self, key: &str) -> io::Result<()> {
        self.key(key.into())?;
        self.buf.push(b'{');
        self.depth += 1;
        self.first = true;
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        self.close_object();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole-number shortcut prints what `{:.6}` prints, at the edges of where it
    /// applies (zero's sign, 2^53, fractions just off whole) and beyond.
    #[test]
    fn floats_print_as_percent_f() {
        let exact = (1u64 << 53) as f64;
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            99.95,
            1e-7,
            exact - 1.0,
            exact,
            exact + 2.0,
            1e20,
            f64::MAX,
            1.0 - f64::EPSILON,
            u64::MAX as f64,
        ] {
            let mut buf = Vec::new();
            write_float(&mut buf, v).unwrap();
            assert_eq!(String::from_utf8(buf).unwrap(), format!("{v:.6}"), "{v:e}");
        }
        for v in [0u64, 9, 10, 1234567890123, u64::MAX] {
            let mut buf = Vec::new();
            write_uint(&mut buf, v);
            assert_eq!(String::from_utf8(buf).unwrap(), v.to_string());
        }
    }
}
