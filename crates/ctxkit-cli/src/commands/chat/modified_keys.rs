//! Keys with modifiers in xterm's "modifyOtherKeys" form, `ESC [ 27 ; <modifiers> ; <code> ~`:
//! what a terminal sends for Shift-Enter or Ctrl-Enter when it (or tmux's `extended-keys`) is
//! set to tell them from Enter. rustyline 17 stops reading such a sequence after
//! `ESC [ 27 ; <modifiers> ;`, reports an unknown sequence, and types the rest: Shift-Enter put
//! `13~` on the line. The chat reads that rest itself: a modified Enter (code 13) is a new line,
//! as Alt-Enter is, and any other modified key is dropped, as rustyline drops what it does not
//! know.

use std::time::{Duration, Instant};

use rustyline::{Cmd, KeyCode, KeyEvent, Modifiers};

/// How soon after the unknown sequence its rest comes: the terminal writes a key's sequence at
/// once, so the rest follows within microseconds; a person typing digits is far slower.
const SEQUENCE_GAP: Duration = Duration::from_millis(50);

/// The longest key code read (xterm's codes are at most 6 digits: Unicode code points).
const MAX_CODE_DIGITS: usize = 7;

/// Enter's key code in the sequence.
const ENTER: &str = "13";

/// Where the reading of a sequence's rest is.
#[derive(Debug, Default)]
pub struct ModifiedKeyTail {
    /// Since when, and the code's digits read so far, after an unknown sequence.
    reading: Option<(Instant, String)>,
}

impl ModifiedKeyTail {
    /// What `key`, read at `now`, does: `None` when it is an ordinary key for the editor.
    pub fn key(&mut self, key: &KeyEvent, now: Instant) -> Option<Cmd> {
        if *key == KeyEvent(KeyCode::UnknownEscSeq, Modifiers::NONE) {
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
                tail.key(&KeyEvent(KeyCode::Char(character), Modifiers::NONE), at)
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
        assert_eq!(tail.key(&unknown(), start), Some(Cmd::Noop));
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
        tail.key(&unknown(), start);
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
        tail.key(&unknown(), start);
        assert_eq!(
            typed(&mut tail, "13~", start, Duration::from_millis(120)),
            [None, None, None]
        );
    }

    #[test]
    fn a_letter_ends_the_reading() {
        let mut tail = ModifiedKeyTail::default();
        let start = Instant::now();
        tail.key(&unknown(), start);
        assert_eq!(
            typed(&mut tail, "a1", start, Duration::from_micros(20)),
            [None, None]
        );
        assert_eq!(
            typed(&mut tail, "~", start, Duration::from_micros(20)),
            [None]
        );
    }
}
