//! The engine's settings, read from the merged settings document (the same keys as Pi where Pi has
//! them: `compaction.*`, `branchSummary.*`; ctxkit's own otherwise). Every number is a setting.

use std::borrow::Cow;
use std::collections::BTreeMap;

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

/// Who writes compaction summaries (`compaction.provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SummaryProvider {
    /// The configured summarizer (`compaction.model`, the agent's model, or the offline one).
    #[default]
    #[serde(rename = "summarizer")]
    Summarizer,
    /// The conversation's own model compacts the span the planner chose (Anthropic's on-demand
    /// compaction), on its cached prefix; the offline summarizer when that request fails. Other
    /// models, and compactions with no model request recorded, use the configured summarizer.
    #[serde(rename = "on-demand")]
    OnDemand,
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
    /// The share of the window from which the background summary starts; of the threshold when
    /// `threshold_tokens` is set.
    pub background_percent: u64,
    /// Compact once the context passes this many tokens, whatever the model's window (0: off, the
    /// threshold is window − `reserve_tokens`). The window's own threshold still applies when it
    /// is lower.
    pub threshold_tokens: u64,
    /// Send summary requests as a continuation of the conversation's last model request (same
    /// system prompt, tools and messages, then the instruction), so the provider reads them from
    /// its prompt cache; fresh serialized prompts otherwise, and whenever that request cannot be
    /// continued.
    pub cache_prefix: bool,
    /// Who writes the summaries.
    pub provider: SummaryProvider,
    /// Budgets for one model, keyed `provider/modelId` exactly (Pi 1.6's `compaction.modelOverrides`):
    /// see [`CompactionConfig::for_model`].
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub model_overrides: BTreeMap<String, CompactionModelOverride>,
    /// Which of `reserve_tokens` and `keep_recent_tokens` follow the model's window instead of
    /// their value: those nobody set (`from_document` marks the keys absent from the settings).
    #[serde(skip)]
    pub adaptive: AdaptiveBudgets,
}

/// One entry of `compaction.modelOverrides`: the budgets it sets win over `compaction.reserveTokens`
/// and `compaction.keepRecentTokens` while that model runs the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionModelOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_recent_tokens: Option<u64>,
}

/// The key of `model`'s entry in `compaction.modelOverrides`: `provider/modelId`, as Pi writes it.
pub fn model_override_key(provider: &str, model_id: &str) -> String {
    format!("{provider}/{model_id}")
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
            threshold_tokens: 0,
            cache_prefix: false,
            provider: SummaryProvider::Summarizer,
            model_overrides: BTreeMap::new(),
            adaptive: AdaptiveBudgets::default(),
        }
    }
}

impl CompactionConfig {
    /// These settings while `provider`/`model_id` runs the conversation. Each budget is, as in Pi
    /// 1.6, the model's `compaction.modelOverrides["provider/modelId"]` value (the key matched
    /// exactly), else `compaction.reserveTokens`/`keepRecentTokens`, else the default; a budget the
    /// override sets no longer follows the window. Resolved at every check, so switching models
    /// mid-session switches budgets at the next one.
    pub fn for_model(&self, provider: &str, model_id: &str) -> Cow<'_, CompactionConfig> {
        let Some(entry) = self
            .model_overrides
            .get(&model_override_key(provider, model_id))
            .filter(|entry| entry.reserve_tokens.is_some() || entry.keep_recent_tokens.is_some())
        else {
            return Cow::Borrowed(self);
        };
        let mut resolved = self.clone();
        if let Some(reserve) = entry.reserve_tokens {
            resolved.reserve_tokens = reserve;
            resolved.adaptive.reserve_tokens = false;
        }
        if let Some(keep) = entry.keep_recent_tokens {
            resolved.keep_recent_tokens = keep;
            resolved.adaptive.keep_recent_tokens = false;
        }
        Cow::Owned(resolved)
    }

    /// Sets the reserve for every model (a command-line flag): no model's override changes it.
    pub fn set_reserve_tokens_everywhere(&mut self, reserve: u64) {
        self.reserve_tokens = reserve;
        self.adaptive.reserve_tokens = false;
        for entry in self.model_overrides.values_mut() {
            entry.reserve_tokens = None;
        }
    }

    /// Sets the keep budget for every model (a command-line flag): no model's override changes it.
    pub fn set_keep_recent_tokens_everywhere(&mut self, keep: u64) {
        self.keep_recent_tokens = keep;
        self.adaptive.keep_recent_tokens = false;
        for entry in self.model_overrides.values_mut() {
            entry.keep_recent_tokens = None;
        }
    }

    /// The planning settings for a model with `context_window` tokens (0 when unknown): adaptive
    /// budgets follow the window, the others are taken as set.
    pub fn planning(&self, context_window: u64) -> CompactionSettings {
        let adapted = CompactionSettings::for_context_window(context_window);
        let reserve_tokens = if self.adaptive.reserve_tokens {
            adapted.reserve_tokens
        } else {
            self.reserve_tokens
        };
        let reserve_tokens = if self.threshold_tokens > 0 && context_window > 0 {
            context_window
                .saturating_sub(self.threshold_tokens)
                .max(reserve_tokens)
        } else {
            reserve_tokens
        };
        CompactionSettings {
            enabled: self.enabled,
            reserve_tokens,
            keep_recent_tokens: if self.adaptive.keep_recent_tokens {
                adapted.keep_recent_tokens
            } else {
                self.keep_recent_tokens
            },
        }
    }

    /// The context size (tokens) from which a background summary is written: `background_percent`
    /// of the window, or of the threshold when `threshold_tokens` is set.
    pub fn background_start(&self, context_window: u64) -> u64 {
        let base = if self.threshold_tokens > 0 {
            ctxkit_tokens::compaction_threshold(
                context_window,
                self.planning(context_window).reserve_tokens,
            )
        } else {
            context_window
        };
        base.saturating_mul(self.background_percent) / 100
    }
}

/// `contextStrategy`: a named set of context settings the engine starts from before the keys a
/// settings document sets itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextStrategy {
    /// Every key at its own default (the reference's compaction, the transforms' defaults).
    #[default]
    Default,
    /// The strategy `docs/simulator.md` measures as "ctxkit recommended": see
    /// [`EngineSettings::recommended`].
    Recommended,
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
    /// The events it receives (`before_compact`, `after_compact`, `compaction_failed`,
    /// `before_tree`, `after_tree`, `before_fork`); empty for all.
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
    /// The named strategy the other keys were resolved from (`contextStrategy`).
    pub context_strategy: ContextStrategy,
    pub pinned: PinnedConfig,
    pub summary_role: SummaryRole,
    pub hooks: Vec<CommandHookConfig>,
    /// `defaultThinkingLevel`: the reasoning level summaries are asked at when the surface gives
    /// the engine none (Pi 1.6 sends the session's level with every summary request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_thinking_level: Option<String>,
}

impl Default for EngineSettings {
    fn default() -> Self {
        Self {
            session: SessionConfig::default(),
            compaction: CompactionConfig::default(),
            branch_summary: BranchSummaryConfig::default(),
            transforms: ctxkit_transform::TransformSettings::default(),
            context_strategy: ContextStrategy::Default,
            pinned: PinnedConfig::default(),
            summary_role: SummaryRole::User,
            hooks: Vec::new(),
            default_thinking_level: None,
        }
    }
}

/// The compaction threshold of the recommended strategy, tokens (window-independent).
pub const RECOMMENDED_THRESHOLD_TOKENS: u64 = 40_000;

/// The most names the recommended strategy's prune markers list.
pub const RECOMMENDED_DIGEST_NAMES: usize = 8;

/// Sets `key` of the object `base` to `value`, objects merged key by key.
fn merge_into(base: &mut Value, key: &str, value: &Value) {
    let Value::Object(object) = base else {
        return;
    };
    let slot = object.entry(key.to_owned()).or_insert(Value::Null);
    match (slot, value) {
        (slot @ Value::Object(_), Value::Object(over)) => {
            for (inner, inner_value) in over {
                merge_into(slot, inner, inner_value);
            }
        }
        (slot, value) => *slot = value.clone(),
    }
}

/// A settings value of the wrong type; returned by [`EngineSettings::from_document`]. Fix the
/// settings file (`ctxkit config get|set` names the key).
#[derive(Debug, thiserror::Error)]
pub enum EngineSettingsError {
    /// A value that does not read as its setting's type.
    #[error("invalid engine settings: {0}")]
    Json(#[from] serde_json::Error),
    /// A `compaction.modelOverrides` entry or budget of the wrong shape, named as Pi 1.6 names it.
    #[error("Invalid setting `{key}`: {found}; expected {expected}")]
    Invalid {
        key: String,
        found: String,
        expected: &'static str,
    },
}

/// The largest token budget accepted: JavaScript's `Number.MAX_SAFE_INTEGER`, as Pi 1.6 requires
/// (and small enough that the arithmetic on budgets cannot overflow).
pub const MAX_TOKEN_BUDGET: u64 = 9_007_199_254_740_991;

/// Checks the budgets (`compaction.reserveTokens`, `keepRecentTokens` and every
/// `compaction.modelOverrides` entry) so a bad one is named, as Pi 1.6 names it.
fn check_budgets(document: &Value) -> Result<(), EngineSettingsError> {
    let Some(compaction) = document.get("compaction") else {
        return Ok(());
    };
    let invalid = |key: String, found: &Value, expected| EngineSettingsError::Invalid {
        key,
        found: found.to_string(),
        expected,
    };
    let check_fields = |key: &str, fields: &Value| {
        for field in ["reserveTokens", "keepRecentTokens"] {
            match fields.get(field) {
                Some(value)
                    if value
                        .as_u64()
                        .is_none_or(|budget| budget > MAX_TOKEN_BUDGET) =>
                {
                    return Err(invalid(
                        format!("{key}.{field}"),
                        value,
                        "a non-negative safe integer",
                    ));
                }
                Some(_) | None => {}
            }
        }
        Ok(())
    };
    check_fields("compaction", compaction)?;
    let Some(overrides) = compaction.get("modelOverrides") else {
        return Ok(());
    };
    let Some(entries) = overrides.as_object() else {
        return Err(invalid(
            "compaction.modelOverrides".to_owned(),
            overrides,
            "an object keyed `provider/modelId`",
        ));
    };
    for (model, entry) in entries {
        let key = format!("compaction.modelOverrides[{model:?}]");
        if !entry.is_object() {
            return Err(invalid(key, entry, "an object"));
        }
        check_fields(&key, entry)?;
    }
    Ok(())
}

impl EngineSettings {
    /// Reads the engine's keys from a merged settings document; other keys are ignored, absent ones
    /// take their defaults.
    ///
    /// With `"contextStrategy": "recommended"` the keys start from [`EngineSettings::recommended`]
    /// instead of the defaults; keys the document sets still win.
    pub fn from_document(document: &Value) -> Result<Self, EngineSettingsError> {
        let strategy: ContextStrategy = match document.get("contextStrategy") {
            Some(value) => serde_json::from_value(value.clone())?,
            None => ContextStrategy::Default,
        };
        check_budgets(document)?;
        let base = match strategy {
            ContextStrategy::Default => Self::default(),
            ContextStrategy::Recommended => Self::recommended(),
        };
        let mut merged = serde_json::to_value(&base)?;
        for key in [
            "session",
            "compaction",
            "branchSummary",
            "transforms",
            "pinned",
            "summaryRole",
            "hooks",
            "defaultThinkingLevel",
        ] {
            if let Some(value) = document.get(key) {
                merge_into(&mut merged, key, value);
            }
        }
        let mut settings: Self = serde_json::from_value(merged)?;
        settings.context_strategy = strategy;
        let set = |key: &str| {
            document
                .get("compaction")
                .and_then(|compaction| compaction.get(key))
                .is_some()
        };
        settings.compaction.adaptive = AdaptiveBudgets {
            reserve_tokens: !set("reserveTokens"),
            keep_recent_tokens: !set("keepRecentTokens") && strategy == ContextStrategy::Default,
        };
        Ok(settings)
    }

    /// `"contextStrategy": "recommended"`, the settings `docs/simulator.md` measures as "ctxkit
    /// recommended": every tool result but the latest cut to a head, a tail and a marker naming up
    /// to 8 of what it omitted (`transforms.keepRecentToolResults` 1, `pruneDigestNames` 12);
    /// compaction once the context passes 40,000 tokens whatever the window
    /// (`compaction.thresholdTokens`; the window's own threshold when lower), keeping 10,000; the
    /// summary written in the background from 80% of that threshold and sent as a continuation of
    /// the cached conversation (`compaction.cachePrefix`). Everything else is the default.
    pub fn recommended() -> Self {
        let mut settings = Self {
            context_strategy: ContextStrategy::Recommended,
            ..Self::default()
        };
        settings.transforms.keep_recent_tool_results = 1;
        settings.transforms.prune_digest_names = RECOMMENDED_DIGEST_NAMES;
        settings.compaction.threshold_tokens = RECOMMENDED_THRESHOLD_TOKENS;
        settings.compaction.keep_recent_tokens = 10_000;
        settings.compaction.background = true;
        settings.compaction.background_percent = 80;
        settings.compaction.cache_prefix = true;
        settings
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
    fn the_recommended_strategy_resolves_against_the_window() {
        let settings =
            EngineSettings::from_document(&json!({"contextStrategy": "recommended"})).unwrap();
        assert_eq!(settings.context_strategy, ContextStrategy::Recommended);
        assert_eq!(settings.transforms.keep_recent_tool_results, 1);
        assert_eq!(settings.transforms.prune_digest_names, 8);
        assert!(settings.compaction.background && settings.compaction.cache_prefix);
        // 40,000 tokens whatever the window: reserve = window − 40,000.
        for (window, reserve) in [(200_000, 160_000), (1_000_000, 960_000)] {
            let planning = settings.compaction.planning(window);
            assert_eq!(planning.reserve_tokens, reserve);
            assert_eq!(planning.keep_recent_tokens, 10_000);
            assert_eq!(settings.compaction.background_start(window), 32_000);
        }
        assert_eq!(settings.compaction.planning(50_000).reserve_tokens, 10_000);
        // A window whose own threshold is lower keeps it: 40,000 − 5,000 (the adapted reserve).
        let small = settings.compaction.planning(40_000);
        assert_eq!(small.reserve_tokens, 5_000);
        assert_eq!(small.keep_recent_tokens, 10_000);
        assert_eq!(settings.compaction.background_start(40_000), 28_000);
        // Keys the document sets win over the strategy's.
        let settings = EngineSettings::from_document(&json!({
            "contextStrategy": "recommended",
            "transforms": {"keepRecentToolResults": 3},
            "compaction": {"thresholdTokens": 60_000},
        }))
        .unwrap();
        assert_eq!(settings.transforms.keep_recent_tool_results, 3);
        assert_eq!(settings.transforms.prune_digest_names, 8);
        assert_eq!(
            settings.compaction.planning(200_000).reserve_tokens,
            140_000
        );
        // The default strategy is the defaults, and its background start is a share of the window.
        let settings =
            EngineSettings::from_document(&json!({"contextStrategy": "default"})).unwrap();
        assert_eq!(
            settings.transforms,
            ctxkit_transform::TransformSettings::default()
        );
        assert_eq!(settings.compaction.background_start(200_000), 150_000);
        assert!(EngineSettings::from_document(&json!({"contextStrategy": "cheap"})).is_err());
    }

    #[test]
    fn a_model_override_wins_per_field_for_its_exact_key_only() {
        let settings = EngineSettings::from_document(&json!({
            "compaction": {
                "reserveTokens": 9_000,
                "modelOverrides": {
                    "anthropic/claude-sonnet-4-5": {"keepRecentTokens": 3_000},
                    "openai/gpt-4.1": {"reserveTokens": 50_000, "keepRecentTokens": 40_000},
                    "openai/empty": {},
                },
            },
        }))
        .unwrap();
        let compaction = &settings.compaction;
        // Override, then the ordinary setting, then the default (which follows the window).
        let sonnet = compaction
            .for_model("anthropic", "claude-sonnet-4-5")
            .planning(200_000);
        assert_eq!(
            (sonnet.reserve_tokens, sonnet.keep_recent_tokens),
            (9_000, 3_000)
        );
        let gpt = compaction.for_model("openai", "gpt-4.1").planning(8_000);
        assert_eq!(
            (gpt.reserve_tokens, gpt.keep_recent_tokens),
            (50_000, 40_000),
            "an override is a value someone set: it does not follow the window"
        );
        for (provider, id) in [
            ("openai", "empty"),
            ("openai", "GPT-4.1"),
            ("openai/gpt-4.1", ""),
            ("", "openai/gpt-4.1"),
            ("anthropic", "claude-sonnet-4-5 "),
        ] {
            assert!(
                matches!(compaction.for_model(provider, id), Cow::Borrowed(_)),
                "{provider:?} {id:?}"
            );
        }
        let other = compaction.for_model("google", "gemini").planning(8_000);
        assert_eq!(
            (other.reserve_tokens, other.keep_recent_tokens),
            (9_000, 2_000)
        );
        // A command-line flag wins over every model's override.
        let mut flagged = compaction.clone();
        flagged.set_keep_recent_tokens_everywhere(1_234);
        let gpt = flagged.for_model("openai", "gpt-4.1").planning(200_000);
        assert_eq!(
            (gpt.reserve_tokens, gpt.keep_recent_tokens),
            (50_000, 1_234)
        );
    }

    #[test]
    fn malformed_model_overrides_are_errors() {
        for overrides in [
            json!({"a/b": 5}),
            json!({"a/b": null}),
            json!({"a/b": {"reserveTokens": -1}}),
            json!({"a/b": {"keepRecentTokens": 1.5}}),
            json!({"a/b": {"keepRecentTokens": "100"}}),
            json!(["a/b"]),
        ] {
            let document = json!({"compaction": {"modelOverrides": overrides}});
            assert!(
                EngineSettings::from_document(&document).is_err(),
                "{document}"
            );
        }
        let error = EngineSettings::from_document(&json!({"compaction": {"modelOverrides": {
            "a/b": {"keepRecentTokens": 100}, "c/d": {"reserveTokens": -1}
        }}}))
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"Invalid setting `compaction.modelOverrides["c/d"].reserveTokens`: -1; expected a non-negative safe integer"#
        );
    }

    #[test]
    fn budgets_past_the_safe_integers_are_refused_and_the_largest_plans_without_overflow() {
        for document in [
            json!({"compaction": {"reserveTokens": 9_007_199_254_740_992_u64}}),
            json!({"compaction": {"keepRecentTokens": u64::MAX}}),
            json!({"compaction": {"modelOverrides": {"a/b": {"reserveTokens": u64::MAX}}}}),
        ] {
            assert!(
                EngineSettings::from_document(&document).is_err(),
                "{document}"
            );
        }
        let settings = EngineSettings::from_document(&json!({"compaction": {
            "modelOverrides": {"a/b": {"reserveTokens": MAX_TOKEN_BUDGET, "keepRecentTokens": MAX_TOKEN_BUDGET}}
        }}))
        .unwrap();
        let planning = settings.compaction.for_model("a", "b").planning(200_000);
        assert_eq!(planning.reserve_tokens, MAX_TOKEN_BUDGET);
        assert!(planning.max_summary_tokens() > planning.max_turn_prefix_tokens());
    }

    #[test]
    fn a_model_id_holding_a_slash_is_matched_whole() {
        let settings = EngineSettings::from_document(&json!({"compaction": {"modelOverrides": {
            "openrouter/anthropic/claude-sonnet-4.5": {"keepRecentTokens": 1_000}
        }}}))
        .unwrap();
        let compaction = &settings.compaction;
        let planning = compaction
            .for_model("openrouter", "anthropic/claude-sonnet-4.5")
            .planning(200_000);
        assert_eq!(planning.keep_recent_tokens, 1_000);
        assert!(matches!(
            compaction.for_model("openrouter/anthropic", "claude-sonnet-4"),
            Cow::Borrowed(_)
        ));
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
