//! `ctxkit chat` in tmux, for the habits users bring from Pi and Claude Code: `!cmd` and `!!cmd`,
//! `@file` with completion, multi-line input and `$EDITOR`, `custom_message` entries, `/c`.

use serde_json::{Value, json};

use crate::chat::{Tmux, World, text, tmux_missing, tool_call};

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
    // Esc stops a command, as it stops the `bash` tool's.
    tmux.line("!sleep 30");
    tmux.wait_for("Running `sleep 30`");
    tmux.keys(&["Escape"]);
    tmux.wait_for("(command cancelled)");
    tmux.wait_idle(4);
    tmux.line("what is here?");
    tmux.wait_for("I see notes.txt.");
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 1, "commands call no model");
    assert_eq!(
        user_texts(&requests[0]),
        [
            "Ran `ls`\n```\nnotes.txt\n```",
            "Ran `sleep 30`\n(no output)\n\n(command cancelled)",
            "what is here?"
        ]
    );
    assert!(!requests[0].to_string().contains("private-note-42"));
    tmux.line("/quit");
    drop(tmux);
    let entries = world.entries(&world.session_files()[0]);
    let runs: Vec<&Value> = entries
        .iter()
        .filter(|entry| entry["message"]["role"] == "bashExecution")
        .collect();
    assert_eq!(runs.len(), 3);
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
    tmux.line("/quit");
    drop(tmux);
    // Continued, the prompt shows as typed, with the files it attached named.
    let tmux = world.start("--continue");
    let screen = tmux.wait_for("(attached: src/main.rs)");
    assert!(screen.contains("\n> explain @src/main.rs\n"), "{screen}");
}

/// `ctxkit chat` started as [`World::start`] does, with `EDITOR` set to `editor`.
fn start_with_editor(world: &World, editor: &std::path::Path) -> Tmux {
    let mut command = format!("cd '{}' && exec env -u VISUAL", world.project.display());
    for name in crate::PROVIDER_VARIABLES
        .into_iter()
        .chain(["CTXKIT_SESSIONS_DIR", "CTXKIT_OFFLINE"])
    {
        command.push_str(&format!(" -u {name}"));
    }
    command.push_str(&format!(
        " EDITOR='{editor}' HOME='{home}' CTXKIT_HOME='{home}' '{bin}' chat",
        editor = editor.display(),
        home = world.home.path().display(),
        bin = env!("CARGO_BIN_EXE_ctxkit"),
    ));
    Tmux::start(&command)
}

#[test]
fn prompts_of_several_lines_by_alt_enter_backslash_and_the_editor() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    for answer in [
        "Three lines read.",
        "Edited one read.",
        "Edit command read.",
    ] {
        world.answer(text(answer, 300));
    }
    // The "editor": keeps what it was given and adds a line under it.
    let editor = world.home.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/draft/draft, edited/' \"$1\"\nprintf 'added in the editor\\n' >> \"$1\"\n",
    )
    .unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&editor).unwrap().permissions(),
        0o755,
    );
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let tmux = start_with_editor(&world, &editor);
    tmux.wait_idle(1);
    tmux.keys(&["-l", "first line"]);
    tmux.keys(&["M-Enter"]);
    tmux.keys(&["-l", "second line \\"]);
    tmux.keys(&["Enter"]);
    tmux.line("third line");
    tmux.wait_for("Three lines read.");
    tmux.wait_idle(2);
    tmux.keys(&["-l", "a draft"]);
    tmux.keys(&["C-g"]);
    tmux.wait_for("added in the editor");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Edited one read.");
    tmux.wait_idle(3);
    tmux.line("/edit the draft of a command");
    tmux.wait_for_count("added in the editor", 2);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Edit command read.");
    let prompts: Vec<String> = world
        .chat_requests()
        .iter()
        .map(|request| user_texts(request).last().unwrap().clone())
        .collect();
    assert_eq!(
        prompts,
        [
            "first line\nsecond line \nthird line",
            "a draft, edited\nadded in the editor",
            "the draft, edited of a command\nadded in the editor",
        ]
    );
}

/// An executable script at `path` that appends `line` to the file it is given.
fn appending_editor(path: &std::path::Path, line: &str) {
    std::fs::write(path, format!("#!/bin/sh\nprintf '{line}\\n' >> \"$1\"\n")).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Pi 1.6's `externalEditor` names the editor Ctrl-G opens, before `$EDITOR`.
#[test]
fn the_external_editor_setting_comes_before_editor() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("Setting's editor read.", 300));
    let from_environment = world.home.path().join("environment-editor.sh");
    appending_editor(&from_environment, "from EDITOR");
    let from_setting = world.home.path().join("setting-editor.sh");
    appending_editor(&from_setting, "from the setting");
    let settings_path = world.home.path().join("settings.json");
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).unwrap()).unwrap();
    settings["externalEditor"] = json!(from_setting.display().to_string());
    std::fs::write(&settings_path, settings.to_string()).unwrap();
    let tmux = start_with_editor(&world, &from_environment);
    tmux.wait_idle(1);
    tmux.keys(&["-l", "a draft"]);
    tmux.keys(&["C-g"]);
    tmux.wait_for("from the setting");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Setting's editor read.");
    let prompts: Vec<String> = world
        .chat_requests()
        .iter()
        .map(|request| user_texts(request).last().unwrap().clone())
        .collect();
    assert_eq!(prompts, ["a draft\nfrom the setting"]);
}

/// A reply of about `words` words.
fn long_text(label: &str, words: usize) -> String {
    format!("{label}. {}", "lorem ipsum dolor ".repeat(words / 3))
}

#[test]
fn slash_c_compacts_and_says_the_share_saved_and_the_files_tracked() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({"keepRecentTokens": 60}));
    std::fs::write(world.project.join("notes.md"), "the notes\n").unwrap();
    world.answer(crate::chat::tool_call(
        "call_r",
        "read",
        json!({"path": "notes.md"}),
    ));
    world.answer(crate::chat::tool_call(
        "call_w",
        "write",
        json!({"path": "out.md", "content": "written\n"}),
    ));
    // The provider's counts hold the system prompt and tools, as a real provider's do (the line
    // compares the count before with the estimate after, both with them).
    world.answer(text(&long_text("Answer one", 900), 10_000));
    world.answer(text(&long_text("Answer two", 900), 20_000));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("read the notes and write out.md");
    tmux.wait_for("Answer one.");
    tmux.wait_idle(2);
    tmux.line("and then?");
    tmux.wait_for("Answer two.");
    tmux.wait_idle(3);
    tmux.line("/c");
    let screen = tmux.wait_for("Compacted: ");
    let line = screen
        .lines()
        .find(|line| line.starts_with("Compacted: "))
        .unwrap();
    assert!(
        regex::Regex::new(
            r"^Compacted: \d+ → \d+ tokens \(\d+% saved\) · files tracked: 1 read, 1 modified$"
        )
        .unwrap()
        .is_match(line.trim_end()),
        "{line}"
    );
}

#[test]
fn custom_messages_show_when_their_display_flag_says_so() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let file = world.home.path().join("with-notes.jsonl");
    let cwd = world.project.display().to_string();
    let lines = [
        json!({"type": "session", "version": 3, "id": "s-notes", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd}),
        json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": "user", "content": "run the build", "timestamp": 1}}),
        json!({"type": "custom_message", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02.000Z",
               "customType": "ci-status", "content": "Build passed: 214 tests", "display": true}),
        json!({"type": "custom_message", "id": "a3", "parentId": "a2", "timestamp": "2026-01-01T00:00:03.000Z",
               "customType": "bookkeeping", "content": "hidden-bookkeeping-note", "display": false}),
        json!({"type": "message", "id": "a4", "parentId": "a3", "timestamp": "2026-01-01T00:00:04.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": "The build is green."}],
                           "provider": "mock", "model": "test-model", "stopReason": "stop", "timestamp": 2,
                           "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}}}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let tmux = world.start(&format!("--session '{}'", file.display()));
    let screen = tmux.wait_for("The build is green.");
    assert!(screen.contains("[ci-status]"), "{screen}");
    assert!(screen.contains("  Build passed: 214 tests"), "{screen}");
    assert!(!screen.contains("hidden-bookkeeping-note"), "{screen}");
    assert!(!screen.contains("[bookkeeping]"), "{screen}");
}

/// rustyline 17 panicked on a 70,000-character paste followed by Ctrl-U (its column sums are
/// 16-bit), and on a paste of 70,000 lines as it arrived (its row count). Now a paste that fits is
/// inserted as before, and a larger one never reaches the line editor: the chat asks at once what
/// to do with the whole input; nothing is lost unless the user drops it.
#[test]
fn a_huge_paste_is_never_edited_by_the_line_editor_nor_lost() {
    if tmux_missing() {
        return;
    }
    let world = World::new(1_000_000, json!({}));
    world.answer(text("Got the small paste.", 300));
    world.answer(text("Got the paste.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    // A paste that fits: on the input line, its line break not sent as Enter.
    tmux.paste("one\ntwo");
    tmux.keys(&["-l", "!"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Got the small paste.");
    tmux.wait_idle(2);
    tmux.paste(&"line\n".repeat(70_000));
    tmux.wait_for("The input holds 350000 bytes in 70000 lines, more than the input line edits");
    tmux.answer("d");
    tmux.wait_for("(input dropped)");
    tmux.keys(&["-l", "before "]);
    let pasted = "a".repeat(70_000);
    tmux.paste(&pasted);
    tmux.wait_for("The input holds 70007 bytes in 1 line, more");
    tmux.answer("s");
    tmux.wait_for("Got the paste.");
    let requests = world.chat_requests();
    assert_eq!(user_texts(&requests[0]), ["one\ntwo!"]);
    assert_eq!(user_texts(&requests[1])[1], format!("before {pasted}"));
}

/// Keys the chat binds (Ctrl-G opens `$EDITOR`, Esc twice rewinds, Alt-Enter) are pasted text
/// inside a paste: a paste holding a BEL (Ctrl-G) or an escape and a carriage return (Alt-Enter) is
/// sent as it was pasted, its line breaks not taken for Enter. (Two escapes in a row read as one,
/// as the terminal's keys: rustyline's parser makes `ESC ESC x` Alt-x.)
#[test]
fn a_paste_holding_bound_keys_is_pasted_text() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("Got it.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.paste("bell\u{7} escape\u{1b}x alt-enter\u{1b}\rnext line");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Got it.");
    let requests = world.chat_requests();
    assert_eq!(
        user_texts(&requests[0]),
        ["bell\u{7} escape\u{1b}x alt-enter\u{1b}\nnext line"]
    );
}

/// QA (third round): at a one-key question, keys that arrive in one read (a fast typist's `y` and
/// the start of the next prompt, a paste) were dropped whole, the answer with them, and the
/// question stayed. Now the first key answers and the rest starts the next input line.
#[test]
fn an_answer_typed_with_more_keys_answers_and_the_rest_is_kept() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "echo ran > ran.txt"}),
    ));
    world.answer(text("The command ran.", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("run it");
    tmux.wait_for("[y]es / [n]o / [a]lways");
    // One write, once the question was read: the answer and the next keys arrive in one read.
    std::thread::sleep(std::time::Duration::from_millis(300));
    tmux.keys(&["-l", "ytyped ahead"]);
    tmux.wait_for("The command ran.");
    let screen = tmux.wait_idle(2);
    assert!(world.project.join("ran.txt").exists(), "{screen}");
    assert!(screen.contains("\n> typed ahead"), "{screen}");
}

/// `/export` writes the session as a page beside the user (Pi's name), the edit's diff in it;
/// again, it replaces its own page and never another file; `.jsonl` copies the session file.
#[test]
fn slash_export_writes_the_page_and_replaces_only_a_page() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    std::fs::write(world.project.join("notes.txt"), "alpha\nbeta\n").unwrap();
    world.answer(tool_call(
        "call_1",
        "edit",
        json!({"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}),
    ));
    world.answer(text("Changed beta to gamma.", 300));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("change beta");
    tmux.wait_for("+2 gamma");
    tmux.wait_idle(2);
    tmux.line("/export");
    tmux.wait_for("Exported the session to ");
    let session = world.session_files().pop().unwrap();
    let stem = session.file_stem().unwrap().to_string_lossy().into_owned();
    let page = world.project.join(format!("ctxkit-session-{stem}.html"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("-2 beta\\n+2 gamma"),
        "the edit's diff is on the page"
    );
    tmux.line("/export");
    tmux.wait_for_count("Exported the session to ", 2);
    tmux.line("/export notes.txt");
    tmux.wait_for("exists and is not a page ctxkit wrote; /export replaces only an earlier page");
    assert_eq!(
        std::fs::read_to_string(world.project.join("notes.txt")).unwrap(),
        "alpha\ngamma\n"
    );
    tmux.line("/export \"a copy.jsonl\"");
    tmux.wait_for("Copied the session file to ");
    assert_eq!(
        std::fs::read(world.project.join("a copy.jsonl")).unwrap(),
        std::fs::read(&session).unwrap()
    );
}

/// `images.blockImages`: an image attached with `@` never reaches the provider; the model is told
/// image reading is disabled, and the session keeps the image.
#[test]
fn a_blocked_image_is_a_line_in_the_request_and_kept_in_the_session() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let path = world.home.path().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["images"] = json!({"blockImages": true});
    std::fs::write(&path, settings.to_string()).unwrap();
    // A 1×1 PNG.
    let png: [u8; 67] = [
        137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6,
        0, 0, 0, 31, 21, 196, 137, 0, 0, 0, 10, 73, 68, 65, 84, 120, 156, 99, 0, 1, 0, 0, 5, 0, 1,
        13, 10, 45, 180, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
    ];
    std::fs::write(world.project.join("pic.png"), png).unwrap();
    world.answer(text("Nothing I can see.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("what is in @pic.png");
    tmux.wait_for("Nothing I can see.");
    tmux.wait_idle(2);
    let request = world.chat_requests()[0].to_string();
    assert!(request.contains("Image reading is disabled."), "{request}");
    assert!(!request.contains("image_url"), "{request}");
    assert!(!request.contains("iVBORw0KGgo"), "{request}");
    let stored: String = std::fs::read_to_string(world.session_files().remove(0)).unwrap();
    assert!(stored.contains("iVBORw0KGgo"), "{stored}");
}

/// Steering, as Pi's: a line typed with Enter while a tool runs goes to the model with the next
/// request of the same run, after the tool's result, not once the run has ended; a command typed
/// meanwhile waits for the input line.
#[test]
fn a_line_typed_while_a_tool_runs_steers_the_next_request() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call-1",
        "bash",
        json!({"command": "while [ ! -f go ]; do sleep 0.05; done; echo waited"}),
    ));
    world.answer(text("Switching to python.", 400));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("port the script");
    tmux.wait_for("Running bash");
    tmux.line("use python instead");
    tmux.line("/session");
    tmux.wait_for("› use python instead ⏎ /session ⏎");
    std::fs::write(world.project.join("go"), "").unwrap();
    tmux.wait_for("Switching to python.");
    tmux.wait_for("> use python instead");
    // The command typed meanwhile runs at the input line once the run ends.
    tmux.wait_for("No compaction on this branch");
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let messages = requests[1]["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user", "{messages:?}");
    assert!(last.to_string().contains("use python instead"), "{last}");
    let before = &messages[messages.len() - 2];
    assert_eq!(before["role"], "tool", "{messages:?}");
}

/// QA (2026-12-05): a reply of several calls listed them all, then their results ran together
/// below: two files' text could not be told apart. Each result now comes under its call's line.
#[test]
fn each_result_of_a_batch_comes_under_its_call() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    std::fs::write(world.project.join("one.txt"), "FIRST FILE\n").unwrap();
    std::fs::write(world.project.join("two.txt"), "SECOND FILE\n").unwrap();
    world.answer(crate::chat::completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "r1", "type": "function",
             "function": {"name": "read", "arguments": "{\"path\":\"one.txt\"}"}},
            {"id": "r2", "type": "function",
             "function": {"name": "read", "arguments": "{\"path\":\"two.txt\"}"}}]}),
        "tool_calls",
        200,
    ));
    world.answer(text("Read both.", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("read them");
    let screen = tmux.wait_for("Read both.");
    let lines: Vec<&str> = screen.lines().map(str::trim).collect();
    let position = |needle: &str| lines.iter().rposition(|line| line.contains(needle));
    let (Some(first), Some(second)) = (position("FIRST FILE"), position("SECOND FILE")) else {
        panic!("{screen}");
    };
    assert!(lines[first - 1].contains("→ read one.txt"), "{screen}");
    assert!(lines[second - 1].contains("→ read two.txt"), "{screen}");
}

/// QA 2026-12-07: Ctrl-C at the input line only ever said "(Ctrl-D or /quit to leave)"; Pi 1.6
/// quits on a second Ctrl-C within half a second. One Ctrl-C, or two far apart, does not.
#[test]
fn ctrl_c_twice_quickly_at_the_input_line_quits() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("HELLO-BACK", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("hello");
    tmux.wait_for("HELLO-BACK");
    tmux.wait_idle(1);
    tmux.keys(&["C-c"]);
    tmux.wait_for("(Ctrl-C twice quickly quits, as Ctrl-D and /quit do)");
    std::thread::sleep(std::time::Duration::from_millis(900));
    tmux.keys(&["C-c"]);
    tmux.wait_for_count("(Ctrl-C twice quickly quits", 2);
    assert!(!tmux.screen().contains("ctxkit chat --continue"));
    tmux.keys(&["C-c", "C-c"]);
    tmux.wait_for("ctxkit chat --continue");
}

/// `ctxkit chat | tee log` typed at a terminal: the input line is drawn on the terminal itself, so
/// the log holds the replies and none of the line editor's escape codes.
#[test]
fn a_chat_piped_into_a_log_draws_its_input_line_on_the_terminal() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("The logged reply.", 300));
    let log = world.home.path().join("chat.log");
    let chat = crate::chat::chat_command(&world.project, world.home.path(), "--no-session");
    let tmux = Tmux::start(&format!("{chat} | tee '{}'", log.display()));
    // The input line and what `tee` prints race for the terminal: wait for the banner, not for
    // a prompt at the start of a line.
    tmux.wait_for("Ctrl-D quits");
    tmux.line("hello");
    tmux.wait_for("The logged reply.");
    tmux.keys(&["C-d"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let written = loop {
        let written = std::fs::read_to_string(&log).unwrap_or_default();
        if written.contains("[context ") || std::time::Instant::now() > deadline {
            break written;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(written.contains("The logged reply."), "{written:?}");
    assert!(
        !written.contains('\u{1b}'),
        "escape codes in the log: {written:?}"
    );
}

/// A tester's Esc at the input line, then "hello" a moment later: the editor waited for the rest
/// of an escape sequence and read Esc and `h` as Alt-h, and "ello" was sent. After Pi's escape
/// timeout a lone Esc is the Esc key (it does nothing), and a sequence a terminal sends at once,
/// Alt-Enter, is still one key.
#[test]
fn a_key_typed_after_a_lone_escape_is_that_key() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("Hello back.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.keys(&["Escape"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    tmux.keys(&["-l", "hello"]);
    tmux.keys(&["M-Enter"]);
    tmux.keys(&["-l", "there"]);
    tmux.keys(&["Escape"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    tmux.keys(&["Enter"]);
    tmux.wait_for("Hello back.");
    let requests = world.chat_requests();
    assert_eq!(user_texts(&requests[0]), ["hello\nthere"]);
}

/// A tester's Shift-Enter in a terminal that tells it from Enter (xterm's modifyOtherKeys, tmux's
/// `extended-keys`: `ESC [ 27 ; 2 ; 13 ~`) left `13~` on the line; it starts a new line, as
/// Alt-Enter does, and Ctrl-Enter (`; 5 ;`) too. Another key in that form leaves nothing behind.
#[test]
fn shift_enter_in_modify_other_keys_form_starts_a_new_line() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("Three lines back.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.keys(&["-l", "one"]);
    tmux.keys(&["-l", "\u{1b}[27;2;13~"]);
    tmux.keys(&["-l", "two"]);
    tmux.keys(&["-l", "\u{1b}[27;5;13~"]);
    // Ctrl-Shift-A, which the chat does not bind.
    tmux.keys(&["-l", "\u{1b}[27;6;65~"]);
    tmux.keys(&["-l", "three 13"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Three lines back.");
    let requests = world.chat_requests();
    assert_eq!(user_texts(&requests[0]), ["one\ntwo\nthree 13"]);
}

/// QA (r100 D4): `ctxkit chat -c` brought none of the session's earlier prompts back on Up (Pi's
/// `pi -c` fills its editor's history from the session). They are loaded, oldest first, as typed.
#[test]
fn a_continued_session_brings_its_earlier_prompts_back_on_up() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("First answer.", 300));
    world.answer(text("Second answer.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("my first prompt");
    tmux.wait_for("First answer.");
    tmux.wait_idle(2);
    tmux.line("my second prompt");
    tmux.wait_for("Second answer.");
    tmux.wait_idle(3);
    tmux.line("/quit");
    drop(tmux);
    let tmux = world.start("--continue");
    // The conversation shown again holds each prompt once; the input line comes after it.
    tmux.wait_for("/help lists commands");
    std::thread::sleep(std::time::Duration::from_millis(300));
    tmux.keys(&["Up"]);
    tmux.wait_for_count("> my second prompt", 2);
    tmux.keys(&["Up"]);
    let screen = tmux.wait_for_count("> my first prompt", 2);
    assert_eq!(screen.matches("> my second prompt").count(), 1, "{screen}");
}

/// QA (r100 D3): after a full-screen list had been open, the input line no longer followed a
/// resize: a line typed in a terminal widened from 50 to 120 columns was laid out for 50.
#[test]
fn the_input_line_follows_a_resize_after_a_list_was_open() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("Hello back.", 300));
    let tmux = world.start("");
    tmux.resize(50, 20);
    tmux.wait_idle(1);
    tmux.line("hello");
    tmux.wait_idle(2);
    tmux.line("/tree");
    tmux.wait_for("Enter");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Left the tree; nothing changed");
    tmux.resize(120, 40);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let words: Vec<String> = (0..25).map(|number| format!("word{number:02}")).collect();
    tmux.keys(&["-l", &words.join(" ")]);
    // 176 columns ("> " and 174 characters): one row of 120, the rest on the next.
    let screen = tmux.wait_for("word24");
    let rows: Vec<&str> = screen
        .lines()
        .skip_while(|row| !row.starts_with("> word00"))
        .filter(|row| !row.trim().is_empty())
        .collect();
    assert_eq!(
        rows,
        [
            "> word00 word01 word02 word03 word04 word05 word06 word07 word08 word09 word10 \
             word11 word12 word13 word14 word15 word16",
            " word17 word18 word19 word20 word21 word22 word23 word24"
        ],
        "{screen}"
    );
}
