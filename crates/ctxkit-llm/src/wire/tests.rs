//! Request shapes per API and reasoning level; response parsing is covered end to end in
//! `tests/all`.

use super::*;
use crate::models::ModelLimits;
use crate::wire::test_support::config;

fn request(reasoning: Option<ReasoningLevel>) -> CompletionRequest {
    CompletionRequest {
        system_prompt: "sys".into(),
        user_text: "hi".into(),
        max_tokens: 1000,
        reasoning,
    }
}

#[test]
fn reasoning_levels_parse() {
    assert_eq!(ReasoningLevel::parse("xhigh"), Some(ReasoningLevel::XHigh));
    // Pi 1.6's highest level: a session it wrote at `max` was talked to without reasoning.
    assert_eq!(ReasoningLevel::parse("max"), Some(ReasoningLevel::XHigh));
    assert_eq!(ReasoningLevel::parse("off"), None);
}

#[test]
fn anthropic_thinking_adds_its_budget_to_max_tokens() {
    let config = config("anthropic/claude-sonnet-4-5");
    let wire = build(&config, &request(Some(ReasoningLevel::Medium)));
    assert_eq!(wire.body["max_tokens"], 9192);
    assert_eq!(wire.body["thinking"]["budget_tokens"], 8192);
    assert!(
        build(&config, &request(None))
            .body
            .get("thinking")
            .is_none()
    );
}

#[test]
fn thinking_budgets_replace_the_defaults_of_the_levels_they_name() {
    let budgets = crate::config::ThinkingBudgets {
        medium: Some(4000),
        high: Some(30_000),
        ..Default::default()
    };
    let mut anthropic = config("anthropic/claude-sonnet-4-5");
    anthropic.thinking_budgets = budgets;
    let wire = build(&anthropic, &request(Some(ReasoningLevel::Medium)));
    assert_eq!(wire.body["thinking"]["budget_tokens"], 4000);
    assert_eq!(wire.body["max_tokens"], 5000);
    let wire = build(&anthropic, &request(Some(ReasoningLevel::Low)));
    assert_eq!(
        wire.body["thinking"]["budget_tokens"], 2048,
        "not set: the default"
    );
    let wire = build(&anthropic, &request(Some(ReasoningLevel::XHigh)));
    assert_eq!(
        wire.body["thinking"]["budget_tokens"], 30_000,
        "xhigh takes high's"
    );
    let mut gemini = config("google/gemini-2.5-flash");
    gemini.thinking_budgets = budgets;
    let wire = build(&gemini, &request(Some(ReasoningLevel::High)));
    assert_eq!(
        wire.body["generationConfig"]["thinkingConfig"]["thinkingBudget"],
        30_000
    );
}

#[test]
fn budgets_shrink_under_the_model_cap() {
    let mut config = config("anthropic/claude-3-5-haiku-latest");
    config.model_info = Some(ModelLimits {
        provider: "anthropic".into(),
        id: "x".into(),
        context_window: 200_000,
        max_output: 8_192,
        reasoning: true,
        images: true,
        adaptive_thinking: false,
        xhigh_effort: None,
        chat_compat: Default::default(),
    });
    let wire = build(&config, &request(Some(ReasoningLevel::High)));
    assert_eq!(wire.body["max_tokens"], 8192);
    assert_eq!(wire.body["thinking"]["budget_tokens"], 7168);
}

#[test]
fn openai_apis_send_effort_and_gemini_a_thinking_budget() {
    let chat = build(
        &config("groq/openai/gpt-oss-120b"),
        &request(Some(ReasoningLevel::XHigh)),
    );
    assert_eq!(chat.body["reasoning_effort"], "high");
    assert_eq!(chat.body["max_tokens"], 1000);
    let responses = build(&config("openai/gpt-5"), &request(Some(ReasoningLevel::Low)));
    assert_eq!(responses.body["reasoning"]["effort"], "low");
    let gemini = build(
        &config("google/gemini-2.5-flash"),
        &request(Some(ReasoningLevel::Low)),
    );
    assert_eq!(
        gemini.body["generationConfig"]["thinkingConfig"]["thinkingBudget"],
        2048
    );
    assert_eq!(gemini.body["generationConfig"]["maxOutputTokens"], 3048);
}

#[test]
fn a_reply_reads_as_its_text_blocks_with_its_usage_and_stop_reason() {
    let reply: AssistantMessage = serde_json::from_value(serde_json::json!({
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hidden"},
            {"type": "text", "text": "## Goal"},
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}},
            {"type": "text", "text": "Fix the parser."}
        ],
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "length",
        "timestamp": 0
    }))
    .unwrap();
    let completion = Completion::from_reply(&reply);
    assert_eq!(completion.text, "## Goal\nFix the parser.");
    assert_eq!(completion.usage.output, 5);
    assert_eq!(completion.stop_reason, StopReason::Length);

    let mut unstated = reply;
    unstated.stop_reason = None;
    unstated.usage = None;
    let completion = Completion::from_reply(&unstated);
    assert_eq!(completion.stop_reason, StopReason::Stop);
    assert_eq!(completion.usage, Usage::default());
}
