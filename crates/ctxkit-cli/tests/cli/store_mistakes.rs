//! What the store commands do with a user's mistakes: a mistyped store URL, a password on the
//! command line, a batch of files of which some cannot be imported.

use super::Run;

fn names_in(folder: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A store URL with a typo (one slash, none) was taken for a directory: `store import` wrote the
/// session into a folder named after the URL, password included, and said "Imported". It is a
/// usage error naming the form, the password hidden, and nothing is written.
#[test]
fn a_mistyped_store_url_is_a_usage_error_and_writes_nothing() {
    let run = Run::new();
    let session = run.copy("good-branches.jsonl");
    let before = names_in(run.home.path());
    for url in [
        "postgres:/user:PW-s3cret@127.0.0.1:1/ctxkit",
        "postgresql:user:PW-s3cret@127.0.0.1/ctxkit",
        "Postgres:/user:PW-s3cret@127.0.0.1:1/ctxkit",
        "mysql://user:PW-s3cret@127.0.0.1/ctxkit",
    ] {
        let output = run.ctxkit(&["--store", url, "store", "import", session.to_str().unwrap()]);
        assert!(output.starts_with("exit: 2\n"), "{url}: {output}");
        assert!(
            output.contains("hint: ") && output.contains("postgres://USER@HOST:PORT/DB"),
            "{output}"
        );
        assert!(!output.contains("PW-s3cret"), "{output}");
        assert!(!output.contains("Imported"), "{output}");
        assert_eq!(names_in(run.home.path()), before, "{url}");
    }
}

/// Schemes are case-insensitive: `POSTGRES://` names a database (here one that does not answer:
/// an I/O error, not a refused URL).
#[test]
fn a_database_url_in_upper_case_is_a_database() {
    let run = Run::new();
    let output = run.ctxkit(&[
        "--store",
        "POSTGRES://nobody@127.0.0.1:1/ctxkit",
        "sessions",
    ]);
    assert!(output.starts_with("exit: 4\n"), "{output}");
    assert!(output.contains("cannot connect"), "{output}");
}

/// A database that does not answer at start (`serve --listen` of a fleet, or any store command):
/// one error line and a hint saying what to check and where the URL comes from; it was the error
/// line alone.
#[test]
fn a_database_that_does_not_answer_is_one_error_line_and_a_hint() {
    let run = Run::new();
    for command in [
        &["serve", "--listen", "127.0.0.1:0"][..],
        &["sessions", "--all"][..],
    ] {
        let mut arguments = vec!["--store", "postgres://nobody@127.0.0.1:1/ctxkit"];
        arguments.extend_from_slice(command);
        let output = run.ctxkit(&arguments);
        assert!(output.starts_with("exit: 4\n"), "{output}");
        let lines: Vec<&str> = output.lines().filter(|line| !line.is_empty()).collect();
        assert_eq!(lines[..2], ["exit: 4", "--- stderr"], "{output}");
        assert_eq!(lines.len(), 4, "{output}");
        assert!(
            lines[2].starts_with("error: cannot open the store `postgres://<redacted>@127.0.0.1:1/ctxkit`: database: cannot connect: "),
            "{output}"
        );
        assert!(
            lines[3].starts_with("hint: check that PostgreSQL runs")
                && lines[3].contains("`CTXKIT_STORE`"),
            "{output}"
        );
    }
}

/// A password in `--store` is in `/proc/PID/cmdline` for every local user while ctxkit runs: one
/// warning naming `CTXKIT_STORE`; none for the variable, or a URL without a password.
#[test]
fn a_password_on_the_command_line_is_warned_of() {
    let run = Run::new();
    let warning = "warning: the password in `--store`";
    let with_password = "postgres://alice:PW-s3cret@127.0.0.1:1/ctxkit";
    let output = run.ctxkit(&["--store", with_password, "sessions"]);
    assert_eq!(output.matches(warning).count(), 1, "{output}");
    assert!(output.contains("`CTXKIT_STORE`"), "{output}");
    assert!(!output.contains("PW-s3cret"), "{output}");
    let output = run.ctxkit_with_env(&["sessions"], &[("CTXKIT_STORE", with_password)]);
    assert!(!output.contains(warning), "{output}");
    let output = run.ctxkit(&["--store", "postgres://alice@127.0.0.1:1/ctxkit", "sessions"]);
    assert!(!output.contains(warning), "{output}");
}

/// `store import` of several files: each is imported or refused on its own, a refusal reported
/// with a hint that fits it, the others imported, and the exit code says some failed. A Pi
/// session with a lone surrogate (half an emoji) is read by every other command, so it imports
/// too, byte for byte.
#[test]
fn a_batch_imports_every_file_it_can_and_names_each_it_cannot() {
    let run = Run::new();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus/session_loader/good-lone-surrogate.jsonl");
    let surrogate = run.home.path().join("surrogate.jsonl");
    std::fs::copy(&fixture, &surrogate).unwrap();
    let good = run.copy("good-branches.jsonl");
    let damaged = run.home.path().join("damaged.jsonl");
    let text = std::fs::read_to_string(super::corpus("good-labels.jsonl")).unwrap();
    std::fs::write(&damaged, text.replacen("\n{", "\n{\"cut\n{", 1)).unwrap();
    let not_utf8 = run.home.path().join("not-utf8.jsonl");
    let mut bytes = std::fs::read(super::corpus("good-unicode.jsonl")).unwrap();
    bytes.extend_from_slice(b"{\"type\":\"custom\",\"id\":\"x1\",\"data\":\"\xff\"}\n");
    std::fs::write(&not_utf8, bytes).unwrap();
    let store = run.home.path().join("store");
    let output = run.ctxkit(&[
        "--store",
        store.to_str().unwrap(),
        "store",
        "import",
        surrogate.to_str().unwrap(),
        damaged.to_str().unwrap(),
        good.to_str().unwrap(),
        not_utf8.to_str().unwrap(),
    ]);
    assert!(output.starts_with("exit: 3\n"), "{output}");
    assert_eq!(output.matches("Imported ").count(), 2, "{output}");
    assert!(output.contains("from [HOME]/surrogate.jsonl"), "{output}");
    assert!(
        output.contains("from [HOME]/good-branches.jsonl"),
        "{output}"
    );
    assert!(
        output.contains("hint: `ctxkit check [HOME]/damaged.jsonl` lists every damaged line"),
        "{output}"
    );
    assert!(
        output.contains("cannot import `[HOME]/not-utf8.jsonl`: line 13: not UTF-8"),
        "{output}"
    );
    assert!(
        output.contains("cannot import `[HOME]/damaged.jsonl`: line 2: not JSON"),
        "{output}"
    );
    assert!(
        output.contains("a store keeps each line as text"),
        "{output}"
    );
    assert!(!output.contains("list the stored sessions"), "{output}");
    // The sentence ends (it stopped at "; the others were").
    assert!(
        output
            .ends_with("2 of 4 files not imported (each named above); the other 2 were imported\n"),
        "{output}"
    );
    // One file alone: no "others" (sweep 9: "1 of 1 file not imported …; the others were").
    let output = run.ctxkit(&[
        "--store",
        store.to_str().unwrap(),
        "store",
        "import",
        damaged.to_str().unwrap(),
    ]);
    assert!(
        output.contains("The file was not imported (named above)") && !output.contains("others"),
        "{output}"
    );
    let exported = run.home.path().join("back.jsonl");
    let output = run.ctxkit(&[
        "--store",
        store.to_str().unwrap(),
        "store",
        "export",
        "3eb2decb-435b-7b94-a3f9-d0b9fcb9c967",
        "-o",
        exported.to_str().unwrap(),
    ]);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    assert_eq!(
        std::fs::read(&exported).unwrap(),
        std::fs::read(&fixture).unwrap()
    );
}

/// `config list` with a `CTXKIT_STORE` that is no store URL failed with the store's error: listing
/// the settings needs no store. It lists them, the store's row naming where its value comes from
/// and what is wrong with it, never its password (nor a `password=` parameter's value).
#[test]
fn config_list_shows_a_bad_store_url_beside_its_row() {
    let run = Run::new();
    for (url, problem) in [
        (
            "postgres://bob:PW-s3cret@[::1/ctxkit",
            "not a store URL: invalid IPv6 address",
        ),
        (
            "postgres://db/ctxkit?sslmode=bogus&password=PW-s3cret",
            "not a store URL: unknown `sslmode=bogus`",
        ),
    ] {
        let output = run.ctxkit_with_env(&["config", "list"], &[("CTXKIT_STORE", url)]);
        assert!(output.starts_with("exit: 0\n"), "{url}: {output}");
        let row = output
            .lines()
            .find(|line| line.starts_with("store.url "))
            .unwrap_or_default();
        assert!(
            row.contains("postgres:…  (CTXKIT_STORE; ") && row.contains(problem),
            "{row}"
        );
        assert!(!output.contains("PW-s3cret"), "{output}");
        let json = run.ctxkit_with_env(&["config", "list", "--json"], &[("CTXKIT_STORE", url)]);
        assert!(json.contains(r#""problem": "not a store URL: "#), "{json}");
        assert!(!json.contains("PW-s3cret"), "{json}");
        // Nor do the other commands that touch no session need it.
        let models = run.ctxkit_with_env(&["models"], &[("CTXKIT_STORE", url)]);
        assert!(models.starts_with("exit: 0\n"), "{models}");
    }
    // A store URL's `password=` is hidden wherever settings are shown, `config get` included.
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"store": {"url": "postgres://db/ctxkit?password=PW-s3cret"}}"#,
    )
    .unwrap();
    for args in [
        &["config", "get", "store.url"][..],
        &["config", "get", "store"],
        &["config", "list"],
    ] {
        let output = run.ctxkit(args);
        assert!(output.contains("password=***"), "{args:?}: {output}");
        assert!(!output.contains("PW-s3cret"), "{args:?}: {output}");
    }
}

/// `config get` of a key a variable or flag overrides showed the settings file's value (or "not
/// set", exit 1) where `config list` and every command use the override: both now show what the
/// commands use, and where it comes from.
#[test]
fn config_get_shows_the_store_and_sessions_folder_the_commands_use() {
    let run = Run::new();
    let home = run.home.path().display().to_string();
    let file_store = format!("{home}/filestore");
    let set = run.ctxkit(&["config", "set", "store.url", &file_store]);
    assert!(set.starts_with("exit: 0\n"), "{set}");
    let env_store = format!("{home}/envstore");
    let variables = [
        ("CTXKIT_STORE", env_store.as_str()),
        ("CTXKIT_SESSIONS_DIR", "/elsewhere/sessions"),
    ];
    let get = |key: &str| run.ctxkit_with_env(&["config", "get", key, "--json"], &variables);
    let record = |key: &str| -> serde_json::Value {
        let output = get(key);
        serde_json::from_str(output.strip_prefix("exit: 0\n").unwrap()).unwrap()
    };
    let store = record("store.url");
    assert_eq!(store["value"], "[HOME]/envstore");
    assert_eq!(store["origin"], "CTXKIT_STORE");
    let sessions = record("sessionDir");
    assert_eq!(sessions["value"], "/elsewhere/sessions");
    assert_eq!(sessions["origin"], "CTXKIT_SESSIONS_DIR");
    let listed = run.ctxkit_with_env(&["config", "list"], &variables);
    assert!(
        listed.contains("sessionDir  /elsewhere/sessions  (CTXKIT_SESSIONS_DIR)")
            || listed.lines().any(|line| line.starts_with("sessionDir ")
                && line.ends_with("/elsewhere/sessions  (CTXKIT_SESSIONS_DIR)")),
        "{listed}"
    );
    // The flag wins over the variable, and is named.
    let flagged = run.ctxkit_with_env(
        &[
            "--sessions-dir",
            "/flag/sessions",
            "config",
            "get",
            "sessionDir",
        ],
        &variables,
    );
    assert_eq!(flagged, "exit: 0\n/flag/sessions\n");
    // Not in the file, set by the variable: set, not "not set" with exit 1.
    run.ctxkit(&["config", "unset", "store.url"]);
    let plain = run.ctxkit_with_env(&["config", "get", "store.url"], &variables);
    assert_eq!(plain, "exit: 0\n[HOME]/envstore\n");
    // `--project` asks for the project's file itself.
    let project = run.ctxkit_with_env(&["config", "get", "store.url", "--project"], &variables);
    assert!(!project.contains("envstore"), "{project}");
}
