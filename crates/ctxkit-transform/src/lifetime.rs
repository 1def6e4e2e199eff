//! Choosing the prompt cache's lifetime request by request (`longCacheWhenItPays`, off by default,
//! on in the recommended strategy: docs/simulator.md, fifth round).
//!
//! Anthropic's prompt cache keeps a prefix five minutes after it was last written or read for 1.25×
//! the input price per written token, or one hour for 2× (`"ttl": "1h"`); a read costs 0.1× either
//! way (platform.claude.com/docs/en/build-with-claude/prompt-caching, pricing page). A user who
//! comes back after six minutes finds the five-minute cache gone and the whole context is written
//! again; the hour-long one would have been read. Which pays depends on the user: the hour costs
//! 0.75× more on every written token, and saves 1.15× of the context at every pause longer than
//! five minutes and shorter than an hour.
//!
//! The rule learns the user from the session's own requests and decides request by request. A
//! request asked for the hour costs 0.75× more on what it writes (what it adds to the previous
//! request, or all of it when it is shorter, as after a compaction or a cut); it saves 1.15× the
//! context when a pause between five minutes and an hour follows it (the next request then reads
//! what the five-minute cache had lost). The chance of such a pause is the share of the session's
//! requests so far that such a pause followed, begun from a prior of one pause in a hundred
//! requests that weighs as much as a hundred requests seen ([`PRIOR_GAPS`], [`PRIOR_PAUSES`]). So
//! a request asks for the hour when that share × 1.15 × its context exceeds 0.75 × what it
//! writes: a user who answers within minutes pays for the hour only on requests that add less
//! than a sixty-fifth of the context, and on fewer as the session shows no pause;
//! one who comes back every quarter hour gets it on nearly every request; a user who pauses now
//! and then gets it on the requests that add little to a large context, never on one that writes
//! the context again. Until the tenth round the hour waited for two pauses seen: the first pauses
//! of every session, and every pause of a session that paused once or twice, found the cache
//! gone (docs/simulator.md, tenth round).
//! (Before, a hindsight rule switched the hour on for every later request once the pauses had paid
//! for the premium so far: it paid the premium on whole rewrites too, and made Codex rollouts and
//! sessions that paused once dearer; docs/simulator.md, third and fifth rounds.) Each request's
//! time is its last message's (the engine sends a request right after it), so a replayed session
//! and a live one decide alike.
//!
//! Token numbers are the chars/4 estimate of the view, as everywhere in the transforms.

/// The lifetime a request asks the provider's prompt cache for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheLifetime {
    /// The model's configured retention (Anthropic's default: five minutes).
    #[default]
    Configured,
    /// One hour (Anthropic's `"ttl": "1h"`), when the model caches at all.
    Long,
}

/// The five-minute cache's lifetime, in milliseconds.
pub const SHORT_CACHE_MS: i64 = 5 * 60 * 1000;
/// The hour-long cache's lifetime, in milliseconds.
pub const LONG_CACHE_MS: i64 = 60 * 60 * 1000;

/// The prior the session's own gaps are added to: one pause in a hundred requests, weighing as
/// much as a hundred requests seen (docs/simulator.md, tenth round: 1 in 20 and 1 in 50 saved less
/// on every set of real sessions, 1 in 200 as much).
const PRIOR_GAPS: u64 = 100;
const PRIOR_PAUSES: u64 = 1;

/// Anthropic's rates in hundredths of the input price: a five-minute write, an hour-long write,
/// a read.
const SHORT_WRITE: u64 = 125;
const LONG_WRITE: u64 = 200;
const READ: u64 = 10;

/// What the session's requests so far say about the hour-long cache.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LifetimeLearner {
    /// The previous request: when it was sent (ms) and its tokens.
    previous: Option<(i64, u64)>,
    /// Requests so far that a later request followed (the gaps seen).
    gaps: u64,
    /// Of those gaps, pauses between five minutes and an hour.
    pauses: u64,
    /// The previous request's choice (a request sent again gets it again).
    choice: CacheLifetime,
}

impl LifetimeLearner {
    /// A request of `tokens` about to be sent at `at` (ms; `None` when its messages carry no
    /// time): learns from the pause before it and returns the lifetime it should ask for. A
    /// request sent again unchanged (same time, same size) teaches nothing and gets the same
    /// answer; one without a time is taken to write all it holds.
    pub fn request(&mut self, at: Option<i64>, tokens: u64) -> CacheLifetime {
        let Some(at) = at else {
            return self.choice(tokens, tokens);
        };
        let written = match self.previous {
            Some((then, before)) if then == at && before == tokens => return self.choice,
            Some((then, before)) => {
                let gap = at.saturating_sub(then);
                self.gaps += 1;
                if gap > SHORT_CACHE_MS && gap <= LONG_CACHE_MS {
                    self.pauses += 1;
                }
                if tokens >= before {
                    tokens - before
                } else {
                    tokens
                }
            }
            None => tokens,
        };
        self.previous = Some((at, tokens));
        self.choice = self.choice(tokens, written);
        self.choice
    }

    /// The hour when the expected saving (the share of gaps that were pauses, with the prior, ×
    /// 1.15 × the context) exceeds the premium on what the request writes (0.75×).
    fn choice(&self, tokens: u64, written: u64) -> CacheLifetime {
        let pauses = self.pauses + PRIOR_PAUSES;
        let gaps = self.gaps + PRIOR_GAPS;
        let saving = u128::from(pauses) * u128::from(SHORT_WRITE - READ) * u128::from(tokens);
        let premium = u128::from(gaps) * u128::from(LONG_WRITE - SHORT_WRITE) * u128::from(written);
        if saving > premium {
            CacheLifetime::Long
        } else {
            CacheLifetime::Configured
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60 * 1000;

    #[test]
    fn a_user_who_answers_within_minutes_never_gets_the_hour() {
        let mut learner = LifetimeLearner::default();
        let mut at = 0;
        // Requests adding 2,000 tokens each to a context compacted back to 10,000 at 60,000:
        // one pause in a hundred (and fewer as none comes) × 1.15 × 60,000 stays under the
        // premium on 2,000 tokens (0.75 × 2,000 = 1,500).
        for request in 0..300u64 {
            at += 4 * MINUTE;
            let tokens = 10_000 + (request % 26) * 2_000;
            assert_eq!(
                learner.request(Some(at), tokens),
                CacheLifetime::Configured,
                "request {request}"
            );
        }
    }

    #[test]
    fn pauses_between_five_minutes_and_an_hour_switch_to_the_hour_once_they_pay() {
        let mut learner = LifetimeLearner::default();
        // A 40,000-token context, a few requests per prompt, then a quarter-hour pause.
        let mut at = 0;
        let mut tokens = 40_000;
        let mut choices = Vec::new();
        for _prompt in 0..6 {
            for _call in 0..3 {
                at += 10 * 1000;
                tokens += 1_000;
                choices.push(learner.request(Some(at), tokens));
            }
            at += 15 * MINUTE;
        }
        // The first prompt's requests keep the five minutes (the prior: one pause in a hundred ×
        // 1.15 × 42,000 = 483 against 0.75 × 1,000 = 750); from the first pause on (two in 103 ×
        // 1.15 × 44,000 = 983 > 750) the hour, and the later pauses find the cache.
        assert!(
            choices[..3]
                .iter()
                .all(|choice| *choice == CacheLifetime::Configured)
        );
        assert!(
            choices[3..]
                .iter()
                .all(|choice| *choice == CacheLifetime::Long)
        );
    }

    #[test]
    fn with_pauses_now_and_then_only_requests_that_write_little_ask_for_the_hour() {
        let mut learner = LifetimeLearner::default();
        let mut at = 0;
        let mut tokens = 30_000;
        let mut ask = |learner: &mut LifetimeLearner, pause: i64, grown: u64| {
            at += pause;
            tokens += grown;
            learner.request(Some(at), tokens)
        };
        // Ten prompts of ten requests each, a quarter-hour pause after every other prompt: one
        // gap in twenty is such a pause (5%).
        let mut small = Vec::new();
        for prompt in 0..10 {
            let pause = if prompt % 2 == 1 { 15 * MINUTE } else { MINUTE };
            small.push(ask(&mut learner, pause, 300));
            for _ in 0..9 {
                small.push(ask(&mut learner, 20 * 1000, 300));
            }
        }
        // From the second request on, one adding 300 tokens asks for the hour: before any pause
        // one pause in 101 × 1.15 × 30,600 = 348 > 0.75 × 300 = 225, and the pauses
        // (5%) keep it so; the first request writes all it holds and does not.
        assert_eq!(small[0], CacheLifetime::Configured);
        assert!(
            small[1..]
                .iter()
                .all(|choice| *choice == CacheLifetime::Long)
        );
        // One adding 5,000 tokens (a large tool result) does not (6 pauses in 200 × 1.15 × 65,000
        // = 2,243 < 0.75 × 5,000 = 3,750), nor one that writes the whole context again after a
        // compaction.
        assert_eq!(
            ask(&mut learner, 20 * 1000, 5_000),
            CacheLifetime::Configured
        );
        tokens = 12_000;
        assert_eq!(
            learner.request(Some(at + 20 * 1000), tokens),
            CacheLifetime::Configured
        );
        // The same request sent again gets the same answer.
        assert_eq!(
            learner.request(Some(at + 20 * 1000), tokens),
            CacheLifetime::Configured
        );
    }

    #[test]
    fn pauses_over_an_hour_count_against_the_hour() {
        let mut learner = LifetimeLearner::default();
        let mut at = 0;
        // Requests two hours apart, each adding 2,000 tokens: a gap over an hour is not a pause
        // the hour bridges, so the share falls from the prior's one in a hundred (1.15 × 54,000
        // / 101 = 615 against 0.75 × 2,000 = 1,500, and less from there).
        let mut tokens = 50_000;
        for _ in 0..20 {
            at += 2 * LONG_CACHE_MS;
            tokens += 2_000;
            assert_eq!(learner.request(Some(at), tokens), CacheLifetime::Configured);
        }
    }

    #[test]
    fn a_request_sent_again_or_without_a_time_teaches_nothing() {
        let mut learner = LifetimeLearner::default();
        learner.request(Some(0), 40_000);
        let before = learner.clone();
        learner.request(Some(0), 40_000);
        learner.request(None, 90_000);
        assert_eq!(learner, before);
    }
}
