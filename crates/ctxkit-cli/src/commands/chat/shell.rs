//! `!cmd` and `!!cmd` at the input line, as in Pi: the command runs in the project as the `bash`
//! tool's commands do (`Agent::run_user_bash`), its output is shown, and the session records a
//! `bashExecution` message; the model sees it with the next prompt (`Ran `cmd``), unless `!!` kept
//! it out of the context.

use anyhow::Result;
use ctxkit_protocol::BashExecutionMessage;

use super::Chat;
use super::agent::Ask;
use super::session_file::FileCheck;
use super::ui::Ui;

/// Lines of a command's output shown in the chat: its end, where results and errors are (the
/// session and the model get the bounded whole).
const SHOWN_LINES: usize = 20;

/// A shell command typed at the input line: `!cmd` (into the context) or `!!cmd` (kept out);
/// `None` for anything else, `!` alone included (sent as a prompt, as Pi does).
pub fn parse(line: &str) -> Option<(&str, bool)> {
    let (rest, excluded) = match line.strip_prefix("!!") {
        Some(rest) => (rest, true),
        None => (line.strip_prefix('!')?, false),
    };
    let command = rest.trim();
    (!command.is_empty()).then_some((command, excluded))
}

impl Chat {
    /// Runs a command the user typed and shows its output; Esc or Ctrl-C stops it.
    pub async fn shell(&mut self, command: &str, excluded: bool, ask: &mut dyn Ask) -> Result<()> {
        // Never append onto a session file another program deleted or rewrote.
        match self.check_session_file(ask).await? {
            FileCheck::Usable => {}
            FileCheck::Changed => return Ok(()),
        }
        self.follow_session().await;
        self.ui.line(&format!("$ {command}"));
        self.ui
            .spin(&format!("Running `{command}`…  Esc or Ctrl-C to interrupt"));
        let ui = &self.ui;
        let message = self
            .agent
            .run_user_bash_watched(command, excluded, &|output| ui.tool_output(output))
            .await;
        self.ui.stop();
        show(&self.ui, &message?);
        Ok(())
    }
}

/// A command's run as the chat shows it, live and when a session is continued.
pub fn show(ui: &Ui, message: &BashExecutionMessage) {
    let lines: Vec<&str> = message.output.lines().collect();
    let hidden = lines.len().saturating_sub(SHOWN_LINES);
    let mut shown = Vec::new();
    if hidden > 0 {
        shown.push(format!("  … ({hidden} earlier lines)"));
    }
    shown.extend(lines[hidden..].iter().map(|line| format!("  {line}")));
    if shown.is_empty() {
        shown.push("  (no output)".to_owned());
    }
    ui.info(&shown.join("\n"));
    if message.truncated {
        let whole = message
            .full_output_path
            .as_deref()
            .map(|path| format!(": the whole output is in {path}"))
            .unwrap_or_default();
        ui.info(&format!("  (output cut to its last lines{whole})"));
    }
    if message.cancelled {
        ui.notice("(command cancelled)");
    } else if let Some(code) = message.exit_code.filter(|code| *code != 0) {
        ui.error(&format!("Command exited with code {code}"));
    }
    if message.exclude_from_context == Some(true) {
        ui.info("(not sent to the model: `!!` keeps it out of the context)");
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn bang_lines_are_commands_and_double_bang_ones_stay_out_of_the_context() {
        assert_eq!(parse("!ls -la"), Some(("ls -la", false)));
        assert_eq!(parse("!! git status "), Some(("git status", true)));
        assert_eq!(parse("!"), None);
        assert_eq!(parse("!!"), None);
        assert_eq!(parse("hello !ls"), None);
        assert_eq!(parse("/tree"), None);
    }
}
