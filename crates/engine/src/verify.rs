//! fio-style data verification: every written block carries a header naming where it was
//! written, how long it is, the seed of its contents and a checksum; reading it back checks all
//! four.
//!
//! The header is ours, not fio's on-disk format (fio cannot verify what iosched wrote, nor the
//! other way round); the options mean the same: `verify=crc32c|md5|sha256` with `do_verify=1` reads
//! back every block a writing job wrote once the job is done, and a reading job with `verify=`
//! checks every block it reads. The verify interval is the I/O size, as fio's default.
//!
//! Layout of the first [`HEADER_BYTES`] bytes of a block (little endian):
//! `0..4` magic, `4..8` method, `8..16` byte offset on the target, `16..24` block length,
//! `24..32` seed, `32..64` checksum (CRC-32C in the first four bytes, the MD5 digest in the
//! first sixteen, or the SHA-256 digest), zero past it. The checksum covers bytes `0..32` and
//! the data after the header, which is a pseudo-random stream drawn from the seed.
//!
//! `verify=pattern` (or `verify_pattern=` alone) is fio's own format, header-less: the block is
//! the [`Pattern`] repeated, `%o` standing for the block's offset on the target, so fio and
//! iosched check each other's blocks.

use crate::crc32c::crc32c;
use crate::md5::md5;
use crate::sha256::sha256;

/// Bytes of header at the start of every verified block.
pub const HEADER_BYTES: usize = 64;
/// Marks a block written by iosched's verifier.
const MAGIC: u32 = 0x1050_5CED;

/// A `verify=` method the engine implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyMethod {
    Crc32c,
    Md5,
    Sha256,
    /// `verify=pattern`: no header; every byte is the job's [`Pattern`].
    Pattern,
}

impl VerifyMethod {
    /// The method fio's `verify=NAME` selects; `Ok(None)` for `0`/`null`-style "no verify".
    pub fn parse(name: &str) -> Result<Option<VerifyMethod>, String> {
        match name {
            "" | "0" | "none" | "null" => Ok(None),
            "crc32c" | "crc32c-intel" | "crc32c-arm64" => Ok(Some(VerifyMethod::Crc32c)),
            "md5" => Ok(Some(VerifyMethod::Md5)),
            "sha256" => Ok(Some(VerifyMethod::Sha256)),
            "pattern" => Ok(Some(VerifyMethod::Pattern)),
            other => Err(format!(
                "verify={other} is not implemented by the engine (use crc32c, md5, sha256 or pattern)"
            )),
        }
    }

    fn code(self) -> u32 {
        match self {
            VerifyMethod::Crc32c => 1,
            VerifyMethod::Md5 => 2,
            VerifyMethod::Sha256 => 3,
            VerifyMethod::Pattern => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            VerifyMethod::Crc32c => "crc32c",
            VerifyMethod::Md5 => "md5",
            VerifyMethod::Sha256 => "sha256",
            VerifyMethod::Pattern => "pattern",
        }
    }

    /// The checksum field, `header[32..64]`: the digest, zero-padded.
    fn checksum(self, head: &[u8], data: &[u8]) -> [u8; 32] {
        let mut out = [0u8; 32];
        match self {
            VerifyMethod::Crc32c => out[..4].copy_from_slice(&crc32c(&[head, data]).to_le_bytes()),
            VerifyMethod::Md5 => out[..16].copy_from_slice(&md5(&[head, data])),
            VerifyMethod::Sha256 => out = sha256(&[head, data]),
            VerifyMethod::Pattern => unreachable!("a pattern block has no checksum"),
        }
        out
    }
}

/// fio's `verify_pattern`: the bytes a block is filled with, repeated, and where the block's
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

    /// One repetition, with `offset` pasted in.
    fn unit(&self, offset: u64) -> Vec<u8> {
        let mut unit = self.bytes.clone();
        for &at in &self.offset_at {
            unit[at..at + 8].copy_from_slice(&offset.to_le_bytes());
        }
        unit
    }

    /// Fills `block`, the block at byte `offset` of the target, with the pattern repeated.
    pub fn fill(&self, block: &mut [u8], offset: u64) {
        let unit = self.unit(offset);
        for chunk in block.chunks_mut(unit.len()) {
            chunk.copy_from_slice(&unit[..chunk.len()]);
        }
    }

    /// Checks a block read back from `offset`; the error names the first byte that differs.
    pub fn check(&self, block: &[u8], offset: u64) -> Result<(), String> {
        let unit = self.unit(offset);
        let expected = unit.iter().cycle();
        match block
            .iter()
            .zip(expected)
            .position(|(got, want)| got != want)
        {
            None => Ok(()),
            Some(at) => Err(format!(
                "pattern mismatch at byte {at} of the block: read {:#04x}, expected {:#04x}",
                block[at],
                unit[at % unit.len()]
            )),
        }
    }
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(raw)
}

fn le_u32(bytes: &[u8]) -> u32 {
    let mut raw = [0u8; 4];
    raw.copy_from_slice(&bytes[..4]);
    u32::from_le_bytes(raw)
}

/// Fills `block` (at least [`HEADER_BYTES`] long) as the block written at byte `offset`.
pub fn fill(block: &mut [u8], method: VerifyMethod, offset: u64, seed: u64) {
    assert!(block.len() >= HEADER_BYTES, "block shorter than the header");
    let len = block.len() as u64;
    let (head, data) = block.split_at_mut(HEADER_BYTES);
    head.fill(0);
    head[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    head[4..8].copy_from_slice(&method.code().to_le_bytes());
    head[8..16].copy_from_slice(&offset.to_le_bytes());
    head[16..24].copy_from_slice(&len.to_le_bytes());
    head[24..32].copy_from_slice(&seed.to_le_bytes());
    // xorshift64*: cheap, and different for every (seed, offset).
    let mut state = (seed ^ offset.rotate_left(29)) | 1;
    for chunk in data.chunks_mut(8) {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let word = state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
    let sum = method.checksum(&head[..32], data);
    head[32..64].copy_from_slice(&sum);
}

/// Checks a block read back from byte `offset`; with `expected_seed`, also that it carries the
/// data this job last wrote there (not a valid block from another writer, which fio catches
/// by its header's write number). The error says what is wrong.
pub fn check(
    block: &[u8],
    method: VerifyMethod,
    offset: u64,
    expected_seed: Option<u64>,
) -> Result<(), String> {
    if block.len() < HEADER_BYTES {
        return Err(format!(
            "block of {} bytes is shorter than the header",
            block.len()
        ));
    }
    let (head, data) = block.split_at(HEADER_BYTES);
    let magic = le_u32(&head[0..4]);
    if magic != MAGIC {
        return Err(format!(
            "bad magic {magic:#010x} (expected {MAGIC:#010x}): block never written or overwritten"
        ));
    }
    let code = le_u32(&head[4..8]);
    if code != method.code() {
        return Err(format!(
            "written with verify method {code}, checking with {method:?}"
        ));
    }
    let written_at = le_u64(&head[8..16]);
    if written_at != offset {
        return Err(format!("header says offset {written_at}: misplaced write"));
    }
    let len = le_u64(&head[16..24]);
    if len != block.len() as u64 {
        return Err(format!("header says length {len}, read {}", block.len()));
    }
    let seed = le_u64(&head[24..32]);
    if let Some(expected) = expected_seed.filter(|&expected| expected != seed) {
        return Err(format!(
            "block carries data seed {seed:#x} where this job wrote {expected:#x}: \
             overwritten by another writer"
        ));
    }
    let sum = method.checksum(&head[..32], data);
    if sum[..] != head[32..64] {
        return Err(format!(
            "{} mismatch: data corrupted after the header",
            method.name()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_block_checks_clean_with_every_method() {
        for method in [
            VerifyMethod::Crc32c,
            VerifyMethod::Md5,
            VerifyMethod::Sha256,
        ] {
            let mut block = vec![0u8; 4096];
            fill(&mut block, method, 1 << 20, 7);
            assert_eq!(check(&block, method, 1 << 20, Some(7)), Ok(()));
        }
    }

    #[test]
    fn one_flipped_data_bit_is_caught() {
        let mut block = vec![0u8; 4096];
        fill(&mut block, VerifyMethod::Crc32c, 8192, 1);
        block[3000] ^= 0x10;
        let error = check(&block, VerifyMethod::Crc32c, 8192, None).unwrap_err();
        assert!(error.contains("crc32c mismatch"), "{error}");
    }

    #[test]
    fn a_block_found_at_the_wrong_offset_is_caught() {
        let mut block = vec![0u8; 512];
        fill(&mut block, VerifyMethod::Md5, 4096, 1);
        let error = check(&block, VerifyMethod::Md5, 8192, None).unwrap_err();
        assert!(error.contains("offset 4096"), "{error}");
    }

    /// A valid block from another writer (another seed) fails the read-back of a job that
    /// wrote there last; a reading job, expecting nothing in particular, accepts it.
    #[test]
    fn a_block_overwritten_by_another_writer_is_caught() {
        let mut block = vec![0u8; 4096];
        fill(&mut block, VerifyMethod::Crc32c, 8192, 99);
        let error = check(&block, VerifyMethod::Crc32c, 8192, Some(7)).unwrap_err();
        assert!(error.contains("another writer"), "{error}");
        assert_eq!(check(&block, VerifyMethod::Crc32c, 8192, None), Ok(()));
    }

    /// SHA-256 fills the whole checksum field: a flip in its last byte is caught.
    #[test]
    fn sha256_uses_the_whole_checksum_field() {
        let mut block = vec![0u8; 4096];
        fill(&mut block, VerifyMethod::Sha256, 0, 3);
        assert_ne!(block[63], 0, "the digest's last byte sits at 63");
        block[63] ^= 1;
        let error = check(&block, VerifyMethod::Sha256, 0, None).unwrap_err();
        assert!(error.contains("sha256 mismatch"), "{error}");
        block[63] ^= 1;
        block[2000] ^= 4;
        assert!(check(&block, VerifyMethod::Sha256, 0, None).is_err());
    }

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

    #[test]
    fn zeroes_are_not_a_valid_block() {
        let block = vec![0u8; 4096];
        assert!(check(&block, VerifyMethod::Crc32c, 0, None)
            .unwrap_err()
            .contains("bad magic"));
    }

    #[test]
    fn fio_method_names_and_unknown_ones() {
        assert_eq!(VerifyMethod::parse("md5"), Ok(Some(VerifyMethod::Md5)));
        let crc = VerifyMethod::parse("crc32c-intel");
        assert_eq!(crc, Ok(Some(VerifyMethod::Crc32c)));
        let sha = VerifyMethod::parse("sha256");
        assert_eq!(sha, Ok(Some(VerifyMethod::Sha256)));
        let pattern = VerifyMethod::parse("pattern");
        assert_eq!(pattern, Ok(Some(VerifyMethod::Pattern)));
        assert_eq!(VerifyMethod::parse("0"), Ok(None));
        assert!(VerifyMethod::parse("sha512")
            .unwrap_err()
            .contains("sha256"));
    }
}
