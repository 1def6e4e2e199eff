//! What `ctxkit chat` shows when it starts: the model and the session, the end of a continued
//! session's conversation as it was shown when it happened, and the instruction files the model is
//! given.

use ctxkit_protocol::AgentMessage;

use super::Chat;
use crate::render::one_line;

/// `Instructions from ../AGENTS.md, CLAUDE.md`: the context files the model is given, each
/// relative to `cwd` when in it, below it or in a folder above it (`../`), else whole (the ctxkit
/// home's); `None` when there is none.
fn context_files_line(
    files: &[ctxkit_resources::ContextFile],
    cwd: &std::path::Path,
) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let names: Vec<String> = files
        .iter()
        .map(|file| crate::render::terminal_safe(&shown_path(&file.path, cwd)).into_owned())
        .collect();
    Some(format!("Instructions from {}", names.join(", ")))
}

/// `path` as the banner names it. A file above `cwd` is `../AGENTS.md`, not its whole path: beside
/// a whole path, a bare `CLAUDE.md` read as that path's neighbour (QA r98).
fn shown_path(path: &std::path::Path, cwd: &std::path::Path) -> String {
    if let Ok(below) = path.strip_prefix(cwd) {
        return below.display().to_string();
    }
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return path.display().to_string();
    };
    match cwd.ancestors().position(|ancestor| ancestor == folder) {
        Some(levels) => format!("{}{}", "../".repeat(levels), name.to_string_lossy()),
        None => path.display().to_string(),
    }
}

/// When the banner is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Banner {
    /// As the chat starts: `quietStartup` leaves out the banner's own lines.
    Startup,
    /// After `/resume` switched sessions: always in full, it says where the chat now is.
    Switched,
}

impl Chat {
    /// The first lines: model, session, instruction files, how to get help; for a continued
    /// session, where it stands. At startup with `quietStartup` (Pi's `true`: no startup output)
    /// only a continued session's conversation, a warning about its directory and the status line
    /// are shown; with `"header"` (Pi's header without the loaded resources) all but the line
    /// naming the instruction files.
    pub async fn banner(&self, when: Banner) {
        use ctxkit_settings::QuietStartup;
        let startup = when == Banner::Startup;
        let quiet = startup && self.quiet_startup == QuietStartup::All;
        let resources_shown = !(startup && self.quiet_startup == QuietStartup::Header);
        let line = |text: &str| {
            if !quiet {
                self.ui.say(text);
            }
        };
        let config = self.client.config();
        let window = match self.client.context_window() {
            Some(window) => format!("{window}-token window"),
            None => "unknown window: automatic compaction off".to_owned(),
        };
        let (file, entries, name) = self
            .engine
            .with_session(|session| {
                (
                    session.path().map(|path| path.display().to_string()),
                    session.entries().len(),
                    session.session_name(),
                )
            })
            .await;
        line(&format!(
            "ctxkit chat · {} ({window})",
            config.display_name()
        ));
        if let Some(keyed) = &self.keyed_model {
            line(&format!(
                "No model configured: using {}, since {} (`ctxkit config set defaultModel provider/id` picks one; `ctxkit models` lists them)",
                keyed.model, keyed.source
            ));
        }
        // Said of the session open, not of `--no-session`: `/resume` and `/import` open a file.
        let session = match &file {
            None => "in memory (nothing is saved)".to_owned(),
            Some(file) => match &self.shown_as {
                Some((copy, shown)) if copy.display().to_string() == *file => shown.clone(),
                _ => file.clone(),
            },
        };
        if entries > 0 {
            let name = name.map(|name| format!(" “{name}”")).unwrap_or_default();
            line(&format!(
                "Continuing session{name} ({entries} entries): {session}"
            ));
            self.replay().await;
            // Up brings the session's earlier prompts back, as in Pi.
            self.load_prompt_history().await;
            self.other_directory_note().await;
            self.usage_line().await;
        } else {
            line(&format!("Session: {session}"));
        }
        if quiet {
            return;
        }
        if resources_shown
            && let Some(files) = context_files_line(&self.resources.context_files, &self.cwd)
        {
            self.ui.info(&files);
        }
        self.ui
            .info("/help lists commands · Esc or Ctrl-C interrupts · Ctrl-D quits");
    }

    /// The end of the conversation so far, as it was shown when it happened.
    async fn replay(&self) {
        /// Messages shown when a session is continued.
        const REPLAYED: usize = 12;
        // Only the messages shown are read: a session of a million messages is not parsed whole
        // to show its last twelve.
        let (skipped, transcript) = self
            .engine
            .with_session(|session| {
                let context = session.leaf_context();
                let skipped = context.messages.len().saturating_sub(REPLAYED);
                let shown = session.messages(&context.messages[skipped..]);
                (skipped, shown.unwrap_or_default())
            })
            .await;
        if skipped > 0 {
            self.ui.info(&format!(
                "… {skipped} earlier messages (/tree lists every entry)"
            ));
        }
        // The calls of the last reply, for the language of their results.
        let mut calls: Vec<ctxkit_protocol::ToolCall> = Vec::new();
        for message in &transcript {
            match message {
                AgentMessage::User(user) => {
                    let text = user.content.joined_text("\n");
                    let (files, typed) = super::attach::split_attached(&text);
                    self.ui.line(&format!("> {}", one_line(typed, 200)));
                    if !files.is_empty() {
                        self.ui.info(&format!("(attached: {})", files.join(", ")));
                    }
                }
                AgentMessage::Assistant(reply) => {
                    self.ui.reply(reply, false);
                    calls = reply
                        .content
                        .iter()
                        .filter_map(|block| block.as_tool_call().cloned())
                        .collect();
                }
                AgentMessage::ToolResult(result) => {
                    let shape = calls
                        .iter()
                        .find(|call| call.id == result.tool_call_id)
                        .map(super::ui::result_shape)
                        .unwrap_or_default();
                    // The details keep a write's or an edit's change, shown as it was live.
                    let outcome = ctxkit_agent::ToolOutcome {
                        is_error: result.is_error,
                        details: result.details.clone(),
                        ..ctxkit_agent::ToolOutcome::ok(result.content.joined_text("\n"))
                    };
                    self.ui.tool_result(&outcome, &shape);
                }
                AgentMessage::CompactionSummary(_) => {
                    self.ui
                        .info("[the earlier conversation, compacted into a summary]");
                }
                AgentMessage::BranchSummary(_) => {
                    self.ui.info("[a summary of the branch left behind]");
                }
                AgentMessage::BashExecution(run) => {
                    self.ui.line(&format!("$ {}", one_line(&run.command, 200)));
                    super::shell::show(&self.ui, run);
                }
                AgentMessage::Custom(custom) => super::notes::show_custom(
                    &self.ui,
                    &custom.custom_type,
                    &custom.content,
                    custom.display,
                ),
                AgentMessage::Unknown(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    #[test]
    fn files_above_the_working_folder_are_named_from_it() {
        let file = |path: &str| ctxkit_resources::ContextFile {
            path: PathBuf::from(path),
            content: String::new(),
        };
        let files = [
            file("/home/me/.ctxkit/AGENTS.md"),
            file("/work/proj/AGENTS.md"),
            file("/work/proj/sub/CLAUDE.md"),
        ];
        assert_eq!(
            context_files_line(&files, Path::new("/work/proj/sub")).unwrap(),
            "Instructions from /home/me/.ctxkit/AGENTS.md, ../AGENTS.md, CLAUDE.md"
        );
    }
}
