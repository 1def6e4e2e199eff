//! `compaction.*`, `session.*`, `hooks`, and the engine's enumerations (`contextStrategy`,
//! `summaryRole`): what the context engine reads.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Pi 1.6's `nonNegativeSafeInteger` for compaction budgets: at most `Number.MAX_SAFE_INTEGER`.
pub const MAX_TOKEN_BUDGET: u64 = 9_007_199_254_740_991;

/// What to do when summarization fails after the provider's retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FallbackPolicy {
    /// Report the failure and write nothing (the reference).
    Error,
    /// Keep roughly the newest part of the context and record a compaction whose summary says that
    /// summarization failed and why, so the agent can go on.
    Truncate,
}

/// Where summaries are shown to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SummaryRole {
    /// As a user message with a wrapper (the reference).
    User,
    /// As system text after the system prompt.
    System,
}

/// Who writes compaction summaries (`compaction.provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
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

/// `contextStrategy`: a named set of context settings the engine starts from before the keys a
/// settings document sets itself. An empty settings file reads as `recommended`; `reference` (or
/// its former name `default`) asks for every key at its own default, the reference's behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(extend("enum" = ["recommended", "reference", "default"]))]
pub enum ContextStrategy {
    /// The strategy `docs/simulator.md` measures as "ctxkit recommended": the settings layer
    /// `crate::Settings::recommended_layer` holds. What an empty settings file gets.
    #[default]
    Recommended,
    /// Every key at its own default: the reference's compaction near the window, the transforms'
    /// defaults. Written `"default"` before the recommended strategy became the default, and
    /// still read under that name.
    #[serde(alias = "default")]
    Reference,
}

/// `compaction.*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionConfig {
    /// Compact automatically when the context passes the threshold.
    pub enabled: bool,
    /// Tokens kept free for the model's answer: the threshold is the window minus this (follows
    /// the window when nobody set it).
    #[schemars(range(max = 9_007_199_254_740_991_u64))]
    pub reserve_tokens: u64,
    /// Tokens of recent conversation kept verbatim after a compaction (follows the window when
    /// nobody set it). With `thresholdTokens` set, read as the provider counts them, like the
    /// threshold: ctxkit's estimate of them is divided by how much more the provider has counted.
    #[schemars(range(max = 9_007_199_254_740_991_u64))]
    pub keep_recent_tokens: u64,
    /// Budgets for one model, keyed `provider/modelId` exactly (Pi 1.6); they win over
    /// `reserveTokens` and `keepRecentTokens`.
    #[schemars(extend("x-check" = "modelBudgets"))]
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub model_overrides: BTreeMap<String, CompactionModelOverride>,
    /// Give the summarizer the current contents of the most important files the span touched
    /// (sends file contents to the summary model).
    pub file_context: bool,
    /// Write the summary in the background from `backgroundPercent` of the window on, so the
    /// compaction at the threshold only appends it. Not in print mode (`ctxkit chat -p`): the
    /// summary is kept in memory, and a run that ends before the threshold would throw away what
    /// it cost.
    pub background: bool,
    /// The share of the window (of the threshold when `thresholdTokens` is set) from which the
    /// background summary starts, in percent. After a compaction the provider counted more of than
    /// ctxkit's estimate, the share of the raised threshold (`thresholdTokens` below), so the
    /// compaction that takes the summary keeps about what the share meant.
    #[schemars(range(min = 1, max = 100))]
    pub background_percent: u64,
    /// Compact once the context passes this many tokens, whatever the window (0: off). The
    /// window's own threshold still applies when it is lower. Read against the provider's count;
    /// after a compaction it is raised by what the provider counts of the compaction's leftovers
    /// beyond ctxkit's estimate of them (the budgets that sized them are estimates), so a provider
    /// that counts more does not bring the next compaction within a few calls.
    pub threshold_tokens: u64,
    /// Before a prompt that comes after a pause longer than the prompt cache's lifetime
    /// (`transforms.cacheLifetimeSeconds`), compact once the context passes this many tokens (0:
    /// off): the cache has expired, so the prompt's request writes the whole context anyway, and
    /// every later pause writes only what the compaction left.
    pub idle_threshold_tokens: u64,
    /// Add a compaction's summary after the previous one, kept word for word, while the previous
    /// one is under this many tokens (0: off, every update rewrites the whole summary as the
    /// reference does). The summarizer then writes only the new span's part; past the limit the
    /// update consolidates the summary in full (`ctxkit-compaction`'s `appended_to`). Never more
    /// than 40% of the compaction threshold, whatever the value: a summary near the threshold
    /// would leave a few calls between compactions, and one past it would outgrow the window.
    pub append_summary_tokens: u64,
    /// Send summary requests as a continuation of the conversation's last model request, so the
    /// provider reads them from its prompt cache.
    pub cache_prefix: bool,
    /// Who writes the summaries.
    pub provider: SummaryProvider,
    /// A separate (usually cheaper) model for summaries, `provider/id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What to do when summarization fails (threshold and manual compaction).
    pub fallback: FallbackPolicy,
    /// What to do when summarization fails during overflow recovery.
    pub overflow_fallback: FallbackPolicy,
    /// The share of the context the `truncate` fallback keeps, in percent of its tokens.
    #[schemars(range(min = 1, max = 100))]
    pub truncate_keep_percent: u64,
    /// The offline summary's size, in percent of the span's tokens.
    #[schemars(range(min = 1, max = 100))]
    pub offline_summary_percent: u64,
    /// The offline summary's smallest size, in tokens.
    pub offline_summary_min_tokens: u64,
    /// The offline summary's largest size, in tokens; an update, which carries the earlier summary
    /// as a model's does, may reach twice it.
    #[schemars(range(min = 1))]
    pub offline_summary_max_tokens: u64,
    /// Which of `reserve_tokens` and `keep_recent_tokens` follow the model's window instead of
    /// their value: those nobody set (marked when the settings are read).
    #[serde(skip)]
    #[schemars(skip)]
    pub adaptive: AdaptiveBudgets,
}

/// One entry of `compaction.modelOverrides`: the budgets it sets win over `compaction.reserveTokens`
/// and `compaction.keepRecentTokens` while that model runs the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompactionModelOverride {
    /// The reserve while this model runs the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 9_007_199_254_740_991_u64))]
    pub reserve_tokens: Option<u64>,
    /// The keep budget while this model runs the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 9_007_199_254_740_991_u64))]
    pub keep_recent_tokens: Option<u64>,
}

/// Budgets that follow the model's context window: a small window gets a proportionally small
/// reserve and keep budget. A budget follows the window when no settings file set it: its value
/// (the default, or the context strategy's) is then capped by the window's proportional budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AdaptiveBudgets {
    /// `compaction.reserveTokens` was not set in a settings file.
    pub reserve_tokens: bool,
    /// `compaction.keepRecentTokens` was not set in a settings file.
    pub keep_recent_tokens: bool,
    /// `compaction.appendSummaryTokens` was not set in a settings file.
    pub append_summary_tokens: bool,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: 16_384,
            keep_recent_tokens: 20_000,
            model_overrides: BTreeMap::new(),
            file_context: false,
            background: false,
            background_percent: 75,
            threshold_tokens: 0,
            idle_threshold_tokens: 0,
            append_summary_tokens: 0,
            cache_prefix: false,
            provider: SummaryProvider::Summarizer,
            model: None,
            fallback: FallbackPolicy::Error,
            overflow_fallback: FallbackPolicy::Truncate,
            truncate_keep_percent: 30,
            offline_summary_percent: 8,
            offline_summary_min_tokens: 2_000,
            offline_summary_max_tokens: 6_000,
            adaptive: AdaptiveBudgets::default(),
        }
    }
}

/// The key of `model`'s entry in `compaction.modelOverrides`: `provider/modelId`, as Pi writes it.
pub fn model_override_key(provider: &str, model_id: &str) -> String {
    format!("{provider}/{model_id}")
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
}

/// One command hook (`hooks` in settings): an executable that gets the event as JSON on stdin and
/// may answer JSON on stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandHookConfig {
    /// Program and arguments (no shell).
    pub command: Vec<String>,
    /// The events it receives (`before_compact`, `after_compact`, `compaction_failed`,
    /// `before_tree`, `after_tree`, `before_fork`); empty for all.
    #[serde(default)]
    pub events: Vec<String>,
    /// How long it may run before it is killed and reported, in milliseconds.
    #[serde(default = "default_hook_timeout_ms")]
    pub timeout_ms: u64,
    /// Secret environment variables (provider keys, tokens) the hook may see; every other one is
    /// removed from its environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// Of a trusted project's hook: the project files its command names, as they were when the
    /// user trusted them. Not a setting: filled when the settings load, checked before each run.
    #[serde(skip)]
    #[schemars(skip)]
    pub pinned_scripts: Vec<PinnedScript>,
}

/// A project file a trusted hook's command names, with its digest at trust time
/// ([`crate::script_digest`]): a hook whose script changed since then does not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedScript {
    /// The file as it was trusted (canonical, in the trusted project).
    pub path: std::path::PathBuf,
    /// The command's part that names it, as written (`scripts/after.sh`): where the hook runs,
    /// that name must still be this file's contents.
    pub named: std::path::PathBuf,
    /// [`crate::script_digest`] of the file when trusted; empty when nothing was there to read
    /// (a file that appears since is not the trusted one).
    pub digest: String,
}

fn default_hook_timeout_ms() -> u64 {
    10_000
}

/// How far each append goes towards the disk before it returns (`session.durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionConfig {
    /// How far each append goes towards the disk before it returns.
    pub durability: DurabilityMode,
    /// Entries per `fsync` in `batch` mode.
    #[schemars(range(min = 1, max = 1_000_000))]
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
