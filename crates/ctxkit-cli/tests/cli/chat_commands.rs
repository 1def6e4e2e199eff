//! `ctxkit chat` in tmux: Tab completing a `/command`, `/share` through a stand-in for the GitHub
//! CLI, and `/model` asking the new model for replies as long as it allows.

use serde_json::{Value, json};

use crate::chat::{Tmux, World, chat_command, text, tmux_missing};

#[test]
fn tab_after_a_slash_completes_commands_skills_and_templates() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let ctxkit_dir = world.project.join(".ctxkit");
    std::fs::create_dir_all(ctxkit_dir.join("prompts")).unwrap();
    std::fs::create_dir_all(ctxkit_dir.join("skills/greet")).unwrap();
    std::fs::write(
        ctxkit_dir.join("prompts/review.md"),
        "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1 carefully.\n",
    )
    .unwrap();
    std::fs::write(
        ctxkit_dir.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greets people\n---\nSay hello warmly.\n",
    )
    .unwrap();
    world.trust_project();
    let tmux = world.start("");
    tmux.wait_idle(1);
    // One match: completed with a space after it.
    tmux.keys(&["-l", "/sco"]);
    tmux.keys(&["Tab"]);
    tmux.wait_for("> /scoped-models ");
    tmux.keys(&["C-u"]);
    // Several: the common start, then a second Tab lists them with what each does.
    tmux.keys(&["-l", "/compa"]);
    tmux.keys(&["Tab"]);
    tmux.keys(&["Tab"]);
    let screen = tmux.wait_for("the compactions on this branch");
    assert!(screen.contains("/compact "), "{screen}");
    tmux.keys(&["C-u"]);
    // Skills and templates from the resource loader, fuzzily too.
    tmux.keys(&["-l", "/skill:g"]);
    tmux.keys(&["Tab"]);
    tmux.wait_for("> /skill:greet ");
    tmux.keys(&["C-u"]);
    tmux.keys(&["-l", "/revw"]);
    tmux.keys(&["Tab"]);
    tmux.wait_for("> /review ");
    tmux.keys(&["C-u"]);
    // Past the name, Tab completes nothing of the command.
    tmux.keys(&["-l", "/compact sco"]);
    tmux.keys(&["Tab"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        tmux.screen().contains("> /compact sco"),
        "{}",
        tmux.screen()
    );
    assert!(
        !tmux.screen().contains("scoped-models"),
        "{}",
        tmux.screen()
    );
}

/// A stand-in for `gh` in `dir`: `auth status` fails while `dir/logged-out` exists; `gist create`
/// keeps the file it was given as `dir/uploaded.html`, its arguments in `dir/args`, and prints an
/// address.
fn fake_gh(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let script = format!(
        "#!/bin/sh\nD='{dir}'\nif [ \"$1\" = auth ]; then [ -f \"$D/logged-out\" ] && exit 1; exit 0; fi\n\
         echo \"$@\" > \"$D/args\"\nfor last; do :; done\ncp \"$last\" \"$D/uploaded.html\"\n\
         echo '- Creating gist' >&2\necho https://gist.github.com/someone/abc123\n",
        dir = dir.display()
    );
    let gh = dir.join("gh");
    std::fs::write(&gh, script).unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn share_asks_then_uploads_the_redacted_page_as_a_secret_gist() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("Shared thoughts.", 300));
    let bin = tempfile::tempdir().unwrap();
    fake_gh(bin.path());
    std::fs::write(bin.path().join("logged-out"), "").unwrap();
    // The stand-in first on PATH (set after `env`'s options, before the home).
    let command = chat_command(&world.project, world.home.path(), "").replacen(
        " HOME=",
        &format!(" PATH='{}':\"$PATH\" HOME=", bin.path().display()),
        1,
    );
    let tmux = Tmux::start(&command);
    tmux.wait_idle(1);
    tmux.line("remember the word pelican-77");
    tmux.wait_for("Shared thoughts.");
    tmux.wait_idle(2);
    // Logged out: said, nothing asked.
    tmux.line("/share");
    tmux.wait_for("the GitHub CLI is not logged in: run `gh auth login` first");
    std::fs::remove_file(bin.path().join("logged-out")).unwrap();
    // Asked first; no: nothing leaves.
    tmux.line("/share");
    tmux.wait_for("as a secret GitHub gist? Anyone with its link can read it.");
    tmux.answer("n");
    tmux.wait_for("Not shared");
    assert!(!bin.path().join("uploaded.html").exists());
    // Yes: the page goes up as a secret gist and its address is shown.
    tmux.line("/share");
    tmux.wait_for_count("as a secret GitHub gist?", 2);
    tmux.answer("y");
    tmux.wait_for("Shared as a secret gist: https://gist.github.com/someone/abc123");
    let args = std::fs::read_to_string(bin.path().join("args")).unwrap();
    assert!(args.starts_with("gist create --public=false "), "{args}");
    let page = std::fs::read_to_string(bin.path().join("uploaded.html")).unwrap();
    assert!(page.contains("pelican-77") && page.contains("Shared thoughts."));
    // The page was written to a temporary folder, not left in the project.
    let left: Vec<_> = std::fs::read_dir(&world.project)
        .unwrap()
        .flatten()
        .filter(|entry| {
            entry
                .path()
                .extension()
                .is_some_and(|extension| extension == "html")
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Found by a chat sweep: after `/model` to a model allowing longer replies, requests still asked
/// for the first model's `max_tokens` (2048), and the larger model's replies were cut.
#[test]
fn a_switched_model_is_asked_for_replies_as_long_as_it_allows() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({"keepRecentTokens": 10}));
    world.edit_settings(|settings| {
        settings["llm"]["models"].as_array_mut().unwrap().push(
            json!({"provider": "mock", "id": "big-model", "contextWindow": 100_000,
                   "maxOutput": 8192}),
        );
    });
    world.answer(text("From the first.", 300));
    world.answer(text("From the big one.", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("hi");
    tmux.wait_for("From the first.");
    tmux.wait_idle(2);
    tmux.line("/model mock/big-model");
    tmux.wait_for("Model: mock/big-model");
    tmux.line("hi again");
    tmux.wait_for("From the big one.");
    let requests = world.chat_requests();
    let limit = |request: &serde_json::Value| {
        request
            .get("max_completion_tokens")
            .or_else(|| request.get("max_tokens"))
            .and_then(serde_json::Value::as_u64)
    };
    assert_eq!(limit(&requests[0]), Some(2048));
    assert_eq!(limit(&requests[1]), Some(8192));
    // Summaries follow the model in use, as Pi summarizes with the current model (they stayed
    // with the first), in a session opened after the switch too.
    tmux.line("/compact");
    tmux.wait_for("Compacted");
    tmux.line("/new");
    tmux.wait_for("New session");
    for (count, prompt) in ["one more", "and another"].into_iter().enumerate() {
        tmux.line(prompt);
        // Each answered before the next line is typed (a line typed during a reply steers it).
        tmux.wait_for_count("(the script has no more answers)", count + 1);
    }
    tmux.line("/compact");
    tmux.wait_for_count("Compacted", 2);
    let summaries = world.summary_requests();
    assert!(
        !summaries.is_empty()
            && summaries
                .iter()
                .all(|request| request["model"] == json!("big-model")),
        "{:?}",
        summaries
            .iter()
            .map(|request| &request["model"])
            .collect::<Vec<_>>()
    );
    // The model in use again records no second switch.
    tmux.line("/model mock/big-model");
    tmux.wait_for_count("Model: mock/big-model", 2);
    tmux.line("/quit");
    drop(tmux);
    // The first session holds the one switch; the second, opened on the big model, none. Each
    // records the model it started with before its first message.
    let switches: usize = world
        .session_files()
        .iter()
        .map(|file| switches_after_the_first_message(&world.entries(file)))
        .sum();
    assert_eq!(switches, 1);
}

/// QA r97: `/model mock/codr`, a typo of the one configured model, was taken: the session
/// recorded a switch and requests went out for a model the provider does not have. An id neither
/// configured nor known is refused with the nearest known ones, and nothing is recorded.
#[test]
fn a_model_id_neither_configured_nor_known_is_refused_with_the_nearest() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("From the test model.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("/model mock/test-modle");
    let screen = tmux.wait_for("Unknown model `mock/test-modle`");
    assert!(
        screen.contains("did you mean `mock/test-model`?"),
        "{screen}"
    );
    assert!(screen.contains("`/model` alone"), "{screen}");
    assert!(!screen.contains("Model: mock/test-modle"), "{screen}");
    tmux.wait_idle(2);
    tmux.line("hi");
    tmux.wait_for("From the test model.");
    assert_eq!(world.chat_requests()[0]["model"], json!("test-model"));
    tmux.line("/quit");
    drop(tmux);
    let file = world.session_files().remove(0);
    let recorded: Vec<Value> = world
        .entries(&file)
        .into_iter()
        .filter(|entry| entry["type"] == "model_change")
        .map(|entry| entry["modelId"].clone())
        .collect();
    assert_eq!(
        recorded,
        [json!("test-model")],
        "the model the session started with, no switch"
    );
}

/// Found by a chat sweep: going back to a prompt that attached files (Esc Esc, `/fork`, `/tree`)
/// put the attached files' text back on the input line, so sending it attached each file twice,
/// the first copy stale. The prompt comes back as typed; its files are attached afresh.
#[test]
fn a_prompt_put_back_on_the_input_line_comes_back_as_typed() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    std::fs::write(world.project.join("notes.txt"), "old notes\n").unwrap();
    world.answer(text("Read them.", 300));
    world.answer(text("Read them again.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("explain @notes.txt");
    tmux.wait_for("Read them.");
    tmux.wait_idle(2);
    std::fs::write(world.project.join("notes.txt"), "new notes\n").unwrap();
    tmux.double_escape();
    let screen = tmux.wait_for("Rewind to before which prompt?");
    assert!(!screen.contains("<file"), "{screen}");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_input_line("> explain @notes.txt");
    assert!(!screen.contains("<file name"), "{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Read them again.");
    let last = world.chat_requests().pop().unwrap();
    let user = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .unwrap()["content"]
        .to_string();
    assert_eq!(user.matches("<file name").count(), 1, "{user}");
    assert!(
        user.contains("new notes") && !user.contains("old notes"),
        "{user}"
    );
}

/// Found by a chat sweep: `/resume` of the session open now said it was "in use by PID N", N the
/// chat's own. The list marks it, and choosing it changes nothing.
#[test]
fn resume_marks_the_session_open_now_and_choosing_it_changes_nothing() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("Hello.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("hi");
    tmux.wait_for("Hello.");
    tmux.wait_idle(2);
    tmux.line("/resume");
    let (screen, number) = tmux.resume_list(|line| line.contains("hi  (open now)"));
    assert_eq!(number, 1, "{screen}");
    tmux.pick_row(1);
    let screen = tmux.wait_for("That is the session open now; nothing changed");
    assert!(!screen.contains("in use"), "{screen}");
    // Esc leaves the list, and the chat goes on where it was.
    tmux.wait_idle(1);
    tmux.line("/resume");
    tmux.resume_list(|line| line.contains("(open now)"));
    tmux.keys(&["Escape"]);
    world.answer(text("Still here.", 300));
    tmux.wait_idle(1);
    tmux.line("still there?");
    tmux.wait_for("Still here.");
    assert_eq!(world.session_files().len(), 1);
}

/// Found by a chat sweep: `!` alone went to the model as a prompt, a command's colours reached
/// the screen and the model as raw escapes, and `/export notes` wrote a page named `notes`.
#[test]
fn bang_alone_escapes_in_output_and_an_export_name_without_extension() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("!");
    tmux.wait_for("`!<command>` runs a command");
    tmux.line(r"!printf 'plain \033[31mRED\033[0m\tend\n'");
    let screen = tmux.wait_for("plain RED");
    // The command line shows what was typed; its output, no escape.
    assert!(screen.contains("\n  plain RED"), "{screen}");
    assert!(!screen.contains("\\u001b"), "{screen}");
    tmux.line("/export notes");
    tmux.wait_for("Exported the session to");
    assert!(world.project.join("notes.html").is_file());
    assert!(!world.project.join("notes").exists());
    tmux.line("/quit");
    drop(tmux);
    assert!(
        world.chat_requests().is_empty(),
        "nothing was sent to the model"
    );
    // The page holds the output as the context does: without the escapes.
    let page = std::fs::read_to_string(world.project.join("notes.html")).unwrap();
    assert!(page.contains("plain RED"), "no output in the page");
    // (The command's own text holds `\033[31m` as typed: the escape character itself must not.)
    assert!(
        !page.contains('\u{1b}') && !page.contains("\\u001b"),
        "an escape in the page"
    );
}

/// Found by a chat sweep: Tab completed `@my` to `@my file.txt`, which then attached nothing and
/// said nothing. A path with blanks completes in quotes, and the quoted form attaches.
#[test]
fn a_file_whose_name_has_blanks_completes_quoted_and_attaches() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    std::fs::write(world.project.join("my notes.txt"), "the notes\n").unwrap();
    world.answer(text("Noted.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.keys(&["-l", "read @my"]);
    tmux.keys(&["Tab"]);
    tmux.wait_for("> read @\"my notes.txt\"");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Attached my notes.txt (1 line)");
    tmux.wait_for("Noted.");
    let request = world.chat_requests()[0].to_string();
    assert!(
        request.contains(r#"<file name=\"my notes.txt\">\nthe notes\n</file>"#),
        "{request}"
    );
}

/// `/login` on a terminal: the key is typed without echo, never shown, never in the session or
/// the input line's history (Up after it brings back `/login`, not the key); `/logout` removes
/// it. Ctrl-C at the key's question saves nothing.
#[test]
fn login_takes_the_key_without_echo_and_keeps_it_out_of_the_session() {
    if tmux_missing() {
        return;
    }
    const KEY: &str = "sk-ant-typed-SECRET-4242";
    let world = World::new(100_000, json!({}));
    world.answer(text("Answered.", 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("hello");
    tmux.wait_for("Answered.");
    tmux.wait_idle(2);
    tmux.line("/login anthropic");
    tmux.wait_for("API key of `anthropic` (typed without echo; Ctrl-C cancels):");
    tmux.keys(&["C-c"]);
    tmux.wait_for("Cancelled; nothing was saved.");
    let credentials = world.home.path().join("auth.json");
    assert!(!credentials.exists());
    tmux.wait_idle(3);
    tmux.line("/login");
    tmux.wait_for("Provider: ");
    tmux.line("Anthropic");
    tmux.wait_for_count(
        "API key of `anthropic` (typed without echo; Ctrl-C cancels):",
        2,
    );
    tmux.keys(&["-l", KEY]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("`/model anthropic/…` switches to one of its models");
    assert!(screen.contains("Saved the key of `anthropic`"), "{screen}");
    assert!(!screen.contains(KEY), "{screen}");
    let saved = std::fs::read_to_string(&credentials).unwrap();
    assert!(saved.contains(KEY), "{saved}");
    tmux.wait_idle(4);
    tmux.keys(&["Up"]);
    let screen = tmux.wait_input_line("> /login");
    assert!(!screen.contains(KEY), "{screen}");
    tmux.keys(&["C-u"]);
    tmux.line("/logout anthropic");
    tmux.wait_for("Removed the saved key of `anthropic`");
    let file = world.session_files().remove(0);
    assert!(!std::fs::read_to_string(file).unwrap().contains(KEY));
    assert!(!std::fs::read_to_string(&credentials).unwrap().contains(KEY));
}

/// The `model_change` entries after a session's first message: the switches the user made, not
/// the model the session started with.
pub(crate) fn switches_after_the_first_message(entries: &[Value]) -> usize {
    entries
        .iter()
        .skip_while(|entry| entry["type"] != "message")
        .filter(|entry| entry["type"] == "model_change")
        .count()
}
