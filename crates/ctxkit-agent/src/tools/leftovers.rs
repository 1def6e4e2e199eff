//! Temporary files that a killed `write` or `edit` left in the project (`.<name>.ctxkit-<pid>-<n>.tmp`
//! beside the target, see `atomic`): a write that fails removes its own, but one killed between
//! writing and renaming cannot. They are removed at the next start, once the process that made
//! them is gone.

use std::path::Path;

/// The most files and folders looked at (a start never walks a huge tree for long).
const MAX_VISITED: usize = 200_000;

/// Removes the temporary files of `write`/`edit` whose process no longer runs, under `project`
/// (git-ignored folders and `.git` left out); returns how many were removed.
pub fn remove_leftover_temporaries(project: &Path) -> usize {
    let walker = ignore::WalkBuilder::new(project)
        .hidden(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    let mut removed = 0;
    for entry in walker.take(MAX_VISITED).flatten() {
        let Some(pid) = leftover_pid(&entry.file_name().to_string_lossy()) else {
            continue;
        };
        let is_file = entry.file_type().is_some_and(|kind| kind.is_file());
        if is_file && !is_running(pid) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The process id in a temporary file's name `.<name>.ctxkit-<pid>-<n>.tmp`.
fn leftover_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, tail) = inner.rsplit_once(".ctxkit-")?;
    let (pid, count) = tail.split_once('-')?;
    count.parse::<u64>().ok()?;
    pid.parse().ok()
}

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
    fn names_of_temporaries_are_recognised() {
        assert_eq!(leftover_pid(".main.rs.ctxkit-4242-0.tmp"), Some(4242));
        assert_eq!(leftover_pid(".a.ctxkit-b.ctxkit-7-12.tmp"), Some(7));
        assert_eq!(leftover_pid("main.rs.ctxkit-4242-0.tmp"), None);
        assert_eq!(leftover_pid(".main.rs.ctxkit-x-0.tmp"), None);
        assert_eq!(leftover_pid(".main.rs.tmp"), None);
    }

    /// Issue 42: a write killed mid-rename left its 40 MB temporary file in the project. The next
    /// start removes it, and nothing else (a live process's temporary, a file of the same shape
    /// that is a folder, an ordinary dotfile).
    #[test]
    fn a_dead_writers_temporary_is_removed_at_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        std::fs::create_dir_all(project.join("src/deep")).unwrap();
        // A pid above the kernel's maximum never runs.
        let dead = project.join("src/deep/.big.bin.ctxkit-99999999-3.tmp");
        std::fs::write(&dead, vec![0u8; 40 << 20]).unwrap();
        let live = project.join(format!(".x.ctxkit-{}-0.tmp", std::process::id()));
        std::fs::write(&live, "mine").unwrap();
        let folder = project.join(".y.ctxkit-99999999-0.tmp");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(project.join(".env.tmp"), "keep").unwrap();
        assert_eq!(remove_leftover_temporaries(project), 1);
        assert!(!dead.exists());
        assert!(live.exists() && folder.exists() && project.join(".env.tmp").exists());
    }
}
