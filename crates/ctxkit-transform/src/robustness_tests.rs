//! Generated views and settings, including degenerate ones: the transform never panics, never
//! changes its input, never leaves an orphan and never makes the view bigger than the input and the
//! error results that answer its calls left without one.

use ctxkit_protocol::AgentMessage;
use ctxkit_tokens::estimate_tokens;
use serde_json::{Value, json};

use crate::{
    MeasuredMessage, TransformSettings, repair_orphans, transform_context, transform_measured,
};

/// xorshift64*: deterministic, no dependency.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: u64) -> usize {
        (self.next() % bound.max(1)) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64)]
    }
}

const PIECES: [&str; 13] = [
    "a",
    "line\n",
    "\n",
    "ß",
    "€",
    "😀",
    "👩‍💻",
    "\r\n",
    "\u{301}",
    " ",
    " src/parser/lexer.rs ",
    " parse_config() ",
    " error[E0308] ",
];
const IDS: [&str; 7] = ["c1", "c2", "c3", "c4", "", "has space", "c]"];

fn text(random: &mut Random) -> String {
    let pieces = random.below(600);
    let mut text = String::new();
    for _ in 0..pieces {
        let piece = random.pick(&PIECES);
        let repeat = 1 + random.below(8);
        text.push_str(&piece.repeat(repeat));
    }
    text
}

fn block(random: &mut Random) -> Value {
    match random.below(6) {
        0 => json!({"type": "text", "text": text(random)}),
        1 => json!({"type": "thinking", "thinking": text(random)}),
        2 | 3 => json!({"type": "toolCall", "id": random.pick(&IDS), "name": "t",
                        "arguments": {"n": random.next() % 1000, "s": text(random)}}),
        4 => {
            json!({"type": "image", "data": "QUJD".repeat(random.below(50)), "mimeType": "image/png"})
        }
        _ => json!({"type": "mystery", "value": 1}),
    }
}

fn message(random: &mut Random) -> AgentMessage {
    let value = match random.below(9) {
        0 => json!({"role": "user", "content": text(random)}),
        1..=3 => {
            let blocks: Vec<Value> = (0..random.below(4)).map(|_| block(random)).collect();
            json!({"role": "assistant", "content": blocks})
        }
        4..=6 => {
            let content = if random.below(3) == 0 {
                json!(text(random))
            } else {
                Value::Array((0..random.below(4)).map(|_| block(random)).collect())
            };
            json!({"role": "toolResult", "toolCallId": random.pick(&IDS), "toolName": "t",
                   "content": content, "isError": false})
        }
        7 => json!({"role": "compactionSummary", "summary": text(random), "tokensBefore": 5}),
        _ => json!({"role": "somethingNew", "payload": text(random)}),
    };
    serde_json::from_value(value).unwrap()
}

/// Random messages, an assistant's calls often answered right after it as real turns are: a
/// result anywhere else answers no open call and is dropped before the layers that work on
/// results (pruning) see it.
fn random_conversation(random: &mut Random) -> Vec<AgentMessage> {
    let mut messages = Vec::new();
    for _ in 0..random.below(40) {
        let message = message(random);
        let calls: Vec<String> = message
            .as_assistant()
            .map(|reply| {
                reply
                    .content
                    .iter()
                    .filter_map(|block| Some(block.as_tool_call()?.id.clone()))
                    .collect()
            })
            .unwrap_or_default();
        messages.push(message);
        if random.below(3) != 0 {
            for id in calls {
                let content = Value::Array((0..random.below(4)).map(|_| block(random)).collect());
                let result = json!({"role": "toolResult", "toolCallId": id, "toolName": "t",
                    "content": content, "isError": false});
                messages.push(serde_json::from_value(result).unwrap());
            }
        }
    }
    messages
}

fn settings(random: &mut Random) -> TransformSettings {
    let mut flag = || random.below(2) == 0;
    let (prune_enabled, drop_old_thinking, window_enabled, cache_aware) =
        (flag(), flag(), flag(), flag());
    // Both prune rules: when it pays (the default) and at every call.
    let prune_when_it_pays = flag();
    TransformSettings {
        prune_enabled,
        prune_when_it_pays,
        keep_recent_tool_results: random.below(8),
        prune_min_chars: [0, 1, 50, 500, usize::MAX][random.below(5)],
        head_lines: [0, 1, 3, usize::MAX][random.below(4)],
        tail_lines: [0, 1, 2, usize::MAX][random.below(4)],
        head_chars: [0, 1, 200, usize::MAX][random.below(4)],
        tail_chars: [0, 1, 100, usize::MAX][random.below(4)],
        drop_old_thinking,
        window_enabled,
        window_threshold_percent: [0, 50, 75, 100, 1000, u64::MAX][random.below(6)],
        keep_last_messages: [0, 1, 5, 20, usize::MAX][random.below(5)],
        cache_aware,
        cache_block_size: [0, 1, 3, 8, usize::MAX][random.below(5)],
        prune_tool_calls: random.below(2) == 0,
        prune_digest_names: [0, 2, 12][random.below(3)],
        // The note is added by the engine's view, after the transforms.
        ..TransformSettings::default()
    }
}

#[test]
fn generated_views_keep_every_invariant() {
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    let mut totals = [0_usize; 5];
    for _ in 0..400 {
        let messages = random_conversation(&mut random);
        let settings = settings(&mut random);
        let context_window = [0, 1, 100, 5_000, u64::MAX][random.below(5)];
        let copy = messages.clone();
        let output = transform_context(&messages, &settings, context_window);
        assert_eq!(messages, copy);
        let report = output.report;
        assert_eq!(
            report.estimated_tokens_after,
            output.messages.iter().map(estimate_tokens).sum::<u64>()
        );
        // Only the answers to calls left without a result are added.
        let answers = answers(&output.messages);
        let answered: u64 = answers.iter().copied().map(estimate_tokens).sum();
        assert!(
            report.estimated_tokens_after <= report.estimated_tokens_before + answered,
            "{report:?}"
        );
        assert_eq!(repair_orphans(output.messages.clone()).1, 0, "{settings:?}");
        assert!(output.messages.len() <= messages.len() + answers.len());
        assert!(answers.len() <= report.orphans_repaired);
        for (total, count) in totals.iter_mut().zip([
            report.tool_results_pruned,
            report.thinking_blocks_dropped,
            report.empty_assistants_dropped,
            report.messages_dropped_by_window,
            report.orphans_repaired,
        ]) {
            *total += count;
        }
    }
    // Every layer had work in some of the generated cases.
    assert!(totals.iter().all(|&total| total > 0), "{totals:?}");
}

/// The measured transform is the plain one: every view of a growing conversation (each view a
/// prefix, as an export's views are), its messages shared between views and measured under two
/// settings in turn.
#[test]
fn measured_views_are_the_plain_views() {
    let mut random = Random(0xD1B5_4A32_D192_ED03);
    let (mut pruned, mut cut_calls, mut views) = (0, 0, 0);
    for _ in 0..12 {
        let messages = conversation(&mut random);
        let shared: Vec<std::sync::Arc<MeasuredMessage>> = messages
            .iter()
            .map(|message| std::sync::Arc::new(MeasuredMessage::new(message.clone())))
            .collect();
        // Settings that differ in what a cut keeps, so a measure taken under one is wrong under
        // the other.
        let first = settings(&mut random);
        let other = TransformSettings {
            prune_min_chars: [0, 50, usize::MAX][random.below(3)],
            head_lines: [0, 2][random.below(2)],
            head_chars: [10, 300][random.below(2)],
            prune_digest_names: [0, 4][random.below(2)],
            ..first.clone()
        };
        let both = [first, other];
        let context_window = [0, 100, 5_000, u64::MAX][random.below(4)];
        for end in 0..=messages.len() {
            let settings = &both[random.below(2)];
            let plain = transform_context(&messages[..end], settings, context_window);
            let view = transform_measured(&shared[..end], settings, context_window);
            // A borrowed message is its input message, as it is; a changed one keeps its identity;
            // a synthetic answer follows the reply whose call it answers, with its origin.
            assert!(view.origins.windows(2).all(|pair| pair[0] <= pair[1]));
            for (at, (message, origin)) in view.messages.iter().zip(&view.origins).enumerate() {
                let input = shared[*origin].message();
                let follows_its_input = at > 0 && view.origins[at - 1] == *origin;
                match message {
                    std::borrow::Cow::Borrowed(message) => {
                        assert!(std::ptr::eq(input, *message));
                        assert!(!follows_its_input);
                    }
                    std::borrow::Cow::Owned(message) if follows_its_input => {
                        assert!(is_answer_to(message, input), "{message:?}");
                    }
                    std::borrow::Cow::Owned(message) => {
                        assert_eq!(message.role(), input.role());
                        assert_eq!(message.timestamp(), input.timestamp());
                    }
                }
            }
            let measured = view.into_output();
            assert_eq!(measured, plain, "{settings:?}");
            pruned += plain.report.tool_results_pruned;
            cut_calls += plain.report.tool_calls_cut;
            views += 1;
        }
    }
    assert!(
        pruned > 100 && cut_calls > 10,
        "{pruned} {cut_calls} {views}"
    );
}

/// Whether `message` is the synthetic error result answering one of `reply`'s calls.
fn is_answer_to(message: &AgentMessage, reply: &AgentMessage) -> bool {
    let (Some(result), Some(reply)) = (message.as_tool_result(), reply.as_assistant()) else {
        return false;
    };
    result.is_error
        && result.content.joined_text("") == ctxkit_protocol::NO_TOOL_RESULT
        && result.timestamp == reply.timestamp
        && reply.content.iter().any(|block| {
            block
                .as_tool_call()
                .is_some_and(|call| call.id == result.tool_call_id && call.name == result.tool_name)
        })
}

/// The synthetic error results of a view (orphan repair's answers to calls left without one).
fn answers(messages: &[AgentMessage]) -> Vec<&AgentMessage> {
    messages
        .iter()
        .filter(|message| {
            message.as_tool_result().is_some_and(|result| {
                result.is_error && result.content.joined_text("") == ctxkit_protocol::NO_TOOL_RESULT
            })
        })
        .collect()
}

/// A well-formed run: a task, then turns of an assistant (thinking, text, one to three calls with
/// unique ids) and its results; now and then a generated message of any kind.
fn conversation(random: &mut Random) -> Vec<AgentMessage> {
    let mut messages =
        vec![serde_json::from_value(json!({"role": "user", "content": text(random)})).unwrap()];
    for turn in 0..random.below(30) {
        let calls: Vec<String> = (0..1 + random.below(3))
            .map(|call| format!("t{turn}_{call}"))
            .collect();
        let mut blocks = Vec::new();
        if random.below(2) == 0 {
            blocks.push(json!({"type": "thinking", "thinking": text(random)}));
        }
        blocks.push(json!({"type": "text", "text": text(random)}));
        blocks.extend(calls.iter().map(|id| {
            json!({"type": "toolCall", "id": id, "name": "t", "arguments": {"path": "src/a.rs", "s": named_text(random)}})
        }));
        messages
            .push(serde_json::from_value(json!({"role": "assistant", "content": blocks})).unwrap());
        for id in &calls {
            let mut content = vec![json!({"type": "text", "text": named_text(random)})];
            if random.below(5) == 0 {
                content.push(json!({"type": "image", "data": "QUJD".repeat(random.below(50)), "mimeType": "image/png"}));
            }
            messages.push(
                serde_json::from_value(json!({"role": "toolResult", "toolCallId": id,
                "toolName": "t", "content": content, "isError": false}))
                .unwrap(),
            );
        }
        if random.below(6) == 0 {
            messages.push(message(random));
        }
    }
    messages
}

/// Lines naming files and functions out of a few dozen, so one result's names recur in others
/// (a digest leaves out what an earlier message shows).
fn named_text(random: &mut Random) -> String {
    (0..random.below(80))
        .map(|_| {
            let (file, line, function) = (random.below(40), random.below(900), random.below(40));
            format!(
                "src/mod_{file}.rs:{line}: in handler_{function} {}\n",
                text(random).len()
            )
        })
        .collect()
}
