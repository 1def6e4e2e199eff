//! ctxkit's home as a place a project's resources never read.

use std::path::{Path, PathBuf};

use super::{PathMetadata, SourceScope};
use ctxkit_settings::{Environment, canonical_or_raw};

/// ctxkit's home (its settings, credentials, trust list, sessions): a project's resources (its
/// settings arrays, auto-discovered folders and packages) never read there, even by an absolute
/// path or a symlink, unless the project itself lies in it. The user's own and command-line
/// resources may.
#[derive(Debug, Default)]
pub(super) struct OwnHome {
    /// The home, symlinks resolved (`None`: no rule, for resolving CLI sources).
    real: Option<PathBuf>,
    /// The project lies in the home: its resources are the user's own files.
    project_inside: bool,
}

impl OwnHome {
    pub(super) fn of(environment: &Environment) -> Self {
        let real = canonical_or_raw(&environment.agent_dir());
        let project_inside = canonical_or_raw(&environment.cwd).starts_with(&real);
        Self {
            real: Some(real),
            project_inside,
        }
    }

    /// The home `path` lies in when `metadata`'s scope may not read it there.
    pub(super) fn refuses(&self, path: &Path, metadata: &PathMetadata) -> Option<&Path> {
        let home = self.real.as_deref()?;
        let project = match metadata.scope {
            SourceScope::Project => !self.project_inside,
            SourceScope::User | SourceScope::Temporary => false,
        };
        (project && canonical_or_raw(path).starts_with(home)).then_some(home)
    }
}
