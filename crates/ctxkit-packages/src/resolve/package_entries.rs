//! Which `packages` entries of both scopes resolve, and where each one's files are found: the
//! first entry per package wins, except around a project's `autoload: false` entry (Pi 1.6).

use std::collections::HashMap;

use ctxkit_settings::{Environment, PackageSetting, SettingsManager, SettingsScope};

use super::{SourceScope, scope_base};
use crate::source::PackageSource;

/// Where a package entry's files are found: its own source in its own scope, or, for a
/// project's `autoload: false` entry of a package the user's settings name too, the user's
/// source in the user's scope (Pi 1.6's delta base: the project entry filters the user's
/// package).
#[derive(Debug, Clone)]
pub(super) struct Location {
    pub(super) source: String,
    pub(super) scope: SourceScope,
}

/// The `packages` entries to resolve, project first, each with its scope and where its files
/// are found, as Pi 1.6's `dedupePackages` and `findAutoloadDeltaBase`: the first entry per
/// identity wins, except that a user entry after a project's `autoload: false` entry of the same
/// package is kept too, and that project entry is found at the user's source.
pub(super) fn package_entries(
    environment: &Environment,
    settings: &SettingsManager,
) -> Vec<(PackageSetting, SourceScope, Location)> {
    let identity = |entry: &PackageSetting, scope: SourceScope| {
        let base = scope_base(environment, scope);
        PackageSource::classify(entry.source()).identity(&base, &environment.home)
    };
    let project = settings.packages_in(SettingsScope::Project);
    let user = settings.packages_in(SettingsScope::Global);
    let mut chosen = Vec::new();
    // Identity → whether the entry that took it is a project's delta (a user entry may follow).
    let mut seen: HashMap<String, bool> = HashMap::new();
    for entry in project {
        let key = identity(&entry, SourceScope::Project);
        if seen.contains_key(&key) {
            continue;
        }
        let delta_base = entry
            .autoload_disabled()
            .then(|| {
                user.iter()
                    .find(|user_entry| identity(user_entry, SourceScope::User) == key)
            })
            .flatten();
        seen.insert(key, entry.autoload_disabled());
        let location = match delta_base {
            Some(user_entry) => Location {
                source: user_entry.source().to_owned(),
                scope: SourceScope::User,
            },
            None => Location {
                source: entry.source().to_owned(),
                scope: SourceScope::Project,
            },
        };
        chosen.push((entry, SourceScope::Project, location));
    }
    for entry in user {
        let key = identity(&entry, SourceScope::User);
        let after_delta = seen.get(&key).copied();
        if after_delta == Some(false) {
            continue;
        }
        // The delta keeps one user entry after it; later duplicates are dropped as usual.
        seen.insert(key, false);
        let location = Location {
            source: entry.source().to_owned(),
            scope: SourceScope::User,
        };
        chosen.push((entry, SourceScope::User, location));
    }
    chosen
}
