//! Choosing the prompt cache's lifetime request by request (`longCacheWhenItPays`, off by default
//! and in the recommended strategy: docs/simulator.md, third round).
//!
//! Anthropic's prompt cache keeps a prefix five minutes after it was last written or read for 1.25×
//! the input price per written token, or one hour for 2× (`"ttl": "1h"`); a read costs 0.1× either
//! way (platform.claude.com/docs/en/build-with-claude/prompt-caching, pricing page). A user who
//! comes back after six minutes finds the five-minute cache gone and the whole context is written
//! again; the hour-long one would have been read. Which pays depends on the user: the hour costs
//! 0.75× more on every written token, and saves 1.15× of the context at every pause longer than
//! five minutes and shorter than an hour.
//!
//! The rule learns it from the session's own requests, in hindsight: it keeps what the hour would
//! have cost more (0.75× the tokens each request wrote: what it added to the previous request, or
//! all of it when the request is shorter, as after a compaction or a cut; and 0.75× the context
//! rewritten after a pause over an hour) and what it would have saved (1.15× the context carried
//! over each pause between five minutes and an hour), and asks for the hour once the session
//! has paused that way at least twice and the savings exceed the extra cost. A session whose user answers within minutes never pays for the hour; one
//! whose user comes back every quarter hour gets it after the first pauses. Each request's time is
//! its last message's (the engine sends a request right after it), so a replayed session and a
//! live one decide alike.
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

/// Pauses the session must have shown before the hour is asked for: one pause says little about
/// the next (a user's lunch break), several say how the user works.
const MIN_PAUSES: u32 = 2;

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
    /// What the hour-long cache would have saved so far, in hundredths of input tokens.
    saved: u64,
    /// What it would have cost more so far, in the same unit.
    premium: u64,
    /// Pauses so far between five minutes and an hour.
    pauses: u32,
}

impl LifetimeLearner {
    /// A request of `tokens` about to be sent at `at` (ms; `None` when its messages carry no
    /// time): learns from the pause before it and what it writes, and returns the lifetime it
    /// should ask for. A request sent again unchanged (same time, same size) teaches nothing.
    pub fn request(&mut self, at: Option<i64>, tokens: u64) -> CacheLifetime {
        let Some(at) = at else {
            return self.choice();
        };
        match self.previous {
            Some((then, before)) if then == at && before == tokens => return self.choice(),
            Some((then, before)) => {
                let carried = before.min(tokens);
                let gap = at.saturating_sub(then);
                if gap > SHORT_CACHE_MS && gap <= LONG_CACHE_MS {
                    self.saved += carried * (SHORT_WRITE - READ);
                    self.pauses += 1;
                } else if gap > LONG_CACHE_MS {
                    self.premium += carried * (LONG_WRITE - SHORT_WRITE);
                }
                let written = if tokens >= before {
                    tokens - before
                } else {
                    tokens
                };
                self.premium += written * (LONG_WRITE - SHORT_WRITE);
            }
            None => self.premium += tokens * (LONG_WRITE - SHORT_WRITE),
        }
        self.previous = Some((at, tokens));
        self.choice()
    }

    fn choice(&self) -> CacheLifetime {
        if self.pauses >= MIN_PAUSES && self.saved > self.premium {
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
        for request in 0..200u64 {
            at += 4 * MINUTE;
            assert_eq!(
                learner.request(Some(at), 10_000 + request * 500),
                CacheLifetime::Configured
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
        // The first prompt's requests pay the hour's premium on 43,000 tokens; the first pause
        // saves 1.15 × 43,000 against 0.75 × (43,000 + 1,000), the second as much again: the
        // hour from the second pause on.
        assert!(
            choices[..6]
                .iter()
                .all(|choice| *choice == CacheLifetime::Configured)
        );
        assert!(
            choices[6..]
                .iter()
                .all(|choice| *choice == CacheLifetime::Long)
        );
    }

    #[test]
    fn pauses_over_an_hour_count_against_the_hour() {
        let mut learner = LifetimeLearner::default();
        let mut at = 0;
        for _ in 0..20 {
            at += 2 * LONG_CACHE_MS;
            assert_eq!(learner.request(Some(at), 50_000), CacheLifetime::Configured);
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
