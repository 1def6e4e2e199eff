//! Error types of the crate: one enum per subsystem, each variant says who returns it and how
//! a caller should react.

use std::path::PathBuf;

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

/// Errors of the settings subsystem.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The settings file exists but could not be read. Returned by loading; the scope then
    /// behaves as empty and is never written (so a file we cannot read is never clobbered).
    #[error("Failed to read settings file `{path}`: {source}")]
    Read {
        /// The settings file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
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
    #[error("Invalid value for `{key}` in `{path}`: expected {expected}, found {found}")]
    InvalidValue {
        /// The settings file the value was meant for (or came from).
        path: PathBuf,
        /// The dotted key, e.g. `compaction.reserveTokens`.
        key: String,
        /// What the schema accepts.
        expected: String,
        /// The offending value, as JSON.
        found: String,
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
        source: std::io::Error,
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

/// Errors parsing a package source string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The source is empty or whitespace.
    #[error("Package source is empty")]
    Empty,
    /// The source contains a control character (newline, escape, NUL, …).
    #[error("Package source `{source_text}` contains a control character")]
    ControlCharacter {
        /// The source as given, with control characters escaped.
        source_text: String,
    },
    /// The source (or its npm name, git URL, ref or path segment) starts with `-` and could be
    /// taken as an option by `npm` or `git`.
    #[error(
        "Package source `{source_text}` must not start with `-` (it would be read as an option)"
    )]
    LeadingDash {
        /// The source as given.
        source_text: String,
    },
    /// A git host/path or npm name contains a `..` (or `.`) component and would escape the
    /// install root.
    #[error("Package source `{source_text}` must not contain `..` path components")]
    ParentComponent {
        /// The source as given.
        source_text: String,
    },
    /// An `npm:` source whose name or version is not a registry package name and version (a path,
    /// a URL or `file:` spec would make npm install from elsewhere); local packages are given as
    /// paths.
    #[error("Package source `{source_text}` is not a registry package: {reason}")]
    InvalidNpmSpec {
        /// The source as given.
        source_text: String,
        /// What is wrong.
        reason: &'static str,
    },
}

/// Error parsing YAML frontmatter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line}, column {column}")]
pub struct FrontmatterError {
    /// The YAML parser's description of the problem.
    pub message: String,
    /// 1-based line within the frontmatter.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// Errors of the package manager (install, remove, update, list).
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// The source string was rejected.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// Reading or writing settings failed while persisting a package.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A local source does not exist.
    #[error("Path does not exist: `{path}`")]
    PathDoesNotExist {
        /// The resolved path.
        path: PathBuf,
    },
    /// A child process could not be started (program missing?).
    #[error("Failed to run `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A child process exited unsuccessfully; `stderr` holds what it printed (captured runs).
    #[error("`{command}` failed with code {code}{}", if stderr.is_empty() { String::new() } else { format!(": {stderr}") })]
    CommandFailed {
        /// Program and arguments, space-joined, for display.
        command: String,
        /// Exit code (-1 when killed by a signal).
        code: i32,
        /// Trimmed stderr (or stdout) of the process.
        stderr: String,
    },
    /// A command with a time limit (network checks) did not finish in time; it was killed.
    #[error("`{command}` timed out after {milliseconds}ms")]
    TimedOut {
        /// Program and arguments, space-joined, for display.
        command: String,
        /// The limit.
        milliseconds: u64,
    },
    /// A command succeeded but printed something we cannot use (e.g. `npm view` not printing
    /// a JSON string).
    #[error("Unexpected output from `{command}`: {output}")]
    UnexpectedOutput {
        /// Program and arguments, space-joined, for display.
        command: String,
        /// What it printed (trimmed).
        output: String,
    },
    /// A configured npm or git package is not installed and the resolver was told not to
    /// install it ([`crate::MissingPackages::Report`]); `ctxkit install` fixes it.
    #[error("Package `{source_text}` is not installed")]
    NotInstalled {
        /// The source as written in settings.
        source_text: String,
    },
    /// `npmCommand` is set but its first element is empty.
    #[error("Invalid npmCommand: first array entry must be a non-empty command")]
    InvalidNpmCommand,
    /// `update <source>` named nothing configured.
    #[error("No matching package found for {source_text}{}", suggestion.as_ref().map(|s| format!(". Did you mean {s}?")).unwrap_or_default())]
    NoMatchingPackage {
        /// The source as typed.
        source_text: String,
        /// A configured source that looks like what was meant.
        suggestion: Option<String>,
    },
    /// Filesystem work around an install (creating dirs, removing checkouts) failed.
    #[error("Failed to access `{path}`: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
