//! `ctxkit chat` (piped, `--script`) while another program (Pi, another ctxkit) appends to the
//! session it has open: the refused append names `/resume`, `/resume` of the open session reads
//! the file again (its lock held as any opened session's), and `/save` refuses to leave the other
//! program's entries out.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::chat::{World, chat_command, text};

/// A scripted chat whose input lines the test writes as it goes.
fn start_scripted(world: &World) -> Child {
    let command = chat_command(&world.project, world.home.path(), "--script");
    Command::new("sh")
        .args(["-c", &command])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn type_lines(chat: &mut Child, lines: &str) {
    let input = chat.stdin.as_mut().unwrap();
    input.write_all(lines.as_bytes()).unwrap();
    input.flush().unwrap();
}

/// The session file once it holds an assistant message saying `reply`.
fn wait_for_reply(world: &World, reply: &str) -> PathBuf {
    let started = Instant::now();
    loop {
        if let Some(file) = world.session_files().first()
            && std::fs::read_to_string(file).is_ok_and(|text| text.contains(reply))
        {
            return file.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no `{reply}` in the session"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Appends a user message and its answer as Pi 1.6.0 writes them, after the file's last entry.
fn append_pi_turn(world: &World, file: &Path) {
    let entries = world.entries(file);
    let leaf = entries.last().unwrap()["id"].as_str().unwrap().to_owned();
    let usage = json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let user = json!({"type": "message", "id": "a1b2c3d4", "parentId": leaf,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "pi in between"}],
            "timestamp": 1_767_225_600_000_u64}});
    let assistant = json!({"type": "message", "id": "e5f6a7b8", "parentId": "a1b2c3d4",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "Pi answered."}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": usage, "stopReason": "stop", "timestamp": 1_767_225_601_000_u64}});
    let mut appended = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    writeln!(appended, "{user}\n{assistant}").unwrap();
}

fn finish(chat: Child) -> String {
    let output = chat.wait_with_output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// QA r104 (parity), finding 5: after Pi appended to the open session, the refused prompt named
/// only `/save` and `/resume` said "nothing changed". The refusal names `/resume` now, and
/// `/resume` reads the file again: the next prompt follows Pi's turn, the file stays locked.
#[test]
fn resume_of_the_open_session_reads_what_another_program_appended() {
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    world.answer(text("After Pi.", 400));
    let mut chat = start_scripted(&world);
    type_lines(&mut chat, "one\n");
    let file = wait_for_reply(&world, "First answer.");
    append_pi_turn(&world, &file);
    type_lines(&mut chat, "refused\n/resume 1\nthree\n");
    wait_for_reply(&world, "After Pi.");
    // The chat, still open, holds the lock of the file it read again.
    let locked = std::fs::File::open(&file).unwrap().try_lock();
    assert!(locked.is_err(), "the session read again is locked");
    drop(chat.stdin.take());
    let output = finish(chat);

    assert!(
        output.contains("was written by another program"),
        "{output}"
    );
    assert!(
        output.contains("hint: /resume this session to load what the other program added"),
        "{output}"
    );
    assert!(!output.contains("nothing changed"), "{output}");
    assert!(
        output.contains("again with what another program added"),
        "{output}"
    );
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 2, "the refused prompt was not sent");
    let last = requests.last().unwrap().to_string();
    assert!(
        last.contains("pi in between") && last.contains("Pi answered."),
        "{last}"
    );
    assert!(!last.contains("refused"), "{last}");
    let entries = world.entries(&file);
    let three = entries
        .iter()
        .find(|entry| entry["message"]["content"].to_string().contains("three"))
        .unwrap();
    assert_eq!(three["parentId"], "e5f6a7b8", "{three}");
    assert_eq!(world.session_files(), vec![file]);
}

/// `/save` after another program appended would write the chat's copy without its entries: it
/// refuses and names `/resume`; the file is left as it is and no other is written.
#[test]
fn save_refuses_to_leave_out_what_another_program_appended() {
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    let mut chat = start_scripted(&world);
    type_lines(&mut chat, "one\n");
    let file = wait_for_reply(&world, "First answer.");
    append_pi_turn(&world, &file);
    let before = std::fs::read_to_string(&file).unwrap();
    type_lines(&mut chat, "/save\n");
    drop(chat.stdin.take());
    let output = finish(chat);

    assert!(
        output.contains("holds entries another program added since the chat last wrote"),
        "{output}"
    );
    assert!(output.contains("hint: /resume this session"), "{output}");
    assert!(!output.contains("Wrote the session afresh"), "{output}");
    assert_eq!(world.session_files(), vec![file.clone()]);
    let entries: Vec<Value> = world.entries(&file);
    assert_eq!(entries.last().unwrap()["id"], "e5f6a7b8");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}

/// QA 2026-12-07: with `--session` naming a file kept outside this directory's sessions, the
/// refusal's hint said `/resume`, which listed only the folder's sessions, and `/resume FILE`
/// answered "No session number". `/resume` alone now reads that file again, as does its path.
#[test]
fn resume_reads_again_a_session_file_kept_elsewhere() {
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    world.answer(text("After Pi.", 400));
    world.answer(text("Third.", 400));
    let file = world.home.path().join("elsewhere/kept.jsonl");
    let command = chat_command(
        &world.project,
        world.home.path(),
        &format!("--script --session {}", file.display()),
    );
    let mut chat = Command::new("sh")
        .args(["-c", &command])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let wait_for = |reply: &str| {
        let started = Instant::now();
        while !std::fs::read_to_string(&file).is_ok_and(|text| text.contains(reply)) {
            assert!(started.elapsed() < Duration::from_secs(60), "no `{reply}`");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    type_lines(&mut chat, "one\n");
    wait_for("First answer.");
    append_pi_turn(&world, &file);
    type_lines(&mut chat, "refused\n/resume\nthree\n");
    wait_for("After Pi.");
    // Named by its path: the session open now, which nothing changed since.
    type_lines(&mut chat, &format!("/resume {}\nfour\n", file.display()));
    wait_for("Third.");
    drop(chat.stdin.take());
    let output = finish(chat);
    assert!(
        output.contains("again with what another program added"),
        "{output}"
    );
    assert!(
        output.contains("That is the session open now; nothing changed"),
        "{output}"
    );
    assert!(!output.contains("No session number"), "{output}");
    let last = world.chat_requests().last().unwrap().to_string();
    assert!(
        last.contains("pi in between") && last.contains("four"),
        "{last}"
    );
}
