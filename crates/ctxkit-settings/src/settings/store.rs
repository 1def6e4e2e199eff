//! Settings files on disk: reading, and read-modify-write under an inter-process lock with an
//! atomic replace, so two processes editing the same file never lose each other's keys.

use std::fs::{File, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::confine::{self, Reach};
use super::document::{self, Document};
use crate::error::SettingsError;

/// How long a writer waits for another writer before giving up.
const LOCK_TIMEOUT: Duration = Duration::from_secs(10);
const LOCK_RETRY_PAUSE: Duration = Duration::from_millis(10);

/// The lock file guarding `settings_path`: `<settings.json>.lock`, there only while a write holds
/// it (the writer removes it before letting go; [`acquire`] says why that keeps writers apart).
pub fn lock_path(settings_path: &Path) -> PathBuf {
    let mut name = settings_path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Reads and parses a settings file (migrated), as far as `reach` lets it lead
/// ([`confine::read_text`]: a regular file, bounded, never waiting for a writer). A missing or
/// blank file is an empty document. Needs no lock: writers replace the file atomically, so a reader
/// sees old or new content.
pub fn read(path: &Path, reach: Reach) -> Result<Document, SettingsError> {
    read_with_text(path, reach).map(|(document, _)| document)
}

/// [`read`], and the text read (`None` for a missing file).
pub fn read_with_text(
    path: &Path,
    reach: Reach,
) -> Result<(Document, Option<String>), SettingsError> {
    match confine::read_text(path, reach)? {
        Some(text) => Ok((parse(path, &text)?, Some(text))),
        None => Ok((Document::new(), None)),
    }
}

/// Parses settings text (migrated); blank text is an empty document. A leading byte-order mark,
/// which editors on Windows write, is read past, as Pi 1.6 reads it (`stripBom`).
pub fn parse(path: &Path, text: &str) -> Result<Document, SettingsError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(Document::new());
    }
    // Numbers a JSON value cannot carry exactly stay as written (`numbers`).
    let text = super::numbers::protect(text);
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|error| SettingsError::Parse {
            path: path.to_path_buf(),
            line: error.line(),
            column: error.column(),
            message: strip_position(&error.to_string())
                + comment_note(
                    text.lines().nth(error.line().saturating_sub(1)),
                    error.column(),
                ),
        })?;
    match value {
        serde_json::Value::Object(mut object) => {
            document::migrate(&mut object);
            Ok(object)
        }
        serde_json::Value::Null
        | serde_json::Value::Bool(_)
        | serde_json::Value::Number(_)
        | serde_json::Value::String(_)
        | serde_json::Value::Array(_) => Err(SettingsError::NotAnObject {
            path: path.to_path_buf(),
        }),
    }
}

/// A note when the parser stopped at a comment (`// …`, `/* …`): serde's "key must be a string"
/// does not say that JSON has none, which a user of JSONC editors (or Pi's docs) may not expect.
fn comment_note(line: Option<&str>, column: usize) -> &'static str {
    let Some(line) = line else { return "" };
    let at = line.get(column.saturating_sub(1)..).unwrap_or_default();
    let comment = |text: &str| text.starts_with("//") || text.starts_with("/*");
    if comment(at) || comment(line.trim_start()) {
        " (a comment: settings files are plain JSON, without comments)"
    } else {
        ""
    }
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_owned(),
        None => message.to_owned(),
    }
}

/// Holds the exclusive lock on a settings file until dropped.
#[derive(Debug)]
struct LockGuard {
    file: File,
    path: PathBuf,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // Removed while still held, so no lock file stays in a project's `.ctxkit` (it showed in
        // `git status`; QA r99). A writer waiting on this file finds it gone once it has the lock
        // and locks a new one (`acquire`).
        let _ = std::fs::remove_file(&self.path);
        // Closing the descriptor releases the lock as well; unlocking first is just prompt.
        let _ = self.file.unlock();
    }
}

/// Locks the lock file of `path`. A holder removes the file before it lets go, so a lock taken
/// on a file no longer at the lock's path guards nothing: it is dropped and the file at the path
/// (a new one) locked instead. Only a holder removes the file, so while one holds the file at the
/// path, no other can hold another file there.
fn acquire(path: &Path) -> Result<LockGuard, SettingsError> {
    let lock = lock_path(path);
    let started = Instant::now();
    loop {
        let file = confine::open_lock(&lock)?;
        match file.try_lock() {
            Ok(()) if is_at(&file, &lock) => return Ok(LockGuard { file, path: lock }),
            Ok(()) => continue,
            Err(TryLockError::WouldBlock) => {
                if started.elapsed() >= LOCK_TIMEOUT {
                    return Err(SettingsError::LockTimeout { path: lock });
                }
                std::thread::sleep(LOCK_RETRY_PAUSE);
            }
            Err(TryLockError::Error(source)) => {
                return Err(SettingsError::Write {
                    path: lock,
                    source: source.into(),
                });
            }
        }
    }
}

/// Whether the open `file` is the file at `path` now (not one a holder removed meanwhile).
fn is_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        (Err(_), _) | (_, Err(_)) => false,
    }
}

/// Read-modify-write under the lock: creates the parent directory, locks, re-reads the current
/// file (migrated), lets `change` edit it, and atomically replaces the file with the result
/// (temp file in the same directory, fsync, rename). A file that no longer parses is left alone
/// and the parse error returned. A project's file (`reach`) that leads out of its folder, or a
/// lock that is a symlink, is refused before anything is created or written.
pub fn update(
    path: &Path,
    reach: Reach,
    change: impl FnOnce(&mut Document),
) -> Result<Document, SettingsError> {
    confine::check_folder(path, reach)?;
    create_directory(path)?;
    let _guard = acquire(path)?;
    let mut current = read(path, reach)?;
    change(&mut current);
    write_document(path, reach, &current)?;
    Ok(current)
}

/// Creates the folder that holds `path`.
fn create_directory(path: &Path) -> Result<(), SettingsError> {
    let directory = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(directory).map_err(|source| SettingsError::Write {
        path: directory.to_path_buf(),
        source: source.into(),
    })
}

/// Like [`update`], but `change` says whether it changed anything; the file is only replaced
/// (and its directory only created) when it did. `change` may run twice: once on a snapshot
/// when the directory does not exist yet, then on the locked re-read. Returns its last answer.
pub fn update_if_changed(
    path: &Path,
    reach: Reach,
    mut change: impl FnMut(&mut Document) -> bool,
) -> Result<bool, SettingsError> {
    confine::check_folder(path, reach)?;
    let directory = path.parent().unwrap_or_else(|| Path::new("."));
    if !directory.exists() {
        let mut probe = read(path, reach)?;
        if !change(&mut probe) {
            return Ok(false);
        }
        create_directory(path)?;
    }
    let _guard = acquire(path)?;
    let mut current = read(path, reach)?;
    if !change(&mut current) {
        return Ok(false);
    }
    write_document(path, reach, &current)?;
    Ok(true)
}

/// Writes `document` as the settings file at `path`; one that holds a credential (an `apiKey`,
/// a token, a header's value) is readable by its owner alone, whatever mode the file had (a Pi
/// `settings.json` copied over is often 0644).
fn write_document(path: &Path, reach: Reach, document: &Document) -> Result<(), SettingsError> {
    let private = document
        .iter()
        .any(|(key, value)| super::boundary::holds_credentials(std::slice::from_ref(key), value));
    let text = document::serialize(document);
    write_atomic(
        &confine::write_target(path, reach)?,
        text.as_bytes(),
        private,
    )
}

/// Writes `contents` to `path` through a temp file in the same directory and a rename; when
/// `private`, the file is 0600 whatever mode it had (the temp file is created so: no other user
/// can read it at any moment), else it keeps the mode the user gave it.
pub(crate) fn write_atomic(
    path: &Path,
    contents: &[u8],
    private: bool,
) -> Result<(), SettingsError> {
    let write_error = |source: std::io::Error| SettingsError::Write {
        path: path.to_path_buf(),
        source: source.into(),
    };
    let mut temp = ctxkit_jail::temporary_beside(path).map_err(write_error)?;
    temp.write_all(contents).map_err(write_error)?;
    temp.as_file().sync_all().map_err(write_error)?;
    if let Some(metadata) = std::fs::metadata(path).ok().filter(|_| !private) {
        let _ = std::fs::set_permissions(temp.path(), metadata.permissions());
    }
    temp.persist(path)
        .map_err(|error| write_error(error.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA (2026-12-07): a Pi `settings.json` copied over at 0644, then `config import-pi` (or
    /// `config set llm.apiKey`) wrote a key into it and kept it readable by every local user.
    #[test]
    fn a_file_that_holds_a_key_is_the_owners_alone() {
        use std::os::unix::fs::PermissionsExt as _;
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("settings.json");
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mode = || std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        update(&path, Reach::Anywhere, |document| {
            document.insert("theme".to_owned(), serde_json::json!("dark"));
        })
        .unwrap();
        assert_eq!(mode(), 0o644);
        update(&path, Reach::Anywhere, |document| {
            document.insert(
                "llm".to_owned(),
                serde_json::json!({"providers": {"gw": {"baseUrl": "http://h", "apiKey": "sk-x"}}}),
            );
        })
        .unwrap();
        assert_eq!(mode(), 0o600);
    }

    #[test]
    fn parse_error_names_position() {
        let error = parse(Path::new("/x/settings.json"), "{ invalid").unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with(
                "Invalid JSON in settings file `/x/settings.json` at line 1, column 3"
            ),
            "{message}"
        );
    }

    /// QA r104: a `//` comment said "key must be a string" and no more.
    #[test]
    fn a_comment_is_named_as_one() {
        for text in [
            "{\n  // my comment\n  \"theme\": \"dark\"\n}",
            "{\"theme\": \"dark\", /* old */ \"quietStartup\": true}",
        ] {
            let message = parse(Path::new("/x/settings.json"), text)
                .unwrap_err()
                .to_string();
            assert!(
                message.ends_with("(a comment: settings files are plain JSON, without comments)"),
                "{message}"
            );
        }
        let message = parse(Path::new("/x/settings.json"), "{ invalid")
            .unwrap_err()
            .to_string();
        assert!(!message.contains("comment"), "{message}");
    }

    /// QA r98: a BOM stopped the chat (exit 3) where Pi 1.6 reads the file.
    #[test]
    fn a_byte_order_mark_is_read_past() {
        let document = parse(
            Path::new("/x/settings.json"),
            "\u{feff}{\"theme\": \"light\"}",
        )
        .unwrap();
        assert_eq!(document.get("theme"), Some(&serde_json::json!("light")));
        assert!(
            parse(Path::new("/x/settings.json"), "\u{feff}")
                .unwrap()
                .is_empty()
        );
    }

    /// Issue 33, item 14: `config set` on a symlinked `settings.json` replaced the link with a
    /// regular file (the dotfiles target was left unchanged), and rewrote a big number as a float.
    #[cfg(unix)]
    #[test]
    fn updates_write_through_symlinks_and_keep_numbers_as_written() {
        let temp = tempfile::tempdir().unwrap();
        let dotfiles = temp.path().join("dotfiles");
        std::fs::create_dir_all(&dotfiles).unwrap();
        let target = dotfiles.join("ctxkit.json");
        std::fs::write(
            &target,
            r#"{"big": 123456789012345678901234567890, "ratio": 0.1000000000000000055511151231257827}"#,
        )
        .unwrap();
        let home = temp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let link = home.join("settings.json");
        // A relative link through a second link.
        std::os::unix::fs::symlink("../dotfiles/ctxkit.json", home.join("middle.json")).unwrap();
        std::os::unix::fs::symlink("middle.json", &link).unwrap();
        update(&link, Reach::Anywhere, |document| {
            document.insert("theme".to_owned(), serde_json::Value::from("dark"));
        })
        .unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let written = std::fs::read_to_string(&target).unwrap();
        assert!(
            written.contains("\"big\": 123456789012345678901234567890,"),
            "{written}"
        );
        assert!(
            written.contains("\"ratio\": 0.1000000000000000055511151231257827"),
            "{written}"
        );
        assert!(written.contains("\"theme\": \"dark\""), "{written}");
        // A dangling link: the file is created where it points.
        let dangling = home.join("dangling.json");
        std::os::unix::fs::symlink("../dotfiles/new.json", &dangling).unwrap();
        update(&dangling, Reach::Anywhere, |document| {
            document.insert("theme".to_owned(), serde_json::Value::from("light"));
        })
        .unwrap();
        assert!(
            std::fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::read_to_string(dotfiles.join("new.json"))
                .unwrap()
                .contains("light")
        );
    }

    #[test]
    fn update_creates_directory_and_writes_pretty_json() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("a/b/settings.json");
        update(&path, Reach::Anywhere, |document| {
            document.insert("theme".to_owned(), serde_json::Value::from("light"));
        })
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"theme\": \"light\"\n}"
        );
    }

    /// QA r99: an empty `settings.json.lock` stayed in a project's `.ctxkit` for good. Writers
    /// still exclude each other: every key of many concurrent writes is kept.
    #[test]
    fn the_lock_file_is_gone_after_a_write_and_writers_still_take_turns() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("settings.json");
        let writers: Vec<_> = (0..16)
            .map(|index| {
                let path = path.clone();
                std::thread::spawn(move || {
                    update(&path, Reach::Anywhere, |document| {
                        document.insert(format!("key{index}"), serde_json::json!(index));
                    })
                    .unwrap();
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        assert_eq!(read(&path, Reach::Anywhere).unwrap().len(), 16);
        assert!(!lock_path(&path).exists());
    }
}
