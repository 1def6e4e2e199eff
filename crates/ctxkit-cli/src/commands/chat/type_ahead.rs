//! Keys typed while the agent works, kept for later: each text ended by Enter waits to steer the
//! agent or to be entered when the turn ends; the text after the last Enter, with its cursor,
//! starts the next input line. A small live editor with the input line's editing keys: Left,
//! Right, Home, End, Backspace, Delete, Ctrl-A/E/B/F/D, Ctrl-W and Alt-Backspace (a word back),
//! Alt-D (a word forward), Ctrl-U and Ctrl-K (to the start and the end of the line),
//! Alt-B/F and Ctrl-Left/Right (a word back, forward) edit that text where its cursor is; Alt-Enter,
//! Ctrl-J and a modified Enter (Shift-Enter, Ctrl-Enter in the CSI-u or xterm form) put a line
//! break in it; Tab does nothing (as in Pi's editor), a line ending in `\` goes on on the next one
//! when Enter is typed after it (as at the input line), and a bracketed paste is text, never
//! keys: its line breaks stay in it (`\r\n` and `\r` read as `\n`), and nothing of it is entered
//! until the user types Enter.
//! Esc takes the entered texts back, unsent, onto the next input line ([`TypeAhead::unsend`]).

use std::collections::VecDeque;

const PASTE_END: &str = "\x1b[201~";

/// The keys typed while the agent works, read from the terminal's bytes as they come.
#[derive(Debug, Default)]
pub struct TypeAhead {
    /// Texts ended by Enter, oldest first; a paste's line breaks stay in its text.
    entered: VecDeque<String>,
    /// The text after the last Enter: it starts the next input line.
    pending: String,
    /// Where in `pending` the next key goes (a byte offset on a character boundary).
    cursor: usize,
    /// Inside a bracketed paste: everything up to its end mark is text.
    pasting: bool,
    /// The start of a character or an escape sequence that the last read cut off.
    carry: Vec<u8>,
    /// The user stopped the agent since texts were set aside ([`TypeAhead::put_back_entered`]).
    stopped: bool,
    /// When the last key of text was read, until the text is taken for the input line: a
    /// question asked right after it meets a user typing.
    last_key_at: Option<std::time::Instant>,
}

/// The text that starts the next input line, and where its cursor is.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PendingText {
    pub text: String,
    /// A byte offset in `text`, on a character boundary.
    pub cursor: usize,
}

/// An editing key read from an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EditKey {
    Left,
    Right,
    Home,
    End,
    Delete,
    /// Alt-B, Ctrl-Left: to the start of the word before the cursor.
    WordLeft,
    /// Alt-F, Ctrl-Right: to the end of the word after the cursor.
    WordRight,
    /// Alt-Backspace: deletes the word before the cursor (letters and digits).
    DeleteWordBack,
    /// Alt-D: deletes the word after the cursor.
    DeleteWordForward,
    /// Alt-Enter, Shift-Enter, Ctrl-Enter: a line break in the text.
    Newline,
    PasteStart,
    /// Any other sequence (Up, a function key, an Alt key): nothing to do.
    Ignored,
}

/// What an escape sequence at the start of some text is.
enum Sequence {
    /// Cut off by the end of the read: the rest comes with the next one.
    Incomplete,
    /// This many bytes long, meaning this key.
    Complete(usize, EditKey),
}

impl TypeAhead {
    /// Reads `bytes` the terminal sent: typed keys, escape sequences, bracketed pastes. A
    /// character or a sequence cut off at the end waits for the next read.
    pub fn keep(&mut self, bytes: &[u8]) {
        let mut input = std::mem::take(&mut self.carry);
        input.extend_from_slice(bytes);
        let complete = match std::str::from_utf8(&input) {
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            Ok(_) | Err(_) => input.len(),
        };
        let text = String::from_utf8_lossy(&input[..complete]).into_owned();
        let read = self.keep_text(&text);
        let mut carry = text.as_bytes()[read..].to_vec();
        carry.extend_from_slice(&input[complete..]);
        self.carry = carry;
    }

    /// [`TypeAhead::keep`] for keys a question read and did not take as its answer: they were
    /// typed before the answer, so they say nothing of typing now (QA 2026-12-07: the next
    /// question, a moment later, wanted Enter of a user who had stopped typing).
    pub fn keep_from_a_question(&mut self, bytes: &[u8]) {
        let last_key_at = self.last_key_at;
        self.keep(bytes);
        self.last_key_at = last_key_at;
    }

    /// Whether a key was read within `window` of now.
    pub fn typed_within(&self, window: std::time::Duration) -> bool {
        self.last_key_at.is_some_and(|at| at.elapsed() < window)
    }

    /// Whether a bracketed paste is being read (its end mark has not come yet): an Esc byte then
    /// is pasted text, not the Esc key.
    pub fn is_pasting(&self) -> bool {
        self.pasting
    }

    /// Reads `text`; the number of its bytes read (the rest is a sequence cut off).
    fn keep_text(&mut self, text: &str) -> usize {
        let mut index = 0;
        while index < text.len() {
            let rest = &text[index..];
            if self.pasting {
                if let Some(end) = rest.find(PASTE_END) {
                    self.insert(&pasted_text(&rest[..end]));
                    self.pasting = false;
                    index += end + PASTE_END.len();
                    continue;
                }
                // The end mark may be cut off: its start waits for the next read.
                let kept_back = (1..PASTE_END.len())
                    .rev()
                    .find(|length| rest.ends_with(&PASTE_END[..*length]))
                    .unwrap_or(0);
                self.insert(&pasted_text(&rest[..rest.len() - kept_back]));
                return text.len() - kept_back;
            }
            let Some(character) = rest.chars().next() else {
                break;
            };
            if character == '\u{1b}' {
                match escape_sequence(rest) {
                    Sequence::Incomplete => return index,
                    Sequence::Complete(length, key) => {
                        self.edit(key);
                        index += length;
                    }
                }
                continue;
            }
            self.typed(character);
            index += character.len_utf8();
        }
        text.len()
    }

    /// A key typed outside a paste.
    fn typed(&mut self, character: char) {
        match character {
            '\u{7f}' | '\u{8}' => {
                if let Some(before) = self.pending[..self.cursor].chars().next_back() {
                    self.cursor -= before.len_utf8();
                    self.pending.remove(self.cursor);
                }
            }
            // Enter is a carriage return; Ctrl-J, a line feed, is a line break, as in Pi.
            '\r' => self.enter(),
            '\n' => self.insert("\n"),
            // Ctrl-A, Ctrl-E, Ctrl-B, Ctrl-F and Ctrl-D, as at the input line.
            '\u{1}' => self.edit(EditKey::Home),
            '\u{5}' => self.edit(EditKey::End),
            '\u{2}' => self.edit(EditKey::Left),
            '\u{6}' => self.edit(EditKey::Right),
            '\u{4}' => self.edit(EditKey::Delete),
            // Ctrl-W: the blank-separated word before the cursor, as at the input line.
            '\u{17}' => {
                let start = word_start_before(&self.pending, self.cursor, char::is_whitespace);
                self.delete_range(start, self.cursor);
            }
            // Ctrl-U: to the start of the line; at its start, the line break before it.
            '\u{15}' => {
                let start = line_start(&self.pending, self.cursor);
                let start = if start == self.cursor {
                    start.saturating_sub(1)
                } else {
                    start
                };
                self.delete_range(start, self.cursor);
            }
            // Ctrl-K: to the end of the line; at its end, the line break after it.
            '\u{b}' => {
                let end = line_end(&self.pending, self.cursor);
                let end = if end == self.cursor {
                    (end + 1).min(self.pending.len())
                } else {
                    end
                };
                self.delete_range(self.cursor, end);
            }
            control if control.is_control() => {}
            other => self.insert(other.encode_utf8(&mut [0; 4])),
        }
    }

    /// Enter: the text is entered, unless it ends in `\` before the cursor, which goes on on a
    /// new line (the `\` removed, as at the input line).
    fn enter(&mut self) {
        if self.pending[..self.cursor].ends_with('\\') {
            self.cursor -= 1;
            self.pending.replace_range(self.cursor..=self.cursor, "\n");
            self.cursor += 1;
            return;
        }
        self.entered.push_back(std::mem::take(&mut self.pending));
        self.cursor = 0;
    }

    fn edit(&mut self, key: EditKey) {
        match key {
            EditKey::Left => {
                if let Some(before) = self.pending[..self.cursor].chars().next_back() {
                    self.cursor -= before.len_utf8();
                }
            }
            EditKey::Right => {
                if let Some(after) = self.pending[self.cursor..].chars().next() {
                    self.cursor += after.len_utf8();
                }
            }
            EditKey::Home => self.cursor = 0,
            EditKey::End => self.cursor = self.pending.len(),
            EditKey::Delete => {
                if self.cursor < self.pending.len() {
                    self.pending.remove(self.cursor);
                }
            }
            EditKey::WordLeft => {
                self.cursor = word_start_before(&self.pending, self.cursor, not_a_word_character);
            }
            EditKey::WordRight => {
                self.cursor = word_end_after(&self.pending, self.cursor);
            }
            EditKey::DeleteWordBack => {
                let start = word_start_before(&self.pending, self.cursor, not_a_word_character);
                self.delete_range(start, self.cursor);
            }
            EditKey::DeleteWordForward => {
                let end = word_end_after(&self.pending, self.cursor);
                self.delete_range(self.cursor, end);
            }
            EditKey::Newline => self.insert("\n"),
            EditKey::PasteStart => self.pasting = true,
            EditKey::Ignored => {}
        }
    }

    /// Deletes `start..end` of the text (byte offsets on character boundaries, `start` at or
    /// before the cursor), the cursor at `start`.
    fn delete_range(&mut self, start: usize, end: usize) {
        if start < end && end <= self.pending.len() {
            self.pending.replace_range(start..end, "");
            self.cursor = start;
        }
    }

    fn insert(&mut self, text: &str) {
        // Text, not Esc, Enter or an arrow: typing that may go on.
        self.last_key_at = Some(std::time::Instant::now());
        self.pending.insert_str(self.cursor, text);
        self.cursor += text.len();
    }

    /// Takes the texts to steer the agent with: those entered, oldest first (only the first when
    /// `all` is false, Pi's `one-at-a-time`), up to the first that is a command (`/…`, `!…`),
    /// which waits with what follows for the input line. Blank ones are dropped.
    pub fn take_steering(&mut self, all: bool) -> Vec<String> {
        self.drop_blank_entered();
        let deliverable = self
            .entered
            .iter()
            .take_while(|text| !names_a_command(text))
            .count();
        let count = if all { deliverable } else { deliverable.min(1) };
        self.entered
            .drain(..count)
            .map(|text| text.trim().to_owned())
            .collect()
    }

    /// Takes the next text entered (blank ones skipped), trimmed.
    pub fn take_entered(&mut self) -> Option<String> {
        self.drop_blank_entered();
        self.entered.pop_front().map(|text| text.trim().to_owned())
    }

    /// Takes every text entered (blank ones skipped), trimmed.
    pub fn take_all_entered(&mut self) -> Vec<String> {
        self.drop_blank_entered();
        self.entered
            .drain(..)
            .map(|text| text.trim().to_owned())
            .collect()
    }

    /// Puts `texts`, set aside while the text entered before them ran, back before the texts
    /// entered since, as entered; unsent when the user stopped that run ([`TypeAhead::unsend`]).
    pub fn put_back_entered(&mut self, texts: Vec<String>) {
        for text in texts.into_iter().rev() {
            self.entered.push_front(text);
        }
        if std::mem::take(&mut self.stopped) {
            self.unsend();
            self.stopped = false;
        }
    }

    /// Takes the text after the last Enter, with its cursor.
    pub fn take_pending(&mut self) -> PendingText {
        // The text goes on at the input line, whose Enter ends it: no longer typing ahead.
        self.last_key_at = None;
        self.cursor = self.cursor.min(self.pending.len());
        let cursor = std::mem::take(&mut self.cursor);
        PendingText {
            text: std::mem::take(&mut self.pending),
            cursor,
        }
    }

    /// Esc: nothing entered is sent. The entered texts go back before the text after the last
    /// Enter, one blank line between each (as Pi 1.6.0 puts its queued messages back in its
    /// editor), the cursor at the end.
    pub fn unsend(&mut self) {
        self.stopped = true;
        if self.entered.is_empty() {
            return;
        }
        let mut texts: Vec<String> = self.entered.drain(..).collect();
        texts.push(std::mem::take(&mut self.pending));
        let joined = texts
            .iter()
            .map(|text| text.trim())
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        self.pending = joined;
        self.cursor = self.pending.len();
    }

    /// What was typed, on one line for the spinner: each entered text followed by ` ⏎ `, a line
    /// break inside a text shown as ` ↵ `.
    pub fn shown(&self) -> String {
        let one_line = |text: &str| text.replace('\n', " ↵ ");
        let mut shown = String::new();
        for text in &self.entered {
            shown.push_str(&one_line(text));
            shown.push_str(" ⏎ ");
        }
        shown.push_str(&one_line(&self.pending));
        shown
    }

    fn drop_blank_entered(&mut self) {
        self.entered.retain(|text| !text.trim().is_empty());
    }
}

/// Whether an entered text is a command for the input line (`/…`, `!…`), not a message.
fn names_a_command(text: &str) -> bool {
    text.trim_start().starts_with(['/', '!'])
}

/// Whether `character` separates words for Alt-B/F/D and Alt-Backspace (as at the input line:
/// a word is letters and digits).
fn not_a_word_character(character: char) -> bool {
    !character.is_alphanumeric()
}

/// Where the word before `cursor` starts: the separators just before it skipped, then the word.
fn word_start_before(text: &str, cursor: usize, separator: fn(char) -> bool) -> usize {
    let before = &text[..cursor];
    let word_end = before.trim_end_matches(separator).len();
    before[..word_end]
        .char_indices()
        .rev()
        .find(|(_, character)| separator(*character))
        .map_or(0, |(index, character)| index + character.len_utf8())
}

/// Where the word after `cursor` ends: the separators just after it skipped, then the word.
fn word_end_after(text: &str, cursor: usize) -> usize {
    let after = &text[cursor..];
    let word_start = after.len() - after.trim_start_matches(not_a_word_character).len();
    after[word_start..]
        .char_indices()
        .find(|(_, character)| not_a_word_character(*character))
        .map_or(text.len(), |(index, _)| cursor + word_start + index)
}

/// Where the line holding `cursor` starts.
fn line_start(text: &str, cursor: usize) -> usize {
    text[..cursor].rfind('\n').map_or(0, |index| index + 1)
}

/// Where the line holding `cursor` ends (before its line break).
fn line_end(text: &str, cursor: usize) -> usize {
    text[cursor..]
        .find('\n')
        .map_or(text.len(), |index| cursor + index)
}

/// A paste's text as the terminal sent it, with its line breaks as `\n` (a terminal sends them
/// as `\r`, some as `\r\n`).
fn pasted_text(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// The escape sequence `text` starts with (its first character is Esc).
fn escape_sequence(text: &str) -> Sequence {
    let bytes = text.as_bytes();
    match bytes.get(1) {
        // A lone Esc at the end of a read: the rest of a sequence may follow.
        None => Sequence::Incomplete,
        Some(b'[') => control_sequence(bytes),
        Some(b'O') => match bytes.get(2) {
            None => Sequence::Incomplete,
            Some(final_byte) => Sequence::Complete(3, final_key(*final_byte, "")),
        },
        Some(b'\r' | b'\n') => Sequence::Complete(2, EditKey::Newline),
        Some(b'\x7f' | b'\x08') => Sequence::Complete(2, EditKey::DeleteWordBack),
        Some(b'b') => Sequence::Complete(2, EditKey::WordLeft),
        Some(b'f') => Sequence::Complete(2, EditKey::WordRight),
        Some(b'd') => Sequence::Complete(2, EditKey::DeleteWordForward),
        // An Alt key: Esc and the character after it, or Esc alone before another Esc.
        Some(b'\x1b') => Sequence::Complete(1, EditKey::Ignored),
        Some(_) => {
            let length = text[1..].chars().next().map_or(0, char::len_utf8);
            Sequence::Complete(1 + length, EditKey::Ignored)
        }
    }
}

/// `ESC [ parameters final`: its length and key.
fn control_sequence(bytes: &[u8]) -> Sequence {
    let parameters_end = bytes[2..]
        .iter()
        .position(|byte| !matches!(byte, b'0'..=b'9' | b';' | b'?'))
        .map(|position| position + 2);
    let Some(final_index) = parameters_end else {
        return Sequence::Incomplete;
    };
    let parameters = String::from_utf8_lossy(&bytes[2..final_index]);
    Sequence::Complete(final_index + 1, final_key(bytes[final_index], &parameters))
}

/// The key a sequence's final byte and parameters name.
fn final_key(final_byte: u8, parameters: &str) -> EditKey {
    match (final_byte, parameters) {
        // Ctrl- or Alt-Left/Right: a word.
        (b'D', "1;5" | "1;3") => EditKey::WordLeft,
        (b'C', "1;5" | "1;3") => EditKey::WordRight,
        (b'D', _) => EditKey::Left,
        (b'C', _) => EditKey::Right,
        (b'H', _) | (b'~', "1" | "7") => EditKey::Home,
        (b'F', _) | (b'~', "4" | "8") => EditKey::End,
        (b'~', "3") => EditKey::Delete,
        (b'~', "200") => EditKey::PasteStart,
        // A modified Enter: CSI-u `ESC [ 13 ; m u`, xterm's `ESC [ 27 ; m ; 13 ~`.
        (b'u', _) if parameters.starts_with("13;") => EditKey::Newline,
        (b'~', _) if parameters.starts_with("27;") && parameters.ends_with(";13") => {
            EditKey::Newline
        }
        _ => EditKey::Ignored,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(reads: &[&[u8]]) -> TypeAhead {
        let mut typed = TypeAhead::default();
        for bytes in reads {
            typed.keep(bytes);
        }
        typed
    }

    #[test]
    fn a_paste_while_the_agent_works_is_one_text_that_waits_for_enter() {
        let paste = b"\x1b[200~look at this log:\r!touch PASTED_RAN\r  indented\r\rend\x1b[201~";
        let mut typed = read(&[paste]);
        assert_eq!(typed.take_entered(), None);
        assert!(typed.take_steering(true).is_empty());
        assert_eq!(
            typed.take_pending(),
            PendingText {
                text: "look at this log:\n!touch PASTED_RAN\n  indented\n\nend".to_owned(),
                cursor: 51,
            }
        );
        // With Enter typed after it, the paste is one message, its lines as pasted.
        let mut typed = read(&[paste, b"\r"]);
        assert_eq!(
            typed.take_steering(true),
            ["look at this log:\n!touch PASTED_RAN\n  indented\n\nend"]
        );
    }

    #[test]
    fn a_paste_cut_across_reads_is_read_whole() {
        let mut typed = read(&[b"\x1b[20", b"0~a\\\r", b"b\xc3", b"\xa9\x1b[2", b"01~x"]);
        assert_eq!(
            typed.take_pending(),
            PendingText {
                text: "a\\\nbéx".to_owned(),
                cursor: 7,
            }
        );
    }

    #[test]
    fn editing_keys_edit_the_text_where_the_cursor_is() {
        // helo, Left, Left, l, wx, Backspace.
        let mut typed = read(&[b"helo", b"\x1b[D", b"\x1b[D", b"l", b"wx", b"\x7f"]);
        assert_eq!(
            typed.take_pending(),
            PendingText {
                text: "helwlo".to_owned(),
                cursor: 4,
            }
        );
        let mut typed = read(&[b"abc\x1b[H\x1b[3~X\x05Y\x1bOD\x1b[Cz"]);
        assert_eq!(typed.take_pending().text, "XbcYz");
    }

    #[test]
    fn a_typed_backslash_before_enter_goes_on_on_the_next_line() {
        let mut typed = read(&[b"make \\\rall\r"]);
        assert_eq!(typed.take_entered().as_deref(), Some("make \nall"));
    }

    #[test]
    fn steering_takes_entered_texts_up_to_a_command() {
        let mut typed = read(&[b"use the new API\rand keep tests\r/compact\rafter\rhalf"]);
        assert_eq!(typed.take_steering(false), ["use the new API"]);
        assert_eq!(typed.take_steering(true), ["and keep tests"]);
        assert!(typed.take_steering(true).is_empty());
        assert_eq!(typed.take_entered().as_deref(), Some("/compact"));
        assert_eq!(typed.take_all_entered(), ["after"]);
        typed.put_back_entered(vec!["after".to_owned()]);
        assert_eq!(typed.shown(), "after ⏎ half");
        assert_eq!(typed.take_entered().as_deref(), Some("after"));
        assert_eq!(typed.take_entered(), None);
        assert_eq!(typed.take_pending().text, "half");
    }

    #[test]
    fn esc_takes_the_entered_texts_back_unsent() {
        let mut typed = read(&[b"please also check README\r \r\x1b[200~two\rlines\x1b[201~\rnow"]);
        typed.unsend();
        assert_eq!(typed.take_entered(), None);
        assert!(typed.take_steering(true).is_empty());
        let pending = typed.take_pending();
        assert_eq!(
            pending.text,
            "please also check README\n\ntwo\nlines\n\nnow"
        );
        assert_eq!(pending.cursor, pending.text.len());
        // Texts set aside while the one entered before them runs: that run stopped, they come
        // back unsent too.
        let mut typed = read(&[b"first\rsecond\r"]);
        assert_eq!(typed.take_entered().as_deref(), Some("first"));
        let held = typed.take_all_entered();
        typed.keep(b"third\r");
        typed.unsend();
        typed.put_back_entered(held);
        assert_eq!(typed.take_entered(), None);
        assert_eq!(typed.take_pending().text, "second\n\nthird");
        // Not stopped: they are entered in turn.
        typed.keep(b"fourth\r");
        typed.put_back_entered(vec!["held".to_owned()]);
        assert_eq!(typed.take_all_entered(), ["held", "fourth"]);
    }

    #[test]
    fn other_sequences_and_control_keys_are_dropped() {
        let mut typed = read(&[
            b"fix the tets\x7f\x7fsts\x1b[Anow",
            "\x1b[1;2P é\x01\t".as_bytes(),
        ]);
        assert_eq!(typed.take_pending().text, "fix the testsnow é");
    }

    #[test]
    fn the_input_line_s_deletion_keys_edit_the_kept_text() {
        // QA r108: Ctrl-W and Ctrl-U did nothing here, and the text the user deleted was sent.
        let mut typed = read(&[b"delete this wrong\x17\x17right\r"]);
        assert_eq!(typed.take_entered().as_deref(), Some("delete right"));
        let mut typed = read(&[b"second steer junk\x15clean\r"]);
        assert_eq!(typed.take_entered().as_deref(), Some("clean"));
        // Alt-Backspace a word of letters; Ctrl-K to the end of the line; Alt-D a word forward.
        let mut typed = read(&[b"src/main.rs\x1b\x7frs two three\x1bb\x1bb\x0b"]);
        assert_eq!(typed.take_pending().text, "src/main.rs ");
        let mut typed = read(&[b"one two three\x01\x1bd\x06X"]);
        assert_eq!(typed.take_pending().text, " Xtwo three");
        // Ctrl-Left, Ctrl-Right move a word; Ctrl-B, Ctrl-F a character; Ctrl-D deletes one.
        let mut typed = read(&[b"alpha beta\x1b[1;5D\x1b[1;5D\x1b[1;5CX\x02\x02\x04"]);
        assert_eq!(typed.take_pending().text, "alphX beta");
    }

    #[test]
    fn ctrl_u_and_ctrl_k_join_lines_at_a_line_s_ends() {
        let mut typed = read(&[b"aaa\x1b\rbbb\x15\x15X"]);
        assert_eq!(typed.take_pending().text, "aaaX");
        let mut typed = read(&[b"aaa\x1b\rbbb\x1b[A\x01\x05\x0b"]);
        assert_eq!(typed.take_pending().text, "aaa\nbbb");
        let mut typed = read(&[b"aaa\x1b\rbbb\x1b[D\x1b[D\x1b[D\x1b[D\x0b"]);
        assert_eq!(typed.take_pending().text, "aaabbb");
    }

    #[test]
    fn ctrl_j_and_a_modified_enter_are_line_breaks_and_tab_does_nothing() {
        // Enter is a carriage return, Ctrl-J a line feed; CSI-u and xterm Shift-Enter, Ctrl-Enter.
        let mut typed = read(&[b"first\nsecond\x1b[13;2uthird\x1b[13;5ufourth\x1b[27;2;13~Y\tZ"]);
        assert_eq!(typed.take_entered(), None);
        assert_eq!(
            typed.take_pending().text,
            "first\nsecond\nthird\nfourth\nYZ"
        );
        let mut typed = read(&[b"\x1b[200~crlf one\r\ncrlf two\r\n\x1b[201~\r"]);
        assert_eq!(typed.take_entered().as_deref(), Some("crlf one\ncrlf two"));
    }

    /// A question asked right after keys of text meets a user typing; Esc or an arrow is no
    /// typing, and text taken for the input line is typing that ended there.
    #[test]
    fn typing_is_recent_after_text_keys_until_the_text_is_taken() {
        let second = std::time::Duration::from_secs(1);
        let mut typed = TypeAhead::default();
        typed.keep(b"\x1b[A");
        assert!(!typed.typed_within(second));
        typed.keep(b"qq");
        assert!(typed.typed_within(second));
        assert_eq!(typed.take_pending().text, "qq");
        assert!(!typed.typed_within(second));
    }
}
