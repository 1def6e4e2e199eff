//! Which writes in the project are guarded ([`Workspace::is_guarded`]), and what an "always" to
//! one of them covers ([`Workspace::guarded_scope`], [`Workspace::guarded_scope_covers`]).

use std::path::{Path, PathBuf};

use super::{GUARDED_NAMES, Workspace};

impl Workspace {
    /// Whether a write to `resolved` (named `lexical`) touches a guarded place of the project, or,
    /// outside it, a place of a guarded name (`../lib/.git/hooks`).
    /// A folder of [`GUARDED_NAMES`] is guarded at any depth: a `src/.git` the model plants is a
    /// repository whose `core.fsmonitor` runs at the user's next `git status` in `src` (and
    /// editors look for repositories in subfolders), and a subfolder's `.ctxkit` is a project's
    /// settings when ctxkit starts there. Names are compared without regard to case: on a
    /// case-insensitive file system (WSL's `/mnt/c`, exFAT) `.GIT/hooks` is `.git/hooks`. A write
    /// that completes or changes a git directory by another name (`HEAD`, `objects/`, `refs/` in
    /// one folder) is guarded too ([`ctxkit_jail::completes_git_directory`]).
    pub(super) fn is_guarded(&self, resolved: &Path, lexical: &Path) -> bool {
        let named = if resolved.starts_with(&self.root) {
            [
                resolved.strip_prefix(&self.root),
                lexical.strip_prefix(&self.root),
                lexical.strip_prefix(&self.given_root),
            ]
            .into_iter()
            .filter_map(Result::ok)
            .any(|inside| {
                inside
                    .components()
                    .any(|component| is_guarded_name(component.as_os_str()))
            })
        } else {
            ctxkit_jail::names_guarded_place(&self.root, resolved, GUARDED_NAMES)
                || ctxkit_jail::names_guarded_place(&self.given_root, lexical, GUARDED_NAMES)
        };
        named
            || self
                .guarded
                .iter()
                .any(|place| resolved.starts_with(place) || lexical.starts_with(place))
            || ctxkit_jail::completes_git_directory(&self.root, resolved)
    }

    /// What the user's "always" to a guarded write of `resolved` covers: the folder holding the
    /// file when that folder lies in the guarded place holding it (`.ctxkit/prompts` for
    /// `.ctxkit/prompts/review.md`, `.git/hooks` for a hook), else the file alone (a git config
    /// file, a program `core.fsmonitor` names, the session file, a hook script). The
    /// narrowest guarded place holding the file counts, and the scope is never the project
    /// itself. QA: "always" to a prompt template let the model write `.git/hooks/pre-commit` and
    /// a `core.fsmonitor` in `.git/config` without a question.
    pub(crate) fn guarded_scope(&self, resolved: &Path) -> PathBuf {
        let folder = resolved.parent().unwrap_or(resolved);
        let mut places: Vec<PathBuf> = Vec::new();
        // Outside the project (a write the user let the model make there), its whole path.
        let (mut place, inside) = match resolved.strip_prefix(&self.root) {
            Ok(inside) => (self.root.clone(), inside),
            Err(_) => (PathBuf::new(), resolved),
        };
        for component in inside.components() {
            place.push(component);
            if is_guarded_name(component.as_os_str()) {
                places.push(place.clone());
            }
        }
        places.extend(
            self.guarded
                .iter()
                .filter(|place| resolved.starts_with(place))
                .cloned(),
        );
        if ctxkit_jail::completes_git_directory(&self.root, resolved) {
            places.push(folder.to_path_buf());
        }
        places
            .into_iter()
            .map(|place| {
                if folder.starts_with(&place) {
                    folder.to_path_buf()
                } else {
                    place
                }
            })
            .filter(|scope| !self.root.starts_with(scope))
            .max_by_key(|scope| scope.components().count())
            .unwrap_or_else(|| resolved.to_path_buf())
    }

    /// Whether an "always" the user gave for `scope` ([`Self::guarded_scope`]) covers a guarded
    /// write of `resolved`: it is `scope` or lies under it, with no folder of [`GUARDED_NAMES`]
    /// between (a `.git` planted in `.ctxkit/prompts` is a repository of its own).
    pub(crate) fn guarded_scope_covers(scope: &Path, resolved: &Path) -> bool {
        resolved.strip_prefix(scope).is_ok_and(|rest| {
            !rest
                .components()
                .any(|component| is_guarded_name(component.as_os_str()))
        })
    }
}

/// Whether `resolved`, outside the project, is a place the git config of the repository holding
/// it makes git run: its `core.hooksPath` folder, a `core.fsmonitor` program, a config it
/// includes (QA 2026-12-07: after "always" for a folder outside, `../lib/tools/hooks/pre-commit`
/// and `../lib/tools/fsmon.sh` were written unasked, and git ran both). The project's own are
/// guarded when the workspace is made.
pub(super) fn run_by_outside_git(resolved: &Path) -> bool {
    let Some(folder) = resolved.parent() else {
        return false;
    };
    let user_home = std::env::home_dir();
    let global = crate::git_hooks::global_configs(user_home.as_deref());
    crate::git_hooks::guarded_by_config(folder, global, user_home.as_deref())
        .iter()
        .any(|place| resolved.starts_with(place))
}

/// Whether a path's component is one of [`GUARDED_NAMES`], by the jail's rule.
fn is_guarded_name(component: &std::ffi::OsStr) -> bool {
    ctxkit_jail::is_guarded_name(component, GUARDED_NAMES)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA (r101, D3): "always" to a prompt template approved every later guarded write, git hooks
    /// and config included. The scope of an "always" is the guarded folder of the path asked about,
    /// or the file alone when no guarded folder holds it; never the project.
    #[test]
    fn always_covers_the_guarded_folder_of_the_path_asked_about() {
        let dir = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::write(
            project.join(".git/config"),
            "[core]\n\tfsmonitor = tools/fsmon.sh\n\thooksPath = .husky\n",
        )
        .unwrap();
        let mut workspace = Workspace::new(&project);
        workspace.guard(&project.join("session.jsonl"));
        workspace.guard(&project.join("node_modules/pkg"));
        for (path, scope) in [
            (".ctxkit/prompts/review.md", ".ctxkit/prompts"),
            (".ctxkit/settings.json", ".ctxkit"),
            (".git/hooks/pre-commit", ".git/hooks"),
            (".git/config", ".git/config"),
            (".git/info/exclude", ".git/info"),
            (".git", ".git"),
            ("src/.git/config", "src/.git"),
            (".husky/pre-commit", ".husky"),
            ("node_modules/pkg/lib/index.js", "node_modules/pkg/lib"),
            ("tools/fsmon.sh", "tools/fsmon.sh"),
            ("session.jsonl", "session.jsonl"),
        ] {
            assert_eq!(
                workspace.guarded_scope(&project.join(path)),
                project.join(scope),
                "{path}"
            );
        }
        let prompts = project.join(".ctxkit/prompts");
        let covers = |path: &str| Workspace::guarded_scope_covers(&prompts, &project.join(path));
        assert!(covers(".ctxkit/prompts/fix.md"));
        assert!(covers(".ctxkit/prompts/deeper/fix.md"));
        for other in [
            ".git/hooks/pre-commit",
            ".git/config",
            ".ctxkit/settings.json",
            ".ctxkit/prompts/.git/config",
            ".ctxkit/prompts/sub/.GIT/hooks/x",
            ".ctxkit/prompts.md",
        ] {
            assert!(!covers(other), "{other}");
        }
        let fsmon = project.join("tools/fsmon.sh");
        assert!(Workspace::guarded_scope_covers(&fsmon, &fsmon));
        assert!(!Workspace::guarded_scope_covers(
            &fsmon,
            &project.join("tools/other.sh")
        ));
    }
}
