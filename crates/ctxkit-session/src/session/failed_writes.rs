//! Regression tests for writes that fail part-way (a full disk): the next acknowledged entry is never
//! glued onto what the failed write left, and no entry is acknowledged without being written.

use ctxkit_protocol::{AgentMessage, AssistantMessage, ContentBlock, MessageContent, UserMessage};

use super::Session;
use crate::storage::fault;

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: MessageContent::Text(text.into()),
        timestamp: Some(1),
        extra: Default::default(),
    })
}

fn assistant(text: &str) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![ContentBlock::text(text)],
        api: None,
        provider: None,
        model: None,
        usage: None,
        stop_reason: Some("stop".into()),
        error_message: None,
        timestamp: Some(2),
        extra: Default::default(),
    })
}

#[test]
fn a_torn_append_is_cut_back_before_the_next_acknowledged_entry() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/p", home.path());
    session.append_message(user("q")).unwrap();
    session.append_message(assistant("a")).unwrap();
    let path = session.path().unwrap().to_owned();
    let before = std::fs::read(&path).unwrap();

    // ENOSPC after 2,700 bytes of a 3 KB message.
    fault::fail_next_write_after(2700);
    let big = "z".repeat(3000);
    assert!(session.append_message(user(&big)).is_err());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the unacknowledged fragment is cut off at once"
    );

    let id = session.append_message(user("after")).unwrap();
    drop(session);
    let reopened = Session::open(&path).unwrap();
    assert!(
        reopened.diagnostics().is_empty(),
        "{:?}",
        reopened.diagnostics()
    );
    assert_eq!(reopened.entries().len(), 3);
    assert_eq!(reopened.entries()[2].id(), id);
    assert_eq!(reopened.build_context().messages.len(), 3);
}

#[test]
fn a_fragment_that_cannot_be_cut_refuses_appends_until_it_is() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/p", home.path());
    session.append_message(user("q")).unwrap();
    session.append_message(assistant("a")).unwrap();
    let path = session.path().unwrap().to_owned();
    let before = std::fs::read(&path).unwrap();
    fault::fail_next_write_after(10);
    fault::fail_cuts(2);
    assert!(session.append_message(user("lost")).is_err());
    assert_eq!(std::fs::read(&path).unwrap().len(), before.len() + 10);
    let error = session.append_message(user("refused")).unwrap_err();
    assert!(
        matches!(error, crate::SessionError::TailUnrepaired { .. }),
        "{error}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap().len(),
        before.len() + 10,
        "nothing glued onto the fragment"
    );
    // Once the fragment can be cut, appends resume on a clean line.
    let id = session.append_message(user("resumed")).unwrap();
    drop(session);
    let reopened = Session::open(&path).unwrap();
    assert!(reopened.diagnostics().is_empty());
    assert_eq!(reopened.entries().len(), 3);
    assert_eq!(reopened.entries()[2].id(), id);
}

#[test]
fn a_failing_first_write_acknowledges_no_later_append() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/p", home.path());
    // Setup entries stay in memory until the first user message (Pi 1.6).
    let setup = session.append_model_change("p", "m").unwrap();
    let path = session.path().unwrap().to_owned();
    // The directory cannot be created: the first write fails.
    std::fs::remove_dir(home.path()).unwrap();
    std::fs::write(home.path(), b"not a directory").unwrap();
    assert!(session.append_message(user("q")).is_err());
    // The failed entry is not in memory and the leaf did not move (Pi 1.6 rolls back).
    assert_eq!(session.entries().len(), 1);
    assert_eq!(session.leaf_id(), Some(setup.as_str()));
    assert!(
        session.append_model_change("p", "n").is_err(),
        "not acknowledged: it cannot be written either"
    );
    assert_eq!(session.entries().len(), 1);
    std::fs::remove_file(home.path()).unwrap();
    let id = session.append_message(user("later")).unwrap();
    drop(session);
    let reopened = Session::open(&path).unwrap();
    let ids: Vec<&str> = reopened.entries().iter().map(|entry| entry.id()).collect();
    assert_eq!(ids.len(), 2, "the setup entry and the later message");
    assert_eq!(ids[1], id);
    // The later entry's parent is on disk.
    assert_eq!(reopened.entries()[1].parent_id(), Some(setup.as_str()));
}
