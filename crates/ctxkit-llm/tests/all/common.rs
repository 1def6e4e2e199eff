//! Shared setup: a resolved model pointed at the mock server, fast retries.

use std::time::Duration;

use ctxkit_llm::{EnvSettings, LlmOptions, ModelClient, ModelRole, RetryPolicy, resolve_model};
use ctxkit_secrets::ApiKey;
use ctxkit_summarizer::{SummaryPurpose, SummaryRequest};
use wiremock::MockServer;

pub const KEY: &str = "sk-test-SECRET-0123";

pub fn options(model: &str, server: &MockServer) -> LlmOptions {
    LlmOptions {
        model: Some(model.to_owned()),
        base_url: Some(server.uri()),
        api_key: Some(ApiKey::new(KEY)),
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(5),
            max_agent_delay: Duration::from_secs(5),
            max_delay: Some(Duration::from_secs(5)),
            restart_broken_replies: true,
        },
        timeout: Some(Duration::from_secs(5)),
        ..LlmOptions::default()
    }
}

pub fn client_with(options: &LlmOptions) -> ModelClient {
    let config = resolve_model(options, &EnvSettings::default(), ModelRole::Agent)
        .unwrap()
        .unwrap();
    ModelClient::new(config).unwrap()
}

pub fn client(model: &str, server: &MockServer) -> ModelClient {
    client_with(&options(model, server))
}

pub fn request(reasoning: Option<&str>) -> SummaryRequest {
    SummaryRequest {
        purpose: SummaryPurpose::History,
        system_prompt: "You summarize.".into(),
        user_text: "<conversation>hello</conversation>".into(),
        max_tokens: Some(1000),
        reasoning: reasoning.map(str::to_owned),
        source: ctxkit_summarizer::SummarySpan::default(),
    }
}

pub async fn sent_bodies(server: &MockServer) -> Vec<serde_json::Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|request| request.body_json().unwrap())
        .collect()
}

/// Cancels `cancel` once the mock has received a request: the cancel then meets a request in
/// flight (a fixed sleep before it could cancel before anything was sent on a loaded machine).
pub async fn cancel_once_received(
    server: &MockServer,
    cancel: &tokio_util::sync::CancellationToken,
) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while server
        .received_requests()
        .await
        .unwrap_or_default()
        .is_empty()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no request reached the mock"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cancel.cancel();
}

/// `text` with the duration of its attempts (`; tried 3 times over 0.4 s`) as `_`, which the
/// machine's load decides.
pub fn without_duration(text: &str) -> String {
    match text.split_once(" times over ") {
        Some((before, after)) => {
            let unit = after.find(" s").unwrap_or(after.len());
            format!("{before} times over _{}", &after[unit..])
        }
        None => text.to_owned(),
    }
}
