//! Pi 1.6's command-line flags of `ctxkit chat` that a Pi user's scripts rely on, run in print
//! mode against a mocked Responses API: what the request holds is what each flag asks for.

use serde_json::Value;
use wiremock::MockServer;

use crate::Run;
use crate::chat_print::{print_chat, server};

/// The first request's body.
async fn first_request(server: &MockServer) -> Value {
    let requests = server.received_requests().await.unwrap();
    serde_json::from_slice(&requests.first().expect("one request").body).unwrap()
}

/// The names of the tools the request offers (none when it has no `tools`).
fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// What the request offers under `flags` (and a `defaultTools` setting of `read`, `bash`), and
/// what the chat said.
async fn offered(flags: &[&str]) -> (Vec<String>, String) {
    let server = server(None).await;
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"defaultTools": ["read", "bash"]}"#,
    )
    .unwrap();
    let mut args = flags.to_vec();
    args.extend(["-p", "hi"]);
    let output = print_chat(&run, &server, &args, "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    (tool_names(&first_request(&server).await), output)
}

/// `ctxkit chat --tools read,grep -p "review"` failed with clap's unknown-argument error. Each
/// tool flag now selects as Pi 1.6's does, over the `defaultTools` setting.
#[tokio::test(flavor = "multi_thread")]
async fn each_tool_flag_selects_what_pi_selects() {
    let cases: [(&[&str], &[&str]); 9] = [
        (&[], &["read", "bash", "recall"]),
        (&["--tools", "read,grep"], &["read", "grep"]),
        (&["-t", "read,recall"], &["read", "recall"]),
        (&["--tools", "+grep,-bash"], &["read", "grep", "recall"]),
        (&["--no-tools"], &[]),
        (&["-nt", "--tools", "ls"], &["ls"]),
        (&["-nbt"], &["recall"]),
        (&["--exclude-tools", "bash"], &["read", "recall"]),
        (
            &["-xt", "rec*", "--tools", "*"],
            &["read", "write", "edit", "bash", "ls", "grep", "find"],
        ),
    ];
    for (flags, expected) in cases {
        let (names, output) = offered(flags).await;
        assert_eq!(names, expected, "{flags:?}: {output}");
    }
}

/// `--no-tools` sends no tools at all, and a name ctxkit has no tool for is said, naming the flag.
#[tokio::test(flavor = "multi_thread")]
async fn no_tools_sends_none_and_unknown_names_are_said() {
    let server = server(None).await;
    let run = Run::new();
    let output = print_chat(&run, &server, &["--no-tools", "-p", "hi"], "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let body = first_request(&server).await;
    assert!(
        body.get("tools")
            .is_none_or(|tools| tools.as_array().is_some_and(Vec::is_empty)),
        "{body}"
    );
    let (names, output) = offered(&["--tools", "read,fetch", "--exclude-tools", "codemode"]).await;
    assert_eq!(names, ["read"]);
    assert!(
        output.contains("warning: `--tools` names `fetch`, which is no tool of ctxkit; skipped"),
        "{output}"
    );
    assert!(
        output.contains("warning: `--exclude-tools` names `codemode`: Pi's tool"),
        "{output}"
    );
}

/// A `--tools` list Pi refuses is a usage error that says why.
#[test]
fn a_mixed_tools_list_is_refused() {
    let run = Run::new();
    let output = run.ctxkit(&["chat", "--tools", "read,+bash", "-p", "hi"]);
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains("tool names cannot be mixed with +name or -name entries"),
        "{output}"
    );
}

/// Pi's `--api-key`, `--mode json|rpc` and `--extension`/`-e` are refused with what to use
/// instead (before: clap's "unexpected argument", which suggested `--model` for `--mode`); the
/// key is never repeated, and nothing is sent. `--mode text` is how the chat prints.
#[tokio::test(flavor = "multi_thread")]
async fn pi_flags_ctxkit_refuses_say_why_and_send_nothing() {
    let server = server(None).await;
    let run = Run::new();
    let key = "sk-cmdline-SECRET654";
    for (flags, said) in [
        (vec!["--api-key", key], "no API key on the command line"),
        (
            vec!["--mode", "json"],
            "`--mode json`: ctxkit's chat prints text only",
        ),
        (vec!["--mode", "rpc"], "ctxkit serve --stdio"),
        (
            vec!["-e", "./plan.ts"],
            "`--extension ./plan.ts`: ctxkit runs no extension code",
        ),
        (vec!["--extension", "./plan.ts"], "runs no extension code"),
    ] {
        let mut args = flags.clone();
        args.extend(["-p", "hi"]);
        let output = print_chat(&run, &server, &args, "");
        assert!(
            output.starts_with("exit: 2\n") && output.contains(said),
            "{flags:?}: {output}"
        );
        assert!(!output.contains(key), "{output}");
    }
    assert!(server.received_requests().await.unwrap().is_empty());
    let output = print_chat(
        &run,
        &server,
        &["--mode", "text", "--no-session", "-p", "hi"],
        "",
    );
    assert!(output.starts_with("exit: 0\n"), "{output}");
}

/// The request's system prompt (the Responses API's `instructions`).
async fn instructions(server: &MockServer) -> String {
    first_request(server).await["instructions"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `--system-prompt` and `--append-system-prompt` were unknown arguments. Now a value naming a
/// file in the session's folder is read and any other is the text, as Pi's: the base replaces
/// `SYSTEM.md`, the appended parts replace `APPEND_SYSTEM.md`, in order.
#[tokio::test(flavor = "multi_thread")]
async fn the_system_prompt_flags_give_the_request_their_text() {
    let server = server(None).await;
    let run = Run::new();
    std::fs::write(run.home.path().join("SYSTEM.md"), "From SYSTEM.md").unwrap();
    std::fs::write(
        run.home.path().join("APPEND_SYSTEM.md"),
        "From APPEND_SYSTEM.md",
    )
    .unwrap();
    std::fs::write(
        crate::chat_print::project(&run).join("notes.md"),
        "Notes from the file.",
    )
    .unwrap();
    let args = [
        "--system-prompt",
        "You are a terse reviewer.",
        "--append-system-prompt",
        "notes.md",
        "--append-system-prompt",
        "Answer in French.",
        "-p",
        "hi",
    ];
    let output = print_chat(&run, &server, &args, "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let prompt = instructions(&server).await;
    assert!(prompt.starts_with("You are a terse reviewer.\n\n<addendum>\nNotes from the file.\n\nAnswer in French.\n</addendum>"), "{prompt}");
    assert!(!prompt.contains("SYSTEM.md"), "{prompt}");
}

/// `--name` and `--no-context-files` were unknown arguments. Now `--name` names the session as
/// `/name` does (the listing shows it) and `-nc` leaves the instruction files out of the prompt.
#[tokio::test(flavor = "multi_thread")]
async fn name_names_the_session_and_no_context_files_leaves_agents_md_out() {
    let server = server(None).await;
    let run = Run::new();
    let project = crate::chat_print::project(&run);
    std::fs::write(project.join("AGENTS.md"), "Always answer in haiku.").unwrap();
    let args = ["--name", " Refactor auth ", "-nc", "-p", "hi"];
    let output = print_chat(&run, &server, &args, "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let prompt = instructions(&server).await;
    assert!(!prompt.contains("haiku"), "{prompt}");
    let sessions = run.ctxkit(&["sessions", "--all"]);
    assert!(sessions.contains("Refactor auth"), "{sessions}");
    let refused = run.ctxkit(&["chat", "--name", " ", "-p", "hi"]);
    assert!(refused.starts_with("exit: 2\n"), "{refused}");
}

/// The session files under the run's sessions folder, with their text.
fn session_files(run: &Run) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    let mut folders = vec![run.home.path().join("sessions")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path
                .extension()
                .is_some_and(|extension| extension == "jsonl")
            {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path, text));
            }
        }
    }
    found.sort();
    found
}

/// `--session-id` and `--fork` were unknown arguments. Now `--session-id` starts a session under
/// that id (saying so) and opens it again the next time, as Pi's does; `--fork` goes on in a copy
/// of a session named by its id, the copy a session of its own and the original left as it was.
#[tokio::test(flavor = "multi_thread")]
async fn session_id_opens_its_session_and_fork_copies_one() {
    let server = server(None).await;
    let run = Run::new();
    let output = print_chat(
        &run,
        &server,
        &["--session-id", "nightly-1", "-p", "first"],
        "",
    );
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert!(
        output.contains("No session of id `nightly-1` in this folder: starting a new one"),
        "{output}"
    );
    let output = print_chat(
        &run,
        &server,
        &["--session-id", "nightly-1", "-p", "second"],
        "",
    );
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let files = session_files(&run);
    assert_eq!(files.len(), 1, "{files:?}");
    let (original, text) = &files[0];
    assert!(text.starts_with(r#"{"type":"session""#) && text.contains(r#""id":"nightly-1""#));
    assert!(text.contains("first") && text.contains("second"), "{text}");

    let output = print_chat(&run, &server, &["--fork", "nightly", "-p", "third"], "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert!(output.contains("Forked "), "{output}");
    let files = session_files(&run);
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(&std::fs::read_to_string(original).unwrap(), text);
    let (_, copy) = files.iter().find(|(path, _)| path != original).unwrap();
    assert!(copy.contains("first") && copy.contains("third"), "{copy}");
    assert!(!copy.contains(r#""id":"nightly-1""#), "{copy}");
    assert!(copy.contains(r#""parentSession":"#), "{copy}");

    let taken = print_chat(
        &run,
        &server,
        &[
            "--fork",
            "nightly-1",
            "--session-id",
            "nightly-1",
            "-p",
            "x",
        ],
        "",
    );
    assert!(
        taken.contains("a session of id `nightly-1` is already in this folder"),
        "{taken}"
    );
    for bad in [
        "--session-id=-lead",
        "--session-id=has space",
        "--session-id=trail.",
    ] {
        let refused = run.ctxkit_piped(&["chat", bad, "-p", "hi"], &[], "");
        assert!(refused.starts_with("exit: 2\n"), "{bad}: {refused}");
        assert!(
            refused.contains("a session id is letters, digits"),
            "{refused}"
        );
    }
    let clash = run.ctxkit_piped(&["chat", "--fork", "nightly-1", "-c", "-p", "hi"], &[], "");
    assert!(clash.starts_with("exit: 2\n"), "{clash}");
    assert!(
        clash.contains("'--fork <FILE|ID>' cannot be used with"),
        "{clash}"
    );
}

/// `--provider` was an unknown argument. Now it names the provider `--model` is looked up in, and
/// needs `--model`, as Pi's.
#[tokio::test(flavor = "multi_thread")]
async fn provider_names_where_the_model_is_looked_up() {
    let server = server(None).await;
    let run = Run::new();
    let base = format!("{}/v1", server.uri());
    let home = run.home.path().display().to_string();
    let variables = [
        ("OPENAI_API_KEY", crate::chat_print::OPENAI_KEY),
        ("OPENAI_BASE_URL", base.as_str()),
        ("HOME", home.as_str()),
    ];
    let args = [
        "chat",
        "--provider",
        "OpenAI",
        "--model",
        "gpt-5-mini",
        "-p",
        "hi",
    ];
    let project = crate::chat_print::project(&run);
    let output =
        tokio::task::block_in_place(|| run.ctxkit_piped_in(&project, &args, &variables, ""));
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert_eq!(first_request(&server).await["model"], "gpt-5-mini");
    let alone = run.ctxkit_piped(&["chat", "--provider", "openai", "-p", "hi"], &[], "");
    assert!(alone.starts_with("exit: 2\n"), "{alone}");
    assert!(alone.contains("--model <MODEL[:LEVEL]>"), "{alone}");
}

/// On a database store `--fork` and `--session-id` are refused before anything is opened: they
/// name session files and this folder's ids, which a database does not have.
#[test]
fn fork_and_session_id_are_refused_on_a_database_store() {
    let run = Run::new();
    let store = "postgres://nobody@127.0.0.1:1/nothing";
    for flags in [
        ["--fork", "abc"],
        ["--session-id", "abc"],
        ["--session-dir", "kept"],
    ] {
        let mut args = vec!["--store", store, "chat"];
        args.extend(flags);
        args.extend(["-p", "hi"]);
        let output = run.ctxkit_piped(&args, &[], "");
        assert!(output.starts_with("exit: 2\n"), "{output}");
        assert!(
            output.contains(&format!("`{}` works on session files", flags[0])),
            "{output}"
        );
    }
}

/// Pi's `modelThinkingLevels` was read as a key ctxkit does not use: a Pi user who lowered one
/// model's level got `defaultThinkingLevel` on it. Now a new session on that model starts at its
/// entry; `--thinking` still comes first.
#[tokio::test(flavor = "multi_thread")]
async fn a_models_own_thinking_level_comes_before_the_default() {
    for (flags, effort) in [(&[][..], "low"), (&["--thinking", "medium"][..], "medium")] {
        let server = server(None).await;
        let run = Run::new();
        std::fs::write(
            run.home.path().join("settings.json"),
            r#"{"defaultThinkingLevel": "high",
                "modelThinkingLevels": {"openai/gpt-5-mini": "low", "openai/gpt-5": "minimal"}}"#,
        )
        .unwrap();
        let mut args = flags.to_vec();
        args.extend(["-p", "hi"]);
        let output = print_chat(&run, &server, &args, "");
        assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
        let body = first_request(&server).await;
        assert_eq!(body["reasoning"]["effort"], effort, "{flags:?}: {body}");
    }
}

/// `--skill`, `--prompt-template` and `--theme` were unknown arguments, the last of Pi's resource
/// flags. Each adds its path after the configured resources, as Pi's do: the skill is offered with
/// `--no-skills` too, the template expands as `/name`, a theme file's theme is picked by
/// `--use-theme`, and a path that is not there is said.
#[tokio::test(flavor = "multi_thread")]
async fn the_resource_path_flags_load_what_they_name() {
    let server = server(None).await;
    let run = Run::new();
    let extra = run.home.path().join("extra");
    std::fs::create_dir_all(extra.join("deploy")).unwrap();
    std::fs::write(
        extra.join("deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ship the site to production.\n---\nRun make deploy.\n",
    )
    .unwrap();
    std::fs::write(
        extra.join("review.md"),
        "---\ndescription: Review a file\n---\nReview $1 with care.\n",
    )
    .unwrap();
    let mut theme: Value =
        serde_json::from_str(include_str!("../../../ctxkit-resources/themes/dark.json")).unwrap();
    theme["name"] = Value::from("ocean");
    std::fs::write(extra.join("ocean.json"), theme.to_string()).unwrap();
    let base = format!("{}/v1", server.uri());
    let variables = [
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let chat = |flags: &[&str]| {
        let mut args = vec!["chat", "--no-session", "--model", "openai/gpt-5-mini"];
        args.extend_from_slice(flags);
        tokio::task::block_in_place(|| {
            run.ctxkit_piped_in(&extra, &args, &variables, "/review main.rs\n")
        })
    };
    let output = chat(&[
        "--script",
        "--no-skills",
        "--skill",
        "deploy",
        "--prompt-template",
        "review.md",
        "--theme",
        "ocean.json",
        "--use-theme",
        "ocean",
        "--skill",
        "nowhere",
    ]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(!output.contains("colours stand"), "{output}");
    assert!(output.contains("skill path does not exist"), "{output}");
    assert!(output.contains("nowhere"), "{output}");
    let sent = first_request(&server).await.to_string();
    assert!(sent.contains("<name>deploy</name>"), "{sent}");
    assert!(sent.contains("Ship the site to production."), "{sent}");
    assert!(sent.contains("Review main.rs with care."), "{sent}");
    // Without the flags, neither the theme nor the template is known.
    let output = chat(&["--script", "--use-theme", "ocean"]);
    assert!(output.contains("colours stand"), "{output}");
    // A configured theme: `--no-themes` leaves it out, and `--theme` still loads with it.
    std::fs::write(
        run.home.path().join("settings.json"),
        serde_json::json!({"themes": [extra.join("ocean.json")]}).to_string(),
    )
    .unwrap();
    let output = chat(&["--script", "--use-theme", "ocean"]);
    assert!(!output.contains("colours stand"), "{output}");
    let output = chat(&["--script", "--no-themes", "--use-theme", "ocean"]);
    assert!(output.contains("colours stand"), "{output}");
    let output = chat(&[
        "--script",
        "--no-themes",
        "--theme",
        "ocean.json",
        "--use-theme",
        "ocean",
    ]);
    assert!(!output.contains("colours stand"), "{output}");
}

/// `--tui-mode` was an unknown argument. Pi's `regular` is how ctxkit's chat always draws;
/// `fullscreen` is taken and says there is no such mode; another word is refused.
#[tokio::test(flavor = "multi_thread")]
async fn tui_mode_is_taken_as_pi_takes_it() {
    let server = server(None).await;
    let run = Run::new();
    let output = print_chat(&run, &server, &["--tui-mode", "regular", "-p", "hi"], "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert!(!output.contains("full-screen"), "{output}");
    let output = print_chat(&run, &server, &["--tui-mode", "fullscreen", "-p", "hi"], "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert!(output.contains("no full-screen mode"), "{output}");
    let refused = run.ctxkit(&["chat", "--tui-mode", "wide", "-p", "hi"]);
    assert!(refused.starts_with("exit: 2\n"), "{refused}");
}

/// Pi's `-ne` (`--no-extensions`) was read as `-n e` and named the session `e`, and `--no-mcp`
/// was an unknown argument. Both are taken now: ctxkit runs no extension code and connects to no
/// MCP server, so the run is the plain one, its session unnamed.
#[tokio::test(flavor = "multi_thread")]
async fn no_extensions_and_no_mcp_are_taken_and_name_nothing() {
    let server = server(None).await;
    let run = Run::new();
    let project = crate::chat_print::project(&run);
    for flags in [&["-ne"][..], &["--no-extensions", "--no-mcp"][..]] {
        let mut args = flags.to_vec();
        args.extend(["-p", "hi"]);
        let output = print_chat(&run, &server, &args, "");
        assert!(
            output.starts_with("exit: 0\nall good\n"),
            "{flags:?}: {output}"
        );
    }
    let sessions = run.ctxkit_piped_in(&project, &["sessions", "--json"], &[], "");
    assert!(!sessions.contains("\"name\": \"e\""), "{sessions}");
    assert!(!sessions.contains("\"name\":\"e\""), "{sessions}");
}

/// `--approve` (`-a`) and `--no-approve` (`-na`) were unknown arguments. As Pi's, they decide the
/// project's trust for one run: its skills (resources that wait for trust) load with `-a` in an
/// untrusted project and stay out with `-na` in a trusted one, and nothing is recorded.
#[tokio::test(flavor = "multi_thread")]
async fn approve_and_no_approve_decide_the_projects_trust_for_one_run() {
    let server = server(None).await;
    let run = Run::new();
    let project = crate::chat_print::project(&run);
    let skill = project.join(".ctxkit/skills/release-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Write the release notes.\n---\nSteps.\n",
    )
    .unwrap();
    let offered = |flags: &[&str]| {
        let before = tokio::task::block_in_place(|| {
            futures::executor::block_on(server.received_requests())
                .unwrap_or_default()
                .len()
        });
        let mut args = flags.to_vec();
        args.extend(["-p", "hi"]);
        let output = print_chat(&run, &server, &args, "");
        assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
        let requests =
            tokio::task::block_in_place(|| futures::executor::block_on(server.received_requests()))
                .unwrap();
        String::from_utf8_lossy(&requests[before].body).contains("<name>release-notes</name>")
    };
    assert!(!offered(&[]), "an untrusted project's skill waits");
    assert!(offered(&["-a"]));
    assert!(!offered(&[]), "nothing was recorded");
    let trusted =
        tokio::task::block_in_place(|| run.ctxkit_piped_in(&project, &["trust", "--yes"], &[], ""));
    assert!(trusted.starts_with("exit: 0"), "{trusted}");
    assert!(offered(&[]));
    assert!(!offered(&["-na"]));
    assert!(!offered(&["--no-approve"]));
    assert!(offered(&[]), "the trust recorded stays");
    let said = print_chat(&run, &server, &["-na", "-p", "hi"], "");
    assert!(
        said.contains("left out for this run (`--no-approve`)") && !said.contains("ctxkit trust"),
        "{said}"
    );
    let refused = run.ctxkit(&["chat", "-a", "--no-approve", "-p", "hi"]);
    assert!(refused.starts_with("exit: 2\n"), "{refused}");
}

/// `--session-dir` was an unknown argument. As Pi's, it is the folder the chat's sessions are
/// kept in and looked up in: a new session goes there (not under the sessions root), `--continue`
/// and `--session-id` look there, and `--session` finds an id's start there first.
#[tokio::test(flavor = "multi_thread")]
async fn session_dir_keeps_and_finds_the_sessions_in_its_folder() {
    let server = server(None).await;
    let run = Run::new();
    let project = crate::chat_print::project(&run);
    let folder = project.join("kept");
    let chat = |flags: &[&str]| {
        let mut args = vec!["--session-dir", "kept"];
        args.extend_from_slice(flags);
        let output = print_chat(&run, &server, &args, "");
        assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    };
    let files = || -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                path.extension()
                    .is_some_and(|extension| extension == "jsonl")
            })
            .collect();
        files.sort();
        files
    };
    chat(&["-p", "first prompt"]);
    assert_eq!(files().len(), 1);
    chat(&["-c", "-p", "second prompt"]);
    let first = files().remove(0);
    let text = std::fs::read_to_string(&first).unwrap();
    assert!(text.contains("first prompt") && text.contains("second prompt"));
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let start = &header["id"].as_str().unwrap()[..8];
    chat(&["--session", start, "-p", "third prompt"]);
    assert!(
        std::fs::read_to_string(&first)
            .unwrap()
            .contains("third prompt")
    );
    chat(&["--session-id", "nightly", "-p", "by its id"]);
    assert_eq!(files().len(), 2);
    assert!(
        !run.home.path().join("sessions").exists() || session_files(&run).is_empty(),
        "nothing under the sessions root"
    );
    let refused = run.ctxkit(&["chat", "--session-dir", "kept", "--no-session", "-p", "hi"]);
    assert!(refused.starts_with("exit: 2\n"), "{refused}");
}

/// Pi 1.6.0's `pi mcp …` (before: "unrecognized subcommand 'mcp'"): ctxkit says it connects to
/// no MCP server, whatever follows.
#[test]
fn pi_mcp_commands_say_ctxkit_has_no_mcp() {
    let run = Run::new();
    for args in [
        &["mcp", "list"][..],
        &["mcp", "add", "fs", "--", "npx", "-y", "server"][..],
        &["mcp", "--help"][..],
    ] {
        let output = run.ctxkit(args);
        assert!(
            output.starts_with("exit: 2\n") && output.contains("ctxkit connects to no MCP server"),
            "{args:?}: {output}"
        );
    }
}

/// QA (2026-12-07): a `!command` typed before the first prompt left the session without a
/// `model_change` (the first message counted as the conversation begun), so neither Pi nor ctxkit
/// could restore the model from the file. It is recorded at the first prompt now.
#[tokio::test(flavor = "multi_thread")]
async fn a_command_before_the_first_prompt_still_records_the_model() {
    let server = server(None).await;
    let run = Run::new();
    let output = print_chat(&run, &server, &["--script"], "!echo first\nhello\n");
    assert!(output.starts_with("exit: 0\n"), "{output}");
    let files = session_files(&run);
    assert_eq!(files.len(), 1, "{output}");
    let kinds: Vec<String> = files[0]
        .1
        .lines()
        .skip(1)
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            let role = entry["message"]["role"].as_str().unwrap_or_default();
            format!(
                "{}{}",
                entry["type"].as_str().unwrap(),
                if role.is_empty() {
                    String::new()
                } else {
                    format!(":{role}")
                }
            )
        })
        .collect();
    assert!(kinds.contains(&"model_change".to_owned()), "{kinds:?}");
    let model_at = kinds
        .iter()
        .position(|kind| kind == "model_change")
        .unwrap();
    let user_at = kinds
        .iter()
        .position(|kind| kind == "message:user")
        .unwrap();
    assert!(model_at < user_at, "{kinds:?}");
}
