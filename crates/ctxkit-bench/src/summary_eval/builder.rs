//! A small builder for the corpus's sessions: user turns, assistant replies, tool calls with their
//! results (as Pi writes them), earlier compaction summaries.

use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};

/// Builds one session's messages in order.
#[derive(Debug, Default)]
pub struct SessionBuilder {
    messages: Vec<Value>,
    calls: usize,
}

impl SessionBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn user(mut self, text: &str) -> Self {
        self.messages.push(json!({"role": "user", "content": text}));
        self
    }

    pub fn assistant(mut self, text: &str) -> Self {
        self.messages.push(json!({
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stopReason": "stop"
        }));
        self
    }

    pub fn thinking(mut self, text: &str) -> Self {
        self.messages.push(json!({
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": text}],
            "stopReason": "stop"
        }));
        self
    }

    /// An assistant turn with one tool call and, unless `result` is `None`, its result.
    pub fn tool(mut self, name: &str, arguments: Value, result: Option<&str>) -> Self {
        self.calls += 1;
        let id = format!("toolu_{:04}", self.calls);
        self.messages.push(json!({
            "role": "assistant",
            "content": [{"type": "toolCall", "id": id, "name": name, "arguments": arguments}],
            "stopReason": "toolUse"
        }));
        if let Some(result) = result {
            let is_error = result.contains("Command exited with code");
            self.messages.push(json!({
                "role": "toolResult",
                "toolCallId": id,
                "toolName": name,
                "content": [{"type": "text", "text": result}],
                "isError": is_error
            }));
        }
        self
    }

    pub fn bash(self, command: &str, output: &str) -> Self {
        self.tool("bash", json!({ "command": command }), Some(output))
    }

    pub fn read(self, path: &str, content: &str) -> Self {
        self.tool("read", json!({ "path": path }), Some(content))
    }

    pub fn edit(self, path: &str, old: &str, new: &str) -> Self {
        let result = format!("Successfully replaced text in {path}.");
        self.tool(
            "edit",
            json!({ "path": path, "edits": [{"oldText": old, "newText": new}] }),
            Some(&result),
        )
    }

    pub fn failed_edit(self, path: &str, old: &str) -> Self {
        let result = format!(
            "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
        );
        self.tool(
            "edit",
            json!({ "path": path, "edits": [{"oldText": old, "newText": "x"}] }),
            Some(&result),
        )
    }

    pub fn write(self, path: &str, content: &str) -> Self {
        let result = format!("Successfully wrote {} bytes to {path}", content.len());
        self.tool(
            "write",
            json!({ "path": path, "content": content }),
            Some(&result),
        )
    }

    /// A compaction summary inside the span, as the context shows it.
    pub fn compaction(mut self, summary: &str) -> Self {
        self.messages.push(json!({
            "role": "compactionSummary",
            "summary": summary,
            "tokensBefore": 50_000,
            "timestamp": 0
        }));
        self
    }

    pub fn build(self) -> Vec<AgentMessage> {
        self.messages
            .into_iter()
            .filter_map(|value| serde_json::from_value(value).ok())
            .collect()
    }
}

/// One assistant turn that calls several tools at once (its text first, when there is any), then
/// their results in call order, as an agent records parallel calls; `id` names each call by its
/// place, so the ids stay apart from the builder's.
pub fn parallel_turn(
    id: impl Fn(usize) -> String,
    text: &str,
    calls: &[(&str, Value, &str)],
) -> Vec<AgentMessage> {
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    let mut results = Vec::new();
    for (index, (name, arguments, result)) in calls.iter().enumerate() {
        content.push(
            json!({"type": "toolCall", "id": id(index), "name": name, "arguments": arguments}),
        );
        results.push(json!({
            "role": "toolResult",
            "toolCallId": id(index),
            "toolName": name,
            "content": [{"type": "text", "text": result}],
            "isError": result.contains("Command exited with code")
        }));
    }
    let mut values =
        vec![json!({"role": "assistant", "content": content, "stopReason": "toolUse"})];
    values.extend(results);
    values
        .into_iter()
        .filter_map(|value| serde_json::from_value(value).ok())
        .collect()
}
