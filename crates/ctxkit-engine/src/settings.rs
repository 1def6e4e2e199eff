//! The engine's settings, read from the merged settings document (the same keys as Pi where Pi has
//! them: `compaction.*`, `branchSummary.*`; ctxkit's own otherwise). Every number is a setting.

use ctxkit_compaction::CompactionSettings;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What to do when summarization fails after the provider's retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackPolicy {
    /// Report the failure and write nothing (the reference).
    Error,
    /// Keep roughly the newest part of the context and record a compaction whose summary says that
    /// summarization failed and why, so the agent can go on.
    Truncate,
}

/// Where summaries are shown to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryRole {
    /// As a user message with a wrapper (the reference).
    User,
    /// As system text after the system prompt.
    System,
}

/// `compaction.*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionConfig {
    pub enabled: bool,
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
    /// The fallback of threshold and manual compactions.
    pub fallback: FallbackPolicy,
    /// The fallback of overflow recovery.
    pub overflow_fallback: FallbackPolicy,
    /// The share of the context the `truncate` fallback keeps, in percent of its tokens.
    pub truncate_keep_percent: u64,
    /// Give the summarizer the current contents of the files the span touched.
    pub file_context: bool,
    /// Write the summary in the background from `background_percent` of the window on, so the
    /// compaction at the threshold only appends it (when the branch has not moved past it).
    pub background: bool,
    /// The share of the window from which the background summary starts.
    pub background_percent: u64,
    /// Send summary requests as a continuation of the conversation's last model request (same
    /// system prompt, tools and messages, then the instruction), so the provider reads them from
    /// its prompt cache; fresh serialized prompts otherwise, and whenever that request cannot be
    /// continued.
    pub cache_prefix: bool,
    /// Which of `reserve_tokens` and `keep_recent_tokens` follow the model's window instead of
    /// their value: those nobody set (`from_document` marks the keys absent from the settings).
    #[serde(skip)]
    pub adaptive: AdaptiveBudgets,
}

/// Budgets that follow the model's context window (`CompactionSettings::for_context_window`): a
/// small window gets a proportionally small reserve and keep budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AdaptiveBudgets {
    pub reserve_tokens: bool,
    pub keep_recent_tokens: bool,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        let reference = CompactionSettings::default();
        Self {
            enabled: reference.enabled,
            reserve_tokens: reference.reserve_tokens,
            keep_recent_tokens: reference.keep_recent_tokens,
            fallback: FallbackPolicy::Error,
            overflow_fallback: FallbackPolicy::Truncate,
            truncate_keep_percent: 30,
            file_context: false,
            background: false,
            background_percent: 75,
            cache_prefix: false,
            adaptive: AdaptiveBudgets::default(),
        }
    }
}

impl CompactionConfig {
    /// The planning settings for a model with `context_window` tokens (0 when unknown): adaptive
    /// budgets follow the window, the others are taken as set.
    pub fn planning(&self, context_window: u64) -> CompactionSettings {
        let adapted = CompactionSettings::for_context_window(context_window);
        CompactionSettings {
            enabled: self.enabled,
            reserve_tokens: if self.adaptive.reserve_tokens {
                adapted.reserve_tokens
            } else {
                self.reserve_tokens
            },
            keep_recent_tokens: if self.adaptive.keep_recent_tokens {
                adapted.keep_recent_tokens
            } else {
                self.keep_recent_tokens
            },
        }
    }
}

/// `branchSummary.*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BranchSummaryConfig {
    /// The summary's input budget is the window minus this.
    pub reserve_tokens: u64,
}

impl Default for BranchSummaryConfig {
    fn default() -> Self {
        Self {
            reserve_tokens: 16_384,
        }
    }
}

/// `pinned.*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PinnedConfig {
    /// The most tokens pinned context may take; pins beyond it are refused.
    pub max_tokens: u64,
}

impl Default for PinnedConfig {
    fn default() -> Self {
        Self { max_tokens: 4_000 }
    }
}

/// One command hook (`hooks` in settings): an executable that gets the event as JSON on stdin and
/// may answer JSON on stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandHookConfig {
    /// Program and arguments (no shell).
    pub command: Vec<String>,
    /// The events it receives (`before_compact`, `after_compact`, `before_tree`, `after_tree`,
    /// `before_fork`); empty for all.
    #[serde(default)]
    pub events: Vec<String>,
    /// How long it may run before it is killed and reported.
    #[serde(default = "default_hook_timeout_ms")]
    pub timeout_ms: u64,
    /// Secret environment variables (provider keys, tokens) the hook may see; every other one is
    /// removed from its environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
}

fn default_hook_timeout_ms() -> u64 {
    10_000
}

/// How far each append goes towards the disk before it returns (`session.durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DurabilityMode {
    /// Write and flush each entry: survives the process being killed.
    #[default]
    Flush,
    /// Also `fsync` each entry: survives power loss.
    Sync,
    /// `fsync` every `syncEvery` entries: power loss loses at most the last `syncEvery` − 1.
    Batch,
}

/// `session.*`: how the session file is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionConfig {
    pub durability: DurabilityMode,
    /// Entries per `fsync` in `batch` mode; 0 reads as 1.
    pub sync_every: u32,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            durability: DurabilityMode::Flush,
            sync_every: 100,
        }
    }
}

impl SessionConfig {
    /// The session store's durability for these settings.
    pub fn durability(&self) -> ctxkit_session::Durability {
        match self.durability {
            DurabilityMode::Flush => ctxkit_session::Durability::Flush,
            DurabilityMode::Sync => ctxkit_session::Durability::SyncEach,
            DurabilityMode::Batch => ctxkit_session::Durability::SyncEvery(
                std::num::NonZeroU32::new(self.sync_every).unwrap_or(std::num::NonZeroU32::MIN),
            ),
        }
    }
}

/// Every engine setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EngineSettings {
    pub session: SessionConfig,
    pub compaction: CompactionConfig,
    pub branch_summary: BranchSummaryConfig,
    pub transforms: ctxkit_transform::TransformSettings,
    pub pinned: PinnedConfig,
    pub summary_role: SummaryRole,
    pub hooks: Vec<CommandHookConfig>,
}

impl Default for EngineSettings {
    fn default() -> Self {
        Self {
            session: SessionConfig::default(),
            compaction: CompactionConfig::default(),
            branch_summary: BranchSummaryConfig::default(),
            transforms: ctxkit_transform::TransformSettings::default(),
            pinned: PinnedConfig::default(),
            summary_role: SummaryRole::User,
            hooks: Vec::new(),
        }
    }
}

/// A settings value of the wrong type.
#[derive(Debug, thiserror::Error)]
#[error("invalid engine settings: {0}")]
pub struct EngineSettingsError(#[from] serde_json::Error);

/// The old name of [`EngineSettingsError`], kept so code written against it compiles; hidden so
/// an embedder meets one `SettingsError` (the settings files' own, in `ctxkit-settings`).
#[doc(hidden)]
pub type SettingsError = EngineSettingsError;

impl EngineSettings {
    /// Reads the engine's keys from a merged settings document; other keys are ignored, absent ones
    /// take their defaults.
    pub fn from_document(document: &Value) -> Result<Self, EngineSettingsError> {
        let mut picked = serde_json::Map::new();
        for key in [
            "session",
            "compaction",
            "branchSummary",
            "transforms",
            "pinned",
            "summaryRole",
            "hooks",
        ] {
            if let Some(value) = document.get(key) {
                picked.insert(key.to_owned(), value.clone());
            }
        }
        let mut settings: Self = serde_json::from_value(Value::Object(picked))?;
        let set = |key: &str| {
            document
                .get("compaction")
                .and_then(|compaction| compaction.get(key))
                .is_some()
        };
        settings.compaction.adaptive = AdaptiveBudgets {
            reserve_tokens: !set("reserveTokens"),
            keep_recent_tokens: !set("keepRecentTokens"),
        };
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_known_keys_and_defaults_the_rest() {
        let settings = EngineSettings::from_document(&json!({
            "compaction": {"reserveTokens": 1000, "fallback": "truncate"},
            "summaryRole": "system",
            "theme": "dark",
        }))
        .unwrap();
        assert_eq!(settings.compaction.reserve_tokens, 1000);
        assert_eq!(settings.compaction.keep_recent_tokens, 20_000);
        assert_eq!(settings.compaction.fallback, FallbackPolicy::Truncate);
        assert_eq!(
            settings.compaction.overflow_fallback,
            FallbackPolicy::Truncate
        );
        assert_eq!(settings.summary_role, SummaryRole::System);
        // The reserve was set, so it stays; the keep budget follows the window.
        let planning = settings.compaction.planning(8_000);
        assert_eq!(planning.reserve_tokens, 1000);
        assert_eq!(planning.keep_recent_tokens, 2_000);
        assert_eq!(
            settings.compaction.planning(200_000).keep_recent_tokens,
            20_000
        );
        assert_eq!(
            settings.session.durability(),
            ctxkit_session::Durability::Flush
        );
    }

    #[test]
    fn durability_modes_map_to_the_store() {
        let durability = |value: Value| {
            EngineSettings::from_document(&json!({ "session": value }))
                .unwrap()
                .session
                .durability()
        };
        assert_eq!(
            durability(json!({"durability": "sync"})),
            ctxkit_session::Durability::SyncEach
        );
        let every = |count: u32| {
            ctxkit_session::Durability::SyncEvery(std::num::NonZeroU32::new(count).unwrap())
        };
        assert_eq!(durability(json!({"durability": "batch"})), every(100));
        assert_eq!(
            durability(json!({"durability": "batch", "syncEvery": 10})),
            every(10)
        );
        assert_eq!(
            durability(json!({"durability": "batch", "syncEvery": 0})),
            every(1)
        );
    }

    #[test]
    fn wrong_types_are_errors() {
        let error =
            EngineSettings::from_document(&json!({"compaction": {"enabled": "yes"}})).unwrap_err();
        assert!(
            error.to_string().contains("invalid engine settings"),
            "{error}"
        );
    }
}
