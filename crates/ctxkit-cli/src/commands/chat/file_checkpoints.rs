//! Snapshots of the files the agent writes, for rewinds: when a `write` or `edit` call starts, the
//! file's bytes (or its absence) are read through the tools' jail; when the call succeeded and it
//! was the first write of that file in the turn, they are kept in the session's checkpoint folder
//! (`commands::checkpoints`), with a digest of what the agent wrote.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ctxkit_agent::{Access, ToolOutcome, Workspace};
use ctxkit_engine::Engine;
use ctxkit_protocol::ToolCall;
use ctxkit_session::Session;

use crate::commands::checkpoints::{AddOutcome, CheckpointStore, checkpoint_dir};

/// A snapshot taken when a call started, kept once the call succeeded.
#[derive(Debug)]
struct Pending {
    session_file: PathBuf,
    turn: String,
    path: PathBuf,
    /// `None`: a later write of the same file in the turn (only the digest is updated).
    previous: Option<Option<Vec<u8>>>,
}

/// Takes the snapshots of one chat.
#[derive(Debug)]
pub struct FileCheckpoints {
    workspace: Workspace,
    cwd: PathBuf,
    max_bytes: u64,
    pending: Mutex<HashMap<String, Pending>>,
}

/// The tools whose writes are snapshotted.
fn writes_file(tool: &str) -> bool {
    matches!(tool, "write" | "edit")
}

/// The id of the user message that started the turn at the session's leaf.
pub fn current_turn(session: &Session) -> Option<String> {
    session
        .branch_path(None)
        .into_iter()
        .rev()
        .find(|entry| entry.role() == Some("user"))
        .map(|entry| entry.id().to_owned())
}

impl FileCheckpoints {
    pub fn new(workspace: Workspace, cwd: PathBuf, max_bytes: u64) -> Self {
        Self {
            workspace,
            cwd,
            max_bytes,
            pending: Mutex::default(),
        }
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The path a tool call writes, as the tool resolves it; `None` for other calls or a path no
    /// tool may write.
    pub fn target(&self, call: &ToolCall) -> Option<PathBuf> {
        if !writes_file(&call.name) {
            return None;
        }
        let argument = call.arguments.get("path")?.as_str()?;
        let place = self
            .workspace
            .locate(&self.cwd, argument, Access::Write)
            .ok()?;
        Some(place.path().to_owned())
    }

    /// The current bytes of `path` (`None`: it does not exist), read through the jail; `Err`
    /// with the reason when it cannot be kept.
    pub fn read_current(&self, path: &Path, max: u64) -> Result<Option<Vec<u8>>, String> {
        let jail = self.workspace.jail_for(path)?;
        match jail.read(path, max) {
            Ok((bytes, size)) if (bytes.len() as u64) < size => {
                Err(format!("it is larger than {max} bytes"))
            }
            Ok((bytes, _)) => Ok(Some(bytes)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error.to_string()),
        }
    }

    /// Before a call runs: reads what a `write`/`edit` is about to replace. A notice when the
    /// file cannot be kept.
    pub async fn before(&self, engine: &Engine, call: &ToolCall) -> Option<String> {
        let path = self.target(call)?;
        let (session_file, turn) = engine
            .with_session(|session| (session.path().map(Path::to_owned), current_turn(session)))
            .await;
        let (session_file, turn) = (session_file?, turn?);
        if checkpoint_dir(&session_file).starts_with(self.workspace.root()) {
            return Some("No file checkpoint: the session file lies inside the project".to_owned());
        }
        let store = CheckpointStore::open(&session_file).ok()?;
        let previous = if store.has(&turn, &path) {
            None
        } else {
            let room = self.max_bytes.saturating_sub(store.total_bytes());
            match self.read_current(&path, room) {
                Ok(bytes) => Some(bytes),
                Err(reason) => {
                    return Some(format!(
                        "No file checkpoint of `{}`: {reason} (chat.checkpointMaxBytes {})",
                        path.display(),
                        self.max_bytes
                    ));
                }
            }
        };
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(
                call.id.clone(),
                Pending {
                    session_file,
                    turn,
                    path,
                    previous,
                },
            );
        }
        None
    }

    /// After a call: keeps its snapshot when it succeeded (a failed write left the file as it
    /// was). A notice when the snapshot could not be kept.
    pub fn after(&self, call: &ToolCall, outcome: &ToolOutcome) -> Option<String> {
        let pending = self.pending.lock().ok()?.remove(&call.id)?;
        if outcome.is_error {
            return None;
        }
        let after = self
            .read_current(&pending.path, u64::MAX)
            .ok()
            .flatten()
            .unwrap_or_default();
        let kept =
            CheckpointStore::open(&pending.session_file).and_then(|mut store| {
                match &pending.previous {
                    Some(previous) => store.add(
                        &pending.turn,
                        &pending.path,
                        previous.as_deref(),
                        &after,
                        self.max_bytes,
                    ),
                    None => store
                        .note_written(&pending.path, &after)
                        .map(|()| AddOutcome::Kept),
                }
            });
        match kept {
            Ok(AddOutcome::Kept) => None,
            Ok(AddOutcome::OverLimit) => Some(format!(
                "No file checkpoint of `{}`: the session's checkpoints would pass chat.checkpointMaxBytes ({})",
                pending.path.display(),
                self.max_bytes
            )),
            Err(error) => Some(format!(
                "No file checkpoint of `{}`: {error:#}",
                pending.path.display()
            )),
        }
    }
}
