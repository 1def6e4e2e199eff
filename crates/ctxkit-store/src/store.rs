//! The store interface both backends implement, and the values it speaks in.

use std::future::Future;
use std::time::Duration;

use crate::error::Result;
use crate::lines::SessionLines;

/// The writer's right to append to one session: granted by [`SessionStore::acquire`] to one
/// writer at a time. `token` is the fencing token: it grows with every grant, and an append is
/// accepted only while the session's token is still this one, so a writer whose lease was taken
/// over can never write again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub session_id: String,
    pub owner: String,
    pub token: i64,
}

/// Which sessions a listing returns. Every field narrows it; `limit` 0 means no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// The project: sessions whose header `cwd` is this.
    pub project: Option<String>,
    /// Sessions whose name contains this (case-insensitive).
    pub name: Option<String>,
    /// Sessions changed at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Sessions changed before this time (ms since the epoch).
    pub until_ms: Option<i64>,
    /// Sessions with an entry holding each of these words (runs of letters and digits, any case)
    /// as a whole word, wherever it stands (in a URL, a host, a hyphenated token): both backends
    /// find the same sessions.
    pub text: Option<String>,
    pub limit: usize,
}

/// One session in a listing, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    pub id: String,
    pub cwd: String,
    pub name: Option<String>,
    /// The header's timestamp.
    pub created: String,
    /// The later of the header's time and the last user or assistant message's (its own
    /// timestamp): the listing's order. (`ctxkit sessions` shows a file's last activity, as Pi
    /// does, which a copied session's newer header does not hide.)
    pub modified_ms: i64,
    /// The last user or assistant message's time (its own timestamp), what `ctxkit sessions`
    /// shows as modified; `None` without one (or for a database row written before it was kept,
    /// until its next message).
    pub last_message_ms: Option<i64>,
    pub entries: u64,
    pub message_count: u64,
    pub first_message: Option<String>,
    /// The header's `parentSession`: the session it was forked or cloned from (a file's path,
    /// or on the database the parent's id), as the header names it.
    pub parent_session: Option<String>,
    /// Where it is: a file path, or `postgres` for the database.
    pub location: String,
}

impl StoredSession {
    /// The time a listing shows as modified: the last message's, else the later of the header's
    /// and the messages' (a session without messages, or a row from before the last was kept).
    pub fn shown_modified_ms(&self) -> i64 {
        self.last_message_ms.unwrap_or(self.modified_ms)
    }
}

/// Where sessions live. Both backends pass one test suite (`tests/suite.rs`).
pub trait SessionStore: Send + Sync {
    /// Stores a new session from its JSONL lines (the header and any entries).
    /// [`crate::StoreError::Exists`] when its id is taken.
    fn import(&self, lines: &SessionLines) -> impl Future<Output = Result<StoredSession>> + Send;

    /// Stores a new session from the JSONL file at `path`, read a line at a time and split as
    /// [`SessionLines::parse`] splits it: each entry is checked and written as it is read, so a
    /// file of a million entries is never held whole. Nothing is stored when a line is refused.
    /// [`crate::StoreError::Exists`] when its id is taken.
    fn import_file(
        &self,
        path: &std::path::Path,
    ) -> impl Future<Output = Result<StoredSession>> + Send;

    /// Stores a new session as [`SessionStore::import`] does, with `owner` its writer for `ttl`
    /// from the start, in one step: a session is never stored without its creator's lease (no
    /// other writer can take it in between), and nothing is stored when either fails.
    fn create(
        &self,
        lines: &SessionLines,
        owner: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<Lease>> + Send;

    /// The session's JSONL, byte for byte the lines stored, in order.
    fn export(&self, id: &str) -> impl Future<Output = Result<SessionLines>> + Send;

    /// Makes `owner` the session's one writer for `ttl`, or [`crate::StoreError::SessionInUse`]
    /// while another writer's lease runs. A lease that expired is taken over, and `owner` takes
    /// its own lease again at once (a writer that lost its connection to the database and could
    /// not release it): either way with a new token, so the earlier lease is fenced.
    fn acquire(
        &self,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<Lease>> + Send;

    /// Extends the lease by `ttl` from now; [`crate::StoreError::Fenced`] when it was taken over.
    fn renew(&self, lease: &Lease, ttl: Duration) -> impl Future<Output = Result<()>> + Send;

    /// Gives the lease up (a later `acquire` by anyone succeeds at once).
    fn release(&self, lease: &Lease) -> impl Future<Output = Result<()>> + Send;

    /// Appends entry lines after the last one, all or none, checking the lease's token in the same
    /// step ([`crate::StoreError::Fenced`] when it was taken over). Returns the session's entry
    /// count. Acknowledged means committed: the entries are durable when this returns. An append
    /// whose lines are already the session's last lines is stored once: a writer that did not
    /// hear the answer to an append (the database stopped answering) sends it again safely.
    fn append(
        &self,
        lease: &Lease,
        lines: &[String],
        ttl: Duration,
    ) -> impl Future<Output = Result<u64>> + Send;

    /// The id of the session `id_or_prefix` names: the session with that id, else the one session
    /// whose id starts with it. [`crate::StoreError::NotFound`] when none does,
    /// [`crate::StoreError::AmbiguousId`] when several do.
    fn resolve(&self, id_or_prefix: &str) -> impl Future<Output = Result<String>> + Send;

    /// The sessions that match, newest first.
    fn list(&self, query: &ListQuery) -> impl Future<Output = Result<Vec<StoredSession>>> + Send;
}

/// The most ids an [`crate::StoreError::AmbiguousId`] names.
pub(crate) const AMBIGUOUS_IDS_SHOWN: usize = 5;

/// The id `prefix` names among `ids` (sorted, no repeats), as [`SessionStore::resolve`] resolves it.
pub(crate) fn resolve_among(prefix: &str, ids: Vec<String>) -> Result<String> {
    if ids.iter().any(|id| id == prefix) {
        return Ok(prefix.to_owned());
    }
    let mut matching: Vec<String> = ids
        .into_iter()
        .filter(|id| !prefix.is_empty() && id.starts_with(prefix))
        .collect();
    match matching.len() {
        0 => Err(crate::StoreError::NotFound {
            id: prefix.to_owned(),
        }),
        1 => Ok(matching.remove(0)),
        count => Err(crate::StoreError::AmbiguousId {
            prefix: prefix.to_owned(),
            count,
            ids: matching.into_iter().take(AMBIGUOUS_IDS_SHOWN).collect(),
        }),
    }
}
