//! Prices and the cost of a request, with and without a prompt cache.

use serde::Serialize;

/// A model's list prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PriceTable {
    pub model: &'static str,
    /// Where the prices come from and when they were read.
    pub source: &'static str,
    pub input_per_mtok: f64,
    /// Writing a prefix into the cache (5-minute cache).
    pub cache_write_per_mtok: f64,
    /// Reading a cached prefix ("cache hits and refreshes").
    pub cache_read_per_mtok: f64,
    pub output_per_mtok: f64,
}

/// Claude Sonnet 4.5 list prices for prompts of at most 200K input tokens, from Anthropic's pricing
/// page <https://docs.anthropic.com/en/docs/about-claude/pricing> (now served at
/// <https://platform.claude.com/docs/en/about-claude/pricing>): base input $3/MTok, 5-minute cache
/// writes $3.75/MTok, cache hits $0.30/MTok, output $15/MTok. Read in the 2025 version of the page
/// (the same row as Claude Sonnet 4); unchanged in the 2026 copy of the Sonnet 4.5 model page
/// ($3 input, $15 output). Prompts above 200K tokens are billed higher on that page; the simulator
/// prices every request at the ≤ 200K rates.
pub const SONNET_4_5: PriceTable = PriceTable {
    model: "claude-sonnet-4-5",
    source: "Anthropic pricing page (docs.anthropic.com/en/docs/about-claude/pricing), 2025 list prices, <= 200K-token prompts, 5-minute cache",
    input_per_mtok: 3.0,
    cache_write_per_mtok: 3.75,
    cache_read_per_mtok: 0.30,
    output_per_mtok: 15.0,
};

const MILLION: f64 = 1_000_000.0;

impl PriceTable {
    /// Dollars for a request with no prompt cache: every input token at the base price.
    pub fn uncached_cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        (input_tokens as f64 * self.input_per_mtok + output_tokens as f64 * self.output_per_mtok)
            / MILLION
    }

    /// Dollars for a request with a prompt cache: the prefix shared with the previous request is a
    /// cache read, the rest of the input is a cache write (so the next request can read it).
    pub fn cached_cost(
        &self,
        input_tokens: u64,
        shared_prefix_tokens: u64,
        output_tokens: u64,
    ) -> f64 {
        let read = shared_prefix_tokens.min(input_tokens);
        let write = input_tokens - read;
        (read as f64 * self.cache_read_per_mtok
            + write as f64 * self.cache_write_per_mtok
            + output_tokens as f64 * self.output_per_mtok)
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
        // 1M input at $3 + 0.1M output at $15.
        assert!(close(SONNET_4_5.uncached_cost(1_000_000, 100_000), 4.5));
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
}
