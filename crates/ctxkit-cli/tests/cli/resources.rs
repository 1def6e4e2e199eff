//! Snapshot tests of `ctxkit config`, `resources`, `prompt` and the package commands, each in a
//! temp world (`CTXKIT_HOME`, `HOME`, `TMPDIR` and the project cwd all inside it), plus two real
//! processes running `ctxkit config set` at once.

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) struct World {
    _temp: tempfile::TempDir,
    pub(crate) root: PathBuf,
}

impl World {
    pub(crate) fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temp.path()).unwrap();
        for directory in ["home", "user", "proj", "tmp"] {
            std::fs::create_dir_all(root.join(directory)).unwrap();
        }
        Self { _temp: temp, root }
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub(crate) fn project(&self) -> PathBuf {
        self.root.join("proj")
    }

    pub(crate) fn write(&self, relative: &str, contents: &str) {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
        command
            .args(args)
            .current_dir(self.project())
            .env("CTXKIT_HOME", self.home())
            .env("HOME", self.root.join("user"))
            .env("TMPDIR", self.root.join("tmp"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("CTXKIT_OFFLINE")
            .env_remove("CTXKIT_SERVER_TOKEN")
            .env_remove("CTXKIT_SESSIONS_DIR");
        command
    }

    pub(crate) fn ctxkit(&self, args: &[&str]) -> String {
        let output = self.command(args).output().unwrap();
        let mut text = format!("exit: {}\n", output.status.code().unwrap_or(-1));
        text.push_str(&String::from_utf8_lossy(&output.stdout));
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !stderr.is_empty() {
            text.push_str("--- stderr\n");
            text.push_str(&stderr);
        }
        text.replace(&self.root.display().to_string(), "[ROOT]")
    }
}

macro_rules! snapshot {
    ($value:expr) => {
        insta::assert_snapshot!($value);
    };
}

pub(crate) fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nUse it.\n")
}

#[test]
fn config_get_set_unset_list() {
    let world = World::new();
    let mut transcript = String::new();
    for args in [
        &["config", "set", "compaction.reserveTokens", "8192"][..],
        &["config", "set", "treeFilterMode", "all", "--project"],
        &["config", "set", "--force", "myTeam.flag", "true"],
        &["config", "get", "compaction.reserveTokens"],
        &["config", "get", "treeFilterMode", "--json"],
        &["config", "get", "compaction.keepRecentTokens"],
        &["config", "get", "nothing.here"],
        &["config", "list", "--project", "--json"],
        &["config", "set", "compaction.reserveTokens", "lots"],
        &["config", "unset", "treeFilterMode", "--project"],
        &["config", "get", "treeFilterMode", "--project"],
    ] {
        transcript.push_str(&format!("$ ctxkit {}\n", args.join(" ")));
        transcript.push_str(&world.ctxkit(args));
    }
    snapshot!(transcript);
    let global = std::fs::read_to_string(world.home().join("settings.json")).unwrap();
    assert!(global.contains("\"reserveTokens\": 8192"), "{global}");
    assert!(global.contains("\"myTeam\""), "{global}");
}

#[test]
fn broken_settings_file_is_reported_and_left_alone() {
    let world = World::new();
    world.write("home/settings.json", "{ invalid");
    let output = world.ctxkit(&["config", "set", "theme", "dark"]);
    snapshot!(output);
    assert_eq!(
        std::fs::read_to_string(world.home().join("settings.json")).unwrap(),
        "{ invalid"
    );
}

/// A world with resources in every place, a broken skill, an invalid theme and a package that
/// is not installed.
fn furnished() -> World {
    let world = World::new();
    world.write("home/skills/alpha/SKILL.md", &skill("alpha", "Alpha helps"));
    world.write(
        "home/skills/broken/SKILL.md",
        "---\nname: broken\n---\nno description\n",
    );
    world.write("home/AGENTS.md", "Global rules.\n");
    world.write("proj/AGENTS.md", "Project rules.\n");
    world.write(
        "proj/.ctxkit/prompts/review.md",
        "---\ndescription: Review the diff\n---\nReview $@\n",
    );
    world.write("proj/.ctxkit/themes/bad.json", r#"{"name":"bad"}"#);
    world.write("proj/.ctxkit/extensions/hello.ts", "export default 1;\n");
    world.write(
        "proj/.ctxkit/settings.json",
        r#"{"packages":["npm:not-installed-yet"],"mysteryKey":1}"#,
    );
    world
}

#[test]
fn resources_human_and_json() {
    let world = furnished();
    // The project's prompt templates load once it is trusted (`prompt_assembles…` shows them
    // waiting).
    world.ctxkit(&["trust", "--yes"]);
    snapshot!(world.ctxkit(&["resources"]));
    snapshot!(world.ctxkit(&["resources", "--json"]));
}

#[test]
fn prompt_assembles_base_context_and_skills() {
    let world = furnished();
    snapshot!(world.ctxkit(&["prompt"]));
}

pub(crate) fn git(world: &World, cwd: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env("HOME", world.root.join("user"))
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn package_commands() {
    let world = World::new();
    world.write(
        "proj/local-pack/skills/beta/SKILL.md",
        &skill("beta", "Beta"),
    );
    world.write(
        "repos/team/pack/skills/gamma/SKILL.md",
        &skill("gamma", "Gamma"),
    );
    let repo = world.root.join("repos/team/pack");
    git(&world, &repo, &["init", "-q", "-b", "main"]);
    git(&world, &repo, &["add", "-A"]);
    git(&world, &repo, &["commit", "-q", "-m", "init"]);
    let git_source = format!("git:file://{}", repo.display());
    let mut transcript = String::new();
    for args in [
        &["install", "./local-pack", "-l"][..],
        &["install", git_source.as_str()],
        &["list"],
        &["list", "--json"],
        &["update"],
        &["update", "npm:unknown"],
        &["update", "self"],
        &["remove", "./local-pack"],
        &["uninstall", "./local-pack", "--local"],
        &["remove", git_source.as_str()],
        &["list"],
        &["install", "./missing"],
        &["install", "--evil"],
        &["install", "git:github.com/user/repo@--upload-pack=x"],
        &["install"],
    ] {
        transcript.push_str(&format!("$ ctxkit {}\n", args.join(" ")));
        transcript.push_str(&world.ctxkit(args));
    }
    snapshot!(transcript.replace(&world.root.display().to_string(), "[ROOT]"));
}

/// QA: `--offline` (and `CTXKIT_OFFLINE=1`) did not stop an explicit `ctxkit install`, which
/// cloned a git source over the network although the README says offline mode installs nothing.
/// Now an npm or git source is refused in one line with a hint, and nothing is recorded; a local
/// path (no network) still installs.
#[test]
fn offline_mode_refuses_an_install_that_needs_the_network() {
    let world = World::new();
    world.write("repos/pack/skills/gamma/SKILL.md", &skill("gamma", "Gamma"));
    let repo = world.root.join("repos/pack");
    git(&world, &repo, &["init", "-q", "-b", "main"]);
    git(&world, &repo, &["add", "-A"]);
    git(&world, &repo, &["commit", "-q", "-m", "init"]);
    let git_source = format!("git:file://{}", repo.display());
    let output = world.ctxkit(&["install", &git_source, "--offline"]);
    assert_eq!(
        output,
        "exit: 2\n--- stderr\nerror: Offline mode is on: `git:file://[ROOT]/repos/pack` was not \
         installed\nhint: installing needs the network: unset `CTXKIT_OFFLINE` and drop \
         `--offline`\n"
    );
    let output = world
        .command(&["install", "npm:left-pad"])
        .env("CTXKIT_OFFLINE", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(!world.home().join("settings.json").exists());
    assert!(!world.home().join("git").exists());
    world.write(
        "proj/local-pack/skills/beta/SKILL.md",
        &skill("beta", "Beta"),
    );
    let output = world.ctxkit(&["install", "./local-pack", "--offline"]);
    assert!(
        output.starts_with("exit: 0\nInstalled ./local-pack"),
        "{output}"
    );
}

#[test]
fn install_help_is_clear() {
    let world = World::new();
    let help = world.ctxkit(&["install", "--help"]);
    let help = help.replace(&world.home().display().to_string(), "[HOME]");
    snapshot!(help);
}

#[test]
fn concurrent_config_set_from_two_processes_loses_no_key() {
    let world = World::new();
    let keys_per_process = 12;
    let handles: Vec<_> = ["left", "right"]
        .into_iter()
        .map(|side| {
            let commands: Vec<Command> = (0..keys_per_process)
                .map(|index| {
                    world.command(&[
                        "config",
                        "set",
                        "--force",
                        &format!("race.{side}{index}"),
                        "1",
                    ])
                })
                .collect();
            std::thread::spawn(move || {
                for mut command in commands {
                    let output = command.output().unwrap();
                    assert!(output.status.success(), "{output:?}");
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let text = std::fs::read_to_string(world.home().join("settings.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let race = value["race"].as_object().unwrap();
    assert_eq!(race.len(), 2 * keys_per_process, "{text}");
}

/// Issue 17, defect 7: a cloned project's hooks ran without asking and saw the provider keys.
#[test]
fn project_hooks_run_only_once_trusted_and_never_see_secrets() {
    let world = World::new();
    let dump = world.root.join("tmp/hook-env");
    let hooks = serde_json::json!({"hooks": [{
        "command": ["sh", "-c", format!("cat > /dev/null; env > {}", dump.display())],
        "events": ["before_compact"],
    }]});
    world.write("proj/.ctxkit/settings.json", &hooks.to_string());
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/corpus/good-large-realistic.jsonl");
    // Hooks run in the session's directory: point the header at the project.
    let text = std::fs::read_to_string(&corpus).unwrap().replacen(
        "/home/dev/src/inventory-service",
        &world.project().display().to_string(),
        1,
    );
    for name in ["one.jsonl", "two.jsonl"] {
        std::fs::write(world.project().join(name), &text).unwrap();
    }
    let compact = |file: &str| {
        let output = world
            .command(&["compact", file, "--keep-recent-tokens", "200"])
            .env("ACME_API_KEY", "acme-SECRET-0123456789")
            .env("GITHUB_TOKEN", "ghp_SECRET0123456789")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };

    let listing = world.ctxkit(&["resources"]);
    assert!(
        listing.contains("project, not trusted: not run"),
        "{listing}"
    );
    let stderr = compact("one.jsonl");
    assert!(stderr.contains("this project is not trusted"), "{stderr}");
    assert!(!dump.exists(), "an untrusted hook ran");

    let trusted = world.ctxkit(&["trust", "--yes"]);
    assert!(trusted.contains("Trusted the settings of"), "{trusted}");
    assert!(world.ctxkit(&["resources"]).contains("[project, trusted]"));
    compact("two.jsonl");
    let environment = std::fs::read_to_string(&dump).expect("the trusted hook ran");
    assert!(environment.contains("PATH="));
    assert!(!environment.contains("SECRET"), "{environment}");

    // Changed hooks need trusting again.
    world.write(
        "proj/.ctxkit/settings.json",
        &hooks
            .to_string()
            .replace("cat > /dev/null", "cat>/dev/null"),
    );
    assert!(
        world
            .ctxkit(&["resources"])
            .contains("project, not trusted")
    );
}

/// Issue 17, defect 8: credentials in package sources and `llm.baseUrl` were printed, stored in
/// project settings and named a directory.
#[test]
fn credentials_in_urls_are_never_shown_nor_written_to_project_settings() {
    let world = World::new();
    let refused = world.ctxkit(&[
        "install",
        "--local",
        "git:user:hunter2secret@git.example/team/repo",
    ]);
    assert!(refused.starts_with("exit: 3"), "{refused}");
    assert!(!refused.contains("hunter2secret"), "{refused}");
    assert!(!world.project().join(".ctxkit/settings.json").exists());
    let refused = world.ctxkit(&[
        "config",
        "set",
        "--project",
        "llm.baseUrl",
        "https://user:hunter2secret@proxy.example/v1",
    ]);
    assert!(refused.contains("credentials"), "{refused}");
    assert!(!refused.contains("hunter2secret"), "{refused}");
    let set = world.ctxkit(&[
        "config",
        "set",
        "llm.baseUrl",
        "https://user:hunter2secret@proxy.example/v1",
    ]);
    assert!(set.starts_with("exit: 0"), "{set}");
    for listing in [
        world.ctxkit(&["config", "list"]),
        world.ctxkit(&["config", "list", "--json"]),
        world.ctxkit(&["config", "get", "llm.baseUrl"]),
    ] {
        assert!(!listing.contains("hunter2secret"), "{listing}");
        assert!(listing.contains("<redacted>@proxy.example"), "{listing}");
    }
}

/// Issue 33, item 14: `config set` replaced a symlinked `settings.json` with a regular file and
/// rewrote `123456789012345678901234567890` as `1.2345678901234568e+29`.
#[cfg(unix)]
#[test]
fn config_set_writes_through_a_symlink_and_keeps_numbers_as_written() {
    let world = World::new();
    world.write(
        "dotfiles/ctxkit.json",
        r#"{"deviceId": 123456789012345678901234567890, "theme": "light"}"#,
    );
    std::os::unix::fs::symlink(
        world.root.join("dotfiles/ctxkit.json"),
        world.home().join("settings.json"),
    )
    .unwrap();
    let set = world.ctxkit(&["config", "set", "theme", "dark"]);
    assert!(set.starts_with("exit: 0"), "{set}");
    let link = std::fs::symlink_metadata(world.home().join("settings.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let written = std::fs::read_to_string(world.root.join("dotfiles/ctxkit.json")).unwrap();
    assert!(
        written.contains("\"deviceId\": 123456789012345678901234567890"),
        "{written}"
    );
    assert!(written.contains("\"theme\": \"dark\""), "{written}");
    let get = world.ctxkit(&["config", "get", "deviceId"]);
    // Read as the nearest number a JSON value carries (the file keeps every digit).
    assert!(get.contains("1.2345678901234568e+29"), "{get}");
}

/// QA: `ctxkit chat` said at startup only what went wrong with context files; a refused skill
/// symlink, a name collision and a missing project package were silent there (`ctxkit resources`
/// showed them). The chat and the server name every resource problem once, at most eight lines.
/// (The chat tries to install the missing package, through an `npmCommand` that fails here
/// without the network; the server names it.)
#[test]
fn chat_and_serve_name_the_resource_problems_at_startup() {
    let world = World::new();
    world.write(
        "home/settings.json",
        &serde_json::json!({
            "npmCommand": ["false"],
            "defaultProvider": "mock", "defaultModel": "mock/m",
            "llm": {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1",
                    "apiKey": "sk-unused", "models": [{"provider": "mock", "id": "m",
                    "contextWindow": 100000, "maxOutput": 2048}]}
        })
        .to_string(),
    );
    world.write("home/skills/dup/SKILL.md", &skill("dup", "The user's"));
    world.write(
        "proj/.ctxkit/skills/dup/SKILL.md",
        &skill("dup", "The project's"),
    );
    world.write("elsewhere/SKILL.md", &skill("linked", "Outside"));
    std::fs::create_dir_all(world.root.join("proj/.ctxkit/skills/linked")).unwrap();
    std::os::unix::fs::symlink(
        world.root.join("elsewhere/SKILL.md"),
        world.root.join("proj/.ctxkit/skills/linked/SKILL.md"),
    )
    .unwrap();
    world.write(
        "proj/.ctxkit/settings.json",
        r#"{"packages":["npm:not-installed-yet"]}"#,
    );
    // An untrusted project's npm package waits for trust; trusted, it is one not installed yet.
    assert!(world.ctxkit(&["trust", "--yes"]).starts_with("exit: 0"));
    let expected = [
        "warning: `[ROOT]/proj/.ctxkit/skills/linked/SKILL.md` leads out of",
        "collision: skill \"dup\": `[ROOT]/home/skills/dup/SKILL.md` is hidden by \
         `[ROOT]/proj/.ctxkit/skills/dup/SKILL.md`",
    ];
    let chat_failure = "error: Package `npm:not-installed-yet` could not be loaded: `false install \
                        not-installed-yet --prefix [ROOT]/proj/.ctxkit/npm` failed with code 1";
    let serve_missing = "error: Package `npm:not-installed-yet` is not installed in \
                         `[ROOT]/proj/.ctxkit/npm/node_modules/not-installed-yet`: `ctxkit update` \
                         installs it (`[ROOT]/proj/.ctxkit`)";
    for (args, package_line) in [
        (&["chat", "--script", "--no-session"][..], chat_failure),
        (&["serve", "--stdio"], serve_missing),
    ] {
        let output = world.ctxkit(args);
        assert!(output.starts_with("exit: 0"), "{output}");
        for line in expected.into_iter().chain([package_line]) {
            assert_eq!(output.matches(line).count(), 1, "{line}\n{output}");
        }
    }
    for index in 0..8 {
        world.write(
            &format!("proj/.ctxkit/skills/broken{index}/SKILL.md"),
            "---\n---\n",
        );
    }
    let output = world.ctxkit(&["chat", "--script", "--no-session"]);
    assert!(
        output.contains("… and 3 more resource problem(s): `ctxkit resources` lists them"),
        "{output}"
    );
}

/// QA (2026-12-05): a package path that does not exist was skipped without a word.
#[test]
fn a_missing_local_package_is_a_diagnostic() {
    let world = World::new();
    world.write(
        "proj/.ctxkit/settings.json",
        r#"{"packages": ["./nonexistent"]}"#,
    );
    let listing = world.ctxkit(&["resources"]);
    assert!(
        listing.contains(
            "error: Package `./nonexistent`: `[ROOT]/proj/.ctxkit/nonexistent` does not exist"
        ),
        "{listing}"
    );
}

/// QA r98: a package listed in the settings but not installed (settings copied from another
/// machine) stayed out of the chat, named only as "not installed", with no hint. As Pi 1.6, the
/// chat installs it at startup and says so; an untrusted project's git package still waits for
/// trust; `ctxkit resources` installs nothing and names the missing folder and `ctxkit update`.
#[test]
fn chat_installs_a_missing_configured_package_at_startup() {
    let world = World::new();
    world.write("repo/skills/gits/SKILL.md", &skill("gits", "From git"));
    let repo = world.root.join("repo");
    git(&world, &repo, &["init", "-q", "-b", "main"]);
    git(&world, &repo, &["add", "-A"]);
    git(&world, &repo, &["commit", "-q", "-m", "init"]);
    let source = format!("git:file://{}", repo.display());
    world.write(
        "home/settings.json",
        &serde_json::json!({
            "packages": [source],
            "defaultProvider": "mock", "defaultModel": "mock/m",
            "llm": {"api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1",
                    "apiKey": "sk-unused", "models": [{"provider": "mock", "id": "m",
                    "contextWindow": 100000, "maxOutput": 2048}]}
        })
        .to_string(),
    );
    world.write(
        "proj/.ctxkit/settings.json",
        r#"{"packages":["git:github.com/acme/held"]}"#,
    );
    let relative = repo.strip_prefix("/").unwrap();
    let checkout = world.home().join("git/file").join(relative);
    let shown = checkout
        .display()
        .to_string()
        .replace(&world.root.display().to_string(), "[ROOT]");

    let listing = world.ctxkit(&["resources"]);
    assert!(
        listing.contains(&format!(
            "Package `git:file://[ROOT]/repo` is not installed in `{shown}`: `ctxkit update` \
             installs it"
        )),
        "{listing}"
    );
    assert!(!checkout.exists(), "listing installs nothing");

    let output = world.ctxkit(&["chat", "--script", "--no-session"]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains("Installing git:file://[ROOT]/repo..."),
        "{output}"
    );
    assert!(!output.contains("not installed"), "{output}");
    assert!(checkout.join("skills/gits/SKILL.md").exists(), "{output}");
    assert!(
        !world.project().join(".ctxkit/git").exists(),
        "an untrusted project's package waits for trust"
    );
    let prompt = world.ctxkit(&["prompt"]);
    assert!(prompt.contains("<name>gits</name>"), "{prompt}");
}

/// QA (2026-12-07): `packages` given as a string (or an entry of the wrong shape) made `ctxkit
/// list` say "No packages installed." without a word; it says the setting is not valid.
#[test]
fn list_says_when_the_packages_setting_is_not_valid() {
    let world = World::new();
    world.write(
        "home/settings.json",
        &serde_json::json!({"packages": "../pkgs/good"}).to_string(),
    );
    let listed = world.ctxkit(&["list"]);
    assert!(
        listed.contains("No packages listed: the `packages` setting is not valid (above).")
            && listed.contains("warning: Invalid value for `packages`"),
        "{listed}"
    );
    assert!(!listed.contains("No packages installed"), "{listed}");
}
