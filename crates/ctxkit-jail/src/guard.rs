//! Guarded places: folders of the root a write goes to only with the user's approval (`.git`, whose
//! config and hooks run at the user's next `git status`; ctxkit's project folder; hook scripts).
//! The caller judges a path by its name before it asks; the jail judges again the folder it has
//! opened for the write, by where that folder really is, so a folder swapped for a symlink into
//! `.git` between the judgement and the write puts nothing there.

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use crate::{Jail, JailError, places};

impl Jail {
    /// Refuses writes ([`JailError::Guarded`]) to `places` and beneath any folder of `project`
    /// named one of `names` (compared without regard to ASCII case). `project` may be the root or
    /// lie beneath it (a jail on `/` for a write the user approved outside the project).
    pub fn guard_writes(
        &mut self,
        project: &Path,
        places: &[PathBuf],
        names: &'static [&'static str],
    ) {
        self.guarded_base = project.to_owned();
        self.guarded = places.to_vec();
        self.guarded_names = names;
    }

    /// Refuses the write of `name` in `dir` (opened for `relative`'s parent) when it lands in a
    /// guarded place.
    pub(crate) fn check_guarded(
        &self,
        dir: &Dir,
        relative: &Path,
        name: &Path,
    ) -> Result<(), JailError> {
        if self.guarded.is_empty() && self.guarded_names.is_empty() {
            return Ok(());
        }
        let folder = places::real_path(dir)
            .unwrap_or_else(|| self.root.join(relative.parent().unwrap_or(Path::new(""))));
        let target = folder.join(name);
        let named = target.strip_prefix(&self.guarded_base).is_ok_and(|inside| {
            inside.components().any(|component| {
                let component = component.as_os_str().as_encoded_bytes();
                self.guarded_names
                    .iter()
                    .any(|guarded| component.eq_ignore_ascii_case(guarded.as_bytes()))
            })
        });
        if named
            || self.guarded.iter().any(|place| target.starts_with(place))
            || (!self.guarded_names.is_empty()
                && completes_git_directory(&self.guarded_base, &target))
        {
            return Err(JailError::Guarded { path: target });
        }
        Ok(())
    }
}

/// Whether writing `target` (inside `project`) makes or changes a git directory not named `.git`:
/// a folder that holds `HEAD`, `objects/` and `refs/` once the write is done. git takes such a
/// folder for a repository (an embedded bare one) before it looks for a `.git` above it, and the
/// `config` there may name a command (`core.fsmonitor`) that the user's next `git status` in it
/// runs: a sweep wrote `src/HEAD`, `src/config`, `src/objects/` and `src/refs/` without a question,
/// and `git status` in `src` ran the model's command. Names are compared without regard to case.
pub fn completes_git_directory(project: &Path, target: &Path) -> bool {
    let Ok(inside) = target.strip_prefix(project) else {
        return false;
    };
    let parts: Vec<&std::ffi::OsStr> = inside.iter().collect();
    let mut folder = project.to_path_buf();
    for (depth, first) in parts.iter().enumerate() {
        let holds = |name: &str, is_dir: bool| {
            first
                .as_encoded_bytes()
                .eq_ignore_ascii_case(name.as_bytes())
                || std::fs::metadata(folder.join(name))
                    .is_ok_and(|metadata| !is_dir || metadata.is_dir())
        };
        if holds("HEAD", false) && holds("objects", true) && holds("refs", true) {
            return true;
        }
        if depth + 1 < parts.len() {
            folder.push(first);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each of the three writes that complete the layout is judged so when the other two parts
    /// are there; a write into a complete one is too; a lone `HEAD` or `config` is not.
    #[test]
    fn the_write_that_completes_a_git_directory_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        let src = project.join("src");
        std::fs::create_dir_all(&src).unwrap();
        assert!(!completes_git_directory(project, &src.join("HEAD")));
        assert!(!completes_git_directory(project, &src.join("config")));
        std::fs::create_dir_all(src.join("objects")).unwrap();
        assert!(!completes_git_directory(project, &src.join("HEAD")));
        std::fs::create_dir_all(src.join("refs/heads")).unwrap();
        assert!(completes_git_directory(project, &src.join("HEAD")));
        assert!(completes_git_directory(project, &src.join("head")));
        std::fs::write(src.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(completes_git_directory(project, &src.join("config")));
        assert!(completes_git_directory(
            project,
            &src.join("refs/heads/main")
        ));
        std::fs::remove_dir_all(src.join("objects")).unwrap();
        assert!(completes_git_directory(
            project,
            &src.join("objects/info/.keep")
        ));
        assert!(!completes_git_directory(project, &src.join("main.rs")));
        assert!(!completes_git_directory(
            project,
            &project.join("README.md")
        ));
    }
}
