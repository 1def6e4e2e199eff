//! What `export` and `view` refuse before they read a byte, as every command that reads a session
//! refuses it: a FIFO (opening one waits for a writer), a device.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `ctxkit ARGS` in `home`, killed after `limit`: its exit code (`None` when it had to be killed)
/// and its stderr.
fn run_within(home: &Path, args: &[&str], limit: Duration) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(args)
        .env("CTXKIT_HOME", home)
        .env("HOME", home)
        .current_dir(home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            return (output.status.code(), stderr);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    (None, String::new())
}

/// `mkfifo f; ctxkit export f -o x.html` (and `ctxkit view f`) waited forever for a writer, while
/// `ctxkit info f` refused at once: now both refuse it as `info` does (exit 3).
#[test]
fn export_and_view_refuse_a_fifo_at_once_as_info_does() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("f.jsonl");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let page = home.path().join("x.html");
    let fifo = fifo.to_str().unwrap();
    let runs: [&[&str]; 4] = [
        &["info", fifo],
        &["export", fifo, "-o", page.to_str().unwrap()],
        &[
            "export",
            "--from",
            "claude-code",
            fifo,
            "-o",
            page.to_str().unwrap(),
        ],
        &["view", fifo],
    ];
    for args in runs {
        let (code, stderr) = run_within(home.path(), args, Duration::from_secs(10));
        assert_eq!(code, Some(3), "{args:?} (None: still waiting): {stderr}");
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|line| line.starts_with("error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
        assert!(
            errors[0].contains("is not a regular file (a FIFO)"),
            "{args:?}: {stderr}"
        );
    }
    assert!(!page.exists());
}

/// `export -o -` wrote a file named `-`: a page is a file to open, so `-` is refused, saying how
/// to name one, and no file `-` is left.
#[test]
fn export_refuses_a_dash_for_its_page() {
    let home = tempfile::tempdir().unwrap();
    let session = home.path().join("s.jsonl");
    std::fs::write(
        &session,
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/tmp\"}\n",
    )
    .unwrap();
    let output = super::ctxkit(
        home.path(),
        &["export", session.to_str().unwrap(), "-o", "-"],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("-o session.html"), "{stderr}");
    assert!(!home.path().join("-").exists());
}

/// QA r98: `export -o copy.jsonl` wrote a web page under a session file's name (the chat's
/// `/export copy.jsonl` copies the session). A name for another format is refused, saying what to
/// do instead, and nothing is written.
#[test]
fn export_refuses_a_name_for_another_format() {
    let home = tempfile::tempdir().unwrap();
    let session = home.path().join("s.jsonl");
    std::fs::write(
        &session,
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/tmp\"}\n",
    )
    .unwrap();
    for (name, hint) in [
        ("copy.jsonl", "to copy the session"),
        ("notes.md", "ctxkit context FILE"),
    ] {
        let page = home.path().join(name);
        let output = super::ctxkit(
            home.path(),
            &[
                "export",
                session.to_str().unwrap(),
                "-o",
                page.to_str().unwrap(),
            ],
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("writes a web page (HTML)"), "{stderr}");
        assert!(stderr.contains(hint), "{stderr}");
        assert!(!page.exists(), "{name}");
    }
}
