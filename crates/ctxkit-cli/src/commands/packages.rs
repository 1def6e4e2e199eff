//! `ctxkit install|remove|update|list`: the package manager on the command line, with progress
//! on stderr when it is a terminal.

use std::io::{IsTerminal as _, Write};

use anyhow::{Result, bail};
use ctxkit_packages::{
    PackageError, PackageManager, ProgressEvent, ProgressReporter, ProgressStage, UpdateOutcome,
};
use ctxkit_settings::SettingsScope;
use serde_json::json;

use super::print_json;
use super::settings::ProcessSettings;
use crate::Outcome;
use crate::render::counted;
use crate::usage::UsageError;

/// Prints `start` messages (`Installing npm:x...`) on stderr, only when stderr is a terminal.
#[derive(Debug, Clone, Copy)]
struct TerminalProgress {
    visible: bool,
}

impl ProgressReporter for TerminalProgress {
    fn report(&self, event: &ProgressEvent) {
        if !self.visible {
            return;
        }
        match &event.stage {
            ProgressStage::Start { message } => {
                let message = ctxkit_secrets::redact_credentials(message);
                let _ = writeln!(crate::redact::stderr(), "{message}");
            }
            ProgressStage::Complete | ProgressStage::Error { .. } => {}
        }
    }
}

fn manager<'a>(
    process: &'a ProcessSettings<'_>,
) -> Result<(PackageManager, &'a ctxkit_settings::SettingsManager)> {
    let environment = process.environment()?.clone();
    let settings = process.settings()?;
    let reporter = TerminalProgress {
        visible: std::io::stderr().is_terminal(),
    };
    let manager = PackageManager::new(environment, settings).with_reporter(reporter);
    Ok((manager, settings))
}

fn scope(local: bool) -> SettingsScope {
    if local {
        SettingsScope::Project
    } else {
        SettingsScope::Global
    }
}

pub fn install(
    process: &ProcessSettings<'_>,
    source: &str,
    local: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    // Project settings are usually committed: a token in a source would be published with them.
    if local && ctxkit_secrets::has_credentials(source) {
        bail!(
            "`{}` holds credentials; they are never written to project settings (install it for \
             the user without `--local`, or use a git credential helper)",
            ctxkit_secrets::redact_credentials(source)
        );
    }
    let (manager, _) = manager(process)?;
    let added = manager.install_and_persist(source, scope(local))?;
    writeln!(out, "Installed {source}")?;
    if !added {
        writeln!(
            crate::redact::stderr(),
            "note: settings already list this package; its entry was kept as it is"
        )?;
    }
    if local {
        let environment = process.environment()?;
        // Held back, or kept while the project is not trusted: what a project's package brings
        // loads once it is trusted, a local path in the project included (as in Pi 1.6).
        let reason = held_until_trust(environment, source)
            .map(|reason| reason.describe().to_owned())
            .or_else(|| {
                let settings = super::settings::settings_of_project(environment);
                (!settings.project_trusted()).then(|| "this project is not trusted".to_owned())
            });
        if let Some(reason) = reason {
            writeln!(
                crate::redact::stderr(),
                "note: `{source}` waits for trust in this project ({reason}): ctxkit uses it \
                 here once the project is trusted (`ctxkit trust`)"
            )?;
        }
    }
    Ok(Outcome::Success)
}

/// Why the project's settings hold `source` (typed in the project) back until the project is
/// trusted, if they do.
fn held_until_trust(
    environment: &ctxkit_settings::Environment,
    source: &str,
) -> Option<ctxkit_settings::HeldReason> {
    let entry = if ctxkit_settings::looks_local(source) {
        let typed = ctxkit_settings::expand_tilde_loose(source.trim(), &environment.home);
        ctxkit_settings::resolve_against(&environment.cwd, &typed)
            .display()
            .to_string()
    } else {
        source.to_owned()
    };
    ctxkit_settings::held_until_trusted(environment, "packages", &entry)
}

pub fn remove(
    process: &ProcessSettings<'_>,
    source: &str,
    local: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let (manager, _) = manager(process)?;
    if !manager.remove_and_persist(source, scope(local))? {
        bail!(PackageError::NoMatchingPackage {
            source_text: source.to_owned(),
            suggestion: None,
        });
    }
    writeln!(out, "Removed {source}")?;
    Ok(Outcome::Success)
}

pub fn update(
    process: &ProcessSettings<'_>,
    source: Option<&str>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let (manager, settings) = manager(process)?;
    let updated = match (manager.update(settings, source), source) {
        // Pi's `update self` and `update pi` update Pi itself.
        (Err(PackageError::NoMatchingPackage { .. }), Some(word @ ("self" | "pi"))) => {
            return Err(UsageError {
                message: format!("no package is named `{word}`, and ctxkit does not update itself"),
                hint: "update ctxkit the way it was installed; `ctxkit update` updates the \
                       packages `ctxkit list` shows"
                    .to_owned(),
            }
            .into());
        }
        (result, _) => result?,
    };
    match updated {
        UpdateOutcome::SkippedOffline => {
            writeln!(
                crate::redact::stderr(),
                "Offline mode: no package was checked or updated"
            )?;
        }
        // As Pi 1.6 says it: "already up to date" when nothing changed (sweep 9: "Updated packages"
        // was printed when nothing was).
        UpdateOutcome::Checked { updated, .. } => {
            match (source, updated.len()) {
                (Some(source), 0) => writeln!(out, "{source} is already up to date")?,
                (None, 0) => writeln!(out, "Packages are already up to date")?,
                (_, count) => writeln!(out, "Updated {}:", counted(count, "package"))?,
            }
            for source in updated {
                writeln!(out, "  {source}")?;
            }
        }
    }
    // "Already up to date" said nothing of the project's packages held back until trust, which
    // were not checked at all (QA 2026-12-07).
    let waiting = waiting_for_trust(settings);
    if source.is_none() && !waiting.is_empty() {
        writeln!(out, "Not checked, waiting for `ctxkit trust`:")?;
        for line in waiting {
            writeln!(out, "{line}")?;
        }
    }
    Ok(Outcome::Success)
}

/// The project's package entries held back until trust, one indented line each with why.
fn waiting_for_trust(settings: &ctxkit_settings::SettingsManager) -> Vec<String> {
    settings
        .held_project_entries()
        .into_iter()
        .filter(|held| held.key == "packages")
        .map(|held| format!("  {} ({})", held.entry, held.reason.describe()))
        .collect()
}

pub fn list(process: &ProcessSettings<'_>, json: bool, out: &mut dyn Write) -> Result<Outcome> {
    let (manager, settings) = manager(process)?;
    let packages = manager.list_configured(settings);
    // A `packages` value that is not a list of packages (or an entry of the wrong shape) lists
    // nothing of it: said, as `resources` says it (QA 2026-12-07: "No packages installed.").
    let invalid: Vec<_> = settings
        .diagnostics()
        .into_iter()
        .filter(|diagnostic| {
            let key = diagnostic.key();
            diagnostic.is_error()
                && (key == "packages"
                    || key.starts_with("packages.")
                    || key.starts_with("packages["))
        })
        .collect();
    for diagnostic in &invalid {
        writeln!(crate::redact::stderr(), "warning: {}", diagnostic.message())?;
    }
    if json {
        print_json(out, &list_records(&packages, settings))?;
        return Ok(Outcome::Success);
    }
    let waiting = waiting_for_trust(settings);
    if packages.is_empty() && waiting.is_empty() {
        if invalid.is_empty() {
            writeln!(out, "No packages installed.")?;
        } else {
            writeln!(
                out,
                "No packages listed: the `packages` setting is not valid (above)."
            )?;
        }
        return Ok(Outcome::Success);
    }
    list_by_scope(&packages, settings.project_trusted(), out)?;
    if !waiting.is_empty() {
        if !packages.is_empty() {
            writeln!(out)?;
        }
        writeln!(out, "Project packages waiting for `ctxkit trust`:")?;
        for line in waiting {
            writeln!(out, "{line}")?;
        }
    }
    Ok(Outcome::Success)
}

/// `ctxkit list --json`: each configured package, then each project entry held back until trust
/// (`heldBecause` says why); `waitsForTrust` tells whether what it brings loads only once the
/// project is trusted.
fn list_records(
    packages: &[ctxkit_packages::ConfiguredPackage],
    settings: &ctxkit_settings::SettingsManager,
) -> Vec<serde_json::Value> {
    let project_trusted = settings.project_trusted();
    let configured = packages.iter().map(|package| {
        let scope = match package.scope {
            SettingsScope::Global => "user",
            SettingsScope::Project => "project",
        };
        json!({
            "source": package.source,
            "scope": scope,
            "filtered": package.filtered,
            "installedPath": package.installed_path.as_ref().map(|path| path.display().to_string()),
            "waitsForTrust": package.scope == SettingsScope::Project && !project_trusted,
            "heldBecause": null,
        })
    });
    let held = settings
        .held_project_entries()
        .into_iter()
        .filter(|held| held.key == "packages")
        .map(|held| {
            json!({
                "source": held.entry,
                "scope": "project",
                "filtered": false,
                "installedPath": null,
                "waitsForTrust": true,
                "heldBecause": super::resources::held_reason_code(held.reason),
            })
        });
    configured.chain(held).collect()
}

/// The configured packages under a heading per scope; an untrusted project's with a note that
/// what they bring waits for trust.
fn list_by_scope(
    packages: &[ctxkit_packages::ConfiguredPackage],
    project_trusted: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let mut first = true;
    for (scope, title) in [
        (SettingsScope::Global, "User packages:"),
        (SettingsScope::Project, "Project packages:"),
    ] {
        let in_scope: Vec<_> = packages
            .iter()
            .filter(|package| package.scope == scope)
            .collect();
        if in_scope.is_empty() {
            continue;
        }
        if !first {
            writeln!(out)?;
        }
        first = false;
        writeln!(out, "{title}")?;
        if scope == SettingsScope::Project && !project_trusted {
            writeln!(
                out,
                "  (this project is not trusted: their skills and prompt templates load after \
                 `ctxkit trust`)"
            )?;
        }
        for package in in_scope {
            let filtered = if package.filtered { " (filtered)" } else { "" };
            writeln!(out, "  {}{filtered}", package.source)?;
            if let Some(path) = &package.installed_path {
                writeln!(out, "    {}", path.display())?;
            }
        }
    }
    Ok(())
}
