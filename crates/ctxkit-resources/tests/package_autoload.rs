//! A `packages` entry's `autoload: false` (Pi 1.6): only what its patterns name loads, and a
//! project's such entry filters the user's entry of the same package.

use std::path::{Path, PathBuf};

use ctxkit_packages::{LocalPackagesOnly, ResolvedResource, SourceScope, resolve_configured};
use ctxkit_settings::SettingsManager;

use crate::common::{World, write};

/// A package of two skills and a prompt template, with no manifest.
fn package(world: &World) -> PathBuf {
    let package = world.root.join("pkg");
    for file in ["skills/a/SKILL.md", "skills/b/SKILL.md", "prompts/rev.md"] {
        write(package.join(file), "");
    }
    package
}

/// Paths relative to `package`, `!` appended for disabled ones.
fn listed(resources: &[ResolvedResource], package: &Path) -> Vec<String> {
    resources
        .iter()
        .map(|resource| {
            let path = resource
                .path
                .strip_prefix(package)
                .unwrap_or(&resource.path);
            let mark = if resource.enabled { "" } else { "!" };
            format!("{}{mark}", path.display())
        })
        .collect()
}

fn resolve_trusted(world: &World) -> ctxkit_packages::ResolvedResources {
    let mut settings = SettingsManager::load(&world.env);
    settings.set_project_trusted(true);
    resolve_configured(&world.env, &settings, &LocalPackagesOnly)
}

/// The tester's case: a skill named with `+`, no prompt patterns: that skill alone, no prompt.
#[test]
fn autoload_false_loads_only_what_the_patterns_name() {
    let world = World::new();
    let package = package(&world);
    write(
        world.agent().join("settings.json"),
        &format!(
            r#"{{"packages":[{{"source":"{}","autoload":false,"skills":["+skills/b/SKILL.md"]}}]}}"#,
            package.display()
        ),
    );
    let resolved = resolve_trusted(&world);
    assert_eq!(
        listed(&resolved.skills, &package),
        vec!["skills/b/SKILL.md"]
    );
    assert!(resolved.prompts.is_empty());
    assert!(resolved.extensions.is_empty());
}

/// A project's `autoload: false` entry is a delta over the user's entry of the same package:
/// what it names it decides (found at the user's source), the rest the user's entry brings.
#[test]
fn a_projects_autoload_false_entry_filters_the_users_package() {
    let world = World::new();
    let package = package(&world);
    write(
        world.agent().join("settings.json"),
        &format!(r#"{{"packages":["{}"]}}"#, package.display()),
    );
    // The project names the package by another path to it: identity is the place, not the text.
    let again = format!("{}/../pkg", world.root.join("pkg").display());
    write(
        world.project().join("settings.json"),
        &format!(
            r#"{{"packages":[{{"source":"{again}","autoload":false,"skills":["-skills/a"]}}]}}"#
        ),
    );
    let resolved = resolve_trusted(&world);
    assert_eq!(
        listed(&resolved.skills, &package),
        vec!["skills/a/SKILL.md!", "skills/b/SKILL.md"]
    );
    assert_eq!(resolved.skills[0].metadata.scope, SourceScope::Project);
    assert_eq!(resolved.skills[1].metadata.scope, SourceScope::User);
    assert_eq!(listed(&resolved.prompts, &package), vec!["prompts/rev.md"]);
}
