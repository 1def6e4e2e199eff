//! `ctxkit chat` in tmux, for what happens around the turn: keys typed and Esc while a tool runs,
//! the session file deleted or cut short by another program (noticed before the next prompt, the
//! session written afresh), `--continue` after `/fork` and `/resume`, and an empty reply.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::chat::{Tmux, World, text, tmux_missing, tool_call, words};

/// Every `parentId` of `entries` names an entry before it.
fn assert_parents_present(entries: &[Value]) {
    let mut seen = std::collections::HashSet::new();
    for entry in entries {
        if let Some(parent) = entry["parentId"].as_str() {
            assert!(
                seen.contains(parent),
                "a missing parent `{parent}`: {entry}"
            );
        }
        seen.insert(entry["id"].as_str().unwrap().to_owned());
    }
}

/// The header of a session file.
fn header(file: &Path) -> Value {
    let text = std::fs::read_to_string(file).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

/// QA r102 (chat), finding 7: a running command showed only `Running bash…` until it ended, so a
/// long test run looked like a hang. Its last lines show under the spinner while it runs, with the
/// keys typed meanwhile still on the spinner's line, and go when it ends (the result shows them).
#[test]
fn a_running_commands_last_lines_show_while_it_runs() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "for i in 1 2 3 4 5 6 7; do echo tick $i; sleep 0.7; done; echo all-done"}),
    ));
    world.answer(text("The ticks are done.", 400));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("count for me");
    let screen = tmux.wait_for("    tick 2");
    assert!(screen.contains("Running bash…"), "{screen}");
    assert!(!screen.contains("    all-done"), "still running:\n{screen}");
    tmux.keys(&["-l", "zz"]);
    let screen = tmux.wait_for("    tick 6");
    assert!(screen.contains("› zz"), "{screen}");
    // At most five lines: the first tick has scrolled out of the preview.
    assert!(!screen.contains("    tick 1"), "{screen}");
    let screen = tmux.wait_for("The ticks are done.");
    assert!(!screen.contains("Running bash…"), "{screen}");
    assert!(
        screen.contains("  tick 6\n  … (2 more lines)"),
        "the result shows as before:\n{screen}"
    );
}

/// The user's own `!command` shows its last lines while it runs too, as Pi shows them.
#[test]
fn a_bang_commands_last_lines_show_while_it_runs() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("!for i in 1 2 3 4 5; do echo tock $i; sleep 0.6; done");
    let screen = tmux.wait_for("    tock 2");
    assert!(screen.contains("Running `for i in"), "{screen}");
    let screen = tmux.wait_idle(2);
    assert!(!screen.contains("Running `for i in"), "{screen}");
    assert!(
        screen.contains("\n  tock 5"),
        "the output shown after:\n{screen}"
    );
}

#[test]
fn keys_typed_while_a_tool_runs_come_back_and_esc_interrupts_it() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    // An interrupted tool ends the turn: no model call follows it.
    world.answer(tool_call("call_1", "bash", json!({"command": "sleep 300"})));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("wait a while");
    // The approval question reads its one key while the keyboard watch is off.
    tmux.wait_for("Run `sleep 300`? [y]es / [n]o / [a]lways:");
    tmux.answer("y");
    tmux.wait_for("Running bash…");
    tmux.keys(&["-l", "qq"]);
    tmux.wait_for("› qq");
    let started = std::time::Instant::now();
    tmux.keys(&["Escape"]);
    tmux.wait_for("Command cancelled by the user");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "Esc stopped the command"
    );
    let screen = tmux.wait_input_line("> qq");
    assert!(!screen.contains("^["), "no raw escape echoed:\n{screen}");

    // The kept keys are the next prompt; Ctrl-C during its tool keeps keys the same way.
    world.answer(tool_call("call_2", "bash", json!({"command": "sleep 300"})));
    tmux.keys(&["Enter"]);
    tmux.wait_for_count("[a]lways:", 2);
    tmux.answer("y");
    tmux.wait_for_count("Running bash…", 1);
    tmux.keys(&["-l", "zz"]);
    tmux.wait_for("› zz");
    tmux.keys(&["C-c"]);
    tmux.wait_for_count("Command cancelled by the user", 2);
    let screen = tmux.wait_input_line("> zz");
    assert!(!screen.contains("^["), "{screen}");
    let requests = world.chat_requests();
    let user_texts: Vec<String> = requests
        .iter()
        .flat_map(|request| request["messages"].as_array().cloned().unwrap_or_default())
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].to_string())
        .collect();
    assert!(
        user_texts.iter().any(|text| text.contains("\"qq\"")),
        "the kept keys were sent as the next prompt: {user_texts:?}"
    );
}

#[test]
fn a_deleted_session_file_is_noticed_and_the_session_written_afresh() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("one");
    tmux.wait_for("First answer.");
    tmux.wait_idle(2);
    let file = world.session_files().remove(0);
    std::fs::remove_file(&file).unwrap();

    // Declined: nothing is sent, the prompt comes back, `/save` is named.
    tmux.line("two");
    let screen = tmux.wait_for("Write the session afresh to a new file and go on? [y]es / [n]o:");
    assert!(
        words(&screen).contains("was deleted since the session last wrote it; nothing was written"),
        "{screen}"
    );
    tmux.answer("n");
    tmux.wait_for("hint: /save writes the session afresh");
    assert_eq!(world.chat_requests().len(), 1, "nothing sent");
    tmux.wait_input_line("> two");
    // Sent again: asked again; this time written afresh, then sent.
    world.answer(text("Second answer.", 400));
    tmux.keys(&["Enter"]);
    tmux.wait_for_count("[y]es / [n]o:", 2);
    tmux.answer("y");
    tmux.wait_for("Wrote the session afresh to ");
    tmux.wait_for("Second answer.");
    tmux.wait_idle(4);
    assert!(!file.exists(), "the deleted file is not recreated");
    let files = world.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let entries = world.entries(&files[0]);
    // A deleted file is not named as the parent; the chat says it is gone.
    assert_eq!(header(&files[0])["parentSession"], Value::Null);
    let unwrapped: String = tmux.screen().split_whitespace().collect();
    let said = format!(
        "Wrotethesessionafreshto{}({}isnolongerthere);",
        files[0].display(),
        file.display()
    );
    assert!(unwrapped.contains(&said), "{}", tmux.screen());
    let texts: Vec<String> = entries
        .iter()
        .filter(|entry| entry["type"] == "message")
        .map(|entry| entry["message"]["content"].to_string())
        .collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(texts[0].contains("\"one\""), "{texts:?}");
    assert!(texts[1].contains("First answer."));
    assert!(texts[2].contains("\"two\""), "{texts:?}");
    assert!(texts[3].contains("Second answer."));
    assert_parents_present(&entries);
}

#[test]
fn a_session_file_cut_short_by_another_program_is_never_appended_to() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    world.answer(text("Second answer.", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("one");
    tmux.wait_idle(2);
    tmux.line("two");
    tmux.wait_for("Second answer.");
    tmux.wait_idle(3);
    let file = world.session_files().remove(0);
    let text_before = std::fs::read_to_string(&file).unwrap();
    let kept: String = text_before
        .lines()
        .take(3)
        .map(|line| format!("{line}\n"))
        .collect();
    // In place, as `truncate` or an editor writing through the same file would.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(kept.len() as u64)
        .unwrap();

    world.answer(text("Third answer.", 500));
    tmux.line("three");
    let screen = tmux.wait_for("[y]es / [n]o:");
    assert!(
        screen.contains("was cut short by another program"),
        "{screen}"
    );
    tmux.answer("y");
    tmux.wait_for("Third answer.");
    tmux.wait_idle(4);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        kept,
        "nothing hung onto the cut file"
    );
    let fresh: Vec<PathBuf> = world
        .session_files()
        .into_iter()
        .filter(|path| *path != file)
        .collect();
    assert_eq!(fresh.len(), 1);
    let entries = world.entries(&fresh[0]);
    // The new file names the cut one as its parent, as a fork does, and the chat names both.
    assert_eq!(
        header(&fresh[0])["parentSession"].as_str(),
        Some(file.display().to_string().as_str())
    );
    let unwrapped: String = tmux.screen().split_whitespace().collect();
    let said = format!(
        "Wrotethesessionafreshto{},anewsessionwhoseparentis{};",
        fresh[0].display(),
        file.display()
    );
    assert!(unwrapped.contains(&said), "{}", tmux.screen());
    assert_eq!(
        entries
            .iter()
            .filter(|entry| entry["type"] == "message")
            .count(),
        6,
        "every message held in memory, and the new ones"
    );
    assert_parents_present(&entries);
}

/// The session file the banner of a chat names.
fn banner_file(tmux: &Tmux) -> PathBuf {
    let screen = tmux.wait_for(".jsonl");
    let line = screen
        .lines()
        .find(|line| line.contains(".jsonl"))
        .unwrap()
        .trim();
    let start = line.find('/').unwrap();
    let end = line.find(".jsonl").unwrap() + ".jsonl".len();
    PathBuf::from(&line[start..end])
}

fn assistant_id(world: &World, file: &Path) -> String {
    world
        .entries(file)
        .into_iter()
        .find(|entry| entry["message"]["role"] == "assistant")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn continue_opens_the_session_used_last_after_fork_and_resume() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("one");
    tmux.wait_idle(2);
    let original = world.session_files().remove(0);
    tmux.line(&format!("/fork {}", assistant_id(&world, &original)));
    tmux.wait_for("Forked into a new session: ");
    tmux.wait_idle(3);
    let fork = world
        .session_files()
        .into_iter()
        .find(|path| *path != original)
        .unwrap();
    // Left on the fork: `--continue` opens the fork.
    tmux.keys(&["C-d"]);
    drop(tmux);
    let tmux = world.start("--continue");
    assert_eq!(banner_file(&tmux), fork, "after /fork");
    tmux.wait_idle(1);

    // Back to the original with `/resume` (the fork is listed first, as the newest), then left:
    // `--continue` opens the original, though the fork is the newer file.
    tmux.line("/resume");
    let (_, number) = tmux.resume_list(|line| line.contains("  2. "));
    assert_eq!(number, 2);
    tmux.pick_row(2);
    tmux.wait_for_count(".jsonl", 2);
    tmux.wait_idle(2);
    tmux.keys(&["C-d"]);
    drop(tmux);
    assert!(
        std::fs::metadata(&fork).unwrap().modified().unwrap()
            >= std::fs::metadata(&original).unwrap().modified().unwrap(),
        "the fork is the newest file"
    );
    let tmux = world.start("--continue");
    assert_eq!(banner_file(&tmux), original, "after /resume");
}

#[test]
fn an_empty_reply_shows_a_note() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("", 300));
    world.answer(text("   ", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("say nothing");
    tmux.wait_for("(the model replied with nothing)");
    tmux.wait_idle(2);
    tmux.line("say blanks");
    tmux.wait_for_count("(the model replied with nothing)", 2);
}

/// Lines that reach the chat in one read (typed ahead faster than the chat reads, or sent by a
/// program driving the terminal) are each entered in turn, a command's and a prompt's alike: the
/// line editor keeps what it read past the first line for the next one.
#[test]
fn lines_that_arrive_in_one_read_are_each_entered_in_turn() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    world.answer(text("Second answer.", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.keys(&[
        "/name typed ahead",
        "Enter",
        "first question",
        "Enter",
        "second question",
        "Enter",
    ]);
    tmux.wait_for("Second answer.");
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests[0].to_string().contains("first question"));
    let last = requests[1].to_string();
    assert!(last.contains("first question") && last.contains("second question"));
    let file = world.session_files().remove(0);
    assert!(
        world
            .entries(&file)
            .iter()
            .any(|entry| entry["type"] == "session_info" && entry["name"] == "typed ahead"),
        "the command before the prompts ran"
    );
}

/// While a tool runs, a line entered as steering and then a paste holding a `!` line: Esc stops
/// the turn, nothing typed meanwhile is sent or run, and it all comes back on the input line
/// (QA: the steering line was sent after Esc, the paste split into prompts and its `!` line run).
/// Enter then sends it as one prompt, the paste's text as pasted.
#[test]
fn esc_takes_back_what_was_typed_and_a_paste_waits_whole_for_enter() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call("call_1", "bash", json!({"command": "sleep 300"})));
    world.answer(text("Got it all.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("wait a while");
    tmux.wait_for("Run `sleep 300`? [y]es / [n]o / [a]lways:");
    tmux.answer("y");
    tmux.wait_for("Running bash…");
    tmux.keys(&["-l", "please also check README"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("› please also check README ⏎");
    let pasted = "look at this log:\n!touch PASTED_RAN\n  run \\\n\n  --flag\nend of log";
    tmux.paste(pasted);
    tmux.wait_for("end of log");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Command cancelled by the user");
    tmux.wait_for("!touch PASTED_RAN");
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(world.chat_requests().len(), 1, "nothing was sent after Esc");
    assert!(!world.project.join("PASTED_RAN").exists());
    tmux.keys(&["Enter"]);
    tmux.wait_for("Got it all.");
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let last = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|message| message["role"] == "user")
        .unwrap()
        .clone();
    let last = last["content"]
        .as_str()
        .map_or_else(|| last["content"].to_string(), str::to_owned);
    assert_eq!(last, format!("please also check README\n\n{pasted}"));
    assert!(!world.project.join("PASTED_RAN").exists());
}
