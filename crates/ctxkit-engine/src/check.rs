//! The compaction checks of the reference (after an agent run, before a prompt, and after each tool
//! batch of a run, before the next model call), as a pure decision over the model's transcript. The
//! engine acts on the decision.

use std::borrow::Borrow;

use ctxkit_protocol::{AgentMessage, AssistantMessage};
use ctxkit_tokens::{estimate_context_tokens, should_compact};

/// The model the conversation runs on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelInfo {
    pub provider: String,
    pub id: String,
    /// Tokens the model accepts; 0 when unknown.
    pub context_window: u64,
    /// What its prompt cache charges (from its prices), for the transform settings that leave
    /// the cache's terms out; `None` when unknown (Anthropic's terms then).
    #[serde(skip)]
    pub cache: Option<ctxkit_models::CacheTerms>,
}

impl ModelInfo {
    fn wrote(&self, message: &AssistantMessage) -> bool {
        message.provider.as_deref() == Some(self.provider.as_str())
            && message.model.as_deref() == Some(self.id.as_str())
    }
}

/// Whether `reply` says the context of `model` overflowed: the one judge of overflow, for the
/// checks here and for the agent loop's report of each reply. A reply another model wrote never
/// counts (its window is not this one's).
pub fn overflowed(reply: &AssistantMessage, model: &ModelInfo) -> bool {
    model.wrote(reply) && ctxkit_overflow::is_context_overflow(reply, Some(model.context_window))
}

/// Which check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// After an agent run: aborted replies are skipped.
    AfterRun,
    /// Before a prompt: the last reply counts even when aborted.
    BeforePrompt,
    /// Inside a run, after a tool batch's results are appended and before the next model call
    /// (Pi 1.6's check in `prepareNextTurn`): the projected context (the last fresh usage plus
    /// estimates of what came after) against the threshold; never an overflow.
    AfterToolBatch,
}

/// What the check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Nothing to do, and why.
    Skip(SkipReason),
    /// The reply overflowed the window again after one recovery: report, do not compact.
    RecoveryExhausted,
    /// The reply overflowed the window: compact, then retry the turn.
    Overflow,
    /// The context is over window − reserve: compact, no retry.
    Threshold { tokens: u64 },
}

/// Why the check did nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    Disabled,
    NoReply,
    Aborted,
    /// The reply predates the latest compaction, so its usage or error is stale.
    Stale,
    /// The window is unknown (0): there is no threshold (the reference compacts after every turn).
    UnknownWindow,
    /// An error reply with no successful reply to measure from, or only a pre-compaction one.
    NoUsage,
    UnderThreshold,
    /// Over the threshold, but everything since the last compaction fits in the keep budget.
    NothingToCompact,
    /// Before a prompt: the last reply overflowed and was handled when it happened (compacted and
    /// retried, or reported).
    OverflowHandled,
}

/// Inputs of one check. The transcript holds messages or anything borrowing one (the engine passes
/// the shared messages of its cache).
#[derive(Debug)]
pub struct CheckInput<'a, M = AgentMessage> {
    pub trigger: Trigger,
    pub enabled: bool,
    /// Tokens kept free below the limit: the compaction reserve, at least the output room a
    /// request needs (`ctxkit_overflow::output_room`).
    pub reserve_tokens: u64,
    /// The provider's real limit when it stated or showed one below the model's window.
    pub limit_tokens: Option<u64>,
    /// What the provider counts per token ctxkit estimates (1.0 until a reply shows more): the
    /// estimated part of a projection is scaled by it.
    pub over_count: f64,
    pub model: Option<&'a ModelInfo>,
    /// The transcript (the model's messages on the branch, before transforms).
    pub transcript: &'a [M],
    /// Epoch ms of the latest compaction on the branch.
    pub latest_compaction_ms: Option<i64>,
    /// The index of the first transcript message written after the latest compaction, when the
    /// caller knows it (the engine does): messages before it are stale. Decided by position, a reply
    /// written in the same millisecond as the compaction is not mistaken for a stale one; `None`
    /// falls back to the reference's timestamps.
    pub fresh_from: Option<usize>,
    /// Overflow recovery already ran once since the last user message or successful reply.
    pub overflow_recovery_attempted: bool,
    /// Before a prompt that comes after the prompt cache expired: the lower threshold
    /// (`compaction.idleThresholdTokens`) the context is measured against as well.
    pub idle_threshold_tokens: Option<u64>,
    /// How many messages the context holds (the session's count, known without reading one):
    /// see [`decide_by_length`].
    pub context_messages: usize,
    /// The next request as the engine projects it from the last counted request and the model's
    /// views (`Engine::projected_input_tokens`: the provider's count of the last request plus the
    /// estimated change of the view since, the transforms' cuts subtracted). The threshold is
    /// measured on it when known; `None` falls back to the reference's measure (the last reply's
    /// usage, after a tool batch plus estimates of what came after it).
    pub projected_tokens: Option<u64>,
}

impl<M> Clone for CheckInput<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for CheckInput<'_, M> {}

fn last_assistant<M: Borrow<AgentMessage>>(transcript: &[M]) -> Option<(usize, &AssistantMessage)> {
    transcript
        .iter()
        .enumerate()
        .rev()
        .find_map(|(index, message)| Some((index, message.borrow().as_assistant()?)))
}

fn is_stale(timestamp: Option<i64>, latest_compaction_ms: Option<i64>) -> bool {
    matches!((timestamp, latest_compaction_ms), (Some(at), Some(compacted)) if at <= compacted)
}

impl<M> CheckInput<'_, M> {
    /// The window the threshold is measured against: the model's, or the provider's real limit
    /// when that is lower.
    fn limit(&self, window: u64) -> u64 {
        self.limit_tokens
            .filter(|limit| *limit > 0)
            .map_or(window, |limit| limit.min(window))
    }

    /// An estimate in the provider's count: scaled by the over-count seen so far.
    fn scaled(&self, estimated: u64) -> u64 {
        if self.over_count > 1.0 {
            (estimated as f64 * self.over_count).ceil() as u64
        } else {
            estimated
        }
    }

    /// Whether the transcript message at `index` (with `timestamp`) predates the latest compaction.
    fn stale(&self, index: usize, timestamp: Option<i64>) -> bool {
        match self.fresh_from {
            Some(fresh_from) => index < fresh_from,
            None => is_stale(timestamp, self.latest_compaction_ms),
        }
    }
}

/// The part of the check that reads no message but the last reply: a context of more messages than
/// the threshold has tokens is over the threshold whatever they say, since every message costs a
/// provider at least one token of framing (its role; three or four in OpenAI's and Anthropic's
/// formats). The reference has no such rule: without a reply's usage it counts 0 before a prompt,
/// so a long session without usage (an import, a generated one) was read whole into a view and
/// compacted only when the request was measured. Normal sessions never reach it (a 200k window's
/// threshold is 183,616 messages). It leaves the decision to the reference's rules when `last_reply`
/// (the transcript's last assistant message) overflowed, so recovery compacts and retries as
/// before, and when the threshold is not positive (a reserve as large as the window: every context
/// is over it, and the reference's rules decide). Reads `context_messages` and the budgets, never
/// `transcript`: the engine asks it before reading the transcript. `tokens` is then the message
/// count, a lower bound.
pub fn decide_by_length<M>(
    input: &CheckInput<'_, M>,
    last_reply: Option<&AssistantMessage>,
) -> Option<Decision> {
    let model = input.model?;
    if !input.enabled || model.context_window == 0 {
        return None;
    }
    if last_reply.is_some_and(|reply| overflowed(reply, model)) {
        return None;
    }
    let threshold =
        i128::from(input.limit(model.context_window)) - i128::from(input.reserve_tokens);
    let messages = u64::try_from(input.context_messages).unwrap_or(u64::MAX);
    (threshold > 0 && i128::from(messages) > threshold)
        .then_some(Decision::Threshold { tokens: messages })
}

/// The reference's decision procedure, with its window-0 quirk fixed, after the length rule
/// ([`decide_by_length`]).
pub fn decide<M: Borrow<AgentMessage>>(input: &CheckInput<'_, M>) -> Decision {
    if !input.enabled {
        return Decision::Skip(SkipReason::Disabled);
    }
    let last_reply = last_assistant(input.transcript).map(|(_, reply)| reply);
    if let Some(decision) = decide_by_length(input, last_reply) {
        return decision;
    }
    if input.trigger == Trigger::AfterToolBatch {
        return decide_projected(input);
    }
    let Some((index, message)) = last_assistant(input.transcript) else {
        return Decision::Skip(SkipReason::NoReply);
    };
    let stop_reason = message.stop_reason.as_deref();
    if input.trigger == Trigger::AfterRun && stop_reason == Some("aborted") {
        return Decision::Skip(SkipReason::Aborted);
    }
    let window = input.model.map_or(0, |model| model.context_window);
    if input.stale(index, message.timestamp) {
        return Decision::Skip(SkipReason::Stale);
    }
    if input.model.is_some_and(|model| overflowed(message, model)) {
        return if input.overflow_recovery_attempted {
            Decision::RecoveryExhausted
        } else {
            Decision::Overflow
        };
    }
    if window == 0 {
        return Decision::Skip(SkipReason::UnknownWindow);
    }
    let window = input.limit(window);
    let tokens = if let Some(projected) = input.projected_tokens {
        projected
    } else if stop_reason == Some("error") {
        let estimate = estimate_context_tokens(input.transcript);
        let Some(anchor) = estimate.last_usage_index else {
            return Decision::Skip(SkipReason::NoUsage);
        };
        let anchor_timestamp = input
            .transcript
            .get(anchor)
            .and_then(|message| message.borrow().timestamp());
        if input.stale(anchor, anchor_timestamp) {
            return Decision::Skip(SkipReason::NoUsage);
        }
        estimate.usage_tokens + input.scaled(estimate.trailing_tokens)
    } else {
        message
            .usage
            .as_ref()
            .map_or(0, ctxkit_protocol::Usage::context_tokens)
    };
    let idle = input.trigger == Trigger::BeforePrompt
        && input
            .idle_threshold_tokens
            .is_some_and(|threshold| tokens > threshold);
    if idle || should_compact(tokens, window, input.reserve_tokens, true) {
        Decision::Threshold { tokens }
    } else {
        Decision::Skip(SkipReason::UnderThreshold)
    }
}

/// The check between two model calls of one run: the reply before the tool batch was a success
/// (the loop only runs tools after one), so only the threshold applies, measured on the projected
/// context as Pi 1.6's `estimateProjectedContextTokens` does: the last valid usage plus estimates of
/// every message after it, or the estimate of the whole transcript when that usage predates the
/// latest compaction.
fn decide_projected<M: Borrow<AgentMessage>>(input: &CheckInput<'_, M>) -> Decision {
    if last_assistant(input.transcript).is_none() {
        return Decision::Skip(SkipReason::NoReply);
    }
    let window = input.model.map_or(0, |model| model.context_window);
    if window == 0 {
        return Decision::Skip(SkipReason::UnknownWindow);
    }
    let window = input.limit(window);
    let tokens = projected_tokens(input);
    if should_compact(tokens, window, input.reserve_tokens, true) {
        Decision::Threshold { tokens }
    } else {
        Decision::Skip(SkipReason::UnderThreshold)
    }
}

/// The projected context of the transcript (see [`decide_projected`]): the engine's projection
/// when known, else the reference's.
fn projected_tokens<M: Borrow<AgentMessage>>(input: &CheckInput<'_, M>) -> u64 {
    if let Some(projected) = input.projected_tokens {
        return projected;
    }
    let estimate = estimate_context_tokens(input.transcript);
    let fresh_anchor = estimate.last_usage_index.is_some_and(|anchor| {
        let timestamp = input
            .transcript
            .get(anchor)
            .and_then(|message| message.borrow().timestamp());
        !input.stale(anchor, timestamp)
    });
    if fresh_anchor {
        estimate.usage_tokens + input.scaled(estimate.trailing_tokens)
    } else {
        input.scaled(
            input
                .transcript
                .iter()
                .map(|message| ctxkit_tokens::estimate_tokens(message.borrow()))
                .sum(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(input: u64) -> AgentMessage {
        serde_json::from_value(json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "m", "stopReason": "stop",
            "usage": {"input": input, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + 10},
            "timestamp": 1}))
        .unwrap()
    }

    fn input<'a>(
        transcript: &'a [AgentMessage],
        model: &'a ModelInfo,
        trigger: Trigger,
        idle: Option<u64>,
    ) -> CheckInput<'a> {
        CheckInput {
            trigger,
            enabled: true,
            reserve_tokens: 16_384,
            limit_tokens: None,
            over_count: 1.0,
            model: Some(model),
            transcript,
            latest_compaction_ms: None,
            fresh_from: None,
            overflow_recovery_attempted: false,
            idle_threshold_tokens: idle,
            context_messages: transcript.len(),
            projected_tokens: None,
        }
    }

    #[test]
    fn a_prompt_after_the_cache_expired_compacts_from_the_idle_threshold() {
        let model = ModelInfo {
            provider: "anthropic".into(),
            id: "m".into(),
            context_window: 200_000,
            cache: None,
        };
        let transcript = [
            AgentMessage::User(
                serde_json::from_value(json!({"role": "user", "content": "go", "timestamp": 0}))
                    .unwrap(),
            ),
            reply(25_000),
        ];
        let prompt = |idle| decide(&input(&transcript, &model, Trigger::BeforePrompt, idle));
        // Under the window's threshold: nothing, unless the cache expired and 25,010 > 20,000
        // (the context is the reply's input and output).
        assert_eq!(prompt(None), Decision::Skip(SkipReason::UnderThreshold));
        assert_eq!(prompt(Some(20_000)), Decision::Threshold { tokens: 25_010 });
        assert_eq!(
            prompt(Some(30_000)),
            Decision::Skip(SkipReason::UnderThreshold)
        );
        // Only before a prompt: a run's end is measured against the threshold alone.
        let after_run = decide(&input(&transcript, &model, Trigger::AfterRun, Some(20_000)));
        assert_eq!(after_run, Decision::Skip(SkipReason::UnderThreshold));
    }

    #[test]
    fn a_context_longer_than_the_threshold_compacts_without_usage() {
        let model = ModelInfo {
            provider: "anthropic".into(),
            id: "m".into(),
            context_window: 1_000,
            cache: None,
        };
        let user = |text: &str| {
            AgentMessage::User(
                serde_json::from_value(json!({"role": "user", "content": text, "timestamp": 0}))
                    .unwrap(),
            )
        };
        // A reply without usage counts 0 tokens before a prompt (the reference's rule): 600
        // messages are under the threshold (1,000 - 500) by the reply and over it by their count.
        let mut transcript: Vec<AgentMessage> = (0..599).map(|_| user("w")).collect();
        let mut silent = reply(0);
        if let AgentMessage::Assistant(message) = &mut silent {
            message.usage = None;
        }
        transcript.push(silent);
        let mut check = CheckInput {
            reserve_tokens: 500,
            ..input(&transcript, &model, Trigger::BeforePrompt, None)
        };
        assert_eq!(
            decide_by_length(&check, None),
            Some(Decision::Threshold { tokens: 600 })
        );
        assert_eq!(decide(&check), Decision::Threshold { tokens: 600 });
        // At the threshold or under it, the reference's decision stands.
        check.context_messages = 500;
        assert_eq!(decide_by_length(&check, None), None);
        assert_eq!(decide(&check), Decision::Skip(SkipReason::UnderThreshold));
        // Off, or without a window: never.
        check.context_messages = 600;
        assert_eq!(
            decide_by_length(
                &CheckInput {
                    enabled: false,
                    ..check
                },
                None
            ),
            None
        );
        let unknown = ModelInfo {
            context_window: 0,
            ..model.clone()
        };
        assert_eq!(
            decide_by_length(
                &CheckInput {
                    model: Some(&unknown),
                    ..check
                },
                None
            ),
            None
        );
        // A reserve as large as the window: the reference's rules decide.
        assert_eq!(
            decide_by_length(
                &CheckInput {
                    reserve_tokens: 1_000,
                    ..check
                },
                None
            ),
            None
        );
        // An overflowed last reply is recovered as the reference does (compact, then retry).
        let overflow: AgentMessage = serde_json::from_value(json!({"role": "assistant",
            "content": [], "api": "anthropic-messages", "provider": "anthropic", "model": "m",
            "stopReason": "error", "errorMessage": "prompt is too long: 1200 tokens > 1000 maximum",
            "timestamp": 1}))
        .unwrap();
        let mut overflowed = transcript.clone();
        overflowed.push(overflow);
        let after_overflow = CheckInput {
            transcript: &overflowed,
            ..check
        };
        assert_eq!(decide(&after_overflow), Decision::Overflow);
        // The length is the session's count, not the transcript's: none is read.
        let empty: [AgentMessage; 0] = [];
        let by_count = CheckInput {
            transcript: &empty,
            ..check
        };
        assert_eq!(
            decide_by_length(&by_count, None),
            Some(Decision::Threshold { tokens: 600 })
        );
    }
}
