//! Files that are not the format asked for are refused, never imported as empty sessions: a Pi
//! session that lost its header line (`shapes/pi-session-without-header.jsonl`, hand-written in
//! Pi's v3 entry shapes), and every fixture named as a format it is not.

use std::path::{Path, PathBuf};

use ctxkit_import::{ImportError, SourceFormat, detect_format, import_file, read_source};

use crate::shapes::shape;

/// Every `.jsonl` fixture, recursively.
fn jsonl_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            jsonl_files(&path, found);
        } else if path
            .extension()
            .is_some_and(|extension| extension == "jsonl")
        {
            found.push(path);
        }
    }
}

#[test]
fn a_pi_session_without_its_header_is_refused_whatever_the_format_named() {
    let path = shape("pi-session-without-header.jsonl");
    let before = std::fs::read(&path).unwrap();
    for named in [
        None,
        Some(SourceFormat::ClaudeCode),
        Some(SourceFormat::Codex),
        Some(SourceFormat::OpenCode),
    ] {
        match import_file(&path, named) {
            Err(error @ ImportError::HeaderlessPiSession { .. }) => assert!(
                error
                    .to_string()
                    .contains("holds session entries but no valid header line"),
                "{error}"
            ),
            other => panic!("{named:?}: {other:?}"),
        }
    }
    let source = read_source(&path).unwrap();
    assert!(matches!(
        detect_format(&source),
        Err(ImportError::HeaderlessPiSession { .. })
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_file_named_as_a_format_it_is_not_is_refused_and_said_to_look_like_its_own() {
    let mut paths = Vec::new();
    jsonl_files(&crate::fixtures_dir(), &mut paths);
    let mut refused = 0;
    for path in &paths {
        let Ok(own) = detect_format(&read_source(path).unwrap()) else {
            continue;
        };
        assert!(import_file(path, Some(own)).is_ok(), "{}", path.display());
        for named in [
            SourceFormat::ClaudeCode,
            SourceFormat::Codex,
            SourceFormat::OpenCode,
        ] {
            if named == own {
                continue;
            }
            match import_file(path, Some(named)) {
                Err(ImportError::NotThisFormat {
                    format, looks_like, ..
                }) => {
                    assert_eq!(
                        (format, looks_like),
                        (named, Some(own)),
                        "{}",
                        path.display()
                    );
                    refused += 1;
                }
                other => panic!("{} as {named:?}: {other:?}", path.display()),
            }
        }
    }
    assert!(refused >= 40, "{refused}");
}

#[test]
fn records_of_no_format_named_as_one_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.jsonl");
    std::fs::write(&path, "{\"hello\":1}\n{\"type\":\"note\"}\n").unwrap();
    assert!(matches!(
        import_file(&path, None),
        Err(ImportError::UnknownFormat { .. })
    ));
    let error = import_file(&path, Some(SourceFormat::ClaudeCode)).unwrap_err();
    assert!(matches!(
        error,
        ImportError::NotThisFormat {
            looks_like: None,
            ..
        }
    ));
    assert_eq!(
        error.to_string(),
        format!(
            "`{}` is not a Claude Code transcript: none of its records has that format's shape",
            path.display()
        )
    );
    // Codex names its rollouts `rollout-*`: a file so named is Codex's when no record says otherwise.
    let rollout = dir.path().join("rollout-2025-01-01T00-00-00-x.jsonl");
    std::fs::write(&rollout, "{\"hello\":1}\n").unwrap();
    assert!(import_file(&rollout, Some(SourceFormat::Codex)).is_ok());
}
