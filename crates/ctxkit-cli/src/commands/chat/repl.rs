//! The input loop: a rustyline line editor (history, editing, Ctrl-C clears the line, Ctrl-D
//! quits), slash commands, and prompts handed to the agent loop.

use anyhow::{Context as _, Result};
use rustyline::error::ReadlineError;
use rustyline::{Behavior, CompletionType, Config, Editor};
use tokio::runtime::Runtime;

use super::Chat;
use super::agent::{Ask, PromptEnd};
use super::banner::Banner;
use super::input::{KeyRequest, KeyRequests};
use super::large_input::{self, LargeInput};
use super::rewind::DoubleEscapeAction;
use super::session_file::Remember;
use super::slash::Action;
use super::store_health::{Look, StoreCheck};
use crate::Outcome;

const PROMPT: &str = "> ";

/// The terminal: the line editor, also used for questions (bash confirmation, `/resume`).
struct Terminal {
    editor: super::input::ChatEditor,
    /// Input too large for the line editor, handed over by it ([`LargeInput`]).
    large: LargeInput,
    /// Where keys typed after a one-key answer go: the next input line.
    ui: super::ui::Ui,
}

impl Ask for Terminal {
    /// Every question asked at the terminal may quote a name or a command someone else chose:
    /// its control characters are shown as escapes, never written to the terminal.
    fn ask(&mut self, prompt: &str) -> Option<String> {
        let answer = self
            .editor
            .readline(&crate::render::terminal_safe(prompt))
            .ok();
        // An answer is taken as it is, whatever its size.
        self.large.take().or(answer)
    }

    fn ask_secret(&mut self, prompt: &str) -> Option<String> {
        use std::io::IsTerminal as _;
        if !std::io::stdin().is_terminal() {
            return self.ask(prompt);
        }
        rpassword::prompt_password(crate::render::terminal_safe(prompt)).ok()
    }

    fn ask_key(&mut self, prompt: &str, keys: &str) -> Option<char> {
        let typing = self.ui.typed_within(super::key_question::TYPING_RECENTLY);
        match super::escape::read_key(&crate::render::terminal_safe(prompt), keys, typing) {
            Ok((answer, after)) => {
                self.ui.keep_typed(&after);
                answer
            }
            // Not a terminal (or it cannot be switched): a typed line.
            Err(()) => loop {
                let answer = self.ask(prompt)?;
                if let Some(key) = super::key_question::key_of_line(&answer, keys) {
                    return Some(key);
                }
            },
        }
    }
}

/// A second Ctrl-C at the input line within this long of the first quits the chat, as in Pi 1.6
/// (QA 2026-12-07: ctxkit said "(Ctrl-D or /quit to leave)" each time).
const QUIT_AGAIN_WITHIN: std::time::Duration = std::time::Duration::from_millis(500);

/// Esc twice at an empty input line, as `doubleEscapeAction` says: the rewind or `/fork`'s list;
/// the text to put on the input line, if one was picked.
fn after_double_escape(
    runtime: &Runtime,
    chat: &mut Chat,
    terminal: &mut Terminal,
) -> Option<String> {
    let done = match chat.double_escape {
        DoubleEscapeAction::Fork => runtime.block_on(chat.fork("")),
        // `Nothing` turns the key off ([`super::rewind::DoubleEscape::follow`]).
        DoubleEscapeAction::Rewind | DoubleEscapeAction::Nothing => {
            runtime.block_on(chat.rewind(terminal))
        }
    };
    match done {
        Ok(Action::Edit(text)) => Some(as_typed(text)),
        Ok(_) => None,
        Err(error) => {
            show_error(chat, &error);
            None
        }
    }
}

/// What a key that ended the line asked for, done; the text to put back on the input line.
fn after_key_request(
    runtime: &Runtime,
    chat: &mut Chat,
    request: KeyRequest,
    line: String,
) -> String {
    let done = match request {
        // The line goes to `$EDITOR`, and what was saved comes back.
        KeyRequest::Edit => return in_editor(chat, line),
        KeyRequest::CycleThinking => runtime.block_on(chat.cycle_thinking()),
        KeyRequest::CycleModel => runtime.block_on(chat.cycle_model()),
        KeyRequest::ToggleThinkingBlocks => chat.toggle_thinking_blocks(),
    };
    if let Err(error) = done {
        show_error(chat, &error);
    }
    line
}

/// Runs `text` when it is a `!command` (or says how to write one, for `!` alone); whether it was.
fn ran_as_shell(runtime: &Runtime, chat: &mut Chat, terminal: &mut Terminal, text: &str) -> bool {
    if matches!(text, "!" | "!!") {
        chat.ui.line(BANG_USAGE);
        return true;
    }
    let Some((command, excluded)) = super::shell::parse(text) else {
        return false;
    };
    if let Err(error) = runtime.block_on(chat.shell(command, excluded, terminal)) {
        show_error(chat, &error);
    }
    true
}

/// Said for `!` or `!!` alone (they were sent to the model as prompts).
const BANG_USAGE: &str = "`!<command>` runs a command, its output into the context; `!!<command>` \
runs it and keeps its output out";

/// Whether a line is a `/command`: a `/` and a name (letters, digits, `-`, `_`, `:`, `.`), or `/`
/// alone (the list of commands). A line that starts with a path (`/usr/bin/python3 crashes, why?`)
/// is a prompt, as in Pi, which sends every line that names no command to the model.
fn names_a_command(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('/') else {
        return false;
    };
    if rest.trim().is_empty() {
        return true;
    }
    let name = rest.split(char::is_whitespace).next().unwrap_or_default();
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.' | '?'))
}

/// A prompt put back on the input line (a rewind, `/fork`, `/tree`) as the user typed it: the
/// files it attached are attached afresh when it is sent (their old copies doubled them).
fn as_typed(text: String) -> String {
    super::attach::split_attached(&text).1.to_owned()
}

/// Where the input line is drawn. Typed at a terminal with the output piped (`ctxkit chat | tee
/// log`): on the terminal itself, so the output holds the replies and none of the line editor's
/// escape codes. Otherwise on standard input and output, as piped prompts need.
fn input_line_behavior() -> Behavior {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() && !std::io::stdout().is_terminal() {
        Behavior::PreferTerm
    } else {
        Behavior::Stdio
    }
}

/// The input line's editor, its key bindings and what they report.
fn input_terminal(chat: &Chat) -> Result<(Terminal, KeyRequests, super::rewind::DoubleEscape)> {
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .behavior(input_line_behavior())
        .keyseq_timeout(Some(super::rewind::escape_timeout_ms(
            crate::cli::escape_timeout_variable,
        )))
        .build();
    // Before the editor installs its SIGWINCH handler: the input line follows every resize, also
    // after a full-screen list has been open.
    super::picker::leave_resizes_to_the_line_editor();
    // Shift-Enter in the CSI-u form, which rustyline reads only into its log.
    super::modified_keys::listen_for_unknown_sequences();
    let mut editor = Editor::with_config(config)?;
    editor.set_helper(Some(super::input::InputHelper::new(
        &chat.cwd,
        chat.slash_commands.clone(),
    )));
    let key_requests = KeyRequests::default();
    let large = LargeInput::default();
    super::input::bind_keys(&mut editor, &key_requests, &large);
    let double_escape = super::rewind::bind_double_escape(&mut editor, &large);
    let terminal = Terminal {
        editor,
        large,
        ui: chat.ui.clone(),
    };
    Ok((terminal, key_requests, double_escape))
}

/// How the prompts sent so far ended, for a piped chat's exit status.
#[derive(Default)]
struct Ends {
    /// Why the last prompt's model request failed, if it did.
    last_failure: Option<String>,
    /// The last error that stopped a prompt (its session file could not be written): a piped
    /// chat ends with it, whatever came after, as the prompt is lost.
    prompt_error: Option<anyhow::Error>,
}

impl Ends {
    /// Records how a prompt ended; the text to put back on the input line when it was not sent.
    fn record(&mut self, runtime: &Runtime, chat: &Chat, end: Result<PromptEnd>) -> Option<String> {
        match end {
            // An interrupted prompt at the input line: the user is there and goes on.
            Ok(PromptEnd::Done | PromptEnd::Interrupted) => {
                self.last_failure = None;
                runtime.block_on(chat.usage_line());
            }
            Ok(PromptEnd::Failed(reason)) => {
                self.last_failure = Some(reason);
                runtime.block_on(chat.usage_line());
            }
            Ok(PromptEnd::NotSent(text)) => return Some(text),
            Err(error) => {
                show_error(chat, &error);
                self.prompt_error = Some(error);
            }
        }
        None
    }
}

/// Sends the command line's prompts, each as it is (never a `!command` or a `/command`); the text
/// of one not sent, for the input line (the ones after it are not sent either).
fn send_starting(
    runtime: &Runtime,
    chat: &mut Chat,
    terminal: &mut Terminal,
    starting: Vec<super::print::StartingPrompt>,
    ends: &mut Ends,
) -> Option<String> {
    for prompt in starting {
        chat.ui.line(&format!("{PROMPT}{}", prompt.shown));
        let end = runtime.block_on(chat.prompt_attached(prompt.shown, prompt.attached, terminal));
        if let Some(text) = ends.record(runtime, chat, end) {
            return Some(text);
        }
    }
    None
}

/// The input loop, after `starting` (the prompts of the command line) is sent.
pub fn run(
    runtime: &Runtime,
    chat: &mut Chat,
    starting: Vec<super::print::StartingPrompt>,
) -> Result<Outcome> {
    let (mut terminal, key_requests, double_escape) = input_terminal(chat)?;
    // Only after the editor exists: it installs a SIGINT handler of its own for its whole life,
    // and ours must be installed on top of it (it chains to the editor's). At the input line the
    // terminal is in raw mode and Ctrl-C is a key the editor reads.
    listen_for_interrupts(runtime, chat)?;
    // After the signal handlers saved the shell's mode, which they put back.
    let _enter_kept = super::enter_key::EnterKept::on_stdin();
    opening(runtime, chat, &mut terminal)?;
    let mut initial = String::new();
    // Lines typed ahead after the one entered now, set aside while it runs.
    let mut held = Vec::new();
    let mut ends = Ends::default();
    // Ctrl-C at the input line: twice in a row quits, as in Pi 1.6.
    let mut last_interrupt: Option<std::time::Instant> = None;
    if let Some(text) = send_starting(runtime, chat, &mut terminal, starting, &mut ends) {
        initial = text;
    }
    loop {
        // After every command and prompt: the session open now is the one `--continue` opens.
        runtime.block_on(chat.remember_session(Remember::WhenSwitched));
        // A database session taken over by another writer ends the chat (its writes are kept).
        if runtime.block_on(chat.check_store(Look::AsItStands)) == StoreCheck::Lost {
            break;
        }
        // A signal ending the chat while a line was at work ends it here, the work recorded.
        chat.interrupts.at_input_line();
        // The prompts of a session just opened (continued, resumed, forked, moved in): Up
        // brings them back.
        for prompt in chat.take_prompt_history() {
            let _ = terminal.editor.add_history_entry(prompt);
        }
        double_escape.follow(chat.double_escape);
        // Keys typed while the agent worked: a line ended by Enter is entered now, each such line
        // on its own, as during a reply (the lines after it wait in the type-ahead for the next
        // turns of this loop); the text after the last Enter starts the next input line.
        chat.ui.put_back_entered_lines(std::mem::take(&mut held));
        let line = match chat.ui.take_entered_line() {
            Some(entered) => {
                let entered = format!("{initial}{entered}");
                chat.ui.line(&format!("{PROMPT}{entered}"));
                initial.clear();
                held = chat.ui.take_entered_lines();
                Ok(entered)
            }
            None => read_input_line(chat, &mut terminal, &mut initial),
        };
        let line = match line {
            Ok(line) => {
                chat.interrupts.left_input_line();
                last_interrupt = None;
                line
            }
            Err(ReadlineError::Interrupted) if double_escape.take() => {
                chat.interrupts.left_input_line();
                if let Some(text) = after_double_escape(runtime, chat, &mut terminal) {
                    initial = text;
                }
                continue;
            }
            Err(ReadlineError::Interrupted) => {
                if last_interrupt.is_some_and(|at| at.elapsed() < QUIT_AGAIN_WITHIN) {
                    break;
                }
                last_interrupt = Some(std::time::Instant::now());
                chat.ui
                    .info("(Ctrl-C twice quickly quits, as Ctrl-D and /quit do)");
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(error) => return Err(error.into()),
        };
        // Input too large to edit (a large paste): the chat asks what to do with it.
        let line = match terminal.large.take() {
            Some(text) => match too_large_to_edit(chat, &mut terminal, text) {
                Ok(text) => text,
                Err(kept) => {
                    initial = kept;
                    continue;
                }
            },
            None => line,
        };
        let line = key_requests.without_typed_continuations(&line);
        // Ctrl-G, Shift-Tab, Ctrl-P, Ctrl-T: done, and the line comes back to the input line.
        if let Some(request) = key_requests.take() {
            initial = after_key_request(runtime, chat, request, line);
            continue;
        }
        let text = line.trim();
        if let Some(rest) = text.strip_prefix("/edit")
            && (rest.is_empty() || rest.starts_with(char::is_whitespace))
        {
            initial = in_editor(chat, rest.trim().to_owned());
            continue;
        }
        if text.is_empty() {
            continue;
        }
        let _ = terminal.editor.add_history_entry(text);
        if ran_as_shell(runtime, chat, &mut terminal, text) {
            continue;
        }
        let action = if names_a_command(text) {
            runtime.block_on(chat.command(text, &mut terminal))
        } else {
            Ok(Action::Prompt(text.to_owned()))
        };
        let action = match action {
            Ok(action) => action,
            Err(error) => {
                show_error(chat, &error);
                continue;
            }
        };
        match action {
            Action::Continue => {}
            Action::Quit => break,
            Action::Edit(text) => initial = as_typed(text),
            Action::Prompt(text) => {
                let end = runtime.block_on(chat.prompt(text, &mut terminal));
                if let Some(text) = ends.record(runtime, chat, end) {
                    initial = text;
                }
            }
        }
    }
    runtime.block_on(chat.remember_session(Remember::Always));
    runtime.block_on(chat.farewell());
    piped_outcome(chat, ends.prompt_error, ends.last_failure)
}

/// Reads the next line at the input line, starting from `initial` and what was typed while the
/// agent worked (the cursor where it was); `initial` is taken.
fn read_input_line(
    chat: &Chat,
    terminal: &mut Terminal,
    initial: &mut String,
) -> Result<String, ReadlineError> {
    let typed = chat.ui.take_typed();
    let text = typed.text.trim_start();
    let trimmed = typed.text.len() - text.len();
    // The cursor where it was in the text typed while the agent worked.
    let cursor = initial.len() + typed.cursor.saturating_sub(trimmed);
    initial.push_str(text);
    let line = if !large_input::fits(initial) {
        // Too large to put on the input line (an old prompt, a file from `$EDITOR`).
        terminal.large.hand(std::mem::take(initial));
        Ok(String::new())
    } else if initial.trim().is_empty() {
        terminal.editor.readline(PROMPT)
    } else {
        terminal.editor.readline_with_initial(
            PROMPT,
            initial.split_at_checked(cursor).unwrap_or((initial, "")),
        )
    };
    initial.clear();
    line
}

/// The banner before the first prompt; with `--resume`, the list `/resume` shows first, and the
/// banner of the session chosen (or of the new one, when none is), so a session is never
/// announced before the question that may replace it.
/// Fed from a pipe, a wrong number ends the chat with its error: asking again read the next line,
/// a prompt, as the answer, and the chat went on without it.
fn opening(runtime: &Runtime, chat: &mut Chat, terminal: &mut Terminal) -> Result<()> {
    use std::io::IsTerminal as _;
    // A wrong number asks again (it started a new session without a word); empty starts one.
    while chat.resume_at_start {
        match runtime.block_on(chat.resume("", terminal)) {
            Ok(true) => return Ok(()),
            Ok(false) => break,
            Err(error) if !std::io::stdin().is_terminal() => return Err(error),
            Err(error) => show_error(chat, &error),
        }
    }
    runtime.block_on(chat.banner(Banner::Startup));
    chat.warn_of_a_near_miss();
    Ok(())
}

/// How the chat ends: a chat reading a pipe or a file fails with the error that stopped one of
/// its prompts (a session file that could not be written: exit 4, as `ctxkit --help` lists), else,
/// when its last model request failed, with [`LastRequestFailed`] (exit 7), so a script sees it; a
/// person at the terminal has read the error and quits normally.
fn piped_outcome(
    chat: &Chat,
    prompt_error: Option<anyhow::Error>,
    last_failure: Option<String>,
) -> Result<Outcome> {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() {
        return Ok(Outcome::Success);
    }
    if let Some(error) = prompt_error {
        return Err(error.context("The chat could not finish a prompt"));
    }
    match last_failure {
        Some(reason) => {
            let provider = &chat.client.config().provider;
            Err(LastRequestFailed(ctxkit_llm::reply_failure(provider, &reason)).into())
        }
        None => Ok(Outcome::Success),
    }
}

/// A chat fed from a pipe whose last model request failed (`main` maps it to exit 7).
#[derive(Debug)]
pub struct LastRequestFailed(pub ctxkit_llm::ReplyFailure);

impl std::fmt::Display for LastRequestFailed {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "The chat's last model request failed: {}",
            self.0.message
        )
    }
}

impl std::error::Error for LastRequestFailed {}

/// Input too large for the line editor ([`large_input`]): sent (`Ok`), edited in `$EDITOR` until
/// it fits (`Err`: the next input line's text) or dropped, as the user says. Nothing is dropped
/// unless the user says so (`d`, Esc, Ctrl-C).
fn too_large_to_edit(
    chat: &Chat,
    terminal: &mut Terminal,
    mut text: String,
) -> Result<String, String> {
    while !large_input::fits(&text) {
        let lines = text.lines().count();
        let question = format!(
            "The input holds {} bytes in {lines} line{}, more than the input line edits ({} \
             bytes): [s]end it / [e]dit it in $EDITOR / [d]rop it:",
            text.len(),
            if lines == 1 { "" } else { "s" },
            large_input::MAX_EDITABLE_BYTES
        );
        match terminal.ask_key(&question, "sed") {
            Some('s') => return Ok(text),
            Some('e') => text = in_editor(chat, text),
            Some(_) | None => {
                chat.ui.info("(input dropped)");
                return Err(String::new());
            }
        }
    }
    Err(text)
}

/// `text` edited in the user's editor; on failure, said in one line, `text` as it was.
fn in_editor(chat: &Chat, text: String) -> String {
    match super::external_editor::edit(&text, chat.external_editor.as_deref()) {
        Ok(edited) => edited,
        Err(error) => {
            show_error(chat, &error);
            text
        }
    }
}

/// An error in one line; a changed session file adds how to save the session.
fn show_error(chat: &Chat, error: &anyhow::Error) {
    chat.ui
        .error(&format!("error: {}", crate::render::error_chain(error)));
    if let Some(hint) = super::session_file::file_changed_hint(error) {
        chat.ui.info(hint);
    }
}

/// Ctrl-C interrupts the turn, and SIGHUP or SIGTERM ends the chat as `/quit` does, from now on
/// (the handlers need the runtime's reactor).
pub(super) fn listen_for_interrupts(runtime: &Runtime, chat: &Chat) -> Result<()> {
    let _guard = runtime.enter();
    chat.interrupts
        .listen()
        .context("cannot listen for Ctrl-C")?;
    chat.interrupts
        .end_on_hangup_or_terminate()
        .context("cannot listen for SIGHUP and SIGTERM")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::names_a_command;

    #[test]
    fn a_line_starting_with_a_path_is_a_prompt_not_a_command() {
        for command in [
            "/compact",
            "/c focus on tests",
            "/skill:pdf x",
            "/?",
            "/",
            "/scoped-models",
        ] {
            assert!(names_a_command(command), "{command}");
        }
        for prompt in [
            "/usr/bin/python3 crashes, why?",
            "/ hello",
            "/etc/hosts?",
            "hi /c",
        ] {
            assert!(!names_a_command(prompt), "{prompt}");
        }
    }
}
