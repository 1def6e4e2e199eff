//! Esc while the spinner runs (a model call, a compaction, a branch summary): the terminal is put
//! in non-canonical mode without echo (signals stay on, so Ctrl-C still works) and a thread watches
//! stdin. A lone Esc interrupts like Ctrl-C and takes back the lines entered meanwhile, unsent;
//! other keys typed meanwhile are kept ([`TypeAhead`]) instead of being lost. The terminal is restored when the spinner stops.

use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::termios::{
    LocalFlags, SetArg, SpecialCharacterIndices, Termios, tcgetattr, tcsetattr,
};

use super::interrupts::Interrupts;
use super::type_ahead::TypeAhead;

const ESC: u8 = 0x1b;

/// A running watch; dropping it stops the thread and restores the terminal.
#[derive(Debug)]
pub struct EscWatch {
    stop: Arc<AtomicBool>,
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
        quiet.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        quiet.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &quiet).ok()?;
        // A paste comes marked as one (bracketed), as at the input line: its line breaks are
        // text, not Enter.
        bracketed_paste(true);
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("ctxkit-esc".to_owned())
            .spawn({
                let stop = Arc::clone(&stop);
                move || watch(&stop, &interrupts, &typed, on_typed.as_ref())
            })
            .ok();
        Some(Self {
            stop,
            thread,
            saved,
            quiet,
        })
    }
}

impl Drop for EscWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
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
/// bytes that came in the same read after the answer (a fast typist's next keys, the rest of a
/// paste), for the next input line. `Err` when stdin is not a terminal.
pub fn read_key(prompt: &str, keys: &str) -> Result<(Option<char>, Vec<u8>), ()> {
    use std::io::Write;
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(());
    }
    let saved = tcgetattr(stdin.as_fd()).map_err(|_| ())?;
    let mut raw = saved.clone();
    raw.local_flags
        .remove(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG);
    raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
    raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw).map_err(|_| ())?;
    let mut stdout = std::io::stdout();
    let _ = write!(stdout, "{prompt}");
    let _ = stdout.flush();
    let mut buffer = [0_u8; 256];
    // Keys of typing that went on as the question appeared: kept for the next input line.
    let mut typed: Vec<u8> = Vec::new();
    let mut quiet_since = Instant::now();
    let mut told = false;
    let (answer, after) = loop {
        let read = match nix::unistd::read(stdin.as_fd(), &mut buffer) {
            Ok(0) => break (None, typed),
            Ok(read) => read,
            Err(Errno::EINTR) => continue,
            Err(_) => break (None, typed),
        };
        let now = Instant::now();
        let paused = now.duration_since(quiet_since) >= ANSWER_PAUSE;
        quiet_since = now;
        match first_key(&buffer[..read], keys) {
            KeyRead::Answer(key, after) if paused => {
                typed.extend_from_slice(after);
                break (Some(key), typed);
            }
            KeyRead::Stopped => break (None, typed),
            KeyRead::Answer(..) | KeyRead::Nothing => {
                typed.extend_from_slice(&buffer[..read]);
                if !told && buffer[..read].iter().any(u8::is_ascii_graphic) {
                    told = true;
                    let _ = write!(
                        stdout,
                        "\r\n(what you type is kept for your next line; stop typing, then answer)\r\n{prompt}"
                    );
                    let _ = stdout.flush();
                }
            }
        }
    };
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
    Ok((answer, after))
}

/// A key read sooner than this after the question appeared, or after the key before it, is
/// typing that went on, not an answer (QA: "please keep main", typed on as a `bash` question
/// appeared, answered it `a`lways with the `a` of "main", and later commands ran unasked).
const ANSWER_PAUSE: Duration = Duration::from_millis(250);

/// What one read at a one-key question holds.
#[derive(Debug, PartialEq, Eq)]
enum KeyRead<'a> {
    /// Its first key is one of the keys (lowercased): the answer, and the bytes after it.
    Answer(char, &'a [u8]),
    /// Ctrl-C or Ctrl-D first, or a lone Esc.
    Stopped,
    /// Its first key answers nothing (another key, an arrow's escape sequence): the question
    /// stays. A paste that starts with other text is not searched for an answer: `any text`
    /// must not answer `a`.
    Nothing,
}

/// The answer in one read at a one-key question: its first key. Before, a read of more than one
/// byte (a fast typist's `y` and the next key, a paste) was dropped whole, and the answer with it.
fn first_key<'a>(bytes: &'a [u8], keys: &str) -> KeyRead<'a> {
    match bytes {
        [0x03 | 0x04, ..] | [ESC] => KeyRead::Stopped,
        [byte, after @ ..] => {
            let key = char::from(*byte).to_ascii_lowercase();
            if byte.is_ascii() && !key.is_ascii_control() && keys.contains(key) {
                KeyRead::Answer(key, after)
            } else {
                KeyRead::Nothing
            }
        }
        [] => KeyRead::Nothing,
    }
}

fn same_mode(left: &Termios, right: &Termios) -> bool {
    left.local_flags == right.local_flags
        && left.input_flags == right.input_flags
        && left.control_chars == right.control_chars
}

/// Reads stdin until stopped, checking the flag every 50 ms.
fn watch(
    stop: &AtomicBool,
    interrupts: &Interrupts,
    typed: &Mutex<TypeAhead>,
    on_typed: &(dyn Fn(&str) + Send),
) {
    let stdin = std::io::stdin();
    let mut buffer = [0_u8; 256];
    while !stop.load(Ordering::SeqCst) {
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(50_u8)) {
            Ok(0) | Err(Errno::EINTR) => continue,
            Ok(_) => {}
            Err(_) => return,
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
    fn the_first_key_of_a_read_answers_and_the_rest_is_kept() {
        assert_eq!(first_key(b"y", "yna"), KeyRead::Answer('y', b""));
        assert_eq!(first_key(b"Y", "yna"), KeyRead::Answer('y', b""));
        // A fast typist's answer and next keys, or a paste, come in one read.
        assert_eq!(
            first_key(b"ynext prompt", "yna"),
            KeyRead::Answer('y', b"next prompt")
        );
        assert_eq!(first_key(b"nn", "yna"), KeyRead::Answer('n', b"n"));
        assert_eq!(first_key(b"\x03", "yna"), KeyRead::Stopped);
        assert_eq!(first_key(b"\x04y", "yna"), KeyRead::Stopped);
        assert_eq!(first_key(b"\x1b", "yna"), KeyRead::Stopped);
        // An arrow key, another key first, a paste that only holds an answer's letter later.
        assert_eq!(first_key(b"\x1b[A", "yna"), KeyRead::Nothing);
        assert_eq!(first_key(b"x", "yna"), KeyRead::Nothing);
        assert_eq!(first_key(b"my text", "yna"), KeyRead::Nothing);
        assert_eq!(first_key("é".as_bytes(), "yna"), KeyRead::Nothing);
        assert_eq!(first_key(b"", "yna"), KeyRead::Nothing);
    }
}
