//! What `export` and `view` print on stderr is text, never commands: a file name (or a database
//! session's id, from a header someone sent) holding escape sequences set the window's title and
//! cleared the screen of the user running `ctxkit view`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::json;

use super::fixture::jsonl;
use super::{KillOnDrop, ctxkit};

const HOSTILE_NAME: &str = "s\u{1b}]0;PWNED\u{7}\u{1b}[2J";

/// A session in a newer format version (so the commands print a note naming the file).
fn write_session(path: &std::path::Path) {
    let at = "2026-01-01T00:00:00.000Z";
    let lines = [
        json!({"type": "session", "version": 4, "id": "esc", "timestamp": at, "cwd": "/tmp/e"}),
        json!({"type": "message", "id": "u1", "parentId": null, "timestamp": at,
               "message": {"role": "user", "content": "hello", "timestamp": 1}}),
    ];
    std::fs::write(path, jsonl(&lines)).unwrap();
}

#[test]
fn export_and_view_print_escape_sequences_of_names_as_text() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(format!("{HOSTILE_NAME}.jsonl"));
    write_session(&file);
    let page = home.path().join(format!("{HOSTILE_NAME}.html"));
    let output = ctxkit(
        home.path(),
        &[
            "export",
            file.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("Exported"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "{stderr:?}"
    );
    let mut view = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["view", file.to_str().unwrap()])
        .env("CTXKIT_HOME", home.path())
        .env("HOME", home.path())
        .current_dir(home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = view.stderr.take().unwrap();
    let _view = KillOnDrop(view);
    let mut said = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.starts_with("Serving") {
            break;
        }
    }
    assert!(said.contains("Serving"), "{said:?}");
    assert!(
        !said.contains('\u{1b}') && !said.contains('\u{7}'),
        "{said:?}"
    );
}
