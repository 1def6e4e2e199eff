//! Cursor keys of the input line that rustyline 17 moves differently from Pi 1.6.0's editor:
//!
//! - Up and Down in a multi-line input keep the column in the text: rustyline counted the `> `
//!   prompt in the first line's columns, so Up from the end of `1234` under `abcdef` landed
//!   after `ab`, not after `abcd` (and Ctrl-K there cut the wrong text);
//! - Ctrl-] and a character move onto the next such character, as Pi's jump does: rustyline
//!   stopped one before it.

use rustyline::{Cmd, KeyCode, KeyEvent, Modifiers, Movement};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr as _;

/// Whether the last key was Ctrl-], whose next key names the character to move to.
#[derive(Debug, Default)]
pub struct CursorKeys {
    jumping: bool,
}

impl CursorKeys {
    /// What `key` does on `line` with the cursor at `pos` (a byte offset); `None` leaves it to
    /// the editor (Up on the first line recalls history, as before).
    pub fn key(&mut self, key: &KeyEvent, line: &str, pos: usize) -> Option<Cmd> {
        if std::mem::take(&mut self.jumping) {
            return Some(match key {
                KeyEvent(KeyCode::Char(character), Modifiers::NONE | Modifiers::SHIFT) => {
                    jump_to(line, pos, *character)
                }
                // Any other key ends the jump, as in rustyline.
                _ => Cmd::Noop,
            });
        }
        match key {
            KeyEvent(KeyCode::Char(']'), Modifiers::CTRL) => {
                self.jumping = true;
                Some(Cmd::Noop)
            }
            KeyEvent(KeyCode::Up, Modifiers::NONE) => line_up(line, pos),
            KeyEvent(KeyCode::Down, Modifiers::NONE) => line_down(line, pos),
            _ => None,
        }
    }
}

/// To the next `character` after the cursor's, onto it; nowhere when there is none.
fn jump_to(line: &str, pos: usize, character: char) -> Cmd {
    let Some(after_cursor) = line.get(pos..).and_then(|rest| rest.graphemes(true).next()) else {
        return Cmd::Noop;
    };
    let from = pos + after_cursor.len();
    match line[from..].find(character) {
        Some(offset) => forward(&line[pos..from + offset]),
        None => Cmd::Noop,
    }
}

/// Up on a line after the first: to the same column of the text on the line above.
fn line_up(line: &str, pos: usize) -> Option<Cmd> {
    let start = line.get(..pos)?.rfind('\n')? + 1;
    let column = line[start..pos].width();
    let above_start = line[..start - 1].rfind('\n').map_or(0, |index| index + 1);
    let target = at_column(line, above_start, start - 1, column);
    Some(Cmd::Move(Movement::BackwardChar(graphemes(
        &line[target..pos],
    ))))
}

/// Down on a line before the last: to the same column of the text on the line below.
fn line_down(line: &str, pos: usize) -> Option<Cmd> {
    let end = pos + line.get(pos..)?.find('\n')?;
    let start = line[..pos].rfind('\n').map_or(0, |index| index + 1);
    let column = line[start..pos].width();
    let below_end = line[end + 1..]
        .find('\n')
        .map_or(line.len(), |index| end + 1 + index);
    let target = at_column(line, end + 1, below_end, column);
    Some(forward(&line[pos..target]))
}

/// The byte offset in `line[start..end]` (one line) where `column` columns of it have passed, or
/// its end when it is shorter.
fn at_column(line: &str, start: usize, end: usize, column: usize) -> usize {
    let mut width = 0;
    for (index, grapheme) in line[start..end].grapheme_indices(true) {
        if width >= column {
            return start + index;
        }
        width += grapheme.width();
    }
    end
}

fn forward(passed: &str) -> Cmd {
    Cmd::Move(Movement::ForwardChar(graphemes(passed)))
}

/// How many graphemes `text` holds, as the editor counts its moves.
fn graphemes(text: &str) -> u16 {
    u16::try_from(text.graphemes(true).count()).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent(code, Modifiers::NONE)
    }

    #[test]
    fn up_and_down_keep_the_column_of_the_text() {
        let mut keys = CursorKeys::default();
        // QA r108: `abcdef` Alt-Enter `1234` Up `X` gave `abXcdef`; Pi gives `abcdXef`.
        let line = "abcdef\n1234";
        assert_eq!(
            keys.key(&key(KeyCode::Up), line, line.len()),
            Some(Cmd::Move(Movement::BackwardChar(7)))
        );
        // From column 4 of the first line down to the end of a shorter line.
        assert_eq!(
            keys.key(&key(KeyCode::Down), "abcdef\n12", 4),
            Some(Cmd::Move(Movement::ForwardChar(5)))
        );
        // Wide characters count their columns.
        assert_eq!(
            keys.key(&key(KeyCode::Up), "日本語\nab", "日本語\nab".len()),
            Some(Cmd::Move(Movement::BackwardChar(5)))
        );
        // On the first (or last) line the key is the editor's: history.
        assert_eq!(keys.key(&key(KeyCode::Up), line, 3), None);
        assert_eq!(keys.key(&key(KeyCode::Down), line, line.len()), None);
    }

    #[test]
    fn ctrl_bracket_jumps_onto_the_character() {
        let mut keys = CursorKeys::default();
        let jump = KeyEvent(KeyCode::Char(']'), Modifiers::CTRL);
        // QA r108: `alpha beta` Ctrl-A Ctrl-] `b` `X` gave `alphaX beta`; Pi gives `alpha Xbeta`.
        assert_eq!(keys.key(&jump, "alpha beta", 0), Some(Cmd::Noop));
        assert_eq!(
            keys.key(&key(KeyCode::Char('b')), "alpha beta", 0),
            Some(Cmd::Move(Movement::ForwardChar(6)))
        );
        // The character under the cursor is passed over; one not found moves nowhere.
        keys.key(&jump, "abab", 0);
        assert_eq!(
            keys.key(&key(KeyCode::Char('a')), "abab", 0),
            Some(Cmd::Move(Movement::ForwardChar(2)))
        );
        keys.key(&jump, "abab", 0);
        assert_eq!(
            keys.key(&key(KeyCode::Char('z')), "abab", 0),
            Some(Cmd::Noop)
        );
        // After the jump keys are keys again.
        assert_eq!(keys.key(&key(KeyCode::Char('z')), "abab", 0), None);
    }
}
