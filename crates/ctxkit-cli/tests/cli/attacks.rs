//! Issue 42, output: text from a session or an import reaches the terminal as text. Each case is
//! one attack, a command printing a hostile string (an OSC 52 clipboard write, clear-screen, a
//! window title, an 8-bit CSI, a right-to-left override); the output must hold no control
//! character but newline and tab, and must show the sequence as `\u001b…` (so it was shown, not
//! dropped). `docs/security.md` ("Limits") lists these with the server's and the store's attacks.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

/// Clipboard write (OSC 52), clear screen, window title (OSC 0).
const CLIPBOARD: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}";
const CLEAR: &str = "\u{1b}[2J\u{1b}[H";
const TITLE: &str = "\u{1b}]0;owned\u{7}";
/// An 8-bit CSI and a right-to-left override.
const C1_AND_BIDI: &str = "\u{9b}31m\u{202e}gpj.exe";

fn hostile(label: &str) -> String {
    format!("{label}{CLIPBOARD}{CLEAR}{TITLE}{C1_AND_BIDI}")
}

fn line(value: serde_json::Value) -> String {
    value.to_string()
}

/// A session whose every printed string is hostile: the cwd, the name, a message, a label, a
/// compaction's summary, an entry of an unknown type, and a line that is not JSON.
fn hostile_session(dir: &Path) -> PathBuf {
    let time = |second: u32| format!("2025-01-01T00:00:{second:02}.000Z");
    let lines = [
        line(
            json!({"type": "session", "version": 3, "id": "s1", "timestamp": time(0), "cwd": hostile("/cwd")}),
        ),
        line(
            json!({"type": "message", "id": "u1", "parentId": null, "timestamp": time(1),
                   "message": {"role": "user", "content": hostile("user says"), "timestamp": 1}}),
        ),
        line(
            json!({"type": "message", "id": "a1", "parentId": "u1", "timestamp": time(2),
                   "message": {"role": "assistant", "content": [{"type": "text", "text": hostile("model says")}],
                               "provider": "p", "model": "m", "api": "x", "stopReason": "stop", "timestamp": 2,
                               "usage": {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11}}}),
        ),
        line(
            json!({"type": "compaction", "id": "c1", "parentId": "a1", "timestamp": time(3),
                   "summary": hostile("summary"), "firstKeptEntryId": "a1", "tokensBefore": 11}),
        ),
        line(
            json!({"type": "label", "id": "l1", "parentId": "c1", "timestamp": time(4),
                   "targetId": "a1", "label": hostile("label")}),
        ),
        line(
            json!({"type": "session_info", "id": "n1", "parentId": "l1", "timestamp": time(5),
                   "name": hostile("name")}),
        ),
        line(json!({"type": hostile("kind"), "id": "k1", "parentId": "n1", "timestamp": time(6)})),
        format!("not json {CLEAR}{TITLE}"),
    ];
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let path = sessions.join("2025-01-01T00-00-00-000Z_s1.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A Claude Code transcript whose title and messages are hostile.
fn hostile_transcript(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctxkit-import/tests/fixtures/claude-code-session.jsonl");
    let text = std::fs::read_to_string(source).unwrap();
    let escaped = serde_json::to_string(&hostile("title")).unwrap();
    let text = text.replace("\"Refactor the parser\"", &escaped).replace(
        "\"file cache cache index token config\"",
        &serde_json::to_string(&hostile("prompt")).unwrap(),
    );
    let folder = dir.join("claude/projects/-home-dev-project");
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join("237a4e0d-b47a-4ee9-8d62-2fbeedc23723.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

struct Output {
    stdout: String,
    stderr: String,
}

fn ctxkit(home: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
    for name in crate::PROVIDER_VARIABLES {
        command.env_remove(name);
    }
    let output = command
        .args(args)
        .current_dir(home)
        .env("CTXKIT_HOME", home.join("ctxkit"))
        .env("HOME", home)
        .env("CTXKIT_OFFLINE", "1")
        .env_remove("CTXKIT_SESSIONS_DIR")
        .output()
        .unwrap();
    Output {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Control characters a terminal acts on (newline and tab are text).
fn acted_on(character: char) -> bool {
    (character.is_control() && character != '\n' && character != '\t')
        || matches!(character, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[test]
fn hostile_strings_from_sessions_and_imports_are_shown_not_sent() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let session = hostile_session(home);
    let file = session.to_str().unwrap();
    let sessions = session.parent().unwrap().to_str().unwrap().to_owned();
    let transcript = hostile_transcript(home);
    let transcript = transcript.to_str().unwrap();
    let imported = home.join("imported.jsonl");
    let imported = imported.to_str().unwrap();
    let claude = home.join("claude/projects").to_str().unwrap().to_owned();
    let bad_leaf = hostile("leaf");
    // (what is attacked, the command, a text it must show)
    let cases: Vec<(&str, Vec<&str>, Option<&str>)> = vec![
        (
            "import: the title and prompt",
            vec!["import", transcript, "--out", imported],
            None,
        ),
        (
            "sessions of imported transcripts",
            vec!["sessions", "--from", "claude-code", "--dir", &claude],
            Some("title"),
        ),
        (
            "sessions: the name",
            vec!["sessions", "--dir", &sessions],
            Some("name"),
        ),
        ("info: the name and cwd", vec!["info", file], Some("name")),
        ("info of an import", vec!["info", imported], Some("title")),
        (
            "tree: labels and entry kinds",
            vec!["tree", file],
            Some("label"),
        ),
        (
            "context: messages and the summary",
            vec!["context", file],
            Some("model says"),
        ),
        (
            "context --llm",
            vec!["context", "--llm", file],
            Some("summary"),
        ),
        ("context of an import", vec!["context", imported], None),
        (
            "compactions: the summary",
            vec!["compactions", file],
            Some("summary"),
        ),
        (
            "check: an unknown kind and a bad line",
            vec!["check", file],
            None,
        ),
        (
            "an error naming a hostile leaf",
            vec!["context", file, "--leaf", &bad_leaf],
            Some("leaf"),
        ),
    ];
    let mut failures = Vec::new();
    for (name, args, shown) in cases {
        let output = ctxkit(home, &args);
        let both = format!("{}{}", output.stdout, output.stderr);
        if let Some(character) = both.chars().find(|character| acted_on(*character)) {
            failures.push(format!(
                "{name}: sent U+{:04X}: {both:?}",
                u32::from(character)
            ));
        }
        if let Some(shown) = shown
            && !both.contains(&format!("{shown}\\u001b]52;c;"))
        {
            failures.push(format!("{name}: the sequence is not shown: {both:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A cloned project's settings of the wrong shape under a key it may not set are ignored, never a
/// reason the user's own commands refuse to start.
#[test]
fn an_untrusted_projects_malformed_hooks_stop_nothing() {
    let run = crate::Run::new();
    let file = run.copy("good-large-realistic.jsonl");
    std::fs::create_dir_all(run.home.path().join(".ctxkit")).unwrap();
    std::fs::write(
        run.home.path().join(".ctxkit/settings.json"),
        r#"{"hooks": {"sessionStart": [{"command": ["true"]}]}}"#,
    )
    .unwrap();
    let output = run.ctxkit(&["compact", file.to_str().unwrap(), "--dry-run"]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(output.contains("this project is not trusted"), "{output}");
    assert!(!output.contains("Invalid value"), "{output}");
}

/// A context file that leads to ctxkit's own settings is left out of the system prompt, and the
/// surfaces that start an agent say so (docs/security.md).
#[test]
fn a_context_file_leading_out_is_refused_with_a_warning_when_serve_starts() {
    let run = crate::Run::new();
    let settings = run.home.path().join("settings.json");
    std::fs::write(&settings, "{}").unwrap();
    std::os::unix::fs::symlink(&settings, run.home.path().join("AGENTS.md")).unwrap();
    let output = run.ctxkit(&["serve", "--stdio"]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains("warning: Could not read context file: `[HOME]/AGENTS.md` leads out of"),
        "{output}"
    );
}
