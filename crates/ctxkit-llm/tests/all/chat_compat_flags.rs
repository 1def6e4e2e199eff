//! Pi 1.6.0's Chat Completions `compat` flags of a user's model (`llm.models[].compat`), each as
//! the request a local server receives: the system prompt's role, the output limit's field,
//! `stream_options`, `store`, the reasoning fields of z.ai, Qwen and Qwen's chat template, and
//! the conversation's shape (tool results named, an assistant message between tool results and
//! the next user message, reasoning sent as text). Unset flags are detected as Pi detects them.

use ctxkit_llm::{ChatCompat, ChatDelta, MaxTokensField, ModelLimits, ThinkingFormat};
use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

use crate::chat::{request, user};
use crate::chat_streaming::{sse, stream_response};
use crate::common::{client_with, options, sent_bodies};

/// A user's model on a local server (provider `local`), reasoning, with `compat`.
fn local_model(compat: ChatCompat) -> ModelLimits {
    ModelLimits {
        provider: "local".into(),
        id: "qwen3".into(),
        context_window: 32_768,
        max_output: 4_096,
        reasoning: true,
        images: false,
        adaptive_thinking: false,
        xhigh_effort: None,
        chat_compat: compat,
    }
}

fn message(value: Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

/// A finished tool call with its reasoning, then the user's next prompt.
fn conversation() -> Vec<AgentMessage> {
    vec![
        user("list the files"),
        message(
            json!({"role": "assistant", "api": "openai-completions", "provider": "local",
            "model": "qwen3", "stopReason": "toolUse", "timestamp": 2, "content": [
                {"type": "thinking", "thinking": "Run ls.", "thinkingSignature": "reasoning_content"},
                {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}}]}),
        ),
        message(
            json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
            "content": [{"type": "text", "text": "a.rs"}], "isError": false, "timestamp": 3}),
        ),
        user("thanks"),
    ]
}

/// The body of the one streamed request sent for `model` at `reasoning`.
async fn sent_body(model: ModelLimits, reasoning: Option<&str>) -> Value {
    let server = MockServer::start().await;
    let done = sse(&[
        json!({"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}),
    ]);
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(stream_response(format!("{done}data: [DONE]\n\n")))
        .mount(&server)
        .await;
    let spec = format!("{}/{}", model.provider, model.id);
    let mut llm = options(&spec, &server);
    llm.api = Some(ctxkit_llm::Api::OpenAiChat);
    llm.models = vec![model];
    let mut chat = request(conversation());
    chat.max_tokens = Some(1_000);
    chat.reasoning = reasoning.map(|level| ctxkit_llm::ReasoningLevel::parse(level).unwrap());
    client_with(&llm)
        .chat_streaming(&chat, &CancellationToken::new(), &mut |_: ChatDelta| {})
        .await
        .unwrap();
    sent_bodies(&server).await.pop().unwrap()
}

/// The request's fields Pi's flags decide, beside the conversation.
fn request_fields(body: &Value) -> Value {
    let mut fields = body.as_object().unwrap().clone();
    for conversation_field in ["model", "messages", "tools", "stream"] {
        fields.remove(conversation_field);
    }
    Value::Object(fields)
}

#[tokio::test]
async fn each_request_flag_changes_the_body_as_pis() {
    let usage = json!({"include_usage": true});
    let cases: Vec<(&str, ChatCompat, Value)> = vec![
        (
            "no flags: a local server's detected defaults",
            ChatCompat::default(),
            json!({"max_tokens": 1000, "stream_options": usage, "reasoning_effort": "high"}),
        ),
        (
            "maxTokensField",
            ChatCompat {
                max_tokens_field: Some(MaxTokensField::MaxCompletionTokens),
                ..ChatCompat::default()
            },
            json!({"max_completion_tokens": 1000, "stream_options": usage,
                "reasoning_effort": "high"}),
        ),
        (
            "supportsUsageInStreaming: false",
            ChatCompat {
                supports_usage_in_streaming: Some(false),
                ..ChatCompat::default()
            },
            json!({"max_tokens": 1000, "reasoning_effort": "high"}),
        ),
        (
            "supportsStore",
            ChatCompat {
                supports_store: Some(true),
                ..ChatCompat::default()
            },
            json!({"max_tokens": 1000, "stream_options": usage, "store": false,
                "reasoning_effort": "high"}),
        ),
        (
            "supportsReasoningEffort: false",
            ChatCompat {
                supports_reasoning_effort: Some(false),
                ..ChatCompat::default()
            },
            json!({"max_tokens": 1000, "stream_options": usage}),
        ),
        (
            "thinkingFormat zai",
            ChatCompat {
                thinking_format: Some(ThinkingFormat::Zai),
                ..ChatCompat::default()
            },
            json!({"max_tokens": 1000, "stream_options": usage, "reasoning_effort": "high",
                "thinking": {"type": "enabled", "clear_thinking": false}}),
        ),
        (
            "thinkingFormat qwen",
            ChatCompat {
                thinking_format: Some(ThinkingFormat::Qwen),
                ..ChatCompat::default()
            },
            json!({"max_tokens": 1000, "stream_options": usage, "reasoning_effort": "high",
                "enable_thinking": true}),
        ),
        (
            "thinkingFormat qwen-chat-template",
            ChatCompat {
                thinking_format: Some(ThinkingFormat::QwenChatTemplate),
                ..ChatCompat::default()
            },
            json!({"max_tokens": 1000, "stream_options": usage,
                "chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true}}),
        ),
    ];
    for (name, compat, expected) in cases {
        let body = sent_body(local_model(compat), Some("high")).await;
        assert_eq!(request_fields(&body), expected, "{name}");
        assert_eq!(body["messages"][0]["role"], "system", "{name}");
    }
}

/// At `off`, z.ai's and Qwen's formats turn reasoning off explicitly.
#[tokio::test]
async fn thinking_formats_turn_reasoning_off() {
    let cases = [
        (
            ThinkingFormat::Zai,
            json!({"thinking": {"type": "disabled"}}),
        ),
        (ThinkingFormat::Qwen, json!({"enable_thinking": false})),
        (
            ThinkingFormat::QwenChatTemplate,
            json!({"chat_template_kwargs": {"enable_thinking": false, "preserve_thinking": true}}),
        ),
    ];
    for (format, expected) in cases {
        let compat = ChatCompat {
            thinking_format: Some(format),
            supports_usage_in_streaming: Some(false),
            ..ChatCompat::default()
        };
        let mut fields = request_fields(&sent_body(local_model(compat), None).await);
        fields.as_object_mut().unwrap().remove("max_tokens");
        assert_eq!(fields, expected, "{format:?}");
    }
}

/// `supportsDeveloperRole` sends a reasoning model's system prompt as `developer`; a model that
/// does not reason keeps `system`, as Pi's.
#[tokio::test]
async fn the_developer_role_is_for_a_reasoning_model_that_supports_it() {
    let developer = ChatCompat {
        supports_developer_role: Some(true),
        ..ChatCompat::default()
    };
    let body = sent_body(local_model(developer.clone()), None).await;
    assert_eq!(
        body["messages"][0],
        json!({"role": "developer", "content": "You are a coding agent."})
    );
    let mut plain = local_model(developer);
    plain.reasoning = false;
    let body = sent_body(plain, None).await;
    assert_eq!(body["messages"][0]["role"], "system");
}

/// The conversation flags: the tool result named, an assistant message between it and the next
/// user message (and `""` for a reply without text), the reasoning sent as the reply's first text.
#[tokio::test]
async fn the_conversation_flags_shape_the_messages_as_pis() {
    let without = sent_body(local_model(ChatCompat::default()), None).await;
    assert_eq!(
        without["messages"].as_array().unwrap()[1..],
        [
            json!({"role": "user", "content": "list the files"}),
            json!({"role": "assistant", "content": null, "reasoning_content": "Run ls.",
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}),
            json!({"role": "tool", "tool_call_id": "call_1", "content": "a.rs"}),
            json!({"role": "user", "content": "thanks"}),
        ]
    );
    let compat = ChatCompat {
        requires_tool_result_name: Some(true),
        requires_assistant_after_tool_result: Some(true),
        requires_thinking_as_text: Some(true),
        ..ChatCompat::default()
    };
    let with = sent_body(local_model(compat), None).await;
    assert_eq!(
        with["messages"].as_array().unwrap()[1..],
        [
            json!({"role": "user", "content": "list the files"}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "Run ls."}],
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}),
            json!({"role": "tool", "tool_call_id": "call_1", "content": "a.rs", "name": "bash"}),
            json!({"role": "assistant", "content": "I have processed the tool results."}),
            json!({"role": "user", "content": "thanks"}),
        ]
    );
}

/// A user's entry for a built-in model keeps the table's flags it does not set: Groq's Qwen3
/// still sends `high` as `default`, and the user's `supportsStore` is added.
#[tokio::test]
async fn a_users_flags_go_over_the_built_in_tables() {
    let mut model = local_model(ChatCompat {
        supports_store: Some(true),
        supports_usage_in_streaming: Some(false),
        ..ChatCompat::default()
    });
    model.provider = "groq".into();
    model.id = "qwen/qwen3.6-27b".into();
    let body = sent_body(model, Some("high")).await;
    assert_eq!(
        request_fields(&body),
        json!({"max_tokens": 1000, "store": false, "reasoning_effort": "default"})
    );
}
