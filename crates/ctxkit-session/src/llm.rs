//! Turning context messages into what a provider accepts (Pi's `convertToLlm`): user, assistant and tool
//! results (and, since Pi 0.87, system messages) pass through; shell runs, extension messages and summaries become user messages.

use ctxkit_protocol::{
    AgentMessage, BashExecutionMessage, ContentBlock, MessageContent, UserMessage,
};
use serde_json::Value;

use crate::JsonObject;

/// Opens the user message that carries a compaction summary.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Closes it.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Opens the user message that carries a branch summary.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Closes it.
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// The text a shell run shows the model.
pub fn bash_execution_text(message: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", message.command);
    if message.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&format!("```\n{}\n```", message.output));
    }
    if message.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = message.exit_code.filter(|&code| code != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if message.truncated
        && let Some(path) = message
            .full_output_path
            .as_deref()
            .filter(|path| !path.is_empty())
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

fn user_text(text: String, timestamp: Option<i64>) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: MessageContent::Blocks(vec![ContentBlock::text(text)]),
        timestamp,
        extra: JsonObject::new(),
    })
}

/// Whether the model sees `message` at all: every role but a shell run marked
/// `excludeFromContext` (`!!`) and unknown roles; system messages (Pi 0.87) included. The one rule
/// [`to_llm_message`] and the page's "what the model saw" follow.
pub fn reaches_model(message: &AgentMessage) -> bool {
    match message {
        AgentMessage::User(_)
        | AgentMessage::Assistant(_)
        | AgentMessage::ToolResult(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_) => true,
        AgentMessage::BashExecution(bash) => bash.exclude_from_context != Some(true),
        AgentMessage::Unknown(_) => message.role() == "system",
    }
}

/// The provider form of one message; `None` for messages the model never sees
/// ([`reaches_model`]: `!!` shell runs, unknown roles). System messages (Pi 0.87: prompt state
/// inside the transcript) pass through.
pub fn to_llm_message(message: &AgentMessage) -> Option<AgentMessage> {
    if !reaches_model(message) {
        return None;
    }
    match message {
        AgentMessage::User(_) | AgentMessage::Assistant(_) | AgentMessage::ToolResult(_) => {
            Some(message.clone())
        }
        AgentMessage::BashExecution(bash) => {
            Some(user_text(bash_execution_text(bash), bash.timestamp))
        }
        AgentMessage::Custom(custom) => Some(AgentMessage::User(UserMessage {
            content: MessageContent::Blocks(custom.content.blocks()),
            timestamp: custom.timestamp,
            extra: JsonObject::new(),
        })),
        AgentMessage::BranchSummary(summary) => Some(user_text(
            format!(
                "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                summary.summary
            ),
            summary.timestamp,
        )),
        AgentMessage::CompactionSummary(summary) => Some(user_text(
            format!(
                "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                summary.summary
            ),
            summary.timestamp,
        )),
        AgentMessage::Unknown(_) => Some(message.clone()),
    }
}

/// [`to_llm_message`] over a list.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<AgentMessage> {
    messages.iter().filter_map(to_llm_message).collect()
}

/// [`convert_to_llm`] over JSON values, passing user, assistant and tool-result messages through
/// untouched so nothing of them is lost. A message that is not a valid message of its role is dropped.
pub fn convert_values_to_llm(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter_map(|value| match value.get("role").and_then(Value::as_str) {
            Some("user" | "assistant" | "toolResult" | "system") => Some(value.clone()),
            Some(_) | None => {
                let message: AgentMessage = serde_json::from_value(value.clone()).ok()?;
                let converted = to_llm_message(&message)?;
                let mut converted = serde_json::to_value(converted).ok()?;
                // Pi copies the timestamp as it is, including null.
                if let (Some(object), Some(timestamp)) =
                    (converted.as_object_mut(), value.get("timestamp"))
                {
                    object.insert("timestamp".to_owned(), timestamp.clone());
                }
                Some(converted)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn converts_every_role() {
        let messages = vec![
            json!({"role": "user", "content": "hi", "timestamp": 1, "extra": true}),
            json!({"role": "bashExecution", "command": "ls", "output": "", "exitCode": 2, "cancelled": false,
                   "truncated": true, "fullOutputPath": "/tmp/o", "timestamp": 2}),
            json!({"role": "bashExecution", "command": "x", "output": "o", "excludeFromContext": true, "timestamp": 3}),
            json!({"role": "custom", "customType": "t", "content": "c", "display": true, "timestamp": 4}),
            json!({"role": "branchSummary", "summary": "B", "fromId": "root", "timestamp": 5}),
            json!({"role": "compactionSummary", "summary": "C", "tokensBefore": 9, "timestamp": null}),
            json!({"role": "futureRole"}),
            json!({"role": "system", "content": "be brief", "toolsAdded": [{"name": "read"}], "timestamp": 7}),
        ];
        let converted = convert_values_to_llm(&messages);
        assert_eq!(converted.len(), 6);
        assert_eq!(converted[5], messages[7]);
        let typed: AgentMessage = serde_json::from_value(messages[7].clone()).unwrap();
        assert_eq!(
            serde_json::to_value(to_llm_message(&typed).unwrap()).unwrap(),
            messages[7]
        );
        assert_eq!(converted[0], messages[0]);
        assert_eq!(
            converted[1],
            json!({"role": "user", "content": [{"type": "text", "text":
                "Ran `ls`\n(no output)\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/o]"}],
                "timestamp": 2})
        );
        assert_eq!(
            converted[2],
            json!({"role": "user", "content": [{"type": "text", "text": "c"}], "timestamp": 4})
        );
        assert_eq!(converted[4]["timestamp"], Value::Null);
        assert!(
            converted[4]["content"][0]["text"]
                .as_str()
                .unwrap()
                .ends_with("C\n</summary>")
        );
    }
}
