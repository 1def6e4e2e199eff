//! What the agent's tools may touch (`ctxkit chat`, `agent.run` over `ctxkit serve`): never
//! ctxkit's home or sessions, paths outside the project only when approved, and the user's
//! `chat.readablePaths` for reading. Also every secret the settings hold, redacted from results.

use std::path::{Path, PathBuf};

use ctxkit_agent::Workspace;
use ctxkit_settings::{Environment, SettingsManager, SettingsScope};
use serde_json::Value;

/// The parts of the tools' boundary that come from ctxkit's locations and the user's settings.
#[derive(Debug, Clone)]
pub struct ToolBoundary {
    pub home: PathBuf,
    pub sessions_root: PathBuf,
    pub readable_paths: Vec<PathBuf>,
    pub secrets: Vec<String>,
    /// Hook scripts and local package folders: written only with the user's approval.
    pub guarded: Vec<PathBuf>,
}

impl ToolBoundary {
    pub fn new(
        environment: &Environment,
        settings: &SettingsManager,
        sessions_root: &Path,
    ) -> Self {
        let home_dir = std::env::home_dir().unwrap_or_default();
        let readable_paths = settings
            .settings()
            .chat
            .readable_paths
            .iter()
            .flatten()
            .map(|path| expand_home(path, &home_dir))
            .collect();
        let mut secrets = Vec::new();
        for scope in [SettingsScope::Global, SettingsScope::Project] {
            for (key, value) in settings.document(scope) {
                collect_secrets(key, value, false, &mut secrets);
            }
        }
        Self {
            home: environment.agent_dir(),
            sessions_root: sessions_root.to_owned(),
            readable_paths,
            secrets,
            guarded: guarded_paths(environment, settings),
        }
    }

    /// The workspace of the project at `root`.
    pub fn workspace(&self, root: &Path) -> Workspace {
        let mut workspace = Workspace::new(root);
        workspace.set_home(&self.home);
        workspace.protect(&self.sessions_root);
        for path in &self.readable_paths {
            workspace.allow_reading(path);
        }
        for secret in &self.secrets {
            workspace.add_secret(secret);
        }
        for path in &self.guarded {
            workspace.guard(path);
        }
        workspace
    }
}

/// The files hooks run (every part of a hook's `command` that names an existing file, relative
/// to the project) and the local package folders of both settings scopes.
fn guarded_paths(environment: &Environment, settings: &SettingsManager) -> Vec<PathBuf> {
    let mut guarded = Vec::new();
    for scope in [SettingsScope::Global, SettingsScope::Project] {
        let document = settings.document(scope);
        let commands = document
            .get("hooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|hook| hook.get("command").and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str);
        let packages = document
            .get("packages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|package| package.as_str().or_else(|| package.get("source")?.as_str()))
            .filter(|source| source.starts_with('.') || source.starts_with('/'));
        for part in commands.chain(packages) {
            let path = environment.cwd.join(part);
            if path.exists() && !guarded.contains(&path) {
                guarded.push(path);
            }
        }
    }
    guarded
}

/// `~` and `~/…` under the user's home.
fn expand_home(path: &str, home: &Path) -> PathBuf {
    match path.strip_prefix('~') {
        Some("") => home.to_owned(),
        Some(rest) if rest.starts_with('/') => home.join(rest.trim_start_matches('/')),
        Some(_) | None => PathBuf::from(path),
    }
}

/// The string values of `value` that look like credentials: under a key that names one (`apiKey`,
/// `token`, `secret`, `password`, `authorization`) or any value of a `headers` object.
fn collect_secrets(key: &str, value: &Value, in_headers: bool, secrets: &mut Vec<String>) {
    let name: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    let secret_key = in_headers
        || ["apikey", "token", "secret", "password", "authorization"]
            .iter()
            .any(|word| name.ends_with(word));
    match value {
        Value::String(text) if secret_key => secrets.push(text.clone()),
        Value::Object(object) => {
            for (inner, value) in object {
                collect_secrets(inner, value, name == "headers", secrets);
            }
        }
        Value::Array(items) => {
            for item in items {
                collect_secrets(key, item, in_headers, secrets);
            }
        }
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_settings_are_found_wherever_they_are() {
        let settings = serde_json::json!({
            "llm": {"apiKey": "sk-settings-0001", "headers": {"X-Custom": "hdr-value-0002"}},
            "providers": [{"api_key": "sk-provider-0003"}],
            "theme": "dark",
            "compaction": {"tokenizer": "o200k_base", "maxTokens": 1000},
            "chat": {"passEnv": ["GITHUB_TOKEN"]}
        });
        let mut secrets = Vec::new();
        for (key, value) in settings.as_object().unwrap() {
            collect_secrets(key, value, false, &mut secrets);
        }
        assert_eq!(
            secrets,
            ["sk-settings-0001", "hdr-value-0002", "sk-provider-0003"]
        );
        assert_eq!(
            expand_home("~/docs", Path::new("/home/me")),
            Path::new("/home/me/docs")
        );
    }
}
