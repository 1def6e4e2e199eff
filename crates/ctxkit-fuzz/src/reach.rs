//! An untrusted project's settings file of any bytes, resolved into resources: whatever its
//! `packages`, `skills`, `prompts`, `themes` and `extensions` name, nothing it adds to what is
//! resolved lies outside the project once symlinks are followed. The project holds symlinks that
//! lead out, a package whose manifest names files outside it, and the user's home and a folder
//! beside the project hold resources of every kind, so an escape finds something. The oracle
//! is the real place of each resolved path, not the settings crate's rule for entries.
//!
//! `@ROOT@` in the input stands for the temporary folder, so absolute paths can be written.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ctxkit_packages::{LocalPackagesOnly, ResolvedResources, resolve_configured};
use ctxkit_settings::{Environment, ResourceKind, SettingsManager};

use crate::tree::{Snapshot, snapshot};

/// The placeholder for the temporary folder's absolute path.
const ROOT_PLACEHOLDER: &str = "@ROOT@";

/// Files of the world, relative to its root: resources outside the project and inside it.
const FILES: &[(&str, &str)] = &[
    ("outside/skills/far/SKILL.md", SKILL),
    ("outside/prompts/far.md", "Far away: $1\n"),
    (
        "outside/themes/far.json",
        r#"{"name": "far", "colors": {}}"#,
    ),
    ("outside/extensions/far.ts", "export default {};\n"),
    ("outside/pkg/package.json", r#"{"name": "far-pkg"}"#),
    ("outside/pkg/skills/pkgfar/SKILL.md", SKILL),
    ("outside/pkg/prompts/pkgfar.md", "Package far\n"),
    ("home/.stuff/skills/homely/SKILL.md", SKILL),
    ("home/.stuff/prompts/homely.md", "Home\n"),
    ("project/skills/near/SKILL.md", SKILL),
    ("project/prompts/near.md", "Near\n"),
    (
        "project/inner/package.json",
        r#"{"name": "inner", "ctxkit": {"skills": ["../../outside/skills", "skills"], "prompts": ["../../outside/prompts/far.md", "escape.md"]}}"#,
    ),
    ("project/inner/skills/innerly/SKILL.md", SKILL),
    ("project/.ctxkit/prompts/near.md", "Near\n"),
    ("project/.git/HEAD", "ref: refs/heads/main\n"),
    ("home/.ctxkit/prompts/mine.md", "Mine\n"),
];

/// Symlinks of the world: (link, target as written).
const LINKS: &[(&str, &str)] = &[
    ("project/link", "../outside"),
    ("project/far-prompt.md", "../outside/prompts/far.md"),
    ("project/inner/escape.md", "../../outside/prompts/far.md"),
    ("project/inner/skills/out", "../../../outside/skills"),
    ("home/outside", "../outside"),
    (
        "project/.ctxkit/prompts/far.md",
        "../../../outside/prompts/far.md",
    ),
    ("project/.ctxkit/skills", "../../outside/skills"),
    (
        "project/.agents/skills/out",
        "../../../outside/pkg/skills/pkgfar",
    ),
];

const SKILL: &str = "---\nname: skill\ndescription: A skill.\n---\nDo it.\n";

/// The world's folder, removed when dropped.
struct World {
    root: PathBuf,
    baseline: BTreeSet<PathBuf>,
    files: Snapshot,
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

thread_local! {
    static WORLD: RefCell<Option<World>> = const { RefCell::new(None) };
}

/// Removes this thread's world (the driver calls it before it exits).
pub fn remove_reach_folder() {
    WORLD.with(|cell| cell.borrow_mut().take());
}

fn build_world() -> World {
    let root = crate::thread_temp_path("reach");
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in FILES {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    for (link, target) in LINKS {
        let link = root.join(link);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, link).unwrap();
    }
    let root = std::fs::canonicalize(&root).unwrap();
    // Without settings only the project's own files and the user's resolve: the project's
    // folders' links out are refused too.
    let baseline = real_places(&resolve(&root));
    for place in &baseline {
        let inside = [root.join("project"), root.join("home/.ctxkit")]
            .iter()
            .any(|folder| place.starts_with(folder));
        assert!(
            inside,
            "the project without settings reached `{}`",
            place.display()
        );
    }
    let files = snapshot(&root);
    World {
        root,
        baseline,
        files,
    }
}

/// Resolves the world's project with its settings file as it is, never trusted by the user (a
/// project that holds nothing back counts as trusted).
fn resolve(root: &Path) -> ResolvedResources {
    let environment = Environment::new(root.join("home"), root.join("project"));
    let settings = SettingsManager::load(&environment);
    resolve_configured(&environment, &settings, &LocalPackagesOnly)
}

/// The real place of every resolved path, listed or loaded.
fn real_places(resolved: &ResolvedResources) -> BTreeSet<PathBuf> {
    ResourceKind::ALL
        .into_iter()
        .flat_map(|kind| resolved.of(kind))
        .map(|resource| std::fs::canonicalize(&resource.path).unwrap_or(resource.path.clone()))
        .collect()
}

/// Writes `data` (with `@ROOT@` replaced) as the project's settings and resolves: every resolved
/// place that the project without settings did not have lies inside the project, and resolving
/// wrote nothing.
pub fn untrusted_resources(data: &[u8]) {
    WORLD.with(|cell| {
        let mut cell = cell.borrow_mut();
        let world = cell.get_or_insert_with(build_world);
        let text = String::from_utf8_lossy(data);
        let root_text = world.root.to_string_lossy();
        let text = text.replace(ROOT_PLACEHOLDER, &root_text);
        let settings_path = world.root.join("project/.ctxkit/settings.json");
        std::fs::write(&settings_path, text).unwrap();
        let resolved = resolve(&world.root);
        let project = world.root.join("project");
        for place in real_places(&resolved) {
            assert!(
                place.starts_with(&project) || world.baseline.contains(&place),
                "an untrusted project's settings reached `{}`",
                place.display()
            );
        }
        std::fs::remove_file(settings_path).unwrap();
        assert_eq!(
            snapshot(&world.root),
            world.files,
            "resolving changed the files"
        );
    });
}
