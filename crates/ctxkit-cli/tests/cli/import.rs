//! Snapshot tests of `ctxkit import` and `ctxkit sessions --from` on the fixtures that
//! `ctxkit-import`'s seeded generator wrote (`crates/ctxkit-import/tests/fixtures`), each in a temp
//! home; the imported sessions then go through `tree`, `context`, `tokens` and `compact --dry-run`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctxkit-import/tests/fixtures")
        .join(name)
}

struct Home {
    _temp: tempfile::TempDir,
    root: PathBuf,
}

impl Home {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temp.path()).unwrap();
        Self { _temp: temp, root }
    }

    /// Copies a fixture to `relative` under the temp root.
    fn place(&self, name: &str, relative: &str) -> PathBuf {
        let target = self.root.join(relative);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(fixture(name), &target).unwrap();
        target
    }

    fn ctxkit(&self, args: &[&str]) -> String {
        self.ctxkit_with_env(args, &[])
    }

    /// [`Home::ctxkit`] with `variables` set; the agents' own directory variables
    /// (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `XDG_DATA_HOME`) are unset unless given.
    fn ctxkit_with_env(&self, args: &[&str], variables: &[(&str, &str)]) -> String {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
        command
            .args(args)
            .current_dir(&self.root)
            .env("CTXKIT_HOME", self.root.join("ctxkit"))
            .env("HOME", &self.root)
            .env_remove("CTXKIT_SESSIONS_DIR");
        for name in ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"] {
            command.env_remove(name);
        }
        command.envs(variables.iter().copied());
        let output = command.output().unwrap();
        let mut text = format!("$ ctxkit {}\n", args.join(" "));
        text.push_str(&format!("exit: {}\n", output.status.code().unwrap_or(-1)));
        text.push_str(&String::from_utf8_lossy(&output.stdout));
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !stderr.is_empty() {
            text.push_str("--- stderr\n");
            text.push_str(&stderr);
        }
        text.replace(&self.root.display().to_string(), "[ROOT]")
    }

    fn path(&self, relative: &str) -> String {
        self.root.join(relative).display().to_string()
    }
}

#[test]
fn import_claude_code_and_inspect_the_tree() {
    let home = Home::new();
    let source = home.place("claude-code-session.jsonl", "claude/session.jsonl");
    let before = std::fs::read(&source).unwrap();
    let src = source.to_str().unwrap();
    let out = home.path("imported.jsonl");
    let mut transcript = String::new();
    transcript.push_str(&home.ctxkit(&["import", src, "--out", &out]));
    transcript.push_str(&home.ctxkit(&["import", src, "--from", "claude-code", "--out", &out]));
    transcript.push_str(&home.ctxkit(&["tree", &out]));
    transcript.push_str(&home.ctxkit(&["context", &out]));
    transcript.push_str(&home.ctxkit(&["tokens", &out]));
    transcript.push_str(&home.ctxkit(&["check", &out]));
    insta::assert_snapshot!(transcript);
    assert_eq!(
        std::fs::read(&source).unwrap(),
        before,
        "the source was modified"
    );
    let plan = home.ctxkit(&["compact", &out, "--dry-run", "--json"]);
    assert!(plan.contains("exit: 0"), "{plan}");
}

#[test]
fn import_codex_into_the_session_directory() {
    let home = Home::new();
    let source = home.place("codex-rollout.jsonl", "rollout.jsonl");
    let before = std::fs::read(&source).unwrap();
    let output = home.ctxkit(&["import", source.to_str().unwrap()]);
    let written = output
        .lines()
        .nth(2)
        .unwrap()
        .replace("[ROOT]", &home.path(""));
    let written = written.replace("//", "/");
    let mut transcript = output.clone();
    transcript.push_str(&home.ctxkit(&["context", &written, "--llm"]));
    transcript.push_str(&home.ctxkit(&[
        "sessions",
        "--dir",
        &home.path("ctxkit/sessions/--home-dev-project--"),
    ]));
    insta::assert_snapshot!(transcript);
    assert_eq!(
        std::fs::read(&source).unwrap(),
        before,
        "the source was modified"
    );
}

#[test]
fn sessions_from_other_agents() {
    let home = Home::new();
    home.place(
        "claude-code-session.jsonl",
        ".claude/projects/-home-dev-project/237a4e0d.jsonl",
    );
    home.place(
        "codex-rollout.jsonl",
        ".codex/sessions/2025/06/01/rollout-2025-06-01T10-00-00-x.jsonl",
    );
    std::fs::write(
        home.root
            .join(".codex/sessions/2025/06/01/rollout-empty.jsonl"),
        "",
    )
    .unwrap();
    let mut transcript = String::new();
    transcript.push_str(&home.ctxkit(&["sessions", "--from", "claude-code"]));
    transcript.push_str(&home.ctxkit(&["sessions", "--from", "codex", "--json"]));
    transcript.push_str(&home.ctxkit(&[
        "sessions",
        "--from",
        "codex",
        "--dir",
        &home.path("nowhere"),
    ]));
    insta::assert_snapshot!(transcript);
}

/// Each agent keeps its sessions where its own variable says when it is set, and
/// `sessions --from` looks there: an OpenCode under `XDG_DATA_HOME` listed nothing ("No opencode
/// sessions in `~/.local/share/opencode`"). A relative value is ignored, as the agents do.
#[test]
fn sessions_from_other_agents_follow_their_directory_variables() {
    let home = Home::new();
    home.place(
        "claude-code-session.jsonl",
        "claude-config/projects/-home-dev-project/237a4e0d.jsonl",
    );
    home.place(
        "codex-rollout.jsonl",
        "codex-home/sessions/2025/06/01/rollout-2025-06-01T10-00-00-x.jsonl",
    );
    copy_tree(&shapes("opencode-1x"), &home.root.join("xdg-data/opencode"));
    let mut transcript = String::new();
    for (format, name, value) in [
        ("claude-code", "CLAUDE_CONFIG_DIR", "claude-config"),
        ("codex", "CODEX_HOME", "codex-home"),
        ("opencode", "XDG_DATA_HOME", "xdg-data"),
    ] {
        let directory = home.path(value);
        transcript.push_str(&format!("# {name}=[ROOT]/{value}\n"));
        transcript.push_str(&home.ctxkit_with_env(
            &["sessions", "--from", format],
            &[(name, directory.as_str())],
        ));
        transcript.push_str(&format!("# {name}={value} (relative)\n"));
        transcript
            .push_str(&home.ctxkit_with_env(&["sessions", "--from", format], &[(name, value)]));
    }
    insta::assert_snapshot!(transcript);
}

#[test]
fn import_errors() {
    let home = Home::new();
    std::fs::write(home.root.join("notes.jsonl"), "{\"hello\":1}\n").unwrap();
    let mut transcript = String::new();
    transcript.push_str(&home.ctxkit(&["import", "missing.jsonl"]));
    transcript.push_str(&home.ctxkit(&["import", "notes.jsonl"]));
    transcript.push_str(&home.ctxkit(&["import", "notes.jsonl", "--from", "gemini"]));
    let source = home.place("codex-rollout.jsonl", "rollout.jsonl");
    std::fs::write(
        home.root.join("taken.jsonl"),
        "{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n",
    )
    .unwrap();
    transcript.push_str(&home.ctxkit(&[
        "import",
        source.to_str().unwrap(),
        "--out",
        "taken.jsonl",
    ]));
    // A file that is no session is refused as such; an empty one is written.
    transcript.push_str(&home.ctxkit(&[
        "import",
        source.to_str().unwrap(),
        "--out",
        "notes.jsonl",
    ]));
    std::fs::write(home.root.join("empty.jsonl"), "").unwrap();
    transcript.push_str(&home.ctxkit(&[
        "import",
        source.to_str().unwrap(),
        "--out",
        "empty.jsonl",
    ]));
    insta::assert_snapshot!(transcript);
    assert_eq!(
        std::fs::read_to_string(home.root.join("notes.jsonl")).unwrap(),
        "{\"hello\":1}\n"
    );
}

/// A Pi session that lost its header line, a file named as a format it is not, and a Pi session
/// named as an OpenCode one are refused with an error that says which case it is; nothing is
/// written (they used to import as empty sessions, exit 0).
#[test]
fn import_refuses_files_that_are_not_the_format_asked_for() {
    let home = Home::new();
    home.place("shapes/pi-session-without-header.jsonl", "nohdr.jsonl");
    home.place("codex-rollout.jsonl", "rollout.jsonl");
    std::fs::write(home.root.join("notes.jsonl"), "{\"hello\":1}\n").unwrap();
    let header = r#"{"type":"session","version":3,"id":"5d1c0a00","timestamp":"2025-03-14T09:19:00.000Z","cwd":"/home/dev/shop"}"#;
    let headerless = std::fs::read_to_string(home.root.join("nohdr.jsonl")).unwrap();
    std::fs::write(
        home.root.join("session.jsonl"),
        format!("{header}\n{headerless}"),
    )
    .unwrap();
    let mut transcript = String::new();
    for args in [
        &["import", "nohdr.jsonl", "--out", "out/nohdr.jsonl"][..],
        &[
            "import",
            "nohdr.jsonl",
            "--from",
            "codex",
            "--out",
            "out/nohdr.jsonl",
        ],
        &["export", "nohdr.jsonl", "-o", "out/nohdr.html"],
        &[
            "import",
            "rollout.jsonl",
            "--from",
            "claude-code",
            "--out",
            "out/wrong.jsonl",
        ],
        &[
            "import",
            "notes.jsonl",
            "--from",
            "codex",
            "--out",
            "out/notes.jsonl",
        ],
        &["import", "session.jsonl", "--from", "opencode"],
        &["import", "rollout.jsonl", "--from", "opencode"],
    ] {
        transcript.push_str(&home.ctxkit(args));
    }
    insta::assert_snapshot!(transcript);
    assert!(!home.root.join("out").exists(), "nothing was written");
}

fn shapes(relative: &str) -> PathBuf {
    fixture("shapes").join(relative)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn subagents_come_along_and_are_listed_under_their_parent() {
    let home = Home::new();
    copy_tree(
        &shapes("claude-projects"),
        &home.root.join(".claude/projects"),
    );
    copy_tree(
        &shapes("codex-sessions"),
        &home.root.join(".codex/sessions"),
    );
    let parent = home.path(".claude/projects/c--Users-dev-app/5e6f7a8b-parent.jsonl");
    let out = home.path("imported/parent.jsonl");
    let mut transcript = String::new();
    transcript.push_str(&home.ctxkit(&["sessions", "--from", "claude-code"]));
    transcript.push_str(&home.ctxkit(&["sessions", "--from", "codex"]));
    transcript.push_str(&home.ctxkit(&["import", &parent, "--out", &out]));
    transcript.push_str(&home.ctxkit(&[
        "context",
        &home.path("imported/2026-04-02T14-00-03-000Z_agent-a1b2c3.jsonl"),
    ]));
    transcript.push_str(&home.ctxkit(&["import", &parent, "--out", &out]));
    let rollout =
        home.path(".codex/sessions/2026/03/09/rollout-2026-03-09T11-00-00-019ccc01-parent.jsonl");
    transcript.push_str(&home.ctxkit(&[
        "import",
        &rollout,
        "--out",
        &home.path("codex/parent.jsonl"),
    ]));
    insta::assert_snapshot!(transcript);
    let head = std::fs::read_to_string(
        home.root
            .join("imported/2026-04-02T14-00-03-000Z_agent-a1b2c3.jsonl"),
    )
    .unwrap();
    assert!(
        head.lines()
            .next()
            .unwrap()
            .contains(&format!("\"parentSession\":\"{out}\""))
    );
}

/// A relative `--out` or `--sessions-dir` still links each subagent to its parent by an absolute
/// path: the link must hold wherever the child is opened from.
#[test]
fn subagents_link_their_parent_by_an_absolute_path() {
    let home = Home::new();
    copy_tree(
        &shapes("claude-projects"),
        &home.root.join(".claude/projects"),
    );
    let parent = home.path(".claude/projects/c--Users-dev-app/5e6f7a8b-parent.jsonl");
    let child_name = "2026-04-02T14-00-03-000Z_agent-a1b2c3.jsonl";
    let imported = home.ctxkit(&["import", &parent, "--out", "relative/parent.jsonl"]);
    assert!(imported.contains("exit: 0"), "{imported}");
    let child = std::fs::read_to_string(home.root.join("relative").join(child_name)).unwrap();
    let parent_file = home.path("relative/parent.jsonl");
    assert!(
        child.contains(&format!("\"parentSession\":\"{parent_file}\"")),
        "{child}"
    );
    let imported = home.ctxkit(&["--sessions-dir", "by-cwd", "import", &parent]);
    assert!(imported.contains("exit: 0"), "{imported}");
    let written = files_named(&home.root.join("by-cwd"), "agent-a1b2c3");
    assert_eq!(written.len(), 1, "{imported}");
    let child = std::fs::read_to_string(&written[0]).unwrap();
    let header: serde_json::Value = serde_json::from_str(child.lines().next().unwrap()).unwrap();
    let link = Path::new(header["parentSession"].as_str().unwrap());
    assert!(link.is_absolute() && link.is_file(), "{header}");
}

#[test]
fn remote_compaction_and_old_rollouts_import_end_to_end() {
    let home = Home::new();
    let mut transcript = String::new();
    for (name, out) in [
        ("codex-remote-compaction.jsonl", "remote.jsonl"),
        ("rollout-2025-05-03T10-00-00-oldest.json", "oldest.jsonl"),
        ("codex-legacy-2025-08.jsonl", "legacy.jsonl"),
        ("codex-header-only.jsonl", "header.jsonl"),
        ("7d3c2a10-summary-only.jsonl", "summary.jsonl"),
        ("1e9b8c7d-teleported.jsonl", "teleported.jsonl"),
    ] {
        let source = home.root.join(name);
        std::fs::copy(shapes(name), &source).unwrap();
        let out = home.path(out);
        transcript.push_str(&home.ctxkit(&["import", source.to_str().unwrap(), "--out", &out]));
        transcript.push_str(&home.ctxkit(&["context", &out, "--llm"]));
    }
    insta::assert_snapshot!(transcript);
}

#[test]
fn opencode_file_store_and_database_import_with_subagents() {
    let home = Home::new();
    let data = home.root.join(".local/share/opencode");
    copy_tree(&shapes("opencode-1x"), &data);
    let sql = std::fs::read_to_string(shapes("opencode-2x.sql")).unwrap();
    let connection = rusqlite::Connection::open(data.join("opencode.db")).unwrap();
    connection.execute_batch(&sql).unwrap();
    drop(connection);
    let database = data.join("opencode.db");
    let before = std::fs::read(&database).unwrap();
    let mut transcript = String::new();
    transcript.push_str(&home.ctxkit(&["sessions", "--from", "opencode"]));
    let session = home.path(
        ".local/share/opencode/storage/session/4f1e2d3c5b6a7980/ses_5d0a1b2c3ffeRssFeedParent.json",
    );
    transcript.push_str(&home.ctxkit(&["import", &session, "--out", &home.path("out/rss.jsonl")]));
    transcript.push_str(&home.ctxkit(&["context", &home.path("out/rss.jsonl"), "--llm"]));
    let chosen = format!("{}#ses_6e1f00000001ApiTimeouts", database.display());
    transcript.push_str(&home.ctxkit(&["import", &chosen, "--out", &home.path("out/api.jsonl")]));
    transcript.push_str(&home.ctxkit(&["context", &home.path("out/api.jsonl")]));
    transcript.push_str(&home.ctxkit(&["import", &format!("{}#ses_missing", database.display())]));
    insta::assert_snapshot!(transcript);
    // `simulate` reads what `import` reads, a session inside the database too.
    let replayed = home.ctxkit(&["simulate", &chosen, "--json"]);
    assert!(
        replayed.contains("exit: 0") && replayed.contains("\"strategies\""),
        "{replayed}"
    );
    // So does `export` (a bulk sweep found it refusing `opencode.db#<id>`).
    let page = home.path("out/api.html");
    let exported = home.ctxkit(&["export", &chosen, "-o", &page]);
    assert!(exported.contains("exit: 0"), "{exported}");
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
    assert_eq!(
        std::fs::read(&database).unwrap(),
        before,
        "the database changed"
    );
    assert!(!data.join("opencode.db-wal").exists());
    assert!(!data.join("opencode.db-shm").exists());
}

#[test]
fn opencode_session_message_rows_and_a_revert_import_end_to_end() {
    let home = Home::new();
    let data = home.root.join(".local/share/opencode");
    std::fs::create_dir_all(&data).unwrap();
    let sql = std::fs::read_to_string(shapes("opencode-next.sql")).unwrap();
    let connection = rusqlite::Connection::open(data.join("opencode.db")).unwrap();
    connection.execute_batch(&sql).unwrap();
    drop(connection);
    let database = data.join("opencode.db");
    let before = std::fs::read(&database).unwrap();
    let mut transcript = String::new();
    transcript.push_str(&home.ctxkit(&["sessions", "--from", "opencode"]));
    let newest = database.display().to_string();
    transcript.push_str(&home.ctxkit(&[
        "import",
        &newest,
        "--out",
        &home.path("out/checkout.jsonl"),
    ]));
    transcript.push_str(&home.ctxkit(&["context", &home.path("out/checkout.jsonl"), "--llm"]));
    let reverted = format!("{}#ses_7f0000000002Undo", database.display());
    transcript.push_str(&home.ctxkit(&[
        "import",
        &reverted,
        "--out",
        &home.path("out/undo.jsonl"),
    ]));
    transcript.push_str(&home.ctxkit(&["context", &home.path("out/undo.jsonl")]));
    transcript.push_str(&home.ctxkit(&["tree", &home.path("out/undo.jsonl")]));
    insta::assert_snapshot!(transcript);
    assert_eq!(
        std::fs::read(&database).unwrap(),
        before,
        "the database changed"
    );
    assert!(!data.join("opencode.db-wal").exists());
    assert!(!data.join("opencode.db-shm").exists());
}

#[test]
fn imports_keep_history_before_a_compaction_and_their_files_are_tracked() {
    let home = Home::new();
    let mut transcript = String::new();
    for (name, out) in [
        ("claude-boundary-missing-parent.jsonl", "claude.jsonl"),
        ("codex-remote-compaction-mid-thread.jsonl", "codex.jsonl"),
    ] {
        let source = home.root.join(name);
        std::fs::copy(shapes(name), &source).unwrap();
        let out = home.path(out);
        transcript.push_str(&home.ctxkit(&["import", source.to_str().unwrap(), "--out", &out]));
        transcript.push_str(&home.ctxkit(&["check", &out]));
        transcript.push_str(&home.ctxkit(&["compactions", &out]));
    }
    insta::assert_snapshot!(transcript);
}

/// Every file below `root` whose name holds `needle`.
fn files_named(root: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            } else if entry.file_name().to_string_lossy().contains(needle) {
                found.push(entry.path());
            }
        }
    }
    found
}

const ESCAPING_ID: &str = "x/../../../../ESCAPED";

/// Asserts an import of a session with [`ESCAPING_ID`] wrote inside the sessions directory only,
/// under a hashed id, and said so; returns the written paths.
fn assert_imported_inside(home: &Home, output: &str) -> Vec<PathBuf> {
    assert!(output.contains("exit: 0"), "{output}");
    assert!(
        output.contains(
            "warning: session id `x/../../../../ESCAPED` cannot name a file; stored as `"
        ),
        "{output}"
    );
    assert!(files_named(&home.root, "ESCAPED").is_empty(), "{output}");
    let sessions = home.root.join("ctxkit/sessions");
    let written: Vec<PathBuf> = output
        .lines()
        .filter(|line| line.starts_with("[ROOT]"))
        .map(|line| PathBuf::from(line.replace("[ROOT]", &home.path(""))))
        .collect();
    assert!(!written.is_empty(), "{output}");
    for path in &written {
        let path = std::fs::canonicalize(path).unwrap();
        assert_eq!(path.parent().unwrap().parent().unwrap(), sessions);
    }
    written
}

/// Issue 33, item 11: a Claude Code `sessionId` of `x/../../../../ESCAPED` wrote
/// `ESCAPED-*.jsonl` outside the sessions directory (creating directories on the way).
#[test]
fn a_claude_code_session_id_cannot_escape_the_sessions_directory() {
    let home = Home::new();
    let text = std::fs::read_to_string(fixture("claude-code-session.jsonl"))
        .unwrap()
        .replace("237a4e0d-b47a-4ee9-8d62-2fbeedc23723", ESCAPING_ID);
    let source = home.root.join("claude/session.jsonl");
    std::fs::create_dir_all(source.parent().unwrap()).unwrap();
    std::fs::write(&source, text).unwrap();
    let output = home.ctxkit(&["import", source.to_str().unwrap()]);
    let written = assert_imported_inside(&home, &output);
    // The original id is kept where it came from; the tools read the session.
    let header = std::fs::read_to_string(&written[0]).unwrap();
    assert!(header.contains("\"sessionId\":\"x/../../../../ESCAPED\""));
    let tree = home.ctxkit(&["tree", written[0].to_str().unwrap()]);
    assert!(tree.contains("exit: 0"), "{tree}");
    // Importing again finds the same file.
    let again = home.ctxkit(&["import", source.to_str().unwrap()]);
    assert!(again.contains("Already imported"), "{again}");
}

/// The same with a Codex `payload.id`.
#[test]
fn a_codex_session_id_cannot_escape_the_sessions_directory() {
    let home = Home::new();
    let text = std::fs::read_to_string(fixture("codex-rollout.jsonl"))
        .unwrap()
        .replace("74397f51-8767-44b0-8117-10d8debe7aac", ESCAPING_ID);
    let source = home.root.join("rollout.jsonl");
    std::fs::write(&source, text).unwrap();
    let output = home.ctxkit(&["import", source.to_str().unwrap()]);
    assert_imported_inside(&home, &output);
}

/// The same with an OpenCode session id (its subagent session still names the parent's file).
#[test]
fn an_opencode_session_id_cannot_escape_the_sessions_directory() {
    let home = Home::new();
    let data = home.root.join(".local/share/opencode");
    std::fs::create_dir_all(&data).unwrap();
    let sql = std::fs::read_to_string(shapes("opencode-2x.sql"))
        .unwrap()
        .replace("ses_6e1f00000001ApiTimeouts", ESCAPING_ID)
        .replace("ses_6e1f00000002Explore", "../../sub/..");
    let database = data.join("opencode.db");
    let connection = rusqlite::Connection::open(&database).unwrap();
    connection.execute_batch(&sql).unwrap();
    drop(connection);
    let output = home.ctxkit(&["import", database.to_str().unwrap()]);
    let written = assert_imported_inside(&home, &output);
    assert_eq!(written.len(), 2, "{output}");
    assert!(output.contains("warning: session id `../../sub/..` cannot name a file"));
    let child = std::fs::read_to_string(&written[1]).unwrap();
    let header: serde_json::Value = serde_json::from_str(child.lines().next().unwrap()).unwrap();
    let parent = header["parentSession"].as_str().unwrap();
    assert_eq!(
        std::fs::canonicalize(parent).unwrap(),
        std::fs::canonicalize(&written[0]).unwrap()
    );
}

/// Right after an import, `ctxkit sessions` in the current directory lists nothing (the session
/// keeps its agent's directory): it says where the imported one went instead of "No sessions.".
#[test]
fn sessions_after_an_import_points_at_the_other_directories() {
    let home = Home::new();
    let before = home.ctxkit(&["sessions"]);
    assert!(before.ends_with("exit: 0\nNo sessions.\n"), "{before}");
    let source = home.place("codex-rollout.jsonl", "rollout.jsonl");
    let imported = home.ctxkit(&["import", source.to_str().unwrap()]);
    assert!(imported.contains("exit: 0"), "{imported}");
    let after = home.ctxkit(&["sessions"]);
    assert!(
        after.contains(
            "No sessions for this directory; 1 in other directories (an imported session keeps its own): `ctxkit sessions --all` lists them"
        ),
        "{after}"
    );
    let all = home.ctxkit(&["sessions", "--all"]);
    assert!(all.contains("--home-dev-project--"), "{all}");
}

#[test]
fn an_imported_codex_rollout_shows_what_its_model_calls_cost() {
    let home = Home::new();
    let source = home.root.join("rollout.jsonl");
    std::fs::copy(shapes("codex-usage-after-items.jsonl"), &source).unwrap();
    let out = home.path("usage.jsonl");
    let mut transcript = home.ctxkit(&["import", source.to_str().unwrap(), "--out", &out]);
    transcript.push_str(&home.ctxkit(&["info", &out]));
    assert!(
        !transcript.contains("no model calls recorded"),
        "{transcript}"
    );
    insta::assert_snapshot!(transcript);
}

/// An OpenCode reply of two steps whose `step-finish` parts record the same tokens and cost was
/// counted as one model call ("spend: $0.0050 over 1 model call" beside two replies of $0.005):
/// every step had the message's time, and a call is known by its time and token counts.
#[test]
fn opencode_steps_with_the_same_usage_are_each_a_model_call() {
    let home = Home::new();
    let storage = home.root.join(".local/share/opencode/storage");
    let write = |relative: &str, value: serde_json::Value| {
        let path = storage.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, value.to_string()).unwrap();
    };
    let session = serde_json::json!({"id": "ses_001", "projectID": "p1", "directory": "/work",
        "title": "Two steps", "time": {"created": 1760000000000_u64, "updated": 1760000009000_u64}});
    write("session/p1/ses_001.json", session);
    write(
        "message/ses_001/msg_001.json",
        serde_json::json!({"id": "msg_001", "sessionID": "ses_001", "role": "user",
            "time": {"created": 1760000001000_u64}}),
    );
    write(
        "part/msg_001/prt_00100.json",
        serde_json::json!({"id": "prt_00100", "messageID": "msg_001", "type": "text",
            "text": "List the files."}),
    );
    write(
        "message/ses_001/msg_002.json",
        serde_json::json!({"id": "msg_002", "sessionID": "ses_001", "role": "assistant",
            "time": {"created": 1760000002000_u64}, "modelID": "m", "providerID": "p",
            "cost": 0.01, "finish": "stop"}),
    );
    let finish = |id: &str, reason: &str| {
        serde_json::json!({"id": id, "messageID": "msg_002", "type": "step-finish",
            "reason": reason, "cost": 0.005, "tokens": {"input": 50, "output": 10,
            "reasoning": 0, "cache": {"read": 0, "write": 0}}})
    };
    let parts = [
        serde_json::json!({"id": "prt_00200", "type": "step-start"}),
        serde_json::json!({"id": "prt_00201", "type": "tool", "callID": "c1", "tool": "ls",
            "state": {"status": "completed", "input": {}, "output": "a.txt", "title": "ls",
            "metadata": {}}}),
        finish("prt_00202", "tool-calls"),
        serde_json::json!({"id": "prt_00203", "type": "step-start"}),
        serde_json::json!({"id": "prt_00204", "type": "text", "text": "One file: a.txt."}),
        finish("prt_00205", "stop"),
    ];
    for part in parts {
        let id = part["id"].as_str().unwrap().to_owned();
        write(&format!("part/msg_002/{id}.json"), part);
    }
    let source = storage.join("session/p1/ses_001.json");
    let out = home.path("oc.jsonl");
    let imported = home.ctxkit(&["import", source.to_str().unwrap(), "--out", &out]);
    assert!(imported.contains("exit: 0"), "{imported}");
    let info = home.ctxkit(&["info", &out]);
    assert!(
        info.contains("spend:    $0.0100 over 2 model calls"),
        "{info}"
    );
}

/// A Claude Code transcript, a Codex rollout or an OpenCode session given to a command that reads
/// session files was "not a session file" with the hint to run `ctxkit check`, which only said it
/// again. The hint now names `ctxkit import`, as `import` tells the formats apart; a file no agent
/// wrote keeps the `check` hint.
#[test]
fn another_agents_session_given_as_a_session_file_names_import() {
    let home = Home::new();
    let claude = home.place("claude-code-session.jsonl", "cc.jsonl");
    let codex = home.place("codex-rollout.jsonl", "rollout.jsonl");
    copy_tree(&shapes("opencode-1x"), &home.root.join("oc"));
    let opencode = home
        .root
        .join("oc/storage/session/4f1e2d3c5b6a7980/ses_5d0a1b2c3ffeRssFeedParent.json");
    for (file, described) in [
        (&claude, "a Claude Code transcript"),
        (&codex, "a Codex rollout"),
        (&opencode, "an OpenCode session"),
    ] {
        let path = file.to_str().unwrap();
        let shown = path.replace(&home.root.display().to_string(), "[ROOT]");
        let import_hint = format!(
            "hint: it is {described}: run `ctxkit import {shown}` to convert it (`ctxkit export` \
             and `ctxkit simulate` read it as it is)"
        );
        for command in ["info", "tree", "context", "tokens", "compact"] {
            let output = home.ctxkit(&[command, path]);
            assert!(
                output.contains("exit: 3") && output.contains(&import_hint),
                "{output}"
            );
        }
        let check = home.ctxkit(&["check", path]);
        assert!(
            check.contains(&format!("it is {described}: run `ctxkit import {shown}`")),
            "{check}"
        );
    }
    let headless = home.root.join("headless.jsonl");
    std::fs::copy(shapes("pi-session-without-header.jsonl"), &headless).unwrap();
    let output = home.ctxkit(&["info", headless.to_str().unwrap()]);
    assert!(
        output.contains("hint: run `ctxkit check") && !output.contains("ctxkit import"),
        "{output}"
    );
}

/// A transcript imported while a reply was being written, then again once it grew: the second
/// import was refused ("is not an earlier import of this session: entry … differs", exit 3). It
/// appends the completed reply beside the partial one and says so.
#[test]
fn a_reimport_after_a_reply_caught_half_written_appends_and_says_so() {
    let home = Home::new();
    let whole =
        std::fs::read_to_string(shapes("claude-reply-written-block-by-block.jsonl")).unwrap();
    let source = home.root.join("eeee5555-0000-4000-8000-000000000001.jsonl");
    // The user's prompt and the reply's first block (its thinking).
    let first: Vec<&str> = whole.lines().take(2).collect();
    std::fs::write(&source, first.join("\n") + "\n").unwrap();
    let source = source.to_str().unwrap();
    let mut transcript = home.ctxkit(&["import", source, "--out", "s.jsonl"]);
    let before = std::fs::read(home.root.join("s.jsonl")).unwrap();
    std::fs::write(
        home.root.join("eeee5555-0000-4000-8000-000000000001.jsonl"),
        &whole,
    )
    .unwrap();
    transcript.push_str(&home.ctxkit(&["import", source, "--out", "s.jsonl"]));
    transcript.push_str(&home.ctxkit(&["import", source, "--out", "s.jsonl"]));
    transcript.push_str(&home.ctxkit(&["check", "s.jsonl"]));
    insta::assert_snapshot!(transcript);
    assert!(
        std::fs::read(home.root.join("s.jsonl"))
            .unwrap()
            .starts_with(&before)
    );
}

/// QA r101: Claude Code starts a transcript with its `summary` title line, which the import writes
/// as a `session_info` entry of no parent; `check` called the fresh import "2 roots … history that
/// was cut off". A lone name is no chain: the import checks clean and keeps its name.
#[test]
fn a_fresh_import_of_a_titled_transcript_checks_clean() {
    let home = Home::new();
    home.place(
        "shapes/claude-titled-first.jsonl",
        "claude/5b1f0c8e-3a2d-4e6f-9a7b-1c2d3e4f5a6b.jsonl",
    );
    let imported = home.ctxkit(&[
        "import",
        &home.path("claude/5b1f0c8e-3a2d-4e6f-9a7b-1c2d3e4f5a6b.jsonl"),
        "--out",
        "titled.jsonl",
    ]);
    assert!(imported.contains("exit: 0\n"), "{imported}");
    let mut transcript = home.ctxkit(&["check", "titled.jsonl"]);
    transcript.push_str(&home.ctxkit(&["check", "titled.jsonl", "--json"]));
    transcript.push_str(&home.ctxkit(&["info", "titled.jsonl"]));
    assert!(!transcript.contains("roots:"), "{transcript}");
    insta::assert_snapshot!(transcript);
}

/// QA (2026-12-07): `check` said "N roots … history that was cut off" on 26 of 30 Claude Code
/// imports, whose queue and snapshot records without a parent are roots of bookkeeping alone. A
/// root holding nothing a context shows is not counted; a second conversation still is.
#[test]
fn check_counts_only_chains_a_context_could_show() {
    let run = crate::Run::new();
    let file = run.home.path().join("s.jsonl");
    let header = r#"{"type":"session","version":3,"id":"0193a1b2-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;
    let bookkeeping = r#"{"type":"custom","id":"k1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","customType":"import.claude-code.queue-operation","data":{}}"#;
    let user = |id: &str, text: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    };
    std::fs::write(
        &file,
        format!("{header}\n{bookkeeping}\n{}\n", user("u1", "hello")),
    )
    .unwrap();
    let output = run.ctxkit(&["check", file.to_str().unwrap()]);
    assert!(
        output.starts_with("exit: 0\n") && !output.contains("roots"),
        "{output}"
    );
    std::fs::write(
        &file,
        format!(
            "{header}\n{bookkeeping}\n{}\n{}\n",
            user("u1", "hello"),
            user("u2", "again")
        ),
    )
    .unwrap();
    let output = run.ctxkit(&["check", file.to_str().unwrap()]);
    assert!(
        output.contains("2 roots: the file holds 2 chains"),
        "{output}"
    );
}

/// QA (2026-12-07): the page of a Claude Code transcript with a malformed line said nothing of
/// it, where `ctxkit import` warns. `export` (and `view`) of another agent's file say what the
/// import skipped or repaired, naming the file.
#[test]
fn export_of_another_agents_file_says_what_its_import_skipped() {
    let home = Home::new();
    let source = home.place("claude-code-session.jsonl", "transcript.jsonl");
    let mut text = std::fs::read_to_string(&source).unwrap();
    text.push_str("{\"type\":\"user\", broken\n");
    std::fs::write(&source, text).unwrap();
    let exported = home.ctxkit(&["export", "transcript.jsonl", "-o", "page.html"]);
    assert!(exported.contains("exit: 0"), "{exported}");
    assert!(
        exported.contains("warning: `transcript.jsonl`: line ")
            && exported.contains("skipped a malformed line"),
        "{exported}"
    );
}
