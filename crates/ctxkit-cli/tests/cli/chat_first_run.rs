//! What a new user meets in `ctxkit chat` with the settings a README example gives: the status line
//! claims no price the model was never given, leaving the chat says where the session is and how to
//! come back to it, `--resume` (Pi's flag) lists the directory's sessions to open one, and a session
//! recorded in another directory (an imported one) says where the tools work.

use serde_json::json;

use crate::chat::{World, text, tmux_missing};

#[test]
fn the_status_line_shows_no_dollars_for_a_model_declared_without_prices() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("PRICELESS-ANSWER", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("hello");
    tmux.wait_for("PRICELESS-ANSWER");
    let screen = tmux.wait_for("[context ");
    assert!(!screen.contains("$0.0000"), "{screen}");
    assert!(!screen.contains(" spent"), "{screen}");
}

#[test]
fn quitting_says_how_to_come_back_and_resume_lists_the_sessions() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("FIRST-SESSION-ANSWER", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("the first session's prompt");
    tmux.wait_for("FIRST-SESSION-ANSWER");
    tmux.wait_idle(2);
    tmux.keys(&["C-d"]);
    let screen = tmux.wait_for("ctxkit chat --continue");
    let file = world.session_files().remove(0);
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        screen.replace('\n', "").contains(&name),
        "the farewell names the session file: {screen}"
    );
    assert!(screen.contains("ctxkit chat --resume"), "{screen}");
    drop(tmux);

    let tmux = world.start("--resume");
    let (screen, number) = tmux.resume_list(|line| line.contains("the first session's prompt"));
    assert_eq!(number, 1, "{screen}");
    // The list shows the session's file below it.
    assert!(screen.contains(".jsonl"), "{screen}");
    tmux.pick_row(1);
    tmux.wait_for("Continuing session (");
    tmux.wait_for_count("FIRST-SESSION-ANSWER", 1);
    // The resumed session's prompt is shown as `> …` too: the input line is the second.
    tmux.wait_idle(2);
    tmux.keys(&["C-d"]);
    tmux.wait_for("ctxkit chat --continue");
    drop(tmux);
    assert_eq!(world.session_files(), vec![file], "no second session file");

    // An in-memory chat has nothing to come back to.
    let tmux = world.start("--no-session");
    tmux.wait_idle(1);
    tmux.keys(&["C-d"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!tmux.screen().contains("Session saved"));
}

#[test]
fn a_session_recorded_in_another_directory_says_where_the_tools_work() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let file = world.home.path().join("imported.jsonl");
    let lines = [
        json!({"type": "session", "version": 3, "id": "s-elsewhere", "timestamp": "2026-01-01T00:00:00.000Z",
               "cwd": "C:\\Users\\someone\\vault"}),
        json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": "user", "content": "tidy the vault", "timestamp": 1}}),
    ];
    let content: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&file, content).unwrap();
    let tmux = world.start(&format!("--session '{}'", file.display()));
    let screen = tmux.wait_for("the tools work here");
    assert!(
        screen.contains("This session was recorded in `C:\\Users\\someone\\vault`"),
        "{screen}"
    );
    drop(tmux);
    // A session of this directory says nothing of the kind.
    world.answer(text("HERE-ANSWER", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("hello");
    tmux.wait_for("HERE-ANSWER");
    tmux.wait_idle(2);
    tmux.keys(&["C-d"]);
    tmux.wait_for("ctxkit chat --continue");
    drop(tmux);
    let tmux = world.start("--continue");
    tmux.wait_idle(1);
    assert!(!tmux.screen().contains("the tools work here"));
}

#[test]
fn the_tree_keeps_its_token_column_straight_beside_a_large_entry() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    // About 3,000 tokens: `~3000 tok` is wider than a small entry's `~1 tok`.
    world.answer(text(&"a long answer. ".repeat(800), 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("hi");
    tmux.wait_idle(2);
    tmux.line("/tree");
    let screen = tmux.wait_for("Enter go to the entry");
    let ends: Vec<usize> = screen
        .lines()
        .filter(|line| line.contains(" tok  "))
        .map(|line| line[..line.find(" tok  ").unwrap()].chars().count())
        .collect();
    assert_eq!(ends.len(), 2, "{screen}");
    assert_eq!(ends[0], ends[1], "the text starts in one column:\n{screen}");
}
