//! Issue 42's adversary, as a table: a hostile repository and a hostile model attack the jail
//! (paths), what reaches the model without a tool (context files, prompts), and guarded places
//! (code that runs later). Each row is one attack and what must hold; every row failed on the
//! code before the jail. Other suites of issue 42: `ctxkit-jail` (race, depth, atomic writes),
//! `ctxkit-settings` (trust-gated keys, pinned hook scripts), `ctxkit-packages` and
//! `ctxkit-resources/tests/packages_git.rs` (git without repository commands), `ctxkit-secrets`
//! (Basic/Bearer/userinfo redaction).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ctxkit_agent::{Access, ToolContext, ToolRegistry, Workspace};

use ctxkit_jail::testing::Swapper;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-ant-api03-adversary-0123456789";
const PRIVATE_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- adversary";

/// A user's home holding ctxkit's home (settings with a key, another project's session), a private
/// key, and a project.
struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    ctxkit: PathBuf,
}

fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    let ctxkit = home.join(".ctxkit");
    std::fs::create_dir_all(ctxkit.join("sessions/--other--")).unwrap();
    std::fs::write(
        ctxkit.join("settings.json"),
        format!(r#"{{"llm":{{"apiKey":"{KEY}"}}}}"#),
    )
    .unwrap();
    std::fs::write(
        ctxkit.join("sessions/--other--/s.jsonl"),
        "{\"type\":\"message\",\"text\":\"OTHER-PROJECT-CONVERSATION\"}\n",
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), PRIVATE_KEY).unwrap();
    let project = home.join("project");
    std::fs::create_dir_all(project.join(".git/hooks")).unwrap();
    std::fs::write(project.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    std::fs::create_dir_all(project.join(".ctxkit/hooks")).unwrap();
    std::fs::write(project.join(".ctxkit/hooks/after.sh"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/lib.rs"), "fn main() {}\n").unwrap();
    Home {
        _dir: dir,
        home,
        project,
        ctxkit,
    }
}

/// The tools' context for a project at `root`, ctxkit's home protected, nothing approved.
fn context(home: &Home, root: &Path, guard: &[PathBuf]) -> ToolContext {
    let mut workspace = Workspace::new(root);
    workspace.set_home(&home.ctxkit);
    workspace.add_secret(KEY);
    // The real credentials (`$HOME/.ssh`, …) are denied by every jail; this test's home is a
    // temporary folder, so its `.ssh` is named here.
    workspace.protect(&home.home.join(".ssh"));
    for path in guard {
        workspace.guard(path);
    }
    ToolContext {
        cwd: root.to_owned(),
        output_dir: root.join(".outputs"),
        bash_timeout: Duration::from_secs(5),
        shell: Default::default(),
        pass_env: Vec::new(),
        cancel: CancellationToken::new(),
        engine: None,
        workspace: Arc::new(workspace),
        approved: ctxkit_agent::Approved::default(),
        auto_resize_images: true,
        max_output_bytes: 50 * 1024,
        progress: None,
    }
}

/// What must hold after an attack.
enum Holds {
    /// The call is an error and its text contains this.
    Refused(&'static str),
    /// Whatever the result, it does not contain this.
    NeverShows(&'static str),
}

struct Attack {
    name: &'static str,
    /// `true`: the project is the home itself.
    project_at_home: bool,
    /// Symlinks planted first: (link under the project, target under the home).
    links: &'static [(&'static str, &'static str)],
    tool: &'static str,
    arguments: fn() -> Value,
    holds: Holds,
}

const DEEP: fn() -> Value = || json!({"path": vec!["a"; 20_000].join("/") + "/x.txt"});

const ATTACKS: &[Attack] = &[
    Attack {
        name: "read of 20,000 components (issue: serve aborted on a stack overflow)",
        project_at_home: false,
        links: &[],
        tool: "read",
        arguments: DEEP,
        holds: Holds::Refused("refused: the path"),
    },
    Attack {
        name: "write of 20,000 components",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": vec!["d"; 20_000].join("/"), "content": "x"}),
        holds: Holds::Refused("refused: the path"),
    },
    Attack {
        name: "ls of 20,000 components",
        project_at_home: false,
        links: &[],
        tool: "ls",
        arguments: DEEP,
        holds: Holds::Refused("refused: the path"),
    },
    Attack {
        name: "grep with the project at ~ walks into another project's conversation",
        project_at_home: true,
        links: &[],
        tool: "grep",
        arguments: || json!({"pattern": "OTHER-PROJECT-CONVERSATION"}),
        holds: Holds::NeverShows("OTHER-PROJECT"),
    },
    Attack {
        name: "grep with the project at ~ finds the API key in ctxkit's settings",
        project_at_home: true,
        links: &[],
        tool: "grep",
        arguments: || json!({"pattern": "adversary-0123"}),
        holds: Holds::NeverShows("settings.json"),
    },
    Attack {
        name: "grep with the project at ~ reads the private key",
        project_at_home: true,
        links: &[],
        tool: "grep",
        arguments: || json!({"pattern": "PRIVATE KEY", "literal": true}),
        holds: Holds::NeverShows("id_rsa"),
    },
    Attack {
        name: "ls of ~/.ctxkit with the project at ~",
        project_at_home: true,
        links: &[],
        tool: "ls",
        arguments: || json!({"path": ".ctxkit/sessions"}),
        holds: Holds::Refused("never"),
    },
    Attack {
        name: "write over .git/config with a core.fsmonitor command (bash declined)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = sh -c 'touch pwned'\n"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "edit of .git/config through `src/..`",
        project_at_home: false,
        links: &[],
        tool: "edit",
        arguments: || json!({"path": "src/../.git/config", "oldText": "bare = false", "newText": "fsmonitor = touch pwned"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "a git hook written by the model",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": "@./.git//hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "a trusted after_compact hook script rewritten by the model",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".ctxkit/hooks/after.sh", "content": "#!/bin/sh\ncurl evil\n"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "the project's settings rewritten by the model",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".ctxkit/settings.json", "content": "{\"chat\":{\"confirmBash\":false}}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "Pi's project folder rewritten by the model",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".pi/settings.json", "content": "{}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "Mercurial's repository config given a hook (QA 2026-12-07: written unasked, and \
               the user's next `hg status` ran it)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".hg/hgrc", "content": "[hooks]\npre-status = touch pwned\n"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "Jujutsu's repository config given a pager (runs at the user's next `jj log`)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".jj/repo/config.toml", "content": "[ui]\npager = \"touch pwned\"\n"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "another agent's project settings given a hook (Claude Code runs it when next started)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".claude/settings.json", "content": "{\"hooks\": {}}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "another agent's MCP servers given a command (QA 2026-12-07: `.mcp.json`, \
               `.gemini/settings.json` and `.vscode/tasks.json` were written unasked)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".mcp.json", "content": "{\"mcpServers\": {}}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "the editor's tasks given one that runs when the folder opens",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".vscode/tasks.json", "content": "{}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "a dev container given a `postCreateCommand` (runs when the editor reopens the \
               folder in its container; QA 2026-12-07 listed it unguarded)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".devcontainer/devcontainer.json", "content": "{\"postCreateCommand\": \"touch pwned\"}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "an editor workspace file given a task that runs when it opens",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": "team.Code-Workspace", "content": "{\"tasks\": {}}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "a pre-commit hook of the `system` language (runs at the user's next `git commit`)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".pre-commit-config.yaml", "content": "repos:\n- repo: local\n  hooks:\n  - id: x\n    name: x\n    entry: touch pwned\n    language: system\n"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "a husky hook rewritten (runs at the user's next `git commit`; QA 2026-12-07)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".husky/pre-commit", "content": "touch pwned\n"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "OpenCode's project config given an MCP server command",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": "opencode.json", "content": "{\"mcp\": {}}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "a write through a symlink into .git",
        project_at_home: false,
        links: &[("gitlink", "project/.git")],
        tool: "write",
        arguments: || json!({"path": "gitlink/config", "content": "x"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "a nested repository planted in a subfolder (QA, second round: its core.fsmonitor \
               ran at the user's next `git status` there, and editors scan subfolders for repositories)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": "src/.git/config", "content": "[core]\n\tfsmonitor = touch pwned\n"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "git's hooks named in another case (the same folder on WSL's /mnt/c or exFAT)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": ".GIT/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "a subfolder's own ctxkit settings (a project when ctxkit starts there)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": "src/deeper/.ctxkit/settings.json", "content": "{}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "the live session file overwritten (the conversation becomes `{}`)",
        project_at_home: false,
        links: &[],
        tool: "write",
        arguments: || json!({"path": "sessions/live.jsonl", "content": "{}"}),
        holds: Holds::Refused("guarded"),
    },
    Attack {
        name: "read of ctxkit's settings through a symlink chain",
        project_at_home: false,
        links: &[("up", "."), ("docs", "project/up/.ctxkit")],
        tool: "read",
        arguments: || json!({"path": "docs/settings.json"}),
        holds: Holds::NeverShows("adversary-0123"),
    },
    Attack {
        name: "grep through a symlink to ctxkit's home inside a project at ~",
        project_at_home: true,
        links: &[("notes", ".ctxkit")],
        tool: "grep",
        arguments: || json!({"pattern": "apiKey", "path": "notes"}),
        holds: Holds::NeverShows("adversary-0123"),
    },
    Attack {
        name: "a path of 5,000 bytes",
        project_at_home: false,
        links: &[],
        tool: "read",
        arguments: || json!({"path": "x".repeat(5_000)}),
        holds: Holds::Refused("bytes long"),
    },
    Attack {
        name: "a file echoing a base-URL password as Basic, read back by the model",
        project_at_home: false,
        links: &[],
        tool: "bash",
        arguments: || json!({"command": "echo 'Authorization: Basic YWxpY2U6aHVudGVyMg=='; echo https://alice:hunter2@llm.example/v1"}),
        holds: Holds::NeverShows("hunter2"),
    },
];

fn plant(home: &Home, links: &[(&str, &str)], root: &Path) {
    for (link, target) in links {
        let link = root.join(link);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(home.home.join(target), link).unwrap();
    }
}

#[test]
fn every_attack_of_the_table_is_repelled() {
    let registry = ToolRegistry::coding();
    let mut failures = Vec::new();
    for attack in ATTACKS {
        let home = home();
        let root = if attack.project_at_home {
            home.home.clone()
        } else {
            home.project.clone()
        };
        plant(&home, attack.links, &root);
        let session = home.project.join("sessions/live.jsonl");
        std::fs::create_dir_all(session.parent().unwrap()).unwrap();
        std::fs::write(&session, "{\"type\":\"session\"}\n").unwrap();
        let context = context(&home, &root, &[session]);
        let outcome = registry.run(attack.tool, &(attack.arguments)(), "call", &context);
        let held = match &attack.holds {
            Holds::Refused(reason) => outcome.is_error && outcome.text.contains(reason),
            Holds::NeverShows(text) => !outcome.text.contains(text),
        };
        if !held {
            let shown: String = outcome.text.chars().take(300).collect();
            failures.push(format!("{}: {shown}", attack.name));
        }
        assert!(!home.project.join("pwned").exists(), "{}", attack.name);
        assert_eq!(
            std::fs::read_to_string(home.project.join("sessions/live.jsonl")).unwrap(),
            "{\"type\":\"session\"}\n",
            "{}",
            attack.name
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A guarded write the user approves goes through (the guard asks, it does not forbid).
#[test]
fn an_approved_guarded_write_is_written() {
    let home = home();
    let mut context = context(&home, &home.project, &[]);
    let write = |context: &ToolContext| {
        ToolRegistry::coding().run(
            "write",
            &json!({"path": ".ctxkit/hooks/after.sh", "content": "#!/bin/sh\necho ok\n"}),
            "call",
            context,
        )
    };
    // Approved for another guarded place: refused.
    context
        .approved
        .guarded
        .push(home.project.join(".ctxkit/hooks/before.sh"));
    let outcome = write(&context);
    assert!(outcome.is_error, "{}", outcome.text);
    context
        .approved
        .guarded
        .push(home.project.join(".ctxkit/hooks/after.sh"));
    let outcome = write(&context);
    assert!(!outcome.is_error, "{}", outcome.text);
    assert!(
        std::fs::read_to_string(home.project.join(".ctxkit/hooks/after.sh"))
            .unwrap()
            .contains("echo ok")
    );
}

/// QA (jail): the user was asked about `outside/secret.txt` (the project's `lnk` led there), the
/// link was swapped to `outside2` while the question was on screen, and the approval opened
/// `outside2/secret.txt`, which nobody was asked about; a write the same way. An approval is for
/// the place the question named.
#[test]
fn an_approval_is_for_the_place_asked_about_not_a_link_swapped_since() {
    let home = home();
    for folder in ["outside", "outside2"] {
        std::fs::create_dir_all(home.home.join(folder)).unwrap();
        std::fs::write(
            home.home.join(folder).join("secret.txt"),
            format!("{}-TEXT", folder.to_uppercase()),
        )
        .unwrap();
    }
    let link = home.project.join("lnk");
    symlink("../outside", &link).unwrap();
    let mut context = context(&home, &home.project, &[]);
    context
        .approved
        .outside
        .push((Access::Read, home.home.join("outside/secret.txt")));
    context
        .approved
        .outside
        .push((Access::Write, home.home.join("outside/w.txt")));
    let registry = ToolRegistry::coding();
    let read = |context: &ToolContext| {
        registry.run("read", &json!({"path": "lnk/secret.txt"}), "r", context)
    };
    let write = |context: &ToolContext| {
        registry.run(
            "write",
            &json!({"path": "lnk/w.txt", "content": "written"}),
            "w",
            context,
        )
    };
    std::fs::remove_file(&link).unwrap();
    symlink("../outside2", &link).unwrap();
    let outcome = read(&context);
    assert!(outcome.is_error, "{}", outcome.text);
    assert!(!outcome.text.contains("OUTSIDE2-TEXT"), "{}", outcome.text);
    let outcome = write(&context);
    assert!(outcome.is_error, "{}", outcome.text);
    assert!(!home.home.join("outside2/w.txt").exists());
    // The place asked about, as it was asked about, is opened.
    std::fs::remove_file(&link).unwrap();
    symlink("../outside", &link).unwrap();
    let outcome = read(&context);
    assert!(outcome.text.contains("OUTSIDE-TEXT"), "{}", outcome.text);
    let outcome = write(&context);
    assert!(!outcome.is_error, "{}", outcome.text);
    assert_eq!(
        std::fs::read_to_string(home.home.join("outside/w.txt")).unwrap(),
        "written"
    );
}

/// A project folder swapped for a symlink while the model's writes run: nothing lands outside
/// (the issue saw 1–4 of 600).
#[test]
fn a_folder_swapped_for_a_symlink_during_writes_puts_nothing_outside() {
    let home = home();
    let outside = home.home.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let context = context(&home, &home.project, &[]);
    let work = home.project.join("work");
    let swapper = Swapper::folder_or_link(work.clone(), outside.clone());
    let registry = ToolRegistry::coding();
    let (mut written, mut refused, mut n) = (0, 0, 0);
    let started = std::time::Instant::now();
    while swapper.goes_on(n, 600, written > 0 && refused > 0, started) {
        let outcome = registry.run(
            "write",
            &json!({"path": format!("work/{n}.txt"), "content": "x"}),
            "call",
            &context,
        );
        // The link: refused as outside the project, or (met in the jail) not a folder to write in.
        match (outcome.is_error, outcome.text.contains("No such file")) {
            (false, _) => written += 1,
            (true, false) => refused += 1,
            (true, true) => {}
        }
        swapper.attempted();
        n += 1;
    }
    let swaps = swapper.stop();
    let leaked = std::fs::read_dir(&outside).unwrap().count();
    assert_eq!(leaked, 0, "files written outside the project");
    assert!(
        written > 0 && refused > 0 && swaps >= 100,
        "the race did not run in {n} writes ({swaps} swaps): {written} written, {refused} refused"
    );
}

/// What reaches the model without a tool: context files, `APPEND_SYSTEM.md`, prompt templates and
/// skills that are symlinks to ctxkit's settings or a private key put nothing of them anywhere.
#[test]
fn prompt_files_linked_to_secrets_put_nothing_into_the_prompt() {
    let home = home();
    let project = &home.project;
    symlink("../.ctxkit/settings.json", project.join("AGENTS.md")).unwrap();
    symlink(
        home.home.join(".ssh/id_rsa"),
        project.join(".ctxkit/APPEND_SYSTEM.md"),
    )
    .unwrap();
    symlink(home.home.join(".ssh/id_rsa"), home.home.join("CLAUDE.md")).unwrap();
    std::fs::create_dir_all(project.join(".ctxkit/prompts")).unwrap();
    symlink(
        home.ctxkit.join("settings.json"),
        project.join(".ctxkit/prompts/review.md"),
    )
    .unwrap();
    std::fs::create_dir_all(project.join(".ctxkit/skills/s")).unwrap();
    symlink(
        home.home.join(".ssh/id_rsa"),
        project.join(".ctxkit/skills/s/SKILL.md"),
    )
    .unwrap();
    let agent_dir = home.ctxkit.join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    let (files, diagnostics) = ctxkit_resources::discover_context_files(&agent_dir, project);
    let all: String = files.iter().map(|file| file.content.as_str()).collect();
    assert!(!all.contains(KEY) && !all.contains(PRIVATE_KEY), "{all}");
    assert!(diagnostics.len() >= 2, "{diagnostics:?}");
    let append = project.join(".ctxkit/APPEND_SYSTEM.md");
    let (text, warning) =
        ctxkit_resources::resolve_prompt_value(&append.display().to_string(), project);
    // QA (2026-12-05): the refused file's path became the prompt's text.
    assert_eq!(text, None);
    assert!(warning.is_some());
    let template = ctxkit_resources::load_prompt_file(&project.join(".ctxkit/prompts/review.md"));
    assert!(template.is_none_or(|template| !template.content.contains(KEY)));
    let (skill, _) = ctxkit_resources::load_skill_file(&project.join(".ctxkit/skills/s/SKILL.md"));
    assert!(skill.is_none());
}

/// Attack: `bash` started in whatever its working directory's name led to. The project folder
/// swapped for a symlink to ctxkit's home after the session started, or a working directory in
/// the project that is a symlink to the user's keys, ran the command there (`cat settings.json`
/// printed the key). Now the working directory is opened through the project's jail and the
/// command starts in that descriptor; the project itself still works.
#[test]
fn bash_never_starts_in_a_working_directory_outside_the_project() {
    let registry = ToolRegistry::coding();
    let run = |context: &ToolContext, command: &str| {
        registry.run("bash", &json!({"command": command}), "call", context)
    };

    let swapped = home();
    let before = context(&swapped, &swapped.project, &[]);
    let normal = run(&before, "pwd");
    assert!(!normal.is_error, "{}", normal.text);
    assert_eq!(normal.text.trim(), swapped.project.display().to_string());
    std::fs::rename(&swapped.project, swapped.home.join("moved")).unwrap();
    symlink(&swapped.ctxkit, &swapped.project).unwrap();
    let outcome = run(&before, "cat settings.json");
    assert!(
        outcome.is_error && outcome.text.contains("working directory"),
        "{}",
        outcome.text
    );
    assert!(!outcome.text.contains("adversary-0123"), "{}", outcome.text);

    let linked = home();
    symlink(linked.home.join(".ssh"), linked.project.join("keys")).unwrap();
    let mut context = context(&linked, &linked.project, &[]);
    context.cwd = linked.project.join("keys");
    let outcome = run(&context, "cat id_rsa");
    assert!(
        outcome.is_error && outcome.text.contains("working directory"),
        "{}",
        outcome.text
    );
    assert!(!outcome.text.contains("PRIVATE KEY"), "{}", outcome.text);
    // A real folder of the project is a working directory like the project itself.
    context.cwd = linked.project.join("src");
    let inside = run(&context, "ls");
    assert!(
        !inside.is_error && inside.text.contains("lib.rs"),
        "{}",
        inside.text
    );
}

/// QA (second round): a hard link in the project to the user's key or to ctxkit's settings was
/// read by `read` and searched by `grep` without a question: the descriptor's real path is the
/// project's name. Both are refused by the jail now; `grep` of the whole project counts them.
#[test]
fn hard_links_to_the_key_and_the_settings_are_neither_read_nor_searched() {
    let home = home();
    std::fs::hard_link(
        home.home.join(".ssh/id_rsa"),
        home.project.join("notes.txt"),
    )
    .unwrap();
    std::fs::hard_link(
        home.ctxkit.join("settings.json"),
        home.project.join("src/config.json"),
    )
    .unwrap();
    let registry = ToolRegistry::coding();
    let context = context(&home, &home.project, &[]);
    for path in ["notes.txt", "src/config.json"] {
        let outcome = registry.run("read", &json!({"path": path}), "call", &context);
        assert!(outcome.is_error, "{path}: {}", outcome.text);
        assert!(
            outcome.text.contains("is a hard link to"),
            "{}",
            outcome.text
        );
        let outcome = registry.run(
            "grep",
            &json!({"pattern": "PRIVATE|apiKey", "path": path}),
            "call",
            &context,
        );
        assert!(outcome.is_error, "{path}: {}", outcome.text);
    }
    let outcome = registry.run(
        "grep",
        &json!({"pattern": "PRIVATE|apiKey"}),
        "call",
        &context,
    );
    assert!(!outcome.text.contains(PRIVATE_KEY), "{}", outcome.text);
    assert!(!outcome.text.contains("apiKey"), "{}", outcome.text);
    assert!(
        outcome.text.contains("2 places were not searched"),
        "{}",
        outcome.text
    );
}

/// QA (second round), the race on guarded places: `write work/pre-commit` while a command left
/// running flips `work` between a folder and a symlink to `.git/hooks`. The path was judged by
/// its name (a folder: not guarded) and then written through the link. The project's jail now
/// judges the folder it opened for the write: nothing lands in `.git/hooks` without approval.
#[test]
fn a_folder_swapped_for_a_link_into_git_hooks_during_writes_puts_no_hook_there() {
    let home = home();
    let context = context(&home, &home.project, &[]);
    let registry = ToolRegistry::coding();
    let work = home.project.join("work");
    let swapper = Swapper::folder_or_link(work.clone(), ".git/hooks".into());
    let (mut written, mut refused, mut n) = (0, 0, 0);
    let started = std::time::Instant::now();
    while swapper.goes_on(n, 400, written > 0 && refused > 0, started) {
        let path = format!("work/pre-commit-{n}");
        let outcome = registry.run(
            "write",
            &json!({"path": path, "content": "#!/bin/sh\ntouch pwned\n"}),
            "call",
            &context,
        );
        match (outcome.is_error, outcome.text.contains("No such file")) {
            (false, _) => written += 1,
            (true, false) => refused += 1,
            (true, true) => {}
        }
        swapper.attempted();
        n += 1;
    }
    let swaps = swapper.stop();
    let hooks = std::fs::read_dir(home.project.join(".git/hooks"))
        .unwrap()
        .count();
    assert_eq!(hooks, 0, "hooks planted ({written} writes went through)");
    assert!(
        written > 0 && refused > 0 && swaps >= 100,
        "the race did not run in {n} writes ({swaps} swaps): {written} written, {refused} refused"
    );
}

/// Security sweep 9: a git directory by another name. With `src/HEAD` and `src/refs/` written,
/// the write that adds `src/objects/`, and then any write of its `config`, is guarded: git takes
/// `src` for a repository before the `.git` above it, and the `core.fsmonitor` of its config ran at
/// the user's next `git status` there.
#[test]
fn a_git_directory_by_another_name_is_guarded() {
    let home = home();
    let root = home.project.clone();
    let registry = ToolRegistry::coding();
    let context = context(&home, &root, &[]);
    let write = |path: &str, content: &str| {
        registry.run(
            "write",
            &json!({"path": path, "content": content}),
            "call",
            &context,
        )
    };
    assert!(!write("src/HEAD", "ref: refs/heads/main\n").is_error);
    assert!(!write("src/refs/heads/.keep", "").is_error);
    let completing = write("src/objects/info/.keep", "");
    assert!(
        completing.is_error && completing.text.contains("guarded"),
        "{}",
        completing.text
    );
    // The folder made some other way (a command the user approved): the config is still asked.
    std::fs::create_dir_all(root.join("src/objects")).unwrap();
    let config = write("src/config", "[core]\n\tfsmonitor = touch pwned\n");
    assert!(
        config.is_error && config.text.contains("guarded"),
        "{}",
        config.text
    );
    assert!(!root.join("src/config").exists());
}
