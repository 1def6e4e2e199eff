//! FIFOs, devices and links to devices among received transcripts: never opened in a way that
//! waits or reads forever. A listing skips them with a note; an import refuses them with the
//! main import's one-line error. Every call runs under a timeout, so a regression fails instead of
//! hanging the suite.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use ctxkit_import::{
    ImportError, ImportedSession, SourceFormat, find_subagents, import_file, list_foreign_sessions,
};

const REFUSAL: &str = "not a regular file (a FIFO, a device or a socket)";

const CLAUDE_LINE: &str = r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/x","message":{"role":"user","content":"hi"}}"#;

/// `run`'s result, or a panic when it takes more than ten seconds (it is left running: a FIFO's
/// open never returns).
fn within_timeout<T: Send + 'static>(run: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(run());
    });
    receiver
        .recv_timeout(Duration::from_secs(10))
        .expect("blocked for ten seconds (a FIFO or a device was read)")
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn link_to_dev_zero(path: &Path) {
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

fn skipped_reasons(format: SourceFormat, root: &Path) -> (Vec<String>, Vec<(PathBuf, String)>) {
    let root = root.to_owned();
    let (sessions, skipped) = within_timeout(move || list_foreign_sessions(format, &root)).unwrap();
    let mut skipped: Vec<(PathBuf, String)> = skipped
        .into_iter()
        .map(|file| (file.path, file.error.to_string()))
        .collect();
    skipped.sort();
    (
        sessions.into_iter().map(|session| session.path).collect(),
        skipped,
    )
}

#[test]
fn a_claude_code_listing_skips_a_fifo_and_a_link_to_a_device_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj1");
    std::fs::create_dir_all(&project).unwrap();
    let good = project.join("a.jsonl");
    std::fs::write(&good, format!("{CLAUDE_LINE}\n")).unwrap();
    mkfifo(&project.join("b.jsonl"));
    link_to_dev_zero(&project.join("c.jsonl"));
    let (listed, skipped) = skipped_reasons(SourceFormat::ClaudeCode, dir.path());
    assert_eq!(listed, [good.display().to_string()]);
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    for (path, reason) in &skipped {
        assert!(reason.contains(REFUSAL), "{}: {reason}", path.display());
    }
}

#[test]
fn a_codex_listing_skips_a_fifo_rollout_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("rollout-2026-01-01T00-00-00-x.jsonl"));
    link_to_dev_zero(&dir.path().join("rollout-2026-01-01T00-00-01-y.jsonl"));
    let (listed, skipped) = skipped_reasons(SourceFormat::Codex, dir.path());
    assert!(listed.is_empty(), "{listed:?}");
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    for (_, reason) in &skipped {
        assert!(reason.contains(REFUSAL), "{reason}");
    }
}

/// A Claude Code session with one subagent whose `.meta.json` is made by `meta`.
fn session_with_subagent_meta(dir: &Path, meta: fn(&Path)) -> PathBuf {
    let parent = dir.join("s.jsonl");
    std::fs::write(&parent, format!("{CLAUDE_LINE}\n")).unwrap();
    let subagents = dir.join("s/subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    std::fs::write(
        subagents.join("agent-1.jsonl"),
        format!("{}\n", CLAUDE_LINE.replace("\"u1\"", "\"u9\"")),
    )
    .unwrap();
    meta(&subagents.join("agent-1.meta.json"));
    parent
}

#[test]
fn a_subagent_whose_meta_is_a_fifo_or_a_device_is_refused_at_once() {
    for meta in [mkfifo as fn(&Path), link_to_dev_zero] {
        let dir = tempfile::tempdir().unwrap();
        let parent = session_with_subagent_meta(dir.path(), meta);
        let meta = parent.with_file_name("s/subagents/agent-1.meta.json");
        let error = within_timeout(move || {
            find_subagents(SourceFormat::ClaudeCode, &parent, "s").map(|found| found.len())
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("cannot read `{}`: {REFUSAL}", meta.display())
        );
    }
}

#[test]
fn an_import_refuses_a_fifo_or_a_device_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("f.jsonl");
    mkfifo(&fifo);
    let zero = dir.path().join("z.jsonl");
    link_to_dev_zero(&zero);
    for path in [fifo, zero] {
        let shown = path.display().to_string();
        let error = within_timeout(move || import_file(&path, None).map(|_| ())).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("cannot read `{shown}`: {REFUSAL}")
        );
    }
}

#[test]
fn writing_over_a_fifo_or_a_device_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("s.jsonl");
    std::fs::write(&source, format!("{CLAUDE_LINE}\n")).unwrap();
    let session: ImportedSession = import_file(&source, None).unwrap();
    let fifo = dir.path().join("out.jsonl");
    mkfifo(&fifo);
    let zero = dir.path().join("zero.jsonl");
    link_to_dev_zero(&zero);
    for target in [fifo, zero] {
        let session = session.clone();
        let shown = target.display().to_string();
        let outcome = within_timeout(move || session.write_to(&target).map(|_| ()));
        match outcome {
            Err(error @ ImportError::Io { .. }) => {
                assert_eq!(
                    error.to_string(),
                    format!("cannot read `{shown}`: {REFUSAL}")
                );
            }
            other => panic!("{shown}: {other:?}"),
        }
    }
}

/// QA (2026-12-07): `--out` naming a symlink to a missing file said "cannot create …: File
/// exists (os error 17)". It is refused as an output that is no earlier import, the link left
/// as it was.
#[test]
fn an_output_that_is_a_link_to_nothing_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("transcript.jsonl");
    std::fs::write(&source, format!("{CLAUDE_LINE}\n")).unwrap();
    let output = dir.path().join("out.jsonl");
    std::os::unix::fs::symlink(dir.path().join("missing.jsonl"), &output).unwrap();
    let imported = import_file(&source, None).unwrap();
    let refused = imported.write_to(&output).unwrap_err();
    assert!(
        matches!(&refused, ImportError::Conflict { reason, .. } if reason.contains("is a symlink to")),
        "{refused}"
    );
    assert!(!dir.path().join("missing.jsonl").exists());
    assert!(std::fs::symlink_metadata(&output).unwrap().is_symlink());
}

/// QA: bytes that are not UTF-8 in a transcript became U+FFFD without a word; each line holding
/// some is reported now, by line (whole-file and line-by-line reads alike).
#[test]
fn bytes_that_are_not_utf8_are_reported_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read(crate::fixtures_dir().join("claude-code-session.jsonl")).unwrap();
    let mut lines: Vec<Vec<u8>> = source
        .split(|byte| *byte == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    let line = lines
        .iter()
        .position(|line| line.windows(6).any(|window| window == b"\"text\""))
        .unwrap();
    let at = lines[line]
        .windows(6)
        .position(|window| window == b"\"text\"")
        .unwrap();
    // Inside the key's quotes would break the JSON; after them, in the value, it does not.
    let value = lines[line][at + 6..]
        .iter()
        .position(|byte| byte.is_ascii_alphabetic())
        .unwrap();
    lines[line][at + 6 + value] = 0xFF;
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, lines.join(&b'\n')).unwrap();
    let session = ctxkit_import::import_file(&path, None).unwrap();
    let invalid: Vec<Option<usize>> = session
        .report
        .issues
        .iter()
        .filter(|issue| issue.kind == ctxkit_import::IssueKind::InvalidUtf8 { file: None })
        .map(|issue| issue.line)
        .collect();
    assert_eq!(invalid, [Some(line + 1)]);
}
