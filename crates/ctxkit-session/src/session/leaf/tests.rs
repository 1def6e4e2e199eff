//! The kept leaf context against the full rebuild, over random sequences of appends (every entry
//! kind), branches, leaf resets, branch summaries, compactions and context edits.

use proptest::prelude::*;
use serde_json::json;

use crate::context::build_context_on_path;
use crate::entry::EntryMeta;
use crate::{NewCompaction, Session, SummarySource};
use ctxkit_protocol::{AgentMessage, MessageContent};

/// One step of a random session's life; the numbers pick an entry (modulo the entries there are).
#[derive(Debug, Clone)]
enum Step {
    User,
    Assistant(u8),
    ToolResult,
    System,
    Batch(u8),
    ThinkingLevel(u8),
    Model(u8),
    CustomMessage,
    Custom,
    Label(usize),
    SessionInfo,
    Compaction(usize),
    Edit(usize, bool),
    Branch(usize),
    ResetLeaf,
    BranchSummary(usize),
    /// Read the context (the kept one is built, or checked after appends taken in place).
    Read,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => Just(Step::User),
        4 => any::<u8>().prop_map(Step::Assistant),
        3 => Just(Step::ToolResult),
        1 => Just(Step::System),
        1 => (1u8..4).prop_map(Step::Batch),
        1 => any::<u8>().prop_map(Step::ThinkingLevel),
        1 => any::<u8>().prop_map(Step::Model),
        1 => Just(Step::CustomMessage),
        1 => Just(Step::Custom),
        1 => any::<usize>().prop_map(Step::Label),
        1 => Just(Step::SessionInfo),
        2 => any::<usize>().prop_map(Step::Compaction),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(at, omit)| Step::Edit(at, omit)),
        2 => any::<usize>().prop_map(Step::Branch),
        1 => Just(Step::ResetLeaf),
        1 => any::<usize>().prop_map(Step::BranchSummary),
        4 => Just(Step::Read),
    ]
}

fn message(value: serde_json::Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

fn user() -> AgentMessage {
    message(json!({"role": "user", "content": "go on", "timestamp": 1_763_900_000_000_i64}))
}

fn assistant(model: u8) -> AgentMessage {
    message(json!({
        "role": "assistant", "content": [{"type": "text", "text": "done"}],
        "provider": format!("p{}", model % 3), "model": format!("m{}", model % 5),
        "stopReason": "stop",
        "usage": {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110},
        "timestamp": 1_763_900_000_001_i64
    }))
}

/// The id of an entry of the session picked by `at`.
fn pick(session: &Session, at: usize) -> Option<String> {
    let entries = session.entries();
    (!entries.is_empty()).then(|| entries[at % entries.len()].id().to_owned())
}

/// The id of an entry on the leaf's path picked by `at`.
fn pick_on_path(session: &Session, at: usize) -> Option<String> {
    let path = session.branch_path(None);
    (!path.is_empty()).then(|| path[at % path.len()].id().to_owned())
}

fn apply(session: &mut Session, step: &Step) {
    // Refusals (an edit of an entry that cannot be edited) are part of the sequence.
    let _ = match step {
        Step::User => session.append_message(user()).map(drop),
        Step::Assistant(model) => session.append_message(assistant(*model)).map(drop),
        Step::ToolResult => session
            .append_message(message(json!({
                "role": "toolResult", "toolCallId": "call", "toolName": "bash",
                "content": [{"type": "text", "text": "ok"}], "isError": false,
                "timestamp": 1_763_900_000_002_i64
            })))
            .map(drop),
        Step::System => session
            .append_message(message(json!({
                "role": "system", "content": "be brief", "timestamp": 1_763_900_000_003_i64
            })))
            .map(drop),
        Step::Batch(count) => session
            .append_messages((0..*count).map(assistant).collect())
            .map(drop),
        Step::ThinkingLevel(level) => session
            .append_thinking_level_change(["off", "low", "high"][usize::from(*level) % 3])
            .map(drop),
        Step::Model(model) => session
            .append_model_change("anthropic", &format!("model-{}", model % 4))
            .map(drop),
        Step::CustomMessage => session
            .append_custom_message_entry("note", MessageContent::Text("n".into()), true, None)
            .map(drop),
        Step::Custom => session.append_custom_entry("state", None).map(drop),
        Step::Label(at) => match pick(session, *at) {
            Some(id) => session.append_label_change(&id, Some("here")).map(drop),
            None => Ok(()),
        },
        Step::SessionInfo => session.append_session_info("name").map(drop),
        Step::Compaction(at) => {
            // The first kept entry: one on the path, or (rarely) the compaction keeps nothing.
            let first_kept = pick_on_path(session, *at).unwrap_or_default();
            session
                .append_compaction(NewCompaction {
                    summary: "summary".into(),
                    first_kept_entry_id: first_kept,
                    tokens_before: 1000,
                    details: None,
                    source: SummarySource::Ctxkit,
                })
                .map(drop)
        }
        Step::Edit(at, omit) => match pick_on_path(session, *at) {
            Some(id) => {
                let replacement = (!omit).then(|| MessageContent::Text("edited".into()));
                session.append_context_edit(&id, replacement).map(drop)
            }
            None => Ok(()),
        },
        Step::Branch(at) => match pick(session, *at) {
            Some(id) => session.branch(&id),
            None => Ok(()),
        },
        Step::ResetLeaf => {
            session.reset_leaf();
            Ok(())
        }
        Step::BranchSummary(at) => {
            let target = pick(session, *at);
            session
                .branch_with_summary(target.as_deref(), "left", None, SummarySource::Ctxkit)
                .map(drop)
        }
        Step::Read => {
            let _ = session.leaf_context();
            Ok(())
        }
    };
}

/// The kept state equals the full rebuild at the current leaf.
fn assert_current(session: &Session) {
    let index = session.index();
    let path = session
        .leaf_id()
        .and_then(|id| index.position(id))
        .map(|leaf| index.path_to(leaf))
        .unwrap_or_default();
    let rebuilt = build_context_on_path(index, &path);
    assert_eq!(*session.leaf_context(), rebuilt);
    assert_eq!(session.build_context(), rebuilt);
    assert_eq!(&*session.leaf_path(), &path[..]);
    let compaction = path.iter().rposition(|&position| {
        matches!(
            index.get(position).unwrap().meta,
            EntryMeta::Compaction { .. }
        )
    });
    assert_eq!(session.latest_compaction().map(|(at, _)| at), compaction);
    let branch: Vec<&str> = session.branch_path(None).iter().map(|e| e.id()).collect();
    let walked: Vec<&str> = path.iter().map(|&p| index.get(p).unwrap().id()).collect();
    assert_eq!(branch, walked);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_kept_context_equals_the_full_rebuild(steps in proptest::collection::vec(step(), 1..80)) {
        let mut session = Session::in_memory("/project");
        for step in &steps {
            apply(&mut session, step);
            if matches!(step, Step::Read) {
                assert_current(&session);
            }
        }
        assert_current(&session);
    }
}

/// A file session: the kept context survives the appends written to disk and a reopen starts
/// afresh.
#[test]
fn a_file_session_keeps_its_context_across_appends() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::create("/project", dir.path());
    session.append_message(user()).unwrap();
    session.append_message(assistant(1)).unwrap();
    assert_current(&session);
    for turn in 0..20 {
        session.append_message(user()).unwrap();
        session.append_message(assistant(turn)).unwrap();
        assert_current(&session);
    }
    let reopened = Session::open(session.path().unwrap()).unwrap();
    assert_eq!(reopened.build_context(), session.build_context());
}
