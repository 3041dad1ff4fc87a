//! The digests behind `verify=crc32c|md5|sha256`, over a block given in pieces (header, then
//! data) so that no block is copied to be summed.
//!
//! Well-kept crates do the arithmetic: `crc32c` uses the SSE 4.2 / ARMv8 CRC instruction where
//! the CPU has one (fio's `crc32c-intel`), `md-5` and `sha2` are RustCrypto's. CRC-32C is the
//! Castagnoli polynomial with fio's initial value and final xor `0xFFFFFFFF`.

use md5::{Digest, Md5};
use sha2::Sha256;

/// CRC-32C of the pieces, as if concatenated.
pub fn crc32c(parts: &[&[u8]]) -> u32 {
    parts
        .iter()
        .fold(0, |crc, part| crc32c::crc32c_append(crc, part))
}

/// MD5 digest of the pieces, as if concatenated.
pub fn md5(parts: &[&[u8]]) -> [u8; 16] {
    let mut hasher = Md5::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// SHA-256 digest of the pieces, as if concatenated.
pub fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The published check values (CRC catalogue, RFC 3720 B.4, RFC 1321, FIPS 180-2),
    /// with the input split at odd places: the pieces must chain as one stream.
    #[test]
    fn published_vectors_in_pieces() {
        assert_eq!(crc32c(&[b"1234", b"56789"]), 0xE306_9283);
        assert_eq!(crc32c(&[&[0u8; 13], &[0u8; 19]]), 0x8A91_36AA);
        assert_eq!(hex(&md5(&[b""])), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(
            hex(&md5(&[b"a", b"bc"])),
            "900150983cd24fb0d6963f7d28e17f72"
        );
        let million_a = vec![b'a'; 1_000_000];
        let pieces: Vec<&[u8]> = million_a.chunks(997).collect();
        assert_eq!(
            hex(&sha256(&pieces)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }
}
