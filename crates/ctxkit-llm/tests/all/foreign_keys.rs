//! QA F1 as attacks: `llm.baseUrl`, `llm.api`, `llm.apiKey` and `llm.headers` belong to the
//! provider the settings name. Loopback mocks stand for the custom host and for the built-in
//! provider's own host (`OPENAI_BASE_URL`); each records the headers it got, and no key or header
//! of another provider may ever arrive.

use std::collections::BTreeMap;

use ctxkit_llm::{EnvSettings, LlmOptions, ModelClient, ModelRole, resolve_model};
use ctxkit_secrets::ApiKey;
use ctxkit_summarizer::Summarizer;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};

const ANTHROPIC_KEY: &str = "sk-ant-test-SECRET123";
const OPENAI_KEY: &str = "sk-oai-test-SECRET456";
const GEMINI_KEY: &str = "g-test-SECRET999";
const OWN_KEY: &str = "own-key-SECRET321";
const OWN_HEADER: &str = "own-header-SECRET789";

/// The keys of every built-in provider in their variables; `openai`'s host is `openai_host`.
fn environment(openai_host: &MockServer) -> EnvSettings {
    let vars: BTreeMap<String, String> = [
        ("ANTHROPIC_API_KEY", ANTHROPIC_KEY.to_owned()),
        ("OPENAI_API_KEY", OPENAI_KEY.to_owned()),
        ("GEMINI_API_KEY", GEMINI_KEY.to_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai_host.uri())),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    EnvSettings::from_map(&vars)
}

/// The settings' endpoint: `model` at `base_url`, with `llm.api`, `llm.apiKey` and an auth header.
fn endpoint(model: &str, api: ctxkit_llm::Api, base_url: String) -> LlmOptions {
    LlmOptions {
        model: Some(model.to_owned()),
        api: Some(api),
        base_url: Some(base_url),
        api_key: Some(ApiKey::new(OWN_KEY)),
        headers: BTreeMap::from([("x-own-auth".to_owned(), OWN_HEADER.to_owned())]),
        models: vec![ctxkit_llm::ModelLimits {
            provider: "myco".into(),
            id: "coder-large".into(),
            context_window: 131_072,
            max_output: 8_192,
            reasoning: false,
            images: true,
            adaptive_thinking: false,
            xhigh_effort: None,
            chat_compat: Default::default(),
        }],
        retry: ctxkit_llm::RetryPolicy {
            max_retries: 0,
            ..ctxkit_llm::RetryPolicy::default()
        },
        ..LlmOptions::default()
    }
}

/// A loopback host answering every format's request with a well-formed reply.
async fn host() -> MockServer {
    let server = MockServer::start().await;
    let usage = json!({"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11});
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "ok"}}],
            "usage": usage})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "m",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "ok", "annotations": []}]}],
            "usage": {"input_tokens": 9, "output_tokens": 2, "total_tokens": 11}})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 9, "output_tokens": 2}})))
        .mount(&server)
        .await;
    server
}

/// Every header value `server` received, lower-cased names, one list per request.
async fn received_headers(server: &MockServer) -> Vec<Vec<(String, String)>> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests
        .iter()
        .map(|request| {
            request
                .headers
                .iter()
                .map(|(name, value)| {
                    let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                    (name.as_str().to_lowercase(), value)
                })
                .collect()
        })
        .collect()
}

/// Fails when `server` received any of `secrets` in any header.
async fn assert_never_received(server: &MockServer, secrets: &[&str]) {
    for headers in received_headers(server).await {
        for (name, value) in &headers {
            for secret in secrets {
                assert!(
                    !value.contains(secret),
                    "{name}: {value} reached {}",
                    server.uri()
                );
            }
        }
    }
}

/// One conversation request and one summary request with `options`' `role` model.
async fn send(options: &LlmOptions, env: &EnvSettings, role: ModelRole) {
    let config = resolve_model(options, env, role).unwrap().unwrap();
    let client = ModelClient::new(config).unwrap();
    let cancel = CancellationToken::new();
    let reply = client.chat(&request(vec![user("my plan")]), &cancel).await;
    assert!(reply.is_ok(), "{reply:?}");
    let summary = client.summarize(crate::common::request(None), cancel).await;
    assert!(summary.is_ok(), "{summary:?}");
}

#[tokio::test]
async fn a_picked_built_in_model_sends_nothing_to_the_custom_host() {
    let custom = host().await;
    let openai = host().await;
    let env = environment(&openai);
    let mut options = endpoint(
        "myco/coder-large",
        ctxkit_llm::Api::OpenAiChat,
        format!("{}/v1", custom.uri()),
    );
    // `--model openai/gpt-5-mini` (or `/model`), then a summary command's `--model`.
    options.picked_model = Some("openai/gpt-5-mini".into());
    send(&options, &env, ModelRole::Agent).await;
    options.picked_model = None;
    options.picked_compaction_model = Some("openai/gpt-5-mini".into());
    send(&options, &env, ModelRole::Compaction).await;

    assert!(
        received_headers(&custom).await.is_empty(),
        "the custom host got a request"
    );
    let at_openai = received_headers(&openai).await;
    assert_eq!(at_openai.len(), 4);
    for headers in &at_openai {
        let auth = headers.iter().find(|(name, _)| name == "authorization");
        assert_eq!(
            auth.map(|(_, value)| value.as_str()),
            Some(&*format!("Bearer {OPENAI_KEY}"))
        );
    }
    // In its own format (Responses), with neither the settings' key nor their header.
    let paths = openai.received_requests().await.unwrap_or_default();
    assert!(
        paths
            .iter()
            .all(|request| request.url.path() == "/v1/responses")
    );
    assert_never_received(&openai, &[OWN_KEY, OWN_HEADER, ANTHROPIC_KEY, GEMINI_KEY]).await;
}

#[tokio::test]
async fn the_custom_host_gets_its_own_key_and_never_a_built_in_one() {
    let custom = host().await;
    let openai = host().await;
    let env = environment(&openai);
    let options = endpoint(
        "myco/coder-large",
        ctxkit_llm::Api::OpenAiChat,
        format!("{}/v1", custom.uri()),
    );
    send(&options, &env, ModelRole::Agent).await;
    send(&options, &env, ModelRole::Compaction).await;
    let at_custom = received_headers(&custom).await;
    assert_eq!(at_custom.len(), 4);
    for headers in &at_custom {
        assert!(headers.contains(&("authorization".into(), format!("Bearer {OWN_KEY}"))));
        assert!(headers.contains(&("x-own-auth".into(), OWN_HEADER.into())));
    }
    assert_never_received(&custom, &[ANTHROPIC_KEY, OPENAI_KEY, GEMINI_KEY]).await;
    assert!(received_headers(&openai).await.is_empty());
}

#[tokio::test]
async fn a_gateway_for_one_built_in_provider_never_sees_another_ones_key() {
    let gateway = host().await;
    let openai = host().await;
    let env = environment(&openai);
    let mut options = endpoint(
        "anthropic/claude-sonnet-4-5",
        ctxkit_llm::Api::AnthropicMessages,
        gateway.uri(),
    );
    // The settings' provider's other model goes through its gateway, with the gateway's key.
    options.picked_model = Some("anthropic/claude-haiku-4-5".into());
    send(&options, &env, ModelRole::Agent).await;
    let at_gateway = received_headers(&gateway).await;
    assert_eq!(at_gateway.len(), 2);
    assert!(at_gateway[0].contains(&("x-api-key".into(), OWN_KEY.into())));
    // Another provider's model goes to its own host, without the gateway's key or header.
    options.picked_model = Some("openai/gpt-5-mini".into());
    send(&options, &env, ModelRole::Agent).await;
    assert_eq!(received_headers(&gateway).await.len(), 2);
    assert_eq!(received_headers(&openai).await.len(), 2);
    assert_never_received(&openai, &[OWN_KEY, OWN_HEADER, ANTHROPIC_KEY]).await;
    assert_never_received(&gateway, &[ANTHROPIC_KEY, OPENAI_KEY, GEMINI_KEY]).await;
}
