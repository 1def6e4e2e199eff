//! Ctrl-] and a character move onto the next such character, as Pi 1.6.0's jump does: rustyline 17
//! stopped one before it (its `ForwardBefore` search). The chat reads the character itself and asks
//! for rustyline's `Forward` search. (A handler's command cannot carry a count of its own: rustyline
//! sets every movement's count to the key's repeat count, so a move by a computed number of
//! characters, which Up/Down keeping the text's column would need, is not possible here.)

use rustyline::{CharSearch, Cmd, KeyCode, KeyEvent, Modifiers, Movement};

/// Whether the last key was Ctrl-], whose next key names the character to move to.
#[derive(Debug, Default)]
pub struct CursorKeys {
    jumping: bool,
}

impl CursorKeys {
    /// What `key` does; `None` leaves it to the editor.
    pub fn key(&mut self, key: &KeyEvent) -> Option<Cmd> {
        if std::mem::take(&mut self.jumping) {
            return Some(match key {
                KeyEvent(KeyCode::Char(character), Modifiers::NONE | Modifiers::SHIFT) => {
                    Cmd::Move(Movement::ViCharSearch(1, CharSearch::Forward(*character)))
                }
                // Any other key ends the jump, as in rustyline.
                _ => Cmd::Noop,
            });
        }
        if *key == KeyEvent(KeyCode::Char(']'), Modifiers::CTRL) {
            self.jumping = true;
            return Some(Cmd::Noop);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl_bracket_jumps_onto_the_character() {
        let mut keys = CursorKeys::default();
        let jump = KeyEvent(KeyCode::Char(']'), Modifiers::CTRL);
        let key = |character| KeyEvent(KeyCode::Char(character), Modifiers::NONE);
        // QA r108: `alpha beta` Ctrl-A Ctrl-] `b` `X` gave `alphaX beta`; Pi gives `alpha Xbeta`.
        assert_eq!(keys.key(&jump), Some(Cmd::Noop));
        assert_eq!(
            keys.key(&key('b')),
            Some(Cmd::Move(Movement::ViCharSearch(
                1,
                CharSearch::Forward('b')
            )))
        );
        // After the jump keys are keys again; another key ends a jump.
        assert_eq!(keys.key(&key('z')), None);
        keys.key(&jump);
        assert_eq!(
            keys.key(&KeyEvent(KeyCode::Up, Modifiers::NONE)),
            Some(Cmd::Noop)
        );
        assert_eq!(keys.key(&KeyEvent(KeyCode::Up, Modifiers::NONE)), None);
    }
}
