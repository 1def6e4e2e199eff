//! Keys with modifiers in xterm's "modifyOtherKeys" form, `ESC [ 27 ; <modifiers> ; <code> ~`:
//! what a terminal sends for Shift-Enter or Ctrl-Enter when it (or tmux's `extended-keys`) is
//! set to tell them from Enter. rustyline 17 stops reading such a sequence after
//! `ESC [ 27 ; <modifiers> ;`, reports an unknown sequence, and types the rest: Shift-Enter put
//! `13~` on the line. The chat reads that rest itself: a modified Enter (code 13) is a new line,
//! as Alt-Enter is, and any other modified key is dropped, as rustyline drops what it does not
//! know.
//!
//! The CSI-u form, `ESC [ 13 ; <modifiers> u` (iTerm2's "report keys using CSI u", foot, WezTerm,
//! Ghostty, tmux's `extended-keys-format csi-u`), rustyline reads whole and reports only as an
//! unknown sequence: Shift-Enter was lost, two lines glued. rustyline names the sequence in its
//! debug log, though, just before it returns the key: [`listen_for_unknown_sequences`] catches
//! that line (and nothing else of the log), and a modified Enter read from it is a new line, as Pi
//! 1.6.0 reads Shift-Enter, Ctrl-Enter and Alt-Enter there.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustyline::{Cmd, KeyCode, KeyEvent, Modifiers};

/// How soon after the unknown sequence its rest comes: the terminal writes a key's sequence at
/// once, so the rest follows within microseconds; a person typing digits is far slower.
const SEQUENCE_GAP: Duration = Duration::from_millis(50);

/// The longest key code read (xterm's codes are at most 6 digits: Unicode code points).
const MAX_CODE_DIGITS: usize = 7;

/// Enter's key code in the sequence.
const ENTER: &str = "13";

/// What rustyline's log says before it returns a sequence it does not know, and its target.
const UNKNOWN_SEQUENCE: &str = "unsupported esc sequence: ";
const RUSTYLINE_TARGET: &str = "rustyline";

/// The last sequence rustyline said it could not read, until a key handler takes it.
static LAST_UNKNOWN_SEQUENCE: Mutex<Option<String>> = Mutex::new(None);

/// The log of rustyline's unknown key sequences; every other log line is dropped (the chat's own
/// logging, `--log`, goes through `tracing`, which does not read this log).
struct UnknownSequenceLog;

impl log::Log for UnknownSequenceLog {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target() == RUSTYLINE_TARGET && metadata.level() == log::Level::Debug
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let message = record.args().to_string();
        if let Some(sequence) = message.strip_prefix(UNKNOWN_SEQUENCE) {
            *LAST_UNKNOWN_SEQUENCE
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(sequence.to_owned());
        }
    }

    fn flush(&self) {}
}

/// Starts catching the sequences rustyline cannot read, for [`ModifiedKeyTail::key`]; once, before
/// the line editor reads a key. Another logger already set leaves CSI-u keys unread.
pub fn listen_for_unknown_sequences() {
    static LOG: UnknownSequenceLog = UnknownSequenceLog;
    if log::set_logger(&LOG).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
}

/// The sequence rustyline last said it could not read (and forgets it): its text as logged,
/// `\E[13;2u` for Shift-Enter in the CSI-u form.
pub fn take_unknown_sequence() -> Option<String> {
    LAST_UNKNOWN_SEQUENCE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
}

/// Whether `sequence`, as rustyline logs it, is Enter with modifiers in the CSI-u form.
fn is_csi_u_modified_enter(sequence: &str) -> bool {
    sequence
        .strip_prefix("\\E[13;")
        .and_then(|rest| rest.strip_suffix('u'))
        .is_some_and(|modifiers| {
            !modifiers.is_empty() && modifiers.bytes().all(|byte| byte.is_ascii_digit())
        })
}

/// Where the reading of a sequence's rest is.
#[derive(Debug, Default)]
pub struct ModifiedKeyTail {
    /// Since when, and the code's digits read so far, after an unknown sequence.
    reading: Option<(Instant, String)>,
}

impl ModifiedKeyTail {
    /// What `key`, read at `now`, does: `None` when it is an ordinary key for the editor.
    /// `sequence` is what rustyline said of it when it is a sequence it cannot read
    /// ([`take_unknown_sequence`]).
    pub fn key(&mut self, key: &KeyEvent, sequence: Option<&str>, now: Instant) -> Option<Cmd> {
        if *key == KeyEvent(KeyCode::UnknownEscSeq, Modifiers::NONE) {
            if sequence.is_some_and(is_csi_u_modified_enter) {
                self.reading = None;
                return Some(Cmd::Newline);
            }
            self.reading = Some((now, String::new()));
            return Some(Cmd::Noop);
        }
        let (since, digits) = self.reading.as_mut()?;
        if now.duration_since(*since) > SEQUENCE_GAP {
            self.reading = None;
            return None;
        }
        *since = now;
        match key {
            KeyEvent(KeyCode::Char(digit), Modifiers::NONE)
                if digit.is_ascii_digit() && digits.len() < MAX_CODE_DIGITS =>
            {
                digits.push(*digit);
                Some(Cmd::Noop)
            }
            KeyEvent(KeyCode::Char('~'), Modifiers::NONE) if !digits.is_empty() => {
                let enter = digits == ENTER;
                self.reading = None;
                Some(if enter { Cmd::Newline } else { Cmd::Noop })
            }
            _ => {
                self.reading = None;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(
        tail: &mut ModifiedKeyTail,
        keys: &str,
        start: Instant,
        gap: Duration,
    ) -> Vec<Option<Cmd>> {
        keys.chars()
            .enumerate()
            .map(|(index, character)| {
                let at = start + gap * u32::try_from(index + 1).unwrap();
                tail.key(
                    &KeyEvent(KeyCode::Char(character), Modifiers::NONE),
                    None,
                    at,
                )
            })
            .collect()
    }

    fn unknown() -> KeyEvent {
        KeyEvent(KeyCode::UnknownEscSeq, Modifiers::NONE)
    }

    #[test]
    fn shift_enter_s_rest_is_a_new_line() {
        let mut tail = ModifiedKeyTail::default();
        let start = Instant::now();
        assert_eq!(tail.key(&unknown(), None, start), Some(Cmd::Noop));
        assert_eq!(
            typed(&mut tail, "13~", start, Duration::from_micros(20)),
            [Some(Cmd::Noop), Some(Cmd::Noop), Some(Cmd::Newline)]
        );
        // What follows is typing again.
        assert_eq!(
            typed(&mut tail, "1", start, Duration::from_millis(1)),
            [None]
        );
    }

    #[test]
    fn another_modified_key_is_dropped_whole() {
        let mut tail = ModifiedKeyTail::default();
        let start = Instant::now();
        tail.key(&unknown(), None, start);
        // Ctrl-Shift-A: `ESC [ 27 ; 6 ; 65 ~`.
        assert_eq!(
            typed(&mut tail, "65~x", start, Duration::from_micros(20)),
            [Some(Cmd::Noop), Some(Cmd::Noop), Some(Cmd::Noop), None]
        );
    }

    #[test]
    fn digits_typed_after_an_unknown_key_are_typing() {
        let mut tail = ModifiedKeyTail::default();
        let start = Instant::now();
        tail.key(&unknown(), None, start);
        assert_eq!(
            typed(&mut tail, "13~", start, Duration::from_millis(120)),
            [None, None, None]
        );
    }

    #[test]
    fn a_letter_ends_the_reading() {
        let mut tail = ModifiedKeyTail::default();
        let start = Instant::now();
        tail.key(&unknown(), None, start);
        assert_eq!(
            typed(&mut tail, "a1", start, Duration::from_micros(20)),
            [None, None]
        );
        assert_eq!(
            typed(&mut tail, "~", start, Duration::from_micros(20)),
            [None]
        );
    }

    #[test]
    fn a_csi_u_modified_enter_is_a_new_line() {
        // QA r108: `first` Shift-Enter (`ESC [13;2u`) `second` was sent as `firstsecond`.
        let mut tail = ModifiedKeyTail::default();
        let start = Instant::now();
        for sequence in ["\\E[13;2u", "\\E[13;5u", "\\E[13;3u"] {
            assert_eq!(
                tail.key(&unknown(), Some(sequence), start),
                Some(Cmd::Newline)
            );
        }
        // Another CSI-u key is dropped, as before; what follows is typing.
        assert_eq!(
            tail.key(&unknown(), Some("\\E[65;6u"), start),
            Some(Cmd::Noop)
        );
        assert_eq!(
            tail.key(&unknown(), Some("\\E[13;2v"), start),
            Some(Cmd::Noop)
        );
    }

    #[test]
    fn rustyline_s_report_of_an_unknown_sequence_is_caught() {
        use log::Log as _;
        let log = UnknownSequenceLog;
        let report = |target: &str, level, message: std::fmt::Arguments<'_>| {
            log.log(
                &log::Record::builder()
                    .target(target)
                    .level(level)
                    .args(message)
                    .build(),
            );
        };
        // As rustyline 17 reports `ESC [ 13 ; 2 u` (tty/unix.rs, `extended_escape`).
        let (first, second, modifier, last) = ('1', '3', '2', 'u');
        report(
            "rustyline",
            log::Level::Debug,
            format_args!("unsupported esc sequence: \\E[{first}{second};{modifier}{last}"),
        );
        report(
            "rustyline",
            log::Level::Debug,
            format_args!("new layout: x"),
        );
        report(
            "other",
            log::Level::Debug,
            format_args!("unsupported esc sequence: y"),
        );
        assert_eq!(take_unknown_sequence().as_deref(), Some("\\E[13;2u"));
        assert_eq!(take_unknown_sequence(), None);
    }
}
