//! `--store`: sessions in PostgreSQL from the CLI — import, export (byte for byte), the read and
//! write commands on a session id giving what they give on the file, `sessions` listing the store,
//! a second writer refused, a password never printed, an untrusted project unable to choose it.
//! The database comes from `CTXKIT_TEST_DATABASE_URL` (`.ci/install-postgres`); under CI its
//! absence fails the tests.

use std::path::{Path, PathBuf};

use ctxkit_store::SessionStore as _;

use super::{Run, corpus};

pub(super) fn database() -> Option<String> {
    match std::env::var("CTXKIT_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CTXKIT_TEST_DATABASE_URL is not set: under CI the PostgreSQL tests must run"
            );
            None
        }
    }
}

/// A copy of a corpus session under a fresh id (so runs and tests never collide in the database).
pub(super) fn fresh_copy(run: &Run, name: &str) -> (PathBuf, String) {
    let text = std::fs::read_to_string(corpus(name)).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(header).unwrap();
    let id = uuid::Uuid::new_v4().to_string();
    header["id"] = serde_json::Value::from(id.clone());
    let path = run.home.path().join(format!("{id}.jsonl"));
    std::fs::write(&path, format!("{header}\n{rest}")).unwrap();
    (path, id)
}

pub(super) fn with_store<'a>(url: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["--store", url];
    all.extend_from_slice(args);
    all
}

pub(super) fn path_text(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_session_in_the_database_reads_and_round_trips_as_its_file() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let copy = regex::Regex::new(r"[^ `]*/ctxkit-session-[^/]+/([0-9a-f-]+)\.jsonl").unwrap();
    for name in [
        "good-branches.jsonl",
        "good-labels.jsonl",
        "good-multi-compaction.jsonl",
        "good-all-entry-types.jsonl",
    ] {
        let (file, id) = fresh_copy(&run, name);
        let imported = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
        assert!(imported.starts_with("exit: 0\nImported "), "{imported}");
        for command in [
            vec!["tree"],
            vec!["tree", "--json"],
            vec!["context", "--json"],
            vec!["context", "--llm", "--json"],
            vec!["compactions"],
            vec!["tokens", "--json"],
            vec!["check"],
            vec!["checkpoints"],
        ] {
            let mut on_file = command.clone();
            on_file.insert(1, path_text(&file));
            let mut on_id = command.clone();
            on_id.insert(1, &id);
            // The file's output names the file; the stored session's, its id (stdout) or its
            // temporary copy (stderr's damage warning, written before the id is known there).
            let on_file = run
                .ctxkit(&on_file)
                .replace(&format!("[HOME]/{id}.jsonl"), &id);
            let on_id = run.ctxkit(&with_store(&url, &on_id));
            assert_eq!(
                copy.replace_all(&on_id, "$1"),
                on_file,
                "{name}: {command:?}"
            );
        }
        let exported = run.home.path().join(format!("{id}-exported.jsonl"));
        let output = run.ctxkit(&with_store(
            &url,
            &["store", "export", &id, "-o", path_text(&exported)],
        ));
        assert!(output.starts_with("exit: 0\nExported "), "{output}");
        assert_eq!(
            std::fs::read(&exported).unwrap(),
            std::fs::read(&file).unwrap(),
            "{name}"
        );
        // Export never overwrites.
        let again = run.ctxkit(&with_store(
            &url,
            &["store", "export", &id, "-o", path_text(&exported)],
        ));
        assert!(again.starts_with("exit: "), "{again}");
        assert!(!again.starts_with("exit: 0"), "{again}");
        // Importing it twice changes nothing.
        let twice = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
        assert!(twice.starts_with("exit: 0\nNothing new in "), "{twice}");
    }
}

/// QA r99: `ctxkit import` run again grows a file already stored, and says to `store import` it;
/// the store refused the whole file as a session it had. What the file gained is appended; a
/// file that does not continue the stored session (it went on in the store) is refused.
#[test]
fn importing_a_grown_file_again_appends_what_it_gained() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let (file, id) = fresh_copy(&run, "good-branches.jsonl");
    let imported = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    assert!(imported.starts_with("exit: 0\nImported "), "{imported}");
    for name in ["first name", "second name"] {
        let named = run.ctxkit(&["name", path_text(&file), name]);
        assert!(named.starts_with("exit: 0"), "{named}");
    }
    let again = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    assert!(
        again.starts_with(&format!("exit: 0\nAppended 2 entries to {id} (")),
        "{again}"
    );
    let exported = run.home.path().join("exported.jsonl");
    let output = run.ctxkit(&with_store(
        &url,
        &["store", "export", &id, "-o", path_text(&exported)],
    ));
    assert!(output.starts_with("exit: 0"), "{output}");
    assert_eq!(
        std::fs::read(&exported).unwrap(),
        std::fs::read(&file).unwrap()
    );
    // The session goes on in the store; the file goes on its own way: refused, nothing stored.
    let stored_name = run.ctxkit(&with_store(&url, &["name", &id, "stored name"]));
    assert!(stored_name.starts_with("exit: 0"), "{stored_name}");
    let named = run.ctxkit(&["name", path_text(&file), "file name"]);
    assert!(named.starts_with("exit: 0"), "{named}");
    let diverged = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    assert!(!diverged.starts_with("exit: 0"), "{diverged}");
    assert!(diverged.contains("does not continue it"), "{diverged}");
    assert!(diverged.contains("went separate ways"), "{diverged}");
    let listed = run.ctxkit(&with_store(&url, &["sessions", "--all", "--json"]));
    assert!(!listed.contains("file name"), "{listed}");
}

/// QA r101: a file holding every stored entry and one more within was refused as if "the stored
/// session has entries the file does not: it went on in the store", with a hint to export the
/// store over it, which would drop the file's entry. It says how the file stands, and the hint
/// keeps the file; a file behind the store is told the store went on.
#[test]
fn a_file_ahead_of_the_store_is_not_called_behind_it() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let (file, id) = fresh_copy(&run, "good-branches.jsonl");
    let behind = std::fs::read_to_string(&file).unwrap();
    let imported = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    assert!(imported.starts_with("exit: 0\nImported "), "{imported}");
    let mut lines: Vec<&str> = behind.lines().collect();
    let first_id = serde_json::from_str::<serde_json::Value>(lines[1]).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let within = format!(
        r#"{{"type":"future_thing","id":"fff00001","parentId":"{first_id}","timestamp":"2025-06-01T09:00:30.000Z"}}"#
    );
    lines.insert(2, &within);
    let ahead = run.home.path().join("ahead.jsonl");
    std::fs::write(&ahead, format!("{}\n", lines.join("\n"))).unwrap();
    let refused = run.ctxkit(&with_store(&url, &["store", "import", path_text(&ahead)]));
    assert!(refused.starts_with("exit: 3\n"), "{refused}");
    assert!(
        refused.contains("holds every stored entry and 1 entry more, not all after the stored ones (the first: its entry 2, `fff00001`)"),
        "{refused}"
    );
    assert!(!refused.contains("went on in the store"), "{refused}");
    assert!(!refused.contains("store export"), "{refused}");
    assert!(
        refused.contains("hint: keep the file: `ctxkit fork-from"),
        "{refused}"
    );

    // The store goes on; the file it was imported from is behind it.
    let named = run.ctxkit(&with_store(&url, &["name", &id, "stored name"]));
    assert!(named.starts_with("exit: 0"), "{named}");
    let refused = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    assert!(
        refused.contains("the session went on in the store"),
        "{refused}"
    );
    assert!(
        refused.contains(&format!("hint: `ctxkit store export {id} -o NEW_FILE`")),
        "{refused}"
    );
}

#[test]
fn writing_commands_append_to_the_database_under_a_lease() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let (file, id) = fresh_copy(&run, "good-branches.jsonl");
    run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    let leaf = {
        let tree = run.ctxkit(&["tree", path_text(&file), "--json"]);
        let json: serde_json::Value =
            serde_json::from_str(tree.strip_prefix("exit: 0\n").unwrap()).unwrap();
        json["leafId"].as_str().unwrap().to_owned()
    };
    let labelled = run.ctxkit(&with_store(&url, &["label", &id, &leaf, "checkpoint"]));
    assert_eq!(labelled, format!("exit: 0\nLabelled {leaf}: checkpoint\n"));
    let named = run.ctxkit(&with_store(&url, &["name", &id, "Store test"]));
    assert!(named.starts_with("exit: 0"), "{named}");
    // The same writes on the file give the same tree (entry ids of the new entries aside).
    run.ctxkit(&["label", path_text(&file), &leaf, "checkpoint"]);
    run.ctxkit(&["name", path_text(&file), "Store test"]);
    let tree_of = |output: String| -> Vec<String> {
        output
            .lines()
            .map(|line| {
                line.split_whitespace()
                    .skip(1)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    assert_eq!(
        tree_of(run.ctxkit(&with_store(&url, &["tree", &id]))),
        tree_of(run.ctxkit(&["tree", path_text(&file)]))
    );
    let listed = run.ctxkit(&with_store(
        &url,
        &["sessions", "--all", "--name", "store TEST", "--json"],
    ));
    let json: serde_json::Value =
        serde_json::from_str(listed.strip_prefix("exit: 0\n").unwrap()).unwrap();
    let found: Vec<_> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|session| session["path"] == id.as_str())
        .collect();
    assert_eq!(found.len(), 1, "{listed}");
    assert_eq!(found[0]["name"], "Store test");

    // A second writer holds the lease: refused with exit 5, nothing written.
    let (runtime, store, lease) = another_writer(&url, &id);
    let before = runtime.block_on(store.export(&id)).unwrap();
    let refused = run.ctxkit(&with_store(&url, &["label", &id, &leaf, "mine"]));
    assert!(refused.starts_with("exit: 5\n"), "{refused}");
    assert!(refused.contains("in use by another instance"), "{refused}");
    assert_eq!(runtime.block_on(store.export(&id)).unwrap(), before);
    runtime.block_on(store.release(&lease)).unwrap();
    let allowed = run.ctxkit(&with_store(&url, &["label", &id, &leaf, "mine"]));
    assert!(allowed.starts_with("exit: 0"), "{allowed}");
}

#[test]
fn a_database_password_is_never_printed() {
    let run = Run::new();
    // Nothing listens on port 1: the connection fails, and the error names the store redacted.
    let url = "postgres://alice:hunter2secret@127.0.0.1:1/ctxkit";
    for args in [
        vec!["sessions"],
        vec!["tree", "some-session-id"],
        vec!["store", "export", "x", "-o", "out.jsonl"],
    ] {
        let output = run.ctxkit(&with_store(url, &args));
        assert!(!output.contains("hunter2secret"), "{output}");
        assert!(!output.contains("alice"), "{output}");
        assert!(output.starts_with("exit: 4"), "{output}");
    }
    let output = run.ctxkit_with_env(&["sessions"], &[("CTXKIT_STORE", url)]);
    assert!(
        !output.contains("hunter2secret") && output.contains("127.0.0.1"),
        "{output}"
    );
}

#[test]
fn an_untrusted_project_cannot_choose_the_store() {
    let run = Run::new();
    let settings = run.home.path().join(".ctxkit");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(
        settings.join("settings.json"),
        r#"{"store": {"url": "postgres://attacker@127.0.0.1:1/exfiltrate"}}"#,
    )
    .unwrap();
    let output = run.ctxkit(&["sessions"]);
    assert!(output.starts_with("exit: 0\nNo sessions."), "{output}");
    assert!(!output.contains("exfiltrate"), "{output}");
}

#[test]
fn a_directory_store_imports_exports_and_searches_like_the_database() {
    let run = Run::new();
    let root = run.home.path().join("store");
    let root_text = root.to_str().unwrap().to_owned();
    let (branches, branches_id) = fresh_copy(&run, "good-branches.jsonl");
    let (labels, _) = fresh_copy(&run, "good-labels.jsonl");
    let imported = run.ctxkit(&with_store(
        &root_text,
        &["store", "import", path_text(&branches), path_text(&labels)],
    ));
    assert_eq!(imported.matches("Imported ").count(), 2, "{imported}");
    let all = run.ctxkit(&with_store(&root_text, &["sessions", "--all", "--json"]));
    let json: serde_json::Value =
        serde_json::from_str(all.strip_prefix("exit: 0\n").unwrap()).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2, "{all}");
    // Words of one session only.
    let first_words = {
        let text = std::fs::read_to_string(&branches).unwrap();
        assert!(text.contains("Implement feature X"));
        "implement FEATURE"
    };
    let found = run.ctxkit(&with_store(
        &root_text,
        &["sessions", "--all", "--grep", first_words, "--json"],
    ));
    let json: serde_json::Value =
        serde_json::from_str(found.strip_prefix("exit: 0\n").unwrap()).unwrap();
    let ids: Vec<_> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|session| session["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [serde_json::Value::from(branches_id.clone())],
        "{found}"
    );
    // The start of an id names its session.
    let exported = run.home.path().join("back.jsonl");
    let output = run.ctxkit(&with_store(
        &root_text,
        &[
            "store",
            "export",
            &branches_id[..13],
            "-o",
            path_text(&exported),
        ],
    ));
    assert!(output.starts_with("exit: 0\n"), "{output}");
    assert!(
        output.contains(&format!("Exported {branches_id} ")),
        "{output}"
    );
    assert_eq!(
        std::fs::read(&exported).unwrap(),
        std::fs::read(&branches).unwrap()
    );
}

#[test]
fn a_database_session_is_named_by_the_start_of_its_id() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let (file, id) = fresh_copy(&run, "good-labels.jsonl");
    let imported = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    assert!(imported.starts_with("exit: 0\n"), "{imported}");
    let prefix = &id[..13];
    let by_prefix = run.ctxkit(&with_store(&url, &["info", prefix, "--json"]));
    let by_id = run.ctxkit(&with_store(&url, &["info", &id, "--json"]));
    assert!(by_prefix.starts_with("exit: 0\n"), "{by_prefix}");
    assert_eq!(by_prefix, by_id);
    let exported = run.home.path().join("back.jsonl");
    let output = run.ctxkit(&with_store(
        &url,
        &["store", "export", prefix, "-o", path_text(&exported)],
    ));
    assert!(output.contains(&format!("Exported {id} ")), "{output}");
    assert_eq!(
        std::fs::read(&exported).unwrap(),
        std::fs::read(&file).unwrap()
    );
    let missing = run.ctxkit(&with_store(&url, &["info", &format!("{prefix}-no")]));
    assert!(missing.starts_with("exit: 4\n"), "{missing}");
}

#[test]
fn a_filtered_listing_of_a_folder_reads_that_folder() {
    let run = Run::new();
    let folder = run.home.path().join("one-project");
    std::fs::create_dir_all(&folder).unwrap();
    for name in ["good-branches.jsonl", "good-labels.jsonl"] {
        std::fs::copy(corpus(name), folder.join(name)).unwrap();
    }
    let folder_text = path_text(&folder);
    let found = run.ctxkit(&[
        "sessions",
        "--dir",
        folder_text,
        "--grep",
        "implement FEATURE",
        "--json",
    ]);
    let json: serde_json::Value =
        serde_json::from_str(found.strip_prefix("exit: 0\n").unwrap()).unwrap();
    let paths: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|session| session["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 1, "{found}");
    assert!(paths[0].ends_with("good-branches.jsonl"), "{found}");
    let none = run.ctxkit(&["sessions", "--dir", folder_text, "--grep", "zzqqxx"]);
    assert_eq!(none, "exit: 0\nNo sessions.\n");
    let refused = run.ctxkit(&[
        "--store",
        "postgres://nobody@127.0.0.1:1/none",
        "sessions",
        "--dir",
        folder_text,
        "--name",
        "x",
    ]);
    assert!(
        refused.contains("`--dir` lists a folder of session files"),
        "{refused}"
    );
    assert!(!refused.starts_with("exit: 0"), "{refused}");
}

/// A session copied from an old one (`fork-from`: a new header, old messages) listed with a filter
/// shows the same row, the same time, as the listing without one (it showed the header's time).
#[test]
fn a_filtered_listing_shows_each_session_as_the_plain_listing_does() {
    let run = Run::new();
    let folder = run.home.path().join("one-project");
    std::fs::create_dir_all(&folder).unwrap();
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-02T00:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-03-17T09:00:00.000Z","message":{"role":"user","content":"an old question","timestamp":1742202000000}}"#,
    ];
    std::fs::write(folder.join("fork.jsonl"), lines.join("\n") + "\n").unwrap();
    let folder_text = path_text(&folder);
    let plain = run.ctxkit(&["sessions", "--dir", folder_text]);
    let filtered = run.ctxkit(&["sessions", "--dir", folder_text, "--grep", "old question"]);
    assert!(plain.contains("2025-03-17T09:00:00.000Z"), "{plain}");
    // The time it lists by (it was made after its messages) is said beside its path.
    assert!(
        plain.contains("(created 2026-01-02T00:00:00.000Z, from older messages)"),
        "{plain}"
    );
    assert_eq!(filtered, plain);
    let plain = run.ctxkit(&["sessions", "--dir", folder_text, "--json"]);
    let filtered = run.ctxkit(&["sessions", "--dir", folder_text, "--grep", "old", "--json"]);
    assert_eq!(filtered, plain);
}

#[test]
fn a_stopped_stdio_server_releases_its_session_and_removes_its_copy() {
    let Some(url) = database() else { return };
    let home = tempfile::tempdir().unwrap();
    let mut server =
        super::serve::Server::start_with(home.path(), home.path(), &[("CTXKIT_STORE", &url)]);
    let created = server.call("session.create", serde_json::json!({"cwd": home.path()}));
    let id = created["result"]["session_id"].as_str().unwrap().to_owned();
    let copy = PathBuf::from(created["result"]["session_file"].as_str().unwrap());
    assert!(copy.exists(), "{created}");
    // A service manager's stop, as `kill` sends it.
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = server.child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(143),
        "the server ends cleanly, then exits 128 + 15 as for the signal: {status}"
    );
    assert!(
        !copy.parent().unwrap().exists(),
        "the private copy is removed: {}",
        copy.display()
    );
    // Its lease is released: another writer takes the session at once.
    let (runtime, store, lease) = another_writer(&url, &id);
    runtime.block_on(store.release(&lease)).unwrap();
}

/// Another instance taking the lease of session `id` (panics when it cannot).
fn another_writer(
    url: &str,
    id: &str,
) -> (
    tokio::runtime::Runtime,
    ctxkit_store::PostgresStore,
    ctxkit_store::Lease,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = runtime
        .block_on(ctxkit_store::PostgresStore::connect(url))
        .unwrap();
    let lease = runtime
        .block_on(store.acquire(id, "another instance", std::time::Duration::from_secs(60)))
        .unwrap();
    (runtime, store, lease)
}

/// A database session's copy is private to its user (`0700`: under the usual umask a temporary
/// folder is `0755`, and the opened copy was readable by anyone), and one a killed server left is
/// removed by the next server of that user.
///
/// The servers have a temporary folder of their own: in the shared one, any other process of the
/// user started meanwhile (another test's, another helper's) removes the killed server's copy as it
/// should, before the third server can (the test failed now and then under parallel store tests).
#[test]
fn a_killed_servers_private_copy_is_removed_by_the_next_server() {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(url) = database() else { return };
    let home = tempfile::tempdir().unwrap();
    let temporary = tempfile::tempdir().unwrap();
    let temporary_text = path_text(temporary.path());
    let env = [("CTXKIT_STORE", url.as_str()), ("TMPDIR", temporary_text)];
    let mut first = super::serve::Server::start_with(home.path(), home.path(), &env);
    let created = first.call("session.create", serde_json::json!({"cwd": home.path()}));
    let id = created["result"]["session_id"].as_str().unwrap().to_owned();
    first.call("shutdown", serde_json::json!({}));
    assert!(first.child.wait().unwrap().success());

    let mut second = super::serve::Server::start_with(home.path(), home.path(), &env);
    let opened = second.call("session.open", serde_json::json!({"id": id}));
    let copy = PathBuf::from(opened["result"]["session_file"].as_str().unwrap());
    let folder = copy.parent().unwrap().to_owned();
    assert_eq!(
        folder.parent(),
        Some(temporary.path()),
        "{}",
        folder.display()
    );
    let mode = std::fs::metadata(&folder).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{}", folder.display());
    let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{}", copy.display());
    second.child.kill().unwrap();
    second.child.wait().unwrap();
    assert!(copy.exists(), "a killed server cannot remove its copy");

    let third = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["serve", "--stdio"])
        .env("CTXKIT_HOME", home.path())
        .env("CTXKIT_STORE", &url)
        .env("TMPDIR", temporary.path())
        .current_dir(home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
    std::io::Write::write_all(&mut third.stdin.as_ref().unwrap(), request.as_bytes()).unwrap();
    let output = third.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!folder.exists(), "{}", folder.display());
    assert!(
        stderr.contains(&format!(
            "Removed 1 private session folder(s) a killed ctxkit left in {temporary_text}"
        )),
        "{stderr}"
    );
}

/// A database session copied from older messages shows their time and says it was created later,
/// as its file does (the row showed the header's time).
#[test]
fn a_database_copy_of_older_messages_is_listed_as_its_file() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let id = uuid::Uuid::new_v4().to_string();
    let word = format!("question{}", id.replace('-', ""));
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": id,
            "timestamp": "2026-01-02T00:00:00.000Z", "cwd": "/w"}),
        serde_json::json!({"type": "message", "id": "a1", "parentId": null,
            "timestamp": "2025-03-17T09:00:00.000Z",
            "message": {"role": "user", "content": format!("an old {word}"),
                        "timestamp": 1_742_202_000_000_i64}}),
    ];
    let file = run.home.path().join("fork.jsonl");
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let as_file = run.ctxkit(&["sessions", "--dir", path_text(run.home.path())]);
    let imported = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    assert!(imported.starts_with("exit: 0\n"), "{imported}");
    let listed = run.ctxkit(&with_store(&url, &["sessions", "--all", "--grep", &word]));
    for output in [&as_file, &listed] {
        assert!(output.contains("2025-03-17T09:00:00.000Z"), "{output}");
        assert!(
            output.contains("(created 2026-01-02T00:00:00.000Z, from older messages)"),
            "{output}"
        );
    }
}

/// QA r102: `store.leaseSeconds` applied to `serve` alone: a chat on a database session held it
/// for the default 30 s, so after a crashed chat the session stayed refused for 30 s whatever the
/// setting said. Every writer of the CLI now holds it for the setting.
#[test]
fn a_chat_holds_a_database_session_for_the_configured_lease() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let (file, id) = fresh_copy(&run, "good-branches.jsonl");
    run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    let settings = serde_json::json!({
        "defaultProvider": "anthropic",
        "defaultModel": "claude-sonnet-4-5",
        // Never called: the chat waits for its first prompt.
        "llm": {"baseUrl": "http://127.0.0.1:9"},
        "store": {"url": url, "leaseSeconds": 3},
    });
    std::fs::write(run.home.path().join("settings.json"), settings.to_string()).unwrap();
    let mut chat = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["chat", "--script", "--session", &id])
        .env("CTXKIT_HOME", run.home.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-lease")
        .current_dir(run.home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The chat shows its help line once it holds its session. Probing with a lease of the test's own before
    // that could take the session at the moment the chat asks for it, and the chat would stop.
    let stdout = chat.stdout.take().unwrap();
    let (lines, printed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    // A loaded machine starts a debug chat slowly: the deadline is generous.
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|line: &String| line.starts_with("/help lists commands"))
    {
        match printed.recv_timeout(std::time::Duration::from_secs(90)) {
            Ok(line) => seen.push(line),
            Err(error) => panic!("the chat never opened its session ({error}): {seen:?}"),
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = runtime
        .block_on(ctxkit_store::PostgresStore::connect(&url))
        .unwrap();
    let lease = std::time::Duration::from_secs(60);
    let expires_in_ms = match runtime.block_on(store.acquire(&id, "the test", lease)) {
        Err(ctxkit_store::StoreError::SessionInUse { expires_in_ms, .. }) => expires_in_ms,
        Ok(_) => panic!("the chat opened the session without holding it"),
        Err(other) => panic!("{other}"),
    };
    assert!(
        (0..=3_000).contains(&expires_in_ms),
        "held for {expires_in_ms} ms, not the 3 s of store.leaseSeconds"
    );
    // A crash: the next writer has the session once the 3 s have passed, not 30 s.
    chat.kill().unwrap();
    chat.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(25);
    loop {
        match runtime.block_on(store.acquire(&id, "the test", lease)) {
            Ok(taken) => {
                runtime.block_on(store.release(&taken)).unwrap();
                break;
            }
            Err(ctxkit_store::StoreError::SessionInUse { .. }) => {}
            Err(other) => panic!("{other}"),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the session stayed refused past its lease"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
