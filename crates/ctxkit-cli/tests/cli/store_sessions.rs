//! Sessions made on a database store from the CLI (`fork`, `fork-from`, `compact --out`, a chat's
//! own session and its forks, an import) and TLS to the database. The database comes from
//! `CTXKIT_TEST_DATABASE_URL` and its CA from `CTXKIT_TEST_DATABASE_CA` (`.ci/install-postgres`).

use super::Run;
use super::store::{database, fresh_copy, path_text, with_store};

/// `fork`, `fork-from`, `migrate` and `compact --out` on a database session: a fork is a new
/// stored session (its id printed, its parent the stored id), the parent only read; a migration
/// says the session is current; `--out` writes the compacted copy to the file it names.
#[test]
fn commands_that_make_a_new_session_work_on_a_database_session() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let (file, id) = fresh_copy(&run, "good-large-realistic.jsonl");
    run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    let before = run.ctxkit(&with_store(&url, &["info", &id]));
    let stored_header = |session: &str| -> serde_json::Value {
        let out = run.home.path().join(format!("{session}.export.jsonl"));
        let exported = run.ctxkit(&with_store(
            &url,
            &["store", "export", session, "-o", path_text(&out)],
        ));
        assert!(exported.starts_with("exit: 0"), "{exported}");
        let text = std::fs::read_to_string(&out).unwrap();
        serde_json::from_str(text.lines().next().unwrap()).unwrap()
    };
    let forked = run.ctxkit(&with_store(&url, &["fork", &id]));
    let new_id = forked.strip_prefix("exit: 0\n").unwrap().trim().to_owned();
    assert_ne!(new_id, id);
    assert_eq!(stored_header(&new_id)["parentSession"], id.as_str());
    let project = run.home.path().join("other-project");
    std::fs::create_dir_all(&project).unwrap();
    let copied = run.ctxkit(&with_store(
        &url,
        &["fork-from", &id, "--cwd", path_text(&project)],
    ));
    let copy_id = copied.strip_prefix("exit: 0\n").unwrap().trim().to_owned();
    let header = stored_header(&copy_id);
    assert_eq!(header["cwd"], path_text(&project));
    assert_eq!(header["parentSession"], id.as_str());
    let migrated = run.ctxkit(&with_store(&url, &["migrate", &id]));
    assert_eq!(
        migrated,
        format!("exit: 0\n`{id}` is already in session format v3\n")
    );
    let out = run.home.path().join("compacted.jsonl");
    let compacted = run.ctxkit(&with_store(
        &url,
        &[
            "compact",
            &id,
            "--keep-recent-tokens",
            "2000",
            "--out",
            path_text(&out),
        ],
    ));
    assert!(compacted.starts_with("exit: 0"), "{compacted}");
    let text = std::fs::read_to_string(&out).unwrap();
    let written: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(written["parentSession"], id.as_str());
    assert!(text.contains("\"type\":\"compaction\""));
    // The parent was only read.
    assert_eq!(run.ctxkit(&with_store(&url, &["info", &id])), before);
}

/// A chat on a database session that forks keeps the fork: the new session, written beside the
/// private copy, is stored as the chat ends (its parent the stored id), where it used to go with
/// the copy's folder.
#[test]
fn a_fork_made_in_a_chat_on_a_database_session_is_stored() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let (file, id) = fresh_copy(&run, "good-branches.jsonl");
    run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    let tree = run.ctxkit(&["tree", path_text(&file), "--json"]);
    let tree: serde_json::Value =
        serde_json::from_str(tree.strip_prefix("exit: 0\n").unwrap()).unwrap();
    let leaf = tree["leafId"].as_str().unwrap();
    let marker = format!("fork-marker-{}", &id[..8]);
    // The model is never asked: `/fork` and `!` need none.
    let variables = [
        ("OPENAI_API_KEY", "sk-never-sent"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
    ];
    let args = with_store(
        &url,
        &["chat", "--session", &id, "--model", "openai/gpt-5-mini"],
    );
    let input = format!("/fork {leaf}\n!echo {marker}\n/quit\n");
    let chatted = run.ctxkit_with_input(&args, &variables, &input);
    assert!(chatted.starts_with("exit: 0"), "{chatted}");
    assert!(
        chatted.contains("stored in the database when the chat ends"),
        "{chatted}"
    );
    let listed = run.ctxkit(&with_store(
        &url,
        &["sessions", "--all", "--grep", &marker, "--json"],
    ));
    let listed: serde_json::Value =
        serde_json::from_str(listed.strip_prefix("exit: 0\n").unwrap()).unwrap();
    let forks = listed.as_array().unwrap();
    assert_eq!(forks.len(), 1, "{listed}");
    let fork_id = forks[0]["path"].as_str().unwrap();
    assert!(
        chatted.contains(&format!("Stored the session {fork_id}")),
        "{chatted}"
    );
    let info = run.ctxkit(&with_store(&url, &["info", fork_id]));
    assert!(info.contains(&format!("parent:   {id}")), "{info}");
}

/// `ctxkit chat` on a database store starts a stored session (its id shown, what it appends
/// stored), and `--continue` goes on in the directory's most recent stored session, where both
/// used to write a session file the store's listing never showed.
#[test]
fn a_chat_on_a_database_store_keeps_its_session_there() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let variables = [
        ("OPENAI_API_KEY", "sk-never-sent"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
    ];
    let marker = format!("chat-marker-{}", uuid::Uuid::new_v4().simple());
    let chat = |extra: &[&str], input: &str| {
        let mut args = vec!["chat", "--model", "openai/gpt-5-mini"];
        args.extend_from_slice(extra);
        run.ctxkit_with_input(&with_store(&url, &args), &variables, input)
    };
    let first = chat(&[], &format!("!echo {marker}-one\n/quit\n"));
    assert!(first.starts_with("exit: 0"), "{first}");
    let found = |word: &str| -> Vec<String> {
        let listed = run.ctxkit(&with_store(
            &url,
            &["sessions", "--all", "--grep", word, "--json"],
        ));
        let listed: serde_json::Value =
            serde_json::from_str(listed.strip_prefix("exit: 0\n").unwrap()).unwrap();
        listed
            .as_array()
            .unwrap()
            .iter()
            .map(|session| session["path"].as_str().unwrap().to_owned())
            .collect()
    };
    let stored = found(&format!("{marker}-one"));
    assert_eq!(stored.len(), 1, "{first}");
    assert!(
        first.contains(&format!("Session: {}", stored[0])),
        "{first}"
    );
    let second = chat(&["--continue"], &format!("!echo {marker}-two\n/quit\n"));
    assert!(second.starts_with("exit: 0"), "{second}");
    assert_eq!(found(&format!("{marker}-two")), stored, "{second}");
}

/// `ctxkit chat --resume` on a database store lists the store's sessions of this directory (as
/// `sessions` does) and goes on in the one chosen, as `chat --session ID` does; it listed the
/// local session files instead, and the chat went on in a new file the store never saw.
#[test]
fn chat_resume_on_a_database_store_lists_and_resumes_the_stored_sessions() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let variables = [
        ("OPENAI_API_KEY", "sk-never-sent"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
    ];
    let marker = format!("resume-marker-{}", uuid::Uuid::new_v4().simple());
    let chat = |extra: &[&str], input: &str| {
        let mut args = vec!["chat", "--model", "openai/gpt-5-mini"];
        args.extend_from_slice(extra);
        run.ctxkit_with_input(&with_store(&url, &args), &variables, input)
    };
    let first = chat(&[], &format!("/name {marker}\n!echo one\n/quit\n"));
    assert!(first.starts_with("exit: 0"), "{first}");
    let resumed = chat(&["--resume"], "1\n!echo two\n/quit\n");
    assert!(resumed.starts_with("exit: 0"), "{resumed}");
    assert!(resumed.contains("  1. "), "{resumed}");
    assert!(resumed.contains(&marker), "{resumed}");
    // From a pipe the answer is written after the question, so the chat's banner starts a line
    // of its own (it followed the question on its line).
    assert!(
        resumed.contains("Resume which (number, empty to stay)? 1\nctxkit chat · "),
        "{resumed}"
    );
    let listed = run.ctxkit(&with_store(&url, &["sessions", "--json"]));
    let listed: serde_json::Value =
        serde_json::from_str(listed.strip_prefix("exit: 0\n").unwrap()).unwrap();
    let listed = listed.as_array().unwrap();
    // One stored session of this directory, holding both chats' commands.
    assert_eq!(listed.len(), 1, "{listed:?}\n{resumed}");
    let id = listed[0]["path"].as_str().unwrap();
    assert!(
        resumed.contains(&format!(
            "Continuing session “{marker}” (2 entries): {id} in postgres://"
        )),
        "{resumed}"
    );
    let context = run.ctxkit(&with_store(&url, &["context", id]));
    assert!(
        context.contains("one") && context.contains("two"),
        "{context}"
    );
    // An id the store does not hold exits as a missing session file does (4), with its hint.
    let missing = run.ctxkit(&with_store(&url, &["info", "no-such-stored-session"]));
    assert!(missing.starts_with("exit: 4\n"), "{missing}");
    assert!(
        missing.contains("hint: list the stored sessions"),
        "{missing}"
    );
    // No session file was written beside the store.
    let files = run.home.path().join("sessions");
    assert!(
        !files.exists() || std::fs::read_dir(&files).unwrap().next().is_none(),
        "{resumed}"
    );
}

/// `ctxkit import` on a database store writes its session file as ever, and says how to store it
/// there (the listing, which is the database's, would not show it).
#[test]
fn an_import_on_a_database_store_says_how_to_store_it() {
    let run = Run::new();
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctxkit-import/tests/fixtures/claude-code-session.jsonl");
    let out = run.home.path().join("imported.jsonl");
    // No database is reached: an import writes a file.
    let url = "postgres://nobody@127.0.0.1:1/ctxkit";
    let imported = run.ctxkit(&with_store(url, &["import", path_text(&source)]));
    assert!(imported.starts_with("exit: 0"), "{imported}");
    assert!(imported.contains("hint: the store is a database: `ctxkit store import FILE`"));
    let with_out = run.ctxkit(&with_store(
        url,
        &["import", path_text(&source), "--out", path_text(&out)],
    ));
    assert!(
        with_out.starts_with("exit: 0") && !with_out.contains("hint:"),
        "{with_out}"
    );
}

/// The same hint when the database is the user's setting `store.url`: without it (QA r102) the
/// import said nothing, and `ctxkit sessions`, which lists the database, showed no session.
#[test]
fn an_import_on_a_database_store_of_the_settings_says_how_to_store_it() {
    let run = Run::new();
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctxkit-import/tests/fixtures/claude-code-session.jsonl");
    // No database is reached: an import writes a file.
    let settings = serde_json::json!({"store": {"url": "postgres://nobody@127.0.0.1:1/ctxkit"}});
    std::fs::write(run.home.path().join("settings.json"), settings.to_string()).unwrap();
    let imported = run.ctxkit(&["import", path_text(&source)]);
    assert!(imported.starts_with("exit: 0"), "{imported}");
    assert!(
        imported.contains("hint: the store is a database: `ctxkit store import FILE`"),
        "{imported}"
    );
}

/// TLS from the CLI: a server of an unknown CA is refused with the way out (exit 4), a verified
/// one is used, and a fallback to plain text is refused as a wrong URL (exit 2).
#[test]
fn a_database_over_tls_is_verified_or_refused_with_the_way_out() {
    let Some(url) = database() else { return };
    let ca = std::env::var("CTXKIT_TEST_DATABASE_CA").unwrap();
    let run = Run::new();
    let unverified = format!("{url}?sslmode=require");
    let output = run.ctxkit(&with_store(&unverified, &["sessions", "--all"]));
    assert!(output.starts_with("exit: 4"), "{output}");
    assert!(output.contains("invalid peer certificate"), "{output}");
    assert!(
        output.contains("hint: ") && output.contains("sslrootcert="),
        "{output}"
    );
    let verified = format!("{url}?sslmode=verify-full&sslrootcert={ca}");
    let (file, id) = fresh_copy(&run, "good-branches.jsonl");
    let imported = run.ctxkit(&with_store(
        &verified,
        &["store", "import", path_text(&file)],
    ));
    assert!(imported.starts_with("exit: 0"), "{imported}");
    let tree = run.ctxkit(&with_store(&verified, &["tree", &id]));
    assert!(tree.starts_with("exit: 0"), "{tree}");
    // A role the server admits over TLS only: the hint says to ask for it.
    let plain = url.replacen("postgres://postgres@", "postgres://ctxkit_cert@", 1);
    let output = run.ctxkit(&with_store(&plain, &["sessions", "--all"]));
    assert!(output.starts_with("exit: 4"), "{output}");
    assert!(
        output.contains("hint: the server takes encrypted connections only"),
        "{output}"
    );
    let fallback = format!("{url}?sslmode=prefer");
    let output = run.ctxkit(&with_store(&fallback, &["sessions", "--all"]));
    assert!(output.starts_with("exit: 2"), "{output}");
    assert!(output.contains("sslmode=require"), "{output}");
}

/// QA 2026-12-07: `simulate ID` on a database store said the id was neither a file nor a session
/// of the sessions folder, which a database store does not use. It replays the stored session,
/// named by its id in the report, as every other command that takes a session FILE reads one.
#[test]
fn simulate_replays_a_database_session_named_by_its_id() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let (file, id) = fresh_copy(&run, "good-large-realistic.jsonl");
    run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    let simulated = run.ctxkit(&with_store(&url, &["simulate", &id[..13]]));
    assert!(simulated.starts_with("exit: 0"), "{simulated}");
    assert!(simulated.contains(&id), "{simulated}");
    assert!(!simulated.contains(".jsonl"), "{simulated}");
}

/// QA 2026-12-07: a command that failed on a damaged database session named its private
/// temporary copy, gone by then, and the hint said to `ctxkit check` that file. The error and the
/// hint name the session's id.
#[test]
fn an_error_in_a_database_session_names_it_by_its_id() {
    let Some(url) = database() else { return };
    let run = Run::new();
    let (file, id) = fresh_copy(&run, "good-large-realistic.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let damaged: Vec<String> = text
        .lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            if value["id"] == "6c360fcb" {
                value["message"]["content"] = serde_json::json!(42);
            }
            value.to_string()
        })
        .collect();
    std::fs::write(&file, damaged.join("\n") + "\n").unwrap();
    let imported = run.ctxkit(&with_store(&url, &["store", "import", path_text(&file)]));
    assert!(imported.starts_with("exit: 0"), "{imported}");
    // A name written as a path is a missing file, not an id looked for in the store.
    let missing = run.ctxkit(&with_store(&url, &["tokens", "./missing.jsonl"]));
    assert!(missing.starts_with("exit: 4"), "{missing}");
    assert!(!missing.contains("in the store"), "{missing}");
    for args in [&["compact", &id, "--preview"][..], &["tokens", &id]] {
        let failed = run.ctxkit(&with_store(&url, args));
        assert!(!failed.starts_with("exit: 0"), "{failed}");
        assert!(!failed.contains("ctxkit-session-"), "{args:?}: {failed}");
        assert!(
            failed.contains(&format!("`{id}` line ")),
            "{args:?}: {failed}"
        );
        assert!(
            failed.contains(&format!("ctxkit check {id}")),
            "{args:?}: {failed}"
        );
    }
}
