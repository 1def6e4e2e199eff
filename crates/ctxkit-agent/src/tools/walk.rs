//! Walks of a project as its ignore files leave it (the search tools, the start's clean-up of
//! leftover temporaries, the chat's `@` completion), safe from the ignore files themselves.
//!
//! The `ignore` crate reads every `.gitignore`, `.ignore` and `.git/info/exclude` it meets, and
//! those of every folder above the project, whole and through links. A cloned repository can
//! commit `.gitignore -> /dev/zero`, and another local user can leave `/tmp/.ignore -> /dev/zero`
//! above a project: read, it grows until the process runs out of memory (a sweep stopped `chat` and
//! `serve` from starting so). So an ignore file is read only when it is a regular file (links
//! followed) of at most [`MAX_IGNORE_FILE_BYTES`], and above the project only when it belongs to the
//! user or root. A folder holding another ignore file is not walked into. When the walk's own
//! folder or one above it holds one, the walker reads no ignore file at all (it reads the folders
//! above whenever it looks for a repository), and only the walk's own `.gitignore` and `.ignore`
//! are applied, when they may be read.

use std::path::Path;

use ctxkit_jail::LocalUsers;
use ignore::{DirEntry, WalkBuilder};

/// The files the `ignore` crate reads in a folder it walks (and in the folders above).
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".git/info/exclude"];

/// The largest ignore file read (real ones are a few KiB).
const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;

/// Makes `walker`, a walk of `root` configured by its caller, read only ignore files it may, and
/// walk into a folder only when `keep` takes it too (`keep` is the caller's own filter).
pub fn read_safe_ignore_files(
    walker: &mut WalkBuilder,
    root: &Path,
    keep: impl Fn(&DirEntry) -> bool + Send + Sync + 'static,
) {
    let own_readable = ignore_files_readable(root);
    if !own_readable || !parents_readable(root, LocalUsers::of_process()) {
        walker
            .git_ignore(false)
            .ignore(false)
            .git_exclude(false)
            .git_global(false)
            .parents(false);
        for name in [".gitignore", ".ignore"] {
            let file = root.join(name);
            if own_readable && file.is_file() {
                walker.add_ignore(file);
            }
        }
    }
    walker.filter_entry(move |entry| {
        let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
        (!is_dir || entry.depth() == 0 || ignore_files_readable(entry.path())) && keep(entry)
    });
}

/// Whether every ignore file in `dir` may be read: absent, or a regular file of at most
/// [`MAX_IGNORE_FILE_BYTES`].
fn ignore_files_readable(dir: &Path) -> bool {
    IGNORE_FILES.iter().all(|name| {
        let file = dir.join(name);
        match std::fs::metadata(&file) {
            Ok(metadata) => metadata.is_file() && metadata.len() <= MAX_IGNORE_FILE_BYTES,
            // Absent, a dangling link or unreadable: the walker cannot open it either.
            Err(_) => true,
        }
    })
}

/// Whether the ignore files of the folders above `root` may be read: each readable and none of
/// another user's (`users`: the user and root).
fn parents_readable(root: &Path, users: LocalUsers) -> bool {
    root.ancestors().skip(1).all(|dir| {
        ignore_files_readable(dir)
            && IGNORE_FILES
                .iter()
                .all(|name| users.other_owner(&dir.join(name)).is_none())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walked(root: &Path) -> Vec<String> {
        let mut walker = WalkBuilder::new(root);
        walker.hidden(false).require_git(false);
        read_safe_ignore_files(&mut walker, root, |_| true);
        let mut names: Vec<String> = walker
            .build()
            .flatten()
            .filter(|entry| entry.depth() > 0)
            .map(|entry| {
                entry
                    .path()
                    .strip_prefix(root)
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        names.sort();
        names
    }

    /// Attack (security sweep 9): `sub/.gitignore -> /dev/zero` committed to a repository. The
    /// walk ends, leaves `sub` out, and keeps the rules of the project's own `.gitignore`.
    #[test]
    fn an_ignore_file_that_is_a_device_is_not_read() {
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("kept.txt"), "").unwrap();
        std::fs::write(root.join("noise.log"), "").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/inside.txt"), "").unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("sub/.gitignore")).unwrap();
        assert_eq!(walked(root), [".gitignore", "kept.txt"]);
    }

    /// The project's own `.ignore` is a device: no ignore file is read, and the walk ends.
    #[test]
    fn a_project_whose_own_ignore_file_is_a_device_is_walked_whole() {
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        std::fs::write(root.join("kept.txt"), "").unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join(".ignore")).unwrap();
        assert_eq!(walked(root), [".ignore", "kept.txt"]);
    }

    /// Attack (security sweep 9): another user's `.ignore -> /dev/zero` in a folder above the
    /// project. The walk ends and still applies the project's own `.gitignore`.
    #[test]
    fn a_device_above_the_project_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let planted = dir.path().join(".ignore");
        std::os::unix::fs::symlink("/dev/zero", &planted).unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("kept.txt"), "").unwrap();
        std::fs::write(root.join("noise.log"), "").unwrap();
        assert_eq!(walked(&root), [".gitignore", "kept.txt"]);
    }

    /// A FIFO or an ignore file over the limit is not read either; a link to a small regular
    /// file is.
    #[test]
    fn only_small_regular_ignore_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(ignore_files_readable(root));
        std::fs::write(root.join("rules"), "*.log\n").unwrap();
        std::os::unix::fs::symlink(root.join("rules"), root.join(".gitignore")).unwrap();
        assert!(ignore_files_readable(root));
        let large = std::fs::File::create(root.join(".ignore")).unwrap();
        large.set_len(MAX_IGNORE_FILE_BYTES + 1).unwrap();
        assert!(!ignore_files_readable(root));
        std::fs::remove_file(root.join(".ignore")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(root.join(".ignore"))
            .status()
            .unwrap();
        assert!(made.success());
        assert!(!ignore_files_readable(root));
    }

    /// Attack (security sweep 9): another local user's `.ignore` in a folder above the project
    /// (`/tmp`): the folders above are not read.
    #[test]
    fn another_users_ignore_file_above_the_project_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path();
        let planted = shared.join(".ignore");
        std::fs::write(&planted, "*.txt\n").unwrap();
        let project = shared.join("project");
        std::fs::create_dir(&project).unwrap();
        assert!(parents_readable(&project, LocalUsers::of_process()));
        let users = ctxkit_jail::testing::owned_by_another_user(&[&planted]);
        assert!(!parents_readable(&project, users));
    }
}
