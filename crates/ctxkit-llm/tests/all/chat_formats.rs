//! Conversations with tools in the three other wire formats (Anthropic Messages, OpenAI
//! Responses, Gemini), each against a mock server answering with the provider's documented
//! response shape: a tool call, then the follow-up request carrying the call, its result and the
//! provider's reasoning state (thinking signature, reasoning item, thought signature).

use ctxkit_protocol::{AgentMessage, ContentBlock};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{KEY, client, sent_bodies};

fn result(id: &str) -> AgentMessage {
    serde_json::from_value(json!({
        "role": "toolResult", "toolCallId": id, "toolName": "bash",
        "content": [{"type": "text", "text": "a.rs\nb.rs"}], "isError": false, "timestamp": 3
    }))
    .unwrap()
}

/// Sends "what is here?", expects one `bash` call, then sends the call's result back.
async fn tool_round(model: &str, server: &MockServer, reasoning: bool) -> (AgentMessage, String) {
    let client = client(model, server);
    let cancel = CancellationToken::new();
    let mut first_request = request(vec![user("what is here?")]);
    first_request.max_tokens = Some(2000);
    if reasoning {
        first_request.reasoning = Some(ctxkit_llm::ReasoningLevel::Low);
    }
    let first = client.chat(&first_request, &cancel).await.unwrap();
    assert_eq!(first.stop_reason.as_deref(), Some("toolUse"), "{first:?}");
    let call = first
        .content
        .iter()
        .find_map(|block| match block {
            ContentBlock::ToolCall(call) => Some(call.clone()),
            ContentBlock::Text(_)
            | ContentBlock::Image(_)
            | ContentBlock::Thinking(_)
            | ContentBlock::Unknown(_) => None,
        })
        .unwrap();
    assert_eq!(call.name, "bash");
    assert_eq!(call.arguments, json!({"command": "ls"}));
    let conversation = vec![
        user("what is here?"),
        AgentMessage::Assistant(first.clone()),
        result(&call.id),
    ];
    let mut second_request = request(conversation);
    second_request.reasoning = first_request.reasoning;
    let second = client.chat(&second_request, &cancel).await.unwrap();
    assert_eq!(second.stop_reason.as_deref(), Some("stop"));
    assert!(
        matches!(second.content.last(), Some(ContentBlock::Text(t)) if t.text == "Two files."),
        "{second:?}"
    );
    (AgentMessage::Assistant(first), call.id)
}

fn second_body(bodies: &[Value]) -> &Value {
    assert_eq!(bodies.len(), 2);
    &bodies[1]
}

#[tokio::test]
async fn anthropic_tool_use_and_signed_thinking_go_back() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "I should list the files.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "bash", "input": {"command": "ls"}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 472, "output_tokens": 91, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 100}
        })))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "Two files."}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 600, "output_tokens": 5}
        })))
        .mount(&server)
        .await;
    let (first, id) = tool_round("anthropic/claude-sonnet-4-5", &server, true).await;
    let AgentMessage::Assistant(first) = first else {
        unreachable!()
    };
    assert_eq!(id, "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(first.usage.as_ref().unwrap().cache_read, 100);
    let ContentBlock::Thinking(thinking) = &first.content[0] else {
        panic!("{:?}", first.content)
    };
    assert_eq!(
        thinking.thinking_signature.as_deref(),
        Some("EqQBCgIYAhIM1gbcDa9GJwZA")
    );
    let bodies = sent_bodies(&server).await;
    assert_eq!(
        bodies[0]["tools"][0]["input_schema"]["required"],
        json!(["command"])
    );
    assert_eq!(bodies[0]["thinking"]["type"], "enabled");
    // Prompt caching is on by default: the system prompt is a block with a breakpoint.
    assert_eq!(
        bodies[0]["system"],
        json!([{"type": "text", "text": "You are a coding agent.",
                "cache_control": {"type": "ephemeral"}}])
    );
    let body = second_body(&bodies);
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should list the files.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "bash", "input": {"command": "ls"}}
        ]})
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
            "content": [{"type": "text", "text": "a.rs\nb.rs"}],
            "cache_control": {"type": "ephemeral"}}]})
    );
    // Without a request limit, the model table's output limit is sent (the API requires one).
    assert!(body["max_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn responses_function_calls_and_reasoning_items_go_back() {
    let server = MockServer::start().await;
    let reasoning = json!({"type": "reasoning", "id": "rs_68af", "summary": [
        {"type": "summary_text", "text": "**Listing files**"}], "encrypted_content": "gAAAAABo"});
    Mock::given(method("POST"))
        .and(path("/responses"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_68af", "object": "response", "created_at": 1756, "status": "completed",
            "model": "gpt-5-mini", "output": [
                reasoning,
                {"type": "message", "id": "msg_68ae", "status": "completed", "role": "assistant",
                 "phase": "commentary",
                 "content": [{"type": "output_text", "text": "Listing.", "annotations": []}]},
                {"type": "function_call", "id": "fc_68af", "call_id": "call_Xk2", "name": "bash",
                 "arguments": "{\"command\":\"ls\"}", "status": "completed"}
            ],
            "usage": {"input_tokens": 320, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 80, "output_tokens_details": {"reasoning_tokens": 64}, "total_tokens": 400}
        })))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_68b0", "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [{"type": "message", "id": "msg_68b0", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Two files.", "annotations": []}]}],
            "usage": {"input_tokens": 450, "output_tokens": 5, "total_tokens": 455}
        })))
        .mount(&server)
        .await;
    let (first, id) = tool_round("openai/gpt-5-mini", &server, true).await;
    assert_eq!(id, "call_Xk2|fc_68af");
    let AgentMessage::Assistant(first) = first else {
        unreachable!()
    };
    assert!(
        matches!(&first.content[0], ContentBlock::Thinking(t) if t.thinking == "**Listing files**")
    );
    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies[0]["tools"][0]["type"], "function");
    assert_eq!(bodies[0]["tools"][0]["name"], "bash");
    assert_eq!(bodies[0]["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(bodies[0]["store"], false);
    // QA r103: the message's phase is kept as Pi keeps it, and goes back with the item.
    assert!(
        matches!(&first.content[1], ContentBlock::Text(t)
            if t.extra["textSignature"] == r#"{"v":1,"id":"msg_68ae","phase":"commentary"}"#),
        "{:?}",
        first.content
    );
    let body = second_body(&bodies);
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[1], reasoning);
    assert_eq!(
        input[2],
        json!({"type": "message", "role": "assistant", "status": "completed", "id": "msg_68ae",
               "phase": "commentary",
               "content": [{"type": "output_text", "text": "Listing.", "annotations": []}]})
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call", "id": "fc_68af", "call_id": "call_Xk2", "name": "bash",
               "arguments": "{\"command\":\"ls\"}"})
    );
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_Xk2", "output": "a.rs\nb.rs"})
    );
}

/// A reasoning model reasons without a reasoning level: the request still asks for the encrypted
/// reasoning, and a reasoning item that came without it (a server that ignored `include`, a session
/// from before) is never sent back, nor the ids of its reply's items, which the API would pair with
/// it (under `store: false` it answers 404 "Item with id 'rs_…' not found" for the bare item, 400
/// "provided without its required 'reasoning' item" for an id whose reasoning is missing).
#[tokio::test]
async fn responses_reasoning_without_encrypted_content_never_goes_back() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [
                {"type": "reasoning", "id": "rs_bare", "summary": []},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash",
                 "arguments": "{\"command\":\"ls\"}", "status": "completed"}
            ],
            "usage": {"input_tokens": 320, "output_tokens": 80, "total_tokens": 400}
        })))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_2", "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [{"type": "message", "id": "msg_2", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Two files.", "annotations": []}]}],
            "usage": {"input_tokens": 450, "output_tokens": 5, "total_tokens": 455}
        })))
        .mount(&server)
        .await;
    tool_round("openai/gpt-5-mini", &server, false).await;
    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies[0]["include"], json!(["reasoning.encrypted_content"]));
    assert!(bodies[0].get("reasoning").is_none(), "{}", bodies[0]);
    let body = second_body(&bodies);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": [{"type": "input_text", "text": "what is here?"}]},
            {"type": "function_call", "call_id": "call_1", "name": "bash",
             "arguments": "{\"command\":\"ls\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "a.rs\nb.rs"}
        ])
    );
}

#[tokio::test]
async fn gemini_function_calls_and_thought_signatures_go_back() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/models/gemini-2.5-flash:generateContent"))
        .and(header("x-goog-api-key", KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"text": "The user wants the files.", "thought": true},
                {"functionCall": {"name": "bash", "args": {"command": "ls"}},
                 "thoughtSignature": "CiQB0e2Kb2xq"}
            ]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 12,
                              "thoughtsTokenCount": 40, "totalTokenCount": 172},
            "modelVersion": "gemini-2.5-flash", "responseId": "abc"
        })))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/models/gemini-2.5-flash:generateContent"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "Two files."}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 200, "candidatesTokenCount": 3, "totalTokenCount": 203}
        })))
        .mount(&server)
        .await;
    let (first, _) = tool_round("google/gemini-2.5-flash", &server, false).await;
    let AgentMessage::Assistant(first) = first else {
        unreachable!()
    };
    assert_eq!(first.usage.as_ref().unwrap().output, 52);
    let bodies = sent_bodies(&server).await;
    assert_eq!(
        bodies[0]["tools"][0]["functionDeclarations"][0]["name"],
        "bash"
    );
    assert_eq!(
        bodies[0]["systemInstruction"]["parts"][0]["text"],
        "You are a coding agent."
    );
    let body = second_body(&bodies);
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [
            {"thought": true, "text": "The user wants the files."},
            {"functionCall": {"name": "bash", "args": {"command": "ls"}}, "thoughtSignature": "CiQB0e2Kb2xq"}
        ]})
    );
    assert_eq!(
        body["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "bash", "response": {"output": "a.rs\nb.rs"}}}
        ]})
    );
}
