//! The settings files as a QA pass attacked them: a project's `.ctxkit/settings.json` that is a FIFO,
//! a link to a device or out of the project, or huge; a settings lock that is a link; a user's file
//! that does not parse; secrets in `config get`. Each runs the real binary in a temp home.

use std::os::unix::fs::symlink;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::resources::World;

/// Runs `command`, killing it (and failing the test) when it has not ended in 30 seconds.
fn bounded(mut command: Command) -> Output {
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("`{command:?}` did not end in 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn mkfifo(path: &std::path::Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

/// QA finding 1: a FIFO at `.ctxkit/settings.json` hung `config`, `chat`, `serve` and `resources`;
/// a link to `/dev/zero` grew to gigabytes; a huge file took a minute and gigabytes.
#[test]
fn a_project_settings_file_that_is_no_json_file_is_refused_at_once() {
    let world = World::new();
    let folder = world.project().join(".ctxkit");
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("settings.json");
    mkfifo(&file);
    for args in [&["config", "list"][..], &["resources"]] {
        let output = bounded(world.command(args));
        assert!(output.status.success(), "{output:?}");
        let stderr = stderr(&output);
        assert!(stderr.contains("is not a regular file"), "{stderr}");
        assert!(stderr.contains("hint: replace `"), "{stderr}");
    }
    std::fs::remove_file(&file).unwrap();
    symlink("/dev/zero", &file).unwrap();
    let output = bounded(world.command(&["config", "list"]));
    assert!(stderr(&output).contains("leads out of"), "{output:?}");
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, vec![b' '; 5 << 20]).unwrap();
    let output = bounded(world.command(&["config", "list"]));
    assert!(
        stderr(&output).contains("is larger than 4 MiB"),
        "{output:?}"
    );
}

/// QA 2026-12-07: the user's `settings.json` as a FIFO hung every command (`sessions`, `info`,
/// `config list`): `sessionDir` was read from it by a reader of its own, which also passed over a
/// file with a byte order mark. It is read as the settings are.
#[test]
fn the_users_settings_file_as_a_fifo_hangs_nothing_and_a_bom_keeps_session_dir() {
    let world = World::new();
    std::fs::create_dir_all(world.home()).unwrap();
    let file = world.home().join("settings.json");
    mkfifo(&file);
    for args in [&["sessions"][..], &["config", "list"]] {
        let output = bounded(world.command(args));
        assert!(output.status.success(), "{args:?}: {output:?}");
    }
    std::fs::remove_file(&file).unwrap();
    let sessions = world.root.join("kept-here");
    let text = format!(
        "\u{feff}{}",
        serde_json::json!({"sessionDir": sessions.display().to_string()})
    );
    std::fs::write(&file, text).unwrap();
    let demo =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-session.jsonl");
    let project = world.project().display().to_string();
    let args = [
        "fork-from",
        demo.to_str().unwrap(),
        "--cwd",
        project.as_str(),
    ];
    let output = bounded(world.command(&args));
    assert!(output.status.success(), "{output:?}");
    let written: Vec<_> = walkdir_jsonl(&sessions);
    assert_eq!(written.len(), 1, "{output:?}");
    assert!(!world.home().join("sessions").exists(), "{output:?}");
}

/// The `.jsonl` files under `folder`, at any depth.
fn walkdir_jsonl(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path
                .extension()
                .is_some_and(|extension| extension == "jsonl")
            {
                found.push(path);
            }
        }
    }
    found
}

/// The user's own settings file may be a link into a dotfiles folder: read and written through.
#[test]
fn the_users_settings_may_be_a_link_anywhere() {
    let world = World::new();
    world.write("dotfiles/ctxkit.json", r#"{"theme": "dark"}"#);
    symlink(
        world.root.join("dotfiles/ctxkit.json"),
        world.home().join("settings.json"),
    )
    .unwrap();
    let output = bounded(world.command(&["config", "get", "theme"]));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "dark\n",
        "{output:?}"
    );
    let output = bounded(world.command(&["config", "set", "theme", "light"]));
    assert!(output.status.success(), "{output:?}");
    let written = std::fs::read_to_string(world.root.join("dotfiles/ctxkit.json")).unwrap();
    assert!(written.contains("light"), "{written}");
}

/// Started in the home folder, `.ctxkit` is ctxkit's home: the user's settings are the user's,
/// never an untrusted project's held back with a warning, and `--project` says there is none.
#[test]
fn started_in_the_home_folder_the_users_settings_are_the_users() {
    let world = World::new();
    let user = world.root.join("user");
    let run = |args: &[&str]| {
        let mut command = world.command(args);
        command
            .current_dir(&user)
            .env_remove("CTXKIT_HOME")
            .env("HOME", &user);
        bounded(command)
    };
    let output = run(&["config", "set", "shellPath", "/bin/sh"]);
    assert!(output.status.success(), "{output:?}");
    let output = run(&["config", "get", "shellPath"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "/bin/sh\n");
    assert!(!stderr(&output).contains("not trusted"), "{output:?}");
    let output = run(&["config", "list"]);
    let listed = String::from_utf8_lossy(&output.stdout);
    assert!(!listed.contains("(project)"), "{listed}");
    assert!(!stderr(&output).contains("not trusted"), "{output:?}");
    let output = run(&["config", "set", "--project", "theme", "dark"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        stderr(&output).contains("no project settings"),
        "{output:?}"
    );
    let written = std::fs::read_to_string(user.join(".ctxkit/settings.json")).unwrap();
    assert!(!written.contains("theme"), "{written}");
}

/// QA finding 2: a committed link made `install -l` write into the user's settings and `config set
/// --project` rewrite any file of the user's (or create a dangling link's target); a linked lock
/// created a file elsewhere.
#[test]
fn a_projects_settings_write_never_follows_a_committed_link_out() {
    let world = World::new();
    let user_settings = r#"{"theme": "light"}"#;
    world.write("home/settings.json", user_settings);
    world.write("user/victim.json", "{}");
    world.write("proj/pkg/package.json", r#"{"name": "pkg"}"#);
    let folder = world.project().join(".ctxkit");
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("settings.json");
    let attempts: [(std::path::PathBuf, &[&str]); 3] = [
        (
            world.home().join("settings.json"),
            &["install", "-l", "./pkg"],
        ),
        (
            world.root.join("user/victim.json"),
            &["config", "set", "--project", "theme", "dark"],
        ),
        (
            world.root.join("user/created.json"),
            &["config", "set", "--project", "theme", "dark"],
        ),
    ];
    for (target, args) in attempts {
        symlink(&target, &file).unwrap();
        let output = bounded(world.command(args));
        assert_eq!(output.status.code(), Some(3), "{output:?}");
        let stderr = stderr(&output);
        assert!(stderr.contains("leads out of"), "{stderr}");
        assert!(
            stderr.contains("hint: a project's settings stay inside"),
            "{stderr}"
        );
        std::fs::remove_file(&file).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(world.home().join("settings.json")).unwrap(),
        user_settings
    );
    assert_eq!(
        std::fs::read_to_string(world.root.join("user/victim.json")).unwrap(),
        "{}"
    );
    assert!(!world.root.join("user/created.json").exists());
    // The earlier attempts locked the folder's own lock file, and removed it when done.
    assert!(!folder.join("settings.json.lock").exists());
    symlink(
        world.root.join("user/lock"),
        folder.join("settings.json.lock"),
    )
    .unwrap();
    let output = bounded(world.command(&["config", "set", "--project", "theme", "dark"]));
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert!(stderr(&output).contains("is a symlink"), "{output:?}");
    assert!(!world.root.join("user/lock").exists());
    assert!(!file.exists());
}

/// QA 2026-12-07: a project's `.ctxkit` that is itself a link elsewhere was refused with the hint
/// "put the file itself there instead of a link", which pointed back into the link. The hint now
/// says the folder is the link; nothing is read or written through it.
#[test]
fn a_linked_project_folder_is_named_as_the_link() {
    let world = World::new();
    world.write("elsewhere/settings.json", r#"{"theme": "light"}"#);
    symlink(
        world.root.join("elsewhere"),
        world.project().join(".ctxkit"),
    )
    .unwrap();
    let output = bounded(world.command(&["config", "set", "--project", "theme", "dark"]));
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let stderr = stderr(&output);
    assert!(
        stderr.contains(&format!(
            "hint: `{}/proj/.ctxkit` is a link: make it a folder of its own in the project",
            world.root.display()
        )),
        "{stderr}"
    );
    // The error itself says why, with that hint, not "could not be loaded … fix it by hand".
    let error = stderr
        .lines()
        .find(|line| line.starts_with("error:"))
        .unwrap();
    assert!(error.contains("leads out of"), "{stderr}");
    let last_hint = stderr
        .lines()
        .rfind(|line| line.starts_with("hint:"))
        .unwrap();
    assert!(
        last_hint.contains("is a link: make it a folder"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(world.root.join("elsewhere/settings.json")).unwrap(),
        r#"{"theme": "light"}"#
    );
}

/// Runs `ctxkit serve --stdio` with a `shutdown` request on its input.
fn serve(world: &World) -> Output {
    use std::io::Write as _;
    let mut command = world.command(&["serve", "--stdio"]);
    command.stdin(std::process::Stdio::piped());
    command.stdout(std::process::Stdio::piped());
    command.stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The server may have refused and gone already.
    let _ = stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}\n");
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// QA finding 3: a trailing comma in the user's settings dropped the whole file with one warning
/// and no hint, and `chat`/`serve` started with defaults, the user's hooks and budgets ignored.
#[test]
fn a_settings_file_that_does_not_parse_stops_the_commands_that_run_a_model() {
    let world = World::new();
    world.write(
        "home/settings.json",
        "{\n  \"hooks\": [],\n  \"compaction\": {\"reserveTokens\": 1000,},\n}\n",
    );
    let position = "at line 3, column 40: trailing comma";
    let listed = bounded(world.command(&["config", "list"]));
    assert!(listed.status.success(), "{listed:?}");
    let warning = stderr(&listed);
    assert!(
        warning.contains(&format!(
            "warning: Invalid JSON in settings file `{}/home/settings.json` {position}",
            world.root.display()
        )),
        "{warning}"
    );
    assert!(warning.contains("hint: fix `"), "{warning}");
    assert!(
        warning.contains("commands that compact or run a model refuse to start"),
        "{warning}"
    );
    let served = serve(&world);
    assert_eq!(served.status.code(), Some(3), "{served:?}");
    assert!(served.stdout.is_empty(), "{served:?}");
    let refusal = stderr(&served);
    assert!(
        refusal.contains(&format!(
            "error: Invalid JSON in settings file `{}/home/settings.json` {position}",
            world.root.display()
        )),
        "{refusal}"
    );
    assert!(refusal.contains("hint: fix `"), "{refusal}");
    assert!(
        refusal.contains("check it with `ctxkit config list`"),
        "{refusal}"
    );
    // A project's file that does not parse stops them too (its budgets apply untrusted).
    world.write("home/settings.json", "{}");
    world.write("proj/.ctxkit/settings.json", "{ \"compaction\": ");
    let served = serve(&world);
    assert_eq!(served.status.code(), Some(3), "{served:?}");
    assert!(
        stderr(&served).contains("proj/.ctxkit/settings.json` at line 1"),
        "{served:?}"
    );
}

/// A settings file that does not parse was reported twice by `ctxkit chat` (a warning as the
/// files were read, then the refusal saying the same): the commands that refuse say it once, as
/// the error naming the file and line, with its hint; a read-only command still warns.
#[test]
fn a_settings_file_that_does_not_parse_is_reported_once_by_the_command_it_stops() {
    let world = World::new();
    world.write(
        "home/settings.json",
        "{\"defaultModel\": \"ollama/qwen3\",\n  \"compaction\": {,}\n}\n",
    );
    world.write(
        "proj/s.jsonl",
        &std::fs::read_to_string(crate::corpus("good-branches.jsonl")).unwrap(),
    );
    let file = format!("{}/home/settings.json", world.root.display());
    let refusing: [&[&str]; 4] = [
        &["chat", "--script"],
        &["compact", "s.jsonl"],
        &["branch", "s.jsonl", "--to", "x"],
        &["serve", "--stdio"],
    ];
    for args in refusing {
        let mut command = world.command(args);
        command.stdin(std::process::Stdio::null());
        let output = bounded(command);
        assert_eq!(output.status.code(), Some(3), "{args:?}: {output:?}");
        let said = stderr(&output);
        assert_eq!(said.matches("Invalid JSON").count(), 1, "{args:?}: {said}");
        assert!(
            said.starts_with(&format!(
                "error: Invalid JSON in settings file `{file}` at line 2, column 18"
            )),
            "{args:?}: {said}"
        );
        assert_eq!(said.matches("hint: ").count(), 1, "{args:?}: {said}");
        assert!(
            said.contains("check it with `ctxkit config list`"),
            "{said}"
        );
    }
    let listed = bounded(world.command(&["info", "s.jsonl"]));
    assert!(listed.status.success(), "{listed:?}");
    let warned = stderr(&listed);
    assert!(
        warned.starts_with(&format!("warning: Invalid JSON in settings file `{file}`")),
        "{warned}"
    );
}

/// QA finding 4: `config get llm` printed `llm.apiKey` and the header values in full, while the
/// settings table says "never printed" and `config list` masks them.
#[test]
fn config_get_masks_the_secrets_below_the_key_asked_for() {
    let world = World::new();
    world.write(
        "home/settings.json",
        r#"{"llm": {"apiKey": "sk-hidden-1", "headers": {"X-Token": "tok-hidden-2"}, "baseUrl": "http://x"}}"#,
    );
    for args in [
        &["config", "get", "llm"][..],
        &["config", "get", "llm", "--json"],
        &["config", "get", "llm.headers"],
    ] {
        let output = bounded(world.command(args));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{output:?}");
        assert!(!stdout.contains("hidden"), "{args:?}: {stdout}");
        assert!(stdout.contains("<redacted>"), "{args:?}: {stdout}");
    }
    // Asked for by name, as `docs/reliability.md` says.
    for (key, value) in [
        ("llm.apiKey", "sk-hidden-1"),
        ("llm.headers.X-Token", "tok-hidden-2"),
    ] {
        let output = bounded(world.command(&["config", "get", key]));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            format!("{value}\n")
        );
    }
}

/// `"compaction": 5` in an untrusted project: nothing of `compaction` applies untrusted (it
/// shapes what a model is sent), so it waits for trust like any other value, and only then is
/// it refused as invalid. Refused at once, it let a cloned project stop every chat until the
/// user edited its file (QA 2026-12-07).
#[test]
fn an_untrusted_projects_wrong_section_waits_for_trust_then_is_invalid() {
    let world = World::new();
    world.write("proj/.ctxkit/settings.json", r#"{"compaction": 5}"#);
    let output = bounded(world.command(&["config", "list"]));
    let untrusted = stderr(&output);
    assert!(untrusted.contains("ignored `compaction`"), "{untrusted}");
    assert!(!untrusted.contains("Invalid value"), "{untrusted}");
    assert!(world.ctxkit(&["trust", "--yes"]).starts_with("exit: 0"));
    let output = bounded(world.command(&["config", "list"]));
    let trusted = stderr(&output);
    assert!(
        trusted.contains("Invalid value for `compaction` in `")
            && trusted.contains("expected an object, found 5"),
        "{trusted}"
    );
}

/// QA finding 5b: keys ctxkit does not read in an `llm.models` entry were accepted without a word.
#[test]
fn keys_ctxkit_does_not_read_in_a_model_entry_are_warned_about() {
    let world = World::new();
    world.write(
        "home/settings.json",
        r#"{"llm": {"models": [{"provider": "p", "id": "m", "contextWindow": 1000, "baseUrl": "http://x"}]}}"#,
    );
    let output = bounded(world.command(&["config", "list"]));
    assert!(
        stderr(&output).contains("Unknown setting `llm.models[0].baseUrl`"),
        "{output:?}"
    );
}

/// A value of the wrong type named the file but not where in it: in a settings file of a hundred
/// lines the user had to search for the key. The warning and the refusal name its line, an
/// unknown key's warning too, and the file stays as it was.
#[test]
fn a_wrong_value_and_an_unknown_key_are_named_with_their_line() {
    let world = World::new();
    let text = "{\n  \"theme\": \"dark\",\n  \"compaction\": {\n    \"keepRecentTokens\": 5000,\n    \"reserveTokens\": \"lots\"\n  },\n  \"compactoin\": {}\n}\n";
    world.write("home/settings.json", text);
    let file = format!("{}/home/settings.json", world.root.display());
    let listed = bounded(world.command(&["config", "list"]));
    assert!(listed.status.success(), "{listed:?}");
    let warning = stderr(&listed);
    assert!(
        warning.contains(&format!(
            "warning: Invalid value for `compaction.reserveTokens` in `{file}` at line 5: expected"
        )),
        "{warning}"
    );
    assert!(
        warning.contains(&format!(
            "Unknown setting `compactoin` in `{file}` at line 7 (kept as is); did you mean `compaction`?"
        )),
        "{warning}"
    );
    let served = serve(&world);
    assert_eq!(served.status.code(), Some(3), "{served:?}");
    let refusal = stderr(&served);
    assert!(
        refusal.contains(&format!(
            "error: Invalid value for `compaction.reserveTokens` in `{file}` at line 5: expected"
        )),
        "{refusal}"
    );
    assert_eq!(
        std::fs::read_to_string(world.root.join("home/settings.json")).unwrap(),
        text
    );
}

/// QA (2026-12-07): a cloned project's settings of 20,000 unknown keys printed 20,000 warnings
/// before every command (and took 33 s to). A command says the first eight and how many more.
#[test]
fn a_flood_of_unknown_keys_is_warned_about_in_eight_lines_and_a_count() {
    let world = World::new();
    let keys: Vec<String> = (0..20)
        .map(|index| format!("\"mine{index}\": {index}"))
        .collect();
    world.write(
        "proj/.ctxkit/settings.json",
        &format!("{{{}}}", keys.join(", ")),
    );
    let output = bounded(world.command(&["sessions"]));
    let stderr = stderr(&output);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("warning: Unknown setting"))
        .collect();
    assert_eq!(warnings.len(), 8, "{stderr}");
    assert!(
        stderr
            .contains("warning: 12 more settings warnings (`ctxkit config list` shows every key)"),
        "{stderr}"
    );
}

/// QA 2026-12-07: a wrong value of a key read from the user's own settings alone, in a project's
/// file, stopped `compact` (and `chat`, `serve`), though the project's value never applies. It is
/// warned about as ignored and stops nothing.
#[test]
fn a_projects_wrong_value_of_a_user_only_key_stops_nothing() {
    let world = World::new();
    world.write("proj/.ctxkit/settings.json", r#"{"sessionDir": 5}"#);
    let demo =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-session.jsonl");
    let output = bounded(world.command(&["compact", demo.to_str().unwrap(), "--dry-run"]));
    assert!(output.status.success(), "{output:?}");
    let stderr = stderr(&output);
    assert!(stderr.contains("sessionDir"), "{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
    // And `config get` does not say the commands would refuse.
    let got = bounded(world.command(&["config", "get", "sessionDir"]));
    let said = self::stderr(&got);
    assert!(
        said.contains("(ignored: it is read from your own settings only)"),
        "{said}"
    );
    assert!(!said.contains("refuse to start"), "{said}");
}
