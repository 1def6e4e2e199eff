//! The reasoning fields of Chat Completions requests, field for field as Pi 1.6.0 sends them, and
//! DeepSeek's rule that every tool-call reply carries its `reasoning_content`.

use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};

use crate::chat::ChatRequest;
use crate::config::{EnvSettings, LlmOptions, ModelRole, ProviderConfig, resolve_model};
use crate::models::{Api, ModelLimits};
use crate::wire::ReasoningLevel;

fn resolved(options: LlmOptions) -> ProviderConfig {
    resolve_model(&options, &EnvSettings::default(), ModelRole::Agent)
        .unwrap()
        .unwrap()
}

fn builtin(spec: &str) -> ProviderConfig {
    resolved(LlmOptions {
        model: Some(spec.to_owned()),
        api_key: Some(ctxkit_secrets::ApiKey::new("sk-test")),
        ..LlmOptions::default()
    })
}

/// The repro's DeepSeek: a provider of the user's, declared reasoning, at DeepSeek's host.
fn deepseek() -> ProviderConfig {
    resolved(LlmOptions {
        model: Some("deepseek/deepseek-v4-pro".to_owned()),
        api: Some(Api::OpenAiChat),
        base_url: Some("https://api.deepseek.com".to_owned()),
        api_key: Some(ctxkit_secrets::ApiKey::new("sk-test")),
        models: vec![ModelLimits {
            provider: "deepseek".into(),
            id: "deepseek-v4-pro".into(),
            context_window: 131_072,
            max_output: 8_192,
            reasoning: true,
            images: false,
            adaptive_thinking: false,
            xhigh_effort: None,
            chat_compat: Default::default(),
        }],
        ..LlmOptions::default()
    })
}

fn request(messages: Vec<AgentMessage>, reasoning: Option<ReasoningLevel>) -> ChatRequest {
    ChatRequest {
        system_prompt: "You are a coding agent.".into(),
        messages,
        tools: Vec::new(),
        max_tokens: Some(1024),
        reasoning,
        cache_retention: None,
        projected_input_tokens: None,
        cache: ctxkit_summarizer::CacheHints::default(),
    }
}

/// The request's reasoning fields: every field but the conversation's and the output limit's.
fn reasoning_fields(config: &ProviderConfig, level: Option<ReasoningLevel>) -> Value {
    let wire = crate::wire::openai_chat_tools::build(config, &request(Vec::new(), level));
    let mut body = wire.body.as_object().unwrap().clone();
    for field in [
        "model",
        "messages",
        "stream",
        "max_tokens",
        "max_completion_tokens",
    ] {
        body.remove(field);
    }
    Value::Object(body)
}

/// Pi 1.6.0's request at `off`, `low` and `high` (the level as the CLI clamps it to the model's
/// levels: Qwen3 and Magistral take `off` and `high` only, so `low` asks `high`).
#[test]
fn each_format_and_level_map_is_sent_as_pis() {
    let high = Some(ReasoningLevel::High);
    let low = Some(ReasoningLevel::Low);
    let cases: [(&str, Option<ReasoningLevel>, Value); 9] = [
        (
            "groq/qwen/qwen3.6-27b",
            None,
            json!({"reasoning_effort": "none"}),
        ),
        (
            "groq/qwen/qwen3.6-27b",
            high,
            json!({"reasoning_effort": "default"}),
        ),
        (
            "groq/qwen/qwen3.6-27b",
            high,
            json!({"reasoning_effort": "default"}),
        ),
        (
            "mistral/magistral-medium-latest",
            None,
            json!({"reasoning_effort": "none"}),
        ),
        (
            "mistral/magistral-medium-latest",
            high,
            json!({"reasoning_effort": "high"}),
        ),
        (
            "openrouter/deepseek/deepseek-v3.2",
            None,
            json!({"reasoning": {"effort": "none"}}),
        ),
        (
            "openrouter/deepseek/deepseek-v3.2",
            low,
            json!({"reasoning": {"effort": "low"}}),
        ),
        (
            "openrouter/deepseek/deepseek-v3.2",
            high,
            json!({"reasoning": {"effort": "high"}}),
        ),
        // A model whose map has no `off` value is sent nothing at off, as before.
        ("groq/openai/gpt-oss-120b", None, json!({})),
    ];
    for (spec, level, expected) in cases {
        assert_eq!(
            reasoning_fields(&builtin(spec), level),
            expected,
            "{spec} {level:?}"
        );
    }
    let deepseek = deepseek();
    assert_eq!(
        reasoning_fields(&deepseek, high),
        json!({"thinking": {"type": "enabled"}, "reasoning_effort": "high"})
    );
    assert_eq!(
        reasoning_fields(&deepseek, None),
        json!({"thinking": {"type": "disabled"}})
    );
}

fn message(value: Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

/// A DeepSeek reply: its reasoning (signed with the field it came in) and a call, or an answer.
fn reply(reasoning: Option<&str>, call: Option<&str>, text: &str) -> AgentMessage {
    let mut content = Vec::new();
    if let Some(reasoning) = reasoning {
        content.push(json!({"type": "thinking", "thinking": reasoning,
            "thinkingSignature": "reasoning_content"}));
    }
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    if let Some(id) = call {
        content.push(json!({"type": "toolCall", "id": id, "name": "read",
            "arguments": {"path": format!("{id}.txt")}}));
    }
    message(
        json!({"role": "assistant", "content": content, "api": "openai-completions",
        "provider": "deepseek", "model": "deepseek-v4-pro",
        "stopReason": if call.is_some() { "toolUse" } else { "stop" }, "timestamp": 2}),
    )
}

fn result(id: &str) -> AgentMessage {
    message(
        json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
        "content": [{"type": "text", "text": "file text"}], "isError": false, "timestamp": 3}),
    )
}

fn user(text: &str) -> AgentMessage {
    message(json!({"role": "user", "content": text, "timestamp": 1}))
}

/// DeepSeek's rule, as its API enforces it: the index of the first assistant message with tool
/// calls that lacks `reasoning_content` ("The reasoning_content in the thinking mode must be
/// passed back to the API").
fn refused_at(body: &Value) -> Option<usize> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .position(|message| {
            message["role"] == "assistant"
                && message.get("tool_calls").is_some()
                && message.get("reasoning_content").is_none()
        })
}

/// Two finished turns whose replies' reasoning the view dropped (`dropOldThinking`), then a tool
/// loop of six calls in progress: every request of the loop is one DeepSeek accepts, the earlier
/// turns' replies carrying an empty `reasoning_content` and the loop's their own.
#[test]
fn deepseek_gets_reasoning_content_on_every_reply_of_a_long_session() {
    let config = deepseek();
    let mut messages = Vec::new();
    for turn in 0..2 {
        messages.push(user(&format!("task {turn}")));
        for step in 0..3 {
            let id = format!("old_{turn}_{step}");
            messages.push(reply(None, Some(&id), ""));
            messages.push(result(&id));
        }
        messages.push(reply(None, None, "done"));
    }
    messages.push(user("read six files"));
    for step in 0..6 {
        let id = format!("call_{step}");
        messages.push(reply(Some(&format!("I need {id}.txt.")), Some(&id), ""));
        messages.push(result(&id));
        let wire = crate::wire::openai_chat_tools::build(
            &config,
            &request(messages.clone(), Some(ReasoningLevel::High)),
        );
        assert_eq!(refused_at(&wire.body), None, "request {step}");
        let assistants: Vec<&Value> = wire.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|message| message["role"] == "assistant")
            .collect();
        assert_eq!(assistants[0]["reasoning_content"], "");
        assert_eq!(assistants[3]["reasoning_content"], "");
        assert_eq!(
            assistants.last().unwrap()["reasoning_content"],
            format!("I need {id}.txt.")
        );
    }
}

/// Only the servers that require it get the empty field: vLLM's request is unchanged.
#[test]
fn other_servers_get_no_empty_reasoning_content() {
    let config = builtin("vllm/qwen3-coder");
    let messages = vec![user("task"), reply(None, Some("c1"), ""), result("c1")];
    let wire = crate::wire::openai_chat_tools::build(&config, &request(messages, None));
    assert_eq!(refused_at(&wire.body), Some(2));
}
