//! What the agent's tools may touch (`ctxkit chat`, `agent.run` over `ctxkit serve`): never
//! ctxkit's home or sessions, paths outside the project only when approved, and the user's
//! `chat.readablePaths` for reading. Also every secret the settings hold, redacted from results.

use std::path::{Path, PathBuf};

use ctxkit_agent::{Workspace, WorkspaceLimits};
use ctxkit_settings::{Environment, SettingsManager};

/// The parts of the tools' boundary that come from ctxkit's locations and the user's settings.
#[derive(Debug, Clone)]
pub struct ToolBoundary {
    pub home: PathBuf,
    pub sessions_root: PathBuf,
    pub readable_paths: Vec<PathBuf>,
    pub secrets: Vec<String>,
    /// Hook scripts and local package folders: written only with the user's approval.
    pub guarded: Vec<PathBuf>,
    /// The folders of the loaded skills: read without a question wherever they lie, ctxkit's home
    /// or a local package (the system prompt tells the model to read a skill's file), never
    /// written. The loader loads no skill of an untrusted project.
    pub skill_folders: Vec<PathBuf>,
    /// The folder `--session-dir` (Pi's flag) names for this chat's session: closed to tools as
    /// the sessions root is (QA 2026-12-07: only its writes asked, and a `read` of another
    /// session's transcript there was asked as any read outside the project, or not at all when
    /// the folder was in the project).
    pub session_dir: Option<PathBuf>,
}

impl ToolBoundary {
    pub fn new(
        environment: &Environment,
        settings: &SettingsManager,
        sessions_root: &Path,
    ) -> Self {
        let readable_paths = settings
            .settings()
            .chat
            .readable_paths
            .iter()
            .flatten()
            .map(|path| expand_home(path, &environment.home))
            .collect();
        Self {
            home: environment.agent_dir(),
            sessions_root: sessions_root.to_owned(),
            readable_paths,
            secrets: secrets(environment, settings),
            guarded: guarded_paths(environment, settings),
            skill_folders: Vec::new(),
            session_dir: None,
        }
    }

    /// The skills loaded are `skills`: the folder of each one's `SKILL.md` is readable.
    pub fn set_skills(&mut self, skills: &[ctxkit_resources::Skill]) {
        self.skill_folders = skills.iter().map(|skill| skill.base_dir.clone()).collect();
    }

    /// The boundary after the settings were read again (the chat's `/reload`): the readable
    /// paths the settings name now; every secret and guarded path known before is kept beside
    /// the new ones (a key taken out of the settings is still a key, and a hook script one
    /// still).
    pub fn reloaded(&self, environment: &Environment, settings: &SettingsManager) -> Self {
        let mut reloaded = Self::new(environment, settings, &self.sessions_root);
        reloaded.home.clone_from(&self.home);
        reloaded.skill_folders.clone_from(&self.skill_folders);
        reloaded.session_dir.clone_from(&self.session_dir);
        for secret in &self.secrets {
            if !reloaded.secrets.contains(secret) {
                reloaded.secrets.push(secret.clone());
            }
        }
        for path in &self.guarded {
            if !reloaded.guarded.contains(path) {
                reloaded.guarded.push(path.clone());
            }
        }
        reloaded
    }

    /// The workspace of the project at `root`.
    pub fn workspace(&self, root: &Path) -> Workspace {
        let mut workspace = Workspace::with_limits(
            root,
            WorkspaceLimits {
                home: Some(&self.home),
                sessions_root: &self.sessions_root,
                readable_paths: &self.readable_paths,
                secrets: &self.secrets,
                guarded: &self.guarded,
                skill_folders: &self.skill_folders,
            },
        );
        // The chat refuses the project itself as this folder (`first_session::chosen_folder`).
        if let Some(dir) = &self.session_dir {
            workspace.protect(dir);
        }
        workspace
    }
}

/// Every key the settings hold, every credential of ctxkit's `auth.json` (the keys `ctxkit login`
/// saved, and the OAuth tokens of a Pi `auth.json` copied there; a file that cannot be read gives
/// none: the model client refuses to start on it), and the credentials of the user's Pi (every
/// one of `~/.pi/agent/auth.json`, the literal `apiKey`s and header values of its `models.json`):
/// an approved `cat` of them shows none.
fn secrets(environment: &Environment, settings: &SettingsManager) -> Vec<String> {
    let mut secrets = settings.credential_values();
    let saved =
        ctxkit_settings::credential_strings(&ctxkit_settings::credentials_path(environment));
    let pi_keys =
        ctxkit_settings::pi_secrets(environment, &ctxkit_settings::pi_models_paths(environment));
    for key in saved.into_iter().flatten().chain(pi_keys) {
        let key = key.trim().to_owned();
        if !key.is_empty() && !secrets.contains(&key) {
            secrets.push(key);
        }
    }
    secrets
}

/// The files hooks run (every part of a hook's `command` that names an existing file, relative
/// to the project) and the local package folders of both settings scopes. With a hook's script,
/// the folder holding it, unless that is the project's top (or above it): what an interpreter
/// loads beside the script (Python's `import json` finds a `json.py` there first, node's
/// `require('./x')`, a shell's `. ./lib.sh`) runs with it (QA: a trusted hook's `hooks/guard.py`
/// ran the model's `hooks/json.py`).
fn guarded_paths(environment: &Environment, settings: &SettingsManager) -> Vec<PathBuf> {
    let mut guarded = Vec::new();
    let mut add = |path: PathBuf| {
        if !guarded.contains(&path) {
            guarded.push(path);
        }
    };
    for part in settings.paths_named_for_code() {
        let path = environment.cwd.join(part);
        if path.is_file()
            && let Some(folder) = script_folder(&path, &environment.cwd)
        {
            add(folder);
        }
        if path.exists() {
            add(path);
        }
    }
    guarded
}

/// The folder holding the script `path` when it lies strictly inside the project at `top`, by
/// its name and by what it resolves to; none at the top (guarding it would ask for every write).
fn script_folder(path: &Path, top: &Path) -> Option<PathBuf> {
    let folder = ctxkit_jail::lexical(path).parent()?.to_path_buf();
    let top = ctxkit_jail::lexical(top);
    let inside = |folder: &Path, top: &Path| folder.starts_with(top) && folder != top;
    let resolved = std::fs::canonicalize(&folder).ok()?;
    let resolved_top = std::fs::canonicalize(&top).ok()?;
    (inside(&folder, &top) && inside(&resolved, &resolved_top)).then_some(folder)
}

/// `~` and `~/…` under the user's home.
fn expand_home(path: &str, home: &Path) -> PathBuf {
    match path.strip_prefix('~') {
        Some("") => home.to_owned(),
        Some(rest) if rest.starts_with('/') => home.join(rest.trim_start_matches('/')),
        Some(_) | None => PathBuf::from(path),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    /// A reload names the readable paths the settings name now, and forgets no secret or guarded
    /// path it knew: a key taken out of the settings is still a key.
    #[test]
    fn a_reload_adds_secrets_and_forgets_none() {
        let environment = Environment::new("/home/me", "/home/me/project");
        let settings = |document: serde_json::Value| {
            SettingsManager::in_memory(document.as_object().cloned().unwrap())
        };
        let before = ToolBoundary::new(
            &environment,
            &settings(serde_json::json!({
                "llm": {"apiKey": "sk-before-0123456789"},
                "chat": {"readablePaths": ["/srv/old"]},
            })),
            Path::new("/home/me/.ctxkit/sessions"),
        );
        let after = before.reloaded(
            &environment,
            &settings(serde_json::json!({
                "llm": {"apiKey": "sk-after-0123456789"},
                "chat": {"readablePaths": ["~/notes"]},
            })),
        );
        assert_eq!(
            after.secrets,
            ["sk-after-0123456789", "sk-before-0123456789"]
        );
        assert_eq!(after.readable_paths, [PathBuf::from("/home/me/notes")]);
        assert_eq!(after.sessions_root, before.sessions_root);
        assert_eq!(after.home, before.home);
    }

    /// QA (r101, D4): a trusted hook `python3 hooks/guard.py` ran the model's `hooks/json.py`
    /// (Python puts the script's folder first on `sys.path`). The folder of a hook's script is
    /// guarded with the script; a script at the project's top guards itself only.
    #[test]
    fn the_folder_of_a_hook_script_is_guarded() {
        let dir = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(project.join("hooks")).unwrap();
        std::fs::write(project.join("hooks/guard.py"), "import json\n").unwrap();
        std::fs::write(project.join("top.py"), "import json\n").unwrap();
        let environment = Environment::new(project.join("home"), &project);
        let settings = SettingsManager::in_memory(
            serde_json::json!({"hooks": [
                {"command": ["python3", "hooks/guard.py"], "events": ["before_compact"]},
                {"command": ["python3", "top.py"], "events": ["before_compact"]},
            ]})
            .as_object()
            .cloned()
            .unwrap(),
        );
        let guarded = guarded_paths(&environment, &settings);
        assert_eq!(
            guarded,
            [
                project.join("hooks"),
                project.join("hooks/guard.py"),
                project.join("top.py")
            ]
        );
    }

    /// QA r106 (migrate, finding 3): an approved `cat ~/.pi/agent/auth.json` put Pi's keys in the
    /// session and the request. They are known secrets now, with `models.json`'s `apiKey`s.
    #[test]
    fn pi_keys_are_redacted_from_tool_results() {
        let dir = tempfile::tempdir().unwrap();
        let environment = Environment::new(dir.path(), dir.path().join("project"));
        let pi = ctxkit_settings::pi_agent_dir(&environment);
        std::fs::create_dir_all(&pi).unwrap();
        std::fs::write(
            pi.join("auth.json"),
            r#"{"anthropic":{"type":"api_key","key":"sk-ant-api03-PIKEY-0123"}}"#,
        )
        .unwrap();
        std::fs::write(
            pi.join("models.json"),
            r#"{"providers":{"local":{"baseUrl":"http://x","apiKey":"sk-local-MODELSJSON-222"}}}"#,
        )
        .unwrap();
        let settings = SettingsManager::in_memory(serde_json::Map::new());
        let boundary = ToolBoundary::new(&environment, &settings, &dir.path().join("sessions"));
        assert_eq!(
            boundary.secrets,
            ["sk-ant-api03-PIKEY-0123", "sk-local-MODELSJSON-222"]
        );
    }

    /// QA r108 (adv3, D1): the OAuth tokens of a Pi `auth.json` copied to ctxkit's home (as the
    /// README suggests) reached the provider; only `ctxkit login`'s keys were redacted.
    #[test]
    fn oauth_tokens_in_ctxkit_auth_json_are_redacted_from_tool_results() {
        let dir = tempfile::tempdir().unwrap();
        let environment = Environment::new(dir.path(), dir.path().join("project"));
        let auth = ctxkit_settings::credentials_path(&environment);
        std::fs::create_dir_all(auth.parent().unwrap()).unwrap();
        std::fs::write(
            &auth,
            r#"{"anthropic":{"type":"oauth","access":"sk-ant-oat01-FAKEACCESS-0123",
                "refresh":"sk-ant-ort01-FAKEREFRESH-0123","expires":1},
               "openai":{"type":"api_key","key":"sk-FAKESAVEDKEY-0123"}}"#,
        )
        .unwrap();
        let settings = SettingsManager::in_memory(serde_json::Map::new());
        let boundary = ToolBoundary::new(&environment, &settings, &dir.path().join("sessions"));
        assert_eq!(
            boundary.secrets,
            [
                "sk-ant-oat01-FAKEACCESS-0123",
                "sk-ant-ort01-FAKEREFRESH-0123",
                "sk-FAKESAVEDKEY-0123"
            ]
        );
    }

    #[test]
    fn home_is_expanded() {
        assert_eq!(
            expand_home("~/docs", Path::new("/home/me")),
            Path::new("/home/me/docs")
        );
    }
}
