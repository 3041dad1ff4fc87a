//! SIGINT as a flag: the first Ctrl-C asks the engine to stop submitting, drain what is in
//! the device and report what it measured; the handler only stores to an atomic, the one thing
//! a signal handler may safely do.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_signal: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT handler (once is enough; later calls reinstall the same one) and
/// returns the flag it sets. Without `SA_RESTART`, a wait in `io_uring_enter` returns
/// `EINTR` at once, so the engine notices within one loop turn.
pub fn install_sigint() -> &'static AtomicBool {
    // SAFETY: `sigaction` is zero-initialisable plain data; we set a handler that only
    // stores to a static atomic (async-signal-safe), with an empty mask and no flags.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = 0;
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
    &INTERRUPTED
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
