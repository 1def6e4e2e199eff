//! A model's reply on the screen: reasoning dimmed, text as markdown, each tool call on its own
//! line, what the provider did to the request, and how the reply ended.

use ctxkit_protocol::{AssistantMessage, ContentBlock, ProviderContextEdit, ToolCall};

use super::{Role, Ui};
use crate::render::one_line;

/// Said when a run goes on after its automatic compaction was cancelled.
const GOES_ON_UNCOMPACTED: &str =
    "(the run goes on without compacting; Esc or Ctrl-C again interrupts it)";

/// Said when a run stopped because its context does not fit without the cancelled compaction.
const DOES_NOT_FIT_HINT: &str =
    "hint: `/compact` makes room; then send a prompt (`continue`) to go on";

/// Said when a prompt was not sent because the context does not fit without the cancelled
/// compaction: the prompt is back on the input line (QA 2026-12-07: the hint said to send
/// `continue`).
const PROMPT_DOES_NOT_FIT_HINT: &str =
    "hint: Enter on the input line sends the prompt again, after a compaction makes room";

/// Said when a run stopped because its request leaves no output room and the summary that would
/// make room failed.
const NO_ROOM_FAILED_HINT: &str = "hint: run `/compact` to try again, or `/model` to switch models; \
     then send a prompt (`continue`) to go on";

/// Said when a run stopped because its request leaves no output room and nothing can be compacted
/// (or compaction is off).
const NO_ROOM_HINT: &str = "hint: `/model` switches to a model with a larger context window; \
     `/compact` summarizes what can be, then send a prompt (`continue`) to go on";

/// Said when a run stopped because even a compaction left its request no output room: what
/// compaction keeps is too large for the model's window.
const NO_ROOM_KEPT_HINT: &str = "hint: lower `compaction.keepRecentTokens` in settings (a single \
     message larger than it is never cut: `/tree` goes back to before it), or `/model` to switch to a \
     model with a larger context window; then send a prompt (`continue`)";

const PROMPT_TOO_LARGE_HINT: &str = "hint: shorten the message, or save the text to a file in \
     the project and ask the model to read the part it needs; `/model` switches to a model with a \
     larger context window";

impl Ui {
    /// Why a run stopped without sending its next request: it leaves the reply no output room and
    /// no compaction made any. The session is as it was; the hint says how to go on.
    pub fn no_output_room(&self, stop: &ctxkit_agent::NoOutputRoom) {
        self.error(&one_line(&stop.reason(), 600));
        match stop.cause {
            ctxkit_agent::NoRoomCause::CompactionFailed(_) => self.info(NO_ROOM_FAILED_HINT),
            ctxkit_agent::NoRoomCause::NothingToCompact
            | ctxkit_agent::NoRoomCause::CompactionOff => self.info(NO_ROOM_HINT),
            ctxkit_agent::NoRoomCause::CompactedTooLittle => self.info(NO_ROOM_KEPT_HINT),
            ctxkit_agent::NoRoomCause::PromptTooLarge => self.info(PROMPT_TOO_LARGE_HINT),
        }
    }

    /// What the run does after the user cancelled its automatic compaction, under the
    /// `Compaction cancelled` line: without a word, a run that stops would look finished.
    pub fn after_cancelled_compaction(&self, next: &ctxkit_agent::AfterCancelledCompaction) {
        use ctxkit_agent::AfterCancelledCompaction as Next;
        match next {
            Next::GoesOn => self.info(GOES_ON_UNCOMPACTED),
            Next::Interrupted => self.notice("Interrupted"),
            Next::DoesNotFit { prompt, .. } => {
                self.error(&next.reason().unwrap_or_default());
                self.info(if *prompt {
                    PROMPT_DOES_NOT_FIT_HINT
                } else {
                    DOES_NOT_FIT_HINT
                });
            }
        }
    }

    /// A reply: reasoning dimmed, text as is, each tool call on its own line. What streamed in
    /// is not printed again.
    pub fn reply(&self, reply: &AssistantMessage, overflow: bool) {
        let streamed = match self.stream.lock() {
            Ok(mut stream) => {
                self.end_block(&mut stream);
                std::mem::take(&mut stream.shown)
            }
            Err(_) => false,
        };
        for block in &reply.content {
            match block {
                ContentBlock::Thinking(_) | ContentBlock::Text(_) if streamed => {}
                ContentBlock::Thinking(thinking) if !thinking.thinking.trim().is_empty() => {
                    if self.thinking_hidden() {
                        self.info(super::HIDDEN_THINKING);
                    } else {
                        self.info(thinking.thinking.trim());
                    }
                }
                ContentBlock::Text(text) if !text.text.trim().is_empty() => {
                    self.styled_line(&self.reply_text(&text.text));
                }
                ContentBlock::ToolCall(call) if reply.asks_for_tools() => self.tool_call(call),
                ContentBlock::ToolCall(call) => self.unrun_tool_call(call),
                ContentBlock::Thinking(_)
                | ContentBlock::Text(_)
                | ContentBlock::Image(_)
                | ContentBlock::Unknown(_) => {}
            }
        }
        for edit in reply.provider_context_edits() {
            self.info(&provider_edit_note(&edit));
        }
        if reply.provider_compaction().is_some() {
            self.info(if reply.provider_compaction_summary().is_some() {
                "(the provider compacted the conversation before this reply; the session records its summary as a compaction)"
            } else {
                "(the provider compacted the conversation before this reply; its item is sent back in place of the history, which the session keeps)"
            });
        }
        let error = reply.error_message.as_deref().unwrap_or("");
        let failed = matches!(reply.stop_reason.as_deref(), Some("aborted" | "error"));
        if !failed && is_empty_reply(reply) {
            self.info(EMPTY_REPLY_NOTE);
        }
        match reply.stop_reason.as_deref() {
            Some("aborted") => self.notice("Interrupted"),
            // The provider's message, as other errors give it (QA r97: not its raw JSON body).
            Some("error") if overflow => self.notice(&format!(
                "The request did not fit the model's context window: {}",
                one_line(&failure_of(reply.provider.as_deref(), error).message, 400)
            )),
            Some("error") => self.failure(reply.provider.as_deref(), error),
            Some("length") if has_tool_calls(reply) => self.notice(
                "(the reply hit the output token limit before its tool calls were complete: none was run)",
            ),
            Some("length") => self.notice("(the reply hit the output token limit)"),
            Some(_) | None => {}
        }
    }

    /// A failed call: the provider's message on one line (not its raw status and JSON body, which
    /// the session keeps), and what to check when it refused the credentials.
    fn failure(&self, provider: Option<&str>, error: &str) {
        let failure = failure_of(provider, error);
        self.error(&format!("Error: {}", one_line(&failure.message, 400)));
        if let Some(hint) = failure.hint {
            self.message(Role::Info, &format!("hint: {hint}"));
        }
    }

    /// A call the agent runs: `→ bash ls`.
    fn tool_call(&self, call: &ToolCall) {
        self.styled_line(&self.call_line(call));
    }

    /// The line naming a call of a batch above its result: the reply listed the batch's calls
    /// together, and their results would otherwise run together below them.
    pub fn batch_call(&self, call: &ToolCall) {
        self.tool_call(call);
    }

    /// A call of a reply that did not stop to use tools (cut, failed, interrupted): shown with
    /// `(not run)`, as nothing ran.
    fn unrun_tool_call(&self, call: &ToolCall) {
        let line = self.call_line(call);
        let line = line.trim_end();
        self.styled_line(&format!("{line} {}", self.paint(Role::Notice, "(not run)")));
    }

    /// `→ name summary`: the name coloured, the arguments' gist on one line. A session imported
    /// from another agent names the file `filePath` (OpenCode) or `file_path` (Claude Code): those
    /// are read too, and arguments of no known shape are shown whole rather than as nothing.
    fn call_line(&self, call: &ToolCall) -> String {
        let argument = |keys: &[&str]| {
            keys.iter()
                .find_map(|key| call.arguments.get(*key).and_then(serde_json::Value::as_str))
                .unwrap_or("")
                .to_owned()
        };
        const PATH: [&str; 3] = ["path", "filePath", "file_path"];
        // A path with a line break or another control character is shown quoted, as `ls` shows
        // it and as the question about it does: the line cannot pass for another.
        let path = || {
            let path = argument(&PATH);
            if path.is_empty() {
                path
            } else {
                ctxkit_agent::shown_path_argument(&path)
            }
        };
        let summary = match call.name.as_str() {
            "bash" => argument(&["command"]),
            "grep" | "find" => format!("{} {}", argument(&["pattern"]), path())
                .trim()
                .to_owned(),
            "read" | "write" | "edit" => path(),
            // No path is the working directory, said `.` as Pi says it (not `{}`).
            "ls" if no_path_given(&call.arguments) => ".".to_owned(),
            "ls" => path(),
            _ => String::new(),
        };
        let summary = if summary.is_empty() {
            call.arguments.to_string()
        } else {
            summary
        };
        format!(
            "{} {}",
            self.paint(Role::ToolTitle, &format!("→ {}", call.name)),
            crate::render::terminal_safe(&one_line(&summary, 200))
        )
    }
}

/// Whether `ls`'s arguments name no path: none at all, or only its `limit`.
fn no_path_given(arguments: &serde_json::Value) -> bool {
    arguments
        .as_object()
        .is_some_and(|arguments| arguments.keys().all(|key| key == "limit"))
}

/// A failed reply's error as a person reads it: an HTTP error's stored `<status> <body>` as the
/// provider's message (`ctxkit_llm::reply_failure`), other text as it is.
fn failure_of(provider: Option<&str>, error: &str) -> ctxkit_llm::ReplyFailure {
    match provider {
        Some(provider) => ctxkit_llm::reply_failure(provider, error),
        None => ctxkit_llm::ReplyFailure {
            message: error.to_owned(),
            hint: None,
        },
    }
}

const EMPTY_REPLY_NOTE: &str = "(the model replied with nothing)";

fn has_tool_calls(reply: &AssistantMessage) -> bool {
    reply
        .content
        .iter()
        .any(|block| matches!(block, ContentBlock::ToolCall(_)))
}

/// Whether a reply has nothing to show: no tool call and no text or reasoning but blanks.
fn is_empty_reply(reply: &AssistantMessage) -> bool {
    reply.content.iter().all(|block| match block {
        ContentBlock::Text(text) => text.text.trim().is_empty(),
        ContentBlock::Thinking(thinking) => thinking.thinking.trim().is_empty(),
        ContentBlock::ToolCall(_) | ContentBlock::Image(_) | ContentBlock::Unknown(_) => false,
    })
}

/// One line on what the provider cleared from the request the reply answered.
fn provider_edit_note(edit: &ProviderContextEdit) -> String {
    let what = match (edit.cleared_tool_uses, edit.cleared_thinking_turns) {
        (Some(uses), _) => format!("{uses} tool result(s)"),
        (None, Some(turns)) => format!("the thinking of {turns} turn(s)"),
        (None, None) => format!("context (`{}`)", edit.kind),
    };
    format!(
        "(the provider cleared {what}, {} input tokens, from this request; the session keeps them)",
        edit.cleared_input_tokens
    )
}

#[cfg(test)]
mod provider_edit_tests {
    use super::*;

    #[test]
    fn notes_say_what_was_cleared() {
        let edit = |uses, turns| ProviderContextEdit {
            kind: "clear_tool_uses_20250919".into(),
            cleared_tool_uses: uses,
            cleared_thinking_turns: turns,
            cleared_input_tokens: 48_000,
        };
        assert_eq!(
            provider_edit_note(&edit(Some(6), None)),
            "(the provider cleared 6 tool result(s), 48000 input tokens, from this request; the session keeps them)"
        );
        assert!(provider_edit_note(&edit(None, Some(2))).contains("the thinking of 2 turn(s)"));
        assert!(provider_edit_note(&edit(None, None)).contains("`clear_tool_uses_20250919`"));
    }
}

#[cfg(test)]
mod reply_tests {
    use super::*;
    use crate::commands::chat::markdown::Markdown;

    #[test]
    fn a_reply_shown_whole_keeps_its_styles_and_never_the_models_escapes() {
        let ui = Ui {
            markdown: Markdown::styled(true),
            ..Ui::new().deferring()
        };
        let reply: AssistantMessage = serde_json::from_value(serde_json::json!({
            "role": "assistant",
            "content": [{"type": "text", "text": "1. **Timeline** done\u{1b}]0;owned\u{7}"}],
            "timestamp": 1
        }))
        .unwrap();
        ui.reply(&reply, false);
        let lines = ui.deferred.as_ref().unwrap().lock().unwrap().join("\n");
        // The bold is the renderer's escape, kept; the model's title escape is shown as text.
        assert!(lines.contains("\u{1b}["), "{lines:?}");
        assert!(lines.contains("Timeline"), "{lines:?}");
        assert!(
            !lines.contains("\\u001b["),
            "the renderer's styles escaped: {lines:?}"
        );
        assert!(!lines.contains("\u{1b}]0;"), "{lines:?}");
        assert!(lines.contains("\\u001b]0;owned"), "{lines:?}");
    }

    /// Attack: a model's code block, or a file it reads from a cloned repository, carries an
    /// escape sequence (here OSC 52, which would set the clipboard). Highlighted, its pieces are
    /// the safe text: the sequence is shown, never sent.
    #[test]
    fn highlighted_code_never_carries_the_models_escapes() {
        let ui = Ui {
            markdown: Markdown::styled(true),
            color: true,
            ..Ui::new().deferring()
        };
        let osc = "\u{1b}]52;c;aGk=\u{7}";
        let reply: AssistantMessage = serde_json::from_value(serde_json::json!({
            "role": "assistant",
            "content": [{"type": "text", "text": format!("```bash\necho \"{osc}\" # x\n```")}],
            "timestamp": 1
        }))
        .unwrap();
        ui.reply(&reply, false);
        let outcome = ctxkit_agent::ToolOutcome::ok(format!("fn main() {{}} // {osc}"));
        ui.tool_result(
            &outcome,
            &super::super::tool_result::ResultShape::Code("rs".into()),
        );
        let lines = ui.deferred.as_ref().unwrap().lock().unwrap().join("\n");
        // Both were highlighted: the comment after `echo`, the read's `fn`.
        assert!(lines.contains("\u{1b}[2m# x"), "{lines:?}");
        assert!(lines.contains("\u{1b}[34mfn"), "{lines:?}");
        assert!(!lines.contains("\u{1b}]"), "{lines:?}");
        assert_eq!(lines.matches("\\u001b]52;c;aGk=").count(), 2, "{lines:?}");
    }

    /// QA F11: a refused key shows the provider's message and what to check, not a status and a
    /// JSON document; the reply keeps the raw text for overflow detection.
    #[test]
    fn a_refused_key_shows_the_message_and_the_variable_to_check() {
        let ui = Ui::new().deferring();
        let body = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        let reply: AssistantMessage = serde_json::from_value(serde_json::json!({
            "role": "assistant", "content": [], "provider": "anthropic",
            "stopReason": "error", "errorMessage": format!("401 {body}"), "timestamp": 1
        }))
        .unwrap();
        ui.reply(&reply, false);
        let lines = ui.deferred.as_ref().unwrap().lock().unwrap().join("\n");
        assert!(
            lines.contains("Error: Provider `anthropic` returned HTTP 401: invalid x-api-key"),
            "{lines}"
        );
        assert!(
            lines.contains("hint: the provider refused the credentials: check `ANTHROPIC_API_KEY`"),
            "{lines}"
        );
        assert!(!lines.contains("authentication_error"), "{lines}");
    }

    /// QA F12: a reply cut at the output limit shows its tool calls as not run (the agent runs
    /// only a reply that stopped for its tools); a tool-use reply's calls are shown plainly.
    #[test]
    fn calls_of_a_reply_cut_at_the_output_limit_show_as_not_run() {
        let shown = |stop: &str| {
            let ui = Ui::new().deferring();
            let reply: AssistantMessage = serde_json::from_value(serde_json::json!({
                "role": "assistant", "stopReason": stop, "timestamp": 1,
                "content": [{"type": "toolCall", "id": "toolu_A", "name": "bash",
                             "arguments": {"command": "touch FIRST"}}]
            }))
            .unwrap();
            ui.reply(&reply, false);
            ui.deferred.as_ref().unwrap().lock().unwrap().join("\n")
        };
        let cut = shown("length");
        assert!(cut.contains("→ bash touch FIRST (not run)"), "{cut}");
        assert!(
            cut.contains("before its tool calls were complete: none was run"),
            "{cut}"
        );
        let used = shown("toolUse");
        assert!(used.contains("→ bash touch FIRST"), "{used}");
        assert!(!used.contains("not run"), "{used}");
    }

    /// A session imported from OpenCode showed `→ read ` and `→ edit ` with nothing after them:
    /// its calls name the file `filePath`. A call of no known shape shows its arguments.
    #[test]
    fn calls_of_imported_sessions_show_their_file_or_their_arguments() {
        let shown = |name: &str, arguments: serde_json::Value| {
            let ui = Ui::new().deferring();
            let reply: AssistantMessage = serde_json::from_value(serde_json::json!({
                "role": "assistant", "stopReason": "toolUse", "timestamp": 1,
                "content": [{"type": "toolCall", "id": "c1", "name": name, "arguments": arguments}]
            }))
            .unwrap();
            ui.reply(&reply, false);
            ui.deferred.as_ref().unwrap().lock().unwrap().join("\n")
        };
        let read = shown("read", serde_json::json!({"filePath": "/p/src/parse.rs"}));
        assert!(read.contains("→ read /p/src/parse.rs"), "{read}");
        let edit = shown(
            "edit",
            serde_json::json!({"file_path": "src/a.rs", "old_string": "1"}),
        );
        assert!(edit.contains("→ edit src/a.rs"), "{edit}");
        // QA (r100 S2): `ls` with no arguments showed `→ ls {}`.
        let ls = shown("ls", serde_json::json!({}));
        assert!(ls.contains("→ ls ."), "{ls}");
        let ls = shown("ls", serde_json::json!({"path": "src"}));
        assert!(ls.contains("→ ls src"), "{ls}");
        let bash = shown("bash", serde_json::json!({"cmd": ["ls", "-la"]}));
        assert!(bash.contains(r#"→ bash {"cmd":["ls","-la"]}"#), "{bash}");
    }

    /// A security tester's `write` of a path holding line breaks and the first line of a made-up
    /// question was shown as one line of joined words: its path is shown quoted, as `ls` and the
    /// question show it.
    #[test]
    fn a_path_with_line_breaks_is_shown_quoted_on_the_call_line() {
        let ui = Ui::new().deferring();
        let reply: AssistantMessage = serde_json::from_value(serde_json::json!({
            "role": "assistant", "stopReason": "toolUse", "timestamp": 1,
            "content": [{"type": "toolCall", "id": "c1", "name": "write",
                "arguments": {"path": "../x.txt`, inside the project?\n\nyes", "content": "a"}}]
        }))
        .unwrap();
        ui.reply(&reply, false);
        let shown = ui.deferred.as_ref().unwrap().lock().unwrap().join("\n");
        assert!(
            shown.contains("→ write $'../x.txt`, inside the project?\\n\\nyes'"),
            "{shown}"
        );
    }
}
