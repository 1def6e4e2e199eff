//! The context economics simulator: replays one generated agent session call by call, as an agent
//! loop would, under several context strategies, and measures what each request costs and what the
//! model still sees.
//!
//! Strategies run through the real engine (`ctxkit_engine::Engine` over an in-memory session, the
//! offline summarizer writing compaction summaries); only their settings differ. Tokens are the
//! reference's chars/4 estimate throughout.

mod cost;
mod error;
mod meter;
mod recall;
mod replay;
mod report;
mod trace;

use std::time::Instant;

use ctxkit_engine::EngineSettings;
use ctxkit_transform::TransformSettings;
use serde::Serialize;

pub use cost::{PriceTable, SONNET_4_5};
pub use error::SimulateError;
pub use recall::{KindRecall, RecallBreakdown, RecallSample};
pub use report::{
    Compactions, SimulationReport, StrategyReport, Timing, TokenStats, TraceSummary,
    render_markdown,
};
pub use trace::IdentifierKind;

/// How the model's context is managed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// The view is the whole transcript; overflowing requests are counted and still sent.
    NoManagement,
    /// The reference's compaction only: compact above window − reserveTokens, keep
    /// keepRecentTokens, offline summaries; no transforms.
    ReferenceCompaction,
    /// The three-layer transform with default settings; no compaction.
    Transforms,
    /// Compaction plus the transforms in cache-aware mode; the engine keeps the sliding window
    /// behind compaction as the last resort.
    Recommended,
    /// `recommended` with the sliding window switched off (not in the default set).
    RecommendedNoWindow,
}

impl Strategy {
    /// The strategies replayed by default, in report order.
    pub const DEFAULT: [Self; 4] = [
        Self::NoManagement,
        Self::ReferenceCompaction,
        Self::Transforms,
        Self::Recommended,
    ];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::NoManagement => "no management",
            Self::ReferenceCompaction => "reference compaction",
            Self::Transforms => "three-layer transform",
            Self::Recommended => "ctxkit recommended",
            Self::RecommendedNoWindow => "recommended, window off",
        }
    }

    /// The engine settings of this strategy.
    pub fn settings(self) -> EngineSettings {
        let mut settings = EngineSettings::default();
        match self {
            Self::NoManagement => {
                settings.compaction.enabled = false;
                settings.transforms = TransformSettings::disabled();
            }
            Self::ReferenceCompaction => settings.transforms = TransformSettings::disabled(),
            Self::Transforms => settings.compaction.enabled = false,
            Self::Recommended => settings.transforms.cache_aware = true,
            Self::RecommendedNoWindow => {
                settings.transforms.cache_aware = true;
                settings.transforms.window_enabled = false;
            }
        }
        settings
    }
}

/// When the compaction check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum CheckPoint {
    /// At the end of each agent run and before each prompt, as the reference does (`agent_end`).
    RunEnd,
    /// Also after every call's tool results.
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
    pub prices: PriceTable,
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
            prices: SONNET_4_5,
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
    let generated = started.elapsed();
    let run = |strategy: Strategy| -> Result<StrategyReport, SimulateError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(SimulateError::Runtime)?;
        runtime.block_on(replay::replay(&trace, strategy, options))
    };
    let strategies = if options.parallel {
        std::thread::scope(|scope| {
            let handles: Vec<_> = options
                .strategies
                .iter()
                .map(|strategy| (*strategy, scope.spawn(move || run(*strategy))))
                .collect();
            handles
                .into_iter()
                .map(|(strategy, handle)| {
                    handle.join().unwrap_or(Err(SimulateError::Panicked {
                        strategy: strategy.name(),
                    }))
                })
                .collect::<Result<Vec<_>, _>>()
        })?
    } else {
        options
            .strategies
            .iter()
            .map(|strategy| run(*strategy))
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok(SimulationReport {
        calls: options.calls,
        seed: options.seed,
        context_window: options.context_window,
        check: options.check,
        parallel: options.parallel,
        prices: options.prices,
        trace: TraceSummary::of(&trace),
        strategies,
        generate_ms: generated.as_secs_f64() * 1000.0,
        wall_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

#[cfg(test)]
mod tests;
