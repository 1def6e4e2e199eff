//! The engine's settings: the sections of the typed settings tree ([`ctxkit_settings::Settings`])
//! the engine reads — `compaction`, `session`, `branchSummary`, `transforms`, `pinned`,
//! `summaryRole`, `hooks`, `defaultThinkingLevel`, `images.blockImages` — and the arithmetic the engine does on them
//! (budgets for a model's window, the background summary's start, the store's durability).

use ctxkit_compaction::CompactionSettings;
use ctxkit_settings::{
    AdaptiveBudgets, BranchSummaryConfig, CommandHookConfig, CompactionConfig, ContextStrategy,
    DurabilityMode, PinnedConfig, SessionConfig, Settings, SummaryRole, TransformSettings,
};
use serde::{Deserialize, Serialize};

/// Every engine setting: its sections of the settings tree, taken as they were read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EngineSettings {
    pub session: SessionConfig,
    pub compaction: CompactionConfig,
    pub branch_summary: BranchSummaryConfig,
    pub transforms: TransformSettings,
    /// The named strategy the other keys were resolved from (`contextStrategy`).
    pub context_strategy: ContextStrategy,
    pub pinned: PinnedConfig,
    pub summary_role: SummaryRole,
    pub hooks: Vec<CommandHookConfig>,
    /// `defaultThinkingLevel`: the reasoning level summaries are asked at when the surface gives
    /// the engine none (Pi 1.6 sends the session's level with every summary request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_thinking_level: Option<String>,
    /// `images.blockImages`: no image reaches a model; each is replaced by a line saying so.
    pub block_images: bool,
}

impl Default for EngineSettings {
    /// The tree's defaults, every budget as set (not following the window).
    fn default() -> Self {
        Self::from_settings(&Settings::default())
    }
}

impl EngineSettings {
    /// The engine's sections of settings read once by `ctxkit_settings::SettingsManager`
    /// (`SettingsManager::settings`): wrong values already replaced by their defaults, the
    /// context strategy's layer already beneath the files, budgets nobody set marked adaptive.
    pub fn from_settings(settings: &Settings) -> Self {
        Self {
            session: settings.session.clone(),
            compaction: settings.compaction.clone(),
            branch_summary: settings.branch_summary,
            transforms: settings.transforms.clone(),
            context_strategy: settings.context_strategy,
            pinned: settings.pinned,
            summary_role: settings.summary_role,
            hooks: settings.hooks.clone(),
            default_thinking_level: settings.default_thinking_level.clone(),
            block_images: settings.images.block_images,
        }
    }

    /// `"contextStrategy": "recommended"` on its own (`Settings::recommended`), every budget as
    /// set: the settings `docs/simulator.md` measures as "ctxkit recommended".
    pub fn recommended() -> Self {
        let mut settings = Self::from_settings(&Settings::recommended());
        settings.compaction.adaptive = AdaptiveBudgets::default();
        settings
    }
}

/// The most of the compaction threshold a summary grows to by appended updates, whatever
/// `appendSummaryTokens` says: the recommended 24,000 of its 60,000. On a generated 2,000-call
/// session a limit of 80% of the threshold made 95 compactions where 40% made 53, and with no
/// limit the summary outgrew the window and 1,094 requests overflowed (docs/simulator.md,
/// twenty-eighth round).
const APPEND_THRESHOLD_SHARE_PERCENT: u64 = 40;

/// The context size the compaction check compares with: the window less the planned reserve
/// (which `thresholdTokens` raises).
fn planned_threshold(config: &CompactionConfig, context_window: u64) -> u64 {
    ctxkit_tokens::compaction_threshold(
        context_window,
        config.planning(context_window).reserve_tokens,
    )
}

/// The engine's arithmetic over `compaction.*` for a model's window.
pub trait CompactionBudgets {
    /// The planning settings for a model with `context_window` tokens (0 when unknown): adaptive
    /// budgets follow the window, the others are taken as set.
    fn planning(&self, context_window: u64) -> CompactionSettings;
    /// The context size (tokens) from which a background summary is written: `background_percent`
    /// of the window, or of the threshold when `threshold_tokens` is set.
    fn background_start(&self, context_window: u64) -> u64;
    /// The size below which a summary update is appended (`append_summary_tokens`). When no
    /// settings file set it, a small window (one whose budgets follow it) does not append: its
    /// summaries have a few hundred tokens each, and a summary grown by updates would take the
    /// room its budgets keep for the conversation. Whoever set it, a summary never grows by
    /// updates past `APPEND_THRESHOLD_SHARE_PERCENT` of the compaction threshold: one near the
    /// threshold leaves a few calls between compactions, and one past it outgrows the window.
    fn append_below_tokens(&self, context_window: u64) -> u64;
}

impl CompactionBudgets for CompactionConfig {
    fn planning(&self, context_window: u64) -> CompactionSettings {
        let adapted = CompactionSettings::for_context_window(context_window);
        // A budget no settings file set follows the window: the default's or the strategy's value,
        // never more than the window's proportional budget.
        let reserve_tokens = if self.adaptive.reserve_tokens {
            self.reserve_tokens.min(adapted.reserve_tokens)
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
                self.keep_recent_tokens.min(adapted.keep_recent_tokens)
            } else {
                self.keep_recent_tokens
            },
        }
    }

    fn append_below_tokens(&self, context_window: u64) -> u64 {
        let small =
            CompactionSettings::for_context_window(context_window) != CompactionSettings::default();
        if self.adaptive.append_summary_tokens && small {
            return 0;
        }
        // The threshold the compaction checks: the window's less the reserve (which
        // `thresholdTokens` raises), or `thresholdTokens` alone when the window is unknown.
        let threshold = if context_window > 0 {
            planned_threshold(self, context_window)
        } else {
            self.threshold_tokens
        };
        if threshold == 0 {
            return self.append_summary_tokens;
        }
        let share = threshold.saturating_mul(APPEND_THRESHOLD_SHARE_PERCENT) / 100;
        self.append_summary_tokens.min(share)
    }

    fn background_start(&self, context_window: u64) -> u64 {
        let base = if self.threshold_tokens > 0 {
            planned_threshold(self, context_window)
        } else {
            context_window
        };
        base.saturating_mul(self.background_percent) / 100
    }
}

/// The session store's durability for `session.*`.
pub fn durability(session: &SessionConfig) -> ctxkit_session::Durability {
    match session.durability {
        DurabilityMode::Flush => ctxkit_session::Durability::Flush,
        DurabilityMode::Sync => ctxkit_session::Durability::SyncEach,
        DurabilityMode::Batch => ctxkit_session::Durability::SyncEvery(
            std::num::NonZeroU32::new(session.sync_every).unwrap_or(std::num::NonZeroU32::MIN),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use ctxkit_settings::{FallbackPolicy, MAX_TOKEN_BUDGET, SettingsDiagnostic, SettingsManager};
    use serde_json::{Value, json};

    use super::*;

    fn manager(document: Value) -> SettingsManager {
        SettingsManager::in_memory(document.as_object().cloned().unwrap_or_default())
    }

    fn read(document: Value) -> EngineSettings {
        EngineSettings::from_settings(manager(document).settings())
    }

    fn invalid_keys(document: Value) -> Vec<String> {
        manager(document)
            .diagnostics()
            .into_iter()
            .filter_map(|diagnostic| match diagnostic {
                SettingsDiagnostic::InvalidValue { key, .. } => Some(key),
                SettingsDiagnostic::UnknownKey { .. }
                | SettingsDiagnostic::IgnoredValue { .. }
                | SettingsDiagnostic::DuplicateKey { .. } => None,
            })
            .collect()
    }

    #[test]
    fn reads_known_keys_and_defaults_the_rest() {
        let settings = read(json!({
            "compaction": {"reserveTokens": 1000, "fallback": "truncate"},
            "summaryRole": "system",
            "theme": "dark",
        }));
        assert_eq!(settings.compaction.reserve_tokens, 1000);
        // An empty or partial settings file starts from the recommended strategy.
        assert_eq!(settings.compaction.keep_recent_tokens, 10_000);
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
            10_000
        );
        assert_eq!(
            durability(&settings.session),
            ctxkit_session::Durability::Flush
        );
    }

    #[test]
    fn durability_modes_map_to_the_store() {
        let mode = |value: Value| durability(&read(json!({ "session": value })).session);
        assert_eq!(
            mode(json!({"durability": "sync"})),
            ctxkit_session::Durability::SyncEach
        );
        let every = |count: u32| {
            ctxkit_session::Durability::SyncEvery(std::num::NonZeroU32::new(count).unwrap())
        };
        assert_eq!(mode(json!({"durability": "batch"})), every(100));
        assert_eq!(
            mode(json!({"durability": "batch", "syncEvery": 10})),
            every(10)
        );
        let zero = SessionConfig {
            durability: DurabilityMode::Batch,
            sync_every: 0,
        };
        assert_eq!(durability(&zero), every(1));
    }

    #[test]
    fn the_recommended_strategy_resolves_against_the_window() {
        let settings = read(json!({"contextStrategy": "recommended"}));
        assert_eq!(settings.context_strategy, ContextStrategy::Recommended);
        assert_eq!(settings.transforms.keep_recent_tool_results, 1);
        assert_eq!(settings.transforms.prune_digest_names, 32);
        assert_eq!(settings.transforms.prune_digest_chars, 480);
        assert!(settings.transforms.long_cache_when_it_pays);
        assert!(settings.compaction.background && settings.compaction.cache_prefix);
        // 60,000 tokens whatever the window: reserve = window − 60,000.
        for (window, reserve) in [(200_000, 140_000), (1_000_000, 940_000)] {
            let planning = settings.compaction.planning(window);
            assert_eq!(planning.reserve_tokens, reserve);
            assert_eq!(planning.keep_recent_tokens, 10_000);
            assert_eq!(settings.compaction.background_start(window), 54_000);
        }
        assert_eq!(settings.compaction.planning(80_000).reserve_tokens, 20_000);
        // A 50,000-token window's own threshold (an eighth reserved) is lower than 60,000.
        assert_eq!(settings.compaction.planning(50_000).reserve_tokens, 6_250);
        // A window whose own threshold is lower keeps it: 40,000 − 5,000 (the adapted reserve).
        let small = settings.compaction.planning(40_000);
        assert_eq!(small.reserve_tokens, 5_000);
        assert_eq!(small.keep_recent_tokens, 10_000);
        assert_eq!(settings.compaction.background_start(40_000), 31_500);
        // A small window caps the strategy's budgets by its proportional ones, as it caps the
        // defaults': an 8,192-token window keeps 2,048 tokens, not 10,000 (more than it holds).
        let tiny = settings.compaction.planning(8_192);
        assert_eq!(
            (tiny.reserve_tokens, tiny.keep_recent_tokens),
            (1_024, 2_048)
        );
        // A budget a settings file sets is taken as set, whatever the window.
        let kept = read(json!({"compaction": {"keepRecentTokens": 10_000}}));
        assert_eq!(kept.compaction.planning(8_192).keep_recent_tokens, 10_000);
        // Summary updates are appended in a large window, not in a small one, unless a file
        // asks for it.
        assert_eq!(settings.compaction.append_below_tokens(200_000), 24_000);
        assert_eq!(settings.compaction.append_below_tokens(0), 24_000);
        assert_eq!(settings.compaction.append_below_tokens(32_768), 0);
        let asked = read(json!({"compaction": {"appendSummaryTokens": 3_000}}));
        assert_eq!(asked.compaction.append_below_tokens(16_384), 3_000);
        // On an 8,192-token window even that is 40% of the threshold (8,192 − 1,024) at most.
        assert_eq!(
            asked.compaction.append_below_tokens(8_192),
            (8_192 - 1_024) * 40 / 100
        );
        // A summary grows by updates to 40% of the compaction threshold at most, whoever set
        // the limit: a lower `thresholdTokens`, a window's own threshold, an unknown window.
        let lower = read(json!({"compaction": {"thresholdTokens": 30_000}}));
        assert_eq!(lower.compaction.append_below_tokens(200_000), 12_000);
        assert_eq!(lower.compaction.append_below_tokens(0), 12_000);
        let both = read(json!({
            "compaction": {"thresholdTokens": 30_000, "appendSummaryTokens": 20_000},
        }));
        assert_eq!(both.compaction.append_below_tokens(200_000), 12_000);
        let endless = read(json!({
            "contextStrategy": "reference",
            "compaction": {"appendSummaryTokens": 1_000_000_000},
        }));
        // Pi's threshold on a 200,000-token window: 200,000 − 16,384.
        assert_eq!(
            endless.compaction.append_below_tokens(200_000),
            (200_000 - 16_384) * 40 / 100
        );
        assert_eq!(
            endless.compaction.append_below_tokens(0),
            1_000_000_000,
            "no window and no threshold: nothing to bound it by"
        );
        // Keys the document sets win over the strategy's.
        let settings = read(json!({
            "contextStrategy": "recommended",
            "transforms": {"keepRecentToolResults": 3},
            "compaction": {"thresholdTokens": 80_000},
        }));
        assert_eq!(settings.transforms.keep_recent_tool_results, 3);
        assert_eq!(settings.transforms.prune_digest_names, 32);
        assert_eq!(
            settings.compaction.planning(200_000).reserve_tokens,
            120_000
        );
        // The reference strategy (also read under its former name, `default`) is every key at
        // its own default, and its background start is a share of the window.
        for name in ["reference", "default"] {
            let settings = read(json!({"contextStrategy": name}));
            assert_eq!(settings.context_strategy, ContextStrategy::Reference);
            assert_eq!(settings.transforms, TransformSettings::default());
            assert_eq!(settings.compaction.background_start(200_000), 150_000);
        }
        // An empty settings document is the recommended strategy.
        let empty = read(json!({}));
        assert_eq!(empty.context_strategy, ContextStrategy::Recommended);
        assert_eq!(empty, read(json!({"contextStrategy": "recommended"})));
        // An unknown strategy is named and the default one (recommended) applies.
        assert_eq!(
            invalid_keys(json!({"contextStrategy": "cheap"})),
            ["contextStrategy"]
        );
        assert_eq!(
            read(json!({"contextStrategy": "cheap"})).context_strategy,
            ContextStrategy::Recommended
        );
        // The recommended settings on their own are the same as read from the setting.
        let alone = EngineSettings::recommended();
        assert_eq!(
            alone.transforms,
            read(json!({"contextStrategy": "recommended"})).transforms
        );
        assert!(!alone.compaction.adaptive.reserve_tokens);
    }

    #[test]
    fn a_model_override_wins_per_field_for_its_exact_key_only() {
        // The reference strategy: the threshold follows the reserve, not a fixed size.
        let settings = read(json!({
            "contextStrategy": "reference",
            "compaction": {
                "reserveTokens": 9_000,
                "modelOverrides": {
                    "anthropic/claude-sonnet-4-5": {"keepRecentTokens": 3_000},
                    "openai/gpt-4.1": {"reserveTokens": 50_000, "keepRecentTokens": 40_000},
                    "openai/empty": {},
                },
            },
        }));
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
    fn malformed_model_overrides_are_named_with_pi_s_wording_of_the_key() {
        for overrides in [
            json!({"a/b": 5}),
            json!({"a/b": {"reserveTokens": -1}}),
            json!({"a/b": {"keepRecentTokens": 1.5}}),
            json!({"a/b": {"keepRecentTokens": "100"}}),
            json!(["a/b"]),
        ] {
            let document = json!({"compaction": {"modelOverrides": overrides}});
            assert_eq!(invalid_keys(document.clone()).len(), 1, "{document}");
            assert!(read(document).compaction.model_overrides.is_empty());
        }
        let keys = invalid_keys(json!({"compaction": {"modelOverrides": {
            "a/b": {"keepRecentTokens": 100}, "c/d": {"reserveTokens": -1}
        }}}));
        assert_eq!(keys, [r#"compaction.modelOverrides["c/d"].reserveTokens"#]);
    }

    #[test]
    fn budgets_past_the_safe_integers_are_refused_and_the_largest_plans_without_overflow() {
        for document in [
            json!({"compaction": {"reserveTokens": 9_007_199_254_740_992_u64}}),
            json!({"compaction": {"keepRecentTokens": u64::MAX}}),
            json!({"compaction": {"modelOverrides": {"a/b": {"reserveTokens": u64::MAX}}}}),
        ] {
            assert_eq!(invalid_keys(document.clone()).len(), 1, "{document}");
        }
        let settings = read(json!({"compaction": {
            "modelOverrides": {"a/b": {"reserveTokens": MAX_TOKEN_BUDGET, "keepRecentTokens": MAX_TOKEN_BUDGET}}
        }}));
        let planning = settings.compaction.for_model("a", "b").planning(200_000);
        assert_eq!(planning.reserve_tokens, MAX_TOKEN_BUDGET);
        assert!(planning.max_summary_tokens() > planning.max_turn_prefix_tokens());
    }

    #[test]
    fn a_model_id_holding_a_slash_is_matched_whole() {
        let settings = read(json!({"compaction": {"modelOverrides": {
            "openrouter/anthropic/claude-sonnet-4.5": {"keepRecentTokens": 1_000}
        }}}));
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
    fn a_wrong_type_is_named_and_its_default_used() {
        let document = json!({"compaction": {"enabled": "yes"}});
        assert_eq!(invalid_keys(document.clone()), ["compaction.enabled"]);
        assert!(read(document).compaction.enabled);
    }
}
