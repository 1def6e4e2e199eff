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
//! the view, call by call (each tool result ends one call): at the call that has `t` results in view,
//! the candidate boundary is `t − keepRecentToolResults` results; moving the boundary there from
//! where it is
//!
//! - costs once: the tokens from the first newly cut result to the end of the previous request
//!   (`rewritten`, counted after the cut) are written instead of read, and the cut tokens (`gain`)
//!   are no longer read: `write × rewritten − read × (rewritten + gain)`;
//! - saves, on each later request, the reads of the cut tokens: `read × gain × expected_rest`, where
//!   the expected rest of the run is a quarter of the calls seen so far (a run already `t` calls
//!   long is taken to go on for `t / 4` more). The estimate is conservative on purpose: cutting too
//!   early costs a rewrite of the whole tail (1.15 input prices per token on Anthropic), waiting too
//!   long only the cache reads of the uncut tokens (0.1).
//!
//! The boundary moves when the saving is larger. Every earlier step of the fold reads only messages
//! that are already in the view and never change, so the boundary of a call is the boundary of the
//! previous call or a later one: the request prefix changes only at the calls where pruning pays, by
//! a whole batch of results at once. Without a cache (`cacheReadPercent` = `cacheWritePercent` =
//! 100) any gain pays, which is the plain rule.
//!
//! Token numbers are the reference's chars/4 estimate, as everywhere in the transforms.

use ctxkit_protocol::AgentMessage;

use crate::TransformSettings;
use crate::view::Slot;

/// The expected rest of a run is the calls seen so far divided by this.
const EXPECTED_REST_DIVISOR: usize = 4;

/// How many of the oldest tool results to cut under the "when it pays" rule; `savings[i]` is what
/// cutting the `i`-th tool result (from the oldest) saves, in tokens.
pub(crate) fn paying_count(
    slots: &[Slot<'_>],
    savings: &[u64],
    settings: &TransformSettings,
) -> usize {
    let results: Vec<usize> = slots
        .iter()
        .enumerate()
        .filter(|(_, slot)| matches!(slot.message.as_ref(), AgentMessage::ToolResult(_)))
        .map(|(position, _)| position)
        .collect();
    let keep = settings.keep_recent_tool_results;
    if results.len() <= keep {
        return 0;
    }
    let mut before = Vec::with_capacity(slots.len() + 1);
    let mut sum = 0u64;
    before.push(0);
    for slot in slots {
        sum += slot.tokens;
        before.push(sum);
    }
    let read = u128::from(settings.cache_read_percent);
    let write = u128::from(settings.cache_write_percent);
    let mut pruned = 0usize;
    for seen in (keep + 1)..=results.len() {
        let candidate = seen - keep;
        if candidate <= pruned || seen < 2 {
            continue;
        }
        let gain: u64 = savings[pruned..candidate].iter().sum();
        if gain == 0 {
            continue;
        }
        // The previous request ended with the previous call's result.
        let previous_end = results[seen - 2] + 1;
        let rewritten = before[previous_end]
            .saturating_sub(before[results[pruned]])
            .saturating_sub(gain);
        let cost =
            (write * u128::from(rewritten)).saturating_sub(read * u128::from(rewritten + gain));
        let expected_rest = (seen / EXPECTED_REST_DIVISOR) as u128;
        let saving = read * u128::from(gain) * expected_rest;
        if saving >= cost {
            pruned = candidate;
        }
    }
    pruned
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

    #[test]
    fn small_results_save_nothing_and_are_never_cut() {
        let messages = conversation(200, 3);
        let report = transform_context(&messages, &TransformSettings::default(), 0).report;
        assert_eq!(report.tool_results_pruned, 0);
    }
}
