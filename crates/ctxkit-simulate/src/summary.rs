//! What compaction summaries cost and how long the user waits for them.
//!
//! A summary is a model call. Its input is billed at its real cache state:
//! - **fresh prompt** (the reference's way): the summarized span serialized into a new prompt, so
//!   every input token is uncached (base input price);
//! - **cache prefix**: the request the model last answered, sent again with the summary instruction
//!   appended, so that request is a cache read and only what came after it (the last reply and its
//!   tool results) plus the instruction is new;
//! - **provider side**: the provider summarizes the request that crossed its trigger, on top of
//!   its own cache: billed like a cache-prefix request.
//!
//! Its output is the summary's estimated tokens. The time a summary takes is modelled from its
//! tokens with the constants below (stated, not measured); the user waits for it at a foreground
//! compaction, and only for what remains of it when a background summary is taken.

use serde::Serialize;

use super::cost::PriceTable;

/// Time to the first output token of any request, seconds.
pub const FIRST_TOKEN_SECONDS: f64 = 0.5;
/// Uncached input processed per second.
pub const PREFILL_TOKENS_PER_SECOND: f64 = 8_000.0;
/// Cached input processed per second (a cache read skips the prefill).
pub const CACHED_TOKENS_PER_SECOND: f64 = 100_000.0;
/// Output tokens written per second.
pub const OUTPUT_TOKENS_PER_SECOND: f64 = 60.0;
/// Running one call's tools, seconds (the simulated clock between model calls).
pub const TOOL_SECONDS: f64 = 1.0;
/// The summary instruction appended to a request or wrapped around a span, tokens.
pub const INSTRUCTION_TOKENS: u64 = 400;

/// Seconds a model call with `cached` and `uncached` input tokens and `output` tokens takes.
pub fn latency_seconds(cached: u64, uncached: u64, output: u64) -> f64 {
    FIRST_TOKEN_SECONDS
        + uncached as f64 / PREFILL_TOKENS_PER_SECOND
        + cached as f64 / CACHED_TOKENS_PER_SECOND
        + output as f64 / OUTPUT_TOKENS_PER_SECOND
}

/// How a strategy's summary requests are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryRequest {
    FreshPrompt,
    CachePrefix,
    ProviderSide,
}

impl SummaryRequest {
    pub fn name(self) -> &'static str {
        match self {
            Self::FreshPrompt => "fresh prompt",
            Self::CachePrefix => "cache prefix",
            Self::ProviderSide => "provider side",
        }
    }
}

/// The input of one summary call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SummaryInput {
    /// Tokens of the span to summarize (and the previous summary), for a fresh prompt.
    pub span_tokens: u64,
    /// Tokens of the request the model last answered (the cached prefix).
    pub last_request_tokens: u64,
    /// Tokens appended since that request.
    pub tail_tokens: u64,
}

/// One summary call's bill.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SummaryCall {
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
    pub seconds: f64,
}

/// Prices one summary call sent the `request` way with a prompt cache.
pub fn summary_call(
    request: SummaryRequest,
    input: SummaryInput,
    output_tokens: u64,
    prices: &PriceTable,
) -> SummaryCall {
    match request {
        SummaryRequest::FreshPrompt => {
            let tokens = input.span_tokens + INSTRUCTION_TOKENS;
            SummaryCall {
                input_tokens: tokens,
                cached_tokens: 0,
                output_tokens,
                cost: prices.uncached_cost(tokens, output_tokens),
                seconds: latency_seconds(0, tokens, output_tokens),
            }
        }
        SummaryRequest::CachePrefix | SummaryRequest::ProviderSide => {
            let tokens = input.last_request_tokens + input.tail_tokens + INSTRUCTION_TOKENS;
            let billed = prices.split(tokens, input.last_request_tokens, output_tokens);
            SummaryCall {
                input_tokens: tokens,
                cached_tokens: billed.cache_read,
                output_tokens,
                cost: prices.cached_cost(tokens, input.last_request_tokens, output_tokens),
                seconds: latency_seconds(billed.cache_read, billed.uncached, output_tokens),
            }
        }
    }
}

/// Every summary call of a replay and the waits at compactions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SummaryCosts {
    /// Summary calls made (background ones included, used or not).
    pub calls: usize,
    /// Background summaries dropped because the branch moved past them.
    pub background_dropped: usize,
    /// Compactions that took a background summary.
    pub background_used: usize,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    /// Dollars with the prompt cache.
    pub cost: f64,
    /// Dollars had every call been on-demand compaction (the provider's model summarizing on the
    /// cached conversation, `native`).
    pub on_demand_cost: f64,
    /// Seconds the user waited at each compaction, in order.
    pub waits_seconds: Vec<f64>,
}

impl SummaryCosts {
    pub(crate) fn add(&mut self, call: &SummaryCall) {
        self.calls += 1;
        self.input_tokens += call.input_tokens;
        self.cached_tokens += call.cached_tokens;
        self.output_tokens += call.output_tokens;
        self.cost += call.cost;
    }

    /// The lower median wait, `None` without compactions.
    pub fn median_wait(&self) -> Option<f64> {
        let mut sorted = self.waits_seconds.clone();
        sorted.sort_by(f64::total_cmp);
        sorted.get(sorted.len().checked_sub(1)? / 2).copied()
    }

    pub fn max_wait(&self) -> Option<f64> {
        self.waits_seconds.iter().copied().reduce(f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::SONNET_4_5;

    #[test]
    fn a_fresh_prompt_pays_full_input_and_a_cache_prefix_reads_the_cache() {
        let input = SummaryInput {
            span_tokens: 100_000,
            last_request_tokens: 150_000,
            tail_tokens: 2_000,
        };
        let fresh = summary_call(SummaryRequest::FreshPrompt, input, 3_000, &SONNET_4_5);
        assert_eq!(fresh.input_tokens, 100_400);
        assert_eq!(fresh.cached_tokens, 0);
        assert!((fresh.cost - (100_400.0 * 3.0 + 3_000.0 * 15.0) / 1e6).abs() < 1e-12);
        let cached = summary_call(SummaryRequest::CachePrefix, input, 3_000, &SONNET_4_5);
        assert_eq!(cached.input_tokens, 152_400);
        assert_eq!(cached.cached_tokens, 150_000);
        let expected = (150_000.0 * 0.30 + 2_400.0 * 3.75 + 3_000.0 * 15.0) / 1e6;
        assert!((cached.cost - expected).abs() < 1e-12, "{}", cached.cost);
        // Reading the cache is cheaper and faster even with half again as much input.
        assert!(cached.cost < fresh.cost);
        assert!(cached.seconds < fresh.seconds);
        // 0.5 s + 100,400 / 8,000 + 3,000 / 60.
        assert!((fresh.seconds - (0.5 + 12.55 + 50.0)).abs() < 1e-9);
    }

    #[test]
    fn median_wait_is_the_lower_median() {
        let mut costs = SummaryCosts::default();
        assert_eq!(costs.median_wait(), None);
        costs.waits_seconds = vec![30.0, 0.0, 12.0, 0.0];
        assert_eq!(costs.median_wait(), Some(0.0));
        assert_eq!(costs.max_wait(), Some(30.0));
        costs.waits_seconds.push(40.0);
        assert_eq!(costs.median_wait(), Some(12.0));
    }
}
