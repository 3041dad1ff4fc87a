//! `iosched kernel --trace FILE`: the kernel's own record of the run, from ftrace's `blk`
//! tracer. `blktrace` cannot capture on a locked-down kernel, but the `blk` tracer can, and
//! it carries the scheduler's own messages (BFQ's `bfq_log` lines) beside the request
//! events (Q G I D C...). BFQ does not log its idle timer, so the timer events that start
//! and fire `bfq_idle_slice_timer` are traced too, where the kernel can filter them.
//!
//! tracefs is mounted in a private mount namespace (a child `unshare --mount` that mounts
//! it on a scratch folder and streams `trace_pipe` to us), so the machine's mounts are not
//! touched. The child's view is reached through `/proc/PID/root`. Every setting changed
//! (the tracer, the device's `trace/enable`, the timer events and their filters) is saved
//! first and put back after the run, or on an error or panic ([`Drop`]).

mod settings;
pub mod summary;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iosched_gate::OutFile;

use crate::error::KernelError;
use crate::Restored;
use settings::Saved;
pub use summary::TraceSummary;

/// How long the ring buffer may take to drain into the file after the run.
const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// A running capture of one disk's block events and scheduler messages.
pub struct TraceCapture {
    child: Child,
    /// The tracefs mount as this process reaches it: `/proc/PID/root/<scratch>`.
    tracefs: PathBuf,
    scratch: PathBuf,
    saved: Saved,
    reader: Option<JoinHandle<std::io::Result<(OutFile, TraceSummary)>>>,
    /// Lines the reader has copied so far: the drain waits until they stop coming.
    copied: Arc<AtomicU64>,
    finished: bool,
}

fn trace_error(what: impl Into<String>) -> KernelError {
    KernelError::Trace { what: what.into() }
}

impl TraceCapture {
    /// Mounts tracefs privately, turns the `blk` tracer on for `disk` (`loop0`) and starts
    /// copying its events into `out`.
    pub fn start(disk: &str, out: OutFile) -> Result<TraceCapture, KernelError> {
        let scratch = std::env::temp_dir().join(format!("iosched-tracefs-{}", std::process::id()));
        std::fs::create_dir_all(&scratch)
            .map_err(|e| trace_error(format!("creating {}: {e}", scratch.display())))?;
        let mut child = spawn_mounter(&scratch)?;
        let stdout = child.stdout.take().expect("piped");
        let mut lines = BufReader::new(stdout);
        if let Err(error) = wait_mounted(&mut lines) {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir(&scratch);
            return Err(error);
        }
        let tracefs = PathBuf::from(format!("/proc/{}/root", child.id()))
            .join(scratch.strip_prefix("/").expect("temp_dir is absolute"));
        let mut capture = TraceCapture {
            child,
            tracefs,
            scratch,
            saved: Saved::default(),
            reader: None,
            copied: Arc::new(AtomicU64::new(0)),
            finished: false,
        };
        capture.saved = Saved::take(&capture.tracefs, disk)?;
        capture.saved.arm(&capture.tracefs)?;
        let copied = Arc::clone(&capture.copied);
        // The one background thread of a kernel run: it only copies a pipe into the file (a
        // pipe left unread would stall the kernel's buffer). fio is still supervised, and
        // signals still handled, on the calling thread.
        #[allow(clippy::disallowed_methods)]
        let reader = std::thread::spawn(move || copy_events(lines, out, &copied));
        capture.reader = Some(reader);
        capture.tell_child("go")?;
        Ok(capture)
    }

    /// Stops tracing, lets the buffer drain into the file, puts every setting back and
    /// commits the file. What could not be put back is noted in `restored`.
    pub fn finish(mut self, restored: &mut Restored) -> Result<TraceSummary, KernelError> {
        self.finished = true;
        self.saved.pause(&self.tracefs);
        drain(&self.tracefs, &self.copied);
        let lost = settings::overruns(&self.tracefs);
        // The reader closes trace_pipe before the tracer can be switched back.
        let _ = self.tell_child("stop");
        wait_closed(self.child.id());
        self.saved.restore(&self.tracefs, &mut restored.warnings);
        self.stop_child();
        let reader = self.reader.take().expect("started");
        let (out, mut summary) = reader
            .join()
            .map_err(|_| trace_error("the trace reader panicked"))?
            .map_err(|e| trace_error(format!("reading trace_pipe: {e}")))?;
        out.commit()
            .map_err(|e| trace_error(format!("writing the trace: {e}")))?;
        summary.lost = lost;
        Ok(summary)
    }

    fn tell_child(&mut self, word: &str) -> Result<(), KernelError> {
        let stdin = self.child.stdin.as_mut().expect("piped");
        writeln!(stdin, "{word}")
            .and_then(|()| stdin.flush())
            .map_err(|e| trace_error(format!("the tracefs helper went away: {e}")))
    }

    fn stop_child(&mut self) {
        // Closing its stdin ends the script; a kill covers one that hangs.
        drop(self.child.stdin.take());
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(1) {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                let _ = std::fs::remove_dir(&self.scratch);
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir(&self.scratch);
    }
}

impl Drop for TraceCapture {
    /// Reached without [`TraceCapture::finish`] only on an error or a panic: the settings go
    /// back all the same, and the partial file is dropped unwritten.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut warnings = Vec::new();
        let _ = self.tell_child("stop");
        wait_closed(self.child.id());
        self.saved.restore(&self.tracefs, &mut warnings);
        self.stop_child();
        crate::warn(&warnings);
    }
}

/// `unshare --mount --propagation private`: a child in its own mount namespace that mounts
/// tracefs on `scratch`, says so, streams `trace_pipe` between two lines on its stdin, and
/// ends at a third (or when its stdin closes).
fn spawn_mounter(scratch: &Path) -> Result<Child, KernelError> {
    // trace_pipe must be closed whenever the tracer is switched (the kernel answers EBUSY),
    // and the namespace must outlive the reader so the settings can be put back through it:
    // the script waits for a line before reading, and for another after it stopped reading.
    let script = r#"mount -t tracefs nodev "$1" || exit 1
echo iosched-tracefs-mounted
read -r go || exit 0
cat "$1/trace_pipe" &
read -r stop
kill $!
wait
read -r done"#;
    Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(scratch)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            trace_error(format!(
                "running unshare (util-linux) to mount tracefs: {e}"
            ))
        })
}

/// The child's first line says tracefs is mounted; anything else is its failure.
fn wait_mounted(lines: &mut impl BufRead) -> Result<(), KernelError> {
    let mut first = String::new();
    let _ = lines.read_line(&mut first);
    if first.trim() == "iosched-tracefs-mounted" {
        return Ok(());
    }
    Err(trace_error(
        "could not mount tracefs in a private mount namespace (needs root and a kernel with \
         tracing)",
    ))
}

/// Copies trace lines into `out` as they come, counting them, until the child ends.
fn copy_events(
    lines: BufReader<impl Read>,
    out: OutFile,
    copied: &AtomicU64,
) -> std::io::Result<(OutFile, TraceSummary)> {
    let mut summary = TraceSummary::default();
    // A loop device under BFQ makes some twenty lines per request: one write call each
    // would fall behind the kernel's buffer.
    let mut out = std::io::BufWriter::with_capacity(1 << 20, out);
    for line in lines.lines() {
        let line = line?;
        summary.add(&line);
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        copied.fetch_add(1, Ordering::Relaxed);
    }
    let out = out.into_inner().map_err(|e| e.into_error())?;
    Ok((out, summary))
}

/// Waits (up to a second) until the helper's `cat` has exited, so trace_pipe is closed: the
/// helper then has no child left.
fn wait_closed(helper: u32) {
    let children = format!("/proc/{helper}/task/{helper}/children");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(1) {
        match std::fs::read_to_string(&children) {
            Ok(list) if !list.trim().is_empty() => std::thread::sleep(Duration::from_millis(10)),
            _ => return,
        }
    }
}

/// Waits until every CPU's buffer has been read (`entries: 0`) and no line has come for a
/// while (what `cat` read may still be on its way through the pipe), or [`DRAIN_LIMIT`].
fn drain(tracefs: &Path, copied: &AtomicU64) {
    const QUIET: Duration = Duration::from_millis(300);
    let started = Instant::now();
    let mut seen = copied.load(Ordering::Relaxed);
    let mut quiet_since = Instant::now();
    while started.elapsed() < DRAIN_LIMIT {
        std::thread::sleep(Duration::from_millis(20));
        let now = copied.load(Ordering::Relaxed);
        if now != seen {
            seen = now;
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() >= QUIET && settings::unread_entries(tracefs) == Some(0) {
            return;
        }
    }
}
