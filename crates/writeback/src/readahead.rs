//! On-demand read-ahead, simplified from the kernel's `ondemand_readahead()`
//! (mm/readahead.c, 2.6.3x–4.x).
//!
//! Per file the state is a window `start..start+size` whose last `async_size` pages are
//! "ahead"; the page at `start + size - async_size` carries the read-ahead mark
//! (PG_readahead). The rules kept:
//! - a miss at page 0, at the page right after the previous read (`prev + 1`, a sequential
//!   cache miss), or a request larger than the maximum → *initial* window of
//!   `get_init_ra_size(req)` pages (4× the request rounded up to a power of two when small,
//!   2× when medium, else the maximum), of which everything beyond the request is ahead;
//! - reaching the end of the current window (or its mark) → the next window, `start += size`,
//!   size grown by `get_next_ra_size()` (×4 while below max/16, else ×2, capped), all ahead;
//! - any other miss is a "standalone small random read": read as is, state untouched.
//!
//! The mark is hit on a *cached* page (async read-ahead: the reader does not wait) or on a
//! miss (sync read-ahead: the window is read with the request).
//!
//! One state per open file, as the kernel's `file_ra_state` lives in `struct file`: fio
//! clones and jobs sharing a file each read ahead on their own windows
//! ([`crate::Writeback::open`]). `try_context_readahead()` (interleaved streams recovered
//! from the page cache history) is not modelled.
//!
//! Advice given at open (`posix_fadvise()`, which fio gives every file it opens unless
//! `fadvise_hint=0`) changes the open file's state as Linux 4.20's `generic_fadvise()` does:
//! `POSIX_FADV_SEQUENTIAL` doubles that file's maximum window (`f_ra.ra_pages` = twice the
//! device's), `POSIX_FADV_RANDOM` sets `FMODE_RANDOM`, under which a miss reads only the pages
//! asked for (`page_cache_sync_readahead()` calls `force_page_cache_readahead()` for the
//! request alone) and leaves the window untouched, so no page is ever marked.

/// Access-pattern advice an open file was given. Kernel: the `advice` of `generic_fadvise()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Advice {
    /// None (`POSIX_FADV_NORMAL`): the device's `read_ahead_kb`.
    #[default]
    Normal,
    /// `POSIX_FADV_SEQUENTIAL`: twice the device's maximum window.
    Sequential,
    /// `POSIX_FADV_RANDOM`: `FMODE_RANDOM`, no read-ahead.
    Random,
}

impl Advice {
    /// The open file's maximum window, in pages, given the device's. Kernel:
    /// `file->f_ra.ra_pages` after `generic_fadvise()`.
    pub fn ra_pages(self, device_pages: u64) -> u64 {
        match self {
            Advice::Sequential => device_pages * 2,
            Advice::Normal | Advice::Random => device_pages,
        }
    }
}

/// Read-ahead state of one file. Kernel: struct file_ra_state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Readahead {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// Last page of the previous read, if any.
    pub prev: Option<u64>,
}

/// A window to read: `first..first+count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub first: u64,
    pub count: u64,
}

/// Kernel: get_init_ra_size().
pub fn init_size(req_pages: u64, max: u64) -> u64 {
    let size = req_pages.max(1).next_power_of_two();
    if size <= max / 32 {
        size * 4
    } else if size <= max / 4 {
        size * 2
    } else {
        max
    }
}

/// Kernel: get_next_ra_size().
pub fn next_size(cur: u64, max: u64) -> u64 {
    let next = if cur < max / 16 { cur * 4 } else { cur * 2 };
    next.min(max)
}

impl Readahead {
    /// The read-ahead mark, if a window is open.
    pub fn mark(&self) -> Option<u64> {
        (self.size > 0).then(|| self.start + self.size - self.async_size)
    }

    /// A read of `first..first+req` missed at page `miss` (≥ `first`): the window to read
    /// synchronously. Kernel: page_cache_sync_readahead() → ondemand_readahead().
    pub fn on_miss(&mut self, miss: u64, first: u64, req: u64, max: u64) -> Window {
        let end = first + req;
        let left = end - miss;
        if max == 0 {
            return Window {
                first: miss,
                count: left,
            };
        }
        let window_end = self.start + self.size;
        let window = if self.size > 0 && (Some(miss) == self.mark() || miss == window_end) {
            // The stream reached the ahead part: slide and grow.
            self.start = window_end.max(miss);
            self.size = next_size(self.size, max);
            self.async_size = self.size;
            Window {
                first: self.start,
                count: self.size,
            }
        } else if miss == 0 || left > max || self.prev.is_some_and(|p| miss <= p + 1 && miss >= p) {
            self.start = miss;
            self.size = init_size(left, max).max(left.min(max));
            self.async_size = self.size.saturating_sub(left);
            Window {
                first: miss,
                count: self.size,
            }
        } else {
            // Standalone small random read: as is, state untouched.
            Window {
                first: miss,
                count: left,
            }
        };
        self.prev = Some(end - 1);
        Window {
            first: window.first,
            count: window.count.max(end.saturating_sub(window.first)),
        }
    }

    /// A read of `first..first+req` was fully cached; if it crossed the mark, the next
    /// window to read asynchronously. Kernel: page_cache_async_readahead().
    pub fn on_hit(&mut self, first: u64, req: u64, max: u64) -> Option<Window> {
        let end = first + req;
        self.prev = Some(end - 1);
        let mark = self.mark()?;
        if max == 0 || mark < first || mark >= end {
            return None;
        }
        self.start += self.size;
        self.size = next_size(self.size, max);
        self.async_size = self.size;
        Some(Window {
            first: self.start,
            count: self.size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sequential 4 KiB reader with read_ahead_kb=128 (32 pages): 4 pages first, then the
    /// window doubles up to 32 (×4 only below max/16) and moves on at each mark.
    #[test]
    fn sequential_reader_ramps_up_to_the_maximum() {
        let mut ra = Readahead::default();
        let first = ra.on_miss(0, 0, 1, 32);
        assert_eq!(first, Window { first: 0, count: 4 });
        assert_eq!(ra.mark(), Some(1));
        assert_eq!(ra.on_hit(0, 1, 32), None);
        let next = ra.on_hit(1, 1, 32).expect("page 1 carries the mark");
        assert_eq!(next, Window { first: 4, count: 8 });
        let next = ra.on_hit(4, 1, 32).expect("mark at the new window's start");
        assert_eq!(
            next,
            Window {
                first: 12,
                count: 16
            }
        );
        let next = ra.on_hit(12, 1, 32).expect("mark again");
        assert_eq!(
            next,
            Window {
                first: 28,
                count: 32
            }
        );
    }

    /// Proves random reads do not trigger read-ahead.
    #[test]
    fn random_small_read_is_read_as_is() {
        let mut ra = Readahead::default();
        ra.on_miss(0, 0, 1, 32);
        let window = ra.on_miss(1000, 1000, 1, 32);
        assert_eq!(
            window,
            Window {
                first: 1000,
                count: 1
            }
        );
    }

    #[test]
    fn sequential_miss_after_previous_read_opens_a_window() {
        let mut ra = Readahead::default();
        ra.on_miss(500, 500, 1, 32);
        let window = ra.on_miss(501, 501, 1, 32);
        assert_eq!(
            window,
            Window {
                first: 501,
                count: 4
            }
        );
    }
}
