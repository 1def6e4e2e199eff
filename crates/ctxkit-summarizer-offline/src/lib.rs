//! The offline summarizer of ctxkit: a summary in Pi's section format built, without a model, from
//! what the span provably holds — the user's requests and standing instructions, the files read
//! and changed, each command with its outcome, the errors, the assistant's stated choices and
//! findings, the identifiers ranked by who named them, and the earlier summary's items — then the
//! budget left spent on the most recent steps, condensed but verbatim where it matters. Its input
//! is structure (`SummarySpan`: the messages, the earlier summary, the file lists), never
//! serialized text read back. Its size follows the span: a share of the span's tokens, bounded
//! (`SummarySize`), and never more than the request's `max_tokens`.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod carried;
mod diagnostic;
mod digest;
mod error_line;
mod failure;
mod layout;
mod plan;
mod previous;
mod prohibition;
mod prompt;
mod recent;
mod sections;
mod span;
mod text;

use ctxkit_summarizer::{Summarizer, SummarizerError, SummaryRequest, SummaryResponse};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

pub use layout::summarize_sized;

/// The first line of every offline summary, so a reader knows no model wrote it.
pub const OFFLINE_NOTICE: &str =
    "_Extractive summary written offline by ctxkit (no model was used)._";

/// The smallest target a short span gets (the minimum before 2026-11-29).
const SMALL_SPAN_FLOOR: u64 = 500;

/// How long an offline summary is: `ratio` of the span's tokens (as a compaction shows the span to
/// a model: each tool output cut to 2,000 characters) or, when more, `min_tokens` plus half of
/// `ratio` of the tool output (up to a quarter of the span), at least `min_tokens` (a span shorter than that:
/// its own size, and not under 500), at most `max_tokens` (and never more than the request allows). Settings
/// `compaction.offlineSummaryPercent` (`ratio` × 100), `compaction.offlineSummaryMinTokens`,
/// `compaction.offlineSummaryMaxTokens`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SummarySize {
    pub ratio: f64,
    pub min_tokens: u64,
    pub max_tokens: u64,
}

impl Default for SummarySize {
    /// 8% of the span, between 2,000 and 6,000 tokens: real summaries (Claude Code, OpenClaw;
    /// `eval/real-sessions.tsv`) are 1,700–5,600 tokens for Claude Code spans of 5–45k tokens as a
    /// model reads them, and 500–5,900 for OpenClaw's; a 1,500 minimum left 3 of 14 developed
    /// Claude Code points under half the real size, 2,000 one (docs/summaries.md).
    fn default() -> Self {
        Self {
            ratio: 0.08,
            min_tokens: 2_000,
            max_tokens: 6_000,
        }
    }
}

impl SummarySize {
    /// The size the settings `compaction.offlineSummaryPercent`, `compaction.offlineSummaryMinTokens`
    /// and `compaction.offlineSummaryMaxTokens` give; `None` when the minimum is above the maximum.
    pub fn from_settings(percent: u64, min_tokens: u64, max_tokens: u64) -> Option<Self> {
        (min_tokens <= max_tokens).then_some(Self {
            ratio: percent as f64 / 100.0,
            min_tokens,
            max_tokens,
        })
    }
}

/// The share of the percent a span's tool output adds to the minimum (`SummarySize::target`).
const OUTPUT_SHARE: f64 = 0.5;
/// The most of the span (as a model reads it) the tool output's part of the size may take: a
/// summary near the span's own size says little the span itself would not.
const OUTPUT_SIZE_SPAN_SHARE: f64 = 0.25;

impl SummarySize {
    /// The summary's token budget for a span of `span_tokens` as a model reads it, of which
    /// `output_tokens` are tool output, under a request's `request_max`: `ratio` of the span, or,
    /// when more, the minimum plus half of `ratio` of the tool output (a span of mostly tool output
    /// is work a summary must say more of than its words alone ask for) up to a quarter of the
    /// span, at most the maximum.
    pub fn target(&self, span_tokens: u64, output_tokens: u64, request_max: u64) -> u64 {
        let ratio = self.ratio.max(0.0);
        let share = (span_tokens as f64 * ratio).round() as u64;
        // A span shorter than the minimum gets the floor below.
        let work = if span_tokens < self.min_tokens {
            0
        } else {
            let lifted =
                self.min_tokens + (output_tokens as f64 * ratio * OUTPUT_SHARE).round() as u64;
            lifted.min((span_tokens as f64 * OUTPUT_SIZE_SPAN_SHARE).round() as u64)
        };
        let share = share.max(work);
        // The minimum holds for spans at least as long; a shorter span may keep its own size (a
        // summary cannot say more than the span holds), but not under `SMALL_SPAN_FLOOR` (nor the
        // minimum, when that is lower).
        let whole = span_tokens.max(SMALL_SPAN_FLOOR.min(self.min_tokens));
        let floor = self.min_tokens.min(self.max_tokens).min(whole);
        let bounded = share.clamp(floor, self.max_tokens);
        bounded.min(request_max)
    }
}

/// Tokens of summary per name the span's people and calls named (`SummarySize::named_target`).
const TOKENS_PER_NAME: u64 = 15;

impl SummarySize {
    /// `target`, raised to `TOKENS_PER_NAME` tokens for each of the `names` the span's people and
    /// calls named (up to the maximum): of the span's measures, the count of those names follows
    /// the size of real summaries best (log correlation 0.51 for Claude Code, 0.78 for OpenClaw,
    /// against 0.46 and 0.57 for the tool output read), so a span of much work gets the room to
    /// say it; never more than the span itself. A span shorter than the minimum keeps `target`.
    pub fn named_target(
        &self,
        span_tokens: u64,
        output_tokens: u64,
        names: usize,
        request_max: u64,
    ) -> u64 {
        let target = self.target(span_tokens, output_tokens, request_max);
        if span_tokens < self.min_tokens {
            return target;
        }
        let by_names = TOKENS_PER_NAME
            .saturating_mul(names as u64)
            .min(self.max_tokens)
            .min(span_tokens);
        target.max(by_names).min(request_max)
    }
}

/// The offline summarizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineSummarizer {
    pub size: SummarySize,
}

impl OfflineSummarizer {
    pub fn new(size: SummarySize) -> Self {
        Self { size }
    }
}

impl Summarizer for OfflineSummarizer {
    fn name(&self) -> String {
        "offline".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn summarize(
        &self,
        request: SummaryRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        let text = summarize_sized(&request, self.size);
        Box::pin(async move { Ok(SummaryResponse { text, usage: None }) })
    }
}

/// The summary of a request at the default size.
pub fn summarize_offline(request: &SummaryRequest) -> String {
    summarize_sized(request, SummarySize::default())
}

/// Tokens of `text` as the summary's limit counts them (a summary never exceeds `max_tokens` by
/// this count): the larger of the exact cl100k count and a quarter of its
/// UTF-16 length, so neither code nor CJK text is undercounted.
pub fn count_tokens(text: &str) -> u64 {
    let exact = ctxkit_tokens::Encoding::Cl100kBase.count(text);
    let quarter = text.encode_utf16().count().div_ceil(4) as u64;
    exact.max(quarter)
}

#[cfg(test)]
mod tests;
