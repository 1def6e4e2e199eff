//! Pruning only when it pays (`pruneWhenItPays`, on by default).
//!
//! A provider's prompt cache bills the part of a request it already holds at a fraction of the input
//! price (a *read*, Anthropic 10%) and the rest at a premium (a *write*, Anthropic's 5-minute cache
//! 125%). Cutting an old tool result changes the request at that result, so everything after it is
//! written again: pruning one result per call, as the plain rule does, turns nearly every request
//! into a full cache write, which costs more than the tokens it saves (issue 41: 2.8× the input cost
//! of no pruning on a 16-call run at Opus prices).
//!
//! This rule moves the prune boundary only when the move pays for itself. The boundary is a fold over
//! the view, request by request (a request was sent after each message that a reply follows, and
//! after the last one): at a request with `t` tool results before it, the candidate boundary is
//! `t − keepRecentToolResults` results. Moving the boundary there from where it is
//!
//! - is free when the provider's cache has expired: the request came more than
//!   `cacheLifetimeSeconds` after the previous one (the messages' timestamps say when each request
//!   was sent: right after its last message), so it is written whole whether or not it is cut;
//!   the same holds for the first request the fold sees (after a compaction the whole view is new);
//! - otherwise costs once: the request reads only the prefix the cache still serves (with a
//!   cache that serves any shared prefix, `cacheReadsAnyPrefix` as on OpenAI and Gemini, all of
//!   it before the first changed message; with Anthropic's, the longest one an earlier request
//!   wrote at a breakpoint (the end of each request, the last cut result) that ends before the
//!   first changed message and lies within its lookback of 20 content blocks from the
//!   request's breakpoint on its last cut result); the rest of the
//!   previous request is written again (less what the move saves there) instead of read, and what
//!   the move saves in the request's new part is not written. The changed messages are the newly
//!   cut results and the assistants whose thinking the thinking layer drops with them (a thinking
//!   block goes even when it holds no text: Codex keeps only encrypted reasoning). It saves, on
//!   each later request that reads the cache, the reads of every token it cut (`rest` requests).
//!   `rest` is learned from the session: the requests between two expiries so far (a *cache
//!   epoch*; a user who pauses between prompts ends one at each prompt) on average, less those of
//!   the current epoch, and at least an eighth of the current epoch (before the first expiry,
//!   only that), capped at an eighth of the requests in view; the saving must cover the cost one
//!   request before that (a run that ends a request early still does not lose). The boundary
//!   moves when it does.
//! - never reaches the results of the latest reply: the model has not read them yet (a reply may
//!   call more tools at once than `keepRecentToolResults`).
//!
//! Every earlier step of the fold reads only messages that are already in the view and never
//! change, so the boundary of a request is the boundary of the previous one or a later one: the
//! request prefix changes only at the requests where pruning pays or is free. A move deep in the
//! cached prefix pays only for a batch of results; a move that cuts only the result the previous
//! request ended with rewrites nothing but that result's kept lines and what follows it, which a
//! large result's reads outweigh at once: with `keepRecentToolResults` 1 large results are cut one
//! per request, at the request after the one that sent them whole. Without a cache (`cacheReadPercent` = `cacheWritePercent` = 100) any gain pays,
//! which is the plain rule.
//!
//! The cache's prices and rule are the current model's unless the settings name them (the engine
//! fills them in, `TransformSettings::with_cache_terms`); Anthropic's when neither says.
//!
//! Token numbers are the reference's chars/4 estimate, as everywhere in the transforms.

use std::collections::BTreeSet;

use ctxkit_protocol::AgentMessage;

use crate::TransformSettings;
use crate::view::{Slot, block_chars};

/// How far back from a breakpoint Anthropic's API looks for a cached prefix, in content blocks.
const LOOKBACK_BLOCKS: u64 = 20;

/// With no better estimate, a cache epoch `n` requests long is taken to go on for `n / 8` more.
const EPOCH_FLOOR_DIVISOR: u64 = 8;

/// Where the fold stands after the requests it has replayed.
#[derive(Default)]
struct Fold {
    /// Tool results cut so far (the boundary).
    pruned: usize,
    /// The previous request: the position after its last message and when it was sent.
    previous: Option<(usize, Option<i64>)>,
    /// Requests since the cache was last written whole (the current cache epoch), this one included.
    epoch_requests: u64,
    /// Completed epochs and the requests they held.
    epochs: u64,
    epoch_requests_total: u64,
    /// Requests replayed so far, this one included.
    requests: u64,
    /// Where the cache holds a prefix a later request can read: the position after each earlier
    /// request's last message (its last breakpoint) and after the boundary's last cut result
    /// (the breakpoint on the last pruned result), ascending.
    written: BTreeSet<usize>,
}

/// What cutting one tool result saves, in tokens: its own text, and (`pruneToolCalls`) its call's
/// long arguments, in the assistant message at the given position.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CutSaving {
    pub result: u64,
    pub call: Option<(usize, u64)>,
}

/// How many of the oldest tool results to cut under the "when it pays" rule; `savings[i]` is what
/// cutting the `i`-th tool result (from the oldest) saves.
pub(crate) fn paying_count(
    slots: &[Slot<'_>],
    savings: &[CutSaving],
    settings: &TransformSettings,
) -> usize {
    let keep = settings.keep_recent_tool_results;
    let total_results = slots
        .iter()
        .filter(|slot| matches!(slot.message.as_ref(), AgentMessage::ToolResult(_)))
        .count();
    if total_results <= keep {
        return 0;
    }
    let measures = Measures::of(slots, savings, settings);
    let lifetime_ms = i64::try_from(
        settings
            .cache_lifetime_seconds_or_default()
            .saturating_mul(1000),
    )
    .unwrap_or(i64::MAX);
    let mut fold = Fold::default();
    let mut results_seen = 0usize;
    // Tool results before the latest reply: the ones the model has read whole at least once.
    let mut results_read = 0usize;
    for (position, slot) in slots.iter().enumerate() {
        match slot.message.as_ref() {
            AgentMessage::ToolResult(_) => results_seen += 1,
            AgentMessage::Assistant(_) => results_read = results_seen,
            AgentMessage::User(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => {}
        }
        // A request was sent after this message: the next one is the reply, or this is the last.
        let ends_request = slots
            .get(position + 1)
            .is_none_or(|next| matches!(next.message.as_ref(), AgentMessage::Assistant(_)));
        if !ends_request {
            continue;
        }
        let time = slot.message.timestamp();
        let expired = match fold.previous {
            None => true,
            Some((_, previous_time)) => {
                lifetime_ms > 0
                    && matches!((previous_time, time), (Some(then), Some(now)) if now.saturating_sub(then) > lifetime_ms)
            }
        };
        if expired && fold.previous.is_some() {
            fold.epochs += 1;
            fold.epoch_requests_total += fold.epoch_requests;
            fold.epoch_requests = 0;
        }
        fold.epoch_requests += 1;
        fold.requests += 1;
        // The results of the latest reply are the ones the model is about to read: never cut
        // before it has (a reply may call many tools at once, more than `keep`).
        let candidate = results_seen.saturating_sub(keep).min(results_read);
        if candidate > fold.pruned {
            let previous_end = fold.previous.map_or(0, |(end, _)| end);
            let moved = measures.boundary_move(fold.pruned, candidate, previous_end);
            // After an expiry the request is written whole anyway: a cut costs nothing extra.
            let free = expired && fold.previous.is_some();
            if moved.first_changed.is_some()
                && (free || pays(&fold, &moved, candidate, &measures, settings))
            {
                fold.pruned = candidate;
            }
        }
        if expired {
            fold.written.clear();
        }
        let boundary_end = measures.block_end(fold.pruned);
        if boundary_end > 0 {
            fold.written.insert(boundary_end);
        }
        fold.written.insert(position + 1);
        fold.previous = Some((position + 1, time));
    }
    fold.pruned
}

impl<'a> Measures<'a> {
    fn of(slots: &[Slot<'_>], savings: &'a [CutSaving], settings: &TransformSettings) -> Self {
        let mut before = Vec::with_capacity(slots.len() + 1);
        let mut sum = 0u64;
        before.push(0);
        for slot in slots {
            sum += slot.tokens;
            before.push(sum);
        }
        let result_positions = slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| matches!(slot.message.as_ref(), AgentMessage::ToolResult(_)))
            .map(|(position, _)| position)
            .collect();
        let thinking = slots
            .iter()
            .map(|slot| match slot.message.as_assistant() {
                Some(assistant) if settings.drop_old_thinking => {
                    let chars: usize = assistant
                        .content
                        .iter()
                        .filter(|block| block.as_thinking().is_some())
                        .map(block_chars)
                        .sum();
                    let has_thinking = assistant
                        .content
                        .iter()
                        .any(|block| block.as_thinking().is_some());
                    has_thinking.then(|| (chars as u64).div_ceil(4))
                }
                Some(_) | None => None,
            })
            .collect();
        let mut blocks_before = Vec::with_capacity(slots.len() + 1);
        let mut blocks = 0u64;
        blocks_before.push(0);
        for slot in slots {
            blocks += content_blocks(&slot.message);
            blocks_before.push(blocks);
        }
        Self {
            before,
            result_positions,
            savings,
            thinking,
            blocks_before,
        }
    }
}

/// Content blocks of a message as Anthropic counts them for its cache lookback: an assistant's
/// and a user's blocks, one for anything else (the simulator's meter bills with the same count).
pub fn content_blocks(message: &AgentMessage) -> u64 {
    let count = match message {
        AgentMessage::Assistant(assistant) => assistant.content.len(),
        AgentMessage::User(user) => user.content.blocks().len(),
        AgentMessage::ToolResult(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => 1,
    };
    count.max(1) as u64
}

/// What moving the boundary changes in the request: the first message whose bytes change, and
/// the tokens it saves before the end of the previous request (in its cached part) and after it.
#[derive(Debug, Default, PartialEq, Eq)]
struct BoundaryMove {
    first_changed: Option<usize>,
    saved_in_previous: u64,
    saved_after: u64,
}

/// The view's numbers the fold reads, per message and per tool result.
struct Measures<'a> {
    /// `before[i]`: tokens of the messages before position `i`.
    before: Vec<u64>,
    /// Positions of the tool results, oldest first.
    result_positions: Vec<usize>,
    /// What cutting each tool result saves.
    savings: &'a [CutSaving],
    /// Thinking tokens of each message that the thinking layer drops behind the boundary (`None`
    /// when it is off or the message has no thinking block).
    thinking: Vec<Option<u64>>,
    /// `blocks_before[i]`: content blocks of the messages before position `i`, as Anthropic
    /// counts them for its lookback.
    blocks_before: Vec<u64>,
}

impl Measures<'_> {
    /// The position after the `count`-th tool result: the thinking layer's limit for that boundary.
    fn block_end(&self, count: usize) -> usize {
        count
            .checked_sub(1)
            .map_or(0, |last| self.result_positions[last] + 1)
    }

    /// Moving the boundary from `from` to `to` tool results, with the previous request ending
    /// before `previous_end`: the cut results, their cut calls and the assistants whose thinking
    /// goes with them.
    fn boundary_move(&self, from: usize, to: usize, previous_end: usize) -> BoundaryMove {
        let mut moved = BoundaryMove::default();
        // A result cut to no saving is left whole; a thinking block goes even when it holds no
        // text (Codex keeps only encrypted reasoning), and its removal changes the bytes.
        let mut change = |position: usize, saved: u64, changed: bool| {
            if !changed {
                return;
            }
            moved.first_changed = Some(
                moved
                    .first_changed
                    .map_or(position, |first| first.min(position)),
            );
            if position < previous_end {
                moved.saved_in_previous += saved;
            } else {
                moved.saved_after += saved;
            }
        };
        for index in from..to {
            let CutSaving { result, call } = self.savings[index];
            change(self.result_positions[index], result, result > 0);
            if let Some((position, saved)) = call {
                change(position, saved, saved > 0);
            }
        }
        for position in self.block_end(from)..self.block_end(to) {
            if let Some(saved) = self.thinking[position] {
                change(position, saved, true);
            }
        }
        moved
    }
}

/// Whether a boundary move pays at a request that reads the previous request's cache. Staying,
/// the request reads the previous request's part from the first changed message on; moving, it
/// writes that part less what the move saves there, writes less of its new part by what the move
/// saves there, and every later request that reads the cache reads all the saved tokens less.
fn pays(
    fold: &Fold,
    moved: &BoundaryMove,
    to: usize,
    measures: &Measures<'_>,
    settings: &TransformSettings,
) -> bool {
    let Some((previous_end, _)) = fold.previous else {
        return false;
    };
    let read = i128::from(settings.cache_read_percent_or_default());
    let write = i128::from(settings.cache_write_percent_or_default());
    let cached_span = moved
        .first_changed
        .filter(|first| *first < previous_end)
        .map_or(0, |first| {
            let read_until = if settings.cache_reads_any_prefix.unwrap_or(false) {
                first
            } else {
                readable(fold, first, to, measures)
            };
            measures.before[previous_end] - measures.before[read_until]
        });
    let rewritten = cached_span.saturating_sub(moved.saved_in_previous);
    let cost = write * i128::from(rewritten)
        - read * i128::from(cached_span)
        - write * i128::from(moved.saved_after);
    let gain = i128::from(moved.saved_in_previous + moved.saved_after);
    // Paid back one request before the expected end: a run that ends one request early (the
    // estimate is a guess from the session so far) still does not lose by the cut.
    let paying_requests = expected_rest(fold)
        .min(fold.requests / EPOCH_FLOOR_DIVISOR)
        .saturating_sub(1);
    read * gain * i128::from(paying_requests) >= cost
}

/// How much of a request whose first change is at `first_changed` the cache still serves once the
/// boundary is at `to` results: the longest prefix an earlier request wrote (`fold.written`) that
/// ends by the change and lies within Anthropic's lookback (20 content blocks) of the request's
/// breakpoint on its last cut result. A move across more than 20 blocks reads nothing from the
/// conversation (the system prompt and tools, not in the view, stay cached); the rule prices that,
/// as the provider bills it.
fn readable(fold: &Fold, first_changed: usize, to: usize, measures: &Measures<'_>) -> usize {
    let breakpoint_end = measures.block_end(to);
    fold.written
        .range(..=first_changed)
        .rev()
        .copied()
        .find(|end| {
            measures.blocks_before[breakpoint_end].saturating_sub(measures.blocks_before[*end])
                <= LOOKBACK_BLOCKS
        })
        .unwrap_or(0)
}

/// The requests expected to read the cache before it is next written whole, this one excluded:
/// what an average cache epoch of this session had left at this length (at least an eighth of
/// the current epoch); before any epoch ended, an eighth of the current one. The caller also caps
/// it at an eighth of the requests in view (a quarter of the tool results before Codex's replies,
/// which call many tools at once, showed that too long) and asks for the payback one request
/// early. Conservative on purpose: cutting too early costs a rewrite of the whole tail (1.15 input prices a token on
/// Anthropic), waiting too long only the reads of the uncut tokens (0.1).
fn expected_rest(fold: &Fold) -> u64 {
    let floor = fold.epoch_requests / EPOCH_FLOOR_DIVISOR;
    match fold.epoch_requests_total.checked_div(fold.epochs) {
        Some(mean) => mean.saturating_sub(fold.epoch_requests).max(floor),
        None => floor,
    }
}

#[cfg(test)]
#[path = "pays_tests.rs"]
mod tests;
