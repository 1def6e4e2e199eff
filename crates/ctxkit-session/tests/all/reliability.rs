//! Durability modes, refusing a migration that would lose another process's appends, and the first
//! write of a new file being whole or absent.

use std::num::NonZeroU32;

use ctxkit_session::{Durability, Session, SessionError};

use crate::store::{assistant, user};

#[test]
fn every_durability_mode_writes_every_entry_and_is_kept_by_new_sessions() {
    let every_three = Durability::SyncEvery(NonZeroU32::new(3).unwrap());
    for mode in [Durability::Flush, Durability::SyncEach, every_three] {
        let home = tempfile::tempdir().unwrap();
        let mut session = Session::create("/p", home.path());
        assert_eq!(session.durability(), Durability::Flush, "the default");
        session.set_durability(mode);
        let mut ids = vec![session.append_message(user("q")).unwrap()];
        for turn in 0..7 {
            ids.push(
                session
                    .append_message(assistant(&format!("a{turn}")))
                    .unwrap(),
            );
        }
        let path = session.path().unwrap().to_owned();
        drop(session);
        let reopened = Session::open(&path).unwrap();
        let stored: Vec<&str> = reopened.entries().iter().map(|entry| entry.id()).collect();
        assert_eq!(stored, ids, "{mode:?}");
        assert!(reopened.diagnostics().is_empty(), "{mode:?}");

        let mut session = Session::open(&path).unwrap();
        session.set_durability(mode);
        session.new_session(None);
        assert_eq!(session.durability(), mode);
    }
}

#[test]
fn a_new_file_is_created_whole_with_its_held_back_entries() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/p", home.path());
    session.append_model_change("p", "m").unwrap();
    let path = session.path().unwrap().to_owned();
    assert!(
        !path.exists(),
        "held back until the first user or assistant message"
    );
    session.append_message(user("q")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.ends_with('\n'));
    // No temporary files are left beside it.
    let names: Vec<_> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

pub(crate) const V1: &str = "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n\
    {\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n\
    {\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n";

#[test]
fn a_migration_never_overwrites_what_another_process_wrote_meanwhile() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("old.jsonl");
    std::fs::write(&path, V1).unwrap();
    let mut first = Session::open(&path).unwrap();
    let mut second = Session::open(&path).unwrap();
    assert!(first.needs_migration() && second.needs_migration());
    let kept = first.append_message(user("from the first")).unwrap();
    drop(first);
    let after_first = std::fs::read(&path).unwrap();

    let error = second.append_message(user("from the second")).unwrap_err();
    assert!(
        matches!(error, SessionError::ChangedOnDisk { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("changed by another process"));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        after_first,
        "nothing written"
    );
    assert_eq!(second.entries().len(), 2, "nor held in memory");

    let mut reopened = Session::open(&path).unwrap();
    assert!(reopened.entry(&kept).is_some());
    reopened.append_message(user("from the second")).unwrap();
    assert_eq!(Session::open(&path).unwrap().entries().len(), 4);
}

#[test]
fn a_migration_is_refused_after_an_append_on_the_old_file_too() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("old.jsonl");
    std::fs::write(&path, V1).unwrap();
    let mut session = Session::open(&path).unwrap();
    let line = "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:03.000Z\",\"message\":{\"role\":\"user\",\"content\":\"late\"}}\n";
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, line.as_bytes()).unwrap();
    drop(file);
    let before = std::fs::read(&path).unwrap();
    assert!(matches!(
        session.migrate_file(),
        Err(SessionError::ChangedOnDisk { .. })
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_torn_legacy_file_still_migrates() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("old.jsonl");
    std::fs::write(&path, format!("{V1}{{\"type\":\"mess")).unwrap();
    let mut session = Session::open(&path).unwrap();
    assert!(session.migrate_file().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    // The torn tail is kept (terminated): a migration drops no byte.
    assert_eq!(text.lines().count(), 4, "{text}");
    assert_eq!(text.lines().last(), Some("{\"type\":\"mess"));
}

#[test]
fn a_stale_view_never_appends_after_another_process_wrote() {
    let home = tempfile::tempdir().unwrap();
    let mut writer = Session::create("/p", home.path());
    writer.append_message(user("q")).unwrap();
    writer.append_message(assistant("a")).unwrap();
    let path = writer.path().unwrap().to_owned();
    drop(writer);

    let mut stale = Session::open(&path).unwrap();
    let mut other = Session::open(&path).unwrap();
    let newer = other.append_message(assistant("b")).unwrap();
    drop(other);
    let before = std::fs::read(&path).unwrap();
    let error = stale.append_message(user("c")).unwrap_err();
    assert!(
        matches!(error, SessionError::ChangedOnDisk { .. }),
        "{error}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // Reopened, the append continues from the other process's entry.
    let mut fresh = Session::open(&path).unwrap();
    let id = fresh.append_message(user("c")).unwrap();
    assert_eq!(fresh.entry(&id).unwrap().parent_id(), Some(newer.as_str()));
}

/// A real full disk: a 64 KiB tmpfs (needs root to mount; CI runs as root, elsewhere it says so and
/// passes without running).
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_never_leaves_an_acknowledged_entry_glued_to_a_fragment() {
    let mount_point = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(mount_point.path())
        .status()
        .is_ok_and(|status| status.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs (not root)");
        return;
    }
    let result = std::panic::catch_unwind(|| full_disk_round(mount_point.path()));
    let _ = std::process::Command::new("umount")
        .arg(mount_point.path())
        .status();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

#[cfg(target_os = "linux")]
fn full_disk_round(directory: &std::path::Path) {
    let mut session = Session::create("/p", directory);
    session.append_message(user("q")).unwrap();
    session.append_message(assistant("a")).unwrap();
    let path = session.path().unwrap().to_owned();
    // Fill the disk but for about 2.7 KB.
    let filler = directory.join("filler");
    let mut size = 0usize;
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&filler).unwrap();
        while file.write_all(&[b'x'; 512]).is_ok() {
            size += 512;
        }
        file.set_len(size.saturating_sub(2700) as u64).unwrap();
    }
    let failures = (0..4)
        .filter(|_| session.append_message(user(&"z".repeat(3000))).is_err())
        .count();
    assert!(failures > 0, "the disk was never full");
    std::fs::remove_file(&filler).unwrap();
    let id = session.append_message(user("after")).unwrap();
    drop(session);
    let reopened = Session::open(&path).unwrap();
    assert!(
        reopened.diagnostics().is_empty(),
        "{:?}",
        reopened.diagnostics()
    );
    assert_eq!(reopened.entries().last().unwrap().id(), id);
    let messages = reopened.build_context().messages.len();
    assert_eq!(messages, reopened.entries().len(), "every message in view");
}

/// Issue 17, defect 5: a copy of an early entry appended at the end must not become the leaf (the
/// context would shrink to the copy's ancestors).
#[test]
fn a_duplicated_entry_at_the_end_does_not_take_the_leaf() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/p", home.path());
    for turn in 0..10 {
        session.append_message(user(&format!("q{turn}"))).unwrap();
        session
            .append_message(assistant(&format!("a{turn}")))
            .unwrap();
    }
    let path = session.path().unwrap().to_owned();
    let last = session.leaf_id().unwrap().to_owned();
    drop(session);
    let text = std::fs::read_to_string(&path).unwrap();
    let early = text.lines().nth(3).unwrap().to_owned();
    std::fs::write(&path, format!("{text}{early}\n")).unwrap();
    let reopened = Session::open(&path).unwrap();
    assert_eq!(reopened.leaf_id(), Some(last.as_str()));
    assert_eq!(reopened.build_context().messages.len(), 20);
    assert!(reopened.diagnostics().iter().any(|problem| matches!(
        problem.kind,
        ctxkit_session::DiagnosticKind::DuplicateId { .. }
    )));
}

/// QA (2026-12-05): two entries with one id (`c`, the second on another branch): the leaf was
/// the first, so `context` showed one conversation, `fork` the other, and a `label` (whose
/// parent id names the last `c`) moved the session onto the second.
#[test]
fn appending_after_a_repeated_id_never_moves_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dup.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"11111111-1111-4111-8111-111111111111","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp/x"}"#,
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello"}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}"#,
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"q2"}}"#,
        r#"{"type":"message","id":"c","parentId":"a","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"dupc"}]}}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let texts = |session: &Session| -> Vec<String> {
        session
            .build_context()
            .messages
            .iter()
            .map(|message| session.message_value(message).unwrap().to_string())
            .collect()
    };
    let mut session = Session::open(&path).unwrap();
    // Neither `c`: the leaf is the last entry whose id is its own.
    assert_eq!(session.leaf_id(), Some("b"));
    let before = texts(&session);
    session.append_label_change("a", Some("L")).unwrap();
    let after = texts(&Session::open(&path).unwrap());
    assert_eq!(before, after);
}
