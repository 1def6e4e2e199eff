//! Who owns a file ctxkit reads without asking: on a shared machine, another local user may plant
//! an `AGENTS.md` or a `.agents/skills` folder in a folder above anyone's project (`/tmp`), and
//! what they wrote would reach that project's system prompt. Only files of this process's user
//! and of root are taken from such places.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// The local users whose files ctxkit reads from the folders above a project: the process's
/// effective user and root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalUsers {
    current: u32,
}

impl LocalUsers {
    /// This process's effective user (and root).
    pub fn of_process() -> Self {
        Self {
            current: rustix::process::geteuid().as_raw(),
        }
    }

    /// As if the process ran as `uid` (tests: every file the test made is then another user's).
    pub fn as_user(uid: u32) -> Self {
        Self { current: uid }
    }

    /// The user id this stands for.
    pub fn current(&self) -> u32 {
        self.current
    }

    /// The owner of `uid`'s files when it is another user: neither the current one nor root.
    pub fn other(&self, uid: u32) -> Option<u32> {
        (uid != self.current && uid != 0).then_some(uid)
    }

    /// Another user owning `path` itself (a symlink's own owner) or what it leads to, if any;
    /// `None` also when `path` cannot be examined (nothing is read from it then either).
    pub fn other_owner(&self, path: &Path) -> Option<u32> {
        let named = std::fs::symlink_metadata(path).ok()?;
        if let Some(uid) = self.other(named.uid()) {
            return Some(uid);
        }
        let target = std::fs::metadata(path).ok()?;
        self.other(target.uid())
    }
}
