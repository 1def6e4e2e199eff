//! The project's resources that wait for trust, as Pi 1.6 keeps them until the user trusts the
//! project: what replaces or extends the system prompt (`.ctxkit/SYSTEM.md`,
//! `.ctxkit/APPEND_SYSTEM.md`) and what the model or the user is offered as instructions (skills
//! and prompt templates: `.ctxkit/skills`, `.ctxkit/prompts`, the `.agents/skills` folders from the
//! project up to its git root, and the `packages`, `skills` and `prompts` entries of the project's
//! settings). A cloned repository's `SYSTEM.md` could otherwise replace ctxkit's system prompt
//! before the user has read it. Context files (`AGENTS.md`, `CLAUDE.md`) load untrusted, as in Pi.
//! So does an npm folder (`.ctxkit/npm`) holding anything npm would act on: `npm install` there
//! installs what it names and runs their scripts (`npm_folder`).

use std::path::{Path, PathBuf};

use crate::env::Environment;
use crate::settings::SettingsManager;

/// The project's settings keys whose entries bring skills and prompt templates.
const RESOURCE_KEYS: [&str; 3] = ["packages", "skills", "prompts"];

/// One resource of the project that loads only once the project is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedResource {
    /// Where it is, as shown to the user (a path, or the settings key).
    pub place: String,
    /// What it does once loaded.
    pub effect: &'static str,
    /// The file or folder it comes from (for a settings key, the settings file): what a parent
    /// folder's trust record is compared with (`trust::nearest`).
    pub path: PathBuf,
}

/// The `.agents/skills` folders from `cwd` up to its git root (the file system's root without one),
/// nearest first, the user's own `~/.agents/skills` left out: the project's, which wait for trust.
pub fn project_agent_skill_dirs(environment: &Environment) -> Vec<PathBuf> {
    let stop = environment
        .cwd
        .ancestors()
        .find(|directory| directory.join(".git").exists());
    let home_skills = environment.home.join(".agents/skills");
    let mut found = Vec::new();
    for directory in environment.cwd.ancestors() {
        let candidate = directory.join(".agents/skills");
        if candidate != home_skills && candidate.is_dir() {
            found.push(candidate);
        }
        if Some(directory) == stop {
            break;
        }
    }
    found
}

/// The project's resources present that wait for trust, in a fixed order; empty when the project
/// folder is ctxkit's own home (started there, its resources are the user's).
pub fn protected_resources(
    environment: &Environment,
    settings: &SettingsManager,
) -> Vec<ProtectedResource> {
    if environment.project_is_agent_dir() {
        return Vec::new();
    }
    let project = environment.project_dir();
    let mut found = Vec::new();
    let files: [(&str, &'static str); 4] = [
        ("SYSTEM.md", "replaces ctxkit's system prompt"),
        ("APPEND_SYSTEM.md", "is added to the system prompt"),
        ("skills", "skills offered to the model"),
        ("prompts", "prompt templates"),
    ];
    for (name, effect) in files {
        let path = project.join(name);
        if path.exists() {
            found.push(ProtectedResource {
                place: shown(&path, &environment.cwd),
                effect,
                path,
            });
        }
    }
    for folder in project_agent_skill_dirs(environment) {
        found.push(ProtectedResource {
            place: shown(&folder, &environment.cwd),
            effect: "skills offered to the model",
            path: folder,
        });
    }
    // Anything npm would act on there waits (`npm_folder`).
    let npm_folder = project.join("npm");
    if !crate::npm_folder::npm_folder_is_fresh(&npm_folder) {
        found.push(ProtectedResource {
            place: shown(&npm_folder, &environment.cwd),
            effect: "npm installs and runs what it holds",
            path: npm_folder,
        });
    }
    let settings_path = environment.project_settings_path();
    for key in settings.project_resource_keys(&RESOURCE_KEYS) {
        found.push(ProtectedResource {
            place: format!("{} {key}", shown(&settings_path, &environment.cwd)),
            effect: "skills and prompt templates",
            path: settings_path.clone(),
        });
    }
    found
}

/// `path` relative to `cwd` when it is beneath it, else whole.
fn shown(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).map_or_else(
        |_| path.display().to_string(),
        |relative| relative.display().to_string(),
    )
}
