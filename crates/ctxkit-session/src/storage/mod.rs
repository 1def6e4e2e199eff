//! Writing session files: one flushed line per append under an advisory lock, a torn last line
//! terminated before the first append, and whole-file writes (a new file's first records, migration,
//! new branched sessions) done atomically with a temporary file and a rename.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;

use crate::atomic::{sync_directory, write_atomic, write_new};
use crate::body::{BodyFile, DEFAULT_CACHE_BYTES};
use crate::error::{Result, SessionError};
use crate::load::KeptLine;
use crate::watch::{ExpectedEnd, check_file};

mod io;

pub(crate) use io::current_snapshot;
#[cfg(test)]
pub(crate) use io::fault;
pub use io::lock_session_file;
use io::{cut_to, file_length, open_locked, same_file, terminate_torn_line, write_through};

/// Why a loaded file is never written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteBlocker {
    /// The header names this newer format version.
    NewerVersion(u64),
    /// An older file holding invalid UTF-8: migrating it would replace those bytes.
    InvalidUtf8,
}

/// How far an append goes towards the disk before it returns. Every mode writes each append as one
/// `write` of whole lines; they differ in when the kernel is asked to put the data on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Write and flush each append (the default): an acknowledged entry survives the process being
    /// killed, not the machine losing power.
    #[default]
    Flush,
    /// Also `fsync` (`fdatasync`) after each append: an acknowledged entry survives power loss.
    SyncEach,
    /// `fsync` after every N appends (and when the session is dropped): power loss loses at most the
    /// last N - 1 acknowledged entries.
    SyncEvery(NonZeroU32),
}

/// What the file was when it was loaded, so a whole-file rewrite can tell whether another process
/// changed it since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LoadedSnapshot {
    pub(crate) bytes: u64,
    pub(crate) inode: Option<u64>,
}

/// The file side of a persisted session.
#[derive(Debug)]
pub(crate) struct FileStore {
    pub(crate) path: PathBuf,
    /// Open for appending and locked, from the first write on.
    writer: Option<File>,
    /// How many records (header included) are on disk.
    pub(crate) written: usize,
    /// The file on disk is in an older format: rewrite it whole before appending.
    pub(crate) needs_rewrite: bool,
    /// The file as it was loaded (`None` for a new file).
    snapshot: Option<LoadedSnapshot>,
    durability: Durability,
    /// Appends since the last `fsync` (for [`Durability::SyncEvery`]).
    unsynced: u32,
    /// Where the last acknowledged record ends, once the writer is open.
    end: Option<u64>,
    /// A reader on the file the writer holds (opened without its lock), through which appended
    /// lines left on disk are read back; `None` until the first such line, and after a rewrite.
    reader: Option<Arc<BodyFile>>,
    /// Lines of an older file that are not entries, kept in place by its migration.
    pub(crate) kept_lines: Vec<KeptLine>,
    /// Why the file must not be written at all (a newer format) or migrated (bytes that would be
    /// lost), if so.
    pub(crate) write_blocker: Option<WriteBlocker>,
    /// A write failed: set until the file is back at `end`, ending in a newline. While set, the next
    /// append repairs the tail first and is refused when it cannot.
    failed_write: bool,
}

impl FileStore {
    /// A store for a file that does not exist yet.
    pub(crate) fn new_file(path: PathBuf) -> Self {
        Self::at(path, 0, false, None)
    }

    /// A store for a loaded file holding `written` records.
    pub(crate) fn existing(
        path: PathBuf,
        written: usize,
        needs_rewrite: bool,
        snapshot: LoadedSnapshot,
    ) -> Self {
        Self::at(path, written, needs_rewrite, Some(snapshot))
    }

    /// A store with nothing open yet and the default durability.
    fn at(
        path: PathBuf,
        written: usize,
        needs_rewrite: bool,
        snapshot: Option<LoadedSnapshot>,
    ) -> Self {
        Self {
            path,
            writer: None,
            written,
            needs_rewrite,
            snapshot,
            durability: Durability::default(),
            unsynced: 0,
            end: None,
            reader: None,
            failed_write: false,
            kept_lines: Vec::new(),
            write_blocker: None,
        }
    }

    pub(crate) fn durability(&self) -> Durability {
        self.durability
    }

    pub(crate) fn set_durability(&mut self, durability: Durability) {
        self.durability = durability;
    }

    fn writer(&mut self) -> Result<&mut File> {
        if self.writer.is_none() {
            let path = &self.path;
            if let Some(parent) = path
                .parent()
                .filter(|parent| !parent.as_os_str().is_empty())
            {
                std::fs::create_dir_all(parent)
                    .map_err(SessionError::io("create directory", parent))?;
            }
            let mut file = open_locked(path)?;
            // Another process wrote since the file was loaded: appending from this stale view would
            // start a branch off an old leaf, so the newer entries would fall out of the context.
            if let Some(snapshot) = self.snapshot
                && snapshot != current_snapshot(&file, path)?
            {
                return Err(SessionError::ChangedOnDisk {
                    path: path.to_owned(),
                });
            }
            terminate_torn_line(&mut file, path)?;
            self.end = Some(file_length(&file, path)?);
            self.snapshot = None;
            self.writer = Some(file);
        }
        match self.writer.as_mut() {
            Some(file) => Ok(file),
            None => Err(SessionError::Io {
                action: "open for writing",
                path: self.path.clone(),
                source: std::io::Error::other("writer unavailable"),
            }),
        }
    }

    /// Takes the writer lock of an existing file now instead of at the first append, so other
    /// writers are refused from now on. A new file is locked when it is created.
    pub(crate) fn hold(&mut self) -> Result<()> {
        self.check_writable()?;
        if self.snapshot.is_some() && self.writer.is_none() {
            self.writer()?;
        }
        Ok(())
    }

    /// Refuses when the file must never be written (newer format) or migrated (lossy).
    pub(crate) fn check_writable(&self) -> Result<()> {
        match self.write_blocker {
            None => Ok(()),
            Some(WriteBlocker::NewerVersion(version)) => Err(SessionError::NewerVersion {
                path: self.path.clone(),
                version,
                supported: ctxkit_protocol::CURRENT_SESSION_VERSION,
            }),
            Some(WriteBlocker::InvalidUtf8) if self.needs_rewrite => {
                Err(SessionError::CannotMigrate {
                    path: self.path.clone(),
                    reason: "it holds bytes that are not UTF-8".to_owned(),
                })
            }
            Some(WriteBlocker::InvalidUtf8) => Ok(()),
        }
    }

    /// Whether a write failed and the file has not been brought back to its last acknowledged
    /// record since; the deferred first write stops deferring then.
    pub(crate) fn has_failed_write(&self) -> bool {
        self.failed_write
    }

    /// Appends `lines`, each followed by a newline, in one write. The first records of a new file
    /// (its header and the entries held back until then) are written atomically instead, so a crash
    /// never leaves a file without a whole header. A write that fails is rolled back to the last
    /// acknowledged record; when that fails too, the next append repairs the tail first and is
    /// refused ([`SessionError::TailUnrepaired`]) when it cannot, so no entry is ever written after
    /// a fragment. Returns where the first of `lines` starts in the file.
    pub(crate) fn append(&mut self, lines: &[&str]) -> Result<u64> {
        self.check_writable()?;
        if self.written == 0 && self.writer.is_none() && self.snapshot.is_none() {
            self.create(lines)
                .inspect_err(|_| self.failed_write = true)?;
            return Ok(0);
        }
        let capacity = lines.iter().map(|line| line.len() + 1).sum();
        let mut buffer = String::with_capacity(capacity);
        for line in lines {
            buffer.push_str(line);
            buffer.push('\n');
        }
        let durability = self.durability;
        let sync = match durability {
            Durability::Flush => false,
            Durability::SyncEach => true,
            Durability::SyncEvery(every) => self.unsynced + 1 >= every.get(),
        };
        self.writer()?;
        self.check_unchanged()?;
        if self.failed_write {
            self.repair_tail()?;
        }
        if let Err(error) = self.write_buffer(buffer.as_bytes(), sync) {
            self.failed_write = true;
            // Best effort at once; the next append checks again and refuses when it still fails.
            let _ = self.repair_tail();
            return Err(error);
        }
        let start = self.end.unwrap_or_default();
        if let Some(end) = self.end.as_mut() {
            *end += buffer.len() as u64;
        }
        if sync {
            self.unsynced = 0;
        } else if durability != Durability::Flush {
            self.unsynced += 1;
        }
        self.written += lines.len();
        Ok(start)
    }

    /// A reader on the file the writer holds, for lines appended to it that are left on disk:
    /// opened once, without the writer's lock, and only when the path still names the writer's
    /// file (`None` otherwise: such lines stay in memory).
    pub(crate) fn reader(&mut self) -> Option<Arc<BodyFile>> {
        if self.reader.is_none() {
            let writer = self.writer.as_ref()?;
            let file = File::open(&self.path).ok()?;
            if !same_file(writer, &file) {
                return None;
            }
            self.reader = Some(Arc::new(BodyFile::new(
                file,
                &self.path,
                DEFAULT_CACHE_BYTES,
            )));
        }
        self.reader.clone()
    }

    fn write_buffer(&mut self, bytes: &[u8], sync: bool) -> Result<()> {
        let path = self.path.clone();
        let file = self.writer()?;
        write_through(file, bytes).map_err(SessionError::io("append to", &path))?;
        file.flush().map_err(SessionError::io("flush", &path))?;
        if sync {
            file.sync_data().map_err(SessionError::io("sync", &path))?;
        }
        Ok(())
    }

    /// Refuses when the file at the path is no longer the one the writer holds, or does not end
    /// where the last acknowledged record ends ([`crate::watch`]). Nothing to check before the
    /// writer is open (the loaded snapshot is checked when it opens).
    pub(crate) fn check_unchanged(&self) -> Result<()> {
        let (Some(file), Some(end)) = (&self.writer, self.end) else {
            return Ok(());
        };
        let expected = if self.failed_write {
            ExpectedEnd::AtLeast(end)
        } else {
            ExpectedEnd::Exactly(end)
        };
        match check_file(file, &self.path, expected)
            .map_err(SessionError::io("check", &self.path))?
        {
            None => Ok(()),
            Some(change) => Err(SessionError::FileChanged {
                path: self.path.clone(),
                change,
            }),
        }
    }

    /// Cuts what a failed write left after the last acknowledged record (bytes nobody was told
    /// about) and checks that the file ends there, on a newline.
    fn repair_tail(&mut self) -> Result<()> {
        let path = self.path.clone();
        let unrepaired = |reason: String| SessionError::TailUnrepaired {
            path: path.clone(),
            reason,
        };
        let Some(end) = self.end else {
            return Err(unrepaired("the writer was never opened".to_owned()));
        };
        let Some(file) = self.writer.as_mut() else {
            return Err(unrepaired("the writer is closed".to_owned()));
        };
        let length = file_length(file, &path)?;
        if length < end {
            return Err(unrepaired(format!(
                "the file is shorter ({length} bytes) than its acknowledged records ({end} bytes)"
            )));
        }
        if length > end {
            cut_to(file, end)
                .map_err(|error| unrepaired(format!("cannot cut the fragment: {error}")))?;
        }
        if end > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(end - 1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(|error| unrepaired(format!("cannot verify the tail: {error}")))?;
            if last[0] != b'\n' {
                return Err(unrepaired("the last record does not end a line".to_owned()));
            }
        }
        self.failed_write = false;
        Ok(())
    }

    /// Creates the file with `lines` (never replacing one that appeared meanwhile) and locks it.
    fn create(&mut self, lines: &[&str]) -> Result<()> {
        self.reader = None;
        write_new(&self.path, lines)?;
        if self.durability != Durability::Flush {
            sync_directory(&self.path)?;
        }
        self.writer()?;
        self.written = lines.len();
        self.failed_write = false;
        Ok(())
    }

    /// Replaces the whole file with `lines`, atomically, and keeps it locked for appends. Refused
    /// when another process changed the file since it was loaded: its entries would be lost.
    pub(crate) fn rewrite(&mut self, lines: &[&str]) -> Result<()> {
        self.check_writable()?;
        self.check_unchanged()?;
        // Hold the lock of the current file while the new one is prepared.
        let _held = if self.writer.is_none() && self.path.exists() {
            let file = open_locked(&self.path)?;
            if let Some(snapshot) = self.snapshot
                && snapshot != current_snapshot(&file, &self.path)?
            {
                return Err(SessionError::ChangedOnDisk {
                    path: self.path.clone(),
                });
            }
            Some(file)
        } else {
            None
        };
        write_atomic(&self.path, lines)?;
        self.reader = None;
        self.snapshot = None;
        if self.durability != Durability::Flush {
            sync_directory(&self.path)?;
        }
        self.writer = None;
        self.writer()?;
        self.written = lines.len();
        self.needs_rewrite = false;
        self.failed_write = false;
        Ok(())
    }
}

impl Drop for FileStore {
    fn drop(&mut self) {
        if self.unsynced > 0
            && let Some(file) = &self.writer
        {
            // Best effort: an error here has nobody to go to; appends already returned.
            let _ = file.sync_data();
        }
    }
}
