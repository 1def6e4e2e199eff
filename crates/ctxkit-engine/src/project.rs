//! The project a session's work happens in: the directory the user or client chose (where `ctxkit
//! chat` runs, the `cwd` a `serve` client created the session with or confirmed), never the `cwd` a
//! session file records. A session someone sent names its own `cwd` (`/`, the user's home, a folder
//! of theirs): command hooks run, and `compaction.fileContext` reads, in the project only.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

/// The engine's project, shared with its command hooks; a server changes it when a run names
/// another one (`Engine::set_project`).
#[derive(Debug, Clone)]
pub struct ProjectDir(Arc<RwLock<PathBuf>>);

impl ProjectDir {
    /// `chosen`, else the process's working directory (where ctxkit was started).
    pub fn new(chosen: Option<PathBuf>) -> Self {
        let dir = chosen.unwrap_or_else(|| {
            // A working directory that cannot be read (deleted) is still where children start.
            std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
        });
        Self(Arc::new(RwLock::new(dir)))
    }

    /// The directory now.
    pub fn get(&self) -> PathBuf {
        match self.0.read() {
            Ok(dir) => dir.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub(crate) fn set(&self, dir: PathBuf) {
        match self.0.write() {
            Ok(mut slot) => *slot = dir,
            Err(poisoned) => *poisoned.into_inner() = dir,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_choice_the_project_is_where_the_process_runs() {
        let current = std::env::current_dir().unwrap();
        assert_eq!(ProjectDir::new(None).get(), current);
        let chosen = ProjectDir::new(Some(PathBuf::from("/srv/project")));
        let shared = chosen.clone();
        chosen.set(PathBuf::from("/srv/other"));
        assert_eq!(shared.get(), PathBuf::from("/srv/other"));
    }
}
