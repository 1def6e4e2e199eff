//! Resolution, discovery and patterns (local packages; npm/git packages are
//! covered in `packages.rs`).

use std::path::{Path, PathBuf};

use ctxkit_packages::{
    LocalPackagesOnly, ResolvedResource, SourceOrigin, SourceScope, resolve_configured,
    resolve_package_sources,
};
use ctxkit_settings::{Environment, ResourceKind, SettingsManager};

use crate::common::{World, write};

fn resolve(world: &World) -> ctxkit_packages::ResolvedResources {
    resolve_env(&world.env)
}

fn resolve_env(env: &Environment) -> ctxkit_packages::ResolvedResources {
    let settings = SettingsManager::load(env);
    resolve_configured(env, &settings, &LocalPackagesOnly)
}

/// As [`resolve`] in a project the user trusts: its settings may name places outside it (an
/// untrusted project's wait for `ctxkit trust`, `docs/security.md`).
fn resolve_trusted(world: &World) -> ctxkit_packages::ResolvedResources {
    let mut settings = SettingsManager::load(&world.env);
    settings.set_project_trusted(true);
    resolve_configured(&world.env, &settings, &LocalPackagesOnly)
}

/// Paths relative to `root`, with `!` appended for disabled entries.
fn listed(resources: &[ResolvedResource], root: &Path) -> Vec<String> {
    resources
        .iter()
        .map(|resource| {
            let path = resource.path.strip_prefix(root).unwrap_or(&resource.path);
            let mark = if resource.enabled { "" } else { "!" };
            format!("{}{mark}", path.display())
        })
        .collect()
}

fn settings(path: PathBuf, json: &str) {
    write(path, json);
}

/// With no settings and empty directories no extension, prompt or theme resolves, and any skill
/// found is an auto-discovered top-level one.
#[test]
fn an_empty_configuration_resolves_no_resources() {
    let world = World::new();
    let resolved = resolve(&world);
    assert!(resolved.extensions.is_empty());
    assert!(resolved.prompts.is_empty());
    assert!(resolved.themes.is_empty());
    for skill in &resolved.skills {
        assert_eq!(skill.metadata.source, "auto");
        assert_eq!(skill.metadata.origin, SourceOrigin::TopLevel);
    }
}

/// Paths in a settings file resolve against that scope's directory (the agent directory for the
/// user, the project's ctxkit directory for the project).
#[test]
fn settings_paths_resolve_against_their_scope_directory() {
    let world = World::new();
    write(world.agent().join("extensions/my-extension.ts"), "");
    write(world.project().join("extensions/project-ext.ts"), "");
    settings(
        world.agent().join("settings.json"),
        r#"{"extensions":["extensions/my-extension.ts"]}"#,
    );
    settings(
        world.project().join("settings.json"),
        r#"{"extensions":["extensions/project-ext.ts"]}"#,
    );
    let resolved = resolve(&world);
    let listed = listed(&resolved.extensions, &world.root);
    assert_eq!(
        listed,
        vec![
            "work/proj/.ctxkit/extensions/project-ext.ts",
            "home/.ctxkit/extensions/my-extension.ts"
        ]
    );
    assert_eq!(resolved.extensions[0].metadata.source, "local");
    assert_eq!(resolved.extensions[0].metadata.scope, SourceScope::Project);
}

/// Resolving takes a resource array from each scope, though the merged settings view shows only
/// the project's.
#[test]
fn resolving_lists_the_arrays_of_both_scopes() {
    let world = World::new();
    write(world.agent().join("a.ts"), "");
    write(world.project().join("b.ts"), "");
    settings(
        world.agent().join("settings.json"),
        r#"{"extensions":["a.ts"]}"#,
    );
    settings(
        world.project().join("settings.json"),
        r#"{"extensions":["b.ts"]}"#,
    );
    let listed = listed(&resolve(&world).extensions, &world.root);
    assert_eq!(listed, vec!["work/proj/.ctxkit/b.ts", "home/.ctxkit/a.ts"]);
}

/// QA r105 (6): a path in `skills`, `prompts` or `themes` that names nothing loaded nothing without
/// a word (as in Pi). Each such entry is now a warning naming the setting, the entry and the path;
/// an entry that exists and a pattern say nothing.
#[test]
fn a_settings_entry_naming_nothing_is_a_warning_naming_the_setting() {
    let world = World::new();
    write(world.agent().join("prompts/here.md"), "here");
    settings(
        world.agent().join("settings.json"),
        r#"{"skills":["/nonexistent/skills"],"prompts":["prompts/here.md","prompts/gone.md","!x*"],
            "themes":["~/themes-typo"]}"#,
    );
    settings(
        world.project().join("settings.json"),
        r#"{"prompts":["missing-prompts"]}"#,
    );
    let resolved = resolve_trusted(&world);
    let root = world.root.display().to_string();
    let messages: Vec<String> = resolved
        .diagnostics
        .iter()
        .map(|diagnostic| diagnostic.message().replace(&root, "<root>"))
        .collect();
    assert_eq!(
        messages,
        vec![
            "The `skills` entry `/nonexistent/skills` of your settings names nothing: \
             `/nonexistent/skills` does not exist; it loads nothing",
            "The `prompts` entry `missing-prompts` of the project's settings names nothing: \
             `<root>/work/proj/.ctxkit/missing-prompts` does not exist; it loads nothing",
            "The `prompts` entry `prompts/gone.md` of your settings names nothing: \
             `<root>/home/.ctxkit/prompts/gone.md` does not exist; it loads nothing",
            "The `themes` entry `~/themes-typo` of your settings names nothing: \
             `<root>/home/themes-typo` does not exist; it loads nothing",
        ]
    );
    assert_eq!(
        listed(&resolved.prompts, &world.root),
        vec!["home/.ctxkit/prompts/here.md"]
    );
}

/// The same local package configured in both scopes contributes its resources once, as the
/// project's.
#[test]
fn a_local_package_in_both_scopes_is_listed_once_as_project() {
    let world = World::new();
    let package = world.root.join("pkgs/shared");
    write(package.join("extensions/x.ts"), "");
    write(world.root.join("pkgs/other/extensions/y.ts"), "");
    let shared = package.display().to_string();
    settings(
        world.agent().join("settings.json"),
        &format!(
            r#"{{"packages":["{shared}", "{}"]}}"#,
            world.root.join("pkgs/other").display()
        ),
    );
    settings(
        world.project().join("settings.json"),
        &format!(r#"{{"packages":["{shared}/"]}}"#),
    );
    let resolved = resolve_trusted(&world);
    assert_eq!(
        listed(&resolved.extensions, &world.root),
        vec!["pkgs/shared/extensions/x.ts", "pkgs/other/extensions/y.ts"]
    );
    assert_eq!(resolved.extensions[0].metadata.scope, SourceScope::Project);
    assert_eq!(resolved.extensions[1].metadata.scope, SourceScope::User);
}

/// Resolved resources are ordered project settings, project directory, user settings, user
/// directory, then packages.
#[test]
fn resources_are_ranked_project_then_user_then_packages() {
    let world = World::new();
    let cwd = world.cwd();
    write(cwd.join("extra/p.md"), "");
    write(world.project().join("prompts/a.md"), "");
    write(world.agent().join("extra/q.md"), "");
    write(world.agent().join("prompts/a.md"), "");
    write(world.agent().join("prompts/sub/nested.md"), "");
    write(world.agent().join("prompts/.hidden.md"), "");
    let pkg_a = world.root.join("pkgA");
    let pkg_b = world.root.join("pkgB");
    write(pkg_a.join("prompts/a.md"), "");
    write(pkg_b.join("prompts/a.md"), "");
    write(pkg_b.join("prompts/b.md"), "");
    settings(
        world.project().join("settings.json"),
        &format!(
            r#"{{"prompts":["../extra/p.md"],"packages":["{}","{}"]}}"#,
            pkg_a.display(),
            pkg_b.display()
        ),
    );
    settings(
        world.agent().join("settings.json"),
        &format!(
            r#"{{"prompts":["extra/q.md"],"packages":["{}"]}}"#,
            pkg_b.display()
        ),
    );
    let resolved = resolve_trusted(&world);
    assert_eq!(
        listed(&resolved.prompts, &world.root),
        vec![
            "work/proj/extra/p.md",
            "work/proj/.ctxkit/prompts/a.md",
            "home/.ctxkit/extra/q.md",
            "home/.ctxkit/prompts/a.md",
            "pkgA/prompts/a.md",
            "pkgB/prompts/a.md",
            "pkgB/prompts/b.md",
        ]
    );
    assert_eq!(resolved.prompts[5].metadata.scope, SourceScope::Project);
}

/// An extensions directory yields its `.ts`/`.js` files and, for each subdirectory, its index
/// file only.
#[test]
fn extension_directories_yield_files_and_index_files() {
    let world = World::new();
    let dir = world.agent().join("extensions");
    for file in [
        "e1.ts",
        "e2.mjs",
        "d1/index.ts",
        "d1/helper.ts",
        "d2/index.js",
        "d3/foo.ts",
    ] {
        write(dir.join(file), "");
    }
    let listed = listed(&resolve(&world).extensions, &dir);
    assert_eq!(listed, vec!["d1/index.ts", "d2/index.js", "e1.ts"]);
}

/// An extension subdirectory uses `index.ts` before `index.js`, or the extensions its own manifest
/// names.
#[test]
fn extension_subdirectories_prefer_index_ts_then_the_manifest() {
    let world = World::new();
    let dir = world.agent().join("extensions");
    write(dir.join("both/index.ts"), "");
    write(dir.join("both/index.js"), "");
    write(dir.join("manifest/index.ts"), "");
    write(dir.join("manifest/custom.ts"), "");
    write(
        dir.join("manifest/package.json"),
        r#"{"pi":{"extensions":["./custom.ts"]}}"#,
    );
    write(dir.join("partial/exists.ts"), "");
    write(
        dir.join("partial/package.json"),
        r#"{"ctxkit":{"extensions":["./exists.ts","./missing.ts"]}}"#,
    );
    write(dir.join("nopi/index.ts"), "");
    write(dir.join("nopi/package.json"), r#"{"name":"x"}"#);
    write(dir.join("container/nested/index.ts"), "");
    let listed = listed(&resolve(&world).extensions, &dir);
    assert_eq!(
        listed,
        vec![
            "both/index.ts",
            "manifest/custom.ts",
            "nopi/index.ts",
            "partial/exists.ts"
        ]
    );
}

fn convention_package(root: &Path) {
    for file in [
        "extensions/b.ts",
        "ext/a.ts",
        "skills/s1/SKILL.md",
        "skills/top.md",
        "prompts/p.md",
        "prompts/deep/q.md",
        "themes/t.json",
    ] {
        write(root.join(file), "");
    }
}

fn package_world(entry: &str) -> (World, PathBuf) {
    let world = World::new();
    let package = world.root.join("pkg");
    convention_package(&package);
    let entry = entry.replace("PKG", &package.display().to_string());
    settings(
        world.agent().join("settings.json"),
        &format!(r#"{{"packages":[{entry}]}}"#),
    );
    (world, package)
}

fn all_kinds(world: &World, package: &Path) -> Vec<Vec<String>> {
    let resolved = resolve(world);
    ResourceKind::ALL
        .iter()
        .map(|kind| listed(resolved.of(*kind), package))
        .collect()
}

/// A package without a manifest contributes what its conventional directories hold, nothing else.
#[test]
fn packages_without_a_manifest_use_the_convention_directories() {
    let (world, package) = package_world(r#""PKG""#);
    assert_eq!(
        all_kinds(&world, &package),
        vec![
            vec!["extensions/b.ts"],
            vec!["skills/s1/SKILL.md", "skills/top.md"],
            vec!["prompts/deep/q.md", "prompts/p.md"],
            vec!["themes/t.json"]
        ]
    );
}

/// A package manifest's entries are the package's sources; a settings filter object narrows them
/// but adds nothing outside them.
#[test]
fn a_manifest_names_the_sources_and_a_filter_object_narrows_them() {
    let (world, package) = package_world(r#""PKG""#);
    write(
        package.join("package.json"),
        r#"{"pi":{"extensions":["./ext"]}}"#,
    );
    let empty: Vec<String> = Vec::new();
    assert_eq!(
        all_kinds(&world, &package),
        vec![
            vec!["ext/a.ts".to_owned()],
            empty.clone(),
            empty.clone(),
            empty.clone()
        ]
    );
    write(package.join("package.json"), r#"{"pi":{}}"#);
    assert_eq!(
        all_kinds(&world, &package),
        vec![empty.clone(), empty.clone(), empty.clone(), empty]
    );
    write(
        package.join("package.json"),
        r#"{"pi":{"extensions":["./ext"]}}"#,
    );
    settings(
        world.agent().join("settings.json"),
        &format!(
            r#"{{"packages":[{{"source":"{}","extensions":[]}}]}}"#,
            package.display()
        ),
    );
    assert_eq!(
        all_kinds(&world, &package),
        vec![
            vec!["ext/a.ts!"],
            vec!["skills/s1/SKILL.md", "skills/top.md"],
            vec!["prompts/deep/q.md", "prompts/p.md"],
            vec!["themes/t.json"]
        ]
    );
}

/// Manifest entries may point into the package's dependencies, and `!` entries exclude files.
#[test]
fn manifest_sources_may_reach_into_dependencies_and_exclude_files() {
    let world = World::new();
    let package = world.root.join("pkg");
    write(package.join("extensions/local.ts"), "");
    write(package.join("extensions/skip.ts"), "");
    write(package.join("node_modules/dep/extensions/remote.ts"), "");
    write(package.join("skills/good-skill/SKILL.md"), "");
    write(package.join("skills/bad-skill/SKILL.md"), "");
    write(
        package.join("package.json"),
        r#"{"pi":{"extensions":["extensions","node_modules/dep/extensions","!**/skip.ts"],"skills":["skills","!**/bad-skill"]}}"#,
    );
    settings(
        world.agent().join("settings.json"),
        &format!(r#"{{"packages":["{}"]}}"#, package.display()),
    );
    let resolved = resolve(&world);
    assert_eq!(
        listed(&resolved.extensions, &package),
        vec![
            "extensions/local.ts",
            "node_modules/dep/extensions/remote.ts"
        ]
    );
    assert_eq!(
        listed(&resolved.skills, &package),
        vec!["skills/good-skill/SKILL.md"]
    );
}

/// Globs in a manifest select files, with `!` globs taking some out.
#[test]
fn manifest_globs_select_source_files() {
    let world = World::new();
    let package = world.root.join("pkg");
    for file in ["lib/x.md", "lib/y.md", "lib/.z.md"] {
        write(package.join(file), "");
    }
    write(
        package.join("package.json"),
        r#"{"pi":{"prompts":["lib/*.md","!lib/y.md"]}}"#,
    );
    settings(
        world.agent().join("settings.json"),
        &format!(r#"{{"packages":["{}"]}}"#, package.display()),
    );
    assert_eq!(listed(&resolve(&world).prompts, &package), vec!["lib/x.md"]);
}

fn filtered(
    package_files: &[&str],
    manifest: Option<&str>,
    filter: &str,
) -> (World, PathBuf, ctxkit_packages::ResolvedResources) {
    let world = World::new();
    let package = world.root.join("pkg");
    for file in package_files {
        write(package.join(file), "");
    }
    if let Some(manifest) = manifest {
        write(package.join("package.json"), manifest);
    }
    settings(
        world.agent().join("settings.json"),
        &format!(
            r#"{{"packages":[{{"source":"{}",{filter}}}]}}"#,
            package.display()
        ),
    );
    let resolved = resolve(&world);
    (world, package, resolved)
}

/// A settings filter applies after the manifest's own selection, never widening it.
#[test]
fn settings_filters_narrow_what_the_manifest_selects() {
    let (_world, package, resolved) = filtered(
        &[
            "extensions/foo.ts",
            "extensions/bar.ts",
            "extensions/baz.ts",
        ],
        Some(r#"{"pi":{"extensions":["extensions","!**/baz.ts"]}}"#),
        r#""extensions":["!**/bar.ts"]"#,
    );
    assert_eq!(
        listed(&resolved.extensions, &package),
        vec!["extensions/bar.ts!", "extensions/foo.ts"]
    );
}

/// In a filter, globs and exact paths enable files and `!` entries disable them, the last match
/// winning.
#[test]
fn filter_globs_and_exact_paths_enable_and_disable_files() {
    let files = [
        "extensions/alpha.ts",
        "extensions/beta.ts",
        "extensions/gamma.ts",
    ];
    let (_w, package, resolved) = filtered(
        &files,
        None,
        r#""extensions":["**/alpha.ts","**/beta.ts","!**/beta.ts"]"#,
    );
    assert_eq!(
        listed(&resolved.extensions, &package),
        vec![
            "extensions/alpha.ts",
            "extensions/beta.ts!",
            "extensions/gamma.ts!"
        ]
    );
    let (_w, package, resolved) = filtered(
        &["extensions/one.ts", "extensions/two.ts"],
        None,
        r#""extensions":["extensions/one.ts"]"#,
    );
    assert_eq!(
        listed(&resolved.extensions, &package),
        vec!["extensions/one.ts", "extensions/two.ts!"]
    );
    let (_w, package, resolved) = filtered(
        &["themes/nice.json", "themes/ugly.json"],
        None,
        r#""themes":["!ugly.json"]"#,
    );
    assert_eq!(
        listed(&resolved.themes, &package),
        vec!["themes/nice.json", "themes/ugly.json!"]
    );
}

/// `+path` entries bring back skills that a `!**/*` entry excluded.
#[test]
fn force_include_entries_bring_back_skills_after_a_global_exclude() {
    let files = [
        "skills/skill-a/SKILL.md",
        "skills/skill-b/SKILL.md",
        "skills/skill-c/SKILL.md",
    ];
    let (_w, package, resolved) = filtered(
        &files,
        None,
        r#""skills":["!**/*","+skills/skill-a","+skills/skill-c"]"#,
    );
    assert_eq!(
        listed(&resolved.skills, &package),
        vec![
            "skills/skill-a/SKILL.md",
            "skills/skill-b/SKILL.md!",
            "skills/skill-c/SKILL.md"
        ]
    );
    let (_w, package, resolved) = filtered(
        &["skills/s1/SKILL.md", "skills/top.md"],
        None,
        r#""skills":["s1"]"#,
    );
    assert_eq!(
        listed(&resolved.skills, &package),
        vec!["skills/s1/SKILL.md", "skills/top.md!"]
    );
}

fn top_level(files: &[&str], entries: &str) -> Vec<String> {
    let world = World::new();
    for file in files {
        write(world.root.join("lib").join(file), "");
    }
    settings(
        world.agent().join("settings.json"),
        &format!(r#"{{"extensions":{entries}}}"#),
    );
    // Top-level entries are relative to the agent dir; point them at <root>/lib via `../../lib`.
    let resolved = resolve(&world);
    listed(&resolved.extensions, &world.root.join("lib"))
}

/// In a top-level settings array, `+path` re-enables and `-path` disables one exact file after the
/// globs.
#[test]
fn top_level_force_include_and_exclude_patterns() {
    let files = [
        "extensions/keep.ts",
        "extensions/excluded.ts",
        "extensions/force-back.ts",
    ];
    assert_eq!(
        top_level(
            &files,
            r#"["../../lib/extensions","!../../lib/extensions/*.ts","+../../lib/extensions/force-back.ts"]"#
        ),
        vec![
            "extensions/excluded.ts!",
            "extensions/force-back.ts",
            "extensions/keep.ts!"
        ]
    );
    let files = ["extensions/a.ts", "extensions/b.ts"];
    assert_eq!(
        top_level(
            &files,
            r#"["../../lib/extensions","!../../lib/extensions/b.ts","+../../lib/extensions/b.ts"]"#
        ),
        vec!["extensions/a.ts", "extensions/b.ts"]
    );
    let files = ["extensions/alpha.ts", "extensions/beta.ts"];
    assert_eq!(
        top_level(
            &files,
            r#"["../../lib/extensions","+../../lib/extensions/alpha.ts","-../../lib/extensions/alpha.ts"]"#
        ),
        vec!["extensions/alpha.ts!", "extensions/beta.ts"]
    );
}

/// `!`, `+` and `-` entries in settings also apply to resources found in the scope's directories.
#[test]
fn settings_overrides_apply_to_auto_discovered_resources() {
    let cases: &[(&str, &str, bool)] = &[
        (r#"{"prompts":["!prompts/auto.md"]}"#, "prompts", false),
        (r#"{"skills":["-skills/my-skill"]}"#, "skills", false),
        (r#"{"skills":["-my-skill"]}"#, "skills", true),
        (r#"{"skills":["!my-skill"]}"#, "skills", false),
        (r#"{"prompts":["prompts/*.md"]}"#, "prompts", true),
    ];
    for (json, kind, expected) in cases {
        let world = World::new();
        write(world.agent().join("prompts/auto.md"), "");
        write(world.agent().join("skills/my-skill/SKILL.md"), "");
        settings(world.agent().join("settings.json"), json);
        let resolved = resolve(&world);
        let list = if *kind == "prompts" {
            &resolved.prompts
        } else {
            &resolved.skills
        };
        assert_eq!(list.len(), 1, "{json}");
        assert_eq!(list[0].enabled, *expected, "{json}");
    }
}

/// `.agents/skills` directories are searched from the working directory up to the repository root
/// and no further.
#[test]
fn agents_skill_directories_are_searched_up_to_the_git_root() {
    let world = World::new();
    let repo = world.root.join("R");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(world.root.join(".agents/skills/above-repo/SKILL.md"), "");
    write(repo.join(".agents/skills/repo-root/SKILL.md"), "");
    write(repo.join("packages/.agents/skills/nested/SKILL.md"), "");
    let cwd = repo.join("packages/feature");
    std::fs::create_dir_all(&cwd).unwrap();
    let env = Environment::new(&world.env.home, &cwd);
    let first = listed(&resolve_env(&env).skills, &world.root);
    assert_eq!(
        first,
        vec![
            "R/packages/.agents/skills/nested/SKILL.md",
            "R/.agents/skills/repo-root/SKILL.md"
        ]
    );

    let outside = world.root.join("N");
    write(outside.join(".agents/skills/root/SKILL.md"), "");
    write(outside.join("a/.agents/skills/middle/SKILL.md"), "");
    let cwd = outside.join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    let env = Environment::new(&world.env.home, &cwd);
    let second = listed(&resolve_env(&env).skills, &world.root);
    assert!(
        second.contains(&"N/a/.agents/skills/middle/SKILL.md".to_owned()),
        "{second:?}"
    );
    assert!(
        second.contains(&"N/.agents/skills/root/SKILL.md".to_owned()),
        "{second:?}"
    );
}

/// Skills in `~/.agents/skills` are user resources, listed once even when the search from the
/// working directory passes the home directory.
#[test]
fn home_agents_skills_are_user_scope_and_listed_once() {
    let world = World::new();
    let home = world.env.home.clone();
    write(home.join(".agents/skills/home-skill/SKILL.md"), "");
    let cwd = home.join("scratch/nested");
    std::fs::create_dir_all(&cwd).unwrap();
    let env = Environment::new(&home, &cwd);
    let resolved = resolve_env(&env);
    assert_eq!(resolved.skills.len(), 1, "{:?}", resolved.skills);
    assert_eq!(resolved.skills[0].metadata.scope, SourceScope::User);
    assert_eq!(resolved.skills[0].metadata.source, "auto");
}

/// A markdown file directly in the agent's `skills` directory is a skill; in `.agents/skills` only
/// directories with a `SKILL.md` are.
#[test]
fn root_markdown_files_are_skills_only_in_the_agent_skills_directory() {
    let world = World::new();
    write(world.agent().join("skills/root.md"), "");
    write(world.cwd().join(".agents/skills/root2.md"), "");
    write(world.agent().join("skills/s1/SKILL.md"), "");
    write(world.agent().join("skills/s1/deep/SKILL.md"), "");
    write(
        world
            .agent()
            .join("skills/pi-skills/browser-tools/SKILL.md"),
        "",
    );
    write(
        world
            .agent()
            .join("skills/pi-skills/browser-tools/EFFICIENCY.md"),
        "",
    );
    let listed = listed(&resolve(&world).skills, &world.agent());
    assert_eq!(
        listed,
        vec![
            "skills/pi-skills/browser-tools/SKILL.md",
            "skills/root.md",
            "skills/s1/SKILL.md"
        ]
    );
}

/// `.gitignore` rules in a skills directory hide the skills they match.
#[test]
fn gitignore_files_in_skill_directories_hide_skills() {
    let world = World::new();
    write(
        world.agent().join("skills/.gitignore"),
        "venv\n__pycache__\n",
    );
    write(world.agent().join("skills/venv/bad-skill/SKILL.md"), "");
    write(world.agent().join("skills/good/SKILL.md"), "");
    write(world.cwd().join(".gitignore"), ".ctxkit\n");
    write(world.project().join("skills/auto-skill/SKILL.md"), "");
    let listed = listed(&resolve(&world).skills, &world.root);
    assert_eq!(
        listed,
        vec![
            "work/proj/.ctxkit/skills/auto-skill/SKILL.md",
            "home/.ctxkit/skills/good/SKILL.md"
        ]
    );
}

#[cfg(unix)]
/// A skills directory that is a symlink to another scanned directory yields each skill once.
#[test]
fn a_symlinked_skills_directory_resolves_each_skill_once() {
    let world = World::new();
    let home = world.env.home.clone();
    write(home.join(".agents/skills/x/SKILL.md"), "");
    std::fs::create_dir_all(world.agent()).unwrap();
    std::os::unix::fs::symlink(home.join(".agents/skills"), world.agent().join("skills")).unwrap();
    let resolved = resolve(&world);
    assert_eq!(
        listed(&resolved.skills, &world.root),
        vec!["home/.ctxkit/skills/x/SKILL.md"]
    );
    assert_eq!(resolved.skills[0].metadata.scope, SourceScope::User);
}

#[test]
fn cli_sources_resolve_without_dedupe() {
    let world = World::new();
    write(world.cwd().join("ext.ts"), "");
    let resolved = resolve_package_sources(
        &world.env,
        &["./ext.ts".to_owned()],
        SourceScope::Temporary,
        &LocalPackagesOnly,
    );
    assert_eq!(
        listed(&resolved.extensions, &world.root),
        vec!["work/proj/ext.ts"]
    );
    assert_eq!(
        resolved.extensions[0].metadata.scope,
        SourceScope::Temporary
    );
}

/// QA: a package's manifest made a skill outside the package load into every system prompt, and
/// ctxkit's own prompts and `settings.json` load as its prompts, theme and extension (Pi 1.6.0
/// resolves manifest entries anywhere). Now an entry outside the package, and a file a symlink
/// leads out of the package to, are refused with a warning; the rest of the package loads.
#[test]
fn a_package_loads_nothing_from_outside_itself() {
    let world = World::new();
    let agent = world.agent();
    write(agent.join("settings.json"), "{}");
    write(agent.join("sessions/s/notes.md"), "session notes");
    write(
        world.root.join("outside/skills/evil/SKILL.md"),
        "---\nname: evil\ndescription: outside\n---\n",
    );
    let package = world.cwd().join("pkg");
    write(
        package.join("skills/own/SKILL.md"),
        "---\nname: own\ndescription: d\n---\n",
    );
    let home_file = agent.join("settings.json").display().to_string();
    write(
        package.join("package.json"),
        &serde_json::json!({"pi": {
            "skills": ["../../../outside/skills", "skills"],
            "prompts": [agent.join("sessions/s").display().to_string()],
            "themes": [home_file],
            "extensions": [home_file],
        }})
        .to_string(),
    );
    let linked = world.cwd().join("linked-pkg");
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(agent.join("sessions/s"), linked.join("prompts")).unwrap();
    settings(
        world.project().join("settings.json"),
        r#"{"packages":["../pkg","../linked-pkg"]}"#,
    );
    let resolved = resolve(&world);
    assert_eq!(
        listed(&resolved.skills, &world.root),
        ["work/proj/pkg/skills/own/SKILL.md"]
    );
    assert!(resolved.prompts.is_empty(), "{:?}", resolved.prompts);
    assert!(resolved.themes.is_empty(), "{:?}", resolved.themes);
    assert!(resolved.extensions.is_empty(), "{:?}", resolved.extensions);
    let messages: Vec<String> = resolved
        .diagnostics
        .iter()
        .map(|diagnostic| {
            diagnostic
                .message()
                .replace(&world.root.display().to_string(), "R")
        })
        .collect();
    for expected in [
        "The manifest of the package `R/work/proj/pkg` names `../../../outside/skills` under `skills`, which lies outside the package; it is not loaded",
        "The manifest of the package `R/work/proj/pkg` names `R/home/.ctxkit/settings.json` under `themes`, which lies outside the package; it is not loaded",
        // The linked folder is not walked into (what it holds is never read), and is named.
        "`R/work/proj/linked-pkg/prompts` leads out of the package `R/work/proj/linked-pkg` (to `R/home/.ctxkit/sessions/s`); it is not loaded",
    ] {
        assert!(
            messages.iter().any(|message| message == expected),
            "{messages:#?}"
        );
    }
}

/// Even a trusted project, whose settings may name places outside it, never reads ctxkit's home:
/// not by an absolute path in its settings, not through a folder it symlinks there. The user's
/// own settings still may.
#[test]
fn a_projects_resources_never_read_ctxkits_home() {
    let world = World::new();
    let agent = world.agent();
    write(agent.join("settings.json"), r#"{"prompts":["sessions/s"]}"#);
    write(agent.join("sessions/s/notes.md"), "session notes");
    let home_file = agent.join("settings.json").display().to_string();
    settings(
        world.project().join("settings.json"),
        &format!(r#"{{"themes":["{home_file}"],"extensions":["{home_file}"]}}"#),
    );
    std::os::unix::fs::symlink(agent.join("sessions/s"), world.project().join("prompts")).unwrap();
    let resolved = resolve_trusted(&world);
    assert!(resolved.themes.is_empty(), "{:?}", resolved.themes);
    assert!(resolved.extensions.is_empty(), "{:?}", resolved.extensions);
    assert_eq!(
        listed(&resolved.prompts, &world.root),
        ["home/.ctxkit/sessions/s/notes.md"]
    );
    assert_eq!(resolved.prompts[0].metadata.scope, SourceScope::User);
    let refused = resolved
        .diagnostics
        .iter()
        .filter(|diagnostic| {
            diagnostic
                .message()
                .contains("which a project's resources never read; it is not loaded")
        })
        .count();
    assert_eq!(refused, 2, "{:#?}", resolved.diagnostics);
    // The linked `.ctxkit/prompts` folder is refused first for leading out of the project.
    let linked = format!(
        "leads out of the project folder `{}`",
        world.cwd().display()
    );
    assert!(
        resolved
            .diagnostics
            .iter()
            .any(|diagnostic| diagnostic.message().contains(&linked)),
        "{:#?}",
        resolved.diagnostics
    );
}
