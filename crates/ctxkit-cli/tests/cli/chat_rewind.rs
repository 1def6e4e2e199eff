//! `ctxkit chat` in tmux: the interactive `/tree` (walking, labelling, going to an older entry with
//! a summary of the branch left behind, a long tree on a 24-line terminal) and the rewind (Esc
//! twice, an earlier prompt chosen, the files the agent wrote since put back, a file the user
//! changed since asked about, the prompt edited and sent again), and `ctxkit checkpoints`.

use std::path::Path;

use serde_json::{Value, json};

use crate::chat::{Tmux, World, text, tmux_missing, tool_call};

/// The row under the cursor of the full-screen list.
pub(crate) fn cursor_row(screen: &str) -> String {
    screen
        .lines()
        .find(|line| line.starts_with('›'))
        .unwrap_or("")
        .to_owned()
}

/// Waits until a full-screen list showing `needle` is drawn whole: its help line, drawn last,
/// is the last line on the screen.
pub(crate) fn wait_list(tmux: &Tmux, needle: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let screen = tmux.screen();
        let last = screen.lines().rev().find(|line| !line.trim().is_empty());
        if screen.contains(needle) && last.is_some_and(|line| line.starts_with("↑/↓")) {
            return screen;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for the list with {needle:?}:\n{screen}"
        );
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
}

/// The cursor's position in the list, from the rule under it (`── 3/10`).
fn list_position(screen: &str) -> Option<usize> {
    let rule = screen.lines().find(|line| line.starts_with("── "))?;
    rule.trim_start_matches("── ")
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// Moves the list's cursor up until its row holds `needle`, one key at a time, each waited for.
fn move_up_to(tmux: &Tmux, needle: &str) -> String {
    for _ in 0..40 {
        let screen = tmux.screen();
        if cursor_row(&screen).contains(needle) {
            return screen;
        }
        let position = list_position(&screen).expect("a list is shown");
        assert!(
            position > 1,
            "the cursor never reached {needle:?}:\n{screen}"
        );
        tmux.keys(&["k"]);
        wait_list(tmux, &format!("── {}/", position - 1));
    }
    panic!("the cursor never reached {needle:?}:\n{}", tmux.screen());
}

fn entry_text(entry: &Value) -> String {
    entry["message"]["content"].to_string()
}

/// A chat of two prompts (answered "First answer." and "Second answer."), then `/tree`.
fn two_prompts_then_tree(world: &World) -> Tmux {
    let tmux = world.start("");
    tmux.resize(100, 24);
    tmux.wait_idle(1);
    tmux.line("one");
    tmux.wait_idle(2);
    tmux.line("two");
    tmux.wait_for("Second answer.");
    tmux.wait_idle(3);
    tmux.line("/tree");
    tmux
}

#[test]
fn tree_walks_labels_and_goes_back_with_a_summary_of_the_branch_left() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    world.answer(text("Second answer.", 400));
    world.answer(text("After the jump.", 500));
    let tmux = two_prompts_then_tree(&world);
    let screen = wait_list(&tmux, "Session tree");
    assert!(screen.contains("← leaf"), "{screen}");
    assert!(screen.contains(" tok"), "tokens per entry:\n{screen}");
    assert!(screen.contains("Enter go to the entry"), "{screen}");
    // Label the first reply from the tree.
    move_up_to(&tmux, "First answer.");
    tmux.keys(&["l"]);
    tmux.wait_for("Label for");
    tmux.line("good-point");
    let screen = wait_list(&tmux, "[good-point]");
    assert!(
        cursor_row(&screen).contains("First answer."),
        "the cursor stays on the entry labelled:\n{screen}"
    );
    // Go there with a summary of the branch left behind.
    tmux.keys(&["Enter"]);
    let screen = wait_list(&tmux, "Summarize the branch left behind");
    assert!(screen.contains("No summary"), "{screen}");
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the branch left behind is summarized in");
    assert!(
        !screen.contains("Session tree"),
        "the list is gone:\n{screen}"
    );
    tmux.wait_idle(4);
    tmux.line("three");
    tmux.wait_for("After the jump.");

    let file = world.session_files().remove(0);
    let entries = world.entries(&file);
    let first_reply = entries
        .iter()
        .find(|entry| entry_text(entry).contains("First answer."))
        .unwrap();
    let summary = entries
        .iter()
        .find(|entry| entry["type"] == "branch_summary")
        .expect("a branch summary entry");
    assert_eq!(summary["parentId"], first_reply["id"]);
    assert!(
        entries
            .iter()
            .any(|entry| entry["type"] == "label" && entry["label"] == "good-point"),
        "the label is stored"
    );
    // Nothing was deleted; the last request sees the summary instead of the branch left.
    assert!(
        entries
            .iter()
            .any(|entry| entry_text(entry).contains("two"))
    );
    let last = world.chat_requests().pop().unwrap().to_string();
    assert!(last.contains("SUMMARY-FROM-MOCK"), "{last}");
    assert!(!last.contains("Second answer."), "{last}");

    // To a prompt of the user, with a focus for the summary: its text comes back to edit.
    tmux.line("/tree");
    let screen = wait_list(&tmux, "Session tree");
    // The branch left and the one taken, drawn with connectors as Pi's tree draws them.
    assert!(
        screen.contains("├ branch summary: ")
            && screen.contains("│ assistant: After the jump.")
            && screen.contains("└ user: two")
            && screen.contains("  assistant: Second answer."),
        "{screen}"
    );
    move_up_to(&tmux, "user: one");
    tmux.keys(&["Enter"]);
    wait_list(&tmux, "Summarize it with a focus");
    tmux.keys(&["Down", "Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Focus for the summary:");
    tmux.line("the jump");
    tmux.wait_for_count("the branch left behind is summarized in", 2);
    tmux.wait_input_line("> one");
    let summary_request = world.summary_requests().pop().unwrap().to_string();
    assert!(summary_request.contains("the jump"), "{summary_request}");
}

/// QA (r106 tree): `branchSummary.skipPrompt` was read and never used, and Enter on the leaf
/// asked about a summary, then said it moved there. As Pi 1.6.0: the setting moves at once with
/// no summary, and Enter on the leaf says it is already there.
#[test]
fn tree_skips_the_summary_question_when_told_and_stays_on_the_leaf() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let settings_path = world.home.path().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).unwrap()).unwrap();
    settings["branchSummary"] = json!({"skipPrompt": true});
    std::fs::write(&settings_path, settings.to_string()).unwrap();
    world.answer(text("First answer.", 300));
    world.answer(text("Second answer.", 400));
    let tmux = two_prompts_then_tree(&world);
    wait_list(&tmux, "Session tree");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Already at this point");
    tmux.line("/tree");
    wait_list(&tmux, "Session tree");
    move_up_to(&tmux, "First answer.");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Moved to ");
    assert!(
        !screen.contains("Summarize the branch left behind"),
        "{screen}"
    );
    assert!(world.summary_requests().is_empty());
}

/// QA (r106 tree): a branch summary the provider refused was said twice, as the summary's
/// failure and as the command's error. It is said once; the leaf stays.
#[test]
fn a_failed_branch_summary_is_said_once_and_the_leaf_stays() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    world.answer(text("Second answer.", 400));
    world.refuse_summaries(true);
    let tmux = two_prompts_then_tree(&world);
    wait_list(&tmux, "Session tree");
    move_up_to(&tmux, "First answer.");
    tmux.keys(&["Enter"]);
    wait_list(&tmux, "Summarize the branch left behind");
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Branch summary failed");
    tmux.wait_idle(4);
    let screen = tmux.screen();
    assert_eq!(
        screen.matches("Summarization failed").count(),
        1,
        "{screen}"
    );
    let file = world.session_files().remove(0);
    let entries = world.entries(&file);
    assert!(
        entries
            .iter()
            .all(|entry| entry["type"] != "branch_summary")
    );
}

/// Esc while the branch summary is written stops it and shows the tree again at the same entry,
/// as Pi's does, so the move can be made without a summary (the tree was left for the input
/// line, and the move had to be looked for again).
#[test]
fn esc_during_a_branch_summary_comes_back_to_the_tree() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    world.answer(text("Second answer.", 400));
    world.answer(text("After the move.", 500));
    world.summary_delay(std::time::Duration::from_secs(30));
    let tmux = two_prompts_then_tree(&world);
    wait_list(&tmux, "Session tree");
    move_up_to(&tmux, "First answer.");
    tmux.keys(&["Enter"]);
    wait_list(&tmux, "Summarize the branch left behind");
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Esc or Ctrl-C to cancel");
    tmux.keys(&["Escape"]);
    let screen = wait_list(&tmux, "Session tree");
    assert!(cursor_row(&screen).contains("First answer."), "{screen}");
    // Ctrl-C at the focus question comes back to the summary's choices, as Pi's.
    tmux.keys(&["Enter"]);
    wait_list(&tmux, "Summarize it with a focus");
    tmux.keys(&["Down", "Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Focus for the summary:");
    tmux.keys(&["C-c"]);
    wait_list(&tmux, "Summarize the branch left behind");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Moved to ");
    assert_eq!(
        screen
            .matches("Branch summary cancelled (nothing was written)")
            .count(),
        1,
        "{screen}"
    );
    let file = world.session_files().remove(0);
    assert!(
        world
            .entries(&file)
            .iter()
            .all(|entry| entry["type"] != "branch_summary")
    );
    // The move's marker (hidden by the default filter) starts the new branch: the tree hangs it
    // from the reply it left, first as the branch toward the leaf (Pi's order).
    tmux.line("three");
    tmux.wait_for("After the move.");
    tmux.line("/tree");
    let screen = wait_list(&tmux, "Session tree");
    assert!(
        screen.contains("├ user: three") && screen.contains("└ user: two"),
        "{screen}"
    );
}

/// A linear session of `pairs` prompts and replies.
fn long_session(file: &Path, cwd: &Path, pairs: usize) {
    let mut lines = vec![
        json!({"type": "session", "version": 3, "id": "0192a7c4-1b2c-7d3e-8f40-123456789abc",
               "timestamp": "2026-11-26T10:00:00.000Z", "cwd": cwd})
        .to_string(),
    ];
    let mut parent = Value::Null;
    for pair in 0..pairs {
        for (role, text) in [
            ("user", format!("prompt number {pair}")),
            ("assistant", format!("reply number {pair}")),
        ] {
            let id = format!("e{:07}", lines.len());
            let message = if role == "user" {
                json!({"role": role, "content": text, "timestamp": 1_795_687_201_000_u64})
            } else {
                json!({"role": role, "content": [{"type": "text", "text": text}],
                       "api": "openai-completions", "provider": "mock", "model": "test-model",
                       "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                                 "totalTokens": 15},
                       "stopReason": "stop", "timestamp": 1_795_687_201_000_u64})
            };
            lines.push(
                json!({"type": "message", "id": id, "parentId": parent,
                       "timestamp": "2026-11-26T10:00:01.000Z", "message": message})
                .to_string(),
            );
            parent = Value::String(id);
        }
    }
    std::fs::write(file, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_long_tree_scrolls_on_a_24_line_terminal_and_esc_changes_nothing() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let file = world.home.path().join("long.jsonl");
    long_session(&file, &world.project, 40);
    let before = std::fs::read(&file).unwrap();
    let tmux = world.start(&format!("--session '{}'", file.display()));
    tmux.resize(90, 24);
    tmux.wait_idle(1);
    tmux.line("/tree");
    let screen = wait_list(&tmux, "── 80/80");
    assert!(cursor_row(&screen).contains("reply number 39"), "{screen}");
    assert!(
        !screen.contains("prompt number 0"),
        "scrolled to the leaf:\n{screen}"
    );
    assert!(screen.lines().count() <= 24, "fits 24 lines:\n{screen}");
    assert!(
        screen.contains("Enter go to the entry"),
        "the help line shows:\n{screen}"
    );
    tmux.keys(&["g"]);
    let screen = wait_list(&tmux, "── 1/80");
    assert!(cursor_row(&screen).contains("prompt number 0"), "{screen}");
    // A page is the 15 rows a 24-line terminal leaves for the list.
    tmux.keys(&["PageDown"]);
    let screen = wait_list(&tmux, "── 16/80");
    assert!(cursor_row(&screen).contains("reply number 7"), "{screen}");
    assert!(
        !screen.contains("prompt number 0"),
        "scrolled down:\n{screen}"
    );
    tmux.keys(&["Escape"]);
    tmux.wait_for("Left the tree; nothing changed");
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing written");
}

/// Labelling with `l` shows the tree again scrolled as it was (the rows below the cursor, the leaf
/// among them, stayed out of view), and a taller terminal shows more rows instead of empty lines.
#[test]
fn the_tree_keeps_its_scroll_after_a_label_and_fills_a_taller_terminal() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let file = world.home.path().join("long.jsonl");
    long_session(&file, &world.project, 40);
    let tmux = world.start(&format!("--session '{}'", file.display()));
    tmux.resize(90, 24);
    tmux.wait_idle(1);
    tmux.line("/tree");
    wait_list(&tmux, "── 80/80");
    tmux.keys(&["k", "k", "k"]);
    let screen = wait_list(&tmux, "── 77/80");
    assert!(screen.contains("reply number 39"), "{screen}");
    tmux.keys(&["l"]);
    tmux.wait_for("Label for");
    tmux.line("kept-here");
    let screen = wait_list(&tmux, "[kept-here]");
    assert!(cursor_row(&screen).contains("prompt number 38"), "{screen}");
    assert!(
        screen.contains("reply number 39"),
        "the rows below the cursor stay in view:\n{screen}"
    );
    tmux.resize(90, 40);
    // 40 lines leave 29 rows for the list: the last 29 of 80 fill it.
    let screen = wait_list(&tmux, "prompt number 26");
    assert!(screen.contains("reply number 39"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Left the tree; nothing changed");
}

#[test]
fn double_esc_rewinds_to_an_edited_prompt_and_restores_the_files_written_since() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let project = world.project.clone();
    std::fs::write(project.join("a.txt"), "user A\n").unwrap();
    std::fs::write(project.join("b.txt"), "alpha beta\n").unwrap();
    world.answer(tool_call(
        "c1",
        "write",
        json!({"path": "a.txt", "content": "agent A\n"}),
    ));
    world.answer(tool_call(
        "c2",
        "edit",
        json!({"path": "b.txt", "oldText": "beta", "newText": "BETA"}),
    ));
    world.answer(text("Done.", 300));
    world.answer(tool_call(
        "c3",
        "write",
        json!({"path": "c.txt", "content": "agent C\n"}),
    ));
    world.answer(tool_call(
        "c4",
        "edit",
        json!({"path": "a.txt", "oldText": "agent", "newText": "AGENT"}),
    ));
    world.answer(text("Created.", 300));
    world.answer(text("Again.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("change the files");
    tmux.wait_for("Done.");
    tmux.wait_idle(2);
    tmux.line("and more");
    tmux.wait_for("Created.");
    tmux.wait_idle(3);
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "AGENT A\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("b.txt")).unwrap(),
        "alpha BETA\n"
    );
    // The user changes a file the agent wrote: the rewind must ask before replacing it.
    std::fs::write(project.join("c.txt"), "mine\n").unwrap();

    tmux.double_escape();
    let screen = wait_list(&tmux, "Rewind to before which prompt?");
    assert!(cursor_row(&screen).contains("and more"), "{screen}");
    move_up_to(&tmux, "change the files");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Restore 3 file(s)? [y]es / [n]o:");
    assert!(screen.contains("`a.txt`  (put back as it was)"), "{screen}");
    assert!(
        screen.contains("`c.txt`  (the agent created it; a restore removes it)"),
        "{screen}"
    );
    tmux.answer("y");
    // `y` would delete it: the question says so (it said "put the snapshot back").
    tmux.wait_for("`c.txt`, which the agent created, was changed since; delete it anyway?");
    tmux.answer("n");
    let screen = tmux.wait_for("Kept `c.txt` as you changed it");
    assert!(screen.contains("Restored `a.txt`"), "{screen}");
    assert!(screen.contains("Restored `b.txt`"), "{screen}");
    tmux.wait_input_line("> change the files");
    // The move is in the file (QA, 2026-12-05: it was not, and `--continue` reopened the branch
    // left, its files restored): a marker where the leaf went, before the first prompt.
    let file = world.session_files().remove(0);
    let entries = world.entries(&file);
    let first_prompt = entries
        .iter()
        .find(|entry| entry_text(entry).contains("change the files"))
        .unwrap();
    let last = entries.last().unwrap();
    assert_eq!(last["type"], "custom", "{last}");
    assert_eq!(last["customType"], "ctxkit.navigate", "{last}");
    assert_eq!(last["parentId"], first_prompt["parentId"], "{last}");
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "user A\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("b.txt")).unwrap(),
        "alpha beta\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("c.txt")).unwrap(),
        "mine\n"
    );

    // The prompt, edited, continues from before it.
    tmux.keys(&["-l", " please"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Again.");
    let last = world.chat_requests().pop().unwrap();
    let messages = last["messages"].to_string();
    assert!(messages.contains("change the files please"), "{messages}");
    assert!(!messages.contains("and more"), "{messages}");
    assert!(!messages.contains("Done."), "{messages}");
    let file = world.session_files().remove(0);
    let users = world
        .entries(&file)
        .iter()
        .filter(|entry| entry["message"]["role"] == "user")
        .count();
    assert_eq!(
        users, 3,
        "nothing deleted: both old prompts and the new one"
    );

    // `ctxkit checkpoints` lists the four snapshots: a and b, then c (new) and a again.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .env("CTXKIT_HOME", world.home.path())
        .env("HOME", world.home.path())
        .arg("checkpoints")
        .arg(&file)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{listing}");
    assert!(listing.contains("4 snapshot(s)"), "{listing}");
    assert!(listing.contains("(new file)"), "{listing}");
    assert!(listing.contains("a.txt"), "{listing}");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["checkpoints", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    let record: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(record["snapshots"].as_array().unwrap().len(), 4, "{record}");
    assert_eq!(record["totalBytes"], json!(7 + 11 + 8), "{record}");

    // `ctxkit fork` carries the snapshots of the turns it copies (the verifier, 2026-12-07: a
    // fork's rewind found none): forked at the branch the rewind left, both prompts' four.
    let created = world
        .entries(&file)
        .into_iter()
        .find(|entry| entry_text(entry).contains("Created."))
        .unwrap();
    let forked = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .env("CTXKIT_HOME", world.home.path())
        .env("HOME", world.home.path())
        .arg("fork")
        .arg(&file)
        .args(["--at", created["id"].as_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        forked.status.success(),
        "{}",
        String::from_utf8_lossy(&forked.stderr)
    );
    let fork = String::from_utf8_lossy(&forked.stdout).trim().to_owned();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["checkpoints", "--json", &fork])
        .output()
        .unwrap();
    let copied: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(copied["snapshots"], record["snapshots"], "{copied}");
}

/// `ctxkit checkpoints FILE`'s output.
fn checkpoints_listing(world: &World, file: &Path) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .env("CTXKIT_HOME", world.home.path())
        .env("HOME", world.home.path())
        .arg("checkpoints")
        .arg(file)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_failed_write_keeps_no_snapshot_a_command_is_named_and_a_declined_restore_changes_nothing() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let project = world.project.clone();
    std::fs::write(project.join("a.txt"), "kept\n").unwrap();
    // The edit fails (its text is not in the file): the file is as it was, no snapshot is kept.
    world.answer(tool_call(
        "c1",
        "edit",
        json!({"path": "a.txt", "oldText": "missing", "newText": "x"}),
    ));
    world.answer(tool_call(
        "c2",
        "write",
        json!({"path": "b.txt", "content": "made\n"}),
    ));
    world.answer(tool_call(
        "c3",
        "bash",
        json!({"command": "echo appended >> a.txt"}),
    ));
    world.answer(text("Ok.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("go");
    tmux.wait_for("[y]es / [n]o / [a]lways");
    tmux.answer("y");
    tmux.wait_for("Ok.");
    tmux.wait_idle(2);
    let file = world.session_files().remove(0);
    let listing = checkpoints_listing(&world, &file);
    assert!(listing.contains("1 snapshot(s)"), "{listing}");
    assert!(
        listing.contains("b.txt") && !listing.contains("a.txt"),
        "{listing}"
    );

    tmux.double_escape();
    wait_list(&tmux, "Rewind to before which prompt?");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Restore 1 file(s)? [y]es / [n]o:");
    assert!(
        screen.contains("`b.txt`  (the agent created it; a restore removes it)"),
        "{screen}"
    );
    // QA: what a command changed stayed after a restore, and nothing said so.
    assert!(
        screen.contains("A `bash` command ran since that prompt; what it changed is not restored"),
        "{screen}"
    );
    tmux.answer("n");
    tmux.wait_for("Files left as they are");
    tmux.wait_input_line("> go");
    assert_eq!(
        std::fs::read_to_string(project.join("b.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "kept\nappended\n"
    );
}

#[test]
fn a_session_file_inside_the_project_gets_no_snapshots_in_the_project() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let file = world.project.join("here.jsonl");
    long_session(&file, &world.project, 1);
    world.answer(tool_call(
        "c1",
        "write",
        json!({"path": "c.txt", "content": "new\n"}),
    ));
    world.answer(text("Written.", 300));
    let tmux = world.start(&format!("--session '{}'", file.display()));
    tmux.wait_idle(1);
    tmux.line("write c");
    tmux.wait_for("No file checkpoints: the session file lies inside the project");
    tmux.wait_for("Written.");
    assert!(!world.project.join("here.checkpoints").exists());
    assert_eq!(
        std::fs::read_to_string(world.project.join("c.txt")).unwrap(),
        "new\n"
    );
}

/// `doubleEscapeAction`: `fork` opens `/fork`'s list, `none` does nothing; `tree` (the default)
/// is the rewind above.
#[test]
fn double_escape_follows_the_double_escape_action_setting() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("First.", 300));
    let path = world.home.path().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["doubleEscapeAction"] = json!("fork");
    std::fs::write(&path, settings.to_string()).unwrap();
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("one");
    tmux.wait_for("First.");
    tmux.wait_idle(2);
    tmux.double_escape();
    wait_list(&tmux, "Fork from before which message?");
    tmux.keys(&["Escape"]);
    tmux.wait_idle(1);

    settings["doubleEscapeAction"] = json!("none");
    std::fs::write(&path, settings.to_string()).unwrap();
    tmux.line("/reload");
    tmux.wait_for("Reloaded");
    tmux.double_escape();
    // Nothing on the screen says the Esc were read: the setting is for nothing to happen.
    std::thread::sleep(std::time::Duration::from_millis(100));
    tmux.line("/session");
    let screen = tmux.wait_for("No compaction on this branch");
    assert!(!screen.contains("Rewind to before"), "{screen}");
}

/// `treeFilterMode` and `f` in `/tree`, as Pi's filters: the setting's filter first, `f` steps to
/// the next (no tool results, the user's messages only, …); the leaf is always listed.
#[test]
fn tree_filters_start_from_the_setting_and_f_steps_through_them() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let path = world.home.path().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["treeFilterMode"] = json!("no-tools");
    std::fs::write(&path, settings.to_string()).unwrap();
    world.answer(tool_call(
        "call-1",
        "bash",
        json!({"command": "echo FILTERED-TOOL-OUTPUT"}),
    ));
    world.answer(text("Ran it.", 400));
    let tmux = world.start("--yes");
    tmux.resize(110, 30);
    tmux.wait_idle(1);
    tmux.line("run the thing");
    tmux.wait_for("Ran it.");
    tmux.wait_idle(2);
    tmux.line("/tree");
    let screen = wait_list(&tmux, "filter: no-tools");
    assert!(!screen.contains("toolResult"), "{screen}");
    assert!(screen.contains("run the thing"), "{screen}");
    tmux.keys(&["f"]);
    let screen = wait_list(&tmux, "filter: user-only");
    assert!(screen.contains("run the thing"), "{screen}");
    assert!(
        screen.contains("← leaf"),
        "the leaf stays listed:\n{screen}"
    );
    assert!(!screen.contains("tool call"), "{screen}");
    tmux.keys(&["f", "f"]);
    let screen = wait_list(&tmux, "filter: all");
    assert!(
        screen.contains("toolResult bash: FILTERED-TOOL-OUTPUT"),
        "{screen}"
    );
    tmux.keys(&["Escape"]);
    tmux.wait_for("Left the tree; nothing changed");
}

/// Restoring a file the agent created removes the folders its write created once they are empty;
/// a folder that was there before (even empty) stays, and so does one that holds other files.
#[test]
fn a_restore_removes_the_folders_the_agent_created_and_only_those() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let project = world.project.clone();
    std::fs::create_dir(project.join("keep")).unwrap();
    std::fs::create_dir_all(project.join("shared")).unwrap();
    world.answer(tool_call(
        "c1",
        "write",
        json!({"path": "new/deep/hello.txt", "content": "hi\n"}),
    ));
    world.answer(tool_call(
        "c2",
        "write",
        json!({"path": "new/other.txt", "content": "also\n"}),
    ));
    world.answer(tool_call(
        "c3",
        "write",
        json!({"path": "keep/x.txt", "content": "x\n"}),
    ));
    world.answer(tool_call(
        "c4",
        "write",
        json!({"path": "shared/sub/y.txt", "content": "y\n"}),
    ));
    world.answer(text("Made them.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("make files");
    tmux.wait_for("Made them.");
    tmux.wait_idle(2);
    // The user puts a file of their own into a folder the agent created.
    std::fs::write(project.join("shared/sub/mine.txt"), "mine\n").unwrap();

    tmux.double_escape();
    wait_list(&tmux, "Rewind to before which prompt?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Restore 4 file(s)? [y]es / [n]o:");
    tmux.answer("y");
    let screen = tmux.wait_for("Removed the empty folders the agent created:");
    assert!(screen.contains("created: `new/deep`, `new`"), "{screen}");
    assert!(!project.join("new").exists());
    assert!(project.join("keep").is_dir());
    assert!(!project.join("keep/x.txt").exists());
    assert!(project.join("shared/sub/mine.txt").exists());
    assert!(!project.join("shared/sub/y.txt").exists());
}

/// QA (2026-12-05): a file the agent changed without a snapshot (over `chat.checkpointMaxBytes`)
/// was left changed by a rewind without a word; the rewind names it now.
#[test]
fn a_rewind_names_the_files_it_cannot_put_back() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.edit_settings(|settings| settings["chat"] = json!({"checkpointMaxBytes": 50}));
    let project = world.project.clone();
    std::fs::write(
        project.join("big.txt"),
        format!("{}\nend\n", "x".repeat(90)),
    )
    .unwrap();
    world.answer(tool_call(
        "c1",
        "edit",
        json!({"path": "big.txt", "oldText": "end", "newText": "END"}),
    ));
    world.answer(text("Ok.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("go");
    tmux.wait_for("Ok.");
    tmux.wait_idle(2);
    tmux.double_escape();
    wait_list(&tmux, "Rewind to before which prompt?");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("No snapshot was kept");
    assert!(
        screen.contains("No snapshot was kept of a file the agent wrote since that prompt; left as it is now: `big.txt`"),
        "{screen}"
    );
    tmux.wait_input_line("> go");
    assert!(
        std::fs::read_to_string(project.join("big.txt"))
            .unwrap()
            .contains("END")
    );
}
