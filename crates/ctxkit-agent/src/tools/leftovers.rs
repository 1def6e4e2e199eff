//! Temporary files that a killed `write` or `edit` left in the project (`.<name>.ctxkit-<pid>-<n>.tmp`
//! beside the target, see `atomic`): a write that fails removes its own, but one killed between
//! writing and renaming cannot. They are removed at the next start, once the process that made
//! them is gone.

use std::path::Path;

use ctxkit_jail::{is_running, temporary_owner};

/// The most files and folders looked at (a start never walks a huge tree for long).
const MAX_VISITED: usize = 200_000;

/// Removes the temporary files of `write`/`edit` whose process no longer runs, under `project`
/// (git-ignored folders and `.git` left out); returns how many were removed.
pub fn remove_leftover_temporaries(project: &Path) -> usize {
    let mut walker = ignore::WalkBuilder::new(project);
    walker.hidden(false).follow_links(false);
    super::walk::read_safe_ignore_files(&mut walker, project, |entry| entry.file_name() != ".git");
    let walker = walker.build();
    let mut removed = 0;
    for entry in walker.take(MAX_VISITED).flatten() {
        let Some(pid) = temporary_owner(&entry.file_name().to_string_lossy()) else {
            continue;
        };
        let is_file = entry.file_type().is_some_and(|kind| kind.is_file());
        if is_file && !is_running(pid) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

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
