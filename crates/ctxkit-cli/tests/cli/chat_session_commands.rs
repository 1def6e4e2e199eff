//! `ctxkit chat` in tmux: Pi 1.6's `/session`, `/copy`, `/clone` and `/hotkeys`.

use serde_json::{Value, json};

use crate::chat::{World, text, tmux_missing, tool_call};

#[test]
fn session_copy_clone_and_hotkeys_work_as_a_user_sees_them() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    std::fs::write(world.project.join("notes.txt"), "kept\n").unwrap();
    world.answer(tool_call("call-1", "read", json!({"path": "notes.txt"})));
    world.answer(text("The notes say **kept**; nothing else.", 400));
    world.answer(text("From the clone.", 500));

    let tmux = world.start("");
    tmux.accept_clipboard();
    tmux.wait_idle(1);
    tmux.line("/copy");
    tmux.wait_for("No reply to copy yet");
    tmux.line("what do the notes say?");
    tmux.wait_for("nothing else.");
    tmux.wait_idle(2);

    tmux.line("/session");
    let screen = tmux.wait_for("No compaction on this branch");
    let original = world.session_files().remove(0);
    assert!(
        screen.contains(&format!("File:    {}", original.display())),
        "{screen}"
    );
    assert!(
        screen.contains(
            "Messages (every branch): 4 in all, 1 from the user, 2 replies, 1 tool call, 1 tool \
             result"
        ),
        "{screen}"
    );
    // Two replies of the mock: 200 + 400 prompt tokens, 20 out each.
    assert!(screen.contains("Input:   600"), "{screen}");
    assert!(screen.contains("Output:  40"), "{screen}");
    assert!(screen.contains("Total:   640"), "{screen}");

    // The last reply, as the model wrote it (markdown and all), by OSC 52 to the terminal.
    tmux.line("/copy");
    tmux.wait_for("Copied the last reply to the clipboard (sent to the terminal as OSC 52");
    assert_eq!(
        tmux.clipboard().as_deref(),
        Some("The notes say **kept**; nothing else.")
    );

    tmux.line("/hotkeys");
    tmux.wait_for("Esc Esc                   at an empty line: rewind to an earlier prompt");

    // The clone holds the branch; the chat goes on there, and the original stays as it was.
    let lines_before = std::fs::read_to_string(&original).unwrap();
    tmux.line("/clone");
    let screen = tmux.wait_for("Cloned into a new session: ");
    tmux.line("and now?");
    tmux.wait_for("From the clone.");
    let clone = world
        .session_files()
        .into_iter()
        .find(|file| file != &original)
        .unwrap_or_else(|| panic!("no clone: {screen}"));
    let roles = || -> Vec<String> {
        world
            .entries(&clone)
            .iter()
            .filter_map(|entry| entry["message"]["role"].as_str().map(str::to_owned))
            .collect()
    };
    // The reply is shown as it streams, and stored when it ends.
    let started = std::time::Instant::now();
    while roles().len() < 6 && started.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&original).unwrap(), lines_before);
    let roles = roles();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant"
        ]
    );
    let text = std::fs::read_to_string(&clone).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["type"], "session");
    assert_eq!(
        header["parentSession"],
        json!(original.display().to_string())
    );
}

#[test]
fn import_converts_a_claude_code_transcript_and_copies_a_pi_session_in() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctxkit-import/tests/fixtures/claude-code-session.jsonl");
    let elsewhere = tempfile::tempdir().unwrap();
    let transcript = elsewhere.path().join("claude.jsonl");
    std::fs::copy(&fixtures, &transcript).unwrap();
    world.answer(text("Seen the import.", 300));

    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("/import");
    tmux.wait_for("Usage: /import <file>");
    tmux.line(&format!("/import {}", transcript.display()));
    tmux.wait_for("entries of claude-code");
    tmux.wait_for("“Refactor the parser”");
    tmux.line("go on");
    tmux.wait_for("Seen the import.");
    tmux.wait_idle(3);
    // The model was sent the imported conversation.
    let request = world.chat_requests().remove(0).to_string();
    assert!(request.contains("token cache trait config"), "{request}");
    let imported = world.session_files();
    assert_eq!(imported.len(), 1, "{imported:?}");
    // Nor is it imported over while it is open.
    tmux.line(&format!("/import {}", transcript.display()));
    tmux.wait_for("was imported into the session open now");

    // A Pi session from elsewhere is copied in beside the others, never over one.
    let pi_session = elsewhere.path().join("pi.jsonl");
    std::fs::copy(&imported[0], &pi_session).unwrap();
    let before = std::fs::read(&pi_session).unwrap();
    for copy in 1..=2 {
        tmux.line(&format!("/import {}", pi_session.display()));
        tmux.wait_for_count("(a copy; the file named stays as it was)", copy);
    }
    tmux.wait_idle(5);
    assert_eq!(std::fs::read(&pi_session).unwrap(), before);
    let folder = imported[0].parent().unwrap();
    for name in ["pi.jsonl", "pi-1.jsonl"] {
        assert_eq!(std::fs::read(folder.join(name)).unwrap(), before, "{name}");
    }
    // The session open now is not copied onto itself.
    tmux.line(&format!("/import {}", folder.join("pi-1.jsonl").display()));
    tmux.wait_for("pi-1.jsonl` is the session open now");
    tmux.line("/import no-such-file.jsonl");
    tmux.wait_for("no-such-file.jsonl");
}

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
    tmux.wait_for("chat.readablePaths, shellPath) from the next chat");
    tmux.line("second");
    tmux.wait_for("After.");
    tmux.wait_idle(5);
    // A compaction budget changed in the settings counts from the reload on, as in Pi.
    let file = world.home.path().join("settings.json");
    let good = std::fs::read_to_string(&file).unwrap();
    tmux.line("/context");
    tmux.wait_for("fits in keepRecentTokens (10000)");
    let mut changed: Value = serde_json::from_str(&good).unwrap();
    changed["compaction"]["keepRecentTokens"] = json!(7000);
    // The model's own settings too: the next request asks for its new output limit.
    changed["llm"]["models"][0]["maxOutput"] = json!(4096);
    std::fs::write(&file, changed.to_string()).unwrap();
    tmux.line("/reload");
    tmux.wait_for("Settings applied now: llm.* and retry.* (the model in use), compaction.*");
    tmux.line("/context");
    tmux.wait_for("fits in keepRecentTokens (7000)");
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
    assert!(
        !file_entries
            .iter()
            .any(|entry| entry["type"] == "model_change"),
        "a reload records no model switch"
    );
    // A session opened after the reload gets the reloaded budgets too (they came from the start).
    tmux.line("/new");
    tmux.wait_for("New session");
    tmux.line("fourth");
    tmux.wait_for("(the script has no more answers)");
    tmux.line("/context");
    tmux.wait_for_count("fits in keepRecentTokens (7000)", 2);
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

#[test]
fn trust_shows_the_held_settings_and_trusts_them_only_on_yes() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.write_project_settings(&json!({"chat": {"confirmBash": false}}));

    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("/trust");
    tmux.wait_for("chat.confirmBash = false");
    tmux.wait_for("Trust them? [y/N]");
    tmux.keys(&["n"]);
    tmux.wait_for("Not trusted; nothing changed");
    tmux.line("/trust");
    tmux.wait_for_count("Trust them? [y/N]", 2);
    tmux.keys(&["y"]);
    tmux.wait_for("they apply from the next chat");
    tmux.line("/trust");
    tmux.wait_for("that need trust (trusted already):");
    tmux.line("/trust revoke");
    tmux.wait_for("Revoked: the settings of");
    tmux.line("/trust");
    tmux.wait_for_count("Trust them? [y/N]", 3);
}

#[test]
fn a_no_session_chat_says_where_a_session_it_imports_is_saved() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let transcript = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctxkit-import/tests/fixtures/claude-code-session.jsonl");
    let tmux = world.start("--no-session");
    tmux.wait_for("in memory (nothing is saved)");
    tmux.wait_idle(1);
    tmux.line("/save");
    tmux.wait_for("The session is in memory (--no-session); there is no file to write");
    tmux.line(&format!("/import {}", transcript.display()));
    let screen = tmux.wait_for("Continuing session “Refactor the parser” (21 entries): ");
    let imported = world.session_files().remove(0);
    assert!(
        screen.contains(&format!("(21 entries): {}", imported.display())),
        "{screen}"
    );
    tmux.line("/save");
    tmux.wait_for("Wrote the session afresh to ");
    // `/new` keeps to `--no-session`.
    tmux.line("/new");
    tmux.wait_for("New session");
    tmux.line("/save");
    tmux.wait_for_count("there is no file to write", 2);
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
    tmux.wait_for("Settings applied now");
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
    tmux.wait_for("chat.bashTimeoutSeconds");
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
    tmux.wait_for("chat.confirmBash");
    tmux.line("run it");
    let screen = tmux.wait_for("Ran without asking.");
    assert!(!screen.contains("[y]es / [n]o"), "{screen}");
    world.edit_settings(|settings| settings["chat"] = json!({"confirmBash": true}));
    tmux.line("/reload");
    tmux.wait_for_count("chat.confirmBash", 2);
    tmux.line("run another");
    tmux.wait_for("Run `echo ran-asked`? [y]es / [n]o");
    tmux.keys(&["y"]);
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
    tmux.wait_for_count("chat.confirmBash", 3);
    tmux.line("one more");
    tmux.wait_for("Run `echo still-asked`? [y]es / [n]o");
    tmux.keys(&["n"]);
    tmux.wait_for("Asked still.");
}
