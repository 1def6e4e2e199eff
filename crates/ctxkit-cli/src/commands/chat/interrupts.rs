//! Ctrl-C while the agent works: cancels a running compaction or branch summary (nothing is
//! written; a run goes on without it), else the running turn (the model request or tool in
//! flight). At the input line the
//! line editor reads Ctrl-C itself.

use std::sync::{Arc, Mutex};

use ctxkit_engine::Engine;

/// What Ctrl-C stops: the current engine's compaction or turn. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct Interrupts(Arc<Mutex<Option<Engine>>>);

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
        if let Ok(mut target) = self.0.lock() {
            *target = Some(engine.clone());
        }
    }

    /// Stops what is running: a compaction first, else the turn. A second interrupt while the
    /// cancelled compaction ends stops the turn: the run would go on without the compaction.
    pub fn interrupt(&self) {
        let Ok(target) = self.0.lock() else { return };
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
}

/// Ends the chat on SIGHUP (its terminal closed) or SIGTERM as those signals would, after killing
/// the commands running now (`ctxkit_agent::tools::stop_running_commands`): each runs in a
/// process group of its own, which the hangup does not reach, and a command left running would
/// go on, orphaned, after the chat. Must run inside the runtime.
/// The terminal is left as it was found: the line editor and the Esc watch put it in raw mode,
/// and a chat ended by SIGTERM at the input line left the shell without echo.
pub fn end_on_hangup_or_terminate() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangup = signal(SignalKind::hangup())?;
    let mut terminate = signal(SignalKind::terminate())?;
    // Called before the first input line: the terminal's mode now is the shell's.
    let terminal = ShellTerminal::save();
    tokio::spawn(async move {
        let number = tokio::select! {
            _ = hangup.recv() => SignalKind::hangup(),
            _ = terminate.recv() => SignalKind::terminate(),
        }
        .as_raw_value();
        ctxkit_agent::tools::stop_running_commands();
        terminal.restore();
        std::process::exit(128 + number);
    });
    Ok(())
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
    /// bracketed paste and synchronized output; the cursor is shown.
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
            let _ = nix::unistd::write(stdout.as_fd(), b"\x1b[?2004l\x1b[?2026l\x1b[?25h\r\n");
        }
    }
}
