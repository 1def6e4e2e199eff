//! The report's table of provider-native features (`native`): per strategy, what message threads
//! send, what idle gaps cost without and with cache warming, what on-demand compaction does to the
//! summaries, the total with every feature that applies, and the recommended strategy against the
//! best peer with the features counted for every strategy.

use std::fmt::Write as _;

use super::report::{SimulationReport, StrategyReport, thousands};
use super::{Strategy, SummaryRequest};

/// The total with every feature that applies: summaries as on-demand compaction where the
/// strategy compacts, idle gaps with Pi's warming (threads change no bill).
pub fn total_with_features(strategy: &StrategyReport) -> f64 {
    let native = &strategy.native;
    strategy.total_cost_with_cache - strategy.summaries.cost
        + native.on_demand_summary_cost
        + native.idle_cost(true)
}

/// The markdown table and its verdict line.
pub(super) fn native_section(report: &SimulationReport) -> String {
    let mut out = String::from(
        "\nProvider-native features (each an option on every strategy; `docs/simulator.md`):\n\n\
         | Strategy | Tokens sent, whole | With threads (continued) | Idle gaps: misses, cost | \
         With warming: refreshes, misses, cost | Summaries | As on-demand compaction | \
         Total, features off (gaps, no warming) | Total, all features |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for strategy in &report.strategies {
        let native = &strategy.native;
        let threads_share = if native.sent_tokens_full > 0 {
            native.sent_tokens_threads as f64 / native.sent_tokens_full as f64 * 100.0
        } else {
            100.0
        };
        let on_demand = match strategy.summary_request {
            SummaryRequest::ProviderSide => "(provider side)".to_owned(),
            SummaryRequest::FreshPrompt | SummaryRequest::CachePrefix
                if strategy.summaries.calls == 0 =>
            {
                "n/a".to_owned()
            }
            SummaryRequest::FreshPrompt | SummaryRequest::CachePrefix => {
                format!("${:.2}", native.on_demand_summary_cost)
            }
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} ({:.1}%, {}) | {}/{}, ${:.2} | {}, {}, ${:.2} | ${:.2} | {} | ${:.2} | ${:.2} |",
            strategy.name,
            thousands(native.sent_tokens_full),
            thousands(native.sent_tokens_threads),
            threads_share,
            native.thread_continuations,
            native.cold_misses,
            native.idle_gaps,
            native.cold_miss_cost,
            native.warm_refreshes,
            native.warmed_misses,
            native.idle_cost(true),
            strategy.summaries.cost,
            on_demand,
            strategy.total_cost_with_cache + native.idle_cost(false),
            total_with_features(strategy),
        );
    }
    out.push_str(&verdict(report));
    out
}

/// The recommended strategy against the best peer, every feature counted for both.
fn verdict(report: &SimulationReport) -> String {
    let best_peer = report
        .strategies
        .iter()
        .filter(|strategy| strategy.strategy.is_peer())
        .min_by(|a, b| total_with_features(a).total_cmp(&total_with_features(b)));
    let recommended = report
        .strategies
        .iter()
        .find(|strategy| strategy.strategy == Strategy::Recommended);
    let (Some(best), Some(recommended)) = (best_peer, recommended) else {
        return String::new();
    };
    let (ours, theirs) = (total_with_features(recommended), total_with_features(best));
    let saving = if theirs > 0.0 {
        1.0 - ours / theirs
    } else {
        0.0
    };
    format!(
        "\nWith every feature counted for every strategy, ctxkit recommended costs ${ours:.2} against \
         ${theirs:.2} for the best peer ({}): {:.1}% {}.\n",
        best.name,
        saving.abs() * 100.0,
        if saving >= 0.0 { "less" } else { "more" },
    )
}
