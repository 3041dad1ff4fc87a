//! The device's request queue in sysfs: `queue/scheduler`, the scheduler's tunables under
//! `queue/iosched/`, and `queue/nr_requests`, switched for a run and put back after it.
//!
//! Switching schedulers gives the new one its defaults and resets `nr_requests` (to twice
//! the hardware queue depth under a scheduler, to the depth under `none`), and switching
//! back does the same to the old one, so the guard saves the old scheduler's tunables and
//! `nr_requests` first and, when dropped, writes the scheduler back, then its
//! tunables, then `nr_requests` — in that order, whether the run succeeded, failed or was
//! interrupted.

use std::fs;
use std::path::{Path, PathBuf};

use iosched_engine::target;

use crate::error::KernelError;
use crate::Restored;

/// The kernel's blk-mq schedulers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelScheduler {
    None,
    MqDeadline,
    Kyber,
    Bfq,
}

impl KernelScheduler {
    /// A scheduler by its sysfs name, or by `iosched run`'s name for the same policy (`noop`
    /// is `none`, `deadline` is `mq-deadline`).
    pub fn from_name(name: &str) -> Result<KernelScheduler, KernelError> {
        match name {
            "none" | "noop" => Ok(KernelScheduler::None),
            "mq-deadline" | "deadline" => Ok(KernelScheduler::MqDeadline),
            "kyber" => Ok(KernelScheduler::Kyber),
            "bfq" => Ok(KernelScheduler::Bfq),
            _ => Err(KernelError::UnknownScheduler {
                name: name.to_string(),
            }),
        }
    }

    /// The name `queue/scheduler` takes and shows.
    pub fn sysfs_name(self) -> &'static str {
        match self {
            KernelScheduler::None => "none",
            KernelScheduler::MqDeadline => "mq-deadline",
            KernelScheduler::Kyber => "kyber",
            KernelScheduler::Bfq => "bfq",
        }
    }
}

/// The scheduler's tunables as sysfs shows them, sorted by name.
pub fn read_tunables(queue: &Path) -> Vec<(String, String)> {
    let mut tunables: Vec<(String, String)> = fs::read_dir(queue.join("iosched"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let value = fs::read_to_string(entry.path()).ok()?;
            Some((
                entry.file_name().to_string_lossy().into_owned(),
                value.trim().to_string(),
            ))
        })
        .collect();
    tunables.sort();
    tunables
}

/// The names of the files under `queue/iosched/`, sorted.
fn read_tunable_names(queue: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(queue.join("iosched"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// A queue switched to a run's scheduler; puts everything back when restored or dropped.
#[derive(Debug)]
pub struct QueueGuard {
    queue: PathBuf,
    /// The scheduler before the run (`None` where sysfs did not say).
    previous: Option<String>,
    /// Its tunables before the run.
    tunables: Vec<(String, String)>,
    /// `queue/nr_requests` before the run.
    nr_requests: Option<String>,
    restored: bool,
}

impl QueueGuard {
    /// Selects `scheduler` on `queue` (a `/sys/block/X/queue` directory), then writes
    /// `nr_requests` and each tunable. On error everything is already put back.
    pub fn switch(
        queue: &Path,
        scheduler: KernelScheduler,
        nr_requests: Option<&str>,
        tunables: &[(String, String)],
    ) -> Result<QueueGuard, KernelError> {
        // Names are names: a tunable is one file of queue/iosched/, never a path.
        for (name, _) in tunables {
            iosched_gate::check_name("tunable", name).map_err(|why| {
                KernelError::UnknownTunable {
                    name: name.clone(),
                    scheduler: scheduler.sysfs_name(),
                    known: Vec::new(),
                    why: Some(why),
                }
            })?;
        }
        let guard = QueueGuard {
            queue: queue.to_path_buf(),
            previous: fs::read_to_string(queue.join("scheduler"))
                .ok()
                .and_then(|line| target::active_scheduler(&line)),
            tunables: read_tunables(queue),
            // Before the switch, which resets it: the value to put back whether or not the
            // run sets its own.
            nr_requests: read_trimmed(&queue.join("nr_requests")),
            restored: false,
        };
        fs::write(queue.join("scheduler"), scheduler.sysfs_name()).map_err(|error| {
            KernelError::SelectScheduler {
                queue: queue.to_path_buf(),
                scheduler: scheduler.sysfs_name(),
                error,
            }
        })?;
        if let Some(value) = nr_requests {
            guard.write("nr_requests", value, "nr_requests")?;
        }
        // Only the attributes the new scheduler lists (on error the guard puts all back).
        let known: Vec<String> = read_tunable_names(queue);
        for (name, value) in tunables {
            if !known.contains(name) {
                return Err(KernelError::UnknownTunable {
                    name: name.clone(),
                    scheduler: scheduler.sysfs_name(),
                    known,
                    why: None,
                });
            }
            guard.write(name, value, &format!("iosched/{name}"))?;
        }
        Ok(guard)
    }

    /// Writes `value` to `file` under the queue, as `--set name=value` asked.
    fn write(&self, name: &str, value: &str, file: &str) -> Result<(), KernelError> {
        fs::write(self.queue.join(file), value).map_err(|error| KernelError::Tunable {
            name: name.to_string(),
            value: value.to_string(),
            file: file.to_string(),
            error,
        })
    }

    /// The scheduler the queue had before the run.
    pub fn previous_scheduler(&self) -> Option<&str> {
        self.previous.as_deref()
    }

    /// What the run has now (the kernel rounds some values): `nr_requests` and the tunables.
    pub fn applied(&self) -> (Option<u64>, Vec<(String, String)>) {
        let nr_requests =
            read_trimmed(&self.queue.join("nr_requests")).and_then(|text| text.parse().ok());
        (nr_requests, read_tunables(&self.queue))
    }

    /// Puts the scheduler, its tunables and `nr_requests` back, noting what and any failure
    /// in `restored`. Only the first call does anything.
    pub fn restore(&mut self, restored: &mut Restored) {
        if std::mem::replace(&mut self.restored, true) {
            return;
        }
        if let Some(scheduler) = &self.previous {
            match fs::write(self.queue.join("scheduler"), scheduler) {
                Ok(()) => restored.scheduler = Some(scheduler.clone()),
                Err(error) => restored.warnings.push(format!(
                    "cannot restore the scheduler '{scheduler}': {error}"
                )),
            }
        }
        // Switching back gave the old scheduler fresh defaults: write its saved values. A
        // read-only one refuses; that is no loss.
        for (name, value) in &self.tunables {
            if fs::write(self.queue.join("iosched").join(name), value).is_ok() {
                restored.tunables += 1;
            }
        }
        // After the scheduler: switching schedulers resets the queue's request count, so a
        // value set before the run would be lost even by a run that sets none.
        if let Some(value) = &self.nr_requests {
            match fs::write(self.queue.join("nr_requests"), value) {
                Ok(()) => restored.nr_requests = Some(value.clone()),
                Err(error) => restored
                    .warnings
                    .push(format!("cannot restore nr_requests {value}: {error}")),
            }
        }
    }
}

impl Drop for QueueGuard {
    /// Reached without [`QueueGuard::restore`] only on an error or a panic: the warnings go
    /// to stderr, there being no outcome to carry them.
    fn drop(&mut self) {
        let mut restored = Restored::default();
        self.restore(&mut restored);
        crate::warn(&restored.warnings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for a sysfs queue directory: scheduler `mq-deadline`, `fifo_batch` 5.
    fn fake_queue(name: &str) -> PathBuf {
        let queue = std::env::temp_dir().join(format!(
            "iosched-kernel-sysfs-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&queue);
        fs::create_dir_all(queue.join("iosched")).unwrap();
        fs::write(queue.join("scheduler"), "none [mq-deadline] kyber bfq\n").unwrap();
        fs::write(queue.join("iosched/fifo_batch"), "5\n").unwrap();
        fs::write(queue.join("nr_requests"), "64\n").unwrap();
        queue
    }

    fn read(queue: &Path, file: &str) -> String {
        fs::read_to_string(queue.join(file))
            .unwrap()
            .trim()
            .to_string()
    }

    #[test]
    fn aliases_are_the_kernel_names() {
        let deadline = KernelScheduler::from_name("deadline").unwrap();
        assert_eq!(deadline.sysfs_name(), "mq-deadline");
        assert_eq!(
            KernelScheduler::from_name("noop").unwrap(),
            KernelScheduler::None
        );
        let cfq = KernelScheduler::from_name("cfq").unwrap_err();
        assert!(cfq.to_string().contains("iosched run"), "{cfq}");
        assert!(cfq.is_input());
    }

    /// The restore writes the old scheduler and its saved tunables and nr_requests back,
    /// also when a later `--set` fails (the guard is dropped inside `switch`).
    #[test]
    fn a_failed_set_puts_the_queue_back() {
        let queue = fake_queue("failed-set");
        // A directory where a tunable's file should be: the write fails as sysfs's would.
        fs::create_dir(queue.join("iosched/bogus")).unwrap();
        let tunables = vec![
            ("fifo_batch".to_string(), "9".to_string()),
            ("bogus".to_string(), "1".to_string()),
        ];
        let error =
            QueueGuard::switch(&queue, KernelScheduler::Bfq, Some("32"), &tunables).unwrap_err();
        assert!(error.is_input());
        assert!(error.to_string().starts_with("--set bogus=1"), "{error}");
        assert_eq!(read(&queue, "scheduler"), "mq-deadline");
        assert_eq!(read(&queue, "iosched/fifo_batch"), "5");
        assert_eq!(read(&queue, "nr_requests"), "64");
        fs::remove_dir_all(&queue).unwrap();
    }

    /// Issue 28: `--set ../../decoy=PWNED` replaced a file outside sysfs, and an unknown
    /// tunable was reported as "Permission denied". A name is one of the attributes the
    /// scheduler lists, and an unknown one is named with the ones it has.
    #[test]
    fn only_the_schedulers_own_tunables_are_written() {
        let queue = fake_queue("names");
        let decoy = queue.join("decoy.txt");
        fs::write(&decoy, "keep").unwrap();
        let set = |name: &str| vec![(name.to_string(), "PWNED".to_string())];
        for name in ["../decoy.txt", "../../x", "a\0b", ".."] {
            let error =
                QueueGuard::switch(&queue, KernelScheduler::Bfq, None, &set(name)).unwrap_err();
            assert!(error.is_input(), "{error}");
            assert_eq!(
                read(&queue, "scheduler"),
                "none [mq-deadline] kyber bfq",
                "{name:?}: refused before the switch"
            );
        }
        let error =
            QueueGuard::switch(&queue, KernelScheduler::Bfq, None, &set("no_such")).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("has no tunable") && message.contains("fifo_batch"),
            "{message}"
        );
        assert_eq!(fs::read_to_string(&decoy).unwrap(), "keep");
        assert_eq!(read(&queue, "scheduler"), "mq-deadline");
        fs::remove_dir_all(&queue).unwrap();
    }

    #[test]
    fn restore_reports_what_it_put_back_once() {
        let queue = fake_queue("restore");
        let set = vec![("fifo_batch".to_string(), "9".to_string())];
        let mut guard =
            QueueGuard::switch(&queue, KernelScheduler::Kyber, Some("32"), &set).expect("switch");
        assert_eq!(read(&queue, "scheduler"), "kyber");
        assert_eq!(guard.previous_scheduler(), Some("mq-deadline"));
        assert_eq!(guard.applied().0, Some(32));
        let mut restored = Restored::default();
        guard.restore(&mut restored);
        assert_eq!(restored.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(restored.nr_requests.as_deref(), Some("64"));
        assert_eq!(restored.tunables, 1);
        assert_eq!(read(&queue, "iosched/fifo_batch"), "5");
        // A second restore (the drop) writes nothing over a change made since.
        fs::write(queue.join("scheduler"), "bfq").unwrap();
        drop(guard);
        assert_eq!(read(&queue, "scheduler"), "bfq");
        fs::remove_dir_all(&queue).unwrap();
    }
}
