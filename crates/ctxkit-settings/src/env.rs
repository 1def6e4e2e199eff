//! Where ctxkit looks for its files: home, cwd, temp dir and environment variables, passed in
//! explicitly so that domain code never reads the process environment.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Environment variable overriding the ctxkit home (`~/.ctxkit`); `~` and `~/…` are expanded.
pub const CTXKIT_HOME_VAR: &str = "CTXKIT_HOME";
/// Environment variable enabling offline mode when `1`, `true` or `yes` (case-insensitive).
pub const CTXKIT_OFFLINE_VAR: &str = "CTXKIT_OFFLINE";
/// Name of the per-project configuration directory (directly under the cwd).
pub const PROJECT_DIR_NAME: &str = ".ctxkit";
/// Name of the ctxkit home directory under the user's home.
pub const HOME_DIR_NAME: &str = ".ctxkit";
/// Name of the settings file in both the ctxkit home and the project directory.
pub const SETTINGS_FILE_NAME: &str = "settings.json";

/// Everything the resources subsystem needs to know about the machine it runs on.
///
/// Built once by the binary (see [`Environment::from_process`]) and passed down; tests build
/// one over temp directories with [`Environment::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// The user's home directory (used for `~` expansion and `~/.agents/skills`).
    pub home: PathBuf,
    /// The effective working directory of the session (absolute).
    pub cwd: PathBuf,
    /// Root for temporary package installs (the OS temp dir in production).
    pub temp_dir: PathBuf,
    /// Environment variables that matter to this crate (`CTXKIT_HOME`, `CTXKIT_OFFLINE`, …).
    pub variables: BTreeMap<String, String>,
    /// This run's decision on the project's trust, over the one recorded by `ctxkit trust`: the
    /// chat's `--approve` (`Some(true)`) or `--no-approve` (`Some(false)`), as Pi's flags. Never
    /// recorded; `None` reads the record.
    pub project_trust_override: Option<bool>,
}

impl Environment {
    /// An environment with the given home and cwd, the temp dir `<home>/tmp` and no variables.
    pub fn new(home: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        let home = home.into();
        let temp_dir = home.join("tmp");
        Self {
            home,
            cwd: cwd.into(),
            temp_dir,
            variables: BTreeMap::new(),
            project_trust_override: None,
        }
    }

    /// Reads the real home, cwd, temp dir and the variables this crate uses. For binaries only.
    pub fn from_process() -> std::io::Result<Self> {
        let cwd = std::env::current_dir()?;
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|path| !path.as_os_str().is_empty())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "HOME is not set"))?;
        let mut variables = BTreeMap::new();
        for name in [CTXKIT_HOME_VAR, CTXKIT_OFFLINE_VAR] {
            if let Ok(value) = std::env::var(name) {
                variables.insert(name.to_owned(), value);
            }
        }
        Ok(Self {
            home,
            cwd,
            temp_dir: std::env::temp_dir(),
            variables,
            project_trust_override: None,
        })
    }

    /// Returns a copy with one more variable set.
    #[must_use]
    pub fn with_variable(mut self, name: &str, value: &str) -> Self {
        self.variables.insert(name.to_owned(), value.to_owned());
        self
    }

    /// Returns a copy with another temp dir.
    #[must_use]
    pub fn with_temp_dir(mut self, temp_dir: impl Into<PathBuf>) -> Self {
        self.temp_dir = temp_dir.into();
        self
    }

    /// The ctxkit home ("agentDir" in the reference): `$CTXKIT_HOME` when set and non-empty
    /// (with `~` / `~/…` expanded), else `<home>/.ctxkit`.
    pub fn agent_dir(&self) -> PathBuf {
        match self.variables.get(CTXKIT_HOME_VAR) {
            Some(value) if !value.is_empty() => expand_tilde_strict(value, &self.home),
            Some(_) | None => self.home.join(HOME_DIR_NAME),
        }
    }

    /// The project configuration directory, `<cwd>/.ctxkit` (no ancestor search).
    pub fn project_dir(&self) -> PathBuf {
        self.cwd.join(PROJECT_DIR_NAME)
    }

    /// Whether `<cwd>/.ctxkit` is ctxkit's own directory (ctxkit started in the home folder):
    /// there is no project configuration then, only the user's.
    pub fn project_is_agent_dir(&self) -> bool {
        let (project, agent) = (self.project_dir(), self.agent_dir());
        project == agent
            || std::fs::canonicalize(&project).is_ok_and(|project| {
                std::fs::canonicalize(&agent).is_ok_and(|agent| agent == project)
            })
    }

    /// `<agent dir>/settings.json`.
    pub fn global_settings_path(&self) -> PathBuf {
        self.agent_dir().join(SETTINGS_FILE_NAME)
    }

    /// `<cwd>/.ctxkit/settings.json`.
    pub fn project_settings_path(&self) -> PathBuf {
        self.project_dir().join(SETTINGS_FILE_NAME)
    }

    /// Offline mode: `CTXKIT_OFFLINE` is `1`, `true` or `yes` (case-insensitive).
    pub fn is_offline(&self) -> bool {
        self.variables.get(CTXKIT_OFFLINE_VAR).is_some_and(|value| {
            let value = value.trim().to_ascii_lowercase();
            value == "1" || value == "true" || value == "yes"
        })
    }
}

/// Expands exactly `~` and a `~/` prefix, as Pi's `normalizePath` does (used for the ctxkit
/// home, `sessionDir` and `shellPath`).
pub fn expand_tilde_strict(value: &str, home: &Path) -> PathBuf {
    if value == "~" {
        home.to_path_buf()
    } else if let Some(rest) = value.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(value)
    }
}

/// Expands `~`, `~/…` and also `~xyz` → `<home>/xyz` (package manager and loader paths), and
/// reads a `file://` URL as the path it names, as Pi's `normalizePath` does (`file:///srv/pkg`,
/// percent escapes decoded; QA 2026-12-07: `ctxkit install file:///…` looked for
/// `./file:/…`). A `file:` URL naming another host is left as written.
pub fn expand_tilde_loose(value: &str, home: &Path) -> PathBuf {
    if value.starts_with("file://")
        && let Some(path) = url::Url::parse(value)
            .ok()
            .and_then(|url| url.to_file_path().ok())
    {
        return path;
    }
    if value == "~" {
        home.to_path_buf()
    } else if let Some(rest) = value.strip_prefix("~/") {
        home.join(rest)
    } else if let Some(rest) = value.strip_prefix('~') {
        home.join(rest)
    } else {
        PathBuf::from(value)
    }
}

/// Resolves `path` against `base` and normalises `.` and `..` lexically (like Node's
/// `path.resolve`), without touching the filesystem. Trailing separators disappear.
pub fn resolve_against(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    normalize_lexically(&joined)
}

/// Lexical normalisation: drops `.`, applies `..` to the previous normal component.
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => out.push(prefix.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Canonical path (symlinks resolved), or the path itself when resolution fails.
pub fn canonical_or_raw(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A path relative to `base` (like Node's `path.relative`), `.` when equal; both absolute.
pub fn relative_path(base: &Path, target: &Path) -> PathBuf {
    let base_parts: Vec<Component<'_>> = base.components().collect();
    let target_parts: Vec<Component<'_>> = target.components().collect();
    let common = base_parts
        .iter()
        .zip(&target_parts)
        .take_while(|(left, right)| left == right)
        .count();
    let mut out = PathBuf::new();
    for _ in common..base_parts.len() {
        out.push("..");
    }
    for part in &target_parts[common..] {
        out.push(part.as_os_str());
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Forward-slash form of a path for pattern matching and display.
pub fn to_slash(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_url_is_read_as_the_path_it_names() {
        let home = Path::new("/h");
        assert_eq!(
            expand_tilde_loose("file:///srv/my%20pkg", home),
            PathBuf::from("/srv/my pkg")
        );
        assert_eq!(
            expand_tilde_loose("file://localhost/srv/pkg", home),
            PathBuf::from("/srv/pkg")
        );
        // Another host's file is no local path: left as written (and found missing).
        assert_eq!(
            expand_tilde_loose("file://server/srv/pkg", home),
            PathBuf::from("file://server/srv/pkg")
        );
        assert_eq!(expand_tilde_loose("~/x", home), PathBuf::from("/h/x"));
    }

    #[test]
    fn agent_dir_defaults_and_override() {
        let env = Environment::new("/h", "/w");
        assert_eq!(env.agent_dir(), PathBuf::from("/h/.ctxkit"));
        let env = env.with_variable(CTXKIT_HOME_VAR, "~/custom");
        assert_eq!(env.agent_dir(), PathBuf::from("/h/custom"));
        let env = env.with_variable(CTXKIT_HOME_VAR, "");
        assert_eq!(env.agent_dir(), PathBuf::from("/h/.ctxkit"));
    }

    #[test]
    fn offline_values() {
        for (value, expected) in [("1", true), ("TRUE", true), ("yes", true), ("0", false)] {
            let env = Environment::new("/h", "/w").with_variable(CTXKIT_OFFLINE_VAR, value);
            assert_eq!(env.is_offline(), expected, "{value}");
        }
    }

    #[test]
    fn tilde_forms() {
        let home = Path::new("/h");
        assert_eq!(expand_tilde_strict("~xyz", home), PathBuf::from("~xyz"));
        assert_eq!(expand_tilde_loose("~xyz", home), PathBuf::from("/h/xyz"));
        assert_eq!(expand_tilde_loose("~/a", home), PathBuf::from("/h/a"));
    }

    #[test]
    fn resolve_and_relative() {
        let base = Path::new("/h/.ctxkit");
        assert_eq!(
            resolve_against(base, Path::new("../../w/proj/pkg/")),
            PathBuf::from("/w/proj/pkg")
        );
        assert_eq!(
            relative_path(base, Path::new("/w/proj/pkg")),
            PathBuf::from("../../w/proj/pkg")
        );
        assert_eq!(relative_path(base, base), PathBuf::from("."));
    }
}
