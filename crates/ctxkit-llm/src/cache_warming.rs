//! Cache warming (`cacheWarming`, Pi 1.5.1): the numbers. When a refresh of a prompt cache entry
//! is due, and whether it pays for itself: a refresh re-sends the last request with one output
//! token, read from the cache; it is sent only when the chance that a real request follows within
//! the cache's lifetime, times what a miss would cost over a hit, minus the refresh's own cost, is
//! at least [`MINIMUM_EXPECTED_SAVINGS`]. [`ModelClient::prompt_cache_lifetime`] says whether a
//! model's requests write a cache at all (only Anthropic Messages with `cacheRetention` other than
//! `none`: ctxkit knows no other provider's lifetime), [`ModelClient::refresh_cache`] sends the
//! refresh (never through the conversation's message thread). The scheduling is the agent's.

use std::time::Duration;

use ctxkit_models::ModelPrices;
use ctxkit_protocol::AssistantMessage;
use tokio_util::sync::CancellationToken;

use crate::chat::ChatRequest;
use crate::client::ModelClient;
use crate::error::LlmError;
use crate::models::Api;
use crate::wire::anthropic_cache::CacheRetention;

/// Warming during a run never goes on past this long after the real request that started it.
pub const MAX_STREAMING_AGE: Duration = Duration::from_secs(60 * 60);
/// Warming between runs stops this long after the last real request.
pub const MAX_IDLE_AGE: Duration = Duration::from_secs(30 * 60);
/// A refresh is sent only when it is expected to save at least this many dollars.
pub const MINIMUM_EXPECTED_SAVINGS: f64 = 0.05;
/// The chance that a real request comes before the cache expires while nobody prompts (Pi's
/// measured constant).
pub const IDLE_CONTINUATION_PROBABILITY: f64 = 0.15;

/// When a refresh is weighed: during a run (a long tool call; a request is certain to follow) or
/// between runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmingPhase {
    Streaming,
    Idle,
}

/// Whether refreshing a cache entry pays, and the numbers it was decided on (dollars).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmingDecision {
    pub phase: WarmingPhase,
    /// The refresh: the prompt read from the cache, one output token.
    pub warm_cost: f64,
    /// What a miss costs over a hit: writing the prompt to the cache again instead of reading it.
    pub miss_cost: f64,
    pub continuation_probability: f64,
    pub expected_savings: f64,
    /// False when the model has no prices or the prompt size is unknown (never warmed).
    pub economics_available: bool,
    pub warm: bool,
}

/// The delay before refreshing a cache entry that lives `lifetime`: at 90% of it, keeping at least
/// ten seconds of margin; `None` for a lifetime of ten seconds or less.
pub fn warming_delay(lifetime: Duration) -> Option<Duration> {
    let margin = Duration::from_secs(10);
    if lifetime <= margin {
        return None;
    }
    let ninety = lifetime.mul_f64(0.9);
    Some(ninety.min(lifetime - margin).max(Duration::from_millis(1)))
}

/// Pi's rule: refresh the entry of a `prompt_tokens`-token request at `prices` in `phase` when the
/// expected savings reach [`MINIMUM_EXPECTED_SAVINGS`].
pub fn evaluate_cache_warming(
    prices: Option<&ModelPrices>,
    prompt_tokens: u64,
    phase: WarmingPhase,
) -> WarmingDecision {
    let no_prices = ModelPrices::default();
    let prices = prices.unwrap_or(&no_prices);
    // The request's size picks its tier, as in `usage_cost`.
    let rates = prices.rates_for(prompt_tokens);
    let per_token = |price: f64| price / 1_000_000.0 * prompt_tokens as f64;
    let hit = per_token(rates.cache_read);
    let miss = if prices.cache_write > 0.0 {
        per_token(rates.cache_write)
    } else {
        per_token(rates.input)
    };
    let warm_cost = hit + rates.output / 1_000_000.0;
    let miss_cost = (miss - hit).max(0.0);
    let continuation_probability = match phase {
        WarmingPhase::Idle => IDLE_CONTINUATION_PROBABILITY,
        WarmingPhase::Streaming => 1.0,
    };
    let expected_savings = continuation_probability * miss_cost - warm_cost;
    let economics_available = prompt_tokens > 0 && (hit > 0.0 || miss > 0.0);
    WarmingDecision {
        phase,
        warm_cost,
        miss_cost,
        continuation_probability,
        expected_savings,
        economics_available,
        warm: economics_available && expected_savings >= MINIMUM_EXPECTED_SAVINGS,
    }
}

impl ModelClient {
    /// How long the prompt cache entry a conversation request writes lives: Anthropic's five
    /// minutes or one hour (`cacheRetention`); `None` when this model's requests write none ctxkit
    /// knows of (caching off, or another provider), so nothing is warmed.
    pub fn prompt_cache_lifetime(&self) -> Option<Duration> {
        let config = self.config();
        match (config.api, config.cache_retention) {
            (Api::AnthropicMessages, CacheRetention::Short) => Some(Duration::from_secs(5 * 60)),
            (Api::AnthropicMessages, CacheRetention::Long) => Some(Duration::from_secs(60 * 60)),
            (Api::AnthropicMessages, CacheRetention::None)
            | (Api::OpenAiChat | Api::OpenAiResponses | Api::Gemini, _) => None,
        }
    }

    /// Whether re-sending `request` with one output token reads the same cache entry: not with
    /// Anthropic's budgeted thinking, whose budget comes from the output limit and keys the cache.
    pub fn cache_refresh_replayable(&self, request: &ChatRequest) -> bool {
        request.reasoning.is_none() || self.config().api != Api::AnthropicMessages
    }

    /// Sends `request` again to refresh its prompt cache entry: one output token, whole (not
    /// streamed), no retries, and never as part of the conversation's message thread (the thread
    /// and where it stands are left as they were).
    pub async fn refresh_cache(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<AssistantMessage, LlmError> {
        // The request as the conversation sends it, threads beta included (it may key the cache).
        let threads_beta = self.thread_binding().is_some();
        let mut quiet = self.clone();
        quiet.without_threads_or_retries();
        let request = ChatRequest {
            max_tokens: Some(1),
            ..request.clone()
        };
        let mut wire = quiet.chat_wire(&request);
        if threads_beta {
            crate::chat_stream::add_thread_beta(quiet.config(), &mut wire);
        }
        let headers = quiet.headers(&wire.url, &wire.headers)?;
        let text = quiet
            .post_reply(&wire.url, &headers, &wire.body.to_string(), cancel)
            .await?;
        let mut reply = quiet.parse_chat(&text)?;
        quiet.stamp_reply(&mut reply, &request);
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sonnet() -> Option<ModelPrices> {
        Some(ModelPrices {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: Vec::new(),
        })
    }

    #[test]
    fn idle_warming_pays_only_for_large_prompts() {
        // 0.15 × (3.75 − 0.30) − 0.30 = 0.2175 dollars per million prompt tokens, less a token out.
        let small = evaluate_cache_warming(sonnet().as_ref(), 100_000, WarmingPhase::Idle);
        assert!(!small.warm && small.economics_available);
        assert!((small.expected_savings - (0.02175 - 0.000015)).abs() < 1e-9);
        let large = evaluate_cache_warming(sonnet().as_ref(), 300_000, WarmingPhase::Idle);
        assert!(large.warm, "{large:?}");
        // During a run the next request is certain: much smaller prompts pay.
        assert!(evaluate_cache_warming(sonnet().as_ref(), 20_000, WarmingPhase::Streaming).warm);
    }

    #[test]
    fn unknown_prices_or_sizes_never_warm() {
        let unpriced = evaluate_cache_warming(None, 900_000, WarmingPhase::Streaming);
        assert!(!unpriced.warm && !unpriced.economics_available);
        assert!(!evaluate_cache_warming(sonnet().as_ref(), 0, WarmingPhase::Streaming).warm);
    }

    #[test]
    fn a_long_prompt_is_weighed_at_its_tiers_rates() {
        // Past the tier's threshold the refresh and the miss are priced at the tier's rates (all
        // doubled here); below it, at the base rates.
        let mut prices = sonnet().unwrap();
        prices.tiers.push(ctxkit_models::PriceTier {
            input_tokens_above: 250_000,
            input: 6.0,
            output: 22.5,
            cache_read: 0.6,
            cache_write: 7.5,
        });
        let base = evaluate_cache_warming(sonnet().as_ref(), 300_000, WarmingPhase::Idle);
        let tiered = evaluate_cache_warming(Some(&prices), 300_000, WarmingPhase::Idle);
        assert!(
            (tiered.warm_cost - 0.18 - 22.5 / 1e6).abs() < 1e-9,
            "{tiered:?}"
        );
        assert!((tiered.miss_cost - 2.0 * base.miss_cost).abs() < 1e-9);
        let below = evaluate_cache_warming(Some(&prices), 200_000, WarmingPhase::Idle);
        let below_base = evaluate_cache_warming(sonnet().as_ref(), 200_000, WarmingPhase::Idle);
        assert_eq!(below, below_base);
    }

    #[test]
    fn the_refresh_comes_before_the_entry_expires() {
        assert_eq!(
            warming_delay(Duration::from_secs(300)),
            Some(Duration::from_secs(270))
        );
        assert_eq!(
            warming_delay(Duration::from_secs(50)),
            Some(Duration::from_secs(40))
        );
        assert_eq!(warming_delay(Duration::from_secs(10)), None);
    }
}
