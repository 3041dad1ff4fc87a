//! fio's processes, found through `/proc`, so that a watchdog's kill ends all of them.
//!
//! fio 3.33 forks one process per job and each calls `setsid()` (seen with `ps -o sid`: every
//! job process leads a session of its own), so they leave the process group iosched started
//! fio in: killing that group ends fio's main process only, and its job processes, reparented,
//! run on, holding the caller's standard output open. They are found instead as fio's
//! descendants while fio lives (parent links in `/proc/PID/stat`), and afterwards by the
//! generated job file's path on their command line (a fork keeps fio's), which names this run
//! alone.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Every process `/proc` lists now: its pid and its folder there.
fn processes() -> impl Iterator<Item = (u32, PathBuf)> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| Some((entry.file_name().to_str()?.parse().ok()?, entry.path())))
}

/// `(pid, parent pid)` of every process `/proc` lists now.
fn parents() -> Vec<(u32, u32)> {
    processes()
        .filter_map(|(pid, folder)| {
            let stat = fs::read_to_string(folder.join("stat")).ok()?;
            // The command name, in parentheses, may hold spaces and parentheses itself:
            // the fields after the last `)` are state, then the parent's pid.
            let after = &stat[stat.rfind(')')? + 1..];
            let ppid = after.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// Every live process descended from `root` (not `root` itself).
pub fn descendants(root: u32) -> BTreeSet<u32> {
    let table = parents();
    let mut found = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid) in &table {
            if ppid == parent && pid != root && found.insert(pid) {
                frontier.push(pid);
            }
        }
    }
    found
}

/// Processes (other than this one) whose command line contains `marker`.
pub fn naming(marker: &str) -> BTreeSet<u32> {
    let own = std::process::id();
    processes()
        .filter_map(|(pid, folder)| {
            let cmdline = fs::read(folder.join("cmdline")).ok()?;
            let names = String::from_utf8_lossy(&cmdline).contains(marker);
            (names && pid != own).then_some(pid)
        })
        .collect()
}

/// SIGKILL to process group `group` and to each of `pids`; what is already gone is skipped
/// quietly.
pub fn kill_all(group: u32, pids: &BTreeSet<u32>) {
    let mut args = vec!["-KILL".to_string(), "--".to_string(), format!("-{group}")];
    args.extend(pids.iter().map(u32::to_string));
    let _ = Command::new("kill")
        .args(&args)
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child of a child is a descendant; this process and its parent are not.
    #[test]
    fn descendants_follow_parent_links() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut found = BTreeSet::new();
        for _ in 0..250 {
            found = descendants(pid);
            if !found.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(found.len(), 1, "the sleep: {found:?}");
        kill_all(pid, &found);
        let _ = child.kill();
        let _ = child.wait();
        let mine = descendants(std::process::id());
        assert!(!mine.contains(&std::process::id()));
    }
}
