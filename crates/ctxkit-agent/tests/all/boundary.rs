//! The trust boundary around the tools (issue 33), through the whole loop: questions before a
//! tool leaves the project, ctxkit's home closed even when approved, secrets kept out of the
//! session and the requests, full outputs saved privately.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxkit_agent::testing::ScriptedModel;
use ctxkit_agent::{AgentEvent, Approval, ApproveAll, Approver, PromptOutcome, Workspace};
use ctxkit_llm::ChatRequest;
use ctxkit_protocol::AgentMessage;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::support::{Behaviour, World, last, provider, text_of};

const KEY: &str = "sk-ant-api03-boundary-test-0123456789";

/// Calls `calls` on every user message, and repeats the tool results' texts back.
fn caller(calls: Vec<(&'static str, Value)>) -> Arc<Behaviour> {
    Arc::new(
        move |model: &ScriptedModel, request: &ChatRequest, input: u64| match last(request) {
            AgentMessage::ToolResult(_) => {
                let results: Vec<String> = request
                    .messages
                    .iter()
                    .filter_map(|message| match message {
                        AgentMessage::ToolResult(result) => Some(text_of(&result.content)),
                        _ => None,
                    })
                    .collect();
                model.text(&results.join("\n---\n"), input)
            }
            _ => {
                let ids = ["c0", "c1", "c2", "c3"];
                let calls: Vec<(&str, &str, Value)> = calls
                    .iter()
                    .zip(ids)
                    .map(|((name, arguments), id)| (id, *name, arguments.clone()))
                    .collect();
                model.calls(&calls, input)
            }
        },
    )
}

/// Answers outside-project questions from a list, keeping the questions.
#[derive(Default)]
struct Outside {
    answers: Vec<Approval>,
    questions: Vec<String>,
}

impl Approver for Outside {
    fn approve<'a>(&'a mut self, tool: &'a str, _question: &'a str) -> BoxFuture<'a, Approval> {
        panic!("`{tool}` needs no ordinary approval here");
    }

    fn approve_outside<'a>(
        &'a mut self,
        tool: &'a str,
        question: &'a str,
    ) -> BoxFuture<'a, Approval> {
        self.questions.push(format!("{tool}: {question}"));
        let answer = self
            .answers
            .get(self.questions.len() - 1)
            .copied()
            .unwrap_or(Approval::Deny);
        Box::pin(async move { answer })
    }
}

/// The world's workspace with its own ctxkit home (holding a key) beside the project.
fn workspace(world: &World) -> (Workspace, PathBuf) {
    let home = world.dir.path().join("home/.ctxkit");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("settings.json"),
        format!(r#"{{"llm": {{"apiKey": "{KEY}"}}}}"#),
    )
    .unwrap();
    let mut workspace = Workspace::new(&world.work());
    workspace.set_home(&home);
    workspace.add_secret(KEY);
    (workspace, home)
}

/// An engine over `session` with the settings of a user who has none.
fn engine_over(session: ctxkit_agent::Session) -> ctxkit_agent::Engine {
    ctxkit_agent::Engine::new(
        session,
        ctxkit_agent::EngineOptions {
            settings: ctxkit_agent::EngineSettings::from_settings(
                &ctxkit_settings::Settings::read(&json!({})),
            ),
            model: None,
            summarizer: Arc::new(ctxkit_agent::OfflineSummarizer::default()),
            prompts: ctxkit_agent::Prompts::default(),
            hooks: ctxkit_agent::HookSet::new(),
            thinking_level: None,
            project: None,
        },
    )
}

async fn session_text(world: &World) -> String {
    let path = world
        .engine
        .with_session(|session| session.path().map(Path::to_owned))
        .await
        .unwrap();
    std::fs::read_to_string(path).unwrap()
}

/// A security tester's path: `../x.txt`, then the first line of a made-up question and line
/// breaks, so the real question's first line was the model's ("Write `…/x.txt`, inside the
/// project?…") and the real "outside the project?" came after blank lines. The question quotes
/// such a name as `ls` does, on one line.
#[tokio::test]
async fn a_line_break_in_a_path_is_quoted_in_the_question() {
    let spoof = "../x.txt`, inside the project? (always: anything under `/p`)\n\n\n\n";
    let calls = vec![("write", json!({"path": spoof, "content": "a"}))];
    let mut world = World::new(provider(1.0, caller(calls))).await;
    let (workspace, _) = workspace(&world);
    world.agent.set_workspace(workspace);
    let observer = Arc::clone(&world.observed);
    let mut declining = Outside::default();
    world
        .agent
        .prompt("go".to_owned(), &mut declining, observer.as_ref())
        .await
        .unwrap();
    assert_eq!(declining.questions.len(), 1, "{:?}", declining.questions);
    let question = &declining.questions[0];
    assert!(!question.contains('\n'), "{question}");
    assert!(question.starts_with("write: Write `$'/"), "{question}");
    assert!(
        question.contains("(always: anything under `/p`)\\n\\n\\n\\n'`, outside the project?"),
        "{question}"
    );
}

#[tokio::test]
async fn writes_outside_the_project_are_asked_and_always_is_remembered() {
    let calls = vec![
        ("write", json!({"path": "../outside/a.txt", "content": "a"})),
        ("write", json!({"path": "../outside/b.txt", "content": "b"})),
    ];
    let mut world = World::new(provider(1.0, caller(calls))).await;
    let (workspace, _) = workspace(&world);
    world.agent.set_workspace(workspace);
    let observer = Arc::clone(&world.observed);
    // Declined: nothing is written, the model is told why.
    let mut declining = Outside::default();
    let outcome = world
        .agent
        .prompt("go".to_owned(), &mut declining, observer.as_ref())
        .await
        .unwrap();
    assert_eq!(outcome, PromptOutcome::Answered);
    assert_eq!(declining.questions.len(), 2, "{:?}", declining.questions);
    assert!(
        declining.questions[0].starts_with("write: Write `")
            && declining.questions[0]
                .contains("outside/a.txt`, outside the project? (always: anything under `")
            && declining.questions[0].ends_with("outside`)"),
        "{:?}",
        declining.questions
    );
    assert!(!world.dir.path().join("outside").exists());
    assert!(session_text(&world).await.contains("was not approved"));
    // `a` (always): asked once, for the rest of the agent's life.
    let mut always = Outside {
        answers: vec![Approval::Always],
        ..Outside::default()
    };
    for _ in 0..2 {
        world
            .agent
            .prompt("go".to_owned(), &mut always, observer.as_ref())
            .await
            .unwrap();
    }
    assert_eq!(always.questions.len(), 1, "{:?}", always.questions);
    assert!(world.dir.path().join("outside/b.txt").exists());
    // Approving every ordinary question does not approve leaving the project.
    let calls = vec![(
        "write",
        json!({"path": "../elsewhere/c.txt", "content": "c"}),
    )];
    let mut world = World::new(provider(1.0, caller(calls))).await;
    world.prompt("go").await;
    assert!(!world.dir.path().join("elsewhere").exists());
}

/// QA: "always" to a note written in `/tmp/x/` let the model overwrite `~/.bashrc` later without a
/// question. "Always" covers the folder of the path asked about, and the question says so.
#[tokio::test]
async fn always_outside_the_project_covers_the_folder_asked_about() {
    let calls = vec![
        ("write", json!({"path": "../outside/a.txt", "content": "a"})),
        (
            "write",
            json!({"path": "../outside/deeper/b.txt", "content": "b"}),
        ),
        (
            "write",
            json!({"path": "../elsewhere/c.txt", "content": "c"}),
        ),
    ];
    let mut world = World::new(provider(1.0, caller(calls))).await;
    let (workspace, _) = workspace(&world);
    world.agent.set_workspace(workspace);
    let observer = Arc::clone(&world.observed);
    let mut answers = Outside {
        answers: vec![Approval::Always, Approval::Deny],
        ..Outside::default()
    };
    world
        .agent
        .prompt("go".to_owned(), &mut answers, observer.as_ref())
        .await
        .unwrap();
    assert_eq!(answers.questions.len(), 2, "{:?}", answers.questions);
    assert!(
        answers.questions[1].contains("elsewhere/c.txt"),
        "{:?}",
        answers.questions
    );
    assert!(world.dir.path().join("outside/a.txt").exists());
    assert!(world.dir.path().join("outside/deeper/b.txt").exists());
    assert!(!world.dir.path().join("elsewhere").exists());
}

#[tokio::test]
async fn ctxkit_settings_and_secrets_never_enter_the_conversation() {
    let calls = vec![
        ("read", json!({"path": "~/.ctxkit/settings.json"})),
        ("read", json!({"path": "docs/setup.md"})),
        ("read", json!({"path": "config.env"})),
        ("grep", json!({"pattern": "sk-ant"})),
    ];
    let mut world = World::new(provider(1.0, caller(calls))).await;
    let (workspace, home) = workspace(&world);
    world.agent.set_workspace(workspace);
    // A cloned project: a link to the user's settings, and a file that happens to hold the key.
    std::fs::create_dir_all(world.work().join("docs")).unwrap();
    std::os::unix::fs::symlink(
        home.join("settings.json"),
        world.work().join("docs/setup.md"),
    )
    .unwrap();
    std::fs::write(world.work().join("config.env"), format!("KEY={KEY}\n")).unwrap();
    let observer = Arc::clone(&world.observed);
    // Every question approved: ctxkit's home stays closed all the same.
    let mut approve = Outside {
        answers: vec![Approval::Always; 4],
        ..Outside::default()
    };
    world
        .agent
        .prompt("read the setup".to_owned(), &mut approve, observer.as_ref())
        .await
        .unwrap();
    let stored = session_text(&world).await;
    assert!(stored.contains("docs/setup.md` refused"), "{stored}");
    assert!(stored.contains("KEY=<redacted>"), "{stored}");
    assert!(!stored.contains(KEY));
    let requests = world.model.requests();
    assert_eq!(requests.len(), 2);
    for request in requests {
        assert!(
            !serde_json::to_string(&request.messages)
                .unwrap()
                .contains(KEY)
        );
    }
}

#[tokio::test]
async fn full_outputs_of_sessions_in_memory_are_private_and_under_the_home() {
    // A command's output (a cut `read` saves nothing: the file is its full output).
    let calls = vec![("bash", json!({"command": "cat long.txt"}))];
    let mut world = World::new(provider(1.0, caller(calls))).await;
    let in_memory = ctxkit_agent::Session::in_memory(&world.work().display().to_string());
    let engine = engine_over(in_memory);
    world.agent.set_engine(engine.clone()).await;
    let (workspace, home) = workspace(&world);
    world.agent.set_workspace(workspace);
    let text: String = (1..=3000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(world.work().join("long.txt"), &text).unwrap();
    world.agent.set_engine(engine).await;
    let observer = Arc::clone(&world.observed);
    world
        .agent
        .prompt("read it".to_owned(), &mut ApproveAll, observer.as_ref())
        .await
        .unwrap();
    let outputs = home.join("tool-output");
    let session_dir = std::fs::read_dir(&outputs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved = session_dir.join("c0.txt");
    // Byte for byte what the command wrote, its last newline too (QA r105).
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), text);
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&saved), 0o600);
    assert_eq!(mode(&session_dir), 0o700);
    assert_eq!(mode(&outputs), 0o700);
    assert!(
        !std::env::temp_dir()
            .join("ctxkit-tool-output")
            .join(session_dir.file_name().unwrap())
            .exists()
    );
}

/// A fork's history names its parent's saved outputs; the fork's tools read them, and only them.
#[tokio::test]
async fn a_fork_reads_the_outputs_its_parent_saved_and_no_other_sessions() {
    let world_dir = tempfile::tempdir().unwrap();
    let home = world_dir.path().join("home/.ctxkit");
    let sessions = home.join("sessions/--work--");
    std::fs::create_dir_all(&sessions).unwrap();
    let parent = sessions.join("parent.jsonl");
    std::fs::write(
        &parent,
        concat!(
            "{\"type\":\"session\",\"version\":3,\"id\":\"parent-id\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/work\"}\n",
            // The fork copies it: a parent is known by the entries its fork holds.
            "{\"type\":\"model_change\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"provider\":\"p\",\"modelId\":\"m\"}\n",
        ),
    )
    .unwrap();
    let saved = |id: &str, text: &str| {
        let folder = sessions.join("tool-output").join(id);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("c9.txt"), text).unwrap();
        folder.join("c9.txt").display().to_string()
    };
    let parents = saved("parent-id", "SAVED BY THE PARENT");
    let strangers = saved("stranger-id", "SAVED BY ANOTHER SESSION");
    let calls = vec![
        ("read", json!({"path": parents})),
        ("read", json!({"path": strangers})),
    ];
    let mut world = World::new(provider(1.0, caller(calls))).await;
    let (mut workspace, _) = workspace(&world);
    workspace.set_home(&home);
    world.agent.set_workspace(workspace);
    let fork =
        ctxkit_agent::Session::fork_from(&parent, &world.work().display().to_string(), &sessions)
            .unwrap();
    let engine = engine_over(fork);
    world.agent.set_engine(engine.clone()).await;
    let observer = Arc::clone(&world.observed);
    let mut outside = Outside::default();
    world
        .agent
        .prompt("read both".to_owned(), &mut outside, observer.as_ref())
        .await
        .unwrap();
    let file = engine
        .with_session(|session| session.path().map(Path::to_owned))
        .await
        .unwrap();
    let stored = std::fs::read_to_string(file).unwrap();
    assert!(stored.contains("SAVED BY THE PARENT"), "{stored}");
    assert!(!stored.contains("SAVED BY ANOTHER SESSION"), "{stored}");
    assert!(outside.questions.is_empty(), "{:?}", outside.questions);
    drop(world_dir);
}

/// Answers ordinary (and guarded-write) questions from a list, keeping the questions.
#[derive(Default)]
struct Guarded {
    answers: Vec<Approval>,
    questions: Vec<String>,
}

impl Approver for Guarded {
    fn approve<'a>(&'a mut self, tool: &'a str, question: &'a str) -> BoxFuture<'a, Approval> {
        self.questions.push(format!("{tool}: {question}"));
        let answer = self
            .answers
            .get(self.questions.len() - 1)
            .copied()
            .unwrap_or(Approval::Deny);
        Box::pin(async move { answer })
    }
}

/// QA (r101, D3): "always" to a guarded write of a prompt template, `.ctxkit/prompts/review.md`,
/// let the model write `.git/hooks/pre-commit` and a `core.fsmonitor` into `.git/config` without a
/// question. "Always" covers the folder asked about (a later template there is not asked again),
/// and the question says so; the git hook and config are asked about and, declined, not written.
#[tokio::test]
async fn always_to_a_guarded_write_covers_the_folder_asked_about_only() {
    let calls = vec![
        (
            "write",
            json!({"path": ".ctxkit/prompts/review.md", "content": "review"}),
        ),
        (
            "write",
            json!({"path": ".ctxkit/prompts/fix.md", "content": "fix"}),
        ),
        (
            "write",
            json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch PWNED\n"}),
        ),
        (
            "write",
            json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = touch PWNED\n"}),
        ),
    ];
    let mut world = World::new(provider(1.0, caller(calls))).await;
    let (workspace, _) = workspace(&world);
    world.agent.set_workspace(workspace);
    let work = std::fs::canonicalize(world.work()).unwrap();
    let observer = Arc::clone(&world.observed);
    let mut answers = Guarded {
        answers: vec![Approval::Always, Approval::Deny, Approval::Deny],
        ..Guarded::default()
    };
    world
        .agent
        .prompt("go".to_owned(), &mut answers, observer.as_ref())
        .await
        .unwrap();
    assert_eq!(answers.questions.len(), 3, "{:#?}", answers.questions);
    assert!(
        answers.questions[0].ends_with(&format!(
            "(always: anything under `{}`)",
            work.join(".ctxkit/prompts").display()
        )),
        "{:#?}",
        answers.questions
    );
    assert!(
        answers.questions[1].contains(".git/hooks/pre-commit`? ctxkit guards it")
            && answers.questions[1].ends_with(&format!(
                "(always: anything under `{}`)",
                work.join(".git/hooks").display()
            )),
        "{:#?}",
        answers.questions
    );
    assert!(
        answers.questions[2].contains(".git/config`? ctxkit guards it"),
        "{:#?}",
        answers.questions
    );
    assert!(work.join(".ctxkit/prompts/fix.md").exists());
    assert!(!work.join(".git/hooks/pre-commit").exists());
    assert!(!work.join(".git/config").exists());
}

/// A running command's output reaches the observer while it runs (QA r102, chat finding 7: a
/// long test run showed nothing until it ended), between the call's start and end, and redacted
/// as its result is: the key a project file holds is never shown on the way.
#[tokio::test]
async fn a_running_commands_output_is_reported_redacted_before_it_ends() {
    let calls = vec![(
        "bash",
        json!({"command": "cat config.env; sleep 0.5; echo finished"}),
    )];
    let mut world = World::new(provider(1.0, caller(calls))).await;
    let (workspace, _home) = workspace(&world);
    world.agent.set_workspace(workspace);
    std::fs::write(world.work().join("config.env"), format!("KEY={KEY}\n")).unwrap();
    world.prompt("run it").await;
    let events = world.observed.0.lock().unwrap().clone();
    let position = |wanted: fn(&AgentEvent) -> bool| events.iter().position(wanted).unwrap();
    let started = position(|event| matches!(event, AgentEvent::ToolStart { .. }));
    let ended = position(|event| matches!(event, AgentEvent::ToolEnd { .. }));
    let outputs: Vec<(usize, &String, &String)> = events
        .iter()
        .enumerate()
        .filter_map(|(index, event)| match event {
            AgentEvent::ToolOutput { call_id, output } => Some((index, call_id, output)),
            _ => None,
        })
        .collect();
    assert!(
        outputs
            .iter()
            .any(|(_, _, output)| output.as_str() == "KEY=<redacted>"),
        "the line before the pause is shown while the command sleeps: {outputs:?}"
    );
    for (index, call_id, output) in &outputs {
        assert!(started < *index && *index < ended, "{events:?}");
        assert_eq!(call_id.as_str(), "c0");
        assert!(!output.contains(KEY), "{output}");
    }
}
