//! What a request cost: a model's list prices, the request-wide tiers some models bill long
//! prompts at, and the cost of one reply's usage, computed as Pi computes it.

/// A model's list prices, in dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelPrices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// Rates for requests whose input (fresh, read from and written to the cache) is above a
    /// size: the highest tier the request passes prices all of it (Pi 1.6's `cost.tiers`).
    pub tiers: Vec<PriceTier>,
}

/// The rates of requests whose input is above `input_tokens_above`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceTier {
    pub input_tokens_above: u64,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl ModelPrices {
    /// Every price is zero: a free model (a local one, or one the user declared free with a
    /// `cost` of zeros), as against a model whose price is unknown (no prices at all).
    pub fn is_free(&self) -> bool {
        [self.input, self.output, self.cache_read, self.cache_write] == [0.0; 4]
            && self.tiers.iter().all(|tier| {
                [tier.input, tier.output, tier.cache_read, tier.cache_write] == [0.0; 4]
            })
    }

    /// What the model's prompt cache charges, from its base prices ([`CacheTerms::from_prices`]).
    pub fn cache_terms(&self) -> Option<CacheTerms> {
        CacheTerms::from_prices(self.input, self.cache_read, self.cache_write)
    }

    /// The rates a request of `input_tokens` is billed at: the tier with the highest threshold
    /// below it, else the base prices.
    pub fn rates_for(&self, input_tokens: u64) -> PriceTier {
        let base = PriceTier {
            input_tokens_above: 0,
            input: self.input,
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
        };
        self.tiers
            .iter()
            .filter(|tier| input_tokens > tier.input_tokens_above)
            .max_by_key(|tier| tier.input_tokens_above)
            .copied()
            .unwrap_or(base)
    }
}

/// What a model's prompt cache charges, as the pruning rule weighs it (`pruneWhenItPays`): the
/// terms `cacheReadPercent`, `cacheWritePercent` and `cacheReadsAnyPrefix` take when the settings
/// leave them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheTerms {
    pub read_percent: u64,
    pub write_percent: u64,
    pub reads_any_prefix: bool,
}

impl CacheTerms {
    /// The terms of a model priced `input`, `cache_read` and `cache_write` (any one unit); `None`
    /// when the prices say nothing of a cache (no input or no cache-read price).
    ///
    /// A write price above the input price is a write fee, which only a cache of explicit
    /// breakpoints charges (Anthropic, and gateways passing its `cache_control` on); a model with
    /// none (OpenAI, Gemini, most gateway rows: 0) writes at the input price and its cache serves
    /// any shared prefix.
    pub fn from_prices(input: f64, cache_read: f64, cache_write: f64) -> Option<Self> {
        if !(input > 0.0 && cache_read > 0.0) {
            return None;
        }
        let percent = |price: f64| (100.0 * price / input).round().clamp(1.0, 1000.0) as u64;
        let write_fee = cache_write > input;
        Some(Self {
            read_percent: percent(cache_read).min(100),
            write_percent: if write_fee { percent(cache_write) } else { 100 },
            reads_any_prefix: !write_fee,
        })
    }
}

/// The usage field (Pi 1.6's `cacheWrite1h`) holding the part of `cacheWrite` written to live an
/// hour, which Anthropic bills at twice the input price instead of the five-minute write price.
pub const LONG_CACHE_WRITES: &str = "cacheWrite1h";

/// The hour-long part of `usage`'s cache writes (0 when it says none).
fn long_cache_writes(usage: &ctxkit_protocol::Usage) -> u64 {
    usage
        .extra
        .get(LONG_CACHE_WRITES)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
        .min(usage.cache_write)
}

/// What `usage` cost at `prices` (zeros without prices), as Pi computes it: the request's input
/// (fresh, cache reads and writes) picks the rates ([`ModelPrices::rates_for`]); each part is its
/// tokens times its rate per million, the total their sum; hour-long cache writes
/// ([`LONG_CACHE_WRITES`]) cost twice the input rate, the others the cache-write rate.
pub fn usage_cost(
    usage: &ctxkit_protocol::Usage,
    prices: Option<&ModelPrices>,
) -> ctxkit_protocol::UsageCost {
    let input_tokens = usage.input_tokens();
    let rates = prices.map_or_else(
        || ModelPrices::default().rates_for(0),
        |prices| prices.rates_for(input_tokens),
    );
    let part = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
    let input = part(rates.input, usage.input);
    let output = part(rates.output, usage.output);
    let cache_read = part(rates.cache_read, usage.cache_read);
    let long = long_cache_writes(usage);
    let cache_write =
        part(rates.cache_write, usage.cache_write - long) + part(rates.input * 2.0, long);
    ctxkit_protocol::UsageCost {
        input,
        output,
        cache_read,
        cache_write,
        total: input + output + cache_read + cache_write,
        extra: ctxkit_protocol::JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{model_cache_terms, model_prices};

    #[test]
    fn a_cache_with_a_write_fee_is_anthropic_s_and_one_without_serves_any_prefix() {
        let terms = |provider, id| model_cache_terms(provider, id).unwrap();
        let anthropic = CacheTerms {
            read_percent: 10,
            write_percent: 125,
            reads_any_prefix: false,
        };
        assert_eq!(terms("anthropic", "claude-sonnet-4-5"), anthropic);
        let openai = terms("openai", "gpt-5");
        assert_eq!((openai.write_percent, openai.reads_any_prefix), (100, true));
        assert_eq!(openai.read_percent, 10);
        let gemini = terms("google", "gemini-2.5-pro");
        assert_eq!((gemini.write_percent, gemini.reads_any_prefix), (100, true));
        // An Anthropic model through a gateway that passes `cache_control` on keeps the fee.
        assert!(!terms("openrouter", "anthropic/claude-sonnet-4.5").reads_any_prefix);
        // A gateway the table does not know serving a known model caches as the model's maker
        // does, though the table cannot say what the gateway charges.
        assert_eq!(terms("my-gateway", "gpt-5"), openai);
        assert_eq!(model_prices("my-gateway", "gpt-5"), None);
    }

    #[test]
    fn prices_that_say_nothing_of_a_cache_give_no_terms() {
        assert_eq!(CacheTerms::from_prices(0.0, 0.0, 0.0), None);
        assert_eq!(CacheTerms::from_prices(3.0, 0.0, 3.75), None);
        assert_eq!(model_cache_terms("nobody", "nothing"), None);
        // A listed write price below the input price is no fee: such a cache writes at input.
        let cheap_write = CacheTerms::from_prices(1.0, 0.1, 0.05).unwrap();
        assert_eq!(cheap_write.write_percent, 100);
        assert!(cheap_write.reads_any_prefix);
    }

    #[test]
    fn usage_costs_follow_the_prices_and_are_zero_without() {
        let usage = ctxkit_protocol::Usage {
            input: 1_000_000,
            output: 2_000,
            cache_read: 10_000,
            ..ctxkit_protocol::Usage::default()
        };
        let prices = model_prices("anthropic", "claude-sonnet-4-5");
        let cost = usage_cost(&usage, prices.as_ref());
        assert!((cost.input - 3.0).abs() < 1e-9);
        assert!((cost.output - 0.03).abs() < 1e-9);
        assert!((cost.cache_read - 0.003).abs() < 1e-9);
        assert!((cost.total - 3.033).abs() < 1e-9);
        let unknown = usage_cost(&usage, model_prices("ollama", "qwen3:8b").as_ref());
        assert_eq!(unknown.total, 0.0);
    }

    #[test]
    fn hour_long_cache_writes_cost_twice_the_input_price() {
        let mut usage = ctxkit_protocol::Usage {
            cache_write: 1_000_000,
            ..ctxkit_protocol::Usage::default()
        };
        let prices = model_prices("anthropic", "claude-sonnet-4-5");
        assert!((usage_cost(&usage, prices.as_ref()).cache_write - 3.75).abs() < 1e-9);
        usage
            .extra
            .insert(LONG_CACHE_WRITES.to_owned(), serde_json::json!(400_000));
        let cost = usage_cost(&usage, prices.as_ref());
        assert!((cost.cache_write - (0.6 * 3.75 + 0.4 * 6.0)).abs() < 1e-9);
        assert!((cost.total - cost.cache_write).abs() < 1e-9);
    }

    #[test]
    fn the_highest_tier_a_request_passes_prices_all_of_it() {
        let prices = ModelPrices {
            input: 1.0,
            output: 10.0,
            cache_read: 0.1,
            cache_write: 0.0,
            tiers: vec![
                PriceTier {
                    input_tokens_above: 500_000,
                    input: 4.0,
                    output: 40.0,
                    cache_read: 0.4,
                    cache_write: 0.0,
                },
                PriceTier {
                    input_tokens_above: 200_000,
                    input: 2.0,
                    output: 20.0,
                    cache_read: 0.2,
                    cache_write: 0.0,
                },
            ],
        };
        let usage = |input, cache_read| ctxkit_protocol::Usage {
            input,
            cache_read,
            output: 1_000_000,
            ..ctxkit_protocol::Usage::default()
        };
        // 200,000 tokens of input is not above the first threshold: base rates.
        let at_the_line = usage_cost(&usage(100_000, 100_000), Some(&prices));
        assert!((at_the_line.total - (0.1 + 0.01 + 10.0)).abs() < 1e-9);
        // Cache reads count toward the threshold, and the tier prices the whole request.
        let above = usage_cost(&usage(100_000, 100_001), Some(&prices));
        assert!((above.input - 0.2).abs() < 1e-9);
        assert!((above.output - 20.0).abs() < 1e-9);
        let far_above = usage_cost(&usage(600_000, 0), Some(&prices));
        assert!((far_above.input - 2.4).abs() < 1e-9);
        assert!((far_above.output - 40.0).abs() < 1e-9);
    }

    #[test]
    fn a_model_is_free_only_when_its_tiers_are_free_too() {
        let mut prices = ModelPrices::default();
        assert!(prices.is_free());
        prices.tiers.push(PriceTier {
            input_tokens_above: 1,
            input: 1.0,
            output: 0.0,
            cache_read: 0.0,
            cache_write: 0.0,
        });
        assert!(!prices.is_free());
    }
}
