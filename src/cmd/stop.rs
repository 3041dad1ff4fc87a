//! SIGINT and SIGTERM, the same in every command that runs something (`run`, `kernel`,
//! `replay`, `sweep`, `reproduce`, `calibrate`): the first signal sets a flag that the work
//! polls (the simulator every so many events, the engine between completions, a sweep or
//! `reproduce` before each simulation), what was measured is written marked `interrupted`,
//! and the exit status is the shell's 128 + the signal's number (130, 143).
//!
//! Commands that only read and print (`plot`, `compare`, the lists) install nothing: a
//! signal ends them at once, as it ends any filter.

use std::sync::atomic::AtomicBool;

use anyhow::anyhow;

use super::{CmdResult, Failure};

/// Installs the handlers (once per process) and returns the flag they set. Called first
/// thing by a command, so that no signal can find the process without them once it has
/// started work.
pub fn install() -> &'static AtomicBool {
    iosched_engine::signal::install_stop_signals()
}

/// The failure a command returns after writing its partial results: the mark every command
/// prints, with the signal's exit status.
pub fn interrupted() -> Failure {
    Failure {
        error: anyhow!("interrupted: the results above are partial"),
        code: iosched_engine::signal::stop_exit_status(),
    }
}

/// [`interrupted`] when `partial`, else success.
pub fn status(partial: bool) -> CmdResult {
    if partial {
        Err(interrupted())
    } else {
        Ok(())
    }
}
