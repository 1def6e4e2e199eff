//! A batch written whole or not at all, with a write that fails after some bytes (a full disk).

use ctxkit_protocol::{AgentMessage, MessageContent, UserMessage};

use crate::Session;
use crate::storage::fault;

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: MessageContent::Text(text.into()),
        timestamp: Some(1),
        extra: Default::default(),
    })
}

/// A session on disk with two messages, its file's bytes and its leaf.
fn session_on_disk(home: &std::path::Path) -> (Session, Vec<u8>, Option<String>) {
    let mut session = Session::create("/p", home);
    session.append_message(user("q")).unwrap();
    session.append_message(user("r")).unwrap();
    let before = std::fs::read(session.path().unwrap()).unwrap();
    let leaf = session.leaf_id().map(str::to_owned);
    (session, before, leaf)
}

/// QA (session files, defects 2 and 3): `edit-context --omit` of a reply with tool calls and
/// `undo-compact` wrote their entries one by one; on a full disk the first stayed and the command
/// failed, leaving an unpaired tool result or a leaf moved past the latest turns.
#[test]
fn a_batch_whose_write_fails_after_its_first_entry_leaves_nothing() {
    let home = tempfile::tempdir().unwrap();
    let (mut session, before, leaf) = session_on_disk(home.path());
    let path = session.path().unwrap().to_owned();
    let first_line = session.entries()[1].raw().unwrap().len() + 1;
    // Room for one entry and a little of the next.
    fault::fail_next_write_after(first_line + 20);
    let outcome = session.append_batch(|session| {
        let first = session.append_message(user("one"))?;
        session.append_label_change(&first, Some("mark"))?;
        session.append_message(user("two"))
    });
    assert!(outcome.is_err());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "nothing of the batch"
    );
    assert_eq!(session.entries().len(), 2);
    assert_eq!(session.leaf_id().map(str::to_owned), leaf);
    assert_eq!(session.label(session.entries()[1].id()), None);
    assert_eq!(session.build_context().messages.len(), 2);
    // The session goes on from where it was.
    let id = session.append_message(user("after")).unwrap();
    drop(session);
    let reopened = Session::open(&path).unwrap();
    assert!(reopened.diagnostics().is_empty());
    assert_eq!(reopened.entries().len(), 3);
    assert_eq!(reopened.entries()[2].id(), id);
    assert_eq!(reopened.entries()[2].parent_id(), leaf.as_deref());
}

#[test]
fn a_failing_step_writes_nothing_of_its_batch() {
    let home = tempfile::tempdir().unwrap();
    let (mut session, before, leaf) = session_on_disk(home.path());
    let path = session.path().unwrap().to_owned();
    // A step that fails after an append: the append is not written either.
    let outcome = session.append_batch(|session| {
        session.append_message(user("one"))?;
        session.append_context_edit("no-such-entry", None)
    });
    assert!(outcome.is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(session.leaf_id().map(str::to_owned), leaf);
    // Both entries of a batch that succeeds.
    let ids = session
        .append_batch(|session| {
            let one = session.append_message(user("one"))?;
            let two = session.append_message(user("two"))?;
            Ok([one, two])
        })
        .unwrap();
    drop(session);
    let reopened = Session::open(&path).unwrap();
    let written: Vec<&str> = reopened.entries().iter().map(|entry| entry.id()).collect();
    assert_eq!(written[2..], [ids[0].as_str(), ids[1].as_str()]);
    assert_eq!(reopened.leaf_id(), Some(ids[1].as_str()));
}
