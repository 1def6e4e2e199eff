//! Why a path was not opened.

use std::path::PathBuf;

/// Errors of [`crate::Jail`]. Every variant but `Io` is a refusal: the caller tells the user or
/// the model why, and nothing was read or written.
#[derive(Debug, thiserror::Error)]
pub enum JailError {
    /// The path has more components than [`crate::MAX_DEPTH`].
    #[error(
        "the path has {depth} components, more than the {} allowed",
        crate::MAX_DEPTH
    )]
    TooDeep { depth: usize },
    /// The path is longer than [`crate::MAX_PATH_BYTES`].
    #[error(
        "the path is {bytes} bytes long, more than the {} allowed",
        crate::MAX_PATH_BYTES
    )]
    TooLong { bytes: usize },
    /// An absolute path that does not lie under the root.
    #[error("`{}` is not under `{}`", path.display(), root.display())]
    Outside { path: PathBuf, root: PathBuf },
    /// A symlink or `..` led out of the root while opening.
    #[error("`{}` leads out of `{}` (a symlink or `..`)", path.display(), root.display())]
    Escapes { path: PathBuf, root: PathBuf },
    /// The file lies in ctxkit's home, the sessions folder, or the user's credentials.
    #[error(
        "`{}` lies in `{}`: ctxkit's own settings, sessions and the user's credentials are never opened",
        path.display(),
        place.display()
    )]
    Denied { path: PathBuf, place: PathBuf },
    /// A file with several names (hard links), one of which lies in a denied place: the same
    /// file as ctxkit's own or the user's credentials, under a name in the project.
    #[error(
        "`{}` is a hard link to `{}` in `{}`: ctxkit's own settings, sessions and the user's credentials are never opened",
        path.display(),
        other.display(),
        place.display()
    )]
    HardLink {
        path: PathBuf,
        other: PathBuf,
        place: PathBuf,
    },
    /// A file with several names whose other names could not all be looked for in `place` (more
    /// entries there than [`crate::MAX_LINK_WALK`]): refused, as one of them might lie there.
    #[error(
        "`{}` has other names (hard links), and `{}` is too large to check that none lies there",
        path.display(),
        place.display()
    )]
    HardLinkUnchecked { path: PathBuf, place: PathBuf },
    /// A write to a guarded place of the root (`.git`, ctxkit's project folder, a hook script)
    /// the user did not approve, judged by where the folder opened for it really is. Returned by
    /// [`crate::Jail::write_atomic`] of a jail given [`crate::Jail::guard_writes`].
    #[error("`{}` is guarded and the user did not approve the write", path.display())]
    Guarded { path: PathBuf },
    /// An existing file this process may not write (`access(2)` with `W_OK` says no: its mode, a
    /// read-only mount, an immutable file): it is left as it was, although the folder would let a
    /// temporary file be renamed over it. Returned by [`crate::Jail::write_atomic`].
    #[error("`{}` is read-only: this user may not write it", path.display())]
    ReadOnly { path: PathBuf },
    /// A new file cannot be made in `folder`: the system refused (`source`: this user may not
    /// write the folder, a read-only mount). Returned by [`crate::Jail::write_atomic`] of a file
    /// that did not exist (an existing one is written in place when its folder refuses).
    #[error(
        "the folder `{}` may not be written by this user ({source}), so `{}` cannot be made there",
        folder.display(),
        path.display()
    )]
    FolderReadOnly {
        path: PathBuf,
        folder: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file belongs to another local user (neither this process's user nor root), in a place
    /// ctxkit reads unasked from (a folder above the project): what they wrote is not taken.
    /// Returned by [`crate::read_in_folder_owned`].
    #[error("`{}` belongs to another user (uid {uid})", path.display())]
    OtherOwner { path: PathBuf, uid: u32 },
    /// Not a regular file (a FIFO, a device, a socket, a directory).
    #[error("`{}` is not a regular file (only regular files are read)", path.display())]
    NotRegular { path: PathBuf },
    /// Larger than the caller's limit.
    #[error("`{}` is larger than {max} bytes", path.display())]
    TooLarge { path: PathBuf, max: u64 },
    /// Not UTF-8 text.
    #[error("`{}` is not UTF-8 text", path.display())]
    NotText { path: PathBuf },
    /// The system refused (missing file, permissions, a full disk).
    #[error("`{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl JailError {
    /// Whether this is the system's "no such file" (callers treat a missing file as absent).
    pub fn is_not_found(&self) -> bool {
        matches!(self, JailError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }

    /// Whether the file was refused for where it lies, by any of its names: ctxkit's own places
    /// or the user's credentials ([`JailError::Denied`], [`JailError::HardLink`],
    /// [`JailError::HardLinkUnchecked`]).
    pub fn is_denied_place(&self) -> bool {
        matches!(
            self,
            JailError::Denied { .. }
                | JailError::HardLink { .. }
                | JailError::HardLinkUnchecked { .. }
        )
    }
}
