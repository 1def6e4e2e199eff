//! Problems found in a settings file that do not stop loading ([`SettingsDiagnostic`]). A wrong
//! value of a key ctxkit acts on makes the commands that compact or run a model refuse to start;
//! one of a key it only checks (Pi's interface keys) is a warning, as Pi runs with it; the listing
//! commands show both and go on.

use std::path::PathBuf;

use super::known;
use crate::error::{SettingsScope, at_line};

/// A problem found in a settings file that does not stop loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsDiagnostic {
    /// A key the schema does not know. Kept on disk and in memory; maybe a typo.
    UnknownKey {
        /// Which file.
        scope: SettingsScope,
        /// The file path (empty for in-memory settings).
        path: PathBuf,
        /// 1-based line where the key (or its nearest parent) is written, when it is.
        line: Option<usize>,
        /// The dotted key.
        key: String,
    },
    /// A value of the wrong type or range; typed getters use the default instead.
    InvalidValue {
        /// Which file.
        scope: SettingsScope,
        /// The file path (empty for in-memory settings).
        path: PathBuf,
        /// 1-based line where the key (or its nearest parent) is written, when it is.
        line: Option<usize>,
        /// The dotted key.
        key: String,
        /// What the schema accepts.
        expected: String,
        /// The value found, as JSON.
        found: String,
    },
    /// A wrong value of one of Pi's keys ctxkit checks but does not act on
    /// (`known::PI_KEYS_NOT_ACTED_ON`: `editorPaddingX: 5`). Pi floors and clamps these in its
    /// getters and runs, so this only warns: the typed tree keeps the default, nothing reads it.
    IgnoredValue {
        /// Which file.
        scope: SettingsScope,
        /// The file path (empty for in-memory settings).
        path: PathBuf,
        /// 1-based line where the key (or its nearest parent) is written, when it is.
        line: Option<usize>,
        /// The dotted key.
        key: String,
        /// What the schema accepts.
        expected: String,
        /// The value found, as JSON.
        found: String,
    },
    /// A key written twice in one object of a file: the later value applies, the earlier one is
    /// ignored.
    DuplicateKey {
        /// Which file.
        scope: SettingsScope,
        /// The file path.
        path: PathBuf,
        /// 1-based line of the copy that applies.
        line: usize,
        /// 1-based line of the copy ignored.
        earlier_line: usize,
        /// The dotted key.
        key: String,
    },
}

impl SettingsDiagnostic {
    /// The diagnostic of a wrong value at `key`: an error, or a warning for a key ctxkit does not
    /// act on.
    pub(crate) fn wrong_value(
        scope: SettingsScope,
        path: PathBuf,
        line: Option<usize>,
        violation: super::validate::Violation,
    ) -> Self {
        let super::validate::Violation {
            key,
            expected,
            found,
        } = violation;
        if known::is_pi_key_not_acted_on(&key) {
            Self::IgnoredValue {
                scope,
                path,
                line,
                key,
                expected,
                found,
            }
        } else {
            Self::InvalidValue {
                scope,
                path,
                line,
                key,
                expected,
                found,
            }
        }
    }

    /// One-line message in the house style.
    pub fn message(&self) -> String {
        match self {
            Self::UnknownKey {
                path, line, key, ..
            } => {
                let hint = known::closest_known_key(key)
                    .map(|known| format!("; did you mean `{known}`?"))
                    .unwrap_or_default();
                format!(
                    "Unknown setting `{key}` in `{}`{} (kept as is){hint}",
                    path.display(),
                    at_line(*line)
                )
            }
            // A project's value of a key read from the user's settings alone never applies, and
            // stops nothing (QA 2026-12-07: the warning said commands would refuse).
            Self::InvalidValue {
                scope: SettingsScope::Project,
                path,
                line,
                key,
                expected,
                found,
            } if super::schema::user_only(&key.split('.').collect::<Vec<_>>()) => format!(
                "Invalid value for `{key}` in `{}`{}: expected {expected}, found {found} (ignored: \
                 it is read from your own settings only)",
                path.display(),
                at_line(*line),
            ),
            Self::InvalidValue {
                path,
                line,
                key,
                expected,
                found,
                ..
            } => format!(
                "Invalid value for `{key}` in `{}`{}: expected {expected}, found {found} (commands \
                 that compact or run a model refuse to start until it is fixed)",
                path.display(),
                at_line(*line),
            ),
            Self::IgnoredValue {
                path,
                line,
                key,
                expected,
                found,
                ..
            } => format!(
                "Ignored value for `{key}` in `{}`{}: expected {expected}, found {found} (Pi's \
                 key, not acted on by ctxkit)",
                path.display(),
                at_line(*line),
            ),
            Self::DuplicateKey {
                path,
                line,
                earlier_line,
                key,
                ..
            } => format!(
                "Setting `{key}` is written twice in `{}`, at lines {earlier_line} and {line}: \
                 the value at line {line} applies (remove the other)",
                path.display(),
            ),
        }
    }

    /// The dotted key the problem is about.
    pub fn key(&self) -> &str {
        match self {
            Self::UnknownKey { key, .. }
            | Self::InvalidValue { key, .. }
            | Self::IgnoredValue { key, .. }
            | Self::DuplicateKey { key, .. } => key,
        }
    }

    /// `true` for invalid values, `false` for unknown keys, ignored values and keys written twice.
    pub fn is_error(&self) -> bool {
        match self {
            Self::UnknownKey { .. } | Self::IgnoredValue { .. } | Self::DuplicateKey { .. } => {
                false
            }
            Self::InvalidValue { .. } => true,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::SettingsDiagnostic;
    use crate::{SettingsError, SettingsManager};

    /// QA: a key written twice was reported at its first line, whose valid value does not apply,
    /// and nothing said it was written twice.
    #[test]
    fn a_key_written_twice_is_reported_at_the_copy_that_applies() {
        let folder = tempfile::tempdir().unwrap();
        let global = folder.path().join("settings.json");
        std::fs::write(
            &global,
            "{\n  \"hideThinkingBlock\": true,\n  \"quietStartup\": false,\n  \"treeFilterMode\": \"all\",\n  \"hideThinkingBlock\": \"yes\"\n}\n",
        )
        .unwrap();
        let manager = SettingsManager::from_paths(global, folder.path().join("none.json"));
        let messages: Vec<String> = manager
            .diagnostics()
            .iter()
            .map(SettingsDiagnostic::message)
            .collect();
        assert!(
            messages
                .iter()
                .any(|message| message.contains("`hideThinkingBlock`")
                    && message.contains("written twice")
                    && message.contains("lines 2 and 5")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|message| message
                .starts_with("Invalid value for `hideThinkingBlock`")
                && message.contains(" at line 5")),
            "{messages:?}"
        );
    }

    #[test]
    fn an_untrusted_projects_ignored_key_is_not_validated() {
        let folder = tempfile::tempdir().unwrap();
        let global = folder.path().join("global.json");
        let project = folder.path().join("project.json");
        std::fs::write(&global, "{}").unwrap();
        // `hooks` of the wrong shape, and a wrong value of a key a project may set.
        std::fs::write(
            &project,
            r#"{"hooks": {"sessionStart": [{"command": ["true"]}]}, "treeFilterMode": 5}"#,
        )
        .unwrap();
        let invalid = |manager: &SettingsManager| -> Vec<String> {
            manager
                .diagnostics()
                .into_iter()
                .filter_map(|diagnostic| match diagnostic {
                    SettingsDiagnostic::InvalidValue { key, .. } => Some(key),
                    SettingsDiagnostic::UnknownKey { .. }
                    | SettingsDiagnostic::IgnoredValue { .. }
                    | SettingsDiagnostic::DuplicateKey { .. } => None,
                })
                .collect()
        };
        let mut manager = SettingsManager::from_paths(global, project);
        assert_eq!(invalid(&manager), ["treeFilterMode"]);
        manager.set_project_trusted(true);
        let trusted = invalid(&manager);
        assert!(
            trusted.iter().any(|key| key.starts_with("hooks")),
            "{trusted:?}"
        );
    }

    /// QA finding 3: a syntax error in the user's settings dropped the whole file with one warning,
    /// and `chat`/`serve` started with defaults (the user's hooks and budgets ignored).
    #[test]
    fn a_file_that_does_not_load_is_a_refusal_naming_its_position() {
        let folder = tempfile::tempdir().unwrap();
        let global = folder.path().join("global.json");
        let project = folder.path().join("project/.ctxkit/settings.json");
        std::fs::write(
            &global,
            "{\n  \"hooks\": [],\n  \"compaction\": {\"reserveTokens\": 1,},\n}\n",
        )
        .unwrap();
        let manager = SettingsManager::from_paths(global.clone(), project.clone());
        let error = manager.check_loaded().unwrap_err();
        assert!(
            matches!(&error, SettingsError::NotLoaded { source }
                if matches!(**source, SettingsError::Parse { line: 3, column: 37, .. })),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "Invalid JSON in settings file `{}` at line 3, column 37: trailing comma",
                global.display()
            )
        );
        // A project's file counts too; a file that is absent does not.
        std::fs::write(&global, "{}").unwrap();
        assert!(
            SettingsManager::from_paths(global.clone(), project.clone())
                .check_loaded()
                .is_ok()
        );
        std::fs::create_dir_all(project.parent().unwrap()).unwrap();
        std::fs::write(&project, "[1]").unwrap();
        let error = SettingsManager::from_paths(global, project)
            .check_loaded()
            .unwrap_err();
        assert!(
            error.to_string().contains("must contain a JSON object"),
            "{error}"
        );
    }

    /// QA finding 5a: `"compaction": 5` in an untrusted project was reported as "ignored
    /// `compaction` … not trusted", as if trusting would apply it.
    #[test]
    fn an_untrusted_projects_section_of_the_wrong_type_waits_for_trust_not_applied() {
        let folder = tempfile::tempdir().unwrap();
        let global = folder.path().join("global.json");
        let project = folder.path().join("project.json");
        std::fs::write(&global, r#"{"compaction": {"reserveTokens": 1000}}"#).unwrap();
        std::fs::write(&project, r#"{"compaction": 5, "llm": "x", "hooks": 5}"#).unwrap();
        let mut manager = SettingsManager::from_paths(global, project);
        // QA 2026-12-07: a cloned project's `"compaction": 5` stopped every chat until the user
        // edited it. Nothing of these applies untrusted, so they wait for trust like the rest.
        assert!(
            manager.diagnostics().is_empty(),
            "{:?}",
            manager.diagnostics()
        );
        assert_eq!(manager.held_project_keys(), ["compaction", "llm", "hooks"]);
        // Not applied: the user's value stands.
        assert_eq!(
            manager.get("compaction.reserveTokens").unwrap().origin,
            Some(crate::SettingOrigin::Global)
        );
        // Trusted, a wrong value refuses, `llm` as much as `compaction`.
        manager.set_project_trusted(true);
        let messages: Vec<String> = manager
            .diagnostics()
            .iter()
            .map(SettingsDiagnostic::message)
            .collect();
        for key in ["compaction", "llm"] {
            assert!(
                messages
                    .iter()
                    .any(|message| message.starts_with(&format!("Invalid value for `{key}` in `"))),
                "{key}: {messages:?}"
            );
        }
    }

    /// Pi's own keys that ctxkit does not read are no typo: not reported. A typo still is, with
    /// the key it most likely meant.
    #[test]
    fn pis_keys_are_not_reported_as_unknown_and_typos_are() {
        let manager = SettingsManager::in_memory(
            serde_json::json!({
                "tuiMode": "fullscreen", "terminal": {"hyperlinks": true},
                "toolTimeoutMs": 1, "compacton": {}
            })
            .as_object()
            .cloned()
            .unwrap(),
        );
        let messages: Vec<String> = manager
            .diagnostics()
            .iter()
            .map(SettingsDiagnostic::message)
            .collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(
            messages[0].starts_with("Unknown setting `compacton`")
                && messages[0].ends_with("did you mean `compaction`?"),
            "{messages:?}"
        );
    }

    /// Pi 1.6 runs with `editorPaddingX: 5`, `autocompleteMaxVisible: 30` and
    /// `terminal.imageWidthCells: 0` (its getters clamp them); they stopped `chat` (QA r99). ctxkit
    /// does not act on these keys: a warning, the default kept.
    #[test]
    fn a_wrong_value_of_a_key_not_acted_on_only_warns() {
        let manager = SettingsManager::in_memory(
            serde_json::json!({"editorPaddingX": 5, "autocompleteMaxVisible": 30,
                "terminal": {"imageWidthCells": 0}, "retry": {"maxRetries": -1}})
            .as_object()
            .cloned()
            .unwrap(),
        );
        let diagnostics = manager.diagnostics();
        let errors: Vec<&str> = diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .map(SettingsDiagnostic::key)
            .collect();
        assert_eq!(errors, ["retry.maxRetries"]);
        let ignored: Vec<String> = diagnostics
            .iter()
            .filter(|diagnostic| matches!(diagnostic, SettingsDiagnostic::IgnoredValue { .. }))
            .map(SettingsDiagnostic::message)
            .collect();
        assert_eq!(ignored.len(), 3, "{ignored:?}");
        assert_eq!(
            ignored[0],
            "Ignored value for `editorPaddingX` in ``: expected an integer from 0 to 3, found 5 \
             (Pi's key, not acted on by ctxkit)"
        );
        assert_eq!(manager.settings().editor_padding_x, 0);
        assert_eq!(manager.settings().terminal.image_width_cells, 60);
    }
}
