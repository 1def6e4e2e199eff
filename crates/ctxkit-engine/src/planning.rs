//! What a compaction summarizes: the plan for a threshold or manual compaction (nothing when the
//! span is empty; overflow recovery's plans are in `recovery`); and what the checks read off the
//! branch (which replies are fresh, whether a retry can run).

use ctxkit_compaction::{CompactionSettings, NoPlanReason, Preparation, prepare_compaction};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;

use crate::error::{EngineError, Result};
use crate::events::CompactionReason;
use crate::messages::transcript;
use crate::state::State;

/// What a threshold or manual compaction would cover now (`Engine::plan`): the plan it would
/// summarize, or why it would write nothing. Every surface (the dry run, chat's `/context`, "nothing
/// to compact") asks this, so none repeats the rule.
#[derive(Debug, Clone)]
pub enum CompactionPlan {
    /// A compaction now would summarize this.
    Ready(Box<Preparation>),
    /// A compaction now would write nothing.
    Nothing(NoCompaction),
}

/// Why a compaction now would write nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoCompaction {
    /// The leaf is a compaction already.
    AlreadyCompacted,
    /// The branch holds nothing to compact (an empty session).
    EmptyBranch,
    /// What is not summarized yet fits in `keepRecentTokens`: a summary would cover nothing.
    AllKept {
        /// The estimated tokens of the context at the leaf (the estimate the cut point uses).
        context_tokens: u64,
        keep_recent_tokens: u64,
    },
}

impl NoCompaction {
    /// One line for users and JSON output, its numbers in agreement with its words. QA
    /// (2026-12-07): "what is not summarized yet fits in keepRecentTokens" beside a context of
    /// ~1909 tokens and a keepRecentTokens of 300, when the newest reply alone was over it.
    pub fn describe(&self) -> String {
        match self {
            Self::AlreadyCompacted => NoPlanReason::AlreadyCompacted.describe().to_owned(),
            Self::EmptyBranch => "no messages on this branch".to_owned(),
            Self::AllKept {
                context_tokens,
                keep_recent_tokens,
            } if context_tokens <= keep_recent_tokens => format!(
                "the messages (~{context_tokens} tokens, estimated, without the system prompt and \
                 tools) fit in keepRecentTokens ({keep_recent_tokens})"
            ),
            Self::AllKept {
                context_tokens,
                keep_recent_tokens,
            } => format!(
                "the messages are ~{context_tokens} tokens (estimated), but a compaction cuts only \
                 before a prompt or a reply, and the newest ones alone reach keepRecentTokens \
                 ({keep_recent_tokens}) with nothing before them left to summarize"
            ),
        }
    }

    /// The engine's error for a compaction asked for now.
    fn error(self) -> EngineError {
        match self {
            Self::AlreadyCompacted => EngineError::AlreadyCompacted,
            Self::EmptyBranch | Self::AllKept { .. } => EngineError::NothingToCompact,
        }
    }
}

/// The planner: what a threshold or manual compaction of `session` at its leaf would cover with
/// `settings`. An empty span is no plan: the reference still asks the model for a summary of
/// nothing and writes it, which only makes the context longer.
pub(crate) fn plan(session: &Session, settings: CompactionSettings) -> Result<CompactionPlan> {
    let reason = match prepare_compaction(session, None, settings)? {
        Ok(plan) if !is_empty_span(&plan) => return Ok(CompactionPlan::Ready(Box::new(plan))),
        Ok(_) | Err(NoPlanReason::NothingToSummarize) => NoCompaction::AllKept {
            context_tokens: estimated_context(session)?,
            keep_recent_tokens: settings.keep_recent_tokens,
        },
        Err(NoPlanReason::AlreadyCompacted) => NoCompaction::AlreadyCompacted,
        Err(NoPlanReason::NothingToCompact) => NoCompaction::EmptyBranch,
    };
    Ok(CompactionPlan::Nothing(reason))
}

/// The estimated tokens of the context at the leaf.
fn estimated_context(session: &Session) -> Result<u64> {
    let mut tokens = 0;
    for message in &session.build_context().messages {
        tokens += ctxkit_tokens::estimate_tokens(&session.message(message)?);
    }
    Ok(tokens)
}

/// The plan of a compaction for `reason`; `NothingToCompact` (or `AlreadyCompacted`) when there is
/// nothing to summarize.
pub(crate) fn plan_for(state: &mut State, reason: CompactionReason) -> Result<Preparation> {
    crate::messages::release_messages(state);
    match reason {
        CompactionReason::Overflow => crate::recovery::overflow_plan(state).map(|(plan, _)| plan),
        CompactionReason::Threshold | CompactionReason::Manual => {
            match plan(&state.session, state.planning())? {
                CompactionPlan::Ready(plan) => Ok(*plan),
                CompactionPlan::Nothing(reason) => Err(reason.error()),
            }
        }
    }
}

pub(crate) fn is_empty_span(plan: &Preparation) -> bool {
    plan.messages_to_summarize.is_empty() && plan.turn_prefix_messages.is_empty()
}

/// The index of the first context message whose entry was written after the latest compaction on
/// the branch (entries are appended, so file order is write order); 0 without a compaction.
pub(crate) fn fresh_from(session: &ctxkit_session::Session) -> usize {
    let Some((at, _)) = session.latest_compaction() else {
        return 0;
    };
    let Some(&compaction_at) = session.leaf_path().get(at) else {
        return 0;
    };
    let context = session.leaf_context();
    context
        .messages
        .iter()
        .position(|message| message.entry > compaction_at)
        .unwrap_or(context.messages.len())
}

/// Whether a retry can run: the model's view ends in something other than a reply (error and
/// aborted replies are not sent to the model). A silent or length-stop overflow leaves the
/// offending reply last, so no retry runs and none is announced.
pub(crate) fn can_continue(state: &State) -> bool {
    let Ok(messages) = transcript(&state.session) else {
        return false;
    };
    let last = messages.iter().rev().find(|message| match message {
        AgentMessage::Assistant(reply) => !reply.is_aborted_or_error(),
        // Pinned context re-added after the compaction is not something the model answers.
        AgentMessage::Custom(custom) => custom.custom_type != ctxkit_protocol::PINNED_MESSAGE_TYPE,
        AgentMessage::User(_)
        | AgentMessage::ToolResult(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => true,
    });
    // A summary reaches the model as a user message: after a compaction that split the turn, the
    // model continues from the summary of the turn's beginning.
    matches!(
        last,
        Some(
            AgentMessage::User(_)
                | AgentMessage::ToolResult(_)
                | AgentMessage::Custom(_)
                | AgentMessage::CompactionSummary(_)
                | AgentMessage::BranchSummary(_)
        )
    )
}
