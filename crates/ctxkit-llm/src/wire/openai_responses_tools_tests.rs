//! What a Responses request sends of earlier replies: reasoning items only to the model that wrote
//! them, and item ids only beside the reasoning they were issued with (QA r105).

use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};

use super::build;
use crate::chat::ChatRequest;
use crate::wire::test_support::{config, message};

/// A gpt-5-mini reply as the session stores it.
fn reply(content: Value) -> AgentMessage {
    message(
        json!({"role": "assistant", "provider": "openai", "api": "openai-responses",
        "model": "gpt-5-mini", "content": content, "stopReason": "toolUse", "timestamp": 2}),
    )
}

fn reasoning(id: &str, encrypted: &str) -> Value {
    let item =
        json!({"type": "reasoning", "id": id, "summary": [], "encrypted_content": encrypted});
    json!({"type": "thinking", "thinking": "", "thinkingSignature": item.to_string()})
}

fn result(id: &str) -> AgentMessage {
    message(
        json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
        "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 3}),
    )
}

/// The QA session after `dropOldThinking` (the prune boundary past turn 1): turn 1's reply lost its
/// reasoning item `rs_1` but keeps its calls, while turn 2's reply keeps `rs_2`.
fn pruned_view() -> ChatRequest {
    ChatRequest {
        system_prompt: "system".into(),
        messages: vec![
            message(json!({"role": "user", "content": "one", "timestamp": 1})),
            reply(json!([
                {"type": "text", "text": "Reading.", "textSignature": "msg_1"},
                {"type": "toolCall", "id": "call_1|fc_1", "name": "read", "arguments": {"path": "pic.png"}}
            ])),
            result("call_1|fc_1"),
            message(json!({"role": "user", "content": "two", "timestamp": 4})),
            reply(json!([
                reasoning("rs_2", "enc-2"),
                {"type": "toolCall", "id": "call_2|fc_2", "name": "read", "arguments": {"path": "hello.txt"}}
            ])),
            result("call_2|fc_2"),
        ],
        tools: Vec::new(),
        max_tokens: None,
        reasoning: None,
        cache_retention: None,
        cache: ctxkit_summarizer::CacheHints::default(),
        projected_input_tokens: None,
    }
}

/// The reasoning item each id was issued with, as the mock server (and the API) pairs them.
const ISSUED_WITH: [(&str, &str); 3] = [("msg_1", "rs_1"), ("fc_1", "rs_1"), ("fc_2", "rs_2")];

/// The API's check: an item whose id was issued with a reasoning item follows that item.
fn stranded_items(input: &[Value]) -> Vec<String> {
    let mut stranded = Vec::new();
    for (position, item) in input.iter().enumerate() {
        let Some(id) = item.get("id").and_then(Value::as_str) else {
            continue;
        };
        let Some((_, reasoning)) = ISSUED_WITH.iter().find(|(issued, _)| *issued == id) else {
            continue;
        };
        let sent_before = input[..position]
            .iter()
            .any(|earlier| earlier["type"] == "reasoning" && earlier["id"] == *reasoning);
        if !sent_before {
            stranded.push(id.to_owned());
        }
    }
    stranded
}

fn input(model: &str, request: &ChatRequest) -> Vec<Value> {
    let wire = build(&config(model), request);
    wire.body["input"].as_array().unwrap().clone()
}

#[test]
fn a_reply_whose_reasoning_the_transforms_dropped_goes_back_without_its_item_ids() {
    let input = input("openai/gpt-5-mini", &pruned_view());
    assert_eq!(stranded_items(&input), Vec::<String>::new(), "{input:#?}");
    assert_eq!(
        input[1],
        json!({"type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Reading.", "annotations": []}]})
    );
    assert_eq!(
        input[2],
        json!({"type": "function_call", "call_id": "call_1", "name": "read",
            "arguments": "{\"path\":\"pic.png\"}"})
    );
    // The reply whose reasoning is sent keeps the ids that pair with it.
    assert_eq!(input[5]["type"], "reasoning");
    assert_eq!(input[5]["id"], "rs_2");
    assert_eq!(input[6]["id"], "fc_2");
}

#[test]
fn another_model_gets_no_reasoning_items_and_no_item_ids() {
    let input = input("openai/gpt-5", &pruned_view());
    assert_eq!(stranded_items(&input), Vec::<String>::new(), "{input:#?}");
    assert!(
        input.iter().all(|item| item["type"] != "reasoning"),
        "gpt-5-mini's encrypted reasoning went to gpt-5: {input:#?}"
    );
    assert!(
        input.iter().all(|item| item.get("id").is_none()),
        "{input:#?}"
    );
    assert_eq!(input[5]["call_id"], "call_2");
}
