//! Typed getters over the effective settings: each returns the value when it has the right
//! type and the reference default otherwise (invalid values are reported by `diagnostics`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::SettingsManager;
use super::document::{self, KeyPath};
use super::schema;
use crate::env::expand_tilde_strict;
use crate::error::SettingsScope;
use crate::kind::ResourceKind;

/// Branch summary settings (`branchSummary.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchSummarySettings {
    /// Reserve for the summary call (16384).
    pub reserve_tokens: u64,
    /// Skip the "summarise?" prompt (false).
    pub skip_prompt: bool,
}

/// Provider-level retry settings (`retry.provider.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderRetrySettings {
    /// Request timeout; `None` leaves the provider SDK default.
    pub timeout_ms: Option<u64>,
    /// SDK retries; `None` leaves the provider SDK default.
    pub max_retries: Option<u64>,
    /// Cap on a server-requested retry delay (60000; 0 disables the cap).
    pub max_retry_delay_ms: u64,
}

/// Time limits of model requests, in seconds (`llm.timeouts.*`, a ctxkit extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlmTimeoutSettings {
    /// Opening a connection (10).
    pub connect_seconds: u64,
    /// From a streamed request to its response headers (300).
    pub first_byte_seconds: u64,
    /// Silence between two pieces of a streamed answer (300).
    pub idle_seconds: u64,
}

/// The summarizing provider's settings (`llm.*`, a ctxkit extension).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct LlmSettings {
    pub base_url: Option<String>,
    /// Prefer the provider's environment variable; a key here is never printed.
    pub api_key: Option<String>,
    /// The wire format for providers that are not built in.
    pub api: Option<String>,
    pub headers: std::collections::BTreeMap<String, String>,
    /// `{provider, id, contextWindow, maxOutput?, reasoning?}` objects.
    pub models: Vec<Value>,
    /// `llm.anthropic.cacheRetention`: `none`, `short` (the default) or `long`.
    pub anthropic_cache_retention: String,
    /// `llm.anthropic.supportsMessageThreads`; `None` when unset (on for `api.anthropic.com`).
    pub anthropic_supports_message_threads: Option<bool>,
    /// `llm.anthropic.contextManagement`, when `enabled`.
    pub anthropic_context_management: Option<AnthropicContextManagementSettings>,
    /// `llm.anthropic.compaction`, when `enabled`.
    pub anthropic_compaction: Option<ProviderCompactionSettings>,
    /// `llm.openaiResponses.compaction`, when `enabled` (its `compactThreshold` as the trigger).
    pub openai_responses_compaction: Option<ProviderCompactionSettings>,
}

/// Compaction on the provider's side (`llm.anthropic.compaction.*`,
/// `llm.openaiResponses.compaction.*`). `None` leaves the API's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderCompactionSettings {
    /// Anthropic's `triggerInputTokens`, OpenAI's `compactThreshold`.
    pub trigger_input_tokens: Option<u64>,
    /// Anthropic only.
    pub pause_after_compaction: bool,
    /// Anthropic only: a summary prompt replacing the API's.
    pub instructions: Option<String>,
}

/// `llm.anthropic.contextManagement.*`: Anthropic's context editing of the agent's requests.
/// `None` numbers leave the API's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnthropicContextManagementSettings {
    pub trigger_input_tokens: Option<u64>,
    pub keep_tool_uses: Option<u64>,
    pub clear_at_least_input_tokens: Option<u64>,
    pub exclude_tools: Vec<String>,
    pub clear_tool_inputs: bool,
    pub clear_thinking: bool,
    pub keep_thinking_turns: Option<u64>,
}

impl std::fmt::Debug for LlmSettings {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("LlmSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api", &self.api)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("models", &self.models.len())
            .field("anthropic_cache_retention", &self.anthropic_cache_retention)
            .field(
                "anthropic_supports_message_threads",
                &self.anthropic_supports_message_threads,
            )
            .field(
                "anthropic_context_management",
                &self.anthropic_context_management,
            )
            .field("anthropic_compaction", &self.anthropic_compaction)
            .field(
                "openai_responses_compaction",
                &self.openai_responses_compaction,
            )
            .finish()
    }
}

/// Agent-level retry settings (`retry.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySettings {
    /// Retries on (true).
    pub enabled: bool,
    /// Attempts after the first (3).
    pub max_retries: u64,
    /// Delay before attempt n is `base_delay_ms × 2^(n−1)` (2000).
    pub base_delay_ms: u64,
    /// Provider-level settings.
    pub provider: ProviderRetrySettings,
}

impl SettingsManager {
    fn effective_value(&self, key: &str) -> Option<&Value> {
        let path = KeyPath::parse(key).ok()?;
        document::get_path(self.effective(), &path).filter(|value| !value.is_null())
    }

    fn default_of(key: &str) -> Option<Value> {
        let path = KeyPath::parse(key).ok()?;
        schema::lookup(path.segments()).and_then(|field| field.default.clone())
    }

    /// Effective value when valid for the schema, else the default.
    fn valid_or_default(&self, key: &str) -> Option<Value> {
        let path = KeyPath::parse(key).ok()?;
        let field = schema::lookup(path.segments())?;
        match self.effective_value(key) {
            Some(value) => {
                let mut report = schema::CheckReport::default();
                schema::check_value(key, &field.kind, value, &mut report);
                if report.violations.is_empty() {
                    Some(value.clone())
                } else {
                    field.default.clone()
                }
            }
            None => field.default.clone(),
        }
    }

    fn bool_setting(&self, key: &str) -> bool {
        self.valid_or_default(key)
            .and_then(|value| value.as_bool())
            .unwrap_or(false)
    }

    fn u64_setting(&self, key: &str) -> Option<u64> {
        self.valid_or_default(key).and_then(|value| value.as_u64())
    }

    fn string_setting(&self, key: &str) -> Option<String> {
        self.valid_or_default(key)
            .and_then(|value| value.as_str().map(str::to_owned))
    }

    /// `compaction.fileContext` (a ctxkit setting, default `false`): include the current contents of
    /// the most important touched files in summary requests.
    /// `defaultThinkingLevel` (Pi's setting): the reasoning level for models that reason.
    pub fn default_thinking_level(&self) -> Option<String> {
        self.string_setting("defaultThinkingLevel")
    }

    /// `chat.passEnv` from the user's own settings only: the secret variables commands a model
    /// runs may see. A project's settings cannot set it (a cloned project could pass the keys back
    /// in).
    pub fn chat_pass_env(&self) -> Vec<String> {
        self.document(crate::SettingsScope::Global)
            .get("chat")
            .and_then(|chat| chat.get("passEnv"))
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|name| name.as_str().map(str::to_owned))
            .collect()
    }

    /// `chat.readablePaths` from the user's own settings only: paths outside the project the
    /// agent's tools may read without asking, as written (`~` not yet expanded). A project's
    /// settings cannot set it (a cloned project could open the user's home to the model).
    pub fn chat_readable_paths(&self) -> Vec<String> {
        self.document(crate::SettingsScope::Global)
            .get("chat")
            .and_then(|chat| chat.get("readablePaths"))
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|path| path.as_str().map(str::to_owned))
            .collect()
    }

    /// `chat.confirmBash`: ask before each `bash` command (schema default: yes).
    pub fn chat_confirm_bash(&self) -> bool {
        self.bool_setting("chat.confirmBash")
    }

    /// `chat.bashTimeoutSeconds`: the `bash` tool's default time limit.
    pub fn chat_bash_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.u64_setting("chat.bashTimeoutSeconds").unwrap_or(120))
    }

    /// `chat.checkpointMaxBytes`: the most bytes of file snapshots kept beside one session for
    /// rewinds (schema default 64 MiB).
    pub fn chat_checkpoint_max_bytes(&self) -> u64 {
        self.u64_setting("chat.checkpointMaxBytes")
            .unwrap_or(64 * 1024 * 1024)
    }

    pub fn compaction_file_context(&self) -> bool {
        self.bool_setting("compaction.fileContext")
    }

    /// `cacheWarming` (Pi 1.5.1): `off`, `streaming` or `idle` (the default). Read from the global
    /// settings only, as Pi reads it: every refresh spends the user's money, so neither a project
    /// (trusted or not) nor a flag changes it.
    pub fn cache_warming(&self) -> String {
        let global = self
            .get_in(SettingsScope::Global, "cacheWarming")
            .ok()
            .flatten()
            .and_then(Value::as_str)
            .filter(|mode| matches!(*mode, "off" | "streaming" | "idle"));
        global.unwrap_or("idle").to_owned()
    }

    /// `compaction.model` (a ctxkit setting): the model for summaries, `provider/id`.
    pub fn compaction_model(&self) -> Option<String> {
        self.string_setting("compaction.model")
    }

    /// `llm.*` (ctxkit settings): base URL, API key, wire format, extra headers and user models of the
    /// provider used for summaries. Invalid values read as unset (and are reported by diagnostics).
    pub fn llm(&self) -> LlmSettings {
        let headers = self
            .valid_or_default("llm.headers")
            .and_then(|value| value.as_object().cloned())
            .map(|object| {
                object
                    .into_iter()
                    .filter_map(|(name, value)| {
                        value.as_str().map(|value| (name, value.to_owned()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let models = self
            .valid_or_default("llm.models")
            .and_then(|value| value.as_array().cloned())
            .unwrap_or_default();
        LlmSettings {
            base_url: self.string_setting("llm.baseUrl"),
            api_key: self.string_setting("llm.apiKey"),
            api: self.string_setting("llm.api"),
            headers,
            models,
            anthropic_cache_retention: self
                .string_setting("llm.anthropic.cacheRetention")
                .unwrap_or_else(|| "short".to_owned()),
            anthropic_supports_message_threads: self
                .valid_or_default("llm.anthropic.supportsMessageThreads")
                .and_then(|value| value.as_bool()),
            anthropic_context_management: self.anthropic_context_management(),
            anthropic_compaction: self.bool_setting("llm.anthropic.compaction.enabled").then(
                || ProviderCompactionSettings {
                    trigger_input_tokens: self
                        .u64_setting("llm.anthropic.compaction.triggerInputTokens"),
                    pause_after_compaction: self
                        .bool_setting("llm.anthropic.compaction.pauseAfterCompaction"),
                    instructions: self.string_setting("llm.anthropic.compaction.instructions"),
                },
            ),
            openai_responses_compaction: self
                .bool_setting("llm.openaiResponses.compaction.enabled")
                .then(|| ProviderCompactionSettings {
                    trigger_input_tokens: self
                        .u64_setting("llm.openaiResponses.compaction.compactThreshold"),
                    ..ProviderCompactionSettings::default()
                }),
        }
    }

    fn anthropic_context_management(&self) -> Option<AnthropicContextManagementSettings> {
        const PREFIX: &str = "llm.anthropic.contextManagement";
        let key = |name: &str| format!("{PREFIX}.{name}");
        if !self.bool_setting(&key("enabled")) {
            return None;
        }
        let exclude_tools = self
            .valid_or_default(&key("excludeTools"))
            .and_then(|value| value.as_array().cloned())
            .into_iter()
            .flatten()
            .filter_map(|name| name.as_str().map(str::to_owned))
            .collect();
        Some(AnthropicContextManagementSettings {
            trigger_input_tokens: self.u64_setting(&key("triggerInputTokens")),
            keep_tool_uses: self.u64_setting(&key("keepToolUses")),
            clear_at_least_input_tokens: self.u64_setting(&key("clearAtLeastInputTokens")),
            exclude_tools,
            clear_tool_inputs: self.bool_setting(&key("clearToolInputs")),
            clear_thinking: self.bool_setting(&key("clearThinking")),
            keep_thinking_turns: self.u64_setting(&key("keepThinkingTurns")),
        })
    }

    /// `llm.maxReplyBytes`: the bytes one model answer may take as it arrives (64 MiB).
    pub fn llm_max_reply_bytes(&self) -> u64 {
        self.u64_setting("llm.maxReplyBytes")
            .unwrap_or(64 * 1024 * 1024)
    }

    /// `llm.timeouts.*` with defaults `{10, 300, 300}`; values out of range read as the default
    /// (and are reported by diagnostics).
    pub fn llm_timeouts(&self) -> LlmTimeoutSettings {
        LlmTimeoutSettings {
            connect_seconds: self
                .u64_setting("llm.timeouts.connectSeconds")
                .unwrap_or(10),
            first_byte_seconds: self
                .u64_setting("llm.timeouts.firstByteSeconds")
                .unwrap_or(300),
            idle_seconds: self.u64_setting("llm.timeouts.idleSeconds").unwrap_or(300),
        }
    }

    /// `defaultProvider` and `defaultModel`: the agent's model.
    pub fn default_model(&self) -> (Option<String>, Option<String>) {
        (
            self.string_setting("defaultProvider"),
            self.string_setting("defaultModel"),
        )
    }

    /// `branchSummary.*` with defaults `{16384, false}`.
    pub fn branch_summary(&self) -> BranchSummarySettings {
        BranchSummarySettings {
            reserve_tokens: self
                .u64_setting("branchSummary.reserveTokens")
                .unwrap_or(16384),
            skip_prompt: self.bool_setting("branchSummary.skipPrompt"),
        }
    }

    /// `retry.*` with defaults `{true, 3, 2000, provider {unset, unset, 60000}}`.
    pub fn retry(&self) -> RetrySettings {
        RetrySettings {
            enabled: self.bool_setting("retry.enabled"),
            max_retries: self.u64_setting("retry.maxRetries").unwrap_or(3),
            base_delay_ms: self.u64_setting("retry.baseDelayMs").unwrap_or(2000),
            provider: ProviderRetrySettings {
                timeout_ms: self.u64_setting("retry.provider.timeoutMs"),
                max_retries: self.u64_setting("retry.provider.maxRetries"),
                max_retry_delay_ms: self
                    .u64_setting("retry.provider.maxRetryDelayMs")
                    .unwrap_or(60000),
            },
        }
    }

    /// `transport` (default `auto`).
    pub fn transport(&self) -> String {
        self.string_setting("transport")
            .unwrap_or_else(|| "auto".to_owned())
    }

    /// `steeringMode` (default `one-at-a-time`).
    pub fn steering_mode(&self) -> String {
        self.string_setting("steeringMode")
            .unwrap_or_else(|| "one-at-a-time".to_owned())
    }

    /// `followUpMode` (default `one-at-a-time`).
    pub fn follow_up_mode(&self) -> String {
        self.string_setting("followUpMode")
            .unwrap_or_else(|| "one-at-a-time".to_owned())
    }

    /// `theme`, unset by default.
    pub fn theme(&self) -> Option<String> {
        self.string_setting("theme")
    }

    /// `enableSkillCommands` (default true).
    pub fn enable_skill_commands(&self) -> bool {
        self.bool_setting("enableSkillCommands")
    }

    /// `terminal.imageWidthCells`: non-numbers → 60, else `max(1, floor(x))`.
    pub fn image_width_cells(&self) -> u64 {
        match self
            .effective_value("terminal.imageWidthCells")
            .and_then(Value::as_f64)
        {
            Some(width) if width.is_finite() => width.floor().max(1.0) as u64,
            Some(_) | None => 60,
        }
    }

    /// `treeFilterMode`; anything outside the allowed set → `default`.
    pub fn tree_filter_mode(&self) -> String {
        self.string_setting("treeFilterMode")
            .unwrap_or_else(|| "default".to_owned())
    }

    /// `server.maxRequestBytes`: the longest request line `ctxkit serve` accepts (64 MiB).
    pub fn server_max_request_bytes(&self) -> u64 {
        self.u64_setting("server.maxRequestBytes")
            .unwrap_or(64 * 1024 * 1024)
    }

    /// `server.maxQueuedBytes`: the bytes of request lines `ctxkit serve` holds behind the running
    /// request before it stops reading (256 MiB).
    pub fn server_max_queued_bytes(&self) -> u64 {
        self.u64_setting("server.maxQueuedBytes")
            .unwrap_or(256 * 1024 * 1024)
    }

    /// `server.token`: the bearer token `serve --listen` requires, when set and non-empty.
    pub fn server_token(&self) -> Option<String> {
        self.string_setting("server.token")
            .filter(|token| !token.is_empty())
    }

    /// `store.leaseSeconds`: how long a database session's writer holds it unrenewed (30).
    pub fn store_lease_seconds(&self) -> u64 {
        self.u64_setting("store.leaseSeconds").unwrap_or(30)
    }

    /// `npmCommand` argv when set and non-empty.
    pub fn npm_command(&self) -> Option<Vec<String>> {
        let value = self.valid_or_default("npmCommand")?;
        let argv: Vec<String> = value
            .as_array()?
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect();
        (!argv.is_empty()).then_some(argv)
    }

    /// `sessionDir` with `~` and `~/` expanded against `home`.
    pub fn session_dir(&self, home: &Path) -> Option<PathBuf> {
        self.string_setting("sessionDir")
            .map(|value| expand_tilde_strict(&value, home))
    }

    /// The raw `packages` entries of one scope's document (not the merged view: both scopes
    /// contribute packages). Invalid entries are skipped (reported by `diagnostics`).
    pub fn packages_in(&self, scope: SettingsScope) -> Vec<Value> {
        self.document(scope)
            .get("packages")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter(|item| match item {
                        Value::String(_) => true,
                        Value::Object(object) => object.get("source").is_some_and(Value::is_string),
                        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => false,
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `extensions` / `skills` / `prompts` / `themes` array of one scope's document.
    pub fn resource_entries_in(&self, scope: SettingsScope, kind: ResourceKind) -> Vec<String> {
        string_array(self.document(scope).get(kind.key()))
    }

    /// The merged (project replaces global) array for a resource kind.
    pub fn resource_entries(&self, kind: ResourceKind) -> Vec<String> {
        string_array(self.effective().get(kind.key()))
    }

    /// The default of a dotted key from the schema (for display).
    pub fn default_value(key: &str) -> Option<Value> {
        Self::default_of(key)
    }
}

fn string_array(value: Option<&Value>) -> Vec<String> {
    crate::json::string_items(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn cache_warming_is_idle_by_default_and_read_from_the_global_settings_only() {
        let default = SettingsManager::in_memory(serde_json::Map::new());
        assert_eq!(default.cache_warming(), "idle");
        let global = json!({"cacheWarming": "off"}).as_object().cloned().unwrap();
        let mut manager = SettingsManager::in_memory(global);
        assert_eq!(manager.cache_warming(), "off");
        // A project, even a trusted one, cannot turn warming (and its spending) back on.
        manager.set_project_trusted(true);
        manager
            .set(SettingsScope::Project, "cacheWarming", json!("idle"))
            .unwrap();
        manager.apply_overrides(
            &json!({"cacheWarming": "idle"})
                .as_object()
                .cloned()
                .unwrap(),
        );
        assert_eq!(manager.cache_warming(), "off");
        let invalid = json!({"cacheWarming": "always"})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(SettingsManager::in_memory(invalid).cache_warming(), "idle");
    }

    #[test]
    fn message_threads_are_unset_unless_the_settings_say() {
        let default = SettingsManager::in_memory(serde_json::Map::new());
        assert_eq!(default.llm().anthropic_supports_message_threads, None);
        let off = json!({"llm": {"anthropic": {"supportsMessageThreads": false}}});
        let off = SettingsManager::in_memory(off.as_object().cloned().unwrap());
        assert_eq!(off.llm().anthropic_supports_message_threads, Some(false));
    }
}
