//! Helpers shared by the binary's integration tests: running `iosched` and reading what it
//! printed, scratch folders that remove themselves, loop devices and mounts that detach
//! themselves, and skips that say so.
//!
//! A test that cannot run here (not root, a tool missing) calls [`skip`], which prints
//! `SKIPPED: <test>: <reason>` on stderr; `.ci/run` counts and lists those lines.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the binary under test with `args`, from the package's folder (where relative paths
/// such as `scenarios/` resolve).
pub fn iosched(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// The JSON a run printed on stdout; the run must have succeeded.
pub fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        stderr_of(out)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// A refusal of bad input: exit status 2, one message on stderr containing `says`, never a
/// panic, and nothing on stdout.
pub fn assert_input_error(out: &Output, says: &str) {
    let stderr = stderr_of(out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(says), "expected '{says}' in: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty(), "no partial output on error");
}

/// Says that `test` did not run here, and why; the caller returns right after.
pub fn skip(test: &str, reason: &str) {
    eprintln!("SKIPPED: {test}: {reason}");
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// Whether `name` is on PATH.
pub fn tool_available(name: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Whether `fio --version` runs and says fio 3.x.
pub fn fio3_available() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success() && out.stdout.starts_with(b"fio-3"))
}

/// A scratch folder under the temp dir, removed on drop (even when the test fails).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("iosched-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// Writes `text` to `name` in the folder and returns its path.
    pub fn file(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// A path in the folder, not created.
    pub fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }

    /// A file of `bytes` bytes of non-zero data.
    pub fn data_file(&self, name: &str, bytes: usize) -> String {
        let data: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8 | 1).collect();
        let path = self.0.join(name);
        std::fs::write(&path, data).unwrap();
        path.to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A folder under Cargo's temp dir for this package's tests, emptied first and kept after the
/// test (fio's and iosched's outputs stay there to be looked at).
pub fn target_scratch(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An attached loop device, detached on drop.
pub struct Loop(pub String);

impl Loop {
    /// Attaches `backing` (a file or a block device); `None` if losetup fails.
    ///
    /// `losetup -f` finds a free device, then claims it: this test binary's threads attach one
    /// at a time, and a device another process took in between is tried again (five times).
    pub fn attach(backing: &str) -> Option<Loop> {
        static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..5 {
            let out = Command::new("losetup")
                .args(["-f", "--show", backing])
                .output()
                .ok()?;
            if out.status.success() {
                return Some(Loop(
                    String::from_utf8_lossy(&out.stdout).trim().to_string(),
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        None
    }

    /// Attaches a new sparse image of `bytes` at `image`; `None`, after [`skip`] says why,
    /// when `test` is not run as root or losetup fails.
    pub fn over_image(test: &str, image: &str, bytes: u64) -> Option<Loop> {
        if !is_root() {
            skip(test, "loop devices need root");
            return None;
        }
        std::fs::File::create(image)
            .unwrap()
            .set_len(bytes)
            .unwrap();
        let attached = Loop::attach(image);
        if attached.is_none() {
            skip(test, &format!("losetup -f --show {image} failed"));
        }
        attached
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A mount, unmounted on drop.
pub struct Mount(pub String);

impl Mount {
    /// `mount ARGS... POINT`; `None` if mount fails.
    pub fn new(args: &[&str], point: &str) -> Option<Mount> {
        let ok = Command::new("mount")
            .args(args)
            .arg(point)
            .output()
            .is_ok_and(|out| out.status.success());
        ok.then(|| Mount(point.to_string()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// File length, or 0 if it is missing.
pub fn len_of(path: &str) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Stderr as text.
pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The command (iosched, fio...) exited with success; otherwise fails with its stderr.
pub fn assert_ran(out: &Output) {
    assert!(out.status.success(), "{}", stderr_of(out));
}
