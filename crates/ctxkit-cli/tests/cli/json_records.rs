//! docs/cli-json.md's table of `--json` records is what the commands print: each row's keys, run
//! on a copy of `examples/demo-session.jsonl`.

use std::path::Path;

use super::Run;

/// The table's rows: the command as written, and the keys listed (of the record, or of a list's
/// items).
fn documented() -> Vec<(String, Vec<String>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli-json.md");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|line| line.starts_with("| `ctxkit "))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let command = cells[0]
                .trim_start_matches("| ")
                .trim_matches('`')
                .to_owned();
            let shape = cells[1].split('`').nth(1).unwrap();
            let keys = shape
                .trim_matches(|character| "[{}]".contains(character))
                .split(", ")
                .filter(|key| !key.is_empty())
                .map(str::to_owned)
                .collect();
            (command, keys)
        })
        .collect()
}

/// The keys of a JSON object, or of a list's first item.
fn keys_of(output: &str, command: &str) -> Vec<String> {
    let json = output
        .strip_prefix("exit: 0\n")
        .unwrap_or_else(|| panic!("{command}: {output}"));
    let json = json.split("--- stderr\n").next().unwrap();
    let value: serde_json::Value =
        serde_json::from_str(json).unwrap_or_else(|error| panic!("{command}: {error}: {json}"));
    let record = match value.as_array() {
        Some(items) => items
            .first()
            .unwrap_or_else(|| panic!("{command}: an empty list"))
            .clone(),
        None => value.clone(),
    };
    record
        .as_object()
        .unwrap_or_else(|| panic!("{command}: not an object: {record}"))
        .keys()
        .cloned()
        .collect()
}

#[test]
fn every_documented_json_record_has_the_documented_keys() {
    let run = Run::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-session.jsonl");
    let folder = run.home.path().join("sessions-here");
    std::fs::create_dir(&folder).unwrap();
    let file = folder.join("demo.jsonl");
    std::fs::copy(&demo, &file).unwrap();
    let branched = run.home.path().join("branched.jsonl");
    std::fs::copy(&demo, &branched).unwrap();
    std::fs::create_dir(run.home.path().join("package")).unwrap();
    assert!(
        run.ctxkit(&["install", "./package"])
            .starts_with("exit: 0\n")
    );
    let file = file.to_str().unwrap();
    let folder = folder.to_str().unwrap();
    let branched = branched.to_str().unwrap();
    let rows = documented();
    let commands: Vec<&str> = rows.iter().map(|(command, _)| command.as_str()).collect();
    let known = [
        "ctxkit info FILE --json",
        "ctxkit sessions --json",
        "ctxkit tree FILE --json",
        "ctxkit context FILE --json",
        "ctxkit tokens FILE --json",
        "ctxkit compact FILE --dry-run --json",
        "ctxkit compact FILE --preview --json",
        "ctxkit compactions FILE --json",
        "ctxkit branch FILE --to ID --json",
        "ctxkit check FILE --json",
        "ctxkit checkpoints FILE --json",
        "ctxkit models --json",
        "ctxkit auth check --provider ollama --json",
        "ctxkit config get KEY --json",
        "ctxkit config list --json",
        "ctxkit resources --json",
        "ctxkit list --json",
    ];
    assert_eq!(
        commands, known,
        "a row added to docs/cli-json.md needs its run here"
    );
    for (command, keys) in rows {
        let arguments: Vec<&str> = match command.as_str() {
            "ctxkit info FILE --json" => vec!["info", file, "--json"],
            "ctxkit sessions --json" => vec!["sessions", "--dir", folder, "--json"],
            "ctxkit tree FILE --json" => vec!["tree", file, "--json"],
            "ctxkit context FILE --json" => vec!["context", file, "--json"],
            "ctxkit tokens FILE --json" => vec!["tokens", file, "--json"],
            "ctxkit compact FILE --dry-run --json" => vec!["compact", file, "--dry-run", "--json"],
            "ctxkit compact FILE --preview --json" => vec![
                "compact",
                file,
                "--preview",
                "--keep-recent-tokens",
                "2000",
                "--json",
            ],
            "ctxkit compactions FILE --json" => vec!["compactions", file, "--json"],
            // One of the user's prompts (`Write integration tests for reservations.`).
            "ctxkit branch FILE --to ID --json" => {
                vec!["branch", branched, "--to", "58104a7f", "--json"]
            }
            "ctxkit check FILE --json" => vec!["check", file, "--json"],
            "ctxkit checkpoints FILE --json" => vec!["checkpoints", file, "--json"],
            "ctxkit models --json" => vec!["models", "--json"],
            "ctxkit auth check --provider ollama --json" => {
                vec!["auth", "check", "--provider", "ollama", "--json"]
            }
            "ctxkit config get KEY --json" => {
                vec!["config", "get", "compaction.keepRecentTokens", "--json"]
            }
            "ctxkit config list --json" => vec!["config", "list", "--json"],
            "ctxkit resources --json" => vec!["resources", "--json"],
            "ctxkit list --json" => vec!["list", "--json"],
            other => panic!("no run for `{other}`"),
        };
        // Compared as sets: the table lists them in the order printed, which `serde_json`'s map
        // does not keep.
        let mut printed = keys_of(&run.ctxkit(&arguments), &command);
        let mut keys = keys;
        printed.sort();
        keys.sort();
        assert_eq!(printed, keys, "{command}");
    }
}

/// `compact --json` reports the written entry's `tokensBefore`, the number `compactions --json`
/// lists for it, beside the estimate its text line compares with `tokensAfter`.
#[test]
fn compact_reports_the_tokens_before_its_entry_records() {
    let run = Run::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-session.jsonl");
    let file = run.home.path().join("demo.jsonl");
    std::fs::copy(&demo, &file).unwrap();
    let file = file.to_str().unwrap();
    let parse = |output: String| -> serde_json::Value {
        let json = output
            .strip_prefix("exit: 0\n")
            .unwrap_or_else(|| panic!("{output}"));
        serde_json::from_str(json.split("--- stderr\n").next().unwrap()).unwrap()
    };
    let written = parse(run.ctxkit(&["compact", file, "--keep-recent-tokens", "2000", "--json"]));
    let listed = parse(run.ctxkit(&["compactions", file, "--json"]));
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|record| record["id"] == written["compactionId"])
        .unwrap_or_else(|| panic!("{written} not in {listed}"));
    assert_eq!(written["tokensBefore"], entry["tokensBefore"], "{written}");
    assert!(
        written["estimatedTokensBefore"].as_u64().unwrap() > 0,
        "{written}"
    );
}
