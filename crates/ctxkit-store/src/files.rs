//! The directory backend: today's JSONL files, one per session, in per-project folders under a
//! sessions root (`<root>/<encoded cwd>/<time>_<id>.jsonl`). The lease lives beside the file
//! (`….jsonl.lease`), read and written under an exclusive lock on that file, which is also held
//! while appending: on one machine (or a filesystem with working `flock`) this gives the same one
//! writer and the same fencing as the database.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::lines::{EntryFacts, SessionLines, check_entries, header_facts, next_checked};
use crate::store::{Lease, ListQuery, SessionStore, StoredSession};

/// Sessions as JSONL files under a sessions root.
#[derive(Debug, Clone)]
pub struct DirectoryStore {
    root: PathBuf,
}

/// The lease file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeaseRecord {
    owner: Option<String>,
    token: i64,
    expires_ms: i64,
}

/// The session id a stored file's name holds: `<time>_<id>.jsonl` (the time holds no `_`; the id
/// may), so `…_abc_def.jsonl` is session `abc_def`, never `def`.
fn session_id_of(name: &std::ffi::OsStr) -> Option<&str> {
    let (_, id) = name.to_str()?.strip_suffix(".jsonl")?.split_once('_')?;
    Some(id)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}

/// The lease file of a session file, open and exclusively locked, with what it holds.
struct LockedLease {
    file: File,
    path: PathBuf,
    record: LeaseRecord,
}

impl LockedLease {
    fn open(session_file: &Path) -> Result<Self> {
        let mut name = session_file.as_os_str().to_owned();
        name.push(".lease");
        let path = PathBuf::from(name);
        // Never through a link: the lease is rewritten in place.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(StoreError::io("open", &path))?;
        file.lock().map_err(StoreError::io("lock", &path))?;
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(StoreError::io("read", &path))?;
        // An empty or unreadable lease file is a session no one holds.
        let record = serde_json::from_str(&text).unwrap_or_default();
        Ok(Self { file, path, record })
    }

    fn save(&mut self) -> Result<()> {
        let text = serde_json::to_string(&self.record).map_err(|error| StoreError::Io {
            action: "write",
            path: self.path.clone(),
            source: std::io::Error::other(error),
        })?;
        let write = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(text.as_bytes())?;
            file.sync_data()
        };
        write(&mut self.file).map_err(StoreError::io("write", &self.path))
    }

    fn holds(&self, lease: &Lease) -> bool {
        self.record.token == lease.token && self.record.owner.is_some()
    }
}

impl DirectoryStore {
    /// A store over `root` (created when the first session is stored).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The sessions root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the store can be used: its root is a folder, or not there yet (the first session
    /// stored creates it).
    pub fn check(&self) -> Result<()> {
        match std::fs::metadata(&self.root) {
            Ok(metadata) if metadata.is_dir() => Ok(()),
            Ok(_) => Err(StoreError::io("read", &self.root)(std::io::Error::from(
                std::io::ErrorKind::NotADirectory,
            ))),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(StoreError::io("read", &self.root)(error)),
        }
    }

    /// The file of session `id`: the `*_<id>.jsonl` file in a project folder.
    pub fn find(&self, id: &str) -> Result<PathBuf> {
        let not_found = || StoreError::NotFound { id: id.to_owned() };
        if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
            return Err(not_found());
        }
        let Ok(projects) = std::fs::read_dir(&self.root) else {
            return Err(not_found());
        };
        for project in projects.flatten() {
            let Ok(files) = std::fs::read_dir(project.path()) else {
                continue;
            };
            for file in files.flatten() {
                if session_id_of(&file.file_name()) == Some(id) {
                    return Ok(file.path());
                }
            }
        }
        Err(not_found())
    }

    /// The ids of the sessions stored, sorted: of each project folder's `<time>_<id>.jsonl`.
    fn session_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|project| std::fs::read_dir(project.path()).ok())
            .flatten()
            .flatten()
            .filter_map(|file| session_id_of(&file.file_name()).map(str::to_owned))
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// Stores a new session: `header`, then each entry line `next_entry` gives (checked by it),
    /// written as it comes into a temporary file that becomes the session's file only when every
    /// line was good (a refused line leaves nothing behind).
    fn import_blocking<S: AsRef<str>>(
        &self,
        header_line: &str,
        mut next_entry: impl FnMut() -> Result<Option<(S, EntryFacts)>>,
    ) -> Result<StoredSession> {
        let header = header_facts(header_line).map_err(|reason| StoreError::InvalidSession {
            what: "the session to import".to_owned(),
            reason,
        })?;
        if ctxkit_session::file_safe_id(&header.id).is_some() {
            // A directory store names the file after the id, byte for byte.
            return Err(StoreError::InvalidSession {
                what: "the session to import".to_owned(),
                reason: "its id cannot name a file (letters, digits, `-`, `_` and `.`, not \
                         starting with `.`, at most 128 bytes); `ctxkit import` gives such a \
                         session a new id, and a database store keeps it"
                    .to_owned(),
            });
        }
        if self.find(&header.id).is_ok() {
            return Err(StoreError::Exists { id: header.id });
        }
        let dir = ctxkit_session::default_session_dir(&self.root, &header.cwd);
        std::fs::create_dir_all(&dir).map_err(StoreError::io("create", &dir))?;
        let path = dir.join(ctxkit_session::session_file_name(
            &header.timestamp,
            &header.id,
        ));
        let temporary =
            tempfile::NamedTempFile::new_in(&dir).map_err(StoreError::io("create", &dir))?;
        let written = temporary.path().to_owned();
        let mut writer = std::io::BufWriter::new(temporary);
        let write_line = |writer: &mut std::io::BufWriter<_>, line: &str| {
            writer
                .write_all(line.as_bytes())
                .and_then(|()| writer.write_all(b"\n"))
                .map_err(StoreError::io("write", &written))
        };
        write_line(&mut writer, header_line)?;
        while let Some((line, _)) = next_entry()? {
            write_line(&mut writer, line.as_ref())?;
        }
        let temporary = writer
            .into_inner()
            .map_err(|error| StoreError::io("write", &written)(error.into_error()))?;
        temporary
            .as_file()
            .sync_all()
            .map_err(StoreError::io("write", &written))?;
        temporary.persist_noclobber(&path).map_err(|error| {
            if error.error.kind() == std::io::ErrorKind::AlreadyExists {
                StoreError::Exists {
                    id: header.id.clone(),
                }
            } else {
                StoreError::Io {
                    action: "write",
                    path: path.clone(),
                    source: error.error,
                }
            }
        })?;
        stored_session(&path)
    }

    fn acquire_blocking(&self, id: &str, owner: &str, ttl: Duration) -> Result<Lease> {
        let path = self.find(id)?;
        let mut locked = LockedLease::open(&path)?;
        let now = now_ms();
        if let Some(holder) = &locked.record.owner
            && locked.record.expires_ms > now
            && holder != owner
        {
            return Err(StoreError::SessionInUse {
                id: id.to_owned(),
                owner: holder.clone(),
                expires_in_ms: locked.record.expires_ms - now,
            });
        }
        locked.record.token += 1;
        locked.record.owner = Some(owner.to_owned());
        locked.record.expires_ms = now.saturating_add(ttl_ms(ttl));
        locked.save()?;
        Ok(Lease {
            session_id: id.to_owned(),
            owner: owner.to_owned(),
            token: locked.record.token,
        })
    }

    /// Removes the session `id` and its lease file, as far as it can (a creation that failed).
    fn remove_blocking(&self, id: &str) {
        let Ok(path) = self.find(id) else { return };
        let mut lease = path.clone().into_os_string();
        lease.push(".lease");
        for removed in [PathBuf::from(lease), path] {
            // Best effort: the caller reports the failure that made the creation fail.
            let _ = std::fs::remove_file(removed);
        }
    }

    fn update_lease(&self, lease: &Lease, update: impl FnOnce(&mut LeaseRecord)) -> Result<()> {
        let path = self.find(&lease.session_id)?;
        let mut locked = LockedLease::open(&path)?;
        fenced_unless(locked.holds(lease), lease)?;
        update(&mut locked.record);
        locked.save()
    }

    fn append_blocking(&self, lease: &Lease, lines: &[String], ttl: Duration) -> Result<u64> {
        check_entries(&lease.session_id, lines)?;
        let path = self.find(&lease.session_id)?;
        let mut locked = LockedLease::open(&path)?;
        fenced_unless(locked.holds(lease), lease)?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(StoreError::io("open", &path))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(StoreError::io("read", &path))?;
        let existing = SessionLines::parse("", &bytes)
            .map(|existing| existing.entries)
            .unwrap_or_default();
        // An append retried after its answer was lost: its lines are the session's last ones.
        if !lines.is_empty() && existing.ends_with(lines) {
            locked.record.expires_ms = now_ms().saturating_add(ttl_ms(ttl));
            locked.save()?;
            return Ok(u64::try_from(existing.len()).unwrap_or(u64::MAX));
        }
        let mut text = Vec::new();
        // A torn last line is ended before the new entries (as the session library does).
        if bytes.last().is_some_and(|last| *last != b'\n') {
            text.push(b'\n');
        }
        for line in lines {
            text.extend_from_slice(line.as_bytes());
            text.push(b'\n');
        }
        file.write_all(&text)
            .and_then(|()| file.sync_data())
            .map_err(StoreError::io("append to", &path))?;
        locked.record.expires_ms = now_ms().saturating_add(ttl_ms(ttl));
        locked.save()?;
        Ok(u64::try_from(existing.len() + lines.len()).unwrap_or(u64::MAX))
    }

    fn list_blocking(&self, query: &ListQuery) -> Result<Vec<StoredSession>> {
        let found = crate::folder::list_store_records(&self.root, query)?;
        Ok(found.into_iter().map(|(session, _)| session).collect())
    }
}

/// The sessions of one project's folder (`ctxkit sessions --dir FOLDER`) that match `query`,
/// newest first; files that are not sessions are left out, as the unfiltered listing does.
pub fn list_folder(folder: &Path, query: &ListQuery) -> Result<Vec<StoredSession>> {
    let found = crate::folder::list_folder_records(folder, query)?;
    Ok(found.into_iter().map(|(session, _)| session).collect())
}

fn fenced_unless(holds: bool, lease: &Lease) -> Result<()> {
    if holds {
        Ok(())
    } else {
        Err(StoreError::Fenced {
            id: lease.session_id.clone(),
            token: lease.token,
        })
    }
}

/// Does `session` match `query` but for its text?
pub(crate) fn matches_facts(query: &ListQuery, session: &StoredSession) -> bool {
    if query
        .project
        .as_ref()
        .is_some_and(|project| *project != session.cwd)
    {
        return false;
    }
    if let Some(name) = &query.name {
        let wanted = name.to_lowercase();
        let found = session
            .name
            .as_ref()
            .is_some_and(|name| name.to_lowercase().contains(&wanted));
        if !found {
            return false;
        }
    }
    !(query
        .since_ms
        .is_some_and(|since| session.modified_ms < since)
        || query
            .until_ms
            .is_some_and(|until| session.modified_ms >= until))
}

/// The listing facts of the session file at `path`.
pub(crate) fn stored_session(path: &Path) -> Result<StoredSession> {
    // A line at a time: a session of a million entries is listed without being held.
    let mut lines = crate::lines::JsonlLines::open(path)?;
    let (_, header) = lines.header()?;
    let mut session = session_of_header(path, header);
    while let Some(line) = lines.next_line()? {
        add_entry(&mut session, &line);
    }
    Ok(session)
}

/// A session file's listing facts before its entries are read.
pub(crate) fn session_of_header(path: &Path, header: crate::lines::HeaderFacts) -> StoredSession {
    StoredSession {
        id: header.id,
        cwd: header.cwd,
        name: None,
        modified_ms: ctxkit_session::parse_timestamp_ms(&header.timestamp).unwrap_or(0),
        created: header.timestamp,
        last_message_ms: None,
        entries: 0,
        message_count: 0,
        first_message: None,
        parent_session: header.parent_session,
        location: path.display().to_string(),
    }
}

/// Adds an entry line (not blank) to a session file's listing facts.
pub(crate) fn add_entry(session: &mut StoredSession, line: &str) {
    session.entries += 1;
    let Ok(facts) = crate::lines::entry_facts(line) else {
        return;
    };
    if facts.name.is_some() {
        session.name = facts.name;
    }
    // Every message entry, as the file listing (and Pi's) counts them.
    if facts.kind == "message" {
        session.message_count += 1;
    }
    if let (Some(_), Some(time)) = (&facts.role, facts.timestamp_ms) {
        session.modified_ms = session.modified_ms.max(time);
        session.last_message_ms = Some(session.last_message_ms.map_or(time, |last| last.max(time)));
    }
    if session.first_message.is_none() {
        session.first_message = facts.user_text;
    }
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| StoreError::Io {
            action: "run",
            path: PathBuf::new(),
            source: std::io::Error::other(error.to_string()),
        })?
}

impl SessionStore for DirectoryStore {
    async fn import(&self, lines: &SessionLines) -> Result<StoredSession> {
        let (store, lines) = (self.clone(), lines.clone());
        blocking(move || {
            let mut entries = lines.entries.iter().enumerate();
            store.import_blocking(&lines.header, || next_checked(&mut entries))
        })
        .await
    }

    async fn import_file(&self, path: &Path) -> Result<StoredSession> {
        let (store, path) = (self.clone(), path.to_owned());
        blocking(move || {
            let mut lines = crate::lines::JsonlLines::open(&path)?;
            let (header, _) = lines.header()?;
            store.import_blocking(&header, || lines.next_entry())
        })
        .await
    }

    async fn create(&self, lines: &SessionLines, owner: &str, ttl: Duration) -> Result<Lease> {
        let (store, lines, owner) = (self.clone(), lines.clone(), owner.to_owned());
        blocking(move || {
            let mut entries = lines.entries.iter().enumerate();
            let stored = store.import_blocking(&lines.header, || next_checked(&mut entries))?;
            // A file cannot be written with its lease in one step: one that cannot be leased is
            // removed again.
            store
                .acquire_blocking(&stored.id, &owner, ttl)
                .inspect_err(|_| store.remove_blocking(&stored.id))
        })
        .await
    }

    async fn export(&self, id: &str) -> Result<SessionLines> {
        let path = self.find(id)?;
        let bytes = std::fs::read(&path).map_err(StoreError::io("read", &path))?;
        SessionLines::parse(&path.display().to_string(), &bytes)
    }

    async fn acquire(&self, id: &str, owner: &str, ttl: Duration) -> Result<Lease> {
        let (store, id, owner) = (self.clone(), id.to_owned(), owner.to_owned());
        blocking(move || store.acquire_blocking(&id, &owner, ttl)).await
    }

    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<()> {
        let (store, lease) = (self.clone(), lease.clone());
        blocking(move || {
            store.update_lease(&lease, |record| {
                record.expires_ms = now_ms().saturating_add(ttl_ms(ttl));
            })
        })
        .await
    }

    async fn release(&self, lease: &Lease) -> Result<()> {
        let (store, lease) = (self.clone(), lease.clone());
        blocking(move || {
            store.update_lease(&lease, |record| {
                record.owner = None;
                record.expires_ms = 0;
            })
        })
        .await
    }

    async fn append(&self, lease: &Lease, lines: &[String], ttl: Duration) -> Result<u64> {
        let (store, lease, lines) = (self.clone(), lease.clone(), lines.to_vec());
        blocking(move || store.append_blocking(&lease, &lines, ttl)).await
    }

    async fn resolve(&self, id_or_prefix: &str) -> Result<String> {
        let (store, prefix) = (self.clone(), id_or_prefix.to_owned());
        // One walk of the folders: the exact id is among the ids listed.
        blocking(move || crate::store::resolve_among(&prefix, store.session_ids())).await
    }

    async fn list(&self, query: &ListQuery) -> Result<Vec<StoredSession>> {
        let (store, query) = (self.clone(), query.clone());
        blocking(move || store.list_blocking(&query)).await
    }
}
