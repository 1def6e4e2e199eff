//! The commands running now (`bash`, the user's `!cmd`), by process group, so that a chat ended by
//! its terminal closing (SIGHUP) or by SIGTERM stops them as Ctrl-C does. A command runs in a
//! process group of its own (so the terminal's Ctrl-C reaches ctxkit, not the command), and the
//! kernel sends the hangup to the terminal's foreground group only: without this, a `sleep 600`
//! or a build went on running, orphaned, after the chat was gone.

use std::process::{Command, Stdio};
use std::sync::Mutex;

/// The process groups of the commands running now.
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// A command's process group, known as running while this lives.
#[derive(Debug)]
pub(crate) struct Running(u32);

impl Running {
    /// Records `group` (the command's process id, which leads its group) as running.
    pub(crate) fn register(group: u32) -> Self {
        if let Ok(mut running) = RUNNING.lock() {
            running.push(group);
        }
        Self(group)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(mut running) = RUNNING.lock() {
            running.retain(|group| *group != self.0);
        }
    }
}

/// Kills the process group of every command running now (each with everything it started, as
/// a timeout does); how many groups there were. For a process about to end on a signal.
pub fn stop_running_commands() -> usize {
    let groups = RUNNING
        .lock()
        .map(|running| running.clone())
        .unwrap_or_default();
    for group in &groups {
        kill_process_group(*group);
    }
    groups.len()
}

/// Sends SIGKILL to the process group `group`; whether `kill` said it did.
pub(crate) fn kill_process_group(group: u32) -> bool {
    Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
