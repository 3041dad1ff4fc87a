//! SIGINT and SIGTERM as a flag: the first one asks a run to stop where it is (the engine
//! stops submitting and drains the device, the simulator stops its jobs at the next event)
//! and report what it measured, marked partial. The handler only stores to atomics, the one
//! thing a signal handler may safely do.
//!
//! Choice: plain `sigaction` rather than the `signal-hook` crate, which installs its handlers
//! with `SA_RESTART`: the engine relies on a wait in `io_uring_enter` returning `EINTR` at
//! once, so it notices within one loop turn.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that set [`STOP`] first.
static SIGNAL: AtomicU8 = AtomicU8::new(0);

extern "C" fn on_stop_signal(signal: libc::c_int) {
    let _ = SIGNAL.compare_exchange(0, signal as u8, Ordering::SeqCst, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM (once is enough; later calls reinstall the
/// same one) and returns the flag it sets.
pub fn install_stop_signals() -> &'static AtomicBool {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `sigaction` is zero-initialisable plain data; we set a handler that only
        // stores to static atomics (async-signal-safe), with an empty mask and no flags.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction =
                on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = 0;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
    &STOP
}

/// [`install_stop_signals`], by its older name.
pub fn install_sigint() -> &'static AtomicBool {
    install_stop_signals()
}

/// The exit status a shell reports for the signal that stopped the run: 128 + its number
/// (130 for SIGINT, 143 for SIGTERM); 130 when none was seen.
pub fn stop_exit_status() -> u8 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => 128 + libc::SIGINT as u8,
        signal => 128u8.saturating_add(signal),
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
