//! Trust in a project's hooks. A project's `.ctxkit/settings.json` comes with the repository, so its
//! `hooks` (commands ctxkit runs) are someone else's code: they run only after the user trusted them
//! with `ctxkit trust`. Trust is recorded in `<agent dir>/trusted-projects.json`, per project
//! directory, for the hooks as they were then (a SHA-256 of their JSON): changed hooks need trusting
//! again.

use std::path::PathBuf;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::env::Environment;
use crate::error::{SettingsError, SettingsScope};
use crate::settings::{Document, SettingsManager, store};

/// The trust file's name in the agent directory.
pub const TRUST_FILE_NAME: &str = "trusted-projects.json";

const PROJECTS_KEY: &str = "projects";

/// Whether the current project's hooks may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectTrust {
    /// The project directory (canonical when it exists).
    pub project: PathBuf,
    /// The `hooks` of the project settings, when it has any.
    pub hooks: Option<Value>,
    /// The fingerprint of those hooks.
    pub fingerprint: Option<String>,
    /// The user trusted exactly these hooks (always true without project hooks).
    pub trusted: bool,
}

fn trust_path(environment: &Environment) -> PathBuf {
    environment.agent_dir().join(TRUST_FILE_NAME)
}

fn project_key(environment: &Environment) -> PathBuf {
    std::fs::canonicalize(&environment.cwd).unwrap_or_else(|_| environment.cwd.clone())
}

fn fingerprint(hooks: &Value) -> String {
    let digest = Sha256::digest(hooks.to_string().as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The trust state of the project settings' hooks.
pub fn project_trust(
    environment: &Environment,
    settings: &SettingsManager,
) -> Result<ProjectTrust, SettingsError> {
    let project = project_key(environment);
    let hooks = settings
        .document(SettingsScope::Project)
        .get("hooks")
        .filter(|hooks| !hooks.as_array().is_some_and(Vec::is_empty))
        .cloned();
    let Some(hooks) = hooks else {
        return Ok(ProjectTrust {
            project,
            hooks: None,
            fingerprint: None,
            trusted: true,
        });
    };
    let print = fingerprint(&hooks);
    let recorded = store::read(&trust_path(environment))?;
    let trusted = recorded
        .get(PROJECTS_KEY)
        .and_then(|projects| projects.get(project.to_string_lossy().as_ref()))
        .and_then(|entry| entry.get("hooks"))
        .and_then(Value::as_str)
        == Some(print.as_str());
    Ok(ProjectTrust {
        project,
        hooks: Some(hooks),
        fingerprint: Some(print),
        trusted,
    })
}

/// Records that the user trusts the project's current hooks (`revoke`: forgets the project).
/// Returns the new state.
pub fn set_project_trust(
    environment: &Environment,
    settings: &SettingsManager,
    revoke: bool,
) -> Result<ProjectTrust, SettingsError> {
    let mut trust = project_trust(environment, settings)?;
    let key = trust.project.to_string_lossy().into_owned();
    let print = trust.fingerprint.clone();
    store::update(&trust_path(environment), |document| {
        let projects = document
            .entry(PROJECTS_KEY)
            .or_insert_with(|| Value::Object(Default::default()));
        if !projects.is_object() {
            *projects = Value::Object(Default::default());
        }
        if let Some(projects) = projects.as_object_mut() {
            match (&print, revoke) {
                (Some(print), false) => {
                    projects.insert(key.clone(), serde_json::json!({ "hooks": print }));
                }
                (None, false) | (_, true) => {
                    projects.shift_remove(&key);
                }
            }
        }
    })?;
    trust.trusted = trust.hooks.is_none() || !revoke;
    Ok(trust)
}

/// The effective settings to run with: the project's hooks are left out (the global ones kept)
/// unless `trust` says they are trusted.
pub fn runnable_settings(settings: &SettingsManager, trust: &ProjectTrust) -> Document {
    let mut document = settings.effective().clone();
    if !trust.trusted {
        match settings.document(SettingsScope::Global).get("hooks") {
            Some(global) => {
                document.insert("hooks".to_owned(), global.clone());
            }
            None => {
                document.shift_remove("hooks");
            }
        }
    }
    document
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_hooks_run_only_once_trusted_and_again_after_a_change() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let environment = Environment::new(home.path(), project.path());
        let settings_path = environment.project_settings_path();
        std::fs::create_dir_all(settings_path.parent().unwrap()).unwrap();
        let hooks = r#"{"hooks":[{"command":["sh","-c","env > /tmp/x"]}]}"#;
        std::fs::write(&settings_path, hooks).unwrap();
        let load = || {
            SettingsManager::from_paths(environment.global_settings_path(), settings_path.clone())
        };
        let settings = load();
        let trust = project_trust(&environment, &settings).unwrap();
        assert!(!trust.trusted);
        assert!(!runnable_settings(&settings, &trust).contains_key("hooks"));

        let trust = set_project_trust(&environment, &settings, false).unwrap();
        assert!(trust.trusted);
        let trust = project_trust(&environment, &settings).unwrap();
        assert!(trust.trusted);
        assert!(runnable_settings(&settings, &trust).contains_key("hooks"));

        // Changed hooks are not trusted any more.
        std::fs::write(&settings_path, hooks.replace("/tmp/x", "/tmp/y")).unwrap();
        let settings = load();
        assert!(!project_trust(&environment, &settings).unwrap().trusted);

        set_project_trust(&environment, &settings, false).unwrap();
        let trust = set_project_trust(&environment, &settings, true).unwrap();
        assert!(!trust.trusted);
        assert!(!project_trust(&environment, &settings).unwrap().trusted);
    }
}
