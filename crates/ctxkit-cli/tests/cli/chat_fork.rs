//! `ctxkit chat` and `/fork` with no id, as Pi's: a list of the session's prompts (every branch,
//! in file order) to pick from in tmux, the new file named, the old one unchanged, the prompt
//! picked back on the input line; a piped chat prints the prompts with their ids.

use serde_json::json;

use crate::chat::{World, chat_command, text, tmux_missing};
use crate::chat_rewind::{cursor_row, wait_list};

#[test]
fn fork_with_no_id_lists_the_prompts_and_forks_before_the_one_picked() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    for answer in ["Answer alpha.", "Answer beta.", "Answer gamma."] {
        world.answer(text(answer, 300));
    }
    let tmux = world.start("");
    tmux.resize(100, 24);
    tmux.wait_idle(1);
    for (number, prompt) in ["prompt alpha", "prompt beta", "prompt gamma"]
        .iter()
        .enumerate()
    {
        tmux.line(prompt);
        tmux.wait_idle(number + 2);
    }
    let original = world.session_files().remove(0);
    let original_text = std::fs::read_to_string(&original).unwrap();
    tmux.line("/fork");
    let screen = wait_list(&tmux, "Fork from before which message?");
    assert!(cursor_row(&screen).contains("prompt gamma"), "{screen}");
    assert!(screen.contains("prompt alpha"), "{screen}");
    // Esc leaves it unchanged.
    tmux.keys(&["Escape"]);
    tmux.wait_for("Fork cancelled; nothing changed");
    assert_eq!(world.session_files().len(), 1);
    tmux.line("/fork");
    wait_list(&tmux, "Fork from before which message?");
    tmux.keys(&["k"]);
    let screen = wait_list(&tmux, "── 2/3");
    assert!(cursor_row(&screen).contains("prompt beta"), "{screen}");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Forked into a new session:");
    // The chat breaks its sentences between words: a long path may stand on the next line.
    let mut lines = screen
        .lines()
        .skip_while(|line| !line.starts_with("Forked into a new session:"));
    let first = lines.next().unwrap();
    let rest = first["Forked into a new session:".len()..].trim();
    let named = if rest.is_empty() {
        lines.next().unwrap().trim().to_owned()
    } else {
        rest.to_owned()
    };
    // The prompt picked is back on the input line (its first showing is the one typed).
    tmux.wait_for_count("> prompt beta", 2);
    // The new file holds what came before the prompt picked; the old one is unchanged.
    let forked = std::path::PathBuf::from(&named);
    assert!(forked.exists(), "{named}");
    assert_ne!(forked, original);
    let forked_text = std::fs::read_to_string(&forked).unwrap();
    assert!(forked_text.contains("prompt alpha"), "{forked_text}");
    assert!(!forked_text.contains("prompt beta"), "{forked_text}");
    assert_eq!(std::fs::read_to_string(&original).unwrap(), original_text);
    // The prompt, sent again from the input line, continues the fork.
    world.answer(text("Answer beta again.", 400));
    tmux.keys(&["Enter"]);
    tmux.wait_for("Answer beta again.");
    let request = world.chat_requests().pop().unwrap().to_string();
    assert!(request.contains("prompt alpha") && request.contains("prompt beta"));
    assert!(!request.contains("prompt gamma"), "{request}");
}

/// A piped chat has no list to pick from: `/fork` prints the prompts with their ids.
#[test]
fn fork_with_no_id_in_a_piped_chat_prints_the_prompts_with_their_ids() {
    let world = World::new(100_000, json!({}));
    world.answer(text("Answer alpha.", 300));
    let command = chat_command(&world.project, world.home.path(), "--script");
    let mut child = std::process::Command::new("sh")
        .args(["-c", &command])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut input, b"prompt alpha\n/fork\n").unwrap();
    drop(input);
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let file = world.session_files().remove(0);
    let user = world
        .entries(&file)
        .into_iter()
        .find(|entry| entry["message"]["role"] == "user")
        .unwrap();
    let id = user["id"].as_str().unwrap();
    let all = format!("{stdout}{stderr}");
    assert!(all.contains(&format!("  1. {id}  prompt alpha")), "{all}");
    assert!(all.contains("/fork <id> forks before one of them"), "{all}");
}
