//! On-demand compaction (`compaction.provider: "on-demand"`): the span ctxkit's planner chose is
//! sent to the conversation's own model, which writes the summary on its cached prefix and returns
//! a signed block (Anthropic, beta `compact-2026-09-04`). The result is an ordinary compaction —
//! the readable summary with the file lists as its text, the cut the planner made — with the
//! block raw in `details.providerCompaction` (`mode: "on-demand"`), so later requests to that
//! model send it back in place of the summary. Cancellable; nothing is written here.

use ctxkit_protocol::{AgentMessage, ContentBlock, ON_DEMAND_MODE, PROVIDER_COMPACTION_DETAILS};
use futures::future::{Either, select};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::CompactionError;
use crate::prepare::Preparation;
use crate::runner::CompactionResult;
use ctxkit_summarizer::{ConversationPrefix, Summarizer};
use ctxkit_tokens::utf16_len;

/// The tool call a span would leave open at its end: a call of the span's last reply with no
/// result before the cut (the API refuses such a request). Calls of earlier, interrupted turns are
/// answered by the request builders and do not count.
pub fn open_tool_call(span: &[AgentMessage]) -> Option<String> {
    let last_reply = span.iter().rposition(
        |message| matches!(message, AgentMessage::Assistant(reply) if !reply.is_aborted_or_error()),
    )?;
    let AgentMessage::Assistant(reply) = &span[last_reply] else {
        return None;
    };
    let answered: Vec<&str> = span[last_reply + 1..]
        .iter()
        .filter_map(|message| match message {
            AgentMessage::ToolResult(result) => Some(result.tool_call_id.as_str()),
            AgentMessage::User(_)
            | AgentMessage::Assistant(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Unknown(_) => None,
        })
        .collect();
    // Something other than results after the reply means the turn went on: its calls were closed.
    let only_results = span[last_reply + 1..]
        .iter()
        .all(|message| matches!(message, AgentMessage::ToolResult(_)));
    if !only_results {
        return None;
    }
    reply.content.iter().find_map(|block| match block {
        ContentBlock::ToolCall(call) if !answered.contains(&call.id.as_str()) => {
            Some(call.id.clone())
        }
        ContentBlock::ToolCall(_)
        | ContentBlock::Text(_)
        | ContentBlock::Thinking(_)
        | ContentBlock::Image(_)
        | ContentBlock::Unknown(_) => None,
    })
}

/// Asks the conversation's model to compact `span` (the context before the planned cut, in the
/// provider's form, with the conversation's system prompt and tools). Fails — for the caller's
/// fallback — when the cut leaves a tool call open, the request fails, or the summary is empty or
/// larger than the reserve the planner keeps for it.
pub async fn compact_on_demand(
    preparation: &Preparation,
    summarizer: &dyn Summarizer,
    span: ConversationPrefix,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    if let Some(call) = open_tool_call(&span.messages) {
        return Err(CompactionError::Summarizer {
            message: format!("the cut would leave the tool call `{call}` without its result"),
            kind: ctxkit_summarizer::FailureKind::Request,
        });
    }
    if cancel.is_cancelled() {
        return Err(CompactionError::Cancelled);
    }
    let work = summarizer.compact_on_demand(span, cancel.clone());
    let compaction = match select(work, Box::pin(cancel.cancelled())).await {
        Either::Left((Ok(compaction), _)) => compaction,
        Either::Left((Err(error), _)) => {
            return Err(CompactionError::Summarizer {
                message: error.message,
                kind: error.kind,
            });
        }
        Either::Right(((), _)) => return Err(CompactionError::Cancelled),
    };
    // The reference's chars/4 estimate, which no text can talk down.
    let tokens = (utf16_len(&compaction.summary) as u64).div_ceil(4);
    let room = preparation.settings.reserve_tokens;
    if compaction.summary.trim().is_empty() || tokens > room {
        return Err(CompactionError::Summarizer {
            message: format!(
                "the provider's summary (about {tokens} tokens) is empty or larger than the reserve of {room} tokens"
            ),
            kind: ctxkit_summarizer::FailureKind::Request,
        });
    }
    let lists = preparation.file_operations.lists();
    // The readable summary is kept as every summary is; the signed block goes back as sent,
    // to its own provider only.
    let mut summary = crate::kept_summary(&compaction.summary);
    summary.push_str(&lists.blocks());
    let mut details = lists.details();
    if let Some(object) = details.as_object_mut() {
        object.insert(
            "summarizer".to_owned(),
            json!(format!(
                "{}/{} (on-demand)",
                compaction.provider, compaction.model
            )),
        );
        let usage = compaction
            .usage
            .as_ref()
            .and_then(|usage| serde_json::to_value(usage).ok())
            .unwrap_or(Value::Null);
        object.insert("usage".to_owned(), json!([usage]));
        object.insert(
            PROVIDER_COMPACTION_DETAILS.to_owned(),
            json!({
                "mode": ON_DEMAND_MODE,
                "provider": compaction.provider,
                "api": compaction.api,
                "model": compaction.model,
                "block": compaction.block,
            }),
        );
    }
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: preparation.first_kept_entry_id.clone(),
        tokens_before: preparation.tokens_before,
        details,
        requests: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(value: Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    fn calls(ids: &[&str]) -> AgentMessage {
        let content: Vec<Value> = ids
            .iter()
            .map(|id| json!({"type": "toolCall", "id": id, "name": "bash", "arguments": {}}))
            .collect();
        message(json!({"role": "assistant", "content": content, "stopReason": "toolUse"}))
    }

    fn result(id: &str) -> AgentMessage {
        message(
            json!({"role": "toolResult", "toolCallId": id, "toolName": "bash",
            "content": [{"type": "text", "text": "ok"}], "isError": false}),
        )
    }

    fn user(text: &str) -> AgentMessage {
        message(json!({"role": "user", "content": text}))
    }

    #[test]
    fn a_span_ending_in_calls_without_all_their_results_leaves_one_open() {
        assert_eq!(
            open_tool_call(&[user("go"), calls(&["a", "b"])]),
            Some("a".to_owned())
        );
        assert_eq!(
            open_tool_call(&[user("go"), calls(&["a", "b"]), result("a")]),
            Some("b".to_owned())
        );
        assert_eq!(
            open_tool_call(&[user("go"), calls(&["a", "b"]), result("a"), result("b")]),
            None
        );
    }

    #[test]
    fn an_interrupted_turn_earlier_in_the_span_does_not_count() {
        // The builders answer the interrupted call; the turn went on with the user's next message.
        assert_eq!(
            open_tool_call(&[user("go"), calls(&["a"]), user("stop, do this instead")]),
            None
        );
        assert_eq!(open_tool_call(&[user("only a question")]), None);
    }
}
