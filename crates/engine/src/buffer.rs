//! Aligned I/O buffers for O_DIRECT, one contiguous allocation cut into equal slots so the
//! whole pool can be registered with io_uring at once (`IORING_REGISTER_BUFFERS`: the kernel
//! pins the pages once instead of on every request).
//!
//! A slot belongs either to the pool (free) or to exactly one request in the device; the
//! engine only touches a slot's bytes while it is not in the device.
//!
//! Written data is fio's by default: buffers start filled with pseudo-random bytes (not
//! zeros, which some devices store specially), and every write is scrambled with its offset
//! in each 512-byte sector ([`scramble`], fio's `scramble_buffers=1`), so no two blocks are
//! alike for a deduplicating or compressing device.

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// 4 KiB: enough alignment for O_DIRECT on every logical block size up to 4 KiB.
pub const ALIGN: usize = 4096;

/// A fixed set of equal, aligned buffer slots.
pub struct BufferPool {
    base: *mut u8,
    layout: Layout,
    slot_bytes: usize,
    slots: usize,
    free: Vec<usize>,
}

impl BufferPool {
    /// `slots` buffers of at least `slot_bytes` each (rounded up to [`ALIGN`]), filled with
    /// pseudo-random bytes.
    pub fn new(slots: usize, slot_bytes: usize) -> BufferPool {
        let slots = slots.max(1);
        let slot_bytes = slot_bytes.max(1).div_ceil(ALIGN) * ALIGN;
        let layout =
            Layout::from_size_align(slots * slot_bytes, ALIGN).expect("buffer pool size overflows");
        // SAFETY: the layout has a non-zero size (slots and slot_bytes are at least 1 and
        // ALIGN respectively) and a power-of-two alignment.
        let base = unsafe { alloc_zeroed(layout) };
        if base.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let pool = BufferPool {
            base,
            layout,
            slot_bytes,
            slots,
            free: (0..slots).rev().collect(),
        };
        // SAFETY: the whole allocation, owned by the new pool; nothing is in a device yet.
        let all = unsafe { std::slice::from_raw_parts_mut(pool.base, slots * slot_bytes) };
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for chunk in all.chunks_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
        }
        pool
    }

    /// Bytes per slot.
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// Takes a free slot, if any.
    pub fn take(&mut self) -> Option<usize> {
        self.free.pop()
    }

    /// Returns a slot taken earlier.
    pub fn give_back(&mut self, slot: usize) {
        assert!(slot < self.slots, "slot out of range");
        // O(slots): debug builds only.
        debug_assert!(!self.free.contains(&slot), "slot returned twice");
        self.free.push(slot);
    }

    /// Start of a slot, for the kernel.
    pub fn ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.slots, "slot out of range");
        // SAFETY: slot < slots, so the offset stays inside the allocation.
        unsafe { self.base.add(slot * self.slot_bytes) }
    }

    /// The first `len` bytes of a slot. The caller owns the slot (it is not in the device).
    pub fn bytes_mut(&mut self, slot: usize, len: usize) -> &mut [u8] {
        assert!(len <= self.slot_bytes, "request larger than a buffer slot");
        // SAFETY: the range lies inside slot `slot` of our allocation; `&mut self` keeps the
        // engine from making a second slice of it, and the slot is not in the device while
        // the engine fills or checks it (see the module doc).
        unsafe { std::slice::from_raw_parts_mut(self.ptr(slot), len) }
    }

    /// One iovec per slot, for `register_buffers` (slot index = buffer index).
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|slot| libc::iovec {
                iov_base: self.ptr(slot).cast(),
                iov_len: self.slot_bytes,
            })
            .collect()
    }
}

/// fio's `refill_buffers`: new pseudo-random bytes, a different stream for each `seed`.
pub fn refill(block: &mut [u8], seed: u64) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in block.chunks_mut(8) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
    }
}

/// fio's `scramble_buffers`: stamps the write's byte `offset` (plus the sector's place) into
/// the first 8 bytes of each 512-byte sector of `block`, so every block written differs.
pub fn scramble(block: &mut [u8], offset: u64) {
    for (index, sector) in block.chunks_mut(512).enumerate() {
        let stamp = (offset + index as u64 * 512).to_le_bytes();
        let n = sector.len().min(8);
        sector[..n].copy_from_slice(&stamp[..n]);
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // SAFETY: `base` came from `alloc_zeroed` with this same layout and is freed once.
        unsafe { dealloc(self.base, self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut pool = BufferPool::new(3, 5000);
        assert_eq!(pool.slot_bytes(), 8192);
        let a = pool.take().unwrap();
        let b = pool.take().unwrap();
        assert_ne!(a, b);
        assert_eq!(pool.ptr(a) as usize % ALIGN, 0);
        let before: Vec<u8> = pool.bytes_mut(b, 8192).to_vec();
        pool.bytes_mut(a, 8192).fill(1);
        assert_eq!(pool.bytes_mut(b, 8192), &before[..], "slots are disjoint");
        pool.give_back(a);
        assert_eq!(pool.take(), Some(a));
    }

    /// Buffers start as data, not zeros, and two scrambled writes of the same buffer at two
    /// offsets differ in every sector.
    #[test]
    fn buffers_hold_data_and_scrambled_blocks_differ() {
        let mut pool = BufferPool::new(2, 4096);
        let slot = pool.take().unwrap();
        let block = pool.bytes_mut(slot, 4096);
        let zeros = block.iter().filter(|&&b| b == 0).count();
        assert!(zeros < 64, "{zeros} zero bytes in 4 KiB");
        scramble(block, 1 << 20);
        let first = block.to_vec();
        scramble(block, 2 << 20);
        for (a, b) in first.chunks(512).zip(block.chunks(512)) {
            assert_ne!(a, b);
        }
        // Refilled blocks differ throughout, not just in their stamps.
        refill(block, 1);
        let one = block.to_vec();
        refill(block, 2);
        let same = one.iter().zip(block.iter()).filter(|(a, b)| a == b).count();
        assert!(same < 64, "{same} equal bytes of 4096");
    }
}
