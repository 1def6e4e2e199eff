//! Writing session files: one flushed line per append under an advisory lock, a torn last line
//! terminated before the first append, and whole-file rewrites (migration, new branched sessions) done
//! atomically with a temporary file and a rename.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Result, SessionError};

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
}

impl FileStore {
    /// A store for a file that does not exist yet.
    pub(crate) fn new_file(path: PathBuf) -> Self {
        Self {
            path,
            writer: None,
            written: 0,
            needs_rewrite: false,
        }
    }

    /// A store for a loaded file holding `written` records.
    pub(crate) fn existing(path: PathBuf, written: usize, needs_rewrite: bool) -> Self {
        Self {
            path,
            writer: None,
            written,
            needs_rewrite,
        }
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
            let mut file = OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .open(path)
                .map_err(SessionError::io("open for writing", path))?;
            lock(&file, path)?;
            terminate_torn_line(&mut file, path)?;
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

    /// Appends `lines`, each followed by a newline, in one write.
    pub(crate) fn append(&mut self, lines: &[&str]) -> Result<()> {
        let capacity = lines.iter().map(|line| line.len() + 1).sum();
        let mut buffer = String::with_capacity(capacity);
        for line in lines {
            buffer.push_str(line);
            buffer.push('\n');
        }
        let path = self.path.clone();
        let file = self.writer()?;
        file.write_all(buffer.as_bytes())
            .map_err(SessionError::io("append to", &path))?;
        file.flush().map_err(SessionError::io("flush", &path))?;
        self.written += lines.len();
        Ok(())
    }

    /// Replaces the whole file with `lines`, atomically, and keeps it locked for appends.
    pub(crate) fn rewrite(&mut self, lines: &[&str]) -> Result<()> {
        // Hold the lock of the current file while the new one is prepared.
        if self.path.exists() {
            self.writer()?;
        }
        write_atomic(&self.path, lines)?;
        self.writer = None;
        self.writer()?;
        self.written = lines.len();
        self.needs_rewrite = false;
        Ok(())
    }
}

fn lock(file: &File, path: &Path) -> Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(SessionError::Locked {
            path: path.to_owned(),
        }),
        Err(TryLockError::Error(source)) => Err(SessionError::Io {
            action: "lock",
            path: path.to_owned(),
            source,
        }),
    }
}

/// If the file does not end with a newline (an append was cut off), ends the fragment so the next
/// entry starts on its own line; the fragment stays, and `ctxkit check` reports it.
fn terminate_torn_line(file: &mut File, path: &Path) -> Result<()> {
    let length = file
        .metadata()
        .map_err(SessionError::io("read metadata of", path))?
        .len();
    if length == 0 {
        return Ok(());
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(length - 1))
        .map_err(SessionError::io("seek in", path))?;
    file.read_exact(&mut last)
        .map_err(SessionError::io("read", path))?;
    if last[0] != b'\n' {
        file.write_all(b"\n")
            .map_err(SessionError::io("append to", path))?;
    }
    Ok(())
}

/// Writes `lines` to `path` through a temporary file in the same directory and a rename, so readers
/// see the old file or the new one, never a part.
pub(crate) fn write_atomic(path: &Path, lines: &[&str]) -> Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        Some(_) | None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&directory)
        .map_err(SessionError::io("create directory", &directory))?;
    let mut temporary = tempfile::NamedTempFile::new_in(&directory)
        .map_err(SessionError::io("create a temporary file in", &directory))?;
    let mut buffer = String::with_capacity(lines.iter().map(|line| line.len() + 1).sum());
    for line in lines {
        buffer.push_str(line);
        buffer.push('\n');
    }
    temporary
        .write_all(buffer.as_bytes())
        .map_err(SessionError::io("write", temporary.path()))?;
    temporary
        .as_file()
        .sync_all()
        .map_err(SessionError::io("sync", temporary.path()))?;
    temporary.persist(path).map_err(|error| SessionError::Io {
        action: "replace",
        path: path.to_owned(),
        source: error.error,
    })?;
    Ok(())
}
