//! A crafted transcript's usage: token counts at the top of what the importers read (`i64::MAX`). The
//! importers priced and summed them with plain additions, which panicked (a debug build) or wrapped
//! round to a small number that picked the wrong price tier (a release build); the counts now add
//! up to at most `u64::MAX`.

use std::path::Path;

use ctxkit_import::{ImportedSession, SourceFormat, import_file};
use ctxkit_protocol::{EntryKind, Usage};
use serde_json::{Value, json};

fn usages(session: &ImportedSession) -> Vec<Usage> {
    session
        .entries()
        .iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::Message(message) => message.as_assistant()?.usage.clone(),
            EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::Compaction(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => None,
        })
        .collect()
}

fn assert_saturated(session: &ImportedSession) {
    let usages = usages(session);
    assert!(!usages.is_empty());
    for usage in usages {
        assert_eq!(usage.input, i64::MAX as u64, "{usage:?}");
        assert_eq!(usage.total_tokens, u64::MAX, "{usage:?}");
        if let Some(cost) = usage.cost {
            assert!(cost.total.is_finite() && cost.total > 0.0, "{cost:?}");
        }
    }
}

#[test]
fn claude_code_usage_at_the_top_of_the_range_saturates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    let base = json!({"isSidechain": false, "userType": "external", "cwd": "/home/dev/p",
                      "sessionId": "s1", "version": "1.0.80"});
    let mut user = base.clone();
    user.as_object_mut().unwrap().extend(
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "timestamp": "2026-01-01T00:00:00Z",
               "message": {"role": "user", "content": "hi"}})
        .as_object()
        .unwrap()
        .clone(),
    );
    let mut reply = base;
    reply.as_object_mut().unwrap().extend(
        json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1",
               "timestamp": "2026-01-01T00:00:01Z",
               "message": {"id": "msg_1", "type": "message", "role": "assistant",
                           "model": "claude-sonnet-4-20250514", "stop_reason": "end_turn",
                           "content": [{"type": "text", "text": "hello"}],
                           "usage": {"input_tokens": i64::MAX, "output_tokens": i64::MAX,
                                     "cache_read_input_tokens": 7,
                                     "cache_creation_input_tokens": 9}}})
        .as_object()
        .unwrap()
        .clone(),
    );
    std::fs::write(&path, format!("{user}\n{reply}\n")).unwrap();
    let session = import_file(&path, Some(SourceFormat::ClaudeCode)).unwrap();
    assert_saturated(&session);
}

/// Every `tokens` object below `value` gets the top input count and a reasoning count on top of
/// its output.
fn inflate(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::Object(tokens)) = object.get_mut("tokens") {
                tokens.insert("input".into(), json!(i64::MAX));
                tokens.insert("output".into(), json!(i64::MAX));
                tokens.insert("reasoning".into(), json!(i64::MAX));
                tokens.insert("cache".into(), json!({"read": 5, "write": 6}));
            }
            object.values_mut().for_each(inflate);
        }
        Value::Array(items) => items.iter_mut().for_each(inflate),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

fn copy_inflated(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_inflated(&entry.path(), &target);
        } else {
            let mut value: Value =
                serde_json::from_slice(&std::fs::read(entry.path()).unwrap()).unwrap();
            inflate(&mut value);
            std::fs::write(target, value.to_string()).unwrap();
        }
    }
}

#[test]
fn opencode_usage_at_the_top_of_the_range_saturates() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("opencode-1x");
    copy_inflated(&crate::shapes::shape("opencode-1x"), &store);
    let session = store.join("storage/session/4f1e2d3c5b6a7980/ses_5d0a1b2c3ffeRssFeedParent.json");
    let session = import_file(&session, Some(SourceFormat::OpenCode)).unwrap();
    assert_saturated(&session);
}
