//! A project's folders hold symlinks it committed: whatever a scan of its settings arrays' entries
//! or of its auto-discovered folders finds, a file whose real place lies outside the folder it was
//! found from is refused with a warning (`docs/security.md`, "Packages and resources stay in their
//! place"). Found by the `untrusted_resources` fuzz target: `{"prompts": ["../inner"]}` loaded
//! `inner/escape.md`, a link to a file beside the project.

use std::os::unix::fs::symlink;
use std::path::Path;

use ctxkit_packages::{LocalPackagesOnly, ResolvedResources, resolve_configured};
use ctxkit_settings::{ResourceKind, SettingsManager};

use crate::common::{World, write};

const SKILL: &str = "---\nname: far\ndescription: Outside the project.\n---\nDo it.\n";

/// A world whose project links out to `<root>/outside`, which holds a skill and a prompt.
fn world_with_links_out() -> World {
    let world = World::new();
    write(world.root.join("outside/skills/far/SKILL.md"), SKILL);
    write(world.root.join("outside/prompts/far.md"), "Far away\n");
    write(world.cwd().join("notes/near.md"), "Near\n");
    std::fs::create_dir_all(world.cwd().join(".git")).unwrap();
    std::fs::create_dir_all(world.project()).unwrap();
    symlink(
        "../../../outside/prompts/far.md",
        world.cwd().join("notes/far.md"),
    )
    .unwrap();
    world
}

fn resolve(world: &World, trusted: bool) -> ResolvedResources {
    let mut settings = SettingsManager::load(&world.env);
    if trusted {
        settings.set_project_trusted(true);
    }
    resolve_configured(&world.env, &settings, &LocalPackagesOnly)
}

/// The names of the resolved files of `kind`, relative to the world.
fn names(resolved: &ResolvedResources, kind: ResourceKind, root: &Path) -> Vec<String> {
    resolved
        .of(kind)
        .iter()
        .map(|resource| {
            let path = resource.path.strip_prefix(root).unwrap_or(&resource.path);
            path.display().to_string()
        })
        .collect()
}

fn warnings(resolved: &ResolvedResources, root: &Path) -> Vec<String> {
    resolved
        .diagnostics
        .iter()
        .map(|diagnostic| {
            diagnostic
                .message()
                .replace(&root.display().to_string(), "R")
        })
        .collect()
}

#[test]
fn a_settings_entry_inside_the_project_loads_nothing_its_links_lead_out_to() {
    let world = world_with_links_out();
    write(
        world.project().join("settings.json"),
        r#"{"prompts": ["../notes"]}"#,
    );
    for trusted in [false, true] {
        let resolved = resolve(&world, trusted);
        assert_eq!(
            names(&resolved, ResourceKind::Prompts, &world.root),
            ["work/proj/notes/near.md"]
        );
        assert_eq!(
            warnings(&resolved, &world.root),
            [
                "`R/work/proj/notes/far.md` leads out of the project's entry \
              `R/work/proj/notes` (to `R/outside/prompts/far.md`); it is not loaded \
              (to load it, name it in your own settings)"
            ]
        );
    }
}

#[test]
fn auto_discovered_folders_load_nothing_their_links_lead_out_to() {
    let world = world_with_links_out();
    symlink("../../../outside/skills", world.project().join("skills")).unwrap();
    write(world.project().join("prompts/near.md"), "Near\n");
    symlink(
        "../../../../outside/prompts/far.md",
        world.project().join("prompts/far.md"),
    )
    .unwrap();
    std::fs::create_dir_all(world.cwd().join(".agents/skills")).unwrap();
    symlink(
        "../../../../outside/skills/far",
        world.cwd().join(".agents/skills/far"),
    )
    .unwrap();
    let resolved = resolve(&world, false);
    assert_eq!(
        names(&resolved, ResourceKind::Prompts, &world.root),
        ["work/proj/.ctxkit/prompts/near.md"]
    );
    assert!(resolved.skills.is_empty(), "{:?}", resolved.skills);
    let warnings = warnings(&resolved, &world.root);
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    for warning in &warnings {
        assert!(warning.contains("leads out of the project folder `R/work/proj`"));
    }
}

#[test]
fn a_link_that_stays_in_the_project_loads() {
    let world = world_with_links_out();
    write(world.cwd().join("tools/skills/mine/SKILL.md"), SKILL);
    symlink("../tools/skills", world.project().join("skills")).unwrap();
    symlink("near.md", world.cwd().join("notes/again.md")).unwrap();
    write(
        world.project().join("settings.json"),
        r#"{"prompts": ["../notes/again.md"]}"#,
    );
    let resolved = resolve(&world, false);
    assert_eq!(
        names(&resolved, ResourceKind::Skills, &world.root),
        ["work/proj/.ctxkit/skills/mine/SKILL.md"]
    );
    assert_eq!(
        names(&resolved, ResourceKind::Prompts, &world.root),
        ["work/proj/notes/again.md"]
    );
}

/// The user's own settings and folders are the user's choice: their links are followed.
#[test]
fn the_users_own_entries_follow_their_links() {
    let world = world_with_links_out();
    write(
        world.agent().join("settings.json"),
        r#"{"prompts": ["../../work/proj/notes"]}"#,
    );
    symlink("../../outside/skills", world.agent().join("skills")).unwrap();
    let resolved = resolve(&world, false);
    let mut prompts = names(&resolved, ResourceKind::Prompts, &world.root);
    prompts.sort();
    assert_eq!(
        prompts,
        ["work/proj/notes/far.md", "work/proj/notes/near.md"]
    );
    assert_eq!(
        names(&resolved, ResourceKind::Skills, &world.root),
        ["home/.ctxkit/skills/far/SKILL.md"]
    );
}
