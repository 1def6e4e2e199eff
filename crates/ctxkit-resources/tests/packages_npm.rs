//! npm packages and settings bookkeeping: exact argv
//! through a scripted runner, and real `npm` installing tarballs packed in the test (offline,
//! cache and global prefix in the temp world).

use std::path::Path;

use ctxkit_packages::{
    CommandLine, PackageError, PackageManager, SourceOrigin, SourceScope, UpdateOutcome,
    resolve_configured, resolve_package_sources,
};
use ctxkit_settings::{ResourceKind, SettingsManager, SettingsScope};

use crate::common::packages::{
    Progress, Recorder, make_tarball, npm_global_prefix, real_manager, skill, stdout,
};
use crate::common::{World, json_file, read, write};

/// A scripted npm: `root -g` answers `<root>/global/node_modules`, `view <name>` answers from
/// `latest`, `install` makes each package's folder (as npm would), everything else succeeds
/// silently.
fn scripted(world: &World, latest: &'static [(&'static str, &'static str)]) -> Recorder {
    let global = world.root.join("global/node_modules");
    Recorder::scripted(move |command: &CommandLine| {
        let args: Vec<&str> = command.args.iter().map(String::as_str).collect();
        if let Some(index) = args.iter().position(|arg| *arg == "install") {
            make_installed_folders(&args[index + 1..], &global);
            return stdout("");
        }
        if args.ends_with(&["root", "-g"]) {
            return stdout(&format!("{}\n", global.display()));
        }
        if args.ends_with(&["pm", "bin", "-g"]) {
            return stdout("/opt/bun/bin\n");
        }
        if let Some(index) = args.iter().position(|arg| *arg == "view") {
            let name = args[index + 1];
            return match latest.iter().find(|(known, _)| *known == name) {
                Some((_, version)) => stdout(&format!("\"{version}\"\n")),
                None => Err(PackageError::CommandFailed {
                    command: command.display(),
                    code: 1,
                    stderr: "E404".to_owned(),
                }),
            };
        }
        stdout("")
    })
}

/// The folders `npm install <specs> [-g | --prefix <root>]` leaves: `<global>/<name>` or
/// `<root>/node_modules/<name>` for each spec.
fn make_installed_folders(args: &[&str], global: &Path) {
    let prefix = args
        .iter()
        .position(|arg| *arg == "--prefix")
        .and_then(|index| args.get(index + 1));
    let modules = match prefix {
        Some(root) => Path::new(root).join("node_modules"),
        None => global.to_path_buf(),
    };
    let specs = args
        .iter()
        .take_while(|arg| **arg != "--prefix")
        .filter(|arg| !arg.starts_with('-'));
    for spec in specs {
        let (scope, rest) = match spec.strip_prefix('@') {
            Some(rest) => ("@", rest),
            None => ("", *spec),
        };
        let name = rest.split('@').next().unwrap_or(rest);
        std::fs::create_dir_all(modules.join(format!("{scope}{name}"))).unwrap();
    }
}

fn scripted_manager(world: &World, recorder: &Recorder) -> PackageManager {
    let settings = SettingsManager::load(&world.env);
    PackageManager::new(world.env.clone(), &settings).with_runner(recorder.clone())
}

fn installed(directory: &Path, version: &str) {
    write(
        directory.join("package.json"),
        &format!(r#"{{"name":"x","version":"{version}"}}"#),
    );
}

/// Installing an `npm:` source in the user scope runs `npm install <spec> --prefix <ctxkit
/// home>/npm` (Pi 1.6's own npm folder, not npm's global prefix, which a normal user cannot write
/// to), and records the source in the user's settings.
#[test]
fn installing_a_user_npm_package_runs_npm_in_ctxkits_home_and_records_it() {
    let world = World::new();
    let recorder = scripted(&world, &[]);
    let progress = Progress::default();
    let manager = scripted_manager(&world, &recorder).with_reporter(progress.clone());
    assert!(
        manager
            .install_and_persist("npm:@s/p@1.0.0", SettingsScope::Global)
            .unwrap()
    );
    assert_eq!(
        recorder.lines(&world),
        vec!["npm install @s/p@1.0.0 --prefix [ROOT]/home/.ctxkit/npm"]
    );
    let root = world.agent().join("npm");
    assert_eq!(
        read(root.join("package.json")),
        "{\n  \"name\": \"ctxkit-extensions\",\n  \"private\": true\n}"
    );
    assert_eq!(read(root.join(".gitignore")), "*\n!.gitignore\n");
    assert_eq!(
        json_file(world.agent().join("settings.json"))["packages"],
        serde_json::json!(["npm:@s/p@1.0.0"])
    );
    assert_eq!(
        progress.lines(),
        vec![
            "start install Installing npm:@s/p@1.0.0...",
            "complete install npm:@s/p@1.0.0"
        ]
    );
}

/// The `npmCommand` setting's argument vector is put before every npm call.
#[test]
fn the_npm_command_setting_prefixes_every_npm_call() {
    let world = World::new();
    write(
        world.agent().join("settings.json"),
        r#"{"npmCommand":["mise","exec","node@20","--","npm"]}"#,
    );
    let recorder = scripted(&world, &[]);
    let manager = scripted_manager(&world, &recorder);
    manager
        .install("npm:@scope/pkg", SourceScope::User)
        .unwrap();
    assert_eq!(
        recorder.lines(&world),
        vec!["mise exec node@20 -- npm install @scope/pkg --prefix [ROOT]/home/.ctxkit/npm"]
    );
    write(
        world.agent().join("settings.json"),
        r#"{"npmCommand":[""]}"#,
    );
    let manager = scripted_manager(&world, &recorder);
    let error = manager.install("npm:x", SourceScope::User).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Invalid npmCommand: first array entry must be a non-empty command"
    );
}

/// Installing an npm package in the project first creates a private npm project for it under the
/// project's ctxkit directory.
#[test]
fn a_project_npm_install_creates_a_private_npm_project() {
    let world = World::new();
    let recorder = scripted(&world, &[]);
    let manager = scripted_manager(&world, &recorder);
    manager
        .install_and_persist("npm:q", SettingsScope::Project)
        .unwrap();
    assert_eq!(
        recorder.lines(&world),
        vec!["npm install q --prefix [ROOT]/work/proj/.ctxkit/npm"]
    );
    let root = world.project().join("npm");
    assert_eq!(
        read(root.join("package.json")),
        "{\n  \"name\": \"ctxkit-extensions\",\n  \"private\": true\n}"
    );
    assert_eq!(read(root.join(".gitignore")), "*\n!.gitignore\n");
    assert_eq!(
        json_file(world.project().join("settings.json"))["packages"],
        serde_json::json!(["npm:q"])
    );
}

/// A user package not in ctxkit's npm folder is looked for where the old layout (`npm install
/// -g`) put it: `npm root -g` runs once and is cached; a different `npmCommand` looks it up again.
#[test]
fn the_global_npm_root_is_looked_up_once_per_npm_command() {
    let world = World::new();
    let recorder = scripted(&world, &[]);
    let mut manager = scripted_manager(&world, &recorder);
    installed(&world.root.join("global/node_modules/x"), "1.0.0");
    assert!(manager.installed_path("npm:x", SourceScope::User).is_some());
    assert!(manager.installed_path("npm:y", SourceScope::User).is_none());
    assert_eq!(recorder.lines(&world), vec!["npm root -g"]);
    manager.set_npm_command(Some(vec![
        "mise".into(),
        "exec".into(),
        "--".into(),
        "npm".into(),
    ]));
    manager.installed_path("npm:x", SourceScope::User);
    manager.set_npm_command(Some(vec!["bun".into()]));
    let path = manager.installed_path("npm:x", SourceScope::User);
    assert_eq!(
        path, None,
        "bun's root is /opt/bun/install/global/node_modules"
    );
    assert_eq!(
        recorder.lines(&world),
        vec!["npm root -g", "mise exec -- npm root -g", "bun pm bin -g"]
    );
}

/// QA r105 (5): `ctxkit remove -l` could not remove some entries `ctxkit list` shows: a source
/// ctxkit refuses (`npm:../../v`, listed as waiting for trust) answered the refusal, and a path as
/// the file spells it (relative to `.ctxkit/`) was "No matching package". Both are removed as
/// listed now, nothing run for them; a refused source no entry spells is still refused.
#[test]
fn remove_takes_an_entry_as_the_settings_file_spells_it() {
    let world = World::new();
    std::fs::create_dir_all(world.root.join("work/outside")).unwrap();
    write(
        world.project().join("settings.json"),
        r#"{"packages":["npm:../../v","../../outside","npm:kept"]}"#,
    );
    let recorder = scripted(&world, &[]);
    let manager = scripted_manager(&world, &recorder);
    for listed in ["npm:../../v", "../../outside"] {
        assert!(
            manager
                .remove_and_persist(listed, SettingsScope::Project)
                .unwrap(),
            "{listed}"
        );
    }
    assert_eq!(
        json_file(world.project().join("settings.json"))["packages"],
        serde_json::json!(["npm:kept"])
    );
    assert!(recorder.lines(&world).is_empty());
    let refused = manager
        .remove_and_persist("npm:../../other", SettingsScope::Project)
        .unwrap_err();
    assert!(refused.to_string().contains("`..`"), "{refused}");
}

/// A local package source is stored in settings as a path relative to the settings file's
/// directory.
#[test]
fn local_sources_are_stored_relative_to_the_settings_file() {
    let world = World::new();
    std::fs::create_dir_all(world.cwd().join("packages/local-package")).unwrap();
    let recorder = scripted(&world, &[]);
    let manager = scripted_manager(&world, &recorder);
    manager
        .install_and_persist("./packages/local-package", SettingsScope::Global)
        .unwrap();
    let stored = json_file(world.agent().join("settings.json"))["packages"][0]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(stored, "../../work/proj/packages/local-package");
    manager
        .install_and_persist("./packages/local-package", SettingsScope::Project)
        .unwrap();
    assert_eq!(
        json_file(world.project().join("settings.json"))["packages"],
        serde_json::json!(["../packages/local-package"])
    );
    // Equivalent spellings match: trailing slash, absolute path.
    let absolute = format!("{}/", world.cwd().join("packages/local-package").display());
    assert!(
        manager
            .remove_and_persist(&absolute, SettingsScope::Global)
            .unwrap()
    );
    assert_eq!(
        json_file(world.agent().join("settings.json"))["packages"],
        serde_json::json!([])
    );
    let error = manager
        .install("./does-not-exist", SourceScope::User)
        .unwrap_err();
    assert!(matches!(error, PackageError::PathDoesNotExist { .. }));
    assert!(
        recorder.lines(&world).is_empty(),
        "local sources run nothing"
    );
}

/// Adding a source whose identity is already configured replaces that entry when the source
/// differs (another version of the same package, as Pi 1.6), and changes nothing when it is the
/// same.
#[test]
fn a_source_with_a_configured_identity_replaces_its_entry() {
    let world = World::new();
    let text = "{\n    \"packages\": [\"npm:bar\", \"npm:foo@1\"]\n}\n";
    write(world.agent().join("settings.json"), text);
    let recorder = scripted(&world, &[]);
    let manager = scripted_manager(&world, &recorder);
    assert!(
        !manager
            .add_source_to_settings("npm:foo@1", SettingsScope::Global)
            .unwrap()
    );
    assert_eq!(read(world.agent().join("settings.json")), text);
    assert!(
        manager
            .add_source_to_settings("npm:foo@2", SettingsScope::Global)
            .unwrap()
    );
    assert_eq!(
        json_file(world.agent().join("settings.json"))["packages"],
        serde_json::json!(["npm:bar", "npm:foo@2"])
    );
    // Nothing to remove: the project directory is not even created.
    assert!(
        !manager
            .remove_source_from_settings("npm:foo", SettingsScope::Project)
            .unwrap()
    );
    assert!(!world.project().exists());
}

/// Updating asks npm for the latest version of each installed, unpinned npm package and installs
/// the outdated and missing ones (a missing pinned one at its version, as Pi 1.6), one npm call
/// per scope; installed pinned and local packages are left alone.
#[test]
fn npm_update_installs_only_outdated_packages_batched_per_scope() {
    let world = World::new();
    installed(&world.agent().join("npm/node_modules/a"), "1.0.0");
    installed(&world.agent().join("npm/node_modules/b"), "2.0.0");
    installed(&world.agent().join("npm/node_modules/f"), "2.0.0");
    // Installed with the old layout (`npm install -g`): installed again in ctxkit's npm folder,
    // as Pi 1.6 does.
    installed(&world.root.join("global/node_modules/e"), "2.0.0");
    std::fs::create_dir_all(world.cwd().join("local")).unwrap();
    write(
        world.agent().join("settings.json"),
        r#"{"packages":["npm:a","npm:b","npm:c@1.0.0","npm:f@2.0.0","./local","npm:e"]}"#,
    );
    write(
        world.project().join("settings.json"),
        r#"{"packages":["npm:d"]}"#,
    );
    let recorder = scripted(&world, &[("a", "2.0.0"), ("b", "2.0.0")]);
    let manager = scripted_manager(&world, &recorder);
    // The project's npm packages apply once it is trusted.
    let mut settings = SettingsManager::load(&world.env);
    settings.set_project_trusted(true);
    let outcome = manager.update(&settings, None).unwrap();
    assert_eq!(
        recorder.lines(&world),
        vec![
            "npm view a version --json",
            "npm view b version --json",
            // Where an older ctxkit put a missing pinned package (`npm install -g`).
            "npm root -g",
            "npm install a@latest c@1.0.0 e@latest --prefix [ROOT]/home/.ctxkit/npm",
            "npm install d@latest --prefix [ROOT]/work/proj/.ctxkit/npm",
        ]
    );
    let UpdateOutcome::Checked { updated, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(updated, vec!["npm:a", "npm:c@1.0.0", "npm:e", "npm:d"]);
}

/// Resolving reinstalls a package whose installed version the configured one does not take
/// (another exact version, a range it is outside); an exact match, a range holding it, a tag or
/// an unpinned source uses what is installed, as in Pi 1.6 (QA 2026-12-07: `npm:x@^1.0.0` was
/// installed again at every start).
#[test]
fn an_npm_package_is_reinstalled_unless_its_pin_is_the_installed_version() {
    let cases = [
        ("npm:x@1.0.0", None),
        ("npm:x", None),
        ("npm:x@^1.0.0", None),
        ("npm:x@latest", None),
        (
            "npm:x@1.0.1",
            Some("npm install x@1.0.1 --prefix [ROOT]/home/.ctxkit/npm"),
        ),
        (
            "npm:x@^2.0.0",
            Some("npm install x@^2.0.0 --prefix [ROOT]/home/.ctxkit/npm"),
        ),
    ];
    for (source, expected) in cases {
        let world = World::new();
        installed(&world.agent().join("npm/node_modules/x"), "1.0.0");
        write(
            world.agent().join("settings.json"),
            &format!(r#"{{"packages":["{source}"]}}"#),
        );
        let recorder = scripted(&world, &[]);
        let manager = scripted_manager(&world, &recorder);
        let settings = SettingsManager::load(&world.env);
        for _ in 0..2 {
            recorder.clear();
            resolve_configured(&world.env, &settings, &manager);
            let mut lines = recorder.lines(&world);
            lines.retain(|line| line != "npm root -g");
            assert_eq!(lines, expected.into_iter().collect::<Vec<_>>(), "{source}");
        }
    }
}

#[test]
fn real_npm_installs_tarballs_in_every_scope() {
    let world = World::new();
    let tarball = make_tarball(
        &world,
        "demo-pkg",
        "1.0.0",
        &[("skills/demo/SKILL.md", &skill("demo"))],
    );
    let source = format!("npm:demo-pkg@file:{}", tarball.display());
    let (manager, recorder, _) = real_manager(&world);

    // User scope: ctxkit's own npm folder, nothing in npm's global prefix.
    assert!(
        manager
            .install_and_persist(&source, SettingsScope::Global)
            .unwrap()
    );
    assert!(!npm_global_prefix(&world).join("lib/node_modules").exists());
    let global = world.agent().join("npm/node_modules/demo-pkg");
    assert_eq!(
        manager.installed_path(&source, SourceScope::User),
        Some(global.clone())
    );
    assert!(global.join("skills/demo/SKILL.md").exists());

    // Project scope.
    manager.install(&source, SourceScope::Project).unwrap();
    let project = world.project().join("npm/node_modules/demo-pkg");
    assert!(project.join("package.json").exists());

    // Resolving the unpinned name finds the installed packages and runs no install.
    write(
        world.agent().join("settings.json"),
        r#"{"packages":["npm:demo-pkg"]}"#,
    );
    write(
        world.project().join("settings.json"),
        r#"{"packages":["npm:demo-pkg"]}"#,
    );
    recorder.clear();
    // The project's npm packages apply once it is trusted.
    let mut settings = SettingsManager::load(&world.env);
    settings.set_project_trusted(true);
    let resolved = resolve_configured(&world.env, &settings, &manager);
    let package_skills: Vec<_> = resolved
        .of(ResourceKind::Skills)
        .iter()
        .filter(|item| item.metadata.origin == SourceOrigin::Package)
        .collect();
    assert_eq!(
        package_skills.len(),
        1,
        "project wins over user: {package_skills:?}"
    );
    assert_eq!(package_skills[0].path, project.join("skills/demo/SKILL.md"));
    assert!(
        recorder
            .lines(&world)
            .iter()
            .all(|line| !line.contains("install"))
    );

    // Temporary scope: installed on first resolve into the hashed temp root.
    let resolved = resolve_package_sources(
        &world.env,
        std::slice::from_ref(&source),
        SourceScope::Temporary,
        &manager,
    );
    assert_eq!(resolved.skills.len(), 1, "{resolved:?}");
    assert!(
        resolved.skills[0]
            .path
            .starts_with(world.root.join("tmp/ctxkit-extensions/npm"))
    );

    // Remove from the user scope: npm uninstall in ctxkit's npm folder, settings entry gone.
    assert!(
        manager
            .remove_and_persist("npm:demo-pkg", SettingsScope::Global)
            .unwrap()
    );
    assert!(!global.exists());
    assert_eq!(
        json_file(world.agent().join("settings.json"))["packages"],
        serde_json::json!([])
    );
    manager
        .remove("npm:demo-pkg", SourceScope::Project)
        .unwrap();
    assert!(!project.exists());
}

#[test]
fn real_npm_failure_shows_its_stderr_and_resolve_reports_it() {
    let world = World::new();
    let (manager, _, _) = real_manager(&world);
    let error = manager
        .install("npm:ctxkit-surely-missing-package", SourceScope::Project)
        .unwrap_err();
    let PackageError::CommandFailed { stderr, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(stderr.contains("ENOTCACHED"), "{stderr}");

    write(
        world.project().join("settings.json"),
        r#"{"packages":["npm:ctxkit-surely-missing-package"]}"#,
    );
    write(world.project().join("skills/ok/SKILL.md"), &skill("ok"));
    // The project's npm packages apply once it is trusted.
    let mut settings = SettingsManager::load(&world.env);
    settings.set_project_trusted(true);
    let resolved = resolve_configured(&world.env, &settings, &manager);
    assert_eq!(resolved.diagnostics.len(), 1);
    assert!(resolved.diagnostics[0].message().contains("ENOTCACHED"));
    assert_eq!(resolved.skills.len(), 1, "the rest still loads");
}

#[test]
fn report_mode_lists_missing_packages_without_running_installs() {
    let world = World::new();
    write(
        world.agent().join("settings.json"),
        r#"{"packages":["npm:absent","git:github.com/x/absent"]}"#,
    );
    let recorder = scripted(&world, &[]);
    let manager = scripted_manager(&world, &recorder)
        .with_missing_packages(ctxkit_packages::MissingPackages::Report);
    let settings = SettingsManager::load(&world.env);
    let resolved = resolve_configured(&world.env, &settings, &manager);
    let root = world.root.display().to_string();
    let messages: Vec<String> = resolved
        .diagnostics
        .iter()
        .map(|d| d.message().replace(&root, "R"))
        .collect();
    assert_eq!(
        messages,
        vec![
            "Package `npm:absent` is not installed in `R/home/.ctxkit/npm/node_modules/absent`: \
             `ctxkit update` installs it",
            "Package `git:github.com/x/absent` is not installed in \
             `R/home/.ctxkit/git/github.com/x/absent`: `ctxkit update` installs it",
        ]
    );
    assert_eq!(recorder.lines(&world), vec!["npm root -g"]);
}

/// QA: `ctxkit install npm:x` said `Installed npm:x` when npm exited 0 but installed nothing (a
/// wrapper `npmCommand` that does nothing): now it is an error naming where the package is missing,
/// and nothing is recorded in the settings. An update that leaves nothing is an error too.
#[test]
fn an_npm_install_that_installs_nothing_is_an_error() {
    let world = World::new();
    let global = world.root.join("global/node_modules");
    let recorder = Recorder::scripted(move |command: &CommandLine| {
        if command
            .args
            .ends_with(&["root".to_owned(), "-g".to_owned()])
        {
            return stdout(&format!("{}\n", global.display()));
        }
        stdout("")
    });
    let manager = scripted_manager(&world, &recorder);
    for scope in [SettingsScope::Global, SettingsScope::Project] {
        let error = manager.install_and_persist("npm:x", scope).unwrap_err();
        assert!(
            matches!(error, PackageError::NothingInstalled { .. }),
            "{error}"
        );
        let message = error
            .to_string()
            .replace(&world.root.display().to_string(), "R");
        let folder = match scope {
            SettingsScope::Global => "R/home/.ctxkit/npm/node_modules",
            SettingsScope::Project => "R/work/proj/.ctxkit/npm/node_modules",
        };
        assert_eq!(
            message,
            format!(
                "npm reported success, but `npm:x` is not in `{folder}`: nothing was installed"
            )
        );
    }
    assert!(!world.agent().join("settings.json").exists());
    assert!(!world.project().join("settings.json").exists());

    write(
        world.agent().join("settings.json"),
        r#"{"packages":["npm:x"]}"#,
    );
    let manager = scripted_manager(&world, &recorder);
    let settings = SettingsManager::load(&world.env);
    let error = manager.update(&settings, None).unwrap_err();
    assert!(
        matches!(error, PackageError::NothingInstalled { .. }),
        "{error}"
    );
}

/// Before Pi 1.6's layout, ctxkit installed user npm packages with `npm install -g`: such a
/// package is still found and loaded (as Pi 1.6 finds its own old installs), and removing it
/// uninstalls it from npm's global folder.
#[test]
fn a_user_package_installed_with_the_old_global_layout_is_found_and_removed() {
    let world = World::new();
    let tarball = make_tarball(
        &world,
        "old-pkg",
        "1.0.0",
        &[("skills/old/SKILL.md", &skill("old"))],
    );
    let spec = format!("old-pkg@file:{}", tarball.display());
    crate::common::packages::tool(&world, &world.root, "npm", &["install", "-g", &spec]);
    let legacy = npm_global_prefix(&world).join("lib/node_modules/old-pkg");
    assert!(legacy.join("package.json").exists());
    write(
        world.agent().join("settings.json"),
        r#"{"packages":["npm:old-pkg"]}"#,
    );
    let (manager, recorder, _) = real_manager(&world);
    assert_eq!(
        manager.installed_path("npm:old-pkg", SourceScope::User),
        Some(legacy.clone())
    );
    let settings = SettingsManager::load(&world.env);
    let resolved = resolve_configured(&world.env, &settings, &manager);
    assert_eq!(resolved.skills.len(), 1, "{resolved:?}");
    assert!(resolved.skills[0].path.starts_with(&legacy));
    assert_eq!(recorder.lines(&world), vec!["npm root -g"]);
    assert!(
        manager
            .remove_and_persist("npm:old-pkg", SettingsScope::Global)
            .unwrap()
    );
    assert!(!legacy.exists());
    assert!(!world.agent().join("npm").exists());
}
