//! A jbd2-like journal: one running transaction collecting metadata blocks, committed by
//! the journal thread (its own pid and io context, in the root cgroup) into a circular
//! journal area.
//!
//! A commit of transaction T (kernel: jbd2_journal_commit_transaction()):
//! 1. T stops running; T+1 starts collecting;
//! 2. the descriptor block and T's metadata blocks are written sequentially at the journal
//!    head (sync writes, no REQ_IDLE: CFQ's sync-noidle tree, as seed 002's trace shows),
//!    and waited for;
//! 3. the commit block: with barriers a cache flush, then the block with FUA (the kernel's
//!    WRITE_FLUSH_FUA, handled by the flush machinery outside the scheduler); with
//!    `barrier=0` a plain sync write through the scheduler;
//! 4. when it completes, T is committed: every fsync waiting on a tid ≤ T returns, and if a
//!    later commit was asked for meanwhile, it starts at once.
//!
//! A transaction holding blocks is also committed `commit` interval (5 s) after it started.
//!
//! Choice: metadata is counted in blocks per file per transaction — the inode's block
//! whenever a write updates it (mtime), plus two (bitmap and extent/group descriptor) when a
//! write allocates — rather than tracking ext4's real metadata layout.

use iosched_core::SECTOR_SIZE;

/// 4 KiB journal block in sectors.
pub const BLOCK_SECTORS: u64 = 4096 / SECTOR_SIZE;

/// A transaction id.
pub type Tid = u64;

/// What the journal thread submits next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JournalIo {
    /// Sequential log blocks (descriptor + metadata).
    Log { sector: u64, nr_sectors: u32 },
    /// Cache flush before the commit block.
    Flush,
    /// The commit block; `fua` with barriers.
    Commit { sector: u64, fua: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Log writes outstanding.
    Log {
        outstanding: u32,
    },
    Flush,
    Commit,
}

/// The journal's state.
#[derive(Clone, Debug)]
pub struct Journal {
    area_start: u64,
    area_blocks: u64,
    head: u64,
    barrier: bool,
    max_request_blocks: u64,
    running: Tid,
    running_blocks: u64,
    committing: Option<(Tid, Phase)>,
    /// Highest tid someone asked to commit.
    requested: Tid,
    committed: Tid,
    commits: u64,
}

impl Journal {
    /// A journal of `area_sectors` at `area_start`.
    pub fn new(
        area_start: u64,
        area_sectors: u64,
        barrier: bool,
        max_request_blocks: u64,
    ) -> Journal {
        Journal {
            area_start,
            area_blocks: (area_sectors / BLOCK_SECTORS).max(2),
            head: 0,
            barrier,
            max_request_blocks: max_request_blocks.max(1),
            running: 1,
            running_blocks: 0,
            committing: None,
            requested: 0,
            committed: 0,
            commits: 0,
        }
    }

    pub fn running(&self) -> Tid {
        self.running
    }
    pub fn running_blocks(&self) -> u64 {
        self.running_blocks
    }
    pub fn committed(&self) -> Tid {
        self.committed
    }
    pub fn commits(&self) -> u64 {
        self.commits
    }
    pub fn is_committing(&self) -> bool {
        self.committing.is_some()
    }

    /// Adds `blocks` of metadata to the running transaction; returns its tid.
    pub fn add_blocks(&mut self, blocks: u64) -> Tid {
        self.running_blocks += blocks;
        self.running
    }

    /// Asks for `tid` to be committed; returns the I/O to start if a commit starts now.
    /// Kernel: jbd2_log_start_commit().
    pub fn request_commit(&mut self, tid: Tid) -> Vec<JournalIo> {
        if tid <= self.committed {
            return Vec::new();
        }
        self.requested = self.requested.max(tid);
        self.maybe_start()
    }

    fn maybe_start(&mut self) -> Vec<JournalIo> {
        if self.committing.is_some() || self.requested < self.running {
            return Vec::new();
        }
        let tid = self.running;
        let blocks = 1 + self.running_blocks;
        self.running += 1;
        self.running_blocks = 0;
        let mut ios = Vec::new();
        let mut left = blocks;
        while left > 0 {
            let room = self.area_blocks - 1 - self.head;
            if room == 0 {
                self.head = 0;
                continue;
            }
            let count = left.min(room).min(self.max_request_blocks);
            ios.push(JournalIo::Log {
                sector: self.area_start + self.head * BLOCK_SECTORS,
                nr_sectors: (count * BLOCK_SECTORS) as u32,
            });
            self.head += count;
            left -= count;
        }
        self.committing = Some((
            tid,
            Phase::Log {
                outstanding: ios.len() as u32,
            },
        ));
        ios
    }

    fn commit_block(&mut self) -> JournalIo {
        if self.head + 1 >= self.area_blocks {
            self.head = 0;
        }
        let sector = self.area_start + self.head * BLOCK_SECTORS;
        self.head += 1;
        JournalIo::Commit {
            sector,
            fua: self.barrier,
        }
    }

    /// One journal I/O completed. Returns the next I/O to submit, and the tid that became
    /// committed if the commit finished (the caller then wakes waiters with tid ≤ it and
    /// submits whatever a following commit starts with, also returned).
    pub fn io_done(&mut self) -> (Vec<JournalIo>, Option<Tid>) {
        let (tid, phase) = self
            .committing
            .expect("journal I/O completed with no commit");
        match phase {
            Phase::Log { outstanding } => {
                assert!(outstanding > 0, "journal log count went negative");
                if outstanding > 1 {
                    self.committing = Some((
                        tid,
                        Phase::Log {
                            outstanding: outstanding - 1,
                        },
                    ));
                    return (Vec::new(), None);
                }
                if self.barrier {
                    self.committing = Some((tid, Phase::Flush));
                    (vec![JournalIo::Flush], None)
                } else {
                    self.committing = Some((tid, Phase::Commit));
                    (vec![self.commit_block()], None)
                }
            }
            Phase::Flush => {
                self.committing = Some((tid, Phase::Commit));
                (vec![self.commit_block()], None)
            }
            Phase::Commit => {
                self.committing = None;
                self.committed = tid;
                self.commits += 1;
                (self.maybe_start(), Some(tid))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A commit is log write(s), flush, FUA commit block; a request made during a commit is
    /// served by the next commit, started as soon as the first completes.
    #[test]
    fn commit_sequence_with_barriers_and_batching() {
        let mut journal = Journal::new(1000, 64 * BLOCK_SECTORS, true, 256);
        let tid = journal.add_blocks(3);
        let ios = journal.request_commit(tid);
        assert_eq!(
            ios,
            [JournalIo::Log {
                sector: 1000,
                nr_sectors: 32
            }]
        );
        let next = journal.add_blocks(1);
        assert_eq!(next, tid + 1);
        assert!(
            journal.request_commit(next).is_empty(),
            "one commit at a time"
        );
        assert_eq!(journal.io_done(), (vec![JournalIo::Flush], None));
        assert_eq!(
            journal.io_done(),
            (
                vec![JournalIo::Commit {
                    sector: 1032,
                    fua: true
                }],
                None
            )
        );
        let (ios, done) = journal.io_done();
        assert_eq!(done, Some(tid));
        assert_eq!(
            ios,
            [JournalIo::Log {
                sector: 1040,
                nr_sectors: 16
            }],
            "next commit starts"
        );
        assert!(journal.request_commit(tid).is_empty(), "already committed");
    }

    #[test]
    fn without_barriers_the_commit_block_is_a_plain_write_and_the_area_wraps() {
        let mut journal = Journal::new(0, 4 * BLOCK_SECTORS, false, 256);
        journal.add_blocks(1);
        let ios = journal.request_commit(1);
        assert_eq!(
            ios,
            [JournalIo::Log {
                sector: 0,
                nr_sectors: 16
            }]
        );
        assert_eq!(
            journal.io_done(),
            (
                vec![JournalIo::Commit {
                    sector: 16,
                    fua: false
                }],
                None
            )
        );
        assert_eq!(journal.io_done().1, Some(1));
        journal.add_blocks(2);
        let ios = journal.request_commit(2);
        assert_eq!(
            ios,
            [JournalIo::Log {
                sector: 0,
                nr_sectors: 24
            }],
            "wrapped"
        );
    }
}
