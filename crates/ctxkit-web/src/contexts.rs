//! What the model saw at an entry: the session's own context builder (`ctxkit_session::build_context`,
//! compaction included) followed by the per-call transforms of `ctxkit_transform::transform_context`
//! (pruned results, dropped thinking, the sliding window). Each message of the view is matched back
//! to the entry it came from, so the page can show the raw entry beside what was sent.

use ctxkit_protocol::AgentMessage;
use ctxkit_session::{ContextMessageKind, EntryIndex, Session, build_context};
use ctxkit_settings::TransformSettings;
use ctxkit_transform::transform_context;
use serde_json::{Map, Value, json};

use crate::blocks::Renderer;
use crate::error::WebError;

/// The page's name for how a context message is made from its entry.
fn kind_name(kind: ContextMessageKind) -> &'static str {
    match kind {
        ContextMessageKind::Stored => "stored",
        ContextMessageKind::Custom => "custom",
        ContextMessageKind::BranchSummary => "branchSummary",
        ContextMessageKind::CompactionSummary => "compactionSummary",
        ContextMessageKind::CompactionSystem => "compactionSystem",
    }
}

/// What identifies a message across the transforms, which keep a message's role, timestamp and
/// tool call id while they change its content.
fn identity(message: &AgentMessage) -> (String, String, String) {
    let value = serde_json::to_value(message).unwrap_or(Value::Null);
    let field = |name: &str| match value.get(name) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    (field("role"), field("timestamp"), field("toolCallId"))
}

/// `message` without its thinking blocks (what the thinking transform sends of an older assistant).
fn without_thinking(message: &AgentMessage) -> AgentMessage {
    let mut stripped = message.clone();
    if let AgentMessage::Assistant(assistant) = &mut stripped {
        assistant
            .content
            .retain(|block| !matches!(block, ctxkit_protocol::ContentBlock::Thinking(_)));
    }
    stripped
}

/// For each input message, the output message it became (`None`: dropped). The output is the
/// input with messages removed and some changed, in the same order.
fn align(input: &[AgentMessage], output: &[AgentMessage]) -> Vec<Option<usize>> {
    let mut matched = vec![None; input.len()];
    let mut next_input = 0;
    for (output_index, message) in output.iter().enumerate() {
        let key = identity(message);
        while next_input < input.len() {
            let candidate = next_input;
            next_input += 1;
            if identity(&input[candidate]) == key {
                matched[candidate] = Some(output_index);
                break;
            }
        }
    }
    matched
}

/// The model's view at entry `at` as page data: one record per context message with the entry it
/// came from, how, and what the transforms did to it (`changed`: the blocks sent instead;
/// `dropped`: not sent), and the transforms' report; `None` when the context holds more than
/// `max_messages` messages (its messages are not read then).
pub(crate) fn context_record_within(
    session: &Session,
    at: EntryIndex,
    settings: &TransformSettings,
    context_window: u64,
    renderer: &Renderer<'_>,
    max_messages: usize,
) -> Result<Option<Value>, WebError> {
    if session.index().get(at).is_none() {
        return Err(WebError::UnknownEntry {
            id: format!("#{at}"),
        });
    }
    let context = build_context(session.index(), Some(at));
    if context.messages.len() > max_messages {
        return Ok(None);
    }
    let input = session.messages(&context.messages)?;
    let output = transform_context(&input, settings, context_window);
    let matched = align(&input, &output.messages);
    let mut messages = Vec::with_capacity(input.len());
    for ((source, message), result) in context.messages.iter().zip(&input).zip(&matched) {
        let mut record = Map::new();
        record.insert("e".to_owned(), json!(source.entry));
        record.insert("kind".to_owned(), json!(kind_name(source.kind)));
        if let Some(edit) = source.edit {
            record.insert("edit".to_owned(), json!(edit));
        }
        let derived = !matches!(source.kind, ContextMessageKind::Stored) || source.edit.is_some();
        match result {
            None => {
                record.insert("dropped".to_owned(), json!(true));
            }
            Some(position) => {
                let sent = &output.messages[*position];
                if !derived && sent != message && without_thinking(message) == *sent {
                    // Only its thinking was dropped: the page shows the entry without it (no copy).
                    record.insert("thinkingDropped".to_owned(), json!(true));
                } else if derived || sent != message {
                    let value = serde_json::to_value(sent).unwrap_or(Value::Null);
                    record.insert("changed".to_owned(), json!(!derived || sent != message));
                    record.insert("msg".to_owned(), Value::Object(renderer.message(&value)));
                }
            }
        }
        messages.push(Value::Object(record));
    }
    let report = output.report;
    Ok(Some(json!({
        "at": at,
        "messages": messages,
        "thinkingLevel": context.thinking_level,
        "model": context.model.and_then(|model| model.model_id).map(|model| renderer.short(&model)),
        "report": {
            "toolResultsPruned": report.tool_results_pruned,
            "toolCallsCut": report.tool_calls_cut,
            "charsSaved": report.chars_saved,
            "thinkingBlocksDropped": report.thinking_blocks_dropped,
            "emptyAssistantsDropped": report.empty_assistants_dropped,
            "messagesDroppedByWindow": report.messages_dropped_by_window,
            "orphansRepaired": report.orphans_repaired,
            "tokensBefore": report.estimated_tokens_before,
            "tokensAfter": report.estimated_tokens_after,
        },
        "contextWindow": context_window,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(value: Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn alignment_follows_dropped_and_changed_messages() {
        let input = vec![
            message(json!({"role": "user", "content": "a", "timestamp": 1})),
            message(
                json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}], "timestamp": 2}),
            ),
            message(json!({"role": "user", "content": "b", "timestamp": 3})),
        ];
        let output = vec![input[0].clone(), input[2].clone()];
        assert_eq!(align(&input, &output), vec![Some(0), None, Some(1)]);
    }
}
