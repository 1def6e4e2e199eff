//! A generated run's report in markdown: the verdict, the cost, outcome, kind and timing tables,
//! and the notes under them.

use std::fmt::Write as _;

use super::report::{SimulationReport, headline, percent, recall_cell, thousands};
use super::trace::IdentifierKind;
use super::{CheckPoint, Strategy};

/// `cost` against `other` in words: `35.4% less`, or `156.0% more` (a real session can cost more).
fn difference(cost: f64, other: f64) -> String {
    let saving = 1.0 - cost / other;
    if saving >= 0.0 {
        format!("{:.1}% less", saving * 100.0)
    } else {
        format!("{:.1}% more", -saving * 100.0)
    }
}

/// The recommended strategy against the best peer (reference compaction, the three-layer
/// transform, provider-side compaction) by total cost with a cache.
fn verdict(report: &SimulationReport) -> String {
    let best_peer = report
        .strategies
        .iter()
        .filter(|strategy| strategy.strategy.is_peer())
        .min_by(|a, b| a.total_cost_with_cache.total_cmp(&b.total_cost_with_cache));
    let recommended = report
        .strategies
        .iter()
        .find(|strategy| strategy.strategy == Strategy::Recommended);
    let reference = report
        .strategies
        .iter()
        .find(|strategy| strategy.strategy == Strategy::ReferenceCompaction);
    let (Some(best), Some(recommended)) = (best_peer, recommended) else {
        return String::new();
    };
    let mut out = format!(
        "\nctxkit recommended costs ${:.2} against ${:.2} for the best peer ({}): {}.",
        recommended.total_cost_with_cache,
        best.total_cost_with_cache,
        best.name,
        difference(
            recommended.total_cost_with_cache,
            best.total_cost_with_cache
        ),
    );
    if let Some(reference) = reference {
        let label = if report.session.is_some() {
            "at the naming calls"
        } else {
            "final view"
        };
        let _ = write!(
            out,
            " Recall against reference compaction: {label} {} vs {}, run mean {} vs {}; \
             with the stand-in: {label} {} vs {}, run mean {} vs {}.",
            percent(headline(recommended).0.recall()),
            percent(headline(reference).0.recall()),
            percent(recommended.recall_mean),
            percent(reference.recall_mean),
            percent(headline(recommended).1.recall()),
            percent(headline(reference).1.recall()),
            percent(recommended.stand_in_mean),
            percent(reference.stand_in_mean),
        );
    }
    out.push('\n');
    out
}

fn generated_header(out: &mut String, report: &SimulationReport) {
    let trace = &report.trace;
    let _ = writeln!(
        out,
        "Session: {} calls in {} tasks (seed {}), {} messages, {} tool results (largest {} tokens), \
         {} tokens if every message is sent once; {} identifiers planted. Window {} tokens; \
         compaction checks at {}.\n",
        trace.calls,
        trace.tasks,
        report.seed,
        trace.messages,
        trace.tool_results,
        thousands(trace.largest_tool_result_tokens),
        thousands(trace.transcript_tokens),
        trace.planted_identifiers,
        thousands(report.context_window),
        check_name(report.check),
    );
}

/// When compaction is checked, in words.
pub(super) fn check_name(check: CheckPoint) -> &'static str {
    match check {
        CheckPoint::RunEnd => {
            "each prompt, each tool batch and the end of each run (the agent loop)"
        }
        CheckPoint::EveryCall => "the end of every call",
    }
}

/// The report as markdown tables with the assumptions under them.
pub fn render_markdown(report: &SimulationReport) -> String {
    let mut out = String::new();
    match &report.session {
        Some(source) => out.push_str(&super::report_session::session_header(report, source)),
        None => generated_header(&mut out, report),
    }
    cost_table(&mut out, report);
    outcome_table(&mut out, report);
    out.push_str(&verdict(report));
    out.push_str(&super::report_native::native_section(report));
    kind_table(&mut out, report);
    timing_table(&mut out, report);
    notes(&mut out, report);
    if report.session.is_some() {
        out.push_str(super::report_session::SESSION_NOTE);
    }
    out
}

/// Input tokens and costs per strategy.
fn cost_table(out: &mut String, report: &SimulationReport) {
    out.push_str(
        "| Strategy | Input tok/call mean | p50 | max | Input total | Cache hit | Cost, no cache | Requests, cache | Summaries (calls) | Total, cache |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for strategy in &report.strategies {
        let tokens = &strategy.input_tokens;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.1}% | ${:.2} | ${:.2} | ${:.2} ({}) | ${:.2} |",
            strategy.name,
            thousands(tokens.mean.round() as u64),
            thousands(tokens.p50),
            thousands(tokens.max),
            thousands(tokens.total),
            strategy.cache_hit_ratio * 100.0,
            strategy.cost_without_cache,
            strategy.cost_with_cache,
            strategy.summaries.cost,
            strategy.summaries.calls,
            strategy.total_cost_with_cache,
        );
    }
}

/// Overflows, compactions, recall and summary waits per strategy.
fn outcome_table(out: &mut String, report: &SimulationReport) {
    let session = report.session.is_some();
    out.push_str(if session {
        "\n| Strategy | Overflows (recovered, refused) | Compactions (threshold/overflow) | \
         Window drops | Recall at naming calls | Recall, run mean | Final view (held/at risk) | \
         Stand-in at naming calls | Stand-in, run mean | Summary requests | Wait at compaction, median (max) |\n"
    } else {
        "\n| Strategy | Overflows (recovered, refused) | Compactions (threshold/overflow) | \
         Window drops | Recall, final view | Recall, run mean | Visible, final view | \
         Stand-in recall, final | Stand-in, run mean | Summary requests | Wait at compaction, median (max) |\n"
    });
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
    for strategy in &report.strategies {
        let final_view = &strategy.recall_final.all;
        let (lead, lead_stand_in) = headline(strategy);
        let view_cell = if session {
            recall_cell(final_view)
        } else {
            format!("{}/{}", final_view.visible(), final_view.planted)
        };
        let _ = writeln!(
            out,
            "| {} | {} ({}, {}) | {} ({}/{}) | {} | {} | {} | {} | {} | {} | {}{} | {} |",
            strategy.name,
            strategy.overflows,
            strategy.rejected_requests,
            strategy.refused_requests,
            strategy.compactions.total(),
            strategy.compactions.threshold,
            strategy.compactions.overflow,
            strategy.windowed_requests,
            recall_cell(&lead),
            percent(strategy.recall_mean),
            view_cell,
            recall_cell(&lead_stand_in),
            percent(strategy.stand_in_mean),
            strategy.summary_request.name(),
            if strategy.summaries.background_used + strategy.summaries.background_dropped > 0 {
                format!(
                    ", background {} used / {} dropped",
                    strategy.summaries.background_used, strategy.summaries.background_dropped
                )
            } else {
                String::new()
            },
            match (
                strategy.summaries.median_wait(),
                strategy.summaries.max_wait()
            ) {
                (Some(median), Some(max)) => format!("{median:.1} s ({max:.1} s)"),
                (Some(_) | None, _) => "n/a".to_owned(),
            },
        );
    }
}

/// Recall by identifier kind per strategy (at the naming calls for a real session, else of the final
/// view).
fn kind_table(out: &mut String, report: &SimulationReport) {
    let session = report.session.is_some();
    let kinds: &[IdentifierKind] = if session {
        &IdentifierKind::NAMED
    } else {
        &IdentifierKind::ALL
    };
    out.push_str(if session {
        "\nRecall at the naming calls by identifier kind (recalled/at risk):\n\n| Strategy |"
    } else {
        "\nRecall of the final view by identifier kind (recalled/at risk):\n\n| Strategy |"
    });
    for kind in kinds {
        let _ = write!(out, " {} |", kind.name());
    }
    out.push_str("\n|---|");
    for _ in kinds {
        out.push_str("---:|");
    }
    out.push('\n');
    for strategy in &report.strategies {
        let _ = write!(out, "| {} |", strategy.name);
        let by_kind = strategy
            .recall_calls
            .as_ref()
            .unwrap_or(&strategy.recall_final)
            .by_kind
            .iter();
        for kind in by_kind {
            let _ = write!(out, " {} |", recall_cell(&kind.sample));
        }
        out.push('\n');
    }
}

/// Where each strategy's replay spent its time.
fn timing_table(out: &mut String, report: &SimulationReport) {
    out.push_str(
        "\n| Strategy | Replay ms | model_view | measure | recall | append | checks (compaction) |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for strategy in &report.strategies {
        let timing = &strategy.timing;
        let _ = writeln!(
            out,
            "| {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
            strategy.name,
            timing.total_ms,
            timing.view_ms,
            timing.measure_ms,
            timing.recall_ms,
            timing.append_ms,
            timing.check_ms,
        );
    }
}

/// The assumptions under the tables: prices, the cache and latency models, what recall counts.
fn notes(out: &mut String, report: &SimulationReport) {
    let prices = &report.prices;
    let _ = writeln!(
        out,
        "\nWall time: {:.1} s ({} strategies {}; generating the session {:.0} ms).\n\n\
         Notes: tokens are the reference's chars/4 estimate (`estimate_tokens`), not a tokenizer. \
         Prices: {} ({}): input ${}/MTok, cache write ${}/MTok, cache read ${}/MTok, output ${}/MTok.{}{} \
         \"Requests, cache\" bills each request by the provider's cache rule (Anthropic: read up to a \
         breakpoint an earlier request wrote, within 20 blocks of one of its own, write up to its \
         last breakpoint, plain input after it; OpenAI and Gemini: the prefix shared with the \
         previous request, no write fee); \"Cost, no \
         cache\" bills all input at the base price. \"Summaries\" are the compaction summary calls \
         (background ones included): a fresh prompt pays its span as uncached input, a cache-prefix \
         or provider-side request reads the last request from the cache; output is the summary's \
         estimate. Latency model: {} s to the first token, {} uncached and {} cached input tokens/s, \
         {} output tokens/s, {} s of tools per call. Output tokens are the replies' estimates, equal \
         for every strategy. A request above the window is an overflow: with compaction the \
         provider is taken to reject it (not billed), the engine compacts and the call is retried; \
         without compaction, or when that fails, the request is refused (not billed, not counted as \
         sent) and the session could not have gone on as recorded (\"refused\"). Recall counts planted identifiers whose \
         source message is not in the request verbatim (pruned, dropped or summarized) and that \
         still appear in it byte for byte; the stand-in also counts those a good checkpoint keeps \
         (task-prompt identifiers and file paths) when their source is gone and a summary is shown.",
        report.wall_ms / 1000.0,
        report.strategies.len(),
        if report.parallel {
            "on parallel threads"
        } else {
            "one after another"
        },
        report.generate_ms,
        prices.model,
        prices.source,
        prices.input_per_mtok,
        prices.cache_write_per_mtok,
        prices.cache_read_per_mtok,
        prices.output_per_mtok,
        billed_note(report),
        pruning_note(&report.prices),
        super::summary::FIRST_TOKEN_SECONDS,
        super::summary::PREFILL_TOKENS_PER_SECOND,
        super::summary::CACHED_TOKENS_PER_SECOND,
        super::summary::OUTPUT_TOKENS_PER_SECOND,
        super::summary::TOOL_SECONDS,
    );
}

/// Which of the session's models the prices are, when the session chose them.
fn billed_note(report: &SimulationReport) -> String {
    let Some(billed) = &report.billed_model else {
        return String::new();
    };
    let Some(model) = &billed.model else {
        return format!(
            " The session's provider, named by {} of its {} replies, which name no model: `{}` \
             (its cache rule and table); `--provider` bills another.",
            billed.replies, billed.of_replies, billed.provider,
        );
    };
    let priced = billed.priced_as.as_ref().map_or_else(
        || " (not in ctxkit's model table: its provider's cache rule and table)".to_owned(),
        |row| format!(" (the table's `{row}`)"),
    );
    format!(
        " The session's model, named by {} of its {} replies: `{}/{model}`{priced}; \
         `--provider` bills another.{}",
        billed.replies,
        billed.of_replies,
        billed.provider,
        window_note(&billed.provider, model, report.context_window),
    )
}

/// Where the replay's window differs from the session's model's own (the table's): the replay
/// takes `--window` (200,000 unless given), so a model with a larger window shows overflows its
/// session never met, and one with a smaller window fewer (QA r101: a 272,000-token Codex model).
fn window_note(provider: &str, model: &str, replayed: u64) -> String {
    match ctxkit_models::model_row(provider, model) {
        Some(row) if row.context_window != replayed => format!(
            " That model's window is {} tokens, not the replay's {} (`--window {}` replays it \
             in its own).",
            super::report::thousands(row.context_window),
            super::report::thousands(replayed),
            row.context_window,
        ),
        Some(_) | None => String::new(),
    }
}

/// The cache terms the replayed engine's pruning rule weighs (the table's, as a chat weighs its
/// model's), unless a strategy's settings name others.
fn pruning_note(prices: &super::cost::PriceTable) -> String {
    let terms = prices.cache_terms();
    let settings = ctxkit_settings::TransformSettings::default();
    let settings = settings.with_cache_terms(terms.as_ref());
    let reads = if settings.cache_reads_any_prefix.unwrap_or(false) {
        "any prefix a request shares with an earlier one"
    } else {
        "prefixes written at breakpoints, 20 blocks back"
    };
    format!(
        " Cuts of old tool results are weighed at these prices: reads at {}% of input, writes at \
         {}%, the cache serving {reads}, an entry living {} s{}.",
        settings.cache_read_percent_or_default(),
        settings.cache_write_percent_or_default(),
        settings.cache_lifetime_seconds_or_default(),
        if terms.is_some() {
            ""
        } else {
            " (Anthropic's: the table names no cache price)"
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_says_at_which_cache_terms_cuts_were_weighed() {
        use crate::cost::Provider;
        let anthropic = pruning_note(&Provider::Anthropic5m.prices());
        assert!(
            anthropic.contains(
                "reads at 10% of input, writes at 125%, the cache serving prefixes \
                 written at breakpoints, 20 blocks back, an entry living 2100 s."
            ),
            "{anthropic}"
        );
        let hour = pruning_note(&Provider::Anthropic1h.prices());
        assert!(hour.contains("writes at 200%"), "{hour}");
        let openai = pruning_note(&Provider::Openai.prices());
        assert!(
            openai.contains(
                "writes at 100%, the cache serving any prefix a request shares with \
                 an earlier one, an entry living 300 s."
            ),
            "{openai}"
        );
    }

    #[test]
    fn a_dearer_strategy_costs_more_not_negatively_less() {
        assert_eq!(difference(40.48, 62.61), "35.3% less");
        assert_eq!(difference(0.39, 0.15), "160.0% more");
        assert_eq!(difference(1.0, 1.0), "0.0% less");
    }

    /// QA r101: a Codex session replayed in the default 200,000-token window showed 1,526 refused
    /// requests for a session that ran, with nothing saying its model's window is larger.
    #[test]
    fn a_model_whose_window_is_not_the_replays_is_named() {
        let note = window_note("openai", "gpt-5-codex", 200_000);
        assert_eq!(
            note,
            " That model's window is 400,000 tokens, not the replay's 200,000 (`--window 400000` \
             replays it in its own)."
        );
        assert_eq!(window_note("anthropic", "claude-sonnet-4-5", 200_000), "");
        assert_eq!(window_note("openai", "a-model-no-table-knows", 200_000), "");
    }
}
