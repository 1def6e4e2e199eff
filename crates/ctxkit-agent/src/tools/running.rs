//! The commands running now (`bash`, the user's `!cmd`), by process group, so that a chat ended by
//! its terminal closing (SIGHUP) or by SIGTERM stops them as Ctrl-C does. A command runs in a
//! session of its own ([`own_session`]: without the terminal, so the terminal's Ctrl-C reaches
//! ctxkit, not the command, and the command cannot reach the terminal), and the
//! kernel sends the hangup to the terminal's foreground group only: without this, a `sleep 600`
//! or a build went on running, orphaned, after the chat was gone.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

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

/// A command running `program` in a session of its own, so without the chat's terminal (its
/// process id leads its session and its group, as [`Running`] expects). Pi 1.6 starts its commands
/// `detached` alike. A command that kept the terminal could type into the chat (`TIOCSTI`: a `!…`
/// line, a `y` to the next question), make itself the terminal's foreground group and read what
/// the user typed, or reset the terminal under the chat (QA 2026-12-07). Started through
/// util-linux's `setsid` (ctxkit uses no `unsafe` for `setsid(2)`, as it runs `kill` to signal a
/// group); where none is installed, in a process group of its own as before.
pub(crate) fn own_session(program: &Path) -> Command {
    match setsid_program() {
        Some(setsid) => {
            let mut command = Command::new(setsid);
            command.arg(program);
            command
        }
        None => {
            let mut command = Command::new(program);
            command.process_group(0);
            command
        }
    }
}

/// util-linux's (or BusyBox's) `setsid` at its usual places, else on `PATH` (NixOS keeps it in
/// the store), looked for once; without one, said once in the log. A process it starts that
/// does not lead a process group (a freshly spawned one does not) calls `setsid(2)` and runs the
/// program in its place, under the same process id.
fn setsid_program() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let found = ["/usr/bin/setsid", "/bin/setsid", "/usr/local/bin/setsid"]
                .into_iter()
                .map(PathBuf::from)
                .find(|path| path.is_file())
                .or_else(|| super::shell::on_path("setsid"));
            if found.is_none() {
                tracing::warn!(
                    "no `setsid` found: commands run in a process group of their own and keep \
                     the terminal (install util-linux)"
                );
            }
            found
        })
        .as_deref()
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
