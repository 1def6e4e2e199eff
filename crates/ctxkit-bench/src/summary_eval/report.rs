//! Totals and the markdown report: the summary beside the verbatim tail of the same size.

use serde::Serialize;

use super::CaseResult;

/// Totals over a run: recall and noise pooled over all facts and lines, for the summary and for
/// the verbatim tail at the summary's size.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Totals {
    pub cases: usize,
    pub recall: f64,
    pub noise: f64,
    pub tail_recall: f64,
    pub tail_noise: f64,
    pub mean_tokens: f64,
    pub max_tokens: u64,
    /// Cases whose summary recalls more facts than the tail.
    pub cases_above_tail: usize,
}

pub fn totals(results: &[CaseResult]) -> Totals {
    let sum = |value: fn(&CaseResult) -> usize| results.iter().map(value).sum::<usize>();
    let facts = sum(|result| result.facts).max(1) as f64;
    Totals {
        cases: results.len(),
        recall: sum(|result| result.summary.recalled) as f64 / facts,
        noise: sum(|result| result.summary.noise_lines) as f64
            / sum(|result| result.summary.content_lines).max(1) as f64,
        tail_recall: sum(|result| result.tail.recalled) as f64 / facts,
        tail_noise: sum(|result| result.tail.noise_lines) as f64
            / sum(|result| result.tail.content_lines).max(1) as f64,
        mean_tokens: results
            .iter()
            .map(|result| result.summary.tokens as f64)
            .sum::<f64>()
            / results.len().max(1) as f64,
        max_tokens: results
            .iter()
            .map(|result| result.summary.tokens)
            .max()
            .unwrap_or(0),
        cases_above_tail: results
            .iter()
            .filter(|result| result.summary.recalled > result.tail.recalled)
            .count(),
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    part as f64 * 100.0 / whole.max(1) as f64
}

/// The report as a markdown table: per case and per group, the summary beside the tail.
pub fn render_markdown(budget: u64, results: &[CaseResult]) -> String {
    let mut text = format!(
        "Budget {budget} tokens. Tail: the last part of the serialized span, cut to the summary's size.\n\n\
         | Session | Span tokens | Summary tokens | Recall | Tail recall | Δ points | Noise | Tail noise |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for result in results {
        let language = result
            .chinese_lines
            .map(|share| format!(" (Chinese lines {:.0}%)", share * 100.0))
            .unwrap_or_default();
        let recall = percent(result.summary.recalled, result.facts);
        let tail = percent(result.tail.recalled, result.facts);
        text.push_str(&format!(
            "| {}/{}{language} | {} | {} | {:.0}% ({}/{}) | {:.0}% | {:+.0} | {:.0}% | {:.0}% |\n",
            result.group,
            result.name,
            result.span_tokens,
            result.summary.tokens,
            recall,
            result.summary.recalled,
            result.facts,
            tail,
            recall - tail,
            result.summary.noise_rate() * 100.0,
            result.tail.noise_rate() * 100.0,
        ));
    }
    let mut groups: Vec<&str> = results.iter().map(|result| result.group.as_str()).collect();
    groups.dedup();
    let mut rows = vec![("all".to_owned(), results.to_vec())];
    for group in groups {
        let members: Vec<CaseResult> = results
            .iter()
            .filter(|result| result.group == group)
            .cloned()
            .collect();
        rows.push((group.to_owned(), members));
    }
    for (label, group) in rows {
        let totals = totals(&group);
        text.push_str(&format!(
            "| **{label}** ({} cases, {} above the tail) | | mean {:.0}, max {} | **{:.1}%** | **{:.1}%** | **{:+.1}** | **{:.1}%** | {:.1}% |\n",
            totals.cases,
            totals.cases_above_tail,
            totals.mean_tokens,
            totals.max_tokens,
            totals.recall * 100.0,
            totals.tail_recall * 100.0,
            (totals.recall - totals.tail_recall) * 100.0,
            totals.noise * 100.0,
            totals.tail_noise * 100.0,
        ));
    }
    text
}
