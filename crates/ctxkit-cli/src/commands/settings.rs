//! The settings of this process, read at most once: `run` makes one [`ProcessSettings`] and every
//! command and surface (chat's setup, its summarizer and its resources; serve; the resource and
//! package commands) reads that value, so a settings file changing while ctxkit starts can never
//! give one surface the old settings and another the new.

use std::io::Write;
use std::sync::OnceLock;

use anyhow::{Context as _, Result};
use ctxkit_settings::{
    CTXKIT_HOME_VAR, CTXKIT_OFFLINE_VAR, Environment, SettingsError, SettingsManager, SettingsScope,
};

use crate::cli::GlobalArgs;

/// The resource environment and the settings of this process; each read on first use, then kept.
#[derive(Debug)]
pub struct ProcessSettings<'a> {
    global: &'a GlobalArgs,
    environment: OnceLock<Environment>,
    settings: OnceLock<SettingsManager>,
    unloaded: UnloadedFiles,
    unknown_keys: UnknownKeys,
    /// This run's decision on the project's trust (the chat's `--approve`, `--no-approve`).
    trust_override: Option<bool>,
}

/// Who says that a settings file holds a key ctxkit does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownKeys {
    /// A warning each when the files are read, once per process.
    Warn,
    /// The command lists them itself (`config`, `resources`).
    LeftToTheCommand,
}

/// Who says that a settings file could not be loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnloadedFiles {
    /// A warning when the files are read (the command goes on with the others).
    Warn,
    /// The command's refusal (`SettingsManager::check_loaded`), which names the file, its line
    /// and the fix: a warning before it would say the same twice.
    LeftToTheRefusal,
}

impl<'a> ProcessSettings<'a> {
    /// Nothing is read yet: commands that need no settings never touch the files. `unloaded`:
    /// whether a file that does not load is warned of, or left to the command's refusal.
    pub fn new(global: &'a GlobalArgs, unloaded: UnloadedFiles, unknown_keys: UnknownKeys) -> Self {
        Self {
            trust_override: None,
            global,
            environment: OnceLock::new(),
            settings: OnceLock::new(),
            unloaded,
            unknown_keys,
        }
    }

    /// Decides the project's trust for this run (`Some(true)`: trusted, `Some(false)`: not),
    /// over the recorded one; before anything is read.
    #[must_use]
    pub fn with_trust_override(mut self, trusted: Option<bool>) -> Self {
        self.trust_override = trusted;
        self
    }

    /// The global flags the process was started with.
    pub fn args(&self) -> &GlobalArgs {
        self.global
    }

    /// The resource environment: real home, cwd and temp dir, with `--home` and `--offline` applied.
    pub fn environment(&self) -> Result<&Environment> {
        if let Some(environment) = self.environment.get() {
            return Ok(environment);
        }
        let mut environment = resource_environment(self.global)?;
        environment.project_trust_override = self.trust_override;
        Ok(self.environment.get_or_init(|| environment))
    }

    /// The settings, read from the files the first time and the same value every time after.
    pub fn settings(&self) -> Result<&SettingsManager> {
        if let Some(settings) = self.settings.get() {
            return Ok(settings);
        }
        let settings = load_settings(self.environment()?, self.unloaded, self.unknown_keys)?;
        Ok(self.settings.get_or_init(|| settings))
    }

    /// The environment and the settings as owned values, for a command that edits the settings.
    pub fn into_parts(self) -> Result<(Environment, SettingsManager)> {
        self.settings()?;
        let environment = self.environment.into_inner();
        let settings = self.settings.into_inner();
        environment
            .zip(settings)
            .context("the settings were read but not kept")
    }
}

/// Whether `error` says the user's or the project's settings file did not load (what
/// `SettingsManager::check_loaded` refuses), not the trust list.
fn is_settings_file_error(settings: &SettingsManager, error: &SettingsError) -> bool {
    failed_path(error).is_some_and(|path| {
        [SettingsScope::Global, SettingsScope::Project]
            .into_iter()
            .any(|scope| settings.path(scope) == Some(path))
    })
}

/// The file a load error names.
fn failed_path(error: &SettingsError) -> Option<&std::path::Path> {
    match error {
        SettingsError::Refused { path, .. }
        | SettingsError::Read { path, .. }
        | SettingsError::Parse { path, .. }
        | SettingsError::NotAnObject { path } => Some(path),
        SettingsError::InvalidValue { .. }
        | SettingsError::RefusedValue { .. }
        | SettingsError::InvalidValues { .. }
        | SettingsError::UnknownKey { .. }
        | SettingsError::InvalidKey { .. }
        | SettingsError::Credentials { .. }
        | SettingsError::LockTimeout { .. }
        | SettingsError::Write { .. }
        | SettingsError::ScopeNotWritable { .. }
        | SettingsError::NotLoaded { .. }
        | SettingsError::SectionUnread { .. } => None,
    }
}

/// What to do about a file that did not load: a settings file (whose failure stops the commands
/// that compact or run a model: `SettingsManager::check_loaded`) or the trust list.
fn load_hint(settings: &SettingsManager, error: &SettingsError) -> Option<String> {
    if let SettingsError::Refused { path, reason } = error {
        return Some(crate::classify::refused_hint(path, reason));
    }
    let path = failed_path(error)?;
    let settings_file = [SettingsScope::Global, SettingsScope::Project]
        .into_iter()
        .any(|scope| settings.path(scope) == Some(path));
    Some(if settings_file {
        format!(
            "fix `{}` by hand (`ctxkit config list` checks it); until then commands that compact \
             or run a model refuse to start",
            path.display()
        )
    } else {
        format!(
            "fix or remove `{}`; until then no project's settings are trusted",
            path.display()
        )
    })
}

/// Where this process's saved keys are (`<home>/auth.json`, `ctxkit login`): set with the
/// process's environment, which every command that asks a model reads first (its settings need it).
static CREDENTIALS: OnceLock<std::path::PathBuf> = OnceLock::new();

/// This process's saved-keys file, once its environment was read (`None` before).
pub fn process_credentials_path() -> Option<&'static std::path::Path> {
    CREDENTIALS.get().map(std::path::PathBuf::as_path)
}

/// The Pi `models.json` files whose routes this process heeds (`ctxkit_settings::pi_models_paths`).
static PI_MODELS: OnceLock<Vec<std::path::PathBuf>> = OnceLock::new();

/// This process's Pi `models.json` files, once its environment was read (none before).
pub fn process_pi_models_paths() -> &'static [std::path::PathBuf] {
    PI_MODELS.get().map_or(&[], Vec::as_slice)
}

/// The resources environment of this process, with `--home` and `--offline` (which clap already
/// merged with `CTXKIT_HOME` / `CTXKIT_OFFLINE`) applied.
fn resource_environment(global: &GlobalArgs) -> Result<Environment> {
    let mut environment =
        Environment::from_process().context("cannot determine the home and working directories")?;
    environment.variables.remove(CTXKIT_HOME_VAR);
    environment.variables.remove(CTXKIT_OFFLINE_VAR);
    if let Some(home) = &global.home {
        environment = environment.with_variable(CTXKIT_HOME_VAR, &home.display().to_string());
    }
    if global.offline {
        environment = environment.with_variable(CTXKIT_OFFLINE_VAR, "1");
    }
    let _ = CREDENTIALS.set(ctxkit_settings::credentials_path(&environment));
    let _ = PI_MODELS.set(ctxkit_settings::pi_models_paths(&environment));
    Ok(environment)
}

/// The settings of `environment`'s project with their load errors kept, for a caller that refuses
/// to go on with them (`/reload`).
pub(crate) fn settings_with_errors(environment: &Environment) -> SettingsManager {
    SettingsManager::load(environment)
}

/// The settings another project of the process sees (`serve`: a session's `cwd`, for its run's
/// system prompt), or this one's after a write (`config set --project`: whether it is trusted
/// depends on what its file now holds): read afresh each time, their problems logged, not
/// printed (stderr is the server's, and the project is the session's, not the process's).
pub(super) fn settings_of_project(environment: &Environment) -> SettingsManager {
    let mut settings = SettingsManager::load(environment);
    for error in settings.drain_errors() {
        tracing::warn!(project = %environment.cwd.display(), "{error}");
    }
    settings
}

/// Loads settings; load errors become warnings on stderr, each with its `hint:` line (that file
/// then reads as empty). An untrusted project's settings that do not apply are named in one
/// warning.
fn load_settings(
    environment: &Environment,
    unloaded: UnloadedFiles,
    unknown_keys: UnknownKeys,
) -> Result<SettingsManager> {
    let mut settings = SettingsManager::load(environment);
    let mut stderr = crate::redact::stderr();
    for error in settings.drain_errors() {
        if unloaded == UnloadedFiles::LeftToTheRefusal && is_settings_file_error(&settings, &error)
        {
            continue;
        }
        writeln!(stderr, "warning: {error}")?;
        if let Some(hint) = load_hint(&settings, &error) {
            writeln!(stderr, "hint: {hint}")?;
        }
    }
    if let Some(warning) = super::config::held_settings_warning(environment, &settings) {
        writeln!(stderr, "{warning}")?;
    }
    if unknown_keys == UnknownKeys::Warn {
        // Read once per process: one line a key, never one a turn. A wrong value is the refusal
        // of the commands that compact or run a model (`summary_setup`).
        // At most a screen of them: a cloned project's file of 20,000 unknown keys printed
        // 20,000 lines before every command (QA 2026-12-07).
        let diagnostics = settings.diagnostics();
        let warnings: Vec<_> = diagnostics
            .iter()
            .filter(|diagnostic| !diagnostic.is_error())
            .collect();
        for unknown in warnings.iter().take(MAX_SETTINGS_WARNINGS) {
            writeln!(stderr, "warning: {}", unknown.message())?;
        }
        if let Some(more) = warnings
            .len()
            .checked_sub(MAX_SETTINGS_WARNINGS)
            .filter(|&more| more > 0)
        {
            writeln!(
                stderr,
                "warning: {more} more settings warnings (`ctxkit config list` shows every key)"
            )?;
        }
    }
    Ok(settings)
}

/// The most settings warnings a command prints before saying how many more there are.
const MAX_SETTINGS_WARNINGS: usize = 8;

/// The shell the `bash` tool and `!cmd` run (`shellPath`, `shellCommandPrefix`; never a
/// project's own unless trusted, as every setting that runs code). A leading `~` of `shellPath`
/// is the user's home, as Pi's `getShellPath` reads it.
pub(crate) fn shell_of(
    typed: &ctxkit_settings::Settings,
    environment: &ctxkit_settings::Environment,
) -> ctxkit_agent::tools::Shell {
    // An empty `shellPath` is unset, as Pi reads it (QA 2026-12-07: every `bash` call failed
    // naming the shell ``).
    let shell_path = typed
        .shell_path
        .as_deref()
        .filter(|path| !path.trim().is_empty());
    let files = ctxkit_settings::shell_files(
        shell_path,
        typed.shell_command_prefix.as_deref(),
        &environment.home,
    );
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let project =
        std::fs::canonicalize(&environment.cwd).unwrap_or_else(|_| environment.cwd.clone());
    ctxkit_agent::tools::Shell {
        path: shell_path.map(|path| ctxkit_settings::expand_tilde_strict(path, &environment.home)),
        command_prefix: typed.shell_command_prefix.clone(),
        pinned: ctxkit_settings::pin_project_files(&files, &project),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    /// QA 2026-12-07: `shellPath: ""` made every `bash` call fail; Pi reads it as unset.
    #[test]
    fn an_empty_shell_path_is_unset() {
        let home = tempfile::tempdir().unwrap();
        let environment = ctxkit_settings::Environment::new(home.path(), home.path());
        let shell = |value: &str| {
            let typed: ctxkit_settings::Settings =
                serde_json::from_value(serde_json::json!({ "shellPath": value })).unwrap();
            super::shell_of(&typed, &environment).path
        };
        assert_eq!(shell(""), None);
        assert_eq!(shell("  "), None);
        assert_eq!(
            shell("/bin/zsh").as_deref(),
            Some(std::path::Path::new("/bin/zsh"))
        );
    }
}
