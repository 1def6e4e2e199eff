//! API keys saved by `ctxkit login` and the chat's `/login`: `<agent dir>/auth.json`, in Pi's
//! format (`{"anthropic": {"type": "api_key", "key": "sk-…"}}`), so a Pi user's file can be copied
//! over and back, or shared. The file is the user's alone: written through a private temporary file
//! (mode 0600, whatever mode the old file had) and a rename, under Pi's own lock on it (the folder
//! `auth.json.lock`, which Pi's `proper-lockfile` makes and removes), so ctxkit and Pi writing one
//! file never lose each other's keys, and Pi never finds a lock it cannot take. No tool opens it: it
//! is in ctxkit's home, which no jail opens.
//!
//! Only literal keys are read. Pi also accepts `!command` (a shell command's output) and `$VAR`
//! references; ctxkit runs nothing from this file and reports such an entry as not read
//! ([`SavedKeys::skipped`]). A key written here has Pi's escapes (`$$`, a leading `$!`), so Pi
//! reads back the same key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};

use crate::env::Environment;
use crate::error::SettingsError;
use crate::settings::confine::{self, Reach};

/// The credentials file's name in the agent directory (Pi's name).
pub const CREDENTIALS_FILE_NAME: &str = "auth.json";

const API_KEY_TYPE: &str = "api_key";

/// The keys `auth.json` holds, by provider.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SavedKeys {
    /// Literal API keys, by provider name.
    pub keys: BTreeMap<String, String>,
    /// Providers whose entry ctxkit does not use, with why (an account login, a command or an
    /// environment reference in place of a key).
    pub skipped: Vec<(String, &'static str)>,
}

impl std::fmt::Debug for SavedKeys {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SavedKeys")
            .field("providers", &self.keys.keys().collect::<Vec<_>>())
            .field("skipped", &self.skipped)
            .finish()
    }
}

/// Where the saved keys are: `<agent dir>/auth.json`.
pub fn credentials_path(environment: &Environment) -> PathBuf {
    environment.agent_dir().join(CREDENTIALS_FILE_NAME)
}

/// The keys saved in `path` (none when the file does not exist).
pub fn saved_keys(path: &Path) -> Result<SavedKeys, SettingsError> {
    let entries = read_entries(path)?;
    let mut saved = SavedKeys::default();
    for (provider, entry) in entries {
        match literal_key(&entry) {
            Ok(key) => {
                saved.keys.insert(provider, key);
            }
            Err(reason) => saved.skipped.push((provider, reason)),
        }
    }
    Ok(saved)
}

/// Every credential string of the `auth.json` at `path`, to keep out of what a model reads: each
/// entry's literal key (not a `!command` or an environment reference, which name no secret) and
/// every string of an account login, whatever its field (OAuth `access` and `refresh` tokens,
/// Copilot's `tid=…` tokens; a provider's login may add fields), nested ones too. Only `type` is
/// left out. None when the file does not exist.
pub fn credential_strings(path: &Path) -> Result<Vec<String>, SettingsError> {
    let mut strings = Vec::new();
    for (_, entry) in read_entries(path)? {
        let Value::Object(fields) = entry else {
            continue;
        };
        for (field, value) in fields {
            match (field.as_str(), value) {
                ("type", _) => {}
                ("key", Value::String(key)) => {
                    strings.extend(literal_of(&key));
                }
                (_, value) => string_values(&value, &mut strings),
            }
        }
    }
    Ok(strings)
}

/// The literal a Pi value means (`apiKey`, a header value, an `auth.json` key): none for a
/// `!command` or a value naming an environment variable (`$NAME`, `${NAME}`).
pub(crate) fn literal_of(written: &str) -> Option<String> {
    if written.starts_with('!') {
        return None;
    }
    unescaped(written).filter(|literal| !literal.trim().is_empty())
}

/// Every string inside `value`, appended to `strings`.
fn string_values(value: &Value, strings: &mut Vec<String>) {
    match value {
        Value::String(text) => strings.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| string_values(item, strings)),
        Value::Object(fields) => fields
            .values()
            .for_each(|field| string_values(field, strings)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Saves `key` for `provider` in `path`, keeping every other provider's entry as written.
pub fn save_key(path: &Path, provider: &str, key: &str) -> Result<(), SettingsError> {
    let mut entry = Map::new();
    entry.insert("type".to_owned(), Value::from(API_KEY_TYPE));
    entry.insert("key".to_owned(), Value::from(escaped(key)));
    update(path, |entries| {
        entries.insert(provider.to_owned(), Value::Object(entry));
        true
    })
    .map(|_| ())
}

/// Removes `provider`'s entry from `path`; whether there was one.
pub fn remove_key(path: &Path, provider: &str) -> Result<bool, SettingsError> {
    if !path.exists() {
        return Ok(false);
    }
    update(path, |entries| entries.remove(provider).is_some())
}

/// The file's entries, by provider; a missing or blank file has none.
fn read_entries(path: &Path) -> Result<Map<String, Value>, SettingsError> {
    let Some(text) = confine::read_text(path, Reach::Anywhere)? else {
        return Ok(Map::new());
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    let invalid = |reason: String| SettingsError::Credentials {
        path: path.to_owned(),
        reason,
    };
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        invalid(format!(
            "invalid JSON at line {}, column {}",
            error.line(),
            error.column()
        ))
    })?;
    let Value::Object(entries) = value else {
        return Err(invalid("expected a JSON object of providers".to_owned()));
    };
    if let Some((provider, _)) = entries.iter().find(|(_, entry)| !entry.is_object()) {
        return Err(invalid(format!(
            "the entry of `{provider}` is not an object"
        )));
    }
    Ok(entries)
}

/// The literal key of an entry, or why it has none ctxkit uses.
fn literal_key(entry: &Value) -> Result<String, &'static str> {
    if entry.get("type").and_then(Value::as_str) != Some(API_KEY_TYPE) {
        return Err("an account login, which ctxkit does not support");
    }
    let Some(key) = entry.get("key").and_then(Value::as_str) else {
        return Err("no key");
    };
    if key.starts_with('!') {
        return Err("a command in place of the key, which ctxkit does not run");
    }
    unescaped(key).ok_or("an environment reference in place of the key")
}

/// `key` as Pi reads it back literally: `$` doubled, a leading `!` as `$!`.
fn escaped(key: &str) -> String {
    let doubled = key.replace('$', "$$");
    match doubled.strip_prefix('!') {
        Some(rest) => format!("$!{rest}"),
        None => doubled,
    }
}

/// The literal key Pi reads from `written`, or `None` when it names an environment variable.
pub(crate) fn unescaped(written: &str) -> Option<String> {
    let mut key = String::with_capacity(written.len());
    let mut characters = written.chars();
    while let Some(character) = characters.next() {
        if character != '$' {
            key.push(character);
            continue;
        }
        match characters.next() {
            Some(escaped @ ('$' | '!')) => key.push(escaped),
            Some(_) | None => return None,
        }
    }
    Some(key)
}

/// Read-modify-write of the entries under Pi's lock on the file; `change` says whether it changed
/// anything (the file is written only then).
fn update(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> bool,
) -> Result<bool, SettingsError> {
    let directory = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(directory).map_err(|source| write_error(directory, source))?;
    let target = confine::write_target(path, Reach::Anywhere)?;
    let _lock = PiLock::acquire(&target)?;
    let mut entries = read_entries(path)?;
    if !change(&mut entries) {
        return Ok(false);
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(entries))
        .map_err(|error| write_error(path, std::io::Error::other(error)))?;
    text.push('\n');
    crate::settings::store::write_atomic(&target, text.as_bytes(), true)?;
    Ok(true)
}

/// How long a writer waits for another one before giving up.
const LOCK_TIMEOUT: Duration = Duration::from_secs(10);
const LOCK_RETRY_PAUSE: Duration = Duration::from_millis(20);
/// A lock untouched this long is left by a writer that died (`proper-lockfile`'s default; Pi
/// refreshes its lock's time while it holds it longer).
const LOCK_STALE_AFTER: Duration = Duration::from_secs(10);

/// Pi's lock on a credentials file, as `proper-lockfile` takes it: the folder `<file>.lock`, made
/// atomically and removed when done. A stale one (or a plain file of that name) is taken over.
struct PiLock {
    path: PathBuf,
}

impl PiLock {
    fn acquire(file: &Path) -> Result<Self, SettingsError> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let started = Instant::now();
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(Self { path }),
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    if Self::take_over_stale(&path) {
                        continue;
                    }
                    if started.elapsed() >= LOCK_TIMEOUT {
                        return Err(SettingsError::LockTimeout { path });
                    }
                    std::thread::sleep(LOCK_RETRY_PAUSE);
                }
                Err(error) => return Err(write_error(&path, error)),
            }
        }
    }

    /// Removes a lock its holder left behind; whether it did. Never follows a link.
    fn take_over_stale(path: &Path) -> bool {
        let Ok(metadata) = std::fs::symlink_metadata(path) else {
            return true;
        };
        let age = metadata
            .modified()
            .ok()
            .and_then(|modified| SystemTime::now().duration_since(modified).ok());
        let stale = !metadata.is_dir() || age.is_some_and(|age| age >= LOCK_STALE_AFTER);
        if !stale {
            return false;
        }
        let removed = if metadata.is_dir() {
            std::fs::remove_dir(path)
        } else {
            std::fs::remove_file(path)
        };
        removed.is_ok()
    }
}

impl Drop for PiLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.path);
    }
}

fn write_error(path: &Path, source: std::io::Error) -> SettingsError {
    SettingsError::Write {
        path: path.to_owned(),
        source: source.into(),
    }
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
