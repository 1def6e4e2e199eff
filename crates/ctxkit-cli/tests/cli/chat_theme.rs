//! `ctxkit chat` in tmux: the `theme` setting colours the chat (a theme the resource loader found,
//! or ctxkit's own `dark` and `light`), as truecolor or 256-colour escapes as `COLORTERM` says,
//! `/reload` takes an edited theme, `/settings` steps through the themes, and a theme that is not
//! there is named once while the terminal's colours stand.

use std::path::Path;

use serde_json::{Value, json};

use crate::chat::{Tmux, World, chat_command, text, tmux_missing, tool_call};

/// A complete theme (ctxkit's `dark`) named `name`, with `colors` over its own.
fn theme(name: &str, colors: Value) -> String {
    let mut document: Value =
        serde_json::from_str(include_str!("../../../ctxkit-resources/themes/dark.json")).unwrap();
    document["name"] = json!(name);
    for (token, color) in colors.as_object().unwrap() {
        document["colors"][token] = color.clone();
    }
    document.to_string()
}

fn write_theme(home: &Path, file: &str, contents: &str) {
    std::fs::create_dir_all(home.join("themes")).unwrap();
    std::fs::write(home.join("themes").join(file), contents).unwrap();
}

/// The chat of `world` with `variables` set for it (`COLORTERM`, `COLORFGBG`).
fn start(world: &World, variables: &str) -> Tmux {
    start_with(world, variables, "")
}

/// [`start`] with `args` after `ctxkit chat`.
fn start_with(world: &World, variables: &str, args: &str) -> Tmux {
    // `env` takes its options before the first variable it sets.
    let command = chat_command(&world.project, world.home.path(), args)
        .replacen("exec env", "exec env -u COLORTERM -u COLORFGBG", 1)
        .replacen(" HOME=", &format!(" {variables} HOME="), 1);
    Tmux::start(&command)
}

/// The styled line of the tool call `→ write`, as the terminal holds it.
fn call_line(tmux: &Tmux, nth: usize) -> String {
    tmux.styled_screen()
        .lines()
        .filter(|line| line.contains("→ write"))
        .nth(nth)
        .unwrap_or_default()
        .to_owned()
}

/// Checks that the `nth` `→ write` line is drawn as `expected` (its escape, then `→ write`).
fn expect_call(tmux: &Tmux, nth: usize, expected: &str) {
    let line = call_line(tmux, nth);
    assert!(line.contains(expected), "{line:?}, not {expected:?}");
}

/// A world whose settings choose the theme `setting`, with the user themes `themes` (each a name
/// and its colours over ctxkit's `dark`).
fn themed_world(setting: &str, themes: &[(&str, Value)]) -> World {
    let world = World::new(100_000, json!({}));
    world.edit_settings(|settings| settings["theme"] = json!(setting));
    for (name, colors) in themes {
        write_theme(
            world.home.path(),
            &format!("{name}.json"),
            &theme(name, colors.clone()),
        );
    }
    world
}

fn answer_a_write(world: &World, id: &str) {
    world.answer(tool_call(
        id,
        "write",
        json!({"path": format!("{id}.txt"), "content": "x\n"}),
    ));
    world.answer(text("Written.", 300));
}

#[test]
fn a_theme_colours_the_chat_and_reload_takes_its_edit() {
    if tmux_missing() {
        return;
    }
    let world = themed_world("mine", &[("mine", json!({"toolTitle": "#00ff00"}))]);
    answer_a_write(&world, "first");
    answer_a_write(&world, "second");
    answer_a_write(&world, "third");

    let tmux = start(&world, "COLORTERM=truecolor");
    tmux.wait_idle(1);
    tmux.line("write one");
    tmux.wait_for("Written.");
    tmux.wait_idle(2);
    expect_call(&tmux, 0, "\u{1b}[38;2;0;255;0m→ write");

    // The theme edited, then read again by /reload: the next call is drawn in the new colour.
    write_theme(
        world.home.path(),
        "mine.json",
        &theme("mine", json!({"toolTitle": "#0000ff"})),
    );
    tmux.line("/reload");
    tmux.wait_for("Reloaded");
    tmux.line("write two");
    tmux.wait_for_count("Written.", 2);
    tmux.wait_idle(4);
    expect_call(&tmux, 1, "\u{1b}[38;2;0;0;255m→ write");

    // A theme that no longer reads is named, and the terminal's colours stand (cyan).
    write_theme(
        world.home.path(),
        "mine.json",
        &theme("mine", json!({"toolTitle": "teal-ish"})),
    );
    tmux.line("/reload");
    let screen = tmux.wait_for("variable reference not found: teal-ish");
    assert!(screen.contains("Invalid theme"), "{screen}");
    tmux.wait_for("Theme `mine` not found");
    tmux.line("write three");
    tmux.wait_for_count("Written.", 3);
    tmux.wait_idle(6);
    expect_call(&tmux, 2, "\u{1b}[36m→ write");
}

#[test]
fn a_light_dark_pair_follows_the_terminal_and_256_colours_are_sent_without_truecolor() {
    if tmux_missing() {
        return;
    }
    let world = themed_world(
        "paper/ink",
        &[
            ("paper", json!({"toolTitle": 201})),
            ("ink", json!({"toolTitle": "#00ff00"})),
        ],
    );
    answer_a_write(&world, "first");
    answer_a_write(&world, "second");

    // A light background (`COLORFGBG` 0;15): the first of the pair, its palette index as is.
    let light = start(&world, "COLORFGBG='0;15' COLORTERM=truecolor");
    light.wait_idle(1);
    light.line("write");
    light.wait_for("Written.");
    expect_call(&light, 0, "\u{1b}[38;5;201m→ write");
    drop(light);

    // No background said, no truecolor: the dark one, its green the nearest of 256 colours.
    let dark = start(&world, "");
    dark.wait_idle(1);
    dark.line("write");
    dark.wait_for("Written.");
    expect_call(&dark, 0, "\u{1b}[38;5;46m→ write");
}

#[test]
fn settings_steps_through_the_themes_found() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    write_theme(world.home.path(), "mine.json", &theme("mine", json!({})));
    let tmux = start(&world, "COLORTERM=truecolor");
    tmux.wait_idle(1);
    tmux.line("/settings");
    tmux.wait_for("Theme");
    // The detail line of the theme's row starts with its key.
    tmux.keys(&["-l", "/`theme`:"]);
    tmux.wait_for("1/1 of");
    for expected in ["dark", "light", "mine", "system"] {
        tmux.keys(&["Enter"]);
        // The list comes back showing the value saved.
        tmux.wait_for(&format!("{:<24}{expected}", "Theme"));
    }
    tmux.keys(&["Escape"]);
    tmux.wait_for("theme set to system");
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(world.home.path().join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["theme"], json!("system"));
}

/// The SGR parameters of `token` in ctxkit's own theme `name` on a truecolor terminal.
fn builtin_sgr(name: &str, token: &str) -> String {
    let document = ctxkit_resources::builtin_theme(name).unwrap();
    let colors = ctxkit_resources::theme_colors(&document).unwrap();
    colors.get(token).unwrap().foreground_sgr(true)
}

/// Attack: a cloned repository ships `.ctxkit/themes/dark.json` painting everything in the
/// background's black, and its settings ask for a theme. Until the user trusts the project,
/// neither is used: the user's `dark` is ctxkit's own, and the project's `theme` is named as
/// ignored.
#[test]
fn an_untrusted_projects_theme_paints_nothing_until_trusted() {
    if tmux_missing() {
        return;
    }
    let world = themed_world("dark", &[]);
    let black = theme(
        "dark",
        json!({"toolTitle": "#000000", "warning": "#000000"}),
    );
    std::fs::create_dir_all(world.project.join(".ctxkit/themes")).unwrap();
    std::fs::write(world.project.join(".ctxkit/themes/dark.json"), &black).unwrap();
    world.write_project_settings(&json!({"theme": "dark"}));
    answer_a_write(&world, "first");
    answer_a_write(&world, "second");

    let untrusted = start(&world, "COLORTERM=truecolor");
    let screen = untrusted.wait_idle(1);
    assert!(
        screen.contains("ignored `theme`"),
        "the ignored key is named: {screen}"
    );
    untrusted.line("write");
    untrusted.wait_for("Written.");
    let own = format!("\u{1b}[{}m→ write", builtin_sgr("dark", "toolTitle"));
    expect_call(&untrusted, 0, &own);
    drop(untrusted);

    let ctxkit = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
            .args(args)
            .current_dir(&world.project)
            .env("CTXKIT_HOME", world.home.path())
            .env("HOME", world.home.path())
            .env_remove("COLORFGBG")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    // `ctxkit resources` says which theme waits, and which one paints.
    let listing = ctxkit(&["resources"]);
    assert!(
        listing.contains("[project auto, not used until `ctxkit trust`]"),
        "{listing}"
    );
    assert!(listing.contains("Theme in use: dark\n"), "{listing}");
    ctxkit(&["trust", "--yes"]);
    let listing = ctxkit(&["resources"]);
    assert!(!listing.contains("not used until"), "{listing}");
    let trusted = start(&world, "COLORTERM=truecolor");
    trusted.wait_idle(1);
    trusted.line("write");
    trusted.wait_for("Written.");
    expect_call(&trusted, 0, "\u{1b}[38;2;0;0;0m→ write");
}

/// `--use-theme` paints this chat only: the setting is not changed, and `/reload` keeps the flag's
/// theme.
#[test]
fn use_theme_paints_one_chat_without_changing_the_setting() {
    if tmux_missing() {
        return;
    }
    let world = themed_world("mine", &[("mine", json!({"toolTitle": "#00ff00"}))]);
    answer_a_write(&world, "first");
    answer_a_write(&world, "second");
    let tmux = start_with(&world, "COLORTERM=truecolor", "--use-theme light");
    tmux.wait_idle(1);
    tmux.line("write");
    tmux.wait_for("Written.");
    tmux.wait_idle(2);
    let light = format!("\u{1b}[{}m→ write", builtin_sgr("light", "toolTitle"));
    expect_call(&tmux, 0, &light);
    tmux.line("/reload");
    tmux.wait_for("Reloaded");
    tmux.line("write again");
    tmux.wait_for_count("Written.", 2);
    tmux.wait_idle(4);
    expect_call(&tmux, 1, &light);
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(world.home.path().join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["theme"], json!("mine"));
}
