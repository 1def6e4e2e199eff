//! The parts of a report that differ for a real session (`simulate --session`), and the overall
//! table over several sessions.

use std::fmt::Write as _;

use serde::Serialize;

use super::Strategy;
use super::recall::RecallSample;
use super::report::{SessionSource, SimulationReport, counted, headline, recall_cell, thousands};
use super::report_markdown::check_name;

/// The first paragraph of a real session's report.
pub(super) fn session_header(report: &SimulationReport, source: &SessionSource) -> String {
    let trace = &report.trace;
    let left_out = if source.calls_not_replayed > 0 {
        format!(
            "Only the first {} calls were replayed: the {} calls after them ({} messages) are left \
             out (a replay's time grows with the square of its calls). ",
            thousands(trace.calls as u64),
            thousands(source.calls_not_replayed as u64),
            thousands(source.messages_not_replayed as u64),
        )
    } else {
        String::new()
    };
    let damage = match source.damage.as_slice() {
        [] => String::new(),
        [first] => format!(
            "The file is damaged ({}); what could be read is replayed. ",
            first.replace('\n', " ")
        ),
        [first, ..] => format!(
            "The file is damaged ({} problems, the first: {}); what could be read is replayed. ",
            thousands(source.damage.len() as u64),
            first.replace('\n', " ")
        ),
    };
    format!(
        "Session `{}` ({}): {} in {}, {}, {} (largest {} tokens), \
         {} tokens if every message is sent once; {} of the source not replayed. \
         {} identifiers shown first by a tool result were named again by the assistant, {} times \
         in all (the naming calls). {damage}{left_out}Window {} tokens; compaction checks at {}.\n\n",
        source.path,
        source.format,
        counted(trace.calls as u64, "call", "calls"),
        counted(trace.tasks as u64, "task", "tasks"),
        counted(trace.messages as u64, "message", "messages"),
        counted(trace.tool_results as u64, "tool result", "tool results"),
        thousands(trace.largest_tool_result_tokens),
        thousands(trace.transcript_tokens),
        counted(
            source.skipped_summaries as u64,
            "summary entry",
            "summary entries"
        ),
        trace.named_identifiers,
        trace.named_at_calls,
        thousands(report.context_window),
        check_name(report.check),
    )
}

/// How recall reads on a real session (after the notes).
pub(super) const SESSION_NOTE: &str = "\nOn a real session recall follows the session itself: an \
    identifier (a path, symbol, error code, hash or id; `docs/simulator.md`) is at risk at a call \
    when a tool result showed it first and the call's reply names it again; it is recalled when \
    that call's request still holds it as a whole word. \"Recall at naming calls\" sums every such \
    call; \"run mean\" averages the per-call ratio; \"Final view\" is what the last request holds \
    of every identifier at risk so far. The stand-in also counts a file path whose tool result is \
    gone while a summary is shown.\n";

/// One strategy over several sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverallRow {
    pub strategy: Strategy,
    pub name: &'static str,
    /// Sessions replayed under it.
    pub sessions: usize,
    pub requests: usize,
    pub input_tokens_total: u64,
    pub total_cost_with_cache: f64,
    pub compactions: usize,
    pub overflows: usize,
    /// Summed over the sessions (a generated report adds its final view).
    pub recall: RecallSample,
    pub stand_in: RecallSample,
}

/// Each strategy summed over `reports`, in the order of first appearance.
pub fn overall(reports: &[SimulationReport]) -> Vec<OverallRow> {
    let mut rows: Vec<OverallRow> = Vec::new();
    for strategy in reports.iter().flat_map(|report| &report.strategies) {
        let position = match rows
            .iter()
            .position(|row| row.strategy == strategy.strategy)
        {
            Some(position) => position,
            None => {
                rows.push(OverallRow {
                    strategy: strategy.strategy,
                    name: strategy.name,
                    sessions: 0,
                    requests: 0,
                    input_tokens_total: 0,
                    total_cost_with_cache: 0.0,
                    compactions: 0,
                    overflows: 0,
                    recall: RecallSample::default(),
                    stand_in: RecallSample::default(),
                });
                rows.len() - 1
            }
        };
        let row = &mut rows[position];
        let (recall, stand_in) = headline(strategy);
        row.sessions += 1;
        row.requests += strategy.requests;
        row.input_tokens_total += strategy.input_tokens.total;
        row.total_cost_with_cache += strategy.total_cost_with_cache;
        row.compactions += strategy.compactions.total();
        row.overflows += strategy.overflows;
        row.recall.add(recall);
        row.stand_in.add(stand_in);
    }
    rows
}

/// The overall table over several sessions, as markdown.
pub fn render_overall(reports: &[SimulationReport]) -> String {
    let mut out = format!(
        "## Overall ({} sessions)\n\n\
         | Strategy | Sessions | Requests | Input total | Total, cache | Compactions | Overflows | \
         Recall at naming calls | Stand-in at naming calls |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        reports.len()
    );
    for row in overall(reports) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | ${:.2} | {} | {} | {} | {} |",
            row.name,
            row.sessions,
            row.requests,
            thousands(row.input_tokens_total),
            row.total_cost_with_cache,
            row.compactions,
            row.overflows,
            recall_cell(&row.recall),
            recall_cell(&row.stand_in),
        );
    }
    out
}
