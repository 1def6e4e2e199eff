//! The workspace's tests: where tools may read and write, and what they are refused.

use std::os::unix::fs::symlink;

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
    project: PathBuf,
    home: PathBuf,
    workspace: Workspace,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let project = base.join("project");
    let home = base.join("ctxkit-home");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("settings.json"), "{}").unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    let mut workspace = Workspace::new(&project);
    workspace.protect(&home);
    Fixture {
        _dir: dir,
        base,
        project,
        home,
        workspace,
    }
}

fn locate(fixture: &Fixture, argument: &str, access: Access) -> Result<Place, String> {
    fixture
        .workspace
        .locate(&fixture.project, argument, access)
        .map_err(|refusal| refusal.of(&format!("{} {argument}", access.verb())))
}

/// A link planted where a shipped session keeps its full outputs does not make what it leads
/// to readable: reading through it is refused as the target is.
#[test]
fn a_linked_outputs_folder_opens_nothing() {
    let mut fixture = fixture();
    let shipped = fixture.base.join("outside/tool-output");
    std::fs::create_dir_all(&shipped).unwrap();
    symlink(&fixture.home, shipped.join("s1")).unwrap();
    fixture.workspace.allow_reading_outputs(&shipped.join("s1"));
    let through = shipped.join("s1/settings.json");
    let refused = locate(&fixture, through.to_str().unwrap(), Access::Read).unwrap_err();
    assert!(refused.contains("never readable"), "{refused}");
    // A real folder of outputs is readable although the home holds it.
    let real = fixture.home.join("tool-output/s2");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::write(real.join("c.txt"), "out").unwrap();
    fixture.workspace.allow_reading_outputs(&real);
    let place = locate(&fixture, real.join("c.txt").to_str().unwrap(), Access::Read);
    assert_eq!(place.unwrap(), Place::Allowed(real.join("c.txt")));
}

#[test]
fn project_paths_are_allowed_and_resolved() {
    let fixture = fixture();
    let place = locate(&fixture, "src/../src/new/file.rs", Access::Write).unwrap();
    assert_eq!(
        place,
        Place::Allowed(fixture.project.join("src/new/file.rs"))
    );
    let place = locate(&fixture, "@src", Access::Read).unwrap();
    assert_eq!(place, Place::Allowed(fixture.project.join("src")));
}

#[test]
fn absolute_parent_and_symlinked_escapes_are_outside() {
    let fixture = fixture();
    let outside = fixture.base.join("outside");
    symlink(&outside, fixture.project.join("linked")).unwrap();
    for argument in [
        outside.join("x.txt").display().to_string(),
        "../outside/x.txt".to_owned(),
        "linked/x.txt".to_owned(),
        "linked/deeper/still/x.txt".to_owned(),
    ] {
        let place = locate(&fixture, &argument, Access::Write).unwrap();
        assert!(
            matches!(&place, Place::Outside(path) if path.starts_with(&outside)),
            "{argument}: {place:?}"
        );
    }
    // A dangling link is judged by where it points.
    symlink(outside.join("not-yet"), fixture.project.join("dangling")).unwrap();
    let place = locate(&fixture, "dangling", Access::Write).unwrap();
    assert_eq!(place, Place::Outside(outside.join("not-yet")));
}

#[test]
fn ctxkit_home_is_refused_directly_through_symlinks_and_with_dots() {
    let fixture = fixture();
    symlink(
        fixture.home.join("settings.json"),
        fixture.project.join("setup.md"),
    )
    .unwrap();
    symlink(&fixture.home, fixture.project.join("home-link")).unwrap();
    let direct = fixture.home.join("settings.json").display().to_string();
    let dotted = format!("{}/../ctxkit-home/x.json", fixture.home.display());
    for argument in [
        direct.as_str(),
        "setup.md",
        "home-link/settings.json",
        "home-link/new-file",
        dotted.as_str(),
    ] {
        for access in [Access::Read, Access::Write] {
            let refusal = locate(&fixture, argument, access).unwrap_err();
            assert!(
                refusal.contains("never") && refusal.contains(argument),
                "{argument}: {refusal}"
            );
        }
    }
}

/// QA: with the project at `~/dotfiles` and `~/.ctxkit/settings.json` a link to
/// `~/dotfiles/ctxkit/settings.json`, `read ctxkit/settings.json` showed the settings and `edit`
/// rewrote them without a question. Where the home's links lead is ctxkit's own too: refused by
/// the target's name, for reading and writing, and by the jail.
#[test]
fn where_the_homes_links_lead_is_refused_like_the_home() {
    let fixture = fixture();
    let dotfiles = &fixture.project;
    std::fs::create_dir_all(dotfiles.join("ctxkit")).unwrap();
    std::fs::create_dir_all(dotfiles.join("my-skills/greeter")).unwrap();
    std::fs::write(dotfiles.join("ctxkit/settings.json"), "{}").unwrap();
    std::fs::write(dotfiles.join("ctxkit/notes.md"), "notes").unwrap();
    std::fs::write(dotfiles.join("my-skills/greeter/SKILL.md"), "skill").unwrap();
    let home = fixture.base.join("linked-home");
    std::fs::create_dir_all(&home).unwrap();
    symlink(
        dotfiles.join("ctxkit/settings.json"),
        home.join("settings.json"),
    )
    .unwrap();
    symlink(dotfiles.join("my-skills"), home.join("skills")).unwrap();
    symlink(&fixture.base, home.join("up")).unwrap();
    let mut workspace = Workspace::new(dotfiles);
    workspace.set_home(&home);
    for argument in ["ctxkit/settings.json", "my-skills/greeter/SKILL.md"] {
        for access in [Access::Read, Access::Write] {
            let refusal = workspace.locate(dotfiles, argument, access).unwrap_err();
            assert!(
                refusal.to_string().contains("never"),
                "{argument}: {refusal}"
            );
        }
        let path = dotfiles.join(argument);
        let jail = workspace.jail_for(&path).unwrap();
        assert!(jail.read(&path, 1024).is_err(), "{argument}");
    }
    // Beside the targets, and under a folder a link leads up to, the project's as before.
    assert_eq!(
        workspace.locate(dotfiles, "ctxkit/notes.md", Access::Write),
        Ok(Place::Allowed(dotfiles.join("ctxkit/notes.md")))
    );
}

/// QA: with `core.hooksPath = .husky`, `write .husky/pre-commit` went through without a question
/// and the user's next `git commit` ran it. The folder the config names is guarded like `.git`,
/// by the workspace and by the jail; a write elsewhere is not.
#[test]
fn the_folder_core_hooks_path_names_is_guarded() {
    let fixture = fixture();
    let project = &fixture.project;
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(
        project.join(".git/config"),
        "[core]\n\trepositoryformatversion = 0\n\tHooksPath = \".husky\"\n",
    )
    .unwrap();
    let workspace = Workspace::new(project);
    assert_eq!(
        workspace.locate(project, ".husky/pre-commit", Access::Write),
        Ok(Place::Guarded(project.join(".husky/pre-commit")))
    );
    assert_eq!(
        workspace.locate(project, "husky/pre-commit", Access::Write),
        Ok(Place::Allowed(project.join("husky/pre-commit")))
    );
    let mut jail = workspace.jail_for(project).unwrap();
    workspace.guard_writes(&mut jail);
    std::fs::create_dir_all(project.join(".husky")).unwrap();
    assert!(
        jail.write_atomic(Path::new(".husky/pre-commit"), b"echo hook")
            .is_err()
    );
    assert!(!project.join(".husky/pre-commit").exists());
}

/// QA (2026-12-05): with `include.path = ../inc.cfg` or `core.fsmonitor = tools/fsmon.sh` in
/// `.git/config`, the model wrote `inc.cfg` (a config with an fsmonitor command) or the script
/// itself without a question, and the user's next `git status` ran it. Files git reads as config or
/// runs as a program are guarded like `.git`; a word of a command that names no file is not.
#[test]
fn files_the_git_config_includes_or_runs_are_guarded() {
    let fixture = fixture();
    let project = &fixture.project;
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("tools")).unwrap();
    std::fs::write(project.join("run-lint"), "#!/bin/sh\n").unwrap();
    std::fs::write(
        project.join(".git/config"),
        "[core]\n\tfsmonitor = tools/fsmon.sh\n[include]\n\tpath = ../inc.cfg\n\
         [alias]\n\tlint = !run-lint --fix\n[filter \"lfs\"]\n\tclean = ./scripts/clean %f\n\
         [diff]\n\texternal = difft\n",
    )
    .unwrap();
    let workspace = Workspace::new(project);
    for guarded in ["inc.cfg", "tools/fsmon.sh", "run-lint", "scripts/clean"] {
        assert_eq!(
            workspace.locate(project, guarded, Access::Write),
            Ok(Place::Guarded(project.join(guarded))),
            "{guarded}"
        );
    }
    for allowed in ["tools/other.sh", "difft", "--fix"] {
        assert_eq!(
            workspace.locate(project, allowed, Access::Write),
            Ok(Place::Allowed(project.join(allowed))),
            "{allowed}"
        );
    }
    let mut jail = workspace.jail_for(project).unwrap();
    workspace.guard_writes(&mut jail);
    assert!(
        jail.write_atomic(Path::new("tools/fsmon.sh"), b"touch PWNED")
            .is_err()
    );
    assert!(!project.join("tools/fsmon.sh").exists());
}

/// QA: the system prompt tells the model to read a skill's `SKILL.md` in ctxkit's home, and the
/// read was refused as the home. A loaded skill's folder is readable, never writable; the home's
/// other files stay closed, a link out of the folder too, and a "skill" at the home's top opens
/// nothing.
#[test]
fn a_loaded_skills_folder_is_readable_and_nothing_else_of_the_home() {
    let fixture = fixture();
    let greeter = fixture.home.join("skills/greeter");
    std::fs::create_dir_all(&greeter).unwrap();
    std::fs::write(greeter.join("SKILL.md"), "greet").unwrap();
    std::fs::write(greeter.join("phrases.md"), "hello").unwrap();
    symlink(
        fixture.home.join("settings.json"),
        greeter.join("linked.json"),
    )
    .unwrap();
    let mut workspace = Workspace::new(&fixture.project);
    workspace.set_home(&fixture.home);
    workspace.allow_reading_skill_folder(&greeter);
    workspace.allow_reading_skill_folder(&fixture.home);
    let locate = |path: &Path, access| {
        workspace.locate(&fixture.project, &path.display().to_string(), access)
    };
    for name in ["SKILL.md", "phrases.md"] {
        let path = greeter.join(name);
        assert_eq!(
            locate(&path, Access::Read),
            Ok(Place::Allowed(path.clone()))
        );
        let jail = workspace.jail_for(&path).unwrap();
        assert!(jail.read(&path, 1024).is_ok(), "{name}");
        assert!(locate(&path, Access::Write).is_err(), "{name}");
    }
    for path in [
        fixture.home.join("settings.json"),
        greeter.join("linked.json"),
        fixture.home.join("skills/other.md"),
    ] {
        assert!(locate(&path, Access::Read).is_err(), "{}", path.display());
    }
    // Opened through the skill's folder, the link out of it is refused by the jail too.
    let jail = workspace.jail_for(&greeter.join("SKILL.md")).unwrap();
    assert!(jail.read(&greeter.join("linked.json"), 1024).is_err());
}

/// QA r105 (3): a skill of a package installed from a local folder (`ctxkit install ~/mypkgs/pkg`)
/// or of a `skills` entry of the user's settings was offered to the model, but reading its
/// `SKILL.md` asked the user (refused in print mode): only skill folders in ctxkit's home were
/// readable. Every loaded skill's folder is now, read-only; what lies beside it is not, and a folder
/// holding the user's credentials (`~` itself) opens nothing.
#[test]
fn a_loaded_skills_folder_outside_the_home_is_readable_and_nothing_beside_it() {
    let fixture = fixture();
    let package = fixture.base.join("outside/mypkgs/pkg");
    let deploy = package.join("skills/deploy");
    std::fs::create_dir_all(&deploy).unwrap();
    std::fs::write(package.join("package.json"), "{}").unwrap();
    std::fs::write(deploy.join("SKILL.md"), "Run make deploy.").unwrap();
    std::fs::write(deploy.join("steps.md"), "step one").unwrap();
    let mut workspace = Workspace::new(&fixture.project);
    workspace.set_home(&fixture.home);
    workspace.allow_reading_skill_folder(&deploy);
    let user_home = std::env::home_dir();
    if let Some(user_home) = &user_home {
        workspace.allow_reading_skill_folder(user_home);
    }
    let locate = |path: &Path, access| {
        workspace.locate(&fixture.project, &path.display().to_string(), access)
    };
    for name in ["SKILL.md", "steps.md"] {
        let path = deploy.join(name);
        assert_eq!(
            locate(&path, Access::Read),
            Ok(Place::Allowed(path.clone()))
        );
        let jail = workspace.jail_for(&path).unwrap();
        assert!(jail.read(&path, 1024).is_ok(), "{name}");
        assert_eq!(
            locate(&path, Access::Write),
            Ok(Place::Outside(path.clone()))
        );
    }
    let beside = package.join("package.json");
    assert_eq!(
        locate(&beside, Access::Read),
        Ok(Place::Outside(beside.clone()))
    );
    if let Some(user_home) = user_home {
        let notes = user_home.join("ctxkit-test-notes.md");
        assert!(!matches!(
            locate(&notes, Access::Read),
            Ok(Place::Allowed(_))
        ));
    }
}

#[test]
fn a_project_inside_the_home_is_the_projects_and_the_home_stays_closed() {
    let fixture = fixture();
    let project = fixture.home.join("work");
    std::fs::create_dir_all(&project).unwrap();
    let mut workspace = Workspace::new(&project);
    workspace.set_home(&fixture.home);
    assert!(matches!(
        workspace.locate(&project, "src/main.rs", Access::Write),
        Ok(Place::Allowed(_))
    ));
    for argument in ["../settings.json", "../sessions/x.jsonl"] {
        assert!(workspace.locate(&project, argument, Access::Read).is_err());
    }
    // The home itself as the project: nothing in it is the project's.
    let mut workspace = Workspace::new(&fixture.home);
    workspace.set_home(&fixture.home);
    assert!(
        workspace
            .locate(&fixture.home, "settings.json", Access::Read)
            .is_err()
    );
}

/// QA: `read ~/.ssh/id_rsa` first asked "outside the project?" and only after `y` said the
/// credentials are never opened. The refusal now comes first, outside the project and in it
/// (a project at `~`), directly and through a committed link, for reading and writing alike.
#[test]
fn the_users_credentials_are_refused_before_any_question() {
    let mut fixture = fixture();
    let ssh = fixture.base.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_rsa"), "KEY").unwrap();
    let aws = fixture.project.join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    fixture.workspace.add_credential_place(&ssh);
    fixture.workspace.add_credential_place(&aws);
    symlink(&ssh, fixture.project.join("keys")).unwrap();
    let key = ssh.join("id_rsa").display().to_string();
    for argument in [
        key.as_str(),
        "../.ssh/authorized_keys",
        "keys/id_rsa",
        ".aws",
        ".aws/credentials",
    ] {
        for access in [Access::Read, Access::Write] {
            let refusal = locate(&fixture, argument, access).unwrap_err();
            assert!(
                refusal.contains("the user's credentials are never opened"),
                "{argument}: {refusal}"
            );
        }
    }
    // Beside them, the usual judgement.
    assert!(matches!(
        locate(&fixture, "../outside/x", Access::Read),
        Ok(Place::Outside(_))
    ));
}

#[test]
fn readable_paths_allow_reading_only() {
    let mut fixture = fixture();
    let docs = fixture.base.join("outside");
    fixture.workspace.allow_reading(&docs);
    let argument = docs.join("notes.md").display().to_string();
    assert!(matches!(
        locate(&fixture, &argument, Access::Read),
        Ok(Place::Allowed(_))
    ));
    assert!(matches!(
        locate(&fixture, &argument, Access::Write),
        Ok(Place::Outside(_))
    ));
}

#[test]
fn secrets_are_redacted() {
    let mut workspace = Workspace::default();
    workspace.add_secret("sk-test-0123456789");
    workspace.add_secret("short");
    assert_eq!(
        workspace.redact("key sk-test-0123456789, short"),
        "key <redacted>, short"
    );
}

/// QA (2026-12-05): `serve` on a database keeps each open session's copy in a private folder of
/// the temporary folder; another client's agent read it (and overwrote it) with
/// `allow_outside_project`, where the sessions folder of the file store is refused.
#[test]
fn the_private_copies_of_sessions_are_refused_like_the_sessions() {
    let fixture = fixture();
    let private = ctxkit_session::private_temporary_folder("serve").unwrap();
    let copy = private.path().join("other-client.jsonl");
    std::fs::write(&copy, "{}\n").unwrap();
    symlink(&copy, fixture.project.join("alias.jsonl")).unwrap();
    for argument in [copy.display().to_string(), "alias.jsonl".to_owned()] {
        for access in [Access::Read, Access::Write] {
            let refused = locate(&fixture, &argument, access).unwrap_err();
            assert!(
                refused.contains("sessions are never"),
                "{argument}: {refused}"
            );
        }
    }
    // The jail a tool opens an approved outside path through refuses it too.
    let jail = fixture.workspace.jail_for(&copy).unwrap();
    assert!(jail.read(&copy, 100).is_err());
    assert!(fixture.base.join("outside").is_dir());
}

/// QA (2026-12-05): `serve`'s `agent.run` took ctxkit's home as its project, and `bash` started
/// there (`cat auth.json`).
#[test]
fn ctxkit_s_home_a_private_folder_and_credentials_are_no_project() {
    let fixture = fixture();
    assert_eq!(fixture.workspace.project_refusal(), None);
    let with_home = |root: &Path| {
        let mut workspace = Workspace::new(root);
        workspace.set_home(&fixture.home);
        workspace.add_credential_place(&fixture.base.join("outside"));
        workspace.project_refusal()
    };
    let refused = with_home(&fixture.home).unwrap();
    assert!(refused.contains("ctxkit's own folder"), "{refused}");
    assert!(with_home(&fixture.base.join("outside")).is_some());
    let private = ctxkit_session::private_temporary_folder("serve").unwrap();
    assert!(with_home(private.path()).is_some());
    // QA (serve): `agent.run` with `cwd` at `~/.ctxkit/sessions` ran `bash` there, among every
    // project's sessions; a folder in the home is the home's.
    let inside = fixture.home.join("sessions");
    std::fs::create_dir_all(&inside).unwrap();
    let refused = with_home(&inside).unwrap();
    assert!(refused.contains("ctxkit's own folder"), "{refused}");
    assert_eq!(with_home(&fixture.project), None);
    // ctxkit's own folders in the home are no project (QA: an installed skill's folder); another
    // folder in it is a project's.
    let in_home = |path: &str, user_home: Option<&Path>| {
        crate::workspace::in_own_home(&fixture.home.join(path), &fixture.home, user_home)
    };
    for own in [
        "sessions/--x--",
        "skills/s1",
        "git/github.com/x",
        "npm/node_modules/p",
    ] {
        assert!(in_home(own, None), "{own}");
    }
    assert!(!in_home("project", None));
    // With the home at the user's home (`CTXKIT_HOME=~`), projects are in it (`~/git` too); its
    // sessions are not.
    let user_home = Some(fixture.home.as_path());
    assert!(in_home("sessions/--x--", user_home));
    assert!(!in_home("git/app", user_home) && !in_home("code/app", user_home));
}

/// QA (2026-12-05): `ctxkit chat` started in ctxkit's home, or through a committed link to it
/// (`cfg -> ~/.ctxkit`), ran the model's `bash` there, where `read` refused every file. The model's
/// `bash` runs nowhere [`Workspace::project_refusal`] refuses.
#[test]
fn the_models_bash_does_not_start_in_a_project_that_is_no_project() {
    let fixture = fixture();
    let link = fixture.project.join("cfg");
    symlink(&fixture.home, &link).unwrap();
    let mut workspace = Workspace::new(&link);
    workspace.set_home(&fixture.home);
    let mut context = crate::tools::test_support::context(&link);
    context.workspace = std::sync::Arc::new(workspace);
    let outcome = crate::tools::run_bash("echo ran", None, "call_1", &context);
    assert!(outcome.is_error, "{}", outcome.text);
    assert!(
        outcome.text.starts_with("`bash` refused:") && outcome.text.contains("ctxkit's own folder"),
        "{}",
        outcome.text
    );
}

/// QA (verifier): in an installed skill's folder of ctxkit's home `bash` was refused and `write
/// SKILL.md` went through; every tool refuses a project that is no project.
#[test]
fn no_tool_works_in_a_project_that_is_no_project() {
    let fixture = fixture();
    let skill = fixture.home.join("skills/s1");
    std::fs::create_dir_all(&skill).unwrap();
    let mut workspace = Workspace::new(&skill);
    workspace.set_home(&fixture.home);
    let mut context = crate::tools::test_support::context(&skill);
    context.workspace = std::sync::Arc::new(workspace);
    for (tool, arguments) in [
        (
            "write",
            serde_json::json!({"path": "SKILL.md", "content": "pwned"}),
        ),
        ("read", serde_json::json!({"path": "SKILL.md"})),
        ("ls", serde_json::json!({"path": "."})),
    ] {
        let outcome = crate::tools::run_tool(tool, &arguments, "call_1", &context);
        assert!(
            outcome.is_error && outcome.text.contains("ctxkit's own folder"),
            "{tool}: {}",
            outcome.text
        );
    }
    assert!(!skill.join("SKILL.md").exists());
}

/// QA (r101, D1): a hook linked to a script of the work tree (`.git/hooks/pre-commit ->
/// ../../scripts/pre-commit`, `.husky/pre-commit -> ../tools/hook.sh` under `core.hooksPath`) was
/// not guarded: the model edited the script and the next `git commit` ran it. The script is
/// guarded; another script beside it is not.
#[test]
fn a_hook_linked_into_the_work_tree_guards_its_script() {
    let fixture = fixture();
    let project = &fixture.project;
    std::fs::create_dir_all(project.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(project.join(".husky")).unwrap();
    std::fs::create_dir_all(project.join("scripts")).unwrap();
    std::fs::write(project.join("scripts/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::write(
        project.join(".git/config"),
        "[core]\n\thooksPath = .husky\n",
    )
    .unwrap();
    symlink(
        "../../scripts/pre-commit",
        project.join(".git/hooks/pre-commit"),
    )
    .unwrap();
    symlink("../tools/hook.sh", project.join(".husky/pre-commit")).unwrap();
    let workspace = Workspace::new(project);
    for guarded in ["scripts/pre-commit", "tools/hook.sh"] {
        assert_eq!(
            workspace.locate(project, guarded, Access::Write),
            Ok(Place::Guarded(project.join(guarded))),
            "{guarded}"
        );
    }
    assert_eq!(
        workspace.locate(project, "scripts/build.sh", Access::Write),
        Ok(Place::Allowed(project.join("scripts/build.sh")))
    );
}

/// QA (r101, D2): with ctxkit started in the home folder, `write .gitconfig` (a `core.fsmonitor`
/// that every repository's `git status` then ran) went through without a question, and outside a
/// repository the files it includes too. Both are guarded, repository or not.
#[test]
fn the_users_git_config_is_guarded_with_the_project_at_home() {
    let fixture = fixture();
    let home = fixture.base.join("user");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".gitconfig"), "[include]\n\tpath = extra.cfg\n").unwrap();
    let mut workspace = Workspace::new(&home);
    workspace.guard_what_git_runs(Some(&home));
    for guarded in [".gitconfig", "extra.cfg"] {
        assert_eq!(
            workspace.locate(&home, guarded, Access::Write),
            Ok(Place::Guarded(home.join(guarded))),
            "{guarded}"
        );
    }
    assert_eq!(
        workspace.locate(&home, "notes.txt", Access::Write),
        Ok(Place::Allowed(home.join("notes.txt")))
    );
}

/// QA (2026-12-07): with the project at `~`, `.bashrc`, `.profile`, a systemd user unit and an
/// autostart entry were written without a question (`-p` too); each runs at the next shell or
/// login. A dotfiles project's `.zshrc` is guarded as well (the home links to it).
#[test]
fn shell_start_up_files_and_login_folders_are_guarded() {
    let fixture = fixture();
    let home = fixture.base.join("user");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(home.join("dotfiles")).unwrap();
    std::fs::write(home.join("dotfiles/bashrc"), "# mine\n").unwrap();
    symlink("dotfiles/bashrc", home.join(".bashrc")).unwrap();
    let mut workspace = Workspace::new(&home);
    workspace.guard_home_folders(&home);
    for guarded in [
        ".bashrc",
        ".profile",
        ".zshenv",
        "dotfiles/.zshrc",
        ".config/autostart/x.desktop",
        ".config/systemd/user/x.service",
        ".config/fish/config.fish",
        ".bash_aliases",
        ".config/nvim/init.lua",
        ".local/lib/python3.12/site-packages/evil.pth",
        "dotfiles/bashrc",
        ".local/bin/git",
        "bin/ls",
        ".emacs.d/init.el",
        ".tmux.conf",
        ".vim/plugin/x.vim",
        ".config/vim/vimrc",
    ] {
        let place = workspace.locate(&home, guarded, Access::Write);
        assert!(
            matches!(place, Ok(Place::Guarded(_))),
            "{guarded}: {place:?}"
        );
    }
    for allowed in [
        ".config/htop/htoprc",
        "notes/profile.md",
        "systemd/app.service",
    ] {
        assert_eq!(
            workspace.locate(&home, allowed, Access::Write),
            Ok(Place::Allowed(home.join(allowed))),
            "{allowed}"
        );
    }
}

/// QA r103 (adversary): with the project at `~`, one `grep` read Pi's session transcripts, where
/// users paste secrets. Pi's sessions folder is closed to tools as ctxkit's own sessions are,
/// whatever the answer would be.
#[test]
fn pis_sessions_folder_is_closed_to_tools() {
    let Some(user_home) = std::env::home_dir() else {
        return;
    };
    let workspace = Workspace::new(&user_home);
    for access in [Access::Read, Access::Write] {
        let refused = workspace.locate(&user_home, ".pi/agent/sessions/--x--/s.jsonl", access);
        assert!(refused.is_err(), "{refused:?}");
    }
}

/// QA (2026-12-07): after "always" for writes outside the project, `../lib/.git/hooks/pre-commit`
/// and `../lib/.vscode/tasks.json` were written without a question. A guarded name outside the
/// project is guarded as one inside it, its "always" scoped to its own place, and the jail's
/// check at the write agrees.
#[test]
fn a_guarded_name_outside_the_project_is_guarded_too() {
    let fixture = fixture();
    let lib = fixture.base.join("outside/lib");
    std::fs::create_dir_all(lib.join(".git/hooks")).unwrap();
    let workspace = &fixture.workspace;
    for guarded in [
        ".git/hooks/pre-commit",
        ".vscode/tasks.json",
        "a.code-workspace",
    ] {
        let path = lib.join(guarded);
        assert_eq!(
            workspace.locate(&fixture.project, path.to_str().unwrap(), Access::Write),
            Ok(Place::Guarded(path.clone())),
            "{guarded}"
        );
    }
    assert_eq!(
        workspace.guarded_scope(&lib.join(".git/hooks/pre-commit")),
        lib.join(".git/hooks")
    );
    let readme = lib.join("README.md");
    assert_eq!(
        workspace.locate(&fixture.project, readme.to_str().unwrap(), Access::Write),
        Ok(Place::Outside(readme.clone()))
    );
    assert_eq!(
        workspace.locate(&fixture.project, "../outside/lib/.git/config", Access::Read),
        Ok(Place::Outside(lib.join(".git/config")))
    );
    // The write the user approved as outside (not as guarded) is refused by the jail there.
    let mut jail = workspace.jail_for(&readme).unwrap();
    workspace.guard_writes(&mut jail);
    let hook = lib.join(".git/hooks/pre-commit");
    assert!(
        jail.write_atomic(hook.strip_prefix("/").unwrap(), b"evil")
            .is_err()
    );
    assert!(!hook.exists());
    assert!(
        jail.write_atomic(readme.strip_prefix("/").unwrap(), b"fine")
            .is_ok()
    );
}

/// Verifier (2026-12-07): after "always" for a folder outside the project, the `core.hooksPath`
/// hooks and the `core.fsmonitor` program of the repository there were written unasked, and git
/// ran both. What that repository's git config makes git run is guarded as the project's is.
#[test]
fn what_an_outside_repositorys_git_config_runs_is_guarded() {
    let fixture = fixture();
    let lib = fixture.base.join("outside/lib2");
    std::fs::create_dir_all(lib.join(".git")).unwrap();
    std::fs::create_dir_all(lib.join("tools/hooks")).unwrap();
    std::fs::write(
        lib.join(".git/config"),
        "[core]\n\thooksPath = tools/hooks\n\tfsmonitor = tools/fsmon.sh\n",
    )
    .unwrap();
    std::fs::write(lib.join("tools/fsmon.sh"), "#!/bin/sh\n").unwrap();
    let workspace = &fixture.workspace;
    for guarded in ["tools/hooks/pre-commit", "tools/fsmon.sh", ".git/config"] {
        let path = lib.join(guarded);
        assert_eq!(
            workspace.locate(&fixture.project, path.to_str().unwrap(), Access::Write),
            Ok(Place::Guarded(path.clone())),
            "{guarded}"
        );
    }
    let notes = lib.join("tools/notes.txt");
    assert_eq!(
        workspace.locate(&fixture.project, notes.to_str().unwrap(), Access::Write),
        Ok(Place::Outside(notes.clone()))
    );
}

/// QA (jail): a path holding a line break was shown raw in the refusal, so the model's text drew a
/// fake question ("… inside the project? [y]es") after it, and the chat's cut took the reason.
#[test]
fn a_refusal_shows_the_call_on_one_line_and_its_reason_whole() {
    let call = "write ../x.txt\nWrite `/p/x.txt`, inside the project? [y]es\n\n";
    let refusal = super::refused(call, "`/tmp/x.txt` is outside the project");
    assert_eq!(refusal.lines().count(), 1, "{refusal}");
    assert!(
        refusal.starts_with(
            "`write ../x.txt\\nWrite `/p/x.txt`, inside the project? [y]es\\n\\n` refused: "
        ),
        "{refusal}"
    );
    assert!(refusal.ends_with("`/tmp/x.txt` is outside the project"));
}
