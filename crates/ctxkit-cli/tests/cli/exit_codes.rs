//! Exit codes as `ctxkit --help` lists them: 2 a usage error (a flag's value ctxkit cannot use),
//! 3 invalid input, 4 an I/O error.

use std::io::BufRead as _;
use std::process::{Command, Stdio};

use super::Run;

/// A page asked for in a folder that does not exist is an I/O error (4), not invalid input.
#[test]
fn export_into_a_missing_folder_is_an_io_error() {
    let run = Run::new();
    let session = run.copy("good-branches.jsonl");
    let output = run.ctxkit(&[
        "export",
        session.to_str().unwrap(),
        "-o",
        "/nonexistent-ctxkit-folder/x.html",
    ]);
    assert!(output.starts_with("exit: 4\n"), "{output}");
    assert!(
        output.contains("cannot write into `/nonexistent-ctxkit-folder`: No such file"),
        "{output}"
    );
    assert!(!output.contains(".tmp"), "{output}");
}

/// A `--redact` pattern that is not a regular expression is a usage error (2), with a hint.
#[test]
fn a_bad_redact_pattern_is_a_usage_error() {
    let run = Run::new();
    let session = run.copy("good-branches.jsonl");
    let output = run.ctxkit(&[
        "export",
        session.to_str().unwrap(),
        "-o",
        "x.html",
        "--redact",
        "(",
    ]);
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains("hint: `--redact` takes a regular expression"),
        "{output}"
    );
}

/// `--listen` on every interface without a token is refused as a usage error (2), as `--help`'s
/// "a value ctxkit cannot use: `--listen`" says; it exited 3, as for invalid input.
#[test]
fn listen_on_every_interface_without_a_token_is_a_usage_error() {
    let run = Run::new();
    let output = run.ctxkit(&["serve", "--listen", "0.0.0.0:0"]);
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains("refusing to listen on 0.0.0.0:0 without a token"),
        "{output}"
    );
}

/// `--listen` takes `localhost:PORT` (127.0.0.1; never resolved); a host name is a usage error
/// (2) naming what it takes, as an address that is not one is.
#[test]
fn listen_takes_localhost_and_refuses_host_names_as_usage_errors() {
    let run = Run::new();
    for address in ["example.invalid:8499", "8499", "localhost:port", "[::1]:x"] {
        let output = run.ctxkit(&["serve", "--listen", address]);
        assert!(output.starts_with("exit: 2\n"), "{address}: {output}");
        assert!(
            output.contains("hint: name an IP address and a port"),
            "{output}"
        );
    }
    let mut server = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["serve", "--listen", "localhost:0"])
        .env("CTXKIT_HOME", run.home.path())
        .current_dir(run.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    let status = server.wait().unwrap();
    assert!(line.starts_with("Listening on ws://127.0.0.1:"), "{line:?}");
    // Stopped by SIGTERM: 128 + 15, as for the signal (after its graceful stop).
    assert_eq!(status.code(), Some(143), "{status}");
}

/// `config get` of a key that is not set exits 1, as `git config --get` does, and `--help` says so
/// (it listed 1 for `ctxkit check` only).
#[test]
fn config_get_of_an_unset_key_exits_1_as_help_lists() {
    let run = Run::new();
    let output = run.ctxkit(&["config", "get", "theme"]);
    assert!(output.starts_with("exit: 1\n"), "{output}");
    let help = run.ctxkit(&["--help"]);
    assert!(
        help.contains("1  `ctxkit check` found problems; `ctxkit config get`: the key is not set"),
        "{help}"
    );
}

/// A first chat with no model named runs the default model of the provider whose key is set,
/// as Pi 1.6.0 does, and says so (the variable's name only, never the key); without a key it says
/// which keys to set.
#[test]
fn a_chat_without_a_model_runs_the_one_the_users_key_can_reach() {
    let run = Run::new();
    let output = run.ctxkit_with_input(&["chat"], &[], "hello\n");
    assert!(output.starts_with("exit: 3\n"), "{output}");
    assert!(output.contains("error: No model configured"), "{output}");
    assert!(
        output.contains("hint: save a provider's key with `ctxkit login anthropic`"),
        "{output}"
    );
    // `/quit` before any prompt: nothing is sent anywhere.
    let output = run.ctxkit_with_input(
        &["chat"],
        &[
            ("GEMINI_API_KEY", "gm-key-value-never-shown"),
            ("GROQ_API_KEY", "gq-key-value-never-shown"),
        ],
        "/quit\n",
    );
    assert!(output.starts_with("exit: 0\n"), "{output}");
    assert!(
        output.contains("ctxkit chat · google/gemini-4-argon (1048576-token window)"),
        "{output}"
    );
    assert!(
        output.contains(
            "No model configured: using google/gemini-4-argon, since `GEMINI_API_KEY` is set"
        ),
        "{output}"
    );
    assert!(!output.contains("key-value-never-shown"), "{output}");
}

/// A session that is not there exits 4 for every command that takes one, with one message and
/// one hint: `checkpoints` said exit 3 where `info` said 4 (a database's unknown id said 3 too).
#[test]
fn a_missing_session_exits_4_with_one_hint_for_every_command_that_takes_one() {
    let run = Run::new();
    let commands: [&[&str]; 21] = [
        &["info", "missing.jsonl"],
        &["tree", "missing.jsonl"],
        &["context", "missing.jsonl"],
        &["tokens", "missing.jsonl"],
        &["compactions", "missing.jsonl"],
        &["check", "missing.jsonl"],
        &["checkpoints", "missing.jsonl"],
        &["fork", "missing.jsonl"],
        &["fork-from", "missing.jsonl", "--cwd", "/tmp"],
        &["label", "missing.jsonl", "x", "y"],
        &["name", "missing.jsonl", "x"],
        &["edit-context", "missing.jsonl", "x", "--omit"],
        &["migrate", "missing.jsonl"],
        &["compact", "missing.jsonl", "--dry-run"],
        &["compact", "missing.jsonl"],
        &["undo-compact", "missing.jsonl"],
        &["branch", "missing.jsonl", "--to", "x"],
        &["export", "missing.jsonl", "--html", "-o", "page.html"],
        &["view", "missing.jsonl"],
        &["simulate", "missing.jsonl"],
        // Not `chat --session missing.jsonl`: as Pi's, it starts a new session written there
        // (`chat_piped::session_naming_a_new_file_writes_the_session_there`).
        &["store", "import", "missing.jsonl"],
    ];
    for args in commands {
        let output = run.ctxkit(args);
        assert!(output.starts_with("exit: 4\n"), "{args:?}: {output}");
        assert!(
            output.contains("error: cannot open `missing.jsonl`: No such file or directory"),
            "{args:?}: {output}"
        );
        assert!(
            output.contains("hint: `ctxkit sessions` lists this directory's sessions"),
            "{args:?}: {output}"
        );
    }
    // An import's missing source too.
    let output = run.ctxkit(&["import", "missing.jsonl"]);
    assert!(output.starts_with("exit: 4\n"), "{output}");
}

/// An entry id the session does not hold: exit 3, the error names the session and the hint the
/// command that lists its ids, for every command that takes an entry id.
#[test]
fn a_missing_entry_names_its_session_for_every_command_that_takes_an_id() {
    let run = Run::new();
    let demo =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-session.jsonl");
    std::fs::copy(demo, run.home.path().join("demo.jsonl")).unwrap();
    let before = std::fs::read(run.home.path().join("demo.jsonl")).unwrap();
    let commands: [&[&str]; 6] = [
        &["label", "demo.jsonl", "nope", "text"],
        &["fork", "demo.jsonl", "--at", "nope"],
        &["context", "demo.jsonl", "--leaf", "nope"],
        &["tokens", "demo.jsonl", "--leaf", "nope"],
        &["branch", "demo.jsonl", "--to", "nope"],
        &["edit-context", "demo.jsonl", "nope", "--omit"],
    ];
    for args in commands {
        let output = run.ctxkit(args);
        assert!(output.starts_with("exit: 3\n"), "{args:?}: {output}");
        assert!(
            output.contains("error: entry `nope` not found in `demo.jsonl`"),
            "{args:?}: {output}"
        );
        assert!(
            output.contains("hint: list entry ids with `ctxkit tree demo.jsonl`"),
            "{args:?}: {output}"
        );
    }
    assert_eq!(
        std::fs::read(run.home.path().join("demo.jsonl")).unwrap(),
        before
    );
}

/// QA (2026-12-05): a token of spaces started a server no client could reach (every `Bearer`
/// header was refused); it is refused at start instead, as an empty one is.
#[test]
fn a_server_token_holding_spaces_is_refused_at_start() {
    let run = Run::new();
    for token in [" ", "two words", "line\nbreak"] {
        let output = run.ctxkit_with_env(
            &["serve", "--listen", "127.0.0.1:0"],
            &[("CTXKIT_SERVER_TOKEN", token)],
        );
        assert!(output.starts_with("exit: 3\n"), "{token:?}: {output}");
        assert!(output.contains("holds a space or line break"), "{output}");
    }
}

/// QA 2026-12-07: `CTXKIT_SERVER_TOKEN=a ctxkit serve --listen 0.0.0.0:…` started, though a
/// token holder may run commands as the user. A token under 16 characters is refused at start.
#[test]
fn a_short_server_token_is_refused_at_start() {
    let run = Run::new();
    for token in ["a", "secret", "0123456789abcde"] {
        let output = run.ctxkit_with_env(
            &["serve", "--listen", "127.0.0.1:0"],
            &[("CTXKIT_SERVER_TOKEN", token)],
        );
        assert!(output.starts_with("exit: 3\n"), "{token:?}: {output}");
        assert!(output.contains("needs at least 16"), "{output}");
    }
}

/// `install file:///repo` names the path the URL points to, as Pi reads it (QA 2026-12-07: it
/// looked for `./file:/repo`, and a 2026-12-05 hint pointed to the git form instead).
#[test]
fn a_file_url_to_install_names_the_path_it_points_to() {
    let run = Run::new();
    let output = run.ctxkit(&["install", "file:///tmp/no-such-repo"]);
    assert!(output.starts_with("exit: 3\n"), "{output}");
    assert!(
        output.contains("error: Path does not exist: `/tmp/no-such-repo`"),
        "{output}"
    );
}

/// The start of several session ids in a sessions folder was invalid input (3), naming none of
/// them, where a database store says it is a usage error (2) and lists them: both now do the
/// latter, so the user can pick one.
#[test]
fn an_ambiguous_session_id_start_is_a_usage_error_listing_the_ids() {
    let run = Run::new();
    let folder = run.home.path().join("sessions/--project--");
    std::fs::create_dir_all(&folder).unwrap();
    for id in [
        "01a24c72-1bf3-7000-8000-000000000001",
        "01a29d10-1bf3-7000-8000-000000000002",
    ] {
        let header = format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/project"}}"#
        );
        let message = r#"{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
        std::fs::write(
            folder.join(format!("{id}.jsonl")),
            format!("{header}\n{message}\n"),
        )
        .unwrap();
    }
    let output = run.ctxkit(&["simulate", "01a2"]);
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains("`01a2` starts 2 session ids (01a24c72-1bf3-7000-8000-000000000001, 01a29d10-1bf3-7000-8000-000000000002); give more of it"),
        "{output}"
    );
}

/// A `--log` value that is no log filter is a usage error (2), as `ctxkit --help` says of a
/// value ctxkit cannot use; it was invalid input (3).
#[test]
fn a_bad_log_filter_is_a_usage_error() {
    let run = Run::new();
    let session = run.copy("good-branches.jsonl");
    let output = run.ctxkit(&["--log", "nonsense===", "info", session.to_str().unwrap()]);
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains("error: `--log nonsense===` is not a log filter"),
        "{output}"
    );
    assert!(output.contains("hint: "), "{output}");
}

/// `checkpoints` of a file that is not a session said "No file checkpoints for this session."
/// (exit 0); it is refused as every other command on a session refuses it (exit 3).
#[test]
fn checkpoints_of_a_file_that_is_not_a_session_is_refused() {
    let run = Run::new();
    std::fs::write(run.home.path().join("notes.txt"), "shopping list\n").unwrap();
    for args in [
        &["checkpoints", "notes.txt"][..],
        &["checkpoints", "notes.txt", "--json"],
    ] {
        let output = run.ctxkit(args);
        assert!(output.starts_with("exit: 3\n"), "{args:?}: {output}");
        assert!(
            output.contains("`notes.txt` is not a session file"),
            "{args:?}: {output}"
        );
    }
}
