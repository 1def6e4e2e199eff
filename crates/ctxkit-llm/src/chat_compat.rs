//! What a Chat Completions server needs beyond the common request, as Pi 1.6.0's `compat` of a
//! model says it: the value each thinking level is sent as (`thinkingLevelMap`), how reasoning is
//! asked for (`thinkingFormat`), and whether every assistant message carries `reasoning_content`
//! (`requiresReasoningContentOnAssistantMessages`). Read from the built-in table, and detected
//! from the provider's name and host when the table says nothing, as Pi detects them.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::config::ProviderConfig;
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
}

impl ThinkingFormat {
    /// Reads Pi's names; one ctxkit does not speak is `None` (the detected format is used).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "openai" => Some(Self::OpenAi),
            "openrouter" => Some(Self::OpenRouter),
            "deepseek" => Some(Self::DeepSeek),
            _ => None,
        }
    }
}

/// A model's Chat Completions needs; `None` fields are detected from the provider.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatCompat {
    /// The provider's value of each thinking level; a level mapped to `None` is not supported
    /// (at `off`: nothing is sent to turn reasoning off); a missing level goes by its own name.
    pub thinking_level_map: BTreeMap<String, Option<String>>,
    pub thinking_format: Option<ThinkingFormat>,
    pub requires_reasoning_content: Option<bool>,
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
        }
    }
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

/// The model's format, else DeepSeek's for `deepseek` or its host, OpenRouter's for `openrouter`
/// or its host, else OpenAI's (Pi's detection).
pub(crate) fn thinking_format(config: &ProviderConfig) -> ThinkingFormat {
    if let Some(format) = compat(config).and_then(|compat| compat.thinking_format) {
        return format;
    }
    if is_deepseek(config) {
        ThinkingFormat::DeepSeek
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
    match (thinking_format(config), reasoning) {
        (ThinkingFormat::OpenAi, Some(level)) => {
            body["reasoning_effort"] = json!(level_value(map, level));
        }
        (ThinkingFormat::OpenAi, None) => {
            if let (true, Some(Some(off))) = (reasons, off_value(map)) {
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
            body["reasoning_effort"] = json!(level_value(map, level));
        }
        (ThinkingFormat::DeepSeek, None) => {
            if reasons && off_value(map) != Some(None) {
                body["thinking"] = json!({"type": "disabled"});
            }
        }
    }
}

#[cfg(test)]
#[path = "chat_compat_tests.rs"]
mod tests;
