//! The simulator's results, and the cells and numbers every rendering of them shares
//! (`report_markdown.rs` renders a generated run, `report_session.rs` a real session).

use ctxkit_tokens::estimate_tokens;
use serde::Serialize;

use super::billing::BilledModel;
use super::cost::PriceTable;
use super::recall::{RecallBreakdown, RecallSample};
use super::summary::{SummaryCosts, SummaryRequest};
use super::trace::Trace;
use super::{CheckPoint, Strategy};

/// Mean, median, maximum and sum of per-request token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TokenStats {
    pub mean: f64,
    /// The lower median.
    pub p50: u64,
    pub max: u64,
    pub total: u64,
}

impl TokenStats {
    /// The statistics of `values`; all zero when empty.
    pub fn of(values: &[u64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let total: u64 = sorted.iter().sum();
        Self {
            mean: total as f64 / sorted.len() as f64,
            p50: sorted[(sorted.len() - 1) / 2],
            max: sorted[sorted.len() - 1],
            total,
        }
    }
}

/// Compaction entries written, by trigger.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Compactions {
    pub threshold: usize,
    pub overflow: usize,
    pub manual: usize,
}

impl Compactions {
    pub fn total(&self) -> usize {
        self.threshold + self.overflow + self.manual
    }
}

/// Where a strategy's replay spent its time, milliseconds of wall time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Timing {
    /// `Engine::model_view`: rebuilding the context from the session and transforming it.
    pub view_ms: f64,
    /// Serializing requests, estimating tokens, prefixes and cost.
    pub measure_ms: f64,
    /// Identifier recall.
    pub recall_ms: f64,
    /// `Engine::append`.
    pub append_ms: f64,
    /// `before_prompt` and `after_run`, compactions included.
    pub check_ms: f64,
    pub total_ms: f64,
}

/// One strategy's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategyReport {
    pub strategy: Strategy,
    pub name: &'static str,
    /// How its summary requests are sent.
    pub summary_request: SummaryRequest,
    /// Its summary calls and the waits at compactions.
    pub summaries: SummaryCosts,
    /// `cost_with_cache` plus the summary calls.
    pub total_cost_with_cache: f64,
    /// Requests the model answered (one per call; rejected and refused overflow requests are not
    /// counted).
    pub requests: usize,
    pub input_tokens: TokenStats,
    pub output_tokens: u64,
    /// Input tokens that were a byte-identical prefix of the previous request.
    pub shared_prefix_tokens: u64,
    /// `shared_prefix_tokens / input total`.
    pub cache_hit_ratio: f64,
    /// The per-request ratio, averaged over requests.
    pub mean_request_cache_hit_ratio: f64,
    /// Dollars with every input token at the base price.
    pub cost_without_cache: f64,
    /// Dollars with shared prefixes as cache reads and the rest as cache writes.
    pub cost_with_cache: f64,
    /// `cost_with_cache` by what it pays for: cache reads, cache writes, uncached input, output.
    pub cost_parts: super::cost::CostParts,
    /// Requests whose input exceeded the window (rejected ones included).
    pub overflows: usize,
    /// Overflowing requests the provider refused and the engine recovered from by compacting.
    pub rejected_requests: usize,
    /// Overflows the engine could not recover from (the call was sent anyway, and refused).
    pub recovery_failures: usize,
    /// Requests above the window that went out anyway (no compaction, or recovery failed): a
    /// provider refuses them, so they are not billed, and the session as recorded could not have
    /// gone on. One per call that had no answerable request.
    pub refused_requests: usize,
    pub compactions: Compactions,
    /// Requests where the sliding window dropped messages.
    pub windowed_requests: usize,
    /// Identifier recall of the last request.
    pub recall_final: RecallBreakdown,
    /// Recall averaged over the requests with identifiers at risk.
    pub recall_mean: Option<f64>,
    /// Recall of the last request with the model-summary stand-in.
    pub stand_in_final: RecallBreakdown,
    /// The stand-in's recall averaged like `recall_mean`.
    pub stand_in_mean: Option<f64>,
    /// Requests with identifiers at risk.
    pub recall_samples: usize,
    /// A real session: every identifier at risk at a call, summed over the calls (an identifier
    /// named again at three calls counts three times), and how many of them that call's request
    /// held. `None` for a generated session.
    pub recall_calls: Option<RecallBreakdown>,
    /// The same with the model-summary stand-in.
    pub stand_in_calls: Option<RecallBreakdown>,
    /// A real session: each identifier at risk at a call that its request did not hold (not in
    /// the JSON report; `ctxkit-bench`'s `simulate --misses` writes them).
    #[serde(skip)]
    pub recall_misses: Vec<super::RecallMiss>,
    /// Session entries at the end (compaction never deletes any).
    pub stored_entries: usize,
    /// Message threads, cache warming over idle gaps and on-demand compaction, priced on this
    /// replay (`native`).
    pub native: super::NativeFeatures,
    pub timing: Timing,
}

/// What the replayed session holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TraceSummary {
    pub tasks: usize,
    pub calls: usize,
    pub messages: usize,
    pub tool_results: usize,
    /// Estimated tokens of every message once (the transcript without any management).
    pub transcript_tokens: u64,
    pub largest_tool_result_tokens: u64,
    pub planted_identifiers: usize,
    /// A real session: identifiers a tool result showed first and the assistant named again.
    pub named_identifiers: usize,
    /// A real session: the times they were named again (one per identifier and call).
    pub named_at_calls: usize,
    /// A real session whose replies recorded usage: what it shows of the provider's count against
    /// ctxkit's estimate (`ratio`), which the replay bills the engine with. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_count: Option<super::ProviderCount>,
}

impl TraceSummary {
    pub(crate) fn of(trace: &Trace) -> Self {
        let mut summary = Self {
            tasks: trace.tasks.len(),
            calls: trace.calls(),
            planted_identifiers: trace.planted.len(),
            named_identifiers: trace.named.len(),
            named_at_calls: trace.named.iter().map(|named| named.calls.len()).sum(),
            provider_count: trace.provider_count,
            ..Self::default()
        };
        for message in trace.messages() {
            let tokens = estimate_tokens(&message);
            summary.messages += 1;
            summary.transcript_tokens += tokens;
            if matches!(message, ctxkit_protocol::AgentMessage::ToolResult(_)) {
                summary.tool_results += 1;
                summary.largest_tool_result_tokens = summary.largest_tool_result_tokens.max(tokens);
            }
        }
        summary
    }
}

/// The real session a report replays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSource {
    /// As given on the command line.
    pub path: String,
    /// `pi` (a Pi or ctxkit session file), `claude-code`, `codex` or `opencode`.
    pub format: &'static str,
    /// Compaction and branch-summary entries on its path, not replayed.
    pub skipped_summaries: usize,
    /// Calls after the most a replay takes (5,000), not replayed; absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub calls_not_replayed: usize,
    /// The messages of those calls (from the first call left out on), not replayed.
    #[serde(skip_serializing_if = "is_zero")]
    pub messages_not_replayed: usize,
    /// What of the file could not be read as written, so is not replayed as written (a line
    /// skipped, a chain cut, bytes replaced): each problem as `ctxkit check` words it (another
    /// agent's file: each line skipped, as `ctxkit import` words it), in file order; absent when
    /// none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub damage: Vec<String>,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// The whole simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimulationReport {
    pub calls: usize,
    pub seed: u64,
    pub context_window: u64,
    pub check: CheckPoint,
    pub parallel: bool,
    pub prices: PriceTable,
    /// The model a real session's replies name, when its prices bill the replay
    /// (`Billing::SessionModel`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub billed_model: Option<BilledModel>,
    /// The settings document applied over the recommended strategy, if any.
    pub recommended_override: Option<serde_json::Value>,
    pub trace: TraceSummary,
    /// The real session replayed (`simulate --session`); `None` for a generated one.
    pub session: Option<SessionSource>,
    pub strategies: Vec<StrategyReport>,
    /// Generating the session.
    pub generate_ms: f64,
    /// Generating and replaying under every strategy.
    pub wall_ms: f64,
}

/// `count` of a thing, one or many (`1 task`, `9 tasks`).
pub(super) fn counted(count: u64, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", thousands(count))
    }
}

pub(super) fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

pub(super) fn percent(value: Option<f64>) -> String {
    value.map_or_else(
        || "n/a".to_owned(),
        |value| format!("{:.1}%", value * 100.0),
    )
}

pub(crate) fn recall_cell(sample: &RecallSample) -> String {
    format!(
        "{}/{} ({})",
        sample.recalled,
        sample.at_risk,
        percent(sample.recall())
    )
}

/// The recall a strategy's report leads with, as written and with the stand-in: a real session's
/// sum over the naming calls, else the final view.
pub(crate) fn headline(strategy: &StrategyReport) -> (RecallSample, RecallSample) {
    match (&strategy.recall_calls, &strategy.stand_in_calls) {
        (Some(calls), Some(stand_in)) => (calls.all, stand_in.all),
        (Some(_) | None, _) => (strategy.recall_final.all, strategy.stand_in_final.all),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_stats_take_the_lower_median() {
        let stats = TokenStats::of(&[5, 1, 4, 2]);
        assert_eq!((stats.p50, stats.max, stats.total), (2, 5, 12));
        assert!((stats.mean - 3.0).abs() < 1e-12);
        assert_eq!(TokenStats::of(&[7]).p50, 7);
        assert_eq!(TokenStats::of(&[]), TokenStats::default());
    }

    #[test]
    fn one_or_many_are_counted() {
        assert_eq!(counted(1, "task", "tasks"), "1 task");
        assert_eq!(counted(9, "task", "tasks"), "9 tasks");
        assert_eq!(counted(12_345, "call", "calls"), "12,345 calls");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
