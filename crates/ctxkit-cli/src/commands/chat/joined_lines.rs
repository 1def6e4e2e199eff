//! Backspace (or Ctrl-U) at the start of a line of a multi-line input joins it to the line before.
//! rustyline 17 takes a shortcut for a deletion at the end of the text that stays on one screen
//! row: it erases to the end of the row and leaves the rows above as they are. For the line break
//! deleted there, its width 0, that left the two lines on screen (`aaa` over `bbb`) while one
//! glued line (`aaabbb`) was in the editor and was sent. The chat makes that key a replacement
//! instead, which the editor draws in full: the line break and the character before it are
//! deleted and that character typed again.

use rustyline::{Cmd, KeyCode, KeyEvent, Modifiers, Movement};
use unicode_segmentation::UnicodeSegmentation;

/// What `key` does on `line` with the cursor at `pos` (a byte offset) when it joins two lines;
/// `None` for any other key or place (the editor's own command then).
pub fn joining_key(key: &KeyEvent, line: &str, pos: usize) -> Option<Cmd> {
    let deletes_back = matches!(
        key,
        KeyEvent(KeyCode::Backspace, Modifiers::NONE)
            | KeyEvent(KeyCode::Char('U'), Modifiers::CTRL)
    );
    if !deletes_back {
        return None;
    }
    let before_break = line.get(..pos)?.strip_suffix('\n')?;
    // The text's first line empty: there is nothing before the break to type again, and the
    // editor's own deletion redraws it (its width before the cursor is 0).
    let last = before_break.graphemes(true).next_back()?;
    Some(Cmd::Replace(
        Movement::BackwardChar(2),
        Some(last.to_owned()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: Modifiers) -> KeyEvent {
        KeyEvent(code, modifiers)
    }

    #[test]
    fn backspace_or_ctrl_u_at_a_line_s_start_is_drawn_as_a_replacement() {
        let backspace = key(KeyCode::Backspace, Modifiers::NONE);
        let kill = key(KeyCode::Char('U'), Modifiers::CTRL);
        // QA r108: `aaa` Alt-Enter Backspace showed two lines, sent one.
        let joined = Some(Cmd::Replace(
            Movement::BackwardChar(2),
            Some("a".to_owned()),
        ));
        assert_eq!(joining_key(&backspace, "aaa\n", 4), joined);
        assert_eq!(joining_key(&kill, "aaa\n", 4), joined);
        // The character before the break is typed again whole: an accent, an emoji with a joiner.
        assert_eq!(
            joining_key(&backspace, "cafe\u{301}\nnext", 7),
            Some(Cmd::Replace(
                Movement::BackwardChar(2),
                Some("e\u{301}".to_owned())
            ))
        );
        assert_eq!(
            joining_key(&backspace, "x👩‍💻\n", "x👩‍💻\n".len()),
            Some(Cmd::Replace(
                Movement::BackwardChar(2),
                Some("👩‍💻".to_owned())
            ))
        );
    }

    #[test]
    fn other_keys_and_places_are_the_editor_s() {
        let backspace = key(KeyCode::Backspace, Modifiers::NONE);
        assert_eq!(joining_key(&backspace, "aaa\nb", 5), None);
        assert_eq!(joining_key(&backspace, "aaa", 3), None);
        assert_eq!(joining_key(&backspace, "\n", 1), None);
        assert_eq!(
            joining_key(&key(KeyCode::Char('W'), Modifiers::CTRL), "aaa\n", 4),
            None
        );
    }
}
