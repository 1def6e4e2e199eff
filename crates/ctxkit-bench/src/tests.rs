//! Unit tests across the generator: determinism and that ctxkit loads what it writes.

use ctxkit_session::Session;

use crate::{
    DirOptions, GenerateOptions, Operation, run_operation, write_session, write_session_dir,
    write_session_file,
};

fn generate(seed: u64, entries: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let options = GenerateOptions {
        seed,
        entries,
        max_tool_output: 64 << 10,
        ..GenerateOptions::default()
    };
    write_session(&mut out, &options).unwrap();
    out
}

#[test]
fn equal_seeds_write_identical_bytes_and_other_seeds_differ() {
    assert_eq!(generate(42, 1500), generate(42, 1500));
    assert_ne!(generate(42, 1500), generate(43, 1500));
}

#[test]
fn generated_sessions_load_without_diagnostics_and_have_every_feature() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let options = GenerateOptions {
        seed: 7,
        entries: 3000,
        max_tool_output: 256 << 10,
        ..GenerateOptions::default()
    };
    let stats = write_session_file(&path, &options).unwrap();
    assert_eq!(stats.entries, 3000);
    assert!(
        stats.branches > 0 && stats.compactions > 0 && stats.images > 0,
        "{stats:?}"
    );
    let session = Session::open(&path).unwrap();
    assert!(
        session.diagnostics().is_empty(),
        "{:?}",
        session.diagnostics()
    );
    assert_eq!(session.entries().len(), 3000);
    assert!(!session.build_context().messages.is_empty());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
        "no CJK text"
    );
    for kind in [
        "compaction",
        "branch_summary",
        "label",
        "custom_message",
        "bashExecution",
        "image",
    ] {
        assert!(text.contains(&format!("\"{kind}\"")), "no {kind}");
    }
}

#[test]
fn directory_mode_writes_loadable_sessions_that_list() {
    let dir = tempfile::tempdir().unwrap();
    let options = DirOptions {
        seed: 3,
        sessions: 5,
        min_entries: 10,
        max_entries: 200,
        max_tool_output: 16 << 10,
    };
    let stats = write_session_dir(dir.path(), &options).unwrap();
    assert_eq!(stats.sessions, 5);
    let (records, skipped) = ctxkit_session::list_sessions(dir.path()).unwrap();
    assert_eq!((records.len(), skipped.len()), (5, 0));
    let measured = run_operation(Operation::List, dir.path()).unwrap();
    assert_eq!(measured.check, "5 sessions, 0 skipped");
}

#[test]
fn tiny_sessions_are_valid() {
    for entries in [0, 1, 2, 5] {
        let text = String::from_utf8(generate(1, entries)).unwrap();
        assert_eq!(text.lines().count() as u64, entries + 1);
    }
}
