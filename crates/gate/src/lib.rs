//! The one gate every byte iosched writes goes through, whatever named the path: a flag
//! (`--output`, `--trace`, `--save-spec`, `--out`, `--plot`...), a job file (`write_iolog`,
//! `write_bw_log`...), a saved spec's `outputs`, a sweep spec.
//!
//! - [`check`] says what writing to a path would do and refuses what could destroy data: a
//!   block device, a character device other than a terminal or `/dev/null`-like sink, a
//!   file that carries a file-system, swap, encryption or partition-table signature, or a
//!   file that backs a loop device ([`holds`]). Only `--force` given on the command line
//!   lifts a refusal: callers pass that flag, never a value read from a file.
//! - [`confined`] refuses a path read from a file (job file, spec) that is absolute or climbs
//!   out with `..`, so a shared or hand-edited file cannot aim at an unrelated file;
//!   [`check_name`] refuses a name (tunable, job, cgroup component) that is not one.
//! - [`OutFile`] writes a regular file beside its destination (`FILE.partial`) and renames
//!   it into place once everything is written, so a failure (a full disk) leaves neither a
//!   truncated file nor the partial one. A FIFO, a terminal or `/dev/null` is written in
//!   place: renaming over it would replace the node with a file.
//!
//! ```
//! use std::io::Write;
//! let dir = std::env::temp_dir().join(format!("gate-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("out.txt");
//! let mut out = iosched_gate::OutFile::create(&path, false).unwrap();
//! out.write_all(b"hello\n").unwrap();
//! out.commit().unwrap();
//! assert_eq!(std::fs::read(&path).unwrap(), b"hello\n");
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

#![forbid(unsafe_code)]

mod check;
pub mod holds;
mod name;
mod out_file;

pub use check::{check, Destination, GateError};
pub use name::{check_name, confined};
pub use out_file::{append_file, write_file, OutFile};
