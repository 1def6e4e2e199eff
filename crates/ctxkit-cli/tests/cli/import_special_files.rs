//! A FIFO or a link to a device among received transcripts: `ctxkit sessions --from … --dir`
//! lists the rest and notes the file skipped, `ctxkit import` refuses it with one line (exit 4)
//! and writes nothing. Each run is killed after ten seconds, so a regression fails, not hangs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LINE: &str = r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/x","message":{"role":"user","content":"hi"}}"#;
const REFUSAL: &str = "not a regular file (a FIFO, a device or a socket)";

/// Exit code, stdout and stderr of `ctxkit args` in `home`; panics when it runs ten seconds.
fn run_within_timeout(home: &Path, args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(args)
        .current_dir(home)
        .env("CTXKIT_HOME", home.join("ctxkit"))
        .env("HOME", home)
        .env_remove("CTXKIT_SESSIONS_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("`ctxkit {}` still ran after ten seconds", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_listing_notes_a_fifo_or_a_device_and_lists_the_rest() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let project = home.join("claude/proj1");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.jsonl"), format!("{LINE}\n")).unwrap();
    mkfifo(&project.join("b.jsonl"));
    std::os::unix::fs::symlink("/dev/zero", project.join("c.jsonl")).unwrap();
    let codex = home.join("codex");
    std::fs::create_dir_all(&codex).unwrap();
    mkfifo(&codex.join("rollout-2026-01-01T00-00-00-x.jsonl"));
    for (from, dir, listed, skipped) in [
        ("claude-code", "claude", true, 2),
        ("codex", "codex", false, 1),
    ] {
        let dir = home.join(dir).display().to_string();
        let (code, stdout, stderr) =
            run_within_timeout(home, &["sessions", "--from", from, "--dir", &dir]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(stdout.contains("a.jsonl"), listed, "{stdout}");
        let notes: Vec<&str> = stderr.lines().collect();
        assert_eq!(notes.len(), skipped, "{stderr}");
        for note in notes {
            assert!(
                note.starts_with("warning: skipped `") && note.ends_with(REFUSAL),
                "{note}"
            );
        }
    }
}

#[test]
fn an_import_whose_subagent_meta_is_a_fifo_is_refused_and_writes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let source = home.join("src/s.jsonl");
    let subagents = home.join("src/s/subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    std::fs::write(&source, format!("{LINE}\n")).unwrap();
    std::fs::write(
        subagents.join("agent-1.jsonl"),
        format!("{}\n", LINE.replace("\"u1\"", "\"u9\"")),
    )
    .unwrap();
    let meta = subagents.join("agent-1.meta.json");
    mkfifo(&meta);
    let out = home.join("out/s.jsonl");
    let (code, stdout, stderr) = run_within_timeout(
        home,
        &[
            "import",
            &source.display().to_string(),
            "--out",
            &out.display().to_string(),
        ],
    );
    assert_eq!(code, 4, "{stdout}{stderr}");
    assert_eq!(
        stderr.lines().next(),
        Some(format!("error: cannot read `{}`: {REFUSAL}", meta.display()).as_str()),
        "{stderr}"
    );
    assert!(!out.exists(), "the parent session was written");
}
