//! `ctxkit chat` in tmux: `/thinking` sets the thinking level and records it, and a continued or
//! resumed session is talked to with the model and level it recorded, as Pi restores them.

use serde_json::{Value, json};

use crate::chat::{World, text, tmux_missing};

/// Two models of the mock provider: the default one reasons, `plain-model` does not.
fn with_two_models(world: &World, default_model: &str) {
    let path = world.home.path().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["defaultModel"] = json!(format!("mock/{default_model}"));
    let models = settings["llm"]["models"].as_array_mut().unwrap();
    models[0]["reasoning"] = json!(true);
    models.push(
        json!({"provider": "mock", "id": "plain-model", "contextWindow": 100_000,
                       "maxOutput": 2048}),
    );
    std::fs::write(&path, settings.to_string()).unwrap();
}

/// The model and the reasoning effort of the `index`th chat request.
fn asked(world: &World, index: usize) -> (String, Option<String>) {
    let request = &world.chat_requests()[index];
    (
        request["model"].as_str().unwrap().to_owned(),
        request["reasoning_effort"].as_str().map(str::to_owned),
    )
}

#[test]
fn thinking_is_set_recorded_and_restored_with_the_sessions_model() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    with_two_models(&world, "test-model");
    for answer in ["One.", "Two.", "Three.", "Four.", "Five."] {
        world.answer(text(answer, 300));
    }

    // Set, shown, refused when unknown; the request asks for it and the session records it.
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("/thinking");
    tmux.wait_for("Thinking level: off; /thinking <level> sets one of: off, minimal, low");
    tmux.line("/thinking huge");
    tmux.wait_for("No thinking level `huge`; one of: off, minimal");
    tmux.line("/thinking high");
    tmux.wait_for("Thinking level: high");
    tmux.line("/thinking high");
    tmux.wait_for_count("Thinking level: high", 2);
    tmux.line("first");
    tmux.wait_for("One.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 0), ("test-model".into(), Some("high".into())));
    let first = world.session_files().remove(0);
    let levels: Vec<Value> = world
        .entries(&first)
        .into_iter()
        .filter(|entry| entry["type"] == "thinking_level_change")
        .map(|entry| entry["thinkingLevel"].clone())
        .collect();
    assert_eq!(
        levels,
        [json!("high")],
        "recorded once: the second changed nothing"
    );
    tmux.keys(&["C-d"]);
    drop(tmux);

    // The user's default model changes; a new session gets it, and nothing is asked of a model
    // that does not reason.
    with_two_models(&world, "plain-model");
    let tmux = world.start("");
    tmux.wait_for("ctxkit chat · mock/plain-model");
    tmux.wait_idle(1);
    tmux.line("/thinking low");
    tmux.wait_for("mock/plain-model does not reason (the model table says so)");
    tmux.line("second");
    tmux.wait_for("Two.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 1), ("plain-model".into(), None));

    // `/resume` of the first session talks to its model at its level again.
    tmux.line("/resume");
    let (_, number) = tmux.resume_list(|line| line.trim_end().ends_with("  first"));
    tmux.pick_row(number);
    // The replayed session ends with the banner's last line; a line typed before it was lost.
    tmux.wait_for_count("/help lists commands", 2);
    tmux.wait_idle(3);
    tmux.line("third");
    tmux.wait_for("Three.");
    tmux.wait_idle(4);
    assert_eq!(asked(&world, 2), ("test-model".into(), Some("high".into())));
    tmux.keys(&["C-d"]);
    drop(tmux);

    // `--continue` does too (the first session is the newest now) …
    let tmux = world.start("--continue");
    tmux.wait_for("ctxkit chat · mock/test-model");
    tmux.wait_idle(1);
    tmux.line("fourth");
    tmux.wait_for("Four.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 3), ("test-model".into(), Some("high".into())));
    tmux.keys(&["C-d"]);
    drop(tmux);

    // … unless `--model` picks another.
    let tmux = world.start(&format!(
        "--session '{}' --model mock/plain-model",
        first.display()
    ));
    tmux.wait_for("ctxkit chat · mock/plain-model");
    tmux.wait_idle(1);
    tmux.line("fifth");
    tmux.wait_for("Five.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 4), ("plain-model".into(), None));
    tmux.keys(&["C-d"]);
    drop(tmux);

    // A recorded model whose provider has no key here: one line says why, and the chat's own
    // model (the user's default, which does not reason) answers.
    let last = world.entries(&first).last().unwrap()["id"].clone();
    let change = json!({"type": "model_change", "id": "f00dcafe", "parentId": last,
        "timestamp": "2026-12-03T23:50:00.000Z", "provider": "anthropic",
        "modelId": "claude-sonnet-4-5"});
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&first)
        .unwrap();
    std::io::Write::write_all(&mut file, format!("{change}\n").as_bytes()).unwrap();
    world.answer(text("Six.", 300));
    let tmux = world.start(&format!("--session '{}'", first.display()));
    tmux.wait_for(
        "Could not restore the session's model anthropic/claude-sonnet-4-5 (No API key for \
         provider `anthropic`",
    );
    tmux.wait_idle(1);
    tmux.line("sixth");
    tmux.wait_for("Six.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 5), ("plain-model".into(), None));
}

#[test]
fn model_alone_offers_the_models_that_can_be_asked_and_switches_to_the_one_picked() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    with_two_models(&world, "test-model");
    world.answer(text("From plain.", 300));

    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("/model");
    let screen = tmux.wait_for("Switch to which model?");
    // The mock's two models, the current one marked; no provider without a key.
    assert!(screen.contains("● mock/test-model "), "{screen}");
    assert!(screen.contains("2048 output  reasoning"), "{screen}");
    assert!(screen.contains("mock/plain-model "), "{screen}");
    assert!(!screen.contains("anthropic/"), "{screen}");
    tmux.keys(&["Up"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Model: mock/plain-model (context window 100000)");
    tmux.line("hello");
    tmux.wait_for("From plain.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 0), ("plain-model".into(), None));
}

/// `/` searches a picker's rows: typing narrows the list, in any case, Enter picks the row under
/// the cursor; Esc ends the search and the whole list is back.
#[test]
fn model_picker_search_narrows_the_list_and_enter_picks_the_match() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    with_two_models(&world, "test-model");
    world.answer(text("From plain.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("/model");
    tmux.wait_for("/ search");
    tmux.keys(&["-l", "/zzz"]);
    tmux.wait_for("no row matches");
    tmux.keys(&["Escape"]);
    tmux.wait_for("── 2/2 ");
    tmux.keys(&["-l", "/PLAIN"]);
    let screen = tmux.wait_for("1/1 of 2");
    let picked = |line: &str| line.starts_with('›') && line.contains("mock/plain-model");
    assert!(screen.lines().any(picked), "{screen}");
    assert!(!screen.contains("mock/test-model "), "{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Model: mock/plain-model (context window 100000)");
    tmux.line("hello");
    tmux.wait_for("From plain.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 0), ("plain-model".into(), None));
}

#[test]
fn shift_tab_moves_to_the_next_thinking_level_and_keeps_the_line_typed() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    with_two_models(&world, "test-model");
    world.answer(text("Reasoned.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.keys(&["-l", "half typed"]);
    tmux.wait_for("> half typed");
    tmux.keys(&["BTab"]);
    tmux.wait_for("Thinking level: minimal");
    tmux.keys(&["BTab"]);
    tmux.wait_for("Thinking level: low");
    // The line typed is back, and what is typed next goes on from it.
    tmux.line(" question");
    tmux.wait_for("Reasoned.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 0), ("test-model".into(), Some("low".into())));
    let request = world.chat_requests()[0].to_string();
    assert!(request.contains("half typed question"), "{request}");
    let levels: Vec<Value> = world
        .entries(&world.session_files().remove(0))
        .into_iter()
        .filter(|entry| entry["type"] == "thinking_level_change")
        .map(|entry| entry["thinkingLevel"].clone())
        .collect();
    assert_eq!(levels, [json!("minimal"), json!("low")]);
    tmux.keys(&["C-d"]);
    drop(tmux);

    // A model that does not reason has no level to move to, and says so.
    with_two_models(&world, "plain-model");
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.keys(&["BTab"]);
    tmux.wait_for("mock/plain-model does not reason (the model table says so); Shift-Tab");
}

#[test]
fn ctrl_p_steps_through_the_models_enabled_models_names_with_their_levels() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    with_two_models(&world, "test-model");
    world.answer(text("From plain.", 300));
    world.answer(text("From test.", 300));

    // No `enabledModels`: every model that can be asked, in `/model`'s order.
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.keys(&["-l", "kept"]);
    tmux.keys(&["C-p"]);
    tmux.wait_for("Model: mock/plain-model");
    tmux.line(" line");
    tmux.wait_for("From plain.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 0), ("plain-model".into(), None));
    assert!(world.chat_requests()[0].to_string().contains("kept line"));
    tmux.keys(&["C-d"]);
    drop(tmux);

    // `enabledModels` with a level and a pattern that names nothing.
    let path = world.home.path().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["defaultModel"] = json!("mock/plain-model");
    settings["enabledModels"] = json!(["plain*", "mock/test-model:high", "nowhere"]);
    std::fs::write(&path, settings.to_string()).unwrap();
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.keys(&["C-p"]);
    tmux.wait_for("enabledModels: no model that can be asked now matches `nowhere`");
    tmux.wait_for("Model: mock/test-model");
    tmux.wait_for("Thinking level: high");
    tmux.line("go");
    tmux.wait_for("From test.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 1), ("test-model".into(), Some("high".into())));
    // A key is the line editor's once what is typed shows on the input line (before, it is a
    // key typed while the turn ends, and Ctrl-P is not kept).
    tmux.keys(&["-l", "x"]);
    tmux.wait_for("> x");
    tmux.keys(&["BSpace", "C-p"]);
    tmux.wait_for("Model: mock/plain-model");
    tmux.keys(&["C-d"]);
    drop(tmux);

    // `--models` wins over the setting, and a scope of one model says so.
    let tmux = world.start("--models mock/plain-model");
    tmux.wait_idle(1);
    tmux.keys(&["C-p"]);
    tmux.wait_for("Only one model in scope");
}

#[test]
fn hidden_thinking_shows_one_line_and_ctrl_t_shows_it_again_and_saves_the_choice() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    with_two_models(&world, "test-model");
    let path = world.home.path().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["hideThinkingBlock"] = json!(true);
    std::fs::write(&path, settings.to_string()).unwrap();
    let reasoned = |reasoning: &str, answer: &str| {
        crate::chat::completion(
            json!({"role": "assistant", "content": answer, "reasoning_content": reasoning}),
            "stop",
            300,
        )
    };
    world.answer(reasoned("FIRST-PLAN in detail", "First done."));
    world.answer(reasoned("SECOND-PLAN in detail", "Second done."));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("one");
    let screen = tmux.wait_for("First done.");
    assert!(screen.contains("Thinking..."), "{screen}");
    assert!(!screen.contains("FIRST-PLAN"), "{screen}");
    tmux.wait_idle(2);
    tmux.keys(&["C-t"]);
    tmux.wait_for("Thinking blocks: visible");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved["hideThinkingBlock"], json!(false));
    tmux.line("two");
    tmux.wait_for("Second done.");
    tmux.wait_for("SECOND-PLAN in detail");
}

#[test]
fn scoped_models_picks_what_ctrl_p_steps_through_and_saves_it() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    with_two_models(&world, "test-model");
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("/scoped-models");
    tmux.wait_for("Models Ctrl-P steps through: 2 of 2 on");
    // The first row is `mock/plain-model`: off, then Esc keeps it for this chat.
    tmux.keys(&["Enter"]);
    tmux.wait_for("Models Ctrl-P steps through: 1 of 2 on");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Ctrl-P steps through mock/test-model in this chat");
    tmux.keys(&["C-p"]);
    tmux.wait_for("Only one model in scope");
    // Back on, and saved.
    tmux.line("/scoped-models");
    tmux.wait_for("Models Ctrl-P steps through: 1 of 2 on");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Models Ctrl-P steps through: 2 of 2 on");
    tmux.keys(&["c"]);
    tmux.wait_for("Models Ctrl-P steps through: 0 of 2 on");
    tmux.keys(&["Down", "Enter", "Up", "Enter", "s"]);
    tmux.wait_for("Ctrl-P steps through mock/test-model, mock/plain-model; saved as enabledModels");
    let path = world.home.path().join("settings.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        saved["enabledModels"],
        json!(["mock/test-model", "mock/plain-model"])
    );
    tmux.keys(&["C-p"]);
    tmux.wait_for("Model: mock/plain-model");
}

/// `/settings`, as Pi's settings selector: the chat's settings with their values; Enter steps the
/// one under the cursor to its next value and saves it in the user's settings, and a display
/// setting applies at once (thinking hidden on the next reply).
#[test]
fn settings_list_steps_a_value_saves_it_and_applies_hidden_thinking_at_once() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    with_two_models(&world, "test-model");
    world.answer(crate::chat::completion(
        json!({"role": "assistant", "content": "Planned.", "reasoning_content": "SECRET-PLAN steps"}),
        "stop",
        300,
    ));
    let path = world.home.path().join("settings.json");
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("/settings");
    let screen = tmux.wait_for("Settings (Enter steps");
    assert!(screen.contains("Auto-compact"), "{screen}");
    assert!(screen.contains("(default)"), "{screen}");
    // `hideThinkingBlock` is named only in its own row's detail line.
    tmux.keys(&["-l", "/hideThinking"]);
    tmux.wait_for("1/1 of");
    tmux.keys(&["Enter"]);
    // The list is back with the new value, the cursor on it.
    let screen = tmux.wait_for("(global)");
    let stepped = |line: &str| line.starts_with('›') && line.contains("Hide thinking");
    assert!(screen.lines().any(stepped), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("hideThinkingBlock set to true (applies at once)");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved["hideThinkingBlock"], json!(true));
    tmux.line("plan it");
    let screen = tmux.wait_for("Planned.");
    assert!(!screen.contains("SECRET-PLAN"), "{screen}");
    assert!(screen.contains("Thinking..."), "{screen}");
}

/// A tester's attack: a cloned repository ships `demo-session.jsonl` recording `ollama/…`;
/// `ctxkit chat --session demo-session.jsonl` talked to localhost:11434, a port any local user
/// may hold (or, recording `anthropic/claude-opus-…`, spent the user's key on it). A session file
/// from outside the sessions folder keeps the user's model, and says how to switch; one in the
/// sessions folder is still talked to with the model it recorded.
#[test]
fn a_session_from_outside_the_sessions_folder_keeps_the_users_model() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    with_two_models(&world, "test-model");
    for answer in ["One.", "Two.", "Three."] {
        world.answer(text(answer, 300));
    }
    let shipped = world.project.join("demo-session.jsonl");
    let lines = [
        json!({"type": "session", "version": 3, "id": "01a2482a-5cda-735d-8489-985dc396ff59",
               "timestamp": "2026-12-01T10:00:00.000Z", "cwd": world.project}),
        json!({"type": "model_change", "id": "aa000001", "parentId": null,
               "timestamp": "2026-12-01T10:00:00.100Z", "provider": "mock",
               "modelId": "plain-model"}),
        json!({"type": "message", "id": "aa000002", "parentId": "aa000001",
               "timestamp": "2026-12-01T10:00:01.000Z",
               "message": {"role": "user", "content": [{"type": "text", "text": "How?"}],
                           "timestamp": 1_796_120_401_000_u64}}),
    ];
    let text_of = |lines: &[Value]| {
        lines
            .iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>()
    };
    std::fs::write(&shipped, text_of(&lines)).unwrap();

    let tmux = world.start(&format!("--session '{}'", shipped.display()));
    tmux.wait_for(
        "The session was recorded with mock/plain-model; it comes from outside your sessions \
         folder, so the chat stays on mock/test-model",
    );
    tmux.wait_idle(1);
    tmux.line("first");
    tmux.wait_for("One.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 0).0, "test-model");
    tmux.keys(&["C-d"]);
    drop(tmux);

    // `/import` of such a file keeps the chat's model too.
    let second = world.project.join("second.jsonl");
    std::fs::write(
        &second,
        text_of(&lines).replace("01a2482a-5cda", "01a2482a-5cdb"),
    )
    .unwrap();
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line(&format!("/import {}", second.display()));
    tmux.wait_for(
        "it comes from outside your sessions folder, so the chat stays on mock/test-model",
    );
    tmux.wait_idle(2);
    tmux.line("second");
    tmux.wait_for("Two.");
    tmux.wait_idle(3);
    assert_eq!(asked(&world, 1).0, "test-model");
    tmux.keys(&["C-d"]);
    drop(tmux);

    // In the sessions folder, the recorded model is the user's own choice: restored.
    let folder = world.session_files()[0].parent().unwrap().to_owned();
    let own = folder.join("own.jsonl");
    std::fs::write(
        &own,
        text_of(&lines).replace("01a2482a-5cda", "01a2482a-5cdc"),
    )
    .unwrap();
    let tmux = world.start(&format!("--session '{}'", own.display()));
    tmux.wait_for("ctxkit chat · mock/plain-model");
    tmux.wait_idle(1);
    tmux.line("third");
    tmux.wait_for("Three.");
    tmux.wait_idle(2);
    assert_eq!(asked(&world, 2).0, "plain-model");
}
