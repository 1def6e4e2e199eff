//! `ctxkit chat` in tmux: code in a reply's fenced block, and a file `read`, are drawn in their
//! language's colours: the terminal's own ANSI colours by default, the theme's `syntax*` tokens
//! under a theme. A block in no language keeps the code block's colour, and `NO_COLOR` none. A
//! `write` that makes a file shows its first lines so coloured (as Pi 1.6 does); one that changes
//! a file shows the change.

use serde_json::json;

use crate::chat::{Tmux, World, chat_command, text, tmux_missing, tool_call};

const REPLY: &str = "Here it is:\n\n```rust\nfn main() {\n    let count = 3; // three\n}\n```\n\n```\nplain words\n```\n";

/// A world whose model reads `app.py`, then answers with [`REPLY`].
fn world(settings: serde_json::Value) -> World {
    let world = World::new(100_000, json!({}));
    world.edit_settings(|current| {
        for (key, value) in settings.as_object().unwrap() {
            current[key] = value.clone();
        }
    });
    std::fs::write(
        world.project.join("app.py"),
        "def total(items):\n    return sum(items)\n",
    )
    .unwrap();
    world.answer(tool_call("r1", "read", json!({"path": "app.py"})));
    world.answer(text(REPLY, 300));
    world
}

fn start(world: &World, variables: &str) -> Tmux {
    let command = chat_command(&world.project, world.home.path(), "")
        .replacen(
            "exec env",
            "exec env -u COLORTERM -u COLORFGBG -u NO_COLOR",
            1,
        )
        .replacen(" HOME=", &format!(" {variables} HOME="), 1);
    Tmux::start(&command)
}

/// The styled screen once the reply is shown.
fn screen_after_the_reply(tmux: &Tmux) -> String {
    tmux.wait_idle(1);
    tmux.line("show me");
    tmux.wait_for("plain words");
    tmux.wait_idle(2);
    tmux.styled_screen()
}

/// The styled line whose text (its escapes taken out) holds `needle`.
fn line_with<'screen>(screen: &'screen str, needle: &str) -> &'screen str {
    screen
        .lines()
        .find(|line| {
            anstream::adapter::strip_str(line)
                .to_string()
                .contains(needle)
        })
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{screen}"))
}

#[test]
fn code_is_drawn_in_the_terminals_colours_by_default() {
    if tmux_missing() {
        return;
    }
    let world = world(json!({}));
    let tmux = start(&world, "");
    let screen = screen_after_the_reply(&tmux);
    // Keywords blue, a function's name yellow, numbers magenta, comments faint.
    let code = line_with(&screen, "let count");
    assert!(code.contains("\u{1b}[34mlet"), "{code:?}");
    assert!(code.contains("\u{1b}[35m3"), "{code:?}");
    assert!(code.contains("\u{1b}[2m// three"), "{code:?}");
    assert!(line_with(&screen, "fn main").contains("\u{1b}[33mmain"));
    // The file read is drawn in Python's colours.
    let read = line_with(&screen, "def total");
    assert!(read.contains("\u{1b}[34mdef"), "{read:?}");
    // A block in no language is not highlighted.
    let plain = line_with(&screen, "plain words");
    assert!(!plain.contains("\u{1b}[34m"), "{plain:?}");
}

#[test]
fn a_theme_colours_code_with_its_syntax_tokens_and_no_color_with_none() {
    if tmux_missing() {
        return;
    }
    let world = world(json!({"theme": "mine"}));
    std::fs::create_dir_all(world.home.path().join("themes")).unwrap();
    let mut theme: serde_json::Value =
        serde_json::from_str(include_str!("../../../ctxkit-resources/themes/dark.json")).unwrap();
    theme["name"] = json!("mine");
    theme["colors"]["syntaxKeyword"] = json!("#ff0000");
    theme["colors"]["syntaxComment"] = json!("#00ff00");
    std::fs::write(
        world.home.path().join("themes/mine.json"),
        theme.to_string(),
    )
    .unwrap();
    let tmux = start(&world, "COLORTERM=truecolor");
    let screen = screen_after_the_reply(&tmux);
    let code = line_with(&screen, "let count");
    assert!(code.contains("\u{1b}[38;2;255;0;0mlet"), "{code:?}");
    assert!(code.contains("\u{1b}[38;2;0;255;0m// three"), "{code:?}");
    assert!(line_with(&screen, "def total").contains("\u{1b}[38;2;255;0;0mdef"));
    drop(tmux);

    let world = self::world(json!({"theme": "dark"}));
    let tmux = start(&world, "NO_COLOR=1");
    let screen = screen_after_the_reply(&tmux);
    for needle in ["let count", "def total"] {
        let line = line_with(&screen, needle);
        assert!(!line.contains('\u{1b}'), "{line:?}");
    }
}

#[test]
fn a_new_file_is_shown_in_its_colours_and_a_changed_one_as_its_change() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    std::fs::write(world.project.join("app.py"), "a = 1\nb = 2\n").unwrap();
    let content: String = (1..=12).map(|n| format!("fn step{n}() {{}}\n")).collect();
    world.answer(tool_call(
        "w1",
        "write",
        json!({"path": "src/steps.rs", "content": content}),
    ));
    world.answer(tool_call(
        "w2",
        "write",
        json!({"path": "app.py", "content": "a = 1\nb = 3\n"}),
    ));
    world.answer(text("Both written.", 300));
    let tmux = start(&world, "");
    tmux.wait_idle(1);
    tmux.line("write them");
    tmux.wait_for("Both written.");
    tmux.wait_idle(2);
    let screen = tmux.styled_screen();
    assert!(line_with(&screen, "step1()").contains("\u{1b}[34mfn"));
    line_with(&screen, "step10()");
    line_with(&screen, "… (2 more lines, 12 total)");
    assert!(
        !anstream::adapter::strip_str(&screen)
            .to_string()
            .contains("step11")
    );
    line_with(&screen, "-2 b = 2");
    line_with(&screen, "+2 b = 3");
    assert_eq!(
        std::fs::read_to_string(world.project.join("src/steps.rs")).unwrap(),
        content
    );
    tmux.line("/quit");
    drop(tmux);

    // Continued, the conversation shown again shows both writes as they were shown live.
    let command = chat_command(&world.project, world.home.path(), "--continue");
    let again = Tmux::start(&command);
    let screen = again.wait_for("/help lists commands");
    for shown in [
        "fn step10() {}",
        "… (2 more lines, 12 total)",
        "-2 b = 2",
        "+2 b = 3",
    ] {
        assert!(screen.contains(shown), "{shown:?} in {screen}");
    }
}
