//! Which project npm folders (`.ctxkit/npm`) hold only what ctxkit's own npm runs wrote. A cloned
//! repository can commit a `package.json` or `package-lock.json` there naming dependencies (and
//! install scripts of its own) that the next `npm install` or `npm uninstall` in the folder
//! installs and runs. ctxkit records in its home (which no project writes) the digests of both
//! files after each npm run of its own there; a folder whose files match the record, or that holds
//! only the `package.json` ctxkit writes first, is ctxkit's. Any other is one of the project's
//! resources that wait for trust (`protected_resources`), and npm is not run in it before.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::env::Environment;
use crate::error::SettingsError;
use crate::settings::confine::Reach;
use crate::settings::store;

/// The record's file in ctxkit's home.
const RECORD_FILE_NAME: &str = "npm-folders.json";

/// The `package.json` ctxkit writes in a new npm folder (`.ctxkit/npm`, `<home>/npm`).
pub const NPM_FOLDER_MANIFEST: &str =
    "{\n  \"name\": \"ctxkit-extensions\",\n  \"private\": true\n}";

/// The files of an npm folder npm acts on.
const FILES: [&str; 2] = ["package.json", "package-lock.json"];

/// The most bytes of either file read for its digest: a larger one is no file of ctxkit's.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Whether the npm folder `folder` holds nothing npm would act on but what ctxkit wrote: it is
/// missing, holds only [`NPM_FOLDER_MANIFEST`], or its files match the digests ctxkit recorded
/// after its last npm run there ([`record_npm_folder`]). A file that cannot be read (a FIFO, a
/// link out of the folder, too large) is not ctxkit's.
pub fn npm_folder_is_ctxkits(environment: &Environment, folder: &Path) -> bool {
    let Some(digests) = folder_digests(folder) else {
        return false;
    };
    let skeleton = digest(NPM_FOLDER_MANIFEST.as_bytes());
    match (&digests[0], &digests[1]) {
        (None, None) => return true,
        (Some(manifest), None) if *manifest == skeleton => return true,
        _ => {}
    }
    let Ok(record) = store::read(&record_path(environment), Reach::Anywhere) else {
        return false;
    };
    record.get(&key(folder)) == Some(&recorded(&digests))
}

/// Records the npm folder `folder` as ctxkit's as it is now: called after an npm run of ctxkit's
/// own there, which wrote its files.
pub fn record_npm_folder(environment: &Environment, folder: &Path) -> Result<(), SettingsError> {
    let Some(digests) = folder_digests(folder) else {
        return Ok(());
    };
    store::update(&record_path(environment), Reach::Anywhere, |document| {
        document.insert(key(folder), recorded(&digests));
    })
    .map(|_| ())
}

/// The digests of the folder's files as one text, for the trust's fingerprint: trusting the
/// folder covers them as they are.
pub(crate) fn folder_fingerprint(folder: &Path) -> String {
    match folder_digests(folder) {
        Some(digests) => recorded(&digests).to_string(),
        None => "unreadable".to_owned(),
    }
}

fn record_path(environment: &Environment) -> PathBuf {
    environment.agent_dir().join(RECORD_FILE_NAME)
}

fn key(folder: &Path) -> String {
    std::fs::canonicalize(folder)
        .unwrap_or_else(|_| folder.to_owned())
        .display()
        .to_string()
}

fn recorded(digests: &[Option<String>; 2]) -> Value {
    serde_json::json!({ FILES[0]: digests[0], FILES[1]: digests[1] })
}

/// The digest of each of [`FILES`] in `folder` (`None` for a missing one); `None` when one is
/// there but cannot be read.
fn folder_digests(folder: &Path) -> Option<[Option<String>; 2]> {
    let read = |name: &str| -> Option<Option<String>> {
        let path = folder.join(name);
        if std::fs::symlink_metadata(&path).is_err() {
            return Some(None);
        }
        let text = ctxkit_jail::read_in_folder(&path, MAX_FILE_BYTES).ok()?;
        Some(Some(digest(text.as_bytes())))
    };
    Some([read(FILES[0])?, read(FILES[1])?])
}

fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_ctxkits_when_empty_a_skeleton_or_as_recorded() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let environment = Environment::new(home.path(), project.path());
        let folder = project.path().join(".ctxkit/npm");
        assert!(npm_folder_is_ctxkits(&environment, &folder));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("package.json"), NPM_FOLDER_MANIFEST).unwrap();
        assert!(npm_folder_is_ctxkits(&environment, &folder));
        // npm's own rewrite, after ctxkit's run: recorded, so ctxkit's.
        std::fs::write(
            folder.join("package.json"),
            "{\"dependencies\":{\"x\":\"^1\"}}",
        )
        .unwrap();
        std::fs::write(folder.join("package-lock.json"), "{}").unwrap();
        assert!(!npm_folder_is_ctxkits(&environment, &folder));
        record_npm_folder(&environment, &folder).unwrap();
        assert!(npm_folder_is_ctxkits(&environment, &folder));
        // A change by anyone else (a pull) is not.
        std::fs::write(folder.join("package-lock.json"), "{\"packages\":{}}").unwrap();
        assert!(!npm_folder_is_ctxkits(&environment, &folder));
    }
}
