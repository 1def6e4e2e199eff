//! While a command appends to the private copy of a database session (`ctxkit chat --session ID`
//! runs for as long as the user talks), a thread commits the lines appended so far every second
//! under the session's lease, which each append renews (and a renewal when nothing was
//! appended), so a long command keeps the session and a crash loses at most the last second.
//!
//! A commit that fails is never the end of storing: while the database does not answer, the lines
//! stay in the copy and each second a fresh connection tries again (an append sent again after a
//! lost answer is stored once), until the session is taken over by another writer. What the
//! thread knows is shared as a [`SyncStatus`], which the chat reads before each prompt to tell the
//! user at once, not at exit.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use ctxkit_store::{AnyStore, Lease, SessionStore as _, StoreError, StoreUrl};

/// How often the copy is committed.
const EVERY: Duration = Duration::from_secs(1);

/// How often a waiting chat looks at the thread's progress.
const POLL: Duration = Duration::from_millis(10);

/// Whether what the command wrote is in the database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Health {
    /// Every complete line is stored (as of the last commit).
    #[default]
    Stored,
    /// The last commit failed (the database does not answer, or refused it): the lines wait in
    /// the copy and are tried again every second. The error, as shown.
    Behind { error: String },
    /// The session can no longer be written by this command (another writer took it over, it was
    /// deleted): nothing more is tried. The error, as shown.
    Lost { error: String },
}

/// What the committing thread shares with the command it stores for: its progress and a way to
/// ask for a commit now. Cloned into the chat (`ChatArgs::store_sync`).
#[derive(Debug, Clone, Default)]
pub struct SyncStatus(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    progress: Mutex<Progress>,
    wake: tokio::sync::Notify,
    stop: AtomicBool,
}

#[derive(Debug, Clone, Default)]
struct Progress {
    /// Commits started and finished, in order (one at a time).
    started: u64,
    finished: u64,
    health: Health,
}

impl SyncStatus {
    /// The health as of the last commit.
    pub fn health(&self) -> Health {
        self.progress().health
    }

    /// Asks for a commit now and waits for one that started after this call, at most `wait`:
    /// its health (the last known one when it took longer, or when the thread ended).
    pub async fn commit_now(&self, wait: Duration) -> Health {
        let target = self.progress().started + 1;
        self.0.wake.notify_one();
        let deadline = Instant::now() + wait;
        loop {
            let progress = self.progress();
            let ended = self.0.stop.load(Ordering::SeqCst);
            if progress.finished >= target
                || ended
                || matches!(progress.health, Health::Lost { .. })
                || Instant::now() >= deadline
            {
                return progress.health;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    fn progress(&self) -> Progress {
        self.0
            .progress
            .lock()
            .map(|progress| progress.clone())
            .unwrap_or_default()
    }

    fn begin(&self) {
        if let Ok(mut progress) = self.0.progress.lock() {
            progress.started += 1;
        }
    }

    fn end(&self, health: Health) {
        if let Ok(mut progress) = self.0.progress.lock() {
            progress.finished = progress.started;
            progress.health = health;
        }
    }
}

/// The committing thread of one copy.
pub struct Syncer {
    status: SyncStatus,
    copy: Arc<Copy>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
}

/// How the committing ended.
#[derive(Debug)]
pub struct Finished {
    /// The error of the last commit, or of the one that ended the thread.
    pub result: Result<()>,
    /// Whether the copy holds complete lines the database did not take.
    pub unstored: bool,
}

/// What both the thread and the final commit share: where the copy is, how much of it is stored.
struct Copy {
    path: PathBuf,
    synced: Mutex<u64>,
}

impl Syncer {
    /// Starts committing what is appended to `path` after its first `synced` bytes.
    /// The lease is renewed for `lease_duration` at each commit.
    pub fn start(
        url: &StoreUrl,
        (lease, lease_duration): (&Lease, Duration),
        path: &Path,
        synced: u64,
    ) -> Self {
        let status = SyncStatus::default();
        let copy = Arc::new(Copy {
            path: path.to_owned(),
            synced: Mutex::new(synced),
        });
        let (url, lease, thread_status) = (url.clone(), lease.clone(), status.clone());
        let thread_copy = Arc::clone(&copy);
        let thread = std::thread::spawn(move || -> Result<()> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            runtime.block_on(commit_until_stopped(
                &url,
                (&lease, lease_duration),
                &thread_copy,
                &thread_status,
            ))
        });
        Self {
            status,
            copy,
            thread: Some(thread),
        }
    }

    /// What the command shows the user of the thread's progress.
    pub fn status(&self) -> SyncStatus {
        self.status.clone()
    }

    /// Commits what is left and stops: how it ended.
    pub fn finish(mut self) -> Finished {
        self.status.0.stop.store(true, Ordering::SeqCst);
        self.status.0.wake.notify_one();
        let result = match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(anyhow::anyhow!(
                "the thread storing the session stopped unexpectedly"
            )),
            None => Ok(()),
        };
        let unstored = result.is_err() && self.copy.holds_unstored_lines();
        Finished { result, unstored }
    }
}

impl Copy {
    /// Whether the copy holds a complete line past what is stored (unreadable: assumed so).
    fn holds_unstored_lines(&self) -> bool {
        let Ok(synced) = self.synced.lock().map(|synced| *synced) else {
            return true;
        };
        match std::fs::read(&self.path) {
            Ok(bytes) => bytes
                .get(usize::try_from(synced).unwrap_or(usize::MAX)..)
                .is_none_or(|rest| rest.contains(&b'\n')),
            Err(_) => true,
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        self.status.0.stop.store(true, Ordering::SeqCst);
        self.status.0.wake.notify_one();
    }
}

/// The thread's loop: a commit every second (or when asked), a last one when stopped. A failed
/// commit is tried again with a fresh connection; a lost session ends the loop.
async fn commit_until_stopped(
    url: &StoreUrl,
    (lease, lease_duration): (&Lease, Duration),
    copy: &Copy,
    status: &SyncStatus,
) -> Result<()> {
    // A connection of its own (the caller's runtime is blocked in the command), opened again
    // after a failure: a database that restarted is reached through new connections.
    let mut store: Option<AnyStore> = None;
    loop {
        let stopping = status.0.stop.load(Ordering::SeqCst);
        status.begin();
        let attempt = match &store {
            Some(store) => commit(store, (lease, lease_duration), copy).await,
            None => match AnyStore::open(url).await {
                Ok(opened) => {
                    let attempt = commit(&opened, (lease, lease_duration), copy).await;
                    store = Some(opened);
                    attempt
                }
                Err(error) => Err(anyhow::Error::new(error)),
            },
        };
        match attempt {
            Ok(()) => status.end(Health::Stored),
            Err(error) if is_lost(&error) => {
                status.end(Health::Lost {
                    error: format!("{error:#}"),
                });
                return Err(error);
            }
            Err(error) => {
                store = None;
                status.end(Health::Behind {
                    error: format!("{error:#}"),
                });
                if stopping {
                    return Err(error);
                }
            }
        }
        if stopping {
            return Ok(());
        }
        tokio::select! {
            () = tokio::time::sleep(EVERY) => {}
            () = status.0.wake.notified() => {}
        }
    }
}

/// Whether a commit's error means the session can no longer be written by this command: taken
/// over, or gone. Any other (the database down, frozen, refusing) may pass.
pub fn is_lost(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<StoreError>(),
            Some(StoreError::Fenced { .. } | StoreError::NotFound { .. })
        )
    })
}

/// Appends the complete lines after the stored part of the copy, or renews the lease.
async fn commit(
    store: &AnyStore,
    (lease, lease_duration): (&Lease, Duration),
    copy: &Copy,
) -> Result<()> {
    let synced = *copy
        .synced
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?;
    let mut file = std::fs::File::open(&copy.path).context("cannot read the session copy")?;
    let length = file.metadata()?.len();
    anyhow::ensure!(
        length >= synced,
        "the command rewrote session `{}` instead of appending; nothing more was stored",
        lease.session_id
    );
    file.seek(SeekFrom::Start(synced))?;
    let mut appended = Vec::new();
    file.read_to_end(&mut appended)?;
    let Some(end) = appended.iter().rposition(|byte| *byte == b'\n') else {
        store
            .renew(lease, lease_duration)
            .await
            .context("the session's lease")?;
        return Ok(());
    };
    let text = std::str::from_utf8(&appended[..end]).context("the command wrote invalid UTF-8")?;
    let lines: Vec<String> = text
        .split('\n')
        .filter(|line| !line.trim().is_empty())
        .map(str::to_owned)
        .collect();
    if !lines.is_empty() {
        store.append(lease, &lines, lease_duration).await?;
    }
    if let Ok(mut stored) = copy.synced.lock() {
        *stored = synced + end as u64 + 1;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, reason = "tests")]
mod tests {
    use std::io::Write as _;

    use ctxkit_store::{DirectoryStore, SessionLines};

    use super::*;

    fn line(id: &str, parent: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-11-20T10:00:00.000Z","message":{{"role":"user","content":"{id}","timestamp":1763632800000}}}}"#
        )
    }

    fn append_to(path: &Path, text: &str) {
        let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        writeln!(file, "{text}").unwrap();
    }

    /// A chat whose session another writer took over learns it at its next commit, the thread
    /// stops, and what it had not stored is known to be unstored (the chat used to learn it at
    /// exit only, and lose those turns).
    #[test]
    fn a_session_taken_over_is_reported_lost_with_its_unstored_lines() {
        let root = tempfile::tempdir().unwrap();
        let header = r#"{"type":"session","version":3,"id":"s-1","timestamp":"2025-11-20T10:00:00.000Z","cwd":"/p"}"#;
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let store = DirectoryStore::new(root.path());
        let lines = SessionLines {
            header: header.to_owned(),
            entries: vec![line("e0", "")],
        };
        runtime.block_on(store.import(&lines)).unwrap();
        let short = Duration::from_millis(1);
        let lease = runtime
            .block_on(store.acquire("s-1", "chat", short))
            .unwrap();
        let folder = tempfile::tempdir().unwrap();
        let copy = folder.path().join("s-1.jsonl");
        let before = lines.to_jsonl();
        std::fs::write(&copy, &before).unwrap();
        let url = StoreUrl::Directory(root.path().to_owned());
        let syncer = Syncer::start(&url, (&lease, short), &copy, before.len() as u64);
        let status = syncer.status();
        append_to(&copy, &line("e1", "e0"));
        let health = runtime.block_on(status.commit_now(Duration::from_secs(10)));
        assert_eq!(health, Health::Stored);
        // The lease (1 ms) runs out; another writer takes the session.
        std::thread::sleep(Duration::from_millis(20));
        runtime
            .block_on(store.acquire("s-1", "serve", Duration::from_secs(60)))
            .unwrap();
        append_to(&copy, &line("e2", "e1"));
        let health = runtime.block_on(status.commit_now(Duration::from_secs(10)));
        let Health::Lost { error } = health else {
            panic!("not lost: {health:?}");
        };
        assert!(error.contains("taken over"), "{error}");
        let finished = syncer.finish();
        assert!(finished.unstored);
        assert!(is_lost(&finished.result.unwrap_err()));
        let stored = runtime.block_on(store.export("s-1")).unwrap();
        assert_eq!(stored.entries.len(), 2);
    }
}
