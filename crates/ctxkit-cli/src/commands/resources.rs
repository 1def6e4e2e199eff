//! `ctxkit resources` (everything the resource loader found, with origin and diagnostics) and
//! `ctxkit prompt` (the assembled system prompt). Neither installs packages: missing ones are
//! reported. The chat's loading ([`load_installing`]) installs them, as Pi 1.6's startup does.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use ctxkit_packages::{
    MissingPackages, PackageManager, PathMetadata, ProgressEvent, ProgressReporter, ProgressStage,
    ResourceDiagnostic, SourceOrigin, SourceScope,
};
use ctxkit_resources::{
    LoadedResources, LoaderOptions, LoaderOverrides, SystemPromptParts, assemble_system_prompt,
    format_skills_for_prompt, load_resources,
};
use ctxkit_settings::{Environment, SettingsManager, SettingsScope};
use serde_json::{Value, json};

use super::print_json;
use super::settings::ProcessSettings;
use crate::Outcome;

/// ctxkit's base system prompt, used when there is no `SYSTEM.md` / `--system-prompt`.
const DEFAULT_SYSTEM_PROMPT: &str = include_str!("../../templates/system-prompt.md");

pub(super) fn load(process: &ProcessSettings<'_>) -> Result<(LoadedResources, std::path::PathBuf)> {
    let environment = process.environment()?;
    let mut loaded = load_in(environment, process.settings()?);
    warn_of_command_names(&mut loaded);
    Ok((loaded, environment.cwd.clone()))
}

/// A prompt template named like one of the chat's commands (`prompts/compact.md`, `model.md`) is
/// listed but never runs in `ctxkit chat`: the chat's own command wins (Pi 1.6's print mode
/// expands the template instead). A warning of the template says so, in `ctxkit resources` and at
/// a chat's start.
pub(super) fn warn_of_command_names(loaded: &mut LoadedResources) {
    let unreachable: Vec<ResourceDiagnostic> = loaded
        .prompts
        .templates
        .iter()
        .filter(|template| super::chat::slash_completion::is_chat_command(&template.name))
        .map(|template| {
            ResourceDiagnostic::warning(
                format!(
                    "Prompt template `/{0}` has the name of a chat command: `/{0}` in \
                     `ctxkit chat` runs the command, never the template; rename the file to use it",
                    template.name
                ),
                &template.file_path,
            )
        })
        .collect();
    loaded.prompts.diagnostics.extend(unreachable);
}

/// What the resource loader finds for `environment`'s project; missing packages are reported.
pub(super) fn load_in(environment: &Environment, settings: &SettingsManager) -> LoadedResources {
    let manager = PackageManager::new(environment.clone(), settings)
        .with_missing_packages(MissingPackages::Report);
    load_resources(
        environment,
        settings,
        &manager,
        &LoaderOptions::default(),
        &LoaderOverrides::default(),
    )
}

/// Says each install a resolve starts (`Installing git:…...`) through its function.
struct InstallNotices<Announce>(Announce);

impl<Announce: Fn(&str) + Send + Sync> ProgressReporter for InstallNotices<Announce> {
    fn report(&self, event: &ProgressEvent) {
        match &event.stage {
            ProgressStage::Start { message } => {
                (self.0)(&ctxkit_secrets::redact_credentials(message));
            }
            ProgressStage::Complete | ProgressStage::Error { .. } => {}
        }
    }
}

/// What the resource loader finds, installing each configured npm and git package that is
/// missing (Pi 1.6 does so at every start and `/reload`; one that fails is a resource problem,
/// tried again next time), each announced through `announce` before it runs. Only entries the
/// settings apply are seen: an untrusted project's npm and git packages are held back until
/// `ctxkit trust`, so nothing of such a project is installed here. `options` are the chat's
/// command-line inputs (`--system-prompt`, …).
pub(super) fn load_installing(
    environment: &Environment,
    settings: &SettingsManager,
    options: &LoaderOptions,
    announce: impl Fn(&str) + Send + Sync + 'static,
) -> LoadedResources {
    let manager = PackageManager::new(environment.clone(), settings)
        .with_missing_packages(MissingPackages::Install)
        .with_reporter(InstallNotices(announce));
    let mut loaded = load_resources(
        environment,
        settings,
        &manager,
        options,
        &LoaderOverrides::default(),
    );
    warn_of_command_names(&mut loaded);
    loaded
}

/// [`load_installing`] for a chat's start: the installs are said on stderr.
pub(super) fn load_for_chat(
    process: &ProcessSettings<'_>,
    options: &LoaderOptions,
) -> Result<(LoadedResources, std::path::PathBuf)> {
    let environment = process.environment()?;
    let loaded = load_installing(environment, process.settings()?, options, |line| {
        let _ = writeln!(crate::redact::stderr(), "{line}");
    });
    Ok((loaded, environment.cwd.clone()))
}

/// The most resource problems a chat or server names at startup; `ctxkit resources` lists all.
const STARTUP_DIAGNOSTICS: usize = 8;

/// Says once on stderr, before a chat or a server starts, what the resource loader refused or
/// could not use (context files, skills, prompts, themes, packages, name collisions): what the
/// system prompt and the commands leave out. At most [`STARTUP_DIAGNOSTICS`] lines, then how
/// many more and where to see them.
pub(super) fn warn_of_resources(loaded: &LoadedResources) -> Result<()> {
    let problems = diagnostics(loaded);
    warn_of(problems.iter().copied().take(STARTUP_DIAGNOSTICS))?;
    let more = problems.len().saturating_sub(STARTUP_DIAGNOSTICS);
    if more > 0 {
        writeln!(
            crate::redact::stderr(),
            "… and {more} more resource problem(s): `ctxkit resources` lists them"
        )?;
    }
    Ok(())
}

/// Each of `diagnostics` on a line of stderr: severity, message and file.
fn warn_of<'a>(diagnostics: impl IntoIterator<Item = &'a ResourceDiagnostic>) -> Result<()> {
    let mut stderr = crate::redact::stderr();
    for diagnostic in diagnostics {
        writeln!(stderr, "{diagnostic}")?;
    }
    Ok(())
}

fn scope_name(scope: SourceScope) -> &'static str {
    scope.as_str()
}

/// `user auto`, `project local`, `package npm:x (user)`.
fn origin_text(metadata: Option<&PathMetadata>) -> String {
    let Some(metadata) = metadata else {
        return "unknown".to_owned();
    };
    match metadata.origin {
        SourceOrigin::Package => {
            format!(
                "package {} ({})",
                metadata.source,
                scope_name(metadata.scope)
            )
        }
        SourceOrigin::TopLevel => format!("{} {}", scope_name(metadata.scope), metadata.source),
    }
}

fn origin_json(metadata: Option<&PathMetadata>) -> Value {
    match metadata {
        None => Value::Null,
        Some(metadata) => json!({
            "source": metadata.source,
            "scope": scope_name(metadata.scope),
            "origin": match metadata.origin {
                SourceOrigin::Package => "package",
                SourceOrigin::TopLevel => "top-level",
            },
            "baseDir": metadata.base_dir.as_ref().map(|dir| dir.display().to_string()),
        }),
    }
}

pub(super) fn diagnostics(loaded: &LoadedResources) -> Vec<&ResourceDiagnostic> {
    loaded
        .extension_diagnostics
        .iter()
        .chain(&loaded.skills.diagnostics)
        .chain(&loaded.prompts.diagnostics)
        .chain(&loaded.themes.diagnostics)
        .chain(&loaded.context_diagnostics)
        .collect()
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

/// What the project settings may and may not do here: the configured command hooks (user ones
/// first, each with whether it runs) and the project keys that do not apply until `ctxkit trust`.
struct TrustRecords {
    hooks: Vec<ctxkit_settings::HookReview>,
    ignored: Vec<String>,
    /// Entries of `packages` and the resource arrays reaching outside the untrusted project.
    ignored_entries: Vec<ctxkit_settings::HeldEntry>,
}

fn trust_records(process: &ProcessSettings<'_>) -> Result<TrustRecords> {
    let environment = process.environment()?;
    let settings = process.settings()?;
    let trust = ctxkit_settings::project_trust(environment, settings)?;
    let hooks = ctxkit_settings::hook_review(settings, &trust);
    let ignored = settings.held_project_keys();
    let ignored_entries = settings.held_project_entries();
    Ok(TrustRecords {
        hooks,
        ignored,
        ignored_entries,
    })
}

/// A held entry's reason as the JSON records name it.
pub(crate) fn held_reason_code(reason: ctxkit_settings::HeldReason) -> &'static str {
    match reason {
        ctxkit_settings::HeldReason::ReachesOutside => "reachesOutside",
        ctxkit_settings::HeldReason::RunsCodeToInstall => "runsCodeToInstall",
    }
}

fn hook_scope_name(scope: SettingsScope) -> &'static str {
    match scope {
        SettingsScope::Global => "user",
        SettingsScope::Project => "project",
    }
}

fn hook_json(hook: &ctxkit_settings::HookReview) -> Value {
    json!({
        "scope": hook_scope_name(hook.scope),
        "command": hook.command,
        "events": hook.events,
        "trusted": hook.runs,
    })
}

fn write_ignored(records: &TrustRecords, out: &mut dyn Write) -> Result<()> {
    let count = records.ignored.len() + records.ignored_entries.len();
    writeln!(out, "Ignored project settings ({count})")?;
    for key in &records.ignored {
        writeln!(
            out,
            "  {key}  [project, not trusted: `ctxkit trust` applies it]"
        )?;
    }
    for held in &records.ignored_entries {
        writeln!(
            out,
            "  {}: {}  [project, not trusted ({}): `ctxkit trust` applies it]",
            held.key,
            held.entry,
            held.reason.describe()
        )?;
    }
    Ok(())
}

fn write_hooks(hooks: &[ctxkit_settings::HookReview], out: &mut dyn Write) -> Result<()> {
    writeln!(out, "Hooks ({})", hooks.len())?;
    for hook in hooks {
        let command = crate::render::one_line(&hook.command.to_string(), 100);
        let events = hook
            .events
            .non_empty_array_text()
            .unwrap_or_else(|| "all events".to_owned());
        let state = match (hook.scope, hook.runs) {
            (SettingsScope::Project, false) => {
                "project, not trusted: not run (`ctxkit trust` runs it)"
            }
            (SettingsScope::Project, true) => "project, trusted",
            (SettingsScope::Global, false) => "user, replaced by the project's",
            (SettingsScope::Global, true) => "user",
        };
        writeln!(out, "  {command}  {events}  [{state}]")?;
    }
    Ok(())
}

pub fn resources(
    process: &ProcessSettings<'_>,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let (loaded, _) = load(process)?;
    let problems = diagnostics(&loaded);
    let records = trust_records(process)?;
    let themes =
        super::themes_in_use::ThemesInUse::read(process.settings()?, &loaded.themes.themes);
    if json {
        let record = json!({
            "hooks": records.hooks.iter().map(hook_json).collect::<Vec<_>>(),
            "ignoredProjectSettings": records.ignored,
            "ignoredProjectEntries": records.ignored_entries.iter().map(|held| json!({
                "key": held.key,
                "entry": held.entry,
                "reason": held_reason_code(held.reason),
            })).collect::<Vec<_>>(),
            "extensions": loaded.extensions.iter().map(|extension| json!({
                "path": path_text(&extension.path),
                "origin": origin_json(Some(&extension.metadata)),
            })).collect::<Vec<_>>(),
            "skills": loaded.skills.skills.iter().map(|skill| json!({
                "name": skill.name,
                "description": skill.description,
                "path": path_text(&skill.file_path),
                "disableModelInvocation": skill.disable_model_invocation,
                "origin": origin_json(skill.metadata.as_ref()),
            })).collect::<Vec<_>>(),
            "prompts": loaded.prompts.templates.iter().map(|template| json!({
                "name": template.name,
                "description": template.description,
                "path": path_text(&template.file_path),
                "origin": origin_json(template.metadata.as_ref()),
            })).collect::<Vec<_>>(),
            "themes": loaded.themes.themes.iter().map(|theme| json!({
                "name": theme.name,
                "path": path_text(&theme.file_path),
                "origin": origin_json(theme.metadata.as_ref()),
                "usable": themes.usable(theme),
            })).collect::<Vec<_>>(),
            "themeInUse": themes.in_use,
            "contextFiles": loaded.context_files.iter().map(|file| path_text(&file.path)).collect::<Vec<_>>(),
            "customSystemPrompt": loaded.system_prompt.is_some(),
            "appendedSystemPromptParts": loaded.append_system_prompt.len(),
            "diagnostics": problems.iter().map(|diagnostic| json!({
                "type": diagnostic.severity(),
                "message": diagnostic.message(),
                "path": path_text(diagnostic.path()),
            })).chain(loaded.settings_diagnostics.iter().map(|diagnostic| json!({
                "type": if diagnostic.is_error() { "error" } else { "warning" },
                "message": diagnostic.message(),
                "path": Value::Null,
            }))).collect::<Vec<_>>(),
        });
        print_json(out, &record)?;
        return Ok(Outcome::Success);
    }
    writeln!(out, "Extensions ({})", loaded.extensions.len())?;
    for extension in &loaded.extensions {
        writeln!(
            out,
            "  {}  [{}]",
            extension.path.display(),
            origin_text(Some(&extension.metadata))
        )?;
    }
    writeln!(out, "Skills ({})", loaded.skills.skills.len())?;
    for skill in &loaded.skills.skills {
        writeln!(
            out,
            "  {}  {}  [{}]",
            skill.name,
            skill.file_path.display(),
            origin_text(skill.metadata.as_ref())
        )?;
    }
    writeln!(out, "Prompt templates ({})", loaded.prompts.templates.len())?;
    for template in &loaded.prompts.templates {
        writeln!(
            out,
            "  /{}  {}  [{}]",
            template.name,
            template.file_path.display(),
            origin_text(template.metadata.as_ref())
        )?;
    }
    writeln!(out, "Themes ({})", loaded.themes.themes.len())?;
    for theme in &loaded.themes.themes {
        let waiting = if themes.usable(theme) {
            ""
        } else {
            ", not used until `ctxkit trust`"
        };
        writeln!(
            out,
            "  {}  {}  [{}{waiting}]",
            theme.name,
            theme.file_path.display(),
            origin_text(theme.metadata.as_ref())
        )?;
    }
    writeln!(out, "Theme in use: {}", themes.shown())?;
    write_hooks(&records.hooks, out)?;
    write_ignored(&records, out)?;
    writeln!(out, "Context files ({})", loaded.context_files.len())?;
    for file in &loaded.context_files {
        writeln!(out, "  {}", file.path.display())?;
    }
    let base = if loaded.system_prompt.is_some() {
        "custom"
    } else {
        "default"
    };
    writeln!(
        out,
        "System prompt: {base}, {} appended part(s)",
        loaded.append_system_prompt.len()
    )?;
    let count = problems.len() + loaded.settings_diagnostics.len();
    writeln!(out, "Diagnostics ({count})")?;
    for diagnostic in &problems {
        writeln!(out, "  {diagnostic}")?;
    }
    for diagnostic in &loaded.settings_diagnostics {
        let severity = if diagnostic.is_error() {
            "error"
        } else {
            "warning"
        };
        writeln!(out, "  {severity}: {}", diagnostic.message())?;
    }
    Ok(Outcome::Success)
}

/// The system prompt `ctxkit prompt` would print in each session's project (`serve`): that
/// project's settings (as far as they apply untrusted), context files and skills, with the user's
/// own. Its diagnostics are logged, not printed: stderr is the server's.
pub(super) fn system_prompt_per_project(environment: &Environment) -> ctxkit_server::SystemPrompt {
    let base = environment.clone();
    ctxkit_server::SystemPrompt::per_project(move |cwd| {
        let mut environment = base.clone();
        environment.cwd = cwd.to_path_buf();
        let settings = super::settings::settings_of_project(&environment);
        system_prompt(&load_in(&environment, &settings), cwd)
    })
}

/// The assembled system prompt, in Pi 1.6's sections: base (or `SYSTEM.md`), `<addendum>`,
/// `<project_context>`, `<skills>`, `<cwd>`.
pub(super) fn system_prompt(loaded: &LoadedResources, cwd: &Path) -> String {
    let skills_block = format_skills_for_prompt(&loaded.skills.skills);
    assemble_system_prompt(&SystemPromptParts {
        default_prompt: DEFAULT_SYSTEM_PROMPT.trim_end(),
        custom_prompt: loaded.system_prompt.as_deref(),
        append: &loaded.append_system_prompt,
        context_files: &loaded.context_files,
        skills_block: &skills_block,
        cwd,
    })
}

pub fn prompt(process: &ProcessSettings<'_>, out: &mut dyn Write) -> Result<Outcome> {
    let (loaded, cwd) = load(process)?;
    let prompt = system_prompt(&loaded, &cwd);
    writeln!(out, "{prompt}")?;
    warn_of(diagnostics(&loaded))?;
    Ok(Outcome::Success)
}
