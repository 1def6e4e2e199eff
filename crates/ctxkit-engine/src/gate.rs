//! Compacting when it pays (`compaction.whenItPays`; off by default and in the recommended
//! strategy: on real sessions it saved in summaries about what the longer contexts cost in reads
//! and writes, and nothing once summary updates are appended; docs/simulator.md, sixth round).
//!
//! A compaction costs once and saves on every later request. It costs the summary's output (about
//! five times the input price per token at Anthropic's prices), and the rewrite of the context it
//! leaves (the prompt cache held the old prefix; the new one is written whole at the write
//! price); it saves, on every request after it until the next compaction, the reads of what it
//! took out (the cache-read price, or the write price on a request that finds the cache expired).
//! Compacting at a fixed size, as `thresholdTokens` does, pays that cost however fast the context
//! grows: a run that adds 2,000 tokens a request to a 20,000-token compacted context reaches a
//! 40,000-token threshold every ten requests and pays a summary each time, where waiting longer
//! costs a few reads.
//!
//! So the threshold is learned from the session's own requests. With `K` the compaction's cost
//! (summary output + rewrite of what it leaves, in input-price tokens), `g` the context's growth
//! per request, `r` what one context token costs a request (the read price, plus the write
//! premium times the share of the context requests wrote again) and `A` what a compaction
//! leaves, the cost per request of compacting every time the context is `x` tokens over `A` is
//! `K·g/x + r·(A + x/2)`, least at `x = √(2·K·g/r)`. The session may also end before the
//! compaction has paid: a compaction `x` tokens over `A` pays within `K/(x·r)` requests, and a
//! session that has run `n` requests is expected to run about as many more, so `x` is at least
//! `K/(n·r)`. The threshold is `A + x`, never under `thresholdTokens` (nor the window's threshold
//! when that is lower) and never over the window's own threshold (the reserve without
//! `thresholdTokens`), so overflows stay as before. The background summary starts at
//! `backgroundPercent` of it.
//!
//! `r` is learned too: the share of the context requests wrote again instead of reading it (the
//! cache had expired, or a cut changed the context), weighted by tokens. Taking only expiries
//! (the first version) or only the increases as growth (`g` below) made the gate wait too long
//! where the transforms cut often: each cut rewrites the context, and a larger context costs
//! more at every cut (docs/simulator.md, sixth round).
//!
//! What is learned (each request's estimated tokens and time, as `model_view` builds it): `g`, the
//! context's net growth per request (from each compaction, or the session's start, to the next,
//! so what pruning cut on the way counts off); the rewritten share above (a request's cache lives
//! five minutes, or an hour when it asked for it); `A`, what
//! the session's latest compaction left, and the summary's tokens, the latest compaction's. Until
//! the session has compacted once the threshold is the configured one: `A` and the summary's size
//! are not known yet, and a version that guessed them (half the threshold, 4,000 tokens) put the
//! first compaction of short, fast-growing sessions too late.

use ctxkit_transform::{CacheLifetime, LONG_CACHE_MS, SHORT_CACHE_MS};

/// The output price in input prices (Anthropic: $15 against $3 a million for Sonnet, $75 against
/// $15 for Opus, $5 against $1 for Haiku).
const OUTPUT_PRICE: f64 = 5.0;

/// What the session's requests so far say about when a compaction pays.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateLearner {
    /// The previous request: when it was sent (ms), its tokens, and how long its cache lives (ms).
    previous: Option<(Option<i64>, u64, i64)>,
    /// Requests seen.
    requests: u64,
    /// The net growth of the context over the requests of finished epochs (an epoch runs from a
    /// compaction, or the session's start, to the next compaction), and those requests.
    growth: u64,
    grown: u64,
    /// The current epoch: its first request's tokens, the latest request's, and its requests after
    /// the first.
    epoch_first: Option<u64>,
    epoch_last: u64,
    epoch_requests: u64,
    /// Tokens each request carried over from the previous one (the smaller of the two), summed,
    /// and of those the tokens written again rather than read: all of them when the cache had
    /// expired (the request came longer after the previous one than its cache lives) or the
    /// context shrank (a cut rewrites from the first result it cut; taken as all of it). The
    /// request after a compaction is not counted (its rewrite is the compaction's cost).
    carried: u64,
    rewritten: u64,
    /// What the latest compaction left (estimated tokens) and its summary's tokens.
    latest: Option<(u64, u64)>,
    /// A compaction was written since the previous request: the next increase is not growth.
    compacted: bool,
}

/// The prices the gate weighs, as fractions of the input price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GatePrices {
    pub read: f64,
    pub write: f64,
}

/// The bounds of the learned threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateBounds {
    /// The configured threshold (`thresholdTokens`, or the window's when lower): never under it.
    pub floor: u64,
    /// The window's own threshold: never over it.
    pub ceiling: u64,
}

impl GateLearner {
    /// A request of `tokens` about to be sent at `at` (ms) asking for `lifetime`. The same request
    /// sent again (same time and size: a retry) teaches nothing.
    pub fn request(&mut self, at: Option<i64>, tokens: u64, lifetime: CacheLifetime) {
        let lives = match lifetime {
            CacheLifetime::Configured => SHORT_CACHE_MS,
            CacheLifetime::Long => LONG_CACHE_MS,
        };
        if let Some((then, before, lived)) = self.previous {
            if then == at && before == tokens {
                return;
            }
            let expired = matches!((then, at),
                (Some(then), Some(now)) if now.saturating_sub(then) > lived);
            if !self.compacted {
                let carried = before.min(tokens);
                self.carried += carried;
                if expired || tokens < before {
                    self.rewritten += carried;
                }
            }
        }
        if self.compacted {
            self.close_epoch();
        }
        match self.epoch_first {
            Some(_) => self.epoch_requests += 1,
            None => self.epoch_first = Some(tokens),
        }
        self.epoch_last = tokens;
        self.compacted = false;
        self.requests += 1;
        self.previous = Some((at, tokens, lives));
    }

    /// The epoch ends: its net growth (what pruning cut counted off) is kept.
    fn close_epoch(&mut self) {
        if let Some(first) = self.epoch_first.take() {
            self.growth += self.epoch_last.saturating_sub(first);
            self.grown += self.epoch_requests;
        }
        self.epoch_requests = 0;
    }

    /// The context's net growth per request so far, and over how many requests.
    fn growth(&self) -> (u64, u64) {
        let current = self
            .epoch_first
            .map_or(0, |first| self.epoch_last.saturating_sub(first));
        (self.growth + current, self.grown + self.epoch_requests)
    }

    /// A compaction was written that left `tokens_after` with a summary of `summary_tokens`.
    pub fn compaction(&mut self, tokens_after: u64, summary_tokens: u64) {
        self.latest = Some((tokens_after, summary_tokens));
        self.compacted = true;
    }

    /// The context size from which a compaction pays (see the module's text), within `bounds`;
    /// the floor until the session has compacted once and grown over a request since.
    pub fn threshold(&self, bounds: GateBounds, prices: GatePrices) -> u64 {
        let (growth, grown) = self.growth();
        let Some((after, summary)) = self.latest else {
            return bounds.floor;
        };
        if grown == 0 || bounds.floor >= bounds.ceiling {
            return bounds.floor;
        }
        let growth = (growth as f64 / grown as f64).max(1.0);
        let rewritten = if self.carried == 0 {
            0.0
        } else {
            self.rewritten as f64 / self.carried as f64
        };
        let per_token = (prices.read + rewritten * (prices.write - prices.read).max(0.0)).max(0.01);
        let (after, summary) = (after as f64, summary as f64);
        let cost = summary * OUTPUT_PRICE + after * prices.write;
        let renewal = (2.0 * cost * growth / per_token).sqrt();
        let horizon = cost / (self.requests.max(1) as f64 * per_token);
        let threshold = after + renewal.max(horizon);
        if threshold.is_finite() {
            (threshold.round() as u64).clamp(bounds.floor, bounds.ceiling)
        } else {
            bounds.ceiling
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60 * 1000;
    const PRICES: GatePrices = GatePrices {
        read: 0.1,
        write: 1.25,
    };
    const BOUNDS: GateBounds = GateBounds {
        floor: 40_000,
        ceiling: 183_616,
    };

    /// A learner whose session compacted to 20,000 tokens with a 4,000-token summary.
    fn compacted() -> GateLearner {
        let mut learner = GateLearner::default();
        learner.compaction(20_000, 4_000);
        learner
    }

    fn run(learner: &mut GateLearner, requests: u64, growth: u64, pause: i64) {
        let mut at = learner
            .previous
            .and_then(|(at, _, _)| at)
            .unwrap_or_default();
        let mut tokens = learner.previous.map_or(20_000, |(_, tokens, _)| tokens);
        for _ in 0..requests {
            at += pause;
            tokens += growth;
            learner.request(Some(at), tokens, CacheLifetime::Configured);
        }
    }

    #[test]
    fn the_configured_threshold_holds_until_the_session_has_compacted_and_grown() {
        let learner = GateLearner::default();
        assert_eq!(learner.threshold(BOUNDS, PRICES), 40_000);
        let mut uncompacted = GateLearner::default();
        run(&mut uncompacted, 40, 2_000, 20 * 1000);
        assert_eq!(uncompacted.threshold(BOUNDS, PRICES), 40_000);
        let mut one = compacted();
        one.request(Some(0), 30_000, CacheLifetime::Configured);
        assert_eq!(one.threshold(BOUNDS, PRICES), 40_000);
    }

    #[test]
    fn fast_growth_waits_longer_and_slow_growth_compacts_at_the_configured_threshold() {
        // 2,000 tokens a request with a warm cache: a compaction (4,000 output tokens, a
        // 20,000-token rewrite: 45,000 input-price tokens) pays best every √(2·45,000·2,000/0.1)
        // ≈ 42,400 tokens over what it leaves.
        let mut fast = compacted();
        run(&mut fast, 40, 2_000, 20 * 1000);
        let threshold = fast.threshold(BOUNDS, PRICES);
        assert!((60_000..65_000).contains(&threshold), "{threshold}");
        // 200 tokens a request: every 13,400 tokens, under the configured 40,000.
        let mut slow = compacted();
        run(&mut slow, 40, 200, 20 * 1000);
        assert_eq!(slow.threshold(BOUNDS, PRICES), 40_000);
    }

    #[test]
    fn a_short_session_does_not_pay_for_a_summary_it_will_not_use() {
        // Three requests in: a compaction would have to pay within about three more, which
        // takes a saving of 45,000 / (3 × 0.1) = 150,000 tokens a request.
        let mut short = compacted();
        run(&mut short, 3, 2_000, 20 * 1000);
        assert_eq!(short.threshold(BOUNDS, PRICES), 170_000);
        // Never over the window's own threshold.
        run(&mut short, 1, 2_000, 20 * 1000);
        assert!(short.threshold(BOUNDS, PRICES) <= BOUNDS.ceiling);
    }

    #[test]
    fn requests_after_the_cache_expired_make_a_smaller_context_pay_sooner() {
        let mut warm = compacted();
        run(&mut warm, 60, 2_000, 20 * 1000);
        let mut cold = compacted();
        run(&mut cold, 60, 2_000, 10 * MINUTE);
        assert!(cold.threshold(BOUNDS, PRICES) < warm.threshold(BOUNDS, PRICES));
        // An hour-long cache covers a ten-minute pause: nothing expired.
        let mut long = compacted();
        let mut at = 0;
        for request in 0..60 {
            at += 10 * MINUTE;
            long.request(Some(at), 20_000 + request * 2_000, CacheLifetime::Long);
        }
        assert_eq!(
            long.threshold(BOUNDS, PRICES),
            warm.threshold(BOUNDS, PRICES)
        );
    }

    #[test]
    fn a_compaction_teaches_what_it_leaves_and_its_drop_is_not_growth() {
        let mut learner = compacted();
        run(&mut learner, 40, 1_000, 20 * 1000);
        let before = learner.threshold(BOUNDS, PRICES);
        learner.compaction(30_000, 6_000);
        learner.request(Some(i64::MAX / 2), 30_000, CacheLifetime::Configured);
        assert_eq!(learner.growth(), (39_000, 39));
        // More left and a dearer summary: the next compaction waits longer.
        let later = learner.threshold(BOUNDS, PRICES);
        assert!(later > before, "{later} > {before}");
        // Growth is net: a cut that took 9,000 tokens off counts against the increases, and the
        // cut rewrote the 25,000 tokens its request carried: a token of context now costs more
        // than a read, so the compaction comes sooner.
        learner.request(Some(i64::MAX / 2 + 1000), 34_000, CacheLifetime::Configured);
        learner.request(Some(i64::MAX / 2 + 2000), 25_000, CacheLifetime::Configured);
        learner.request(Some(i64::MAX / 2 + 3000), 36_000, CacheLifetime::Configured);
        assert_eq!(learner.growth(), (45_000, 42));
        assert!(learner.threshold(BOUNDS, PRICES) < later);
        // A retry of the same request teaches nothing.
        let copy = learner.clone();
        learner.request(Some(i64::MAX / 2 + 3000), 36_000, CacheLifetime::Configured);
        assert_eq!(learner, copy);
    }
}
