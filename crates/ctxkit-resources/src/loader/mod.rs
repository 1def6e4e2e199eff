//! The resource loader: turns the resolved configuration plus command-line inputs into loaded
//! skills, prompt templates, themes, extension paths, context files and system-prompt parts,
//! with diagnostics, and lets library users override each set.

mod extensions;
mod paths;

use std::path::{Path, PathBuf};

pub use extensions::{ExtensionConflicts, ExtensionRegistration, resolve_extension_conflicts};
use paths::{LoadedPaths, cli_paths, enabled_paths, merge_paths, missing_local};

use crate::context::{ContextFile, discover_context_files, find_prompt_file, resolve_prompt_value};

/// A prompt value the caller gave (`--system-prompt`): a file's text, or the text itself.
fn given_prompt(
    value: &str,
    cwd: &Path,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Option<String> {
    let (text, diagnostic) = resolve_prompt_value(value, cwd);
    diagnostics.extend(diagnostic);
    text
}
use crate::prompts::{PromptSet, load_prompt_templates};
use crate::skills::{SkillSet, load_skills};
use crate::themes::{ThemeSet, load_themes};
use ctxkit_packages::ResourceDiagnostic;
use ctxkit_packages::{
    PackageProvider, PathMetadata, ResolvedResources, SourceOrigin, SourceScope,
    resolve_configured, resolve_package_sources,
};
use ctxkit_settings::Environment;
use ctxkit_settings::ResourceKind;
use ctxkit_settings::{SettingsDiagnostic, SettingsManager};

/// Command-line switches that turn resource types off (explicit paths still load).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResourceSwitches {
    /// `--no-extensions`: configured extensions are skipped (`-e` still loads).
    pub no_extensions: bool,
    /// `--no-skills`: configured skills are skipped (`--skill` still loads).
    pub no_skills: bool,
    /// `--no-prompt-templates`.
    pub no_prompt_templates: bool,
    /// `--no-themes`.
    pub no_themes: bool,
    /// `--no-context-files`.
    pub no_context_files: bool,
}

/// Command-line / SDK inputs of a load.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoaderOptions {
    /// `-e` package sources (temporary scope; their resources win name collisions).
    pub extension_sources: Vec<String>,
    /// `--skill` paths (lose every collision).
    pub skill_paths: Vec<String>,
    /// `--prompt-template` paths.
    pub prompt_template_paths: Vec<String>,
    /// `--theme` paths.
    pub theme_paths: Vec<String>,
    /// The `--no-…` switches.
    pub switches: ResourceSwitches,
    /// `--system-prompt` (file path or literal text).
    pub system_prompt: Option<String>,
    /// `--append-system-prompt` values (each a file path or literal text).
    pub append_system_prompt: Vec<String>,
}

type Override<'a, T> = Option<Box<dyn Fn(T) -> T + 'a>>;

/// Callbacks that replace a computed set before it is returned (the reference's SDK hooks).
#[derive(Default)]
pub struct LoaderOverrides<'a> {
    /// Extension paths.
    pub extensions: Override<'a, Vec<ExtensionEntry>>,
    /// Skills and their diagnostics.
    pub skills: Override<'a, SkillSet>,
    /// Prompt templates.
    pub prompts: Override<'a, PromptSet>,
    /// Themes.
    pub themes: Override<'a, ThemeSet>,
    /// Context files.
    pub context_files: Override<'a, Vec<ContextFile>>,
    /// Base system prompt (`None`: ctxkit's default).
    pub system_prompt: Override<'a, Option<String>>,
    /// Appended system prompt parts.
    pub append_system_prompt: Override<'a, Vec<String>>,
}

impl std::fmt::Debug for LoaderOverrides<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("LoaderOverrides")
            .finish_non_exhaustive()
    }
}

/// An extension to be loaded by the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionEntry {
    /// File or directory of the extension.
    pub path: PathBuf,
    /// Provenance.
    pub metadata: PathMetadata,
}

/// Everything a load produced.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct LoadedResources {
    /// Extensions to load, in order (CLI first).
    pub extensions: Vec<ExtensionEntry>,
    /// Extension path errors (missing `-e` paths).
    pub extension_diagnostics: Vec<ResourceDiagnostic>,
    /// Skills.
    pub skills: SkillSet,
    /// Prompt templates.
    pub prompts: PromptSet,
    /// Themes.
    pub themes: ThemeSet,
    /// Context files, global first then root → cwd.
    pub context_files: Vec<ContextFile>,
    /// Problems reading context and system-prompt files.
    pub context_diagnostics: Vec<ResourceDiagnostic>,
    /// The custom base prompt (`--system-prompt` or `SYSTEM.md`), if any.
    pub system_prompt: Option<String>,
    /// Appended prompt parts (`--append-system-prompt` or `APPEND_SYSTEM.md`).
    pub append_system_prompt: Vec<String>,
    /// The resolver's output (all entries, including disabled ones).
    pub resolved: ResolvedResources,
    /// Unknown keys and invalid values in the settings files.
    pub settings_diagnostics: Vec<SettingsDiagnostic>,
    paths: LoadedPaths,
}

/// Resources contributed by an extension at run time (`resources_discover`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtensionContribution {
    /// The contributing extension's file (its name becomes the `extension:<name>` source).
    pub extension_path: PathBuf,
    /// Skill paths.
    pub skill_paths: Vec<String>,
    /// Prompt template paths.
    pub prompt_paths: Vec<String>,
    /// Theme paths.
    pub theme_paths: Vec<String>,
}

/// Loads everything. Never fails; every problem is a diagnostic in the result.
pub fn load_resources(
    environment: &Environment,
    settings: &SettingsManager,
    provider: &dyn PackageProvider,
    options: &LoaderOptions,
    overrides: &LoaderOverrides<'_>,
) -> LoadedResources {
    let resolved = resolve_configured(environment, settings, provider);
    let cli = resolve_package_sources(
        environment,
        &options.extension_sources,
        SourceScope::Temporary,
        provider,
    );
    let mut loaded = LoadedResources {
        settings_diagnostics: settings.diagnostics(),
        ..LoadedResources::default()
    };
    let cli_metadata = PathMetadata {
        source: "cli".to_owned(),
        scope: SourceScope::Temporary,
        origin: SourceOrigin::TopLevel,
        base_dir: None,
    };
    for kind in ResourceKind::ALL {
        for resource in cli.of(kind).iter().filter(|resource| resource.enabled) {
            let metadata = match kind {
                ResourceKind::Extensions | ResourceKind::Skills => &cli_metadata,
                ResourceKind::Prompts | ResourceKind::Themes => &resource.metadata,
            };
            loaded.paths.record(&resource.path, metadata);
        }
        for resource in resolved.of(kind).iter().filter(|resource| resource.enabled) {
            loaded.paths.record(&resource.path, &resource.metadata);
        }
    }
    // An untrusted project's skills, prompt templates and system-prompt files wait for trust
    // (`ctxkit_settings::protected_resources`, as Pi 1.6 keeps them).
    let project_trusted = settings.project_trusted();
    let configured = |kind: ResourceKind, disabled: bool| {
        if disabled {
            Vec::new()
        } else {
            enabled_paths(&resolved, kind, project_trusted)
        }
    };
    let switches = options.switches;

    // Extensions.
    let extension_paths = merge_paths(
        &[
            enabled_paths(&cli, ResourceKind::Extensions, true),
            configured(ResourceKind::Extensions, switches.no_extensions),
        ],
        environment,
    );
    loaded.extensions = extension_paths
        .into_iter()
        .map(|path| ExtensionEntry {
            metadata: loaded.paths.metadata_for(environment, &path),
            path,
        })
        .collect();
    for path in missing_local(&options.extension_sources, environment) {
        loaded.extension_diagnostics.push(ResourceDiagnostic::error(
            format!("Extension path does not exist: {}", path.display()),
            &path,
        ));
    }
    loaded.diagnostics_from(cli.diagnostics.iter().chain(&resolved.diagnostics));

    // Skills, prompts, themes.
    loaded.paths.skills = merge_paths(
        &[
            enabled_paths(&cli, ResourceKind::Skills, true),
            configured(ResourceKind::Skills, switches.no_skills),
            cli_paths(&options.skill_paths, environment),
        ],
        environment,
    );
    loaded.paths.prompts = merge_paths(
        &[
            enabled_paths(&cli, ResourceKind::Prompts, true),
            configured(ResourceKind::Prompts, switches.no_prompt_templates),
            cli_paths(&options.prompt_template_paths, environment),
        ],
        environment,
    );
    loaded.paths.themes = merge_paths(
        &[
            enabled_paths(&cli, ResourceKind::Themes, true),
            configured(ResourceKind::Themes, switches.no_themes),
            cli_paths(&options.theme_paths, environment),
        ],
        environment,
    );
    loaded.reload_skills(environment, options);
    loaded.reload_prompts(environment, options);
    loaded.reload_themes(environment, options);

    // Context and system prompt.
    if !switches.no_context_files {
        let (files, diagnostics) =
            discover_context_files(&environment.agent_dir(), &environment.cwd);
        loaded.context_files = files;
        loaded.context_diagnostics.extend(diagnostics);
    }
    let (project_dir, agent_dir) = (environment.project_dir(), environment.agent_dir());
    let prompt_dirs: &[&Path] = if project_trusted {
        &[&project_dir, &agent_dir]
    } else {
        &[&agent_dir]
    };
    let cwd = &environment.cwd;
    let mut diagnostics = Vec::new();
    let system_prompt = match &options.system_prompt {
        Some(value) => given_prompt(value, cwd, &mut diagnostics),
        None => find_prompt_file(prompt_dirs, "SYSTEM.md", cwd, &mut diagnostics),
    };
    if system_prompt.is_some() {
        loaded.system_prompt = system_prompt;
    }
    if options.append_system_prompt.is_empty() {
        loaded.append_system_prompt.extend(find_prompt_file(
            prompt_dirs,
            "APPEND_SYSTEM.md",
            cwd,
            &mut diagnostics,
        ));
    } else {
        for value in &options.append_system_prompt {
            let text = given_prompt(value, cwd, &mut diagnostics);
            loaded.append_system_prompt.extend(text);
        }
    }
    loaded.context_diagnostics.extend(diagnostics);
    loaded.resolved = resolved;
    loaded.apply_overrides(overrides);
    loaded
}

impl LoadedResources {
    fn diagnostics_from<'a>(&mut self, diagnostics: impl Iterator<Item = &'a ResourceDiagnostic>) {
        self.extension_diagnostics.extend(diagnostics.cloned());
    }

    fn reload_skills(&mut self, environment: &Environment, options: &LoaderOptions) {
        if options.switches.no_skills && self.paths.skills.is_empty() {
            self.skills = SkillSet::default();
            return;
        }
        let mut set = load_skills(&self.paths.skills, &environment.cwd, &environment.home);
        for path in missing_local(&options.skill_paths, environment) {
            if !set
                .diagnostics
                .iter()
                .any(|diagnostic| diagnostic.path() == path)
            {
                set.diagnostics.push(ResourceDiagnostic::error(
                    "Skill path does not exist",
                    &path,
                ));
            }
        }
        for skill in &mut set.skills {
            skill.metadata = Some(self.paths.metadata_for(environment, &skill.file_path));
        }
        self.skills = set;
    }

    fn reload_prompts(&mut self, environment: &Environment, options: &LoaderOptions) {
        if options.switches.no_prompt_templates && self.paths.prompts.is_empty() {
            self.prompts = PromptSet::default();
            return;
        }
        let mut set =
            load_prompt_templates(&self.paths.prompts, &environment.cwd, &environment.home);
        for path in missing_local(&options.prompt_template_paths, environment) {
            set.diagnostics.push(ResourceDiagnostic::error(
                "Prompt template path does not exist",
                &path,
            ));
        }
        for template in &mut set.templates {
            template.metadata = Some(self.paths.metadata_for(environment, &template.file_path));
        }
        self.prompts = set;
    }

    fn reload_themes(&mut self, environment: &Environment, options: &LoaderOptions) {
        if options.switches.no_themes && self.paths.themes.is_empty() {
            self.themes = ThemeSet::default();
            return;
        }
        let mut set = load_themes(&self.paths.themes, &environment.cwd);
        for path in missing_local(&options.theme_paths, environment) {
            if !set
                .diagnostics
                .iter()
                .any(|diagnostic| diagnostic.path() == path)
            {
                set.diagnostics.push(ResourceDiagnostic::error(
                    "Theme path does not exist",
                    &path,
                ));
            }
        }
        for theme in &mut set.themes {
            theme.metadata = Some(self.paths.metadata_for(environment, &theme.file_path));
        }
        self.themes = set;
    }

    fn apply_overrides(&mut self, overrides: &LoaderOverrides<'_>) {
        if let Some(hook) = &overrides.extensions {
            self.extensions = hook(std::mem::take(&mut self.extensions));
        }
        if let Some(hook) = &overrides.skills {
            self.skills = hook(std::mem::take(&mut self.skills));
        }
        if let Some(hook) = &overrides.prompts {
            self.prompts = hook(std::mem::take(&mut self.prompts));
        }
        if let Some(hook) = &overrides.themes {
            self.themes = hook(std::mem::take(&mut self.themes));
        }
        if let Some(hook) = &overrides.context_files {
            self.context_files = hook(std::mem::take(&mut self.context_files));
        }
        if let Some(hook) = &overrides.system_prompt {
            self.system_prompt = hook(self.system_prompt.take());
        }
        if let Some(hook) = &overrides.append_system_prompt {
            self.append_system_prompt = hook(std::mem::take(&mut self.append_system_prompt));
        }
    }

    /// Adds paths contributed by an extension at run time, after everything else (lowest
    /// precedence), with provenance `extension:<file stem>`, and reloads the affected types.
    pub fn add_contributed_paths(
        &mut self,
        environment: &Environment,
        contribution: &ExtensionContribution,
    ) {
        let stem = contribution
            .extension_path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let metadata = PathMetadata {
            source: format!("extension:{stem}"),
            scope: SourceScope::Temporary,
            origin: SourceOrigin::TopLevel,
            base_dir: contribution.extension_path.parent().map(Path::to_path_buf),
        };
        let options = LoaderOptions::default();
        let add = |existing: &Vec<PathBuf>, values: &[String], paths: &mut LoadedPaths| {
            let extra: Vec<PathBuf> = values.iter().map(PathBuf::from).collect();
            let merged = merge_paths(&[existing.clone(), extra], environment);
            for path in merged.iter().skip(existing.len()) {
                paths.record(path, &metadata);
            }
            merged
        };
        if !contribution.skill_paths.is_empty() {
            let existing = self.paths.skills.clone();
            self.paths.skills = add(&existing, &contribution.skill_paths, &mut self.paths);
            self.reload_skills(environment, &options);
        }
        if !contribution.prompt_paths.is_empty() {
            let existing = self.paths.prompts.clone();
            self.paths.prompts = add(&existing, &contribution.prompt_paths, &mut self.paths);
            self.reload_prompts(environment, &options);
        }
        if !contribution.theme_paths.is_empty() {
            let existing = self.paths.themes.clone();
            self.paths.themes = add(&existing, &contribution.theme_paths, &mut self.paths);
            self.reload_themes(environment, &options);
        }
    }
}
