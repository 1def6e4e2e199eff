//! What of a project's settings waits for `ctxkit trust` (or never applies from a project), as
//! the warnings every command prints and the note after `config set --project`.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use ctxkit_settings::{Environment, HeldEntry, SettingsManager};

use super::config::same_or_nested;

/// The warnings (each with its hint line) naming the project settings an untrusted project may
/// not change, those no project may change (`x-user-only`), and the entries of its
/// `packages`/resource arrays that reach outside it; `None` when there are none.
pub fn held_settings_warning(
    environment: &Environment,
    settings: &SettingsManager,
) -> Option<String> {
    let project = environment.project_settings_path();
    let mut lines = Vec::new();
    let held = settings.held_project_keys();
    if !held.is_empty() {
        let keys: Vec<String> = held.iter().map(|key| format!("`{key}`")).collect();
        lines.push(format!(
            "warning: ignored {} in `{}`: {}",
            keys.join(", "),
            project.display(),
            not_trusted(
                environment,
                "read the project's settings, then run `ctxkit trust` to apply them"
            )
        ));
    }
    if let Some(resources) = held_resources_warning(environment, settings) {
        lines.push(resources);
    }
    let user_only = settings.project_user_only_keys();
    if !user_only.is_empty() {
        let keys: Vec<String> = user_only.iter().map(|key| format!("`{key}`")).collect();
        lines.push(format!(
            "warning: ignored {} in `{}`: read from your own settings only (`{}`), trusted or not",
            keys.join(", "),
            project.display(),
            environment.global_settings_path().display()
        ));
    }
    let entries = settings.held_project_entries();
    for entry in &entries {
        lines.push(format!(
            "warning: ignored `{}` of `{}` in `{}`: {}, and the project is not trusted",
            entry.entry,
            entry.key,
            project.display(),
            entry.reason.describe()
        ));
    }
    if let Some(hint) = outside_entries_hint(environment, &entries) {
        lines.push(hint);
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The warning naming the project's resources that wait for trust (its `SYSTEM.md`, skills,
/// prompt templates…); `None` when the project is trusted or has none.
fn held_resources_warning(environment: &Environment, settings: &SettingsManager) -> Option<String> {
    if settings.project_trusted() {
        return None;
    }
    let resources = ctxkit_settings::protected_resources(environment, settings);
    if resources.is_empty() {
        return None;
    }
    let places: Vec<String> = resources
        .iter()
        .map(|resource| format!("`{}` ({})", resource.place, resource.effect))
        .collect();
    Some(format!(
        "warning: not loaded: {}: {}",
        places.join(", "),
        not_trusted(
            environment,
            "read them, then run `ctxkit trust` to load them"
        )
    ))
}

/// Why the project's held settings do not apply, and `hint` on the way to trust; for a run started
/// with `--no-approve`, that flag, and no hint.
fn not_trusted(environment: &Environment, hint: &str) -> String {
    match environment.project_trust_override {
        Some(false) => "left out for this run (`--no-approve`)".to_owned(),
        Some(true) | None => format!("this project is not trusted\nhint: {hint}"),
    }
}

/// The hint after the warnings about entries reaching outside an untrusted project: trust it, or
/// name them in the user's own settings.
fn outside_entries_hint(environment: &Environment, entries: &[HeldEntry]) -> Option<String> {
    let own = match entries {
        [] => return None,
        [HeldEntry { key, entry, .. }] if key == "packages" => {
            // A local path is written relative to the project's `.ctxkit/`: named as it resolves,
            // so the command works from wherever the user is (sweep 9: `../../pkg1` did not).
            let local = entry.starts_with('.') || entry.starts_with('/');
            let source = if local {
                ctxkit_settings::resolve_against(&environment.project_dir(), Path::new(entry))
                    .display()
                    .to_string()
            } else {
                entry.clone()
            };
            format!("`ctxkit install {source}`")
        }
        [HeldEntry { key, .. }] => format!(
            "list it under `{key}` in `{}`",
            environment.global_settings_path().display()
        ),
        _ => format!(
            "`{}`, or `ctxkit install SOURCE` for a package",
            environment.global_settings_path().display()
        ),
    };
    Some(format!(
        "hint: read the project's settings, then run `ctxkit trust` to apply {them}, or add \
         {them} to your own settings: {own}",
        them = if entries.len() == 1 { "it" } else { "them" }
    ))
}

/// After `config set --project`: a value an untrusted project's settings hold back, or that no
/// project's settings give, is said to wait (the next command only warned `ignored`; QA r99).
pub(super) fn note_held(settings: &SettingsManager, key: &str) -> Result<()> {
    let mut stderr = crate::redact::stderr();
    let user_only = settings
        .project_user_only_keys()
        .iter()
        .any(|user_only| same_or_nested(user_only, key));
    let held = settings
        .held_project_keys()
        .iter()
        .any(|held| same_or_nested(held, key))
        || settings
            .held_project_entries()
            .iter()
            .any(|entry| same_or_nested(&entry.key, key));
    if user_only {
        writeln!(
            stderr,
            "note: `{key}` is read from your own settings only, so the project's value never \
             applies; set it without `--project`"
        )?;
    } else if held {
        writeln!(
            stderr,
            "note: this project is not trusted, so `{key}` does not apply until you run \
             `ctxkit trust`"
        )?;
    }
    Ok(())
}
