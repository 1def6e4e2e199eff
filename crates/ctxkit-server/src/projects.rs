//! Where a client's runs work: a session's recorded `cwd` is a record, not a grant. A session file
//! someone sent (or another user's session in a shared database) names its own `cwd`, and `/` or
//! the user's home there would make everything in it "in the project" for the tools. So a run
//! works in a directory this client chose: the `cwd` it created a session with, one it named to
//! `agent.run` (`cwd`), or the directory the server was started in, which the user chose.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::{MethodError, Shared, codes};

/// The directories this client chose as projects, the server's own first.
#[derive(Debug)]
pub(crate) struct ChosenProjects(Mutex<Vec<PathBuf>>);

impl ChosenProjects {
    /// The server's working directory only.
    pub(crate) fn new() -> Self {
        let started_in = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Self(Mutex::new(vec![started_in]))
    }

    /// The client chose `dir` (`session.create`, `agent.run`'s `cwd`).
    pub(crate) fn choose(&self, dir: &Path) {
        let mut chosen = match self.0.lock() {
            Ok(chosen) => chosen,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !chosen.iter().any(|known| known == dir) {
            chosen.push(dir.to_path_buf());
        }
    }

    /// Whether `dir` is one of them, by its components as written (no link is followed: a name
    /// that reaches a chosen folder another way is not that folder's name).
    fn holds(&self, dir: &Path) -> bool {
        let chosen = match self.0.lock() {
            Ok(chosen) => chosen,
            Err(poisoned) => poisoned.into_inner(),
        };
        chosen.iter().any(|known| known == dir)
    }

    /// Where the server was started.
    fn server_directory(&self) -> PathBuf {
        let chosen = match self.0.lock() {
            Ok(chosen) => chosen,
            Err(poisoned) => poisoned.into_inner(),
        };
        chosen
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

/// The project of a session being opened, for its hooks and `compaction.fileContext`: its
/// recorded `cwd` when this client chose it, else the server's directory.
pub(crate) fn of_session(shared: &Shared, recorded: &str) -> PathBuf {
    let recorded = Path::new(recorded);
    if !recorded.as_os_str().is_empty() && shared.projects.holds(recorded) {
        return recorded.to_path_buf();
    }
    shared.projects.server_directory()
}

/// The project of an `agent.run`: the `cwd` it names (now chosen), else the session's recorded
/// `cwd` when the client chose it (an empty one is the server's directory); any other is refused
/// before the model is asked (`unconfirmed_cwd`), and so is a project that is not a folder on
/// this machine (sweep 9: the model was told of it and every tool failed there).
pub(crate) fn of_run(
    shared: &Shared,
    recorded: &str,
    named: Option<&str>,
) -> Result<PathBuf, MethodError> {
    if let Some(named) = named {
        crate::session_methods::check_cwd(named)?;
        let named = existing_folder(PathBuf::from(named))?;
        shared.projects.choose(&named);
        return Ok(named);
    }
    if recorded.is_empty() {
        return Ok(shared.projects.server_directory());
    }
    let recorded_path = Path::new(recorded);
    if shared.projects.holds(recorded_path) {
        return existing_folder(recorded_path.to_path_buf());
    }
    Err(MethodError {
        code: codes::ENGINE_ERROR,
        message: format!(
            "this session was recorded in `{recorded}`, which this client did not choose as a \
             project (it created no session there, named it to no run, and the server was started \
             elsewhere); its tools would read and write everything there. Pass `cwd` to \
             `agent.run`: the recorded one to confirm it, or the project to work in"
        ),
        kind: Some("unconfirmed_cwd"),
    })
}

/// `project` when it is a folder; an `agent.run` in any other is refused before the model is asked.
fn existing_folder(project: PathBuf) -> Result<PathBuf, MethodError> {
    if project.is_dir() {
        return Ok(project);
    }
    Err(MethodError::new(
        codes::INVALID_PARAMS,
        format!(
            "invalid params: the run's project `{}` is not a folder on this machine; pass `cwd`, \
             the absolute path of the project to work in",
            project.display()
        ),
    ))
}
