//! `ctxkit simulate`: a small generated run's verdict and recommendation (snapshot), a session
//! named by its id, and bad input refused in one line with a hint.

use crate::Run;

/// The verdict and what follows it (the report above holds wall times).
fn verdict(output: &str) -> String {
    let start = output.find("## Verdict").unwrap_or(0);
    // A slow run reports its progress on stderr (`simulating …: 50/120 calls replayed`): a loaded
    // machine's lines, not the report's.
    let mut text: String = output[start..]
        .lines()
        .filter(|line| !line.starts_with("simulating "))
        .map(|line| format!("{line}\n"))
        .collect();
    let timing = seconds_phrase(&text);
    text = text.replace(&timing, "in [SECONDS] s");
    text
}

/// The "in 1.2 s" of the closing line on stderr.
fn seconds_phrase(text: &str) -> String {
    let Some(start) = text.rfind(" in ") else {
        return String::new();
    };
    let end = text[start..]
        .find(" s")
        .map_or(text.len(), |end| start + end + 2);
    text[start + 1..end].to_owned()
}

#[test]
fn a_small_generated_run_prints_the_verdict_defaults_first_and_config_set_lines() {
    let run = Run::new();
    let output = run.ctxkit(&[
        "simulate",
        "--calls",
        "40",
        "--window",
        "8000",
        "--strategy",
        "no-management",
        "--strategy",
        "reference-compaction",
        "--strategy",
        "defaults",
    ]);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    // The defaults first, in the report as in the verdict.
    let report = &output[..output.find("## Verdict").unwrap()];
    let defaults = report.find("| defaults |").unwrap();
    assert!(
        defaults < report.find("| no management |").unwrap(),
        "{output}"
    );
    insta::assert_snapshot!(verdict(&output));
}

#[test]
fn a_session_id_from_the_sessions_directory_replays_and_json_holds_the_verdict() {
    let run = Run::new();
    let folder = run.home.path().join("sessions/--project--");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(
        crate::corpus("good-large-realistic.jsonl"),
        folder.join("2026-01-01T00-00-00-000Z_e2563563-921c-7d33-a161-d9077a3037d8.jsonl"),
    )
    .unwrap();
    let output = run.ctxkit(&[
        "simulate",
        "--session",
        "e2563563",
        "--strategy",
        "defaults",
        "--strategy",
        "no-management",
        "--json",
    ]);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    let json = &output["exit: 0\n".len()..output.find("--- stderr").unwrap()];
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(value["reports"].as_array().unwrap().len(), 1);
    assert_eq!(value["verdict"][0]["strategy"], "defaults");
    assert_eq!(value["verdict"][1]["strategy"], "no_management");
    assert!(value["recommendation"]["commands"].is_array(), "{value}");
    // The one other strategy replayed is what the defaults are measured against.
    assert_eq!(
        value["defaults_margin"]["against"], "no management",
        "{value}"
    );
    assert!(
        value["defaults_margin"]["reference_recall"].is_null(),
        "{value}"
    );
    assert!(
        output.contains("simulated 1 session under 2 strategies in "),
        "{output}"
    );
    // An id nobody has is one line naming where it looked; a session that is not there exits 4
    // as for every command that takes one (it was 3).
    for args in [
        ["simulate", "--session", "ffffffff"].as_slice(),
        &["simulate", "ffffffff"],
    ] {
        let output = run.ctxkit(args);
        assert!(output.starts_with("exit: 4\n"), "{output}");
        assert!(
            output.contains(
                "error: `ffffffff` is neither a file nor the id of a session in `[HOME]/sessions`\n\
                 hint: `ctxkit sessions` lists this directory's sessions"
            ),
            "{output}"
        );
    }
}

/// The JSON of `ctxkit simulate FILE --strategy defaults --json ARGS…`.
fn simulated(run: &Run, file: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let mut command = vec![
        "simulate",
        file.to_str().unwrap(),
        "--strategy",
        "defaults",
        "--json",
    ];
    command.extend_from_slice(args);
    let output = run.ctxkit(&command);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    let json = &output["exit: 0\n".len()..output.find("--- stderr").unwrap()];
    serde_json::from_str(json).unwrap()
}

#[test]
fn a_session_is_billed_as_its_own_model_unless_a_provider_is_named() {
    let run = Run::new();
    // The realistic session's replies (96 on the path to its leaf), as if an agent had made them
    // on GPT-5.4.
    let text = std::fs::read_to_string(crate::corpus("good-large-realistic.jsonl"))
        .unwrap()
        .replace(
            r#""api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5""#,
            r#""api":"openai-responses","provider":"openai","model":"gpt-5.4""#,
        );
    let file = run.home.path().join("gpt.jsonl");
    std::fs::write(&file, text).unwrap();
    let value = simulated(&run, &file, &[]);
    let report = &value["reports"][0];
    assert_eq!(
        report["billed_model"],
        serde_json::json!({"provider": "openai", "model": "gpt-5.4", "replies": 96,
            "of_replies": 96, "priced_as": "openai/gpt-5.4"}),
        "{report}"
    );
    assert_eq!(report["prices"]["input_per_mtok"], 2.5);
    assert_eq!(report["prices"]["cache_write_per_mtok"], 2.5);
    assert_eq!(report["prices"]["cache_rule"]["rule"], "prefix", "{report}");
    // Named, a provider's table bills it as before.
    let value = simulated(&run, &file, &["--provider", "anthropic-5m"]);
    let report = &value["reports"][0];
    assert!(report.get("billed_model").is_none(), "{report}");
    assert_eq!(report["prices"]["input_per_mtok"], 3.0);
    assert_eq!(report["prices"]["cache_write_per_mtok"], 3.75);
    // The Markdown says which model priced it, and how to bill another.
    let output = run.ctxkit(&["simulate", file.to_str().unwrap(), "--strategy", "defaults"]);
    assert!(
        output.contains(
            "The session's model, named by 96 of its 96 replies: `openai/gpt-5.4` (the \
             table's `openai/gpt-5.4`); `--provider` bills another."
        ),
        "{output}"
    );
}

#[test]
fn a_file_that_is_not_a_session_is_one_line_and_a_hint() {
    let run = Run::new();
    let garbage = run.home.path().join("garbage.jsonl");
    std::fs::write(&garbage, b"\x00\xff not json at all\n{\"half\": ").unwrap();
    let output = run.ctxkit(&["simulate", garbage.to_str().unwrap()]);
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), 4, "{output}");
    assert_eq!(lines[0], "exit: 3");
    assert!(
        lines[2].starts_with("error: Cannot replay `[HOME]/garbage.jsonl`: "),
        "{output}"
    );
    assert!(
        lines[3].starts_with("hint: `simulate` reads Pi and ctxkit session files"),
        "{output}"
    );
}

/// A window of no token or a run of no call simulates nothing: a usage error, not a verdict.
#[test]
fn a_zero_window_or_call_count_is_a_usage_error() {
    let run = Run::new();
    for (flag, value) in [("--window", "0"), ("--calls", "0"), ("--window", "many")] {
        let output = run.ctxkit(&["simulate", flag, value]);
        assert!(output.starts_with("exit: 2\n"), "{flag} {value}: {output}");
        assert!(!output.contains("Recommended"), "{output}");
    }
    let output = run.ctxkit(&["simulate", "--window", "0"]);
    assert!(output.contains("must be at least 1"), "{output}");
}

/// QA r101: `simulate` replayed a damaged session without a word, where every other command that
/// reads one prints its `warning:` line. A Pi file with bad lines and a Claude Code transcript with
/// a garbage line now get that line, and the report says so too.
#[test]
fn a_damaged_session_is_replayed_with_the_warning_every_command_prints() {
    let run = Run::new();
    let pi = run.home.path().join("damaged.jsonl");
    std::fs::copy(crate::corpus("bad-malformed-middle-line.jsonl"), &pi).unwrap();
    let transcript = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../ctxkit-import/tests/fixtures/claude-code-session.jsonl"),
    )
    .unwrap();
    let mut lines: Vec<&str> = transcript.lines().collect();
    lines.insert(3, "garbage {{");
    let claude = run.home.path().join("claude.jsonl");
    std::fs::write(&claude, format!("{}\n", lines.join("\n"))).unwrap();
    let output = run.ctxkit(&[
        "simulate",
        pi.to_str().unwrap(),
        claude.to_str().unwrap(),
        "--strategy",
        "defaults",
    ]);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    let info = run.ctxkit(&["info", pi.to_str().unwrap()]);
    let info_warning = info
        .lines()
        .find(|line| line.starts_with("warning:"))
        .unwrap();
    let warnings: Vec<&str> = output
        .lines()
        .filter(|line| line.starts_with("warning:"))
        .collect();
    // The same words as `info`, but for what the command does with what it read.
    assert_eq!(
        warnings[0],
        info_warning.replace("showing what could be read", "replaying what could be read")
    );
    insta::assert_snapshot!(warnings.join("\n"));
    let report_lines: Vec<&str> = output
        .lines()
        .filter(|line| line.contains("The file is damaged"))
        .collect();
    assert_eq!(report_lines.len(), 2, "{output}");
    let value = simulated(&run, &claude, &[]);
    let damage = &value["reports"][0]["session"]["damage"];
    assert_eq!(
        damage[0], "line 4: skipped a malformed line: expected value at column 1",
        "{value}"
    );
}

/// QA 2026-12-07: a message line that is JSON of the wrong shape (a number for a reply's content)
/// stopped the whole replay ("Cannot replay"), where a line that is no JSON is left out with a
/// warning. It is left out the same way, and said.
#[test]
fn a_message_of_the_wrong_shape_is_left_out_of_the_replay_and_said() {
    let run = Run::new();
    let file = run.home.path().join("wrong-shape.jsonl");
    let text = std::fs::read_to_string(crate::corpus("good-large-realistic.jsonl")).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let reply = lines
        .iter_mut()
        .rev()
        .find(|line| line["type"] == "message" && line["message"]["role"] == "assistant")
        .unwrap();
    reply["message"]["content"] = serde_json::json!(42);
    let written: Vec<String> = lines.iter().map(ToString::to_string).collect();
    std::fs::write(&file, written.join("\n") + "\n").unwrap();
    let output = run.ctxkit(&["simulate", file.to_str().unwrap(), "--strategy", "defaults"]);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    assert!(
        output.contains(
            "could not be read (invalid type: integer `42`, expected a sequence); it is left out"
        ),
        "{output}"
    );
}
