//! How far apart threshold compactions come. `compaction.thresholdTokens` is read against the
//! provider's count of the context (a reply's usage), and what a compaction keeps (the recent
//! messages, the summary) is measured in ctxkit's estimate. Where a provider counts more than the
//! estimate (Claude Code's recorded usage runs about twice it: docs/simulator.md, eighteenth round),
//! a compaction left the context closer to the threshold than its budgets meant, and the next one
//! came a few calls later, each with its summary to pay for. After a compaction the threshold is
//! raised by what the provider counts of the compaction's leftovers beyond ctxkit's estimate of
//! them (the over-count learned so far), so the room for new work is what the budgets meant; with no
//! over-count learned it stays where it is. Never past the window's own reserve. The background
//! summary starts at `backgroundPercent` of the raised threshold (`background.rs`): started at the
//! share of the planned one, it summarized up to where the context stood then, and the compaction
//! that took it kept everything since, so each compaction kept more than the one before
//! (docs/simulator.md, twenty-second round).

use ctxkit_protocol::AgentMessage;

use crate::state::State;

/// The reserve a check compacts at: the planned one (the threshold folded in), lowered by what the
/// provider counted of the latest compaction's leftovers beyond ctxkit's estimate of them.
pub(super) fn check_reserve(state: &State, transcript: &[&AgentMessage]) -> u64 {
    let planned = state.planning().reserve_tokens.max(state.output_reserve());
    if !spaces(state) {
        return planned;
    }
    let config = state.compaction_config().into_owned();
    let window = state.context_window();
    let threshold = config.threshold_tokens;
    let over_count = state.over_count;
    let fresh_from = crate::planning::fresh_from(&state.session);
    let Some(left) = context_after_compaction(transcript, fresh_from) else {
        return planned;
    };
    let estimated_left = (left as f64 / over_count) as u64;
    let spaced = threshold.saturating_add(left.saturating_sub(estimated_left));
    let window_reserve = state.window_reserve();
    window
        .saturating_sub(spaced)
        .max(window_reserve)
        .min(planned)
}

/// Whether the threshold may be spaced now: `thresholdTokens` is set, the window known, a
/// compaction on the branch, and an over-count learned (without one the leftovers are as large as
/// their budgets meant).
pub(super) fn spaces(state: &State) -> bool {
    state.compaction_config().threshold_tokens > 0
        && state.context_window() > 0
        && state.over_count > 1.0
        && state.session.latest_compaction().is_some()
}

/// The provider's count of the first request after the latest compaction: the first reply written
/// after it that reports usage.
fn context_after_compaction(transcript: &[&AgentMessage], fresh_from: usize) -> Option<u64> {
    transcript.get(fresh_from..)?.iter().find_map(|message| {
        let usage = message.as_assistant()?.usage.as_ref()?;
        let tokens = usage.context_tokens();
        (tokens > 0).then_some(tokens)
    })
}
