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
            other @ (WriteOutcome::Created
            | WriteOutcome::UpToDate
            | WriteOutcome::AppendedBeside { .. }
            | WriteOutcome::AppendedCompleted { .. }) => panic!("{name}: {other:?}"),
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

/// QA r102: six re-imports of a grown transcript at once each appended the new entries (one
/// reading, six appends: every entry up to six times). An earlier import is now read and appended
/// to under the session's writer lock, so a writer holding it refuses the import, which writes
/// nothing.
#[test]
fn a_reimport_is_refused_while_another_writer_holds_the_session() {
    let temp = tempfile::tempdir().unwrap();
    let (name, generate, seed) = FIXTURES[0];
    let full = generate(seed);
    let lines: Vec<&str> = full.lines().collect();
    let source = temp.path().join(name);
    std::fs::write(&source, lines[..lines.len() - 3].join("\n") + "\n").unwrap();
    let out = temp.path().join("out.jsonl");
    import_file(&source, None).unwrap().write_to(&out).unwrap();
    std::fs::write(&source, &full).unwrap();
    let later = import_file(&source, None).unwrap();
    let before = std::fs::read(&out).unwrap();
    let holder = ctxkit_session::lock_session_file(&out).unwrap();
    match later.write_to(&out) {
        Err(ImportError::InUse(ctxkit_session::SessionError::Locked { holder, .. })) => {
            assert_eq!(holder, Some(std::process::id()));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(&out).unwrap(), before, "nothing was written");
    drop(holder);
    assert!(matches!(
        later.write_to(&out),
        Ok(WriteOutcome::Appended(_))
    ));
}

/// Issue 42: importing a transcript again after continuing the imported session moved the leaf
/// to the new records, so the continued turns silently left the context. The new records now go
/// beside the continued branch, and the session stays on it.
#[test]
fn a_reimport_after_continuing_keeps_the_session_on_the_continued_branch() {
    let temp = tempfile::tempdir().unwrap();
    for (name, generate, seed) in FIXTURES {
        let full = generate(*seed);
        let lines: Vec<&str> = full.lines().collect();
        let source = temp.path().join(name);
        std::fs::write(&source, lines[..lines.len() - 3].join("\n") + "\n").unwrap();
        let out = temp.path().join(format!("out-{name}"));
        import_file(&source, None).unwrap().write_to(&out).unwrap();
        // The user continues the imported session.
        let mut session = ctxkit_session::Session::open(&out).unwrap();
        let continued = session
            .append_message(
                serde_json::from_value(serde_json::json!(
                    {"role": "user", "content": "CONTINUED TURN", "timestamp": 1}
                ))
                .unwrap(),
            )
            .unwrap();
        drop(session);
        // The transcript grew meanwhile; it is imported again.
        std::fs::write(&source, &full).unwrap();
        let later = import_file(&source, None).unwrap();
        match later.write_to(&out).unwrap() {
            WriteOutcome::AppendedBeside {
                appended,
                continued_at,
            } => {
                assert!(appended >= 1, "{name}");
                assert_eq!(continued_at, continued, "{name}");
            }
            other @ (WriteOutcome::Created
            | WriteOutcome::UpToDate
            | WriteOutcome::Appended(_)
            | WriteOutcome::AppendedCompleted { .. }) => {
                panic!("{name}: {other:?}")
            }
        }
        let session = ctxkit_session::Session::open(&out).unwrap();
        assert!(
            session.diagnostics().is_empty(),
            "{name}: {:?}",
            session.diagnostics()
        );
        let context = session.build_context();
        let last_user = context
            .messages
            .iter()
            .rev()
            .filter_map(|message| session.message(message).ok())
            .find_map(|message| {
                if let ctxkit_protocol::AgentMessage::User(user) = message {
                    Some(user)
                } else {
                    None
                }
            })
            .unwrap();
        assert_eq!(
            serde_json::to_value(&last_user.content).unwrap(),
            serde_json::json!("CONTINUED TURN"),
            "{name}: the continued turn left the context"
        );
        // A third import changes nothing.
        assert_eq!(later.write_to(&out).unwrap(), WriteOutcome::UpToDate);
    }
}

/// QA r98: naming or labelling an imported session made a later re-import take it for continued,
/// so the grown transcript's new turns went on a side branch and left the context. A name or a
/// label continues nothing: the new records go on from the import's end, and both stay.
#[test]
fn a_reimport_after_naming_or_labelling_goes_on_from_the_import_s_end() {
    let temp = tempfile::tempdir().unwrap();
    for (name, generate, seed) in FIXTURES {
        let full = generate(*seed);
        let lines: Vec<&str> = full.lines().collect();
        let source = temp.path().join(name);
        std::fs::write(&source, lines[..lines.len() - 3].join("\n") + "\n").unwrap();
        let out = temp.path().join(format!("out-{name}"));
        import_file(&source, None).unwrap().write_to(&out).unwrap();
        let mut session = ctxkit_session::Session::open(&out).unwrap();
        let labelled = session.leaf_id().unwrap().to_owned();
        session.append_session_info("merge conflict fix").unwrap();
        session
            .append_label_change(&labelled, Some("start"))
            .unwrap();
        drop(session);
        std::fs::write(&source, &full).unwrap();
        let later = import_file(&source, None).unwrap();
        let outcome = later.write_to(&out).unwrap();
        assert!(
            matches!(outcome, WriteOutcome::Appended(_)),
            "{name}: {outcome:?}"
        );
        let fresh = temp.path().join(format!("fresh-{name}"));
        later.write_to(&fresh).unwrap();
        assert_eq!(context_of(&out), context_of(&fresh), "{name}");
        let session = ctxkit_session::Session::open(&out).unwrap();
        assert_eq!(
            session.session_name().as_deref(),
            Some("merge conflict fix")
        );
        assert_eq!(session.label(&labelled), Some("start"), "{name}");
    }
}

/// The context of a session file, message by message.
fn context_of(path: &std::path::Path) -> Vec<String> {
    let session = ctxkit_session::Session::open(path).unwrap();
    assert!(
        session.diagnostics().is_empty(),
        "{}: {:?}",
        path.display(),
        session.diagnostics()
    );
    let context = session.build_context();
    context
        .messages
        .iter()
        .map(|message| crate::shapes::describe(&session.message(message).unwrap()))
        .collect()
}

/// Claude Code writes a reply a content block at a time (one line each, one `message.id`), so an
/// import of a live session often catches a reply half-written. Importing the grown transcript
/// into the same file was refused ("is not an earlier import of this session: entry … differs").
/// The completed reply is appended as an entry of its own beside the partial one, what followed
/// under it; the earlier lines stay byte for byte and the context is a fresh import's.
#[test]
fn a_reimport_after_a_reply_caught_half_written_appends_the_completed_reply() {
    let temp = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(crate::shapes::shape(
        "claude-reply-written-block-by-block.jsonl",
    ))
    .unwrap();
    let lines: Vec<&str> = full.lines().collect();
    let source = temp
        .path()
        .join("eeee5555-0000-4000-8000-000000000001.jsonl");
    std::fs::write(&source, &full).unwrap();
    let fresh = temp.path().join("fresh.jsonl");
    import_file(&source, None)
        .unwrap()
        .write_to(&fresh)
        .unwrap();
    let expected = context_of(&fresh);
    assert_eq!(expected.len(), 6, "{expected:?}");
    // The lines imported before the whole file: the reply's thinking only (as reported), its
    // text too, its first call and that call's result, each in turn, then the reply complete.
    for (number, cuts) in [vec![2], vec![3], vec![5], vec![2, 3, 5, 6], vec![6]]
        .into_iter()
        .enumerate()
    {
        let out = temp.path().join(format!("out-{number}.jsonl"));
        for &cut in &cuts {
            std::fs::write(&source, lines[..cut].join("\n") + "\n").unwrap();
            let before = std::fs::read(&out).unwrap_or_default();
            import_file(&source, None)
                .unwrap()
                .write_to(&out)
                .unwrap_or_else(|error| panic!("{cuts:?} at {cut}: {error}"));
            assert!(
                std::fs::read(&out).unwrap().starts_with(&before),
                "{cuts:?}"
            );
            context_of(&out);
        }
        std::fs::write(&source, &full).unwrap();
        let before = std::fs::read(&out).unwrap();
        let whole = import_file(&source, None).unwrap();
        let outcome = whole
            .write_to(&out)
            .unwrap_or_else(|error| panic!("{cuts:?}: {error}"));
        assert!(
            matches!(
                outcome,
                WriteOutcome::Appended(_) | WriteOutcome::AppendedCompleted { .. }
            ),
            "{cuts:?}: {outcome:?}"
        );
        assert!(
            std::fs::read(&out).unwrap().starts_with(&before),
            "{cuts:?}"
        );
        assert_eq!(context_of(&out), expected, "{cuts:?}");
        assert_eq!(
            whole.write_to(&out).unwrap(),
            WriteOutcome::UpToDate,
            "{cuts:?}"
        );
    }
}
