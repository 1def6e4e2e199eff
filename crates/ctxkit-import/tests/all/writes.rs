//! Idempotency and safety of writing: same entries every time, re-imports append only what is new,
//! the source file is never modified, conflicts write nothing.

use std::time::SystemTime;

use ctxkit_import::{ImportError, WriteOutcome, import_file};

use crate::{FIXTURES, fixtures_dir};

fn stamp(path: &std::path::Path) -> (Vec<u8>, SystemTime) {
    (
        std::fs::read(path).unwrap(),
        std::fs::metadata(path).unwrap().modified().unwrap(),
    )
}

#[test]
fn importing_twice_gives_the_same_entries_and_file() {
    let temp = tempfile::tempdir().unwrap();
    for (name, generate, seed) in FIXTURES {
        let source = temp.path().join(name);
        std::fs::write(&source, generate(*seed)).unwrap();
        let before = stamp(&source);
        let first = import_file(&source, None).unwrap();
        let second = import_file(&source, None).unwrap();
        assert_eq!(first, second);
        let out = temp.path().join(format!("out-{name}"));
        assert_eq!(first.write_to(&out).unwrap(), WriteOutcome::Created);
        let written = std::fs::read(&out).unwrap();
        assert_eq!(second.write_to(&out).unwrap(), WriteOutcome::UpToDate);
        assert_eq!(std::fs::read(&out).unwrap(), written);
        assert_eq!(stamp(&source), before, "{name}: the source was modified");
    }
}

#[test]
fn a_grown_source_appends_only_the_new_entries() {
    let temp = tempfile::tempdir().unwrap();
    for (name, generate, seed) in FIXTURES {
        let full = generate(*seed);
        let lines: Vec<&str> = full.lines().collect();
        let source = temp.path().join(name);
        std::fs::write(&source, lines[..lines.len() - 3].join("\n") + "\n").unwrap();
        let out = temp.path().join(format!("out-{name}"));
        let early = import_file(&source, None).unwrap();
        early.write_to(&out).unwrap();
        std::fs::write(&source, &full).unwrap();
        let later = import_file(&source, None).unwrap();
        match later.write_to(&out).unwrap() {
            WriteOutcome::Appended(count) => assert!(count >= 3, "{name}: {count}"),
            other @ (WriteOutcome::Created | WriteOutcome::UpToDate) => panic!("{name}: {other:?}"),
        }
        let fresh = temp.path().join(format!("fresh-{name}"));
        later.write_to(&fresh).unwrap();
        let mut appended: Vec<String> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let mut whole: Vec<String> = std::fs::read_to_string(&fresh)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        appended.sort();
        whole.sort();
        assert_eq!(appended, whole, "{name}: same entries either way");
    }
}

#[test]
fn an_unrelated_output_file_is_a_conflict_and_stays_untouched() {
    let temp = tempfile::tempdir().unwrap();
    let session = import_file(&fixtures_dir().join(FIXTURES[0].0), None).unwrap();
    let out = temp.path().join("other.jsonl");
    std::fs::write(&out, "{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n").unwrap();
    let before = std::fs::read(&out).unwrap();
    assert!(matches!(
        session.write_to(&out),
        Err(ImportError::Conflict { .. })
    ));
    assert_eq!(std::fs::read(&out).unwrap(), before);
}
