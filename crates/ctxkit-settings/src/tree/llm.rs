//! `llm.*`: the model provider — endpoint, key, wire format, headers, the user's models, provider-side
//! options and time limits (a ctxkit extension; Pi keeps these in `models.json`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `llm.*`.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct LlmConfig {
    /// The base URL of the settings' provider (of `defaultModel`, else `defaultProvider`), for its
    /// conversation and summaries; every other provider keeps its own. An `http://` or
    /// `https://` URL.
    #[schemars(extend("x-check" = "httpUrl"))]
    pub base_url: Option<String>,
    /// An API key for the settings' provider only; prefer the provider's environment variable.
    /// Masked wherever settings are shown; only `ctxkit config get llm.apiKey` prints it.
    #[schemars(extend("x-secret" = true))]
    pub api_key: Option<String>,
    /// The wire format of the settings' provider (required for one that is not built in).
    #[schemars(extend("enum" = ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]))]
    pub api: Option<String>,
    /// Extra request headers to the settings' provider only (their values may hold tokens: masked
    /// wherever settings are shown, unless one is asked for by name, `ctxkit config get llm.headers.NAME`).
    #[schemars(extend("x-check" = "stringMap", "x-secret" = true))]
    pub headers: Option<BTreeMap<String, String>>,
    /// Endpoints of other providers, keyed by the provider's name, as Pi's `models.json`
    /// `providers` routes them: `{baseUrl, api?, apiKey?, headers?}`. Every model of a provider
    /// named here is asked at its `baseUrl`, with its `api` (a provider ctxkit does not build in
    /// needs one), its `apiKey` (else the key `ctxkit login` saved or the provider's variable) and
    /// its `headers`, in place of the provider's own host; `llm.baseUrl` and its siblings stay the
    /// settings' provider's, and an entry for that provider while they are set is refused (two
    /// places would say where its key goes). Like `llm.baseUrl`,
    /// a project's applies only once the project is trusted: an endpoint decides where a key goes.
    #[schemars(extend("x-check" = "providerMap"))]
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub providers: BTreeMap<String, ProviderEndpoint>,
    /// The user's models, as Pi's `models.json` declares them:
    /// `{provider, id, contextWindow, maxOutput?, reasoning?, input?, cost?, cacheRetention?, compat?}`;
    /// of Pi's `compat` flags, `forceAdaptiveThinking` is read (a Claude model that requires
    /// adaptive thinking: its thinking level is sent as an effort, not a budget), and Pi 1.6.0's
    /// Chat Completions flags that change a request, with Pi's meaning, each over the built-in
    /// table's for the same model and detected from the provider and host as Pi detects them
    /// when unset: `supportsDeveloperRole` (a reasoning model's system prompt as `developer`;
    /// unset, OpenAI's own API), `maxTokensField` (`max_completion_tokens` or `max_tokens`; unset,
    /// the first for OpenAI's own API, the second for others), `supportsUsageInStreaming`
    /// (`stream_options.include_usage`; unset, on), `supportsStore` (`store: false`; unset,
    /// OpenAI's own API), `supportsReasoningEffort`, `thinkingFormat` (`openai`, `openrouter`,
    /// `deepseek`, `zai`, `qwen`, `qwen-chat-template`; Pi's others fall back to the detected
    /// format), `requiresToolResultName`, `requiresAssistantAfterToolResult`,
    /// `requiresThinkingAsText`, `requiresReasoningContentOnAssistantMessages`.
    /// A project's list joins the user's model by model (an entry for the same `provider` and
    /// `id` replaces the user's), where other arrays replace whole.
    /// `input` (`["text"]` by default, `["text", "image"]` for a model that sees) decides whether
    /// images are sent to it over Chat Completions. `cost`
    /// (dollars per million tokens: `{input, output, cacheRead, cacheWrite, tiers?}`) prices the
    /// model's calls, and replaces the built-in table's price (`ctxkit models`), read from the
    /// user's own settings only (a project's entry may size a model, never price it); `tiers`
    /// (`[{inputTokensAbove, input?, …}]`, Pi 1.6's) prices a whole request whose input (fresh,
    /// cache reads and writes) is above a size at the highest such tier's rates, a rate left out
    /// being the base one; a model with no price known (none here, none built in) is recorded at $0 as Pi
    /// records it, and the chat's status line, `/cost`, `ctxkit info` and the web view show its
    /// calls as of unknown price (the tokens used, `price unknown`), never as free; a model given a
    /// `cost` of all zeros (a local or free model) is free: its calls show as $0. Other keys of Pi's entries (`baseUrl`, `headers`, `api`, `maxTokens`, …)
    /// are not read: they are warned about as unknown.
    #[schemars(extend("x-check" = "models"))]
    pub models: Option<Vec<UserModel>>,
    /// Provider-side options of Anthropic Messages requests.
    pub anthropic: AnthropicConfig,
    /// Provider-side options of OpenAI Responses requests.
    pub openai_responses: OpenAiResponsesConfig,
    /// Time limits of model requests, in seconds.
    pub timeouts: LlmTimeouts,
    /// The bytes one model answer may take as it arrives (64 MiB); a longer one is cut.
    #[schemars(range(min = 1024))]
    pub max_reply_bytes: u64,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            base_url: None,
            api_key: None,
            api: None,
            headers: None,
            providers: BTreeMap::new(),
            models: None,
            anthropic: AnthropicConfig::default(),
            openai_responses: OpenAiResponsesConfig::default(),
            timeouts: LlmTimeouts::default(),
            max_reply_bytes: 64 * 1024 * 1024,
        }
    }
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &masked(self.api_key.as_ref()))
            .field("api", &self.api)
            .field("headers", &header_names(self.headers.as_ref()))
            .field("providers", &self.providers)
            .field("models", &self.models.as_ref().map(Vec::len))
            .field("anthropic", &self.anthropic)
            .field("openai_responses", &self.openai_responses)
            .field("timeouts", &self.timeouts)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .finish()
    }
}

/// One entry of `llm.providers`: where a provider's requests go, and with what.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderEndpoint {
    /// The provider's base URL: an `http://` or `https://` URL.
    #[schemars(extend("x-check" = "httpUrl"))]
    pub base_url: String,
    /// The wire format (required for a provider that is not built in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]))]
    pub api: Option<String>,
    /// The provider's API key (masked wherever settings are shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-secret" = true))]
    pub api_key: Option<String>,
    /// Extra request headers to this provider (masked wherever settings are shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-check" = "stringMap", "x-secret" = true))]
    pub headers: Option<BTreeMap<String, String>>,
}

impl std::fmt::Debug for ProviderEndpoint {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ProviderEndpoint")
            .field("base_url", &self.base_url)
            .field("api", &self.api)
            .field("api_key", &masked(self.api_key.as_ref()))
            .field("headers", &header_names(self.headers.as_ref()))
            .finish()
    }
}

/// A key as `Debug` shows it: whether there is one, never its value.
fn masked(key: Option<&String>) -> Option<&'static str> {
    key.map(|_| "<redacted>")
}

/// Headers as `Debug` shows them: their names, never their values (which may be tokens).
fn header_names(headers: Option<&BTreeMap<String, String>>) -> Option<Vec<&String>> {
    headers.map(|map| map.keys().collect())
}

/// One entry of `llm.models`. Other keys of Pi's `models.json` (`api`, `baseUrl`, `headers`, …)
/// are kept in the file, not read, and warned about as unknown (`name`, a display label, without
/// a word).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserModel {
    /// The provider's name.
    pub provider: String,
    /// The model's id.
    pub id: String,
    /// The context window, in tokens.
    pub context_window: u64,
    /// The output limit, in tokens (Pi's 16,384, at most a quarter of the window, when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u64>,
    /// Whether the model reasons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    /// What the model takes, as Pi's models: `["text"]` (the default) or `["text", "image"]`. Over
    /// Chat Completions, images are sent only to a model that lists `image`; to others each is
    /// named in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("items" = {"enum": ["text", "image"]}))]
    pub input: Option<Vec<String>>,
    /// Prices in dollars per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<ModelPrices>,
    /// The prompt cache's lifetime: `none`, `short` or `long`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["none", "short", "long"]))]
    pub cache_retention: Option<String>,
    /// Pi's `compat` flags: `forceAdaptiveThinking` (Anthropic) and the Chat Completions flags
    /// that change a request (`supportsDeveloperRole`, `maxTokensField`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<ModelCompat>,
}

/// `llm.models[].compat`, as Pi's `models.json` spells it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelCompat {
    /// The model requires Anthropic's adaptive thinking: a thinking level is sent as
    /// `thinking: {type: adaptive}` with an `output_config.effort`, never as a thinking budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_adaptive_thinking: Option<bool>,
    /// A reasoning model's system prompt is sent as a `developer` message (unset: only to
    /// OpenAI's own API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_developer_role: Option<bool>,
    /// A stream asks `stream_options: {include_usage: true}` (unset: yes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_usage_in_streaming: Option<bool>,
    /// The request says `store: false` (unset: only to OpenAI's own API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_store: Option<bool>,
    /// A thinking level is sent as `reasoning_effort` (unset: yes, but to xAI, z.ai, Moonshot,
    /// Together, NVIDIA, Cloudflare's AI Gateway and Ant Ling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_reasoning_effort: Option<bool>,
    /// The field of the output limit (unset: `max_completion_tokens` for OpenAI's own API,
    /// `max_tokens` for others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["max_completion_tokens", "max_tokens"]))]
    pub max_tokens_field: Option<String>,
    /// How reasoning is asked for: ctxkit speaks `openai`, `openrouter`, `deepseek`, `zai`,
    /// `qwen` and `qwen-chat-template`; Pi's other formats fall back to the detected one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = THINKING_FORMATS))]
    pub thinking_format: Option<String>,
    /// A `tool` message carries its tool's `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_tool_result_name: Option<bool>,
    /// A user message right after tool results follows an assistant message saying they were
    /// processed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_assistant_after_tool_result: Option<bool>,
    /// A reply's reasoning goes back as the first text of its content, not in a field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_thinking_as_text: Option<bool>,
    /// Every assistant message of a reasoning model carries `reasoning_content` (an empty one when
    /// its reasoning is not sent; unset: DeepSeek's API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_reasoning_content_on_assistant_messages: Option<bool>,
}

/// Pi 1.6.0's values of `compat.thinkingFormat`.
pub(crate) const THINKING_FORMATS: [&str; 11] = [
    "openai",
    "openrouter",
    "deepseek",
    "together",
    "baseten",
    "zai",
    "qwen",
    "chat-template",
    "qwen-chat-template",
    "string-thinking",
    "ant-ling",
];

/// `llm.models[].cost`, dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ModelPrices {
    /// Input.
    pub input: Option<f64>,
    /// Output.
    pub output: Option<f64>,
    /// Input read from the prompt cache.
    pub cache_read: Option<f64>,
    /// Input written to the prompt cache.
    pub cache_write: Option<f64>,
    /// Rates for long prompts (Pi 1.6's request-wide tiers): the tier with the highest
    /// `inputTokensAbove` that a request's input (fresh, cache reads and writes) passes prices
    /// the whole request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiers: Option<Vec<PriceTier>>,
}

/// `llm.models[].cost.tiers[]`: a rate a tier leaves out is the base one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PriceTier {
    /// The tier applies to requests whose input is above this many tokens.
    pub input_tokens_above: u64,
    /// Input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<f64>,
    /// Output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<f64>,
    /// Input read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Input written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

/// `llm.anthropic.*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct AnthropicConfig {
    /// The prompt cache's lifetime.
    #[schemars(extend("enum" = ["none", "short", "long"]))]
    pub cache_retention: String,
    /// Pi's `compat.supportsMessageThreads`: unset is on for `api.anthropic.com` only.
    pub supports_message_threads: Option<bool>,
    /// Anthropic's context editing of the agent's requests; unset numbers leave the API's defaults.
    pub context_management: AnthropicContextManagementConfig,
    /// Anthropic's server-side compaction (`compact_20260112`) of the agent's requests; unset
    /// values leave the API's defaults.
    pub compaction: AnthropicCompactionConfig,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        Self {
            cache_retention: "short".to_owned(),
            supports_message_threads: None,
            context_management: AnthropicContextManagementConfig::default(),
            compaction: AnthropicCompactionConfig::default(),
        }
    }
}

/// `llm.anthropic.contextManagement.*`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct AnthropicContextManagementConfig {
    /// Send context editing with the agent's requests.
    pub enabled: bool,
    /// Input tokens from which tool results are cleared.
    pub trigger_input_tokens: Option<u64>,
    /// Tool uses kept.
    pub keep_tool_uses: Option<u64>,
    /// The fewest input tokens one clearing removes.
    pub clear_at_least_input_tokens: Option<u64>,
    /// Tools whose results are never cleared.
    pub exclude_tools: Option<Vec<String>>,
    /// Clear the tool calls' inputs too.
    pub clear_tool_inputs: bool,
    /// Clear old thinking blocks.
    pub clear_thinking: bool,
    /// Assistant turns whose thinking is kept.
    pub keep_thinking_turns: Option<u64>,
}

/// `llm.anthropic.compaction.*`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct AnthropicCompactionConfig {
    /// Ask Anthropic to compact the agent's requests on its side.
    pub enabled: bool,
    /// Input tokens from which it compacts.
    pub trigger_input_tokens: Option<u64>,
    /// Stop after a compaction so the client sees it.
    pub pause_after_compaction: bool,
    /// A summary prompt replacing the API's.
    pub instructions: Option<String>,
}

/// `llm.openaiResponses.*`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct OpenAiResponsesConfig {
    /// OpenAI Responses' server-side compaction of the agent's requests.
    pub compaction: OpenAiResponsesCompactionConfig,
}

/// `llm.openaiResponses.compaction.*`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct OpenAiResponsesCompactionConfig {
    /// Ask OpenAI to compact the agent's requests on its side.
    pub enabled: bool,
    /// Input tokens from which it compacts.
    pub compact_threshold: Option<u64>,
}

/// `llm.timeouts.*`, in seconds (at least one, at most a day).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct LlmTimeouts {
    /// Opening a connection.
    #[schemars(range(min = 1, max = 86_400))]
    pub connect_seconds: u64,
    /// From a streamed request to its response headers.
    #[schemars(range(min = 1, max = 86_400))]
    pub first_byte_seconds: u64,
    /// Silence between two pieces of a streamed answer. Keep-alives (Anthropic's `ping`, SSE comment
    /// lines such as OpenRouter's `: OPENROUTER PROCESSING`, empty deltas) are not pieces: a stream
    /// that sends only them for this long is cut too, keeping what arrived as an error reply.
    #[schemars(range(min = 1, max = 86_400))]
    pub idle_seconds: u64,
}

impl Default for LlmTimeouts {
    fn default() -> Self {
        Self {
            connect_seconds: 10,
            first_byte_seconds: 300,
            idle_seconds: 300,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A settings value printed for a log or a panic shows that a key and headers are there,
    /// never their values: the settings' own endpoint's and each of `llm.providers`'.
    #[test]
    fn debug_shows_no_key_and_no_header_value() {
        let headers = || {
            Some(BTreeMap::from([(
                "X-Auth".to_owned(),
                "hdr-SECRET-1".to_owned(),
            )]))
        };
        let config = LlmConfig {
            api_key: Some("sk-SECRET-2".to_owned()),
            headers: headers(),
            providers: BTreeMap::from([(
                "lab".to_owned(),
                ProviderEndpoint {
                    base_url: "http://gpu-box:8000/v1".to_owned(),
                    api: None,
                    api_key: Some("sk-SECRET-3".to_owned()),
                    headers: headers(),
                },
            )]),
            ..LlmConfig::default()
        };
        let shown = format!("{config:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(
            shown.contains("X-Auth") && shown.contains("gpu-box"),
            "{shown}"
        );
        assert_eq!(shown.matches("<redacted>").count(), 2, "{shown}");
    }
}
