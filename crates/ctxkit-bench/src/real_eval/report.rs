//! The markdown report: per point, per set (repository and agent) and overall, the summary beside
//! the verbatim tail at the summary's size.

use std::fmt::Write as _;

use super::{PointResult, SkippedPoint};

/// Pooled figures over some points.
#[derive(Debug, Clone, Copy, Default)]
pub struct SetTotals {
    pub points: usize,
    pub identifiers: usize,
    pub recalled: usize,
    pub tail_recalled: usize,
    pub above_tail: usize,
    pub noise_lines: usize,
    pub content_lines: usize,
    /// The real summaries by the same (issue's) noise measure.
    pub real_noise_lines: usize,
    pub real_content_lines: usize,
    /// Junk (`junk.rs`): ours and the real summaries'.
    pub junk_lines: usize,
    pub junk_content_lines: usize,
    pub real_junk_lines: usize,
    pub real_junk_content_lines: usize,
    pub min_ratio: f64,
    pub max_ratio: f64,
    pub mean_ratio: f64,
    /// Points whose scored summary is 0.5–1.5× the real size.
    pub in_band: usize,
    /// The summaries at their own size against the real ones: range.
    pub own_min_ratio: f64,
    pub own_max_ratio: f64,
    /// Points whose own-size summary is 0.5–1.5× the real size.
    pub own_in_band: usize,
    /// Tokens of our scored summaries and of the real ones (for identifier density).
    pub tokens: u64,
    pub real_tokens: u64,
}

impl SetTotals {
    pub fn of(points: &[&PointResult]) -> Self {
        let ratios: Vec<f64> = points.iter().map(|point| point.size_ratio()).collect();
        let own: Vec<f64> = points.iter().map(|point| point.own_ratio()).collect();
        let in_band = |ratios: &[f64]| {
            ratios
                .iter()
                .filter(|ratio| (0.5..=1.5).contains(*ratio))
                .count()
        };
        Self {
            points: points.len(),
            identifiers: points.iter().map(|point| point.result.facts).sum(),
            recalled: points
                .iter()
                .map(|point| point.result.summary.recalled)
                .sum(),
            tail_recalled: points.iter().map(|point| point.result.tail.recalled).sum(),
            above_tail: points
                .iter()
                .filter(|point| point.result.summary.recalled > point.result.tail.recalled)
                .count(),
            noise_lines: points
                .iter()
                .map(|point| point.result.summary.noise_lines)
                .sum(),
            content_lines: points
                .iter()
                .map(|point| point.result.summary.content_lines)
                .sum(),
            real_noise_lines: points
                .iter()
                .filter_map(|point| point.result.reference.as_ref())
                .map(|measure| measure.noise_lines)
                .sum(),
            real_content_lines: points
                .iter()
                .filter_map(|point| point.result.reference.as_ref())
                .map(|measure| measure.content_lines)
                .sum(),
            junk_lines: points.iter().map(|point| point.junk.lines()).sum(),
            junk_content_lines: points.iter().map(|point| point.junk.content_lines).sum(),
            real_junk_lines: points.iter().map(|point| point.real_junk.lines()).sum(),
            real_junk_content_lines: points
                .iter()
                .map(|point| point.real_junk.content_lines)
                .sum(),
            min_ratio: ratios.iter().copied().fold(f64::INFINITY, f64::min),
            max_ratio: ratios.iter().copied().fold(0.0, f64::max),
            mean_ratio: ratios.iter().sum::<f64>() / ratios.len().max(1) as f64,
            in_band: in_band(&ratios),
            own_min_ratio: own.iter().copied().fold(f64::INFINITY, f64::min),
            own_max_ratio: own.iter().copied().fold(0.0, f64::max),
            own_in_band: in_band(&own),
            tokens: points.iter().map(|point| point.result.summary.tokens).sum(),
            real_tokens: points.iter().map(|point| point.real_tokens).sum(),
        }
    }

    /// The real summaries' identifiers our summaries keep per 1,000 of their tokens: neither line
    /// breaks nor wording can raise it, only naming more of what the real summaries name.
    pub fn density(&self) -> f64 {
        density(self.recalled, self.tokens)
    }

    /// The same for the real summaries (they hold every one of their identifiers).
    pub fn real_density(&self) -> f64 {
        density(self.identifiers, self.real_tokens)
    }

    pub fn recall(&self) -> f64 {
        self.recalled as f64 / self.identifiers.max(1) as f64
    }

    pub fn tail_recall(&self) -> f64 {
        self.tail_recalled as f64 / self.identifiers.max(1) as f64
    }

    pub fn noise(&self) -> f64 {
        self.noise_lines as f64 / self.content_lines.max(1) as f64
    }

    pub fn real_noise(&self) -> f64 {
        self.real_noise_lines as f64 / self.real_content_lines.max(1) as f64
    }

    pub fn junk(&self) -> f64 {
        self.junk_lines as f64 / self.junk_content_lines.max(1) as f64
    }

    pub fn real_junk(&self) -> f64 {
        self.real_junk_lines as f64 / self.real_junk_content_lines.max(1) as f64
    }
}

/// Identifiers per 1,000 tokens.
pub fn density(identifiers: usize, tokens: u64) -> f64 {
    identifiers as f64 * 1000.0 / tokens.max(1) as f64
}

fn percent(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

fn set_name(point: &PointResult) -> String {
    format!("{} ({}, {})", point.repository, point.agent, point.split)
}

fn totals_row(out: &mut String, label: &str, totals: &SetTotals) {
    // No point to average: the row says so instead of an infinite ratio.
    if totals.points == 0 {
        let _ = writeln!(
            out,
            "| **{label}** | no point scored | | | | | | | | | | | | | |"
        );
        return;
    }
    let _ = writeln!(
        out,
        "| **{label}** | {} points | | | {:.2}× ({:.2}–{:.2}), {} in 0.5–1.5× | {:.2}–{:.2}×, {} in band | **{}** | {} | **{:+.1}** | {} of {} | {} | {} | {} | {} | {:.1} / {:.1} |",
        totals.points,
        totals.mean_ratio,
        totals.min_ratio,
        totals.max_ratio,
        totals.in_band,
        totals.own_min_ratio,
        totals.own_max_ratio,
        totals.own_in_band,
        percent(totals.recall()),
        percent(totals.tail_recall()),
        (totals.recall() - totals.tail_recall()) * 100.0,
        totals.above_tail,
        totals.points,
        percent(totals.noise()),
        percent(totals.real_noise()),
        percent(totals.junk()),
        percent(totals.real_junk()),
        totals.density(),
        totals.real_density(),
    );
}

/// Per point, per set and overall; the skipped points with their reason.
pub fn render_report(results: &[PointResult], skipped: &[SkippedPoint], verbose: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| Point | Span tokens | Real summary tokens | Ours | × real | Own size × real | Recall | Tail recall | Δ points | Above | Noise | Real noise | Junk | Real junk | Density (ours / real) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let mut sets: Vec<String> = results.iter().map(set_name).collect();
    sets.dedup();
    sets.sort();
    sets.dedup();
    for set in &sets {
        let points: Vec<&PointResult> = results
            .iter()
            .filter(|point| &set_name(point) == set)
            .collect();
        for point in &points {
            let result = &point.result;
            let recall = result.summary.recalled as f64 / result.facts.max(1) as f64;
            let tail = result.tail.recalled as f64 / result.facts.max(1) as f64;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.2}× | {:.2}× | {} ({}/{}) | {} | {:+.0} | {} | {} | {} | {} | {} | {:.1} / {:.1} |",
                point.name,
                point.span_tokens,
                point.real_tokens,
                result.summary.tokens,
                point.size_ratio(),
                point.own_ratio(),
                percent(recall),
                result.summary.recalled,
                result.facts,
                percent(tail),
                (recall - tail) * 100.0,
                if result.summary.recalled > result.tail.recalled {
                    "yes"
                } else {
                    "no"
                },
                percent(result.summary.noise_rate()),
                result
                    .reference
                    .as_ref()
                    .map(|measure| percent(measure.noise_rate()))
                    .unwrap_or_default(),
                percent(point.junk.rate()),
                percent(point.real_junk.rate()),
                density(result.summary.recalled, result.summary.tokens),
                density(result.facts, point.real_tokens),
            );
        }
        totals_row(&mut out, set, &SetTotals::of(&points));
    }
    let mut agents: Vec<&str> = results.iter().map(|point| point.agent.as_str()).collect();
    agents.sort_unstable();
    agents.dedup();
    for agent in agents {
        let points: Vec<&PointResult> = results
            .iter()
            .filter(|point| point.agent == agent)
            .collect();
        totals_row(
            &mut out,
            &format!("{agent}, every set"),
            &SetTotals::of(&points),
        );
    }
    let all: Vec<&PointResult> = results.iter().collect();
    totals_row(&mut out, "all points", &SetTotals::of(&all));
    if !skipped.is_empty() {
        let _ = writeln!(out, "\nNot scored:");
        for skip in skipped {
            let _ = writeln!(out, "- {}: {}", skip.name, skip.reason);
        }
    }
    if verbose {
        for point in results {
            let _ = writeln!(
                out,
                "\n### {} ({})\n\nMissed: {:?}\nTail missed: {:?}\nJunk: {:?}\n\n```\n{}\n```",
                point.name,
                set_name(point),
                point.result.summary.missed,
                point.result.tail.missed,
                point.junk.examples,
                point.result.summary_text
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// A split with no scoreable point (every point skipped) says so, not `inf–0.00×`.
    #[test]
    fn a_split_without_points_says_none_was_scored() {
        let report = super::render_report(&[], &[], false);
        assert!(
            report.contains("| **all points** | no point scored |"),
            "{report}"
        );
        assert!(!report.contains("inf"), "{report}");
    }
}
