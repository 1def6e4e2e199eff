//! Gemini thinking against a mock `generateContent` server, as Pi 1.6.0 asks for it: Gemini 3
//! and later get `thinkingLevel` (clamped to the levels the catalog says the model takes, upwards
//! first; `HIGH` at most), with `maxOutputTokens` as asked, and the lowest level they take when
//! thinking is off (they cannot turn it off, and would think at `HIGH`); Gemini 2.5 keeps its
//! token budget.

use ctxkit_llm::ReasoningLevel;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{client, sent_bodies};

async fn server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 2,
                              "totalTokenCount": 14}
        })))
        .mount(&server)
        .await;
    server
}

/// The `generationConfig` of a chat request to `model` at `level`, asking 4,000 output tokens.
async fn generation(model: &str, level: Option<ReasoningLevel>) -> Value {
    let server = server().await;
    let mut chat_request = request(vec![user("hi")]);
    chat_request.reasoning = level;
    chat_request.max_tokens = Some(4_000);
    client(&format!("google/{model}"), &server)
        .chat(&chat_request, &CancellationToken::new())
        .await
        .unwrap();
    let body = sent_bodies(&server).await.pop().unwrap();
    body["generationConfig"].clone()
}

#[tokio::test]
async fn gemini_three_gets_a_level_the_model_takes() {
    for (model, level, sent) in [
        ("gemini-3-flash-preview", ReasoningLevel::Minimal, "MINIMAL"),
        ("gemini-3-flash-preview", ReasoningLevel::Medium, "MEDIUM"),
        ("gemini-3-flash-preview", ReasoningLevel::XHigh, "HIGH"),
        // 3.1 Pro takes no `minimal`: the level goes up to `low`.
        ("gemini-3.1-pro-preview", ReasoningLevel::Minimal, "LOW"),
        ("gemini-3.1-pro-preview", ReasoningLevel::High, "HIGH"),
        ("gemini-3.1-flash-lite", ReasoningLevel::Low, "LOW"),
        // Gemma 4 takes minimal and high only.
        ("gemma-4-31b-it", ReasoningLevel::Low, "HIGH"),
    ] {
        assert_eq!(
            generation(model, Some(level)).await,
            json!({"maxOutputTokens": 4_000,
                   "thinkingConfig": {"thinkingLevel": sent, "includeThoughts": true}}),
            "{model} at {level:?}"
        );
    }
}

#[tokio::test]
async fn thinking_off_asks_gemini_three_for_its_lowest_level() {
    assert_eq!(
        generation("gemini-3-flash-preview", None).await,
        json!({"maxOutputTokens": 4_000, "thinkingConfig": {"thinkingLevel": "MINIMAL"}})
    );
    assert_eq!(
        generation("gemini-3.1-pro-preview", None).await,
        json!({"maxOutputTokens": 4_000, "thinkingConfig": {"thinkingLevel": "LOW"}})
    );
}

#[tokio::test]
async fn gemini_two_point_five_keeps_its_budget() {
    let sent = generation("gemini-2.5-flash", Some(ReasoningLevel::Low)).await;
    assert_eq!(sent["thinkingConfig"]["thinkingBudget"], 2048, "{sent}");
    assert!(
        sent["thinkingConfig"].get("thinkingLevel").is_none(),
        "{sent}"
    );
    let off = generation("gemini-2.5-flash", None).await;
    assert!(off.get("thinkingConfig").is_none(), "{off}");
}
