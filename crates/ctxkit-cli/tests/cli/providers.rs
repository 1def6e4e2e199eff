//! `compact` with a configured provider, against a local mock server speaking the OpenAI Responses
//! wire format (the `openai` provider's API): the summary comes from the model, and a provider error leaves the session
//! untouched with a one-line error naming the provider and status.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::Run;

pub(crate) fn reply(text: &str) -> serde_json::Value {
    json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4o-mini",
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": 1200, "output_tokens": 80, "total_tokens": 1280}
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn compact_uses_the_configured_model() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(reply("## Goal\n- summary from the mock model")),
        )
        .mount(&server)
        .await;
    let run = Run::new();
    let file = run.copy("good-large-realistic.jsonl");
    let base = format!("{}/v1", server.uri());
    let variables = [
        ("OPENAI_API_KEY", "test-key-123"),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let output = tokio::task::block_in_place(|| {
        run.ctxkit_with_env(
            &[
                "compact",
                file.to_str().unwrap(),
                "--keep-recent-tokens",
                "2000",
                "--model",
                "openai/gpt-4o-mini",
                "--json",
            ],
            &variables,
        )
    });
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains("Summarizing with openai/gpt-4o-mini"),
        "{output}"
    );
    assert!(output.contains("summary from the mock model"));
    assert!(!output.contains("test-key-123"), "the key never shows");
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let body: serde_json::Value = serde_json::from_slice(&requests[0].body).unwrap();
    let sent = body.to_string();
    assert!(sent.contains("<conversation>"), "{sent}");
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        "Bearer test-key-123"
    );
    let stored = std::fs::read_to_string(&file).unwrap();
    assert!(
        stored.contains("\"summarizer\":\"openai/gpt-4o-mini\""),
        "details record the summarizer"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_error_changes_nothing() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "code": "invalid_api_key"}
        })))
        .mount(&server)
        .await;
    let run = Run::new();
    let file = run.copy("good-large-realistic.jsonl");
    let before = std::fs::read(&file).unwrap();
    let base = format!("{}/v1", server.uri());
    let variables = [
        ("OPENAI_API_KEY", "wrong-key"),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let output = tokio::task::block_in_place(|| {
        run.ctxkit_with_env(
            &[
                "compact",
                file.to_str().unwrap(),
                "--keep-recent-tokens",
                "2000",
                "--model",
                "openai/gpt-4o-mini",
            ],
            &variables,
        )
    });
    assert!(output.starts_with("exit: 7"), "{output}");
    let error_line = output
        .lines()
        .find(|line| line.starts_with("error:"))
        .unwrap();
    assert!(
        error_line.contains("openai") && error_line.contains("401"),
        "{error_line}"
    );
    assert!(output.contains("hint: the session was not changed"));
    assert!(!output.contains("wrong-key"));
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing appended");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_provider_is_configured_by_settings() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .and(wiremock::matchers::header("x-team", "docs"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(reply("## Goal\n- configured by settings")),
        )
        .mount(&server)
        .await;
    let run = Run::new();
    let file = run.copy("good-large-realistic.jsonl");
    let base = format!("{}/v1", server.uri());
    let models = r#"[{"provider": "openai", "id": "team-model", "contextWindow": 64000, "maxOutput": 4000}]"#;
    for (key, value) in [
        ("compaction.model", "openai/team-model"),
        ("llm.baseUrl", base.as_str()),
        ("llm.headers", r#"{"x-team": "docs"}"#),
        ("llm.models", models),
        ("retry.enabled", "false"),
    ] {
        let output = run.ctxkit(&["config", "set", key, value]);
        assert!(output.starts_with("exit: 0"), "{key}: {output}");
    }
    let output = tokio::task::block_in_place(|| {
        run.ctxkit_with_env(
            &[
                "compact",
                file.to_str().unwrap(),
                "--keep-recent-tokens",
                "2000",
            ],
            &[("OPENAI_API_KEY", "k")],
        )
    });
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains("Summarizing with openai/team-model"),
        "{output}"
    );
    assert!(output.contains("configured by settings"));
    let listed = run.ctxkit(&["models"]);
    assert!(
        listed.contains("openai/team-model") && listed.contains("64000"),
        "{listed}"
    );
    let invalid = run.ctxkit(&["config", "set", "llm.models", r#"[{"id": 1}]"#]);
    assert!(
        !invalid.starts_with("exit: 0"),
        "invalid models are refused: {invalid}"
    );
}
