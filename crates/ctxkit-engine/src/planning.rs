//! What a compaction summarizes: the plan for a threshold or manual compaction (nothing when the
//! span is empty; overflow recovery's plans are in `recovery`); and what the checks read off the
//! branch (which replies are fresh, whether a retry can run).

use ctxkit_compaction::{NoPlanReason, Preparation, prepare_compaction};
use ctxkit_protocol::AgentMessage;

use crate::engine::{State, transcript};
use crate::error::{EngineError, Result};
use crate::events::CompactionReason;

/// The plan of a compaction for `reason`; `NothingToCompact` (or `AlreadyCompacted`) when there is
/// nothing to summarize.
pub(crate) fn plan_for(state: &State, reason: CompactionReason) -> Result<Preparation> {
    match reason {
        CompactionReason::Overflow => crate::recovery::overflow_plan(state).map(|(plan, _)| plan),
        CompactionReason::Threshold | CompactionReason::Manual => {
            let plan = match prepare_compaction(&state.session, None, state.planning())? {
                Ok(plan) => plan,
                Err(NoPlanReason::AlreadyCompacted) => return Err(EngineError::AlreadyCompacted),
                Err(NoPlanReason::NothingToCompact | NoPlanReason::NothingToSummarize) => {
                    return Err(EngineError::NothingToCompact);
                }
            };
            // The whole context fits in keepRecentTokens: the reference still asks the model for a
            // summary of nothing and writes it, which only makes the context longer.
            if is_empty_span(&plan) {
                return Err(EngineError::NothingToCompact);
            }
            Ok(plan)
        }
    }
}

pub(crate) fn is_empty_span(plan: &Preparation) -> bool {
    plan.messages_to_summarize.is_empty() && plan.turn_prefix_messages.is_empty()
}

/// The index of the first context message whose entry was written after the latest compaction on
/// the branch (entries are appended, so file order is write order); 0 without a compaction.
pub(crate) fn fresh_from(session: &ctxkit_session::Session) -> usize {
    let path = session.branch_path(None);
    let Some(compaction) = path
        .iter()
        .rev()
        .find(|entry| entry.type_name() == "compaction")
    else {
        return 0;
    };
    let Some(compaction_at) = session.index().position(compaction.id()) else {
        return 0;
    };
    let context = session.build_context();
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
        AgentMessage::Custom(custom) => custom.custom_type != crate::pins::PINNED_MESSAGE_TYPE,
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
