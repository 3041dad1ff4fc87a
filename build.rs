//! Stamps `iosched --version` with the commit it was built from, so a figure quoted from a
//! run names the code that made it. Outside a git checkout (a source tarball) it says so.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    let stamp = match (&commit, git(&["log", "-1", "--format=%cs"])) {
        (Some(commit), Some(date)) => format!("{commit} {date}"),
        _ => "commit unknown".to_string(),
    };
    println!("cargo:rustc-env=IOSCHED_COMMIT={stamp}");
    // Rebuild the stamp when HEAD moves: HEAD itself, the branch it names, packed refs.
    // Only files that exist are named, since cargo reruns a script forever for a missing one.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            if Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
