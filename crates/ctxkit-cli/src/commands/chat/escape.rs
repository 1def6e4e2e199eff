//! Esc while the spinner runs (a model call, a compaction, a branch summary): the terminal is put
//! in non-canonical mode without echo (signals stay on, so Ctrl-C still works) and a thread watches
//! stdin. A lone Esc interrupts like Ctrl-C and takes back the lines entered meanwhile, unsent;
//! other keys typed meanwhile are kept ([`TypeAhead`]) instead of being lost. The terminal is restored when the spinner stops.

use std::io::IsTerminal;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::termios::{
    InputFlags, LocalFlags, SetArg, SpecialCharacterIndices, Termios, tcgetattr, tcsetattr,
};

use super::interrupts::Interrupts;
use super::key_question::{KeyQuestion, Step};
use super::type_ahead::TypeAhead;

const ESC: u8 = 0x1b;

/// A running watch; dropping it stops the thread and restores the terminal.
#[derive(Debug)]
pub struct EscWatch {
    stop: Arc<AtomicBool>,
    /// The write end of the pipe the thread also polls: closing it wakes the thread at once, so a
    /// watch ends without waiting out the poll (each model call and tool call starts and ends one;
    /// a 50 ms wait at each end cost about 100 ms a tool step).
    wake: Option<OwnedFd>,
    thread: Option<JoinHandle<()>>,
    saved: Termios,
    quiet: Termios,
}

impl EscWatch {
    /// Starts watching when stdin is a terminal; `None` otherwise (pipes, tests without a tty).
    /// `on_typed` gets the text kept so far after each key, to show it.
    pub fn start(
        interrupts: Interrupts,
        typed: Arc<Mutex<TypeAhead>>,
        on_typed: Box<dyn Fn(&str) + Send>,
    ) -> Option<Self> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        let saved = tcgetattr(stdin.as_fd()).ok()?;
        let mut quiet = saved.clone();
        quiet
            .local_flags
            .remove(LocalFlags::ICANON | LocalFlags::ECHO);
        // Enter comes as a carriage return, Ctrl-J as a line feed: told apart, as at the input line.
        quiet.input_flags.remove(InputFlags::ICRNL);
        quiet.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        quiet.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &quiet).ok()?;
        // A paste comes marked as one (bracketed), as at the input line: its line breaks are
        // text, not Enter.
        bracketed_paste(true);
        let stop = Arc::new(AtomicBool::new(false));
        // Without a pipe the watch still ends, at its next poll timeout.
        let (woken, wake) = match std::io::pipe() {
            Ok((reader, writer)) => (Some(OwnedFd::from(reader)), Some(OwnedFd::from(writer))),
            Err(_) => (None, None),
        };
        let thread = std::thread::Builder::new()
            .name("ctxkit-esc".to_owned())
            .spawn({
                let stop = Arc::clone(&stop);
                move || {
                    watch(
                        &stop,
                        woken.as_ref(),
                        &interrupts,
                        &typed,
                        on_typed.as_ref(),
                    )
                }
            })
            .ok();
        Some(Self {
            stop,
            wake,
            thread,
            saved,
            quiet,
        })
    }
}

impl Drop for EscWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        drop(self.wake.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        // Restore only what this watch set: if the line editor has taken the terminal over since,
        // its mode stays.
        let stdin = std::io::stdin();
        if tcgetattr(stdin.as_fd()).is_ok_and(|current| same_mode(&current, &self.quiet)) {
            let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &self.saved);
            bracketed_paste(false);
        }
    }
}

/// Tells the terminal to mark pastes (or to stop), when stdout is one. Written straight to the
/// descriptor: the thread printing the reply may hold stdout's lock.
fn bracketed_paste(on: bool) {
    let stdout = std::io::stdout();
    if stdout.is_terminal() {
        let sequence: &[u8] = if on { b"\x1b[?2004h" } else { b"\x1b[?2004l" };
        let _ = nix::unistd::write(stdout.as_fd(), sequence);
    }
}

/// Shows `prompt` and reads one key among `keys` without Enter (the terminal without line mode,
/// echo or signals for the read): the key's letter, `None` for Ctrl-C, Ctrl-D or Esc, with the
/// keys typed meanwhile that answered nothing (typing that went on, the rest of a paste), for the
/// next input line. Once typing is seen (`typing`: in the second before the question), an answer
/// is a key on its own, then Enter ([`KeyQuestion`]). `Err` when stdin is not a terminal.
pub fn read_key(prompt: &str, keys: &str, typing: bool) -> Result<(Option<char>, Vec<u8>), ()> {
    use std::io::Write;
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(());
    }
    let saved = tcgetattr(stdin.as_fd()).map_err(|_| ())?;
    let mut raw = saved.clone();
    raw.local_flags
        .remove(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG);
    raw.input_flags.remove(InputFlags::ICRNL);
    raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
    raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw).map_err(|_| ())?;
    // A paste comes marked as one, so that none of its letters answers (QA 2026-12-07: a paste
    // of "also look at the tests" answered "always" with its first letter).
    bracketed_paste(true);
    let mut stdout = std::io::stdout();
    let mut question = KeyQuestion::new(keys, Instant::now(), typing);
    let _ = write!(stdout, "{prompt}");
    if question.wants_enter() {
        let _ = write!(stdout, "{}", typing_notice(prompt, keys));
    }
    let _ = stdout.flush();
    let mut buffer = [0_u8; 256];
    let answer = loop {
        let read = match nix::unistd::read(stdin.as_fd(), &mut buffer) {
            Ok(0) => break None,
            Ok(read) => read,
            Err(Errno::EINTR) => continue,
            Err(_) => break None,
        };
        match question.read(&buffer[..read], Instant::now()) {
            Step::Answer(answer) => break answer,
            Step::Wait { now_typing: true } => {
                let _ = write!(stdout, "{}", typing_notice(prompt, keys));
                let _ = stdout.flush();
            }
            Step::Wait { now_typing: false } => {}
        }
    };
    bracketed_paste(false);
    let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &saved);
    let shown = match answer {
        Some('y') => "yes",
        Some('n') => "no",
        Some('a') => "always",
        Some(_) => "",
        None => "(stopped)",
    };
    let _ = writeln!(stdout, "{shown}");
    let _ = stdout.flush();
    Ok((answer, question.into_kept()))
}

/// What the user is told once their typing is seen at a question, then the question again.
fn typing_notice(prompt: &str, keys: &str) -> String {
    let keys: Vec<String> = keys
        .chars()
        .map(|key| key.to_ascii_lowercase().to_string())
        .collect();
    let keys = match keys.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!(
        "\r\n(what you type is kept for your next line; to answer, stop typing, then type {keys} and Enter)\r\n{prompt}"
    )
}

fn same_mode(left: &Termios, right: &Termios) -> bool {
    left.local_flags == right.local_flags
        && left.input_flags == right.input_flags
        && left.control_chars == right.control_chars
}

/// How long one wait for a key lasts before the stop flag is checked again (a watch without its
/// wake pipe).
const POLL_EVERY_MS: u8 = 50;

/// What waiting for a key ended with.
#[derive(Debug, PartialEq, Eq)]
enum Wait {
    /// The input has bytes (or closed) to read.
    Input,
    /// The wake pipe's writer closed: the watch is ending.
    Woken,
    /// Nothing within the wait.
    Idle,
    /// Polling failed.
    Failed,
}

/// Waits up to `timeout` for `input` to be readable or `woken`'s writer to close.
fn wait_for_input(input: BorrowedFd<'_>, woken: Option<&OwnedFd>, timeout: PollTimeout) -> Wait {
    let mut fds = vec![PollFd::new(input, PollFlags::POLLIN)];
    fds.extend(woken.map(|fd| PollFd::new(fd.as_fd(), PollFlags::POLLIN)));
    match poll(&mut fds, timeout) {
        Ok(0) | Err(Errno::EINTR) => return Wait::Idle,
        Ok(_) => {}
        Err(_) => return Wait::Failed,
    }
    let ready = |fd: &PollFd<'_>| fd.revents().is_some_and(|events| !events.is_empty());
    if ready(&fds[0]) {
        Wait::Input
    } else if fds.get(1).is_some_and(ready) {
        Wait::Woken
    } else {
        Wait::Idle
    }
}

/// Reads stdin until stopped: woken at once when `woken`'s other end closes, else checking the
/// flag every 50 ms.
fn watch(
    stop: &AtomicBool,
    woken: Option<&OwnedFd>,
    interrupts: &Interrupts,
    typed: &Mutex<TypeAhead>,
    on_typed: &(dyn Fn(&str) + Send),
) {
    let stdin = std::io::stdin();
    let mut buffer = [0_u8; 256];
    while !stop.load(Ordering::SeqCst) {
        match wait_for_input(stdin.as_fd(), woken, PollTimeout::from(POLL_EVERY_MS)) {
            Wait::Input => {}
            Wait::Idle => continue,
            Wait::Woken | Wait::Failed => return,
        }
        let read = match nix::unistd::read(stdin.as_fd(), &mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let Ok(mut kept) = typed.lock() else {
            return;
        };
        // A terminal sends an escape sequence (an arrow key: ESC [ A) in one write, so a read of
        // just ESC is the Esc key (outside a paste). Esc means stop: the interrupt takes the
        // texts entered meanwhile back, unsent ([`TypeAhead::unsend`], as Pi 1.6.0 puts them
        // back in its editor).
        if buffer[..read] == [ESC] && !kept.is_pasting() {
            drop(kept);
            interrupts.interrupt();
        } else {
            kept.keep(&buffer[..read]);
            drop(kept);
        }
        if let Ok(kept) = typed.lock() {
            on_typed(&kept.shown());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_is_woken_at_once_when_its_wake_pipe_closes() {
        let (input, _keys) = std::io::pipe().unwrap();
        let (woken, wake) = std::io::pipe().unwrap();
        let input = OwnedFd::from(input);
        let woken = OwnedFd::from(woken);
        // Nothing typed, the pipe open: the wait runs out.
        assert_eq!(
            wait_for_input(input.as_fd(), Some(&woken), PollTimeout::from(1_u8)),
            Wait::Idle
        );
        // The writer closed: woken at once (not Idle when the 10 s run out).
        drop(wake);
        let long = PollTimeout::try_from(10_000_i32).unwrap();
        assert_eq!(
            wait_for_input(input.as_fd(), Some(&woken), long),
            Wait::Woken
        );
        // A key typed is read first.
        let (input, mut keys) = std::io::pipe().unwrap();
        std::io::Write::write_all(&mut keys, b"x").unwrap();
        assert_eq!(
            wait_for_input(OwnedFd::from(input).as_fd(), Some(&woken), long),
            Wait::Input
        );
    }
}
