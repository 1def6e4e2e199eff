//! `ctxkit chat` in tmux, for the habits users bring from Pi and Claude Code: `!cmd` and `!!cmd`,
//! `@file` with completion, multi-line input and `$EDITOR`, `custom_message` entries, `/c`.

use serde_json::{Value, json};

use crate::chat::{Tmux, World, text};

fn tmux_missing() -> bool {
    if Tmux::available() {
        return false;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tmux is missing in CI; `.ci/run` installs it"
    );
    #[allow(clippy::print_stderr, reason = "the skip must be visible")]
    {
        eprintln!("SKIPPED: tmux is not installed");
    }
    true
}

/// The text of every user message of a chat request, in order.
fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| {
            message["content"]
                .as_str()
                .map_or_else(|| message["content"].to_string(), str::to_owned)
        })
        .collect()
}

#[test]
fn bang_runs_a_command_into_the_context_and_double_bang_keeps_it_out() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    std::fs::write(world.project.join("notes.txt"), "n").unwrap();
    world.answer(text("I see notes.txt.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    // No question: the user typed the command (the `bash` tool asks for the model's).
    tmux.line("!ls");
    tmux.wait_for("$ ls");
    tmux.wait_for("  notes.txt");
    tmux.wait_idle(2);
    tmux.line("!!echo private-note-42; exit 3");
    tmux.wait_for("  private-note-42");
    tmux.wait_for("Command exited with code 3");
    let screen = tmux.wait_for("(not sent to the model");
    assert!(!screen.contains("[y]es"), "{screen}");
    tmux.wait_idle(3);
    tmux.line("what is here?");
    tmux.wait_for("I see notes.txt.");
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 1, "commands call no model");
    assert_eq!(
        user_texts(&requests[0]),
        ["Ran `ls`\n```\nnotes.txt\n```", "what is here?"]
    );
    assert!(!requests[0].to_string().contains("private-note-42"));
    tmux.line("/quit");
    drop(tmux);
    let entries = world.entries(&world.session_files()[0]);
    let runs: Vec<&Value> = entries
        .iter()
        .filter(|entry| entry["message"]["role"] == "bashExecution")
        .collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["message"]["command"], "ls");
    assert_eq!(runs[0]["message"]["exitCode"], 0);
    assert!(runs[0]["message"].get("excludeFromContext").is_none());
    assert_eq!(runs[1]["message"]["excludeFromContext"], true);
    assert_eq!(runs[1]["message"]["exitCode"], 3);

    // Continued, the runs are shown again.
    let tmux = world.start("--continue");
    tmux.wait_idle(1);
    let screen = tmux.wait_for("$ echo private-note-42; exit 3");
    assert!(screen.contains("$ ls"), "{screen}");
}

#[test]
fn at_completes_project_files_and_attaches_the_one_named() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    for (file, content) in [
        ("src/main.rs", "fn main() { println!(\"hi\"); }\n"),
        ("src/lib.rs", "pub fn lib() {}\n"),
        ("target/main_generated.rs", "// built\n"),
    ] {
        let path = world.project.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    std::fs::write(world.project.join(".gitignore"), "target/\n").unwrap();
    world.answer(text("It prints hi.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    // Fuzzy, and the ignored `target/main_generated.rs` is no candidate: one Tab completes it.
    tmux.keys(&["-l", "explain @mainrs"]);
    tmux.keys(&["Tab"]);
    tmux.wait_for("> explain @src/main.rs");
    // A second Tab on an open word lists the matches.
    tmux.keys(&["-l", " and @src/"]);
    tmux.keys(&["Tab"]);
    tmux.keys(&["Tab"]);
    let screen = tmux.wait_for("src/lib.rs");
    assert!(!screen.contains("main_generated"), "{screen}");
    tmux.keys(&["BSpace"; 10]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Attached src/main.rs (1 line)");
    tmux.wait_for("It prints hi.");
    let request = world.chat_requests()[0].to_string();
    assert!(
        request.contains(
            r#"<file name=\"src/main.rs\">\nfn main() { println!(\"hi\"); }\n</file>\nexplain @src/main.rs"#
        ),
        "{request}"
    );
}
