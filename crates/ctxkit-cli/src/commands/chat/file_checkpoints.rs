//! Snapshots of the files the agent writes, for rewinds: when a `write` or `edit` call starts and
//! it is the turn's first write of that file, the file's bytes (or its absence) are read through
//! the tools' jail and kept in the session's checkpoint folder (`commands::checkpoints`) before
//! the tool runs; a call that failed (refused, denied, an error) left the file as it was and its
//! snapshot is dropped; one that succeeded records a digest of what it left, which tells a file
//! changed by someone else since.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ctxkit_agent::{Access, ToolOutcome, Workspace};
use ctxkit_engine::Engine;
use ctxkit_protocol::ToolCall;
use ctxkit_session::Session;

use crate::commands::checkpoints::{AddOutcome, CheckpointStore, checkpoint_dir, state_digest};

/// The most bytes read to compare a file with what the agent wrote; a larger file counts as
/// changed (the rewind then asks before replacing it).
const COMPARE_LIMIT: u64 = 64 * 1024 * 1024;

/// A call under way: where its snapshot went.
#[derive(Debug)]
struct Pending {
    session_file: PathBuf,
    turn: String,
    path: PathBuf,
    /// Whether this call took the turn's snapshot of the file (dropped if the call fails).
    took: bool,
}

/// Takes the snapshots of one chat.
#[derive(Debug)]
pub struct FileCheckpoints {
    workspace: Workspace,
    cwd: PathBuf,
    max_bytes: u64,
    pending: Mutex<HashMap<String, Pending>>,
    /// The session file whose checkpoints were said to be impossible (it lies in the project):
    /// said once, not at every write (QA 2026-12-07: 23 times in one turn).
    said_inside: Mutex<Option<PathBuf>>,
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

/// How a file too large to keep is said (and told apart from other reasons).
const TOO_LARGE: &str = "it is larger than";

impl FileCheckpoints {
    pub fn new(workspace: Workspace, cwd: PathBuf, max_bytes: u64) -> Self {
        Self {
            workspace,
            cwd,
            max_bytes,
            pending: Mutex::default(),
            said_inside: Mutex::default(),
        }
    }

    /// The bound of the session's snapshots from the next one on (`/reload`).
    pub fn set_max_bytes(&mut self, max_bytes: u64) {
        self.max_bytes = max_bytes;
    }

    /// Restores judge paths against `workspace` from now on (`/reload`).
    pub fn set_workspace(&mut self, workspace: Workspace) {
        self.workspace = workspace;
    }

    /// The bound of the session's snapshots, which also bounds the read of one.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
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
    /// with the reason when it cannot be read or is larger than `max`.
    pub fn read_current(&self, path: &Path, max: u64) -> Result<Option<Vec<u8>>, String> {
        let jail = self.workspace.jail_for(path)?;
        match jail.read(path, max) {
            Ok((bytes, size)) if (bytes.len() as u64) < size => {
                Err(format!("{TOO_LARGE} {max} bytes"))
            }
            Ok((bytes, _)) => Ok(Some(bytes)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error.to_string()),
        }
    }

    /// What `path` holds now as a [`state_digest`]; `unknown` (never equal to a digest) when it
    /// cannot be read or is too large to compare.
    pub fn current_state(&self, path: &Path) -> String {
        match self.read_current(path, COMPARE_LIMIT) {
            Ok(bytes) => state_digest(bytes.as_deref()),
            Err(_) => "unknown".to_owned(),
        }
    }

    /// Before a call runs: keeps what a `write`/`edit` is about to replace, when it is the turn's
    /// first write of the file. A notice when the file cannot be kept.
    pub async fn before(&self, engine: &Engine, call: &ToolCall) -> Option<String> {
        let path = self.target(call)?;
        let (session_file, turn) = engine
            .with_session(|session| (session.path().map(Path::to_owned), current_turn(session)))
            .await;
        let (session_file, turn) = (session_file?, turn?);
        if checkpoint_dir(&session_file).starts_with(self.workspace.root()) {
            let mut said = self.said_inside.lock().ok()?;
            if said.as_ref() == Some(&session_file) {
                return None;
            }
            *said = Some(session_file);
            return Some(
                "No file checkpoints: the session file lies inside the project, so rewinds \
                 cannot put files back"
                    .to_owned(),
            );
        }
        let (took, notice) = self.take(&session_file, &turn, &path);
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(
                call.id.clone(),
                Pending {
                    session_file,
                    turn,
                    path,
                    took,
                },
            );
        }
        notice
    }

    /// Takes the turn's snapshot of `path` unless it has one: whether it did, and a notice when
    /// it could not.
    fn take(&self, session_file: &Path, turn: &str, path: &Path) -> (bool, Option<String>) {
        let mut store = match CheckpointStore::open(session_file) {
            Ok(store) => store,
            Err(error) => return (false, Some(format!("No file checkpoint: {error:#}"))),
        };
        if store.has(turn, path) {
            return (false, None);
        }
        let room = self.max_bytes.saturating_sub(store.total_bytes());
        let refused = |reason: String| {
            Some(format!(
                "No file checkpoint of `{}`: {reason}",
                path.display()
            ))
        };
        let previous = match self.read_current(path, room) {
            Ok(previous) => previous,
            Err(reason) if reason.starts_with(TOO_LARGE) => {
                let reason = format!("{reason} (chat.checkpointMaxBytes {})", self.max_bytes);
                return (false, refused(reason));
            }
            // Not a file that can be written (a folder, a path through a file): the call fails and
            // says why itself; a checkpoint notice naming the budget only misled.
            Err(_) => return (false, None),
        };
        let missing_folders = match previous {
            Some(_) => Vec::new(),
            None => self.missing_folders(path),
        };
        match store.add(
            turn,
            path,
            previous.as_deref(),
            &missing_folders,
            self.max_bytes,
        ) {
            Ok(AddOutcome::Kept) => (true, None),
            Ok(AddOutcome::OverLimit) => (
                false,
                refused(format!(
                    "the session's checkpoints would pass chat.checkpointMaxBytes ({})",
                    self.max_bytes
                )),
            ),
            Err(error) => (false, refused(format!("{error:#}"))),
        }
    }

    /// The folders above `path` that do not exist yet, deepest first, up to the jail's root: the
    /// ones a write of `path` creates.
    fn missing_folders(&self, path: &Path) -> Vec<PathBuf> {
        let Ok(jail) = self.workspace.jail_for(path) else {
            return Vec::new();
        };
        path.ancestors()
            .skip(1)
            .take_while(|folder| folder.starts_with(jail.root()) && *folder != jail.root())
            .take_while(|folder| !jail.is_dir(folder))
            .map(Path::to_owned)
            .collect()
    }

    /// After a call: a failed one left the file as it was, so its snapshot goes; a successful
    /// one records what it left. A notice when that could not be stored.
    pub fn after(&self, call: &ToolCall, outcome: &ToolOutcome) -> Option<String> {
        let pending = self.pending.lock().ok()?.remove(&call.id)?;
        let mut store = CheckpointStore::open(&pending.session_file).ok()?;
        let stored = if outcome.is_error {
            if !pending.took {
                return None;
            }
            store.drop_snapshot(&pending.turn, &pending.path)
        } else {
            store.note_written(&pending.path, self.current_state(&pending.path))
        };
        stored.err().map(|error| {
            format!(
                "Cannot update the file checkpoints of `{}`: {error:#}",
                pending.path.display()
            )
        })
    }
}
