//! Where a Pi user's sessions are, when ctxkit finds none for this folder: Pi keeps them under
//! `~/.pi/agent/sessions` (ctxkit under its own home), and Pi's `sessionDir` is one flat folder
//! where ctxkit's sessions folder holds one folder per project. Neither is read silently; one line
//! says where they are and how to open them (QA r106: "No sessions." and a new session, though
//! Pi's sessions for the folder were there).

use std::path::Path;

use ctxkit_session::default_session_dir;
use ctxkit_settings::{Environment, pi_agent_dir};

/// The hint for a list of this folder's sessions that came out empty; `None` when there is
/// nothing of Pi's to point at.
pub(crate) fn hint(environment: &Environment, sessions_root: &Path, cwd: &str) -> Option<String> {
    let pi_root = pi_agent_dir(environment).join("sessions");
    let pi_folder = default_session_dir(&pi_root, cwd);
    if !same_folder(&pi_root, sessions_root) && holds_sessions(&pi_folder) {
        return Some(format!(
            "Pi's sessions for this folder are in `{}`: `--sessions-dir {}` (or \
             `CTXKIT_SESSIONS_DIR`) lists and continues them",
            pi_folder.display(),
            pi_root.display()
        ));
    }
    holds_sessions(sessions_root).then(|| {
        format!(
            "`{}` holds session files at its top level, as Pi's `sessionDir` keeps them; ctxkit \
             keeps one folder per project under its sessions folder: open one with `ctxkit chat \
             --session FILE`",
            sessions_root.display()
        )
    })
}

fn same_folder(left: &Path, right: &Path) -> bool {
    match (left.canonicalize(), right.canonicalize()) {
        (Ok(left), Ok(right)) => left == right,
        _ => left == right,
    }
}

/// Whether `folder` holds a session file (`*.jsonl`) directly.
fn holds_sessions(folder: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|entry| {
        entry
            .path()
            .extension()
            .is_some_and(|extension| extension == "jsonl")
            && entry.file_type().is_ok_and(|kind| kind.is_file())
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn pis_sessions_for_the_folder_are_pointed_at() {
        let home = tempfile::tempdir().unwrap();
        let environment = Environment::new(home.path(), "/work");
        let ours = home.path().join(".ctxkit/sessions");
        std::fs::create_dir_all(&ours).unwrap();
        assert_eq!(hint(&environment, &ours, "/work/project"), None);
        let pi_root = home.path().join(".pi/agent/sessions");
        let pi_folder = default_session_dir(&pi_root, "/work/project");
        std::fs::create_dir_all(&pi_folder).unwrap();
        assert_eq!(hint(&environment, &ours, "/work/project"), None);
        std::fs::write(pi_folder.join("2026-12-01_x.jsonl"), "{}\n").unwrap();
        let said = hint(&environment, &ours, "/work/project").unwrap();
        assert!(said.contains("--sessions-dir"), "{said}");
        // Already reading Pi's folder: nothing to point at.
        assert_eq!(hint(&environment, &pi_root, "/work/project"), None);
        // Another folder's sessions are not this one's.
        assert_eq!(hint(&environment, &ours, "/work/other"), None);
    }

    #[test]
    fn a_flat_sessions_folder_is_named() {
        let home = tempfile::tempdir().unwrap();
        let environment = Environment::new(home.path(), "/work");
        let flat = home.path().join("pi-sessions");
        std::fs::create_dir_all(&flat).unwrap();
        std::fs::write(flat.join("2026-12-01_x.jsonl"), "{}\n").unwrap();
        let said = hint(&environment, &flat, "/work/project").unwrap();
        assert!(said.contains("top level"), "{said}");
    }
}
