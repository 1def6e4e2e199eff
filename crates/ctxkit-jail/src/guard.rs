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
        let named = names_guarded_place(&self.guarded_base, &target, self.guarded_names);
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

/// Whether `target` lies in a place `names` guards: a component of its path beneath `project`
/// is one of them, or, for a target outside the project, a component of its whole path (a write
/// the user let the model make outside the project still asks before `../lib/.git/hooks`: QA
/// 2026-12-07, an "always" for a folder outside covered its repository's hooks).
pub fn names_guarded_place(project: &Path, target: &Path, names: &[&str]) -> bool {
    target
        .strip_prefix(project)
        .unwrap_or(target)
        .components()
        .any(|component| is_guarded_name(component.as_os_str(), names))
}

/// Whether a path's component is one of `names`, compared without regard to ASCII case (on a
/// case-insensitive file system `.GIT/hooks` is `.git/hooks`). A name starting with `*` stands
/// for every component ending with the rest (`*.code-workspace`).
pub fn is_guarded_name(component: &std::ffi::OsStr, names: &[&str]) -> bool {
    let component = component.as_encoded_bytes();
    names.iter().any(|name| match name.strip_prefix('*') {
        Some(suffix) => {
            component.len() >= suffix.len()
                && component[component.len() - suffix.len()..]
                    .eq_ignore_ascii_case(suffix.as_bytes())
        }
        None => component.eq_ignore_ascii_case(name.as_bytes()),
    })
}

/// Whether writing `target` (inside `project`) makes or changes a git directory not named `.git`,
/// judged as git finds one. git takes a folder for a repository before it looks for a `.git`
/// above it when the folder holds `HEAD` and either `objects` and `refs` (an embedded bare
/// repository; git asks only that they can be entered, so a `refs` file counts) or a `commondir`
/// file naming the folder that holds them (git's layout of a linked worktree). The `config` (and
/// `hooks/`) of that common folder may name a command (`core.pager`, `core.fsmonitor`) that the
/// user's next `git status` or `git branch` in the repository runs. So a write is judged so when,
/// once it is done, a folder on its way holds:
///
/// - `HEAD`, `objects` and `refs` (a sweep wrote `src/HEAD`, `src/config`, `src/objects/` and
///   `src/refs/` without a question, and `git status` in `src` ran the model's command);
/// - `HEAD` and `commondir`, wherever `commondir` points (QA r103: `cd/objects/`, `cd/refs/`,
///   `cd/config`, then `src/commondir` naming `../cd` and `src/HEAD`);
/// - `objects`, `refs` and `config` or `hooks`: what such a `commondir` names, in whatever order
///   its parts are written.
///
/// Names are compared without regard to case.
pub fn completes_git_directory(project: &Path, target: &Path) -> bool {
    let Ok(inside) = target.strip_prefix(project) else {
        return false;
    };
    let parts: Vec<&std::ffi::OsStr> = inside.iter().collect();
    let mut folder = project.to_path_buf();
    for (depth, first) in parts.iter().enumerate() {
        let holds = |name: &str| {
            first
                .as_encoded_bytes()
                .eq_ignore_ascii_case(name.as_bytes())
                || std::fs::symlink_metadata(folder.join(name)).is_ok()
        };
        let store = holds("objects") && holds("refs");
        if (holds("HEAD") && (store || holds("commondir")))
            || (store && (holds("config") || holds("hooks")))
        {
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

    /// A guarded name matches in any case; one starting with `*` matches a suffix.
    #[test]
    fn a_guarded_name_matches_in_any_case_and_a_star_matches_a_suffix() {
        let names = &[".git", "*.code-workspace"];
        let matches = |name: &str| is_guarded_name(std::ffi::OsStr::new(name), names);
        assert!(matches(".GIT"));
        assert!(matches("team.Code-Workspace"));
        assert!(matches(".code-workspace"));
        assert!(!matches(".github"));
        assert!(!matches("code-workspace"));
        assert!(!matches("team.code-workspace.bak"));
    }

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

    /// QA r103 (adversary), D1: git's second layout. A folder holding `HEAD` and a `commondir`
    /// is a repository whatever `commondir` names, and the folder it names (`objects`, `refs`
    /// and a `config` or `hooks`) is judged so too, in any order of writes; a `refs` that is a
    /// file counts, as git only asks to enter it.
    #[test]
    fn the_write_that_completes_a_worktree_layout_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        let (src, common) = (project.join("src"), project.join("cd"));
        std::fs::create_dir_all(&src).unwrap();
        std::fs::create_dir_all(&common).unwrap();
        // The common folder: objects and refs alone are no repository; its config is.
        assert!(!completes_git_directory(
            project,
            &common.join("objects/info/keep")
        ));
        std::fs::create_dir_all(common.join("objects/info")).unwrap();
        assert!(!completes_git_directory(
            project,
            &common.join("refs/heads/keep")
        ));
        std::fs::create_dir_all(common.join("refs/heads")).unwrap();
        assert!(completes_git_directory(project, &common.join("config")));
        assert!(completes_git_directory(
            project,
            &common.join("hooks/pre-commit")
        ));
        // Its config written first, the folder completing it is found all the same.
        std::fs::remove_dir_all(common.join("refs")).unwrap();
        std::fs::write(common.join("config"), "[core]\n").unwrap();
        assert!(completes_git_directory(
            project,
            &common.join("refs/heads/keep")
        ));
        // The worktree's side: `commondir` beside `HEAD`, in either order.
        assert!(!completes_git_directory(project, &src.join("commondir")));
        std::fs::write(src.join("commondir"), "../cd\n").unwrap();
        assert!(completes_git_directory(project, &src.join("HEAD")));
        std::fs::remove_file(src.join("commondir")).unwrap();
        std::fs::write(src.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(completes_git_directory(project, &src.join("commondir")));
        // `refs` as a file: git enters it by its mode alone.
        let bare = project.join("bare");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::write(bare.join("refs"), "").unwrap();
        assert!(completes_git_directory(project, &bare.join("HEAD")));
        assert!(!completes_git_directory(
            project,
            &project.join("docs/config")
        ));
    }
}
