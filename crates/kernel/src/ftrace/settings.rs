//! The tracing settings a capture changes, saved before and written back after.

use std::fs;
use std::path::{Path, PathBuf};

use super::trace_error;
use crate::error::KernelError;

/// The timer events that show BFQ's idle timer being armed and firing (`bfq_log` says
/// nothing of it). Cancels carry no function to filter on, so they are not traced.
const TIMER_EVENTS: [&str; 2] = ["hrtimer_start", "hrtimer_expire_entry"];
const TIMER_FILTER: &str = "function.function == bfq_idle_slice_timer";

/// Per-CPU ring buffer during a capture, KiB: the kernel's default (1.4 MiB) holds about a
/// tenth of a second of a fast device under BFQ, and a reader that falls behind loses events.
const BUFFER_KB: &str = "16384";

/// One timer event's state before the capture.
#[derive(Debug)]
struct SavedEvent {
    dir: PathBuf,
    enable: String,
}

#[derive(Debug, Default)]
pub(super) struct Saved {
    /// `/sys/block/DISK/trace/enable` and its value before.
    disk_enable: Option<(PathBuf, String)>,
    tracer: Option<String>,
    tracing_on: Option<String>,
    buffer_kb: Option<String>,
    events: Vec<SavedEvent>,
}

fn read(path: &Path) -> Result<String, KernelError> {
    fs::read_to_string(path)
        .map(|text| text.trim().to_string())
        .map_err(|e| trace_error(format!("reading {}: {e}", path.display())))
}

fn write(path: &Path, value: &str) -> Result<(), KernelError> {
    fs::write(path, value)
        .map_err(|e| trace_error(format!("writing {value} to {}: {e}", path.display())))
}

impl Saved {
    /// Reads what the capture will change. Another tracer at work is refused: switching it
    /// would end someone else's trace.
    pub(super) fn take(tracefs: &Path, disk: &str) -> Result<Saved, KernelError> {
        let tracer = read(&tracefs.join("current_tracer"))?;
        if tracer != "nop" {
            return Err(trace_error(format!(
                "ftrace is in use (current_tracer is {tracer}); not switching it"
            )));
        }
        let enable = PathBuf::from(format!("/sys/block/{disk}/trace/enable"));
        let before = read(&enable)?;
        let mut saved = Saved {
            disk_enable: Some((enable, before)),
            tracer: Some(tracer),
            tracing_on: Some(read(&tracefs.join("tracing_on"))?),
            buffer_kb: read(&tracefs.join("buffer_size_kb")).ok(),
            events: Vec::new(),
        };
        for event in TIMER_EVENTS {
            let dir = tracefs.join("events/timer").join(event);
            if let Ok(enable) = read(&dir.join("enable")) {
                saved.events.push(SavedEvent { dir, enable });
            }
        }
        Ok(saved)
    }

    /// Turns the `blk` tracer on for the disk, and the idle-timer events where the kernel
    /// can filter them to BFQ's timer (an unfiltered timer event would flood the trace).
    pub(super) fn arm(&mut self, tracefs: &Path) -> Result<(), KernelError> {
        if let Some((enable, _)) = &self.disk_enable {
            write(enable, "1")?;
        }
        if self.buffer_kb.is_some() {
            write(&tracefs.join("buffer_size_kb"), BUFFER_KB)?;
        }
        write(&tracefs.join("current_tracer"), "blk")?;
        self.events.retain(|event| {
            let filtered = fs::write(event.dir.join("filter"), TIMER_FILTER).is_ok();
            filtered && fs::write(event.dir.join("enable"), "1").is_ok()
        });
        write(&tracefs.join("tracing_on"), "1")
    }

    /// Stops new events; what is buffered can still be read.
    pub(super) fn pause(&self, tracefs: &Path) {
        let _ = fs::write(tracefs.join("tracing_on"), "0");
    }

    /// Writes every saved value back, each failure a warning. Only the first call acts.
    pub(super) fn restore(&mut self, tracefs: &Path, warnings: &mut Vec<String>) {
        let mut put_back = |path: &Path, value: &str| {
            if let Err(error) = fs::write(path, value) {
                warnings.push(format!(
                    "cannot restore {} to {value}: {error}",
                    path.display()
                ));
            }
        };
        for event in std::mem::take(&mut self.events) {
            put_back(&event.dir.join("enable"), &event.enable);
            // "0" clears a filter.
            put_back(&event.dir.join("filter"), "0");
        }
        if let Some(tracer) = self.tracer.take() {
            put_back(&tracefs.join("current_tracer"), &tracer);
        }
        if let Some((enable, before)) = self.disk_enable.take() {
            put_back(&enable, &before);
        }
        if let Some(kb) = self.buffer_kb.take() {
            put_back(&tracefs.join("buffer_size_kb"), &kb);
        }
        if let Some(on) = self.tracing_on.take() {
            put_back(&tracefs.join("tracing_on"), &on);
        }
    }
}

/// Entries still in the ring buffers, over all CPUs (`per_cpu/cpuN/stats`).
pub(super) fn unread_entries(tracefs: &Path) -> Option<u64> {
    per_cpu_stat(tracefs, "entries")
}

/// Events lost because the buffer was full, over all CPUs.
pub(super) fn overruns(tracefs: &Path) -> Option<u64> {
    per_cpu_stat(tracefs, "overrun")
}

fn per_cpu_stat(tracefs: &Path, key: &str) -> Option<u64> {
    let mut total = 0;
    for cpu in fs::read_dir(tracefs.join("per_cpu")).ok()?.flatten() {
        let stats = fs::read_to_string(cpu.path().join("stats")).ok()?;
        let value = stats
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{key}: ")))?;
        total += value.trim().parse::<u64>().ok()?;
    }
    Some(total)
}
