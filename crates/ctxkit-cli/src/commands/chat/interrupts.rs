//! Ctrl-C while the agent works: cancels a running compaction or branch summary (nothing is
//! written; a run goes on without it), else the running turn (the model request or tool in
//! flight). At the input line the line editor reads Ctrl-C itself. SIGHUP (the terminal closed)
//! and SIGTERM end the chat, after interrupting the turn at work the same way, so what it did
//! so far is recorded as an interrupted turn's is.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ctxkit_engine::{Engine, InterruptCause};

/// How long a chat ended by SIGHUP or SIGTERM waits for the interrupted turn to be recorded (the
/// partial reply, a command's output so far) before it ends anyway: a stuck write must not keep
/// a closed terminal's process alive.
const RECORD_GRACE: Duration = Duration::from_secs(3);

/// What Ctrl-C stops: the current engine's compaction or turn. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct Interrupts {
    engine: Arc<Mutex<Option<Engine>>>,
    work: Arc<Work>,
    before: Arc<Mutex<Option<BeforeInterrupt>>>,
    /// How many times the user interrupted so far (Ctrl-C, Esc), whatever it stopped.
    count: Arc<AtomicU64>,
}

/// What is done first when the user interrupts (Esc, Ctrl-C): the lines typed meanwhile are
/// taken back, so the stopped turn does not send them.
struct BeforeInterrupt(Box<dyn Fn() + Send>);

impl std::fmt::Debug for BeforeInterrupt {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("BeforeInterrupt")
    }
}

/// Whether the chat waits at its input line (nothing of a turn left to record) and whether a
/// signal is ending it.
#[derive(Debug)]
struct Work {
    at_input_line: tokio::sync::watch::Sender<bool>,
    ending: AtomicBool,
}

impl Default for Work {
    fn default() -> Self {
        Self {
            at_input_line: tokio::sync::watch::Sender::new(true),
            ending: AtomicBool::new(false),
        }
    }
}

impl Interrupts {
    /// Listens for Ctrl-C for the rest of the process (the terminal's SIGINT no longer kills it).
    pub fn listen(&self) -> std::io::Result<()> {
        let mut signals =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let targets = self.clone();
        tokio::spawn(async move {
            while signals.recv().await.is_some() {
                targets.interrupt();
            }
        });
        Ok(())
    }

    pub fn set_engine(&self, engine: &Engine) {
        if let Ok(mut target) = self.engine.lock() {
            *target = Some(engine.clone());
        }
    }

    /// Runs `action` first each time the user interrupts ([`Interrupts::interrupt`]).
    pub fn before_each(&self, action: impl Fn() + Send + 'static) {
        if let Ok(mut before) = self.before.lock() {
            *before = Some(BeforeInterrupt(Box::new(action)));
        }
    }

    /// Stops what is running: a compaction first, else the turn. A second interrupt while the
    /// cancelled compaction ends stops the turn: the run would go on without the compaction.
    /// What [`Interrupts::before_each`] set is done first.
    pub fn interrupt(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        if let Ok(before) = self.before.lock()
            && let Some(action) = before.as_ref()
        {
            (action.0)();
        }
        let Ok(target) = self.engine.lock() else {
            return;
        };
        let Some(engine) = target.as_ref() else {
            return;
        };
        if engine.is_compacting() && !engine.is_cancelling() {
            engine.cancel_compaction();
            engine.cancel_branch_summary();
        } else {
            engine.interrupt_turn();
        }
    }

    /// How many times the user interrupted so far: print mode compares it before and after a
    /// prompt to tell a prompt the user stopped from one that could not go out.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Stops everything running, a compaction and the turn alike, because the chat is ending.
    fn interrupt_everything(&self) {
        let Ok(target) = self.engine.lock() else {
            return;
        };
        let Some(engine) = target.as_ref() else {
            return;
        };
        engine.cancel_compaction();
        engine.cancel_branch_summary();
        engine.interrupt_turn_because(InterruptCause::ChatClosed);
    }

    /// The input loop waits for a line now (print mode: between its prompts, after the last):
    /// a signal ending the chat has nothing to wait for.
    /// When a signal is ending the chat, this never returns (the signal's task ends the process,
    /// the input line is not drawn on a terminal that may be gone).
    pub fn at_input_line(&self) {
        self.work.at_input_line.send_replace(true);
        while self.work.ending.load(Ordering::SeqCst) {
            std::thread::park();
        }
    }

    /// The input loop took a line and works on it (a prompt, a command; print mode: one of its
    /// prompts): a signal ending the chat interrupts it and lets it record what it was doing first.
    pub fn left_input_line(&self) {
        self.work.at_input_line.send_replace(false);
    }

    /// Ends the work in hand because a signal ends the chat: everything running is interrupted
    /// (again every 100 ms, so a turn that starts after the first interrupt stops too) until the
    /// input loop is back at its input line, that is, the interrupted turn is recorded, or
    /// [`RECORD_GRACE`] has passed.
    async fn finish_for_signal(&self) {
        self.work.ending.store(true, Ordering::SeqCst);
        let mut at_input_line = self.work.at_input_line.subscribe();
        let deadline = tokio::time::Instant::now() + RECORD_GRACE;
        // A full-screen list open waits for the user as the input line does: nothing to record.
        while !*at_input_line.borrow_and_update()
            && !super::picker::is_open()
            && tokio::time::Instant::now() < deadline
        {
            self.interrupt_everything();
            let pause = tokio::time::sleep(Duration::from_millis(100));
            tokio::select! {
                _ = pause => {}
                _ = at_input_line.changed() => {}
            }
        }
    }

    /// Ends the chat on SIGHUP (its terminal closed) or SIGTERM as those signals would, after
    /// the turn at work was interrupted and recorded as Ctrl-C records it (the partial reply
    /// marked aborted, a command's output so far with a note that it was cancelled), within
    /// [`RECORD_GRACE`]. Then the commands still running are killed
    /// (`ctxkit_agent::tools::stop_running_commands`): each runs in a process group of its own,
    /// which the hangup does not reach, and a command left running would go on, orphaned, after
    /// the chat. Must run inside the runtime.
    /// The terminal is left as it was found: the line editor and the Esc watch put it in raw
    /// mode, and a chat ended by SIGTERM at the input line left the shell without echo.
    pub fn end_on_hangup_or_terminate(&self) -> std::io::Result<()> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangup = signal(SignalKind::hangup())?;
        let mut terminate = signal(SignalKind::terminate())?;
        // Called before the first input line: the terminal's mode now is the shell's.
        let terminal = ShellTerminal::save();
        let interrupts = self.clone();
        tokio::spawn(async move {
            let number = tokio::select! {
                _ = hangup.recv() => SignalKind::hangup(),
                _ = terminate.recv() => SignalKind::terminate(),
            }
            .as_raw_value();
            // Whatever happens to the runtime from now on, the process ends.
            let status = 128 + number;
            std::thread::spawn(move || {
                std::thread::sleep(RECORD_GRACE + Duration::from_secs(2));
                std::process::exit(status);
            });
            interrupts.finish_for_signal().await;
            ctxkit_agent::tools::stop_running_commands();
            terminal.restore();
            std::process::exit(status);
        });
        Ok(())
    }
}

/// The terminal's mode as the chat found it, when its input is a terminal.
struct ShellTerminal {
    mode: Option<nix::sys::termios::Termios>,
}

impl ShellTerminal {
    fn save() -> Self {
        use std::io::IsTerminal;
        let stdin = std::io::stdin();
        let mode = if stdin.is_terminal() {
            nix::sys::termios::tcgetattr(&stdin).ok()
        } else {
            None
        };
        Self { mode }
    }

    /// Puts the saved mode back (echo, line editing) and ends what the input line turned on:
    /// bracketed paste and synchronized output; the cursor is shown, and a full-screen list's
    /// alternate screen is left.
    fn restore(&self) {
        use std::io::IsTerminal;
        use std::os::fd::AsFd;
        let Some(mode) = &self.mode else { return };
        let stdin = std::io::stdin();
        let _ = nix::sys::termios::tcsetattr(&stdin, nix::sys::termios::SetArg::TCSANOW, mode);
        let stdout = std::io::stdout();
        if stdout.is_terminal() {
            // Straight to the descriptor: the thread drawing the screen may hold stdout's lock,
            // and the chat is ending whatever it was drawing.
            let _ = nix::unistd::write(stdout.as_fd(), &restore_sequence(super::picker::is_open()));
        }
    }
}

/// What ends the chat's terminal modes: bracketed paste and synchronized output off, the cursor
/// shown, and the alternate screen left when a full-screen list is open (`alternate`). Only then:
/// leaving an alternate screen never entered moves the cursor on some terminals.
fn restore_sequence(alternate: bool) -> Vec<u8> {
    let mut sequence = Vec::new();
    if alternate {
        sequence.extend_from_slice(b"\x1b[?1049l");
    }
    sequence.extend_from_slice(b"\x1b[?2004l\x1b[?2026l\x1b[?25h\r\n");
    sequence
}

#[cfg(test)]
mod terminal_tests {
    use super::*;

    #[test]
    fn a_signal_with_a_list_open_leaves_the_alternate_screen() {
        // QA r108: SIGTERM with /settings open left the shell on the alternate screen.
        assert!(restore_sequence(true).starts_with(b"\x1b[?1049l"));
        assert!(
            !restore_sequence(false)
                .windows(8)
                .any(|part| part == b"\x1b[?1049")
        );
        assert!(restore_sequence(false).ends_with(b"\x1b[?25h\r\n"));
    }
}
