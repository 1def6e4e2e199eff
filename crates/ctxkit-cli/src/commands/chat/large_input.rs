//! Text too large for the line editor. rustyline 17 counts columns and rows in 16 bits: Ctrl-U on
//! a pasted 70,000-character line summed its width past 65,535, and a paste of 70,000 lines
//! counted its rows past it (a panic in a debug build, a wrong screen in a release one; rustyline
//! 18 counts the same way). A text's width and its rows are each at most its length in bytes, so
//! the editor is never given more than [`MAX_EDITABLE_BYTES`]:
//!
//! - the chat reads a bracketed paste itself, key by key ([`LargeInput`]): a paste that leaves the
//!   line within the limit is inserted as rustyline inserts one; a larger one ends the editing, and
//!   the whole input (the line with the paste at the cursor) goes to the chat, which asks what to
//!   do with it (send it, edit it in `$EDITOR`, drop it);
//! - a key other than Enter on a line grown past the limit hands the line over the same way;
//! - text put back on the input line (an old prompt, a file from `$EDITOR`) is checked first.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use rustyline::{
    Cmd, ConditionalEventHandler, Event, EventContext, EventHandler, KeyCode, KeyEvent, Modifiers,
    RepeatCount,
};

use super::cursor_keys::CursorKeys;
use super::modified_keys::{ModifiedKeyTail, take_unknown_sequence};

/// The most bytes the line editor is given: below it every width and row count it sums fits its
/// 16 bits.
pub const MAX_EDITABLE_BYTES: usize = 32 * 1024;

/// Whether the line editor may be given `text`.
pub fn fits(text: &str) -> bool {
    text.len() <= MAX_EDITABLE_BYTES
}

#[derive(Debug, Default)]
struct State {
    /// The paste read so far, between its start and end marks.
    paste: Option<String>,
    /// The whole input, handed to the chat because it is too large to edit.
    handed: Option<String>,
    /// The rest of a modified key's sequence, which the line editor does not read.
    modified_key: ModifiedKeyTail,
    /// Ctrl-] as Pi moves it.
    cursor_keys: CursorKeys,
}

/// The handler of every key the chat does not bind itself: reads pastes, and hands over input too
/// large to edit ([`LargeInput::take`]); outside a paste, a modified key's sequence is read to
/// its end first ([`ModifiedKeyTail`]), and Ctrl-] moves as Pi's ([`CursorKeys`]).
#[derive(Debug, Clone, Default)]
pub struct LargeInput(Arc<Mutex<State>>);

impl LargeInput {
    /// The input handed over since the last call, if any (and clears it). Called after each
    /// read of a line: a paste whose end mark never came (the line ended by a key bound to
    /// something else) is forgotten, so the next line's keys are not read as pasted.
    pub fn take(&self) -> Option<String> {
        let mut state = self.state();
        state.paste = None;
        state.handed.take()
    }

    /// Hands `text` over as if the editor had: for text too large to put on the input line.
    pub fn hand(&self, text: String) {
        self.state().handed = Some(text);
    }

    /// `handler` for a key the chat binds (Ctrl-G, Alt-Enter, Esc), except inside a paste, where
    /// the key is pasted text.
    pub fn unless_pasting(&self, handler: impl ConditionalEventHandler + 'static) -> EventHandler {
        EventHandler::Conditional(Box::new(UnlessPasting {
            large: self.clone(),
            handler: Box::new(handler),
        }))
    }

    /// Adds `key` to the paste in progress; `false` when none is.
    fn paste_key(&self, key: &KeyEvent) -> bool {
        match self.state().paste.as_mut() {
            Some(paste) => {
                push_pasted_key(paste, key);
                true
            }
            None => false,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ConditionalEventHandler for LargeInput {
    fn handle(
        &self,
        event: &Event,
        _count: RepeatCount,
        _positive: bool,
        context: &EventContext<'_>,
    ) -> Option<Cmd> {
        let key = event.get(0)?;
        // Taken whatever the key does, so it never stands for a later one.
        let sequence = (*key == KeyEvent(KeyCode::UnknownEscSeq, Modifiers::NONE))
            .then(take_unknown_sequence)
            .flatten();
        let mut state = self.state();
        if *key == KeyEvent(KeyCode::BracketedPasteStart, Modifiers::NONE) {
            state.paste = Some(String::new());
            return Some(Cmd::Noop);
        }
        let Some(paste) = state.paste.as_mut() else {
            if let Some(command) = state
                .modified_key
                .key(key, sequence.as_deref(), Instant::now())
            {
                return Some(command);
            }
            if let Some(command) = oversized_line(&mut state, key, context.line()) {
                return Some(command);
            }
            return state.cursor_keys.key(key);
        };
        if *key != KeyEvent(KeyCode::BracketedPasteEnd, Modifiers::NONE) {
            push_pasted_key(paste, key);
            return Some(Cmd::Noop);
        }
        let paste = with_line_feeds(&state.paste.take().unwrap_or_default());
        let (command, handed) = pasted(context.line(), context.pos(), paste);
        state.handed = handed;
        Some(command)
    }
}

/// A bound key's handler that stands aside inside a paste ([`LargeInput::unless_pasting`]).
struct UnlessPasting {
    large: LargeInput,
    handler: Box<dyn ConditionalEventHandler>,
}

impl ConditionalEventHandler for UnlessPasting {
    fn handle(
        &self,
        event: &Event,
        count: RepeatCount,
        positive: bool,
        context: &EventContext<'_>,
    ) -> Option<Cmd> {
        if event.get(0).is_some_and(|key| self.large.paste_key(key)) {
            return Some(Cmd::Noop);
        }
        self.handler.handle(event, count, positive, context)
    }
}

/// A key bound to one command.
pub struct Always(pub Cmd);

impl ConditionalEventHandler for Always {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, _: &EventContext<'_>) -> Option<Cmd> {
        Some(self.0.clone())
    }
}

/// A key on a line with no paste in progress: nothing of ours while the editor can edit the line,
/// and Enter sends it whatever its size; any other key hands it over (that key not applied).
fn oversized_line(state: &mut State, key: &KeyEvent, line: &str) -> Option<Cmd> {
    if fits(line) || *key == KeyEvent(KeyCode::Enter, Modifiers::NONE) {
        return None;
    }
    state.handed = Some(line.to_owned());
    Some(Cmd::AcceptLine)
}

/// A whole paste on `line` with the cursor at `pos`: inserted when the line then still fits, else
/// the whole input handed over.
fn pasted(line: &str, pos: usize, paste: String) -> (Cmd, Option<String>) {
    if fits(line) && line.len() + paste.len() <= MAX_EDITABLE_BYTES {
        return (Cmd::Insert(1, paste), None);
    }
    let (before, after) = line.split_at_checked(pos).unwrap_or((line, ""));
    (Cmd::AcceptLine, Some(format!("{before}{paste}{after}")))
}

/// A paste's line breaks as line feeds, as Pi 1.6.0 reads them: `\r\n` (a file written on
/// Windows, many clipboards) and a lone `\r` are one `\n` each. Read as keys, `\r\n` was Enter
/// and then Ctrl-J: two line breaks, a blank line after each line pasted.
fn with_line_feeds(paste: &str) -> String {
    paste.replace("\r\n", "\n").replace('\r', "\n")
}

/// What a key read inside a paste stands for, as rustyline's own paste reading keeps it: the
/// character, a carriage return (Enter) or a line feed (Ctrl-J) as sent ([`with_line_feeds`] makes
/// them line feeds), a tab, a control character; an escape sequence (an arrow key) is left out,
/// as rustyline leaves it out.
fn push_pasted_key(paste: &mut String, key: &KeyEvent) {
    match *key {
        KeyEvent(KeyCode::Char(character), Modifiers::NONE | Modifiers::SHIFT) => {
            paste.push(character);
        }
        KeyEvent(KeyCode::Char(character), Modifiers::CTRL) => {
            if let Some(control) = control_character(character) {
                paste.push(control);
            }
        }
        KeyEvent(KeyCode::Char(character), Modifiers::ALT) => {
            paste.push('\x1b');
            paste.push(character);
        }
        KeyEvent(KeyCode::Enter, modifiers) => push_with_alt(paste, modifiers, '\r'),
        KeyEvent(KeyCode::Tab, modifiers) => push_with_alt(paste, modifiers, '\t'),
        KeyEvent(KeyCode::Esc, modifiers) => push_with_alt(paste, modifiers, '\x1b'),
        KeyEvent(..) => {}
    }
}

/// `character`, after the escape that made it an Alt key (Esc then Enter reads as Alt-Enter).
fn push_with_alt(paste: &mut String, modifiers: Modifiers, character: char) {
    if modifiers.contains(Modifiers::ALT) {
        paste.push('\x1b');
    }
    paste.push(character);
}

/// The control character Ctrl plus `character` types (`J` is a line feed).
fn control_character(character: char) -> Option<char> {
    let code = u8::try_from(character.to_ascii_uppercase()).ok()?;
    (0x40..=0x5f)
        .contains(&code)
        .then(|| char::from(code - 0x40))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paste_that_fits_is_inserted_and_a_larger_one_handed_over_whole() {
        assert_eq!(
            pasted("ab", 1, "one\ntwo".to_owned()),
            (Cmd::Insert(1, "one\ntwo".to_owned()), None)
        );
        let huge = "x\n".repeat(35_000);
        let (command, handed) = pasted("ab", 1, huge.clone());
        assert_eq!(command, Cmd::AcceptLine);
        assert_eq!(handed, Some(format!("a{huge}b")));
        // Two pastes that fit one by one but not together.
        let half = "y".repeat(MAX_EDITABLE_BYTES / 2 + 1);
        assert_eq!(pasted(&half, half.len(), half.clone()).0, Cmd::AcceptLine);
    }

    #[test]
    fn a_line_too_long_to_edit_is_handed_over_except_by_enter() {
        let key = |code, modifiers| KeyEvent(code, modifiers);
        let long = "a".repeat(70_000);
        let mut state = State::default();
        let enter = key(KeyCode::Enter, Modifiers::NONE);
        assert_eq!(oversized_line(&mut state, &enter, &long), None);
        assert_eq!(state.handed, None);
        let kill = key(KeyCode::Char('U'), Modifiers::CTRL);
        assert_eq!(oversized_line(&mut state, &kill, "short"), None);
        assert_eq!(
            oversized_line(&mut state, &kill, &long),
            Some(Cmd::AcceptLine)
        );
        assert_eq!(state.handed, Some(long));
        // Below the limit every width the editor sums fits its 16 bits.
        assert!(MAX_EDITABLE_BYTES < usize::from(u16::MAX));
    }

    #[test]
    fn a_paste_left_unfinished_ends_with_the_line() {
        let large = LargeInput::default();
        large.state().paste = Some("half".to_owned());
        assert_eq!(large.take(), None);
        assert_eq!(large.state().paste, None);
    }

    #[test]
    fn pasted_keys_are_the_text_the_terminal_sent() {
        let mut paste = String::new();
        for key in [
            KeyEvent(KeyCode::Char('a'), Modifiers::NONE),
            KeyEvent(KeyCode::Enter, Modifiers::NONE),
            KeyEvent(KeyCode::Char('J'), Modifiers::CTRL),
            KeyEvent(KeyCode::Tab, Modifiers::NONE),
            KeyEvent(KeyCode::Char('é'), Modifiers::NONE),
            KeyEvent(KeyCode::Up, Modifiers::NONE),
            KeyEvent(KeyCode::Esc, Modifiers::ALT),
            KeyEvent(KeyCode::Enter, Modifiers::ALT),
        ] {
            push_pasted_key(&mut paste, &key);
        }
        assert_eq!(paste, "a\r\n\té\x1b\x1b\x1b\r");
        assert_eq!(with_line_feeds(&paste), "a\n\té\x1b\x1b\x1b\n");
    }

    #[test]
    fn a_crlf_paste_keeps_one_line_break_per_line() {
        // QA r108: `one\r\ntwo` pasted was sent as `one\n\ntwo`.
        let mut paste = String::new();
        for byte in "crlf one\r\ncrlf two\r\n\tindented\r\nend\rlast".chars() {
            push_pasted_key(&mut paste, &KeyEvent::new(byte, Modifiers::NONE));
        }
        assert_eq!(
            with_line_feeds(&paste),
            "crlf one\ncrlf two\n\tindented\nend\nlast"
        );
    }
}
