//! Migrating older files never loses a byte, writes through symlinks to the real file and keeps its
//! owner and mode; files of a newer format are read but never written (issue 17, defects 2 and 3).

use ctxkit_session::{DiagnosticKind, Session, SessionError};

use crate::reliability::V1;
use crate::store::user;

const UNREADABLE: [&str; 4] = [
    "this is not json",
    "[1,2,3]",
    "{\"type\":\"session\",\"id\":\"second\"}",
    "{\"type\":\"message\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"to",
];

fn damaged_v1() -> String {
    let mut lines = V1.lines();
    let header = lines.next().unwrap();
    let first = lines.next().unwrap();
    let second = lines.next().unwrap();
    format!(
        "{}\n{header}\n{first}\n{}\n{}\n{second}\n{}\n{}",
        "garbage before the header", UNREADABLE[0], UNREADABLE[1], UNREADABLE[2], UNREADABLE[3]
    )
}

#[test]
fn migrating_a_damaged_v1_file_keeps_every_line_it_could_not_read_in_place() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("old.jsonl");
    std::fs::write(&path, damaged_v1()).unwrap();
    let mut session = Session::open(&path).unwrap();
    let problems_before = session.diagnostics().len();
    assert!(problems_before >= 5, "{:?}", session.diagnostics());
    // A first write (as `ctxkit label` makes) migrates.
    let target = session.entries()[0].id().to_owned();
    session.append_label_change(&target, Some("l")).unwrap();
    session.flush_pending().unwrap();
    drop(session);

    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "garbage before the header");
    assert!(lines[1].contains("\"version\":3"), "{}", lines[1]);
    assert!(lines[2].contains("\"content\":\"a\""));
    assert_eq!(&lines[3..5], &UNREADABLE[..2]);
    assert!(lines[5].contains("\"role\":\"assistant\""));
    assert_eq!(&lines[6..8], &UNREADABLE[2..]);
    assert!(lines[8].contains("\"type\":\"label\""));
    assert_eq!(lines.len(), 9);

    let reopened = Session::open(&path).unwrap();
    assert!(reopened.migrated_from().is_none());
    // `check` still sees every damaged line.
    assert_eq!(
        reopened.diagnostics().len(),
        problems_before,
        "{:?}",
        reopened.diagnostics()
    );
}

#[test]
fn a_legacy_file_with_invalid_utf8_is_not_migrated() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("old.jsonl");
    let mut bytes = V1.as_bytes().to_vec();
    bytes.extend_from_slice(b"{\"type\":\"custom\",\"data\":\"\xff\xfe\"}\n");
    std::fs::write(&path, &bytes).unwrap();
    let mut session = Session::open(&path).unwrap();
    let error = session.migrate_file().unwrap_err();
    assert!(
        matches!(error, SessionError::CannotMigrate { .. }),
        "{error}"
    );
    assert!(session.append_message(user("q")).is_err());
    session.flush_pending().unwrap_err();
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "left untouched");
}

#[cfg(unix)]
#[test]
fn migrating_through_a_symlink_updates_the_real_file_and_keeps_the_link() {
    let home = tempfile::tempdir().unwrap();
    let real = home.path().join("real.jsonl");
    let link = home.path().join("link.jsonl");
    std::fs::write(&real, V1).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let mut session = Session::open(&link).unwrap();
    assert!(session.migrate_file().unwrap());
    session.append_message(user("after")).unwrap();
    session.flush_pending().unwrap();
    drop(session);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.contains("\"version\":3"));
    assert!(text.contains("after"));
}

#[cfg(unix)]
#[test]
fn migrating_keeps_the_mode_and_as_root_the_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("old.jsonl");
    std::fs::write(&path, V1).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    // As root (CI), give the file to another user as the attack did.
    let as_root = std::os::unix::fs::chown(&path, Some(4242), Some(4242)).is_ok();
    let mut session = Session::open(&path).unwrap();
    assert!(session.migrate_file().unwrap());
    drop(session);
    let metadata = std::fs::metadata(&path).unwrap();
    assert_eq!(metadata.mode() & 0o777, 0o644);
    if as_root {
        assert_eq!((metadata.uid(), metadata.gid()), (4242, 4242));
    } else {
        eprintln!("owner not checked: not root");
    }
}

#[test]
fn a_newer_format_is_read_with_a_diagnostic_and_never_written() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("new.jsonl");
    let text = V1.replacen(
        "\"type\":\"session\",",
        "\"type\":\"session\",\"version\":99,",
        1,
    );
    let text = text.replace(
        "\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\"",
        "\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\"",
    );
    std::fs::write(&path, &text).unwrap();
    let mut session = Session::open(&path).unwrap();
    assert!(
        session
            .diagnostics()
            .iter()
            .any(|diagnostic| diagnostic.kind == DiagnosticKind::NewerVersion { version: 99 }),
        "{:?}",
        session.diagnostics()
    );
    let error = session.append_message(user("q")).unwrap_err();
    assert!(
        matches!(error, SessionError::NewerVersion { version: 99, .. }),
        "{error}"
    );
    // Migrating refuses it as well: it is not "already v3" (r101 CLI defect 1).
    let error = session.migrate_file().unwrap_err();
    assert!(
        matches!(error, SessionError::NewerVersion { version: 99, .. }),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}
