//! Properties over generated sessions: a context never holds entries off the leaf's path (also in
//! hostile files with cycles, missing and duplicate parents), and migration keeps every message.

use std::collections::HashSet;
use std::io::Write;

use ctxkit_protocol::{AgentMessage, MessageContent};
use ctxkit_session::{LeafSelector, NewCompaction, Session, SummarySource};
use proptest::prelude::*;
use serde_json::{Value, json};

/// One step of building a session through the API.
#[derive(Debug, Clone)]
enum Step {
    User(String),
    Assistant(String),
    ToolResult(String),
    Compaction { kept: usize },
    Branch { to: usize },
    BranchSummary { to: usize },
    Label { target: usize },
    ModelChange,
    CustomMessage(String),
    ResetLeaf,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => ".{0,20}".prop_map(Step::User),
        4 => ".{0,20}".prop_map(Step::Assistant),
        3 => ".{0,20}".prop_map(Step::ToolResult),
        1 => any::<usize>().prop_map(|kept| Step::Compaction { kept }),
        1 => any::<usize>().prop_map(|to| Step::Branch { to }),
        1 => any::<usize>().prop_map(|to| Step::BranchSummary { to }),
        1 => any::<usize>().prop_map(|target| Step::Label { target }),
        1 => Just(Step::ModelChange),
        1 => ".{0,20}".prop_map(Step::CustomMessage),
        1 => Just(Step::ResetLeaf),
    ]
}

fn message(value: Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

/// Applies `steps` to an in-memory session. Compactions keep from any entry, on the path or not
/// (hostile extensions can write that too).
fn build(steps: &[Step]) -> Session {
    let mut session = Session::in_memory("/p");
    for step in steps {
        let count = session.entries().len();
        let pick = |n: usize| session.entries()[n % count].id().to_owned();
        match step {
            Step::User(text) => {
                session
                    .append_message(message(json!({"role": "user", "content": text})))
                    .unwrap();
            }
            Step::Assistant(text) => {
                session
                    .append_message(message(json!({"role": "assistant",
                        "content": [{"type": "text", "text": text}], "stopReason": "stop"})))
                    .unwrap();
            }
            Step::ToolResult(text) => {
                session
                    .append_message(message(json!({"role": "toolResult", "toolCallId": "c",
                        "toolName": "bash", "content": [{"type": "text", "text": text}]})))
                    .unwrap();
            }
            Step::Compaction { kept } if count > 0 => {
                let kept = pick(*kept);
                session
                    .append_compaction(NewCompaction {
                        summary: "summary".into(),
                        first_kept_entry_id: kept,
                        tokens_before: 1,
                        details: None,
                        source: SummarySource::Ctxkit,
                    })
                    .unwrap();
            }
            Step::Branch { to } if count > 0 => session.branch(&pick(*to)).unwrap(),
            Step::BranchSummary { to } if count > 0 => {
                let to = pick(*to);
                session
                    .branch_with_summary(Some(&to), "left", None, SummarySource::Ctxkit)
                    .unwrap();
            }
            Step::Label { target } if count > 0 => {
                let target = pick(*target);
                session.append_label_change(&target, Some("l")).unwrap();
            }
            Step::ModelChange => {
                session.append_model_change("openai", "gpt").unwrap();
            }
            Step::CustomMessage(text) => {
                session
                    .append_custom_message_entry(
                        "ext",
                        MessageContent::Text(text.clone()),
                        true,
                        None,
                    )
                    .unwrap();
            }
            Step::ResetLeaf => session.reset_leaf(),
            Step::Compaction { .. }
            | Step::Branch { .. }
            | Step::BranchSummary { .. }
            | Step::Label { .. } => {}
        }
    }
    session
}

/// Every context message comes from an entry on the root→leaf path; without a compaction on the
/// path, the context is exactly the path's message entries, in order.
fn check_contexts(session: &Session) -> Result<(), TestCaseError> {
    let index = session.index();
    for entry in session.entries() {
        // With duplicate ids, the id names the later entry.
        let position = index.position(entry.id()).unwrap();
        let path = index.path_to(position);
        prop_assert_eq!(path.last(), Some(&position));
        for pair in path.windows(2) {
            prop_assert_eq!(index.parent(pair[1]), Some(pair[0]));
        }
        prop_assert_eq!(index.parent(path[0]), None);
        let on_path: HashSet<usize> = path.iter().copied().collect();
        let context = session.context_at(LeafSelector::Entry(entry.id()));
        for message in &context.messages {
            prop_assert!(
                on_path.contains(&message.entry),
                "entry #{} is off the path to {}",
                message.entry,
                entry.id()
            );
            session.message(message).unwrap();
        }
        let compacted = path
            .iter()
            .any(|&step| index.get(step).unwrap().type_name() == "compaction");
        if !compacted {
            let expected: Vec<usize> = path
                .iter()
                .copied()
                .filter(|&step| {
                    let entry = index.get(step).unwrap();
                    matches!(
                        entry.type_name(),
                        "message" | "custom_message" | "branch_summary"
                    )
                })
                .collect();
            let got: Vec<usize> = context
                .messages
                .iter()
                .map(|message| message.entry)
                .collect();
            prop_assert_eq!(got, expected);
        }
    }
    prop_assert!(
        session
            .context_at(LeafSelector::BeforeFirst)
            .messages
            .is_empty()
    );
    Ok(())
}

fn write_file(lines: &[String]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for line in lines {
        writeln!(file, "{line}").unwrap();
    }
    file.flush().unwrap();
    file
}

/// A hostile tree: parent ids drawn from the other entries' ids (cycles, self-parents), missing
/// ids and duplicates.
fn hostile_lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec((0..12usize, prop::option::of(0..14usize), 0..4u8), 1..24).prop_map(
        |specs| {
            let mut lines = vec![
                json!({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/p"})
                    .to_string(),
            ];
            for (id, parent, kind) in specs {
                let parent = parent.map(|parent| format!("e{parent}"));
                let entry = match kind {
                    0 => json!({"type": "message", "id": format!("e{id}"), "parentId": parent,
                                "timestamp": "t", "message": {"role": "user", "content": "u"}}),
                    1 => json!({"type": "message", "id": format!("e{id}"), "parentId": parent,
                                "timestamp": "t", "message": {"role": "assistant", "content": []}}),
                    2 => json!({"type": "compaction", "id": format!("e{id}"), "parentId": parent,
                                "timestamp": "t", "summary": "s",
                                "firstKeptEntryId": format!("e{}", id / 2), "tokensBefore": 1}),
                    _ => json!({"type": "branch_summary", "id": format!("e{id}"),
                                "parentId": parent, "timestamp": "t", "fromId": "e0",
                                "summary": "b"}),
                };
                lines.push(entry.to_string());
            }
            lines
        },
    )
}

/// A v1 (no ids) or v2 (ids, `hookMessage`) session.
fn legacy_file() -> impl Strategy<Value = (u8, Vec<(u8, String)>)> {
    (
        1..3u8,
        prop::collection::vec((0..5u8, "[a-z \\n\"\\\\é日]{0,12}"), 1..20),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn contexts_hold_only_entries_on_the_leaf_path(steps in prop::collection::vec(step(), 0..40)) {
        let session = build(&steps);
        check_contexts(&session)?;
    }

    #[test]
    fn contexts_stay_on_the_path_in_hostile_trees(lines in hostile_lines()) {
        let file = write_file(&lines);
        let session = Session::open(file.path()).unwrap();
        check_contexts(&session)?;
    }

    #[test]
    fn migration_keeps_every_message((version, body) in legacy_file()) {
        let roles = ["user", "assistant", "toolResult", "hookMessage", "bashExecution"];
        let mut lines = vec![json!({"type": "session", "version": version, "id": "s",
                                    "timestamp": "t", "cwd": "/p"}).to_string()];
        let mut originals = Vec::new();
        for (number, (role, text)) in body.iter().enumerate() {
            let role = roles[usize::from(*role)];
            let message = match role {
                "assistant" => json!({"role": role, "content": [{"type": "text", "text": text}]}),
                "bashExecution" => json!({"role": role, "command": text, "output": text}),
                _ => json!({"role": role, "content": text, "extraField": [number]}),
            };
            let mut entry = json!({"type": "message", "timestamp": "t", "message": message});
            if version == 2 {
                entry["id"] = json!(format!("{number:08x}"));
                entry["parentId"] = if number == 0 { Value::Null } else {
                    json!(format!("{:08x}", number - 1))
                };
            }
            originals.push(message);
            lines.push(entry.to_string());
        }
        let file = write_file(&lines);
        let check = |session: &Session| -> Result<(), TestCaseError> {
            prop_assert!(session.diagnostics().is_empty(), "{:?}", session.diagnostics());
            prop_assert_eq!(session.entries().len(), originals.len());
            let mut previous: Option<String> = None;
            let mut ids = HashSet::new();
            for (entry, original) in session.entries().iter().zip(&originals) {
                let stored: Value = serde_json::from_str(&entry.raw().unwrap()).unwrap();
                let mut expected = original.clone();
                if expected["role"] == "hookMessage" {
                    expected["role"] = json!("custom");
                }
                prop_assert_eq!(&stored["message"], &expected);
                prop_assert_eq!(entry.parent_id(), previous.as_deref());
                prop_assert!(ids.insert(entry.id().to_owned()), "duplicate id");
                previous = Some(entry.id().to_owned());
            }
            let context = session.build_context();
            prop_assert_eq!(context.messages.len(), originals.len());
            Ok(())
        };
        let mut session = Session::open(file.path()).unwrap();
        prop_assert!(session.needs_migration());
        check(&session)?;
        prop_assert!(session.migrate_file().unwrap());
        let reopened = Session::open(file.path()).unwrap();
        prop_assert!(!reopened.needs_migration());
        check(&reopened)?;
    }
}
