//! Git packages with real `git` against repositories made in the test:
//! `https://github.com/…` is rewritten to `file://<root>/repos/…` by git's own `insteadOf`, so
//! sources keep their real shape and nothing touches the network.

use ctxkit_packages::{
    PackageError, PackageManager, SourceOrigin, SourceScope, UpdateOutcome, resolve_configured,
    resolve_package_sources,
};
use ctxkit_settings::{ResourceKind, SettingsManager, SettingsScope};

use crate::common::packages::{
    Recorder, commit, head, make_repo, process_runner, real_manager, skill, tool,
};
use crate::common::{World, json_file, read, write};

fn extension_repo(world: &World) -> std::path::PathBuf {
    make_repo(
        world,
        "test/extension",
        &[
            (
                "package.json",
                r#"{"name":"extension","version":"1.0.0","pi":{"extensions":["./pi-extensions"]}}"#,
            ),
            ("pi-extensions/index.ts", "export default 1;\n"),
        ],
    )
}

/// Installing a git source in the project clones it, checks out the ref and installs its npm
/// dependencies; installing it again only fetches the ref.
#[test]
fn project_git_install_clones_checks_out_and_installs_dependencies() {
    let world = World::new();
    let repo = extension_repo(&world);
    tool(&world, &repo, "git", &["tag", "v1"]);
    commit(&world, &repo, &[("after.txt", "later")], "after the tag");
    let (manager, recorder, progress) = real_manager(&world);
    manager
        .install("git:github.com/test/extension@v1", SourceScope::Project)
        .unwrap();
    assert_eq!(
        recorder.lines(&world),
        vec![
            "git clone --no-local https://github.com/test/extension [ROOT]/work/proj/.ctxkit/git/github.com/test/extension",
            "git checkout v1",
            "npm install --omit=dev",
        ]
    );
    let checkout = world.project().join("git/github.com/test/extension");
    let commands = recorder.commands.lock().unwrap().clone();
    assert_eq!(commands[1].cwd.as_deref(), Some(checkout.as_path()));
    assert_eq!(commands[2].cwd.as_deref(), Some(checkout.as_path()));
    assert!(
        !checkout.join("after.txt").exists(),
        "checked out at the tag"
    );
    assert_eq!(
        read(world.project().join("git/.gitignore")),
        "*\n!.gitignore\n"
    );
    assert_eq!(
        progress.lines(),
        vec![
            "start install Installing git:github.com/test/extension@v1...",
            "complete install git:github.com/test/extension@v1",
        ]
    );

    // Installing it again fetches the ref only; the checkout is there already (Pi 1.6's
    // `installGit`).
    recorder.clear();
    manager
        .install("git:github.com/test/extension@v1", SourceScope::Project)
        .unwrap();
    assert_eq!(
        recorder.lines(&world),
        vec![
            "git fetch --no-tags origin v1",
            "git rev-parse HEAD",
            "git rev-parse FETCH_HEAD^{commit}",
        ]
    );
    // A ref the remote lacks is git's error; the checkout stays as it was.
    let error = manager
        .install("git:github.com/test/extension@v2", SourceScope::Project)
        .unwrap_err();
    assert!(
        matches!(error, PackageError::CommandFailed { .. }),
        "{error}"
    );
    assert!(!checkout.join("after.txt").exists());
}

/// With `npmCommand` set, a git package's dependencies are installed through it, without
/// `--omit=dev`.
#[test]
fn a_configured_npm_command_installs_git_dependencies_without_omit_dev() {
    let world = World::new();
    extension_repo(&world);
    // The user's setting: a project's `npmCommand` applies only in a trusted project (issue 33).
    write(
        world.agent().join("settings.json"),
        r#"{"npmCommand":["npm"]}"#,
    );
    let (manager, recorder, _) = real_manager(&world);
    manager
        .install("git:github.com/test/extension", SourceScope::User)
        .unwrap();
    let lines = recorder.lines(&world);
    assert_eq!(lines.last().unwrap(), "npm install");
    assert!(
        world
            .agent()
            .join("git/github.com/test/extension/pi-extensions/index.ts")
            .exists()
    );
}

/// Removing a git package deletes its checkout and the parent directories it leaves empty, up to
/// but not including the git install root.
#[test]
fn git_remove_prunes_empty_parents_but_keeps_the_git_root() {
    let world = World::new();
    make_repo(&world, "x/y", &[("README.md", "hi")]);
    let (manager, recorder, _) = real_manager(&world);
    manager
        .install("git:github.com/x/y", SourceScope::Project)
        .unwrap();
    assert_eq!(recorder.lines(&world).len(), 1, "no package.json, no npm");
    manager
        .remove("git:github.com/x/y", SourceScope::Project)
        .unwrap();
    assert!(!world.project().join("git/github.com").exists());
    assert!(world.project().join("git/.gitignore").exists());
}

#[test]
fn file_url_sources_install_persist_resolve_and_remove() {
    let world = World::new();
    let repo = make_repo(
        &world,
        "mirror/skills-pack",
        &[("skills/alpha/SKILL.md", &skill("alpha"))],
    );
    let source = format!("git:file://{}", repo.display());
    let (manager, _, _) = real_manager(&world);
    assert!(
        manager
            .install_and_persist(&source, SettingsScope::Global)
            .unwrap()
    );
    assert_eq!(
        json_file(world.agent().join("settings.json"))["packages"],
        serde_json::json!([source])
    );
    let settings = SettingsManager::load(&world.env);
    let resolved = resolve_configured(&world.env, &settings, &manager);
    let skills: Vec<_> = resolved
        .skills
        .iter()
        .filter(|skill| skill.metadata.origin == SourceOrigin::Package)
        .collect();
    assert_eq!(skills.len(), 1);
    let expected_root = world
        .agent()
        .join("git/file")
        .join(repo.strip_prefix("/").unwrap());
    assert!(
        skills[0].path.starts_with(&expected_root),
        "{:?}",
        skills[0].path
    );
    assert_eq!(skills[0].metadata.source, source);

    assert!(
        manager
            .remove_and_persist(&source, SettingsScope::Global)
            .unwrap()
    );
    assert!(!expected_root.exists());
    assert!(world.agent().join("git").is_dir());
    assert_eq!(
        json_file(world.agent().join("settings.json"))["packages"],
        serde_json::json!([])
    );
    assert!(
        !manager
            .remove_and_persist(&source, SettingsScope::Global)
            .unwrap()
    );
}

#[test]
fn clone_failure_shows_git_stderr() {
    let world = World::new();
    let (manager, _, progress) = real_manager(&world);
    let error = manager
        .install("git:github.com/nobody/missing", SourceScope::User)
        .unwrap_err();
    let PackageError::CommandFailed {
        command, stderr, ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert!(command.starts_with("git clone --no-local https://github.com/nobody/missing "));
    assert!(
        stderr.contains("does not appear to be a git repository") || stderr.contains("not found"),
        "{stderr}"
    );
    assert_eq!(
        progress.lines().last().unwrap(),
        "error install git:github.com/nobody/missing"
    );
    // Issue 17: the failed clone leaves no empty `github.com/nobody` directories behind.
    let git_root = world.agent().join("git");
    assert!(!git_root.join("github.com").exists());
}

fn installed_user_checkout(world: &World) -> (PackageManager, Recorder, std::path::PathBuf) {
    let (manager, recorder, _) = real_manager(world);
    manager
        .install_and_persist("git:github.com/test/extension", SettingsScope::Global)
        .unwrap();
    recorder.clear();
    (
        manager,
        recorder,
        world.agent().join("git/github.com/test/extension"),
    )
}

/// Updating a git package fetches the branch it tracks and resets the checkout to the new commit.
#[test]
fn git_update_fetches_the_tracked_branch_and_resets_to_it() {
    let world = World::new();
    let repo = extension_repo(&world);
    let (manager, recorder, checkout) = installed_user_checkout(&world);
    let new_head = commit(
        &world,
        &repo,
        &[("pi-extensions/index.ts", "export default 2;\n")],
        "two",
    );
    let settings = SettingsManager::load(&world.env);
    let outcome = manager.update(&settings, None).unwrap();
    assert_eq!(
        outcome,
        UpdateOutcome::Checked {
            updated: vec!["git:github.com/test/extension".to_owned()],
            unchanged: vec![],
        }
    );
    let lines = recorder.lines(&world);
    let interesting: Vec<&String> = lines
        .iter()
        .filter(|line| {
            line.starts_with("git fetch")
                || line.starts_with("git reset")
                || line.starts_with("git clean")
                || line.starts_with("npm")
        })
        .collect();
    assert_eq!(
        interesting,
        vec![
            "git fetch --prune --no-tags origin +refs/heads/main:refs/remotes/origin/main",
            "git reset --hard @{upstream}",
            "git clean -fdx",
            "npm install --omit=dev",
        ]
    );
    assert_eq!(head(&world, &checkout), new_head);

    recorder.clear();
    manager
        .update(&settings, Some("git:github.com/test/extension"))
        .unwrap();
    let lines = recorder.lines(&world);
    assert!(lines.iter().any(|line| line.starts_with("git fetch")));
    assert!(
        !lines
            .iter()
            .any(|line| line.starts_with("git reset") || line.starts_with("npm")),
        "{lines:?}"
    );
}

/// QA r98: `install git:x@v1` over an installed `git:x` said `Installed` and changed nothing. As
/// Pi 1.6 (`installGit`, `addSourceToSettings`), it fetches the ref and resets the checkout to it,
/// and the settings entry of the same repository takes the new source (an object entry keeps its
/// filters); the same source again changes nothing; unpinned again, it follows the remote branch.
#[test]
fn installing_another_ref_moves_the_checkout_and_replaces_the_entry() {
    let world = World::new();
    let repo = extension_repo(&world);
    let first = head(&world, &repo);
    tool(&world, &repo, "git", &["tag", "v1"]);
    let second = commit(
        &world,
        &repo,
        &[("pi-extensions/index.ts", "export default 2;\n")],
        "two",
    );
    tool(&world, &repo, "git", &["tag", "v2"]);
    let (manager, _, checkout) = installed_user_checkout(&world);
    let settings_file = world.agent().join("settings.json");
    assert_eq!(head(&world, &checkout), second);

    let pinned = "git:github.com/test/extension@v1";
    assert!(
        manager
            .install_and_persist(pinned, SettingsScope::Global)
            .unwrap()
    );
    assert_eq!(head(&world, &checkout), first);
    assert_eq!(
        read(checkout.join("pi-extensions/index.ts")),
        "export default 1;\n"
    );
    assert_eq!(
        json_file(&settings_file)["packages"],
        serde_json::json!([pinned])
    );

    write(
        &settings_file,
        r#"{"packages":[{"source":"git:github.com/test/extension@v1","skills":[]}]}"#,
    );
    let other = "git:github.com/test/extension@v2";
    assert!(
        manager
            .install_and_persist(other, SettingsScope::Global)
            .unwrap()
    );
    assert_eq!(head(&world, &checkout), second);
    assert_eq!(
        json_file(&settings_file)["packages"],
        serde_json::json!([{"source": other, "skills": []}])
    );
    assert!(
        !manager
            .install_and_persist(other, SettingsScope::Global)
            .unwrap()
    );

    let third = commit(&world, &repo, &[("c.txt", "c")], "three");
    let unpinned = "git:github.com/test/extension";
    assert!(
        manager
            .install_and_persist(unpinned, SettingsScope::Global)
            .unwrap()
    );
    assert_eq!(head(&world, &checkout), third);
    assert_eq!(
        json_file(&settings_file)["packages"],
        serde_json::json!([{"source": unpinned, "skills": []}])
    );
}

/// After the remote history is rewritten, or with a detached HEAD, an update still lands on the
/// remote's commit.
#[test]
fn git_update_follows_rewritten_history_and_detached_heads() {
    let world = World::new();
    let repo = extension_repo(&world);
    commit(&world, &repo, &[("b.txt", "b")], "second");
    let (manager, _, checkout) = installed_user_checkout(&world);
    // Rewrite: drop the last commit, add a different one.
    tool(&world, &repo, "git", &["reset", "-q", "--hard", "HEAD~1"]);
    let rewritten = commit(&world, &repo, &[("c.txt", "rewritten")], "rewrite");
    let settings = SettingsManager::load(&world.env);
    manager.update(&settings, None).unwrap();
    assert_eq!(head(&world, &checkout), rewritten);
    assert_eq!(read(checkout.join("c.txt")), "rewritten");
    assert!(!checkout.join("b.txt").exists());

    // Detached HEAD follows the remote default branch.
    tool(
        &world,
        &checkout,
        "git",
        &["checkout", "-q", "--detach", "HEAD~1"],
    );
    let latest = commit(&world, &repo, &[("d.txt", "d")], "more");
    manager.update(&settings, None).unwrap();
    assert_eq!(head(&world, &checkout), latest);
}

/// A git package pinned to a commit stays at that commit on update, and a missing one is installed
/// there.
#[test]
fn a_git_package_pinned_to_a_commit_is_never_updated() {
    let world = World::new();
    let repo = extension_repo(&world);
    let pinned = head(&world, &repo);
    let source = format!("git:github.com/test/extension@{pinned}");
    let (manager, recorder, _) = real_manager(&world);
    manager
        .install_and_persist(&source, SettingsScope::Global)
        .unwrap();
    commit(&world, &repo, &[("new.txt", "new")], "newer");
    recorder.clear();
    let settings = SettingsManager::load(&world.env);
    manager.update(&settings, None).unwrap();
    assert!(recorder.lines(&world).is_empty());
    let checkout = world.agent().join("git/github.com/test/extension");
    assert_eq!(head(&world, &checkout), pinned);

    // Missing (settings copied from another machine), it is installed at its pin.
    std::fs::remove_dir_all(&checkout).unwrap();
    manager.update(&settings, None).unwrap();
    assert_eq!(head(&world, &checkout), pinned);
}

/// `update <source>` updates the configured package with the same identity, and names a close
/// match when nothing matches.
#[test]
fn update_selects_by_identity_and_suggests_a_close_match() {
    let world = World::new();
    extension_repo(&world);
    let (manager, _, _) = installed_user_checkout(&world);
    let settings = SettingsManager::load(&world.env);
    let error = manager
        .update(&settings, Some("github.com/test/extension"))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "No matching package found for github.com/test/extension. Did you mean git:github.com/test/extension?"
    );
    let error = manager.update(&settings, Some("npm:foo")).unwrap_err();
    assert_eq!(error.to_string(), "No matching package found for npm:foo");
    manager
        .update(&settings, Some("git:github.com/test/extension"))
        .unwrap();
    assert!(!world.project().join("git").exists());
}

/// Offline, resolving and updating run no command: missing packages are reported, not installed.
#[test]
fn offline_resolve_and_update_run_no_command() {
    let world = World::new();
    write(
        world.project().join("settings.json"),
        r#"{"packages":["npm:missing-package","git:github.com/example/missing-repo"]}"#,
    );
    let world_env = world.env.clone().with_variable("CTXKIT_OFFLINE", "1");
    let recorder = Recorder::real(process_runner(&world));
    let settings = SettingsManager::load(&world_env);
    let manager = PackageManager::new(world_env.clone(), &settings).with_runner(recorder.clone());
    let resolved = resolve_configured(&world_env, &settings, &manager);
    for kind in ResourceKind::ALL {
        assert!(
            resolved
                .of(kind)
                .iter()
                .all(|item| item.metadata.origin != SourceOrigin::Package)
        );
    }
    assert!(
        resolved.diagnostics.is_empty(),
        "{:?}",
        resolved.diagnostics
    );
    assert_eq!(
        manager.update(&settings, None).unwrap(),
        UpdateOutcome::SkippedOffline
    );
    assert!(recorder.lines(&world).is_empty());
}

/// A temporary git package is cloned into a cache directory named by a hash of its source; later runs
/// use the cached checkout, pulling only when it is unpinned and online.
#[test]
fn temporary_git_checkouts_are_cached_and_refreshed() {
    let world = World::new();
    let repo = extension_repo(&world);
    let (manager, recorder, progress) = real_manager(&world);
    let sources = vec!["git:github.com/test/extension".to_owned()];
    // First resolve clones into the hashed temporary location.
    let resolved = resolve_package_sources(&world.env, &sources, SourceScope::Temporary, &manager);
    let hash = "git-github.com-test/extension";
    let digest = short_sha256(hash);
    let checkout = world
        .root
        .join("tmp/ctxkit-extensions/git-github.com")
        .join(digest)
        .join("test/extension");
    assert_eq!(resolved.extensions.len(), 1, "{resolved:?}");
    assert_eq!(
        resolved.extensions[0].path,
        checkout.join("pi-extensions/index.ts")
    );
    assert!(resolved.extensions[0].enabled);

    // Pinned: cached checkout used as is, no command.
    recorder.clear();
    let pinned = vec!["git:github.com/test/extension@main".to_owned()];
    let resolved = resolve_package_sources(&world.env, &pinned, SourceScope::Temporary, &manager);
    assert_eq!(resolved.extensions.len(), 1);
    assert!(recorder.lines(&world).is_empty());

    // Unpinned and online: refreshed (progress action `pull`).
    let newer = commit(
        &world,
        &repo,
        &[("pi-extensions/index.ts", "export default 3;\n")],
        "3",
    );
    resolve_package_sources(&world.env, &sources, SourceScope::Temporary, &manager);
    assert_eq!(head(&world, &checkout), newer);
    assert!(
        progress
            .lines()
            .contains(&"start pull Refreshing git:github.com/test/extension...".to_owned())
    );

    // Offline and unpinned: no command.
    recorder.clear();
    let offline_env = world.env.clone().with_variable("CTXKIT_OFFLINE", "true");
    let settings = SettingsManager::load(&offline_env);
    let offline = PackageManager::new(offline_env.clone(), &settings).with_runner(recorder.clone());
    let resolved =
        resolve_package_sources(&offline_env, &sources, SourceScope::Temporary, &offline);
    assert_eq!(resolved.extensions.len(), 1);
    assert!(recorder.lines(&world).is_empty());
}

fn short_sha256(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .take(4)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Issue 42: a checkout whose `.git/config` (committed to a project, or planted) carries
/// `remote.origin.uploadpack`, `core.fsmonitor` or hooks: `ctxkit update` runs none of it. The
/// checkout is refused before git runs in it, and every git command runs with the repository's
/// command-running settings overridden.
#[test]
fn a_checkout_with_an_uploadpack_fsmonitor_or_hooks_runs_nothing_on_update() {
    let world = World::new();
    let repo = extension_repo(&world);
    let (manager, _recorder, checkout) = installed_user_checkout(&world);
    commit(&world, &repo, &[("new.txt", "2")], "two");
    let marker = world.root.join("pwned");
    let payload = format!(
        "sh -c 'touch {}; exec git-upload-pack \"$@\"' --",
        marker.display()
    );
    // `reference-transaction` runs at every ref update, `git fetch` and `git reset` included.
    let hook = checkout.join(".git/hooks/reference-transaction");
    write(&hook, &format!("#!/bin/sh\ntouch {}\n", marker.display()));
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = checkout.join(".git/config");
    let original = read(&config);
    let settings = SettingsManager::load(&world.env);
    for planted in [
        format!("[remote \"origin\"]\n\tuploadpack = {payload}\n"),
        format!("[core]\n\tfsmonitor = touch {}\n", marker.display()),
        format!(
            "[core]\n\thooksPath = {}\n",
            checkout.join(".git/hooks").display()
        ),
        "[include]\n\tpath = /tmp/elsewhere\n".to_owned(),
        format!("[filter \"x\"]\n\tsmudge = touch {}\n", marker.display()),
    ] {
        write(&config, &format!("{original}{planted}"));
        let error = manager.update(&settings, None).unwrap_err();
        assert!(
            matches!(error, PackageError::UnsafeCheckout { .. }),
            "{planted}: {error}"
        );
        assert!(!marker.exists(), "{planted}: the planted command ran");
    }
    write(&config, &original);
    // With the clean config the update runs, and the hook in `.git/hooks` does not.
    manager.update(&settings, None).unwrap();
    assert!(checkout.join("new.txt").exists());
    assert!(!marker.exists(), "a hook of the checkout ran");
}

/// Attack (issue 42): a hostile repository commits `.ctxkit/git/github.com` as a symlink to a
/// folder outside the project. `ctxkit remove` of a project git package deleted
/// `<outside>/test/extension` (the package manager's `remove_dir_all` followed the link), and an
/// install cloned into it. Now every package folder is created, written and removed through a jail
/// on the project: both are refused and nothing outside changes.
#[test]
fn a_package_folder_symlinked_out_of_the_project_is_neither_removed_nor_written() {
    let world = World::new();
    let repo = extension_repo(&world);
    let outside = world.root.join("outside");
    write(outside.join("test/extension/precious.txt"), "keep me");
    std::fs::create_dir_all(world.project().join("git")).unwrap();
    std::os::unix::fs::symlink(&outside, world.project().join("git/github.com")).unwrap();
    let (manager, _recorder, _progress) = real_manager(&world);

    let removed = manager.remove("git:github.com/test/extension", SourceScope::Project);
    assert!(
        matches!(removed, Err(PackageError::Refused { .. })),
        "{removed:?}"
    );
    assert_eq!(read(outside.join("test/extension/precious.txt")), "keep me");

    std::fs::remove_dir_all(outside.join("test")).unwrap();
    let installed = manager.install("git:github.com/test/extension", SourceScope::Project);
    assert!(
        matches!(installed, Err(PackageError::Refused { .. })),
        "{installed:?}"
    );
    assert!(!outside.join("test").exists(), "nothing was cloned outside");

    // A checkout of the same repository out there is not moved to another ref (installing over
    // a checkout resets it), nor updated.
    std::fs::create_dir_all(&outside).unwrap();
    tool(
        &world,
        &outside,
        "git",
        &[
            "clone",
            "-q",
            "https://github.com/test/extension",
            "test/extension",
        ],
    );
    let theirs = head(&world, &outside.join("test/extension"));
    commit(&world, &repo, &[("new.txt", "new")], "newer");
    let installed = manager.install("git:github.com/test/extension", SourceScope::Project);
    assert!(
        matches!(installed, Err(PackageError::Refused { .. })),
        "{installed:?}"
    );
    write(
        world.project().join("settings.json"),
        r#"{"packages":["git:github.com/test/extension"]}"#,
    );
    let mut settings = SettingsManager::load(&world.env);
    settings.set_project_trusted(true);
    let updated = manager.update(&settings, None);
    assert!(
        matches!(updated, Err(PackageError::Refused { .. })),
        "{updated:?}"
    );
    assert_eq!(head(&world, &outside.join("test/extension")), theirs);
}
