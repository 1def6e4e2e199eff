//! A Claude Code file whose records carry no timestamp or `cwd` (one holding only a `summary`
//! line): its session is named after the file's modification time, and its working directory is
//! the one the project folder's other transcripts record.

use std::time::{Duration, UNIX_EPOCH};

use ctxkit_import::{SourceFormat, import_file, list_foreign_sessions};

use crate::shapes::shape;

/// 2026-05-10T12:00:00.000Z.
const MODIFIED_MS: u64 = 1_778_414_400_000;

#[test]
fn a_file_without_timestamp_or_cwd_is_named_after_its_modification_time_and_project() {
    let temp = tempfile::tempdir().unwrap();
    let project = temp.path().join("-home-dev-shop");
    std::fs::create_dir_all(&project).unwrap();
    let summary_only = project.join("7d3c2a10-summary-only.jsonl");
    std::fs::copy(shape("7d3c2a10-summary-only.jsonl"), &summary_only).unwrap();
    let file = std::fs::File::options()
        .write(true)
        .open(&summary_only)
        .unwrap();
    file.set_modified(UNIX_EPOCH + Duration::from_millis(MODIFIED_MS))
        .unwrap();
    drop(file);

    // Alone in its folder: the time comes from the file, the working directory stays unknown.
    let session = import_file(&summary_only, None).unwrap();
    assert_eq!(session.header.timestamp, "2026-05-10T12:00:00.000Z");
    assert!(
        session
            .entries()
            .iter()
            .all(|entry| entry.timestamp == "2026-05-10T12:00:00.000Z")
    );
    assert_eq!(
        session.file_name(),
        "2026-05-10T12-00-00-000Z_7d3c2a10-summary-only.jsonl"
    );
    assert_eq!(session.header.cwd, "");

    // Beside a transcript of the same project, it takes that transcript's working directory.
    let neighbour = concat!(
        r#"{"type":"file-history-snapshot","messageId":"m1","snapshot":{}}"#,
        "\n",
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","cwd":"/home/dev/shop","timestamp":"2026-05-09T08:00:00.000Z","message":{"role":"user","content":"Hi"}}"#,
        "\n",
    );
    std::fs::write(project.join("0a1b2c3d-earlier.jsonl"), neighbour).unwrap();
    let session = import_file(&summary_only, None).unwrap();
    assert_eq!(session.header.cwd, "/home/dev/shop");
    assert_eq!(session.header.timestamp, "2026-05-10T12:00:00.000Z");
    // Importing twice gives the same session.
    assert_eq!(import_file(&summary_only, None).unwrap(), session);

    // The listing shows the same start time and working directory.
    let (records, skipped) = list_foreign_sessions(SourceFormat::ClaudeCode, temp.path()).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let listed = records
        .iter()
        .find(|record| record.id == "7d3c2a10-summary-only")
        .unwrap();
    assert_eq!(listed.cwd, "/home/dev/shop");
    assert_eq!(listed.created, "2026-05-10T12:00:00.000Z");

    // One project's folder named as the root lists its sessions too (QA 2026-12-05: nothing).
    let (in_project, skipped) = list_foreign_sessions(SourceFormat::ClaudeCode, &project).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let ids: Vec<&str> = in_project.iter().map(|record| record.id.as_str()).collect();
    assert_eq!(records.len(), in_project.len(), "{ids:?}");
    assert!(ids.contains(&"7d3c2a10-summary-only"), "{ids:?}");
}

/// A transcript without a `cwd` copied into a folder of unrelated files (`Downloads`) takes no
/// working directory from them: only a project folder named after a directory vouches for it.
#[test]
fn a_file_outside_a_project_folder_takes_no_neighbours_cwd() {
    let temp = tempfile::tempdir().unwrap();
    let downloads = temp.path().join("Downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    let summary_only = downloads.join("7d3c2a10-summary-only.jsonl");
    std::fs::copy(shape("7d3c2a10-summary-only.jsonl"), &summary_only).unwrap();
    let stranger = r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","cwd":"/home/someone/else","timestamp":"2026-05-09T08:00:00.000Z","message":{"role":"user","content":"Hi"}}"#;
    std::fs::write(downloads.join("0a1b2c3d-unrelated.jsonl"), stranger).unwrap();
    let session = import_file(&summary_only, None).unwrap();
    assert_eq!(session.header.cwd, "");
}
