//! `ctxkit chat` in tmux: `/reload` applies the settings, context files and resources read again
//! while the chat runs, as Pi 1.6's does; an untrusted project's settings still change nothing.

use serde_json::{Value, json};

use crate::chat::{World, text, tmux_missing, tool_call};

#[test]
fn reload_reads_agents_md_again_and_the_next_request_carries_it() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("Before.", 300));
    world.answer(text("After.", 300));
    world.answer(text("After the reload.", 300));
    let system = |index: usize| world.chat_requests()[index]["messages"][0].to_string();

    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("first");
    tmux.wait_for("Before.");
    tmux.wait_idle(2);
    assert!(!system(0).contains("RULE-ALPHA"), "{}", system(0));

    std::fs::write(
        world.project.join("AGENTS.md"),
        "Always say RULE-ALPHA first.\n",
    )
    .unwrap();
    tmux.line("/reload");
    tmux.wait_for(
        "Reloaded 1 context file, 0 skills, 0 prompt templates; the system prompt changed",
    );
    tmux.line("/reload");
    tmux.wait_for("the system prompt is unchanged");
    tmux.wait_for("included), shellPath, shellCommandPrefix");
    tmux.line("second");
    tmux.wait_for("After.");
    tmux.wait_idle(5);
    // A compaction budget changed in the settings counts from the reload on, as in Pi.
    let file = world.home.path().join("settings.json");
    let good = std::fs::read_to_string(&file).unwrap();
    tmux.line("/context");
    tmux.wait_for("fit in keepRecentTokens (10000)");
    let mut changed: Value = serde_json::from_str(&good).unwrap();
    changed["compaction"]["keepRecentTokens"] = json!(7000);
    // The model's own settings too: the next request asks for its new output limit.
    changed["llm"]["models"][0]["maxOutput"] = json!(4096);
    std::fs::write(&file, changed.to_string()).unwrap();
    tmux.line("/reload");
    // The third reload's line, not one of the two before it still on screen.
    tmux.wait_for_count(
        "Settings applied now: llm.* and retry.* (the model in use), compaction.*",
        3,
    );
    tmux.line("/context");
    tmux.wait_for("fit in keepRecentTokens (7000)");
    tmux.line("third");
    tmux.wait_for("After the reload.");
    let requests = world.chat_requests();
    let limit = |request: &Value| {
        request
            .get("max_completion_tokens")
            .or_else(|| request.get("max_tokens"))
            .cloned()
    };
    assert_eq!(limit(&requests[1]), Some(json!(2048)));
    assert_eq!(limit(requests.last().unwrap()), Some(json!(4096)));
    let file_entries = world.entries(&world.session_files().remove(0));
    assert_eq!(
        crate::chat_commands::switches_after_the_first_message(&file_entries),
        0,
        "a reload records no model switch"
    );
    // A session opened after the reload gets the reloaded budgets too (they came from the start).
    tmux.line("/new");
    tmux.wait_for("New session");
    tmux.line("fourth");
    tmux.wait_for("(the script has no more answers)");
    tmux.line("/context");
    tmux.wait_for_count("fit in keepRecentTokens (7000)", 2);
    std::fs::write(&file, &good).unwrap();
    assert!(
        system(1).contains("Always say RULE-ALPHA first."),
        "{}",
        system(1)
    );
    // A settings file that does not load changes nothing and is said (it was taken in silence).
    std::fs::write(&file, r#"{"retry": {"enabled": "yes"},}"#).unwrap();
    tmux.line("/reload");
    let screen = tmux.wait_for("Nothing was reloaded: the chat goes on as it was");
    assert!(screen.contains("settings.json"), "{screen}");
    std::fs::write(&file, good).unwrap();
}

/// `compaction.model` changed in the settings summarizes from the reload on.
#[test]
fn reload_moves_summaries_to_a_new_compaction_model() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({"keepRecentTokens": 10}));
    world.answer(text(
        "First answer, long enough to be summarized later.",
        300,
    ));
    world.answer(text(
        "Second answer, also long enough to be summarized.",
        300,
    ));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("first");
    tmux.wait_for("First answer");
    tmux.wait_idle(2);
    tmux.line("second");
    tmux.wait_for("Second answer");
    tmux.wait_idle(3);
    world.edit_settings(|settings| {
        settings["llm"]["models"].as_array_mut().unwrap().push(
            json!({"provider": "mock", "id": "summarizer", "contextWindow": 100_000,
                   "maxOutput": 2048}),
        );
        settings["compaction"]["model"] = json!("mock/summarizer");
    });
    tmux.line("/reload");
    tmux.wait_for("compaction.* (its model included)");
    tmux.line("/compact");
    tmux.wait_for("Compacted");
    let summaries = world.summary_requests();
    assert!(!summaries.is_empty());
    assert!(
        summaries
            .iter()
            .all(|request| request["model"] == json!("summarizer")),
        "{:?}",
        summaries
            .iter()
            .map(|request| &request["model"])
            .collect::<Vec<_>>()
    );
}

/// Attack: an untrusted project's settings, written while the chat runs (by the agent, say), name
/// another endpoint for the model; `/reload` takes them as the start would, so the key never goes
/// there and the chat goes on with the user's endpoint.
#[test]
fn reload_takes_no_endpoint_from_an_untrusted_project() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("Before.", 300));
    world.answer(text("Still the user's endpoint.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("first");
    tmux.wait_for("Before.");
    tmux.wait_idle(2);
    world.write_project_settings(
        &json!({"llm": {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "project-key"}}),
    );
    tmux.line("/reload");
    let screen = tmux.wait_for("Settings applied now");
    // Said at the reload as at a chat's start (a tester's /reload after a trusted project's
    // settings changed said nothing).
    assert!(
        screen.contains("ignored `llm.baseUrl`, `llm.apiKey`"),
        "{screen}"
    );
    tmux.line("second");
    tmux.wait_for("Still the user's endpoint.");
    let requests = world.chat_requests();
    assert_eq!(
        requests.len(),
        2,
        "both prompts reached the user's endpoint"
    );
    // Once the user trusts the project, the same reload takes its endpoint (the control: what
    // kept it out was the trust, not the reload).
    let trusted = std::process::Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["trust", "--yes"])
        .current_dir(&world.project)
        .env("CTXKIT_HOME", world.home.path())
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    tmux.line("/reload");
    tmux.wait_for_count("Settings applied now", 2);
    tmux.line("third");
    tmux.wait_for("127.0.0.1:9");
    assert_eq!(world.chat_requests().len(), 2);
}

/// `chat.bashTimeoutSeconds` changed in the settings limits the next command after `/reload`.
#[test]
fn reload_applies_a_new_bash_time_limit() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "c1",
        "bash",
        json!({"command": "sleep 30; echo finished"}),
    ));
    world.answer(text("Ran it.", 300));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    world.edit_settings(|settings| settings["chat"] = json!({"bashTimeoutSeconds": 1}));
    tmux.line("/reload");
    tmux.wait_for("Settings applied now");
    let started = std::time::Instant::now();
    tmux.line("run the slow command");
    tmux.wait_for("Ran it.");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the command ran past the new limit"
    );
    let session = world.entries(&world.session_files().remove(0));
    let result = session
        .iter()
        .find(|entry| entry["message"]["role"] == "toolResult")
        .unwrap();
    assert!(
        result["message"]["content"]
            .to_string()
            .contains("Command timed out after 1s"),
        "{result}"
    );
}

/// `chat.confirmBash` turned off and on again by `/reload`: commands run without a question, then
/// are asked about again.
#[test]
fn reload_turns_bash_questions_off_and_on() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "c1",
        "bash",
        json!({"command": "echo ran-unasked"}),
    ));
    world.answer(text("Ran without asking.", 300));
    world.answer(tool_call(
        "c2",
        "bash",
        json!({"command": "echo ran-asked"}),
    ));
    world.answer(text("Ran after asking.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    world.edit_settings(|settings| settings["chat"] = json!({"confirmBash": false}));
    tmux.line("/reload");
    tmux.wait_for("Settings applied now");
    tmux.line("run it");
    let screen = tmux.wait_for("Ran without asking.");
    assert!(!screen.contains("[y]es / [n]o"), "{screen}");
    world.edit_settings(|settings| settings["chat"] = json!({"confirmBash": true}));
    tmux.line("/reload");
    tmux.wait_for_count("Settings applied now", 2);
    tmux.line("run another");
    tmux.wait_for("Run `echo ran-asked`? [y]es / [n]o");
    tmux.answer("y");
    tmux.wait_for("Ran after asking.");
    // Attack: an untrusted project turning the questions off changes nothing.
    world.write_project_settings(&json!({"chat": {"confirmBash": false}}));
    world.answer(tool_call(
        "c3",
        "bash",
        json!({"command": "echo still-asked"}),
    ));
    world.answer(text("Asked still.", 300));
    tmux.line("/reload");
    tmux.wait_for_count("Settings applied now", 3);
    tmux.line("one more");
    tmux.wait_for("Run `echo still-asked`? [y]es / [n]o");
    tmux.answer("n");
    tmux.wait_for("Asked still.");
}

/// `/reload` applies what the tools may reach, as Pi's reload rebuilds its tools: a folder added
/// to `chat.readablePaths` is read without a question, `shellCommandPrefix` runs before the next
/// command, and a key the settings hold now is redacted from what the tools return.
#[test]
fn reload_applies_what_the_tools_may_reach() {
    if tmux_missing() {
        return;
    }
    const KEY: &str = "sk-reloaded-0123456789abcdef";
    let world = World::new(100_000, json!({}));
    let (outside, notes) = outside_notes();
    std::fs::write(world.project.join("leak.txt"), format!("key={KEY}\n")).unwrap();
    let read_notes = |id: &str| tool_call(id, "read", json!({"path": notes.display().to_string()}));
    world.answer(read_notes("c1"));
    world.answer(text("First read.", 300));
    world.answer(read_notes("c2"));
    world.answer(text("Second read.", 300));
    let command = "echo \"greeting=$GREETING\"; cat leak.txt";
    world.answer(tool_call("c3", "bash", json!({"command": command})));
    world.answer(text("Ran it.", 300));

    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("read the notes");
    tmux.wait_for("outside the project? (always: anything under");
    tmux.answer("n");
    tmux.wait_for("First read.");
    world.edit_settings(|settings| {
        settings["chat"] = json!({"readablePaths": [outside.path()]});
        settings["shellCommandPrefix"] = json!("GREETING=from-the-prefix");
        settings["llm"]["apiKey"] = json!(KEY);
    });
    tmux.line("/reload");
    tmux.wait_for("Settings applied now");
    tmux.line("read the notes again");
    tmux.wait_for("Second read.");
    tmux.line("run the command");
    tmux.wait_for("Ran it.");

    let results = tool_results(&world);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(!results[0].contains("the outside notes"), "{}", results[0]);
    assert!(results[1].contains("the outside notes"), "{}", results[1]);
    assert!(
        results[2].contains("greeting=from-the-prefix"),
        "{}",
        results[2]
    );
    assert!(results[2].contains("key=<redacted>"), "{}", results[2]);
    let session = std::fs::read_to_string(world.session_files().remove(0)).unwrap();
    assert!(!session.contains(KEY), "the key reached the session");
}

/// Attack: an untrusted project's settings, written while the chat runs, name a folder outside the
/// project as readable and a shell prefix; `/reload` takes neither, as the start would not: the
/// read is still asked about and the command runs without the prefix.
#[test]
fn reload_widens_nothing_for_an_untrusted_project() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let (outside, notes) = outside_notes();
    world.answer(tool_call(
        "c1",
        "read",
        json!({"path": notes.display().to_string()}),
    ));
    world.answer(text("Not read.", 300));
    let command = "echo \"greeting=$GREETING\"";
    world.answer(tool_call("c2", "bash", json!({"command": command})));
    world.answer(text("Ran it.", 300));

    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    world.write_project_settings(&json!({
        "chat": {"readablePaths": [outside.path()]},
        "shellCommandPrefix": "GREETING=from-the-project",
    }));
    tmux.line("/reload");
    tmux.wait_for("Settings applied now");
    tmux.line("read the notes");
    tmux.wait_for("outside the project? (always: anything under");
    tmux.answer("n");
    tmux.wait_for("Not read.");
    tmux.line("run the command");
    tmux.wait_for("Ran it.");
    let results = tool_results(&world);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(!results[0].contains("the outside notes"), "{}", results[0]);
    assert!(results[1].contains("greeting="), "{}", results[1]);
    assert!(!results[1].contains("from-the-project"), "{}", results[1]);
}

/// The tool results the model was sent, in order: each is the last message of the request that
/// follows it.
fn tool_results(world: &World) -> Vec<String> {
    world
        .chat_requests()
        .iter()
        .filter_map(|request| request["messages"].as_array()?.last().cloned())
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].to_string())
        .collect()
}

/// A folder outside the project holding `notes.txt` ("the outside notes").
fn outside_notes() -> (tempfile::TempDir, std::path::PathBuf) {
    let outside = tempfile::tempdir().unwrap();
    let notes = outside.path().join("notes.txt");
    std::fs::write(&notes, "the outside notes\n").unwrap();
    (outside, notes)
}
