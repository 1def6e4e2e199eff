//! The context economics simulator: replays one generated agent session call by call, as an agent
//! loop would, under several context strategies, and measures what each request costs and what the
//! model still sees.
//!
//! Strategies run through the real engine (`ctxkit_engine::Engine` over an in-memory session, the
//! offline summarizer writing compaction summaries); only their settings differ. Tokens are the
//! reference's chars/4 estimate throughout.
//!
//! Used by the `ctxkit simulate` command and ctxkit-bench's `simulate` program; libraries never
//! print: progress reaches the caller through [`Progress`].

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod billing;
mod cache_rule;
mod claude_check;
mod cost;
mod error;
mod identifiers;
mod ledger;
mod meter;
mod named_recall;
mod native;
mod provider_count;
mod recall;
mod replay;
mod report;
mod report_markdown;
mod report_native;
mod report_session;
mod rng;
mod session;
mod summary;
pub mod text;
mod trace;
mod verdict;
mod workers;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ctxkit_engine::EngineSettings;
use ctxkit_settings::TransformSettings;
use serde::Serialize;

pub use billing::{BilledModel, Billing};
pub use cache_rule::{CacheBill, CacheRule};
pub use claude_check::{
    CacheCheck, CacheTokens, CheckRule, Placement, check_claude_code, render_cache_checks,
};
pub use cost::{CostParts, GEMINI_2_5_PRO, GPT_5, PriceTable, Provider, SONNET_4_5, SONNET_4_5_1H};
pub use error::SimulateError;
pub use named_recall::RecallMiss;
pub use native::NativeFeatures;
pub use provider_count::ProviderCount;
pub use recall::{KindRecall, RecallBreakdown, RecallSample};
pub use report::{
    Compactions, SessionSource, SimulationReport, StrategyReport, Timing, TokenStats, TraceSummary,
};
pub use report_markdown::render_markdown;
pub use report_native::total_with_features;
pub use report_session::{OverallRow, overall, render_overall};
pub use rng::Rng;
pub use summary::{SummaryCosts, SummaryRequest};
pub use trace::IdentifierKind;
pub use verdict::{
    DefaultsMargin, Recommendation, VerdictRow, config_set_lines, defaults_margin, recommend,
    render_verdict, settings_document, verdict_rows, worse_than,
};

/// The trigger of provider-side compaction, input tokens: the default of Anthropic's
/// `compact_20260112` edit (150,000) and the value the simulator gives OpenAI's
/// `compact_threshold`.
pub const PROVIDER_COMPACTION_TRIGGER: u64 = 150_000;

/// The recommended strategy's context target: it compacts above this many tokens (or the
/// reference threshold, window − 16,384, when that is lower).
pub const RECOMMENDED_TARGET_TOKENS: u64 = ctxkit_settings::RECOMMENDED_THRESHOLD_TOKENS;

/// How the model's context is managed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// The view is the whole transcript; overflowing requests are counted and still sent.
    NoManagement,
    /// The reference's compaction only: compact above window − reserveTokens, keep
    /// keepRecentTokens, offline summaries sent as fresh prompts; no transforms.
    ReferenceCompaction,
    /// The three-layer transform with default settings; no compaction.
    Transforms,
    /// Provider-side compaction (Anthropic `compact_20260112`, OpenAI `compact_threshold`): once a
    /// request passes the trigger the provider summarizes the whole context on top of its cache and
    /// the summary replaces it; checked on every request; no transforms.
    ProviderCompaction,
    /// ctxkit's recommended settings: what a settings file holding `"contextStrategy":
    /// "recommended"` gives, its budgets following the window.
    Recommended,
    /// The previous recommendation: compaction at the reference threshold plus cache-aware
    /// transforms, summaries as fresh prompts, no background (not in the default set).
    RecommendedBefore,
    /// `recommended` with the sliding window switched off (not in the default set).
    RecommendedNoWindow,
    /// `recommended` with its summaries sent as fresh prompts (what the engine's summarizer sends
    /// today; not in the default set).
    RecommendedFreshSummaries,
    /// What a user with an empty settings file gets: `Settings::read({})`, the
    /// product's own resolution, with the budgets following the window.
    Defaults,
    /// The defaults as they were before pruning waited until it pays: every tool result but the
    /// six latest cut at every call (`transforms.pruneWhenItPays: false`; not in the default set).
    DefaultsBefore,
}

impl Strategy {
    /// The strategies replayed by default, in report order.
    pub const DEFAULT: [Self; 6] = [
        Self::NoManagement,
        Self::Defaults,
        Self::ReferenceCompaction,
        Self::Transforms,
        Self::ProviderCompaction,
        Self::Recommended,
    ];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::NoManagement => "no management",
            Self::ReferenceCompaction => "reference compaction",
            Self::Transforms => "three-layer transform",
            Self::ProviderCompaction => "provider-side compaction",
            Self::Recommended => "ctxkit recommended",
            Self::RecommendedBefore => "recommended before",
            Self::RecommendedNoWindow => "recommended, window off",
            Self::RecommendedFreshSummaries => "recommended, fresh-prompt summaries",
            Self::Defaults => "defaults",
            Self::DefaultsBefore => "defaults before",
        }
    }

    /// Whether the strategy is one of the peers the recommendation is measured against.
    pub fn is_peer(self) -> bool {
        match self {
            Self::ReferenceCompaction | Self::Transforms | Self::ProviderCompaction => true,
            Self::NoManagement
            | Self::Recommended
            | Self::RecommendedBefore
            | Self::RecommendedNoWindow
            | Self::RecommendedFreshSummaries
            | Self::Defaults
            | Self::DefaultsBefore => false,
        }
    }

    /// How its summary requests are sent.
    pub fn summary_request(self) -> SummaryRequest {
        match self {
            Self::NoManagement
            | Self::ReferenceCompaction
            | Self::Transforms
            | Self::RecommendedBefore
            | Self::RecommendedFreshSummaries => SummaryRequest::FreshPrompt,
            Self::ProviderCompaction => SummaryRequest::ProviderSide,
            Self::Recommended | Self::RecommendedNoWindow => SummaryRequest::CachePrefix,
            // As an empty settings file asks: `compaction.cachePrefix` of the default strategy.
            Self::Defaults | Self::DefaultsBefore if defaults().compaction.cache_prefix => {
                SummaryRequest::CachePrefix
            }
            Self::Defaults | Self::DefaultsBefore => SummaryRequest::FreshPrompt,
        }
    }

    /// Whether the compaction check runs after every call whatever `--check` says (the provider
    /// looks at every request).
    pub fn checks_every_call(self) -> bool {
        self == Self::ProviderCompaction
    }

    /// The engine settings of this strategy for a model with `context_window` tokens.
    pub fn settings(self, context_window: u64) -> EngineSettings {
        let mut settings = EngineSettings::default();
        match self {
            Self::Defaults => settings = defaults(),
            Self::DefaultsBefore => {
                settings = defaults();
                settings.transforms.prune_when_it_pays = false;
            }
            Self::NoManagement => {
                settings.compaction.enabled = false;
                settings.transforms = TransformSettings::disabled();
            }
            Self::ReferenceCompaction => settings.transforms = TransformSettings::disabled(),
            Self::Transforms => settings.compaction.enabled = false,
            Self::ProviderCompaction => {
                settings.transforms = TransformSettings::disabled();
                // A window smaller than 200,000 gets a trigger at three quarters of it.
                let trigger = PROVIDER_COMPACTION_TRIGGER.min(context_window / 4 * 3);
                settings.compaction.reserve_tokens = context_window - trigger;
                settings.compaction.keep_recent_tokens = 0;
            }
            Self::RecommendedBefore => settings.transforms.cache_aware = true,
            Self::Recommended | Self::RecommendedNoWindow | Self::RecommendedFreshSummaries => {
                recommended(&mut settings);
                if self == Self::RecommendedNoWindow {
                    settings.transforms.window_enabled = false;
                }
            }
        }
        settings
    }
}

/// The recommended settings, as a user gets them from `"contextStrategy": "recommended"`
/// ([`EngineSettings::recommended`], resolved against the model's window by the engine), with the
/// budgets nobody set following the window as reading the settings leaves them.
fn recommended(settings: &mut EngineSettings) {
    *settings = EngineSettings::recommended();
    settings.compaction.adaptive = ctxkit_settings::AdaptiveBudgets {
        reserve_tokens: true,
        keep_recent_tokens: true,
        append_summary_tokens: true,
    };
}

/// The settings of an empty settings document, read by the code the product reads settings with
/// (the engine resolves the budgets that follow the window against the model at each check).
fn defaults() -> EngineSettings {
    let read = ctxkit_settings::SettingsManager::in_memory(serde_json::Map::new());
    EngineSettings::from_settings(read.settings())
}

/// The recommended strategy with a settings document over it, read as a settings file holding
/// `"contextStrategy": "recommended"` and the document's keys is (`ctxkit-settings`'s one merge
/// rule: objects key by key, arrays replaced, keys set winning over the strategy's layer, budgets
/// nobody set following the window). A value the key does not accept is an error.
fn override_settings(document: &serde_json::Value) -> Result<EngineSettings, SimulateError> {
    override_read(document).map(|read| EngineSettings::from_settings(read.settings()))
}

/// The offline summarizer's size under the override document (its
/// `compaction.offlineSummary*` keys), as a user with those keys in a settings file gets it.
fn override_summary_size(
    document: &serde_json::Value,
) -> Result<ctxkit_summarizer_offline::SummarySize, SimulateError> {
    let read = override_read(document)?;
    let compaction = &read.settings().compaction;
    ctxkit_summarizer_offline::SummarySize::from_settings(
        compaction.offline_summary_percent,
        compaction.offline_summary_min_tokens,
        compaction.offline_summary_max_tokens,
    )
    .ok_or_else(|| SimulateError::Settings {
        message: format!(
            "`compaction.offlineSummaryMinTokens` ({}) is more than \
             `compaction.offlineSummaryMaxTokens` ({})",
            compaction.offline_summary_min_tokens, compaction.offline_summary_max_tokens
        ),
    })
}

/// The override document read as a settings file holding it (see `override_settings`).
fn override_read(
    document: &serde_json::Value,
) -> Result<ctxkit_settings::SettingsManager, SimulateError> {
    let Some(document) = document.as_object() else {
        return Err(SimulateError::Settings {
            message: format!("expected a JSON object, found {document}"),
        });
    };
    let mut layer = document.clone();
    layer
        .entry("contextStrategy")
        .or_insert_with(|| "recommended".into());
    let read = ctxkit_settings::SettingsManager::in_memory(layer);
    for diagnostic in read.diagnostics() {
        match diagnostic {
            ctxkit_settings::SettingsDiagnostic::InvalidValue {
                key,
                expected,
                found,
                ..
            } => {
                return Err(SimulateError::Settings {
                    message: format!("`{key}` expects {expected}, found {found}"),
                });
            }
            ctxkit_settings::SettingsDiagnostic::UnknownKey { .. }
            | ctxkit_settings::SettingsDiagnostic::IgnoredValue { .. }
            | ctxkit_settings::SettingsDiagnostic::DuplicateKey { .. } => {}
        }
    }
    Ok(read)
}

/// When the compaction check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum CheckPoint {
    /// Before each prompt, after each tool batch while the run goes on, and at the end of each
    /// run, as `ctxkit-agent` and Pi 1.6.0 check (`docs/in-run-compaction.md`).
    RunEnd,
    /// Also the end-of-run check (overflow recovery included) after every call.
    EveryCall,
}

/// What to simulate.
#[derive(Debug, Clone)]
pub struct SimulateOptions {
    /// Model calls in the session.
    pub calls: usize,
    /// Equal seeds replay equal sessions.
    pub seed: u64,
    /// The model's context window, tokens.
    pub context_window: u64,
    pub check: CheckPoint,
    pub strategies: Vec<Strategy>,
    /// Replay the strategies on parallel threads (timings then include contention).
    pub parallel: bool,
    pub provider: Provider,
    /// Where the prices come from: `provider`'s table, or each real session's own model.
    pub billing: Billing,
    /// Prices over `provider`'s table (a real session's model's, under `Billing::SessionModel`).
    pub prices: Option<PriceTable>,
    /// A settings document applied over the recommended strategy's settings (experiments).
    pub recommended_override: Option<serde_json::Value>,
    /// Counts replayed calls for a caller that shows progress (the library never prints).
    pub progress: Option<Arc<Progress>>,
}

/// Model calls replayed so far and calls to replay (every strategy's), shared with a caller that
/// shows progress while a replay runs; `total` grows as each session is read.
#[derive(Debug, Default)]
pub struct Progress {
    pub done: AtomicU64,
    pub total: AtomicU64,
}

impl Progress {
    fn add_total(progress: Option<&Arc<Self>>, calls: usize) {
        if let Some(progress) = progress {
            progress
                .total
                .fetch_add(u64::try_from(calls).unwrap_or(u64::MAX), Ordering::Relaxed);
        }
    }

    pub(crate) fn call_done(progress: Option<&Arc<Self>>) {
        if let Some(progress) = progress {
            progress.done.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Default for SimulateOptions {
    fn default() -> Self {
        Self {
            calls: 2_000,
            seed: 1,
            context_window: 200_000,
            check: CheckPoint::RunEnd,
            strategies: Strategy::DEFAULT.to_vec(),
            parallel: true,
            provider: Provider::Anthropic5m,
            billing: Billing::Provider,
            prices: None,
            recommended_override: None,
            progress: None,
        }
    }
}

impl SimulateOptions {
    /// The prices every request is billed at.
    pub fn price_table(&self) -> PriceTable {
        self.prices
            .clone()
            .unwrap_or_else(|| self.provider.prices())
    }

    /// The engine settings `strategy` runs with: its own, with the override for the recommended
    /// strategy applied.
    pub fn settings_of(&self, strategy: Strategy) -> Result<EngineSettings, SimulateError> {
        match (&self.recommended_override, strategy) {
            (Some(document), Strategy::Recommended) => override_settings(document),
            (Some(_) | None, _) => Ok(strategy.settings(self.context_window)),
        }
    }

    /// The offline summarizer's size for `strategy`: the default, or the recommended override's
    /// `compaction.offlineSummary*` keys.
    pub fn summary_size_of(
        &self,
        strategy: Strategy,
    ) -> Result<ctxkit_summarizer_offline::SummarySize, SimulateError> {
        match (&self.recommended_override, strategy) {
            (Some(document), Strategy::Recommended) => override_summary_size(document),
            (Some(_) | None, _) => Ok(ctxkit_summarizer_offline::SummarySize::default()),
        }
    }
}

/// Generates the session and replays it under every strategy of `options`.
pub fn simulate(options: &SimulateOptions) -> Result<SimulationReport, SimulateError> {
    let started = Instant::now();
    let trace = trace::generate_trace(trace::TraceOptions {
        calls: options.calls,
        seed: options.seed,
    });
    replay_all(&trace, options, started, None, None)
}

/// Reads the real session at `path` (a Pi or ctxkit session file, or any file `ctxkit import`
/// reads) and replays its messages under every strategy of `options` (`calls` and `seed` are not
/// used). Its identifiers are found by the rule of `identifiers` and at risk as `session` defines.
pub fn simulate_session(
    path: &Path,
    options: &SimulateOptions,
) -> Result<SimulationReport, SimulateError> {
    let started = Instant::now();
    let mut loaded = session::load_session(path)?;
    let source = SessionSource {
        path: path.display().to_string(),
        format: loaded.format,
        skipped_summaries: loaded.skipped_summaries,
        calls_not_replayed: loaded.left_out.calls,
        messages_not_replayed: loaded.left_out.messages,
        damage: std::mem::take(&mut loaded.damage),
    };
    let billed = match options.billing {
        Billing::SessionModel => billing::session_billing(&loaded.messages, options.provider),
        Billing::Provider => None,
    };
    let responses = loaded.responses;
    let trace = session::session_trace(loaded.messages, responses);
    let Some(billed) = billed else {
        return replay_all(&trace, options, started, Some(source), None);
    };
    let options = SimulateOptions {
        provider: billed.provider,
        prices: Some(billed.prices),
        ..options.clone()
    };
    replay_all(&trace, &options, started, Some(source), Some(billed.model))
}

fn replay_all(
    trace: &trace::Trace,
    options: &SimulateOptions,
    started: Instant,
    session: Option<SessionSource>,
    billed_model: Option<BilledModel>,
) -> Result<SimulationReport, SimulateError> {
    let generated = started.elapsed();
    Progress::add_total(
        options.progress.as_ref(),
        trace.calls() * options.strategies.len(),
    );
    let run = |strategy: Strategy| -> Result<StrategyReport, SimulateError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(SimulateError::Runtime)?;
        runtime.block_on(replay::replay(trace, strategy, options))
    };
    let strategies = if options.parallel {
        workers::replay_on_workers(&options.strategies, &run)?
    } else {
        options
            .strategies
            .iter()
            .map(|strategy| run(*strategy))
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok(SimulationReport {
        calls: trace.calls(),
        seed: options.seed,
        context_window: options.context_window,
        check: options.check,
        parallel: options.parallel,
        prices: options.price_table(),
        billed_model,
        recommended_override: options.recommended_override.clone(),
        trace: TraceSummary::of(trace),
        session,
        strategies,
        generate_ms: generated.as_secs_f64() * 1000.0,
        wall_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

#[cfg(test)]
mod provider_count_tests;
#[cfg(test)]
mod session_tests;
#[cfg(test)]
mod tests;
