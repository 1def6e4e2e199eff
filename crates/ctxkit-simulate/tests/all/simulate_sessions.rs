//! `simulate --session`: real sessions in the shapes Claude Code, Codex and Pi write, replayed under
//! every default strategy with a small window; bad input refused in one line naming the file.

use std::path::{Path, PathBuf};

use ctxkit_engine::CompactionBudgets as _;
use std::process::Command;

use ctxkit_simulate::{
    SimulateError, SimulateOptions, SimulationReport, Strategy, overall, render_overall,
    simulate_session,
};
use serde_json::{Value, json};

/// Model calls in each written session.
const CALLS: usize = 40;
/// A user message every this many calls.
const TASK_CALLS: usize = 10;
/// Small enough that 40 results of ~2,700 characters overflow it.
const WINDOW: u64 = 16_000;

/// A tool output of about 2,700 characters that shows a path and a function of its own.
fn output(call: usize) -> String {
    let mut text = format!(
        "src/area_{call}/module_{call}.rs:12: pub fn handle_request_{call}(input: &str) -> Result<()> {{\n"
    );
    for line in 0..40 {
        text.push_str(&format!(
            "{line:>3} | processing a batch of records for the nightly job\n"
        ));
    }
    text
}

/// The assistant's text before call `call`: it names what the previous result and the one eight
/// calls back showed.
fn reasoning(call: usize) -> String {
    let mut text = String::from("Next step.");
    for back in [1, 8] {
        if let Some(earlier) = call.checked_sub(back) {
            text.push_str(&format!(
                " handle_request_{earlier} in src/area_{earlier}/module_{earlier}.rs matters."
            ));
        }
    }
    text
}

fn prompt(task: usize) -> String {
    format!("Task {task}: find why the nightly job is slow and fix it.")
}

fn iso(second: usize) -> String {
    format!(
        "2026-03-09T11:{:02}:{:02}.000Z",
        second / 60 % 60,
        second % 60
    )
}

fn write_lines(dir: &Path, name: &str, lines: &[Value]) -> PathBuf {
    let path = dir.join(name);
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// A Claude Code transcript: user/assistant records chained by `parentUuid`, tool results as user
/// records holding `tool_result` blocks.
pub(super) fn claude_code(dir: &Path) -> PathBuf {
    claude_code_runs(dir, TASK_CALLS)
}

/// The same transcript with a user message every `task_calls` calls.
fn claude_code_runs(dir: &Path, task_calls: usize) -> PathBuf {
    let session = "5e6f7a8b-0000-4000-8000-000000000001";
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    let mut push = |kind: &str, message: Value, lines: &mut Vec<Value>| {
        let uuid = format!("00000000-0000-4000-8000-{:012}", lines.len());
        lines.push(json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external",
            "cwd": "/home/dev/app", "sessionId": session, "version": "2.0.14", "gitBranch": "main",
            "type": kind, "uuid": uuid, "timestamp": iso(lines.len()), "message": message,
        }));
        parent = Some(uuid);
    };
    for call in 0..CALLS {
        if call % task_calls == 0 {
            push(
                "user",
                json!({"role": "user", "content": prompt(call / task_calls)}),
                &mut lines,
            );
        }
        let id = format!("toolu_{call:04}");
        push(
            "assistant",
            json!({
                "id": format!("msg_{call}"), "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [
                    {"type": "text", "text": reasoning(call)},
                    {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "cargo test"}},
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 10, "output_tokens": 50},
            }),
            &mut lines,
        );
        push(
            "user",
            json!({"role": "user", "content": [
                {"tool_use_id": id, "type": "tool_result", "content": output(call)}
            ]}),
            &mut lines,
        );
    }
    write_lines(dir, "5e6f7a8b-0000-4000-8000-000000000001.jsonl", &lines)
}

/// A Codex rollout: `session_meta`, then `response_item`s (messages, `function_call`,
/// `function_call_output`).
pub(super) fn codex(dir: &Path) -> PathBuf {
    let mut lines = vec![json!({
        "timestamp": iso(0), "type": "session_meta",
        "payload": {"id": "019ccc01-0000-7000-8000-000000000001", "timestamp": iso(0),
                    "cwd": "/home/dev/app", "originator": "codex_cli_rs", "cli_version": "0.46.0"},
    })];
    let item = |payload: Value, lines: &mut Vec<Value>| {
        lines.push(
            json!({"timestamp": iso(lines.len()), "type": "response_item", "payload": payload}),
        );
    };
    for call in 0..CALLS {
        if call % TASK_CALLS == 0 {
            item(
                json!({"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": prompt(call / TASK_CALLS)}]}),
                &mut lines,
            );
        }
        item(
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": reasoning(call)}]}),
            &mut lines,
        );
        let id = format!("call_{call}");
        item(
            json!({"type": "function_call", "name": "shell", "call_id": id,
                   "arguments": json!({"command": ["bash", "-lc", "cargo test"]}).to_string()}),
            &mut lines,
        );
        item(
            json!({"type": "function_call_output", "call_id": id, "output": output(call)}),
            &mut lines,
        );
    }
    write_lines(dir, "rollout-2026-03-09T11-00-00-019ccc01.jsonl", &lines)
}

/// A Pi v3 session, with a compaction entry half way (skipped: the strategies compact on their own).
pub(super) fn pi(dir: &Path) -> PathBuf {
    let mut lines = vec![json!({
        "type": "session", "version": 3, "id": "pi-session-1", "timestamp": iso(0),
        "cwd": "/home/dev/app",
    })];
    let mut parent: Option<String> = None;
    let mut entry = |fields: Value, lines: &mut Vec<Value>| {
        let id = format!("{:08x}", lines.len());
        let mut fields = fields;
        fields["id"] = json!(id);
        fields["parentId"] = json!(parent);
        fields["timestamp"] = json!(iso(lines.len()));
        lines.push(fields);
        parent = Some(id);
    };
    for call in 0..CALLS {
        if call % TASK_CALLS == 0 {
            entry(
                json!({"type": "message", "message": {"role": "user", "content": prompt(call / TASK_CALLS)}}),
                &mut lines,
            );
        }
        if call == CALLS / 2 {
            entry(
                json!({"type": "compaction", "summary": "Earlier work.", "firstKeptEntryId": "00000001",
                       "tokensBefore": 20000}),
                &mut lines,
            );
        }
        let id = format!("call_{call}");
        entry(
            json!({"type": "message", "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": reasoning(call)},
                    {"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": "cargo test"}},
                ],
                "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "stopReason": "toolUse",
            }}),
            &mut lines,
        );
        entry(
            json!({"type": "message", "message": {
                "role": "toolResult", "toolCallId": id, "toolName": "bash",
                "content": [{"type": "text", "text": output(call)}], "isError": false,
            }}),
            &mut lines,
        );
    }
    write_lines(dir, "2026-03-09T11-00-00-000Z_pi-session-1.jsonl", &lines)
}

pub(super) fn options() -> SimulateOptions {
    SimulateOptions {
        context_window: WINDOW,
        parallel: false,
        ..SimulateOptions::default()
    }
}

fn strategy(report: &SimulationReport, wanted: Strategy) -> &ctxkit_simulate::StrategyReport {
    report
        .strategies
        .iter()
        .find(|strategy| strategy.strategy == wanted)
        .unwrap()
}

/// What every replay of these sessions must show, whatever the agent that wrote it.
fn check_report(report: &SimulationReport, format: &str, calls: usize) {
    let source = report.session.as_ref().unwrap();
    assert_eq!(source.format, format);
    assert_eq!(
        report.calls, calls,
        "{format}: every assistant message is a call"
    );
    assert_eq!(report.trace.tasks, CALLS / TASK_CALLS);
    let names: Vec<&str> = report
        .strategies
        .iter()
        .map(|strategy| strategy.name)
        .collect();
    let expected: Vec<&str> = Strategy::DEFAULT
        .iter()
        .map(|strategy| strategy.name())
        .collect();
    assert_eq!(names, expected);
    // Every call names the path and function of the previous result, and from call 8 on also
    // those of the result eight calls back (already named once: counted again at that call).
    assert_eq!(report.trace.named_identifiers, 2 * (CALLS - 1));
    assert_eq!(
        report.trace.named_at_calls,
        2 * (CALLS - 1) + 2 * (CALLS - 8)
    );
    let none = strategy(report, Strategy::NoManagement);
    let defaults = strategy(report, Strategy::Defaults);
    assert!(
        !ctxkit_simulate::worse_than(defaults, none),
        "{format}: defaults ${:.4} ({} refused) worse than no management ${:.4} ({} refused)",
        defaults.total_cost_with_cache,
        defaults.refused_requests,
        none.total_cost_with_cache,
        none.refused_requests,
    );
    // Every strategy a user gets without asking for less answers every request.
    assert_eq!(defaults.refused_requests, 0, "{format}");
    for each in &report.strategies {
        assert_eq!(
            each.requests + each.refused_requests,
            calls,
            "{format} {}",
            each.name
        );
        let calls = each.recall_calls.as_ref().unwrap();
        assert_eq!(
            calls.all.at_risk, report.trace.named_at_calls,
            "{format} {}",
            each.name
        );
        assert!(calls.all.recalled <= none.recall_calls.as_ref().unwrap().all.recalled);
    }
    // No management sends every message: it sees every identifier it names, and overflows; every
    // request above the window is refused, not billed.
    let unmanaged = none.recall_calls.as_ref().unwrap().all;
    assert_eq!(unmanaged.recalled, unmanaged.at_risk, "{format}");
    assert!(none.overflows > 0, "{format}: the window is small");
    assert_eq!(none.refused_requests, none.overflows, "{format}");
    assert_eq!(none.compactions.total(), 0);
    // The strategies that compact do, unless pruning kept every request under their threshold
    // (the recommended strategy keeps one result whole and the names of the others), and answer
    // every request.
    for compacting in [
        Strategy::ReferenceCompaction,
        Strategy::ProviderCompaction,
        Strategy::Recommended,
    ] {
        let each = strategy(report, compacting);
        let threshold = WINDOW.saturating_sub(
            compacting
                .settings(WINDOW)
                .compaction
                .planning(WINDOW)
                .reserve_tokens,
        );
        assert!(
            each.compactions.total() >= 1 || each.input_tokens.max < threshold,
            "{format} {}",
            each.name
        );
        if compacting != Strategy::Recommended {
            assert!(each.compactions.total() >= 1, "{format} {}", each.name);
        }
        // Every request answered (no management's are refused once they pass the window, so its
        // answered tokens are no yardstick).
        assert_eq!(each.refused_requests, 0, "{format} {}", each.name);
        assert!(each.input_tokens.max <= WINDOW, "{format} {}", each.name);
    }
    // The final view counts every identifier at risk by the last call.
    for each in &report.strategies {
        assert_eq!(
            each.recall_final.all.at_risk,
            report.trace.named_identifiers
        );
    }
    // The stand-in never recalls less than the summaries as written.
    for each in &report.strategies {
        let (calls, stand_in) = (
            each.recall_calls.as_ref().unwrap(),
            each.stand_in_calls.as_ref().unwrap(),
        );
        assert!(
            stand_in.all.recalled >= calls.all.recalled,
            "{format} {}",
            each.name
        );
    }
}

#[test]
fn claude_code_codex_and_pi_sessions_replay_under_every_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let claude = simulate_session(&claude_code(dir.path()), &options()).unwrap();
    check_report(&claude, "claude-code", CALLS);
    let rollout = simulate_session(&codex(dir.path()), &options()).unwrap();
    // Codex writes a response's text and its function call as two records: one response, one call.
    check_report(&rollout, "codex", CALLS);
    let session = simulate_session(&pi(dir.path()), &options()).unwrap();
    check_report(&session, "pi", CALLS);
    assert_eq!(session.session.as_ref().unwrap().skipped_summaries, 1);
    // OpenCode (1.x storage), through the importer as well.
    let opencode = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../ctxkit-import/tests/fixtures/shapes/opencode-1x/storage/session/4f1e2d3c5b6a7980/\
         ses_5d0a1b2c3ffeRssFeedParent.json",
    );
    let report = simulate_session(&opencode, &options()).unwrap();
    assert_eq!(report.session.as_ref().unwrap().format, "opencode");
    assert!(report.calls > 0);
    for each in &report.strategies {
        assert_eq!(each.requests, report.calls, "{}", each.name);
    }
    // OpenCode 2.x: a session inside the database, named `opencode.db#<session id>` as `ctxkit
    // import` names it (real databases hold several sessions).
    let database = dir.path().join("opencode.db");
    let sql = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../ctxkit-import/tests/fixtures/shapes/opencode-2x.sql"),
    )
    .unwrap();
    rusqlite::Connection::open(&database)
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    let chosen = PathBuf::from(format!(
        "{}#ses_6e1f00000001ApiTimeouts",
        database.display()
    ));
    let report = simulate_session(&chosen, &options()).unwrap();
    assert_eq!(report.session.as_ref().unwrap().format, "opencode");
    assert!(report.calls > 0);
    // The overall rows add the sessions up.
    let reports = [claude, rollout, session];
    let rows = overall(&reports);
    assert_eq!(rows.len(), Strategy::DEFAULT.len());
    let requests: usize = reports
        .iter()
        .map(|report| report.strategies[0].requests)
        .sum();
    assert_eq!((rows[0].sessions, rows[0].requests), (3, requests));
    // The JSON keeps every field of a generated report (same names) and adds the session's.
    let generated = ctxkit_simulate::simulate(&SimulateOptions {
        calls: 5,
        ..options()
    })
    .unwrap();
    let (generated, real) = (
        serde_json::to_value(&generated).unwrap(),
        serde_json::to_value(&reports[0]).unwrap(),
    );
    let keys =
        |value: &Value| -> Vec<String> { value.as_object().unwrap().keys().cloned().collect() };
    for (generated, real) in [
        (&generated, &real),
        (&generated["trace"], &real["trace"]),
        (&generated["strategies"][0], &real["strategies"][0]),
    ] {
        let real_keys = keys(real);
        for key in keys(generated) {
            assert!(real_keys.contains(&key), "{key}");
        }
    }
    assert!(real["session"].is_object());
    assert!(real["strategies"][0]["recall_calls"].is_object());
    assert!(generated["strategies"][0]["recall_calls"].is_null());
}

/// Replays `files` with the recommended strategy alone; the error of the first that fails.
fn replay(files: &[&Path], window: u64) -> Result<Vec<SimulationReport>, SimulateError> {
    let options = SimulateOptions {
        context_window: window,
        strategies: vec![Strategy::Recommended],
        ..options()
    };
    files
        .iter()
        .map(|file| simulate_session(file, &options))
        .collect()
}

#[test]
fn bad_input_is_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let garbage = dir.path().join("garbage.jsonl");
    std::fs::write(&garbage, b"\x00\xff not json at all\n{\"half\": ").unwrap();
    let header_only = dir.path().join("header-only.jsonl");
    std::fs::write(
        &header_only,
        "{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/\"}\n",
    )
    .unwrap();
    let fifo = dir.path().join("fifo.jsonl");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let missing = dir.path().join("missing.jsonl");
    let directory = dir.path().join("not-a-store");
    std::fs::create_dir(&directory).unwrap();
    let looping = dir.path().join("loop.jsonl");
    std::os::unix::fs::symlink(&looping, &looping).unwrap();
    for bad in [
        &empty,
        &garbage,
        &header_only,
        &fifo,
        &missing,
        &directory,
        &looping,
    ] {
        let error = replay(&[bad], WINDOW).unwrap_err();
        assert!(matches!(error, SimulateError::Session { .. }), "{error}");
        let text = error.to_string();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.starts_with(&format!("Cannot replay `{}`: ", bad.display())),
            "{text}"
        );
    }
    // One bad file among good ones stops the run with the same line.
    let good = claude_code(dir.path());
    let error = replay(&[&good, &missing], WINDOW).unwrap_err();
    assert!(
        error
            .to_string()
            .contains(&format!("`{}`", missing.display())),
        "{error}"
    );
}

#[test]
fn several_sessions_give_one_overall_row_and_a_small_window_compacts() {
    let dir = tempfile::tempdir().unwrap();
    let (claude, rollout) = (claude_code(dir.path()), codex(dir.path()));
    let reports = replay(&[&claude, &rollout], WINDOW).unwrap();
    let text = render_overall(&reports);
    assert!(text.contains("## Overall (2 sessions)"), "{text}");
    assert!(text.contains("| ctxkit recommended | 2 | 80 |"), "{text}");
    // Small enough to make the recommended strategy compact too.
    let reports = replay(&[&claude], 6_000).unwrap();
    let compactions = reports[0].strategies[0].compactions;
    assert!(
        compactions.threshold + compactions.overflow >= 1,
        "{compactions:?}"
    );
}

#[test]
fn a_long_run_is_compacted_between_its_tool_calls() {
    // One prompt and 40 calls whose results overflow the window: the agent loop checks after each
    // tool batch, so the context is compacted inside the run at the threshold, never by crashing
    // into the window (`docs/in-run-compaction.md`).
    let dir = tempfile::tempdir().unwrap();
    let one_run = claude_code_runs(dir.path(), CALLS);
    // (The reference keeps 20,000 recent tokens, more than this window holds, so it has nothing
    // to summarize until an overflow.)
    let strategies = [Strategy::Recommended, Strategy::Defaults];
    let options = SimulateOptions {
        strategies: strategies.to_vec(),
        ..options()
    };
    let report = simulate_session(&one_run, &options).unwrap();
    for wanted in strategies {
        let replayed = strategy(&report, wanted);
        assert!(
            replayed.compactions.threshold >= 1 && replayed.compactions.overflow == 0,
            "{wanted:?}: {:?}",
            replayed.compactions
        );
        assert_eq!(replayed.overflows, 0, "{wanted:?}");
    }
}

/// QA 2026-12-07: a Codex rollout imported first (`ctxkit import`) and then replayed counted each
/// of a response's records as a model call (96 calls replayed as 224, at three times the cost).
/// The imported file's header says where it came from, and it is replayed as the rollout is.
#[test]
fn an_imported_codex_rollout_replays_as_the_rollout() {
    let dir = tempfile::tempdir().unwrap();
    let rollout = codex(dir.path());
    let imported = ctxkit_import::import_file(&rollout, None).unwrap();
    let file = dir.path().join("imported.jsonl");
    imported.write_to(&file).unwrap();
    let from_rollout = ctxkit_simulate::simulate_session(&rollout, &options()).unwrap();
    let from_import = ctxkit_simulate::simulate_session(&file, &options()).unwrap();
    assert_eq!(from_import.session.as_ref().unwrap().format, "pi");
    assert_eq!(from_import.calls, from_rollout.calls);
    assert_eq!(from_import.calls, CALLS);
}
