//! `ctxkit chat` against a model that attacks the terminal and its questions: what it chose (a
//! command, a file name) is shown at the approval question, never obeyed by the terminal.

use serde_json::json;

use crate::chat::{Tmux, World, chat_command, text, tmux_missing, tool_call};

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
    tmux.keys(&["n"]);
    let screen = tmux.wait_for_count("[y]es / [n]o / [a]lways", 2);
    assert!(
        screen.contains("Run `touch PWNED2\n[79 blank lines]\necho hello`? [y]es"),
        "{screen}"
    );
    tmux.keys(&["n"]);
    tmux.wait_for("done");
    assert!(!world.project.join("PWNED1").exists());
    assert!(!world.project.join("PWNED2").exists());
}
