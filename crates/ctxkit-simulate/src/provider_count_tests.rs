//! The provider's count a real session recorded, and what it changes in a replay.

use std::time::Instant;

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, JsonObject, MessageContent, ToolCall, Usage,
    UserMessage,
};
use ctxkit_tokens::estimate_tokens;

use super::provider_count::ProviderCount;
use super::session::{Responses, session_trace};
use super::{SimulateOptions, SimulationReport, Strategy, Timing, replay_all};

/// Model calls of the session: one run, so the agent loop checks between its tool calls.
const CALLS: usize = 40;
/// Small enough that 40 results of ~2,700 characters overflow it.
const WINDOW: u64 = 16_000;

fn reply(call: usize, counted: Option<u64>) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![
            ContentBlock::text(format!("Next: look at module_{call}.")),
            ContentBlock::ToolCall(ToolCall {
                id: format!("call_{call}"),
                name: "bash".to_owned(),
                arguments: serde_json::json!({"command": "cargo test"}),
                extra: JsonObject::new(),
            }),
        ],
        api: Some("anthropic-messages".to_owned()),
        provider: Some("anthropic".to_owned()),
        model: Some("claude-sonnet-4-5".to_owned()),
        usage: counted.map(|input| Usage {
            input,
            output: 20,
            total_tokens: input + 20,
            ..Usage::default()
        }),
        stop_reason: Some("toolUse".to_owned()),
        error_message: None,
        timestamp: None,
        extra: JsonObject::new(),
    })
}

fn result(call: usize) -> AgentMessage {
    let mut text = format!("src/area_{call}/module_{call}.rs:12: pub fn handle_{call}() {{\n");
    for line in 0..40 {
        text.push_str(&format!("{line:>3} | processing a batch of records\n"));
    }
    super::session_tests::result(&format!("call_{call}"), &text)
}

/// A session whose replies recorded `overhead` plus `ratio` times ctxkit's estimate of the request
/// (the provider's count with a system prompt of `overhead` tokens); `None`: no usage.
fn session(count: Option<(f64, u64)>) -> Vec<AgentMessage> {
    let mut messages = vec![AgentMessage::User(UserMessage {
        content: MessageContent::Text("Find why the nightly job is slow.".to_owned()),
        timestamp: None,
        extra: JsonObject::new(),
    })];
    for call in 0..CALLS {
        let estimated: u64 = messages.iter().map(estimate_tokens).sum();
        let counted =
            count.map(|(ratio, overhead)| overhead + (estimated as f64 * ratio).round() as u64);
        messages.push(reply(call, counted));
        messages.push(result(call));
    }
    messages
}

fn replayed(count: Option<(f64, u64)>, strategies: &[Strategy]) -> SimulationReport {
    let trace = session_trace(session(count), Responses::OneMessageEach);
    let options = SimulateOptions {
        context_window: WINDOW,
        strategies: strategies.to_vec(),
        parallel: false,
        ..SimulateOptions::default()
    };
    let mut report = replay_all(&trace, &options, Instant::now(), None, None).unwrap();
    for strategy in &mut report.strategies {
        strategy.timing = Timing::default();
    }
    report
}

#[test]
fn the_ratio_is_taken_on_growth_so_the_unrecorded_system_prompt_does_not_count() {
    let trace = session_trace(session(Some((1.5, 4_000))), Responses::OneMessageEach);
    let count = ProviderCount::of(&trace).unwrap();
    assert!((count.ratio - 1.5).abs() < 0.01, "{count:?}");
    assert_eq!(count.pairs, CALLS - 1);
    assert!(count.whole_request_ratio > 1.6, "{count:?}");
}

#[test]
fn no_usage_or_usage_that_never_grows_shows_no_ratio() {
    let trace = session_trace(session(None), Responses::OneMessageEach);
    assert_eq!(ProviderCount::of(&trace), None);
    let flat = session(None)
        .into_iter()
        .enumerate()
        .map(|(index, message)| {
            if message.as_assistant().is_some() {
                reply(index, Some(10))
            } else {
                message
            }
        })
        .collect();
    let trace = session_trace(flat, Responses::OneMessageEach);
    assert_eq!(ProviderCount::of(&trace), None);
}

#[test]
fn a_ratio_above_what_the_engine_believes_is_reported_and_not_used() {
    let count = session_trace(session(Some((6.0, 0))), Responses::OneMessageEach);
    let count = ProviderCount::of(&count).unwrap();
    assert!(count.ratio > 5.9 && !count.believed, "{count:?}");
    let strategies = [Strategy::Defaults];
    let unbelieved = replayed(Some((6.0, 0)), &strategies);
    assert_eq!(
        unbelieved.strategies,
        replayed(None, &strategies).strategies
    );
}

#[test]
fn a_pair_whose_count_shrank_is_left_out() {
    let mut messages = session(Some((1.2, 0)));
    // The source cleared old tool results before call 20: its count fell.
    if let AgentMessage::Assistant(reply) = &mut messages[1 + 2 * 20] {
        reply.usage.as_mut().unwrap().input = 100;
        reply.usage.as_mut().unwrap().total_tokens = 120;
    }
    let count = ProviderCount::of(&session_trace(messages, Responses::OneMessageEach)).unwrap();
    // Call 20 to 21 grew from 100: counted, and over 1.2; 19 to 20 shrank: left out.
    assert_eq!(count.pairs, CALLS - 2);
}

#[test]
fn usage_above_the_estimate_compacts_earlier_and_never_overflows() {
    // (The reference compaction keeps 20,000 recent tokens, more than this window holds: it
    // compacts only on an overflow, here and on usage that matches.)
    let strategies = [Strategy::Defaults, Strategy::NoManagement];
    let matching = replayed(Some((1.0, 0)), &strategies);
    let over = replayed(Some((1.5, 0)), &strategies);
    assert_eq!(matching.trace.provider_count.unwrap().ratio, 1.0);
    for (matched, counted) in matching.strategies.iter().zip(&over.strategies) {
        let name = matched.name;
        if matched.strategy == Strategy::NoManagement {
            // Unmanaged, the provider refuses more of the same requests.
            assert!(counted.overflows > matched.overflows, "{name}");
            continue;
        }
        assert_eq!(
            (matched.overflows, counted.overflows),
            (0, 0),
            "{name}: the threshold learns the provider's count"
        );
        let compactions = |report: &crate::StrategyReport| report.compactions.threshold;
        assert!(
            compactions(counted) > compactions(matched),
            "{name}: {:?} against {:?}",
            counted.compactions,
            matched.compactions
        );
        // Earlier compactions: the largest request, in ctxkit's estimate, is smaller.
        assert!(
            counted.input_tokens.max < matched.input_tokens.max,
            "{name}: {} against {}",
            counted.input_tokens.max,
            matched.input_tokens.max
        );
    }
}

#[test]
fn usage_that_matches_the_estimate_replays_as_no_usage_does() {
    let strategies = [Strategy::Defaults, Strategy::ReferenceCompaction];
    let matching = replayed(Some((1.0, 0)), &strategies);
    let unrecorded = replayed(None, &strategies);
    assert_eq!(unrecorded.trace.provider_count, None);
    assert_eq!(matching.strategies, unrecorded.strategies);
}
