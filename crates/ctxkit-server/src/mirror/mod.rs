//! Sessions of a database store (`--store postgres://…`). The engine works on a session file, so
//! the server keeps a private copy: `session.open` takes the session's lease and exports it to a
//! temporary file, `session.create` stores the new header and takes the lease, and after every
//! request the lines the request appended to the copy are appended to the database under the
//! lease, before the response is sent: an acknowledged entry is committed. A writer whose lease was
//! taken over (it was idle past the lease, or its instance was thought dead) is refused its append
//! and its session is closed; the client opens it again, on this instance or another.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ctxkit_store::{AnyStore, Lease, SessionLines, SessionStore, StoreError};

use crate::{MethodError, Shared, codes};

mod opening;

pub(crate) use opening::{Opened, create, open, replace};

/// The database a server keeps its sessions in, and how it holds them.
#[derive(Debug, Clone)]
pub struct StoreBinding {
    pub store: AnyStore,
    /// How long a lease lasts without renewal (`store.leaseSeconds`): how long a session of an
    /// instance that died waits before another instance may take it over.
    pub lease: Duration,
    /// Who writes, as `session_in_use` names it (host, process); each client adds its number.
    pub owner: String,
}

/// Client numbers, so two connections of one process are two writers.
static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// The writer name of a new client of `binding`.
pub(crate) fn client_owner(binding: &StoreBinding) -> String {
    format!(
        "{} client {}",
        binding.owner,
        NEXT_CLIENT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The open database session of one client: its lease and its private copy.
pub(crate) struct Mirror {
    store: AnyStore,
    lease: Lease,
    ttl: Duration,
    path: PathBuf,
    /// Bytes of the copy already in the database.
    synced: u64,
    /// Keeps the copy's private folder until the session is closed.
    _folder: tempfile::TempDir,
    renewer: tokio::task::JoinHandle<()>,
    /// When the lease was last known to be this client's: the start of its last successful
    /// acquire, renewal or append. It cannot have been taken over before that plus `ttl`.
    confirmed: Confirmed,
}

/// The start of the last call that confirmed a lease, shared with its renewer.
#[derive(Debug, Clone)]
struct Confirmed(Arc<std::sync::Mutex<Instant>>);

impl Confirmed {
    fn new(at: Instant) -> Self {
        Self(Arc::new(std::sync::Mutex::new(at)))
    }

    fn set(&self, at: Instant) {
        if let Ok(mut confirmed) = self.0.lock() {
            *confirmed = (*confirmed).max(at);
        }
    }

    fn elapsed(&self) -> Duration {
        self.0
            .lock()
            .map_or(Duration::MAX, |confirmed| confirmed.elapsed())
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}

fn store_error(error: StoreError) -> MethodError {
    let kind = match &error {
        StoreError::SessionInUse { .. } => "session_in_use",
        StoreError::Fenced { .. } => "lease_lost",
        StoreError::NotFound { .. } => "session_not_found",
        StoreError::Exists { .. } => "session_exists",
        StoreError::AmbiguousId { .. }
        | StoreError::InvalidUrl { .. }
        | StoreError::InvalidSession { .. }
        | StoreError::NotUtf8 { .. }
        | StoreError::DamagedLine { .. }
        | StoreError::Io { .. }
        | StoreError::Session(_)
        | StoreError::Database { .. }
        | StoreError::Unresponsive { .. }
        | StoreError::Connect { .. }
        | StoreError::Tls { .. }
        | StoreError::TlsFile { .. } => "store",
    };
    MethodError {
        code: codes::ENGINE_ERROR,
        message: error.to_string(),
        kind: Some(kind),
    }
}

fn copy_error(what: &str, error: impl std::fmt::Display) -> MethodError {
    MethodError {
        code: codes::ENGINE_ERROR,
        message: format!("{what}: {error}"),
        kind: Some("store"),
    }
}

/// Renews `lease` every third of `ttl` until the session is closed or the lease is lost.
fn renew_in_background(
    store: &AnyStore,
    lease: &Lease,
    ttl: Duration,
    confirmed: Confirmed,
) -> tokio::task::JoinHandle<()> {
    let store = store.clone();
    let lease = lease.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(ttl / 3).await;
            let started = Instant::now();
            match store.renew(&lease, ttl).await {
                Ok(()) => confirmed.set(started),
                Err(StoreError::Fenced { .. } | StoreError::NotFound { .. }) => break,
                Err(_) => {}
            }
        }
    })
}

/// Methods that open or create a session: they give up the open one themselves once the new one
/// is open; a refused one keeps it, and a lease lost meanwhile is found by the next request.
const OPENING: [&str; 2] = ["session.open", "session.create"];

/// Before a request on an open database session: when the lease was not confirmed for half its
/// length (this process was stopped, or renewals failed), another writer may have taken it over,
/// so it is renewed now; when it was taken over, the session is closed and the request refused
/// without running. A stale writer would otherwise call the model and run tools, to be refused
/// only when it stores the result. When the database does not answer, the request runs: storing
/// what it appended decides.
pub(crate) async fn before_request(shared: &Arc<Shared>, method: &str) -> Result<(), MethodError> {
    if OPENING.contains(&method) {
        return Ok(());
    }
    let mut mirror = shared.mirror.lock().await;
    let Some(open) = mirror.as_ref() else {
        return Ok(());
    };
    if open.confirmed.elapsed() < open.ttl / 2 {
        return Ok(());
    }
    let started = Instant::now();
    match open.store.renew(&open.lease, open.ttl).await {
        Ok(()) => {
            open.confirmed.set(started);
            Ok(())
        }
        Err(error @ (StoreError::Fenced { .. } | StoreError::NotFound { .. })) => {
            *mirror = None;
            drop(mirror);
            *shared.engine.write().await = None;
            Err(closed_before(store_error(error)))
        }
        Err(_) => Ok(()),
    }
}

/// After a request: the entries it appended go to the database before its response. When they
/// cannot (the lease was taken over), the session is closed and the request answered with the
/// error, so the client knows they were not acknowledged.
pub(crate) async fn after_request<T>(
    shared: &Arc<Shared>,
    outcome: Result<T, MethodError>,
) -> Result<T, MethodError> {
    let mut mirror = shared.mirror.lock().await;
    let Some(open) = mirror.as_mut() else {
        return outcome;
    };
    match sync(shared, open).await {
        Ok(()) => outcome,
        Err(error) => {
            // The copy holds entries the database refused: it is no longer this client's.
            *mirror = None;
            drop(mirror);
            *shared.engine.write().await = None;
            Err(closed_after(error))
        }
    }
}

/// The error of a request whose entries could not be stored, saying that the session was closed
/// and how to go on (its lease is taken again by the same client at once). When the append was
/// sent and its answer never came (the database stopped answering, the connection broke), it may
/// have been committed: the message says so, and how to tell, instead of "send it again" (a
/// client that resent such a request stored its turn twice).
fn closed_after(mut error: MethodError) -> MethodError {
    let tail = if error.message.ends_with(OUTCOME_UNKNOWN) {
        "; the session was closed: open it again with `session.open` once the database answers, \
         and send the request again only if the `leaf_id` it answers is the leaf of the last \
         answer received (else the request was stored: read it with `transcript.get`)"
    } else {
        "; the session was closed and what this request appended was not stored: open it again \
         with `session.open` (it says why when it cannot yet) and send the request again"
    };
    error.message.push_str(tail);
    error
}

/// The end of the message of an append whose outcome is unknown (see [`closed_after`]).
const OUTCOME_UNKNOWN: &str = "; what this request appended may have been stored";

/// Whether an append that failed with `error` may have been committed: it was sent and no answer
/// came. A refusal by the database (its own error: rolled back), a connection never had, a lease
/// taken over or a line refused before sending stored nothing.
fn outcome_unknown(error: &StoreError) -> bool {
    match error {
        StoreError::Unresponsive { .. } => true,
        StoreError::Database { error, .. } => error.as_db_error().is_none(),
        StoreError::InvalidUrl { .. }
        | StoreError::NotFound { .. }
        | StoreError::AmbiguousId { .. }
        | StoreError::Exists { .. }
        | StoreError::SessionInUse { .. }
        | StoreError::Fenced { .. }
        | StoreError::InvalidSession { .. }
        | StoreError::NotUtf8 { .. }
        | StoreError::DamagedLine { .. }
        | StoreError::Io { .. }
        | StoreError::Session(_)
        | StoreError::Connect { .. }
        | StoreError::Tls { .. }
        | StoreError::TlsFile { .. } => false,
    }
}

/// The error of a request refused before it ran, its session's lease taken over.
fn closed_before(mut error: MethodError) -> MethodError {
    error.message.push_str(
        "; the session was closed and this request was not run: open it again with \
         `session.open` and send the request again",
    );
    error
}

async fn sync(shared: &Shared, mirror: &mut Mirror) -> Result<(), MethodError> {
    if let Some(engine) = shared.engine.read().await.clone() {
        engine
            .flush_pending()
            .await
            .map_err(crate::errors::engine_error)?;
    }
    store_tail(mirror).await
}

/// Stores the copy's complete lines past what is stored.
async fn store_tail(mirror: &mut Mirror) -> Result<(), MethodError> {
    let appended = read_from(&mirror.path, mirror.synced)
        .map_err(|error| copy_error("cannot read the session's copy", error))?;
    if appended.is_empty() {
        return Ok(());
    }
    let Some(complete) = appended.iter().rposition(|byte| *byte == b'\n') else {
        return Ok(());
    };
    let text = std::str::from_utf8(&appended[..complete])
        .map_err(|error| copy_error("the session's copy", error))?;
    let lines: Vec<String> = text
        .split('\n')
        .filter(|line| !line.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let started = Instant::now();
    mirror
        .store
        .append(&mirror.lease, &lines, mirror.ttl)
        .await
        .map_err(|error| {
            let unknown = outcome_unknown(&error);
            let mut error = store_error(error);
            if unknown {
                error.message.push_str(OUTCOME_UNKNOWN);
            }
            error
        })?;
    mirror.confirmed.set(started);
    mirror.synced += complete as u64 + 1;
    Ok(())
}

fn read_from(path: &std::path::Path, offset: u64) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let length = file.metadata()?.len();
    if length < offset {
        return Err(std::io::Error::other(
            "the copy is shorter than what was stored (it was rewritten)",
        ));
    }
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// After `fork` or `clone` of a database session, whose engine now writes the new session's file
/// beside the copy (`path`, flushed): the new session is stored under its own id (its
/// `parentSession` the parent's id, as stored sessions are named), its lease taken and the
/// parent's given up, so the client goes on in the new session as it would with files. When that
/// fails the session is closed and nothing of the fork is acknowledged.
pub(crate) async fn adopt_fork(shared: &Shared, path: &std::path::Path) -> Result<(), MethodError> {
    let mut slot = shared.mirror.lock().await;
    let Some(open) = slot.as_mut() else {
        return Ok(());
    };
    if let Err(error) = adopt(open, &shared.owner, path).await {
        *slot = None;
        drop(slot);
        *shared.engine.write().await = None;
        return Err(closed_after(error));
    }
    Ok(())
}

async fn adopt(open: &mut Mirror, owner: &str, path: &std::path::Path) -> Result<(), MethodError> {
    // Whatever the parent's copy got before the fork is the parent's.
    store_tail(open).await?;
    let bytes =
        std::fs::read(path).map_err(|error| copy_error("cannot read the fork's file", error))?;
    let lines = SessionLines::parse(&path.display().to_string(), &bytes)
        .and_then(|lines| lines.with_parent_session(&open.lease.session_id))
        .map_err(store_error)?;
    let id = ctxkit_store::header_facts(&lines.header)
        .map_err(|reason| copy_error("the fork's header", reason))?
        .id;
    open.store.import(&lines).await.map_err(store_error)?;
    let acquired = Instant::now();
    let lease = open
        .store
        .acquire(&id, owner, open.ttl)
        .await
        .map_err(store_error)?;
    let _ = open.store.release(&open.lease).await;
    open.renewer.abort();
    open.confirmed = Confirmed::new(acquired);
    open.renewer = renew_in_background(&open.store, &lease, open.ttl, open.confirmed.clone());
    open.lease = lease;
    open.path = path.to_owned();
    open.synced = bytes.len() as u64;
    Ok(())
}

/// Closes the client's database session: what is left is stored, then the lease given up so the
/// client may continue on another instance at once.
pub(crate) async fn close(shared: &Shared) {
    let mut mirror = shared.mirror.lock().await;
    if let Some(mut open) = mirror.take() {
        let synced = sync(shared, &mut open).await;
        if synced.is_ok() {
            let _ = open.store.release(&open.lease).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `data.kind` a database store's error is answered with is in `docs/protocol.md`
    /// (`store` was not, nor `session_not_found` and `session_exists`).
    #[test]
    fn every_kind_of_a_store_error_is_documented() {
        let documented = include_str!("../../../../docs/protocol.md");
        let errors = [
            StoreError::SessionInUse {
                id: "s".to_owned(),
                owner: "o".to_owned(),
                expires_in_ms: 1,
            },
            StoreError::Fenced {
                id: "s".to_owned(),
                token: 1,
            },
            StoreError::NotFound { id: "s".to_owned() },
            StoreError::Exists { id: "s".to_owned() },
            StoreError::Connect {
                reason: "down".to_owned(),
            },
        ];
        for error in errors {
            let kind = store_error(error).kind.unwrap();
            assert!(documented.contains(&format!("`{kind}`")), "{kind}");
        }
        let closed = closed_after(copy_error("cannot write", "disk full"));
        assert!(
            closed.message.contains("`session.open`"),
            "{}",
            closed.message
        );
    }
}

#[cfg(test)]
mod outcome_tests {
    use super::*;

    /// A tester resent an `agent.run` answered "not stored … send the request again" after a
    /// frozen database: the timed-out append had committed, and the turn was stored twice.
    #[test]
    fn an_append_without_an_answer_is_never_said_to_be_unstored() {
        let unanswered = StoreError::Unresponsive {
            context: "append the entries",
            seconds: 10,
        };
        assert!(outcome_unknown(&unanswered));
        let mut error = store_error(unanswered);
        error.message.push_str(OUTCOME_UNKNOWN);
        let message = closed_after(error).message;
        assert!(message.contains("may have been stored"), "{message}");
        assert!(message.contains("leaf_id"), "{message}");
        assert!(!message.contains("was not stored"), "{message}");

        let fenced = StoreError::Fenced {
            id: "s".to_owned(),
            token: 1,
        };
        assert!(!outcome_unknown(&fenced));
        let message = closed_after(store_error(fenced)).message;
        assert!(message.contains("was not stored"), "{message}");
        let refused = StoreError::Connect {
            reason: "Connection refused".to_owned(),
        };
        assert!(!outcome_unknown(&refused));
    }
}
