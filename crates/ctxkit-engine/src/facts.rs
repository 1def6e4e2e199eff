//! What a session is (its id, file, project) and where it stands (its leaf, its entries, its
//! name), readable while a compaction or branch summary holds the session: a UI asking whether a
//! compaction runs (`session.info`'s `is_compacting`) is answered at once instead of after it.

use std::path::PathBuf;

use ctxkit_session::Session;

use crate::engine::Engine;

/// A session's identity and position, as `session.info` reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFacts {
    pub session_id: String,
    /// `None` for a session kept in memory.
    pub session_file: Option<PathBuf>,
    pub cwd: String,
    pub leaf_id: Option<String>,
    pub entries: usize,
    pub name: Option<String>,
    /// What was found wrong in the file when it was read (a cut-off last line, a line that is not
    /// JSON, a dangling parent), with its line: the rest was read, these were left out or mended.
    pub problems: Vec<(Option<usize>, String)>,
}

impl SessionFacts {
    pub(crate) fn of(session: &Session) -> Self {
        Self {
            session_id: session.id().to_owned(),
            session_file: session.path().map(ToOwned::to_owned),
            cwd: session.cwd().to_owned(),
            leaf_id: session.leaf_id().map(str::to_owned),
            entries: session.entries().len(),
            name: session.session_name(),
            problems: session
                .diagnostics()
                .iter()
                .map(|diagnostic| (diagnostic.line, diagnostic.kind.to_string()))
                .collect(),
        }
    }
}

impl Engine {
    /// The session's facts now (after any running compaction, which holds the session).
    pub async fn facts(&self) -> SessionFacts {
        self.with_session(SessionFacts::of).await
    }

    /// The session's facts as a running compaction or branch summary found them (it writes
    /// nothing before it ends), read without waiting for it; `None` when none runs.
    pub fn facts_while_compacting(&self) -> Option<SessionFacts> {
        self.inner
            .facts_while_running
            .lock()
            .ok()
            .and_then(|facts| facts.clone())
    }
}
