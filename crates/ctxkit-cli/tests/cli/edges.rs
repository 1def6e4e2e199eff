//! Small things a new user runs into, each pinned: `config unset` leaves no empty parent behind,
//! an `llm.models` entry without `maxOutput`, the help of `sessions --dir`, and what `serve` answers
//! when the session file changed under it or `agent.run` has no model.

use serde_json::{Value, json};

use crate::Run;
use crate::serve::{Server, reply, user};

#[test]
fn config_unset_of_a_made_up_key_leaves_nothing_behind() {
    let run = Run::new();
    let set = run.ctxkit(&["config", "set", "--force", "nonsense.key", "1"]);
    assert!(set.starts_with("exit: 0"), "{set}");
    let unset = run.ctxkit(&["config", "unset", "nonsense.key"]);
    assert!(unset.contains("Removed `nonsense.key`"), "{unset}");
    let file = std::fs::read_to_string(run.home.path().join("settings.json")).unwrap();
    assert!(!file.contains("nonsense"), "{file}");
    let later = run.ctxkit(&["config", "get", "theme"]);
    assert!(!later.contains("Unknown setting"), "{later}");
    // Unsetting what was never set changes no file and warns about nothing later either; a key
    // ctxkit does not know is named as a likely typo (sweep 9), as `config get` names it.
    let again = run.ctxkit(&["config", "unset", "other.made.up"]);
    assert!(
        again.starts_with("exit: 3") && again.contains("Unknown setting `other.made.up`"),
        "{again}"
    );
    let known = run.ctxkit(&["config", "unset", "compaction.reserveTokens"]);
    assert!(known.contains("was not set"), "{known}");
    let file = std::fs::read_to_string(run.home.path().join("settings.json")).unwrap();
    assert!(!file.contains("other"), "{file}");
    assert!(!run.ctxkit(&["config", "list"]).contains("Unknown setting"));
}

#[test]
fn config_unset_keeps_siblings_of_the_removed_key() {
    let run = Run::new();
    run.ctxkit(&["config", "set", "compaction.reserveTokens", "8192"]);
    run.ctxkit(&["config", "set", "compaction.keepRecentTokens", "4000"]);
    run.ctxkit(&["config", "unset", "compaction.reserveTokens"]);
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(run.home.path().join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(file["compaction"], json!({"keepRecentTokens": 4000}));
    run.ctxkit(&["config", "unset", "compaction.keepRecentTokens"]);
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(run.home.path().join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(file, json!({}), "the emptied `compaction` goes too");
}

/// QA r98: `config set compaction '{"enabled":false}'` replaced the whole object and dropped
/// `reserveTokens` without a word; it still does what was asked, and says what went.
#[test]
fn setting_a_whole_object_names_the_keys_it_dropped() {
    let run = Run::new();
    run.ctxkit(&["config", "set", "compaction.reserveTokens", "5000"]);
    let set = run.ctxkit(&["config", "set", "compaction", r#"{"enabled":false}"#]);
    assert!(
        set.contains(
            "note: `compaction` was set whole, so `compaction.reserveTokens` it held went"
        ),
        "{set}"
    );
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(run.home.path().join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(file["compaction"], json!({"enabled": false}));
    let again = run.ctxkit(&["config", "set", "compaction", r#"{"enabled":true}"#]);
    assert!(!again.contains("note:"), "{again}");
}

#[test]
fn a_model_entry_without_max_output_is_accepted_with_a_default() {
    let run = Run::new();
    let set = run.ctxkit(&[
        "config",
        "set",
        "llm.models",
        r#"[{"provider": "myco", "id": "big", "contextWindow": 131072}, {"provider": "myco", "id": "small", "contextWindow": 8000}]"#,
    ]);
    assert!(set.starts_with("exit: 0"), "{set}");
    assert!(!set.contains("warning"), "{set}");
    let listed = run.ctxkit(&["models", "--json"]);
    let body = listed.split_once('\n').unwrap().1;
    let models: Vec<Value> = serde_json::from_str(body).unwrap();
    let find = |id: &str| {
        models
            .iter()
            .find(|model| model["provider"] == "myco" && model["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} missing: {listed}"))
    };
    assert_eq!(find("big")["maxOutput"], 16_384, "Pi's default");
    assert_eq!(
        find("small")["maxOutput"],
        2_000,
        "a quarter of a small window"
    );
    // A maxOutput that is there must still be a number.
    let invalid = run.ctxkit(&[
        "config",
        "set",
        "llm.models",
        r#"[{"provider": "myco", "id": "x", "contextWindow": 8000, "maxOutput": "lots"}]"#,
    ]);
    assert!(!invalid.starts_with("exit: 0"), "{invalid}");
}

#[test]
fn sessions_help_says_dir_is_a_sessions_folder() {
    let run = Run::new();
    let help = run.ctxkit(&["sessions", "--help"]);
    let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("--dir <SESSIONS_DIR>"), "{help}");
    assert!(words.contains("not a project folder"), "{help}");
}

#[test]
fn serve_names_a_deleted_session_file_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Server::start(home.path());
    let created = server.call("session.create", json!({"cwd": home.path()}));
    let file = created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    server.call("message.append", json!({"message": user("one")}));
    server.call("message.append", json!({"message": reply("ok", 100)}));
    assert!(std::path::Path::new(&file).exists());
    std::fs::remove_file(&file).unwrap();
    let answer = server.call("message.append", json!({"message": user("two")}));
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    assert_eq!(
        answer["error"]["data"]["kind"], "session_file_changed",
        "{answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&file) && message.contains("was deleted"),
        "{message}"
    );
    assert!(!std::path::Path::new(&file).exists(), "never recreated");
}

#[test]
fn serve_agent_run_without_a_model_names_the_protocol_way() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Server::start(home.path());
    server.call("session.create", json!({"cwd": home.path()}));
    let answer = server.call("agent.run", json!({"text": "hi"}));
    assert_eq!(answer["error"]["code"], -32002, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(!message.contains("--model"), "{message}");
    assert!(message.contains("pass `model`"), "{message}");
    assert!(message.contains("defaultModel"), "{message}");
}

/// Issue 46: `config schema` prints the JSON schema derived from the settings tree (defaults,
/// ranges, which keys an untrusted project may set), and an unknown key in a settings file is
/// warned about with the known key it most likely meant.
#[test]
fn config_schema_comes_from_the_tree_and_a_typo_in_a_file_names_the_key_it_meant() {
    let run = Run::new();
    let printed = run.ctxkit(&["config", "schema"]);
    let schema: Value = serde_json::from_str(printed.strip_prefix("exit: 0\n").unwrap()).unwrap();
    let compaction = &schema["properties"]["compaction"]["properties"];
    assert_eq!(compaction["reserveTokens"]["default"], json!(16384));
    assert_eq!(
        compaction["reserveTokens"]["maximum"],
        json!(9_007_199_254_740_991_u64)
    );
    // Both shape a model request: an untrusted project's wait for trust.
    assert_eq!(compaction["reserveTokens"].get("x-project"), None);
    assert_eq!(compaction["model"].get("x-project"), None);
    assert_eq!(
        schema["properties"]["treeFilterMode"]["x-project"],
        json!(true)
    );
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"compaction": {"reserveTokenz": 100}}"#,
    )
    .unwrap();
    let listing = run.ctxkit(&["config", "list"]);
    assert!(
        listing.contains(
            "warning: Unknown setting `compaction.reserveTokenz` in `[HOME]/settings.json` at line 1 (kept as is); did you mean `compaction.reserveTokens`?"
        ),
        "{listing}"
    );
    let typo = run.ctxkit(&["config", "set", "compaction.reserveTokenz", "100"]);
    assert!(typo.contains("`compaction.reserveTokens`"), "{typo}");
}

/// A negative number is the value of `config set`, not an option: the setting's own check refuses
/// it in one line naming the file, and the file keeps what it held.
#[test]
fn config_set_reads_a_negative_number_as_the_value_and_refuses_it_by_range() {
    let run = Run::new();
    run.ctxkit(&["config", "set", "compaction.reserveTokens", "8192"]);
    let file = run.home.path().join("settings.json");
    let before = std::fs::read(&file).unwrap();
    let output = run.ctxkit(&["config", "set", "compaction.reserveTokens", "-5"]);
    assert!(output.starts_with("exit: 3\n"), "{output}");
    let stderr = output.split_once("--- stderr\n").unwrap().1;
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{output}");
    assert!(
        lines[0].starts_with("error: Invalid value for `compaction.reserveTokens`"),
        "{output}"
    );
    assert!(lines[0].contains("found -5"), "{output}");
    assert!(lines[1].starts_with("hint: "), "{output}");
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing written");
    // An option after the value is still an option.
    let project = run.ctxkit(&["config", "set", "theme", "light", "--project"]);
    assert!(project.starts_with("exit: 0\n"), "{project}");
}

/// A tester's `config set store.url` of a URL every command refuses (`sslmode=prefer`, a scheme
/// with one slash) was written and the next `ctxkit sessions` exited 2: it is refused as they
/// refuse it, without the password, and nothing is written.
#[test]
fn config_set_refuses_a_store_url_the_commands_would_refuse() {
    let run = Run::new();
    let file = run.home.path().join("settings.json");
    for url in [
        "postgres://u:s3cretpw@127.0.0.1:54329/db?sslmode=prefer",
        "postgres:/u@127.0.0.1/db",
    ] {
        let output = run.ctxkit(&["config", "set", "store.url", url]);
        assert!(output.starts_with("exit: 2\n"), "{output}");
        assert!(output.contains("store URL"), "{output}");
        assert!(!output.contains("s3cretpw"), "{output}");
        assert!(!file.exists(), "{output}");
    }
    let good = run.ctxkit(&[
        "config",
        "set",
        "store.url",
        "postgres://u@127.0.0.1:54329/db",
    ]);
    assert!(good.starts_with("exit: 0\n"), "{good}");
}

/// A tester's `COLUMNS=80 ctxkit tree` wrapped 531 of 913 lines (text cut at 70 characters
/// whatever the depth and the kind before it) and `compactions` printed lines of 202: each line
/// fits the width, and a pipe without `COLUMNS` gets the lines as before.
#[test]
fn tree_and_compactions_fit_the_columns_they_are_given() {
    let run = Run::new();
    let file = run.copy("good-multi-compaction.jsonl");
    let path = file.to_str().unwrap();
    let width = |text: &str| {
        text.lines()
            .map(unicode_width::UnicodeWidthStr::width)
            .max()
            .unwrap_or(0)
    };
    for columns in ["80", "60"] {
        let limit: usize = columns.parse().unwrap();
        for command in ["tree", "compactions"] {
            let output = run.ctxkit_with_env(&[command, path], &[("COLUMNS", columns)]);
            assert!(output.starts_with("exit: 0"), "{output}");
            let stdout = output.split("--- stderr").next().unwrap();
            let widest = width(stdout.trim_start_matches("exit: 0\n"));
            let allowed = if command == "tree" { limit } else { 90 };
            assert!(
                widest <= allowed,
                "{command} at {columns}: {widest}\n{output}"
            );
        }
    }
    let unfitted = run.ctxkit(&["tree", path]);
    assert!(unfitted.starts_with("exit: 0"), "{unfitted}");
}

#[test]
fn compact_out_writes_a_copy_under_its_own_id_or_nothing_at_all() {
    let run = Run::new();
    let file = run.copy("good-large-realistic.jsonl");
    let source_id = header(&file)["id"].clone();
    let out = run.home.path().join("compacted.jsonl");
    let written = run.ctxkit(&[
        "compact",
        file.to_str().unwrap(),
        "--keep-recent-tokens",
        "2000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(written.starts_with("exit: 0"), "{written}");
    let copy = header(&out);
    assert_ne!(copy["id"], source_id, "one session id per file");
    assert_eq!(
        copy["parentSession"].as_str().unwrap(),
        std::path::absolute(&file).unwrap().to_str().unwrap()
    );
    // Nothing to compact: the --out file is not left behind either.
    let again = run.home.path().join("again.jsonl");
    let nothing = run.ctxkit(&[
        "compact",
        out.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(nothing.contains("nothing was written"), "{nothing}");
    assert!(!again.exists());
}

#[test]
fn a_compaction_that_grows_the_context_says_so() {
    let run = Run::new();
    // Four short messages (no usage recorded): any summary outweighs what it replaces.
    let file = run.home.path().join("short.jsonl");
    let mut lines = vec![json!({"type": "session", "version": 3, "id": "s",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"})];
    let mut parent = Value::Null;
    for (id, role, text) in [
        ("a", "user", "hi"),
        ("b", "assistant", "hello"),
        ("c", "user", "ok"),
        ("d", "assistant", "done"),
    ] {
        lines.push(json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 0}}));
        parent = json!(id);
    }
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let output = run.ctxkit(&[
        "compact",
        file.to_str().unwrap(),
        "--keep-recent-tokens",
        "1",
    ]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(output.contains("% larger)"), "{output}");
    assert!(
        output.contains("warning: the summary is larger than what it replaced"),
        "{output}"
    );
}

fn header(file: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(file).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

#[test]
fn labels_and_names_are_one_line_and_an_empty_label_clears() {
    let run = Run::new();
    let file = run.copy("good-minimal.jsonl");
    let path = file.to_str().unwrap();
    let id = first_entry_id(&file);
    let before = std::fs::read(&file).unwrap();
    let nothing = run.ctxkit(&["label", path, &id, "--clear"]);
    assert!(
        nothing.contains("has no label; nothing was written"),
        "{nothing}"
    );
    let nothing = run.ctxkit(&["label", path, &id, ""]);
    assert!(
        nothing.contains("has no label; nothing was written"),
        "{nothing}"
    );
    for args in [
        ["label", path, &id, "two\nlines"],
        ["name", path, "two\nlines", ""],
    ] {
        let args: Vec<&str> = args.into_iter().filter(|arg| !arg.is_empty()).collect();
        let refused = run.ctxkit(&args);
        assert!(refused.contains("is one line of text"), "{refused}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing was written");
    run.ctxkit(&["label", path, &id, "kept"]);
    let cleared = run.ctxkit(&["label", path, &id, ""]);
    assert!(
        cleared.contains(&format!("Cleared the label of {id}")),
        "{cleared}"
    );
    // QA (2026-12-07): `name FILE ""` cleared the name, so an unset variable lost it unsaid
    // (serve's `session.name` refuses it). The name is cleared by `--clear` only.
    run.ctxkit(&["name", path, "kept name"]);
    for blank in ["", "   "] {
        let refused = run.ctxkit(&["name", path, blank]);
        assert!(
            refused.starts_with("exit: 2") && refused.contains("--clear"),
            "{refused}"
        );
    }
    let info = run.ctxkit(&["info", path]);
    assert!(info.contains("kept name"), "{info}");
    let cleared = run.ctxkit(&["name", path, "--clear"]);
    assert!(cleared.contains("Cleared the session name"), "{cleared}");
}

#[test]
fn a_write_to_a_damaged_file_says_what_it_does() {
    let run = Run::new();
    let file = run.copy("bad-truncated-last-line.jsonl");
    let id = first_entry_id(&file);
    let output = run.ctxkit(&["label", file.to_str().unwrap(), &id, "x"]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains("is damaged (line 4: last line is cut off")
            && output.contains("an append was interrupted); writing after what could be read"),
        "{output}"
    );
}

fn first_entry_id(file: &std::path::Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let entry: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    entry["id"].as_str().unwrap().to_owned()
}

#[test]
fn fork_from_copies_into_a_project_folder_and_refuses_a_cwd_that_is_not_one() {
    let run = Run::new();
    let file = run.copy("good-minimal.jsonl");
    let project = run.home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let output = run.ctxkit(&[
        "fork-from",
        file.to_str().unwrap(),
        "--cwd",
        project.to_str().unwrap(),
    ]);
    assert!(output.starts_with("exit: 0"), "{output}");
    let copy = std::path::PathBuf::from(
        output
            .lines()
            .nth(1)
            .unwrap()
            .replace("[HOME]", run.home.path().to_str().unwrap()),
    );
    let header = header(&copy);
    assert_eq!(header["cwd"], project.to_str().unwrap());
    assert_ne!(header["id"], self::header(&file)["id"]);
    for cwd in [file.to_str().unwrap(), "/nonexistent/folder"] {
        let refused = run.ctxkit(&["fork-from", file.to_str().unwrap(), "--cwd", cwd]);
        assert!(refused.contains("is not a folder"), "{refused}");
    }
}

#[test]
fn a_missing_file_or_folder_is_exit_4_for_sessions_and_simulate() {
    let run = Run::new();
    let missing = run.home.path().join("missing");
    let listed = run.ctxkit(&["sessions", "--dir", missing.to_str().unwrap()]);
    assert!(listed.starts_with("exit: 4"), "{listed}");
    assert!(listed.contains("cannot read directory"), "{listed}");
    let replayed = run.ctxkit(&["simulate", "missing.jsonl"]);
    assert!(replayed.starts_with("exit: 4"), "{replayed}");
    assert!(
        replayed.contains("error: cannot open `missing.jsonl`"),
        "{replayed}"
    );
}

#[test]
fn config_get_of_an_unknown_key_says_so_as_config_set_does() {
    let run = Run::new();
    let typo = run.ctxkit(&["config", "get", "compaction.reserveTokenz"]);
    assert!(typo.starts_with("exit: 1"), "{typo}");
    assert!(
        typo.contains(
            "Unknown setting `compaction.reserveTokenz`; did you mean `compaction.reserveTokens`?"
        ),
        "{typo}"
    );
    let unset = run.ctxkit(&["config", "get", "theme"]);
    assert!(unset.contains("`theme` is not set"), "{unset}");
}

#[test]
fn config_get_of_a_wrongly_typed_value_warns_as_config_list_does() {
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        "{\n  \"compaction\": {\n    \"reserveTokens\": \"lots\"\n  },\n  \"theme\": \"dark\"\n}\n",
    )
    .unwrap();
    let wrong = run.ctxkit(&["config", "get", "compaction.reserveTokens"]);
    assert!(wrong.starts_with("exit: 0"), "{wrong}");
    assert!(wrong.contains("lots"), "{wrong}");
    assert!(
        wrong.contains("warning: Invalid value for `compaction.reserveTokens`")
            && wrong.contains("at line 3"),
        "{wrong}"
    );
    // The section above it names the same problem; a key elsewhere does not.
    let section = run.ctxkit(&["config", "get", "compaction"]);
    assert!(section.contains("warning: Invalid value"), "{section}");
    let other = run.ctxkit(&["config", "get", "theme"]);
    assert!(!other.contains("warning"), "{other}");
}

/// Defaults QA: today's models were missing from the table, so `defaultModel:
/// anthropic/claude-opus-4-8` ran with automatic compaction off and its calls were of unknown
/// price. `ctxkit models WORD…` finds it with its window and price; a user's `cost` (with a tier)
/// replaces the built-in one.
#[test]
fn todays_models_are_known_with_their_prices_and_a_users_price_wins() {
    let run = Run::new();
    let listed = run.ctxkit(&["models", "opus", "4-8", "--json"]);
    let body = listed.strip_prefix("exit: 0\n").unwrap();
    let models: Vec<Value> = serde_json::from_str(body).unwrap();
    let opus = models
        .iter()
        .find(|model| model["provider"] == "anthropic")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(opus["id"], "claude-opus-4-8");
    assert_eq!(opus["contextWindow"], 1_000_000);
    assert_eq!(opus["cost"]["output"], 25.0);
    assert!(
        models
            .iter()
            .all(|model| model["id"].as_str().unwrap().contains("opus")),
        "{listed}"
    );
    let set = run.ctxkit(&[
        "config",
        "set",
        "llm.models",
        r#"[{"provider": "anthropic", "id": "claude-opus-4-8", "contextWindow": 1000000,
            "cost": {"input": 4, "output": 20, "tiers": [{"inputTokensAbove": 200000, "input": 8}]}}]"#,
    ]);
    assert!(
        set.starts_with("exit: 0") && !set.contains("warning"),
        "{set}"
    );
    let text = run.ctxkit(&["models", "anthropic/claude-opus-4-8"]);
    assert!(
        text.contains("$4 in / $20 out per M (more for long prompts)"),
        "{text}"
    );
    let none = run.ctxkit(&["models", "no-such-model"]);
    assert!(
        none.contains("No known model matches `no-such-model`"),
        "{none}"
    );
}

/// Found by a bulk sweep: `tree` of a session file that holds only its header printed nothing
/// (exit 0), which read as a failure.
#[test]
fn tree_of_a_header_only_session_says_it_is_empty() {
    let run = Run::new();
    let file = run.home.path().join("header.jsonl");
    std::fs::write(
        &file,
        "{\"type\":\"session\",\"version\":3,\"id\":\"h\",\"timestamp\":\"2026-12-04T00:00:00.000Z\",\"cwd\":\"/tmp\"}\n",
    )
    .unwrap();
    let output = run.ctxkit(&["tree", &file.display().to_string()]);
    assert!(
        output.contains("(empty session: a header and no entries)"),
        "{output}"
    );
}

/// `sessionDir` in the user's settings was documented and shown by `config list`, and nothing
/// read it: sessions went to the home's `sessions` folder. It names the folder the per-project
/// folders are kept in; `--sessions-dir` still comes first, and a project cannot set it.
#[test]
fn the_users_session_dir_is_where_sessions_are_kept() {
    let run = Run::new();
    let file = run.copy("good-minimal.jsonl");
    let project = run.home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"sessionDir": "[HOME]/kept-here"}"#
            .replace("[HOME]", run.home.path().to_str().unwrap()),
    )
    .unwrap();
    let forked = run.ctxkit(&[
        "fork-from",
        file.to_str().unwrap(),
        "--cwd",
        project.to_str().unwrap(),
    ]);
    assert!(forked.starts_with("exit: 0"), "{forked}");
    assert!(forked.contains("[HOME]/kept-here/--"), "{forked}");
    let listed = run.ctxkit(&["sessions", "--all"]);
    assert!(listed.contains("[HOME]/kept-here/--"), "{listed}");
    let flag = run.home.path().join("flagged");
    let overridden = run.ctxkit(&[
        "--sessions-dir",
        flag.to_str().unwrap(),
        "fork-from",
        file.to_str().unwrap(),
        "--cwd",
        project.to_str().unwrap(),
    ]);
    assert!(overridden.contains("[HOME]/flagged/--"), "{overridden}");
}
