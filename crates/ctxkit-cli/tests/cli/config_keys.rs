//! `ctxkit config` and the keys a user types (QA r99): one entry of a map setting set, read and
//! removed in the form `config list` prints and in the dotted form; an unset that changes nothing
//! writes nothing; a string shown so it reads as itself; a project value that waits for trust
//! says so. Each runs the real binary in a temp world.

use crate::resources::World;

fn settings(world: &World) -> serde_json::Value {
    let text = std::fs::read_to_string(world.home().join("settings.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The value and origin `config list` shows for `key`.
fn listed_row<'a>(listed: &'a str, key: &str) -> &'a str {
    listed
        .lines()
        .find_map(|line| line.strip_prefix(key).filter(|rest| rest.starts_with(' ')))
        .map_or("", str::trim_start)
}

/// `config set llm.headers.X-Team` was refused ("`llm.headers` is not an object"), and a model id
/// with a dot (`openai/gpt-4.1`) could not be addressed by any subcommand.
#[test]
fn one_entry_of_a_map_setting_is_set_read_and_removed() {
    let world = World::new();
    world.write(
        "home/settings.json",
        r#"{"llm": {"headers": {"X-Team": "abc"}}, "compaction": {"modelOverrides": {"anthropic/claude-x": {"reserveTokens": 100}, "openai/gpt-4.1": {"reserveTokens": 5000}}}}"#,
    );
    for args in [
        &["config", "set", "llm.headers.X-Team", "def"][..],
        &["config", "set", "llm.headers.X-Other", "xyz"],
        &[
            "config",
            "set",
            "compaction.modelOverrides.anthropic/claude-x.keepRecentTokens",
            "5",
        ],
        &[
            "config",
            "set",
            r#"compaction.modelOverrides["openai/gpt-4.1"].keepRecentTokens"#,
            "7",
        ],
    ] {
        let output = world.ctxkit(args);
        assert!(output.starts_with("exit: 0\nSet `"), "{args:?}: {output}");
    }
    assert_eq!(
        settings(&world),
        serde_json::json!({"llm": {"headers": {"X-Team": "def", "X-Other": "xyz"}},
            "compaction": {"modelOverrides": {
                "anthropic/claude-x": {"reserveTokens": 100, "keepRecentTokens": 5},
                "openai/gpt-4.1": {"reserveTokens": 5000, "keepRecentTokens": 7}}}})
    );
    for key in [
        "compaction.modelOverrides.openai/gpt-4.1.reserveTokens",
        r#"compaction.modelOverrides["openai/gpt-4.1"].reserveTokens"#,
    ] {
        assert_eq!(world.ctxkit(&["config", "get", key]), "exit: 0\n5000\n");
    }
    let output = world.ctxkit(&[
        "config",
        "set",
        "compaction.modelOverrides.openai/gpt-4.1.reserveTokens",
        "1.5",
    ]);
    assert!(output.starts_with("exit: 3"), "{output}");
    let output = world.ctxkit(&[
        "config",
        "unset",
        "compaction.modelOverrides.openai/gpt-4.1",
    ]);
    assert!(output.starts_with("exit: 0\nRemoved `"), "{output}");
    assert_eq!(
        settings(&world)["compaction"]["modelOverrides"],
        serde_json::json!({"anthropic/claude-x": {"reserveTokens": 100, "keepRecentTokens": 5}})
    );
    // An unknown key inside a model's entry is listed with its value, in a form `get` reads.
    world.write(
        "home/settings.json",
        r#"{"compaction": {"modelOverrides": {"openai/gpt-5": {"foo": 1}}}}"#,
    );
    let listed = world.ctxkit(&["config", "list"]);
    assert_eq!(
        listed_row(&listed, r#"compaction.modelOverrides["openai/gpt-5"].foo"#),
        "1  (global, unknown key)"
    );
    let output = world.ctxkit(&[
        "config",
        "get",
        r#"compaction.modelOverrides["openai/gpt-5"].foo"#,
    ]);
    assert!(output.starts_with("exit: 0\n1\n"), "{output}");
}

/// `config set compaction.reserveTokens 1e4` was refused (`found 10000.0`); it is the integer.
#[test]
fn a_whole_number_typed_as_a_float_is_stored_as_the_integer() {
    let world = World::new();
    let output = world.ctxkit(&["config", "set", "compaction.reserveTokens", "1e4"]);
    assert!(output.starts_with("exit: 0\nSet `"), "{output}");
    let text = std::fs::read_to_string(world.home().join("settings.json")).unwrap();
    assert!(text.contains(r#""reserveTokens": 10000"#), "{text}");
    assert_eq!(
        world.ctxkit(&["config", "get", "compaction.reserveTokens"]),
        "exit: 0\n10000\n"
    );
}

/// `config unset` of a key that was not set re-indented the file and rewrote `1e3` and Pi's
/// `websockets`; Pi writes only on a change.
#[test]
fn unsetting_a_key_that_is_not_set_leaves_the_file_as_it_is() {
    let world = World::new();
    let text = r#"{"retry": {"baseDelayMs": 1e3}, "price": 2.50, "websockets": true}"#;
    world.write("home/settings.json", text);
    let output = world.ctxkit(&["config", "unset", "steeringMode"]);
    assert!(output.contains("`steeringMode` was not set in"), "{output}");
    assert_eq!(
        std::fs::read_to_string(world.home().join("settings.json")).unwrap(),
        text
    );
}

/// `config unset` on a file that does not parse said the key "was not set" (exit 0) though the
/// file holds it; it is refused as `config set` is (exit 3), the file left as it is.
#[test]
fn unsetting_a_key_of_a_file_that_does_not_parse_is_refused() {
    let world = World::new();
    let text = "{\n  \"defaultModel\": \"claude-sonnet-4-5\",\n  \"theme\": \"dark\",\n}\n";
    world.write("home/settings.json", text);
    let output = world.ctxkit(&["config", "unset", "defaultModel"]);
    assert!(output.starts_with("exit: 3\n"), "{output}");
    assert!(
        output.contains("could not be loaded, so it was not modified"),
        "{output}"
    );
    assert!(!output.contains("was not set"), "{output}");
    assert_eq!(
        std::fs::read_to_string(world.home().join("settings.json")).unwrap(),
        text
    );
}

/// `config set llm.apiKey "$MYCO_KEY"` with the variable unset stored `""`, sent as
/// `Authorization: Bearer `; an empty credential is refused, nothing written.
#[test]
fn an_empty_api_key_is_refused() {
    let world = World::new();
    for value in ["", "  "] {
        let output = world.ctxkit(&["config", "set", "llm.apiKey", value]);
        assert!(output.starts_with("exit: 3\n"), "{output}");
        assert!(output.contains("`llm.apiKey` would be empty"), "{output}");
    }
    assert!(!world.home().join("settings.json").exists());
}

/// A string `"true"` printed as the boolean would, four spaces as nothing, and `'"dark"'` was
/// stored with its quotes.
#[test]
fn strings_are_stored_and_shown_as_themselves() {
    let world = World::new();
    world.write(
        "home/settings.json",
        r#"{"defaultModel": "true", "markdown": {"codeBlockIndent": "    "}}"#,
    );
    assert_eq!(
        world.ctxkit(&["config", "get", "defaultModel"]),
        "exit: 0\n\"true\"\n"
    );
    let listed = world.ctxkit(&["config", "list"]);
    assert_eq!(
        listed_row(&listed, "markdown.codeBlockIndent"),
        r#""    "  (global)"#
    );
    world.ctxkit(&["config", "set", "theme", r#""dark""#]);
    assert_eq!(settings(&world)["theme"], "dark");
}

/// `config set --project` in an untrusted project said `Set …` only; the next command warned
/// that the value is ignored.
#[test]
fn a_project_value_that_waits_for_trust_says_so() {
    let world = World::new();
    let output = world.ctxkit(&[
        "config",
        "set",
        "--project",
        "llm.baseUrl",
        "http://x.invalid",
    ]);
    assert!(
        output.contains(
            "note: this project is not trusted, so `llm.baseUrl` does not apply until you run \
             `ctxkit trust`"
        ),
        "{output}"
    );
    let output = world.ctxkit(&[
        "config",
        "set",
        "--project",
        "compaction.reserveTokens",
        "100",
    ]);
    // It shapes what is asked of a model: it waits for trust too (QA 2026-12-07).
    assert!(
        output.contains("note: this project is not trusted, so `compaction.reserveTokens`"),
        "{output}"
    );
    let output = world.ctxkit(&["config", "set", "--project", "treeFilterMode", "all"]);
    assert!(!output.contains("note:"), "{output}");
}

/// QA 2026-12-07: `config set tuiMode regular` (a key of Pi's that ctxkit does not read) was
/// refused as an unknown setting with the typo hint; it is named as Pi's, with the way to write
/// it for Pi.
#[test]
fn setting_a_key_of_pis_says_it_is_pis() {
    let world = World::new();
    let refused = world.ctxkit(&["config", "set", "tuiMode", "regular"]);
    assert!(refused.starts_with("exit: 3"), "{refused}");
    assert!(
        refused.contains("hint: `tuiMode` is Pi's setting, which ctxkit does not read"),
        "{refused}"
    );
    let forced = world.ctxkit(&["config", "set", "--force", "tuiMode", "regular"]);
    assert!(forced.starts_with("exit: 0"), "{forced}");
    // Written for Pi, it is no unknown setting.
    assert!(!forced.contains("Unknown setting"), "{forced}");
}

/// QA 2026-12-07: with `CTXKIT_SERVER_TOKEN` set, `config list` showed the file's `server.token`
/// as in effect (origin `global`), though `serve --listen` takes the variable first.
#[test]
fn the_server_token_variable_is_shown_as_the_token_in_effect() {
    let world = World::new();
    world.write(
        "home/settings.json",
        r#"{"server": {"token": "filetoken"}}"#,
    );
    let output = world
        .command(&["config", "list"])
        .env("CTXKIT_SERVER_TOKEN", "envtoken")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&output.stdout);
    assert!(
        listed_row(&listed, "server.token").ends_with("(CTXKIT_SERVER_TOKEN)"),
        "{listed}"
    );
    let got = world
        .command(&["config", "get", "server.token"])
        .env("CTXKIT_SERVER_TOKEN", "envtoken")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&got.stdout).trim(), "envtoken");
    let listed = world.ctxkit(&["config", "list"]);
    assert!(
        listed_row(&listed, "server.token").ends_with("(global)"),
        "{listed}"
    );
}
