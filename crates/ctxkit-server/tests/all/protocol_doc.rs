//! `docs/protocol.md` against the server: its method table lists every method `initialize`
//! reports, each once, and nothing else; its event table lists every event with the fields it is
//! sent with; the files it names exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ctxkit_engine::{CompactionEnd, CompactionFailed, CompactionReason, ContextUsage, EngineEvent};
use serde_json::{Value, json};

use crate::server::{start_summarizing, start_with};
use crate::support::{Failing, MODEL, PROVIDER, reply, user};

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The methods of the `## Methods` table, in order (duplicates kept).
fn documented_methods(text: &str) -> Vec<String> {
    let section = text
        .split("\n## Methods\n")
        .nth(1)
        .expect("docs/protocol.md has a `## Methods` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(method, _)| method.to_owned())
        .collect()
}

#[tokio::test]
async fn the_protocol_doc_lists_every_method_of_the_server_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    let init = client.call("initialize", Value::Null).await;
    let served: BTreeSet<String> = init["result"]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|method| method.as_str().unwrap().to_owned())
        .collect();
    let text = std::fs::read_to_string(repository().join("docs/protocol.md")).unwrap();
    let listed = documented_methods(&text);
    let unique: BTreeSet<String> = listed.iter().cloned().collect();
    assert_eq!(
        listed.len(),
        unique.len(),
        "a method listed twice: {listed:?}"
    );
    assert_eq!(
        unique, served,
        "docs/protocol.md's method table and the server differ"
    );
}

/// Every method but `initialize` (which reads none of its params) refuses a field it does not
/// take, naming it, and runs nothing: a misspelt field is never ignored. A refused `shutdown`
/// leaves the server running.
#[tokio::test]
async fn every_method_refuses_a_field_it_does_not_take() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    let created = client
        .call(
            "session.create",
            json!({"cwd": dir.path(), "in_memory": true}),
        )
        .await;
    assert!(created.get("result").is_some(), "{created}");
    let text = std::fs::read_to_string(repository().join("docs/protocol.md")).unwrap();
    for method in documented_methods(&text) {
        if method == "initialize" {
            continue;
        }
        let answer = client.call(&method, json!({"unexpected": 1})).await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("`unexpected`"), "{method}: {message}");
    }
    let init = client.call("initialize", json!({"client": "a test"})).await;
    assert_eq!(init["result"]["server"], "ctxkit", "{init}");
}

#[test]
fn the_protocol_doc_names_only_files_that_exist() {
    let text = std::fs::read_to_string(repository().join("docs/protocol.md")).unwrap();
    let named: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.starts_with("crates/"))
        .collect();
    assert!(!named.is_empty());
    for path in named {
        assert!(
            repository().join(path).exists(),
            "docs/protocol.md names `{path}`, which does not exist"
        );
    }
}

#[test]
fn a_repeated_method_is_caught() {
    let text = "intro\n## Methods\n\n| method | params |\n|---|---|\n| `a` | x |\n| `a` | y |\n\n## Next\n| `b` | z |\n";
    assert_eq!(documented_methods(text), ["a", "a"]);
}

/// The `## Events` table: each event type with the field names its row lists (the leading name of
/// each comma-separated part, backticks dropped, so notes in parentheses or after a colon are left out).
fn documented_events(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let section = text
        .split("\n## Events\n")
        .nth(1)
        .expect("docs/protocol.md has a `## Events` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| {
            let (event, rest) = rest.split_once('`')?;
            let fields = rest.trim_start_matches(" | ").replace('`', "");
            let fields = fields.split(": ").next().unwrap_or_default();
            let names = fields
                .split(", ")
                .filter_map(|part| {
                    let name: String = part
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    (!name.is_empty()).then_some(name)
                })
                .collect();
            Some((event.to_owned(), names))
        })
        .collect()
}

/// One event of each kind; `kind_index` makes a new kind a compile error here until it has one.
fn one_event_of_each_kind() -> Vec<EngineEvent> {
    fn kind_index(event: &EngineEvent) -> usize {
        match event {
            EngineEvent::CompactionStart { .. } => 0,
            EngineEvent::CompactionEnd(_) => 1,
            EngineEvent::CompactionFailed(_) => 2,
            EngineEvent::BranchSummaryStart { .. } => 3,
            EngineEvent::BranchSummaryEnd { .. } => 4,
            EngineEvent::ContextUsage(_) => 5,
            EngineEvent::HookError { .. } => 6,
        }
    }
    let end = CompactionEnd {
        reason: CompactionReason::Manual,
        aborted: false,
        will_retry: false,
        tokens_before: None,
        tokens_after: None,
        first_kept_entry_id: None,
        entry_id: None,
        from_hook: false,
        from_background: false,
        fallback: false,
        error: Some("Compaction failed: x".to_owned()),
        advice: None,
        files_read: 0,
        files_modified: 0,
    };
    let events = vec![
        EngineEvent::CompactionStart {
            reason: CompactionReason::Manual,
        },
        EngineEvent::CompactionFailed(CompactionFailed::from_end(&end).unwrap()),
        EngineEvent::CompactionEnd(end),
        EngineEvent::BranchSummaryStart {
            target_id: "a".to_owned(),
        },
        EngineEvent::BranchSummaryEnd {
            target_id: "a".to_owned(),
            aborted: false,
            summary_entry_id: None,
            error: None,
        },
        EngineEvent::ContextUsage(ContextUsage {
            tokens: None,
            context_window: 1,
            configured_window: 1,
            limit_learned: false,
            percent: None,
        }),
        EngineEvent::HookError {
            hook: "h".to_owned(),
            event: "before_compact".to_owned(),
            error: "e".to_owned(),
        },
    ];
    let kinds: BTreeSet<usize> = events.iter().map(kind_index).collect();
    assert_eq!(kinds, (0..7).collect(), "one event of each kind");
    events
}

/// An event's type and the fields it is sent with.
fn type_and_fields(event: &Value) -> (String, BTreeSet<String>) {
    let object = event.as_object().unwrap();
    let fields = object
        .keys()
        .filter(|key| *key != "type")
        .cloned()
        .collect();
    (event["type"].as_str().unwrap().to_owned(), fields)
}

#[test]
fn the_protocol_doc_lists_every_event_with_its_fields() {
    let text = std::fs::read_to_string(repository().join("docs/protocol.md")).unwrap();
    let documented = documented_events(&text);
    let sent: BTreeMap<String, BTreeSet<String>> = one_event_of_each_kind()
        .iter()
        .map(|event| type_and_fields(&serde_json::to_value(event).unwrap()))
        .collect();
    assert_eq!(
        documented, sent,
        "docs/protocol.md's event table and the events differ"
    );
}

/// A compaction whose summary fails reaches a client as `compaction_end` then
/// `compaction_failed`, with the fields the doc lists.
#[tokio::test]
async fn a_failed_compaction_is_sent_as_compaction_failed() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_summarizing(dir.path(), None, std::sync::Arc::new(Failing));
    client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    client
        .call(
            "model.set",
            json!({"model": {"provider": PROVIDER, "id": MODEL, "context_window": 100_000}}),
        )
        .await;
    for message in [user("first"), reply("ok", 100), user("second")] {
        client
            .call("message.append", json!({ "message": message }))
            .await;
    }
    let answer = client.call("compact", json!({})).await;
    assert_eq!(
        answer["error"]["data"]["kind"], "summarization_failed",
        "{answer}"
    );
    let events: Vec<&Value> = client
        .notifications
        .iter()
        .filter(|message| message["method"] == "event")
        .map(|message| &message["params"])
        .filter(|event| event["type"] != "context_usage")
        .collect();
    let types: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["compaction_start", "compaction_end", "compaction_failed"]
    );
    let failed = events[2];
    assert_eq!(
        *failed,
        json!({"type": "compaction_failed", "reason": "manual",
               "error_message": "Compaction failed: Summarization failed: overloaded",
               "aborted": false, "will_retry": false, "from_hook": false, "fallback": false})
    );
    let text = std::fs::read_to_string(repository().join("docs/protocol.md")).unwrap();
    assert_eq!(
        Some(&type_and_fields(failed).1),
        documented_events(&text).get("compaction_failed")
    );
}
