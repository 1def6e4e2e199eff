//! What `ctxkit chat` shows: replies, tool calls and results, one spinner line at a time
//! (`Thinking…`, `Compacting…`) that is cleared without touching the rest of the screen, and the
//! engine's events rendered in order ([`EventView`]).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ctxkit_engine::{CompactionEnd, CompactionFailed, CompactionReason, Engine, EngineEvent};
use indicatif::ProgressBar;
use tokio::sync::{mpsc, oneshot};

use super::escape::EscWatch;
use super::interrupts::Interrupts;
use super::markdown::{Markdown, terminal_width};
use super::palette::{Palette, Role};
use super::type_ahead::{PendingText, TypeAhead};
use crate::render::one_line;

#[path = "ui_reply.rs"]
mod reply;
#[path = "ui_stream.rs"]
mod stream;
#[path = "ui_tool_result.rs"]
mod tool_result;

pub use tool_result::result_shape;

use stream::Stream;

/// The terminal output. Clones share the spinner.
///
/// Lines are printed on the thread that runs the chat (the binary's `main` holds the stdout lock);
/// a deferred clone, used by the event task, queues them for [`EventView::flush`] instead. The
/// spinner draws on stderr from any thread.
#[derive(Debug, Clone)]
pub struct Ui {
    spinner: Arc<Mutex<Option<ProgressBar>>>,
    color: bool,
    deferred: Option<Arc<Mutex<Vec<String>>>>,
    escape: Arc<Mutex<Escape>>,
    /// Keys typed while the spinner ran, for the next input line.
    typed: Arc<Mutex<TypeAhead>>,
    /// The reply streaming in.
    stream: Arc<Mutex<Stream>>,
    markdown: Markdown,
    /// The running spinner's message, without the keys typed meanwhile.
    spin_message: Arc<Mutex<String>>,
    /// The lines shown under the spinner's (a running command's last lines), empty for none.
    spin_detail: Arc<Mutex<String>>,
    /// `hideThinkingBlock`: reasoning shows as one line, [`HIDDEN_THINKING`] (Ctrl-T toggles).
    hide_thinking: Arc<AtomicBool>,
    /// `terminal.showTerminalProgress`: the terminal is told while the agent works.
    terminal_progress: Arc<AtomicBool>,
    /// Print mode: nothing of the conversation is shown (stdout holds the final answer only);
    /// errors and notices go to stderr.
    quiet: Arc<AtomicBool>,
    /// `--script`: the conversation on stdout, errors on stderr, where a script looks for them.
    errors_to_stderr: bool,
}

/// What a reasoning block shows as under `hideThinkingBlock` (Pi's label).
pub const HIDDEN_THINKING: &str = "Thinking...";

/// Esc while the spinner runs: what it interrupts, and the watch while one runs.
#[derive(Debug, Default)]
struct Escape {
    interrupts: Option<Interrupts>,
    watch: Option<EscWatch>,
}

impl Ui {
    pub fn new() -> Self {
        let color = std::io::stdout().is_terminal() && crate::cli::color_allowed();
        Self {
            spinner: Arc::new(Mutex::new(None)),
            color,
            deferred: None,
            escape: Arc::default(),
            typed: Arc::default(),
            stream: Arc::default(),
            markdown: Markdown::for_stdout(),
            spin_message: Arc::default(),
            spin_detail: Arc::default(),
            hide_thinking: Arc::default(),
            terminal_progress: Arc::default(),
            quiet: Arc::default(),
            errors_to_stderr: false,
        }
    }

    /// The output of a chat in `mode`: quiet in print mode ([`Ui::set_quiet`]); in script mode
    /// errors go to stderr.
    pub fn for_mode(mode: super::print::ChatMode) -> Self {
        let mut ui = Self::new();
        match mode {
            super::print::ChatMode::Print => ui.set_quiet(),
            super::print::ChatMode::Script => ui.errors_to_stderr = true,
            super::print::ChatMode::Interactive => {}
        }
        ui
    }

    /// Print mode from now on: replies, tool calls, spinners and lines of information are not
    /// shown; errors and notices are written to stderr.
    pub fn set_quiet(&self) {
        self.quiet.store(true, Ordering::Relaxed);
    }

    fn is_quiet(&self) -> bool {
        self.quiet.load(Ordering::Relaxed)
    }

    /// `chat_hint` where chat commands can be typed, `printed_hint` in print mode (which has
    /// none: it names flags, settings and `ctxkit` commands instead).
    pub fn hint<'a>(&self, chat_hint: &'a str, printed_hint: &'a str) -> &'a str {
        if self.has_input_line() {
            chat_hint
        } else {
            printed_hint
        }
    }

    /// Whether the chat has an input line (a prompt not sent goes back to it, chat commands can
    /// be typed): not in print mode.
    pub fn has_input_line(&self) -> bool {
        !self.is_quiet()
    }

    /// Indents code blocks of replies by `indent` from now on (`markdown.codeBlockIndent`).
    pub fn set_code_block_indent(&self, indent: &str) {
        self.markdown.set_code_block_indent(indent);
    }

    /// Paints with `palette` from now on (the `theme` setting).
    pub fn set_palette(&self, palette: Palette) {
        self.markdown.set_palette(palette);
    }

    /// Tells the terminal from now on while the agent works (`terminal.showTerminalProgress`).
    pub fn set_terminal_progress(&self, shown: bool) {
        self.terminal_progress.store(shown, Ordering::Relaxed);
    }

    /// The terminal's progress state while the returned guard lives, when the setting asks.
    pub fn working(&self) -> super::progress::Progress {
        super::progress::Progress::start(self.terminal_progress.load(Ordering::Relaxed))
    }

    /// Shows reasoning from now on as one line ([`HIDDEN_THINKING`]), or in full.
    pub fn set_thinking_hidden(&self, hidden: bool) {
        self.hide_thinking.store(hidden, Ordering::Relaxed);
    }

    pub fn thinking_hidden(&self) -> bool {
        self.hide_thinking.load(Ordering::Relaxed)
    }

    /// Makes Esc interrupt, like Ctrl-C, while a spinner runs; both take the texts typed with
    /// Enter meanwhile back to the next input line, unsent.
    pub fn interrupt_on_escape(&self, interrupts: &Interrupts) {
        if let Ok(mut escape) = self.escape.lock() {
            escape.interrupts = Some(interrupts.clone());
        }
        // Esc and Ctrl-C mean stop: nothing typed meanwhile is sent.
        let typed = Arc::clone(&self.typed);
        interrupts.before_each(move || {
            if let Ok(mut typed) = typed.lock() {
                typed.unsend();
            }
        });
    }

    /// Adds `bytes`, keys typed after a one-key answer, to the next input line, as keys typed
    /// while the agent works are.
    pub fn keep_typed(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.with_typed(|typed| typed.keep_from_a_question(bytes));
    }

    /// Texts typed with Enter while the agent works, taken to steer it
    /// ([`TypeAhead::take_steering`]).
    pub fn take_steering(&self, all: bool) -> Vec<String> {
        self.with_typed(|typed| typed.take_steering(all))
            .unwrap_or_default()
    }

    /// The next text typed with Enter while the agent worked, taken to be entered; `None` leaves
    /// the text typed after the last Enter for [`Ui::take_typed`].
    pub fn take_entered_line(&self) -> Option<String> {
        self.with_typed(TypeAhead::take_entered).flatten()
    }

    /// Every further text typed with Enter, set aside while the one entered before them runs:
    /// its run would take them as steering, with its first request, where each is a prompt of its
    /// own ([`Ui::put_back_entered_lines`] gives them back).
    pub fn take_entered_lines(&self) -> Vec<String> {
        self.with_typed(TypeAhead::take_all_entered)
            .unwrap_or_default()
    }

    /// Puts texts [`Ui::take_entered_lines`] took back before what was typed since.
    /// When the user stopped the run since (Esc, Ctrl-C), they go back unsent, to the next input
    /// line.
    pub fn put_back_entered_lines(&self, lines: Vec<String>) {
        self.with_typed(|typed| typed.put_back_entered(lines));
    }

    /// Text typed while the agent worked after the last Enter, with its cursor, taken for the
    /// next input line.
    pub fn take_typed(&self) -> PendingText {
        self.with_typed(TypeAhead::take_pending).unwrap_or_default()
    }

    /// Whether the user typed within `window` (while the agent worked): a question asked now
    /// meets typing that goes on.
    pub fn typed_within(&self, window: std::time::Duration) -> bool {
        self.with_typed(|typed| typed.typed_within(window))
            .unwrap_or(false)
    }

    fn with_typed<T>(&self, action: impl FnOnce(&mut TypeAhead) -> T) -> Option<T> {
        self.typed.lock().ok().map(|mut typed| action(&mut typed))
    }

    /// A clone whose lines wait in a queue until they are printed by [`Ui::print_deferred`].
    fn deferring(&self) -> Self {
        Self {
            deferred: Some(Arc::default()),
            ..self.clone()
        }
    }

    /// Prints the lines a deferring clone queued.
    fn print_deferred(&self, deferring: &Ui) {
        let lines = deferring
            .deferred
            .as_ref()
            .and_then(|queue| {
                queue
                    .lock()
                    .ok()
                    .map(|mut lines| std::mem::take(&mut *lines))
            })
            .unwrap_or_default();
        for line in lines {
            self.styled_line(&line);
        }
    }

    /// `text` made safe for the terminal, in the colour of `role` when colours are on.
    fn paint(&self, role: Role, text: &str) -> String {
        let text = crate::render::terminal_safe(text);
        if self.color {
            format!("\x1b[{}m{text}\x1b[0m", self.markdown.code(role))
        } else {
            text.into_owned()
        }
    }

    /// Prints one or more lines, above the spinner when one runs; escape sequences in `text` are
    /// shown, not sent.
    pub fn line(&self, text: &str) {
        self.styled_line(&crate::render::terminal_safe(text));
    }

    /// Prints lines whose only escape sequences are ctxkit's own colours (from `paint`).
    fn styled_line(&self, text: &str) {
        if self.is_quiet() {
            return;
        }
        if let Some(queue) = &self.deferred {
            if let Ok(mut lines) = queue.lock() {
                lines.push(text.to_owned());
            }
            return;
        }
        self.above_spinner(|| {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{text}");
            let _ = stdout.flush();
        });
    }

    /// Runs `write` with the spinner line, when one runs, cleared and drawn again after it.
    fn above_spinner<T>(&self, write: impl FnOnce() -> T) -> T {
        match self.spinner.lock().ok().and_then(|slot| slot.clone()) {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Sends `sequence`, a control sequence of ctxkit's own (`/copy`'s OSC 52), to the terminal,
    /// above the spinner when one runs; false when the output is not a terminal.
    pub fn send_to_terminal(&self, sequence: &str) -> bool {
        use std::io::IsTerminal as _;
        if !std::io::stdout().is_terminal() {
            return false;
        }
        self.above_spinner(|| {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(sequence.as_bytes()).is_ok() && stdout.flush().is_ok()
        })
    }

    /// A message of ctxkit's own in the info colour, broken between words to fit, as
    /// [`Ui::notice`] is.
    pub fn info(&self, text: &str) {
        let lines: Vec<String> = self
            .fitted(text)
            .split('\n')
            .map(|line| self.paint(Role::Info, line))
            .collect();
        self.styled_line(&lines.join("\n"));
    }

    /// A sentence of ctxkit's own without colour (what `/copy` did, the model now in use):
    /// broken between words to fit, where [`Ui::line`] leaves text (a file's lines, a tool's
    /// output) as it is.
    pub fn say(&self, text: &str) {
        self.line(&self.fitted(text));
    }

    /// `text` broken between words to fit the terminal, when the chat lays out for one.
    fn fitted(&self, text: &str) -> String {
        if self.markdown.renders() {
            crate::render::wrap_at_words(text, terminal_width())
        } else {
            text.to_owned()
        }
    }

    pub fn error(&self, text: &str) {
        self.message(Role::Error, text);
    }

    pub fn notice(&self, text: &str) {
        self.message(Role::Notice, text);
    }

    /// A message of ctxkit's own, in the colour of `role`: on a terminal its lines are broken
    /// between words to fit (the terminal would break them at its last column, mid-word).
    fn message(&self, role: Role, text: &str) {
        // Never stdout's lock here: the thread running the chat holds it, and the event task
        // says its notices from another thread (a print-mode compaction hung on it). Every line
        // written to stdout is flushed as it is written, so stderr comes after it.
        if self.is_quiet() || (self.errors_to_stderr && role == Role::Error) {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "{}", crate::render::terminal_safe(text));
            return;
        }
        let lines: Vec<String> = self
            .fitted(text)
            .split('\n')
            .map(|line| self.paint(role, line))
            .collect();
        self.styled_line(&lines.join("\n"));
    }

    /// Shows a spinner line with `message` (replacing any running one); Esc interrupts while it runs.
    /// The message is made safe for the terminal here: it may name what a model chose (a tool's
    /// name), and a spinner line is redrawn raw.
    pub fn spin(&self, message: &str) {
        if self.is_quiet() {
            return;
        }
        let message = spinner_text(message);
        let message = message.as_str();
        self.clear_spinner();
        if let Ok(mut escape) = self.escape.lock()
            && escape.watch.is_none()
            && let Some(interrupts) = escape.interrupts.clone()
        {
            let spinner = Arc::clone(&self.spinner);
            let message = Arc::clone(&self.spin_message);
            let detail = Arc::clone(&self.spin_detail);
            // Keys typed meanwhile show on the spinner line, as they will start the next input.
            let on_typed = Box::new(move |typed: &str| {
                let bar = spinner.lock().ok().and_then(|slot| slot.clone());
                let base = message.lock().map(|text| text.clone()).unwrap_or_default();
                let detail = detail.lock().map(|text| text.clone()).unwrap_or_default();
                if let Some(bar) = bar {
                    bar.set_message(with_detail(with_typed_keys(&base, typed), &detail));
                }
            });
            escape.watch = EscWatch::start(interrupts, Arc::clone(&self.typed), on_typed);
        }
        if let Ok(mut base) = self.spin_message.lock() {
            message.clone_into(&mut base);
        }
        if let Ok(mut detail) = self.spin_detail.lock() {
            detail.clear();
        }
        let typed = self.with_typed(|typed| typed.shown()).unwrap_or_default();
        let bar = crate::render::spinner(with_typed_keys(message, &typed));
        if let Ok(mut slot) = self.spinner.lock() {
            *slot = Some(bar);
        }
    }

    /// Shows the last lines a running call has written (`output`) under the spinner line, in
    /// place of those shown before.
    pub fn tool_output(&self, output: &str) {
        let detail = super::tool_preview::preview(output, super::markdown::terminal_width());
        let base = self
            .spin_message
            .lock()
            .map(|text| text.clone())
            .unwrap_or_default();
        let typed = self.with_typed(|typed| typed.shown()).unwrap_or_default();
        if let Some(bar) = self.spinner.lock().ok().and_then(|slot| slot.clone()) {
            bar.set_message(with_detail(with_typed_keys(&base, &typed), &detail));
        }
        if let Ok(mut shown) = self.spin_detail.lock() {
            *shown = detail;
        }
    }

    /// Shows `waiting` on the spinner line, then `after` once `delay` has passed — unless the
    /// spinner says something else by then. A retry's `Retrying in 1 s (1 of 3)` does not stay on
    /// screen through the attempt that follows it.
    pub fn spin_for(&self, waiting: &str, delay: std::time::Duration, after: String) {
        self.spin(waiting);
        let spinner = Arc::clone(&self.spinner);
        let message = Arc::clone(&self.spin_message);
        // As `spin` stored it.
        let waiting = spinner_text(waiting);
        let after = spinner_text(&after);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let Ok(mut base) = message.lock() else {
                return;
            };
            if *base != waiting {
                return;
            }
            after.clone_into(&mut base);
            if let Some(bar) = spinner.lock().ok().and_then(|slot| slot.clone()) {
                bar.set_message(after);
            }
        });
    }

    /// Clears the spinner line, if any, and gives the keyboard back.
    pub fn stop(&self) {
        self.clear_spinner();
        let watch = self
            .escape
            .lock()
            .ok()
            .and_then(|mut escape| escape.watch.take());
        drop(watch);
    }

    fn clear_spinner(&self) {
        let bar = self.spinner.lock().ok().and_then(|mut slot| slot.take());
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
    }

    /// A reply's text as shown: made safe for the terminal first, then rendered, so the model's
    /// text is never obeyed and the rendering's own styles are kept (as a streamed reply's are).
    fn reply_text(&self, text: &str) -> String {
        self.markdown
            .render(&crate::render::terminal_safe(text), terminal_width())
    }

    /// Renders one engine event.
    pub fn event(&self, event: &EngineEvent) {
        match event {
            EngineEvent::CompactionStart { reason } => {
                let why = match reason {
                    CompactionReason::Threshold => " (context near the window)",
                    CompactionReason::Overflow => " (context overflow)",
                    CompactionReason::Manual => "",
                };
                self.spin(&format!("Compacting…{why}  Esc or Ctrl-C to cancel"));
            }
            EngineEvent::CompactionEnd(end) => {
                self.stop();
                self.compaction_end(end);
            }
            EngineEvent::CompactionFailed(failed) => self.compaction_failed(failed),
            EngineEvent::BranchSummaryStart { .. } => {
                self.spin("Summarizing the branch…  Esc or Ctrl-C to cancel");
            }
            EngineEvent::BranchSummaryEnd { aborted, error, .. } => {
                self.stop();
                if *aborted {
                    self.notice("Branch summary cancelled (nothing was written)");
                } else if let Some(error) = error {
                    self.error(&format!("Branch summary failed: {error}"));
                }
            }
            EngineEvent::ContextUsage(_) => {}
            EngineEvent::HookError { hook, event, error } => {
                self.notice(&format!(
                    "warning: hook `{hook}` failed on {event}: {error}"
                ));
            }
        }
    }

    /// A compaction that wrote its entry; failures and cancels are said by
    /// [`Ui::compaction_failed`], which follows.
    fn compaction_end(&self, end: &CompactionEnd) {
        if let (Some(before), Some(after)) = (end.tokens_before, end.tokens_after) {
            let mut line = super::notes::compaction_line(before, after, end);
            if end.will_retry {
                line.push_str(" (context overflow; retrying)");
            }
            self.notice(&line);
            self.info(super::notes::ORIGINALS_KEPT);
        }
        if let Some(advice) = &end.advice {
            self.notice(advice);
        }
    }

    /// The status line of a compaction that failed or was cancelled (`compaction_failed`).
    fn compaction_failed(&self, failed: &CompactionFailed) {
        let error = failed
            .error_message
            .as_deref()
            .unwrap_or("summarization failed");
        if failed.aborted {
            self.notice("Compaction cancelled (nothing was written)");
        } else if failed.fallback {
            let retry = if failed.will_retry {
                "; retrying the turn"
            } else {
                ""
            };
            self.notice(&format!(
                "The summary failed, so the oldest messages were dropped without one{retry}: {}",
                one_line(error, 1000)
            ));
            self.notice(self.hint(
                super::notes::FALLBACK_HINT,
                super::notes::FALLBACK_HINT_PRINTED,
            ));
        } else if failed.reason == ctxkit_engine::CompactionReason::Overflow {
            // Earlier compactions of the same recovery may have been written: not "nothing".
            // The engine's overflow messages run to about 450 characters and end in the advice
            // (QA: cut at 400, before it).
            self.error(&one_line(error, 1000));
            self.notice(self.hint(
                super::notes::OVERFLOW_HINT,
                super::notes::OVERFLOW_HINT_PRINTED,
            ));
        } else {
            self.error(&format!("{} (nothing was written)", one_line(error, 1000)));
            self.notice(self.hint(
                super::notes::FAILED_SUMMARY_HINT,
                super::notes::FAILED_SUMMARY_HINT_PRINTED,
            ));
        }
    }
}

/// Shown for a reply with no text, reasoning or tool call (only blanks, or nothing at all).
/// Renders an engine's events in a task; [`EventView::flush`] waits until every event emitted so
/// far is on the screen, so output stays in order with the command that caused it.
#[derive(Debug)]
pub struct EventView {
    flush: mpsc::UnboundedSender<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    ui: Ui,
    deferring: Ui,
}

impl EventView {
    pub fn start(engine: &Engine, ui: Ui) -> Self {
        let mut events = engine.subscribe();
        let (flush, mut flushes) = mpsc::unbounded_channel::<oneshot::Sender<()>>();
        let deferring = ui.deferring();
        let renderer = deferring.clone();
        let task = tokio::spawn(async move {
            let ui = renderer;
            loop {
                tokio::select! {
                    biased;
                    event = events.recv() => match event {
                        Some(event) => ui.event(&event),
                        None => break,
                    },
                    request = flushes.recv() => match request {
                        Some(done) => {
                            while let Ok(event) = events.try_recv() {
                                ui.event(&event);
                            }
                            let _ = done.send(());
                        }
                        None => break,
                    },
                }
            }
        });
        Self {
            flush,
            task,
            ui,
            deferring,
        }
    }

    /// Renders every event emitted so far; call it on the chat's thread after an engine operation.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.flush.send(done).is_ok() {
            let _ = wait.await;
        }
        self.ui.print_deferred(&self.deferring);
    }
}

impl Drop for EventView {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A spinner line's text: on one line, and safe for the terminal (`render::terminal_safe`).
/// The spinner line's `message` followed by the keys typed meanwhile, if any (a paste may hold
/// control characters: shown as escapes).
fn with_typed_keys(message: &str, typed: &str) -> String {
    if typed.is_empty() {
        message.to_owned()
    } else {
        format!("{message}  › {}", spinner_text(typed))
    }
}

/// The spinner's line and, under it, `detail`'s lines when there are any. Each line ends with a
/// carriage return: while the spinner runs the keyboard is read raw, and a bare line feed would
/// start the next line where the last one ended.
fn with_detail(line: String, detail: &str) -> String {
    if detail.is_empty() {
        line
    } else {
        format!("{line}\n{detail}")
    }
}

fn spinner_text(message: &str) -> String {
    crate::render::terminal_safe(&message.replace(['\n', '\r'], " ")).into_owned()
}
