//! Provider-native features priced on a replay, each an option on every strategy:
//!
//! - **Message threads** (Anthropic, `message-threads-2026-08-12`; none on OpenAI): a request that extends the
//!   previous one (its messages, then the reply) within the thread's five minutes sends only what
//!   came after the reply. Pi's documentation says token counts and prompt caching are unchanged,
//!   so threads change the bytes on the wire, not the bill: measured as tokens sent.
//! - **Cache warming** (`cacheWarming: idle`, Pi's rule): between two runs the user is away for an
//!   idle gap (drawn from the seed, log-uniform from [`IDLE_GAP_MIN_SECONDS`] to
//!   [`IDLE_GAP_MAX_SECONDS`]); a gap longer than the cache's lifetime makes the next request's
//!   shared prefix a cache write instead of a read. With warming, the last request is refreshed
//!   (a cache read of its prompt plus one output token) every 90% of the lifetime for at most 30
//!   minutes, when 15% of the miss cost minus the refresh's cost is at least $0.05. OpenAI's
//!   automatic cache is taken to live five minutes and is never warmed (ctxkit knows no lifetime
//!   for it). The existing totals assume no gaps; these figures add them.
//! - **On-demand compaction** (Anthropic, `compact-2026-09-04`; none on OpenAI): the provider's model writes the
//!   summary on the cached conversation, so a summary is billed as a cache read of the request it
//!   continues, the messages since at the write price, and the summary as output; the API's own
//!   instruction is not counted. Strategies with provider-side compaction already bill that way.

use serde::Serialize;

use super::cost::{PriceTable, Provider};
use super::summary::{SummaryInput, latency_seconds};
use crate::rng::Rng;

/// The shortest idle gap between two runs, seconds.
pub const IDLE_GAP_MIN_SECONDS: f64 = 10.0;
/// The longest idle gap between two runs, seconds.
pub const IDLE_GAP_MAX_SECONDS: f64 = 3_600.0;
/// How long a message thread lives after its last request, seconds.
pub const THREAD_LIFETIME_SECONDS: f64 = 300.0;
/// Pi's warming constants: the least expected saving of a refresh, the chance a request follows
/// while idle, and how long idle warming goes on.
pub const WARMING_MINIMUM_SAVINGS: f64 = 0.05;
pub const WARMING_IDLE_PROBABILITY: f64 = 0.15;
pub const WARMING_MAX_IDLE_SECONDS: f64 = 1_800.0;

const MILLION: f64 = 1_000_000.0;

/// The features' figures for one strategy.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NativeFeatures {
    /// Input tokens of every request, sent whole.
    pub sent_tokens_full: u64,
    /// The same requests with message threads.
    pub sent_tokens_threads: u64,
    /// Requests that continued the thread.
    pub thread_continuations: usize,
    /// Gaps between runs.
    pub idle_gaps: usize,
    /// Gaps after which the cache had expired, without warming, and what those misses cost over
    /// cache reads.
    pub cold_misses: usize,
    pub cold_miss_cost: f64,
    /// Refreshes warming sent and their cost.
    pub warm_refreshes: usize,
    pub warm_refresh_cost: f64,
    /// Misses left with warming (gaps it did not pay to bridge), and their cost.
    pub warmed_misses: usize,
    pub warmed_miss_cost: f64,
    /// The strategy's summary calls billed as on-demand compaction.
    pub on_demand_summary_cost: f64,
}

impl NativeFeatures {
    /// What the idle gaps add to the total: without warming, or with Pi's warming.
    pub fn idle_cost(&self, warming: bool) -> f64 {
        if warming {
            self.warm_refresh_cost + self.warmed_miss_cost
        } else {
            self.cold_miss_cost
        }
    }
}

/// Follows the requests of one replay and prices the features on them.
#[derive(Debug)]
pub(crate) struct NativeTracker {
    prices: PriceTable,
    /// The prompt cache's lifetime, seconds.
    lifetime: f64,
    /// Whether ctxkit warms this provider's cache.
    warms: bool,
    /// Whether the provider has message threads and on-demand compaction (Anthropic).
    anthropic: bool,
    gaps: Rng,
    /// The gap before the next request, when it starts a run after the first.
    pending_gap: Option<f64>,
    last_input: u64,
    last_output: u64,
    pub(crate) features: NativeFeatures,
}

/// One accepted request, as the tracker needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sent {
    pub input: u64,
    pub output: u64,
    /// Tokens shared with the previous request.
    pub shared: u64,
    /// Whether the previous request is a prefix of this one (a thread can continue).
    pub extends_previous: bool,
}

impl NativeTracker {
    pub(crate) fn new(provider: Provider, prices: PriceTable, seed: u64) -> Self {
        // (cache lifetime, warmed by ctxkit, Anthropic's threads and on-demand compaction)
        let (lifetime, warms, anthropic) = match provider {
            Provider::Anthropic5m => (300.0, true, true),
            Provider::Anthropic1h => (3_600.0, true, true),
            Provider::Openai | Provider::Gemini => (300.0, false, false),
        };
        Self {
            prices,
            lifetime,
            warms,
            anthropic,
            gaps: Rng::fork(seed, 0x1d1e_6a95),
            pending_gap: None,
            last_input: 0,
            last_output: 0,
            features: NativeFeatures::default(),
        }
    }

    /// A run ended and the next one starts after an idle gap.
    pub(crate) fn run_ended(&mut self) {
        let (low, high) = (IDLE_GAP_MIN_SECONDS.ln(), IDLE_GAP_MAX_SECONDS.ln());
        self.pending_gap = Some((low + self.gaps.unit() * (high - low)).exp());
    }

    /// A request the model accepted.
    pub(crate) fn sent(&mut self, request: Sent) {
        let features = &mut self.features;
        features.sent_tokens_full += request.input;
        let gap = self.pending_gap.take();
        let thread_alive = gap.is_none_or(|gap| gap <= THREAD_LIFETIME_SECONDS);
        if self.anthropic && request.extends_previous && thread_alive && self.last_input > 0 {
            features.thread_continuations += 1;
            features.sent_tokens_threads += request
                .input
                .saturating_sub(request.shared + self.last_output);
        } else {
            features.sent_tokens_threads += request.input;
        }
        if let Some(gap) = gap {
            self.idle(gap, request);
        }
        self.last_input = request.input;
        self.last_output = request.output;
    }

    /// Whether on-demand compaction exists for this provider (Anthropic's).
    pub(crate) fn has_on_demand_compaction(&self) -> bool {
        self.anthropic
    }

    /// Prices the idle gap `gap` before `request`.
    fn idle(&mut self, gap: f64, request: Sent) {
        let factor = self.prices.input_factor(request.input);
        let miss_cost = request.shared as f64
            * (self.prices.cache_write_per_mtok - self.prices.cache_read_per_mtok)
            * factor
            / MILLION;
        let refreshes = if self.warms && self.refresh_pays(self.last_input) {
            self.refreshes_within(gap)
        } else {
            0
        };
        let refresh = self.refresh_cost(self.last_input);
        let alive_until = refreshes as f64 * self.delay() + self.lifetime;
        let features = &mut self.features;
        features.idle_gaps += 1;
        if gap > self.lifetime {
            features.cold_misses += 1;
            features.cold_miss_cost += miss_cost;
        }
        features.warm_refreshes += refreshes;
        features.warm_refresh_cost += refreshes as f64 * refresh;
        if gap > alive_until {
            features.warmed_misses += 1;
            features.warmed_miss_cost += miss_cost;
        }
    }

    /// Pi's rule for a prompt of `tokens`, at list prices.
    fn refresh_pays(&self, tokens: u64) -> bool {
        let tokens = tokens as f64;
        let miss = tokens
            * (self.prices.cache_write_per_mtok - self.prices.cache_read_per_mtok).max(0.0)
            / MILLION;
        let warm =
            (tokens * self.prices.cache_read_per_mtok + self.prices.output_per_mtok) / MILLION;
        tokens > 0.0 && WARMING_IDLE_PROBABILITY * miss - warm >= WARMING_MINIMUM_SAVINGS
    }

    /// A refresh as billed: the prompt read from the cache, one output token.
    fn refresh_cost(&self, tokens: u64) -> f64 {
        self.prices.cached_cost(tokens, tokens, 1)
    }

    /// The wait before each refresh: 90% of the lifetime, at least ten seconds before it ends.
    fn delay(&self) -> f64 {
        (self.lifetime * 0.9).min(self.lifetime - 10.0)
    }

    /// Refreshes sent during a gap of `gap` seconds (stopped by the next prompt and by the
    /// 30-minute limit).
    fn refreshes_within(&self, gap: f64) -> usize {
        let delay = self.delay();
        let mut count = 0;
        let mut at = delay;
        while at < gap && at <= WARMING_MAX_IDLE_SECONDS {
            count += 1;
            at += delay;
        }
        count
    }
}

/// A summary call billed as on-demand compaction: the request it continues read from the cache,
/// what came after it written, the summary as output; its cost and seconds.
pub(crate) fn on_demand_call(input: SummaryInput, output: u64, prices: &PriceTable) -> (f64, f64) {
    let tokens = input.last_request_tokens + input.tail_tokens;
    let billed = prices.split(tokens, input.last_request_tokens, output);
    (
        prices.cached_cost(tokens, input.last_request_tokens, output),
        latency_seconds(billed.cache_read, billed.uncached, output),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(input: u64, shared: u64, extends_previous: bool) -> Sent {
        Sent {
            input,
            output: 1_000,
            shared,
            extends_previous,
        }
    }

    #[test]
    fn threads_send_only_what_follows_the_reply_and_cost_nothing_more() {
        let mut tracker =
            NativeTracker::new(Provider::Anthropic5m, Provider::Anthropic5m.prices(), 1);
        tracker.sent(sent(10_000, 0, false));
        tracker.sent(sent(12_000, 10_000, true));
        let features = &tracker.features;
        assert_eq!(features.sent_tokens_full, 22_000);
        // The second sends 12,000 − 10,000 shared − 1,000 of reply the thread holds.
        assert_eq!(features.sent_tokens_threads, 11_000);
        assert_eq!(features.thread_continuations, 1);
        // A request that does not extend the previous one goes out whole.
        tracker.sent(sent(5_000, 2_000, false));
        assert_eq!(tracker.features.sent_tokens_threads, 16_000);
    }

    #[test]
    fn warming_bridges_a_gap_only_when_it_pays() {
        // Sonnet, 5 minutes: 0.15 × 3.45 − 0.30 = 0.2175 $/M, so it pays from about 230k tokens.
        let tracker = NativeTracker::new(Provider::Anthropic5m, Provider::Anthropic5m.prices(), 1);
        assert!(!tracker.refresh_pays(150_000));
        assert!(tracker.refresh_pays(240_000));
        assert!((tracker.delay() - 270.0).abs() < 1e-9);
        assert_eq!(tracker.refreshes_within(200.0), 0);
        assert_eq!(tracker.refreshes_within(600.0), 2);
        // Never past 30 minutes: refreshes at 270 s … 1,620 s.
        assert_eq!(tracker.refreshes_within(3_600.0), 6);

        let mut large =
            NativeTracker::new(Provider::Anthropic5m, Provider::Anthropic5m.prices(), 1);
        large.sent(sent(240_000, 0, false));
        large.pending_gap = Some(600.0);
        large.sent(sent(241_000, 240_000, true));
        let features = &large.features;
        assert_eq!((features.cold_misses, features.warmed_misses), (1, 0));
        assert_eq!(features.warm_refreshes, 2);
        assert!(features.warm_refresh_cost < features.cold_miss_cost);
        // A gap longer than warming keeps up misses anyway, after paying its refreshes.
        large.pending_gap = Some(3_000.0);
        large.sent(sent(242_000, 241_000, true));
        assert_eq!(large.features.warmed_misses, 1);
        // The thread expired over the gaps: both requests went out whole.
        assert_eq!(large.features.thread_continuations, 0);
    }

    #[test]
    fn openai_caches_are_never_warmed() {
        let mut tracker = NativeTracker::new(Provider::Openai, Provider::Openai.prices(), 1);
        tracker.sent(sent(900_000, 0, false));
        tracker.pending_gap = Some(900.0);
        tracker.sent(sent(901_000, 900_000, true));
        assert_eq!(tracker.features.warm_refreshes, 0);
        assert_eq!(tracker.features.warmed_misses, 1);
        // Nor threaded, nor compacted on demand: those are Anthropic's.
        assert_eq!(tracker.features.thread_continuations, 0);
        assert!(!tracker.has_on_demand_compaction());
        assert!(tracker.features.cold_miss_cost > 0.0);
    }

    #[test]
    fn on_demand_reads_the_prefix_and_writes_the_rest() {
        let input = SummaryInput {
            span_tokens: 100_000,
            last_request_tokens: 150_000,
            tail_tokens: 2_000,
        };
        let (cost, _) = on_demand_call(input, 3_000, &crate::cost::SONNET_4_5);
        let expected = (150_000.0 * 0.30 + 2_000.0 * 3.75 + 3_000.0 * 15.0) / MILLION;
        assert!((cost - expected).abs() < 1e-12, "{cost}");
    }
}
