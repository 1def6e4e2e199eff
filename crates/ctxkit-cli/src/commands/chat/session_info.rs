//! Pi 1.6's session commands that only read or copy: `/session` (what the session is and what it
//! used), `/copy` (the last reply to the clipboard), `/clone` (a new session at the current
//! position) and `/hotkeys` (the keys of the input line).

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use ctxkit_engine::ForkPosition;
use ctxkit_protocol::{AgentMessage, AssistantMessage, ContentBlock};
use ctxkit_session::Session;
use indicatif::HumanCount;

use super::Chat;
use super::clipboard::{self, Copied, Surroundings};

/// The messages of a session file, every branch (as Pi's `/session` counts them).
#[derive(Debug, Default, PartialEq)]
pub(super) struct MessageCounts {
    pub total: u64,
    pub user: u64,
    pub assistant: u64,
    pub tool_calls: u64,
    pub tool_results: u64,
    /// The replies of each `provider/model`, as Pi's `/session` breaks the cost down.
    pub by_model: BTreeMap<String, ModelUse>,
}

/// What one model's replies used: their recorded cost, tokens and number.
#[derive(Debug, Default, PartialEq)]
pub(super) struct ModelUse {
    pub replies: u64,
    pub tokens: u64,
    pub cost: f64,
}

impl ModelUse {
    fn add(&mut self, reply: &AssistantMessage) {
        self.replies += 1;
        if let Some(usage) = &reply.usage {
            let counted = usage.input + usage.output + usage.cache_read + usage.cache_write;
            self.tokens += counted.max(usage.total_tokens);
            self.cost += usage.cost.as_ref().map_or(0.0, |cost| cost.total);
        }
    }
}

/// `Messages (every branch): 11 in all: 4 from the user, 5 replies (1 tool call), 1 tool result,
/// 1 other`: the parts add up to the whole (a tool call is in a reply, not a message of its own;
/// QA, 2026-12-07), the other roles (`!` commands, extensions' messages) counted last.
fn messages_line(counts: &MessageCounts) -> String {
    let counted = crate::render::counted;
    let other = counts
        .total
        .saturating_sub(counts.user + counts.assistant + counts.tool_results);
    let other = if other > 0 {
        format!(", {other} other")
    } else {
        String::new()
    };
    format!(
        "Messages (every branch): {} in all: {} from the user, {} ({}), {}{other}",
        counts.total,
        counts.user,
        counted(counts.assistant, "reply"),
        counted(counts.tool_calls, "tool call"),
        counted(counts.tool_results, "tool result")
    )
}

pub(super) fn message_counts(session: &Session) -> MessageCounts {
    let mut counts = MessageCounts::default();
    for entry in session.entries() {
        let Some(role) = entry.role() else {
            continue;
        };
        counts.total += 1;
        match role {
            "user" => counts.user += 1,
            "toolResult" => counts.tool_results += 1,
            "assistant" => {
                counts.assistant += 1;
                if let Some(Ok(AgentMessage::Assistant(reply))) = entry.parse_message() {
                    let calls = reply
                        .content
                        .iter()
                        .filter(|block| matches!(block, ContentBlock::ToolCall(_)))
                        .count();
                    counts.tool_calls += calls as u64;
                    let model = format!(
                        "{}/{}",
                        reply.provider.as_deref().unwrap_or("?"),
                        reply.model.as_deref().unwrap_or("?")
                    );
                    counts.by_model.entry(model).or_default().add(&reply);
                }
            }
            _ => {}
        }
    }
    counts
}

/// The text of the last reply the model finished, as Pi's `/copy` picks it from `replies`
/// (newest first): a reply with no text from a turn that did not end normally (aborted, failed,
/// only calling tools) is passed over.
pub(super) fn last_reply_text(
    replies: impl IntoIterator<Item = AssistantMessage>,
) -> Option<String> {
    let reply = replies
        .into_iter()
        .find(|reply| reply.stop_reason.as_deref() == Some("stop") || has_text(&reply.content))?;
    let text: String = reply
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The replies on the current branch, newest first, parsed one at a time.
pub(super) fn replies_newest_first(
    session: &Session,
) -> impl Iterator<Item = AssistantMessage> + '_ {
    session
        .branch_path(None)
        .into_iter()
        .rev()
        .filter(|entry| entry.role() == Some("assistant"))
        .filter_map(|entry| match entry.parse_message() {
            Some(Ok(AgentMessage::Assistant(reply))) => Some(reply),
            _ => None,
        })
}

fn has_text(content: &[ContentBlock]) -> bool {
    content
        .iter()
        .filter_map(ContentBlock::as_text)
        .any(|text| !text.trim().is_empty())
}

/// What the session is: the lines of `/session` before its numbers.
struct Identity {
    name: Option<String>,
    file: Option<String>,
    id: String,
    cwd: String,
    compactions: usize,
}

fn identity(session: &Session) -> Identity {
    Identity {
        name: session.session_name(),
        file: session.path().map(|path| path.display().to_string()),
        id: session.id().to_owned(),
        cwd: session.cwd().to_owned(),
        compactions: session
            .branch_path(None)
            .iter()
            .filter(|entry| entry.type_name() == "compaction")
            .count(),
    }
}

const HOTKEYS: &str = "\
Keys of the input line:
  Enter                     send the prompt
  Alt-Enter / Ctrl-J        a new line of the same prompt (so does a final \\; Shift-Enter and
                            Ctrl-Enter too, in a terminal that tells them from Enter)
  Tab                       complete an @path (fuzzy over the project's files) or a /command's
                            name; twice lists them
  Up / Down                 earlier prompts (Ctrl-N too); Ctrl-R searches them
  Ctrl-A / Ctrl-E           start / end of the line
  Alt-B / Alt-F             a word back / forward (Ctrl-Left / Ctrl-Right too)
  Ctrl-W / Alt-D            delete a word backwards / forwards
  Ctrl-U / Ctrl-K           delete to the start / end of the line
  Ctrl-Y / Alt-Y            paste what was deleted last / cycle through earlier deletions
  Ctrl-_                    undo
  Ctrl-G                    write the prompt in $EDITOR (/edit too)
  Shift-Tab                 the next thinking level: off, minimal, low, medium, high
  Ctrl-P                    the next model (of enabledModels, else of those /model offers)
  Ctrl-T                    reasoning shown in full or as one line (saved as hideThinkingBlock)
  Ctrl-L                    clear the screen
  Ctrl-C                    drop the line being typed
  Ctrl-D                    leave, at an empty line (/quit too)
  Esc Esc                   at an empty line: rewind to an earlier prompt
While the model or a tool works:
  Ctrl-C or Esc             interrupt it (and cancel a running compaction)
  typing + Enter            steers it: the line goes with the next request, after the tools
                            running now, or as one more turn after the last reply (a /command
                            waits for the input line)
  typing                    kept, and back on the input line when the turn ends
In a list (/tree, /model, /scoped-models, /settings, the rewind):
  Up / Down, j / k          move; Page Up / Page Down, Home / End too
  /                         search the rows (Enter picks the row under the cursor, Esc ends it)
  Enter / Esc               pick / leave; /tree: l labels, f the next filter
Also:
  /                         commands (/help lists them)
  !<command> / !!<command>  run a shell command, its output into the context / not";

impl Chat {
    /// `/session`.
    pub(super) async fn session_info(&self) -> Result<()> {
        let (identity, counts) = self
            .engine
            .with_session(|session| (identity(session), message_counts(session)))
            .await;
        let spend = self.spend().await;
        let mut lines = vec!["Session".to_owned()];
        if let Some(name) = &identity.name {
            lines.push(format!("  Name:    {name}"));
        }
        let file = match (&self.shown_as, identity.file) {
            (Some((_, stored)), _) => stored.clone(),
            (None, Some(file)) => file,
            (None, None) => "in memory (--no-session): not written anywhere".to_owned(),
        };
        lines.extend(field_lines("File:", &file));
        lines.push(format!("  ID:      {}", identity.id));
        lines.extend(field_lines("Folder:", &identity.cwd));
        lines.push(messages_line(&counts));
        // The window in force, as the status line reads it (the provider's stated limit once it
        // gave one).
        if let Ok(Some(figure)) = self.context_figure().await {
            let configured = figure
                .configured_shown()
                .map_or_else(String::new, |configured| format!(" ({configured})"));
            lines.push(format!(
                "Context: {} / {} tokens, {}{configured}",
                figure.tokens_shown(),
                figure.window,
                figure.percent_shown()
            ));
        }
        lines.extend(token_lines(&spend));
        lines.push("Cost".to_owned());
        for line in crate::commands::spend::breakdown_lines(&spend) {
            lines.push(format!("  {}", line.trim_start()));
        }
        lines.extend(model_lines(
            &counts.by_model,
            &self.client.config().display_name(),
        ));
        lines.push(match identity.compactions {
            0 => "No compaction on this branch".to_owned(),
            1 => "1 compaction on this branch; what it summarized stays in the session \
                  (/compactions shows it, the model's `recall` reads it back)"
                .to_owned(),
            count => format!(
                "{count} compactions on this branch; what they summarized stays in the session \
                 (/compactions lists them, the model's `recall` reads it back)"
            ),
        });
        self.ui.say(&lines.join("\n"));
        Ok(())
    }

    /// `/copy`.
    pub(super) async fn copy_last_reply(&self) -> Result<()> {
        let text = self
            .engine
            .with_session(|session| last_reply_text(replies_newest_first(session)))
            .await;
        let Some(text) = text else {
            bail!("No reply to copy yet");
        };
        let surroundings = Surroundings::of_this_process();
        // The tools run off the chat's thread (one may take seconds); the terminal is written
        // on it, as every line is (it holds the output's lock).
        let (tool_text, tool_surroundings) = (text.clone(), surroundings.clone());
        let tool = tokio::task::spawn_blocking(move || {
            clipboard::copy_by_tool(&tool_text, &tool_surroundings, clipboard::run_tool)
        })
        .await?;
        let copied = clipboard::copy(&text, &surroundings, tool, |sequence| {
            self.ui.send_to_terminal(sequence)
        });
        match copied {
            Ok(Copied::ByTool(tool)) => self
                .ui
                .say(&format!("Copied the last reply to the clipboard ({tool})")),
            Ok(Copied::ByTerminal(_)) => self.ui.say(
                "Copied the last reply to the clipboard (sent to the terminal as OSC 52; a \
                 terminal that does not take it copies nothing)",
            ),
            Err(reason) => bail!("{reason}"),
        }
        Ok(())
    }

    /// `/clone`: a new session holding the current branch up to here, as Pi's.
    pub(super) async fn clone_session(&mut self) -> Result<()> {
        let leaf = self
            .engine
            .with_session(|session| session.leaf_id().map(str::to_owned))
            .await;
        let Some(leaf) = leaf else {
            self.ui.info("Nothing to clone yet");
            return Ok(());
        };
        self.fork_with(&leaf, ForkPosition::At, "Cloned").await?;
        Ok(())
    }

    /// `/hotkeys`.
    pub(super) fn hotkeys(&self) {
        self.ui.line(&super::slash::fitted(HOTKEYS));
    }
}

/// The replies' cost per model, when it says more than the total: more than one model answered,
/// or the one that did is not the model in use now (as Pi's `/session`).
/// Columns a `/session` line keeps within: a terminal's usual width.
const SESSION_INFO_COLUMNS: usize = 80;

/// A labelled line of `/session`; a value too long for its column (a session file's path is
/// about 110 characters) goes on a line of its own below its label, where the terminal wraps
/// only the path and a copy of it picks up no label.
fn field_lines(label: &str, value: &str) -> Vec<String> {
    let line = format!("  {label:<9}{value}");
    if line.chars().count() <= SESSION_INFO_COLUMNS {
        return vec![line];
    }
    vec![format!("  {label}"), format!("    {value}")]
}

fn model_lines(by_model: &BTreeMap<String, ModelUse>, current: &str) -> Vec<String> {
    let only_current = by_model.len() == 1 && by_model.contains_key(current);
    if by_model.is_empty() || only_current {
        return Vec::new();
    }
    let mut lines = vec!["  Replies by model:".to_owned()];
    for (model, used) in by_model {
        let cost = if used.cost > 0.0 {
            crate::commands::spend::dollars(used.cost)
        } else {
            "no cost recorded".to_owned()
        };
        lines.push(format!(
            "    {model}: {cost} over {} ({} tokens)",
            crate::render::counted(used.replies as usize, "reply"),
            crate::commands::spend::short_count(used.tokens),
        ));
    }
    lines
}

/// `/session`'s token lines: the input (its cached share), output and total over every call.
fn token_lines(spend: &ctxkit_session::SessionSpend) -> Vec<String> {
    let (input, output) = spend.total_tokens();
    let (cache_read, cache_write) = spend.total_cache_tokens();
    let mut lines = vec![
        "Tokens".to_owned(),
        format!("  Input:   {}", HumanCount(input)),
    ];
    if input > 0 && (cache_read > 0 || cache_write > 0) {
        let share = cache_read as f64 * 100.0 / input as f64;
        lines.push(format!(
            "    cached:   {} ({share:.1}%)",
            HumanCount(cache_read)
        ));
        let written = if cache_write > 0 {
            format!(" ({} written to the cache)", HumanCount(cache_write))
        } else {
            String::new()
        };
        lines.push(format!(
            "    uncached: {}{written}",
            HumanCount(input - cache_read)
        ));
    }
    lines.push(format!("  Output:  {}", HumanCount(output)));
    lines.push(format!(
        "  Total:   {}",
        HumanCount(input.saturating_add(output))
    ));
    lines
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn reply(text: &str, stop: &str) -> AssistantMessage {
        serde_json::from_value(serde_json::json!({
            "role": "assistant", "stopReason": stop,
            "content": if text.is_empty() { serde_json::json!([]) }
                       else { serde_json::json!([{"type": "text", "text": text}]) }
        }))
        .unwrap()
    }

    /// QA (2026-12-07): "11 in all, 4 from the user, 5 replies, 1 tool call, 1 tool result" did
    /// not add up: the tool call is in a reply, and a `!` command's message was not named.
    #[test]
    fn the_message_counts_add_up() {
        let counts = MessageCounts {
            total: 11,
            user: 4,
            assistant: 5,
            tool_calls: 1,
            tool_results: 1,
            by_model: BTreeMap::new(),
        };
        assert_eq!(
            messages_line(&counts),
            "Messages (every branch): 11 in all: 4 from the user, 5 replies (1 tool call), \
             1 tool result, 1 other"
        );
    }

    /// `/session` printed the file after its label, so that an 80-column terminal broke the
    /// path in the middle of a word: a long value goes on its own line.
    #[test]
    fn a_long_path_goes_on_its_own_line() {
        assert_eq!(field_lines("ID:", "abc"), ["  ID:      abc"]);
        let path = format!(
            "/home/someone/.ctxkit/sessions/--home-someone-project--/{}.jsonl",
            "x".repeat(40)
        );
        assert_eq!(
            field_lines("File:", &path),
            ["  File:".to_owned(), format!("    {path}")]
        );
    }

    #[test]
    fn the_last_reply_copied_skips_turns_that_ended_without_text() {
        let finished = reply("  The fix is in parser.rs.\n", "stop");
        let calling: AssistantMessage = serde_json::from_value(serde_json::json!({
            "role": "assistant", "stopReason": "toolUse",
            "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}]
        }))
        .unwrap();
        let aborted = reply("", "aborted");
        let newest_first = [aborted, calling, finished.clone()];
        assert_eq!(
            last_reply_text(newest_first).as_deref(),
            Some("The fix is in parser.rs.")
        );
        // A reply that ended normally stays the last one even with no text: nothing to copy.
        assert_eq!(last_reply_text([reply("", "stop"), finished]), None);
        assert_eq!(last_reply_text([]), None);
    }

    #[test]
    fn messages_are_counted_over_every_branch_with_their_tool_calls() {
        let mut session = Session::in_memory("/tmp");
        let user: AgentMessage =
            serde_json::from_value(serde_json::json!({"role": "user", "content": "hi"})).unwrap();
        let calls: AgentMessage = serde_json::from_value(serde_json::json!({
            "role": "assistant", "stopReason": "toolUse", "provider": "openai", "model": "gpt-5",
            "usage": {"input": 100, "output": 20, "cacheRead": 900, "cacheWrite": 0,
                      "totalTokens": 1020, "cost": {"input": 0.01, "output": 0.02,
                      "cacheRead": 0.001, "cacheWrite": 0.0, "total": 0.031}},
            "content": [{"type": "toolCall", "id": "a", "name": "read", "arguments": {}},
                        {"type": "toolCall", "id": "b", "name": "ls", "arguments": {}}]
        }))
        .unwrap();
        let result: AgentMessage = serde_json::from_value(serde_json::json!({
            "role": "toolResult", "toolCallId": "a", "toolName": "read",
            "content": [{"type": "text", "text": "x"}], "isError": false
        }))
        .unwrap();
        let first = session.append_message(user.clone()).unwrap();
        session.append_message(calls).unwrap();
        session.append_message(result).unwrap();
        session.branch(&first).unwrap();
        session.append_message(user).unwrap();
        let counts = message_counts(&session);
        let used = ModelUse {
            replies: 1,
            tokens: 1020,
            cost: 0.031,
        };
        assert_eq!(
            counts,
            MessageCounts {
                total: 4,
                user: 2,
                assistant: 1,
                tool_calls: 2,
                tool_results: 1,
                by_model: BTreeMap::from([("openai/gpt-5".to_owned(), used)]),
            }
        );
        // The model in use now answered alone: the total says it all.
        assert!(model_lines(&counts.by_model, "openai/gpt-5").is_empty());
        assert_eq!(
            model_lines(&counts.by_model, "anthropic/claude-sonnet-4-5"),
            [
                "  Replies by model:",
                "    openai/gpt-5: $0.0310 over 1 reply (1.0k tokens)"
            ]
        );
    }
}
