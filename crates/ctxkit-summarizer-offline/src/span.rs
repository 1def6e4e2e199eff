//! The span as steps: the user's requests, the assistant's replies, tool calls with their
//! outcomes, and summaries the span carries. Read from the messages, never from serialized text.

use std::collections::HashMap;

use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent, ToolResultMessage};
use serde_json::Value;

use crate::failure;
use crate::text::{plain_output, strip_injected};

/// What a tool call did, judged from its name and arguments (the same for Pi's, Claude Code's,
/// Codex's and OpenCode's tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// A shell command (`command`/`cmd` argument).
    Command,
    /// A file read (a path argument, a reading tool).
    Read,
    /// A file written or edited.
    Change,
    /// Anything else (search, web, …).
    Other,
}

/// One tool call and its outcome.
#[derive(Debug, Clone)]
pub struct Call {
    pub kind: CallKind,
    /// The command, the path, or the tool's name with its first argument.
    pub target: String,
    /// The result text; `None` while the call waits for its result.
    pub output: Option<String>,
    pub failed: bool,
    /// The text a change wrote (an edit's new text, a file's content, a patch's added lines).
    pub written: Option<String>,
}

/// One step of the span, in order.
#[derive(Debug, Clone)]
pub enum Step {
    Request(String),
    Reply(String),
    Call(Call),
    /// An earlier compaction or branch summary inside the span.
    Summary(String),
}

/// The steps of `messages`, tool results joined to their calls.
pub fn steps(messages: &[AgentMessage]) -> Vec<Step> {
    let results: HashMap<&str, &ToolResultMessage> = messages
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .map(|result| (result.tool_call_id.as_str(), result))
        .collect();
    let mut steps = Vec::new();
    for message in messages {
        match message {
            AgentMessage::User(user) => {
                let raw = content_text(&user.content);
                // An agent's system events (a background run's output) are output, not requests.
                steps.extend(
                    ctxkit_protocol::injected_events(&raw)
                        .into_iter()
                        .map(event_call),
                );
                let text = strip_injected(&raw);
                if !text.trim().is_empty() {
                    steps.push(Step::Request(text));
                }
            }
            AgentMessage::Assistant(assistant) => {
                let mut text = String::new();
                let mut calls = Vec::new();
                for block in &assistant.content {
                    match block {
                        ContentBlock::Text(block) => {
                            text.push_str(&block.text);
                            text.push('\n');
                        }
                        // A `recall` fetched the originals behind an earlier summary, which
                        // stay in the session to be recalled again: neither its query nor the
                        // entry ids and names of what it returned are the work (QA 2026-12-07:
                        // `Seen in output: 90b87c76`, the id of a recalled entry).
                        ContentBlock::ToolCall(call)
                            if call.name == ctxkit_protocol::RECALL_TOOL => {}
                        ContentBlock::ToolCall(call) => {
                            let result = results.get(call.id.as_str()).copied();
                            calls.push(Step::Call(tool_call(&call.name, &call.arguments, result)));
                        }
                        ContentBlock::Image(_)
                        | ContentBlock::Thinking(_)
                        | ContentBlock::Unknown(_) => {}
                    }
                }
                if !text.trim().is_empty() {
                    steps.push(Step::Reply(text.trim().to_owned()));
                }
                steps.extend(calls);
            }
            AgentMessage::BashExecution(bash) => steps.push(Step::Call(Call {
                kind: CallKind::Command,
                target: bash.command.clone(),
                output: Some(bash.output.clone()),
                failed: bash.cancelled
                    || bash.exit_code.is_some_and(|code| code != 0)
                    || (!crate::digest::only_looks(&bash.command)
                        && failure::reports_command_failure(&bash.output)),
                written: None,
            })),
            AgentMessage::CompactionSummary(summary) => {
                steps.push(Step::Summary(summary.summary.clone()));
            }
            AgentMessage::BranchSummary(summary) => {
                steps.push(Step::Summary(summary.summary.clone()));
            }
            AgentMessage::ToolResult(_) | AgentMessage::Custom(_) | AgentMessage::Unknown(_) => {}
        }
    }
    steps
}

/// A system event as the call it reports: `Exec failed (name, code 1) :: output` → the command
/// `Exec failed (name, code 1)`, failed, with its output.
fn event_call(event: String) -> Step {
    let (target, output) = match event.split_once(" :: ") {
        Some((target, output)) => (target.trim().to_owned(), output.trim().to_owned()),
        None => (event.clone(), String::new()),
    };
    Step::Call(Call {
        kind: CallKind::Other,
        failed: target.contains("failed"),
        target,
        output: Some(output),
        written: None,
    })
}

fn content_text(content: &MessageContent) -> String {
    content.joined_text("\n")
}

/// A path argument under any of the names agents use.
fn path_argument(arguments: &Value) -> Option<&str> {
    ["path", "file_path", "filePath", "notebook_path", "file"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(Value::as_str))
}

fn command_argument(arguments: &Value) -> Option<String> {
    let value = arguments.get("command").or_else(|| arguments.get("cmd"))?;
    match value {
        Value::String(command) => Some(command.clone()),
        // Codex's shell: `["bash", "-lc", "cargo test"]`; the script is the last part.
        Value::Array(parts) => parts.last().and_then(Value::as_str).map(str::to_owned),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => None,
    }
}

/// Paths a patch names (`*** Update File: a.rs`, `+++ b/a.rs`).
fn patch_paths(arguments: &Value) -> Vec<String> {
    let text = ["input", "patch"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(Value::as_str))
        .unwrap_or("");
    text.lines()
        .filter_map(|line| {
            [
                "*** Update File: ",
                "*** Add File: ",
                "*** Delete File: ",
                "+++ b/",
            ]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix))
        })
        .map(|path| path.trim().to_owned())
        .collect()
}

fn tool_call(name: &str, arguments: &Value, result: Option<&ToolResultMessage>) -> Call {
    let output = result.map(|result| plain_output(&content_text(&result.content)));
    let command = command_argument(arguments);
    // A command's output is read for what failed (`cmd | tail` exits as `tail` does); a read
    // file's or a search's text only for an exit code its tool reported.
    let runs = command
        .as_deref()
        .is_some_and(|command| !crate::digest::only_looks(command));
    let failed = result.is_some_and(|result| result.is_error)
        || output.as_deref().is_some_and(|output| {
            if runs {
                failure::reports_command_failure(output)
            } else {
                failure::reports_exit_failure(output)
            }
        });
    let lower = name.to_lowercase();
    let changes = ["write", "edit", "patch", "create", "replace", "delete"]
        .iter()
        .any(|verb| lower.contains(verb));
    let (kind, target) = if let Some(command) = command {
        (CallKind::Command, command)
    } else if let Some(path) = path_argument(arguments) {
        let kind = if changes {
            CallKind::Change
        } else {
            CallKind::Read
        };
        (kind, path.to_owned())
    } else if let Some(path) = patch_paths(arguments).into_iter().next() {
        (CallKind::Change, path)
    } else {
        (CallKind::Other, other_target(name, arguments))
    };
    // A change that failed wrote nothing.
    let written = (kind == CallKind::Change && !failed)
        .then(|| written_text(arguments))
        .filter(|text| !text.trim().is_empty());
    Call {
        kind,
        target,
        output,
        failed,
        written,
    }
}

/// The text a change wrote, under the argument names agents use: an edit's new text (`new_string`,
/// `newText`, `new_str`, Pi's `edits`), a written file's `content`, a patch's added lines.
fn written_text(arguments: &Value) -> String {
    let mut text = String::new();
    for key in ["new_string", "newText", "new_str", "content", "file_text"] {
        if let Some(value) = arguments.get(key).and_then(Value::as_str) {
            text.push_str(value);
            text.push('\n');
        }
    }
    for edit in arguments
        .get("edits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(value) = ["newText", "new_string"]
            .iter()
            .find_map(|key| edit.get(key).and_then(Value::as_str))
        {
            text.push_str(value);
            text.push('\n');
        }
    }
    let patch = ["input", "patch"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(Value::as_str))
        .unwrap_or("");
    for line in patch.lines() {
        if let Some(added) = line.strip_prefix('+').filter(|_| !line.starts_with("+++")) {
            text.push_str(added);
            text.push('\n');
        }
    }
    text
}

/// A tool's name with its first short string argument (`grep TODO`).
fn other_target(name: &str, arguments: &Value) -> String {
    let first = arguments
        .as_object()
        .and_then(|object| object.values().find_map(Value::as_str))
        .filter(|value| value.len() <= 120);
    match first {
        Some(value) => format!("{name} {value}"),
        None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(values: Value) -> Vec<AgentMessage> {
        serde_json::from_value(values).unwrap()
    }

    #[test]
    fn calls_of_every_agent_are_classified_and_joined_to_their_results() {
        let span = messages(json!([
            {"role": "user", "content": "fix it<system-reminder>ignore me</system-reminder>"},
            {"role": "assistant", "stopReason": "toolUse", "content": [
                {"type": "text", "text": "Looking."},
                {"type": "toolCall", "id": "a", "name": "Read", "arguments": {"file_path": "C:\\src\\a.cs"}},
                {"type": "toolCall", "id": "b", "name": "Edit", "arguments": {"file_path": "src/b.rs", "old_string": "x", "new_string": "y"}},
                {"type": "toolCall", "id": "c", "name": "shell", "arguments": {"command": ["bash", "-lc", "cargo test"]}},
                {"type": "toolCall", "id": "d", "name": "apply_patch", "arguments": {"input": "*** Begin Patch\n*** Update File: src/c.rs\n@@"}},
                {"type": "toolCall", "id": "e", "name": "bash", "arguments": {"command": "make"}}
            ]},
            {"role": "toolResult", "toolCallId": "a", "toolName": "Read", "content": [{"type": "text", "text": "class A {}"}], "isError": false},
            {"role": "toolResult", "toolCallId": "c", "toolName": "shell", "content": [{"type": "text", "text": "boom\nCommand exited with code 101"}], "isError": false}
        ]));
        let steps = steps(&span);
        let Step::Request(request) = &steps[0] else {
            panic!()
        };
        assert_eq!(request.trim(), "fix it");
        let calls: Vec<&Call> = steps
            .iter()
            .filter_map(|step| match step {
                Step::Call(call) => Some(call),
                Step::Request(_) | Step::Reply(_) | Step::Summary(_) => None,
            })
            .collect();
        let kinds: Vec<(CallKind, &str)> = calls
            .iter()
            .map(|call| (call.kind, call.target.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (CallKind::Read, "C:\\src\\a.cs"),
                (CallKind::Change, "src/b.rs"),
                (CallKind::Command, "cargo test"),
                (CallKind::Change, "src/c.rs"),
                (CallKind::Command, "make"),
            ]
        );
        assert!(calls[2].failed);
        assert!(!calls[0].failed);
        assert!(
            calls[4].output.is_none(),
            "a call without a result is pending"
        );
        assert!(matches!(&steps[1], Step::Reply(text) if text == "Looking."));
    }

    /// QA r100: `pytest | tail -5` exits 0; its output says the run failed, a read file's
    /// traceback does not make the read fail.
    #[test]
    fn a_commands_output_says_it_failed_a_files_text_does_not() {
        let span = messages(json!([
            {"role": "assistant", "stopReason": "toolUse", "content": [
                {"type": "toolCall", "id": "t", "name": "bash", "arguments": {"command": "python3 -m pytest -q 2>&1 | tail -5"}},
                {"type": "toolCall", "id": "r", "name": "read", "arguments": {"path": "notes.md"}},
                {"type": "toolCall", "id": "g", "name": "bash", "arguments": {"command": "grep -rn FAILED ci.log"}}
            ]},
            {"role": "toolResult", "toolCallId": "t", "toolName": "bash", "content": [{"type": "text", "text": "FAILED test_calc.py::test_zero - AssertionError\n1 failed, 1 passed in 0.02s"}], "isError": false},
            {"role": "toolResult", "toolCallId": "r", "toolName": "read", "content": [{"type": "text", "text": "Traceback (most recent call last):\nFAILED once"}], "isError": false},
            {"role": "toolResult", "toolCallId": "g", "toolName": "bash", "content": [{"type": "text", "text": "ci.log:3: FAILED test_x"}], "isError": false}
        ]));
        let failed: Vec<bool> = steps(&span)
            .iter()
            .filter_map(|step| match step {
                Step::Call(call) => Some(call.failed),
                Step::Request(_) | Step::Reply(_) | Step::Summary(_) => None,
            })
            .collect();
        assert_eq!(failed, [true, false, false]);
    }
}
