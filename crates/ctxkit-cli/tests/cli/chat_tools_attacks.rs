//! `ctxkit chat` against a model that attacks the terminal and its questions: what it chose (a
//! command, a file name) is shown at the approval question, never obeyed by the terminal; and a
//! command it runs does not outlive the chat's terminal.

use serde_json::json;

use std::time::{Duration, Instant};

use crate::chat::{Tmux, World, chat_command, text, tmux_missing, tool_call};
use crate::serve_ends::{alive, assert_command_ends, started_sleep};

/// QA (second round): `touch PWNED # \x1b[2K\r\x1b[1Aecho hello` erased `Run `touch PWNED #` and
/// the tool line above it, and 80 newlines before `echo hello` pushed it off the screen: the user
/// saw "echo hello`? [y]es / [n]o / [a]lways" and approved a `touch`. Now the escapes are shown as
/// `\u001b`, the blank lines as their count, and what runs is on the screen.
#[test]
fn a_command_cannot_hide_itself_from_its_approval_question() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "touch PWNED1 # \u{1b}[2K\r\u{1b}[1Aecho hello"}),
    ));
    world.answer(tool_call(
        "call_2",
        "bash",
        json!({"command": format!("touch PWNED2{}echo hello", "\n".repeat(80))}),
    ));
    world.answer(text("done", 400));
    let tmux = Tmux::start(&chat_command(&world.project, world.home.path(), ""));
    tmux.wait_idle(1);
    tmux.line("hi");
    let screen = tmux.wait_for("[y]es / [n]o / [a]lways");
    assert!(
        screen.contains("Run `touch PWNED1 # \\u001b[2K\\u000d\\u001b[1Aecho hello`? [y]es"),
        "{screen}"
    );
    assert!(screen.contains("→ bash touch PWNED1"), "{screen}");
    tmux.answer("n");
    let screen = tmux.wait_for_count("[y]es / [n]o / [a]lways", 2);
    assert!(
        screen.contains("│ Run `touch PWNED2\n│ [79 blank lines]\n│ echo hello`?\n[y]es"),
        "{screen}"
    );
    tmux.answer("n");
    tmux.wait_for("done");
    assert!(!world.project.join("PWNED1").exists());
    assert!(!world.project.join("PWNED2").exists());
}

/// QA (2026-12-05): a tool's name is the model's choice, and the spinner line shown while the call
/// runs printed it raw: a name holding a window title and a clipboard write set both. The name is
/// shown escaped there too.
#[test]
fn a_tool_name_cannot_drive_the_terminal_from_the_spinner_line() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let name = "nosuchtool\u{1b}]0;TITLEPWN\u{7}\u{1b}]52;c;Y2xpcA==\u{7}";
    world.answer(tool_call("call_1", name, json!({})));
    world.answer(text("done", 400));
    let tmux = Tmux::start(&chat_command(&world.project, world.home.path(), "--yes"));
    tmux.accept_clipboard();
    tmux.wait_idle(1);
    tmux.line("go");
    let screen = tmux.wait_for("done");
    assert!(screen.contains("nosuchtool\\u001b]0;TITLEPWN"), "{screen}");
    assert!(
        !tmux.pane_title().contains("TITLEPWN"),
        "{}",
        tmux.pane_title()
    );
    assert_eq!(tmux.clipboard(), None);
}

/// QA (second round): a `bash` command runs in a process group of its own, which the terminal's
/// hangup does not reach: closing the terminal while `sleep 600` ran ended the chat and left the
/// command running, orphaned. The chat now kills the running commands' groups on SIGHUP and
/// SIGTERM before it ends.
#[test]
fn closing_the_terminal_stops_the_running_command() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "sleep 600 & echo $! > sleep.pid; wait", "timeout": 900}),
    ));
    world.answer(text("done", 400));
    let tmux = Tmux::start(&chat_command(&world.project, world.home.path(), "--yes"));
    tmux.wait_idle(1);
    tmux.line("sleep");
    let pid = started_sleep(&world.project.join("sleep.pid"));
    assert!(alive(&pid));
    // The terminal closes (tmux's server ends); the chat is gone once this returns.
    drop(tmux);
    // The command sleeps ten minutes: gone within 20 s (a loaded machine's margin) is the kill.
    assert_command_ends(
        &pid,
        Instant::now(),
        Duration::from_secs(20),
        "the command outlived the chat",
    );
}

/// QA (2026-12-05): a chat ended by SIGTERM at its input line left the terminal in raw mode
/// (`-icanon -echo`): the shell it returned to did not show what was typed. The terminal's mode
/// is put back before the chat ends.
/// What `stty -a` wrote to `file` once the chat before it ended (waited for, up to 20 s).
fn shell_modes(file: &std::path::Path) -> String {
    let started = Instant::now();
    while !file.exists() || std::fs::read_to_string(file).unwrap().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no stty output"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(100));
    std::fs::read_to_string(file).unwrap()
}

/// The chat keeps Enter a carriage return while it runs (an Enter typed between a turn's end and
/// the next input line was read as Ctrl-J, a line break, and the line typed ahead was not
/// entered); a chat left with `/quit` gives the shell its mode back, carriage return translated.
#[test]
fn a_chat_left_with_quit_gives_the_shell_its_enter_key_back() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let place = world.home.path();
    let script = place.join("chat.sh");
    std::fs::write(&script, chat_command(&world.project, place, "")).unwrap();
    let modes = place.join("stty.txt");
    let tmux = Tmux::start(&format!(
        "stty icrnl; sh '{}'; stty -a > '{}'; sleep 60",
        script.display(),
        modes.display()
    ));
    tmux.wait_idle(1);
    tmux.line("/quit");
    let modes = shell_modes(&modes);
    let flags: Vec<&str> = modes.split_whitespace().collect();
    assert!(
        flags.contains(&"icrnl") && flags.contains(&"icanon") && flags.contains(&"echo"),
        "{modes}"
    );
}

#[test]
fn a_chat_ended_by_sigterm_gives_the_shell_its_terminal_back() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let place = world.home.path();
    let script = place.join("chat.sh");
    std::fs::write(
        &script,
        format!(
            "echo $$ > '{pid}'\n{chat}\n",
            pid = place.join("chat.pid").display(),
            chat = chat_command(&world.project, place, "")
        ),
    )
    .unwrap();
    let modes = place.join("stty.txt");
    let tmux = Tmux::start(&format!(
        "sh '{}'; stty -a > '{}'; sleep 60",
        script.display(),
        modes.display()
    ));
    tmux.wait_idle(1);
    let pid = std::fs::read_to_string(place.join("chat.pid")).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-TERM", pid.trim()])
        .status()
        .unwrap();
    assert!(status.success());
    let modes = shell_modes(&modes);
    let flags: Vec<&str> = modes.split_whitespace().collect();
    assert!(
        flags.contains(&"icanon") && flags.contains(&"echo"),
        "{modes}"
    );
}

/// QA: "please keep main", typed on at 150 ms a key as a `bash` question appeared, answered it
/// `a`lways with the `a` of "main": the command ran and every later one ran unasked, and the other
/// letters were lost. QA 2026-12-07: at 300 ms a key each key passed for an answer after a pause,
/// and the `a` of "please wait" answered. Once typing is seen no key of it answers: the answer is
/// a key alone, then Enter, and what was typed comes back on the next input line.
#[test]
fn typing_that_goes_on_does_not_answer_a_question() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call("call_1", "bash", json!({"command": "touch RAN"})));
    world.answer(text("done", 400));
    let tmux = Tmux::start(&chat_command(&world.project, world.home.path(), ""));
    tmux.wait_idle(1);
    tmux.line("tidy up");
    tmux.wait_for("[y]es / [n]o / [a]lways");
    for (index, key) in "please keep main".chars().enumerate() {
        tmux.keys(&["-l", &key.to_string()]);
        // A fast typist, then a slow one.
        let gap = if index < 8 { 100 } else { 350 };
        std::thread::sleep(std::time::Duration::from_millis(gap));
    }
    let screen = tmux.wait_for("to answer, stop typing, then type y, n or a and Enter");
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert!(!world.project.join("RAN").exists(), "{screen}");
    tmux.answer("n");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!world.project.join("RAN").exists(), "{screen}");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("done");
    assert!(!world.project.join("RAN").exists(), "{screen}");
    // What was typed is on the input line.
    let screen = tmux.wait_for("> please keep main");
    assert!(screen.contains("declined"), "{screen}");
}

/// QA: an 8,000-token model was sent a 50 KB (13,000-token) `bash` output, which no compaction
/// could fit: the provider refused the request. A tool output keeps no more bytes than the window
/// has tokens, and the model is told the limit and where the whole output is.
#[test]
fn a_small_models_tool_output_is_cut_to_its_window() {
    if tmux_missing() {
        return;
    }
    let world = World::new(8_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "seq 1 20000"}),
    ));
    world.answer(text("done", 400));
    let tmux = Tmux::start(&chat_command(&world.project, world.home.path(), ""));
    tmux.wait_idle(1);
    tmux.line("count");
    tmux.wait_for("[y]es / [n]o / [a]lways");
    tmux.answer("y");
    tmux.wait_for("done");
    let request = world.chat_requests().last().cloned().unwrap();
    let result = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .cloned()
        .unwrap();
    let text = result["content"].as_str().unwrap();
    let (kept, note) = text.rsplit_once("\n\n").unwrap();
    assert!(kept.len() <= 8_000, "{}", kept.len());
    assert!(kept.ends_with("20000"), "{kept}");
    assert!(note.contains("limits 2000 lines, 8 KB"), "{note}");
}
