//! Files read as a stream, a piece at a time: `grep` searches and `read` pages through a file
//! of any size (a 100 MB log, a 2 GB dump) with bounded memory, where [`Jail::read`] takes at most
//! a bounded head. The file is opened as every jail read opens it: beneath the root, its real
//! place and its other names judged, never waiting for a writer, only a regular file.

use std::io::Read;
use std::path::Path;

use cap_std::fs::{OpenOptions, OpenOptionsExt as _};

use crate::{Jail, JailError, beneath};

/// A regular file opened beneath a jail for reading from its start ([`Jail::open_file`]).
#[derive(Debug)]
pub struct OpenedFile {
    file: std::fs::File,
    size: u64,
}

impl OpenedFile {
    /// The file's size when it was opened (it may grow or shrink while it is read).
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl Read for OpenedFile {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        self.file.read(buffer)
    }
}

impl Jail {
    /// The regular file at `path`, opened to be read as a stream. Anything else (a FIFO, a
    /// device, a socket, a directory) is refused before a byte is read, as [`Jail::read`] refuses it.
    pub fn open_file(&self, path: &Path) -> Result<OpenedFile, JailError> {
        let relative = self.stored_spelling(self.relative(path)?);
        let file = self.open_checked(&relative, |metadata| {
            if metadata.is_file() {
                Ok(())
            } else {
                Err(JailError::NotRegular {
                    path: self.root.join(&relative),
                })
            }
        })?;
        let size = file
            .metadata()
            .map_err(|source| self.io_error(&relative, source))?
            .len();
        Ok(OpenedFile { file, size })
    }

    /// The file at `relative`, opened for reading beneath the root (never waiting for a writer),
    /// its real place and other names checked against the denials and `check` asked about its
    /// metadata.
    pub(crate) fn open_checked(
        &self,
        relative: &Path,
        check: impl FnOnce(&std::fs::Metadata) -> Result<(), JailError>,
    ) -> Result<std::fs::File, JailError> {
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(libc::O_NONBLOCK);
        let file = self
            .dir
            .open_with(beneath(relative), &options)
            .map_err(|source| self.open_error(relative, source))?
            .into_std();
        self.check_opened(&file, relative)?;
        let metadata = file
            .metadata()
            .map_err(|source| self.io_error(relative, source))?;
        self.check_other_names(&metadata, relative)?;
        check(&metadata)?;
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;
    use std::path::Path;

    use crate::{Jail, JailError};

    #[test]
    fn a_file_of_any_size_is_read_to_its_end_and_a_fifo_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let content = "line\n".repeat(10_000);
        std::fs::write(dir.path().join("big.txt"), &content).unwrap();
        let jail = Jail::open_bare(dir.path()).unwrap();
        let mut opened = jail.open_file(Path::new("big.txt")).unwrap();
        assert_eq!(opened.size(), 50_000);
        let mut read = String::new();
        opened.read_to_string(&mut read).unwrap();
        assert_eq!(read, content);
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe"))
            .status()
            .unwrap();
        assert!(made.success());
        assert!(matches!(
            jail.open_file(Path::new("pipe")),
            Err(JailError::NotRegular { .. })
        ));
        std::fs::create_dir(dir.path().join("folder")).unwrap();
        assert!(jail.open_file(Path::new("folder")).is_err());
        assert!(jail.open_file(Path::new("../outside")).is_err());
    }
}
