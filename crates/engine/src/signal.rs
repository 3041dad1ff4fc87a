//! SIGINT and SIGTERM as a flag: the first one asks a run to stop where it is (the engine
//! stops submitting and drains the device, the simulator stops its jobs at the next event)
//! and report what it measured, marked partial. The handler only stores to atomics, the one
//! thing a signal handler may safely do.
//!
//! The handlers are `signal-hook`'s (`signal_hook::flag`), which installs them with
//! `SA_RESTART`. That flag does not delay a stop: the engine waits for completions in
//! `io_uring_enter`, and the kernel's wait for events (`io_cqring_wait` in
//! `io_uring/wait.c`) ends with `-EINTR` when a signal is pending, never with
//! `-ERESTARTSYS`, and only the `-ERESTART*` codes are restarted after a handler ran; so
//! the wait returns at once under `SA_RESTART` as without it (`tests/signals.rs` stops an
//! engine run blocked in a minute-long wait). The engine's other waits go through the
//! same call (the worker threads' eventfd reads are queued in their rings).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Once};

static STOP: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));
/// The number of the last stop signal seen (0: none).
static SIGNAL: LazyLock<Arc<AtomicUsize>> = LazyLock::new(|| Arc::new(AtomicUsize::new(0)));
static INSTALL: Once = Once::new();

/// Installs the handlers for SIGINT and SIGTERM (once; later calls return the same flag)
/// and returns the flag they set.
pub fn install_stop_signals() -> &'static AtomicBool {
    INSTALL.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // Registration fails only for the signals signal-hook forbids (SIGKILL,
            // SIGSEGV...), which these are not; without a handler the signal's default
            // action (ending the process) still applies.
            let _ = signal_hook::flag::register_usize(signal, Arc::clone(&SIGNAL), signal as usize);
            let _ = signal_hook::flag::register(signal, Arc::clone(&STOP));
        }
    });
    &STOP
}

/// The exit status a shell reports for the signal that stopped the run: 128 + its number
/// (130 for SIGINT, 143 for SIGTERM; the later one when both came); 130 when none was seen.
pub fn stop_exit_status() -> u8 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => 128 + libc::SIGINT as u8,
        signal => 128u8.saturating_add(u8::try_from(signal).unwrap_or(u8::MAX)),
    }
}

/// Sends SIGINT to process `pid` (a child such as fio), so that it stops and reports.
pub fn interrupt(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
}
