//! The 64-byte block framing MD5 and SHA-256 share (Merkle–Damgård): input is cut into
//! 64-byte blocks for the compression function, and the end is padded with a 1 bit, zeros and
//! the message length in bits (little endian for MD5, big endian for SHA-256).

/// Runs `compress` over the padded concatenation of `parts`, block by block.
pub fn compress_all(parts: &[&[u8]], length_big_endian: bool, mut compress: impl FnMut(&[u8])) {
    let mut buffer = BlockBuffer::new();
    for part in parts {
        buffer.update(part, &mut compress);
    }
    buffer.finish(length_big_endian, &mut compress);
}

/// Bytes per compression block.
pub const BLOCK: usize = 64;

/// Input not yet compressed, and the length so far.
struct BlockBuffer {
    pending: [u8; BLOCK],
    pending_len: usize,
    total: u64,
}

impl BlockBuffer {
    fn new() -> BlockBuffer {
        BlockBuffer {
            pending: [0; BLOCK],
            pending_len: 0,
            total: 0,
        }
    }

    /// Feeds `data`, calling `compress` on every completed block.
    fn update(&mut self, mut data: &[u8], compress: &mut impl FnMut(&[u8])) {
        self.total = self.total.wrapping_add(data.len() as u64);
        while !data.is_empty() {
            if self.pending_len == 0 && data.len() >= BLOCK {
                // Whole blocks straight from the input: the common case.
                compress(&data[..BLOCK]);
                data = &data[BLOCK..];
                continue;
            }
            let take = data.len().min(BLOCK - self.pending_len);
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&data[..take]);
            self.pending_len += take;
            data = &data[take..];
            if self.pending_len == BLOCK {
                let block = self.pending;
                compress(&block);
                self.pending_len = 0;
            }
        }
    }

    /// Pads the message and compresses the last block(s).
    fn finish(mut self, length_big_endian: bool, compress: &mut impl FnMut(&[u8])) {
        let bit_len = self.total.wrapping_mul(8);
        let pad_len = if self.pending_len < 56 {
            56 - self.pending_len
        } else {
            120 - self.pending_len
        };
        let mut pad = [0u8; BLOCK];
        pad[0] = 0x80;
        self.update(&pad[..pad_len], compress);
        let length = if length_big_endian {
            bit_len.to_be_bytes()
        } else {
            bit_len.to_le_bytes()
        };
        self.update(&length, compress);
        assert_eq!(self.pending_len, 0, "padding left a partial block");
    }
}
