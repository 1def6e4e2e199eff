//! Rewind: Esc twice at an empty input line lists the earlier prompts of the branch; choosing one
//! moves the leaf to before it (a new branch from there; nothing is deleted) with its text back on
//! the input line to edit, and offers to put back the files the agent's `write` and `edit` calls
//! changed since (the snapshots of `commands::checkpoints`, put back by `restore`): a file the
//! agent created is removed, with the folders its write created once they are empty; a file
//! changed since the agent wrote it is named and asked about, never overwritten silently.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Result;
use ctxkit_engine::NavigateOptions;
use ctxkit_session::{Session, StoredEntry};
use rustyline::history::History;
use rustyline::{
    Cmd, ConditionalEventHandler, Editor, Event, EventContext, Helper, KeyEvent, RepeatCount,
};

use super::Chat;
use super::agent::Ask;
use super::picker::{List, Picked, pick};
use super::slash::Action;
use crate::render::one_line;

/// Two Esc at an empty input line this close together are a double Esc (Pi's window).
const DOUBLE_ESCAPE_WINDOW: Duration = Duration::from_millis(500);

/// How long the line editor waits after an Esc for the rest of an escape sequence (an arrow key,
/// Alt and a key) before taking it as the Esc key: Pi's 10 ms, or 100 ms over SSH, where the
/// bytes of one key may arrive apart. `CTXKIT_ESC_TIMEOUT` (milliseconds) overrides both.
pub fn escape_timeout_ms(variable: impl Fn(&str) -> Option<String>) -> u16 {
    if let Some(configured) = variable(crate::cli::CTXKIT_ESC_TIMEOUT)
        .and_then(|value| value.trim().parse::<u16>().ok())
        .filter(|&milliseconds| milliseconds > 0)
    {
        return configured;
    }
    if variable("SSH_CONNECTION").is_some() || variable("SSH_TTY").is_some() {
        100
    } else {
        10
    }
}

/// Set when Esc was pressed twice at an empty input line; the line editor then returns as
/// interrupted and the input loop asks [`DoubleEscape::take`].
#[derive(Debug, Clone, Default)]
pub struct DoubleEscape {
    pressed: Arc<AtomicBool>,
    /// Off under `doubleEscapeAction: none`: Esc twice at an empty line does nothing.
    off: Arc<AtomicBool>,
    /// When the last Esc at an empty line was read, if it may still be the first of two.
    first: Arc<Mutex<Option<Instant>>>,
}

/// What Esc twice at an empty input line does (`doubleEscapeAction`, Pi's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoubleEscapeAction {
    /// `tree` (the default): the rewind to an earlier prompt, files included.
    Rewind,
    /// `fork`: `/fork`'s list, a new session from before the prompt picked.
    Fork,
    /// `none`: nothing.
    Nothing,
}

impl DoubleEscapeAction {
    pub fn from_setting(value: &str) -> Self {
        match value {
            "fork" => Self::Fork,
            "none" => Self::Nothing,
            _ => Self::Rewind,
        }
    }
}

impl DoubleEscape {
    /// Whether the last interruption of the line editor was a double Esc (and forgets it).
    pub fn take(&self) -> bool {
        self.pressed.swap(false, Ordering::SeqCst)
    }

    /// Follows `action` from the next key on.
    pub fn follow(&self, action: DoubleEscapeAction) {
        self.off
            .store(action == DoubleEscapeAction::Nothing, Ordering::SeqCst);
    }
}

impl DoubleEscape {
    /// Whether an Esc read at `now` is the second of two; if not, it may be the first.
    fn second_of_two(&self, now: Instant) -> bool {
        let mut first = self.first.lock().unwrap_or_else(PoisonError::into_inner);
        match first.take() {
            Some(earlier) if now.duration_since(earlier) <= DOUBLE_ESCAPE_WINDOW => true,
            _ => {
                *first = Some(now);
                false
            }
        }
    }
}

impl ConditionalEventHandler for DoubleEscape {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, context: &EventContext) -> Option<Cmd> {
        // Esc on its own changes nothing: on a line with text, and under `none`.
        if !context.line().is_empty() || self.off.load(Ordering::SeqCst) {
            return Some(Cmd::Noop);
        }
        if !self.second_of_two(Instant::now()) {
            return Some(Cmd::Noop);
        }
        self.pressed.store(true, Ordering::SeqCst);
        Some(Cmd::Interrupt)
    }
}

/// Binds Esc twice to the rewind. The line editor reports a lone Esc once the escape timeout
/// ([`escape_timeout_ms`]) passes with nothing after it, so a key typed after an idle Esc is
/// that key, not Alt and it; two Esc within [`DOUBLE_ESCAPE_WINDOW`] are the double Esc.
/// Inside a paste an Esc is pasted text.
pub fn bind_double_escape<H: Helper, I: History>(
    editor: &mut Editor<H, I>,
    large: &super::large_input::LargeInput,
) -> DoubleEscape {
    let keys = DoubleEscape::default();
    editor.bind_sequence(
        KeyEvent::new('\x1b', rustyline::Modifiers::NONE),
        large.unless_pasting(keys.clone()),
    );
    keys
}

/// The user messages of the branch, oldest first (their text is read when shown).
fn branch_prompts(session: &Session) -> Vec<StoredEntry> {
    session
        .branch_path(None)
        .into_iter()
        .filter(|entry| entry.role() == Some("user"))
        .cloned()
        .collect()
}

/// A user message's text as the user typed it (its text parts joined, the files `@path` attached
/// left out; empty for anything else).
pub(super) fn prompt_text(entry: &StoredEntry) -> String {
    let text = entry
        .parse_message()
        .and_then(Result::ok)
        .and_then(|message| Some(message.as_user()?.content.joined_text("\n")))
        .unwrap_or_default();
    super::attach::split_attached(&text).1.to_owned()
}

/// The user prompts from `id` on, in file order (every branch: all were typed after it).
fn turns_since(session: &Session, id: &str) -> Vec<String> {
    let entries = session.entries();
    let Some(start) = entries.iter().position(|entry| entry.id() == id) else {
        return Vec::new();
    };
    entries[start..]
        .iter()
        .filter(|entry| entry.role() == Some("user"))
        .map(|entry| entry.id().to_owned())
        .collect()
}

/// The tool calls of the replies from `id` on that succeeded, in file order (every branch, as
/// [`turns_since`]).
fn calls_since(session: &Session, id: &str) -> Vec<ctxkit_protocol::ToolCall> {
    use ctxkit_protocol::AgentMessage;
    let entries = session.entries();
    let Some(start) = entries.iter().position(|entry| entry.id() == id) else {
        return Vec::new();
    };
    let messages: Vec<AgentMessage> = entries[start..]
        .iter()
        .filter(|entry| matches!(entry.role(), Some("assistant" | "toolResult")))
        .filter_map(|entry| entry.parse_message()?.ok())
        .collect();
    let succeeded: std::collections::HashSet<&str> = messages
        .iter()
        .filter_map(|message| message.as_tool_result())
        .filter(|result| !result.is_error)
        .map(|result| result.tool_call_id.as_str())
        .collect();
    messages
        .iter()
        .filter_map(AgentMessage::as_assistant)
        .flat_map(|reply| {
            reply
                .content
                .iter()
                .filter_map(|block| block.as_tool_call())
        })
        .filter(|call| succeeded.contains(call.id.as_str()))
        .cloned()
        .collect()
}

impl Chat {
    /// Esc twice: choose an earlier prompt, go back to before it, maybe restore files.
    pub async fn rewind(&mut self, ask: &mut dyn Ask) -> Result<Action> {
        let prompts = self.engine.with_session(branch_prompts).await;
        if prompts.is_empty() {
            self.ui.info("No earlier prompt to rewind to");
            return Ok(Action::Continue);
        }
        let texts: RefCell<HashMap<usize, String>> = RefCell::default();
        let text = |index: usize| {
            if let Some(text) = texts.borrow().get(&index) {
                return text.clone();
            }
            let text = prompts.get(index).map(prompt_text).unwrap_or_default();
            texts.borrow_mut().insert(index, text.clone());
            text
        };
        let row = |index: usize| format!("{:>3}. {}", index + 1, one_line(&text(index), 100));
        let detail = |index: usize| text(index);
        let list = List {
            title: "Rewind to before which prompt? (what follows stays in the tree)",
            help: "↑/↓ j/k move · Enter rewind there · Esc leave unchanged",
            count: prompts.len(),
            row: &row,
            detail: &detail,
            keys: "",
        };
        let chosen = match pick(&list, prompts.len() - 1) {
            Ok(Picked::Chosen(index)) => index,
            Ok(Picked::Key(_, _) | Picked::Left) | Err(_) => {
                self.ui.info("Rewind cancelled; nothing changed");
                return Ok(Action::Continue);
            }
        };
        let Some(target) = prompts.get(chosen) else {
            return Ok(Action::Continue);
        };
        let target_id = target.id().to_owned();
        let (session_file, turns, calls) = self
            .engine
            .with_session(|session| {
                (
                    session.path().map(Path::to_owned),
                    turns_since(session, &target_id),
                    calls_since(session, &target_id),
                )
            })
            .await;
        let outcome = self
            .navigate_recorded(&target_id, NavigateOptions::default())
            .await;
        self.events.flush().await;
        let outcome = outcome?;
        if outcome.cancelled || outcome.aborted {
            self.ui.notice("Rewind cancelled; nothing changed");
            return Ok(Action::Continue);
        }
        self.ui.say(&format!(
            "Rewound to before prompt {} (what followed stays in the tree; /tree shows it)",
            chosen + 1
        ));
        if let Some(session_file) = session_file {
            self.offer_restore(&session_file, &turns, &calls, ask)?;
        }
        Ok(Action::Edit(
            outcome.editor_text.unwrap_or_else(|| text(chosen)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variables(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        }
    }

    #[test]
    fn the_escape_timeout_is_pis_longer_over_ssh_and_set_by_its_variable() {
        assert_eq!(escape_timeout_ms(variables(&[])), 10);
        assert_eq!(
            escape_timeout_ms(variables(&[("SSH_TTY", "/dev/pts/1")])),
            100
        );
        assert_eq!(
            escape_timeout_ms(variables(&[
                ("SSH_CONNECTION", "a"),
                ("CTXKIT_ESC_TIMEOUT", "40")
            ])),
            40
        );
        assert_eq!(
            escape_timeout_ms(variables(&[("CTXKIT_ESC_TIMEOUT", "0")])),
            10
        );
        assert_eq!(
            escape_timeout_ms(variables(&[("CTXKIT_ESC_TIMEOUT", "x")])),
            10
        );
    }

    #[test]
    fn two_escapes_within_the_window_are_a_double_and_a_third_starts_again() {
        let keys = DoubleEscape::default();
        let start = Instant::now();
        assert!(!keys.second_of_two(start));
        assert!(keys.second_of_two(start + Duration::from_millis(300)));
        assert!(!keys.second_of_two(start + Duration::from_millis(400)));
        // Too slow: the later one may be the first of the next two.
        assert!(!keys.second_of_two(start + Duration::from_millis(1_000)));
        assert!(keys.second_of_two(start + Duration::from_millis(1_200)));
    }
}
