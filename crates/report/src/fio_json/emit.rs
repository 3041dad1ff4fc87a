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
//!
//! Issue 34 (still about 100 K instructions per job, most of what a 4096-process run spent
//! outside its loop): keys known when the program is built are baked (`"name" : ` in 32
//! bytes, [`baked!`]), every entry is a few fixed-size copies into room kept ahead of the
//! text, numbers are written in place (floats by exact rounding, [`millionths`]), and an
//! object whose every figure matches the one written last in its place (the empty `write`
//! and `trim` of 4096 readers) is copied from that one ([`Emit::memo`]).

use serde_json::{Map, Value};
use std::io::{self, Write};

/// A key known when the program is built, as [`Text`] writes it: `"name" : ` in 32 bytes
/// (zero-padded), written with one fixed-size copy. Made by [`baked!`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Baked {
    text: [u8; 32],
    len: u8,
}

impl Baked {
    /// A placeholder, for arrays built entry by entry.
    pub(crate) const EMPTY: Baked = Baked {
        text: [0; 32],
        len: 0,
    };

    /// `"name" : ` for a `name` that needs no escape and fits (27 bytes at most): checked
    /// while building, where a failure stops the build.
    pub(crate) const fn new(name: &str) -> Baked {
        let name = name.as_bytes();
        assert!(name.len() + 5 <= 32, "a baked key is at most 27 bytes");
        let mut text = [0u8; 32];
        text[0] = b'"';
        let mut i = 0;
        while i < name.len() {
            assert!(name[i] >= 0x20 && name[i] != b'"' && name[i] != b'\\');
            text[i + 1] = name[i];
            i += 1;
        }
        let tail = b"\" : ";
        let mut j = 0;
        while j < tail.len() {
            text[name.len() + 1 + j] = tail[j];
            j += 1;
        }
        Baked {
            text,
            len: (name.len() + 5) as u8,
        }
    }

    /// The name alone.
    fn name(&self) -> &str {
        std::str::from_utf8(&self.text[1..usize::from(self.len) - 4]).unwrap_or_default()
    }
}

/// A [`Key::Baked`] for a literal name, built at compile time.
macro_rules! baked {
    ($name:literal) => {{
        const BAKED: $crate::fio_json::emit::Baked = $crate::fio_json::emit::Baked::new($name);
        $crate::fio_json::emit::Key::Baked(&BAKED)
    }};
}
pub(crate) use baked;

/// An object key: a name (baked at compile time, or any string), a percentile (printed
/// `%f`, as fio's `"99.900000"`) or a number (json+'s bucket values).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Key<'a> {
    Baked(&'static Baked),
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
            Key::Baked(baked) => baked.name().to_string(),
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
    fn int<'k>(&mut self, key: impl Into<Key<'k>>, value: i64) -> io::Result<()>;
    fn float<'k>(&mut self, key: impl Into<Key<'k>>, value: f64) -> io::Result<()>;
    fn string<'k>(&mut self, key: impl Into<Key<'k>>, value: &str) -> io::Result<()>;
    /// An array of unsigned integers.
    fn uints<'k>(&mut self, key: impl Into<Key<'k>>, values: &[u64]) -> io::Result<()>;
    /// Opens an object under `key`; entries go into it until [`Emit::end`].
    fn begin<'k>(&mut self, key: impl Into<Key<'k>>) -> io::Result<()>;
    fn end(&mut self) -> io::Result<()>;
    /// The entries `write` makes. `signature`, when given, is every figure they print:
    /// an emitter may repeat what the same `slot` wrote last time with the same signature
    /// instead (most of 4096 clones' objects are alike: empty directions, depth
    /// distributions).
    fn memo(
        &mut self,
        slot: usize,
        signature: Option<&[u64]>,
        write: impl FnOnce(&mut Self) -> io::Result<()>,
    ) -> io::Result<()>;
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

    fn int<'k>(&mut self, key: impl Into<Key<'k>>, value: i64) -> io::Result<()> {
        self.put(key.into(), Value::from(value))
    }

    fn float<'k>(&mut self, key: impl Into<Key<'k>>, value: f64) -> io::Result<()> {
        self.put(key.into(), Value::from(finite(value)))
    }

    fn string<'k>(&mut self, key: impl Into<Key<'k>>, value: &str) -> io::Result<()> {
        self.put(key.into(), Value::from(value))
    }

    fn uints<'k>(&mut self, key: impl Into<Key<'k>>, values: &[u64]) -> io::Result<()> {
        self.put(key.into(), Value::from(values.to_vec()))
    }

    fn begin<'k>(&mut self, key: impl Into<Key<'k>>) -> io::Result<()> {
        self.open.push((key.into().to_key_string(), Map::new()));
        Ok(())
    }

    fn memo(
        &mut self,
        _slot: usize,
        _signature: Option<&[u64]>,
        write: impl FnOnce(&mut Self) -> io::Result<()>,
    ) -> io::Result<()> {
        write(self)
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

/// An entry's lead-in, a fixed 32-byte copy of which the first `1 + 2 * depth` bytes (one
/// more with the comma) are kept: without a comma, then with one.
const LEAD_INS: [[u8; 32]; 2] = [lead_in_chunk(false), lead_in_chunk(true)];

const fn lead_in_chunk(comma: bool) -> [u8; 32] {
    let mut chunk = [b' '; 32];
    if comma {
        chunk[0] = b',';
        chunk[1] = b'\n';
    } else {
        chunk[0] = b'\n';
    }
    chunk
}

/// Two decimal digits for each of 0..100.
const DIGIT_PAIRS: [[u8; 2]; 100] = {
    let mut pairs = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        pairs[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    pairs
};

/// The deepest nesting whose lead-in (`,`, newline, indentation) fits a 32-byte copy.
const FIXED_DEPTH: usize = 15;

/// Room every entry is sure of before it starts: a lead-in (32 bytes), a baked key (32) and
/// a number (at most 27), each written by a fixed-size copy that may run past its own end.
const SLACK: usize = 128;

/// Writes fio-styled JSON text straight into one buffer that the caller hands on to its
/// writer (one job at a time: a few kilobytes). Every entry is a handful of fixed-size
/// copies into room kept ahead of the text ([`SLACK`]) and digits written in place: no
/// per-token `memcpy` call, growth check or formatter (4096 jobs: 25 MB of text, issue 34).
pub(crate) struct Text {
    /// The text is `buf[..len]`; the rest is zeroed room, at least [`SLACK`] bytes before
    /// each entry.
    buf: Vec<u8>,
    len: usize,
    /// Nesting depth of the entries being written.
    depth: usize,
    /// No entry written yet in the innermost open object or array.
    first: bool,
    /// What each [`Emit::memo`] slot wrote last.
    memos: Vec<Memo>,
    /// Percentile keys written so far: the percentile's bits, `"p" : ` and its length.
    percentile_keys: Vec<(u64, [u8; 32], usize)>,
    /// Where in `percentile_keys` the next percentile key is likely to be.
    percentile_hint: usize,
}

/// A slot's last entries: their text from the key on (the lead-in is the caller's), the
/// nesting they were written at, and the figures that decided them.
#[derive(Default)]
struct Memo {
    signature: Vec<u64>,
    depth: usize,
    text: Vec<u8>,
}

impl Default for Text {
    fn default() -> Text {
        Text {
            buf: vec![0; 8192],
            len: 0,
            depth: 0,
            first: true,
            memos: Vec::new(),
            percentile_keys: Vec::new(),
            percentile_hint: 0,
        }
    }
}

impl Text {
    /// Opens the document's object.
    pub(crate) fn open(&mut self) {
        self.room(0);
        self.byte(b'{');
        self.depth = 1;
        self.first = true;
    }

    /// Closes every open object and array, ends the line and writes the text to `w`.
    pub(crate) fn finish<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        while self.depth > 0 {
            self.close_with(b'}');
        }
        self.put(b"\n");
        self.flush(w)
    }

    /// Opens an array under `key`; [`Text::item`] opens each object in it, [`Text::end_array`]
    /// closes it.
    pub(crate) fn begin_array(&mut self, key: Key<'_>) -> io::Result<()> {
        self.key(key)?;
        self.byte(b'[');
        self.depth += 1;
        self.first = true;
        Ok(())
    }

    /// Opens the next object of the innermost array; [`Emit::end`] closes it.
    pub(crate) fn item(&mut self) {
        self.room(0);
        self.lead_in(!self.first, self.depth);
        self.first = false;
        self.byte(b'{');
        self.depth += 1;
        self.first = true;
    }

    pub(crate) fn end_array(&mut self) {
        self.close_with(b']');
    }

    /// Writes the text so far to `w` and empties the buffer.
    pub(crate) fn flush<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(&self.buf[..self.len])?;
        self.len = 0;
        Ok(())
    }

    /// Makes sure of `extra` bytes beyond [`SLACK`] after the text.
    #[inline(always)]
    fn room(&mut self, extra: usize) {
        let need = self.len + extra + SLACK;
        if need > self.buf.len() {
            self.buf.resize(need.max(2 * self.buf.len()), 0);
        }
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    /// `bytes`, of any length.
    fn put(&mut self, bytes: &[u8]) {
        self.room(bytes.len());
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// The first `n` bytes of `chunk` (32 are copied: the room is there).
    #[inline(always)]
    fn put_chunk(&mut self, chunk: &[u8; 32], n: usize) {
        self.buf[self.len..self.len + 32].copy_from_slice(chunk);
        self.len += n;
    }

    /// A comma unless this is the first entry, then a newline and `depth` indentation.
    #[inline(always)]
    fn lead_in(&mut self, comma: bool, depth: usize) {
        let chunk = &LEAD_INS[usize::from(comma)];
        if depth <= FIXED_DEPTH {
            self.put_chunk(chunk, 1 + usize::from(comma) + 2 * depth);
        } else {
            self.put(&chunk[..1 + usize::from(comma)]);
            (0..depth).for_each(|_| self.put(b"  "));
        }
    }

    /// The separator before an entry (`,` after the first), its line, and `"key" : `.
    fn key(&mut self, key: Key<'_>) -> io::Result<()> {
        self.room(0);
        self.lead_in(!self.first, self.depth);
        self.first = false;
        match key {
            Key::Baked(name) => self.put_chunk(&name.text, usize::from(name.len)),
            Key::Name(name) => {
                self.quoted(name)?;
                self.put(b" : ");
            }
            Key::Percentile(p) => self.percentile_key(p),
            Key::Number(n) => {
                self.byte(b'"');
                self.uint_value(n);
                self.put(b"\" : ");
            }
        }
        Ok(())
    }

    /// `"p" : ` for a percentile `p` (`"99.900000" : `), from the keys written before: every
    /// job prints the same list, one after the other.
    fn percentile_key(&mut self, p: f64) {
        let bits = p.to_bits();
        let hint = self.percentile_hint;
        let found = match self.percentile_keys.get(hint) {
            Some(&(b, _, _)) if b == bits => Some(hint),
            _ => self.percentile_keys.iter().position(|&(b, _, _)| b == bits),
        };
        let index = match found {
            Some(index) => index,
            None => {
                let start = self.len;
                self.byte(b'"');
                self.float_value(p);
                self.put(b"\" : ");
                let n = self.len - start;
                if n > 32 {
                    return; // a huge percentile: written, not kept
                }
                let mut chunk = [0u8; 32];
                chunk[..n].copy_from_slice(&self.buf[start..self.len]);
                self.len = start;
                self.percentile_keys.push((bits, chunk, n));
                self.percentile_keys.len() - 1
            }
        };
        let (_, chunk, n) = self.percentile_keys[index];
        self.put_chunk(&chunk, n);
        self.percentile_hint = index + 1;
    }

    /// A JSON string: as is when nothing in it needs an escape, else through serde_json's
    /// own escaping (control characters, `"` and `\`).
    fn quoted(&mut self, s: &str) -> io::Result<()> {
        if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
            let mut escaped = Vec::new();
            serde_json::to_writer(&mut escaped, s).map_err(io::Error::other)?;
            self.put(&escaped);
            return Ok(());
        }
        self.room(s.len() + 2);
        self.byte(b'"');
        self.put(s.as_bytes());
        self.byte(b'"');
        Ok(())
    }

    /// Ends the innermost object (`}`) or array (`]`).
    fn close_with(&mut self, bracket: u8) {
        self.depth -= 1;
        self.room(0);
        if !self.first {
            self.lead_in(false, self.depth);
        }
        self.first = false;
        self.byte(bracket);
    }

    /// `value` in decimal, as serde_json (and `{}`) print it, written in place two digits
    /// at a time.
    fn uint_value(&mut self, mut value: u64) {
        if value < 10 {
            self.byte(b'0' + value as u8);
            return;
        }
        let n = value.ilog10() as usize + 1;
        let mut end = self.len + n;
        while value >= 100 {
            let pair = DIGIT_PAIRS[(value % 100) as usize];
            value /= 100;
            self.buf[end - 2..end].copy_from_slice(&pair);
            end -= 2;
        }
        if value >= 10 {
            self.buf[end - 2..end].copy_from_slice(&DIGIT_PAIRS[value as usize]);
        } else {
            self.buf[end - 1] = b'0' + value as u8;
        }
        self.len += n;
    }

    fn int_value(&mut self, value: i64) {
        if value < 0 {
            self.byte(b'-');
        }
        self.uint_value(value.unsigned_abs());
    }

    /// `value` as `%f` (`{:.6}`): the whole part, then [`millionths`] of the rest (the
    /// subtraction is exact below 2^53); from 2^53 on, and NaN or infinities, through the
    /// formatter.
    fn float_value(&mut self, value: f64) {
        const EXACT: f64 = (1u64 << 53) as f64;
        if value.is_sign_negative() && !value.is_nan() {
            self.byte(b'-');
        }
        let magnitude = value.abs();
        if magnitude < EXACT {
            let mut whole = magnitude as u64;
            let mut fraction = millionths(magnitude - whole as f64);
            if fraction == 1_000_000 {
                whole += 1;
                fraction = 0;
            }
            self.uint_value(whole);
            self.byte(b'.');
            let at = self.len;
            let pairs = [fraction / 10_000, fraction / 100 % 100, fraction % 100];
            for (i, pair) in pairs.into_iter().enumerate() {
                self.buf[at + 2 * i..at + 2 * i + 2].copy_from_slice(&DIGIT_PAIRS[pair as usize]);
            }
            self.len += 6;
        } else {
            let text = format!("{magnitude:.6}");
            self.put(text.as_bytes());
        }
    }

    /// Any JSON value where a value goes, in the layout serde_json prints with fio's
    /// formatter ([`super::write_value`]): the document's own entries (`iosched`, a run's
    /// per-queue figures) without a copy of the tree or serde's per-token writes.
    pub(crate) fn value(&mut self, value: &Value) -> io::Result<()> {
        self.room(0);
        match value {
            Value::Null => self.put(b"null"),
            Value::Bool(b) => self.put(if *b { b"true" } else { b"false" }),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    self.uint_value(u);
                } else if let Some(i) = n.as_i64() {
                    self.int_value(i);
                } else {
                    self.float_value(n.as_f64().unwrap_or(0.0));
                }
            }
            Value::String(s) => self.quoted(s)?,
            Value::Array(items) => {
                self.byte(b'[');
                self.depth += 1;
                self.first = true;
                for item in items {
                    self.room(0);
                    self.lead_in(!self.first, self.depth);
                    self.first = false;
                    self.value(item)?;
                }
                self.close_with(b']');
            }
            Value::Object(map) => {
                self.byte(b'{');
                self.depth += 1;
                self.first = true;
                for (k, v) in map {
                    self.key(Key::Name(k))?;
                    self.value(v)?;
                }
                self.close_with(b'}');
            }
        }
        Ok(())
    }

    /// An entry of any JSON value under `key`.
    pub(crate) fn entry(&mut self, key: &str, value: &Value) -> io::Result<()> {
        self.key(Key::Name(key))?;
        self.value(value)
    }
}

/// `fraction` (in [0, 1)) in millionths as `{:.6}` rounds it: the exact binary value to
/// the nearest millionth, ties to even (1,000,000 when it rounds up to 1).
fn millionths(fraction: f64) -> u32 {
    if fraction == 0.0 {
        return 0;
    }
    let bits = fraction.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as u32;
    let mantissa = bits & ((1 << 52) - 1);
    // fraction = mantissa * 2^-shift exactly, shift > 52 below 1.
    let (mantissa, shift) = if exponent == 0 {
        (mantissa, 1074)
    } else {
        (mantissa | (1 << 52), 1075 - exponent)
    };
    if shift >= 128 {
        // Below 2^-75: under half a millionth.
        return 0;
    }
    // mantissa * 10^6 < 2^73: exact in a u128.
    let scaled = u128::from(mantissa) * 1_000_000;
    let quotient = scaled >> shift;
    let rest = scaled - (quotient << shift);
    let half = 1u128 << (shift - 1);
    let up = rest > half || (rest == half && quotient & 1 == 1);
    (quotient + u128::from(up)) as u32
}

impl Emit for Text {
    fn uint<'k>(&mut self, key: impl Into<Key<'k>>, value: u64) -> io::Result<()> {
        self.key(key.into())?;
        self.uint_value(value);
        Ok(())
    }

    fn int<'k>(&mut self, key: impl Into<Key<'k>>, value: i64) -> io::Result<()> {
        self.key(key.into())?;
        self.int_value(value);
        Ok(())
    }

    fn float<'k>(&mut self, key: impl Into<Key<'k>>, value: f64) -> io::Result<()> {
        self.key(key.into())?;
        self.float_value(finite(value));
        Ok(())
    }

    fn string<'k>(&mut self, key: impl Into<Key<'k>>, value: &str) -> io::Result<()> {
        self.key(key.into())?;
        self.quoted(value)
    }

    fn uints<'k>(&mut self, key: impl Into<Key<'k>>, values: &[u64]) -> io::Result<()> {
        self.key(key.into())?;
        self.byte(b'[');
        for (i, value) in values.iter().enumerate() {
            self.room(0);
            self.lead_in(i > 0, self.depth + 1);
            self.uint_value(*value);
        }
        self.room(0);
        if !values.is_empty() {
            self.lead_in(false, self.depth);
        }
        self.byte(b']');
        Ok(())
    }

    fn begin<'k>(&mut self, key: impl Into<Key<'k>>) -> io::Result<()> {
        self.key(key.into())?;
        self.byte(b'{');
        self.depth += 1;
        self.first = true;
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        self.close_with(b'}');
        Ok(())
    }

    fn memo(
        &mut self,
        slot: usize,
        signature: Option<&[u64]>,
        write: impl FnOnce(&mut Self) -> io::Result<()>,
    ) -> io::Result<()> {
        let Some(signature) = signature else {
            return write(self);
        };
        if self.memos.len() <= slot {
            self.memos.resize_with(slot + 1, Memo::default);
        }
        let memo = &self.memos[slot];
        if !memo.text.is_empty() && memo.depth == self.depth && memo.signature == signature {
            let text = std::mem::take(&mut self.memos[slot].text);
            self.room(0);
            self.lead_in(!self.first, self.depth);
            self.first = false;
            self.put(&text);
            self.memos[slot].text = text;
            return Ok(());
        }
        // The entries' text starts after their lead-in.
        let (depth, start) = (
            self.depth,
            self.len + 1 + usize::from(!self.first) + 2 * self.depth,
        );
        write(self)?;
        let memo = &mut self.memos[slot];
        if self.len <= start {
            memo.text.clear();
            return Ok(());
        }
        memo.signature.clear();
        memo.signature.extend_from_slice(signature);
        memo.depth = depth;
        memo.text.clear();
        memo.text.extend_from_slice(&self.buf[start..self.len]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(write: impl FnOnce(&mut Text)) -> String {
        let mut text = Text::default();
        write(&mut text);
        let mut out = Vec::new();
        text.flush(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The exact six-decimal rounding prints what `{:.6}` prints: at the edges of where it
    /// applies (zero's sign, 2^53, subnormals), on exact ties (odd multiples of half a
    /// millionth that a binary fraction holds: 2^-7 = 0.0078125 and the like, where the
    /// formatter rounds to even), and on a million values spread over every magnitude.
    #[test]
    fn floats_print_as_percent_f() {
        let exact = (1u64 << 53) as f64;
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            99.95,
            1e-7,
            5e-7,
            4.999999e-7,
            exact - 1.0,
            exact - 0.5,
            exact,
            exact + 2.0,
            1e20,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            1.0 - f64::EPSILON,
            u64::MAX as f64,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for k in 0..4096u32 {
            values.push(f64::from(k) / 128.0);
            values.push(f64::from(2 * k + 1) / 2_097_152.0);
            values.push(f64::from(k) * 0.000_000_5);
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1_000_000 {
            // xorshift64: any bit pattern, so every exponent and mantissa shows up.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = f64::from_bits(state);
            values.push(v);
            values.push(v.abs() % 1e7);
        }
        for v in values {
            let got = text_of(|t| t.float_value(v));
            assert_eq!(got, format!("{v:.6}"), "{v:e} ({:#x})", v.to_bits());
        }
    }

    #[test]
    fn integers_print_as_display() {
        for v in [0u64, 9, 10, 99, 100, 1234567890123, u64::MAX] {
            assert_eq!(text_of(|t| t.uint_value(v)), v.to_string());
        }
        for v in [0i64, -1, -10, 42, i64::MIN, i64::MAX] {
            assert_eq!(text_of(|t| t.int_value(v)), v.to_string());
        }
    }

    /// Baked keys print as named ones, and nesting past the fixed-copy depth keeps its
    /// indentation.
    #[test]
    fn baked_keys_and_deep_nesting_match_named_ones() {
        let deep = |baked: bool| {
            let mut t = Text::default();
            t.open();
            for _ in 0..20 {
                if baked {
                    t.begin(baked!("iodepth_complete")).unwrap();
                } else {
                    t.begin("iodepth_complete").unwrap();
                }
            }
            t.uint(baked!("N"), 7).unwrap();
            t.uints("a", &[1, 2]).unwrap();
            t.uints("b", &[]).unwrap();
            let mut out = Vec::new();
            t.finish(&mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let text = deep(true);
        assert_eq!(text, deep(false));
        let indent = " ".repeat(42);
        assert!(text.contains(&format!("\n{indent}\"N\" : 7,\n{indent}\"a\" : [\n")));
        assert!(text.ends_with("\n  }\n}\n"));
        assert_eq!(
            baked!("latency_percentile").to_key_string(),
            "latency_percentile"
        );
    }
}
