//! The pruning rule's tests: when cuts pay under each cache's terms.

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
fn a_cache_without_a_write_fee_that_serves_any_prefix_is_cut_sooner() {
    // OpenAI's terms: a cut rewrites at the input price and the cache still serves everything
    // before it, so a cut pays earlier than under Anthropic's fee and lookback.
    let openai = TransformSettings {
        cache_read_percent: Some(10),
        cache_write_percent: Some(100),
        cache_reads_any_prefix: Some(true),
        ..TransformSettings::default()
    };
    let first_cut = |pruned: &[usize]| pruned.iter().position(|count| *count > 0);
    let anthropic = pruned_at_each_call(120, &TransformSettings::default());
    let prefix = pruned_at_each_call(120, &openai);
    let (anthropic_first, prefix_first) = (first_cut(&anthropic), first_cut(&prefix));
    assert!(prefix_first.is_some(), "{prefix:?}");
    assert!(prefix_first < anthropic_first, "{prefix:?}\n{anthropic:?}");
    assert!(
        prefix.windows(2).all(|pair| pair[0] <= pair[1]),
        "{prefix:?}"
    );
}

#[test]
fn without_a_cache_any_gain_pays_as_in_the_plain_rule() {
    let settings = TransformSettings {
        cache_read_percent: Some(100),
        cache_write_percent: Some(100),
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
        cache_lifetime_seconds: Some(300),
        ..TransformSettings::default()
    };
    assert_eq!(pruned(6 * 60 * 1000, &no_warming), 12 - keep);
    let never = TransformSettings {
        cache_lifetime_seconds: Some(0),
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
fn the_results_of_the_latest_reply_are_never_cut_and_thinking_counts_as_a_change() {
    // One reply calling twelve tools at once (Codex and Claude Code do), after a long run: the
    // twelve results are what the model reads next, whatever `keepRecentToolResults` says.
    let mut messages = conversation(120, 300);
    let calls: Vec<String> = (0..12).map(|index| format!("p{index}")).collect();
    let mut content = vec![thinking(""), text("reading them all")];
    content.extend(calls.iter().map(|id| call(id)));
    messages.push(assistant(content));
    for id in &calls {
        messages.push(tool_result(id, &long_output(id, 300)));
    }
    let settings = TransformSettings::default();
    let pruned = transform_context(&messages, &settings, 0)
        .report
        .tool_results_pruned;
    assert!(pruned <= 120, "{pruned}");
    // A thinking block with no text (encrypted reasoning only) still changes the message it
    // is dropped from.
    let slots: Vec<Slot<'_>> = messages.iter().map(Slot::borrowed).collect();
    let savings = vec![CutSaving::default(); 120];
    let measures = Measures::of(&slots, &savings, &settings);
    let reply = messages.len() - 13;
    assert_eq!(measures.thinking[reply], Some(0));
    // Moving the boundary past such a reply's result changes the request at the reply, even
    // when cutting the result itself saves nothing.
    let short = [
        user("task"),
        assistant(vec![thinking(""), call("c0")]),
        tool_result("c0", "ok"),
        assistant(vec![text("done")]),
    ];
    let slots: Vec<Slot<'_>> = short.iter().map(Slot::borrowed).collect();
    let savings = [CutSaving::default()];
    let measures = Measures::of(&slots, &savings, &settings);
    let moved = measures.boundary_move(0, 1, 3);
    assert_eq!(moved.first_changed, Some(1));
}

#[test]
fn small_results_save_nothing_and_are_never_cut() {
    let messages = conversation(200, 3);
    let report = transform_context(&messages, &TransformSettings::default(), 0).report;
    assert_eq!(report.tool_results_pruned, 0);
}

#[test]
fn any_cache_terms_a_settings_file_can_hold_decide_without_overflow() {
    // A cloned project may set the terms (they run nothing and send nothing): the extremes of
    // the type still give a boundary, never an overflow.
    for (read, write) in [(0, 0), (u64::MAX, u64::MAX), (0, u64::MAX), (u64::MAX, 0)] {
        let settings = TransformSettings {
            cache_read_percent: Some(read),
            cache_write_percent: Some(write),
            cache_reads_any_prefix: Some(read % 2 == 0),
            ..TransformSettings::default()
        };
        let pruned = pruned_at_each_call(40, &settings);
        assert!(
            pruned.windows(2).all(|pair| pair[0] <= pair[1]),
            "{pruned:?}"
        );
    }
}

#[test]
fn keeping_one_result_a_large_result_is_cut_at_the_next_call() {
    // The recommended strategy keeps one result whole: the result the model has just read is the
    // end of the cached prefix, so cutting it at the next call rewrites only what follows it (its
    // reply's few tokens and the kept head and tail) and no longer reads it — that pays at once,
    // one result per call, under Anthropic's terms and OpenAI's alike.
    let keep_one = |terms: TransformSettings| TransformSettings {
        keep_recent_tool_results: 1,
        ..terms
    };
    let openai = TransformSettings {
        cache_read_percent: Some(10),
        cache_write_percent: Some(100),
        cache_reads_any_prefix: Some(true),
        ..TransformSettings::default()
    };
    for settings in [keep_one(TransformSettings::default()), keep_one(openai)] {
        let pruned = pruned_at_each_call(12, &settings);
        assert_eq!(pruned, (0..12).collect::<Vec<_>>(), "{settings:?}");
    }
    // A small result saves less than the tail it would rewrite: it is left whole.
    let messages = conversation(12, 8);
    let small = transform_context(&messages, &keep_one(TransformSettings::default()), 0);
    assert_eq!(small.report.tool_results_pruned, 0);
}
