//! Anthropic's context editing against a mock Messages server: the `context_management` field and
//! the beta header go out only when configured, and the edits a response (whole or streamed)
//! reports are recorded on the reply; a response without them still reads.

use ctxkit_llm::{AnthropicContextEditing, ModelRole, resolve_model};
use ctxkit_protocol::ProviderContextEdit;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{client_with, options, sent_bodies};

const MODEL: &str = "anthropic/claude-sonnet-4-5";

fn editing() -> AnthropicContextEditing {
    AnthropicContextEditing {
        trigger_input_tokens: Some(30_000),
        keep_tool_uses: Some(2),
        clear_at_least_input_tokens: Some(5_000),
        exclude_tools: vec!["memory".into()],
        clear_tool_inputs: false,
        clear_thinking: false,
        keep_thinking_turns: None,
    }
}

fn message(extra: Value) -> Value {
    let mut body = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Done."}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 12000, "output_tokens": 5}
    });
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body
}

async fn beta_headers(server: &MockServer) -> Vec<Option<String>> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|request| {
            request
                .headers
                .get("anthropic-beta")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        })
        .collect()
}

#[tokio::test]
async fn off_by_default_nothing_is_sent_and_a_plain_reply_reads() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(message(json!({}))))
        .mount(&server)
        .await;
    let client = client_with(&options(MODEL, &server));
    let reply = client
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert!(reply.provider_context_edits().is_empty());
    assert!(!reply.extra.contains_key("contextManagement"));
    assert!(
        sent_bodies(&server).await[0]
            .get("context_management")
            .is_none()
    );
    assert_eq!(beta_headers(&server).await, vec![None]);
}

#[tokio::test]
async fn on_the_request_carries_the_edit_and_the_beta_and_applied_edits_are_recorded() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("anthropic-beta", "context-management-2025-06-27"))
        .respond_with(ResponseTemplate::new(200).set_body_json(message(json!({
            "context_management": {"applied_edits": [
                {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 6, "cleared_input_tokens": 48000}
            ]}
        }))))
        .mount(&server)
        .await;
    let mut settings = options(MODEL, &server);
    settings.anthropic_context_editing = Some(editing());
    let reply = client_with(&settings)
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        reply.provider_context_edits(),
        vec![ProviderContextEdit {
            kind: "clear_tool_uses_20250919".into(),
            cleared_tool_uses: Some(6),
            cleared_thinking_turns: None,
            cleared_input_tokens: 48_000,
        }]
    );
    // The conversation itself is untouched: the reply is the model's text.
    assert_eq!(reply.content.len(), 1);
    let body = &sent_bodies(&server).await[0];
    assert_eq!(
        body["context_management"],
        json!({"edits": [{"type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 30000},
            "keep": {"type": "tool_uses", "value": 2},
            "clear_at_least": {"type": "input_tokens", "value": 5000},
            "exclude_tools": ["memory"]}]})
    );
}

#[tokio::test]
async fn a_configured_beta_header_keeps_its_value_and_gains_ours() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(message(json!({}))))
        .mount(&server)
        .await;
    let mut settings = options(MODEL, &server);
    settings
        .headers
        .insert("anthropic-beta".into(), "files-api-2025-04-14".into());
    settings.anthropic_context_editing = Some(AnthropicContextEditing {
        clear_thinking: true,
        ..AnthropicContextEditing::default()
    });
    client_with(&settings)
        .chat(&request(vec![user("hi")]), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        beta_headers(&server).await,
        vec![Some(
            "files-api-2025-04-14,context-management-2025-06-27".to_owned()
        )]
    );
    assert_eq!(
        sent_bodies(&server).await[0]["context_management"]["edits"][0]["type"],
        "clear_thinking_20251015"
    );
}

#[tokio::test]
async fn a_streamed_reply_records_the_edits_of_its_final_delta() {
    let server = MockServer::start().await;
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 9000, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 4},
        "context_management": {"applied_edits": [
            {"type": "clear_thinking_20251015", "cleared_thinking_turns": 3, "cleared_input_tokens": 2100},
            {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 4, "cleared_input_tokens": 31000}
        ]}}),
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
    let mut settings = options(MODEL, &server);
    settings.anthropic_context_editing = Some(editing());
    let reply = client_with(&settings)
        .chat_streaming(
            &request(vec![user("hi")]),
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    let edits = reply.provider_context_edits();
    assert_eq!(edits.len(), 2);
    assert_eq!(edits[0].cleared_thinking_turns, Some(3));
    assert_eq!(edits[1].cleared_tool_uses, Some(4));
    assert_eq!(edits[1].cleared_input_tokens, 31_000);
    let body = &sent_bodies(&server).await[0];
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["context_management"]["edits"][0]["type"],
        "clear_tool_uses_20250919"
    );
}

#[test]
fn only_the_agent_model_on_anthropic_gets_the_setting() {
    let server_url = "http://127.0.0.1:9";
    let settings = ctxkit_llm::LlmOptions {
        model: Some("openai/gpt-4.1".into()),
        compaction_model: Some(MODEL.into()),
        base_url: Some(server_url.into()),
        api_key: Some(ctxkit_secrets::ApiKey::new("k")),
        anthropic_context_editing: Some(editing()),
        ..ctxkit_llm::LlmOptions::default()
    };
    let mut env = std::collections::BTreeMap::new();
    env.insert("ANTHROPIC_API_KEY".to_owned(), "a".to_owned());
    let env = ctxkit_llm::EnvSettings::from_map(&env);
    let agent = resolve_model(&settings, &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert!(agent.context_editing.is_none());
    let summaries = resolve_model(&settings, &env, ModelRole::Compaction)
        .unwrap()
        .unwrap();
    assert_eq!(summaries.provider, "anthropic");
    assert!(summaries.context_editing.is_none());
}
