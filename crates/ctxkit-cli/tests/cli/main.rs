//! CLI snapshot tests: run the real `ctxkit` binary on corpus sessions (copied into temp dirs) and
//! snapshot stdout, stderr and the exit code, with paths, ids and times normalised.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Provider keys and endpoints of the real environment, removed so tests never reach a real provider.
const PROVIDER_VARIABLES: [&str; 9] = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
];

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/corpus")
        .join(name)
}

struct Run {
    home: tempfile::TempDir,
}

impl Run {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// A copy of a corpus file in the temp home.
    fn copy(&self, name: &str) -> PathBuf {
        let target = self.home.path().join(name);
        std::fs::copy(corpus(name), &target).unwrap();
        target
    }

    fn ctxkit(&self, args: &[&str]) -> String {
        self.ctxkit_with_env(args, &[])
    }

    /// Runs `ctxkit` with extra environment variables; provider keys of the real environment are
    /// removed so tests never reach a real provider.
    fn ctxkit_with_env(&self, args: &[&str], variables: &[(&str, &str)]) -> String {
        self.ctxkit_with_input(args, variables, "")
    }

    /// [`Run::ctxkit_with_env`] with `input` on its standard input: a `ctxkit chat` reads it as
    /// lines typed at the input line (`--script` is added after `chat`, after any global flag, as a scripted chat is
    /// what these tests drive; [`Run::ctxkit_piped`] pipes into the chat as it is).
    fn ctxkit_with_input(&self, args: &[&str], variables: &[(&str, &str)], input: &str) -> String {
        let mut scripted = args.to_vec();
        if let Some(command) = scripted.iter().position(|arg| *arg == "chat") {
            scripted.insert(command + 1, "--script");
        }
        self.ctxkit_piped(&scripted, variables, input)
    }

    /// `ctxkit ARGS` with `input` on its standard input, the arguments as they are (a piped
    /// `ctxkit chat` in print mode).
    fn ctxkit_piped(&self, args: &[&str], variables: &[(&str, &str)], input: &str) -> String {
        self.ctxkit_piped_in(self.home.path(), args, variables, input)
    }

    /// [`Run::ctxkit_piped`] run in the folder `cwd` (a project, where the chat's tools work).
    fn ctxkit_piped_in(
        &self,
        cwd: &Path,
        args: &[&str],
        variables: &[(&str, &str)],
        input: &str,
    ) -> String {
        use std::io::Write as _;
        let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
        for name in PROVIDER_VARIABLES {
            command.env_remove(name);
        }
        // A width the developer's shell exported would change the text commands print.
        command.env_remove("COLUMNS");
        command.envs(variables.iter().copied());
        let mut child = command
            .args(args)
            .env("CTXKIT_HOME", self.home.path())
            .env_remove("CTXKIT_SESSIONS_DIR")
            // A test's own `CTXKIT_SESSIONS_DIR` (never its `CTXKIT_HOME`) is kept.
            .envs(
                variables
                    .iter()
                    .filter(|(name, _)| *name == "CTXKIT_SESSIONS_DIR")
                    .copied(),
            )
            .current_dir(cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A command that does not read its input closes the pipe early: not a failure here.
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(input.as_bytes());
        }
        let output = child.wait_with_output().unwrap();
        let mut text = format!("exit: {}\n", output.status.code().unwrap_or(-1));
        text.push_str(&String::from_utf8_lossy(&output.stdout));
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !stderr.is_empty() {
            text.push_str("--- stderr\n");
            text.push_str(&stderr);
        }
        text.replace(&self.home.path().display().to_string(), "[HOME]")
    }
}

macro_rules! snapshot {
    ($value:expr) => {
        insta::with_settings!({filters => vec![
            (r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}[.-]\d{3}Z", "[TIME]"),
            (r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", "[UUID]"),
            // Entries ctxkit creates during a test get random ids.
            (r"(?m)^[0-9a-f]{8} label:", "[NEW-ID] label:"),
            (r"Undid compaction [0-9a-f]{8}", "Undid compaction [NEW-ID]"),
        ]}, {
            insta::assert_snapshot!($value);
        });
    };
}

#[test]
fn tree_human() {
    let run = Run::new();
    let file = run.copy("good-branches.jsonl");
    snapshot!(run.ctxkit(&["tree", file.to_str().unwrap()]));
}

/// Every `progress` record of an imported Claude Code session is a childless entry beside the
/// conversation, and each pushed the rest of the tree two columns right (248 spaces deep, 589 of
/// 961 lines past 80 columns). A side branch of childless entries is drawn beside the line that
/// goes on (the one child with children, or the leaf among childless ones), which keeps its
/// column, as `git log --graph` draws it.
#[test]
fn tree_keeps_the_main_line_in_its_column_past_childless_side_entries() {
    let run = Run::new();
    let file = run.home.path().join("side.jsonl");
    let entry = |id: &str, parent: Option<&str>, second: u32, body: &str| {
        let parent = parent.map_or("null".to_owned(), |parent| format!("\"{parent}\""));
        format!(
            r#"{{"id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:{second:02}Z",{body}}}"#
        )
    };
    let message = |role: &str, text: &str| {
        format!(
            r#""type":"message","message":{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}],"timestamp":1}}"#
        )
    };
    let progress = r#""type":"custom","customType":"import.claude-code.progress""#;
    let lines = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#
            .to_owned(),
        entry("aaaaaaa1", None, 1, &message("user", "Start.")),
        entry(
            "bbbbbbb1",
            Some("aaaaaaa1"),
            2,
            &message("assistant", "One."),
        ),
        entry("5ide0001", Some("aaaaaaa1"), 3, progress),
        entry("5ide0002", Some("bbbbbbb1"), 4, progress),
        entry("5ide0003", Some("bbbbbbb1"), 5, progress),
        entry("ccccccc1", Some("bbbbbbb1"), 6, &message("user", "Two.")),
        entry("5ide0004", Some("ccccccc1"), 7, progress),
        entry(
            "ddddddd1",
            Some("ccccccc1"),
            8,
            &message("assistant", "Three."),
        ),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let output = run.ctxkit(&["tree", file.to_str().unwrap()]);
    assert_eq!(
        output,
        "exit: 0\n\
         aaaaaaa1 user: Start.\n\
         ├ 5ide0001 custom: import.claude-code.progress\n\
         bbbbbbb1 assistant: One.\n\
         ├ 5ide0002 custom: import.claude-code.progress\n\
         ├ 5ide0003 custom: import.claude-code.progress\n\
         ccccccc1 user: Two.\n\
         ├ 5ide0004 custom: import.claude-code.progress\n\
         ddddddd1 assistant: Three.  ← leaf\n"
    );
}

#[test]
fn tree_json() {
    let run = Run::new();
    let file = run.copy("good-labels.jsonl");
    snapshot!(run.ctxkit(&["tree", file.to_str().unwrap(), "--json"]));
}

#[test]
fn context_human_and_llm_json() {
    let run = Run::new();
    let file = run.copy("good-bash-execution.jsonl");
    snapshot!(run.ctxkit(&["context", file.to_str().unwrap()]));
    snapshot!(run.ctxkit(&["context", file.to_str().unwrap(), "--llm", "--json"]));
}

#[test]
fn info_json() {
    let run = Run::new();
    let file = run.copy("good-unicode.jsonl");
    snapshot!(run.ctxkit(&["info", file.to_str().unwrap(), "--json"]));
}

#[test]
fn check_reports_problems_and_never_modifies() {
    let run = Run::new();
    for name in [
        "bad-truncated-last-line.jsonl",
        "bad-header-not-first.jsonl",
        "bad-parent-cycle.jsonl",
        "good-orphans.jsonl",
    ] {
        let file = run.copy(name);
        let before = std::fs::read(&file).unwrap();
        let output = run.ctxkit(&["check", file.to_str().unwrap()]);
        assert_eq!(std::fs::read(&file).unwrap(), before, "{name} modified");
        insta::with_settings!({snapshot_suffix => name}, { snapshot!(output); });
    }
}

#[test]
fn errors_are_one_line_with_a_hint() {
    let run = Run::new();
    let file = run.copy("bad-first-line-not-header.jsonl");
    snapshot!(run.ctxkit(&["context", file.to_str().unwrap()]));
    let good = run.copy("good-minimal.jsonl");
    snapshot!(run.ctxkit(&["context", good.to_str().unwrap(), "--leaf", "nope"]));
    snapshot!(run.ctxkit(&["tree", "missing.jsonl"]));
}

#[test]
fn label_name_fork_and_sessions() {
    let run = Run::new();
    let sessions = run.home.path().join("sessions/--project--");
    std::fs::create_dir_all(&sessions).unwrap();
    let file = sessions.join("s.jsonl");
    std::fs::copy(corpus("good-branches.jsonl"), &file).unwrap();
    let path = file.to_str().unwrap();
    snapshot!(run.ctxkit(&["label", path, "e737c691", "the plan"]));
    snapshot!(run.ctxkit(&["name", path, "  Feature X  "]));
    let fork = run.ctxkit(&["fork", path, "--at", "2b904d50"]);
    assert!(fork.contains("[HOME]/sessions/--project--/"), "{fork}");
    let forked = fork
        .lines()
        .nth(1)
        .unwrap()
        .replace("[HOME]", &run.home.path().display().to_string());
    snapshot!(run.ctxkit(&["tree", &forked]));
    snapshot!(run.ctxkit(&["sessions", "--all"]));
}

mod architecture;
mod attacks;
mod auth;
mod cache_cost;
mod chat;
mod chat_commands;
mod chat_compaction_cancel;
mod chat_first_run;
mod chat_fork;
mod chat_habits;
mod chat_highlight;
mod chat_images;
mod chat_jail;
mod chat_other_writer;
mod chat_pi_flags;
mod chat_pi_resources;
mod chat_pins;
mod chat_piped;
mod chat_print;
mod chat_print_signals;
mod chat_reload;
mod chat_retry;
mod chat_rewind;
mod chat_session_commands;
mod chat_skill_folders;
mod chat_stated_limit;
mod chat_status;
mod chat_stream;
mod chat_theme;
mod chat_thinking;
mod chat_tools_attacks;
mod chat_watch;
mod config_keys;
mod context_edits;
mod edges;
mod exit_codes;
mod hostile;
mod import;
mod import_special_files;
mod issue41;
mod json_records;
mod login;
mod mistakes;
mod offline_size;
mod on_demand;
mod pi_import;
mod private_copies;
mod provider_context;
mod provider_endpoints;
mod providers;
mod recall_summarized;
mod resource_recovery;
mod resources;
mod secrets;
mod serve;
mod serve_ends;
mod serve_in_run;
mod serve_listen_stop;
mod serve_protocol;
mod serve_without_key;
mod settings_files;
mod simulate;
mod small_windows;
mod stop_signals;
mod store;
mod store_mistakes;
mod store_sessions;
mod tool_spend;
mod trust;
mod undo_and_branch;
mod web;
mod wording;

#[test]
fn tokens_with_each_estimator() {
    let run = Run::new();
    let file = run.copy("good-unicode.jsonl");
    snapshot!(run.ctxkit(&["tokens", file.to_str().unwrap(), "--json"]));
    snapshot!(run.ctxkit(&["tokens", file.to_str().unwrap(), "--estimator", "cl100k"]));
    snapshot!(run.ctxkit(&["tokens", file.to_str().unwrap(), "--estimator", "nope"]));
}

#[test]
fn compact_plan_run_list_and_undo() {
    let run = Run::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-session.jsonl");
    let before = std::fs::read(&demo).unwrap();
    let plan = run.ctxkit(&[
        "compact",
        demo.to_str().unwrap(),
        "--keep-recent-tokens",
        "2000",
        "--dry-run",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_str(plan.split_once('\n').unwrap().1).unwrap();
    assert_eq!(json["reason"], serde_json::Value::Null);
    assert!(
        json["plan"]["messagesToSummarize"]
            .as_array()
            .unwrap()
            .len()
            > 10
    );
    assert!(
        json["plan"]["serializedToSummarize"]
            .as_str()
            .unwrap()
            .starts_with("[User]: ")
    );

    let out = run.home.path().join("compacted.jsonl");
    let out_arg = out.to_str().unwrap();
    snapshot!(run.ctxkit(&[
        "compact",
        demo.to_str().unwrap(),
        "--keep-recent-tokens",
        "2000",
        "--context-window",
        "200000",
        "--out",
        out_arg
    ]));
    assert_eq!(
        std::fs::read(&demo).unwrap(),
        before,
        "--out leaves the source untouched"
    );
    snapshot!(run.ctxkit(&["compact", demo.to_str().unwrap(), "--out", out_arg]));
    snapshot!(run.ctxkit(&["compact", out_arg, "--dry-run", "--json"]));
    let listing = run.ctxkit(&["compactions", out_arg]);
    assert_eq!(listing.matches(" · after ~").count(), 3, "{listing}");
    assert!(listing.contains("by the offline summarizer"));
    snapshot!(run.ctxkit(&["undo-compact", out_arg]));
    let preview = run.ctxkit(&[
        "compact",
        demo.to_str().unwrap(),
        "--keep-recent-tokens",
        "2000",
        "--preview",
    ]);
    assert!(
        // Both sides estimated alike (the messages alone: no request tells the system prompt and
        // tools), not the provider's 37656 against an estimate of the messages.
        preview.contains(
            "Preview (nothing written): the model's view ~3598 → ~2649 tokens, estimated"
        ),
        "{preview}"
    );
    assert_eq!(
        std::fs::read(&demo).unwrap(),
        before,
        "--preview writes nothing"
    );
    let listing = run.ctxkit(&["compactions", out_arg]);
    assert_eq!(listing.matches(" · after ~").count(), 2, "{listing}");
}

#[test]
fn compact_warns_when_the_kept_messages_alone_are_too_large() {
    let run = Run::new();
    let file = run.copy("good-large-realistic.jsonl");
    let output = run.ctxkit(&[
        "compact",
        file.to_str().unwrap(),
        "--keep-recent-tokens",
        "2000",
        "--reserve-tokens",
        "1000",
        "--context-window",
        "3000",
        "--json",
    ]);
    assert!(output.contains("warning: the context is still"), "{output}");
    assert!(output.contains("keepRecentTokens"));
}

#[test]
fn branch_moves_the_leaf_with_or_without_a_summary() {
    let run = Run::new();
    let file = run.copy("good-branches.jsonl");
    let path = file.to_str().unwrap();
    let summarized = run.ctxkit(&[
        "branch",
        path,
        "--to",
        "2b904d50",
        "--summarize",
        "--focus",
        "the C regression",
    ]);
    // A user message as the target: the leaf goes before it, the summary attaches there.
    assert!(
        summarized.contains(
            "Moved the leaf to e737c691, before the message 2b904d50 and summarized the 1 entry \
             left behind"
        ),
        "{summarized}"
    );
    assert!(summarized.contains("Focus for this summary: the C regression"));
    assert!(
        summarized.contains("its text, to send again or edit:\n\nDo A.\n"),
        "{summarized}"
    );
    let context = run.ctxkit(&["context", path, "--json"]);
    assert!(context.contains("\"role\": \"branchSummary\""), "{context}");
    assert!(!context.contains("Do A."), "{context}");
    // The first user message, a root: the leaf goes to the start of the session.
    snapshot!(run.ctxkit(&["branch", path, "--to", "34f06f30"]));
    let context = run.ctxkit(&["context", path]);
    assert!(context.contains("0 messages at"), "{context}");
    snapshot!(run.ctxkit(&["branch", path, "--to", "nope"]));
}

#[test]
fn compaction_budgets_come_from_flags_then_settings_then_the_window() {
    let run = Run::new();
    let file = run.copy("good-large-realistic.jsonl");
    let path = file.to_str().unwrap();
    let plan = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["compact", path, "--dry-run", "--json"];
        all.extend_from_slice(args);
        let output = run.ctxkit(&all);
        serde_json::from_str(output.split_once('\n').unwrap().1).unwrap()
    };
    // No plan (`None`) when everything fits in keepRecentTokens: nothing to summarize.
    let kept = |value: &serde_json::Value| -> Option<String> {
        value["plan"]["firstKeptEntryId"]
            .as_str()
            .map(str::to_owned)
    };
    // The whole session fits in the default keep budget; a small window's budget does not.
    assert!(plan(&[])["plan"].is_null());
    let small_window = kept(&plan(&["--context-window", "8192"]));
    run.ctxkit(&["config", "set", "compaction.keepRecentTokens", "2048"]);
    assert_eq!(kept(&plan(&[])), small_window, "the setting applies");
    assert!(
        plan(&["--keep-recent-tokens", "20000"])["plan"].is_null(),
        "the flag wins"
    );
}

#[test]
fn old_format_files_have_stable_ids_and_say_so() {
    let run = Run::new();
    let file = run.copy("legacy-v1-no-version.jsonl");
    let path = file.to_str().unwrap();
    let before = std::fs::read(&file).unwrap();
    let tree = |run: &Run| -> serde_json::Value {
        let output = run.ctxkit(&["tree", path, "--json"]);
        serde_json::from_str(output.split_once('\n').unwrap().1).unwrap()
    };
    let first = tree(&run);
    assert_eq!(tree(&run), first, "ids are the same on every run");
    let ids: Vec<String> = first["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["id"].as_str().unwrap().to_owned())
        .collect();
    let middle = &ids[ids.len() / 2];
    assert!(
        run.ctxkit(&["context", path, "--leaf", middle])
            .starts_with("exit: 0"),
        "an id from `tree` selects a leaf"
    );
    let info = run.ctxkit(&["info", path]);
    assert!(info.contains("format:   v1 (older than v3)"), "{info}");
    let check = run.ctxkit(&["check", path]);
    assert!(
        check.starts_with("exit: 0"),
        "an old format is no problem: {check}"
    );
    assert!(
        check.contains("session format v1 (older than v3)"),
        "{check}"
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "reading never rewrites"
    );

    // An id the file does not hold is refused before the rewrite is announced (QA 2026-12-07).
    for args in [
        vec!["label", path, "nope", "here"],
        vec!["edit-context", path, "nope", "--omit"],
    ] {
        let refused = run.ctxkit(&args);
        assert!(
            refused.contains("nope") && !refused.contains("rewrites it"),
            "{refused}"
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let label = run.ctxkit(&["label", path, middle, "here"]);
    assert!(label.starts_with("exit: 0"), "{label}");
    assert!(
        label.contains("is in session format v1; this write rewrites it as v3"),
        "{label}"
    );
    assert_eq!(tree(&run)["nodes"][0]["id"], first["nodes"][0]["id"]);
    let again = run.ctxkit(&["label", path, middle, "there"]);
    assert!(!again.contains("rewrites it"), "{again}");
}

/// QA 2026-12-07: `compact` on a v2 file announced "this write rewrites it as v3", then found
/// nothing to compact and wrote nothing; and `info` said a v2 file's ids were derived from it,
/// which holds for v1 only. The rewrite is said once it happened.
#[test]
fn a_v2_file_is_said_to_be_rewritten_only_when_it_is() {
    let run = Run::new();
    let file = run.copy("legacy-v2.jsonl");
    let path = file.to_str().unwrap();
    let before = std::fs::read(&file).unwrap();
    let compacted = run.ctxkit(&["compact", path]);
    assert!(compacted.contains("Nothing to compact"), "{compacted}");
    assert!(!compacted.contains("v3"), "{compacted}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let info = run.ctxkit(&["info", path]);
    assert!(
        info.contains("v2 (older than v3): read migrated;"),
        "{info}"
    );
    // `name --clear` of a session without a name writes nothing (QA 2026-12-07: each one
    // appended an entry, the first rewriting the file as v3).
    let cleared = run.ctxkit(&["name", path, "--clear"]);
    assert!(
        cleared.contains("The session has no name; nothing was written"),
        "{cleared}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let compacted = run.ctxkit(&["compact", path, "--keep-recent-tokens", "1"]);
    assert!(
        compacted.contains("Compacted")
            && compacted.contains("was in session format v2; it is v3 now"),
        "{compacted}"
    );
}

/// After an edit (or a compaction) the last usage reported measured another context: the count
/// the context has now leads, as Pi 0.87 and later weigh it (sweep 9: the stale count led, and a
/// compaction looked as if it saved nothing).
#[test]
fn tokens_say_when_pi_087_counts_differently_after_an_edit() {
    let run = Run::new();
    let file = corpus("../corpus-087/087-edits-compaction.jsonl");
    let path = file.to_str().unwrap();
    let output = run.ctxkit(&["tokens", path]);
    let mut lines = output.lines().skip(1);
    assert!(
        lines.next().unwrap().starts_with("1129 tokens in ")
            && output.contains(
                "(estimate:pi, as the last usage reported predates a compaction or context edit)"
            )
            && output.contains("2040 reported by the provider up to message 12"),
        "{output}"
    );
    let json: serde_json::Value = serde_json::from_str(
        run.ctxkit(&["tokens", path, "--json"])
            .split_once('\n')
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(json["projectedTokens"], 1129);
    assert_eq!(
        json["tokens"], 2043,
        "the reported usage still counts for the context"
    );
}

/// The count that leads after an edit is made with the estimator asked for, and names it (the
/// headline said the same Pi estimate for every `--estimator`, naming none).
#[test]
fn tokens_after_an_edit_count_with_the_estimator_chosen() {
    let run = Run::new();
    let file = corpus("../corpus-087/087-edits-compaction.jsonl");
    let path = file.to_str().unwrap();
    let mut headlines = Vec::new();
    for (estimator, source) in [
        ("pi", "estimate:pi"),
        ("cl100k", "tokenizer:cl100k_base"),
        ("o200k", "tokenizer:o200k_base"),
    ] {
        let output = run.ctxkit(&["tokens", path, "--estimator", estimator]);
        let headline = output.lines().nth(1).unwrap().to_owned();
        assert!(
            headline.contains(&format!("({source}, as the last usage reported predates")),
            "{output}"
        );
        let json = run.ctxkit(&["tokens", path, "--estimator", estimator, "--json"]);
        let json: serde_json::Value =
            serde_json::from_str(json.split_once('\n').unwrap().1).unwrap();
        let projected = json["projectedTokens"].as_u64().unwrap();
        assert!(
            headline.starts_with(&format!("{projected} tokens in ")),
            "the headline is `projectedTokens`: {headline} {json}"
        );
        headlines.push(projected);
    }
    assert_ne!(
        headlines[0], headlines[1],
        "pi and cl100k count differently"
    );
    assert_eq!(headlines[0], 1129, "pi keeps Pi 0.87's number");
}

#[test]
fn edit_context_replaces_or_omits_a_message_in_later_contexts_only() {
    let run = Run::new();
    let file = run.copy("good-tool-results.jsonl");
    let path = file.to_str().unwrap();
    let before = std::fs::read_to_string(&file).unwrap();
    let output = run.ctxkit(&["edit-context", path, "acbd604b", "--replace", "[elided]"]);
    assert!(output.starts_with("exit: 0"), "{output}");
    let output = run.ctxkit(&["edit-context", path, "fbd03c3c", "--omit"]);
    assert!(output.starts_with("exit: 0"), "{output}");
    // "… (<edit id>)": an edit is no message, so it cannot be edited.
    let edit_id = output
        .trim_end()
        .rsplit_once('(')
        .unwrap()
        .1
        .trim_end_matches(')')
        .to_owned();
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(
        after.starts_with(&before),
        "existing lines are never changed"
    );
    let context: serde_json::Value = serde_json::from_str(
        run.ctxkit(&["context", path, "--json"])
            .split_once('\n')
            .unwrap()
            .1,
    )
    .unwrap();
    let messages = context["messages"].as_array().unwrap();
    assert!(messages.iter().all(|message| message["role"] != "user"));
    assert!(messages.iter().any(|message| {
        message["content"] == serde_json::json!([{"type": "text", "text": "[elided]"}])
    }));
    let refused = run.ctxkit(&["edit-context", path, &edit_id, "--omit"]);
    assert!(refused.starts_with("exit: 3"), "{refused}");
    assert!(refused.contains("is not a user, assistant"), "{refused}");
}

/// Issue 17, defect 5: read commands say the file is damaged (one stderr line naming `ctxkit
/// check`) and still show what could be read.
#[test]
fn damaged_files_are_read_with_one_warning_line() {
    let run = Run::new();
    run.copy("bad-malformed-middle-line.jsonl");
    for command in ["context", "info", "tree"] {
        let text = run.ctxkit(&[command, "bad-malformed-middle-line.jsonl"]);
        assert!(text.starts_with("exit: 0\n"), "{text}");
        let (_, stderr) = text.split_once("--- stderr\n").expect("a warning");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("is damaged"), "{stderr}");
        assert!(
            stderr.contains("run `ctxkit check bad-malformed-middle-line.jsonl`"),
            "{stderr}"
        );
    }
}

/// The commands that copy or rewrite a damaged session say so too (QA 2026-12-07: `fork-from`
/// and `migrate` said nothing, and the copy lacked the line); a session a newer version wrote is
/// not copied under a v3 header.
#[test]
fn damaged_files_are_copied_and_migrated_with_one_warning_line() {
    let run = Run::new();
    run.copy("bad-malformed-middle-line.jsonl");
    let folder = run.home.path().join("elsewhere");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = folder.to_str().unwrap().to_owned();
    for (arguments, doing) in [
        (
            vec![
                "fork-from",
                "bad-malformed-middle-line.jsonl",
                "--cwd",
                folder.as_str(),
            ],
            "copying what could be read",
        ),
        (
            vec!["fork", "bad-malformed-middle-line.jsonl"],
            "copying what could be read",
        ),
        (
            vec!["migrate", "bad-malformed-middle-line.jsonl"],
            "keeping the other lines",
        ),
    ] {
        let text = run.ctxkit(&arguments);
        assert!(text.starts_with("exit: 0\n"), "{text}");
        let (_, stderr) = text.split_once("--- stderr\n").expect("a warning");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("is damaged") && stderr.contains(doing),
            "{stderr}"
        );
    }
    let newer = run.home.path().join("v4.jsonl");
    let text = std::fs::read_to_string(corpus("bad-malformed-middle-line.jsonl")).unwrap();
    std::fs::write(&newer, text.replacen("\"version\":3", "\"version\":4", 1)).unwrap();
    for arguments in [
        vec!["fork-from", "v4.jsonl", "--cwd", folder.as_str()],
        vec!["fork", "v4.jsonl"],
    ] {
        let refused = run.ctxkit(&arguments);
        assert!(refused.starts_with("exit: 3"), "{refused}");
        assert!(
            refused.contains("copies only sessions it can read whole"),
            "{refused}"
        );
    }
}

/// `compactions` on a file with a line that is JSON but not a message (its head reads, so it is
/// on the path): one warning line and the list, as the other read commands do (it failed, exit 3).
#[test]
fn compactions_warn_of_an_unreadable_message_and_list() {
    let run = Run::new();
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1735689601000}}"#,
        r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":5}}"#,
        r#"{"type":"compaction","id":"c1","parentId":"m2","timestamp":"2025-01-01T00:00:03.000Z","summary":"the summary","firstKeptEntryId":"m2","tokensBefore":100}"#,
        r#"{"type":"message","id":"m3","parentId":"c1","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"user","content":"again","timestamp":1735689604000}}"#,
    ];
    std::fs::write(
        run.home.path().join("damaged.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    for json in [false, true] {
        let mut arguments = vec!["compactions", "damaged.jsonl"];
        if json {
            arguments.push("--json");
        }
        let text = run.ctxkit(&arguments);
        assert!(text.starts_with("exit: 0\n"), "{text}");
        assert!(text.contains("c1"), "{text}");
        let (_, stderr) = text.split_once("--- stderr\n").expect("a warning");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("entry m2 is not a readable message"),
            "{stderr}"
        );
        assert!(
            stderr.contains("run `ctxkit check damaged.jsonl`"),
            "{stderr}"
        );
    }
}

/// QA 2026-12-07: a compaction entry that is JSON of the wrong shape (a number for its summary)
/// failed `compactions` (exit 3) while `context` and `tree` passed over it; it is listed as
/// unreadable. And a `compact --preview` that met a damaged message named its temporary copy,
/// gone by then, and told the user to check it.
#[test]
fn an_unreadable_compaction_is_listed_and_a_preview_names_the_file() {
    let run = Run::new();
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1735689601000}}"#,
        r#"{"type":"compaction","id":"c0","parentId":"m1","timestamp":"2025-01-01T00:00:02.000Z","summary":12345,"firstKeptEntryId":"m1","tokensBefore":100}"#,
        r#"{"type":"message","id":"m2","parentId":"c0","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}"#,
        r#"{"type":"compaction","id":"c1","parentId":"m2","timestamp":"2025-01-01T00:00:04.000Z","summary":"the summary","firstKeptEntryId":"m2","tokensBefore":100}"#,
    ];
    std::fs::write(
        run.home.path().join("damaged.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    let text = run.ctxkit(&["compactions", "damaged.jsonl"]);
    assert!(text.starts_with("exit: 0\n"), "{text}");
    assert!(
        text.contains(
            "c0  2025-01-01T00:00:02.000Z  unreadable (line 3: invalid type: integer `12345`"
        ),
        "{text}"
    );
    assert!(text.contains("c1  "), "{text}");
    // No summary line of blanks for the unreadable one.
    assert!(
        !text
            .lines()
            .any(|line| !line.is_empty() && line.trim().is_empty()),
        "{text:?}"
    );
    let json = run.ctxkit(&["compactions", "damaged.jsonl", "--json"]);
    assert!(json.contains("\"unreadable\": \"line 3: "), "{json}");

    let words = "a long enough reply about the parser ".repeat(60);
    let lines = [
        r#"{"type":"session","version":3,"id":"s2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#.to_owned(),
        format!(r#"{{"type":"message","id":"m1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{words}","timestamp":1}}}}"#),
        r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":42}}"#.to_owned(),
        format!(r#"{{"type":"message","id":"m3","parentId":"m2","timestamp":"2025-01-01T00:00:03.000Z","message":{{"role":"user","content":"{words}","timestamp":3}}}}"#),
    ];
    std::fs::write(
        run.home.path().join("bad-message.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    let preview = run.ctxkit(&[
        "compact",
        "bad-message.jsonl",
        "--preview",
        "--keep-recent-tokens",
        "50",
    ]);
    assert!(!preview.starts_with("exit: 0\n"), "{preview}");
    assert!(!preview.contains("ctxkit-preview-"), "{preview}");
    assert!(preview.contains("`bad-message.jsonl` line 3"), "{preview}");
}

/// Issue 17, defect 4: `compact` on a session without an assistant message printed "Compacted"
/// and wrote nothing (the deferred first write held the entry back).
#[test]
fn compact_without_an_assistant_message_writes_its_entry() {
    let run = Run::new();
    let path = run.home.path().join("users.jsonl");
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"u\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
    );
    let mut parent = "null".to_owned();
    for turn in 0..8 {
        let id = format!("u000000{turn}");
        let words = format!("please look at part {turn} of the parser ").repeat(40);
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:0{turn}.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{words}\",\"timestamp\":1}}}}\n"
        ));
        parent = format!("\"{id}\"");
    }
    std::fs::write(&path, &text).unwrap();
    let output = run.ctxkit(&["compact", "users.jsonl", "--keep-recent-tokens", "300"]);
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(output.contains("Compacted"), "{output}");
    assert!(written.contains("\"type\":\"compaction\""), "{output}");
    assert!(written.starts_with(&text), "appended after the old lines");
}

/// Also in issue 17: `--out` wrote through a dangling symlink.
#[cfg(unix)]
#[test]
fn compact_out_refuses_a_dangling_symlink() {
    let run = Run::new();
    run.copy("good-large-realistic.jsonl");
    let target = run.home.path().join("elsewhere.jsonl");
    std::os::unix::fs::symlink(&target, run.home.path().join("out.jsonl")).unwrap();
    let output = run.ctxkit(&[
        "compact",
        "good-large-realistic.jsonl",
        "--out",
        "out.jsonl",
    ]);
    assert!(output.contains("already exists"), "{output}");
    assert!(!target.exists());
}

/// A session in which the provider compacted the conversation (Anthropic's block on a reply, the
/// compaction entry ctxkit writes after it) opens in `context` and passes `check`.
#[test]
fn a_provider_compaction_opens_in_context_and_check() {
    let run = Run::new();
    let block = r#"{"type":"compaction","content":"PROVIDER-SUMMARY: hello.txt was written."}"#;
    let lines = [
        r#"{"type":"session","version":3,"id":"0192a7c4-1b2c-7d3e-8f40-123456789abc","timestamp":"2026-11-26T10:00:00.000Z","cwd":"/work/demo"}"#.to_owned(),
        r#"{"type":"message","id":"a1000001","parentId":null,"timestamp":"2026-11-26T10:00:01.000Z","message":{"role":"user","content":"EARLY-REQUEST write hello.txt","timestamp":1795687201000}}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"a1000002","parentId":"a1000001","timestamp":"2026-11-26T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"Done: hello.txt is written."}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":300,"output":12,"cacheRead":0,"cacheWrite":0,"totalTokens":312,"iterations":[{{"type":"compaction","input_tokens":1300,"output_tokens":60}}]}},"stopReason":"stop","timestamp":1795687202000,"providerCompaction":{block}}}}}"#
        ),
        format!(
            r#"{{"type":"compaction","id":"a1000003","parentId":"a1000002","timestamp":"2026-11-26T10:00:02.500Z","summary":"PROVIDER-SUMMARY: hello.txt was written.","firstKeptEntryId":"a1000002","tokensBefore":1300,"details":{{"readFiles":[],"modifiedFiles":[],"providerCompaction":{{"provider":"anthropic","api":"anthropic-messages","model":"claude-sonnet-4-5","block":{block}}}}}}}"#
        ),
        r#"{"type":"message","id":"a1000004","parentId":"a1000003","timestamp":"2026-11-26T10:00:03.000Z","message":{"role":"user","content":"what did you do?","timestamp":1795687203000}}"#.to_owned(),
    ];
    let file = run.home.path().join("provider-compaction.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let path = file.to_str().unwrap();
    let context = run.ctxkit(&["context", path]);
    assert!(context.starts_with("exit: 0\n"), "{context}");
    assert!(context.contains("PROVIDER-SUMMARY"), "{context}");
    assert!(context.contains("Done: hello.txt is written."), "{context}");
    assert!(!context.contains("EARLY-REQUEST"), "{context}");
    let json = run.ctxkit(&["context", path, "--json"]);
    assert!(json.starts_with("exit: 0\n"), "{json}");
    assert!(json.contains("providerCompaction"), "{json}");
    let check = run.ctxkit(&["check", path]);
    assert!(check.starts_with("exit: 0\n"), "{check}");
}

/// QA: under `CTXKIT_HOME` a usage error read `Usage: ctxkit branch --home <DIR> --to <TO> <FILE>`,
/// as if `--home` were required (clap lists the arguments a variable filled as typed ones). The
/// usage line is the same with or without the variable.
#[test]
fn usage_errors_read_the_same_under_ctxkit_home() {
    let run = Run::new();
    let with_home = run.ctxkit(&["branch"]);
    snapshot!(with_home);
    let without = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .arg("branch")
        .env_remove("CTXKIT_HOME")
        .env("HOME", run.home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&without.stderr);
    assert!(with_home.ends_with(&*stderr), "{with_home}\n---\n{stderr}");
    assert!(!with_home.contains("--home"), "{with_home}");
    // Help still names the variable.
    let help = run.ctxkit(&["branch", "--help"]);
    assert!(help.contains("CTXKIT_HOME"), "{help}");
}

/// QA r101: `branch --help` said `--summarize` uses the offline summarizer; with `defaultModel`
/// set it calls the model (and needs its key). The help names the rule `compact` follows; the
/// help of `simulate` shows no Rust doc link.
#[test]
fn help_says_which_summarizer_and_shows_no_rust_links() {
    let run = Run::new();
    let branch = run.ctxkit(&["branch", "--help"]);
    assert!(!branch.contains("(offline summarizer)"), "{branch}");
    assert!(branch.contains("else the offline summarizer"), "{branch}");
    let simulate = run.ctxkit(&["simulate", "--help"]);
    assert!(!simulate.contains("[`"), "{simulate}");
}
