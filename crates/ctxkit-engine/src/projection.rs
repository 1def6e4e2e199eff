//! The size of the next request, as every decision that weighs it measures it (the threshold
//! checks, the status line's context figure, the agent's output room and its check after a
//! cancelled compaction): the provider's count of the last request, plus ctxkit's estimate of the
//! model's view now, minus its estimate of the view that request was sent from.
//!
//! Pi 1.6 projects the next request as the last reply's usage plus estimates of every message
//! after it. Pi sends its transcript as it is, so that is its request; ctxkit's context transforms
//! cut older tool results to markers in the next request (the prune layer), which that rule never
//! subtracts: after each tool batch it overstated the request by about one whole tool result, so a
//! run with compaction off stopped at 60% of the window and threshold compactions ran one result
//! early (QA r101). Measured on the views, what the prune layer cut since the last request is
//! subtracted and the provider's real count stays the base. Without a counted request whose view
//! ctxkit estimated (a session opened from a file, the first request), the caller falls back to
//! the reference's rule.

use crate::error::Result;
use crate::state::State;

/// The last request the provider counted, and ctxkit's estimate of the view it was sent from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CountedRequest {
    /// What the provider counted of the request and its reply (the reply's usage, as Pi's figure).
    pub(crate) counted: u64,
    /// ctxkit's estimate of the model's view the request carried ([`view_tokens`]) and of the
    /// reply.
    pub(crate) view_tokens: u64,
}

/// ctxkit's estimate of the model's view at one leaf.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ViewAtLeaf {
    leaf: Option<String>,
    messages: usize,
    tokens: u64,
    /// The same view's messages before the transforms (what a request of the whole history
    /// carries).
    whole: u64,
}

/// What the engine keeps to project the next request from.
#[derive(Debug, Clone, Default)]
pub(crate) struct Calibration {
    /// The view estimate of the request recorded and not answered yet.
    sent: Option<u64>,
    /// The last request a reply counted.
    counted: Option<CountedRequest>,
    /// The last view estimated, kept for the request recorded at the same leaf.
    last_view: Option<ViewAtLeaf>,
}

impl Calibration {
    /// Forgets everything: another model's provider counts differently.
    pub(crate) fn forget(&mut self) {
        *self = Self::default();
    }

    /// What the last counted request's count held beyond ctxkit's estimate of its view and reply
    /// (the caller's system prompt and tools); `None` when no counted request's view is known.
    pub(crate) fn counted_overhead(&self) -> Option<u64> {
        self.counted
            .map(|request| request.counted.saturating_sub(request.view_tokens))
    }

    /// Forgets the counted request: the session moved to another branch than it was sent from.
    pub(crate) fn forget_counted(&mut self) {
        self.sent = None;
        self.counted = None;
    }

    /// Forgets the view estimated last: the settings that shape the view changed.
    pub(crate) fn forget_view(&mut self) {
        self.last_view = None;
    }
}

/// The projection of the next request: `request`'s count plus the estimated change of the view
/// since it (`view_tokens` now), the change scaled by what the provider counts per estimated token
/// (`over_count`, 1 until a reply showed more). Never below 0.
pub(crate) fn project(request: CountedRequest, view_tokens: u64, over_count: f64) -> u64 {
    let change = i128::from(view_tokens) - i128::from(request.view_tokens);
    let change = if over_count > 1.0 {
        (change as f64 * over_count).round() as i128
    } else {
        change
    };
    let projected = (i128::from(request.counted) + change).max(0);
    u64::try_from(projected).unwrap_or(u64::MAX)
}

/// ctxkit's estimate of the model's view now: its messages after the transforms and the texts it
/// adds to the system prompt (summaries under `summaryRole: system`); the system prompt and tools
/// are the caller's, the same in every request, so they are in the provider's count and cancel out.
pub(crate) fn view_tokens(state: &mut State) -> Result<u64> {
    Ok(view_at_leaf(state)?.0)
}

/// [`view_tokens`] of the view before the transforms: what a request carrying the whole history
/// (another agent's) would have held.
pub(crate) fn whole_view_tokens(state: &mut State) -> Result<u64> {
    Ok(view_at_leaf(state)?.1)
}

/// The estimates of the model's view at the leaf now, after and before the transforms, kept from
/// the last time they were made.
fn view_at_leaf(state: &mut State) -> Result<(u64, u64)> {
    let messages = state.session.leaf_context().messages.len();
    if let Some(view) = &state.calibration.last_view
        && view.leaf.as_deref() == state.session.leaf_id()
        && view.messages == messages
    {
        return Ok((view.tokens, view.whole));
    }
    let view = crate::view::current_view(state)?;
    Ok(estimate_at_leaf(state, &view))
}

/// The estimate of `view`, the model's view at the session's leaf now, kept for a request
/// recorded at the same leaf.
pub(crate) fn view_estimate(state: &mut State, view: &crate::view::ModelView) -> u64 {
    estimate_at_leaf(state, view).0
}

/// [`view_estimate`], with the view's estimate before the transforms, kept for the leaf.
fn estimate_at_leaf(state: &mut State, view: &crate::view::ModelView) -> (u64, u64) {
    let system: u64 = view
        .system
        .iter()
        .map(|text| ctxkit_tokens::utf16_len(text).div_ceil(4) as u64)
        .sum();
    let tokens = view.report.estimated_tokens_after.saturating_add(system);
    let whole = view.report.estimated_tokens_before.saturating_add(system);
    state.calibration.last_view = Some(ViewAtLeaf {
        leaf: state.session.leaf_id().map(str::to_owned),
        messages: state.session.leaf_context().messages.len(),
        tokens,
        whole,
    });
    (tokens, whole)
}

/// A model request is about to be sent from the view at the leaf: its estimate is kept until the
/// reply counts the request. A view that cannot be read leaves the request uncalibrated.
pub(crate) fn note_request(state: &mut State) {
    state.calibration.sent = view_tokens(state).ok();
}

/// A reply was appended: a successful one with usage counts the request it answers; a failed
/// one leaves the last count standing (it counted nothing). A reply the provider compacted the
/// conversation in counted a request its view does not describe: nothing is calibrated on it.
pub(crate) fn note_reply(state: &mut State, message: &ctxkit_protocol::AgentMessage) {
    let Some(reply) = message.as_assistant() else {
        return;
    };
    let sent = state.calibration.sent.take();
    if reply.is_aborted_or_error() {
        return;
    }
    if reply.provider_compaction().is_some() {
        state.calibration.counted = None;
        return;
    }
    // The reply's usage counts the request and the reply (as Pi's figure does); the view it is
    // measured against holds the reply too, so with nothing cut since, the projection is Pi's.
    let counted = reply
        .usage
        .as_ref()
        .map_or(0, ctxkit_protocol::Usage::context_tokens);
    match sent {
        Some(view_tokens) if counted > 0 => {
            let reply_tokens = ctxkit_tokens::estimate_tokens(message);
            state.calibration.counted = Some(CountedRequest {
                counted,
                view_tokens: view_tokens.saturating_add(reply_tokens),
            });
        }
        // A reply to a request this engine did not see, or one without usage: its count says
        // nothing of a view ctxkit estimated.
        Some(_) | None => state.calibration.counted = None,
    }
}

/// The projection of the next request's input (see the module doc), the pending messages not
/// stored yet counted as `pending_tokens` more; `None` when no counted request's view is known
/// (the caller falls back to the reference's rule).
pub(crate) fn next_request_tokens(state: &mut State, pending_tokens: u64) -> Result<Option<u64>> {
    let Some(request) = state.calibration.counted else {
        return Ok(None);
    };
    let view = view_tokens(state)?.saturating_add(pending_tokens);
    Ok(Some(project(request, view, state.over_count)))
}

impl crate::engine::Engine {
    /// The projection of the next request's input, as the engine's own checks measure it: the
    /// provider's count of the last request plus the estimated change of the model's view since
    /// (what was added, less what the transforms cut), with `pending` (a prompt not stored yet)
    /// added. `None` until a reply counted a request this engine recorded
    /// ([`Engine::record_model_request`](crate::engine::Engine::record_model_request)): measure
    /// the request itself then.
    pub async fn projected_input_tokens(
        &self,
        pending: &[ctxkit_protocol::AgentMessage],
    ) -> Result<Option<u64>> {
        let pending_tokens = pending.iter().map(ctxkit_tokens::estimate_tokens).sum();
        next_request_tokens(&mut *self.lock().await, pending_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::{CountedRequest, project};

    /// QA r101 (D1): the provider counted 23,441 tokens of a request whose view ctxkit estimated at
    /// 20,200; since then a reply (100), a new 35 KB result (8,750) and the previous result cut to
    /// a marker (−8,320) were added. The next request is ~23,971, not 23,441 + 8,850.
    #[test]
    fn the_transforms_cuts_since_the_last_request_are_subtracted() {
        let request = CountedRequest {
            counted: 23_441,
            view_tokens: 20_200,
        };
        let view_now = 20_200 + 100 + 8_750 - 8_320;
        assert_eq!(project(request, view_now, 1.0), 23_971);
        // The change is in the provider's count: scaled by the over-count learnt.
        assert_eq!(project(request, 20_200 + 1_000, 1.5), 23_441 + 1_500);
        assert_eq!(project(request, 20_200 - 1_000, 1.5), 23_441 - 1_500);
        // Never below nothing.
        assert_eq!(project(request, 0, 1.0), 3_241);
        let small = CountedRequest {
            counted: 10,
            view_tokens: 5_000,
        };
        assert_eq!(project(small, 0, 1.0), 0);
    }
}
