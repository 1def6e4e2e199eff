//! Error types of the crate: each variant says who returns it and how a caller should react.

use std::path::PathBuf;

use ctxkit_settings::SettingsError;

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
    /// A URL (`https://`, `http://`, `ssh://`, `git://`) or an scp-style `user@host:path` that is
    /// not a git repository ctxkit can clone: it is never taken as a local path. Credentials in
    /// it are redacted.
    #[error("Package source `{source_text}` is not a git repository URL: {reason}")]
    NotAGitUrl {
        /// The source as given, credentials redacted.
        source_text: String,
        /// What is wrong, and how to write it.
        reason: &'static str,
    },
    /// `npm:` followed by the path of a packed tarball (`npm:/abs/np-1.0.0.tgz`, which Pi 1.6
    /// takes): ctxkit needs the package's name to know where npm installs it. Returned by
    /// [`crate::PackageSource::parse`]; install `suggestion` (`npm:NAME@file:/abs/x.tgz`, the name
    /// guessed from the file name `npm pack` gives) after checking the name.
    #[error(
        "Package source `{source_text}` names a tarball without its package's name: ctxkit takes \
         it as `npm:NAME@file:PATH`"
    )]
    TarballWithoutName {
        /// The source as given.
        source_text: String,
        /// The source to install instead.
        suggestion: String,
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
    #[error("Path does not exist: `{}`", ctxkit_secrets::redact_credentials(&path.display().to_string()))]
    PathDoesNotExist {
        /// The resolved path.
        path: PathBuf,
    },
    /// A local source that is neither a file nor a folder (a FIFO, a device): nothing loads from it.
    #[error("`{}` is neither a file nor a folder", ctxkit_secrets::redact_credentials(&path.display().to_string()))]
    NotAFileOrFolder {
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
    /// npm (or `npmCommand`) exited successfully, but the package's folder is not there
    /// afterwards: nothing was installed and nothing was recorded. Check `npmCommand` and that the
    /// package exists.
    #[error(
        "npm reported success, but `{source_text}` is not in `{}`: nothing was installed",
        path.parent().unwrap_or(path).display()
    )]
    NothingInstalled {
        /// The source as given.
        source_text: String,
        /// Where the package should be now.
        path: PathBuf,
    },
    /// `ctxkit install` of an npm or git source in offline mode (`--offline`, `CTXKIT_OFFLINE`):
    /// installing needs the network, so nothing was installed or recorded. Returned by
    /// [`crate::PackageManager::install`]; turn offline mode off to install (a local path
    /// installs offline).
    #[error("Offline mode is on: `{source_text}` was not installed")]
    Offline {
        /// The source as given.
        source_text: String,
    },
    /// A configured npm or git package is not installed and the resolver was told not to
    /// install it ([`crate::MissingPackages::Report`]); `ctxkit update` (or starting a chat)
    /// installs it.
    #[error(
        "Package `{source_text}` is not installed in `{}`: `ctxkit update` installs it",
        path.display()
    )]
    NotInstalled {
        /// The source as written in settings.
        source_text: String,
        /// Where it would be installed.
        path: std::path::PathBuf,
    },
    /// A configured git package's checkout holds no commit: a clone was interrupted (killed, out
    /// of memory, power lost) and left its `.git` only. Returned by the resolver when told not to
    /// install ([`crate::MissingPackages::Report`]); `ctxkit update` (or `install`, or starting a
    /// chat) clones it again and swaps the new checkout in.
    #[error(
        "Package `{source_text}` is an incomplete checkout in `{}` (an install was interrupted): \
         `ctxkit update` clones it again",
        path.display()
    )]
    IncompleteCheckout {
        /// The source as written in settings.
        source_text: String,
        /// The checkout folder.
        path: std::path::PathBuf,
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
    /// `update <source>` named an entry of an untrusted project's `packages` held back until the
    /// project is trusted (`git:file://…`, a path beyond it, a package that runs code as it is
    /// installed): it does not apply until the user runs `ctxkit trust`, or adds it to their own
    /// settings.
    #[error(
        "`{source_text}` in the project's settings waits for trust: {}, and the project is not trusted",
        reason.describe()
    )]
    UntrustedSource {
        /// The entry as written in the project's settings.
        source_text: String,
        reason: ctxkit_settings::HeldReason,
    },
    /// A git checkout ctxkit will not run git in: its `.git` is not a folder, or its config
    /// sets a key that may run a command (`remote.origin.uploadpack`, `core.fsmonitor`, …), as a
    /// checkout committed to a project can. Removing the checkout and installing again fixes it.
    #[error(
        "Refused to run git in `{}`: {reason}",
        path.display()
    )]
    UnsafeCheckout {
        /// The checkout.
        path: PathBuf,
        /// What in it is refused.
        reason: String,
    },
    /// The project's npm folder holds something npm acts on (a `package.json` that is not the one
    /// ctxkit writes first, a lock file, a `node_modules`), and the project is not trusted: `npm
    /// install` there would install (and run the scripts of) whatever it names, which a cloned
    /// repository may have chosen.
    #[error(
        "Refused to run npm in `{}`: the project is not trusted, and npm would install what the folder holds (and run its scripts)",
        root.display()
    )]
    UntrustedNpmRoot {
        /// The project's npm folder (`.ctxkit/npm`).
        root: PathBuf,
    },
    /// A package folder or file refused by the jail the package manager opens them through (a
    /// symlink out of the scope's folder, `..` past it, the user's credentials): nothing was read,
    /// written or removed there. Check what the project committed under `.ctxkit/`.
    #[error("Refused to touch `{}`: {reason}", path.display())]
    Refused {
        /// The path refused.
        path: PathBuf,
        /// Why (the jail's refusal).
        reason: String,
    },
    /// A folder npm or git would be given is not UTF-8 text: read lossily, the command would
    /// act on another folder (QA 2026-12-07: npm installed into a sibling of the project).
    #[error("`{}` is not UTF-8 text, and npm and git are given paths as text", path.display())]
    PathNotText {
        /// The folder.
        path: PathBuf,
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
