//! Conversation mapping shared by the formats, and what each format does with replies from
//! elsewhere: foreign thinking, unanswered calls, ids other providers refuse.

use serde_json::{Value, json};

use super::*;
use crate::chat::ChatRequest;
use crate::wire::test_support::{config, message};
use crate::wire::{anthropic_tools, gemini_tools, openai_responses_tools};

/// A reply from another provider with thinking, text and two calls; only the first is answered.
fn foreign_conversation() -> ChatRequest {
    ChatRequest {
        system_prompt: "system".into(),
        messages: vec![
            message(json!({"role": "user", "content": "go", "timestamp": 1})),
            message(
                json!({"role": "assistant", "provider": "vllm", "api": "openai-completions",
                "model": "qwen", "content": [
                {"type": "thinking", "thinking": "plan", "thinkingSignature": "foreign-sig"},
                {"type": "text", "text": "ok"},
                {"type": "toolCall", "id": "call_1|fc_1", "name": "read", "arguments": {"path": "a"}},
                {"type": "toolCall", "id": "call_2", "name": "read", "arguments": "{\"path\":\"b\"}"}
            ], "stopReason": "toolUse", "timestamp": 2}),
            ),
            message(
                json!({"role": "toolResult", "toolCallId": "call_1|fc_1", "toolName": "read",
                "content": [{"type": "text", "text": "A"}], "isError": false, "timestamp": 3}),
            ),
            message(json!({"role": "user", "content": "next", "timestamp": 4})),
        ],
        tools: Vec::new(),
        max_tokens: Some(100),
        reasoning: None,
        cache_retention: None,
        cache: ctxkit_summarizer::CacheHints::default(),
        projected_input_tokens: None,
    }
}

#[test]
fn an_unanswered_call_gets_an_error_result_before_the_next_user_turn() {
    let request = foreign_conversation();
    let turns = turns(&request.messages);
    assert_eq!(turns.len(), 5);
    assert!(matches!(
        &turns[3],
        Turn::ToolResult { id, is_error: true, parts, .. }
            if id == "call_2" && joined_text(parts) == NO_RESULT
    ));
    assert!(matches!(&turns[4], Turn::User(_)));
}

/// A session imported from Codex before 2026-12-06: a reply per parallel call, then the outputs.
/// Each output is sent right after the reply making its call, not answered `No result provided`.
#[test]
fn results_of_an_earlier_reply_of_the_turn_are_sent_after_it() {
    let reply = |id: &str| {
        message(
            json!({"role": "assistant", "provider": "openai", "api": "openai-responses",
            "model": "gpt-5.4", "content": [
            {"type": "toolCall", "id": id, "name": "shell", "arguments": {}}
        ], "stopReason": "toolUse", "timestamp": 2}),
        )
    };
    let output = |id: &str| {
        message(
            json!({"role": "toolResult", "toolCallId": id, "toolName": "shell",
            "content": [{"type": "text", "text": format!("output of {id}")}], "isError": false,
            "timestamp": 3}),
        )
    };
    let messages = vec![
        message(json!({"role": "user", "content": "go", "timestamp": 1})),
        reply("call_a"),
        reply("call_b"),
        output("call_a"),
        output("call_b"),
    ];
    let shape: Vec<String> = turns(&messages)
        .iter()
        .map(|turn| match turn {
            Turn::User(_) => "user".to_owned(),
            Turn::Assistant(reply) => format!("call {}", reply.content.len()),
            Turn::ToolResult { id, parts, .. } => format!("{id}: {}", joined_text(parts)),
        })
        .collect();
    assert_eq!(
        shape,
        [
            "user",
            "call 1",
            "call_a: output of call_a",
            "call 1",
            "call_b: output of call_b"
        ]
    );
}

#[test]
fn anthropic_leaves_out_foreign_thinking_and_gets_portable_ids_grouped_results() {
    let wire = anthropic_tools::build(
        &config("anthropic/claude-sonnet-4-5"),
        &foreign_conversation(),
    );
    let messages = wire.body["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["content"],
        // Another model's thinking is left out, as Pi 1.6 leaves it out (QA r101: it was sent
        // as text the new model took for its own visible reply).
        json!([
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "call_1_fc_1", "name": "read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "call_2", "name": "read", "input": {"path": "b"}}
        ])
    );
    assert_eq!(
        messages[2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "call_1_fc_1", "content": [{"type": "text", "text": "A"}]},
            {"type": "tool_result", "tool_use_id": "call_2", "is_error": true,
             "content": [{"type": "text", "text": NO_RESULT}]}
        ])
    );
    assert_eq!(messages[3]["role"], "user");
    assert_eq!(wire.body["max_tokens"], 100);
}

#[test]
fn responses_leaves_out_foreign_reasoning_and_item_ids() {
    let wire = openai_responses_tools::build(&config("openai/gpt-5-mini"), &foreign_conversation());
    let input = wire.body["input"].as_array().unwrap();
    assert_eq!(input[1]["type"], "message");
    assert_eq!(
        input[2],
        json!({"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a\"}"})
    );
    assert_eq!(input[4]["type"], "function_call_output");
    assert_eq!(input[4]["call_id"], "call_1");
    assert_eq!(input[5]["output"], NO_RESULT);
    assert_eq!(wire.body["max_output_tokens"], 100);
}

#[test]
fn gemini_leaves_out_foreign_thinking_and_gets_errors_as_error_responses() {
    let wire = gemini_tools::build(&config("google/gemini-2.5-flash"), &foreign_conversation());
    let contents = wire.body["contents"].as_array().unwrap();
    assert_eq!(contents[1]["parts"][0], json!({"text": "ok"}));
    assert_eq!(
        contents[2]["parts"][1],
        json!({"functionResponse": {"name": "read", "response": {"error": NO_RESULT}}})
    );
    assert_eq!(wire.body["generationConfig"]["maxOutputTokens"], 100);
}

#[test]
fn responses_parse_reads_incomplete_and_refuses_the_chat_completions_shape() {
    let incomplete = json!({"status": "incomplete", "output": [{"type": "message", "id": "msg_1",
        "content": [{"type": "output_text", "text": "Par"}]}]});
    let reply = openai_responses_tools::parse(&incomplete).unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("length"));
    let chat = json!({"choices": [{"message": {"content": "hi"}}]});
    let error = openai_responses_tools::parse(&chat).unwrap_err();
    assert!(error.contains("llm.api openai-completions"), "{error}");
}

#[test]
fn gemini_parse_joins_text_parts_and_keeps_the_signature() {
    let response = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Hel"}, {"text": "lo", "thoughtSignature": "sig"}]}, "finishReason": "STOP"}]});
    let reply = gemini_tools::parse(&response).unwrap();
    assert_eq!(reply.content.len(), 1);
    let ctxkit_protocol::ContentBlock::Text(text) = &reply.content[0] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(text.text, "Hello");
    assert_eq!(text.extra["textSignature"], "sig");
    let blocked = json!({"candidates": [{"finishReason": "SAFETY"}]});
    let reply = gemini_tools::parse(&blocked).unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
}

#[test]
fn anthropic_refusal_is_an_error_and_portable_ids_are_bounded() {
    let reply = anthropic_tools::parse(&json!({"content": [], "stop_reason": "refusal"})).unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert_eq!(portable_id(&"x.".repeat(50)).len(), 64);
}

/// QA (2026-12-05): arguments nested 123 levels made a reply no session could store (an entry
/// holds them four levels down); `agent.run` ended with the reply lost. They are stored as `{}`
/// with an `argumentsError` (QA 2026-12-07: as a string, which Anthropic refuses sent back).
#[test]
fn arguments_nested_too_deep_are_stored_as_an_error() {
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let deep = format!(r#"{{"path": "a.txt", "x": {}}}"#, nested(123));
    let value: Value = serde_json::from_str(&deep).unwrap();
    let ContentBlock::ToolCall(call) =
        tool_call_block("c".into(), "read".into(), Ok(value), Default::default())
    else {
        panic!("a tool call");
    };
    assert_eq!(call.arguments, json!({}));
    let error = call.extra.get("argumentsError").and_then(Value::as_str);
    assert!(
        error.is_some_and(|error| error.starts_with("Tool arguments nest deeper than 64")),
        "{error:?}"
    );
}

/// An Anthropic reply with signed and redacted thinking, written by `model`.
fn claude_thinking(model: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![
            message(json!({"role": "user", "content": "go", "timestamp": 1})),
            message(
                json!({"role": "assistant", "provider": "anthropic", "api": "anthropic-messages",
                "model": model, "content": [
                {"type": "thinking", "thinking": "secret reasoning A", "thinkingSignature": "sig-A"},
                {"type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "opaque", "redacted": true},
                {"type": "text", "text": "Let me look."}
            ], "stopReason": "stop", "timestamp": 2}),
            ),
            message(json!({"role": "user", "content": "next", "timestamp": 3})),
        ],
        ..foreign_conversation()
    }
}

#[test]
fn thinking_and_its_signatures_go_back_only_to_the_model_that_wrote_them() {
    let sent = |model: &str, request: &ChatRequest| {
        let wire = anthropic_tools::build(&config(model), request);
        wire.body["messages"][1]["content"].clone()
    };
    let request = claude_thinking("claude-sonnet-4-5");
    assert_eq!(
        sent("anthropic/claude-sonnet-4-5", &request),
        json!([
            {"type": "thinking", "thinking": "secret reasoning A", "signature": "sig-A"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Let me look."}
        ])
    );
    // Another Claude model: its signatures are not this model's (Pi 1.6's `isSameModel`).
    assert_eq!(
        sent("anthropic/claude-opus-4-1", &request),
        json!([{"type": "text", "text": "Let me look."}])
    );
    // Gemini after Claude: neither the reasoning nor a made-up "[Reasoning redacted]" line.
    let wire = gemini_tools::build(&config("google/gemini-2.5-flash"), &request);
    assert_eq!(
        wire.body["contents"][1]["parts"],
        json!([{"text": "Let me look."}])
    );
}

/// A PDF an imported Claude Code session holds: the user's, as the import writes it now (a text
/// naming it, the block beside it), and a tool's, as an older import kept it (the raw block).
fn conversation_with_documents() -> ChatRequest {
    let document = json!({"type": "document", "source": {"type": "base64",
        "media_type": "application/pdf", "data": "JVBERi0xLjQK"}});
    let mut request = foreign_conversation();
    request.messages = vec![
        message(json!({"role": "user", "timestamp": 1, "content": [
            {"type": "text", "text": "[document: application/pdf, 9 bytes]", "anthropicBlock": document},
            {"type": "text", "text": "Summarize this PDF"}]})),
        message(
            json!({"role": "assistant", "provider": "anthropic", "api": "anthropic-messages",
            "model": "claude-sonnet-4-5", "content": [
            {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "b.pdf"}}
        ], "stopReason": "toolUse", "timestamp": 2}),
        ),
        message(
            json!({"role": "toolResult", "toolCallId": "toolu_1", "toolName": "read",
            "content": [document], "isError": false, "timestamp": 3}),
        ),
    ];
    request
}

/// QA r102: continuing an imported session sent its user message without the PDF and the tool's
/// result as `content: []`; an Anthropic model now gets the document back, any other model the
/// text naming it.
#[test]
fn an_imported_document_goes_to_anthropic_as_itself_and_elsewhere_as_its_name() {
    let request = conversation_with_documents();
    let document = json!({"type": "document", "source": {"type": "base64",
        "media_type": "application/pdf", "data": "JVBERi0xLjQK"}});
    let wire = anthropic_tools::build(&config("anthropic/claude-sonnet-4-5"), &request);
    let messages = wire.body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"][0], document);
    assert_eq!(messages[0]["content"][1]["text"], "Summarize this PDF");
    assert_eq!(messages[2]["content"][0]["content"][0]["type"], "document");
    assert_eq!(
        messages[2]["content"][0]["content"][0]["source"],
        document["source"]
    );

    let wire = openai_responses_tools::build(&config("openai/gpt-5-mini"), &request);
    let input = wire.body["input"].as_array().unwrap();
    assert_eq!(
        input[0]["content"][0],
        json!({"type": "input_text", "text": "[document: application/pdf, 9 bytes]"})
    );
    let output = input
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["output"], "[document: application/pdf, 9 bytes]");

    let wire = gemini_tools::build(&config("google/gemini-2.5-flash"), &request);
    assert_eq!(
        wire.body["contents"][0]["parts"][0]["text"],
        "[document: application/pdf, 9 bytes]"
    );
}
