//! Overflow recovery's plans. After a provider refused a request as too long, the compaction keeps
//! the most of the recent conversation it can while the context after it fits: its estimate (the
//! kept messages, the system prompt and tools) multiplied by the provider's over-count seen so far,
//! plus the room for the summary (already in the provider's tokens), must stay below the window
//! minus the reply's room. No summary is asked
//! for when no plan fits. Each compaction of a streak cuts later in the session than the one
//! before, so recovery cannot loop.

use ctxkit_compaction::{
    CompactionSettings, NoPlanReason, Preparation, estimate_overhead_tokens, prepare_compaction,
};
use ctxkit_protocol::{AgentMessage, AssistantMessage};
use ctxkit_session::{ContextMessageKind, EntryIndex};
use ctxkit_summarizer::ConversationPrefix;
use ctxkit_tokens::estimate_tokens;

use crate::error::{EngineError, Result};
use crate::planning::is_empty_span;
use crate::state::State;

/// The largest over-count believed: a provider reporting more is taken at this.
pub const MAX_OVER_COUNT: f64 = 4.0;

/// ctxkit's estimate of a model request the agent recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RequestEstimate {
    /// The whole request: messages, system prompt, tool schemas.
    pub(crate) total: u64,
    /// The part that is not messages (system prompt and tools): sent again after a compaction.
    pub(crate) overhead: u64,
}

impl RequestEstimate {
    pub(crate) fn of(prefix: &ConversationPrefix) -> Self {
        let messages: u64 = prefix.messages.iter().map(estimate_tokens).sum();
        let overhead = estimate_overhead_tokens(prefix);
        Self {
            total: messages + overhead,
            overhead,
        }
    }
}

/// A successful reply to the recorded request: its usage is what the provider counted, and a
/// request of that size is one the provider accepts. Requests under [`teaching_floor`] teach no
/// ratio: in them the provider's framing of each message weighs more than it does in the large
/// requests recovery plans for.
pub(crate) fn learn_from_reply(state: &mut State, reply: &AssistantMessage) {
    let counted = reply
        .usage
        .as_ref()
        .map_or(0, ctxkit_protocol::Usage::context_tokens);
    state.accepted_max = state.accepted_max.max(counted);
    let Some(request) = state.last_request_estimate.take() else {
        return;
    };
    // What the provider counted of the request itself: its count without the reply's output,
    // which the estimate never held (a long reply is not an under-estimate of the request).
    let request_counted =
        counted.saturating_sub(reply.usage.as_ref().map_or(0, |usage| usage.output));
    learn_over_count(state, request_counted, request.total);
}

/// The smallest request (ctxkit's estimate) whose count teaches the over-count: an eighth of the
/// window, or with `compaction.thresholdTokens` set, the threshold over [`MAX_OVER_COUNT`] when
/// that is less. A provider counting three times the estimate reaches a 60,000 threshold at about
/// 20,000 estimated tokens, so with the window's eighth alone (25,000 of 200,000) a session
/// compacted there never learned the over-count the threshold's spacing (`compact::spacing`)
/// needs, and compacted every few calls (docs/simulator.md, twentieth round).
fn teaching_floor(state: &State) -> u64 {
    let eighth = state.context_window() / 8;
    match state.compaction_config().threshold_tokens {
        0 => eighth,
        threshold => eighth.min((threshold as f64 / MAX_OVER_COUNT) as u64),
    }
}

/// A refused request: when what the provider would have counted for it (its own count when the
/// error states one, else ctxkit's estimate of the recorded request, or of the transcript, times
/// the over-count) is under the window, the provider's real limit is below the window, and
/// recovery plans for the largest request it accepted. A stated count also teaches the over-count,
/// as a reply's usage does. A refusal stating a limit at the window (Anthropic's `12021 + 4096 >
/// 16000`: the input and the reply's room together went over) says the limit is the window: no
/// limit below it is inferred (QA r107: a Chinese chat's refusal was read as a limit below the
/// window, recovery aimed at the largest request accepted and found no plan that fit).
pub(crate) fn learn_from_overflow(state: &mut State, error_text: Option<&str>) -> Result<()> {
    // What this refusal counted, for a message that gives up (an earlier refusal's count is not
    // this request's).
    state.refused_count = error_text.and_then(ctxkit_overflow::stated_count);
    let window = state.context_window();
    let request = state.last_request_estimate.take();
    if let (Some(counted), Some(request)) = (state.refused_count, request) {
        learn_over_count(state, counted, request.total);
    }
    if window == 0 {
        return Ok(());
    }
    let stated_limit = error_text.and_then(ctxkit_overflow::stated_limit);
    // Most providers state their limit: plan with it from now on.
    if let Some(limit) = stated_limit.filter(|limit| *limit < window) {
        tracing::debug!(
            limit,
            window,
            "the provider stated a limit below the window"
        );
        state.limit_tokens = Some(state.limit_tokens.map_or(limit, |known| known.min(limit)));
        state.limit_below_window = true;
        return Ok(());
    }
    if stated_limit.is_some() {
        return Ok(());
    }
    let counted = match (state.refused_count, request) {
        (Some(counted), _) => counted,
        (None, Some(request)) => (request.total as f64 * state.over_count) as u64,
        (None, None) => (Measure::of(state)?.sent_tokens(0) as f64 * state.over_count) as u64,
    };
    if counted < window && !state.limit_below_window {
        tracing::debug!(
            counted,
            window,
            accepted_max = state.accepted_max,
            "the provider refused a request under the window"
        );
        // No limit stated: the threshold plans with the largest request accepted, at least half
        // the window (`State::threshold_limit`), as recovery's own target does (`fit_target`).
        state.limit_below_window = true;
    }
    Ok(())
}

/// Raises the over-count to what the provider `counted` of a request ctxkit estimated at
/// `estimated`, when that request is large enough to teach one ([`teaching_floor`]).
fn learn_over_count(state: &mut State, counted: u64, estimated: u64) {
    if counted == 0 || estimated == 0 || estimated < teaching_floor(state) {
        return;
    }
    let ratio = (counted as f64 / estimated as f64).min(MAX_OVER_COUNT);
    if ratio > state.over_count {
        tracing::debug!(
            over_count = ratio,
            counted,
            estimated,
            "the provider counts more than ctxkit's estimate"
        );
        state.over_count = ratio;
    }
}

/// The provider refused again a request no larger than recovery plans for: a compaction of the
/// streak already aimed under the limit the provider showed (a refusal under the window, or a
/// limit it stated), and the retry, by ctxkit's estimate times the over-count, was within that
/// aim. Another compaction would aim at the same size and be refused the same way, each a paid
/// summary: the provider's real limit is smaller than the window ctxkit plans with.
pub(crate) fn refused_within_plan(state: &State) -> Option<u64> {
    if state.overflow_attempts == 0 || !state.limit_below_window {
        return None;
    }
    let request = state.last_request_estimate?;
    let target = fit_target(state)?;
    let counted = (request.total as f64 * state.over_count) as u64;
    (counted <= target).then_some(counted)
}

/// The estimate of each context message, where its entry is, and whether it is sent to the model
/// (error and aborted replies are not).
struct Measured {
    entry: EntryIndex,
    tokens: u64,
    sent: bool,
    /// Replaced by the new summary: the previous compaction's summary and system message.
    replaced: bool,
    user: bool,
    calls_tools: bool,
}

struct Measure(Vec<Measured>);

impl Measure {
    fn of(state: &State) -> Result<Self> {
        let session = &state.session;
        let context = session.build_context();
        let messages = session.messages(&context.messages)?;
        let measured = context
            .messages
            .iter()
            .zip(&messages)
            .map(|(place, message)| {
                let reply = message.as_assistant();
                Measured {
                    entry: place.entry,
                    tokens: estimate_tokens(message),
                    sent: !reply.is_some_and(AssistantMessage::is_aborted_or_error),
                    replaced: match place.kind {
                        ContextMessageKind::CompactionSummary
                        | ContextMessageKind::CompactionSystem => true,
                        ContextMessageKind::Stored
                        | ContextMessageKind::Custom
                        | ContextMessageKind::BranchSummary => false,
                    },
                    user: matches!(message, AgentMessage::User(_)),
                    calls_tools: reply.is_some_and(|reply| {
                        !reply.is_aborted_or_error()
                            && reply
                                .content
                                .iter()
                                .any(|block| block.as_tool_call().is_some())
                    }),
                }
            })
            .collect();
        Ok(Self(measured))
    }

    /// Estimated tokens of the messages sent from the message at `from` on.
    fn sent_tokens(&self, from: usize) -> u64 {
        self.0[from.min(self.0.len())..]
            .iter()
            .filter(|message| message.sent && !message.replaced)
            .map(|message| message.tokens)
            .sum()
    }

    /// Estimated tokens of every message from `from` on, as the cut-point walk counts them.
    fn all_tokens(&self, from: usize) -> u64 {
        self.0[from.min(self.0.len())..]
            .iter()
            .map(|message| message.tokens)
            .sum()
    }

    /// The current turn: from the last user message on.
    fn turn_start(&self) -> usize {
        self.0.iter().rposition(|message| message.user).unwrap_or(0)
    }

    /// The last tool batch: from the last reply that called tools on.
    fn last_batch_start(&self) -> Option<usize> {
        self.0.iter().rposition(|message| message.calls_tools)
    }

    /// What a plan keeping from `first_kept` leaves of today's messages.
    fn kept_tokens(&self, first_kept: EntryIndex) -> u64 {
        self.0
            .iter()
            .filter(|message| message.entry >= first_kept && message.sent && !message.replaced)
            .map(|message| message.tokens)
            .sum()
    }
}

/// The keep budgets tried, largest first: the whole current turn, `keepRecentTokens`, the turn's
/// last tool batch (its call and results), then halvings of `keepRecentTokens` down to one token.
fn budgets(keep: u64, measure: &Measure) -> Vec<u64> {
    let turn = measure.all_tokens(measure.turn_start());
    let mut budgets = vec![turn.max(keep), keep];
    if let Some(start) = measure.last_batch_start() {
        budgets.push(measure.all_tokens(start));
    }
    let mut halved = keep / 2;
    while halved > 0 {
        budgets.push(halved);
        halved /= 2;
    }
    budgets.push(1);
    budgets.retain(|budget| *budget > 0);
    budgets.sort_unstable_by(|left, right| right.cmp(left));
    budgets.dedup();
    budgets
}

/// The plan of a compaction keeping `budget` recent tokens, if it summarizes anything.
fn plan_keeping(
    state: &State,
    planning: CompactionSettings,
    budget: u64,
) -> Result<Option<Preparation>> {
    let settings = CompactionSettings {
        keep_recent_tokens: budget,
        ..planning
    };
    Ok(match prepare_compaction(&state.session, None, settings)? {
        Ok(plan) if !is_empty_span(&plan) => Some(plan),
        Ok(_)
        | Err(
            NoPlanReason::AlreadyCompacted
            | NoPlanReason::NothingToCompact
            | NoPlanReason::NothingToSummarize,
        ) => None,
    })
}

/// Room for the summary a plan will write (history, and the turn prefix of a split turn), in the
/// summary requests' own output limits, sized by the window's own reserve (`window_reserve`):
/// with `compaction.thresholdTokens` the plan's reserve is the window less the threshold (140,000
/// of 200,000 at the defaults' 60,000), and room for a summary that long left no plan that fits
/// once the provider counted three times the estimate (docs/simulator.md, twenty-sixth round).
fn summary_allowance(plan: &Preparation, reserve: u64, window: u64) -> u64 {
    let history = reserve * 4 / 5;
    let allowance = if plan.is_split_turn {
        history + reserve / 2
    } else {
        history
    };
    // A reserve near the window (the default 16,384 in a small window) would leave no plan that
    // fits; a summary is never expected to take more than a quarter of the window.
    if window == 0 {
        allowance
    } else {
        allowance.min(window / 4)
    }
}

/// What the provider will count of the context after a compaction: ctxkit's estimate of the kept
/// messages with the system prompt and tools (`estimated`), times the over-count, plus the
/// summary's room (`summary`), which is the summary requests' output limit, already in the
/// provider's tokens: scaled too, a Chinese chat's over-count of 2.8 made a 2,400-token summary
/// weigh 6,700 and refused a compaction that fit (QA r107).
fn after_compaction_counted(estimated: u64, summary: u64, over_count: f64) -> u64 {
    (estimated as f64 * over_count.max(1.0)).ceil() as u64 + summary
}

/// What the context after a compaction may hold, in provider tokens: the window in force (the
/// provider's stated limit, when it gave one below the model's window) minus the reply's room (the
/// window's own reserve, at most a quarter of the window); once the provider refused a request
/// under the window without stating its limit, no more than the largest request it accepted (but
/// at least half of that). A stated limit is planned with as it is: capped by the largest request
/// accepted, a turn of small requests refused at its first large one left no plan that fits.
/// `None` when the window is unknown.
fn fit_target(state: &State) -> Option<u64> {
    let window = state.context_window();
    if window == 0 {
        return None;
    }
    let window = state.limit_window();
    let room = state
        .window_reserve()
        .min(window / 4)
        .max(state.output_reserve());
    let target = ctxkit_tokens::compaction_threshold(window, room);
    Some(
        if state.limit_below_window && state.limit_tokens.is_none() {
            target.min(state.accepted_max.max(target / 2))
        } else {
            target
        },
    )
}

/// The plan of the next overflow compaction of a streak, and where it cuts: the largest keep whose
/// context after the compaction fits (see the module comment) and that cuts later than the
/// streak's previous one. `OverflowUnrecoverable` when none fits: no summary is worth asking for.
pub(crate) fn overflow_plan(state: &State) -> Result<(Preparation, EntryIndex)> {
    let planning = state.planning();
    let measure = Measure::of(state)?;
    let target = fit_target(state);
    let overhead = state.request_overhead;
    let reserve = state.window_reserve();
    let mut smallest = None;
    for budget in budgets(planning.keep_recent_tokens, &measure) {
        let Some(plan) = plan_keeping(state, planning, budget)? else {
            continue;
        };
        let Some(first_kept) = state.session.index().position(&plan.first_kept_entry_id) else {
            continue;
        };
        if state
            .overflow_cut
            .is_some_and(|previous| first_kept <= previous)
        {
            continue;
        }
        let kept = measure.kept_tokens(first_kept);
        let summary = summary_allowance(&plan, reserve, state.limit_window());
        let after = kept + summary + overhead;
        let counted = after_compaction_counted(kept + overhead, summary, state.over_count);
        tracing::debug!(
            budget,
            kept,
            after,
            counted,
            target,
            over_count = state.over_count,
            "overflow plan"
        );
        match target {
            Some(target) if counted > target => {
                smallest = Some(smallest.map_or(counted, |smallest: u64| smallest.min(counted)));
            }
            Some(_) | None => return Ok((plan, first_kept)),
        }
    }
    Err(EngineError::OverflowUnrecoverable {
        turn_tokens: measure.sent_tokens(measure.turn_start()),
        after_compaction: smallest,
        context_window: state.limit_window(),
        configured_window: state.context_window(),
        provider_counted: state.refused_count,
    })
}
