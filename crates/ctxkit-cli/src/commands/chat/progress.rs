//! `terminal.showTerminalProgress`: while the agent works (a prompt's run, its compactions, a
//! `/compact`), the terminal is told so with OSC 9;4 (an indeterminate progress state that
//! terminals such as Windows Terminal, Ghostty and iTerm2 show on the tab or the dock), as Pi
//! does. The state is sent again every second, since some terminals let it lapse, and cleared when
//! the work ends, however it ends.

use std::io::{IsTerminal as _, Write as _};
use std::time::Duration;

/// The indeterminate progress state.
const ACTIVE: &str = "\x1b]9;4;3\x07";
/// No progress.
const CLEAR: &str = "\x1b]9;4;0\x07";
/// How often the state is sent again while the work lasts.
const KEEP_ALIVE: Duration = Duration::from_secs(1);

/// The progress state, shown while this lives; nothing when the setting is off or stderr is not a
/// terminal. The sequences go to stderr, where the spinner draws: the chat's stdout is held by the
/// thread that prints replies, and a sequence that moves no cursor may go between two lines of it.
#[derive(Debug)]
pub struct Progress {
    keep_alive: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    /// Starts showing the state when `enabled` (the setting) and stderr is a terminal.
    pub fn start(enabled: bool) -> Self {
        Self::start_on(enabled && std::io::stderr().is_terminal(), send)
    }

    /// Starts showing the state through `send` when `show`.
    fn start_on(show: bool, send: fn(&str)) -> Self {
        if !show {
            return Self { keep_alive: None };
        }
        send(ACTIVE);
        let keep_alive = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(KEEP_ALIVE);
            // The first tick is at once, and the state was just sent.
            ticks.tick().await;
            loop {
                ticks.tick().await;
                send(ACTIVE);
            }
        });
        Self {
            keep_alive: Some(keep_alive),
        }
    }

    fn stop_with(&mut self, send: fn(&str)) {
        if let Some(keep_alive) = self.keep_alive.take() {
            keep_alive.abort();
            send(CLEAR);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop_with(send);
    }
}

fn send(sequence: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(sequence.as_bytes());
    let _ = stderr.flush();
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    static SENT: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn record(sequence: &str) {
        SENT.lock().unwrap().push(sequence.to_owned());
    }

    /// Off, nothing is sent; on, the state is set at once, sent again each second while the work
    /// lasts, and cleared once when it ends.
    #[tokio::test(start_paused = true)]
    async fn the_state_is_kept_while_the_work_lasts_and_cleared_after() {
        let mut off = Progress::start_on(false, record);
        off.stop_with(record);
        assert!(SENT.lock().unwrap().is_empty());

        let mut on = Progress::start_on(true, record);
        assert_eq!(*SENT.lock().unwrap(), [ACTIVE]);
        tokio::time::sleep(Duration::from_millis(2_500)).await;
        assert_eq!(*SENT.lock().unwrap(), [ACTIVE, ACTIVE, ACTIVE]);
        on.stop_with(record);
        on.stop_with(record);
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(*SENT.lock().unwrap(), [ACTIVE, ACTIVE, ACTIVE, CLEAR]);
    }
}
