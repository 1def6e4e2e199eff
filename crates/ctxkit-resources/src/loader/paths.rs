//! The path lists a load works from: merged from settings, packages and the command line,
//! resolved against the working directory, and each path's source metadata.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use ctxkit_packages::{PathMetadata, ResolvedResources, SourceOrigin, SourceScope};
use ctxkit_settings::ResourceKind;
use ctxkit_settings::looks_local;
use ctxkit_settings::{Environment, canonical_or_raw, expand_tilde_loose, resolve_against};

/// The path lists a load used, kept so runtime additions can reload one type.
#[derive(Debug, Clone, Default)]
pub(super) struct LoadedPaths {
    pub(super) skills: Vec<PathBuf>,
    pub(super) prompts: Vec<PathBuf>,
    pub(super) themes: Vec<PathBuf>,
    pub(super) metadata: Vec<(PathBuf, PathMetadata)>,
}

/// Concatenation, each tilde-expanded and resolved against cwd, canonical duplicates dropped.
pub(super) fn merge_paths(lists: &[Vec<PathBuf>], environment: &Environment) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for list in lists {
        for path in list {
            let resolved = resolve_against(
                &environment.cwd,
                &expand_tilde_loose(&path.to_string_lossy(), &environment.home),
            );
            if seen.insert(canonical_or_raw(&resolved)) {
                out.push(resolved);
            }
        }
    }
    out
}

/// The enabled paths of `kind`; a project's skills and prompt templates only when the project is
/// trusted (`ctxkit_settings::protected_resources`).
pub(super) fn enabled_paths(
    resolved: &ResolvedResources,
    kind: ResourceKind,
    project_trusted: bool,
) -> Vec<PathBuf> {
    let waits_for_trust = |scope: SourceScope| {
        !project_trusted
            && scope == SourceScope::Project
            && matches!(kind, ResourceKind::Skills | ResourceKind::Prompts)
    };
    resolved
        .of(kind)
        .iter()
        .filter(|resource| resource.enabled && !waits_for_trust(resource.metadata.scope))
        .map(|resource| resource.path.clone())
        .collect()
}

/// Local-looking CLI values become absolute against cwd (no `~` expansion).
pub(super) fn cli_paths(values: &[String], environment: &Environment) -> Vec<PathBuf> {
    values
        .iter()
        .map(|value| {
            if looks_local(value) {
                resolve_against(&environment.cwd, Path::new(value))
            } else {
                PathBuf::from(value)
            }
        })
        .collect()
}

fn default_metadata(environment: &Environment, path: &Path) -> PathMetadata {
    let agent = environment.agent_dir();
    let project = environment.project_dir();
    let under = |base: &Path| {
        ResourceKind::ALL
            .iter()
            .any(|kind| path.starts_with(base.join(kind.key())))
    };
    let (scope, base_dir) = if under(&agent) {
        (SourceScope::User, Some(agent))
    } else if under(&project) {
        (SourceScope::Project, Some(project))
    } else {
        (SourceScope::Temporary, path.parent().map(Path::to_path_buf))
    };
    PathMetadata {
        source: "local".to_owned(),
        scope,
        origin: SourceOrigin::TopLevel,
        base_dir,
    }
}

impl LoadedPaths {
    /// Metadata of the exact path or its nearest recorded ancestor, else the default.
    pub(super) fn metadata_for(&self, environment: &Environment, path: &Path) -> PathMetadata {
        self.metadata
            .iter()
            .filter(|(recorded, _)| path.starts_with(recorded))
            .max_by_key(|(recorded, _)| recorded.components().count())
            .map_or_else(
                || default_metadata(environment, path),
                |(_, metadata)| metadata.clone(),
            )
    }

    pub(super) fn record(&mut self, path: &Path, metadata: &PathMetadata) {
        if !self.metadata.iter().any(|(recorded, _)| recorded == path) {
            self.metadata.push((path.to_path_buf(), metadata.clone()));
        }
    }
}

pub(super) fn missing_local(values: &[String], environment: &Environment) -> Vec<PathBuf> {
    values
        .iter()
        .filter(|value| looks_local(value))
        .map(|value| resolve_against(&environment.cwd, Path::new(value)))
        .filter(|path| !path.exists())
        .collect()
}
