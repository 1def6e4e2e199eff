//! Each reader over a recorded-shape event sequence: deltas shown in order, the reply assembled.

use ctxkit_protocol::ContentBlock;
use serde_json::{Value, json};

use super::*;

/// Runs `events` (SSE text) through a reader; the reply and the deltas shown.
fn read(api: Api, events: &str) -> (Result<AssistantMessage, String>, Vec<ChatDelta>) {
    let mut parser = sse::Parser::default();
    let mut reader = Reader::new(api);
    let mut assembly = Assembly::default();
    let mut shown = Vec::new();
    let mut sink = |delta: ChatDelta| shown.push(delta);
    let mut parsed = parser.feed(events.as_bytes());
    parsed.extend(parser.finish());
    for event in &parsed {
        match reader.event(&mut assembly, event, &mut sink) {
            Ok(true) => break,
            Ok(false) => {}
            Err(StreamError { message, .. }) => return (Err(message), shown),
        }
    }
    reader.settle(&mut assembly);
    (Ok(assembly.finish()), shown)
}

fn sse(events: &[(Option<&str>, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| match name {
            Some(name) => format!("event: {name}\ndata: {data}\n\n"),
            None => format!("data: {data}\n\n"),
        })
        .collect()
}

#[test]
fn chat_completions_text_reasoning_and_a_call_in_pieces() {
    let chunk = |delta: Value, finish: Value| {
        (
            None,
            json!({"id": "c1", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut events = vec![
        chunk(
            json!({"role": "assistant", "reasoning_content": "hm"}),
            Value::Null,
        ),
        chunk(json!({"content": "Let"}), Value::Null),
        chunk(json!({"content": " me"}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "bash", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"comm"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "and\":\"ls\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ];
    events.push((None, json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})));
    let text = format!("{}data: [DONE]\n\n", sse(&events));
    let (reply, shown) = read(Api::OpenAiChat, &text);
    let reply = reply.unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("toolUse"));
    assert_eq!(reply.usage.as_ref().unwrap().total_tokens, 15);
    assert!(matches!(&reply.content[1], ContentBlock::Text(t) if t.text == "Let me"));
    let ContentBlock::ToolCall(call) = &reply.content[2] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(call.arguments, json!({"command": "ls"}));
    assert_eq!(shown[0], ChatDelta::Thinking("hm".into()));
    assert_eq!(shown[1], ChatDelta::BlockEnd);
    assert_eq!(shown[2], ChatDelta::Text("Let".into()));
}

/// A local server without a reasoning parser (Ollama, llama.cpp serving Qwen3) sends the
/// reasoning inside `content` between `<think>` tags, cut anywhere: it is the reply's thinking,
/// shown as thinking, and the answer after it is the text (Pi shows it all as the answer).
#[test]
fn chat_completions_reasoning_between_think_tags_is_thinking() {
    let chunk = |content: &str, finish: Value| {
        (
            None,
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": content},
                "finish_reason": finish}]}),
        )
    };
    let events = vec![
        chunk("<thi", Value::Null),
        chunk("nk>\nThe sum is ", Value::Null),
        chunk("easy.\n</th", Value::Null),
        chunk("ink>\n\nIt is ", Value::Null),
        chunk("4.", json!("stop")),
    ];
    let (reply, shown) = read(
        Api::OpenAiChat,
        &format!("{}data: [DONE]\n\n", sse(&events)),
    );
    let reply = reply.unwrap();
    let ContentBlock::Thinking(thinking) = &reply.content[0] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(thinking.thinking, "\nThe sum is easy.\n");
    assert_eq!(thinking.thinking_signature.as_deref(), Some("think-tags"));
    assert!(matches!(&reply.content[1], ContentBlock::Text(t) if t.text == "It is 4."));
    assert_eq!(reply.content.len(), 2);
    assert!(shown.contains(&ChatDelta::BlockEnd));
    assert!(
        shown
            .iter()
            .all(|delta| !matches!(delta, ChatDelta::Text(text) if text.contains("think")))
    );
}

/// Moonshot (Kimi) sends the usage inside the last choice, not beside it: it is read there, and
/// the chunk's own usage wins when both are sent.
#[test]
fn chat_completions_usage_inside_the_choice_is_read() {
    let usage = json!({"prompt_tokens": 1234, "completion_tokens": 7, "total_tokens": 1241,
        "prompt_tokens_details": {"cached_tokens": 200}});
    let last = json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop",
        "usage": usage}]});
    let events = vec![
        (
            None,
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": null}]}),
        ),
        (None, last.clone()),
    ];
    let (reply, _) = read(
        Api::OpenAiChat,
        &format!("{}data: [DONE]\n\n", sse(&events)),
    );
    let usage = reply.unwrap().usage.unwrap();
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.total_tokens
        ),
        (1034, 7, 200, 1241)
    );
    let mut both = last;
    both["usage"] = json!({"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6});
    let (reply, _) = read(
        Api::OpenAiChat,
        &format!("{}data: [DONE]\n\n", sse(&[(None, both)])),
    );
    assert_eq!(reply.unwrap().usage.unwrap().total_tokens, 6);
}

#[test]
fn chat_completions_error_inside_the_stream_keeps_its_wording() {
    let text = sse(&[
        (
            None,
            json!({"choices": [{"index": 0, "delta": {"content": "Hi"}}]}),
        ),
        (
            None,
            json!({"error": {"message": "This model's maximum context length is 8192 tokens", "type": "invalid_request_error"}}),
        ),
    ]);
    let (reply, _) = read(Api::OpenAiChat, &text);
    assert_eq!(
        reply.unwrap_err(),
        "This model's maximum context length is 8192 tokens"
    );
}

#[test]
fn anthropic_thinking_signature_text_and_tool_input_assemble() {
    let text = sse(&[
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "usage": {"input_tokens": 472, "output_tokens": 2, "cache_read_input_tokens": 10}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "List them."}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (Some("ping"), json!({"type": "ping"})),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Looking."}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {}}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"ls\"}"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 2}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 89}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ]);
    let (reply, shown) = read(Api::AnthropicMessages, &text);
    let reply = reply.unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("toolUse"));
    // QA r102 (interop): the provider's id and stop reason, kept as Pi 1.6.0 keeps them.
    assert_eq!(reply.extra["responseId"], "msg_1");
    assert_eq!(reply.extra["rawStopReason"], "tool_use");
    let usage = reply.usage.as_ref().unwrap();
    assert_eq!((usage.input, usage.output, usage.cache_read), (472, 89, 10));
    let ContentBlock::Thinking(thinking) = &reply.content[0] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(thinking.thinking_signature.as_deref(), Some("EqQBCgIYAhIM"));
    let ContentBlock::ToolCall(call) = &reply.content[2] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(call.arguments, json!({"command": "ls"}));
    assert_eq!(
        shown,
        vec![
            ChatDelta::Thinking("List them.".into()),
            ChatDelta::BlockEnd,
            ChatDelta::Text("Looking.".into()),
            ChatDelta::BlockEnd,
            ChatDelta::ToolCall {
                name: "bash".into()
            },
        ]
    );
}

#[test]
fn anthropic_error_event_is_a_stream_error() {
    let text = sse(&[(
        Some("error"),
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 213000 tokens > 200000 maximum"}}),
    )]);
    let (reply, _) = read(Api::AnthropicMessages, &text);
    assert_eq!(
        reply.unwrap_err(),
        "prompt is too long: 213000 tokens > 200000 maximum"
    );
}

#[test]
fn responses_items_deltas_and_the_completed_usage() {
    let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Plan"}], "encrypted_content": "gAAA"});
    let text = sse(&[
        (
            Some("response.created"),
            json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        ),
        (
            Some("response.reasoning_summary_text.delta"),
            json!({"type": "response.reasoning_summary_text.delta", "sequence_number": 2, "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "Plan"}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": reasoning}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "sequence_number": 4, "output_index": 1, "item": {"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}}),
        ),
        (
            Some("response.output_text.delta"),
            json!({"type": "response.output_text.delta", "sequence_number": 5, "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "Hel"}),
        ),
        (
            Some("response.output_text.delta"),
            json!({"type": "response.output_text.delta", "sequence_number": 6, "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "lo"}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "sequence_number": 7, "output_index": 2, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash", "arguments": "", "status": "in_progress"}}),
        ),
        (
            Some("response.function_call_arguments.delta"),
            json!({"type": "response.function_call_arguments.delta", "sequence_number": 8, "item_id": "fc_1", "output_index": 2, "delta": "{\"command\":\"ls\"}"}),
        ),
        (
            Some("response.completed"),
            json!({"type": "response.completed", "sequence_number": 9, "response": {"id": "resp_1", "status": "completed", "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40}, "output_tokens": 20, "total_tokens": 120}}}),
        ),
    ]);
    let (reply, shown) = read(Api::OpenAiResponses, &text);
    let reply = reply.unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("toolUse"));
    let usage = reply.usage.as_ref().unwrap();
    assert_eq!((usage.input, usage.cache_read, usage.output), (60, 40, 20));
    let ContentBlock::Thinking(thinking) = &reply.content[0] else {
        panic!("{:?}", reply.content)
    };
    let item: Value =
        serde_json::from_str(thinking.thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(item["encrypted_content"], "gAAA");
    assert!(matches!(&reply.content[1], ContentBlock::Text(t) if t.text == "Hello"));
    let ContentBlock::ToolCall(call) = &reply.content[2] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(call.id, "call_1|fc_1");
    assert_eq!(call.arguments, json!({"command": "ls"}));
    assert_eq!(shown[0], ChatDelta::Thinking("Plan".into()));
    assert!(shown.contains(&ChatDelta::Text("lo".into())));
}

#[test]
fn responses_failed_and_error_events_carry_the_message() {
    let failed = sse(&[(
        Some("response.failed"),
        json!({"type": "response.failed", "response": {"id": "r", "status": "failed", "error": {"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."}}}),
    )]);
    let (reply, _) = read(Api::OpenAiResponses, &failed);
    assert_eq!(
        reply.unwrap_err(),
        "Your input exceeds the context window of this model."
    );
    let error = sse(&[(
        Some("error"),
        json!({"type": "error", "code": "server_error", "message": "boom", "param": null}),
    )]);
    assert_eq!(read(Api::OpenAiResponses, &error).0.unwrap_err(), "boom");
}

#[test]
fn gemini_chunks_continue_the_reply_and_the_last_has_usage() {
    let text = sse(&[
        (
            None,
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Think", "thought": true}]}, "index": 0}]}),
        ),
        (
            None,
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Two "}]}, "index": 0}]}),
        ),
        (
            None,
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "files.", "thoughtSignature": "sig"}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 4, "thoughtsTokenCount": 6, "totalTokenCount": 60}}),
        ),
    ]);
    let (reply, shown) = read(Api::Gemini, &text);
    let reply = reply.unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    assert_eq!(reply.extra["rawStopReason"], "STOP");
    assert_eq!(reply.usage.as_ref().unwrap().output, 10);
    let ContentBlock::Text(answer) = &reply.content[1] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(answer.text, "Two files.");
    assert_eq!(answer.extra["textSignature"], "sig");
    assert_eq!(shown[1], ChatDelta::Text("Two ".into()));
}

#[test]
fn a_cut_stream_keeps_what_arrived() {
    let mut assembly = Assembly::default();
    let mut sink = |_: ChatDelta| {};
    let position = assembly.start_text(JsonObject::new());
    assembly.append(position, "Partial", &mut sink);
    let reply = assembly.cut(StopReason::Aborted, "Request was aborted".into());
    assert_eq!(reply.stop_reason.as_deref(), Some("aborted"));
    assert!(matches!(&reply.content[0], ContentBlock::Text(t) if t.text == "Partial"));
}

#[test]
fn passing_provider_errors_are_transient_and_refusals_are_not() {
    for transient in [
        json!({"type": "overloaded_error", "message": "Overloaded"}),
        json!({"type": "api_error", "message": "Internal server error"}),
        json!({"code": "server_error", "message": "You can retry your request."}),
        json!({"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded."}),
        json!({"type": "rate_limit_error", "message": "slow down"}),
    ] {
        assert!(is_transient(&transient), "{transient}");
    }
    for lasting in [
        json!({"type": "invalid_request_error", "message": "messages: text content blocks must be non-empty"}),
        json!({"type": "invalid_request_error", "message": "prompt is too long: 213000 tokens > 200000 maximum"}),
        json!({"code": "insufficient_quota", "message": "You exceeded your current quota, check your plan and billing details."}),
        json!({"code": 429, "message": "Quota exceeded for billing account"}),
        json!({"type": "authentication_error", "message": "invalid x-api-key"}),
    ] {
        assert!(!is_transient(&lasting), "{lasting}");
    }
}

/// QA r103: keep-alives reset the idle limit, so a stream of pings alone never ended. The reply's
/// extent comes further with content, argument pieces, usage and a stop reason, and not with
/// Anthropic's `ping`, SSE comments, empty deltas or a repeated usage.
#[test]
fn keep_alives_do_not_bring_the_reply_further() {
    let extent_after = |_api: Api, assembly: &mut Assembly, reader: &mut Reader, text: &str| {
        let mut parser = sse::Parser::default();
        for event in parser.feed(text.as_bytes()) {
            let _ = reader.event(assembly, &event, &mut |_| {});
        }
        assembly.extent()
    };
    let mut assembly = Assembly::default();
    let mut reader = Reader::new(Api::AnthropicMessages);
    let start = sse(&[
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Partial "}}),
        ),
    ]);
    let began = extent_after(Api::AnthropicMessages, &mut assembly, &mut reader, &start);
    assert_ne!(began, Extent::default());
    let pings = "event: ping\ndata: {\"type\": \"ping\"}\n\n: comment\n\ndata:\n\n".repeat(3);
    let pinged = extent_after(Api::AnthropicMessages, &mut assembly, &mut reader, &pings);
    assert_eq!(pinged, began);
    let more = sse(&[(
        Some("content_block_delta"),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "more"}}),
    )]);
    let grown = extent_after(Api::AnthropicMessages, &mut assembly, &mut reader, &more);
    assert_ne!(grown, pinged);

    let mut assembly = Assembly::default();
    let mut reader = Reader::new(Api::OpenAiChat);
    let chunk = |delta: Value| {
        (
            None,
            json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}], "usage": null}),
        )
    };
    let start = sse(&[
        chunk(json!({"content": "Partial"})),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "bash", "arguments": "{\"co"}}]}),
        ),
    ]);
    let began = extent_after(Api::OpenAiChat, &mut assembly, &mut reader, &start);
    let idle = format!(
        ": OPENROUTER PROCESSING\n\n{}",
        sse(&[chunk(json!({})), chunk(json!({"content": ""}))])
    );
    let idled = extent_after(Api::OpenAiChat, &mut assembly, &mut reader, &idle);
    assert_eq!(idled, began);
    let piece = sse(&[chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "mmand"}}]}),
    )]);
    let grown = extent_after(Api::OpenAiChat, &mut assembly, &mut reader, &piece);
    assert_ne!(grown, idled);
    let usage = sse(&[(
        None,
        json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}),
    )]);
    let counted = extent_after(Api::OpenAiChat, &mut assembly, &mut reader, &usage);
    assert_ne!(counted, grown);
    assert_eq!(
        extent_after(Api::OpenAiChat, &mut assembly, &mut reader, &usage),
        counted
    );
}

/// QA r103: a call cut in the middle of its arguments was stored with `arguments` as a JSON
/// string; the session format (and Pi 1.6.0) stores an object.
#[test]
fn a_call_cut_mid_arguments_is_stored_with_an_object() {
    let events = sse(&[
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"echo "}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {}}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": "[\"a\", 1"}}),
        ),
    ]);
    let mut parser = sse::Parser::default();
    let mut reader = Reader::new(Api::AnthropicMessages);
    let mut assembly = Assembly::default();
    for event in parser.feed(events.as_bytes()) {
        reader.event(&mut assembly, &event, &mut |_| {}).unwrap();
    }
    let reply = assembly.cut(StopReason::Error, "cut".to_owned());
    let calls: Vec<_> = reply
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some(call),
            ContentBlock::Text(_)
            | ContentBlock::Thinking(_)
            | ContentBlock::Image(_)
            | ContentBlock::Unknown(_) => None,
        })
        .collect();
    assert_eq!(calls[0].arguments, json!({"command": "echo "}));
    assert!(!calls[0].extra.contains_key("argumentsError"));
    assert_eq!(calls[1].arguments, json!({}));
    let error = calls[1].extra.get("argumentsError").and_then(Value::as_str);
    assert!(
        error.is_some_and(|error| error.ends_with("Received arguments:\n[\"a\", 1")),
        "{error:?}"
    );
}

/// QA 2026-12-07: a finished call whose arguments are no JSON object, and one cut by the output
/// limit, were stored with their text as a JSON string; Anthropic refuses a string `input` sent
/// back, so a Pi resuming the session failed on every later request. Both are objects now.
#[test]
fn a_call_with_unreadable_arguments_is_stored_with_an_object_and_the_error() {
    let chunk = |delta: Value, finish: Value| {
        (
            None,
            json!({"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let reply_with = |arguments: &str, finish: &str| {
        let events = [
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "read", "arguments": arguments}}]}),
                Value::Null,
            ),
            chunk(json!({}), json!(finish)),
        ];
        let text = format!("{}data: [DONE]\n\n", sse(&events));
        let (reply, _) = read(Api::OpenAiChat, &text);
        let reply = reply.unwrap();
        let call = reply
            .content
            .iter()
            .find_map(ContentBlock::as_tool_call)
            .cloned();
        (reply.stop_reason, call.unwrap())
    };
    let (stop, call) = reply_with("{\"path\": \".", "tool_calls");
    assert_eq!(stop.as_deref(), Some("toolUse"));
    assert_eq!(call.arguments, json!({}));
    let error = call.arguments_error().unwrap();
    assert!(
        error.ends_with("Received arguments:\n{\"path\": \"."),
        "{error}"
    );
    // A raw newline inside a string is read repaired, as Pi reads it.
    let (_, call) = reply_with("{\"content\": \"a\nb\"}", "tool_calls");
    assert_eq!(call.arguments, json!({"content": "a\nb"}));
    assert_eq!(call.arguments_error(), None);
    // Cut by the output limit: read as far as it goes, as a cut stream's call is.
    let (stop, call) = reply_with("{\"path\": \"src/ma", "length");
    assert_eq!(stop.as_deref(), Some("length"));
    assert_eq!(call.arguments, json!({"path": "src/ma"}));
}

/// QA r103: `responseId` was recorded for Anthropic replies only; Pi 1.6.0 records it in every
/// format that names it.
#[test]
fn the_reply_id_is_kept_in_every_format() {
    let chat = sse(&[
        (
            None,
            json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": null}]}),
        ),
        (
            None,
            json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ),
    ]);
    let responses = sse(&[
        (
            None,
            json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        ),
        (
            None,
            json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}),
        ),
    ]);
    let gemini = sse(&[(
        None,
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
            "responseId": "gem_1"}),
    )]);
    for (api, events, id) in [
        (Api::OpenAiChat, chat, "chatcmpl-1"),
        (Api::OpenAiResponses, responses, "resp_1"),
        (Api::Gemini, gemini, "gem_1"),
    ] {
        let (reply, _) = read(api, &events);
        let reply = reply.unwrap();
        assert_eq!(reply.extra.get("responseId"), Some(&json!(id)), "{api:?}");
    }
}

/// QA 2026-12-07: a Responses `error` event wrapping its error object was shown as raw JSON.
#[test]
fn an_error_event_wrapping_its_error_is_said_by_its_message() {
    let wrapped = serde_json::json!({"type": "error", "error": {"type": "server_error", "message": "The server had an error"}});
    assert_eq!(super::error_text(&wrapped), "The server had an error");
    let flat = serde_json::json!({"type": "error", "code": "server_error", "message": "flat"});
    assert_eq!(super::error_text(&flat), "flat");
    let bare = serde_json::json!({"code": 7});
    assert_eq!(super::error_text(&bare), r#"{"code":7}"#);
}
