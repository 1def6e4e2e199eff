//! Computing the configured resource set: packages from both settings scopes,
//! top-level settings arrays and auto-discovered directories, ranked and de-duplicated.

mod ancestors;
mod confine;
mod own_home;
pub(crate) mod package_content;
mod package_entries;
pub(crate) mod patterns;
pub(crate) mod walk;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::diagnostics::ResourceDiagnostic;
use crate::error::PackageError;
use crate::source::PackageSource;
use ancestors::ancestor_agent_skill_dirs;
use confine::Confinement;
use ctxkit_jail::LocalUsers;
use ctxkit_settings::PackageSetting;
use ctxkit_settings::ResourceKind;
use ctxkit_settings::SettingsManager;
use ctxkit_settings::SettingsScope;
use ctxkit_settings::{Environment, canonical_or_raw, expand_tilde_loose, resolve_against};
use own_home::OwnHome;
use package_entries::{Location, package_entries};
use patterns::{apply_patterns, is_enabled_by_overrides, is_pattern};
use walk::{
    Bound, EntryType, SkillScanMode, collect_direct_files, collect_extension_entries,
    collect_from_paths, collect_skill_entries_in, entry_type,
};

/// Which configuration a resource came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceScope {
    /// The ctxkit home (global settings, `~/.ctxkit/…`, `~/.agents/skills`).
    User,
    /// The project (`.ctxkit/…`, `.agents/skills` of ancestors).
    Project,
    /// Command line or SDK (`-e`, `--skill`, …).
    Temporary,
}

impl SourceScope {
    /// `user`, `project` or `temporary`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Temporary => "temporary",
        }
    }
}

/// Whether a resource came from a package or from top-level configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceOrigin {
    /// From a package (npm, git or local package directory).
    Package,
    /// From a settings array, an auto-discovered directory or the command line.
    TopLevel,
}

/// Provenance of a resolved path (the reference's `sourceInfo` / path metadata).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathMetadata {
    /// The package source as written, `local` (settings arrays), `auto` (discovered), `cli`.
    pub source: String,
    /// The scope.
    pub scope: SourceScope,
    /// Package or top-level.
    pub origin: SourceOrigin,
    /// The package root or scope base dir, for display.
    pub base_dir: Option<PathBuf>,
}

impl PathMetadata {
    fn rank(&self) -> u8 {
        match self.origin {
            SourceOrigin::Package => 4,
            SourceOrigin::TopLevel => {
                let scope_base = match self.scope {
                    SourceScope::Project => 0,
                    SourceScope::User | SourceScope::Temporary => 2,
                };
                scope_base + u8::from(self.source != "local")
            }
        }
    }
}

/// One resolved resource path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedResource {
    /// Absolute path of the file (or extension directory).
    pub path: PathBuf,
    /// Disabled entries are listed (for `ctxkit config`) but not loaded.
    pub enabled: bool,
    /// Where it came from.
    pub metadata: PathMetadata,
}

/// The resolved resource paths per kind, plus diagnostics (broken packages, bad sources).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResolvedResources {
    /// Extension paths.
    pub extensions: Vec<ResolvedResource>,
    /// Skill files.
    pub skills: Vec<ResolvedResource>,
    /// Prompt template files.
    pub prompts: Vec<ResolvedResource>,
    /// Theme files.
    pub themes: Vec<ResolvedResource>,
    /// Problems met while resolving.
    pub diagnostics: Vec<ResourceDiagnostic>,
}

impl ResolvedResources {
    /// The list for one kind.
    pub fn of(&self, kind: ResourceKind) -> &[ResolvedResource] {
        match kind {
            ResourceKind::Extensions => &self.extensions,
            ResourceKind::Skills => &self.skills,
            ResourceKind::Prompts => &self.prompts,
            ResourceKind::Themes => &self.themes,
        }
    }

    fn of_mut(&mut self, kind: ResourceKind) -> &mut Vec<ResolvedResource> {
        match kind {
            ResourceKind::Extensions => &mut self.extensions,
            ResourceKind::Skills => &mut self.skills,
            ResourceKind::Prompts => &mut self.prompts,
            ResourceKind::Themes => &mut self.themes,
        }
    }
}

/// Finds (and when needed installs) the root directory of npm and git packages.
pub trait PackageProvider {
    /// The package root of an npm or git `source` in `scope`, installing it if that is the
    /// provider's policy; `Ok(None)` skips the package silently (offline, not installed).
    fn package_root(
        &self,
        source: &PackageSource,
        source_text: &str,
        scope: SourceScope,
    ) -> Result<Option<PathBuf>, PackageError>;
}

/// A provider that never installs and knows no install locations: npm and git packages are
/// skipped. Useful for tests and for listing local configuration only.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalPackagesOnly;

impl PackageProvider for LocalPackagesOnly {
    fn package_root(
        &self,
        _: &PackageSource,
        _: &str,
        _: SourceScope,
    ) -> Result<Option<PathBuf>, PackageError> {
        Ok(None)
    }
}

/// Accumulates resources with "first insertion of a path wins", and refuses a project's resource
/// that lies in ctxkit's home.
#[derive(Debug, Default)]
struct Accumulator {
    resources: ResolvedResources,
    seen: HashSet<(ResourceKind, PathBuf)>,
    home: OwnHome,
}

impl Accumulator {
    fn new(environment: &Environment) -> Self {
        Self {
            home: OwnHome::of(environment),
            ..Self::default()
        }
    }

    fn add(&mut self, kind: ResourceKind, path: PathBuf, enabled: bool, metadata: &PathMetadata) {
        if let Some(home) = self.home.refuses(&path, metadata) {
            let message = format!(
                "`{}` lies in ctxkit's home `{}`, which a project's resources never read; it is \
                 not loaded",
                path.display(),
                home.display()
            );
            self.resources
                .diagnostics
                .push(ResourceDiagnostic::warning(message, &path));
            return;
        }
        if self.seen.insert((kind, path.clone())) {
            self.resources.of_mut(kind).push(ResolvedResource {
                path,
                enabled,
                metadata: metadata.clone(),
            });
        }
    }

    /// Stable sort by rank, then drop canonical duplicates.
    fn finish(mut self) -> ResolvedResources {
        for kind in ResourceKind::ALL {
            let list = self.resources.of_mut(kind);
            list.sort_by_key(|resource| resource.metadata.rank());
            let mut canonical_seen = HashSet::new();
            list.retain(|resource| canonical_seen.insert(canonical_or_raw(&resource.path)));
        }
        self.resources
    }
}

fn scope_base(environment: &Environment, scope: SourceScope) -> PathBuf {
    match scope {
        SourceScope::User => environment.agent_dir(),
        SourceScope::Project => environment.project_dir(),
        SourceScope::Temporary => environment.cwd.clone(),
    }
}

/// Resolves a package entry (string or filter object) of `scope`, found at `location`, into the
/// accumulator.
fn resolve_package(
    environment: &Environment,
    provider: &dyn PackageProvider,
    entry: &PackageSetting,
    scope: SourceScope,
    location: &Location,
    accumulator: &mut Accumulator,
) {
    let text = location.source.as_str();
    let filter = entry.is_filtered().then_some(entry);
    let base = scope_base(environment, location.scope);
    let source = match PackageSource::parse(text) {
        Ok(source) => source,
        Err(error) => {
            accumulator
                .resources
                .diagnostics
                .push(ResourceDiagnostic::error(error.to_string(), &base));
            return;
        }
    };
    let mut metadata = PathMetadata {
        source: entry.source().to_owned(),
        scope,
        origin: SourceOrigin::Package,
        base_dir: None,
    };
    let root = match &source {
        PackageSource::Local { .. } => {
            let Some(path) = source.local_path(&base, &environment.home) else {
                return;
            };
            match entry_type(&path) {
                Some(EntryType::File) => {
                    metadata.base_dir = path.parent().map(Path::to_path_buf);
                    accumulator.add(ResourceKind::Extensions, path, true, &metadata);
                    return;
                }
                Some(EntryType::Directory) => path,
                // Named in settings but nothing usable there: said, not skipped in silence.
                found @ (Some(EntryType::Other) | None) => {
                    let what = if found.is_none() {
                        "does not exist"
                    } else {
                        "is neither a file nor a folder"
                    };
                    accumulator
                        .resources
                        .diagnostics
                        .push(ResourceDiagnostic::error(
                            format!("Package `{text}`: `{}` {what}", path.display()),
                            &base,
                        ));
                    return;
                }
            }
        }
        PackageSource::Npm(_) | PackageSource::Git(_) => {
            match provider.package_root(&source, text, location.scope) {
                Ok(Some(root)) => root,
                Ok(None) => return,
                Err(error) => {
                    let message = if let PackageError::NotInstalled { .. }
                    | PackageError::IncompleteCheckout { .. } = &error
                    {
                        error.to_string()
                    } else {
                        format!("Package `{text}` could not be loaded: {error}")
                    };
                    accumulator
                        .resources
                        .diagnostics
                        .push(ResourceDiagnostic::error(message, &base));
                    return;
                }
            }
        }
    };
    metadata.base_dir = Some(root.clone());
    let files = package_content::package_files(&root, filter);
    accumulator.resources.diagnostics.extend(files.refused);
    let is_local = matches!(source, PackageSource::Local { .. });
    if is_local && !files.found_any {
        accumulator.add(ResourceKind::Extensions, root, true, &metadata);
        return;
    }
    for (kind, list) in files.by_kind {
        for (path, enabled) in list {
            accumulator.add(kind, path, enabled, &metadata);
        }
    }
}

/// A settings array of paths and patterns.
fn resolve_local_entries(
    environment: &Environment,
    entries: &[String],
    kind: ResourceKind,
    scope: SourceScope,
    accumulator: &mut Accumulator,
) {
    if entries.is_empty() {
        return;
    }
    let base = scope_base(environment, scope);
    let (patterns, plain): (Vec<String>, Vec<String>) =
        entries.iter().cloned().partition(|entry| is_pattern(entry));
    let mut files = Vec::new();
    for entry in &plain {
        let path = resolve_against(&base, &expand_tilde_loose(entry, &environment.home));
        if entry_type(&path).is_none() {
            let diagnostic = missing_entry(kind, scope, entry, &path);
            accumulator.resources.diagnostics.push(diagnostic);
            continue;
        }
        let real_path = canonical_or_raw(&path);
        let bound = match scope {
            SourceScope::Project => Bound::within(&real_path),
            SourceScope::User | SourceScope::Temporary => Bound::NONE,
        };
        let mut found = collect_from_paths(std::slice::from_ref(&path), kind, bound);
        if scope == SourceScope::Project {
            let confinement = Confinement {
                folder: &path,
                role: "the project's entry",
                hint: OWN_SETTINGS_HINT,
            };
            let diagnostics = &mut accumulator.resources.diagnostics;
            confinement.retain(&mut found, PathBuf::as_path, diagnostics);
        }
        files.extend(found);
    }
    let enabled = apply_patterns(&files, &patterns, &base);
    let metadata = PathMetadata {
        source: "local".to_owned(),
        scope,
        origin: SourceOrigin::TopLevel,
        base_dir: Some(base.clone()),
    };
    for file in files {
        let on = enabled.contains(&file);
        accumulator.add(kind, file, on, &metadata);
    }
}

/// A settings entry naming nothing: Pi 1.6.0 loads nothing from it without a word, so a typo in a
/// path went unseen (QA r105).
fn missing_entry(
    kind: ResourceKind,
    scope: SourceScope,
    entry: &str,
    path: &Path,
) -> ResourceDiagnostic {
    let settings = match scope {
        SourceScope::Project => "the project's settings",
        SourceScope::User | SourceScope::Temporary => "your settings",
    };
    let message = format!(
        "The `{}` entry `{entry}` of {settings} names nothing: `{}` does not exist; it loads nothing",
        kind.key(),
        path.display()
    );
    ResourceDiagnostic::warning(message, path)
}

/// Auto-discovered resources of one scope.
fn add_auto_discovered(
    environment: &Environment,
    settings: &SettingsManager,
    scope: SourceScope,
    accumulator: &mut Accumulator,
) {
    let base = scope_base(environment, scope);
    let settings_scope = match scope {
        SourceScope::Project => SettingsScope::Project,
        SourceScope::User | SourceScope::Temporary => SettingsScope::Global,
    };
    let metadata = PathMetadata {
        source: "auto".to_owned(),
        scope,
        origin: SourceOrigin::TopLevel,
        base_dir: Some(base.clone()),
    };
    let real_cwd = canonical_or_raw(&environment.cwd);
    let project_bound = match scope {
        SourceScope::Project => Bound::within(&real_cwd),
        SourceScope::User | SourceScope::Temporary => Bound::NONE,
    };
    for kind in ResourceKind::ALL {
        let directory = base.join(kind.key());
        let mut files = match kind {
            ResourceKind::Extensions => collect_extension_entries(&directory),
            ResourceKind::Skills => {
                collect_skill_entries_in(&directory, SkillScanMode::Pi, project_bound)
            }
            ResourceKind::Prompts => collect_direct_files(&directory, ".md"),
            ResourceKind::Themes => collect_direct_files(&directory, ".json"),
        };
        let diagnostics = &mut accumulator.resources.diagnostics;
        if scope == SourceScope::Project {
            confine_discovered(&mut files, &environment.cwd, diagnostics);
        }
        if kind == ResourceKind::Skills {
            let agent_dirs = match scope {
                SourceScope::Project => {
                    ancestor_agent_skill_dirs(environment, &LocalUsers::of_process(), diagnostics)
                }
                SourceScope::User | SourceScope::Temporary => {
                    vec![environment.home.join(".agents/skills")]
                }
            };
            for agent_dir in agent_dirs {
                // `<folder>/.agents/skills`: what it holds stays in `<folder>`.
                let holder = agent_dir.parent().and_then(Path::parent);
                let real_holder = holder.map(canonical_or_raw);
                let bound = match (scope, &real_holder) {
                    (SourceScope::Project, Some(real_holder)) => Bound::within(real_holder),
                    _ => Bound::NONE,
                };
                let mut found = collect_skill_entries_in(&agent_dir, SkillScanMode::Agents, bound);
                if let (SourceScope::Project, Some(holder)) = (scope, holder) {
                    confine_discovered(&mut found, holder, diagnostics);
                }
                files.extend(found);
            }
        }
        let overrides = settings.resource_entries_in(settings_scope, kind);
        for file in files {
            let enabled = is_enabled_by_overrides(&file, &overrides, &base);
            accumulator.add(kind, file, enabled, &metadata);
        }
    }
}

/// How a file a project's folder leads out to can still be loaded: by the user's own choice.
const OWN_SETTINGS_HINT: &str = " (to load it, name it in your own settings)";

/// Leaves out the files a project's auto-discovered folder found whose real place lies outside
/// `holder` (the project, or the ancestor holding `.agents/skills`), with a warning.
fn confine_discovered(
    files: &mut Vec<PathBuf>,
    holder: &Path,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) {
    let confinement = Confinement {
        folder: holder,
        role: "the project folder",
        hint: OWN_SETTINGS_HINT,
    };
    confinement.retain(files, PathBuf::as_path, diagnostics);
}

/// Resolves everything configured in both settings scopes. Never fails: broken
/// packages become diagnostics and the rest still resolves.
pub fn resolve_configured(
    environment: &Environment,
    settings: &SettingsManager,
    provider: &dyn PackageProvider,
) -> ResolvedResources {
    let mut accumulator = Accumulator::new(environment);
    // 1. Packages: project first, then user.
    for (entry, scope, location) in package_entries(environment, settings) {
        resolve_package(
            environment,
            provider,
            &entry,
            scope,
            &location,
            &mut accumulator,
        );
    }
    // 2. Top-level settings arrays: project, then user.
    for kind in ResourceKind::ALL {
        for (settings_scope, scope) in [
            (SettingsScope::Project, SourceScope::Project),
            (SettingsScope::Global, SourceScope::User),
        ] {
            let entries = settings.resource_entries_in(settings_scope, kind);
            resolve_local_entries(environment, &entries, kind, scope, &mut accumulator);
        }
    }
    // 3. Auto-discovery: project, then user.
    add_auto_discovered(
        environment,
        settings,
        SourceScope::Project,
        &mut accumulator,
    );
    add_auto_discovered(environment, settings, SourceScope::User, &mut accumulator);
    accumulator.finish()
}

/// Resolves explicit package sources (CLI `-e`) in one scope, without identity de-duplication.
pub fn resolve_package_sources(
    environment: &Environment,
    sources: &[String],
    scope: SourceScope,
    provider: &dyn PackageProvider,
) -> ResolvedResources {
    let mut accumulator = Accumulator::default();
    for source in sources {
        resolve_package(
            environment,
            provider,
            &PackageSetting::Source(source.clone()),
            scope,
            &Location {
                source: source.clone(),
                scope,
            },
            &mut accumulator,
        );
    }
    accumulator.finish()
}
