//! The conversation request shape and reply parsing of Chat Completions with tools.

use ctxkit_protocol::{AgentMessage, ContentBlock};
use ctxkit_summarizer::ToolDefinition;
use serde_json::json;

use super::*;

use crate::chat::ChatRequest;
use crate::config::{EnvSettings, LlmOptions, ModelRole, resolve_model};
use crate::wire::conversation::NO_RESULT;

fn config() -> ProviderConfig {
    let options = LlmOptions {
        model: Some("vllm/qwen3-coder".to_owned()),
        ..LlmOptions::default()
    };
    resolve_model(&options, &EnvSettings::default(), ModelRole::Agent)
        .unwrap()
        .unwrap()
}

/// A model `llm.models` declares with `input: ["text", "image"]`.
fn vision_config() -> ProviderConfig {
    model_taking_images(true)
}

fn model_taking_images(images: bool) -> ProviderConfig {
    let mut config = config();
    config.model_info = Some(crate::ModelLimits {
        provider: "vllm".into(),
        id: "qwen3-coder".into(),
        context_window: 100_000,
        max_output: 4_096,
        reasoning: false,
        images,
        adaptive_thinking: false,
        xhigh_effort: None,
        chat_compat: Default::default(),
    });
    config
}

fn message(value: serde_json::Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

fn request(messages: Vec<AgentMessage>) -> ChatRequest {
    ChatRequest {
        system_prompt: "You are a coding agent.".into(),
        messages,
        tools: vec![ToolDefinition {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
        max_tokens: Some(4096),
        reasoning: None,
        cache_retention: None,
        cache: ctxkit_summarizer::CacheHints::default(),
        projected_input_tokens: None,
    }
}

#[test]
fn a_conversation_with_tool_calls_maps_to_tool_messages() {
    let wire = build(
        &config(),
        &request(vec![
            message(json!({"role": "user", "content": "show main.rs", "timestamp": 1})),
            message(json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "let me look"},
                {"type": "text", "text": "Reading it."},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "main.rs"}}
            ], "stopReason": "toolUse", "timestamp": 2})),
            message(
                json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "read",
                "content": [{"type": "text", "text": "fn main() {}"}], "isError": false, "timestamp": 3}),
            ),
            message(
                json!({"role": "assistant", "content": [{"type": "text", "text": "It is empty."}],
                "stopReason": "stop", "timestamp": 4}),
            ),
        ]),
    );
    assert_eq!(wire.url, "http://localhost:8000/v1/chat/completions");
    assert_eq!(
        wire.body["messages"],
        json!([
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "show main.rs"},
            {"role": "assistant", "content": "Reading it.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"main.rs\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "fn main() {}"},
            {"role": "assistant", "content": "It is empty."},
        ])
    );
    assert_eq!(wire.body["tools"][0]["type"], "function");
    assert_eq!(wire.body["tools"][0]["function"]["name"], "read");
    assert_eq!(
        wire.body["tools"][0]["function"]["parameters"]["required"],
        json!(["path"])
    );
    assert_eq!(wire.body["max_tokens"], 4096);
    assert_eq!(wire.body["stream"], false);
}

#[test]
fn failed_replies_are_left_out_and_unanswered_calls_get_a_result() {
    let wire = build(
        &vision_config(),
        &request(vec![
            message(json!({"role": "user", "content": "go"})),
            message(json!({"role": "assistant", "content": [
                {"type": "toolCall", "id": "a", "name": "bash", "arguments": {"command": "ls"}},
                {"type": "toolCall", "id": "b", "name": "bash", "arguments": "{not json"}
            ], "stopReason": "toolUse"})),
            message(
                json!({"role": "toolResult", "toolCallId": "a", "toolName": "bash",
                "content": [{"type": "text", "text": "x"}]}),
            ),
            message(
                json!({"role": "toolResult", "toolCallId": "orphan", "toolName": "bash",
                "content": [{"type": "text", "text": "y"}]}),
            ),
            message(
                json!({"role": "assistant", "content": [], "stopReason": "error",
                "errorMessage": "400 too long"}),
            ),
            message(
                json!({"role": "user", "content": [{"type": "text", "text": "look"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
            ),
        ]),
    );
    let messages = wire.body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "tool", "user"]
    );
    assert_eq!(messages[2]["content"], serde_json::Value::Null);
    assert_eq!(
        messages[2]["tool_calls"][1]["function"]["arguments"],
        "{not json"
    );
    assert_eq!(messages[4]["tool_call_id"], "b");
    assert_eq!(messages[4]["content"], NO_RESULT);
    assert_eq!(messages[5]["content"][1]["type"], "image_url");
    assert_eq!(
        messages[5]["content"][1]["image_url"]["url"],
        "data:image/png;base64,AAAA"
    );
}

#[test]
fn a_reply_with_text_reasoning_and_tool_calls_is_read() {
    let reply = parse(&json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "qwen3-coder",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Let me check.", "reasoning_content": "thinking hard",
            "tool_calls": [
                {"id": "call_9", "type": "function", "function": {"name": "ls", "arguments": "{\"path\":\".\"}"}},
                {"id": "", "type": "function", "function": {"name": "grep", "arguments": ""}}
            ]}}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230,
                  "prompt_tokens_details": {"cached_tokens": 1000}}
    }))
    .unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("toolUse"));
    assert!(
        matches!(&reply.content[0], ContentBlock::Thinking(t) if t.thinking == "thinking hard")
    );
    assert!(matches!(&reply.content[1], ContentBlock::Text(t) if t.text == "Let me check."));
    let ContentBlock::ToolCall(first) = &reply.content[2] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!((first.id.as_str(), first.name.as_str()), ("call_9", "ls"));
    assert_eq!(first.arguments, json!({"path": "."}));
    let ContentBlock::ToolCall(second) = &reply.content[3] else {
        panic!("{:?}", reply.content)
    };
    assert_eq!(second.id, "call_1");
    assert_eq!(second.arguments, json!({}));
    let usage = reply.usage.unwrap();
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.total_tokens
        ),
        (200, 30, 1000, 1230)
    );
}

#[test]
fn finish_reasons_map_to_stop_reasons() {
    let reply = |finish: serde_json::Value, calls: serde_json::Value| {
        parse(&json!({"choices": [{"finish_reason": finish,
            "message": {"role": "assistant", "content": "x", "tool_calls": calls}}]}))
        .unwrap()
    };
    let stop = |finish, calls| reply(finish, calls).stop_reason.unwrap();
    assert_eq!(stop(json!("stop"), json!(null)), "stop");
    assert_eq!(stop(json!("length"), json!(null)), "length");
    let call = json!([{"id": "c", "function": {"name": "ls", "arguments": "{}"}}]);
    assert_eq!(stop(json!("stop"), call), "toolUse");
    let filtered = reply(json!("content_filter"), json!(null));
    assert_eq!(filtered.stop_reason.as_deref(), Some("error"));
    assert!(filtered.error_message.is_some());
    assert!(parse(&json!({"choices": []})).is_err());
    assert!(parse(&json!({"choices": [{"message": {"tool_calls": [{"id": "x"}]}}]})).is_err());
}

/// A `tool` message holds only text: the images `read` returned follow the run of tool results
/// in one user message, as Pi sends them; a result that is only an image says so.
#[test]
fn the_images_of_tool_results_follow_them_in_a_user_message() {
    let wire = build(
        &vision_config(),
        &request(vec![
            message(json!({"role": "user", "content": "look at both", "timestamp": 1})),
            message(json!({"role": "assistant", "content": [
                {"type": "toolCall", "id": "a", "name": "read", "arguments": {"path": "shot.png"}},
                {"type": "toolCall", "id": "b", "name": "read", "arguments": {"path": "logo.png"}}
            ], "stopReason": "toolUse", "timestamp": 2})),
            message(
                json!({"role": "toolResult", "toolCallId": "a", "toolName": "read",
                "content": [{"type": "text", "text": "Read image file [image/png]"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"}], "isError": false}),
            ),
            message(
                json!({"role": "toolResult", "toolCallId": "b", "toolName": "read",
                "content": [{"type": "image", "data": "BBBB", "mimeType": "image/jpeg"}], "isError": false}),
            ),
            message(json!({"role": "user", "content": "and?", "timestamp": 3})),
        ]),
    );
    let messages = wire.body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
            "user"
        ]
    );
    assert_eq!(messages[3]["content"], "Read image file [image/png]");
    assert_eq!(messages[4]["content"], "(see attached image)");
    assert_eq!(
        messages[5]["content"],
        json!([
            {"type": "text", "text": "Attached image(s) from tool result:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,BBBB"}}
        ])
    );
    assert_eq!(messages[6]["content"], "and?");
}

/// A model that takes text only (`llm.models[].input` without `image`, Pi's default for a model
/// the user adds, and a model nothing declares): a text-only server refused the whole request for
/// one image, and every later one with it. Each run of images is Pi 1.6.0's placeholder.
#[test]
fn a_text_only_model_is_sent_the_images_named_not_the_images() {
    for config in [model_taking_images(false), config()] {
        text_only_model_gets_placeholders(&config);
    }
}

fn text_only_model_gets_placeholders(config: &ProviderConfig) {
    let wire = build(
        config,
        &request(vec![
            message(
                json!({"role": "user", "content": [{"type": "text", "text": "look"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"}], "timestamp": 1}),
            ),
            message(json!({"role": "assistant", "content": [
                {"type": "toolCall", "id": "a", "name": "read", "arguments": {"path": "shot.png"}}
            ], "stopReason": "toolUse", "timestamp": 2})),
            message(
                json!({"role": "toolResult", "toolCallId": "a", "toolName": "read",
                "content": [{"type": "text", "text": "Read image file [image/png]"},
                {"type": "image", "data": "BBBB", "mimeType": "image/png"},
                {"type": "image", "data": "CCCC", "mimeType": "image/png"}], "isError": false}),
            ),
        ]),
    );
    let messages = wire.body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    let text = wire.body.to_string();
    assert!(
        !text.contains("AAAA") && !text.contains("BBBB") && !text.contains("CCCC"),
        "{text}"
    );
    assert_eq!(
        messages[1]["content"],
        "look\n(image omitted: model does not support images)"
    );
    assert_eq!(
        messages[3]["content"],
        "Read image file [image/png]\n(tool image omitted: model does not support images)"
    );
}

/// A Responses reply's call (`call_id|item id`, as Pi stores it) sent to Chat Completions: OpenAI
/// refuses an id over 40 characters ("string too long", QA r105), so the call and its result get
/// one id of at most 40 letters, digits, `_` and `-`, Pi 1.6.0's shape.
#[test]
fn a_responses_call_id_goes_to_chat_completions_normalised_in_its_call_and_result() {
    let stored = "call_f323f4b97f814505a1be2350|fc_3babd3d4daea4b289162f6acaa383379";
    let wire = build(
        &config(),
        &request(vec![
            message(json!({"role": "user", "content": "read it", "timestamp": 1})),
            message(
                json!({"role": "assistant", "provider": "openai", "api": "openai-responses",
                "model": "gpt-5-mini", "content": [
                {"type": "toolCall", "id": stored, "name": "read", "arguments": {"path": "a"}}
            ], "stopReason": "toolUse", "timestamp": 2}),
            ),
            message(
                json!({"role": "toolResult", "toolCallId": stored, "toolName": "read",
                "content": [{"type": "text", "text": "A"}], "isError": false, "timestamp": 3}),
            ),
        ]),
    );
    let messages = wire.body["messages"].as_array().unwrap();
    let call_id = messages[2]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(messages[3]["tool_call_id"], call_id);
    assert!(call_id.len() <= 40, "{call_id}");
    assert!(
        call_id.starts_with("call_f323f4b97f814505a1be2350_"),
        "{call_id}"
    );
    assert!(
        call_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "{call_id}"
    );
}

#[test]
fn chat_completions_ids_follow_pis_rule() {
    use crate::wire::conversation::chat_completions_id;
    // Short enough once joined: the two parts with `_`.
    assert_eq!(chat_completions_id("call_1|fc_1", "vllm"), "call_1_fc_1");
    assert_eq!(chat_completions_id("call_1|", "vllm"), "call_1");
    assert_eq!(chat_completions_id("a+b|c/d", "vllm"), "a_b_c_d");
    // Too long: the call id's start and a hash of the whole id, the same every time.
    let long = format!("call_{}|fc_{}", "a".repeat(40), "b".repeat(48));
    let sent = chat_completions_id(&long, "vllm");
    assert_eq!(sent.len(), 40);
    assert!(
        sent.starts_with(&format!("call_{}_", "a".repeat(26))),
        "{sent}"
    );
    assert_eq!(chat_completions_id(&long, "vllm"), sent);
    // Two calls sharing a call id keep apart by their item ids.
    let other = format!("call_{}|fc_{}", "a".repeat(40), "c".repeat(48));
    assert_ne!(chat_completions_id(&other, "vllm"), sent);
    // Ids of other formats: cut to OpenAI's 40 for OpenAI only, else as they are.
    let plain = "x".repeat(50);
    assert_eq!(chat_completions_id(&plain, "openai").len(), 40);
    assert_eq!(chat_completions_id(&plain, "vllm"), plain);
    assert_eq!(chat_completions_id("toolu_01", "openai"), "toolu_01");
}

/// Reasoning the server sent between `<think>` tags goes back between them in the content (the
/// model's chat template reads it there), for this model's replies only.
#[test]
fn reasoning_read_between_think_tags_goes_back_between_them() {
    let config = config();
    let reply = |provider: &str| {
        message(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "\nCheck main.rs first.\n", "thinkingSignature": "think-tags"},
            {"type": "text", "text": "Reading it."},
            {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "main.rs"}}
        ], "provider": provider, "model": "qwen3-coder", "api": "openai-completions",
        "stopReason": "toolUse", "timestamp": 2}))
    };
    let result = message(
        json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "read",
        "content": [{"type": "text", "text": "fn main() {}"}], "isError": false, "timestamp": 3}),
    );
    let user = message(json!({"role": "user", "content": "show main.rs", "timestamp": 1}));
    let wire = build(
        &config,
        &request(vec![user.clone(), reply("vllm"), result.clone()]),
    );
    assert_eq!(
        wire.body["messages"][2]["content"],
        "<think>\nCheck main.rs first.\n</think>\n\nReading it."
    );
    assert!(wire.body["messages"][2].get("reasoning_content").is_none());
    let other = build(&config, &request(vec![user, reply("ollama"), result]));
    assert_eq!(other.body["messages"][2]["content"], "Reading it.");
}

/// A whole (unstreamed) reply whose content opens with `<think>` tags: its thinking and its text;
/// a reply with a reasoning field keeps the tags in its text, as the server sent them.
#[test]
fn a_whole_reply_opening_with_think_tags_is_read_as_thinking_and_text() {
    let reply = |message: serde_json::Value| {
        parse(
            &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "qwen3",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}),
        )
        .unwrap()
    };
    let tagged = reply(json!({"role": "assistant",
        "content": "<think>\nAdd them.\n</think>\n\nIt is 4."}));
    assert!(matches!(&tagged.content[0], ContentBlock::Thinking(t)
        if t.thinking == "\nAdd them.\n" && t.thinking_signature.as_deref() == Some("think-tags")));
    assert!(matches!(&tagged.content[1], ContentBlock::Text(t) if t.text == "It is 4."));
    let fielded = reply(
        json!({"role": "assistant", "reasoning_content": "Add them.",
        "content": "<think>x</think> is a tag."}),
    );
    assert!(
        matches!(&fielded.content[1], ContentBlock::Text(t) if t.text == "<think>x</think> is a tag.")
    );
}
