//! Enter typed while nobody reads the terminal. Between two reads (the end of a turn and the next
//! input line, the moment after an Esc watch stops) the terminal is in the shell's mode, where the
//! line discipline turns a carriage return into a line feed (`ICRNL`): an Enter typed then reached
//! the input line as Ctrl-J, which puts a line break in the text, and the line typed ahead was
//! not entered. For the chat's life the terminal keeps Enter as a carriage return; the mode it
//! had is put back when the chat ends, and around a program that reads the terminal as the shell
//! set it (the external editor).

use std::os::fd::{AsFd, BorrowedFd};

use nix::sys::termios::{InputFlags, SetArg, Termios, tcgetattr, tcsetattr};

/// Keeps Enter a carriage return on the terminal until dropped.
#[derive(Debug)]
pub struct EnterKept {
    /// The mode the terminal had, when the chat's input is a terminal.
    saved: Option<Termios>,
    /// Whether the terminal is the chat's input (put back as it was when the guard ends).
    on_stdin: bool,
}

impl EnterKept {
    /// On the chat's input, when it is a terminal.
    pub fn on_stdin() -> Self {
        let stdin = std::io::stdin();
        if !std::io::IsTerminal::is_terminal(&stdin) {
            return Self {
                saved: None,
                on_stdin: false,
            };
        }
        let mut kept = Self::on(stdin.as_fd());
        kept.on_stdin = true;
        kept
    }

    fn on(terminal: BorrowedFd<'_>) -> Self {
        let saved = tcgetattr(terminal).ok();
        if let Some(mode) = &saved {
            set_carriage_return(terminal, mode, false);
        }
        Self {
            saved,
            on_stdin: false,
        }
    }

    fn restore(&self, terminal: BorrowedFd<'_>) {
        if let Some(saved) = &self.saved {
            let _ = tcsetattr(terminal, SetArg::TCSANOW, saved);
        }
    }
}

impl Drop for EnterKept {
    fn drop(&mut self) {
        if self.on_stdin {
            self.restore(std::io::stdin().as_fd());
        }
    }
}

/// Runs `program` (the external editor) with the chat's input read as a shell reads it, a carriage
/// return turned into a line feed, and the chat's mode put back after it.
pub fn as_a_shell_reads_it<T>(program: impl FnOnce() -> T) -> T {
    let stdin = std::io::stdin();
    let now = std::io::IsTerminal::is_terminal(&stdin)
        .then(|| tcgetattr(stdin.as_fd()).ok())
        .flatten();
    if let Some(now) = &now {
        set_carriage_return(stdin.as_fd(), now, true);
    }
    let result = program();
    if let Some(now) = &now {
        let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, now);
    }
    result
}

/// `mode` with the carriage return turned into a line feed (`translated`) or kept.
fn set_carriage_return(terminal: BorrowedFd<'_>, mode: &Termios, translated: bool) {
    let mut changed = mode.clone();
    changed.input_flags.set(InputFlags::ICRNL, translated);
    let _ = tcsetattr(terminal, SetArg::TCSANOW, &changed);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn carriage_return_translated(terminal: BorrowedFd<'_>) -> bool {
        tcgetattr(terminal)
            .unwrap()
            .input_flags
            .contains(InputFlags::ICRNL)
    }

    #[test]
    fn enter_stays_a_carriage_return_until_the_guard_ends() {
        let pty = nix::pty::openpty(None, None).unwrap();
        let terminal = pty.slave.as_fd();
        assert!(
            carriage_return_translated(terminal),
            "a new terminal's mode"
        );
        let kept = EnterKept::on(terminal);
        assert!(!carriage_return_translated(terminal));
        kept.restore(terminal);
        assert!(carriage_return_translated(terminal));
    }
}
