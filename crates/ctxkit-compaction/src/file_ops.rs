//! Files the summarized history read and modified, tracked from file tool calls (`tool_paths`) and
//! carried over from the previous compaction, and the blocks that append them to a summary.

use std::collections::HashSet;

use ctxkit_protocol::{AgentMessage, ContentBlock};
use serde_json::Value;

use crate::tool_paths::{FileAccess, file_accesses};

/// Paths seen in file tool calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOperations {
    pub read: HashSet<String>,
    pub written: HashSet<String>,
    pub edited: HashSet<String>,
}

/// The final lists: files only read, and files modified (written or edited), each sorted by UTF-16
/// code units as JavaScript sorts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLists {
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

impl FileOperations {
    /// Adds the paths of the file tool calls in an assistant message (`tool_paths`: Pi's
    /// `read`/`write`/`edit` and the file tools of imported agents), and of the calls a tool made
    /// while it ran, recorded on its result under `nestedCalls.calls` (Pi 1.6's code-execution
    /// tool). A nested call counts like the assistant's own, whatever its status.
    pub fn add_from_message(&mut self, message: &AgentMessage) {
        match message {
            AgentMessage::Assistant(assistant) => {
                for call in assistant
                    .content
                    .iter()
                    .filter_map(ContentBlock::as_tool_call)
                {
                    self.add_call(&call.name, &call.arguments);
                }
            }
            AgentMessage::ToolResult(result) => {
                let nested = result
                    .extra
                    .get("nestedCalls")
                    .and_then(|nested| nested.get("calls"))
                    .and_then(Value::as_array);
                for call in nested.into_iter().flatten() {
                    if let Some(name) = call.get("name").and_then(Value::as_str)
                        && let Some(arguments) = call.get("arguments")
                    {
                        self.add_call(name, arguments);
                    }
                }
            }
            AgentMessage::User(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => {}
        }
    }

    /// One call of tool `name`: the paths `tool_paths` finds in its arguments.
    fn add_call(&mut self, name: &str, arguments: &Value) {
        for (access, path) in file_accesses(name, arguments) {
            let set = match access {
                FileAccess::Read => &mut self.read,
                FileAccess::Written => &mut self.written,
                FileAccess::Edited => &mut self.edited,
            };
            set.insert(path);
        }
    }

    /// Adds the lists recorded in a previous compaction's or branch summary's `details`.
    pub fn add_from_details(&mut self, details: &Value) {
        let strings = |key: &str| -> Vec<String> {
            details
                .get(key)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        self.read.extend(strings("readFiles"));
        self.edited.extend(strings("modifiedFiles"));
    }

    /// The read-only and modified lists.
    pub fn lists(&self) -> FileLists {
        let mut modified_files: Vec<String> = self.edited.union(&self.written).cloned().collect();
        let mut read_files: Vec<String> = self
            .read
            .iter()
            .filter(|path| !self.edited.contains(*path) && !self.written.contains(*path))
            .cloned()
            .collect();
        sort_utf16(&mut modified_files);
        sort_utf16(&mut read_files);
        FileLists {
            read_files,
            modified_files,
        }
    }
}

fn sort_utf16(paths: &mut [String]) {
    paths.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
}

/// `text` before a `<tag>` block that ends it, if it does.
fn strip_block<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let body = text.strip_suffix(format!("</{tag}>").as_str())?;
    let open = body.rfind(format!("<{tag}>\n").as_str())?;
    Some(&body[..open])
}

impl FileLists {
    /// `\n\n<read-files>…</read-files>\n\n<modified-files>…</modified-files>`, omitting empty blocks;
    /// empty when both lists are.
    pub fn blocks(&self) -> String {
        let mut sections = Vec::new();
        if !self.read_files.is_empty() {
            sections.push(format!(
                "<read-files>\n{}\n</read-files>",
                self.read_files.join("\n")
            ));
        }
        if !self.modified_files.is_empty() {
            sections.push(format!(
                "<modified-files>\n{}\n</modified-files>",
                self.modified_files.join("\n")
            ));
        }
        if sections.is_empty() {
            String::new()
        } else {
            format!("\n\n{}", sections.join("\n\n"))
        }
    }

    /// `summary` without the file blocks [`FileLists::blocks`] appended at its end; `summary`
    /// itself when it ends in none. A previous summary reused as the history of a split turn gets
    /// the current lists (which include the earlier files) appended again, so its own go.
    pub fn strip_blocks(summary: &str) -> &str {
        let mut rest = summary;
        let mut stripped = false;
        while let Some(before) = ["read-files", "modified-files"]
            .iter()
            .find_map(|tag| strip_block(rest.trim_end(), tag))
        {
            rest = before;
            stripped = true;
        }
        if stripped { rest.trim_end() } else { summary }
    }

    /// `{"readFiles": […], "modifiedFiles": […]}`, the `details` of a compaction entry.
    pub fn details(&self) -> Value {
        serde_json::json!({"readFiles": self.read_files, "modifiedFiles": self.modified_files})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_calls_on_tool_results_count_like_the_assistants_own() {
        let result: AgentMessage = serde_json::from_value(json!({
            "role": "toolResult", "toolCallId": "c", "toolName": "code", "isError": false,
            "content": [{"type": "text", "text": "ran"}],
            "nestedCalls": {"complete": false, "calls": [
                {"id": "n1", "name": "read", "arguments": {"path": "a.rs"}, "status": "ok"},
                {"id": "n2", "name": "edit", "arguments": {"path": "b.rs"}, "status": "error", "error": "no match"},
                {"id": "n3", "name": "write", "arguments": {"path": "c.rs"}, "status": "unfinished"},
                {"id": "n4", "name": "write", "argumentsBytes": 90000, "status": "ok"},
                {"id": "n5", "name": "read", "arguments": {"path": 7}, "status": "ok"},
                {"id": "n6", "name": "read", "arguments": {"path": ""}, "status": "ok"},
                {"id": "n7", "name": "bash", "arguments": {"path": "d.rs"}, "status": "ok"},
                "not a call", {"name": 5, "arguments": {"path": "e.rs"}}
            ]}
        }))
        .unwrap();
        // The same field anywhere but on a tool result is ignored.
        let user: AgentMessage = serde_json::from_value(json!({
            "role": "user", "content": "x",
            "nestedCalls": {"calls": [{"id": "u", "name": "read", "arguments": {"path": "u.rs"}}]}
        }))
        .unwrap();
        let mut operations = FileOperations::default();
        operations.add_from_message(&result);
        operations.add_from_message(&user);
        let lists = operations.lists();
        assert_eq!(lists.read_files, ["a.rs"]);
        assert_eq!(lists.modified_files, ["b.rs", "c.rs"]);
    }

    #[test]
    fn tracks_file_tools_and_sorts_like_javascript() {
        let message: AgentMessage = serde_json::from_value(json!({"role": "assistant", "content": [
            {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "b.rs"}},
            {"type": "toolCall", "id": "2", "name": "read", "arguments": {"path": "a.rs"}},
            {"type": "toolCall", "id": "3", "name": "edit", "arguments": {"path": "b.rs"}},
            {"type": "toolCall", "id": "4", "name": "write", "arguments": {"path": "\u{ff5e}.rs"}},
            {"type": "toolCall", "id": "5", "name": "write", "arguments": {"path": "😀.rs"}},
            {"type": "toolCall", "id": "6", "name": "bash", "arguments": {"path": "x"}},
            {"type": "toolCall", "id": "7", "name": "read", "arguments": {"path": 5}}
        ]})).unwrap();
        let mut operations = FileOperations::default();
        operations.add_from_message(&message);
        operations.add_from_details(&json!({"readFiles": ["c.rs"], "modifiedFiles": ["d.rs"]}));
        let lists = operations.lists();
        assert_eq!(lists.read_files, ["a.rs", "c.rs"]);
        // U+1F600 is a surrogate pair (0xD83D…) and sorts before U+FF5E in UTF-16.
        assert_eq!(
            lists.modified_files,
            ["b.rs", "d.rs", "😀.rs", "\u{ff5e}.rs"]
        );
        assert_eq!(
            lists.blocks(),
            "\n\n<read-files>\na.rs\nc.rs\n</read-files>\n\n<modified-files>\nb.rs\nd.rs\n😀.rs\n\u{ff5e}.rs\n</modified-files>"
        );
        assert_eq!(FileLists::default().blocks(), "");
    }
}
