//! Reasoning on Chat Completions, as Pi 1.6.0 keeps it: a reply's reasoning is stored with the
//! field it came in (`reasoning_content`, `reasoning`, `reasoning_text`) as its signature and goes
//! back in that field to the provider, API and model that wrote it (DeepSeek and Kimi refuse a
//! tool-call turn without it); thinking from anywhere else is not sent. The reasoning tokens of
//! `usage` are kept as `usage.reasoning`.

use ctxkit_protocol::{AgentMessage, AssistantMessage, ContentBlock};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::chat_streaming::{sse, stream, stream_response};
use crate::common::{client, sent_bodies};

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "deepseek-chat",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// A streamed reply: reasoning in `field` (two pieces), then a call to `bash`.
fn reasoning_then_call(field: &str) -> String {
    format!(
        "{}data: [DONE]\n\n",
        sse(&[
            chunk(
                json!({"role": "assistant", field: "List the "}),
                Value::Null
            ),
            chunk(json!({field: "files."}), Value::Null),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}),
                Value::Null,
            ),
            chunk(json!({}), json!("tool_calls")),
            json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
                "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39,
                    "completion_tokens_details": {"reasoning_tokens": 4}}}),
        ])
    )
}

fn thinking(reply: &AssistantMessage) -> Vec<(&str, Option<&str>)> {
    reply
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking(block) => {
                Some((block.thinking.as_str(), block.thinking_signature.as_deref()))
            }
            ContentBlock::Text(_)
            | ContentBlock::ToolCall(_)
            | ContentBlock::Image(_)
            | ContentBlock::Unknown(_) => None,
        })
        .collect()
}

fn result(id: &str) -> AgentMessage {
    serde_json::from_value(
        json!({"role": "toolResult", "toolCallId": id, "toolName": "bash",
        "content": [{"type": "text", "text": "a.rs"}], "isError": false, "timestamp": 3}),
    )
    .unwrap()
}

/// The assistant messages of the last request the server received.
async fn sent_assistants(server: &MockServer) -> Vec<Value> {
    let bodies = sent_bodies(server).await;
    bodies.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "assistant")
        .cloned()
        .collect()
}

#[tokio::test]
async fn streamed_reasoning_is_signed_with_its_field_and_sent_back_on_the_tool_call_turn() {
    for field in ["reasoning_content", "reasoning", "reasoning_text"] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/chat/completions"))
            .respond_with(stream_response(reasoning_then_call(field)))
            .mount(&server)
            .await;
        let (reply, _) = stream("vllm/deepseek-chat", &server).await;
        assert_eq!(thinking(&reply), vec![("List the files.", Some(field))]);
        let usage = serde_json::to_value(reply.usage.as_ref().unwrap()).unwrap();
        assert_eq!(usage["reasoning"], 4, "{usage}");

        let conversation = vec![user("hi"), AgentMessage::Assistant(reply), result("call_1")];
        client("vllm/deepseek-chat", &server)
            .chat_streaming(
                &request(conversation),
                &CancellationToken::new(),
                &mut |_| {},
            )
            .await
            .unwrap();
        let assistants = sent_assistants(&server).await;
        assert_eq!(assistants.len(), 1, "{assistants:?}");
        assert_eq!(assistants[0][field], "List the files.", "{field}");
        for other in ["reasoning_content", "reasoning", "reasoning_text"] {
            if other != field {
                assert!(assistants[0].get(other).is_none(), "{:?}", assistants[0]);
            }
        }
    }
}

/// chutes.ai sends the same reasoning in two fields, and some servers send an empty
/// `reasoning_content` next to a full `reasoning`: the first field with text is the reasoning.
#[tokio::test]
async fn the_first_field_with_text_is_the_reasoning() {
    let server = MockServer::start().await;
    let body = format!(
        "{}data: [DONE]\n\n",
        sse(&[
            chunk(
                json!({"role": "assistant", "reasoning_content": "", "reasoning": "Plan."}),
                Value::Null
            ),
            chunk(
                json!({"reasoning_content": " More.", "reasoning": " More."}),
                Value::Null
            ),
            chunk(json!({"content": "Done."}), json!("stop")),
        ])
    );
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(stream_response(body))
        .mount(&server)
        .await;
    let (reply, _) = stream("vllm/deepseek-chat", &server).await;
    assert_eq!(thinking(&reply), vec![("Plan. More.", Some("reasoning"))]);
}

#[tokio::test]
async fn a_whole_reply_keeps_its_reasoning_field_and_reasoning_tokens() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "kimi-k2",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "reasoning_content": "Look first.",
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39,
                "reasoning_tokens": 5}
        })))
        .mount(&server)
        .await;
    let client = client("vllm/kimi-k2", &server);
    let cancel = CancellationToken::new();
    let reply = client
        .chat(&request(vec![user("hi")]), &cancel)
        .await
        .unwrap();
    assert_eq!(
        thinking(&reply),
        vec![("Look first.", Some("reasoning_content"))]
    );
    let usage = serde_json::to_value(reply.usage.as_ref().unwrap()).unwrap();
    assert_eq!(usage["reasoning"], 5, "{usage}");

    let conversation = vec![user("hi"), AgentMessage::Assistant(reply), result("call_1")];
    client.chat(&request(conversation), &cancel).await.unwrap();
    let assistants = sent_assistants(&server).await;
    assert_eq!(assistants[0]["reasoning_content"], "Look first.");
}

/// Pi 1.6.0 drops thinking written by another provider, API or model; a Chat Completions server
/// never sees reasoning it did not write, and thinking signed otherwise (an Anthropic signature)
/// never goes in a reasoning field.
#[tokio::test]
async fn thinking_from_another_source_or_signed_otherwise_is_not_sent() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "deepseek-chat",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}
        })))
        .mount(&server)
        .await;
    let reply = |provider: &str, api: &str, model: &str, signature: &str, id: &str| {
        serde_json::from_value::<AgentMessage>(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": format!("thought of {provider}/{model}"),
             "thinkingSignature": signature},
            {"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": "ls"}}
        ], "provider": provider, "api": api, "model": model, "stopReason": "toolUse",
        "timestamp": 2}))
        .unwrap()
    };
    let conversation = vec![
        user("hi"),
        reply(
            "ollama",
            "openai-completions",
            "deepseek-chat",
            "reasoning_content",
            "call_1",
        ),
        result("call_1"),
        reply(
            "vllm",
            "openai-completions",
            "deepseek-reasoner",
            "reasoning_content",
            "call_2",
        ),
        result("call_2"),
        reply(
            "vllm",
            "anthropic-messages",
            "deepseek-chat",
            "reasoning_content",
            "call_3",
        ),
        result("call_3"),
        reply(
            "vllm",
            "openai-completions",
            "deepseek-chat",
            "EqQBCkYIBxgCKkD",
            "call_4",
        ),
        result("call_4"),
        reply(
            "vllm",
            "openai-completions",
            "deepseek-chat",
            "reasoning_content",
            "call_5",
        ),
        result("call_5"),
    ];
    client("vllm/deepseek-chat", &server)
        .chat(&request(conversation), &CancellationToken::new())
        .await
        .unwrap();
    let assistants = sent_assistants(&server).await;
    assert_eq!(assistants.len(), 5, "{assistants:?}");
    for sent in &assistants[..4] {
        for field in ["reasoning_content", "reasoning", "reasoning_text"] {
            assert!(sent.get(field).is_none(), "{sent}");
        }
    }
    assert_eq!(
        assistants[4]["reasoning_content"],
        "thought of vllm/deepseek-chat"
    );
}

/// OpenRouter streams `reasoning_details` beside `reasoning`: Gemini and Anthropic models behind
/// it refuse a tool turn whose items did not come back. As Pi 1.6.0: the items (text pieces
/// joined, encrypted ones apart) are the thinking block's signature, as JSON, and go back as
/// `reasoning_details` instead of the raw field; a reply whose only reasoning is encrypted keeps an
/// empty thinking block for them.
#[tokio::test]
async fn openrouter_reasoning_details_are_kept_and_sent_back() {
    let detail = |kind: &str, field: &str, value: &str| {
        json!({"reasoning_details": [{"type": kind, field: value, "format": "google-gemini-v1",
            "index": 0}]})
    };
    let mut first = detail("reasoning.text", "text", "List ");
    first["reasoning"] = json!("List ");
    let mut second = detail("reasoning.text", "text", "files.");
    second["reasoning"] = json!("files.");
    let body = format!(
        "{}data: [DONE]\n\n",
        sse(&[
            chunk(first, Value::Null),
            chunk(second, Value::Null),
            chunk(
                detail("reasoning.encrypted", "data", "CiQBjz1rX"),
                Value::Null
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}),
                Value::Null,
            ),
            chunk(json!({}), json!("tool_calls")),
        ])
    );
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(stream_response(body))
        .mount(&server)
        .await;
    let model = "openrouter/google/gemini-3-pro-preview";
    let (reply, _) = stream(model, &server).await;
    let expected = json!([
        {"type": "reasoning.text", "text": "List files.", "format": "google-gemini-v1", "index": 0},
        {"type": "reasoning.encrypted", "data": "CiQBjz1rX", "format": "google-gemini-v1",
            "index": 0}
    ]);
    let kept = thinking(&reply);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "List files.");
    let signature: Value = serde_json::from_str(kept[0].1.unwrap()).unwrap();
    assert_eq!(signature, expected);

    // An older Pi's reply: no thinking, the encrypted item on the tool call.
    let legacy: AgentMessage = serde_json::from_value(json!({"role": "assistant", "content": [
        {"type": "toolCall", "id": "call_2", "name": "bash", "arguments": {"command": "pwd"},
         "thoughtSignature": json!({"type": "reasoning.encrypted", "id": "r2", "data": "QQ"})
            .to_string()}
    ], "provider": "openrouter", "api": "openai-completions",
       "model": "google/gemini-3-pro-preview", "stopReason": "toolUse", "timestamp": 2}))
    .unwrap();
    let conversation = vec![
        user("hi"),
        AgentMessage::Assistant(reply),
        result("call_1"),
        legacy,
        result("call_2"),
    ];
    client(model, &server)
        .chat_streaming(
            &request(conversation),
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    let assistants = sent_assistants(&server).await;
    assert_eq!(assistants[0]["reasoning_details"], expected);
    assert!(
        assistants[0].get("reasoning").is_none(),
        "{}",
        assistants[0]
    );
    assert_eq!(
        assistants[1]["reasoning_details"],
        json!([{"type": "reasoning.encrypted", "id": "r2", "data": "QQ"}])
    );
}
