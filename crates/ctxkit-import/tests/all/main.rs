//! Integration tests of the importers: generated fixtures in each format, imported trees checked
//! against committed expectations, idempotency, and the source never modified.
//!
//! `UPDATE_EXPECT=1 cargo test -p ctxkit-import` rewrites the committed fixtures and expectations.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod codex_late;
mod codex_usage;
mod cycles;
mod generator;
mod hostile_usage;
mod injected;
mod leaf_path;
mod opencode;
mod opencode_next;
mod opencode_reimport;
mod record_kinds;
mod refusals;
mod shapes;
mod special_files;
mod subagents;
mod surroundings;
mod trees;
mod writes;

use std::path::{Path, PathBuf};

/// A fixture: file name, generator, seed.
pub type Fixture = (&'static str, fn(u64) -> String, u64);

pub const FIXTURES: &[Fixture] = &[
    ("claude-code-session.jsonl", generator::claude_code, 7),
    ("codex-rollout.jsonl", generator::codex, 11),
    (
        "claude-code-parallel.jsonl",
        generator::claude_code_parallel,
        3,
    ),
];

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

pub fn expected_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected")
}

pub fn updating() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some()
}

/// Compares `actual` with the committed file, or rewrites it under `UPDATE_EXPECT`.
pub fn check_file(path: &Path, actual: &str) {
    if updating() {
        if std::fs::read_to_string(path).ok().as_deref() != Some(actual) {
            let temp = path.with_extension("tmp");
            std::fs::write(&temp, actual).unwrap();
            std::fs::rename(&temp, path).unwrap();
        }
        return;
    }
    let expected = std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("{}: {error}; run with UPDATE_EXPECT=1", path.display()));
    assert!(
        expected == actual,
        "{} differs; run with UPDATE_EXPECT=1 and review the diff\n--- actual\n{actual}",
        path.display()
    );
}

#[test]
fn generator_is_seeded_and_matches_committed_fixtures() {
    for (name, generate, seed) in FIXTURES {
        assert_eq!(generate(*seed), generate(*seed));
        assert_ne!(generate(*seed), generate(seed + 1));
        check_file(&fixtures_dir().join(name), &generate(*seed));
    }
}
