//! The conventions of a command-line tool: `--version` names the commit, `NO_COLOR` is
//! honoured, and the man page and completions come from the same definitions as the flags,
//! so every subcommand appears in them.

mod common;

use common::{iosched, skip, stderr_of, Scratch};

/// The subcommands `iosched --help` lists (the hidden `reference` is not among them).
fn subcommands() -> Vec<String> {
    let out = iosched(&["--help"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .filter(|name| name != "help")
        .collect()
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = iosched(&["--version"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match head {
        Ok(head) if head.status.success() => {
            // Built in a checkout: the stamp is a commit of it (HEAD, or an ancestor when the
            // binary predates the last commit).
            let stamp = text
                .split('(')
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or("")
                .to_string();
            assert_eq!(stamp.len(), 12, "{text}");
            let known = std::process::Command::new("git")
                .args(["cat-file", "-e", &format!("{stamp}^{{commit}}")])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .unwrap();
            assert!(known.success(), "{stamp} is no commit here: {text}");
        }
        _ => {
            assert!(text.contains("commit unknown"), "{text}");
            skip(
                "version_names_the_commit_it_was_built_from",
                "not a git checkout",
            );
        }
    }
}

#[test]
fn no_color_wins_over_a_forced_colour() {
    let run = |no_color: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_iosched"));
        command
            .args(["run", "--no-such-flag"])
            .env("CLICOLOR_FORCE", "1");
        if no_color {
            command.env("NO_COLOR", "1");
        } else {
            command.env_remove("NO_COLOR");
        }
        command.output().unwrap()
    };
    assert!(
        stderr_of(&run(false)).contains('\x1b'),
        "colour can be forced"
    );
    let plain = stderr_of(&run(true));
    assert!(!plain.contains('\x1b'), "NO_COLOR ignored: {plain:?}");
    assert!(plain.contains("--no-such-flag"), "{plain}");
}

#[test]
fn the_man_page_and_completions_name_every_subcommand() {
    let names = subcommands();
    assert!(names.len() > 10, "{names:?}");
    let page = String::from_utf8_lossy(&iosched(&["manpage"]).stdout).into_owned();
    assert!(page.starts_with(".ie") || page.contains(".TH"), "not roff");
    for shell in ["bash", "zsh", "fish"] {
        let out = iosched(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", stderr_of(&out));
        let script = String::from_utf8_lossy(&out.stdout).into_owned();
        for name in &names {
            assert!(page.contains(name), "man page lacks {name}");
            assert!(
                script.contains(name.as_str()),
                "{shell} completion lacks {name}"
            );
        }
    }
}

#[test]
fn manpage_dir_writes_a_page_per_subcommand() {
    let scratch = Scratch::new("cli-manpages");
    let dir = scratch.path("man");
    let out = iosched(&["manpage", "--dir", &dir]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    for name in subcommands() {
        let page = std::fs::read_to_string(format!("{dir}/iosched-{name}.1")).unwrap();
        assert!(
            page.contains(".SH OPTIONS") || page.contains(".SH SYNOPSIS"),
            "{name}"
        );
    }
    assert!(std::path::Path::new(&format!("{dir}/iosched.1")).is_file());
    assert!(!std::path::Path::new(&format!("{dir}/iosched-reference.1")).exists());
}

#[test]
fn a_shell_iosched_does_not_know_is_refused_naming_it() {
    let out = iosched(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("tcsh"));
}
