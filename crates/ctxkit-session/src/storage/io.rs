//! The file operations under the session store: opening with the writer lock (again when the file
//! was renamed over), the same-file checks, writes and cuts that a test can make fail, and the
//! repair of a torn last line.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::LoadedSnapshot;
use crate::error::{Result, SessionError};
use crate::lock_holder::lock_holder;

/// Opens `path` for appending and takes its writer lock. When the file was replaced (renamed over by
/// a rewrite) between the open and the lock, the lock is on a file nobody reads any more: open again.
pub(super) fn open_locked(path: &Path) -> Result<File> {
    open_and_lock(path, true)
}

/// Opens the existing session file `path` for reading and appending and takes its writer lock, as
/// a session's first write does, for a writer that appends whole lines of its own (`ctxkit
/// import` appending to an earlier import): the lock is held until the returned file is dropped,
/// and another process holding it refuses this one with [`SessionError::Locked`]. A missing file
/// is an error, never created.
pub fn lock_session_file(path: &Path) -> Result<File> {
    open_and_lock(path, false)
}

fn open_and_lock(path: &Path, create: bool) -> Result<File> {
    const ATTEMPTS: usize = 8;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(create)
            .open(path)
            .map_err(SessionError::io("open for writing", path))?;
        lock(&file, path)?;
        if attempt >= ATTEMPTS || still_at(&file, path) {
            return Ok(file);
        }
    }
}

/// Whether `path` still names the open `file`.
#[cfg(unix)]
fn still_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        (Err(_), _) | (_, Err(_)) => false,
    }
}

#[cfg(not(unix))]
fn still_at(_file: &File, _path: &Path) -> bool {
    true
}

/// Whether two open files are the same file.
#[cfg(unix)]
pub(super) fn same_file(one: &File, other: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (one.metadata(), other.metadata()) {
        (Ok(one), Ok(other)) => one.dev() == other.dev() && one.ino() == other.ino(),
        (Err(_), _) | (_, Err(_)) => false,
    }
}

#[cfg(not(unix))]
pub(super) fn same_file(_one: &File, _other: &File) -> bool {
    false
}

/// The size and identity of an open file, as [`LoadedSnapshot`] records them.
pub(crate) fn current_snapshot(file: &File, path: &Path) -> Result<LoadedSnapshot> {
    let metadata = file
        .metadata()
        .map_err(SessionError::io("read metadata of", path))?;
    Ok(LoadedSnapshot {
        bytes: metadata.len(),
        inode: inode(&metadata),
    })
}

#[cfg(unix)]
fn inode(metadata: &std::fs::Metadata) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    Some(metadata.ino())
}

#[cfg(not(unix))]
fn inode(_metadata: &std::fs::Metadata) -> Option<u64> {
    None
}

fn lock(file: &File, path: &Path) -> Result<()> {
    // When the holder is gone by the time it is looked up, it has just released the lock: try again
    // (a few times) before refusing without a name.
    const ATTEMPTS: usize = 3;
    let mut attempt = 0;
    loop {
        attempt += 1;
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) => {
                let holder = lock_holder(file);
                if holder.is_some() || attempt >= ATTEMPTS {
                    return Err(SessionError::Locked {
                        path: path.to_owned(),
                        holder,
                    });
                }
            }
            Err(TryLockError::Error(source)) => {
                return Err(SessionError::Io {
                    action: "lock",
                    path: path.to_owned(),
                    source,
                });
            }
        }
    }
}

pub(super) fn file_length(file: &File, path: &Path) -> Result<u64> {
    Ok(file
        .metadata()
        .map_err(SessionError::io("read metadata of", path))?
        .len())
}

/// `write_all`, through a fault injector in tests.
pub(super) fn write_through(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    #[cfg(test)]
    if let Some(allowed) = fault::take_budget() {
        let cut = allowed.min(bytes.len());
        file.write_all(&bytes[..cut])?;
        if cut < bytes.len() {
            return Err(std::io::Error::from_raw_os_error(28));
        }
        return Ok(());
    }
    file.write_all(bytes)
}

/// `set_len`, through a fault injector in tests.
pub(super) fn cut_to(file: &File, length: u64) -> std::io::Result<()> {
    #[cfg(test)]
    if fault::take_failing_cut() {
        return Err(std::io::Error::from_raw_os_error(5));
    }
    file.set_len(length)
}

/// If the file does not end with a newline (an append was cut off), ends the fragment so the next
/// entry starts on its own line; the fragment stays, and `ctxkit check` reports it.
pub(super) fn terminate_torn_line(file: &mut File, path: &Path) -> Result<()> {
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

/// A fault injector for tests: the next write on this thread stops after N bytes with `ENOSPC`;
/// the next N cuts of a fragment fail with `EIO`.
#[cfg(test)]
pub(crate) mod fault {
    use std::cell::Cell;

    thread_local! {
        static BUDGET: Cell<Option<usize>> = const { Cell::new(None) };
        static FAILING_CUTS: Cell<usize> = const { Cell::new(0) };
    }

    pub(crate) fn fail_cuts(count: usize) {
        FAILING_CUTS.with(|cuts| cuts.set(count));
    }

    pub(crate) fn take_failing_cut() -> bool {
        FAILING_CUTS.with(|cuts| {
            let left = cuts.get();
            cuts.set(left.saturating_sub(1));
            left > 0
        })
    }

    pub(crate) fn fail_next_write_after(bytes: usize) {
        BUDGET.with(|budget| budget.set(Some(bytes)));
    }

    pub(crate) fn take_budget() -> Option<usize> {
        BUDGET.with(Cell::take)
    }
}
