//! Compaction on the provider's side against mock servers: Anthropic's `compact_20260112` edit and
//! OpenAI Responses' `context_management` go out only when configured; the compaction block or
//! item a response (whole or streamed) comes with is kept on the reply and sent back in the next
//! request (Anthropic: first in that reply's message; OpenAI: in place of the input before it);
//! Anthropic's pause after a compaction is continued by the client; replies without one still read.

use ctxkit_llm::{AnthropicCompaction, AnthropicContextEditing, OpenAiCompaction};
use ctxkit_protocol::{AgentMessage, ContentBlock};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{client_with, options, sent_bodies};

const CLAUDE: &str = "anthropic/claude-sonnet-4-5";
const GPT: &str = "openai/gpt-5-mini";

fn summary_block() -> Value {
    json!({"type": "compaction", "content": "The user asked for a parser; src/parse.rs is written."})
}

fn message(content: Value, stop: &str, usage: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage,
    }))
}

fn tool_result(id: &str, text: &str) -> AgentMessage {
    serde_json::from_value(
        json!({"role": "toolResult", "toolCallId": id, "toolName": "bash",
        "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 2}),
    )
    .unwrap()
}

#[tokio::test]
async fn anthropic_off_sends_no_edit_and_a_reply_has_no_compaction() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(message(
            json!([{"type": "text", "text": "Hi."}]),
            "end_turn",
            json!({"input_tokens": 10, "output_tokens": 2}),
        ))
        .mount(&server)
        .await;
    let reply = client_with(&options(CLAUDE, &server))
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert!(reply.provider_compaction().is_none());
    let body = &sent_bodies(&server).await[0];
    assert!(body.get("context_management").is_none());
    let received = server.received_requests().await.unwrap();
    assert!(received[0].headers.get("anthropic-beta").is_none());
}

#[tokio::test]
async fn anthropic_compaction_is_requested_kept_on_the_reply_and_sent_back_first() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("anthropic-beta", "compact-2026-01-12"))
        .respond_with(message(
            json!([summary_block(),
                   {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "cargo test"}}]),
            "tool_use",
            json!({"input_tokens": 900, "output_tokens": 30, "iterations": [
                {"type": "compaction", "input_tokens": 160000, "output_tokens": 2000},
                {"type": "message", "input_tokens": 900, "output_tokens": 30}]}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(message(
            json!([{"type": "text", "text": "Tests pass."}]),
            "end_turn",
            json!({"input_tokens": 950, "output_tokens": 3}),
        ))
        .with_priority(10)
        .mount(&server)
        .await;
    let mut settings = options(CLAUDE, &server);
    settings.anthropic_compaction = Some(AnthropicCompaction {
        trigger_input_tokens: Some(60_000),
        pause_after_compaction: false,
        instructions: Some("Keep every file path.".into()),
    });
    let client = client_with(&settings);
    let cancel = CancellationToken::new();
    let reply = client
        .chat(&request(vec![user("write the parser")]), &cancel)
        .await
        .unwrap();
    assert_eq!(reply.provider_compaction(), Some(&summary_block()));
    assert_eq!(
        reply.provider_compaction_summary(),
        Some("The user asked for a parser; src/parse.rs is written.")
    );
    assert!(matches!(&reply.content[..], [ContentBlock::ToolCall(call)] if call.id == "toolu_1"));
    let usage = reply.usage.as_ref().unwrap();
    assert_eq!(usage.input, 900);
    assert_eq!(usage.extra["iterations"][0]["type"], "compaction");
    let first = &sent_bodies(&server).await[0];
    assert_eq!(
        first["context_management"],
        json!({"edits": [{"type": "compact_20260112",
            "trigger": {"type": "input_tokens", "value": 60000},
            "instructions": "Keep every file path."}]})
    );

    // The next request carries the block first in that reply's message, as received.
    let conversation = vec![
        user("write the parser"),
        AgentMessage::Assistant(reply),
        tool_result("toolu_1", "ok"),
    ];
    client
        .chat(&request(conversation.clone()), &cancel)
        .await
        .unwrap();
    let second = &sent_bodies(&server).await[1];
    assert_eq!(
        second["messages"][1],
        json!({"role": "assistant", "content": [summary_block(),
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "cargo test"}}]})
    );

    // Turned off, the block (which needs the beta) is no longer sent.
    settings.anthropic_compaction = None;
    client_with(&settings)
        .chat(&request(conversation), &cancel)
        .await
        .unwrap();
    let third = &sent_bodies(&server).await[2];
    assert_eq!(
        third["messages"][1]["content"],
        json!([{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "cargo test"}}])
    );
}

#[tokio::test]
async fn anthropic_editing_and_compaction_share_the_field_and_the_header() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(message(
            json!([{"type": "text", "text": "Hi."}]),
            "end_turn",
            json!({"input_tokens": 10, "output_tokens": 2}),
        ))
        .mount(&server)
        .await;
    let mut settings = options(CLAUDE, &server);
    settings.anthropic_context_editing = Some(AnthropicContextEditing::default());
    settings.anthropic_compaction = Some(AnthropicCompaction::default());
    let reply = client_with(&settings)
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert!(reply.provider_compaction().is_none());
    let body = &sent_bodies(&server).await[0];
    assert_eq!(
        body["context_management"],
        json!({"edits": [{"type": "clear_tool_uses_20250919"}, {"type": "compact_20260112"}]})
    );
    let received = server.received_requests().await.unwrap();
    assert_eq!(
        received[0].headers["anthropic-beta"].to_str().unwrap(),
        "context-management-2025-06-27,compact-2026-01-12"
    );
}

#[tokio::test]
async fn a_pause_after_compaction_is_continued_into_one_reply() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(message(
            json!([summary_block()]),
            "compaction",
            json!({"input_tokens": 150000, "output_tokens": 2000}),
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(message(
            json!([{"type": "text", "text": "Parser done."}]),
            "end_turn",
            json!({"input_tokens": 800, "output_tokens": 4}),
        ))
        .mount(&server)
        .await;
    let mut settings = options(CLAUDE, &server);
    settings.anthropic_compaction = Some(AnthropicCompaction {
        pause_after_compaction: true,
        ..AnthropicCompaction::default()
    });
    let reply = client_with(&settings)
        .chat(&request(vec![user("go on")]), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply.provider_compaction(), Some(&summary_block()));
    assert!(
        matches!(&reply.content[..], [ContentBlock::Text(text)] if text.text == "Parser done.")
    );
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    let usage = reply.usage.as_ref().unwrap();
    // The context is the continuation's; both calls' output is counted.
    assert_eq!((usage.input, usage.output), (800, 2004));
    assert_eq!(
        usage.extra["iterations"],
        json!([{"type": "compaction", "input_tokens": 150000, "output_tokens": 2000}])
    );
    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    assert_eq!(
        bodies[0]["context_management"]["edits"][0]["pause_after_compaction"],
        true
    );
    let messages = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "assistant", "content": [summary_block()]})
    );
}

#[tokio::test]
async fn a_streamed_compaction_block_is_assembled_from_its_deltas() {
    let server = MockServer::start().await;
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 700, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "compaction", "content": null}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta", "content": "The parser "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta", "content": "is written.", "encrypted_content": "opaque-1"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Next step."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 6}}),
        json!({"type": "message_stop"}),
    ];
    let body: String = events
        .iter()
        .map(|data| {
            format!(
                "event: {}\ndata: {data}\n\n",
                data["type"].as_str().unwrap()
            )
        })
        .collect();
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let mut settings = options(CLAUDE, &server);
    settings.anthropic_compaction = Some(AnthropicCompaction::default());
    let reply = client_with(&settings)
        .chat_streaming(
            &request(vec![user("hi")]),
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert_eq!(
        reply.provider_compaction(),
        Some(
            &json!({"type": "compaction", "content": "The parser is written.",
                     "encrypted_content": "opaque-1"})
        )
    );
    assert!(matches!(&reply.content[..], [ContentBlock::Text(text)] if text.text == "Next step."));
}

fn response(output: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5-mini",
        "output": output,
        "usage": {"input_tokens": 4000, "output_tokens": 20, "total_tokens": 4020}
    }))
}

fn compaction_item() -> Value {
    json!({"type": "compaction", "id": "cmp_68c1", "encrypted_content": "gAAAAABpcompacted"})
}

fn answer(text: &str) -> Value {
    json!({"type": "message", "id": "msg_68c1", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

#[tokio::test]
async fn openai_off_sends_no_context_management() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(response(json!([answer("Hi.")])))
        .mount(&server)
        .await;
    let reply = client_with(&options(GPT, &server))
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert!(reply.provider_compaction().is_none());
    assert!(
        sent_bodies(&server).await[0]
            .get("context_management")
            .is_none()
    );
}

#[tokio::test]
async fn openai_compaction_item_replaces_the_input_before_it_in_the_next_request() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(response(json!([compaction_item(), answer("Parser done.")])))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(response(json!([answer("Tests pass.")])))
        .mount(&server)
        .await;
    let mut settings = options(GPT, &server);
    settings.openai_compaction = Some(OpenAiCompaction {
        compact_threshold: Some(200_000),
    });
    let client = client_with(&settings);
    let cancel = CancellationToken::new();
    let history = vec![user("write the parser"), user("and its tests")];
    let reply = client
        .chat(&request(history.clone()), &cancel)
        .await
        .unwrap();
    assert_eq!(reply.provider_compaction(), Some(&compaction_item()));
    assert_eq!(reply.provider_compaction_summary(), None);
    assert!(
        matches!(&reply.content[..], [ContentBlock::Text(text)] if text.text == "Parser done.")
    );
    let first = &sent_bodies(&server).await[0];
    assert_eq!(
        first["context_management"],
        json!([{"type": "compaction", "compact_threshold": 200000}])
    );
    assert_eq!(first["input"].as_array().unwrap().len(), 2);

    let mut conversation = history;
    conversation.push(AgentMessage::Assistant(reply));
    conversation.push(user("run them"));
    let second = client.chat(&request(conversation), &cancel).await.unwrap();
    assert!(second.provider_compaction().is_none());
    let body = &sent_bodies(&server).await[1];
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[0], compaction_item());
    assert_eq!(input[1]["type"], "message");
    assert_eq!(input[1]["content"][0]["text"], "Parser done.");
    assert_eq!(input[2]["content"][0]["text"], "run them");
    assert_eq!(input.len(), 3, "{input:?}");
}

#[tokio::test]
async fn a_streamed_openai_compaction_item_is_kept() {
    let server = MockServer::start().await;
    let done = json!({"id": "resp_1", "object": "response", "status": "completed",
        "output": [], "usage": {"input_tokens": 4000, "output_tokens": 20, "total_tokens": 4020}});
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "compaction", "id": "cmp_68c1"}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": compaction_item()}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg_68c1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 1, "delta": "Parser done."}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": answer("Parser done.")}),
        json!({"type": "response.completed", "response": done}),
    ];
    let body: String = events
        .iter()
        .map(|data| {
            format!(
                "event: {}\ndata: {data}\n\n",
                data["type"].as_str().unwrap()
            )
        })
        .collect();
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let mut settings = options(GPT, &server);
    settings.openai_compaction = Some(OpenAiCompaction::default());
    let reply = client_with(&settings)
        .chat_streaming(
            &request(vec![user("hi")]),
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert_eq!(reply.provider_compaction(), Some(&compaction_item()));
    assert!(
        matches!(&reply.content[..], [ContentBlock::Text(text)] if text.text == "Parser done.")
    );
    assert_eq!(
        sent_bodies(&server).await[0]["context_management"],
        json!([{"type": "compaction"}])
    );
}

#[tokio::test]
async fn another_provider_never_gets_the_block() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(response(json!([answer("Hi.")])))
        .mount(&server)
        .await;
    let mut from_claude: ctxkit_protocol::AssistantMessage = serde_json::from_value(json!({
        "role": "assistant", "content": [{"type": "text", "text": "Parser done."}],
        "provider": "anthropic", "api": "anthropic-messages", "model": "claude-sonnet-4-5",
        "stopReason": "stop", "timestamp": 1}))
    .unwrap();
    from_claude.set_provider_compaction(summary_block());
    let mut settings = options(GPT, &server);
    settings.openai_compaction = Some(OpenAiCompaction::default());
    client_with(&settings)
        .chat(
            &request(vec![
                user("one"),
                AgentMessage::Assistant(from_claude),
                user("two"),
            ]),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let input = sent_bodies(&server).await[0]["input"].clone();
    assert_eq!(input.as_array().unwrap().len(), 3);
    assert!(!input.to_string().contains("compaction"));
}
