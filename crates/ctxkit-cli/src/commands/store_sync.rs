//! While a command appends to the private copy of a database session (`ctxkit chat --session ID`
//! runs for as long as the user talks), a thread commits the lines appended so far every second
//! under the session's lease, which each append renews (and a renewal when nothing was
//! appended), so a long command keeps the session and a crash loses at most the last second.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result};
use ctxkit_store::{AnyStore, Lease, SessionStore as _, StoreUrl};

/// How often the copy is committed.
const EVERY: Duration = Duration::from_secs(1);

/// The committing thread of one copy.
pub struct Syncer {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
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
        let stop = Arc::new(AtomicBool::new(false));
        let copy = Arc::new(Copy {
            path: path.to_owned(),
            synced: Mutex::new(synced),
        });
        let (url, lease, thread_stop) = (url.clone(), lease.clone(), Arc::clone(&stop));
        let thread = std::thread::spawn(move || -> Result<()> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            runtime.block_on(async {
                // A connection of its own: the caller's runtime is blocked in the command.
                let store = AnyStore::open(&url).await?;
                loop {
                    let stopping = thread_stop.load(Ordering::SeqCst);
                    commit(&store, (&lease, lease_duration), &copy).await?;
                    if stopping {
                        return Ok(());
                    }
                    tokio::time::sleep(EVERY).await;
                }
            })
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }

    /// Commits what is left and stops; the first failure of the thread, if any.
    pub fn finish(mut self) -> Result<()> {
        self.stop.store(true, Ordering::SeqCst);
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => anyhow::bail!("the thread storing the session stopped unexpectedly"),
            None => Ok(()),
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
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
