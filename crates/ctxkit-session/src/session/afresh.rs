//! When the session file changed under the session (deleted, moved, rewritten by another program),
//! the session is refused further appends ([`crate::SessionError::FileChanged`]) and can be
//! written afresh, whole, to a new file; nothing held in memory is lost.

use std::path::PathBuf;

use ctxkit_protocol::SessionHeader;

use super::{Session, Storage};
use crate::error::Result;
use crate::ids::{new_session_id, now_iso};

impl Session {
    /// Checks that the session file is still the one this session writes to and ends where its last
    /// write ended, as every append does first: [`crate::SessionError::FileChanged`] when another
    /// program deleted, moved, replaced, cut or extended it. `Ok` in memory and before the first
    /// write.
    pub fn check_file(&self) -> Result<()> {
        match &self.storage {
            Storage::File(store) => store.check_unchanged(),
            Storage::Memory => Ok(()),
        }
    }

    /// Writes the whole session (a new header, then every entry held in memory, ids and tree
    /// unchanged) atomically to a new file in the session directory, locked, and appends there from
    /// now on. The new header has a new session id (the old file may still exist and name the old
    /// one) and names the old file as its parent session while a file is at its path (another
    /// program appended to it, cut it, replaced it; `/save`), as a fork does, so listings link the
    /// two; a file gone from its path (deleted, moved) is not named, and the parent session is kept.
    /// Returns the new file, `None` for a session in memory. The old file is left as it is.
    pub fn write_afresh(&mut self) -> Result<Option<PathBuf>> {
        if matches!(self.storage, Storage::Memory) {
            return Ok(None);
        }
        if self.session_dir.is_none() {
            self.session_dir = self
                .path()
                .and_then(|path| path.parent())
                .map(std::path::Path::to_owned);
        }
        let parent_session = match self.path().filter(|path| path.is_file()) {
            // Absolute, as Pi writes it: the link is read from other directories.
            Some(old_file) => Some(
                std::path::absolute(old_file)
                    .unwrap_or_else(|_| old_file.to_owned())
                    .display()
                    .to_string(),
            ),
            None => self.header.parent_session.clone(),
        };
        self.header = SessionHeader::new(
            new_session_id(),
            now_iso(),
            self.header.cwd.clone(),
            parent_session,
        );
        let path = self.reset_storage();
        self.rewrite_all()?;
        Ok(path)
    }
}
