//! fio's byte patterns (`verify_pattern=`, `buffer_pattern=`): what a block is filled with,
//! parsed where the job file is read so a bad one is reported at its line.

/// A fio pattern: the bytes a block is filled with, repeated, and where the block's
/// offset goes (`%o`, 8 bytes little endian, fio's native order on x86-64).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    bytes: Vec<u8>,
    offset_at: Vec<usize>,
}

/// fio's limit on a pattern's length (MAX_PATTERN_SIZE).
const MAX_PATTERN_BYTES: usize = 512;

impl Pattern {
    /// Parses fio's syntax, pieces one after another: `0x` hex bytes (in the order written;
    /// an odd digit count gets a leading 0), `"text"`, `%o`. Decimal numbers, whose width fio
    /// infers, are refused: write them in hex.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let mut pattern = Pattern {
            bytes: Vec::new(),
            offset_at: Vec::new(),
        };
        let mut rest = text.trim();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
                let digits = after.len()
                    - after
                        .trim_start_matches(|c: char| c.is_ascii_hexdigit())
                        .len();
                if digits == 0 {
                    return Err(format!("'{rest}': 0x without hex digits"));
                }
                let hex = &after[..digits];
                let padded = if digits % 2 == 1 {
                    format!("0{hex}")
                } else {
                    hex.to_string()
                };
                for pair in padded.as_bytes().chunks(2) {
                    let text = std::str::from_utf8(pair).expect("ASCII hex digits");
                    pattern
                        .bytes
                        .push(u8::from_str_radix(text, 16).expect("two hex digits"));
                }
                rest = &after[digits..];
            } else if let Some(after) = rest.strip_prefix('"') {
                let end = after
                    .find('"')
                    .ok_or_else(|| format!("'{rest}': unterminated quoted text"))?;
                pattern.bytes.extend_from_slice(&after.as_bytes()[..end]);
                rest = &after[end + 1..];
            } else if let Some(after) = rest.strip_prefix("%o") {
                pattern.offset_at.push(pattern.bytes.len());
                pattern.bytes.extend_from_slice(&[0; 8]);
                rest = after;
            } else if rest.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
                return Err(format!(
                    "'{rest}': decimal patterns take a width fio infers; write it as 0x hex"
                ));
            } else {
                return Err(format!("'{rest}': expected 0x hex, \"text\" or %o"));
            }
        }
        if pattern.bytes.is_empty() {
            return Err("empty pattern".to_string());
        }
        if pattern.bytes.len() > MAX_PATTERN_BYTES {
            return Err(format!(
                "{} bytes: fio's patterns hold at most {MAX_PATTERN_BYTES}",
                pattern.bytes.len()
            ));
        }
        Ok(pattern)
    }

    /// The byte at position `i` of a block whose offset, little endian, is `offset`.
    fn byte_at(&self, i: usize, offset: &[u8; 8]) -> u8 {
        let pos = i % self.bytes.len();
        for &at in &self.offset_at {
            if (at..at + 8).contains(&pos) {
                return offset[pos - at];
            }
        }
        self.bytes[pos]
    }

    /// Fills `block`, the block at byte `offset` of the target, with the pattern repeated.
    pub fn fill(&self, block: &mut [u8], offset: u64) {
        let offset = offset.to_le_bytes();
        for (i, byte) in block.iter_mut().enumerate() {
            *byte = self.byte_at(i, &offset);
        }
    }

    /// Checks a block read back from `offset`; the error names the first byte that differs.
    pub fn check(&self, block: &[u8], offset: u64) -> Result<(), String> {
        let offset = offset.to_le_bytes();
        match (0..block.len()).find(|&i| block[i] != self.byte_at(i, &offset)) {
            None => Ok(()),
            Some(at) => Err(format!(
                "pattern mismatch at byte {at} of the block: read {:#04x}, expected {:#04x}",
                block[at],
                self.byte_at(at, &offset)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's pattern pieces: hex in written order (odd digit counts padded), text, the offset.
    #[test]
    fn patterns_parse_as_fio_writes_them() {
        let p = Pattern::parse("0xdeadbeef").unwrap();
        assert_eq!(p.bytes, [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(Pattern::parse("0xf").unwrap().bytes, [0x0f]);
        let p = Pattern::parse("0xff%o\"ab\"").unwrap();
        assert_eq!(p.bytes.len(), 1 + 8 + 2);
        assert_eq!(p.offset_at, [1]);
        for bad in ["", "12", "-12", "0x", "\"open", "zz", "0x1 0x2"] {
            assert!(Pattern::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    /// A filled block checks clean at its own offset; a flipped byte, or the same bytes at
    /// another offset when the pattern carries `%o`, fails naming the byte.
    #[test]
    fn pattern_blocks_check_their_bytes_and_offset() {
        let p = Pattern::parse("0xa5%o").unwrap();
        let mut block = vec![0u8; 4096];
        p.fill(&mut block, 8192);
        assert_eq!(&block[..9], &[0xa5, 0, 0x20, 0, 0, 0, 0, 0, 0]);
        assert_eq!(p.check(&block, 8192), Ok(()));
        assert!(p.check(&block, 4096).unwrap_err().contains("byte 2"));
        block[4000] ^= 1;
        let error = p.check(&block, 8192).unwrap_err();
        assert!(error.contains("byte 4000"), "{error}");
    }
}
