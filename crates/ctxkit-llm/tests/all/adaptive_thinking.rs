//! Anthropic thinking against a mock Messages server, as Pi 1.6.0 asks for it: the models its
//! catalog marks `forceAdaptiveThinking` (Claude Opus 4.6 and later, Sonnet 4.6 and later, every
//! 5-series model) get `thinking: {type: adaptive, display: summarized}` with the level as
//! `output_config.effort` and `max_tokens` as it is; older models keep a thinking budget. Chat and
//! summary requests take the same path.

use ctxkit_llm::{LlmOptions, ModelLimits, ReasoningLevel};
use ctxkit_summarizer::Summarizer;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::chat::{request, user};
use crate::common::{client_with, options, sent_bodies};

async fn server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "content": [{"type": "text", "text": "Done."}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 5}
        })))
        .mount(&server)
        .await;
    server
}

/// The body of a chat request to `model` at `level`, asking for 4,000 output tokens.
async fn chat_body(
    settings: &LlmOptions,
    level: Option<ReasoningLevel>,
    server: &MockServer,
) -> Value {
    let mut chat_request = request(vec![user("hi")]);
    chat_request.reasoning = level;
    chat_request.max_tokens = Some(4_000);
    client_with(settings)
        .chat(&chat_request, &CancellationToken::new())
        .await
        .unwrap();
    sent_bodies(server).await.pop().unwrap()
}

fn thinking_of(body: &Value) -> (Value, Value, Value) {
    (
        body["thinking"].clone(),
        body["output_config"].clone(),
        body["max_tokens"].clone(),
    )
}

#[tokio::test]
async fn adaptive_models_get_adaptive_thinking_at_each_levels_effort() {
    let server = server().await;
    let adaptive = json!({"type": "adaptive", "display": "summarized"});
    for (model, level, effort) in [
        ("claude-opus-4-7", ReasoningLevel::Minimal, "low"),
        ("claude-opus-4-7", ReasoningLevel::Low, "low"),
        ("claude-opus-4-7", ReasoningLevel::Medium, "medium"),
        ("claude-opus-4-7", ReasoningLevel::High, "high"),
        ("claude-opus-4-7", ReasoningLevel::XHigh, "xhigh"),
        ("claude-opus-5-5", ReasoningLevel::High, "high"),
        ("claude-opus-5-5", ReasoningLevel::XHigh, "xhigh"),
        // Sonnet 4.6 has no `xhigh` effort; Pi clamps the level up to `max`.
        ("claude-sonnet-4-6", ReasoningLevel::XHigh, "max"),
        ("claude-sonnet-4-6", ReasoningLevel::Medium, "medium"),
        ("claude-opus-4-6", ReasoningLevel::XHigh, "max"),
    ] {
        let settings = options(&format!("anthropic/{model}"), &server);
        let body = chat_body(&settings, Some(level), &server).await;
        assert_eq!(
            thinking_of(&body),
            (adaptive.clone(), json!({"effort": effort}), json!(4_000)),
            "{model} at {level:?}"
        );
    }
    // Thinking off: neither field.
    let settings = options("anthropic/claude-opus-4-7", &server);
    let body = chat_body(&settings, None, &server).await;
    assert_eq!(thinking_of(&body), (Value::Null, Value::Null, json!(4_000)));
}

#[tokio::test]
async fn older_models_keep_a_thinking_budget() {
    let server = server().await;
    for (model, level, budget) in [
        ("claude-sonnet-4-5", ReasoningLevel::High, 16_384),
        ("claude-opus-4-5", ReasoningLevel::Low, 2_048),
        ("claude-haiku-4-5", ReasoningLevel::Minimal, 1_024),
    ] {
        let settings = options(&format!("anthropic/{model}"), &server);
        let body = chat_body(&settings, Some(level), &server).await;
        assert_eq!(
            thinking_of(&body),
            (
                json!({"type": "enabled", "budget_tokens": budget}),
                Value::Null,
                json!(4_000 + budget)
            ),
            "{model} at {level:?}"
        );
    }
}

#[tokio::test]
async fn summaries_of_an_adaptive_model_ask_for_adaptive_thinking() {
    let server = server().await;
    let client = client_with(&options("anthropic/claude-opus-5-5", &server));
    client
        .summarize(
            crate::common::request(Some("medium")),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let body = sent_bodies(&server).await.pop().unwrap();
    assert_eq!(
        thinking_of(&body),
        (
            json!({"type": "adaptive", "display": "summarized"}),
            json!({"effort": "medium"}),
            json!(1_000)
        )
    );
}

/// A model of the user's (`llm.models[].compat.forceAdaptiveThinking`) is asked as the built-in
/// adaptive models are; without the flag, with a budget.
#[tokio::test]
async fn a_users_model_marked_adaptive_gets_adaptive_thinking() {
    let server = server().await;
    let user_model = |adaptive_thinking: bool| ModelLimits {
        provider: "anthropic".into(),
        id: "claude-next".into(),
        context_window: 200_000,
        max_output: 64_000,
        reasoning: true,
        images: true,
        adaptive_thinking,
        xhigh_effort: None,
        chat_compat: Default::default(),
    };
    let mut settings = options("anthropic/claude-next", &server);
    settings.models.push(user_model(true));
    let body = chat_body(&settings, Some(ReasoningLevel::XHigh), &server).await;
    assert_eq!(
        thinking_of(&body),
        (
            json!({"type": "adaptive", "display": "summarized"}),
            json!({"effort": "high"}),
            json!(4_000)
        )
    );
    settings.models = vec![user_model(false)];
    let body = chat_body(&settings, Some(ReasoningLevel::Low), &server).await;
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2_048})
    );
}
