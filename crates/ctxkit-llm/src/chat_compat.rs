//! What a Chat Completions server needs beyond the common request, as Pi 1.6.0's `compat` of a
//! model says it: the value each thinking level is sent as (`thinkingLevelMap`), how reasoning is
//! asked for (`thinkingFormat`, `supportsReasoningEffort`), the fields of the request
//! (`maxTokensField`, `supportsStore`, `supportsUsageInStreaming`), the system prompt's role
//! (`supportsDeveloperRole`) and the shape of the conversation (`requiresToolResultName`,
//! `requiresAssistantAfterToolResult`, `requiresThinkingAsText`,
//! `requiresReasoningContentOnAssistantMessages`). Read from the user's `llm.models[].compat`
//! over the built-in table's, and detected from the provider's name and host when neither says,
//! as Pi detects them (`docs/pi-compatibility.md` names where ctxkit's detection differs).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::config::ProviderConfig;
use crate::models::MaxTokensField;
use crate::wire::ReasoningLevel;

/// How a Chat Completions request asks for reasoning (Pi's `thinkingFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingFormat {
    /// `reasoning_effort` (OpenAI's field; Groq, Mistral, xAI, local servers).
    OpenAi,
    /// OpenRouter's `reasoning: {effort}`; `off` is `effort: "none"`.
    OpenRouter,
    /// DeepSeek's `thinking: {type: enabled|disabled}` beside `reasoning_effort`.
    DeepSeek,
    /// z.ai's `thinking: {type: enabled, clear_thinking: false}` or `{type: disabled}`.
    Zai,
    /// Qwen's (DashScope) top-level `enable_thinking`.
    Qwen,
    /// `chat_template_kwargs: {enable_thinking, preserve_thinking: true}` (Qwen on vLLM or SGLang).
    QwenChatTemplate,
}

impl ThinkingFormat {
    /// Reads Pi's names; one ctxkit does not speak is `None` (the detected format is used).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "openai" => Some(Self::OpenAi),
            "openrouter" => Some(Self::OpenRouter),
            "deepseek" => Some(Self::DeepSeek),
            "zai" => Some(Self::Zai),
            "qwen" => Some(Self::Qwen),
            "qwen-chat-template" => Some(Self::QwenChatTemplate),
            _ => None,
        }
    }
}

/// A model's Chat Completions needs (Pi's names in the comments); `None` fields are detected
/// from the provider.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatCompat {
    /// The provider's value of each thinking level; a level mapped to `None` is not supported
    /// (at `off`: nothing is sent to turn reasoning off); a missing level goes by its own name.
    pub thinking_level_map: BTreeMap<String, Option<String>>,
    /// `thinkingFormat`.
    pub thinking_format: Option<ThinkingFormat>,
    /// `requiresReasoningContentOnAssistantMessages`.
    pub requires_reasoning_content: Option<bool>,
    /// `supportsDeveloperRole`: a reasoning model's system prompt goes as a `developer` message.
    pub supports_developer_role: Option<bool>,
    /// `supportsUsageInStreaming`: a stream asks `stream_options: {include_usage: true}`.
    pub supports_usage_in_streaming: Option<bool>,
    /// `supportsStore`: the request says `store: false`.
    pub supports_store: Option<bool>,
    /// `supportsReasoningEffort`: a level is sent as `reasoning_effort`.
    pub supports_reasoning_effort: Option<bool>,
    /// `maxTokensField`: the field the output limit goes in.
    pub max_tokens_field: Option<MaxTokensField>,
    /// `requiresToolResultName`: a `tool` message names its tool.
    pub requires_tool_result_name: Option<bool>,
    /// `requiresAssistantAfterToolResult`: a user message after tool results follows an
    /// assistant message saying they were processed.
    pub requires_assistant_after_tool_result: Option<bool>,
    /// `requiresThinkingAsText`: a reply's reasoning goes back as text, not in a field.
    pub requires_thinking_as_text: Option<bool>,
}

impl ChatCompat {
    /// A built-in table row's.
    pub fn of_builtin(model: &ctxkit_models::BuiltinModel) -> Self {
        Self {
            thinking_level_map: model.thinking_level_map.clone(),
            thinking_format: model
                .thinking_format
                .as_deref()
                .and_then(ThinkingFormat::parse),
            requires_reasoning_content: model.requires_reasoning_content.then_some(true),
            ..Self::default()
        }
    }

    /// These flags over `base`'s (the built-in table's row of the same model): a flag set here
    /// wins, one left unset is `base`'s; the level map is `base`'s when this one names no level.
    pub fn over(self, base: &ChatCompat) -> ChatCompat {
        let thinking_level_map = if self.thinking_level_map.is_empty() {
            base.thinking_level_map.clone()
        } else {
            self.thinking_level_map
        };
        ChatCompat {
            thinking_level_map,
            thinking_format: self.thinking_format.or(base.thinking_format),
            requires_reasoning_content: self
                .requires_reasoning_content
                .or(base.requires_reasoning_content),
            supports_developer_role: self
                .supports_developer_role
                .or(base.supports_developer_role),
            supports_usage_in_streaming: self
                .supports_usage_in_streaming
                .or(base.supports_usage_in_streaming),
            supports_store: self.supports_store.or(base.supports_store),
            supports_reasoning_effort: self
                .supports_reasoning_effort
                .or(base.supports_reasoning_effort),
            max_tokens_field: self.max_tokens_field.or(base.max_tokens_field),
            requires_tool_result_name: self
                .requires_tool_result_name
                .or(base.requires_tool_result_name),
            requires_assistant_after_tool_result: self
                .requires_assistant_after_tool_result
                .or(base.requires_assistant_after_tool_result),
            requires_thinking_as_text: self
                .requires_thinking_as_text
                .or(base.requires_thinking_as_text),
        }
    }
}

/// Whether the base URL names `host`.
fn at(config: &ProviderConfig, host: &str) -> bool {
    config.base_url.contains(host)
}

/// OpenAI's own API (Pi: the provider `openai` or a base URL on `api.openai.com`).
fn is_openai(config: &ProviderConfig) -> bool {
    config.provider == "openai" || at(config, "api.openai.com")
}

fn is_zai(config: &ProviderConfig) -> bool {
    matches!(config.provider.as_str(), "zai" | "zai-coding-cn")
        || at(config, "api.z.ai")
        || at(config, "open.bigmodel.cn")
}

/// The hosts Pi sends no `reasoning_effort` (xAI, z.ai, Moonshot, Together, Cloudflare's AI
/// Gateway, NVIDIA, Ant Ling), by provider name or host.
fn refuses_reasoning_effort(config: &ProviderConfig) -> bool {
    let provider = config.provider.as_str();
    matches!(
        provider,
        "xai"
            | "moonshotai"
            | "moonshotai-cn"
            | "together"
            | "cloudflare-ai-gateway"
            | "nvidia"
            | "ant-ling"
    ) || [
        "api.x.ai",
        "api.moonshot.",
        "api.together.ai",
        "api.together.xyz",
        "gateway.ai.cloudflare.com",
        "integrate.api.nvidia.com",
        "api.ant-ling.com",
    ]
    .iter()
    .any(|host| at(config, host))
        || is_zai(config)
}

/// A flag of the model's compat, `None` when unset (or the model is not in the table).
fn flag(config: &ProviderConfig, read: impl Fn(&ChatCompat) -> Option<bool>) -> Option<bool> {
    compat(config).and_then(read)
}

/// The field the output limit goes in: the model's `maxTokensField`, else
/// `max_completion_tokens` for OpenAI's own API (by name or host), else the provider's.
pub(crate) fn max_tokens_field(config: &ProviderConfig) -> MaxTokensField {
    match compat(config).and_then(|compat| compat.max_tokens_field) {
        Some(field) => field,
        None if is_openai(config) => MaxTokensField::MaxCompletionTokens,
        None => config.max_tokens_field,
    }
}

/// Whether the request says `store: false`: the model's `supportsStore`, else OpenAI's own API.
pub(crate) fn sends_store(config: &ProviderConfig) -> bool {
    flag(config, |compat| compat.supports_store).unwrap_or_else(|| is_openai(config))
}

/// Whether a stream asks for usage in its last chunk: the model's `supportsUsageInStreaming`,
/// else yes.
pub(crate) fn asks_usage_in_stream(config: &ProviderConfig) -> bool {
    flag(config, |compat| compat.supports_usage_in_streaming).unwrap_or(true)
}

/// The role of the system prompt: `developer` for a model that reasons and whose
/// `supportsDeveloperRole` is set (unset: OpenAI's own API), else `system`.
pub(crate) fn instruction_role(config: &ProviderConfig) -> &'static str {
    let developer =
        flag(config, |compat| compat.supports_developer_role).unwrap_or_else(|| is_openai(config));
    if developer && reasons(config) {
        "developer"
    } else {
        "system"
    }
}

/// Whether a level is sent as `reasoning_effort`: the model's `supportsReasoningEffort`, else
/// every host but those Pi knows refuse it.
fn sends_reasoning_effort(config: &ProviderConfig) -> bool {
    flag(config, |compat| compat.supports_reasoning_effort)
        .unwrap_or_else(|| !refuses_reasoning_effort(config))
}

/// `requiresToolResultName`: a `tool` message carries its tool's `name`.
pub(crate) fn requires_tool_result_name(config: &ProviderConfig) -> bool {
    flag(config, |compat| compat.requires_tool_result_name).unwrap_or(false)
}

/// `requiresAssistantAfterToolResult`: a user message right after tool results follows an
/// assistant message, and an assistant message without text has `""` for content.
pub(crate) fn requires_assistant_after_tool_result(config: &ProviderConfig) -> bool {
    flag(config, |compat| compat.requires_assistant_after_tool_result).unwrap_or(false)
}

/// `requiresThinkingAsText`: a reply's reasoning goes back as the first text part of its content.
pub(crate) fn requires_thinking_as_text(config: &ProviderConfig) -> bool {
    flag(config, |compat| compat.requires_thinking_as_text).unwrap_or(false)
}

fn is_deepseek(config: &ProviderConfig) -> bool {
    config.provider == "deepseek" || config.base_url.to_lowercase().contains("deepseek.com")
}

fn is_openrouter(config: &ProviderConfig) -> bool {
    config.provider == "openrouter" || config.base_url.contains("openrouter.ai")
}

/// Whether the model reasons: as the table says, and yes for a model it does not know (a level
/// asked of it is sent as it always was).
fn reasons(config: &ProviderConfig) -> bool {
    config
        .model_info
        .as_ref()
        .is_none_or(|model| model.reasoning)
}

fn compat(config: &ProviderConfig) -> Option<&ChatCompat> {
    config.model_info.as_ref().map(|model| &model.chat_compat)
}

/// The model's format, else DeepSeek's for `deepseek` or its host, z.ai's for `zai` or its host,
/// OpenRouter's for `openrouter` or its host, else OpenAI's (Pi's detection).
pub(crate) fn thinking_format(config: &ProviderConfig) -> ThinkingFormat {
    if let Some(format) = compat(config).and_then(|compat| compat.thinking_format) {
        return format;
    }
    if is_deepseek(config) {
        ThinkingFormat::DeepSeek
    } else if is_zai(config) {
        ThinkingFormat::Zai
    } else if is_openrouter(config) {
        ThinkingFormat::OpenRouter
    } else {
        ThinkingFormat::OpenAi
    }
}

/// Whether every assistant message must carry `reasoning_content` (an empty one when its reasoning
/// is not sent): the model's flag, else DeepSeek's API (Pi's detection); only for a model that
/// reasons.
pub(crate) fn requires_reasoning_content(config: &ProviderConfig) -> bool {
    let flag = compat(config).and_then(|compat| compat.requires_reasoning_content);
    reasons(config) && flag.unwrap_or_else(|| is_deepseek(config))
}

/// The value a level is sent as: the map's, else (not mapped, or mapped to `None`) its
/// OpenAI effort name. `xhigh` takes the map's `xhigh`, else its `max` (Pi clamps one to the other).
fn level_value(map: &BTreeMap<String, Option<String>>, level: ReasoningLevel) -> String {
    let mapped = |name: &str| map.get(name).cloned().flatten();
    let value = match level {
        ReasoningLevel::XHigh => mapped("xhigh").or_else(|| mapped("max")),
        ReasoningLevel::Minimal
        | ReasoningLevel::Low
        | ReasoningLevel::Medium
        | ReasoningLevel::High => mapped(level.as_str()),
    };
    value.unwrap_or_else(|| level.openai_effort().to_owned())
}

/// What `off` is sent as: `Some(Some(value))` mapped, `Some(None)` mapped to null (send nothing),
/// `None` not mapped.
fn off_value(map: &BTreeMap<String, Option<String>>) -> Option<Option<&str>> {
    map.get("off").map(Option::as_deref)
}

/// Sets the reasoning fields of a Chat Completions `body` for `reasoning` (`None`: off), in the
/// model's format, as Pi 1.6.0 builds them.
pub(crate) fn apply_reasoning(
    config: &ProviderConfig,
    body: &mut Value,
    reasoning: Option<ReasoningLevel>,
) {
    let empty = BTreeMap::new();
    let map = compat(config).map_or(&empty, |compat| &compat.thinking_level_map);
    let reasons = reasons(config) && config.model_info.is_some();
    let effort = sends_reasoning_effort(config);
    match (thinking_format(config), reasoning) {
        (ThinkingFormat::OpenAi, Some(level)) => {
            if effort {
                body["reasoning_effort"] = json!(level_value(map, level));
            }
        }
        (ThinkingFormat::OpenAi, None) => {
            if let (true, true, Some(Some(off))) = (effort, reasons, off_value(map)) {
                body["reasoning_effort"] = json!(off);
            }
        }
        (ThinkingFormat::OpenRouter, Some(level)) => {
            body["reasoning"] = json!({"effort": level_value(map, level)});
        }
        (ThinkingFormat::OpenRouter, None) => match off_value(map) {
            Some(None) => {}
            _ if !reasons => {}
            off => body["reasoning"] = json!({"effort": off.flatten().unwrap_or("none")}),
        },
        (ThinkingFormat::DeepSeek, Some(level)) => {
            body["thinking"] = json!({"type": "enabled"});
            if effort {
                body["reasoning_effort"] = json!(level_value(map, level));
            }
        }
        (ThinkingFormat::DeepSeek, None) => {
            if reasons && off_value(map) != Some(None) {
                body["thinking"] = json!({"type": "disabled"});
            }
        }
        (format @ (ThinkingFormat::Zai | ThinkingFormat::Qwen), level) => {
            let switch = Switch {
                on: level.is_some(),
                effort: level
                    .filter(|_| effort)
                    .map(|level| level_value(map, level)),
            };
            apply_switch(config, body, format, switch);
        }
        (ThinkingFormat::QwenChatTemplate, level) => {
            if self::reasons(config) {
                body["chat_template_kwargs"] =
                    json!({"enable_thinking": level.is_some(), "preserve_thinking": true});
            }
        }
    }
}

/// z.ai's and Qwen's switch of reasoning: whether it is on, and the effort sent beside it.
struct Switch {
    on: bool,
    effort: Option<String>,
}

/// z.ai's and Qwen's switch of reasoning, with the effort beside it when the model takes one;
/// for a model that reasons (or one the table does not know), as Pi sends them.
fn apply_switch(config: &ProviderConfig, body: &mut Value, format: ThinkingFormat, switch: Switch) {
    if !reasons(config) {
        return;
    }
    match format {
        ThinkingFormat::Zai if switch.on => {
            body["thinking"] = json!({"type": "enabled", "clear_thinking": false});
        }
        ThinkingFormat::Zai => body["thinking"] = json!({"type": "disabled"}),
        ThinkingFormat::Qwen => body["enable_thinking"] = json!(switch.on),
        ThinkingFormat::OpenAi
        | ThinkingFormat::OpenRouter
        | ThinkingFormat::DeepSeek
        | ThinkingFormat::QwenChatTemplate => return,
    }
    if let Some(effort) = switch.effort {
        body["reasoning_effort"] = json!(effort);
    }
}

#[cfg(test)]
#[path = "chat_compat_tests.rs"]
mod tests;
