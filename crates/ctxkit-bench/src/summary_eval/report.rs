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
    /// Over the cases with a reference summary: the references' pooled recall and noise, and the
    /// mean of summary tokens over reference tokens.
    pub reference: Option<ReferenceTotals>,
}

/// The hand-written reference summaries of a run, measured like the summaries.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ReferenceTotals {
    pub cases: usize,
    pub recall: f64,
    pub noise: f64,
    pub mean_size_ratio: f64,
    pub min_size_ratio: f64,
    pub max_size_ratio: f64,
}

/// Summary tokens over reference tokens, for a case with a reference.
pub fn size_ratio(result: &CaseResult) -> Option<f64> {
    let reference = result.reference.as_ref()?;
    Some(result.summary.tokens as f64 / reference.tokens.max(1) as f64)
}

fn reference_totals(results: &[CaseResult]) -> Option<ReferenceTotals> {
    let with: Vec<(&CaseResult, &super::Measure)> = results
        .iter()
        .filter_map(|result| Some((result, result.reference.as_ref()?)))
        .collect();
    if with.is_empty() {
        return None;
    }
    let facts = with.iter().map(|(result, _)| result.facts).sum::<usize>();
    let ratios: Vec<f64> = with
        .iter()
        .filter_map(|(result, _)| size_ratio(result))
        .collect();
    Some(ReferenceTotals {
        cases: with.len(),
        recall: with
            .iter()
            .map(|(_, measure)| measure.recalled)
            .sum::<usize>() as f64
            / facts.max(1) as f64,
        noise: with
            .iter()
            .map(|(_, measure)| measure.noise_lines)
            .sum::<usize>() as f64
            / with
                .iter()
                .map(|(_, measure)| measure.content_lines)
                .sum::<usize>()
                .max(1) as f64,
        mean_size_ratio: ratios.iter().sum::<f64>() / ratios.len().max(1) as f64,
        min_size_ratio: ratios.iter().copied().fold(f64::INFINITY, f64::min),
        max_size_ratio: ratios.iter().copied().fold(0.0, f64::max),
    })
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
        reference: reference_totals(results),
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    part as f64 * 100.0 / whole.max(1) as f64
}

/// The report as a markdown table: per case and per group, the summary beside the tail.
pub fn render_markdown(budget: u64, results: &[CaseResult]) -> String {
    let mut text = format!(
        "Budget {budget} tokens. Tail: the last part of the serialized span, cut to the summary's size.\n\n\
         | Session | Span tokens | Summary tokens | × reference | Recall | Tail recall | Δ points | Noise | Tail noise |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for result in results {
        let language = result
            .chinese_lines
            .map(|share| format!(" (Chinese lines {:.0}%)", share * 100.0))
            .unwrap_or_default();
        let recall = percent(result.summary.recalled, result.facts);
        let tail = percent(result.tail.recalled, result.facts);
        text.push_str(&format!(
            "| {}/{}{language} | {} | {} | {} | {:.0}% ({}/{}) | {:.0}% | {:+.0} | {:.0}% | {:.0}% |\n",
            result.group,
            result.name,
            result.span_tokens,
            result.summary.tokens,
            size_ratio(result).map_or_else(|| "–".to_owned(), |ratio| format!("{ratio:.2}×")),
            recall,
            result.summary.recalled,
            result.facts,
            tail,
            recall - tail,
            result.summary.noise_rate() * 100.0,
            result.tail.noise_rate() * 100.0,
        ));
    }
    // In order of first appearance: a group's cases need not be next to each other (`developed`'s
    // sort around `developed/real-shapes`).
    let mut groups: Vec<&str> = Vec::new();
    for result in results {
        if !groups.contains(&result.group.as_str()) {
            groups.push(&result.group);
        }
    }
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
            "| **{label}** ({} cases, {} above the tail) | | mean {:.0}, max {} | {} | **{:.1}%** | **{:.1}%** | **{:+.1}** | **{:.1}%** | {:.1}% |\n",
            totals.cases,
            totals.cases_above_tail,
            totals.mean_tokens,
            totals.max_tokens,
            totals.reference.map_or_else(
                || "–".to_owned(),
                |reference| format!(
                    "mean {:.2}× ({:.2}–{:.2})",
                    reference.mean_size_ratio, reference.min_size_ratio, reference.max_size_ratio
                )
            ),
            totals.recall * 100.0,
            totals.tail_recall * 100.0,
            (totals.recall - totals.tail_recall) * 100.0,
            totals.noise * 100.0,
            totals.tail_noise * 100.0,
        ));
        if let Some(reference) = totals.reference {
            text.push_str(&format!(
                "| {label}: the {} hand-written reference summaries | | | | {:.1}% | | | {:.1}% | |\n",
                reference.cases,
                reference.recall * 100.0,
                reference.noise * 100.0,
            ));
        }
    }
    text
}
