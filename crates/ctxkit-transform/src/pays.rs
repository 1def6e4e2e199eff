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
//! - otherwise costs once: the tokens from the first newly cut result to the end of the previous
//!   request (`rewritten`, counted after the cut) are written instead of read, and the cut tokens
//!   (`gain`) are no longer read: `write × rewritten − read × (rewritten + gain)`; and saves, on
//!   each later request that reads the cache, the reads of the cut tokens: `read × gain × rest`.
//!   `rest` is learned from the session: the requests between two expiries so far (a *cache
//!   epoch*; a user who pauses between prompts ends one at each prompt) on average, less those of
//!   the current epoch, and at least a quarter of the current epoch (before the first expiry, only
//!   that). The boundary moves when the saving is larger.
//!
//! Every earlier step of the fold reads only messages that are already in the view and never
//! change, so the boundary of a request is the boundary of the previous one or a later one: the
//! request prefix changes only at the requests where pruning pays or is free, by a whole batch of
//! results at once. Without a cache (`cacheReadPercent` = `cacheWritePercent` = 100) any gain pays,
//! which is the plain rule.
//!
//! Token numbers are the reference's chars/4 estimate, as everywhere in the transforms.

use ctxkit_protocol::AgentMessage;

use crate::TransformSettings;
use crate::view::Slot;

/// With no better estimate, a cache epoch `n` requests long is taken to go on for `n / 4` more.
const EPOCH_FLOOR_DIVISOR: u64 = 4;

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
}

/// How many of the oldest tool results to cut under the "when it pays" rule; `savings[i]` is what
/// cutting the `i`-th tool result (from the oldest) saves, in tokens.
pub(crate) fn paying_count(
    slots: &[Slot<'_>],
    savings: &[u64],
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
    let mut before = Vec::with_capacity(slots.len() + 1);
    let mut sum = 0u64;
    before.push(0);
    for slot in slots {
        sum += slot.tokens;
        before.push(sum);
    }
    let result_positions: Vec<usize> = slots
        .iter()
        .enumerate()
        .filter(|(_, slot)| matches!(slot.message.as_ref(), AgentMessage::ToolResult(_)))
        .map(|(position, _)| position)
        .collect();
    let lifetime_ms =
        i64::try_from(settings.cache_lifetime_seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
    let mut fold = Fold::default();
    let mut results_seen = 0usize;
    for (position, slot) in slots.iter().enumerate() {
        if matches!(slot.message.as_ref(), AgentMessage::ToolResult(_)) {
            results_seen += 1;
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
        let candidate = results_seen.saturating_sub(keep);
        if candidate > fold.pruned {
            let gain: u64 = savings[fold.pruned..candidate].iter().sum();
            // After an expiry the request is written whole anyway: a cut costs nothing extra.
            let free = expired && fold.previous.is_some();
            if gain > 0
                && (free
                    || pays(
                        &fold,
                        gain,
                        &before,
                        &result_positions,
                        results_seen,
                        settings,
                    ))
            {
                fold.pruned = candidate;
            }
        }
        fold.previous = Some((position + 1, time));
    }
    fold.pruned
}

/// Whether moving the boundary from `fold.pruned` (cutting `gain` tokens) pays at a request that
/// reads the previous request's cache.
fn pays(
    fold: &Fold,
    gain: u64,
    before: &[u64],
    result_positions: &[usize],
    results_seen: usize,
    settings: &TransformSettings,
) -> bool {
    let Some((previous_end, _)) = fold.previous else {
        return false;
    };
    let read = u128::from(settings.cache_read_percent);
    let write = u128::from(settings.cache_write_percent);
    let rewritten = before[previous_end.max(result_positions[fold.pruned])]
        .saturating_sub(before[result_positions[fold.pruned]])
        .saturating_sub(gain);
    let cost = (write * u128::from(rewritten)).saturating_sub(read * u128::from(rewritten + gain));
    let expected_rest = u128::from(expected_rest(fold)).min((results_seen / 4) as u128);
    read * u128::from(gain) * expected_rest >= cost
}

/// The requests expected to read the cache before it is next written whole, this one excluded:
/// what an average cache epoch of this session had left at this length (at least a quarter of
/// the current epoch); before any epoch ended, a quarter of the current one. The caller also caps
/// it at a quarter of the tool results in view (the estimate before issue 41's second round, which
/// no real session found too long on its own). Conservative on
/// purpose: cutting too early costs a rewrite of the whole tail (1.15 input prices a token on
/// Anthropic), waiting too long only the reads of the uncut tokens (0.1).
fn expected_rest(fold: &Fold) -> u64 {
    let floor = fold.epoch_requests / EPOCH_FLOOR_DIVISOR;
    match fold.epoch_requests_total.checked_div(fold.epochs) {
        Some(mean) => mean.saturating_sub(fold.epoch_requests).max(floor),
        None => floor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use crate::{TransformSettings, transform_context};

    /// One call: an assistant calling a tool and its result of `lines` lines.
    fn conversation(calls: usize, lines: usize) -> Vec<AgentMessage> {
        let mut messages = vec![user("task")];
        for index in 0..calls {
            let id = format!("c{index}");
            messages.push(assistant(vec![text("step"), call(&id)]));
            messages.push(tool_result(&id, &long_output(&id, lines)));
        }
        messages
    }

    fn pruned_at_each_call(calls: usize, settings: &TransformSettings) -> Vec<usize> {
        let messages = conversation(calls, 300);
        (1..=calls)
            .map(|call| {
                transform_context(&messages[..1 + 2 * call], settings, 0)
                    .report
                    .tool_results_pruned
            })
            .collect()
    }

    #[test]
    fn a_sixteen_call_run_is_never_pruned_under_the_default_cache_prices() {
        // Results of ~5 KB, as in issue 41's run: cutting them would rewrite more than it saves.
        let pruned = pruned_at_each_call(16, &TransformSettings::default());
        assert!(pruned.iter().all(|count| *count == 0), "{pruned:?}");
    }

    #[test]
    fn a_long_run_prunes_in_batches_and_the_boundary_only_moves_forward() {
        let pruned = pruned_at_each_call(120, &TransformSettings::default());
        assert!(*pruned.last().unwrap() > 60, "{pruned:?}");
        assert!(
            pruned.windows(2).all(|pair| pair[0] <= pair[1]),
            "{pruned:?}"
        );
        let batches: Vec<usize> = pruned
            .windows(2)
            .map(|pair| pair[1] - pair[0])
            .filter(|batch| *batch > 0)
            .collect();
        // Far fewer changes of the prefix than calls: batches of three results or more, the first
        // one large (everything old at once), never one result per call.
        assert!(batches.len() * 3 <= pruned.len(), "{pruned:?}");
        assert!(batches.iter().all(|batch| *batch >= 3), "{pruned:?}");
        assert!(batches[0] >= 10, "{pruned:?}");
    }

    #[test]
    fn without_a_cache_any_gain_pays_as_in_the_plain_rule() {
        let settings = TransformSettings {
            cache_read_percent: 100,
            cache_write_percent: 100,
            ..TransformSettings::default()
        };
        let plain = TransformSettings {
            prune_when_it_pays: false,
            ..TransformSettings::default()
        };
        assert_eq!(
            pruned_at_each_call(20, &settings),
            pruned_at_each_call(20, &plain)
        );
    }

    /// `message` stamped `at` (epoch ms).
    fn at(mut message: AgentMessage, time: i64) -> AgentMessage {
        match &mut message {
            AgentMessage::User(inner) => inner.timestamp = Some(time),
            AgentMessage::Assistant(inner) => inner.timestamp = Some(time),
            AgentMessage::ToolResult(inner) => inner.timestamp = Some(time),
            AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => {}
        }
        message
    }

    /// Two runs of `calls` calls, ten seconds apart, the second prompt `pause_ms` after the first
    /// run's last result.
    fn two_runs(calls: usize, pause_ms: i64) -> Vec<AgentMessage> {
        let mut messages = Vec::new();
        let mut clock = 1_000_000;
        for run in 0..2 {
            if run == 1 {
                clock += pause_ms;
            }
            messages.push(at(user("task"), clock));
            for index in 0..calls {
                let id = format!("r{run}c{index}");
                clock += 10_000;
                messages.push(at(assistant(vec![text("step"), call(&id)]), clock));
                messages.push(at(tool_result(&id, &long_output(&id, 300)), clock + 1_000));
            }
            clock += 10_000;
            messages.push(at(assistant(vec![text("done")]), clock));
        }
        messages
    }

    #[test]
    fn a_prompt_after_the_cache_expired_prunes_for_free() {
        let prompt = 1 + 2 * 12 + 1;
        let pruned = |pause_ms: i64, settings: &TransformSettings| {
            let messages = two_runs(12, pause_ms);
            transform_context(&messages[..=prompt], settings, 0)
                .report
                .tool_results_pruned
        };
        let defaults = TransformSettings::default();
        let keep = defaults.keep_recent_tool_results;
        // Ten seconds after the first run the cache is warm, and 12 calls never pay for a cut.
        assert_eq!(pruned(10_000, &defaults), 0);
        // 40 minutes later it has expired even with warming: the request is written whole anyway,
        // so every old result is cut at once.
        assert_eq!(pruned(40 * 60 * 1000, &defaults), 12 - keep);
        // Six minutes: warming may have kept it (the default), or not (warming off: 300 s).
        assert_eq!(pruned(6 * 60 * 1000, &defaults), 0);
        let no_warming = TransformSettings {
            cache_lifetime_seconds: 300,
            ..TransformSettings::default()
        };
        assert_eq!(pruned(6 * 60 * 1000, &no_warming), 12 - keep);
        let never = TransformSettings {
            cache_lifetime_seconds: 0,
            ..TransformSettings::default()
        };
        assert_eq!(pruned(40 * 60 * 1000, &never), 0);
        // Later requests of the run keep that boundary (the fold replays the same free request).
        let messages = two_runs(12, 40 * 60 * 1000);
        for end in prompt + 1..messages.len() {
            let later = transform_context(&messages[..end], &defaults, 0)
                .report
                .tool_results_pruned;
            assert!(later >= 12 - keep, "{end}: {later}");
        }
    }

    #[test]
    fn small_results_save_nothing_and_are_never_cut() {
        let messages = conversation(200, 3);
        let report = transform_context(&messages, &TransformSettings::default(), 0).report;
        assert_eq!(report.tool_results_pruned, 0);
    }
}
