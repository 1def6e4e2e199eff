//! What a one-key question (`[y]es / [n]o / [a]lways`) makes of the keys it reads. Asked while
//! nobody types, the first key after a short pause answers. Once typing is seen — going on as the
//! question appears, or in the second before it — no key of it answers: the answer is then a key
//! on its own (after Enter or a second's quiet) followed by Enter, and every other key is kept for
//! the next input line. (QA 2026-12-07: at 300 ms a key, the `a` of "please wait" answered
//! "always" after a pause long enough to pass for an answer; two `rm` commands ran and the `a` was
//! lost from the text.)

use std::time::{Duration, Instant};

const ESC: u8 = 0x1b;
const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// A key read sooner than this after the question appeared, or after the key before it, is
/// typing that went on, not an answer.
pub(super) const ANSWER_PAUSE: Duration = Duration::from_millis(250);

/// Keys typed this recently before the question (while the agent worked) mean the user is
/// typing: the question starts wanting Enter.
pub(super) const TYPING_RECENTLY: Duration = Duration::from_secs(1);

/// Once typing was seen, this much quiet ends what was typed: the next key may be an answer.
const LINE_PAUSE: Duration = Duration::from_secs(1);

/// What a read at the question came to.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// The answer (`None`: stopped by Ctrl-C, Ctrl-D or a lone Esc).
    Answer(Option<char>),
    /// No answer yet; `now_typing` when this read showed typing for the first time (the user is
    /// told how to answer now).
    Wait { now_typing: bool },
}

/// The keys read at one question so far.
pub(super) struct KeyQuestion<'k> {
    keys: &'k str,
    /// Typing was seen: an answer is a key alone on its line, then Enter.
    typing: bool,
    /// What was typed since the last Enter or [`LINE_PAUSE`], while `typing`.
    line: Vec<u8>,
    /// Inside a bracketed paste: an Enter there is pasted text.
    pasting: bool,
    /// Keys kept for the next input line.
    kept: Vec<u8>,
    quiet_since: Instant,
}

impl<'k> KeyQuestion<'k> {
    /// A question for one of `keys`, asked at `asked`; `typing` when the user was typing just
    /// before it.
    pub(super) fn new(keys: &'k str, asked: Instant, typing: bool) -> Self {
        Self {
            keys,
            typing,
            line: Vec::new(),
            pasting: false,
            kept: Vec::new(),
            quiet_since: asked,
        }
    }

    /// Whether an answer now wants Enter.
    pub(super) fn wants_enter(&self) -> bool {
        self.typing
    }

    /// Reads the bytes of one read, at `now`.
    pub(super) fn read(&mut self, bytes: &[u8], now: Instant) -> Step {
        let quiet = now.duration_since(self.quiet_since);
        let paused = quiet >= ANSWER_PAUSE;
        self.quiet_since = now;
        if matches!(bytes, [0x03 | 0x04, ..] | [ESC]) {
            return Step::Answer(None);
        }
        if self.typing {
            // A second's quiet ends what was typed, unless this is the Enter of a key typed
            // before it (QA 2026-12-07: `y`, then Enter a second later, answered nothing and the
            // Enter sent the kept text).
            if quiet >= LINE_PAUSE && !self.pasting && bytes.first() != Some(&b'\r') {
                self.kept.append(&mut self.line);
            }
            return self.read_typing(bytes);
        }
        // A lone Enter picks the question's default, when it has one (`[y/N]`: QA 2026-12-07, the
        // chat's `/trust` ignored Enter where `ctxkit trust` took it as no).
        if bytes == b"\r"
            && let Some(default) = self.keys.chars().find(char::is_ascii_uppercase)
        {
            return Step::Answer(Some(default.to_ascii_lowercase()));
        }
        if let [first, after @ ..] = bytes
            && let Some(key) = self.answer_key(*first)
            && paused
        {
            self.kept.extend_from_slice(after);
            return Step::Answer(Some(key));
        }
        let key_sequence = bytes.first() == Some(&ESC) && !bytes.starts_with(PASTE_START);
        // Text is any printable key: a space, a letter outside ASCII (`é`) too.
        let text = bytes
            .iter()
            .any(|byte| byte.is_ascii_graphic() || *byte == b' ' || !byte.is_ascii());
        if key_sequence || !text {
            // An arrow key, a lone Enter: no typing, nothing to keep as text.
            self.kept.extend_from_slice(bytes);
            return Step::Wait { now_typing: false };
        }
        self.typing = true;
        match self.read_typing(bytes) {
            Step::Wait { .. } => Step::Wait { now_typing: true },
            answered @ Step::Answer(_) => answered,
        }
    }

    /// The keys kept for the next input line, once the question is over.
    pub(super) fn into_kept(mut self) -> Vec<u8> {
        self.kept.append(&mut self.line);
        self.kept
    }

    fn read_typing(&mut self, bytes: &[u8]) -> Step {
        for (index, &byte) in bytes.iter().enumerate() {
            match byte {
                b'\r' if !self.pasting => {
                    if let Some(key) = self.line_answer() {
                        self.line.clear();
                        self.kept.extend_from_slice(&bytes[index + 1..]);
                        return Step::Answer(Some(key));
                    }
                    self.kept.append(&mut self.line);
                    self.kept.push(b'\r');
                }
                // Backspace takes back a key of this line (a mistyped answer).
                0x7f | 0x08 if !self.pasting && !self.line.is_empty() => {
                    pop_character(&mut self.line)
                }
                _ => {
                    self.line.push(byte);
                    if self.line.ends_with(PASTE_START) {
                        self.pasting = true;
                    } else if self.line.ends_with(PASTE_END) {
                        self.pasting = false;
                    }
                }
            }
        }
        Step::Wait { now_typing: false }
    }

    /// The answer a line holds: one of the keys, alone.
    fn line_answer(&self) -> Option<char> {
        match self.line.as_slice() {
            [byte] => self.answer_key(*byte),
            _ => None,
        }
    }

    /// The answer `byte` is: one of the keys (an upper-case one is the default), lower-cased.
    fn answer_key(&self, byte: u8) -> Option<char> {
        let key = char::from(byte).to_ascii_lowercase();
        let known = self
            .keys
            .chars()
            .any(|answer| answer.to_ascii_lowercase() == key);
        (byte.is_ascii() && !key.is_ascii_control() && known).then_some(key)
    }
}

/// The answer a typed line gives (where no key can be read alone: not a terminal): its first
/// letter when it is one of `keys`, the default (the upper-case key) for an empty line.
pub(super) fn key_of_line(line: &str, keys: &str) -> Option<char> {
    match line.trim().chars().next() {
        None => keys
            .chars()
            .find(char::is_ascii_uppercase)
            .map(|key| key.to_ascii_lowercase()),
        Some(first) => {
            let first = first.to_ascii_lowercase();
            keys.chars()
                .any(|key| key.to_ascii_lowercase() == first)
                .then_some(first)
        }
    }
}

/// Drops the last UTF-8 character of `line`.
fn pop_character(line: &mut Vec<u8>) {
    while let Some(byte) = line.pop() {
        // A continuation byte belongs to the character before it.
        if byte & 0xC0 != 0x80 {
            break;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    /// Reads `keys`, one read each, `gap` apart, starting `gap` after the question.
    fn typed(question: &mut KeyQuestion<'_>, start: Instant, keys: &[&[u8]], gap: u64) -> Step {
        let mut step = Step::Wait { now_typing: false };
        for (index, key) in keys.iter().enumerate() {
            let at = start + Duration::from_millis(gap * (index as u64 + 1));
            step = question.read(key, at);
            if matches!(step, Step::Answer(_)) {
                return step;
            }
        }
        step
    }

    #[test]
    fn a_key_after_a_pause_answers_at_once_when_nobody_types() {
        let asked = Instant::now();
        let mut question = KeyQuestion::new("yna", asked, false);
        assert_eq!(
            typed(&mut question, asked, &[b"y"], 600),
            Step::Answer(Some('y'))
        );
        // A fast typist's answer and next keys come in one read: the rest is kept.
        let mut question = KeyQuestion::new("yna", asked, false);
        assert_eq!(
            typed(&mut question, asked, &[b"Ynext"], 600),
            Step::Answer(Some('y'))
        );
        assert_eq!(question.into_kept(), b"next");
        for stop in [&b"\x03"[..], b"\x04y", b"\x1b"] {
            let mut question = KeyQuestion::new("yna", asked, false);
            assert_eq!(
                typed(&mut question, asked, &[stop], 600),
                Step::Answer(None)
            );
        }
        // An arrow key is no typing; a key too soon after the question is.
        let mut question = KeyQuestion::new("yna", asked, false);
        assert_eq!(
            typed(&mut question, asked, &[b"\x1b[A", b"n"], 600),
            Step::Answer(Some('n'))
        );
        let mut question = KeyQuestion::new("yna", asked, false);
        assert_eq!(
            typed(&mut question, asked, &[b"y"], 100),
            Step::Wait { now_typing: true }
        );
        // A first key that is a space or a letter outside ASCII is typing too.
        for first in [&b" "[..], "é".as_bytes()] {
            let mut question = KeyQuestion::new("yna", asked, false);
            assert_eq!(
                typed(&mut question, asked, &[first, b"a"], 600),
                Step::Wait { now_typing: false },
                "{first:?}"
            );
            assert!(question.wants_enter());
        }
    }

    /// The QA case: "please wait" at 300 ms a key, each key after a "pause".
    #[test]
    fn slow_typing_answers_nothing_and_loses_no_key() {
        let asked = Instant::now();
        let mut question = KeyQuestion::new("yna", asked, false);
        let keys: Vec<[u8; 1]> = "please wait".bytes().map(|byte| [byte]).collect();
        let reads: Vec<&[u8]> = keys.iter().map(|key| &key[..]).collect();
        assert_eq!(
            typed(&mut question, asked, &reads, 300),
            Step::Wait { now_typing: false }
        );
        assert!(question.wants_enter());
        // Its Enter sends nothing as an answer; a key alone then Enter answers.
        let later = asked + Duration::from_secs(10);
        assert_eq!(
            question.read(b"\r", later),
            Step::Wait { now_typing: false }
        );
        assert_eq!(question.read(b"n", later), Step::Wait { now_typing: false });
        assert_eq!(question.read(b"\rnext", later), Step::Answer(Some('n')));
        assert_eq!(question.into_kept(), b"please wait\rnext");
        // Without Enter: a second's quiet ends the text, then a key alone and Enter answer.
        let mut question = KeyQuestion::new("yna", asked, true);
        assert_eq!(
            typed(
                &mut question,
                asked,
                &[b"k", b"e", b"e", b"p", b" ", b"a"],
                300
            ),
            Step::Wait { now_typing: false }
        );
        assert_eq!(
            question.read(b"\r", asked + Duration::from_millis(2100)),
            Step::Wait { now_typing: false }
        );
        assert_eq!(
            question.read(b"y", asked + Duration::from_secs(4)),
            Step::Wait { now_typing: false }
        );
        assert_eq!(
            question.read(b"\r", asked + Duration::from_millis(4200)),
            Step::Answer(Some('y'))
        );
        assert_eq!(question.into_kept(), b"keep a\r");
    }

    #[test]
    fn typing_just_before_the_question_wants_enter_from_the_start() {
        let asked = Instant::now();
        let mut question = KeyQuestion::new("yna", asked, true);
        assert_eq!(
            typed(&mut question, asked, &[b"a"], 2000),
            Step::Wait { now_typing: false }
        );
        // A mistyped answer is taken back.
        assert_eq!(
            typed(&mut question, asked, &[b"\x7f", b"n", b"\r"], 300),
            Step::Answer(Some('n'))
        );
        assert_eq!(question.into_kept(), b"");
    }

    /// QA 2026-12-07: a paste whose first letter is an answer's ("also look at the tests")
    /// answered "always"; marked as a paste, it answers nothing and is kept.
    #[test]
    fn a_paste_starting_with_an_answer_letter_answers_nothing() {
        let asked = Instant::now();
        let mut question = KeyQuestion::new("yna", asked, false);
        let paste: &[u8] = b"\x1b[200~also look at the tests\x1b[201~";
        assert_eq!(
            typed(&mut question, asked, &[paste], 2000),
            Step::Wait { now_typing: true }
        );
        assert_eq!(question.into_kept(), paste);
    }

    /// QA 2026-12-07: `y`, then Enter more than a second later, answered nothing: the quiet
    /// before the Enter put the `y` with the kept text, and the Enter sent it.
    #[test]
    fn an_answer_whose_enter_comes_late_still_answers() {
        let asked = Instant::now();
        let mut question = KeyQuestion::new("yna", asked, true);
        assert_eq!(
            question.read(b"y", asked + Duration::from_secs(3)),
            Step::Wait { now_typing: false }
        );
        assert_eq!(
            question.read(b"\r", asked + Duration::from_secs(5)),
            Step::Answer(Some('y'))
        );
        assert_eq!(question.into_kept(), b"");
    }

    #[test]
    fn a_paste_holding_a_lone_letter_line_answers_nothing() {
        let asked = Instant::now();
        let mut question = KeyQuestion::new("yna", asked, false);
        let paste: &[u8] = b"\x1b[200~notes\ra\r\x1b[201~";
        assert_eq!(
            typed(&mut question, asked, &[paste], 600),
            Step::Wait { now_typing: true }
        );
        assert_eq!(
            typed(&mut question, asked, &[b"\r", b"y", b"\r"], 300),
            Step::Answer(Some('y'))
        );
        let mut kept = paste.to_vec();
        kept.push(b'\r');
        assert_eq!(question.into_kept(), kept);
    }

    /// QA 2026-12-07: `Trust them? [y/N]` in the chat ignored Enter; Enter is the default's.
    #[test]
    fn enter_alone_answers_the_default_when_there_is_one() {
        let asked = Instant::now();
        let mut question = KeyQuestion::new("yN", asked, false);
        assert_eq!(
            typed(&mut question, asked, &[b"\r"], 600),
            Step::Answer(Some('n'))
        );
        let mut question = KeyQuestion::new("yN", asked, false);
        assert_eq!(
            typed(&mut question, asked, &[b"Y"], 600),
            Step::Answer(Some('y'))
        );
        let mut question = KeyQuestion::new("yna", asked, false);
        assert_eq!(
            typed(&mut question, asked, &[b"\r"], 600),
            Step::Wait { now_typing: false }
        );
        assert_eq!(key_of_line("", "yN"), Some('n'));
        assert_eq!(key_of_line(" Yes", "yN"), Some('y'));
        assert_eq!(key_of_line("", "yna"), None);
        assert_eq!(key_of_line("x", "yna"), None);
    }

    #[test]
    fn backspace_takes_back_a_whole_character() {
        let mut line = "aé".as_bytes().to_vec();
        pop_character(&mut line);
        assert_eq!(line, b"a");
    }
}
