//! The saved outputs a forked session's history points at. A fork copies its parent's entries,
//! and with them the notes that name where a cut output was saved: under the parent's
//! `tool-output/<parent id>` folder, not the fork's. Those folders are readable too, for the
//! sessions the fork descends from whose files lie under the same sessions folder (a header
//! naming a file anywhere else opens nothing) and that hold the fork's first entry: a fork copies
//! its parent's entries, ids and all, so a header that only claims a parent (a file imported
//! with `ctxkit store import`, written by hand) opens nothing of it.

use std::path::{Path, PathBuf};

/// The output folders read for a session folder and parent.
#[derive(Debug)]
pub(super) struct ForkedOutputs {
    read_for: (Option<PathBuf>, Option<String>, Option<String>),
    dirs: Vec<PathBuf>,
}

impl super::Agent {
    /// The output folders of the sessions the current one was forked from ([`ancestor_output_dirs`]),
    /// read again only when the session's folder or parent changed (headers do not change).
    pub(super) async fn forked_output_dirs(&mut self) -> Vec<PathBuf> {
        let read_for = self
            .engine
            .with_session(|session| {
                (
                    session.session_dir().map(Path::to_owned),
                    session.header().parent_session.clone(),
                    session.entries().first().map(|entry| entry.id().to_owned()),
                )
            })
            .await;
        if let Some(known) = self
            .forked_outputs
            .as_ref()
            .filter(|known| known.read_for == read_for)
        {
            return known.dirs.clone();
        }
        let dirs = match read_for.clone() {
            // Reading headers is file I/O: off the async threads.
            (Some(dir), parent, Some(first)) => tokio::task::spawn_blocking(move || {
                ancestor_output_dirs(&dir, parent.as_deref(), &first)
            })
            .await
            .unwrap_or_default(),
            (None, _, _) | (_, _, None) => Vec::new(),
        };
        self.forked_outputs = Some(ForkedOutputs {
            read_for,
            dirs: dirs.clone(),
        });
        dirs
    }
}

/// How many generations of parents are followed.
const MAX_GENERATIONS: usize = 16;

/// The output folders of the sessions `parent` (a header's `parentSession`) and its own parents
/// name, for a session whose file lies in `session_dir` and whose first entry is `first_entry`:
/// each parent must hold its child's first entry.
pub(super) fn ancestor_output_dirs(
    session_dir: &Path,
    parent: Option<&str>,
    first_entry: &str,
) -> Vec<PathBuf> {
    let Some(sessions_root) = std::fs::canonicalize(session_dir)
        .ok()
        .and_then(|dir| dir.parent().map(Path::to_owned))
    else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    let mut seen = Vec::new();
    let mut next = parent.map(PathBuf::from);
    let mut child_first = first_entry.to_owned();
    while let Some(file) = next.take() {
        if dirs.len() >= MAX_GENERATIONS {
            break;
        }
        let Ok(file) = std::fs::canonicalize(&file) else {
            break;
        };
        let Some(folder) = file
            .parent()
            .filter(|folder| folder.parent() == Some(&sessions_root))
        else {
            break;
        };
        if seen.contains(&file) {
            break;
        }
        let Ok(header) = ctxkit_session::read_header(&file) else {
            break;
        };
        let Some(first) = parent_of(&file, &child_first) else {
            break;
        };
        child_first = first;
        dirs.push(
            folder
                .join("tool-output")
                .join(super::tool_calls::safe_folder_name(&header.id)),
        );
        next = header.parent_session.map(PathBuf::from);
        seen.push(file);
    }
    dirs
}

/// When the session file `file` holds the entry `child_first`: its own first entry's id.
fn parent_of(file: &Path, child_first: &str) -> Option<String> {
    let mut first = None;
    let mut holds = false;
    let scanned = ctxkit_session::scan_entry_ids(file, |id| {
        if first.is_none() {
            first = Some(id.to_owned());
        }
        holds = id == child_first;
        !holds
    });
    (scanned.is_ok() && holds).then_some(first).flatten()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The first entry of every session here: a fork copies its parent's.
    const ROOT: &str = r#"{"type":"model_change","id":"root1","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}"#;

    fn header(dir: &Path, name: &str, id: &str, parent: Option<&Path>) -> PathBuf {
        let path = dir.join(name);
        let parent = parent.map_or(String::new(), |parent| {
            format!(",\"parentSession\":\"{}\"", parent.display())
        });
        std::fs::write(
            &path,
            format!(
                "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"t\",\"cwd\":\"/p\"{parent}}}\n{ROOT}\n"
            ),
        )
        .unwrap();
        path
    }

    #[test]
    fn follows_parents_under_the_same_sessions_folder() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("sessions/--p--");
        let other = root.path().join("sessions/--q--");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let grandparent = header(&other, "g.jsonl", "g/../id", None);
        let parent = header(&project, "p.jsonl", "pid", Some(&grandparent));
        let dirs = ancestor_output_dirs(&project, parent.to_str(), "root1");
        let project = std::fs::canonicalize(&project).unwrap();
        let other = std::fs::canonicalize(&other).unwrap();
        assert_eq!(
            dirs,
            vec![
                project.join("tool-output/pid"),
                other.join("tool-output/g_.._id"),
            ]
        );
    }

    #[test]
    fn a_parent_outside_the_sessions_folder_opens_nothing() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("sessions/--p--");
        std::fs::create_dir_all(&project).unwrap();
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let outside = header(&elsewhere, "x.jsonl", "x", None);
        assert!(ancestor_output_dirs(&project, outside.to_str(), "root1").is_empty());
    }

    #[test]
    fn a_parent_that_is_a_fifo_or_no_header_opens_nothing_and_never_waits() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("sessions/--p--");
        std::fs::create_dir_all(&project).unwrap();
        let fifo = project.join("fifo.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(ancestor_output_dirs(&project, fifo.to_str(), "root1").is_empty());
        // A first line of 1 MB without an end is read no further than its first 64 KiB.
        let endless = project.join("endless.jsonl");
        std::fs::write(&endless, "x".repeat(1 << 20)).unwrap();
        assert!(ancestor_output_dirs(&project, endless.to_str(), "root1").is_empty());
    }

    #[test]
    fn a_cycle_of_parents_ends() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("sessions/--p--");
        std::fs::create_dir_all(&project).unwrap();
        let a = project.join("a.jsonl");
        let b = header(&project, "b.jsonl", "b", Some(&a));
        header(&project, "a.jsonl", "a", Some(&b));
        assert_eq!(ancestor_output_dirs(&project, a.to_str(), "root1").len(), 2);
    }

    /// QA (2026-12-05): a header claiming another project's session as its parent (imported with
    /// `ctxkit store import`) opened that session's saved outputs. A parent must hold the fork's
    /// first entry.
    #[test]
    fn a_parent_that_does_not_hold_the_forks_first_entry_opens_nothing() {
        let root = tempfile::tempdir().unwrap();
        let victim_folder = root.path().join("sessions/--victim--");
        let project = root.path().join("sessions/--p--");
        std::fs::create_dir_all(&victim_folder).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let victim = header(&victim_folder, "v.jsonl", "vid", None);
        assert!(ancestor_output_dirs(&project, victim.to_str(), "forged1").is_empty());
        assert_eq!(
            ancestor_output_dirs(&project, victim.to_str(), "root1").len(),
            1
        );
    }
}
