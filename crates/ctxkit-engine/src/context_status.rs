//! The context figure a status line shows: while a reply reports usage, the next request as the
//! engine projects it (`projection`: the last counted request plus the estimated change of the
//! model's view since), or the reference's usage (the last reply's count plus estimates of what
//! followed it) before this engine recorded a counted request; else ctxkit's own estimate. The
//! reference shows the context as unknown right after a compaction, and a session whose replies
//! all failed counts only its typed prompts; ctxkit estimates the messages the next request sends
//! (error and aborted replies are not sent), which the caller completes with the system prompt
//! and tools it sends.

use crate::engine::Engine;
use crate::error::Result;
use crate::state::State;

/// How full the context is, as a status line shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextStatus {
    /// The reference's context tokens, or, when `estimated`, ctxkit's estimate of the messages the
    /// next request sends (without the system prompt and tools).
    pub tokens: u64,
    /// The window in force: the model's, or the provider's real limit once an overflow error
    /// stated one below it (the threshold and recovery plan with that limit, so the figure is
    /// read against it too).
    pub context_window: u64,
    /// The model's configured window (`contextWindow`): `context_window` unless the provider
    /// stated a lower limit.
    pub configured_window: u64,
    /// No reply since the latest compaction (or ever) reports usage: `tokens` is an estimate.
    pub estimated: bool,
}

/// The context before a compaction, measured as the status line measures it: what the compaction
/// reports as before → after (`CompactionEnd`, `ctxkit compact`, serve's `compaction_end`) is on
/// the status line's scale on both sides, so the number after it is the one the status line shows
/// next.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Before {
    /// A reply's usage counts the context (the entry's `tokensBefore` is that count).
    counted: bool,
    /// ctxkit's estimate of the messages the next request would have sent.
    messages: u64,
    /// What the last counted request's count held beyond ctxkit's estimate of the view it was
    /// sent from (its system prompt and tools), when the engine knows that view: a request it
    /// recorded, or one whose view a caller fetched to send (`Engine::note_view_sent`).
    counted_overhead: Option<u64>,
    /// ctxkit's estimate of the messages before the transforms: what a request the engine never
    /// saw (another agent's, a loop that builds its own context) carried of the history.
    whole: u64,
}

impl Before {
    pub(crate) fn measure(state: &mut State) -> Result<Self> {
        let counted_overhead = state.calibration.counted_overhead();
        Ok(Self {
            counted: has_counted_reply(state)?,
            messages: sent_tokens(state)?,
            counted_overhead,
            whole: crate::projection::whole_view_tokens(state)?,
        })
    }

    /// Before and after as reported. With `overhead` known (the system prompt and tools of the
    /// requests, estimated): before, the entry's `tokensBefore` when a reply's usage counted the
    /// context (the provider's count), else the estimate of the messages plus `overhead`; after,
    /// the estimate of its messages (`messages_after`) plus `overhead`, the figure the status line
    /// shows next. Unknown (0: no request recorded), `unrecorded` says what stands for it.
    pub(crate) fn reported(
        &self,
        entry_before: u64,
        messages_after: u64,
        overhead: u64,
        unrecorded: UnrecordedOverhead,
    ) -> (u64, u64) {
        let overhead = match (overhead, unrecorded) {
            (0, UnrecordedOverhead::FromProviderCount) if self.counted => {
                // The status line shows the provider's count, and after the compaction the
                // caller's requests carry again what it counted beyond the messages it was sent:
                // the view the engine knows it was sent from, else the whole history (a request
                // the engine never saw, another agent's: counted beyond the pruned view, the tool
                // output the view cuts was taken for system prompt and tools, QA 2026-12-07).
                match self.counted_overhead {
                    Some(counted) => counted,
                    None => entry_before.saturating_sub(self.whole),
                }
            }
            // One scale rather than a provider's count against an estimate: the messages alone.
            (0, UnrecordedOverhead::FromProviderCount | UnrecordedOverhead::Omitted) => {
                return (self.messages, messages_after);
            }
            (known, _) => known,
        };
        let before = if self.counted {
            entry_before
        } else {
            self.messages.saturating_add(overhead)
        };
        (before, messages_after.saturating_add(overhead))
    }
}

/// What a compaction's before → after counts for the system prompt and tools while no request is
/// recorded ([`Engine::set_request_overhead`], [`Engine::record_model_request`]), which leaves
/// their size unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnrecordedOverhead {
    /// Nothing: both sides are ctxkit's estimate of the messages alone (`ctxkit compact`, which
    /// shows no status line).
    #[default]
    Omitted,
    /// What the provider counted beyond ctxkit's estimate of the messages, once a reply reported a
    /// count: before is that count, as the caller's status line shows it, and after adds the same
    /// part to the messages' estimate. For a caller whose requests ctxkit never sees (a `serve`
    /// client's own loop); without a count, the messages alone.
    FromProviderCount,
}

impl Engine {
    /// Sets the estimated tokens of the system prompt and tools every request carries, before
    /// any request is recorded ([`Engine::record_model_request`] replaces it with the last
    /// request's): a compaction reports the context after it on the status line's scale
    /// ([`Engine::context_status`] plus this overhead).
    pub async fn set_request_overhead(&self, tokens: u64) {
        self.lock().await.request_overhead = tokens;
    }

    /// A caller fetched the model's view to send it (serve's `view.get` for a client's own loop):
    /// the next reply's usage counts that view's request, as after
    /// [`Engine::record_model_request`]. A compaction then knows what the count held beyond the
    /// view (the caller's system prompt and tools).
    pub async fn note_view_sent(&self) {
        crate::projection::note_request(&mut *self.lock().await);
    }

    /// What a compaction counts for the system prompt and tools while no request is recorded
    /// (`UnrecordedOverhead::Omitted` until set).
    pub async fn set_unrecorded_overhead(&self, unrecorded: UnrecordedOverhead) {
        self.lock().await.unrecorded_overhead = unrecorded;
    }

    /// The context figure for a status line; `None` without a model or window (as
    /// [`Engine::context_usage`]).
    pub async fn context_status(&self) -> Result<Option<ContextStatus>> {
        context_status(&mut *self.lock().await)
    }
}

fn context_status(state: &mut State) -> Result<Option<ContextStatus>> {
    let Some(usage) = crate::messages::context_usage(state)? else {
        return Ok(None);
    };
    let counted = match usage.tokens {
        // The next request as every decision projects it, once a counted request's view is
        // known: the reference's figure counts what the transforms cut since that request (and
        // after an undone compaction, every copy whole).
        Some(tokens) if has_counted_reply(state)? => {
            Some(crate::projection::next_request_tokens(state, 0)?.unwrap_or(tokens))
        }
        Some(_) | None => None,
    };
    let (tokens, estimated) = match counted {
        Some(tokens) => (tokens, false),
        None => (sent_tokens(state)?, true),
    };
    Ok(Some(ContextStatus {
        tokens,
        context_window: usage.context_window,
        configured_window: usage.configured_window,
        estimated,
    }))
}

/// Whether a reply on the branch's context reports usage (the reference's anchor), read from the
/// newest message back, stopping at the first one.
pub(crate) fn has_counted_reply(state: &mut State) -> Result<bool> {
    let mut position = state.session.leaf_context().messages.len();
    while position > 0 {
        position -= 1;
        let message = state.session.leaf_context().messages[position];
        let Some(shared) = crate::messages::counted_message(state, &message)? else {
            continue;
        };
        if ctxkit_tokens::last_valid_usage(&[shared.message()]).is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The estimate of the context messages the next request sends: the model's view (error and
/// aborted replies left out, the context transforms applied: a pruned tool result counts as its
/// marker). QA r101: counted whole, the messages a compaction kept or an undo restored made the
/// status line claim far more than the next request (127,265 after a compaction that kept a
/// background summary's span, before a 19k request).
pub(crate) fn sent_tokens(state: &mut State) -> Result<u64> {
    crate::projection::view_tokens(state)
}

#[cfg(test)]
mod tests {
    use super::{Before, UnrecordedOverhead};

    /// QA: the chat said `Compacted: 52000 → 9000 tokens` and its status line then `~11500`: the
    /// number after counted the messages alone, the status line adds the system prompt and tools.
    #[test]
    fn before_and_after_are_on_the_status_line_scale() {
        let counted = Before {
            counted: true,
            messages: 48_000,
            counted_overhead: None,
            whole: 0,
        };
        // The provider counted 52000; the chat's system prompt and tools are 2500.
        assert_eq!(
            counted.reported(52_000, 9_000, 2_500, UnrecordedOverhead::Omitted),
            (52_000, 11_500)
        );
        // Without a request recorded (`ctxkit compact`), the messages' estimate on both sides.
        assert_eq!(
            counted.reported(52_000, 9_000, 0, UnrecordedOverhead::Omitted),
            (48_000, 9_000)
        );
        let estimated = Before {
            counted: false,
            messages: 48_000,
            counted_overhead: None,
            whole: 0,
        };
        assert_eq!(
            estimated.reported(47_000, 9_000, 2_500, UnrecordedOverhead::Omitted),
            (50_500, 11_500)
        );
        assert_eq!(
            estimated.reported(47_000, 9_000, 0, UnrecordedOverhead::Omitted),
            (48_000, 9_000)
        );
    }

    /// QA (defect 5): a serve client's own loop saw `context.usage` 26416 (its replies' usage,
    /// counting its own system prompt and tools) and `compaction.list` 26416, but the
    /// `compaction_end` event said 20810, ctxkit's estimate of the messages alone.
    #[test]
    fn a_caller_whose_requests_are_unseen_gets_the_provider_s_scale() {
        let counted = Before {
            counted: true,
            messages: 20_810,
            counted_overhead: Some(5_606),
            whole: 20_810,
        };
        let provider = UnrecordedOverhead::FromProviderCount;
        // What the provider counted beyond the view it was sent (5606) is sent again after.
        assert_eq!(
            counted.reported(26_416, 9_868, 0, provider),
            (26_416, 15_474)
        );
        // QA (2026-12-07): a count of a request whose view the engine never knew (a Pi session
        // opened in `serve`: 351,745 counted of the whole history of 268,605, 103,053 in
        // ctxkit's view) made 266,028 of a 17,336-token context: what it counted beyond the whole
        // history is sent again, not the tool output the view prunes.
        let unknown_view = Before {
            counted: true,
            messages: 103_053,
            counted_overhead: None,
            whole: 268_605,
        };
        assert_eq!(
            unknown_view.reported(351_745, 17_336, 0, provider),
            (351_745, 100_476)
        );
        // A recorded request's overhead still wins.
        assert_eq!(
            counted.reported(26_416, 9_868, 6_000, provider),
            (26_416, 15_868)
        );
        // Without a count, the messages alone, as the status line shows them.
        let estimated = Before {
            counted: false,
            messages: 20_810,
            counted_overhead: None,
            whole: 0,
        };
        assert_eq!(
            estimated.reported(26_416, 9_868, 0, provider),
            (20_810, 9_868)
        );
    }
}
