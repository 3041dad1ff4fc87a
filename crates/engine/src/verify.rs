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
//! the job's pattern ([`iosched_workload::pattern::Pattern`]) repeated, `%o` standing for the
//! block's offset on the target, so fio and iosched check each other's blocks. Beside a
//! checksum method the pattern fills the data after the header and is checked too.

use crate::checksum::{crc32c, md5, sha256};
use iosched_workload::pattern::Pattern;

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
    /// `verify=pattern`: no header; every byte is the job's `verify_pattern`.
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

    fn name(self) -> &'static str {
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

/// Fills `block` (at least [`HEADER_BYTES`] long) as the block written at byte `offset`: the
/// header, then the seed's stream or, with `verify_pattern`, the pattern.
pub fn fill(
    block: &mut [u8],
    method: VerifyMethod,
    offset: u64,
    seed: u64,
    pattern: Option<&Pattern>,
) {
    assert!(block.len() >= HEADER_BYTES, "block shorter than the header");
    let len = block.len() as u64;
    let (head, data) = block.split_at_mut(HEADER_BYTES);
    head.fill(0);
    head[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    head[4..8].copy_from_slice(&method.code().to_le_bytes());
    head[8..16].copy_from_slice(&offset.to_le_bytes());
    head[16..24].copy_from_slice(&len.to_le_bytes());
    head[24..32].copy_from_slice(&seed.to_le_bytes());
    match pattern {
        Some(pattern) => pattern.fill(data, offset),
        None => {
            // xorshift64*: cheap, and different for every (seed, offset).
            let mut state = (seed ^ offset.rotate_left(29)) | 1;
            for chunk in data.chunks_mut(8) {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                let word = state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
                chunk.copy_from_slice(&word[..chunk.len()]);
            }
        }
    }
    let sum = method.checksum(&head[..32], data);
    head[32..64].copy_from_slice(&sum);
}

/// Checks a block read back from byte `offset`; with `expected_seed`, also that it carries the
/// data this job last wrote there (not a valid block from another writer, which fio catches
/// by its header's write number); with a pattern, also that the data is the pattern. The
/// error says what is wrong.
pub fn check(
    block: &[u8],
    method: VerifyMethod,
    offset: u64,
    expected_seed: Option<u64>,
    pattern: Option<&Pattern>,
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
    match pattern {
        Some(pattern) => pattern
            .check(data, offset)
            .map_err(|message| format!("after the header: {message}")),
        None => Ok(()),
    }
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
            fill(&mut block, method, 1 << 20, 7, None);
            assert_eq!(check(&block, method, 1 << 20, Some(7), None), Ok(()));
        }
    }

    #[test]
    fn one_flipped_data_bit_is_caught() {
        let mut block = vec![0u8; 4096];
        fill(&mut block, VerifyMethod::Crc32c, 8192, 1, None);
        block[3000] ^= 0x10;
        let error = check(&block, VerifyMethod::Crc32c, 8192, None, None).unwrap_err();
        assert!(error.contains("crc32c mismatch"), "{error}");
    }

    #[test]
    fn a_block_found_at_the_wrong_offset_is_caught() {
        let mut block = vec![0u8; 512];
        fill(&mut block, VerifyMethod::Md5, 4096, 1, None);
        let error = check(&block, VerifyMethod::Md5, 8192, None, None).unwrap_err();
        assert!(error.contains("offset 4096"), "{error}");
    }

    /// A valid block from another writer (another seed) fails the read-back of a job that
    /// wrote there last; a reading job, expecting nothing in particular, accepts it.
    #[test]
    fn a_block_overwritten_by_another_writer_is_caught() {
        let mut block = vec![0u8; 4096];
        fill(&mut block, VerifyMethod::Crc32c, 8192, 99, None);
        let error = check(&block, VerifyMethod::Crc32c, 8192, Some(7), None).unwrap_err();
        assert!(error.contains("another writer"), "{error}");
        assert_eq!(
            check(&block, VerifyMethod::Crc32c, 8192, None, None),
            Ok(())
        );
    }

    /// SHA-256 fills the whole checksum field: a flip in its last byte is caught.
    #[test]
    fn sha256_uses_the_whole_checksum_field() {
        let mut block = vec![0u8; 4096];
        fill(&mut block, VerifyMethod::Sha256, 0, 3, None);
        assert_ne!(block[63], 0, "the digest's last byte sits at 63");
        block[63] ^= 1;
        let error = check(&block, VerifyMethod::Sha256, 0, None, None).unwrap_err();
        assert!(error.contains("sha256 mismatch"), "{error}");
        block[63] ^= 1;
        block[2000] ^= 4;
        assert!(check(&block, VerifyMethod::Sha256, 0, None, None).is_err());
    }

    /// With `verify_pattern` beside a checksum the data after the header is the pattern; a
    /// valid block carrying another pattern fails on the pattern, after its checksum passed.
    #[test]
    fn a_pattern_fills_the_data_after_the_header() {
        let ours = Pattern::parse("0x00ff").unwrap();
        let theirs = Pattern::parse("0xff00").unwrap();
        let mut block = vec![0u8; 4096];
        fill(&mut block, VerifyMethod::Md5, 0, 1, Some(&ours));
        assert_eq!(
            &block[HEADER_BYTES..HEADER_BYTES + 4],
            &[0x00, 0xff, 0x00, 0xff]
        );
        assert_eq!(
            check(&block, VerifyMethod::Md5, 0, Some(1), Some(&ours)),
            Ok(())
        );
        let error = check(&block, VerifyMethod::Md5, 0, None, Some(&theirs)).unwrap_err();
        assert!(
            error.starts_with("after the header: pattern mismatch at byte 0"),
            "{error}"
        );
    }

    #[test]
    fn zeroes_are_not_a_valid_block() {
        let block = vec![0u8; 4096];
        assert!(check(&block, VerifyMethod::Crc32c, 0, None, None)
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
