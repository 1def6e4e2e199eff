//! Time to prepare the model's view of a 1000-message context with every layer on (the engine runs
//! this before each model call), in plain and cache-aware mode and with the sliding window active,
//! next to the cost of only estimating or only cloning the same view.
//!
//! Two generated sessions of 1000 messages: `typical` (tool results of 4–60 lines, ~0.7 MB, about
//! 190k estimated tokens: a context near a 200k window) and `heavy` (results of 4–250 lines, ~3.3 MB).
//!
//! `transform_recommended` runs the transforms of `"contextStrategy": "recommended"` (every result
//! but the latest cut, each marker with a digest of the names its omitted text held) on the same
//! sessions and on `long`: 1500 messages, 500 tool results, of which 499 are cut (~1.2 MB).
//!
//! Run: `cargo bench -p ctxkit-transform --bench transform`.

use std::sync::LazyLock;

use ctxkit_protocol::AgentMessage;
use ctxkit_settings::TransformSettings;
use ctxkit_tokens::estimate_tokens;
use ctxkit_transform::{repair_orphans, transform_context};
use divan::Bencher;
use serde_json::{Value, json};

fn main() {
    divan::main();
}

const SESSIONS: [&str; 2] = ["typical", "heavy"];

/// Tool-call arguments of the `turn`-th call: reads, shell commands and edits in turn.
fn arguments(turn: usize) -> (&'static str, Value) {
    match turn % 3 {
        0 => (
            "read",
            json!({"path": format!("src/parser/module_{turn}.rs"), "offset": 1, "limit": 400}),
        ),
        1 => (
            "bash",
            json!({"command": format!("cargo test -p parser module_{turn} -- --nocapture"), "timeout": 120}),
        ),
        _ => (
            "edit",
            json!({"path": format!("src/parser/module_{turn}.rs"),
                   "oldText": "let value = parse(tokens)?;", "newText": "let value = parse_expression(tokens, Precedence::Lowest)?;"}),
        ),
    }
}

/// A coding session: one task, then turns of an assistant (thinking, text, one tool call) and its
/// result, with a user message every tenth turn; 1000 messages.
fn session(result_lines: [usize; 4]) -> Vec<AgentMessage> {
    session_of(1000, result_lines)
}

/// [`session`] with `length` messages.
fn session_of(length: usize, result_lines: [usize; 4]) -> Vec<AgentMessage> {
    let mut values = vec![
        json!({"role": "user", "content": "Refactor the parser module and keep the tests green."}),
    ];
    let mut turn: usize = 0;
    while values.len() < length {
        let id = format!("toolu_{turn:04}");
        let (name, arguments) = arguments(turn);
        let timestamp = 1_700_000_000_000_u64 + turn as u64;
        values.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Let me look at the next file and check how the parser handles it. ".repeat(6), "thinkingSignature": "c2lnbmF0dXJl".repeat(20)},
            {"type": "text", "text": "Reading the next file to see how errors are reported."},
            {"type": "toolCall", "id": id, "name": name, "arguments": arguments}
        ], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
           "usage": {"input": 1000, "output": 200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1200},
           "stopReason": "toolUse", "timestamp": timestamp}));
        let lines = result_lines[turn % 4];
        let output: String = (0..lines)
            .map(|line| format!("{line:>5}\tlet value_{line} = parse_expression(&mut tokens, Precedence::Lowest)?;\n"))
            .collect();
        values.push(json!({"role": "toolResult", "toolCallId": id, "toolName": name,
            "content": [{"type": "text", "text": output}], "isError": false, "timestamp": timestamp}));
        if turn % 10 == 9 {
            values.push(json!({"role": "user", "content": "Good, continue with the next module."}));
        }
        turn += 1;
    }
    values.truncate(length);
    values
        .into_iter()
        .filter_map(|value| serde_json::from_value(value).ok())
        .collect()
}

static TYPICAL: LazyLock<Vec<AgentMessage>> = LazyLock::new(|| session([4, 10, 25, 60]));
static HEAVY: LazyLock<Vec<AgentMessage>> = LazyLock::new(|| session([4, 25, 100, 250]));
static LONG: LazyLock<Vec<AgentMessage>> = LazyLock::new(|| session_of(1500, [4, 10, 25, 60]));

fn messages(name: &str) -> &'static [AgentMessage] {
    match name {
        "heavy" => &HEAVY,
        "long" => &LONG,
        _ => &TYPICAL,
    }
}

fn bench_transform(bencher: Bencher, name: &str, settings: TransformSettings, context_window: u64) {
    let messages = messages(name);
    bencher.bench(|| transform_context(divan::black_box(messages), &settings, context_window));
}

#[divan::bench(args = SESSIONS)]
fn transform_plain(bencher: Bencher, name: &str) {
    bench_transform(bencher, name, TransformSettings::default(), 200_000);
}

#[divan::bench(args = SESSIONS)]
fn transform_cache_aware(bencher: Bencher, name: &str) {
    let settings = TransformSettings {
        cache_aware: true,
        ..TransformSettings::default()
    };
    bench_transform(bencher, name, settings, 200_000);
}

/// The recommended strategy's transforms: the digest in every marker.
#[divan::bench(args = ["typical", "heavy", "long"])]
fn transform_recommended(bencher: Bencher, name: &str) {
    let settings = ctxkit_settings::Settings::recommended().transforms;
    bench_transform(bencher, name, settings, 200_000);
}

/// A 32k window: the sliding window drops most of the history as well.
#[divan::bench(args = SESSIONS)]
fn transform_with_window(bencher: Bencher, name: &str) {
    bench_transform(bencher, name, TransformSettings::default(), 32_000);
}

/// Baseline: estimating every message once, which the report needs anyway.
#[divan::bench(args = SESSIONS)]
fn estimate_only(bencher: Bencher, name: &str) {
    let messages = messages(name);
    bencher.bench(|| {
        divan::black_box(messages)
            .iter()
            .map(estimate_tokens)
            .sum::<u64>()
    });
}

/// Baseline: cloning the whole view, what any owned output costs without transforms.
#[divan::bench(args = SESSIONS)]
fn clone_only(bencher: Bencher, name: &str) {
    let messages = messages(name);
    bencher.bench(|| divan::black_box(messages).to_vec());
}

/// Orphan repair of an owned, consistent view (the fast path).
#[divan::bench(args = SESSIONS)]
fn repair_only(bencher: Bencher, name: &str) {
    let messages = messages(name);
    bencher
        .with_inputs(|| messages.to_vec())
        .bench_values(repair_orphans);
}
