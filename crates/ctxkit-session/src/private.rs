//! Private temporary folders: where a copy of a session is worked on (a database session, an
//! imported transcript) while a command or a server runs. Each is named after its kind and its
//! process (`ctxkit-<kind>-<pid>-<random>`), so the folders a killed process left behind (SIGKILL,
//! out of memory, a signal a command does not catch) are found and removed by a later process of
//! the same user: the first private folder a process makes removes them
//! ([`remove_abandoned_private_folders`]).

use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use ctxkit_jail::is_running;

use crate::process::current_user_id;

/// What the names of private folders start with.
const PREFIX: &str = "ctxkit-";

/// A new folder in the system's temporary folder, named `ctxkit-<kind>-<pid>-<random>`, that only
/// this user may enter (`0700`: `tempfile` makes folders with the default mode, `0755` under the
/// usual umask, so any local user could read the copies inside). Removed when dropped; when this
/// process is killed first, by a later process of the user. `kind` is lowercase letters (`serve`,
/// `session`, `view`, `export`, `simulate`).
pub fn private_temporary_folder(kind: &str) -> std::io::Result<tempfile::TempDir> {
    static CLEANED: std::sync::Once = std::sync::Once::new();
    CLEANED.call_once(|| {
        remove_abandoned_private_folders(&std::env::temp_dir());
    });
    let mut builder = tempfile::Builder::new();
    let prefix = format!("{PREFIX}{kind}-{}-", std::process::id());
    builder.prefix(&prefix);
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir()
}

/// Where the private copy of the stored session `session_id` goes in `folder`: `<id>.jsonl` when
/// the id can name a file as it is, else its digest ([`crate::file_safe_id`]). A database's ids are
/// whatever was imported or written there: one that is a path (`/home/u/x`, `../../x`) never names
/// a file outside `folder`.
pub fn private_copy_path(folder: &Path, session_id: &str) -> std::path::PathBuf {
    let name = crate::file_safe_id(session_id).unwrap_or_else(|| session_id.to_owned());
    folder.join(format!("{name}.jsonl"))
}

/// Writes `bytes` to the new file `path`, readable by this user only (`0600`): a copy of a
/// session in a private folder.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

/// Removes the private folders in `temporary` that processes of this user left when they were
/// killed; returns how many. Kept: a folder of a running process, of another user, a symlink, and
/// a folder holding anything ctxkit does not put there (a session copy and its companions,
/// `*.jsonl*`; temporary files of atomic writes, `.tmp*`; `.ctxkit-*` records).
pub fn remove_abandoned_private_folders(temporary: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(temporary) else {
        return 0;
    };
    let user = current_user_id();
    let mut removed = 0;
    for entry in entries.flatten() {
        let Some(pid) = folder_pid(&entry.file_name().to_string_lossy()) else {
            continue;
        };
        let path = entry.path();
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let ours = user.is_some_and(|user| metadata.uid() == user);
        if ours && metadata.is_dir() && !is_running(pid) && holds_only_copies(&path) {
            removed += usize::from(std::fs::remove_dir_all(&path).is_ok());
        }
    }
    removed
}

/// The process id in a folder name `ctxkit-<kind>-<pid>-<random>`.
fn folder_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (kind, rest) = rest.split_once('-')?;
    let (pid, random) = rest.split_once('-')?;
    let is_kind = !kind.is_empty() && kind.bytes().all(|byte| byte.is_ascii_lowercase());
    let is_random = !random.is_empty() && random.bytes().all(|byte| byte.is_ascii_alphanumeric());
    if !is_kind || !is_random || !pid.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// The private folder (of any process of ctxkit, of any kind) that `path` lies in, if any: a
/// folder of the system's temporary folder named as [`private_temporary_folder`] names them. It
/// holds copies of sessions (a database's, an imported transcript): tools never open it, as they
/// never open the sessions folder.
pub fn private_folder_holding(path: &Path) -> Option<PathBuf> {
    TEMPORARY_FOLDERS.iter().find_map(|temporary| {
        let rest = path.strip_prefix(temporary).ok()?;
        let name = rest.components().next()?.as_os_str().to_str()?;
        folder_pid(name).map(|_| temporary.join(name))
    })
}

/// The private folders there are now, of every process of ctxkit.
pub fn private_folders() -> Vec<PathBuf> {
    let temporary = std::env::temp_dir();
    let Ok(entries) = std::fs::read_dir(&temporary) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| folder_pid(&entry.file_name().to_string_lossy()).is_some())
        .map(|entry| entry.path())
        .collect()
}

/// The system's temporary folder as named and as it resolves (`/tmp` may be a link): resolved
/// once, as every tool call's path is asked about it.
static TEMPORARY_FOLDERS: std::sync::LazyLock<Vec<PathBuf>> =
    std::sync::LazyLock::new(temporary_folders);

fn temporary_folders() -> Vec<PathBuf> {
    let named = std::env::temp_dir();
    let mut folders = vec![named.clone()];
    if let Ok(real) = std::fs::canonicalize(&named)
        && real != named
    {
        folders.push(real);
    }
    folders
}

/// Whether `folder` holds nothing but what ctxkit puts in a private folder.
fn holds_only_copies(folder: &Path) -> bool {
    let Ok(mut entries) = std::fs::read_dir(folder) else {
        return false;
    };
    entries.all(|entry| {
        entry.is_ok_and(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.contains(".jsonl") || name.starts_with(".tmp") || name.starts_with(".ctxkit-")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_id_that_is_a_path_names_a_file_inside_the_folder() {
        let folder = Path::new("/private");
        let plain = "019a-b2_c.3";
        assert_eq!(
            private_copy_path(folder, plain),
            folder.join("019a-b2_c.3.jsonl")
        );
        let long = "a".repeat(crate::paths::MAX_FILE_ID_BYTES + 1);
        for hostile in [
            "/home/u/.bashrc",
            "../../x",
            "..",
            ".hidden",
            "",
            "a/b",
            "a\\b",
            "a\u{0}b",
            long.as_str(),
        ] {
            let path = private_copy_path(folder, hostile);
            assert_eq!(path.parent(), Some(folder), "{hostile:?}: {path:?}");
            let name = path.file_name().unwrap().to_str().unwrap();
            assert_eq!(name.len(), 32 + ".jsonl".len(), "{hostile:?}: {name}");
        }
    }

    #[test]
    fn only_its_user_may_enter_a_private_folder() {
        use std::os::unix::fs::PermissionsExt as _;
        let folder = private_temporary_folder("test").unwrap();
        let mode = std::fs::metadata(folder.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        let name = folder.path().file_name().unwrap().to_string_lossy();
        let start = format!("ctxkit-test-{}-", std::process::id());
        assert!(name.starts_with(&start), "{name}");
        assert_eq!(folder_pid(&name), Some(std::process::id()));
        let copy = folder.path().join("s.jsonl");
        write_private_file(&copy, b"{}\n").unwrap();
        let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(
            write_private_file(&copy, b"again").is_err(),
            "never over a file"
        );
    }

    #[test]
    fn a_path_in_a_private_folder_is_recognised() {
        let folder = private_temporary_folder("test").unwrap();
        let copy = folder.path().join("s.jsonl");
        assert_eq!(
            private_folder_holding(&copy).as_deref(),
            Some(folder.path())
        );
        assert_eq!(
            private_folder_holding(folder.path()).as_deref(),
            Some(folder.path())
        );
        assert!(private_folders().contains(&folder.path().to_path_buf()));
        let other = std::env::temp_dir().join("ctxkit-notes").join("a.md");
        assert_eq!(private_folder_holding(&other), None);
        assert_eq!(
            private_folder_holding(Path::new("/home/u/ctxkit-serve-1-a/x")),
            None
        );
    }

    #[test]
    fn names_of_private_folders_are_recognised() {
        assert_eq!(folder_pid("ctxkit-serve-4242-AbC1x9"), Some(4242));
        assert_eq!(folder_pid("ctxkit-view-4242-AbC1x9"), Some(4242));
        assert_eq!(folder_pid("ctxkit-session-17-x"), Some(17));
        assert_eq!(folder_pid("ctxkit-serve-AbC1x9"), None);
        assert_eq!(folder_pid("ctxkit-view-4242-"), None);
        assert_eq!(folder_pid("ctxkit-view-42x-abc"), None);
        assert_eq!(folder_pid("ctxkit--42-abc"), None);
        assert_eq!(folder_pid("ctxkit-Mine-42-abc"), None);
        assert_eq!(folder_pid("other-serve-4242-x"), None);
    }

    /// Processes killed while they held a private copy (a server with a database session open,
    /// `view` of one, `compact` of one) left it in the temporary folder; the next process of the
    /// user removes every kind of them, and nothing else: a running process's copy, a folder
    /// with something else in it, a file of the same shape.
    #[test]
    fn a_killed_process_s_copies_are_removed_by_the_next_one() {
        let temporary = tempfile::tempdir().unwrap();
        let folder = |name: &str, files: &[&str]| {
            let path = temporary.path().join(name);
            std::fs::create_dir(&path).unwrap();
            for file in files {
                std::fs::write(path.join(file), "{}\n").unwrap();
            }
            path
        };
        // A pid above the kernel's maximum never runs.
        let abandoned = [
            folder("ctxkit-serve-99999999-x1", &["0192.jsonl"]),
            folder("ctxkit-view-99999999-x2", &["0193.jsonl", ".tmpAb12"]),
            folder("ctxkit-session-99999999-x3", &["0194.jsonl"]),
            folder("ctxkit-export-99999999-x4", &["imported-0.jsonl"]),
            folder("ctxkit-serve-99999999-x5", &[]),
        ];
        std::fs::create_dir(abandoned[2].join("0194.jsonl.checkpoints")).unwrap();
        let running = folder(
            &format!("ctxkit-view-{}-x6", std::process::id()),
            &["0195.jsonl"],
        );
        let foreign = folder("ctxkit-session-99999999-x7", &["0196.jsonl", "notes.txt"]);
        let file = temporary.path().join("ctxkit-serve-99999999-x8");
        std::fs::write(&file, "not a folder").unwrap();
        let unnamed = folder("ctxkit-view-x9", &["0197.jsonl"]);
        assert_eq!(remove_abandoned_private_folders(temporary.path()), 5);
        assert!(abandoned.iter().all(|folder| !folder.exists()));
        assert!(running.exists() && foreign.exists() && file.exists() && unnamed.exists());
    }
}
