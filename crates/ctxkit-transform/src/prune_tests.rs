//! The prune layer's tests: which results are cut, how, and what the cut saves.

use super::*;
use crate::pruned_reference;
use crate::test_support::*;
use serde_json::json;

/// A conversation of `count` tool calls, each answered by a long result.
fn conversation(count: usize) -> Vec<AgentMessage> {
    let mut messages = vec![user("task")];
    for index in 0..count {
        let id = format!("c{index}");
        messages.push(assistant(vec![text("step"), call(&id)]));
        messages.push(tool_result(&id, &long_output(&id, 100)));
    }
    messages
}

fn prune(
    messages: &[AgentMessage],
    settings: &TransformSettings,
) -> (Vec<AgentMessage>, PruneOutcome) {
    let mut view = slots(messages);
    let block = prune_block(&view, settings);
    let outcome = prune_tool_results(&mut view, block, settings);
    (unslot(view), outcome)
}

#[test]
fn keeps_the_six_most_recent_results_whole() {
    let messages = conversation(10);
    let (pruned, outcome) = prune(&messages, &plain());
    assert_eq!(outcome.tool_results_pruned, 4);
    assert_eq!(pruned.len(), messages.len());
    for (index, (before, after)) in messages.iter().zip(&pruned).enumerate() {
        let AgentMessage::ToolResult(result) = before else {
            assert_eq!(before, after, "message {index} is not a tool result");
            continue;
        };
        let ordinal: usize = result.tool_call_id[1..].parse().unwrap();
        if ordinal >= 4 {
            assert_eq!(before, after, "recent result {ordinal} is whole");
        } else {
            let text = output_text(after);
            assert_eq!(pruned_reference(&text), Some(result.tool_call_id.as_str()));
            let id = &result.tool_call_id;
            // 100 lines of `line N of cK\n`: lines 3..=97 are omitted.
            let omitted: usize = (3..98)
                .map(|line| format!("line {line} of {id}\n").len())
                .sum();
            let expected = format!(
                "line 0 of {id}\nline 1 of {id}\nline 2 of {id}\n[... 95 lines ({omitted} chars) omitted; full output: ctxkit://tool-result/{id}]\nline 98 of {id}\nline 99 of {id}\n"
            );
            assert_eq!(text, expected);
        }
    }
}

#[test]
fn reports_characters_saved() {
    let messages = conversation(7);
    let (pruned, outcome) = prune(&messages, &plain());
    let before = output_text(&messages[2]).chars().count();
    let after = output_text(&pruned[2]).chars().count();
    assert_eq!(outcome.chars_saved, (before - after) as u64);
    assert_eq!(outcome.tool_results_pruned, 1);
}

#[test]
fn tool_calls_and_other_fields_are_untouched() {
    let messages = conversation(8);
    let (pruned, _) = prune(&messages, &plain());
    for (before, after) in messages.iter().zip(&pruned) {
        match (before, after) {
            (AgentMessage::ToolResult(before), AgentMessage::ToolResult(after)) => {
                assert_eq!(before.tool_call_id, after.tool_call_id);
                assert_eq!(before.tool_name, after.tool_name);
                assert_eq!(before.timestamp, after.timestamp);
                assert_eq!(before.is_error, after.is_error);
            }
            (before, after) => assert_eq!(before, after),
        }
    }
    let AgentMessage::Assistant(first) = &pruned[1] else {
        panic!("expected an assistant")
    };
    let ContentBlock::ToolCall(tool_call) = &first.content[1] else {
        panic!("expected a tool call")
    };
    assert_eq!(
        tool_call.arguments,
        json!({"path": "src/c0.rs", "limit": 10})
    );
}

#[test]
fn short_results_and_unreferenceable_ids_stay_whole() {
    let mut messages = vec![user("task")];
    for id in ["short", "has space", "c1", "c2"] {
        messages.push(assistant(vec![call(id)]));
        let output = if id == "short" {
            "ok".to_owned()
        } else {
            long_output(id, 50)
        };
        messages.push(tool_result(id, &output));
    }
    let settings = TransformSettings {
        keep_recent_tool_results: 1,
        ..plain()
    };
    let (pruned, outcome) = prune(&messages, &settings);
    assert_eq!(outcome.tool_results_pruned, 1);
    assert_eq!(pruned[2], messages[2]);
    assert_eq!(pruned[4], messages[4]);
    assert_ne!(pruned[6], messages[6]);
    assert_eq!(pruned[8], messages[8]);
}

#[test]
fn images_of_old_results_become_markers() {
    let messages = vec![
        user("task"),
        assistant(vec![call("shot")]),
        tool_result_blocks(
            "shot",
            vec![
                text("screenshot taken"),
                json!({"type": "image", "data": "A".repeat(4000), "mimeType": "image/png"}),
            ],
        ),
        assistant(vec![call("recent")]),
        tool_result_blocks(
            "recent",
            vec![json!({"type": "image", "data": "B".repeat(4000), "mimeType": "image/png"})],
        ),
    ];
    let settings = TransformSettings {
        keep_recent_tool_results: 1,
        ..plain()
    };
    let (pruned, outcome) = prune(&messages, &settings);
    let marker = "[image omitted (image/png); full output: ctxkit://tool-result/shot]";
    assert_eq!(
        pruned[2],
        tool_result_blocks("shot", vec![text("screenshot taken"), text(marker)])
    );
    assert_eq!(pruned[4], messages[4]);
    assert_eq!(outcome.tool_results_pruned, 1);
    assert_eq!(outcome.chars_saved, (4000 - marker.chars().count()) as u64);
}

#[test]
fn several_text_blocks_are_cut_as_one_text() {
    let first = long_output("a", 40);
    let second = long_output("b", 40);
    let messages = vec![
        user("task"),
        assistant(vec![call("m")]),
        tool_result_blocks(
            "m",
            vec![text(&first), json!({"type": "audio"}), text(&second)],
        ),
    ];
    let settings = TransformSettings {
        keep_recent_tool_results: 0,
        ..plain()
    };
    let (pruned, _) = prune(&messages, &settings);
    let AgentMessage::ToolResult(result) = &pruned[2] else {
        panic!("expected a tool result")
    };
    let blocks = result.content.blocks();
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    let joined = format!("{first}\n{second}");
    let cut = crate::cut::cut_text(&joined, "m", &settings).unwrap();
    assert_eq!(blocks[0], ContentBlock::text(cut.text));
    assert!(matches!(blocks[1], ContentBlock::Unknown(_)));
}

#[test]
fn string_content_stays_a_string() {
    let messages = vec![
        user("task"),
        assistant(vec![call("s")]),
        serde_json::from_value(json!({"role": "toolResult", "toolCallId": "s",
            "toolName": "bash", "content": long_output("s", 100), "isError": true}))
        .unwrap(),
    ];
    let settings = TransformSettings {
        keep_recent_tool_results: 0,
        ..plain()
    };
    let (pruned, _) = prune(&messages, &settings);
    let AgentMessage::ToolResult(result) = &pruned[2] else {
        panic!("expected a tool result")
    };
    let MessageContent::Text(text) = &result.content else {
        panic!("expected string content")
    };
    assert_eq!(pruned_reference(text), Some("s"));
    assert!(result.is_error);
}

#[test]
fn cache_aware_blocks_round_down() {
    let settings = TransformSettings {
        cache_aware: true,
        cache_block_size: 4,
        keep_recent_tool_results: 2,
        ..plain()
    };
    for (count, expected) in [(0, 0), (2, 0), (5, 0), (6, 4), (9, 4), (10, 8)] {
        let messages = conversation(count);
        let view = slots(&messages);
        let block = prune_block(&view, &settings);
        assert_eq!(block.tool_results, expected, "{count} results");
        // The block ends just after its last tool result (at 2 + 2 × (expected − 1) + 1).
        let end = if expected == 0 { 0 } else { 2 * expected + 1 };
        assert_eq!(block.end, end, "{count} results");
    }
    let zero_block = TransformSettings {
        cache_block_size: 0,
        ..settings
    };
    let view_messages = conversation(5);
    assert_eq!(
        prune_block(&slots(&view_messages), &zero_block).tool_results,
        3
    );
}

/// A result of 40 filler lines with `names` on a line in the middle.
fn result_naming(id: &str, names: &str) -> AgentMessage {
    let mut lines: Vec<String> = (0..40).map(|line| format!("filler line {line}")).collect();
    lines[20] = format!("see {names}");
    tool_result(id, &lines.join("\n"))
}

fn marker_of(message: &AgentMessage) -> String {
    output_text(message)
        .lines()
        .find(|line| line.contains("omitted"))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn the_digest_leaves_out_names_the_model_can_already_read() {
    let settings = TransformSettings {
        keep_recent_tool_results: 1,
        prune_min_chars: 100,
        prune_digest_names: 8,
        ..plain()
    };
    let messages = vec![
        user("fix src/app/main.rs"),
        assistant(vec![text("reading"), call("c0")]),
        result_naming("c0", "src/app/main.rs src/app/config.rs parse_config E0042"),
        assistant(vec![text("and the next one"), call("c1")]),
        result_naming("c1", "src/app/config.rs load_all E0042 E0043"),
        assistant(vec![text("done"), call("c2")]),
        tool_result("c2", "short"),
    ];
    let (pruned, _) = prune(&messages, &settings);
    // The user named main.rs: only the new names of the first result are listed.
    assert!(
        marker_of(&pruned[2]).contains("mentions: src/app/config.rs, parse_config, E0042;"),
        "{}",
        marker_of(&pruned[2])
    );
    // The second result lists only what neither the prompt nor the first marker showed.
    assert!(
        marker_of(&pruned[4]).contains("mentions: load_all, E0043;"),
        "{}",
        marker_of(&pruned[4])
    );
    // The markers of a longer view are the same bytes (the cached prefix is kept).
    let mut longer = messages.clone();
    longer.push(assistant(vec![text("more"), call("c3")]));
    longer.push(result_naming("c3", "load_all other_name"));
    let (pruned_longer, _) = prune(&longer, &settings);
    assert_eq!(pruned_longer[..6], pruned[..6]);
    // Without a digest nothing is listed at all.
    let (plain_cut, _) = prune(
        &messages,
        &TransformSettings {
            prune_digest_names: 0,
            ..settings
        },
    );
    assert!(!marker_of(&plain_cut[2]).contains("mentions"));
}

#[test]
fn the_last_cut_result_is_told_by_the_layer_not_read_from_text() {
    // A file that quotes a marker, naming even its own call: nothing is old enough to be cut.
    let quoted = "[... 9 lines (400 chars) omitted; full output: ctxkit://tool-result/c0]";
    let mut messages = vec![user("task")];
    messages.push(assistant(vec![call("c0")]));
    messages.push(tool_result(
        "c0",
        &format!("{}{quoted}\n", long_output("c0", 100)),
    ));
    let whole = crate::transform_context(&messages, &plain(), 200_000);
    assert_eq!(whole.report.tool_results_pruned, 0);
    assert_eq!(whole.last_cut_tool_result, None);
    // Ten results: the four oldest are cut, the last of them is named, whatever the texts say.
    let mut messages = conversation(10);
    if let AgentMessage::ToolResult(result) = &mut messages[20] {
        result.content =
            ctxkit_protocol::MessageContent::Blocks(vec![ctxkit_protocol::ContentBlock::text(
                quoted.to_owned(),
            )]);
    }
    let (_, outcome) = prune(&messages, &plain());
    assert_eq!(outcome.tool_results_pruned, 4);
    assert_eq!(outcome.last_cut_tool_result.as_deref(), Some("c3"));
    let output = crate::transform_context(&messages, &plain(), 200_000);
    assert_eq!(output.last_cut_tool_result.as_deref(), Some("c3"));
}
