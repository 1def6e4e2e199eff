//! What a real session's provider counted against ctxkit's estimate: the evidence of its tokenizer
//! that the replay bills the engine with (`replay`), so the engine learns the over-count as it does
//! behind the real agent (`ctxkit_engine`'s `learn_from_reply`).
//!
//! A reply's recorded usage is the provider's count of the request that got it (its input, cache
//! reads and writes; the output is the reply's own). ctxkit's estimate of that request is the
//! chars/4 estimate of every message before the call. The provider's count also holds the source
//! agent's system prompt and tool schemas, which no session records; they are the same on every
//! request, so the ratio is taken on growth: between two consecutive calls that both recorded
//! usage, what the provider's count grew by over what ctxkit's estimate grew by, summed over the
//! session. A pair whose count shrank (the source compacted or cleared old tool results) shows
//! nothing of the tokenizer and is left out. A session whose counts never grow while its requests
//! do (usage made up, or recorded once) shows nothing at all: it has no ratio, and replays on
//! ctxkit's estimate as before. Nor does a ratio above the largest over-count the engine believes
//! (`ctxkit_engine::MAX_OVER_COUNT`): usage that grows that much faster than the transcript counts
//! more than this transcript (another agent's accounting, made-up usage); it is reported, not used.

use ctxkit_protocol::{AgentMessage, AssistantMessage};
use ctxkit_tokens::estimate_tokens;
use serde::Serialize;

use crate::trace::Trace;

/// What a session's recorded usage shows of its provider's count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProviderCount {
    /// Provider tokens per token of ctxkit's estimate: `counted_growth / estimated_growth`.
    pub ratio: f64,
    /// Whether the replay uses it: at most the engine's largest believed over-count.
    pub believed: bool,
    /// Pairs of consecutive calls whose recorded counts grew (or stayed).
    pub pairs: usize,
    /// What the provider's count grew by over those pairs.
    pub counted_growth: u64,
    /// What ctxkit's estimate of the same requests grew by.
    pub estimated_growth: u64,
    /// Every request with recorded usage, whole: the provider's counts over ctxkit's estimates of
    /// their messages. Above `ratio` by the source's system prompt and tools (not recorded).
    pub whole_request_ratio: f64,
}

/// What the provider counted of the request that got `reply`: its recorded usage without the
/// reply's output; `None` when nothing was recorded.
fn request_count(reply: &AssistantMessage) -> Option<u64> {
    let usage = reply.usage.as_ref()?;
    Some(usage.context_tokens().saturating_sub(usage.output)).filter(|count| *count > 0)
}

/// Sums of the evidence, call by call.
#[derive(Default)]
struct Evidence {
    pairs: usize,
    counted_growth: u64,
    estimated_growth: u64,
    counted_total: u64,
    estimated_total: u64,
    /// The previous call's recorded count and estimate, when it recorded usage.
    previous: Option<(u64, u64)>,
}

impl Evidence {
    /// A call whose request ctxkit estimates at `estimated` and the provider counted at `counted`.
    fn call(&mut self, counted: Option<u64>, estimated: u64) {
        if let (Some(counted), Some((previous_counted, previous_estimated))) =
            (counted, self.previous)
            && counted >= previous_counted
            && estimated > previous_estimated
        {
            self.pairs += 1;
            self.counted_growth += counted - previous_counted;
            self.estimated_growth += estimated - previous_estimated;
        }
        if let Some(counted) = counted {
            self.counted_total += counted;
            self.estimated_total += estimated;
        }
        self.previous = counted.map(|counted| (counted, estimated));
    }
}

impl ProviderCount {
    /// The evidence of `trace`'s recorded usage; `None` when its counts never grew with its
    /// requests (a generated trace, a session without usage).
    pub(crate) fn of(trace: &Trace) -> Option<Self> {
        let mut evidence = Evidence::default();
        let mut estimated: u64 = 0;
        for task in &trace.tasks {
            estimated += task.prompt.iter().map(estimate_tokens).sum::<u64>();
            for call in &task.calls {
                evidence.call(request_count(&call.reply), estimated);
                estimated += estimate_tokens(&AgentMessage::Assistant(call.reply.clone()));
                estimated += call.results.iter().map(estimate_tokens).sum::<u64>();
            }
        }
        let ratio = evidence.counted_growth as f64 / evidence.estimated_growth.max(1) as f64;
        (evidence.counted_growth > 0 && evidence.estimated_growth > 0).then(|| Self {
            ratio,
            believed: ratio <= ctxkit_engine::MAX_OVER_COUNT,
            pairs: evidence.pairs,
            counted_growth: evidence.counted_growth,
            estimated_growth: evidence.estimated_growth,
            whole_request_ratio: evidence.counted_total as f64
                / evidence.estimated_total.max(1) as f64,
        })
    }

    /// The ratio the replay bills the engine with: `ratio` when believed.
    pub(crate) fn used_ratio(count: Option<Self>) -> Option<f64> {
        count
            .filter(|count| count.believed)
            .map(|count| count.ratio)
    }

    /// The provider's count of a request ctxkit estimates at `estimated` tokens.
    pub(crate) fn counted(ratio: Option<f64>, estimated: u64) -> u64 {
        match ratio {
            Some(ratio) => (estimated as f64 * ratio).ceil() as u64,
            None => estimated,
        }
    }
}
