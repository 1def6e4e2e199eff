//! Prices per provider and the cost of a request, with and without a prompt cache.

use std::borrow::Cow;

use serde::Serialize;

use super::cache_rule::{ANTHROPIC_LOOKBACK_BLOCKS, CacheBill, CacheRule};

/// A model's list prices in US dollars per million tokens, and how its provider's prompt cache
/// bills.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriceTable {
    pub model: Cow<'static, str>,
    /// Where the prices come from and when they were read.
    pub source: Cow<'static, str>,
    pub input_per_mtok: f64,
    /// Writing a prefix into the cache (Anthropic: 1.25× input for 5 minutes, 2× for an hour;
    /// OpenAI: free, so the input price).
    pub cache_write_per_mtok: f64,
    /// Reading a cached prefix ("cache hits and refreshes", OpenAI's "cached input").
    pub cache_read_per_mtok: f64,
    pub output_per_mtok: f64,
    /// The shortest prefix the cache serves (OpenAI: 1,024 tokens); a shorter shared prefix is
    /// billed as uncached input.
    pub min_cached_prefix: u64,
    /// Requests with more input tokens than this are billed at the long-context rates (every token
    /// of the request, as Anthropic does above 200K); `None` when the price is flat.
    pub long_context_above: Option<u64>,
    /// Long-context multiplier of every input rate (base, cache write, cache read).
    pub long_context_input_factor: f64,
    /// Long-context multiplier of the output rate.
    pub long_context_output_factor: f64,
    /// What the provider's prompt cache serves (see `cache_rule.rs`).
    pub cache_rule: CacheRule,
    /// How long an unused cache entry lives, in milliseconds (each read refreshes it). Applied when
    /// requests carry times: a real session's replay.
    pub cache_lifetime_ms: i64,
}

const ANTHROPIC_SOURCE: Cow<'static, str> = Cow::Borrowed(
    "Anthropic pricing page (platform.claude.com/docs/en/about-claude/pricing), list prices read 2025 and unchanged in the 2026 copy: Sonnet 4.5 $3 input, $3.75 5-minute cache write, $6 1-hour cache write, $0.30 cache read, $15 output; prompts above 200K input tokens (1M-context beta) at $6 input and $22.50 output, cache rates scaled alike",
);

/// Claude Sonnet 4.5 with the 5-minute cache (`cache_control: {type: "ephemeral"}`).
pub const SONNET_4_5: PriceTable = PriceTable {
    model: Cow::Borrowed("claude-sonnet-4-5, 5-minute cache"),
    source: ANTHROPIC_SOURCE,
    input_per_mtok: 3.0,
    cache_write_per_mtok: 3.75,
    cache_read_per_mtok: 0.30,
    output_per_mtok: 15.0,
    min_cached_prefix: 0,
    long_context_above: Some(200_000),
    long_context_input_factor: 2.0,
    long_context_output_factor: 1.5,
    cache_rule: CacheRule::Breakpoints {
        min_tokens: 1_024,
        lookback_blocks: ANTHROPIC_LOOKBACK_BLOCKS,
    },
    // "The cache has a minimum 5-minute lifetime", refreshed each time the cached content is used
    // (Anthropic's prompt-caching guide).
    cache_lifetime_ms: 5 * 60 * 1000,
};

/// Claude Sonnet 4.5 with the 1-hour cache (`ttl: "1h"`): dearer writes, same reads.
pub const SONNET_4_5_1H: PriceTable = PriceTable {
    model: Cow::Borrowed("claude-sonnet-4-5, 1-hour cache"),
    cache_write_per_mtok: 6.0,
    cache_lifetime_ms: 60 * 60 * 1000,
    ..SONNET_4_5
};

/// GPT-5 on the OpenAI API: automatic prompt caching, cached input at a tenth of the input price,
/// no write fee, prefixes from 1,024 tokens; one flat price for its whole window.
pub const GPT_5: PriceTable = PriceTable {
    model: Cow::Borrowed("gpt-5, automatic caching"),
    source: Cow::Borrowed(
        "OpenAI API pricing page (developers.openai.com/api/docs/pricing) and prompt-caching guide, read 2025-2026: GPT-5 $1.25 input, $0.125 cached input, $10 output; caching automatic from 1,024-token prefixes, no write fee",
    ),
    input_per_mtok: 1.25,
    cache_write_per_mtok: 1.25,
    cache_read_per_mtok: 0.125,
    output_per_mtok: 10.0,
    min_cached_prefix: 1_024,
    long_context_above: None,
    long_context_input_factor: 1.0,
    long_context_output_factor: 1.0,
    cache_rule: CacheRule::Prefix {
        min_tokens: 1_024,
        increment: 128,
    },
    // "Cached prefixes generally remain active for 5 to 10 minutes of inactivity, up to a maximum of
    // one hour" (OpenAI's prompt-caching guide): the short end.
    cache_lifetime_ms: 5 * 60 * 1000,
};

/// Gemini 2.5 Pro on the Gemini API: implicit caching (cached input at a tenth of the input
/// price, no write fee, prefixes from 2,048 tokens); above 200K input tokens the whole request at
/// the long-context rates.
pub const GEMINI_2_5_PRO: PriceTable = PriceTable {
    model: Cow::Borrowed("gemini-2.5-pro, implicit caching"),
    source: Cow::Borrowed(
        "Gemini API pricing page (ai.google.dev/gemini-api/docs/pricing) and caching guide, read 2026: Gemini 2.5 Pro $1.25 input, $0.125 cached input, $10 output up to 200K input tokens, $2.50 / $0.25 / $15 above; implicit caching from 2,048 tokens",
    ),
    input_per_mtok: 1.25,
    cache_write_per_mtok: 1.25,
    cache_read_per_mtok: 0.125,
    output_per_mtok: 10.0,
    min_cached_prefix: 2_048,
    long_context_above: Some(200_000),
    long_context_input_factor: 2.0,
    long_context_output_factor: 1.5,
    cache_rule: CacheRule::Prefix {
        min_tokens: 2_048,
        increment: 1,
    },
    // Implicit caching states no lifetime; taken as OpenAI's short end (an assumption).
    cache_lifetime_ms: 5 * 60 * 1000,
};

/// Which provider's prices and cache the requests are billed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// Anthropic, 5-minute cache.
    #[value(name = "anthropic-5m")]
    Anthropic5m,
    /// Anthropic, 1-hour cache.
    #[value(name = "anthropic-1h")]
    Anthropic1h,
    /// OpenAI automatic caching.
    Openai,
    /// Gemini implicit caching.
    Gemini,
}

impl Provider {
    /// The cache, as the tables name it.
    pub(crate) fn cache_name(self) -> &'static str {
        match self {
            Self::Anthropic5m => "5-minute cache",
            Self::Anthropic1h => "1-hour cache",
            Self::Openai => "automatic caching",
            Self::Gemini => "implicit caching",
        }
    }

    pub fn prices(self) -> PriceTable {
        match self {
            Self::Anthropic5m => SONNET_4_5,
            Self::Anthropic1h => SONNET_4_5_1H,
            Self::Openai => GPT_5,
            Self::Gemini => GEMINI_2_5_PRO,
        }
    }
}

const MILLION: f64 = 1_000_000.0;

/// The dollars of a strategy's conversation requests by what they pay for (summaries apart).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CostParts {
    /// Input read from the prompt cache.
    pub cache_read: f64,
    /// Input written to the prompt cache (without a write fee: input after the cached prefix).
    pub cache_write: f64,
    /// Input neither read nor written (after the last breakpoint).
    pub uncached: f64,
    pub output: f64,
}

impl CostParts {
    pub fn total(&self) -> f64 {
        self.cache_read + self.cache_write + self.uncached + self.output
    }

    pub(crate) fn add(&mut self, other: &Self) {
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.uncached += other.uncached;
        self.output += other.output;
    }
}

/// What one request's tokens are billed as.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Billed {
    /// Read from the cache.
    pub cache_read: u64,
    /// Written to the cache (or plain input without a cache).
    pub uncached: u64,
    pub output: u64,
}

impl PriceTable {
    /// What this table's prompt cache charges, as the engine's pruning rule weighs it: the
    /// replayed engine is told the billed model's terms, as a chat is told its model's.
    pub(crate) fn cache_terms(&self) -> Option<ctxkit_models::CacheTerms> {
        let terms = ctxkit_models::CacheTerms::from_prices(
            self.input_per_mtok,
            self.cache_read_per_mtok,
            self.cache_write_per_mtok,
        )?;
        Some(ctxkit_models::CacheTerms {
            reads_any_prefix: matches!(self.cache_rule, CacheRule::Prefix { .. }),
            ..terms
        })
    }

    /// The prices a request asking for the hour-long cache is billed at: Anthropic's 1-hour writes
    /// (2× the input price) and lifetime; a cache without a choice of lifetime (OpenAI, Gemini)
    /// bills as before.
    pub(crate) fn long_lived(self) -> Self {
        match self.cache_rule {
            CacheRule::Breakpoints { .. } => Self {
                cache_write_per_mtok: self.input_per_mtok * 2.0,
                cache_lifetime_ms: self.cache_lifetime_ms.max(60 * 60 * 1000),
                ..self
            },
            CacheRule::Prefix { .. } => self,
        }
    }

    fn factors(&self, input_tokens: u64) -> (f64, f64) {
        match self.long_context_above {
            Some(limit) if input_tokens > limit => (
                self.long_context_input_factor,
                self.long_context_output_factor,
            ),
            Some(_) | None => (1.0, 1.0),
        }
    }

    /// The multiplier of every input rate for a request of `input_tokens`.
    pub(crate) fn input_factor(&self, input_tokens: u64) -> f64 {
        self.factors(input_tokens).0
    }

    /// Dollars for a request with no prompt cache: every input token at the base price.
    pub fn uncached_cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        let (input_factor, output_factor) = self.factors(input_tokens);
        (input_tokens as f64 * self.input_per_mtok * input_factor
            + output_tokens as f64 * self.output_per_mtok * output_factor)
            / MILLION
    }

    /// How a request is billed with a prompt cache: the prefix shared with the previous request is
    /// a cache read (when the cache serves a prefix that short), the rest is a cache write.
    pub fn split(
        &self,
        input_tokens: u64,
        shared_prefix_tokens: u64,
        output_tokens: u64,
    ) -> Billed {
        let shared = shared_prefix_tokens.min(input_tokens);
        let read = if shared >= self.min_cached_prefix.max(1) {
            shared
        } else {
            0
        };
        Billed {
            cache_read: read,
            uncached: input_tokens - read,
            output: output_tokens,
        }
    }

    /// Dollars for a request billed as the provider's cache rule billed it.
    pub fn billed_cost(&self, bill: CacheBill, output_tokens: u64) -> f64 {
        self.billed_parts(bill, output_tokens).total()
    }

    /// [`PriceTable::billed_cost`] by what the dollars pay for.
    pub fn billed_parts(&self, bill: CacheBill, output_tokens: u64) -> CostParts {
        let input = bill.read + bill.write + bill.plain;
        let (input_factor, output_factor) = self.factors(input);
        CostParts {
            cache_read: bill.read as f64 * self.cache_read_per_mtok * input_factor / MILLION,
            cache_write: bill.write as f64 * self.cache_write_per_mtok * input_factor / MILLION,
            uncached: bill.plain as f64 * self.input_per_mtok * input_factor / MILLION,
            output: output_tokens as f64 * self.output_per_mtok * output_factor / MILLION,
        }
    }

    /// Dollars for a request with a prompt cache (see [`PriceTable::split`]).
    pub fn cached_cost(
        &self,
        input_tokens: u64,
        shared_prefix_tokens: u64,
        output_tokens: u64,
    ) -> f64 {
        let billed = self.split(input_tokens, shared_prefix_tokens, output_tokens);
        let (input_factor, output_factor) = self.factors(input_tokens);
        (billed.cache_read as f64 * self.cache_read_per_mtok * input_factor
            + billed.uncached as f64 * self.cache_write_per_mtok * input_factor
            + billed.output as f64 * self.output_per_mtok * output_factor)
            / MILLION
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn uncached_cost_is_base_input_plus_output() {
        // 100k input at $3 + 0.1M output at $15.
        assert!(close(SONNET_4_5.uncached_cost(100_000, 100_000), 1.8));
        assert!(close(SONNET_4_5.uncached_cost(0, 0), 0.0));
    }

    #[test]
    fn cached_cost_reads_the_prefix_and_writes_the_rest() {
        // 100k tokens, 90k of them shared: 90k × 0.30 + 10k × 3.75 + 2k × 15 per million.
        let cost = SONNET_4_5.cached_cost(100_000, 90_000, 2_000);
        assert!(close(cost, 0.027 + 0.0375 + 0.03), "{cost}");
        // Nothing shared: every input token is a cache write, dearer than no cache at all.
        let cold = SONNET_4_5.cached_cost(100_000, 0, 0);
        assert!(close(cold, 0.375), "{cold}");
        assert!(cold > SONNET_4_5.uncached_cost(100_000, 0));
        // A prefix larger than the request is capped at the request.
        assert!(close(
            SONNET_4_5.cached_cost(10, 50, 0),
            10.0 * 0.30 / MILLION
        ));
    }

    #[test]
    fn the_one_hour_cache_writes_at_twice_the_input_price() {
        let cost = SONNET_4_5_1H.cached_cost(100_000, 90_000, 0);
        assert!(close(cost, 0.027 + 0.06), "{cost}");
    }

    #[test]
    fn long_prompts_are_billed_at_the_long_context_rates() {
        // 300k input, all of it a cache read: 300k × 0.60; 1k output at 22.50.
        let cost = SONNET_4_5.cached_cost(300_000, 300_000, 1_000);
        assert!(close(cost, 0.18 + 0.0225), "{cost}");
        assert!(close(SONNET_4_5.uncached_cost(200_000, 0), 0.6));
        assert!(close(
            SONNET_4_5.uncached_cost(200_001, 0),
            200_001.0 * 6.0 / MILLION
        ));
    }

    #[test]
    fn openai_caches_from_1024_tokens_without_a_write_fee() {
        // A 1,000-token shared prefix is too short: all 5k input at $1.25.
        assert!(close(
            GPT_5.cached_cost(5_000, 1_000, 0),
            5_000.0 * 1.25 / MILLION
        ));
        // 4k shared: 4k × 0.125 + 1k × 1.25; no long-context premium.
        let cost = GPT_5.cached_cost(5_000, 4_000, 100);
        assert!(close(cost, (500.0 + 1_250.0 + 1_000.0) / MILLION), "{cost}");
        assert!(close(
            GPT_5.uncached_cost(300_000, 0),
            GPT_5.uncached_cost(100_000, 0) * 3.0
        ));
        assert_eq!(GPT_5.split(5_000, 1_000, 7).cache_read, 0);
    }
}
