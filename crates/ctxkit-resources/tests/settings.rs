//! Settings: merging, defaults, migrations, concurrent edits, broken files, and locking with real
//! processes.

use ctxkit_settings::{
    ResourceKind, SettingOrigin, SettingsDiagnostic, SettingsError, SettingsManager, SettingsScope,
};
use serde_json::json;

use crate::common::{World, json_file, read, write};

/// Project settings override global ones key by key inside objects, one level deep.
#[test]
fn nested_setting_objects_merge_one_level_deep() {
    let world = World::new();
    write(
        world.agent().join("settings.json"),
        r#"{"theme":"dark","compaction":{"enabled":true,"reserveTokens":16384}}"#,
    );
    write(
        world.project().join("settings.json"),
        r#"{"compaction":{"reserveTokens":8192}}"#,
    );
    let mut manager = SettingsManager::load(&world.env);
    // A project's budgets apply once it is trusted (they shape what a model is sent).
    manager.set_project_trusted(true);
    assert_eq!(manager.settings().theme.as_deref(), Some("dark"));
    let value = |key: &str| {
        manager
            .get(key)
            .unwrap()
            .value
            .map(|value| value.to_string())
    };
    assert_eq!(value("compaction.enabled").as_deref(), Some("true"));
    assert_eq!(
        value("compaction.keepRecentTokens").as_deref(),
        Some("10000")
    );
    let lookup = manager.get("compaction.reserveTokens").unwrap();
    assert_eq!(
        lookup.value.map(|value| value.to_string()).as_deref(),
        Some("8192")
    );
    assert_eq!(lookup.origin, Some(SettingOrigin::Project));
    assert_eq!(
        manager.get("compaction.keepRecentTokens").unwrap().origin,
        Some(SettingOrigin::Strategy)
    );
}

/// A project array replaces the global one in the merged view; each scope still reads its own.
#[test]
fn arrays_replace_in_the_merged_view_but_scopes_stay_separate() {
    let world = World::new();
    write(
        world.agent().join("settings.json"),
        r#"{"extensions":["a.ts"]}"#,
    );
    write(
        world.project().join("settings.json"),
        r#"{"extensions":["b.ts"]}"#,
    );
    let manager = SettingsManager::load(&world.env);
    assert_eq!(manager.settings().extensions, vec!["b.ts"]);
    assert_eq!(
        manager.resource_entries_in(SettingsScope::Global, ResourceKind::Extensions),
        vec!["a.ts"]
    );
    assert_eq!(
        manager.resource_entries_in(SettingsScope::Project, ResourceKind::Extensions),
        vec!["b.ts"]
    );
}

/// Empty settings give the defaults of the schema (compaction, branch summaries, retries).
#[test]
fn empty_settings_give_the_documented_defaults() {
    let world = World::new();
    let mut manager = SettingsManager::load(&world.env);
    let value = |key: &str| {
        manager
            .get(key)
            .unwrap()
            .value
            .map(|value| value.to_string())
    };
    assert_eq!(
        (
            value("compaction.enabled"),
            value("compaction.reserveTokens"),
            value("compaction.keepRecentTokens")
        ),
        (
            Some("true".to_owned()),
            Some("16384".to_owned()),
            // The recommended strategy's, which an empty settings file starts from.
            Some("10000".to_owned())
        )
    );
    let branch = manager.settings().branch_summary;
    assert_eq!((branch.reserve_tokens, branch.skip_prompt), (16384, false));
    let retry = manager.settings().retry;
    assert_eq!(
        (retry.enabled, retry.max_retries, retry.base_delay_ms),
        (true, 3, 2000)
    );
    assert_eq!(retry.provider.max_retry_delay_ms, 60000);
    assert_eq!(retry.max_agent_delay_ms, 60000);
    assert_eq!(retry.provider.timeout_ms, None);
    assert_eq!(retry.provider.max_retries, None);
    assert_eq!(manager.settings().transport, "auto");
    assert_eq!(manager.settings().steering_mode, "one-at-a-time");
    assert_eq!(manager.settings().follow_up_mode, "one-at-a-time");
    assert!(manager.settings().enable_skill_commands);
    assert_eq!(manager.settings().terminal.image_width_cells, 60);
    assert_eq!(manager.settings().tree_filter_mode, "default");
    assert_eq!(manager.settings().theme, None);
    assert!(manager.drain_errors().is_empty());
}

/// Legacy keys (`queueMode`, `websockets`, object-form `skills`) are migrated in memory and reach
/// the file on the next save.
#[test]
fn legacy_keys_are_migrated_and_written_on_the_next_save() {
    let world = World::new();
    let path = world.agent().join("settings.json");
    write(
        &path,
        r#"{"queueMode":"all","websockets":true,"skills":{"enableSkillCommands":false,"customDirectories":["~/sk"]},"retry":{"maxDelayMs":5000}}"#,
    );
    let mut manager = SettingsManager::load(&world.env);
    assert_eq!(manager.settings().steering_mode, "all");
    assert_eq!(manager.settings().transport, "websocket");
    assert_eq!(manager.settings().skills, vec!["~/sk"]);
    assert!(!manager.settings().enable_skill_commands);
    assert_eq!(manager.settings().retry.provider.max_retry_delay_ms, 5000);
    manager
        .set_from_text(SettingsScope::Global, "theme", "light")
        .unwrap();
    manager.flush().unwrap();
    let file = json_file(&path);
    assert_eq!(file["steeringMode"], json!("all"));
    assert_eq!(file["transport"], json!("websocket"));
    assert_eq!(file["skills"], json!(["~/sk"]));
    assert_eq!(file["enableSkillCommands"], json!(false));
    assert_eq!(
        file["retry"],
        json!({"provider": {"maxRetryDelayMs": 5000}})
    );
    for gone in ["queueMode", "websockets"] {
        assert!(file.get(gone).is_none(), "{gone}");
    }
}

/// A key another process wrote after loading survives a save of a different key.
#[test]
fn external_edits_to_other_keys_survive_a_save() {
    let world = World::new();
    let path = world.agent().join("settings.json");
    write(
        &path,
        r#"{"theme":"dark","packages":["npm:pi-mcp-adapter"]}"#,
    );
    let mut manager = SettingsManager::load(&world.env);
    write(&path, r#"{"theme":"dark","packages":[]}"#);
    manager
        .set_from_text(SettingsScope::Global, "theme", "light")
        .unwrap();
    manager.flush().unwrap();
    assert_eq!(json_file(&path), json!({"theme": "light", "packages": []}));
}

/// For the key this process changed its value wins over an external edit; the project file's
/// external edits survive.
#[test]
fn an_in_memory_change_wins_for_its_key_and_other_edits_survive() {
    let world = World::new();
    let path = world.agent().join("settings.json");
    write(&path, r#"{"defaultThinkingLevel":"medium"}"#);
    let mut manager = SettingsManager::load(&world.env);
    write(&path, r#"{"defaultThinkingLevel":"low"}"#);
    manager
        .set_from_text(SettingsScope::Global, "defaultThinkingLevel", "high")
        .unwrap();
    manager.flush().unwrap();
    assert_eq!(json_file(&path)["defaultThinkingLevel"], json!("high"));

    let project = world.project().join("settings.json");
    write(&project, r#"{"prompts":["a.md"]}"#);
    let mut manager = SettingsManager::load(&world.env);
    write(&project, r#"{"prompts":["b.md"]}"#);
    manager
        .set_from_text(SettingsScope::Project, "extensions", r#"["x.ts"]"#)
        .unwrap();
    manager.flush().unwrap();
    assert_eq!(
        json_file(&project),
        json!({"prompts": ["b.md"], "extensions": ["x.ts"]})
    );
}

/// Changing one key inside an object keeps a sibling key another process added.
#[test]
fn a_nested_key_edit_keeps_an_external_sibling() {
    let world = World::new();
    let path = world.agent().join("settings.json");
    write(
        &path,
        r#"{"compaction":{"enabled":true,"reserveTokens":16384}}"#,
    );
    let mut manager = SettingsManager::load(&world.env);
    write(
        &path,
        r#"{"compaction":{"enabled":true,"reserveTokens":16384,"keepRecentTokens":1}}"#,
    );
    manager
        .set_from_text(SettingsScope::Global, "compaction.enabled", "false")
        .unwrap();
    manager.flush().unwrap();
    assert_eq!(
        json_file(&path)["compaction"],
        json!({"enabled": false, "reserveTokens": 16384, "keepRecentTokens": 1})
    );
}

/// A settings file that does not parse is reported once and is never overwritten.
#[test]
fn a_broken_settings_file_is_reported_once_and_never_written() {
    let world = World::new();
    let path = world.agent().join("settings.json");
    write(&path, "{ invalid");
    let mut manager = SettingsManager::load(&world.env);
    let errors = manager.drain_errors();
    assert_eq!(errors.len(), 1);
    assert!(matches!(&errors[0], SettingsError::Parse { path: p, line: 1, .. } if *p == path));
    assert!(manager.drain_errors().is_empty());
    assert!(manager.load_failed(SettingsScope::Global));
    manager
        .set_from_text(SettingsScope::Global, "theme", "light")
        .unwrap();
    // The in-memory change still applies for the session.
    assert_eq!(manager.settings().theme.as_deref(), Some("light"));
    let error = manager.flush().unwrap_err();
    assert!(
        matches!(error, SettingsError::ScopeNotWritable { .. }),
        "{error}"
    );
    assert_eq!(read(&path), "{ invalid");

    write(world.project().join("settings.json"), "[1,");
    let mut manager = SettingsManager::load(&world.env);
    let errors = manager.drain_errors();
    assert_eq!(errors.len(), 2);
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(
        messages[0].contains(".ctxkit/settings.json"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("proj/.ctxkit/settings.json"),
        "{messages:?}"
    );
}

/// Loading settings creates no directory; a project write creates only the project's file.
#[test]
fn reading_settings_never_creates_the_project_directory() {
    let world = World::new();
    let mut manager = SettingsManager::load(&world.env);
    assert!(!world.project().exists());
    assert!(!world.agent().exists());
    manager
        .set_from_text(
            SettingsScope::Project,
            "packages",
            r#"[{"source": "npm:test-pkg"}]"#,
        )
        .unwrap();
    manager.flush().unwrap();
    assert_eq!(
        json_file(world.project().join("settings.json")),
        json!({"packages": [{"source": "npm:test-pkg"}]})
    );
    assert!(!world.agent().exists());
}

/// A saved settings file is JSON indented by two spaces, without a trailing newline.
#[test]
fn settings_are_written_with_two_space_indentation_and_no_final_newline() {
    let world = World::new();
    let mut manager = SettingsManager::load(&world.env);
    manager
        .set_from_text(SettingsScope::Global, "theme", "light")
        .unwrap();
    manager.flush().unwrap();
    assert_eq!(
        read(world.agent().join("settings.json")),
        "{\n  \"theme\": \"light\"\n}"
    );
}

#[test]
fn unknown_keys_are_kept_and_warned_invalid_values_reported_with_file_and_key() {
    let world = World::new();
    let path = world.agent().join("settings.json");
    write(
        &path,
        r#"{"myTool":{"x":1},"compaction":{"reserveTokens":"lots"},"theme":"dark"}"#,
    );
    let mut manager = SettingsManager::load(&world.env);
    let diagnostics = manager.diagnostics();
    assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    assert!(
        matches!(&diagnostics[0], SettingsDiagnostic::UnknownKey { key, .. } if key == "myTool")
    );
    assert!(diagnostics[1].is_error());
    assert!(
        diagnostics[1]
            .message()
            .contains("`compaction.reserveTokens`"),
        "{}",
        diagnostics[1].message()
    );
    // Setting a known key to a wrong type fails and names the file and key.
    let error = manager
        .set_from_text(SettingsScope::Global, "compaction.enabled", "maybe")
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("`compaction.enabled`"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    let error = manager
        .set_from_text(SettingsScope::Global, "editorPaddingX", "9")
        .unwrap_err();
    assert!(error.to_string().contains("from 0 to 3"), "{error}");
    assert!(
        manager
            .set_from_text(SettingsScope::Global, "theme.x", "1")
            .is_err()
    );

    // An unknown key is stored and reported as a warning; foreign keys survive the write.
    let warnings = manager
        .set_from_text(SettingsScope::Global, "otherTool.level", "3")
        .unwrap();
    assert_eq!(warnings.len(), 1);
    manager
        .set_from_text(SettingsScope::Global, "retry.provider.timeoutMs", "1500")
        .unwrap();
    manager.flush().unwrap();
    let file = json_file(&path);
    assert_eq!(file["myTool"], json!({"x": 1}));
    assert_eq!(file["otherTool"], json!({"level": 3}));
    assert_eq!(file["retry"], json!({"provider": {"timeoutMs": 1500}}));
    assert_eq!(manager.settings().retry.provider.timeout_ms, Some(1500));
    assert_eq!(
        manager.get("retry.provider.timeoutMs").unwrap().origin,
        Some(SettingOrigin::Global)
    );
}

#[test]
fn unset_removes_key_on_disk() {
    let world = World::new();
    let path = world.agent().join("settings.json");
    write(&path, r#"{"theme":"dark","compaction":{"enabled":false}}"#);
    let mut manager = SettingsManager::load(&world.env);
    assert!(
        manager
            .unset(SettingsScope::Global, "compaction.enabled")
            .unwrap()
    );
    manager.flush().unwrap();
    // The parent the removal emptied goes too (issue 32: an emptied unknown parent warned forever).
    assert_eq!(json_file(&path), json!({"theme": "dark"}));
    assert_eq!(
        manager
            .get("compaction.enabled")
            .unwrap()
            .value
            .map(|value| value.to_string()),
        Some("true".to_owned())
    );
}

#[test]
fn list_shows_every_known_leaf_then_unknown_keys() {
    let world = World::new();
    write(
        world.agent().join("settings.json"),
        r#"{"zzz":1,"theme":"dark"}"#,
    );
    let manager = SettingsManager::load(&world.env);
    let entries = manager.list();
    let theme = entries.iter().find(|entry| entry.key == "theme").unwrap();
    assert_eq!(
        theme.value.as_ref().map(|value| value.display_text()),
        Some("dark".to_owned())
    );
    let reserve = entries
        .iter()
        .find(|entry| entry.key == "compaction.reserveTokens")
        .unwrap();
    assert_eq!(reserve.origin, Some(SettingOrigin::Default));
    let last = entries.last().unwrap();
    assert_eq!((last.key.as_str(), last.known), ("zzz", false));
}

const CHILD_PATH_VAR: &str = "CTXKIT_RESOURCES_TEST_SETTINGS_PATH";
const CHILD_PREFIX_VAR: &str = "CTXKIT_RESOURCES_TEST_PREFIX";
const WRITES_PER_PROCESS: usize = 25;

/// Not a test on its own: the body of the child processes spawned by
/// `concurrent_writers_from_two_processes_lose_no_key`. Does nothing when run normally.
#[test]
fn settings_writer_child_process() {
    let (Ok(path), Ok(prefix)) = (
        std::env::var(CHILD_PATH_VAR),
        std::env::var(CHILD_PREFIX_VAR),
    ) else {
        return;
    };
    let path = std::path::PathBuf::from(path);
    let unused_project = path.with_file_name("no-project.json");
    for index in 0..WRITES_PER_PROCESS {
        let mut manager = SettingsManager::from_paths(path.clone(), unused_project.clone());
        assert!(manager.drain_errors().is_empty());
        manager
            .set_from_text(
                SettingsScope::Global,
                &format!("{prefix}{index}"),
                &index.to_string(),
            )
            .unwrap();
        manager.flush().unwrap();
    }
}

#[test]
fn concurrent_writers_from_two_processes_lose_no_key() {
    let world = World::new();
    let path = world.agent().join("settings.json");
    write(&path, r#"{"theme":"dark"}"#);
    let exe = std::env::current_exe().unwrap();
    let children: Vec<std::process::Child> = ["a", "b"]
        .iter()
        .map(|prefix| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "settings::settings_writer_child_process",
                    "--quiet",
                ])
                .env(CHILD_PATH_VAR, &path)
                .env(CHILD_PREFIX_VAR, prefix)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let file = json_file(&path);
    let object = file.as_object().unwrap();
    assert_eq!(object.len(), 1 + 2 * WRITES_PER_PROCESS, "{file}");
    for prefix in ["a", "b"] {
        for index in 0..WRITES_PER_PROCESS {
            assert_eq!(object[&format!("{prefix}{index}")], json!(index));
        }
    }
    assert_eq!(object["theme"], json!("dark"));
}
