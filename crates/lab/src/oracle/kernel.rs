//! The kernel side: Debian's `linux-source-6.12` package, checked, its scheduler files
//! extracted into a scratch directory and compiled with the project's shim.
//!
//! Kernel source never enters the repository: the tarball is read from where the package
//! installs it, its SHA-256 is checked against the pinned version's, and only the files the
//! shim compiles (or the schedulers include) are extracted, once, into
//! `$TMPDIR/iosched-kernel-oracle/<version>/`. The binary is rebuilt from the shim and the
//! driver (`oracle/` in the repository) at every run: gcc takes about a second.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned package version (`apt-get install linux-source-6.12=VERSION`).
pub const PACKAGE_VERSION: &str = "6.12.117-1~deb12u1";
/// Where the package puts its tarball.
pub const TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";
/// SHA-256 of the pinned version's tarball.
pub const TARBALL_SHA256: &str = "585a4a074597aefa2b1a68ada83a3184ba351c127544dea80618bbcceaa3961f";

/// Files taken from the tarball (one pass over it: every scheduler's files at once).
const FILES: &[&str] = &[
    "block/mq-deadline.c",
    "block/kyber-iosched.c",
    "block/bfq-iosched.c",
    "block/bfq-iosched.h",
    "block/bfq-wf2q.c",
    "block/bfq-cgroup.c",
    "lib/rbtree.c",
    "lib/sbitmap.c",
    "include/linux/sbitmap.h",
    "include/linux/rbtree.h",
    "include/linux/rbtree_types.h",
    "include/linux/rbtree_augmented.h",
];

/// Why the kernel side cannot run.
#[derive(Debug)]
pub enum KernelError {
    /// The package is not installed: tests skip, the command says how to install it.
    Absent,
    Checksum(String),
    Tool {
        what: String,
        detail: String,
    },
}

impl std::fmt::Display for KernelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelError::Absent => write!(
                f,
                "{TARBALL} is missing (apt-get install linux-source-6.12={PACKAGE_VERSION})"
            ),
            KernelError::Checksum(got) => write!(
                f,
                "{TARBALL}: SHA-256 {got}, expected {TARBALL_SHA256} (version {PACKAGE_VERSION})"
            ),
            KernelError::Tool { what, detail } => write!(f, "{what}: {detail}"),
        }
    }
}

impl std::error::Error for KernelError {}

fn run(what: &str, cmd: &mut Command) -> Result<String, KernelError> {
    let out = cmd.output().map_err(|e| KernelError::Tool {
        what: what.to_string(),
        detail: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(KernelError::Tool {
            what: what.to_string(),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The extracted files' directory, extracting them first if needed.
pub fn kernel_tree() -> Result<PathBuf, KernelError> {
    if !Path::new(TARBALL).exists() {
        return Err(KernelError::Absent);
    }
    let dir = std::env::temp_dir()
        .join("iosched-kernel-oracle")
        .join(PACKAGE_VERSION);
    // `.complete` lists what was extracted: a tree from a shorter FILES list is redone.
    let listed = std::fs::read_to_string(dir.join(".complete")).unwrap_or_default();
    if listed == FILES.join("\n") {
        return Ok(dir);
    }
    let sum = run("sha256sum", Command::new("sha256sum").arg(TARBALL))?;
    let got = sum.split_whitespace().next().unwrap_or("").to_string();
    if got != TARBALL_SHA256 {
        return Err(KernelError::Checksum(got));
    }
    // Extract beside the final place and rename, so concurrent runs never see half a tree.
    let tmp = dir.with_extension(format!("partial-{}", std::process::id()));
    let mk = |p: &Path| {
        std::fs::create_dir_all(p).map_err(|e| KernelError::Tool {
            what: p.display().to_string(),
            detail: e.to_string(),
        })
    };
    mk(&tmp)?;
    let members: Vec<String> = FILES
        .iter()
        .map(|f| format!("linux-source-6.12/{f}"))
        .collect();
    extract(&tmp, &members)?;
    std::fs::write(tmp.join(".complete"), FILES.join("\n")).map_err(|e| KernelError::Tool {
        what: "scratch".into(),
        detail: e.to_string(),
    })?;
    if !listed.is_empty() || dir.join(".complete").exists() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another run won the race; its tree is the same.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(dir)
}

/// `xz -T0 -dc TARBALL | tar -x`: the tarball has 62 xz blocks, so xz decompresses on
/// every core (tar's own -J would use one).
fn extract(into: &Path, members: &[String]) -> Result<(), KernelError> {
    let tool = |what: &str, e: std::io::Error| KernelError::Tool {
        what: what.to_string(),
        detail: e.to_string(),
    };
    let mut xz = Command::new("xz")
        .args(["-T0", "-dc", TARBALL])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| tool("xz", e))?;
    let stdout = xz.stdout.take().expect("xz stdout is piped");
    let tar = run(
        "tar",
        Command::new("tar")
            .arg("-x")
            .arg("-C")
            .arg(into)
            .arg("--strip-components=1")
            .args(members)
            .stdin(stdout),
    );
    let xz_status = xz.wait().map_err(|e| tool("xz", e))?;
    tar?;
    if !xz_status.success() {
        return Err(KernelError::Tool {
            what: "xz".into(),
            detail: format!("exited with {xz_status}"),
        });
    }
    Ok(())
}

/// The project's shim and driver sources.
pub fn shim_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../oracle")
}

/// The kernel files and the shim's own C files a scheduler's oracle is built from.
fn sources(sched: &str) -> Result<(&'static [&'static str], &'static [&'static str]), KernelError> {
    match sched {
        "mq-deadline" => Ok((&["block/mq-deadline.c"], &[])),
        "kyber" => Ok((
            &["block/kyber-iosched.c", "lib/sbitmap.c"],
            &["shim/kyber.c"],
        )),
        // BFQ with CONFIG_BFQ_GROUP_IOSCHED=y (Debian's 6.12 config): its three files, the
        // shim's io contexts, blkcg and timers, and the driver's BFQ hooks.
        "bfq" => Ok((
            &[
                "block/bfq-iosched.c",
                "block/bfq-wf2q.c",
                "block/bfq-cgroup.c",
            ],
            &[
                "driver/bfq.c",
                "shim/bfq/ioc.c",
                "shim/bfq/blkcg.c",
                "shim/bfq/misc.c",
            ],
        )),
        other => Err(KernelError::Tool {
            what: "kernel-oracle".into(),
            detail: format!("no oracle for scheduler '{other}' (mq-deadline, kyber, bfq)"),
        }),
    }
}

/// Compiles the oracle binary for `sched` (its kernel files unmodified) into the tree.
/// BFQ takes about 10 s of gcc on this machine (under load), mq-deadline about 1 s.
pub fn build(sched: &str, tree: &Path) -> Result<PathBuf, KernelError> {
    let (kernel_files, shim_files) = sources(sched)?;
    let shim = shim_dir();
    // Outside the shared tree: another run may replace the tree while this one works.
    let bin = std::env::temp_dir().join(format!("iosched-{sched}-oracle-{}", std::process::id()));
    let mut gcc = Command::new("gcc");
    gcc.args(["-O1", "-std=gnu11", "-w", "-o"]).arg(&bin);
    // A scheduler's own shim directory comes first, so that its headers (BFQ's
    // linux/hrtimer.h, blk-cgroup-rwstat.h, ...) are found before the system's.
    let own = shim.join("shim").join(sched);
    if own.is_dir() {
        gcc.arg("-I").arg(&own).arg("-iquote").arg(&own);
    }
    gcc.arg("-I")
        .arg(shim.join("shim"))
        .arg("-I")
        .arg(tree.join("include"))
        .arg("-iquote")
        .arg(shim.join("shim"));
    if sched == "kyber" {
        // The kernel's own sbitmap header replaces the shim's stand-in (shim/block.h).
        let header = tree.join("include/linux/sbitmap.h");
        gcc.arg(format!("-DSHIM_KERNEL_SBITMAP=\"{}\"", header.display()));
    }
    for f in [
        "driver/driver.c",
        "driver/scenario.c",
        "shim/blk.c",
        "shim/kernel_lib.c",
    ] {
        gcc.arg(shim.join(f));
    }
    gcc.args(shim_files.iter().map(|f| shim.join(f)));
    gcc.args(kernel_files.iter().map(|f| tree.join(f)));
    run("gcc", gcc.arg(tree.join("lib/rbtree.c")))?;
    Ok(bin)
}

/// Runs the compiled oracle on one scenario file: its decision lines.
pub fn run_kernel(bin: &Path, scenario: &Path) -> Result<String, KernelError> {
    run(
        &format!("kernel oracle on {}", scenario.display()),
        Command::new(bin).arg(scenario),
    )
}
