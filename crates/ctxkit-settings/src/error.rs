//! Error types of the crate: one enum per subsystem, each variant says who returns it and how
//! a caller should react.

use std::path::PathBuf;
use std::sync::Arc;

/// Which settings document an error or value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SettingsScope {
    /// `~/.ctxkit/settings.json`.
    Global,
    /// `<cwd>/.ctxkit/settings.json`.
    Project,
}

impl SettingsScope {
    /// `global` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Global => "global",
            Self::Project => "project",
        }
    }
}

impl std::fmt::Display for SettingsScope {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Why a settings file (or its lock) was refused without being read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRefusal {
    /// A FIFO, a device, a socket or a directory.
    NotRegular,
    /// Longer than the limit ([`ctxkit_jail::MAX_RESOURCE_BYTES`]).
    TooLarge {
        /// The limit, in bytes.
        max: u64,
    },
    /// Not UTF-8 text.
    NotText,
    /// A project's file or lock that is a symlink (or lies in a folder that is one) leading out of
    /// `folder`, the project's `.ctxkit`.
    LeadsOutOf {
        /// The folder a project's settings stay in.
        folder: PathBuf,
    },
    /// A lock file that is a symlink: a lock is never followed.
    SymlinkedLock,
}

impl std::fmt::Display for FileRefusal {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotRegular => {
                formatter.write_str("is not a regular file (a FIFO, a device or a directory)")
            }
            Self::TooLarge { max } if max % (1 << 20) == 0 => {
                write!(formatter, "is larger than {} MiB", max >> 20)
            }
            Self::TooLarge { max } => write!(formatter, "is larger than {max} bytes"),
            Self::NotText => formatter.write_str("is not UTF-8 text"),
            Self::LeadsOutOf { folder } => {
                write!(formatter, "leads out of `{}` (a symlink)", folder.display())
            }
            Self::SymlinkedLock => {
                formatter.write_str("is a symlink (a settings lock is never followed)")
            }
        }
    }
}

/// Errors of the settings subsystem. Cloneable: a scope's load error is kept
/// ([`crate::SettingsManager::load_error`]) as well as reported.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SettingsError {
    /// The settings file exists but could not be read. Returned by loading; the scope then
    /// behaves as empty and is never written (so a file we cannot read is never clobbered).
    #[error("Failed to read settings file `{path}`: {source}")]
    Read {
        /// The settings file.
        path: PathBuf,
        /// The underlying error.
        source: Arc<std::io::Error>,
    },
    /// The settings file (or its lock) is not one ctxkit reads or writes: see [`FileRefusal`].
    /// Returned by loading (the scope then reads as empty and is never written) and by writes
    /// (nothing is written); replace the file by a regular JSON file.
    #[error("Settings file `{path}` {reason}")]
    Refused {
        /// The settings file or lock.
        path: PathBuf,
        /// Why it was refused.
        reason: FileRefusal,
    },
    /// The settings file is not valid JSON. Returned by loading and by writes (which re-read
    /// the file); fix the file by hand, ctxkit never overwrites it.
    #[error("Invalid JSON in settings file `{path}` at line {line}, column {column}: {message}")]
    Parse {
        /// The settings file.
        path: PathBuf,
        /// 1-based line of the syntax error.
        line: usize,
        /// 1-based column of the syntax error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The settings file parses but its top level is not a JSON object.
    #[error("Settings file `{path}` must contain a JSON object")]
    NotAnObject {
        /// The settings file.
        path: PathBuf,
    },
    /// A value has the wrong type or is out of range. Returned by `set`; the value is not
    /// stored. Also reported (as a diagnostic) for values found in files.
    #[error("Invalid value for `{key}` in `{path}`{}: expected {expected}, found {found}", at_line(*line))]
    InvalidValue {
        /// The settings file the value was meant for (or came from).
        path: PathBuf,
        /// 1-based line of the file where the key (or its nearest parent) is written, when it is.
        line: Option<usize>,
        /// The dotted key, e.g. `compaction.reserveTokens`.
        key: String,
        /// What the schema accepts.
        expected: String,
        /// The offending value, as JSON.
        found: String,
    },
    /// A value given to be set (`ctxkit config set`) has the wrong type or is out of range; nothing
    /// was written. The value came from the command, not from the file (QA 2026-12-07: "Invalid
    /// value … in `settings.json`" blamed the file).
    #[error(
        "Invalid value for `{key}`: expected {expected}, found {found}; `{path}` was not changed"
    )]
    RefusedValue {
        /// The settings file the value was meant for.
        path: PathBuf,
        /// The dotted key.
        key: String,
        /// What the schema accepts.
        expected: String,
        /// The value given, as JSON.
        found: String,
    },
    /// More than one value is wrong: the first in full and where the others are, so that one
    /// run names every value to fix (the chat named the first only; QA r98).
    #[error("{first}; also invalid: {}", others.join(", "))]
    InvalidValues {
        /// The first wrong value, an [`SettingsError::InvalidValue`].
        first: Box<SettingsError>,
        /// Each other wrong value as `` `key` in `file` at line N ``.
        others: Vec<String>,
    },
    /// A key ctxkit does not know. Returned by [`crate::check_known_key`] (`ctxkit config set`
    /// without `--force`); nothing is written. `suggestion` is the known key it most likely meant.
    #[error("Unknown setting `{key}`{}", suggestion.as_ref().map(|known| format!("; did you mean `{known}`?")).unwrap_or_default())]
    UnknownKey {
        /// The key as given.
        key: String,
        /// The closest known key, when one is near enough to be a typo.
        suggestion: Option<String>,
    },
    /// A dotted key is malformed (empty segment) or crosses a value that cannot hold keys.
    #[error("Invalid settings key `{key}`: {reason}")]
    InvalidKey {
        /// The key as given.
        key: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The settings lock could not be obtained in time (another process holds it).
    #[error("Timed out waiting for the settings lock `{path}`")]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
    },
    /// Writing the settings file (or its lock, temp file or directory) failed.
    #[error("Failed to write settings file `{path}`: {source}")]
    Write {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        source: Arc<std::io::Error>,
    },
    /// A settings file that applies (the user's, or the project's) could not be loaded: `source`
    /// says why (`Read`, `Refused`, `Parse`, `NotAnObject`). Returned by
    /// [`crate::SettingsManager::check_loaded`] to the commands that compact or run a model, which
    /// refuse to start rather than run without the hooks and budgets the file may set, as they do
    /// for a wrong value. Fix the file.
    #[error("{source}")]
    NotLoaded {
        /// The load error.
        source: Box<SettingsError>,
    },
    /// A settings section passed the schema's check but does not read into the typed settings,
    /// so it stands on its defaults (`llm` without its `baseUrl`). The commands that compact or
    /// run a model refuse rather than send anything so. A ctxkit fault: the check and the typed
    /// settings disagree (a test holds that they agree on every key's accepted values).
    #[error(
        "Settings section `{section}` does not read into ctxkit's settings though its values pass the check; nothing is sent while it stands on its defaults (a ctxkit fault: please report it with the section's name)"
    )]
    SectionUnread {
        /// The top-level key of the section.
        section: String,
    },
    /// The saved keys (`auth.json`) could not be read: not JSON, or not an object of provider
    /// entries. Fix or remove the file; ctxkit never overwrites it then.
    #[error("Invalid credentials file `{path}`: {reason}")]
    Credentials {
        /// The credentials file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A save was requested for a scope whose file failed to load; it is left untouched so a
    /// hand-edited broken file is never overwritten. Fix the file, then retry.
    #[error("Settings file `{path}` could not be loaded, so it was not modified")]
    ScopeNotWritable {
        /// The settings file.
        path: PathBuf,
        /// The scope.
        scope: SettingsScope,
    },
}

/// ` at line N` for a line, nothing without one.
pub(crate) fn at_line(line: Option<usize>) -> String {
    line.map(|line| format!(" at line {line}"))
        .unwrap_or_default()
}
