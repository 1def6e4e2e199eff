//! Writing an existing file in place, where replacing it by a new file (`atomic`) is refused: a
//! bind-mounted file cannot be renamed over (`EBUSY`), nor a file on another device (`EXDEV`), and
//! a folder this user may not write refuses the temporary file though the file itself may be
//! written. Pi 1.6.0 always writes in place; ctxkit does so only then, and never for a file with
//! other names (hard links): one of them may lie outside the project, so the name in the project is
//! replaced and parted from the others.
//!
//! A failed write still never destroys the file: the old content is kept in memory (at most
//! [`MAX_IN_PLACE_BYTES`]), room for a longer content is taken before a byte is changed, and a
//! write that fails part way puts the old content back. The file keeps its inode, so its mode,
//! owner and other names stay as they were.

use std::io::Read as _;
use std::os::unix::fs::FileExt as _;
use std::path::Path;

use cap_std::fs::{Dir, MetadataExt as _, OpenOptions, OpenOptionsExt as _};

use crate::atomic::{AtomicWrite, Existing};
use crate::{Jail, JailError};

/// The largest existing file written in place: its old content is held to be put back.
pub const MAX_IN_PLACE_BYTES: u64 = 256 * 1024 * 1024;

/// Replaces the existing file `name` in `dir` by a new one: [`replace_atomically`] in use; tests
/// give their own, since a test run as root may rename in any folder.
pub(crate) type Replacer = fn(&Dir, &Path, &[u8]) -> std::io::Result<()>;

/// The one atomic write, replacing the file (`atomic`).
pub(crate) fn replace_atomically(dir: &Dir, name: &Path, content: &[u8]) -> std::io::Result<()> {
    let write = AtomicWrite {
        existing: Existing::Replace,
        new_mode: 0o666,
    };
    write.write_in(dir, name, content)
}

/// Whether the system refused to replace the file for where it is rather than for what was
/// written: a mount point (`EBUSY`), another device (`EXDEV`), a folder this user may not write
/// (`EACCES`, `EPERM`). Writing in place may still succeed then.
fn replacing_refused(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EBUSY | libc::EXDEV | libc::EACCES | libc::EPERM)
    )
}

impl Jail {
    /// Writes `content` to `name` in `dir` (`relative` beneath the root): replaced by `replace`,
    /// and written in place when the system refuses to replace an existing file that has no
    /// other name. A file the folder refuses is [`JailError::FolderReadOnly`].
    pub(crate) fn write_replacing(
        &self,
        dir: &Dir,
        relative: &Path,
        name: &Path,
        content: &[u8],
        replace: Replacer,
    ) -> Result<(), JailError> {
        let existing = dir
            .symlink_metadata(name)
            .ok()
            .filter(|metadata| metadata.is_file());
        // A file with other names is never written in place: an other name may lie outside the
        // project (pnpm's store, linked into `node_modules`; a link the project's archive made),
        // and finding every name of a file would mean walking the disk. Replacing the name here
        // parts it from the others, which keep their text.
        let single_name = existing
            .as_ref()
            .is_some_and(|metadata| metadata.nlink() <= 1);
        match replace(dir, name, content) {
            Ok(()) => Ok(()),
            Err(source) if replacing_refused(&source) && single_name => {
                self.write_in_place(dir, relative, name, content)
            }
            Err(source) if matches!(source.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {
                Err(JailError::FolderReadOnly {
                    path: self.root.join(relative),
                    folder: self.root.join(relative.parent().unwrap_or(Path::new(""))),
                    source,
                })
            }
            Err(source) => Err(self.io_error(relative, source)),
        }
    }

    /// Writes `content` over the existing regular file `name` in `dir`, keeping its inode (see
    /// the module comment). The file is opened as a read is, never through a symlink, and refused
    /// when any of its names lies in a denied place.
    fn write_in_place(
        &self,
        dir: &Dir,
        relative: &Path,
        name: &Path,
        content: &[u8],
    ) -> Result<(), JailError> {
        let mut options = OpenOptions::new();
        options
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        let file = dir
            .open_with(name, &options)
            .map_err(|source| self.io_error(relative, source))?
            .into_std();
        let metadata = file
            .metadata()
            .map_err(|source| self.io_error(relative, source))?;
        if !metadata.is_file() {
            return Err(JailError::NotRegular {
                path: self.root.join(relative),
            });
        }
        self.check_opened(&file, relative)?;
        self.check_other_names(&metadata, relative)?;
        let mut previous = Vec::new();
        (&file)
            .take(MAX_IN_PLACE_BYTES.saturating_add(1))
            .read_to_end(&mut previous)
            .map_err(|source| self.io_error(relative, source))?;
        if u64::try_from(previous.len()).unwrap_or(u64::MAX) > MAX_IN_PLACE_BYTES {
            return Err(JailError::TooLarge {
                path: self.root.join(relative),
                max: MAX_IN_PLACE_BYTES,
            });
        }
        write_over(&file, content, &previous).map_err(|source| self.io_error(relative, source))
    }
}

/// `content` over the whole of `file`, whose content is `previous`; on failure `previous` is put
/// back (best effort: the failure is what is reported).
pub(crate) fn write_over(
    file: &std::fs::File,
    content: &[u8],
    previous: &[u8],
) -> std::io::Result<()> {
    if content.len() > previous.len() {
        // Room first: a full disk refuses here, before the old content is touched.
        let length = u64::try_from(content.len()).unwrap_or(u64::MAX);
        if let Err(error) =
            rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, length)
        {
            let error = std::io::Error::from(error);
            if matches!(error.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) {
                let _ = file.set_len(u64::try_from(previous.len()).unwrap_or(u64::MAX));
                return Err(error);
            }
        }
    }
    let written = put(file, content);
    if written.is_err() {
        let _ = put(file, previous);
    }
    written
}

/// `bytes` as the whole content of `file`, synced.
fn put(file: &std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    file.write_all_at(bytes, 0)?;
    file.set_len(u64::try_from(bytes.len()).unwrap_or(u64::MAX))?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    use std::path::Path;

    use super::*;
    use crate::testing::names;
    use crate::write::system_may_write;

    /// A file with another name is replaced, never written in place: the other name may lie
    /// outside the project (pnpm's store linked into `node_modules`), and that file must keep its
    /// text. A version that wrote in place (QA r105, for Pi's parity) changed `outside/shared.txt`
    /// through `project/hard-shared.txt`; the `agent_tools` fuzz target found it.
    #[test]
    fn a_file_with_another_name_is_replaced_and_the_other_name_keeps_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("shared.txt"), "v1\n").unwrap();
        std::fs::hard_link(outside.join("shared.txt"), project.join("hard.txt")).unwrap();
        let jail = Jail::open_bare(&project).unwrap();
        jail.write_atomic(Path::new("hard.txt"), b"v2 longer\n")
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(project.join("hard.txt")).unwrap(),
            "v2 longer\n"
        );
        assert_eq!(
            std::fs::read_to_string(outside.join("shared.txt")).unwrap(),
            "v1\n"
        );
        assert_eq!(names(&project), ["hard.txt"]);
        // Nor when the system refuses to replace it: the write fails, and neither name changes.
        std::fs::hard_link(outside.join("shared.txt"), project.join("busy.txt")).unwrap();
        let busy: Replacer = |_, _, _| Err(std::io::Error::from_raw_os_error(libc::EBUSY));
        let refused = jail.write_atomic_with(Path::new("busy.txt"), b"v3", system_may_write, busy);
        assert!(refused.is_err(), "{refused:?}");
        for path in [outside.join("shared.txt"), project.join("busy.txt")] {
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "v1\n");
        }
    }

    /// A hard link in the project to a file of a denied place is never written in place (the
    /// denied file would change): the name in the project is replaced, as before.
    #[test]
    fn a_hard_link_to_a_denied_file_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let secret = dir.path().join("secret");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(secret.join("key.txt"), "kept").unwrap();
        std::fs::hard_link(secret.join("key.txt"), project.join("k.txt")).unwrap();
        let mut jail = Jail::open_bare(&project).unwrap();
        jail.deny(&secret);
        jail.write_atomic(Path::new("k.txt"), b"over").unwrap();
        assert_eq!(
            std::fs::read_to_string(secret.join("key.txt")).unwrap(),
            "kept"
        );
        assert_eq!(
            std::fs::read_to_string(project.join("k.txt")).unwrap(),
            "over"
        );
    }

    /// QA r105: a bind-mounted file (`EBUSY` on rename) and a writable file in a folder this user
    /// may not write (`EACCES` on the temporary file) could not be edited at all. A test run as
    /// root may rename anywhere, so the system's refusal is given here.
    #[test]
    fn a_file_the_system_will_not_replace_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("app.env");
        std::fs::write(&path, "k=1\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        let jail = Jail::open_bare(dir.path()).unwrap();
        let busy: Replacer = |_, _, _| Err(std::io::Error::from_raw_os_error(libc::EBUSY));
        let denied: Replacer = |_, _, _| Err(std::io::Error::from_raw_os_error(libc::EACCES));
        let failing: Replacer = |_, _, _| Err(std::io::Error::from_raw_os_error(libc::EIO));
        for (replace, content) in [(busy, "k=22\n"), (denied, "k\n")] {
            jail.write_atomic_with(
                Path::new("app.env"),
                content.as_bytes(),
                system_may_write,
                replace,
            )
            .unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), content);
            let metadata = std::fs::metadata(&path).unwrap();
            assert_eq!((metadata.ino(), metadata.mode() & 0o7777), (inode, 0o640));
        }
        // Any other failure is said and the file is left as it was.
        let error = jail
            .write_atomic_with(Path::new("app.env"), b"lost", system_may_write, failing)
            .unwrap_err();
        assert!(matches!(error, JailError::Io { .. }), "{error:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "k\n");
        // A new file in a folder that refuses it: the folder is named as the obstacle.
        let error = jail
            .write_atomic_with(Path::new("new.txt"), b"x", system_may_write, denied)
            .unwrap_err();
        assert!(
            matches!(error, JailError::FolderReadOnly { .. }),
            "{error:?}"
        );
        assert!(
            error.to_string().starts_with("the folder `") && error.to_string().contains("new.txt"),
            "{error}"
        );
        assert_eq!(names(dir.path()), ["app.env"]);
    }

    /// The real folder: `0555` refuses a temporary file to any user but root, and the file is
    /// written in place; as root the rename is allowed. Either way the edit is made.
    #[test]
    fn a_writable_file_in_a_read_only_folder_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("rodir");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("f.txt"), "z\n").unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o555)).unwrap();
        let jail = Jail::open_bare(dir.path()).unwrap();
        let written = jail.write_atomic(Path::new("rodir/f.txt"), b"Z\n");
        let made = jail.write_atomic(Path::new("rodir/new.txt"), b"x");
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        written.unwrap();
        assert_eq!(
            std::fs::read_to_string(folder.join("f.txt")).unwrap(),
            "Z\n"
        );
        let root = rustix::process::geteuid().is_root();
        assert_eq!(made.is_ok(), root, "{made:?}");
    }

    /// A write that fails part way puts the old content back (here the file was opened for
    /// reading only, so every write fails).
    #[test]
    fn a_failed_write_in_place_leaves_the_old_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kept.txt");
        std::fs::write(&path, "old").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert!(write_over(&file, b"new and longer", b"old").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    }
}
