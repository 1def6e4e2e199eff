//! Property: reading any entry (every entry type, every message role, every content block type, and
//! types and roles this version does not know) and writing it back keeps every field it did not know,
//! at every level, with its value unchanged.

use ctxkit_protocol::{AgentMessage, SessionEntry};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Entries of every kind, with every nested object that has an `extra` map.
fn templates() -> Vec<Value> {
    let usage = json!({"input": 10, "output": 5, "cacheRead": 1, "cacheWrite": 0, "totalTokens": 16,
                       "cost": {"input": 0.5, "output": 1.25, "cacheRead": 0, "cacheWrite": 0, "total": 1.75}});
    vec![
        json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "t",
               "message": {"role": "user", "content": "hello", "timestamp": 1}}),
        json!({"type": "message", "id": "a2", "parentId": "a1", "timestamp": "t",
               "message": {"role": "user", "content": [
                   {"type": "text", "text": "look"},
                   {"type": "image", "data": "AAAA", "mimeType": "image/png"}], "timestamp": 1}}),
        json!({"type": "message", "id": "a3", "parentId": "a2", "timestamp": "t",
               "message": {"role": "assistant", "content": [
                   {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
                   {"type": "text", "text": "ok"},
                   {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}},
                   {"type": "future_block", "payload": [1, 2]}],
                   "api": "anthropic-messages", "provider": "anthropic", "model": "m",
                   "usage": usage, "stopReason": "toolUse", "timestamp": 2}}),
        json!({"type": "message", "id": "a4", "parentId": "a3", "timestamp": "t",
               "message": {"role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
                           "content": [{"type": "text", "text": "out"}], "details": {"exit": 0},
                           "isError": false, "timestamp": 3}}),
        json!({"type": "message", "id": "a5", "parentId": "a4", "timestamp": "t",
               "message": {"role": "bashExecution", "command": "ls", "output": "a\n", "exitCode": 0,
                           "cancelled": false, "truncated": false, "timestamp": 4}}),
        json!({"type": "message", "id": "a6", "parentId": "a5", "timestamp": "t",
               "message": {"role": "custom", "customType": "ext", "content": "x", "display": true,
                           "timestamp": 5}}),
        json!({"type": "message", "id": "a7", "parentId": "a6", "timestamp": "t",
               "message": {"role": "branchSummary", "summary": "s", "fromId": "a1", "timestamp": 6}}),
        json!({"type": "message", "id": "a8", "parentId": "a7", "timestamp": "t",
               "message": {"role": "compactionSummary", "summary": "s", "tokensBefore": 100,
                           "timestamp": 7}}),
        json!({"type": "message", "id": "a9", "parentId": "a8", "timestamp": "t",
               "message": {"role": "futureRole", "anything": {"nested": true}}}),
        json!({"type": "thinking_level_change", "id": "b1", "parentId": null, "timestamp": "t",
               "thinkingLevel": "high"}),
        json!({"type": "model_change", "id": "b2", "parentId": null, "timestamp": "t",
               "provider": "openai", "modelId": "gpt-4o"}),
        json!({"type": "compaction", "id": "b3", "parentId": null, "timestamp": "t", "summary": "S",
               "firstKeptEntryId": "a1", "tokensBefore": 50000,
               "details": {"readFiles": [], "modifiedFiles": ["a"]}, "fromHook": false}),
        json!({"type": "branch_summary", "id": "b4", "parentId": null, "timestamp": "t",
               "fromId": "root", "summary": "B"}),
        json!({"type": "custom", "customType": "ext", "data": {"count": 42}, "id": "b5",
               "parentId": null, "timestamp": "t"}),
        json!({"type": "custom_message", "customType": "ext", "content": "x", "display": true,
               "details": {"k": 1}, "id": "b6", "parentId": null, "timestamp": "t"}),
        json!({"type": "label", "id": "b7", "parentId": null, "timestamp": "t", "targetId": "a1",
               "label": "here"}),
        json!({"type": "session_info", "id": "b8", "parentId": null, "timestamp": "t",
               "name": "My session"}),
        json!({"type": "future_entry", "id": "b9", "parentId": null, "timestamp": "t",
               "payload": {"z": 1, "a": 2}}),
    ]
}

/// Any JSON value, a few levels deep, with every kind of string and number.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |number| number.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-zA-Z_]{1,8}", inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// Unknown fields: names no ctxkit type uses (they all start with `zz`).
fn unknown_fields() -> impl Strategy<Value = Vec<(String, Value)>> {
    prop::collection::vec(("zz[a-zA-Z0-9_]{0,10}", any_json()), 1..5)
}

/// The objects of an entry that keep unknown fields: the entry, its message, content blocks, usage
/// and cost; `choice` picks one, round robin.
///
/// Not the top level of `message` entries: `EntryKind::Message` holds only the message, so unknown
/// fields beside it are dropped by a typed round trip (a known gap, `docs/reliability.md`; the store
/// itself keeps every original line, so files never lose them).
fn object_at(entry: &mut Value, choice: usize) -> &mut Map<String, Value> {
    let mut targets: Vec<Vec<&str>> = Vec::new();
    if entry.get("message").is_none() {
        targets.push(vec![]);
    } else {
        targets.push(vec!["message"]);
        if entry["message"].get("usage").is_some() {
            targets.push(vec!["message", "usage"]);
            targets.push(vec!["message", "usage", "cost"]);
        }
        if let Some(blocks) = entry["message"]["content"].as_array() {
            for index in 0..blocks.len() {
                targets.push(vec!["message", "content", ["0", "1", "2", "3"][index]]);
            }
        }
    }
    let path = targets[choice % targets.len()].clone();
    let mut value = entry;
    for key in path {
        value = match key.parse::<usize>() {
            Ok(index) => &mut value[index],
            Err(_) => &mut value[key],
        };
    }
    value.as_object_mut().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn unknown_fields_survive_a_round_trip(
        template in 0..templates().len(),
        insertions in prop::collection::vec((any::<usize>(), unknown_fields()), 1..4),
    ) {
        let mut entry = templates()[template].clone();
        for (choice, fields) in insertions {
            let object = object_at(&mut entry, choice);
            for (key, value) in fields {
                object.insert(key, value);
            }
        }
        // Through a value.
        let typed: SessionEntry = serde_json::from_value(entry.clone()).unwrap();
        prop_assert_eq!(&serde_json::to_value(&typed).unwrap(), &entry);
        // Through text, as files are read and written.
        let line = serde_json::to_string(&entry).unwrap();
        let typed: SessionEntry = serde_json::from_str(&line).unwrap();
        let written = serde_json::to_string(&typed).unwrap();
        prop_assert_eq!(serde_json::from_str::<Value>(&written).unwrap(), entry.clone());
        // A message alone, too.
        if let Some(message) = entry.get("message") {
            let typed: AgentMessage = serde_json::from_value(message.clone()).unwrap();
            prop_assert_eq!(&serde_json::to_value(&typed).unwrap(), message);
        }
    }
}
