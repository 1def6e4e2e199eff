//! QA: a signal that ended `compact --preview` left its private copy of the session in the
//! temporary folder (59 MB for a large session), and Ctrl-C was not seen by an offline compaction
//! at all. A stop signal now removes what the command wrote on the side, and Ctrl-C cancels.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A linear session of `pairs` prompts and replies, long enough that an offline compaction of it
/// takes a while in a debug build.
fn large_session(file: &Path, pairs: usize) {
    use std::io::Write as _;
    let mut out = std::io::BufWriter::new(std::fs::File::create(file).unwrap());
    let header = json!({"type": "session", "version": 3, "id": "0192a7c4-1b2c-7d3e-8f40-0000000000aa",
                        "timestamp": "2026-11-26T10:00:00.000Z", "cwd": "/tmp/project"});
    writeln!(out, "{header}").unwrap();
    let mut parent = Value::Null;
    let filler =
        "the parser reads src/lib.rs and tests/parse.rs again before the next change; ".repeat(8);
    for pair in 0..pairs {
        for role in ["user", "assistant"] {
            let id = format!("e{pair:07}{}", &role[..1]);
            let text = format!("{role} step {pair}: {filler}");
            let message = if role == "user" {
                json!({"role": role, "content": text, "timestamp": 1_795_687_201_000_u64})
            } else {
                json!({"role": role, "content": [{"type": "text", "text": text}],
                       "api": "openai-completions", "provider": "mock", "model": "test-model",
                       "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                                 "totalTokens": 15},
                       "stopReason": "stop", "timestamp": 1_795_687_201_000_u64})
            };
            let entry = json!({"type": "message", "id": id, "parentId": parent,
                               "timestamp": "2026-11-26T10:00:01.000Z", "message": message});
            writeln!(out, "{entry}").unwrap();
            parent = Value::String(id);
        }
    }
}

struct Compacting {
    _dir: tempfile::TempDir,
    temporary: PathBuf,
    session: PathBuf,
    child: Child,
}

/// `ctxkit compact SESSION --model offline --preview` on a large session, its temporary folder
/// its own, once the preview's copy is whole.
fn compacting() -> Compacting {
    let dir = tempfile::tempdir().unwrap();
    let temporary = dir.path().join("tmp");
    std::fs::create_dir(&temporary).unwrap();
    let session = dir.path().join("large.jsonl");
    large_session(&session, 6_000);
    let size = std::fs::metadata(&session).unwrap().len();
    let child = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args([
            "compact",
            session.to_str().unwrap(),
            "--model",
            "offline",
            "--preview",
        ])
        .env("CTXKIT_HOME", dir.path().join("home"))
        .env("TMPDIR", &temporary)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let copied = std::fs::read_dir(&temporary)
            .unwrap()
            .flatten()
            .any(|entry| {
                entry
                    .metadata()
                    .is_ok_and(|metadata| metadata.len() == size)
            });
        if copied {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no preview copy"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    Compacting {
        _dir: dir,
        temporary,
        session,
        child,
    }
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn left_in(folder: &Path) -> Vec<String> {
    std::fs::read_dir(folder)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_terminated_preview_leaves_no_copy_behind() {
    use std::os::unix::process::ExitStatusExt as _;
    let run = compacting();
    let before = std::fs::read(&run.session).unwrap();
    signal(&run.child, "-TERM");
    let output = run.child.wait_with_output().unwrap();
    let ended = output.status.signal() == Some(15) || output.status.code() == Some(143);
    // Finished before the signal came: nothing to clean either way.
    if !ended {
        assert_eq!(output.status.code(), Some(0), "{output:?}");
    }
    assert_eq!(left_in(&run.temporary), Vec::<String>::new());
    assert_eq!(std::fs::read(&run.session).unwrap(), before);
}

/// Sends SIGINT to `child` once it says it is summarizing; its exit status and whole stderr.
fn interrupted_while_summarizing(child: &mut Child) -> (std::process::ExitStatus, String) {
    use std::io::BufRead as _;
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut stderr = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        stderr.push_str(&line);
        stderr.push('\n');
        if line.starts_with("Summarizing") {
            break;
        }
    }
    signal(child, "-INT");
    for line in lines {
        stderr.push_str(&line.unwrap());
        stderr.push('\n');
    }
    (child.wait().unwrap(), stderr)
}

#[test]
fn ctrl_c_cancels_an_offline_compaction_and_leaves_nothing() {
    let mut run = compacting();
    // Once the summary is being written (before, Ctrl-C removes the copy and ends the command
    // by the signal).
    let (status, stderr) = interrupted_while_summarizing(&mut run.child);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("compaction cancelled; nothing was written"),
        "{stderr}"
    );
    assert_eq!(left_in(&run.temporary), Vec::<String>::new());
}

/// QA (verification): Ctrl-C during `branch --summarize` with the offline summarizer moved the
/// leaf and wrote the summary anyway (the summarizer answered, and only an error was taken for
/// the cancel). Cancelled now, the session unchanged, exit 130.
#[test]
fn ctrl_c_cancels_an_offline_branch_summary() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("large.jsonl");
    large_session(&session, 6_000);
    let before = std::fs::read(&session).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args([
            "branch",
            session.to_str().unwrap(),
            "--to",
            "e0000001u",
            "--summarize",
        ])
        .args(["--model", "offline"])
        .env("CTXKIT_HOME", dir.path().join("home"))
        .env("TMPDIR", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (status, stderr) = interrupted_while_summarizing(&mut child);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("branch summary cancelled; nothing was written"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&session).unwrap(), before);
}
