//! Context transforms applied to the model's view before each call; stored history is never touched.
//!
//! [`transform_context`] takes the messages the model would see and returns a new, smaller list; the
//! input is only read. The layers run in order, each switchable in [`TransformSettings`]:
//!
//! 1. **prune** (lossless) — the `keepRecentToolResults` most recent tool results stay whole. Each
//!    older result whose text is longer than `pruneMinChars` characters keeps its first `headLines`
//!    and last `tailLines` lines around one marker line:
//!    `[... 812 lines (40213 chars) omitted; full output: ctxkit://tool-result/<toolCallId>]`.
//!    Texts with too few lines (or whose kept lines alone exceed `pruneMinChars`) are cut by
//!    characters instead, on character boundaries: `headChars` characters, `[... 40213 chars
//!    omitted; full output: ...]`, `tailChars` characters. Image blocks of older results become
//!    `[image omitted (image/png); full output: ...]`. With `pruneDigestNames` above 0 a cut's
//!    marker also lists, after `mentions:`, up to that many names the omitted text held (file
//!    paths, symbols, error codes, ids, URLs; ranked, at most `pruneDigestChars` characters, the
//!    same bytes for the same text). Markers are ASCII. [`pruned_reference`] reads the
//!    id back; the agent's `recall` tool takes it from the model and the engine resolves it against
//!    the stored session. A cut happens only when it
//!    makes the text shorter and the id can be read back (not empty, no whitespace or `]`). With
//!    `pruneToolCalls` (the recommended strategy) the long string arguments of those results' calls
//!    (a file written, a patch) are cut the same way, their marker naming
//!    `ctxkit://tool-call/<id>`; otherwise tool calls and their arguments are never touched.
//! 2. **thinking** — thinking blocks are removed from the assistant messages of earlier turns: every
//!    reply after the last user message (the turn in progress, a tool loop of any length) keeps
//!    its thinking, which Anthropic (signed thinking of the current tool-use turn) and DeepSeek,
//!    Kimi and MiMo (`reasoning_content` of every tool-call reply since the last user message)
//!    require. An assistant keeps its text and tool calls; one left with no content at all held
//!    only thinking, has no tool call to orphan a result, and is dropped.
//! 3. **window** — only when the estimate after (1) and (2) is above `windowThresholdPercent`% of
//!    `context_window` (0 = unknown: never): messages are dropped oldest first from the second on,
//!    keeping the first message, the first user message and the last `keepLastMessages` (widened so
//!    it does not start with a tool result), until the estimate is at or below the threshold. An
//!    assistant goes together with the tool results that directly follow it.
//!
//! **Pins after a compaction** come first: a `ctxkit.pinned` message the engine appended after a
//! compaction (its details name it under `afterCompaction`) is sent right after the compaction's
//! summary, not where it was appended (after the prompt or tool results the compaction
//! interrupted), so the request still ends with what the model must answer.
//!
//! **Orphan repair** ([`repair_orphans`]) runs on the input and after every layer, so the view is
//! one a provider accepts as it is (serve's `view.get` hands it to clients who send it): a tool
//! result whose call is in an earlier assistant message of its turn (no user message between: an
//! old Codex import's message per parallel call) moves to right after that message's results; a
//! tool result that answers no open call of the assistant message before it is dropped; a tool call left
//! without a result (the session went on from the reply that made it, or the turn was killed before
//! its tool ran) stays in its reply and is answered, right after the reply's own results, by a
//! synthetic error result reading `No result provided` ([`ctxkit_protocol::NO_TOOL_RESULT`]), as Pi
//! 1.6.0 answers it; a failed reply's (error or aborted: no request sends it) such call is removed
//! instead. Pending calls are left open: the calls of the last assistant message when only tool
//! results (or nothing) follow it, since the turn is still running.
//!
//! **Cache-aware mode** (`cacheAware`): provider prompt caches reuse the longest byte-identical
//! request prefix, and the plain rules change an older message on nearly every call (the
//! keep-recent boundary moves with each new tool result, a finished turn's replies lose their
//! thinking). In cache-aware mode the number of prunable tool results is rounded down to a multiple
//! of `cacheBlockSize`, and thinking is removed only from assistants before the end of that block
//! (never from the turn in progress), so the prefix changes once per `cacheBlockSize` tool
//! results. The sliding window, once it acts, still moves every call.
//!
//! **Pruning when it pays** (`pruneWhenItPays`, the default; see `pays.rs`): the prune boundary
//! moves only at a call where the tokens the move saves over the expected rest of the run outweigh
//! the cache it rewrites, under the cache prices `cacheReadPercent` and `cacheWritePercent`
//! (Anthropic's by default), and then by a whole batch of results; thinking is removed only before
//! that boundary, as in cache-aware mode (which this mode replaces). Results deep in the cached
//! prefix are cut in batches (none in a short run); the result the model has just read ends the
//! cached prefix, so cutting it at the next request rewrites only what follows it and pays at once
//! when it is large: with `keepRecentToolResults` 1 such results go one per request.
//!
//! Token numbers are the reference's chars/4 estimate (`ctxkit_tokens::estimate_tokens`).
//!
//! An old tool result cut down in the view while the newest stays whole:
//!
//! ```
//! use ctxkit_protocol::AgentMessage;
//! use ctxkit_settings::TransformSettings;
//! use ctxkit_transform::{pruned_reference, transform_context};
//! use serde_json::json;
//!
//! let log: String = (0..400).map(|line| format!("test case {line} ... ok\n")).collect();
//! let mut view: Vec<AgentMessage> = Vec::new();
//! view.push(serde_json::from_value(json!({"role": "user", "content": "run the tests twice"}))?);
//! for call in ["call_1", "call_2"] {
//!     view.push(serde_json::from_value(json!({
//!         "role": "assistant", "stopReason": "toolUse",
//!         "content": [{"type": "toolCall", "id": call, "name": "bash",
//!                      "arguments": {"command": "cargo test"}}]
//!     }))?);
//!     view.push(serde_json::from_value(json!({
//!         "role": "toolResult", "toolCallId": call, "toolName": "bash", "isError": false,
//!         "content": [{"type": "text", "text": log}]
//!     }))?);
//! }
//! let settings = TransformSettings { keep_recent_tool_results: 1, ..TransformSettings::default() };
//! let output = transform_context(&view, &settings, 200_000);
//!
//! assert_eq!(output.report.tool_results_pruned, 1);
//! assert!(output.report.estimated_tokens_after < output.report.estimated_tokens_before);
//! let text = |message: &AgentMessage| {
//!     message.as_tool_result().map(|result| result.content.joined_text("\n")).unwrap_or_default()
//! };
//! // The older result keeps its first and last lines around a marker naming its call, so the full
//! // text can be fetched back from the session; the newest result and the history are untouched.
//! let older = text(&output.messages[2]);
//! assert!(older.starts_with("test case 0 ... ok"));
//! assert_eq!(pruned_reference(&older).as_deref(), Some("call_1"));
//! assert_eq!(text(&output.messages[4]), log);
//! assert_eq!(text(&view[2]), log);
//! # Ok::<(), serde_json::Error>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod calls;
mod cut;
mod digest;
mod escapes;
mod lifetime;
mod marker;
mod measured;
mod orphans;
mod pays;
mod pins;
mod prune;
mod ranking;
mod thinking;
mod unreferenced;
mod view;
mod window;

#[cfg(test)]
mod robustness_tests;
#[cfg(test)]
mod test_support;

use std::borrow::Cow;

use ctxkit_protocol::{AgentMessage, ToolResultMessage};
use ctxkit_settings::TransformSettings;

pub use digest::{names_in, names_in_json};
pub use lifetime::{CacheLifetime, LONG_CACHE_MS, LifetimeLearner, SHORT_CACHE_MS};
pub use marker::{
    TOOL_CALL_REFERENCE_PREFIX, TOOL_RESULT_REFERENCE_PREFIX, pruned_mentions, pruned_names,
    pruned_reference, shown_names,
};
pub use measured::{MeasuredMessage, MeasuredView, transform_measured};
pub use orphans::repair_orphans;
pub use pays::content_blocks;
pub use unreferenced::{strip_references, without_references};

use crate::view::{Slot, total_tokens};

/// What [`transform_context`] did. Token numbers are estimates (chars/4), not provider counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransformReport {
    /// Tool results cut or stripped of images by the prune layer.
    pub tool_results_pruned: usize,
    /// Assistant messages whose tool calls' long arguments the prune layer cut
    /// (`pruneToolCalls`).
    pub tool_calls_cut: usize,
    /// Characters the prune layer removed, net of the markers it added (images count their base64
    /// length).
    pub chars_saved: u64,
    /// Thinking blocks removed by the thinking layer.
    pub thinking_blocks_dropped: usize,
    /// Assistant messages dropped because they held only thinking.
    pub empty_assistants_dropped: usize,
    /// Messages dropped by the sliding window.
    pub messages_dropped_by_window: usize,
    /// Tool results dropped for lack of a call plus tool calls left without a result: answered by
    /// a synthetic error result, or, in a failed reply, removed.
    pub orphans_repaired: usize,
    /// Estimate of the input view.
    pub estimated_tokens_before: u64,
    /// Estimate of the output view.
    pub estimated_tokens_after: u64,
}

/// The transformed view and what was done to it.
#[derive(Debug, Clone, PartialEq)]
pub struct TransformOutput {
    /// The view to send to the model.
    pub messages: Vec<AgentMessage>,
    /// What the layers did.
    pub report: TransformReport,
    /// The tool call id of the last tool result the prune layer cut (`None`: it cut none). Told
    /// by the layer, never read back from a result's text, which may quote a marker.
    pub last_cut_tool_result: Option<String>,
}

/// Applies the enabled layers to the model's view `messages` (owned, or shared as `Arc`s) and returns
/// a new list; `messages` is not changed. `context_window` is the model's window in tokens; 0 (unknown) disables the sliding
/// window.
pub fn transform_context<M: std::borrow::Borrow<AgentMessage>>(
    messages: &[M],
    settings: &TransformSettings,
    context_window: u64,
) -> TransformOutput {
    let slots = messages
        .iter()
        .map(|message| Slot::borrowed(message.borrow()))
        .collect();
    let (slots, report, last_cut_tool_result) = transform_slots(slots, settings, context_window);
    let messages = slots
        .into_iter()
        .map(|slot| model_copy(slot.message))
        .collect();
    TransformOutput {
        messages,
        report,
        last_cut_tool_result,
    }
}

/// The layers over a view's slots: what is left of them, what was done, and the tool call id of
/// the last result the prune layer cut when it is still in the view.
pub(crate) fn transform_slots<'a>(
    mut slots: Vec<Slot<'a>>,
    settings: &TransformSettings,
    context_window: u64,
) -> (Vec<Slot<'a>>, TransformReport, Option<String>) {
    let mut report = TransformReport {
        estimated_tokens_before: total_tokens(&slots),
        ..TransformReport::default()
    };
    report.orphans_repaired += orphans::repair_slots(&mut slots);
    pins::place_pins_after_summary(&mut slots);

    // The block is measured only when a layer reads it: under the "when it pays" rule it is a fold
    // over every request of the view.
    let block_read = settings.prune_enabled
        || (settings.drop_old_thinking && (settings.cache_aware || settings.prune_when_it_pays));
    let block = if block_read {
        prune::prune_block(&slots, settings)
    } else {
        prune::PruneBlock::default()
    };
    let mut last_cut_tool_result = None;
    if settings.prune_enabled {
        let outcome = prune::prune_tool_results(&mut slots, block, settings);
        last_cut_tool_result = outcome.last_cut_tool_result;
        report.tool_results_pruned = outcome.tool_results_pruned;
        report.tool_calls_cut = outcome.tool_calls_cut;
        report.chars_saved = outcome.chars_saved;
        report.orphans_repaired += orphans::repair_slots(&mut slots);
    }
    if settings.drop_old_thinking {
        let limit = if settings.cache_aware || settings.prune_when_it_pays {
            block.end
        } else {
            slots.len()
        };
        let outcome = thinking::drop_old_thinking(&mut slots, limit);
        report.thinking_blocks_dropped = outcome.blocks_dropped;
        report.empty_assistants_dropped = outcome.assistants_dropped;
        report.orphans_repaired += orphans::repair_slots(&mut slots);
    }
    if settings.window_enabled {
        report.messages_dropped_by_window =
            window::slide_window(&mut slots, settings, context_window);
        report.orphans_repaired += orphans::repair_slots(&mut slots);
    }

    report.estimated_tokens_after = total_tokens(&slots);
    // The window may have dropped it (or orphan repair, its call).
    let last_cut_tool_result = last_cut_tool_result.filter(|id| {
        slots.iter().any(|slot| {
            slot.message
                .as_tool_result()
                .is_some_and(|result| result.tool_call_id == *id)
        })
    });
    (slots, report, last_cut_tool_result)
}

/// `message` as the model is sent it: a tool result without its `details`, which are for a user
/// interface (a diff, a whole file read), never sent to a provider, and often many times the size
/// of what the model reads. They are not copied.
pub fn sent_form(message: &AgentMessage) -> Cow<'_, AgentMessage> {
    if let AgentMessage::ToolResult(result) = message
        && result.details.is_some()
    {
        return Cow::Owned(AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: result.tool_call_id.clone(),
            tool_name: result.tool_name.clone(),
            content: result.content.clone(),
            details: None,
            is_error: result.is_error,
            timestamp: result.timestamp,
            extra: result.extra.clone(),
        }));
    }
    Cow::Borrowed(message)
}

/// A view's message as the model is sent it ([`sent_form`]), owned.
pub(crate) fn model_copy(message: Cow<'_, AgentMessage>) -> AgentMessage {
    match message {
        Cow::Borrowed(message) => sent_form(message).into_owned(),
        Cow::Owned(AgentMessage::ToolResult(mut result)) => {
            result.details = None;
            AgentMessage::ToolResult(result)
        }
        Cow::Owned(message) => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use ctxkit_tokens::estimate_tokens;

    /// One turn of a growing conversation: after the first, the user's next request, then an
    /// assistant that thinks and calls a tool, and its result. (Thinking is dropped only from
    /// earlier turns: a tool loop's replies keep theirs while it runs.)
    fn append_turn(messages: &mut Vec<AgentMessage>, turn: usize) {
        let id = format!("call_{turn}");
        if turn > 0 {
            messages.push(user(&format!("now step {turn}")));
        }
        messages.push(assistant(vec![
            thinking(&format!("reasoning for step {turn} ").repeat(20)),
            text("next step"),
            call(&id),
        ]));
        messages.push(tool_result(&id, &long_output(&id, 80)));
    }

    fn growing_views(settings: &TransformSettings, calls: usize) -> Vec<Vec<String>> {
        let mut messages = vec![user("refactor the parser")];
        (0..calls)
            .map(|turn| {
                append_turn(&mut messages, turn);
                transform_context(&messages, settings, 0)
                    .messages
                    .iter()
                    .map(|message| serde_json::to_string(message).unwrap())
                    .collect()
            })
            .collect()
    }

    /// Transitions (by the index of the later call) where the earlier view is not a byte-identical
    /// prefix of the later one.
    fn prefix_breaks(views: &[Vec<String>]) -> Vec<usize> {
        views
            .windows(2)
            .enumerate()
            .filter(|(_, pair)| {
                pair[0].len() > pair[1].len() || pair[0][..] != pair[1][..pair[0].len()]
            })
            .map(|(index, _)| index + 1)
            .collect()
    }

    #[test]
    fn cache_aware_views_keep_their_prefix_for_all_but_one_call_per_block() {
        let settings = TransformSettings {
            cache_aware: true,
            ..plain()
        };
        let views = growing_views(&settings, 41);
        let breaks = prefix_breaks(&views);
        // Call k (0-based) has k + 1 results, k + 1 − 6 of them old; rounded down to a multiple of 8
        // that changes at calls 13, 21, 29 and 37: once per block of 8 calls.
        assert_eq!(breaks, vec![13, 21, 29, 37]);
        for block in breaks.windows(2) {
            assert_eq!(block[1] - block[0], settings.cache_block_size);
        }
        // Something was pruned and thinned at all: the prefix is stable, not untouched.
        let last = views.last().unwrap();
        assert!(
            last.iter()
                .any(|message| message.contains("ctxkit://tool-result/call_0]"))
        );
        assert!(!last[1].contains("\"thinking\""), "{}", last[1]);
    }

    #[test]
    fn plain_mode_changes_the_prefix_on_every_call() {
        let views = growing_views(&plain(), 41);
        assert_eq!(prefix_breaks(&views), (1..41).collect::<Vec<_>>());
    }

    /// A long conversation that every layer has work on.
    fn busy_conversation() -> Vec<AgentMessage> {
        let mut messages = vec![user("refactor the parser")];
        for turn in 0..40 {
            append_turn(&mut messages, turn);
        }
        messages.push(tool_result(
            "ghost",
            "result of a call that is not in the view",
        ));
        messages.push(assistant(vec![
            text("reading two files"),
            call("p1"),
            call("p2"),
        ]));
        messages
    }

    #[test]
    fn input_is_never_changed() {
        let messages = busy_conversation();
        let copy = messages.clone();
        let output = transform_context(&messages, &plain(), 10_000);
        assert_eq!(messages, copy);
        assert_ne!(output.messages, messages);
    }

    #[test]
    fn report_counts_every_layer() {
        let messages = busy_conversation();
        let before: u64 = messages.iter().map(estimate_tokens).sum();
        let settings = plain();
        let output = transform_context(&messages, &settings, 0);
        let report = output.report;
        assert_eq!(report.estimated_tokens_before, before);
        assert_eq!(
            report.estimated_tokens_after,
            output.messages.iter().map(estimate_tokens).sum::<u64>()
        );
        assert!(report.estimated_tokens_after < before / 2, "{report:?}");
        assert_eq!(report.tool_results_pruned, 40 - 6);
        assert_eq!(report.thinking_blocks_dropped, 39);
        assert_eq!(report.empty_assistants_dropped, 0);
        assert_eq!(report.messages_dropped_by_window, 0);
        // The ghost result; the final assistant's pending calls are no orphans.
        assert_eq!(report.orphans_repaired, 1);
        assert_eq!(output.messages.len(), messages.len() - 1);
        assert_eq!(output.messages.last(), messages.last());
        assert!(report.chars_saved > 30_000, "{report:?}");
    }

    #[test]
    fn window_runs_after_the_other_layers_and_its_orphans_are_repaired() {
        let messages = busy_conversation();
        let output = transform_context(&messages, &plain(), 4_000);
        let report = output.report;
        assert!(report.messages_dropped_by_window > 0, "{report:?}");
        assert!(report.estimated_tokens_after <= 3_000, "{report:?}");
        assert_eq!(output.messages[0], messages[0]);
        assert_eq!(output.messages.last(), messages.last());
        assert_eq!(repair_orphans(output.messages.clone()).1, 0);
        // Without pruning and thinking removal the window has to drop more.
        let window_only = TransformSettings {
            prune_enabled: false,
            drop_old_thinking: false,
            ..plain()
        };
        let more = transform_context(&messages, &window_only, 4_000).report;
        assert!(more.messages_dropped_by_window > report.messages_dropped_by_window);
    }

    #[test]
    fn a_result_out_of_place_is_repaired_before_the_window() {
        // The result of `late` sits behind a user message: it answers no open call (the rule
        // ctxkit's requests follow), so it is dropped and its call answered with an error result
        // first, and the window, which never parts a call from its results, keeps the call with
        // that answer.
        let mut messages = vec![
            user("task"),
            assistant(vec![text(&"x".repeat(4000)), call("late")]),
            user("meanwhile"),
            tool_result("late", "out of order"),
        ];
        messages.extend((0..3).map(|index| user(&format!("recent {index}"))));
        let settings = TransformSettings {
            keep_last_messages: 5,
            ..plain()
        };
        let output = transform_context(&messages, &settings, 100);
        assert_eq!(output.report.messages_dropped_by_window, 0);
        assert_eq!(output.report.orphans_repaired, 2);
        assert_eq!(
            roles(&output.messages),
            vec![
                "user",
                "assistant",
                "toolResult",
                "user",
                "user",
                "user",
                "user"
            ]
        );
        assert_eq!(output.messages[2], no_result("late"));
    }

    /// A tool's details (a diff, a whole file read) are for a user interface: the view, which is what
    /// the model is sent, carries none, whether the result was cut or not; the input keeps them.
    #[test]
    fn the_view_carries_no_tool_details() {
        let mut messages = busy_conversation();
        for message in &mut messages {
            if let AgentMessage::ToolResult(result) = message {
                result.details = Some(serde_json::json!({"file": "x".repeat(10_000)}));
            }
        }
        for settings in [plain(), TransformSettings::disabled()] {
            let output = transform_context(&messages, &settings, 0);
            let results: Vec<&ToolResultMessage> = output
                .messages
                .iter()
                .filter_map(AgentMessage::as_tool_result)
                .collect();
            assert!(results.len() > 6, "{}", results.len());
            assert!(results.iter().all(|result| result.details.is_none()));
        }
        assert!(
            messages
                .iter()
                .filter_map(AgentMessage::as_tool_result)
                .all(|result| result.details.is_some())
        );
    }

    #[test]
    fn disabled_layers_pass_the_view_through() {
        let mut messages = vec![user("task")];
        for turn in 0..10 {
            append_turn(&mut messages, turn);
        }
        let output = transform_context(&messages, &TransformSettings::disabled(), 1);
        assert_eq!(output.messages, messages);
        assert_eq!(
            output.report.estimated_tokens_before,
            output.report.estimated_tokens_after
        );
        assert_eq!(
            transform_context::<AgentMessage>(&[], &plain(), 1).messages,
            Vec::new()
        );
    }
}
