//! The README is the front door: at most 12 KB, the two set-up commands first, and every
//! link it gives leads somewhere. (The book's own links are checked by `mkdocs build
//! --strict` in `.ci/run`.)

use std::path::Path;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

#[test]
fn the_readme_is_short_and_opens_with_the_two_commands() {
    let text = readme();
    assert!(text.len() <= 12 * 1024, "README is {} bytes", text.len());
    let first_block: Vec<&str> = text
        .split("```")
        .nth(1)
        .expect("a code block")
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .collect();
    // The main job runs on the `dist` build (whole-program optimised), which Cargo.toml
    // must then define.
    assert!(
        first_block[0].starts_with("cargo run --profile dist -- reproduce"),
        "{first_block:?}"
    );
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    assert!(
        manifest.contains("[profile.dist]"),
        "Cargo.toml defines no dist profile"
    );
    assert!(
        first_block[1].starts_with("cargo test --workspace"),
        "{first_block:?}"
    );
}

#[test]
fn every_relative_link_in_the_readme_exists() {
    let text = readme();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    for piece in text.split("](").skip(1) {
        let target = piece.split(')').next().unwrap_or("");
        let target = target.split('#').next().unwrap_or("");
        if target.is_empty() || target.contains("://") {
            continue;
        }
        if !root.join(target).exists() {
            missing.push(target.to_string());
        }
    }
    assert!(missing.is_empty(), "broken README links: {missing:?}");
}
