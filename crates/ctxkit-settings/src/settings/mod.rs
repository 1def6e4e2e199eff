//! The settings manager: global and project documents, their merged view with defaults, and
//! edits that are written back without losing keys other processes wrote meanwhile.

#[cfg(test)]
mod accepted_reads;
pub(crate) mod allowlist;
mod boundary;
pub(crate) mod confine;
mod diagnostics;
pub(crate) mod document;
mod held;
mod key_path;
mod known;
mod locate;
mod model_list;
pub(crate) mod numbers;
mod package_sources;
mod pi_import_apply;
pub(crate) mod reach;
mod read;
pub(crate) mod schema;
mod scoped;
mod section;
mod shown;
pub(crate) mod store;
pub(crate) mod validate;
mod write;

use std::path::{Path, PathBuf};

pub use allowlist::{HeldEntry, HeldReason};
pub(crate) use boundary::{code_parts, is_path_as_written, with_shell_string_script};
pub use boundary::{holds_credentials, shell_files};
pub use diagnostics::SettingsDiagnostic;
pub use document::{Document, KeyPath};
pub use known::{check_known_key, is_known_key, is_pi_key_not_acted_on, is_pi_key_not_read};
pub use package_sources::{add_package_source, remove_package_sources};
pub use pi_import_apply::ImportStep;
pub use reach::{held_until_trusted, looks_local};
pub use shown::SettingValue;

use crate::env::Environment;
use crate::error::{SettingsError, SettingsScope};
use confine::Reach;

/// Where an effective value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingOrigin {
    /// The project settings file.
    Project,
    /// The global settings file.
    Global,
    /// The layer `"contextStrategy": "recommended"` puts beneath the files.
    Strategy,
    /// The built-in default.
    Default,
}

/// A value looked up by dotted key.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingLookup {
    /// The dotted key.
    pub key: String,
    /// The effective value (`None`: unset and no default).
    pub value: Option<SettingValue>,
    /// Where it came from (`None` when unset).
    pub origin: Option<SettingOrigin>,
    /// Whether the schema knows the key.
    pub known: bool,
}

/// One row of [`SettingsManager::list`].
#[derive(Debug, Clone, PartialEq)]
pub struct SettingEntry {
    /// Dotted key.
    pub key: String,
    /// Effective value, `None` when unset without default.
    pub value: Option<SettingValue>,
    /// Where the value came from.
    pub origin: Option<SettingOrigin>,
    /// Whether the schema knows the key.
    pub known: bool,
}

#[derive(Debug, Clone)]
struct ScopeState {
    scope: SettingsScope,
    path: Option<PathBuf>,
    /// How far the file may lead through symlinks (reads and writes alike).
    reach: Reach,
    document: Document,
    /// Where the file as loaded writes each key, to say on which line a key is.
    key_lines: Option<locate::KeyLines>,
    /// Why the file failed to load (it reads as empty and is never written then).
    load_error: Option<SettingsError>,
    modified: Vec<KeyPath>,
}

impl ScopeState {
    fn load(
        scope: SettingsScope,
        path: PathBuf,
        reach: Reach,
        errors: &mut Vec<SettingsError>,
    ) -> Self {
        let (document, text, load_error) = match store::read_with_text(&path, reach) {
            Ok((document, text)) => (document, text, None),
            Err(error) => {
                errors.push(error.clone());
                (Document::new(), None, Some(error))
            }
        };
        Self {
            scope,
            path: Some(path),
            reach,
            document,
            key_lines: text.as_deref().map(locate::KeyLines::new),
            load_error,
            modified: Vec::new(),
        }
    }

    /// A scope with no file: it reads as empty and writes nowhere.
    fn none(scope: SettingsScope) -> Self {
        Self {
            scope,
            path: None,
            reach: Reach::Anywhere,
            document: Document::new(),
            key_lines: None,
            load_error: None,
            modified: Vec::new(),
        }
    }

    fn display_path(&self) -> PathBuf {
        self.path.clone().unwrap_or_default()
    }

    /// The line of the loaded file where `key` (or its nearest parent) is written.
    fn line_of(&self, key: &str) -> Option<usize> {
        self.key_lines.as_ref().and_then(|lines| lines.line_of(key))
    }
}

/// Global and project settings with the reference's merge, defaults and write rules.
///
/// Invariants: reading never creates files or directories; a scope whose file failed to load is
/// never written; a save re-reads the file under the lock and only replaces the keys this manager
/// changed, so keys written by other processes (or unknown to ctxkit) survive.
#[derive(Debug)]
pub struct SettingsManager {
    global: ScopeState,
    project: ScopeState,
    effective: Document,
    /// Whether the project's whole document applies (`ctxkit trust`), or only what
    /// `schema::project_safe_keys` lets an untrusted project change.
    project_trusted: bool,
    /// The project document as it applies: whole when trusted, else its safe part.
    project_applied: Document,
    /// The project folder an untrusted project's entries must stay in.
    folder: reach::ProjectFolder,
    /// The effective view read into the typed tree (kept in step with `effective`).
    typed: crate::tree::Settings,
    /// The sections of `effective` serde refused though the check took them, read as their
    /// defaults (`read::typed`); [`Self::check_loaded`] refuses while there are any.
    unread_sections: Vec<String>,
    errors: Vec<SettingsError>,
}

impl SettingsManager {
    /// Loads `~/.ctxkit/settings.json` and `<cwd>/.ctxkit/settings.json`, and whether the user
    /// trusts the project's settings (`ctxkit trust`). Never fails: load errors are collected for
    /// [`SettingsManager::drain_errors`] and that scope reads as empty; a trust file that cannot be
    /// read counts as no trust.
    pub fn load(environment: &Environment) -> Self {
        // Started in the home folder, the project's file is the user's own: one scope, not two.
        let project = (!environment.project_is_agent_dir()).then(|| {
            (
                environment.project_settings_path(),
                Reach::of(environment, SettingsScope::Project),
            )
        });
        let mut manager = Self::from_scopes(environment.global_settings_path(), project);
        manager.folder.set_home(&environment.home);
        manager.recompute();
        match crate::trust::project_trust(environment, &manager) {
            Ok(trust) => manager.set_project_trusted(trust.trusted),
            Err(error) => manager.errors.push(error),
        }
        manager
    }

    /// Loads from explicit file paths. The project is not trusted: only the keys of
    /// `schema::project_safe_keys` apply from its document ([`SettingsManager::set_project_trusted`]).
    /// The project's file is read only beneath its folder (a symlink leading out is refused).
    pub fn from_paths(global_path: PathBuf, project_path: PathBuf) -> Self {
        Self::from_scopes(global_path, Some((project_path, Reach::BeneathFolder)))
    }

    /// The user's file and the project's, if the project has one of its own.
    fn from_scopes(global_path: PathBuf, project: Option<(PathBuf, Reach)>) -> Self {
        tracing::debug!(
            global = %global_path.display(),
            project = ?project.as_ref().map(|(path, _)| path),
            "reading the settings files"
        );
        let mut errors = Vec::new();
        let folder_of_none = reach::ProjectFolder::of_settings_file(&global_path);
        let global = ScopeState::load(
            SettingsScope::Global,
            global_path,
            Reach::Anywhere,
            &mut errors,
        );
        let (folder, project) = match project {
            Some((path, reach)) => (
                reach::ProjectFolder::of_settings_file(&path),
                ScopeState::load(SettingsScope::Project, path, reach, &mut errors),
            ),
            None => (folder_of_none, ScopeState::none(SettingsScope::Project)),
        };
        let mut manager = Self {
            global,
            project,
            effective: Document::new(),
            project_trusted: false,
            project_applied: Document::new(),
            folder,
            typed: crate::tree::Settings::default(),
            unread_sections: Vec::new(),
            errors,
        };
        manager.recompute();
        manager
    }

    /// Settings held in memory only (SDK and tests): `initial` (migrated) is the global
    /// document, the project document is empty; `flush` writes nothing.
    pub fn in_memory(mut initial: Document) -> Self {
        document::migrate(&mut initial);
        let scope_state = |scope, document| ScopeState {
            scope,
            path: None,
            reach: Reach::Anywhere,
            document,
            key_lines: None,
            load_error: None,
            modified: Vec::new(),
        };
        let mut manager = Self {
            global: scope_state(SettingsScope::Global, initial),
            project: scope_state(SettingsScope::Project, Document::new()),
            effective: Document::new(),
            project_trusted: false,
            project_applied: Document::new(),
            folder: reach::ProjectFolder::default(),
            typed: crate::tree::Settings::default(),
            unread_sections: Vec::new(),
            errors: Vec::new(),
        };
        manager.recompute();
        manager
    }

    /// Returns and clears the load errors recorded so far (a write reports its own: `flush`).
    pub fn drain_errors(&mut self) -> Vec<SettingsError> {
        std::mem::take(&mut self.errors)
    }

    /// Unknown keys and invalid values of both documents (global first), in document order. Of an
    /// untrusted project's document, only the values that apply are checked: a key it may not set
    /// is ignored whatever it holds, so its value can stop nothing.
    pub fn diagnostics(&self) -> Vec<SettingsDiagnostic> {
        let mut out = Vec::new();
        for state in [&self.global, &self.project] {
            let report = validate::check_document(&state.document);
            let applied = (state.scope == SettingsScope::Project && !self.project_trusted)
                .then(|| validate::check_document(&self.project_applied));
            let violations = match applied {
                Some(mut applied) => {
                    applied.violations.extend(self.misshapen_violations());
                    applied.violations
                }
                None => report.violations,
            };
            let duplicates = state
                .key_lines
                .iter()
                .flat_map(locate::KeyLines::duplicates);
            for duplicate in duplicates {
                out.push(SettingsDiagnostic::DuplicateKey {
                    scope: state.scope,
                    path: state.display_path(),
                    line: duplicate.line,
                    earlier_line: duplicate.earlier_line,
                    key: duplicate.key.clone(),
                });
            }
            let unknown_keys = report.unknown_keys.into_iter();
            for key in unknown_keys.filter(|key| !known::is_pi_key_not_read(key)) {
                out.push(SettingsDiagnostic::UnknownKey {
                    scope: state.scope,
                    path: state.display_path(),
                    line: state.line_of(&key),
                    key,
                });
            }
            for violation in violations {
                let line = state.line_of(&violation.key);
                out.push(SettingsDiagnostic::wrong_value(
                    state.scope,
                    state.display_path(),
                    line,
                    violation,
                ));
            }
        }
        out
    }

    /// The wrong values an untrusted project gave sections it may set keys in (`"compaction": 5`):
    /// not applied, but reported as what they are (trusting would not make them right).
    fn misshapen_violations(&self) -> Vec<validate::Violation> {
        let mut report = validate::CheckReport::default();
        for key in self.split_project().misshapen_keys() {
            let segments: Vec<String> = key.split('.').map(str::to_owned).collect();
            let value = KeyPath::parse(&key)
                .ok()
                .and_then(|path| document::get_path(&self.project.document, &path));
            if let (Some(field), Some(value)) = (schema::lookup(&segments), value) {
                validate::check_value(&key, &field.kind, value, &mut report);
            }
        }
        report.violations
    }

    /// The document of one scope, as loaded plus in-memory edits.
    pub(crate) fn document(&self, scope: SettingsScope) -> &Document {
        &self.state(scope).document
    }

    /// The merged view (global ⊕ project), without defaults. Of an untrusted project's
    /// document only what it may change is in it ([`SettingsManager::held_project_keys`]).
    #[cfg(test)]
    pub(crate) fn effective(&self) -> &Document {
        &self.effective
    }

    /// Lets the project's whole document apply (the user trusts it) or only its safe part.
    pub fn set_project_trusted(&mut self, trusted: bool) {
        self.project_trusted = trusted;
        self.recompute();
    }

    /// Whether the project's whole document applies.
    pub fn project_trusted(&self) -> bool {
        self.project_trusted
    }

    /// The file backing a scope (`None` for in-memory settings).
    pub fn path(&self, scope: SettingsScope) -> Option<&Path> {
        self.state(scope).path.as_deref()
    }

    /// Whether the scope's file failed to load (and will therefore not be written).
    pub fn load_failed(&self, scope: SettingsScope) -> bool {
        self.state(scope).load_error.is_some()
    }

    /// Why the scope's file failed to load (`None` when it loaded, or does not exist).
    pub fn load_error(&self, scope: SettingsScope) -> Option<&SettingsError> {
        self.state(scope).load_error.as_ref()
    }

    /// For the commands that compact or run a model: the first settings file that could not be
    /// loaded (the user's, then the project's) as [`SettingsError::NotLoaded`]. Both files count,
    /// as a wrong value in either does: an untrusted project's
    /// budgets apply too, and a trusted project's unreadable file would drop its hooks unseen.
    /// Then a section that stands on its defaults because it did not read, as
    /// [`SettingsError::SectionUnread`].
    pub fn check_loaded(&self) -> Result<(), SettingsError> {
        match [&self.global, &self.project]
            .into_iter()
            .find_map(|state| state.load_error.clone())
        {
            Some(error) => Err(SettingsError::NotLoaded {
                source: Box::new(error),
            }),
            None => match self.unread_sections.first() {
                Some(section) => Err(SettingsError::SectionUnread {
                    section: section.clone(),
                }),
                None => Ok(()),
            },
        }
    }

    /// The effective value of a dotted key: the files', then the context strategy's layer, then
    /// the schema default.
    pub fn get(&self, key: &str) -> Result<SettingLookup, SettingsError> {
        let path = KeyPath::parse(key)?;
        let field = schema::lookup(path.segments());
        // A key read from the user's own settings alone (`x-user-only`) is that file's value
        // whatever a project says: a project's `chat.passEnv` is never acted on.
        let user_only = field.is_some_and(|field| field.user_only);
        let (source, origin_of_found) = if user_only {
            (&self.global.document, SettingOrigin::Global)
        } else {
            (&self.effective, self.origin_of(&path))
        };
        let found = document::get_path(source, &path).filter(|value| !value.is_null());
        let layer = crate::Settings::strategy_layer(self.typed.context_strategy);
        let from_layer = document::get_path(&layer, &path).filter(|value| !value.is_null());
        let (value, origin) = match (found, from_layer) {
            (Some(value), _) => (
                Some(SettingValue::new(numbers::as_number(value))),
                Some(origin_of_found),
            ),
            (None, Some(value)) => (
                Some(SettingValue::new(numbers::as_number(value))),
                Some(SettingOrigin::Strategy),
            ),
            (None, None) => match field.and_then(|field| field.default.clone()) {
                Some(default) => (
                    Some(SettingValue::new(default)),
                    Some(SettingOrigin::Default),
                ),
                None => (None, None),
            },
        };
        // A section is what its keys are in effect (`config get compaction` printed the file's
        // keys alone, `config get compaction.keepRecentTokens` the strategy's value).
        let (value, origin) = match self.effective_section(&path, value) {
            section::Section::Effective(merged) => {
                (Some(merged), origin.or(Some(SettingOrigin::Default)))
            }
            section::Section::NotASection(value) => (value, origin),
        };
        Ok(SettingLookup {
            key: path.dotted(),
            value,
            origin,
            known: key_path::kind_at(path.segments()).is_some(),
        })
    }

    /// The value of a dotted key in one scope's document only (no defaults).
    pub fn get_in(
        &self,
        scope: SettingsScope,
        key: &str,
    ) -> Result<Option<SettingValue>, SettingsError> {
        let path = KeyPath::parse(key)?;
        Ok(document::get_path(&self.state(scope).document, &path)
            .map(|value| SettingValue::new(value.clone())))
    }

    /// Every known leaf key with its effective value, then every unknown key present in a file.
    pub fn list(&self) -> Vec<SettingEntry> {
        let mut out = Vec::new();
        for (key, _) in schema::leaves() {
            if let Ok(lookup) = self.get(&key) {
                out.push(SettingEntry {
                    key: lookup.key,
                    value: lookup.value,
                    origin: lookup.origin,
                    known: true,
                });
            }
        }
        let mut unknown: Vec<String> = Vec::new();
        for state in [&self.global, &self.project] {
            for key in validate::check_document(&state.document).unknown_keys {
                if !unknown.contains(&key) {
                    unknown.push(key);
                }
            }
        }
        for key in unknown {
            if let Ok(lookup) = self.get(&key) {
                out.push(SettingEntry {
                    key: lookup.key,
                    value: lookup.value,
                    origin: lookup.origin,
                    known: false,
                });
            }
        }
        out
    }

    fn origin_of(&self, path: &KeyPath) -> SettingOrigin {
        if document::get_path(&self.project_applied, path).is_some() {
            SettingOrigin::Project
        } else {
            SettingOrigin::Global
        }
    }

    fn state(&self, scope: SettingsScope) -> &ScopeState {
        match scope {
            SettingsScope::Global => &self.global,
            SettingsScope::Project => &self.project,
        }
    }

    fn state_mut(&mut self, scope: SettingsScope) -> &mut ScopeState {
        match scope {
            SettingsScope::Global => &mut self.global,
            SettingsScope::Project => &mut self.project,
        }
    }

    fn recompute(&mut self) {
        self.project_applied = self.applied_project();
        self.effective = document::merge_documents(&self.global.document, &self.project_applied);
        (self.typed, self.unread_sections) = read::typed(&self.global.document, &self.effective);
        self.pin_project_hook_scripts();
    }

    /// A trusted project's hooks (which replace the user's: the merge replaces arrays) check
    /// before each run that the project scripts they name are the ones trusted.
    fn pin_project_hook_scripts(&mut self) {
        let project_hooks = self
            .project_applied
            .get("hooks")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|hooks| !hooks.is_empty());
        let project = self
            .project
            .path
            .as_deref()
            .and_then(Path::parent)
            .and_then(Path::parent)
            .and_then(|project| std::fs::canonicalize(project).ok());
        if let (true, Some(project)) = (self.project_trusted && project_hooks, project) {
            crate::trust::pin_hook_scripts(&mut self.typed.hooks, &project);
        }
    }

    /// Every setting, typed: the effective view read once per change, each wrong value replaced by
    /// its default (`diagnostics` names it), `x-user-only` keys from the global settings alone,
    /// the context strategy's layer beneath the files.
    pub fn settings(&self) -> &crate::tree::Settings {
        &self.typed
    }
}
