//! The context transforms on views built from bytes: whatever the view holds (orphan calls and
//! results, repeated ids, thinking, images, long and short outputs, pauses between requests), the
//! view sent to the model is consistent for a provider (a call left without a result answered by
//! an error result), never larger than the input and those answers, the same for
//! the same input (measured once for several views or not), and every cut result's marker names
//! where its original is.

use std::collections::HashSet;

use ctxkit_protocol::{AgentMessage, ContentBlock, NO_TOOL_RESULT};
use ctxkit_settings::TransformSettings;
use ctxkit_transform::{
    MeasuredMessage, pruned_reference, shown_names, transform_context, transform_measured,
};

/// Tool call ids are drawn from this many, so calls and results collide and go missing.
const IDS: usize = 8;

/// A view built from `data` transformed under settings and a window picked by its first four
/// bytes (parts split at `0x00`; a part's first byte picks the message: user text, assistant text,
/// a tool call, a tool result, thinking with a call, a result with an image, a pause).
pub fn context_transforms(data: &[u8]) {
    let [a, b, c, d] = [0, 1, 2, 3].map(|at| data.get(at).copied().unwrap_or(0));
    let settings = settings_of(a, b, c);
    let window = match d % 4 {
        0 => 0,
        1 => 2_000,
        2 => 20_000,
        _ => 200_000,
    };
    let messages = messages_of(data.get(4..).unwrap_or_default());
    let output = transform_context(&messages, &settings, window);
    // What the view may add: an error result answering a call left without one.
    let answers: Vec<&AgentMessage> = output
        .messages
        .iter()
        .filter(|message| is_no_result(message))
        .collect();
    // Their estimate: a transform's report of them alone (its estimate of its input).
    let answered = transform_context(&answers, &TransformSettings::disabled(), 0)
        .report
        .estimated_tokens_before;
    assert!(
        output.messages.len() <= messages.len() + answers.len(),
        "the view gained messages"
    );
    assert!(
        output.report.estimated_tokens_after <= output.report.estimated_tokens_before + answered,
        "the view grew: {} → {} tokens",
        output.report.estimated_tokens_before,
        output.report.estimated_tokens_after
    );
    assert_consistent(&output.messages);
    // A result whose own text already reads as a marker (the bytes may write one) is not checked.
    let written_as_markers: HashSet<String> = result_texts(&messages)
        .filter(|(_, text)| pruned_reference(text).is_some())
        .map(|(id, _)| id)
        .collect();
    for (id, text) in result_texts(&output.messages) {
        let _ = shown_names(&text);
        if let Some(named) = pruned_reference(&text)
            && !written_as_markers.contains(&id)
        {
            assert_eq!(named, id, "a marker names another result");
        }
    }
    let again = transform_context(&messages, &settings, window);
    assert_eq!(again, output, "the same view transformed twice differs");
    // Measured messages shared by several views (half the view, all of it twice, all but its
    // first message: other names before each), as an export's views share them, give the same
    // views as the plain transform.
    let measured: Vec<MeasuredMessage> =
        messages.iter().cloned().map(MeasuredMessage::new).collect();
    let all = messages.len();
    for range in [0..all / 2, 0..all, 0..all, all.min(1)..all] {
        let view = transform_measured(&measured[range.clone()], &settings, window).into_output();
        let plain = transform_context(&messages[range], &settings, window);
        assert_eq!(view, plain, "a measured view differs from the plain one");
    }
}

/// Each tool result's id and text blocks, in order.
fn result_texts(messages: &[AgentMessage]) -> impl Iterator<Item = (String, String)> + '_ {
    messages
        .iter()
        .filter_map(|message| message.as_tool_result())
        .flat_map(|result| {
            result
                .content
                .blocks()
                .into_iter()
                .filter_map(|block| match block {
                    ContentBlock::Text(text) => Some((result.tool_call_id.clone(), text.text)),
                    ContentBlock::Image(_)
                    | ContentBlock::Thinking(_)
                    | ContentBlock::ToolCall(_)
                    | ContentBlock::Unknown(_) => None,
                })
        })
}

/// Settings from three bytes: the reference's defaults or the recommended strategy's, then the
/// knobs a user can turn.
fn settings_of(a: u8, b: u8, c: u8) -> TransformSettings {
    let mut settings = if a.is_multiple_of(2) {
        TransformSettings::default()
    } else {
        ctxkit_settings::Settings::recommended().transforms
    };
    settings.keep_recent_tool_results = usize::from(b % 4);
    settings.prune_min_chars = [0, 40, 500][usize::from(b / 4 % 3)];
    settings.head_lines = usize::from(b / 12 % 4);
    settings.tail_lines = usize::from(b / 48 % 3);
    settings.head_chars = [0, 10, 200][usize::from(c % 3)];
    settings.tail_chars = [0, 7, 100][usize::from(c / 3 % 3)];
    settings.prune_tool_calls = c & 0x10 != 0;
    settings.cache_aware = c & 0x20 != 0;
    settings.prune_when_it_pays = c & 0x40 != 0;
    settings.drop_old_thinking = c & 0x80 != 0;
    settings.window_threshold_percent = 1 + u64::from(a / 2 % 100);
    settings.keep_last_messages = usize::from(a / 8 % 6);
    settings.budget_note = a & 0x80 != 0;
    settings
}

/// The messages of `data`: parts split at `0x00`, each a kind byte and its text.
fn messages_of(data: &[u8]) -> Vec<AgentMessage> {
    let mut messages = Vec::new();
    let mut timestamp: u64 = 1_700_000_000_000;
    for (index, part) in data.split(|byte| *byte == 0).enumerate() {
        let Some((&kind, rest)) = part.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(rest).into_owned();
        // Long outputs are what the transforms cut: a part's text repeated by its kind's high bits.
        let repeated = text.repeat(1 + usize::from(kind >> 5) * 8);
        let id = format!("call_{}", usize::from(kind >> 3) % IDS);
        timestamp += 1_000;
        let value = match kind % 8 {
            0 => serde_json::json!({"role": "user", "content": text, "timestamp": timestamp}),
            1 => {
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}],
                "stopReason": "stop", "timestamp": timestamp})
            }
            2 => serde_json::json!({"role": "assistant", "content": [
                    {"type": "text", "text": format!("step {index}")},
                    {"type": "toolCall", "id": id, "name": "write", "arguments": {"path": "a.rs", "content": repeated}}],
                "stopReason": "toolUse", "timestamp": timestamp}),
            3 | 4 => serde_json::json!({"role": "toolResult", "toolCallId": id, "toolName": "bash",
                "content": [{"type": "text", "text": repeated}], "isError": kind % 8 == 4,
                "timestamp": timestamp}),
            5 => serde_json::json!({"role": "assistant", "content": [
                    {"type": "thinking", "thinking": repeated},
                    {"type": "toolCall", "id": id, "name": "read", "arguments": {"path": text}}],
                "stopReason": "toolUse", "timestamp": timestamp}),
            6 => serde_json::json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
                "content": [{"type": "text", "text": text},
                    {"type": "image", "data": repeated, "mimeType": "image/png"}],
                "isError": false, "timestamp": timestamp}),
            _ => {
                // A pause: the provider's cache expires before the next request.
                timestamp += 3_600_000 * u64::from(kind >> 3);
                continue;
            }
        };
        messages.push(serde_json::from_value::<AgentMessage>(value).unwrap());
    }
    messages
}

/// Whether `message` is an error result reading [`NO_TOOL_RESULT`] (the answer orphan repair
/// gives a call left without a result; the bytes may write one too).
fn is_no_result(message: &AgentMessage) -> bool {
    message
        .as_tool_result()
        .is_some_and(|result| result.is_error && result.content.joined_text("") == NO_TOOL_RESULT)
}

/// The orphan rules (`ctxkit_transform::repair_orphans`), as a provider checks them: the tool
/// results right after an assistant answer its calls, each once, and nothing else; every call of
/// an assistant is answered there (by its own result or by an error result reading
/// [`NO_TOOL_RESULT`], Pi 1.6.0's answer to a call left without one), except the calls of a last
/// assistant that only results follow (still running); no result comes anywhere else.
fn assert_consistent(messages: &[AgentMessage]) {
    let pending = messages
        .iter()
        .rposition(|message| !matches!(message, AgentMessage::ToolResult(_)))
        .filter(|&at| matches!(messages[at], AgentMessage::Assistant(_)));
    let mut open: Vec<&str> = Vec::new();
    let mut after_assistant = false;
    for (at, message) in messages.iter().enumerate() {
        if let Some(result) = message.as_tool_result() {
            assert!(
                after_assistant,
                "a result with no call before it reaches the provider"
            );
            let Some(position) = open.iter().position(|id| *id == result.tool_call_id) else {
                panic!("a result that answers no open call reaches the provider");
            };
            open.remove(position);
            continue;
        }
        assert!(
            open.is_empty(),
            "a call without its result reaches the provider"
        );
        after_assistant = false;
        if let AgentMessage::Assistant(assistant) = message {
            after_assistant = true;
            open.extend(
                assistant
                    .content
                    .iter()
                    .filter_map(ContentBlock::as_tool_call)
                    .map(|call| call.id.as_str()),
            );
            if Some(at) == pending {
                return;
            }
        }
    }
    assert!(
        open.is_empty(),
        "a call without its result reaches the provider"
    );
}
