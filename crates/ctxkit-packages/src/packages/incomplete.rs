//! A git checkout an interrupted clone left: `git clone` killed (kill -9, out of memory, power
//! lost) leaves the checkout folder with a `.git` naming the source and no commit checked out.
//! Every later install or update failed on it (`git rev-parse origin/HEAD`), and the configured
//! package loaded nothing without a word. Such a checkout is recognised from its files and cloned
//! again beside it, then swapped in, so the folder is never half a clone; only a folder that is
//! ctxkit's own clone of that source (`check_checkout`) is ever replaced.

use std::path::{Path, PathBuf};

use super::PackageManager;
use super::git_ops::check_checkout;
use crate::error::PackageError;
use crate::folders::read_package_file;
use crate::source::GitSource;

/// Whether `checkout` is a git checkout whose `HEAD` names no commit: a branch (`ref:
/// refs/heads/…`) with neither a loose ref nor a `packed-refs` line, or no `HEAD` at all. A
/// folder without a `.git` folder is not a checkout and not incomplete (the checkout checks refuse
/// it on their own); a detached `HEAD` (a commit id) is complete.
pub(crate) fn checkout_is_incomplete(checkout: &Path) -> bool {
    let git_dir = checkout.join(".git");
    if !std::fs::symlink_metadata(&git_dir).is_ok_and(|metadata| metadata.is_dir()) {
        return false;
    }
    let Some(head) = read_package_file(&git_dir.join("HEAD")) else {
        return true;
    };
    let Some(reference) = head.trim().strip_prefix("ref:").map(str::trim) else {
        return false;
    };
    let well_formed = reference.starts_with("refs/")
        && !reference
            .split('/')
            .any(|part| part.is_empty() || part == "..");
    if !well_formed {
        return true;
    }
    let loose = read_package_file(&git_dir.join(reference)).is_some_and(|id| !id.trim().is_empty());
    let packed = read_package_file(&git_dir.join("packed-refs")).is_some_and(|text| {
        text.lines()
            .any(|line| line.split_whitespace().nth(1) == Some(reference))
    });
    !(loose || packed)
}

/// `checkout` with `what` and this process's id, as a hidden sibling of it.
fn sibling(checkout: &Path, what: &str) -> Option<PathBuf> {
    let name = checkout.file_name()?.to_string_lossy();
    let parent = checkout.parent()?;
    Some(parent.join(format!(".{name}.{what}-{}", std::process::id())))
}

impl PackageManager {
    /// Whether the scope's checkout of `source` is there and complete.
    pub(super) fn git_checkout_complete(
        &self,
        source: &GitSource,
        scope: crate::resolve::SourceScope,
    ) -> bool {
        let checkout = self.git_install_path(source, scope);
        checkout.exists() && !checkout_is_incomplete(&checkout)
    }

    /// Clones `source` again beside the incomplete `checkout` and swaps the new clone in (two
    /// renames in one folder), then removes the old one. The old folder must be ctxkit's own
    /// clone of `source` (its `.git` holds only what `git clone` writes, with `source` as origin);
    /// a failed clone leaves it as it was.
    pub(super) fn replace_incomplete_checkout(
        &self,
        source: &GitSource,
        checkout: &Path,
    ) -> Result<(), PackageError> {
        check_checkout(checkout, source)?;
        let folders = self.folders();
        let (Some(fresh), Some(old)) = (
            sibling(checkout, "ctxkit-clone"),
            sibling(checkout, "ctxkit-incomplete"),
        ) else {
            return Err(PackageError::UnsafeCheckout {
                path: checkout.to_path_buf(),
                reason: "it has no parent folder".to_owned(),
            });
        };
        folders.remove_dir_all(&fresh)?;
        folders.remove_dir_all(&old)?;
        if let Err(error) = self.clone_and_prepare(source, &fresh) {
            let _ = folders.remove_dir_all(&fresh);
            return Err(error);
        }
        let io = |path: &Path, error| PackageError::Io {
            path: path.to_path_buf(),
            source: error,
        };
        std::fs::rename(checkout, &old).map_err(|error| io(checkout, error))?;
        if let Err(error) = std::fs::rename(&fresh, checkout) {
            let _ = std::fs::rename(&old, checkout);
            let _ = folders.remove_dir_all(&fresh);
            return Err(io(checkout, error));
        }
        folders.remove_dir_all(&old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packages::git_ops::tests::run_git;

    /// What a killed `git clone` leaves is incomplete; a clone, a detached checkout and a folder
    /// that is no checkout are not.
    #[test]
    fn an_interrupted_clone_is_an_incomplete_checkout() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let origin = root.join("origin");
        std::fs::create_dir_all(&origin).unwrap();
        run_git(&origin, &["init", "-q", "-b", "main"]);
        std::fs::write(origin.join("a.txt"), "a").unwrap();
        run_git(&origin, &["add", "."]);
        let commit = [
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "a",
        ];
        run_git(&origin, &commit);
        let leftover = root.join("leftover");
        std::fs::create_dir_all(&leftover).unwrap();
        run_git(&leftover, &["init", "-q"]);
        run_git(&leftover, &["remote", "add", "origin", "../origin"]);
        assert!(checkout_is_incomplete(&leftover));
        run_git(root, &["clone", "-q", "origin", "clone"]);
        assert!(!checkout_is_incomplete(&root.join("clone")));
        // Packed refs count (`git pack-refs`), and so does a detached HEAD.
        run_git(&root.join("clone"), &["pack-refs", "--all"]);
        assert!(!root.join("clone/.git/refs/heads/main").exists());
        assert!(!checkout_is_incomplete(&root.join("clone")));
        run_git(&root.join("clone"), &["checkout", "-q", "--detach"]);
        assert!(!checkout_is_incomplete(&root.join("clone")));
        assert!(!checkout_is_incomplete(&root.join("origin/missing")));
        std::fs::write(leftover.join(".git/HEAD"), "ref: refs/../../x\n").unwrap();
        assert!(checkout_is_incomplete(&leftover));
    }
}
