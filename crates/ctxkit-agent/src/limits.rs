//! What a project's tools may touch beyond the project, as the chat and the server both set it:
//! one [`Workspace`] built from one description, so a limit added for one surface holds for both.

use std::path::{Path, PathBuf};

use crate::Workspace;

/// The limits of a project's [`Workspace`] that come from ctxkit's locations and the settings.
#[derive(Debug, Clone, Copy)]
pub struct WorkspaceLimits<'a> {
    /// ctxkit's home ([`Workspace::set_home`]), when it has one.
    pub home: Option<&'a Path>,
    /// Where the sessions live: never read nor written by a tool ([`Workspace::protect`]).
    pub sessions_root: &'a Path,
    /// Read without a question (`chat.readablePaths`).
    pub readable_paths: &'a [PathBuf],
    /// Redacted from every tool result.
    pub secrets: &'a [String],
    /// Written only with the user's approval (hook scripts, local packages).
    pub guarded: &'a [PathBuf],
    /// Folders of the loaded skills: read without a question wherever they lie (ctxkit's home, a
    /// local package), never written ([`Workspace::allow_reading_skill_folder`]); none in the
    /// sessions folder.
    pub skill_folders: &'a [PathBuf],
}

impl Workspace {
    /// The workspace of the project at `root` within `limits`.
    pub fn with_limits(root: &Path, limits: WorkspaceLimits<'_>) -> Self {
        let mut workspace = Self::new(root);
        if let Some(home) = limits.home {
            workspace.set_home(home);
        }
        workspace.protect(limits.sessions_root);
        for path in limits.readable_paths {
            workspace.allow_reading(path);
        }
        for secret in limits.secrets {
            workspace.add_secret(secret);
        }
        for path in limits.guarded {
            workspace.guard(path);
        }
        let sessions = crate::resolve_path(limits.sessions_root);
        for folder in limits.skill_folders {
            if !crate::resolve_path(folder).starts_with(&sessions) {
                workspace.allow_reading_skill_folder(folder);
            }
        }
        workspace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Access, Place};

    #[test]
    fn every_limit_is_set() {
        let world = tempfile::tempdir().unwrap();
        let [project, home, sessions, readable] =
            ["project", "home", "sessions", "readable"].map(|name| world.path().join(name));
        for dir in [&project, &home, &sessions, &readable] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let hook = project.join("hook.sh");
        std::fs::write(&hook, "echo hook").unwrap();
        std::fs::write(readable.join("notes.md"), "notes").unwrap();
        let workspace = Workspace::with_limits(
            &project,
            WorkspaceLimits {
                home: Some(&home),
                sessions_root: &sessions,
                readable_paths: std::slice::from_ref(&readable),
                secrets: &["sk-secret-0123456789".to_owned()],
                guarded: std::slice::from_ref(&hook),
                skill_folders: &[],
            },
        );
        let read =
            |path: &Path| workspace.locate(&project, &path.display().to_string(), Access::Read);
        assert!(
            read(&home.join("settings.json")).is_err(),
            "the home is protected"
        );
        assert!(
            read(&sessions.join("a.jsonl")).is_err(),
            "the sessions are protected"
        );
        let notes = read(&readable.join("notes.md"));
        assert!(matches!(notes, Ok(Place::Allowed(_))), "{notes:?}");
        assert_eq!(workspace.home(), Some(crate::resolve_path(&home).as_path()));
        assert!(
            !workspace
                .redact("key sk-secret-0123456789")
                .contains("0123456789")
        );
        let write = workspace.locate(&project, "hook.sh", Access::Write);
        assert!(matches!(write, Ok(Place::Guarded(_))), "{write:?}");
    }
}
