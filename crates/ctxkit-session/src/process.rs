//! Facts about processes that the leftovers of killed ones are judged by: whether a process id
//! still runs, and which user this process is.

use std::path::Path;

/// Whether a process with this id runs (a reused id keeps what it names: the safe side). A
/// process killed but not yet reaped by its parent (a zombie) has ended.
pub fn is_running(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let folder = Path::new("/proc").join(pid.to_string());
    match std::fs::read_to_string(folder.join("stat")) {
        Ok(stat) => !matches!(process_state(&stat), Some('Z' | 'X')),
        Err(_) => folder.exists(),
    }
}

/// The state letter of a `/proc/<pid>/stat` line: the first field after the command, which is in
/// parentheses and may itself hold spaces and parentheses.
fn process_state(stat: &str) -> Option<char> {
    let (_, after_command) = stat.rsplit_once(')')?;
    after_command.trim_start().chars().next()
}

/// The user id of this process (who owns the files it makes); `None` without `/proc`.
pub fn current_user_id() -> Option<u32> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self")
        .ok()
        .map(|metadata| metadata.uid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zombie_has_ended_and_a_live_process_runs() {
        assert_eq!(process_state("42 (a (b) c) Z 1 42 42"), Some('Z'));
        assert_eq!(process_state("42 (ctxkit) S 1"), Some('S'));
        assert_eq!(process_state("garbage"), None);
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(is_running(child.id()));
        child.kill().unwrap();
        // Killed, not yet waited for: a zombie.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while is_running(child.id()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!is_running(child.id()));
        child.wait().unwrap();
        assert!(!is_running(99_999_999));
    }

    #[test]
    fn this_process_has_a_user() {
        assert!(current_user_id().is_some());
    }
}
