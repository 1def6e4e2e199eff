//! The session file is watched: an append onto a file another program deleted, moved, replaced, cut
//! short or extended is refused (`SessionError::FileChanged`), nothing is written, the session in
//! memory stays whole, and `write_afresh` puts it all into a new file that takes the appends.
//! Also: `--continue`'s record of the session used last.

use std::path::{Path, PathBuf};

use ctxkit_session::{
    FileChange, LAST_USED_RECORD, Session, SessionError, find_last_used_session,
    record_last_used_session,
};

use crate::store::{assistant, user};

/// A session written to disk (a user message and a reply), and its file.
fn written_session(dir: &Path) -> (Session, PathBuf) {
    let mut session = Session::create("/p", dir);
    session.append_message(user("q")).unwrap();
    session.append_message(assistant("a")).unwrap();
    let path = session.path().unwrap().to_owned();
    assert!(path.exists());
    (session, path)
}

fn change_of(error: &SessionError) -> FileChange {
    if let SessionError::FileChanged { change, .. } = error {
        return *change;
    }
    panic!("not a changed file: {error}")
}

/// The append is refused with `expected`, the session keeps its entries, and writing afresh
/// carries every entry into a new file that then takes appends.
fn refused_then_written_afresh(mut session: Session, path: &Path, expected: FileChange) {
    let before = session.entries().len();
    let on_disk = std::fs::read(path).ok();
    let error = session.append_message(user("more")).unwrap_err();
    assert_eq!(change_of(&error), expected, "{error}");
    assert!(error.to_string().contains("nothing was written"), "{error}");
    assert_eq!(change_of(&session.check_file().unwrap_err()), expected);
    assert_eq!(
        std::fs::read(path).ok(),
        on_disk,
        "the file is left as it is"
    );
    assert_eq!(session.entries().len(), before, "nothing lost in memory");
    let ids: Vec<String> = session
        .entries()
        .iter()
        .map(|entry| entry.id().to_owned())
        .collect();

    let parent_before = session.header().parent_session.clone();
    let fresh = session.write_afresh().unwrap().unwrap();
    assert_ne!(fresh, path);
    // The new file names the old one as its parent while a file is at its path (appended to, cut,
    // replaced), as a fork does: listings link the two. A file gone from its path is not named.
    let expected_parent = if path.is_file() {
        Some(path.display().to_string())
    } else {
        parent_before
    };
    assert_eq!(session.header().parent_session, expected_parent);
    session.check_file().unwrap();
    session.append_message(user("after")).unwrap();
    let reopened = Session::open(&fresh).unwrap();
    let reopened_ids: Vec<String> = reopened
        .entries()
        .iter()
        .map(|entry| entry.id().to_owned())
        .collect();
    assert_eq!(
        reopened_ids[..ids.len()],
        ids[..],
        "every entry, ids unchanged"
    );
    assert_eq!(reopened.entries().len(), ids.len() + 1);
    assert!(
        reopened.diagnostics().is_empty(),
        "{:?}",
        reopened.diagnostics()
    );
    assert_ne!(reopened.id(), "", "a header");
    assert_eq!(reopened.header().parent_session, expected_parent);
}

#[test]
fn an_append_onto_a_deleted_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (session, path) = written_session(dir.path());
    std::fs::remove_file(&path).unwrap();
    refused_then_written_afresh(session, &path, FileChange::Deleted);
}

#[test]
fn an_append_onto_a_moved_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (session, path) = written_session(dir.path());
    let moved = dir.path().join("moved.jsonl");
    std::fs::rename(&path, &moved).unwrap();
    let moved_before = std::fs::read(&moved).unwrap();
    refused_then_written_afresh(session, &path, FileChange::Moved);
    assert_eq!(
        std::fs::read(&moved).unwrap(),
        moved_before,
        "the moved file is not written"
    );
}

#[test]
fn an_append_onto_a_replaced_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (session, path) = written_session(dir.path());
    // As an editor saves: a new file renamed over the old one, same bytes.
    let copy = dir.path().join("copy.tmp");
    std::fs::copy(&path, &copy).unwrap();
    std::fs::rename(&copy, &path).unwrap();
    refused_then_written_afresh(session, &path, FileChange::Replaced);
}

#[test]
fn an_append_onto_a_file_cut_short_in_place_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (session, path) = written_session(dir.path());
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: String = text
        .lines()
        .take(2)
        .map(|line| format!("{line}\n"))
        .collect();
    // In place (same inode): the last line is gone.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(kept.len() as u64)
        .unwrap();
    let expected = FileChange::Truncated {
        expected: text.len() as u64,
        found: kept.len() as u64,
    };
    refused_then_written_afresh(session, &path, expected);
    // The cut file still has no entry hung on the missing parent.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), kept);
}

#[test]
fn an_append_onto_a_file_another_program_extended_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (session, path) = written_session(dir.path());
    let length = std::fs::metadata(&path).unwrap().len();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, b"{\"type\":\"custom\"}\n").unwrap();
    drop(file);
    let expected = FileChange::Extended {
        expected: length,
        found: length + 18,
    };
    refused_then_written_afresh(session, &path, expected);
}

#[test]
fn a_fork_written_afresh_after_its_file_was_deleted_keeps_naming_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::create("/p", dir.path());
    session.new_session(Some("/s/original.jsonl".to_owned()));
    session.append_message(user("q")).unwrap();
    session.append_message(assistant("a")).unwrap();
    let path = session.path().unwrap().to_owned();
    std::fs::remove_file(&path).unwrap();
    let fresh = session.write_afresh().unwrap().unwrap();
    let reopened = Session::open(&fresh).unwrap();
    assert_eq!(
        reopened.header().parent_session.as_deref(),
        Some("/s/original.jsonl")
    );
}

#[test]
fn a_file_left_alone_takes_appends_and_checks_clean() {
    let dir = tempfile::tempdir().unwrap();
    let (mut session, path) = written_session(dir.path());
    for round in 0..5 {
        session.check_file().unwrap();
        session.append_message(user(&format!("q{round}"))).unwrap();
        session.append_message(assistant("a")).unwrap();
    }
    assert_eq!(Session::open(&path).unwrap().entries().len(), 12);
    // In memory and before the first write there is nothing to check.
    Session::in_memory("/p").check_file().unwrap();
    let mut unwritten = Session::create("/p", dir.path());
    unwritten.append_message(user("held back")).unwrap();
    unwritten.check_file().unwrap();
}

#[test]
fn a_deleted_file_is_refused_for_every_later_append_until_written_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let (mut session, path) = written_session(dir.path());
    std::fs::remove_file(&path).unwrap();
    for _ in 0..3 {
        assert!(matches!(
            session.append_message(assistant("x")),
            Err(SessionError::FileChanged { .. })
        ));
    }
    assert!(!path.exists(), "never recreated");
    assert_eq!(session.entries().len(), 2);
}

// ----- the session used last ------------------------------------------------------------------

fn wait_for_clock() {
    // Modification times must differ between steps.
    std::thread::sleep(std::time::Duration::from_millis(20));
}

#[test]
fn continue_opens_the_recorded_session_over_a_newer_fork() {
    let dir = tempfile::tempdir().unwrap();
    let (original, original_path) = written_session(dir.path());
    drop(original);
    wait_for_clock();
    let fork = Session::fork_from(&original_path, "/p", dir.path()).unwrap();
    let fork_path = fork.path().unwrap().to_owned();
    drop(fork);
    assert_eq!(
        find_last_used_session(dir.path()),
        Some(fork_path.clone()),
        "newest without a record"
    );
    wait_for_clock();
    // The user went back to the original (`/resume`) and left.
    record_last_used_session(dir.path(), &original_path).unwrap();
    assert_eq!(
        find_last_used_session(dir.path()),
        Some(original_path.clone())
    );
    let continued = Session::continue_recent("/p", dir.path()).unwrap();
    assert_eq!(continued.path(), Some(original_path.as_path()));
    drop(continued);
    // A session written after the record (another agent) was used later.
    wait_for_clock();
    let mut other = Session::open(&fork_path).unwrap();
    other.append_message(user("later")).unwrap();
    drop(other);
    assert_eq!(find_last_used_session(dir.path()), Some(fork_path));
}

#[test]
fn a_bad_record_falls_back_to_the_newest_session() {
    let dir = tempfile::tempdir().unwrap();
    let (session, newest) = written_session(dir.path());
    drop(session);
    wait_for_clock();
    let record = dir.path().join(LAST_USED_RECORD);
    for text in [
        "gone.jsonl\n",
        "../escape.jsonl\n",
        "/etc/passwd\n",
        "\n",
        ".ctxkit-last-used\n",
    ] {
        std::fs::write(&record, text).unwrap();
        assert_eq!(
            find_last_used_session(dir.path()),
            Some(newest.clone()),
            "{text:?}"
        );
    }
    // Not a session file.
    std::fs::write(dir.path().join("notes.jsonl.txt"), "x").unwrap();
    std::fs::write(&record, "notes.jsonl.txt\n").unwrap();
    assert_eq!(find_last_used_session(dir.path()), Some(newest.clone()));
    // A file outside the folder is never recorded.
    let outside = tempfile::tempdir().unwrap();
    record_last_used_session(dir.path(), &outside.path().join("x.jsonl")).unwrap();
    assert_eq!(
        std::fs::read_to_string(&record).unwrap(),
        "notes.jsonl.txt\n"
    );
    // An empty folder has nothing to continue.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(find_last_used_session(empty.path()), None);
}

#[cfg(unix)]
#[test]
fn a_symlink_at_the_record_is_replaced_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (session, path) = written_session(dir.path());
    drop(session);
    let target = dir.path().join("precious.txt");
    std::fs::write(&target, "keep me").unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join(LAST_USED_RECORD)).unwrap();
    assert_eq!(
        find_last_used_session(dir.path()),
        Some(path.clone()),
        "a symlinked record is not read"
    );
    record_last_used_session(dir.path(), &path).unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    assert!(
        !std::fs::symlink_metadata(dir.path().join(LAST_USED_RECORD))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
