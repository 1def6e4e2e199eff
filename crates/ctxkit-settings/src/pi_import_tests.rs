use std::path::PathBuf;

use serde_json::json;

use super::*;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/pi-import/models.json")
}

fn left_out_at<'a>(import: &'a PiImport, what: &str) -> Vec<&'a str> {
    import
        .left_out
        .iter()
        .filter(|left| left.what == what)
        .map(|left| left.why.as_str())
        .collect()
}

#[test]
fn endpoints_carry_literal_keys_and_headers_only() {
    let import = import_pi_models(&fixture()).unwrap();
    let names: Vec<&str> = import
        .endpoints
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(names, ["anthropic", "lab", "radius"]);
    assert_eq!(
        import.endpoints[0].1,
        json!({"baseUrl": "https://gw.corp.example/anthropic", "apiKey": "sk-gw-literal-0000",
            "headers": {"X-Team": "core", "X-Price": "$5"}})
    );
    // The command is not run; the entry goes without a key (the saved one or the variable).
    assert_eq!(
        import.endpoints[1].1,
        json!({"baseUrl": "http://10.0.0.7:8000/v1", "api": "openai-completions"})
    );
    assert!(left_out_at(&import, "providers.lab.apiKey")[0].contains("runs a command"));
    assert!(left_out_at(&import, "providers.anthropic.headers.X-Token")[0].contains("`GW_TOKEN`"));
    assert!(left_out_at(&import, "providers.anthropic.authHeader")[0].contains("Authorization"));
    for header in ["Bad Name", "X-Split"] {
        let why = left_out_at(&import, &format!("providers.anthropic.headers.{header}"));
        assert!(why[0].contains("not an HTTP header"), "{header}: {why:?}");
    }
    assert!(left_out_at(&import, "providers.radius.oauth")[0].contains("account login"));
    assert!(left_out_at(&import, "providers.google.modelOverrides")[0].contains("llm.models"));
    // No `baseUrl`: a key alone has no entry to go in.
    let openai = left_out_at(&import, "providers.openai");
    assert!(openai.is_empty(), "{openai:?}");
    assert!(left_out_at(&import, "providers.openai.apiKey")[0].contains("`OPENAI_KEY_FOR_PI`"));
    // The settings' own check refuses what they cannot hold.
    // Its models go with it: they would have no host.
    let weird = left_out_at(&import, "providers.weird (and its model)");
    assert!(weird[0].contains("http"), "{import:?}");
    assert!(
        import
            .models
            .iter()
            .all(|model| model["provider"] != "weird")
    );
}

#[test]
fn models_take_pi_defaults_and_the_provider_compat() {
    let import = import_pi_models(&fixture()).unwrap();
    assert_eq!(
        import.models,
        [
            json!({"provider": "lab", "id": "qwen3-32b", "name": "Qwen 3", "contextWindow": 32768,
                "maxOutput": 8192, "reasoning": true,
                "compat": {"supportsDeveloperRole": false, "thinkingFormat": "qwen"}}),
            json!({"provider": "lab", "id": "tiny", "contextWindow": 128_000, "maxOutput": 16_384,
                "compat": {"supportsDeveloperRole": false}}),
        ]
    );
    let qwen = left_out_at(&import, "providers.lab.models[\"qwen3-32b\"]");
    assert!(
        qwen[0].contains("`samplingParams`") && qwen[0].contains("`compat.supportsFinishReason`"),
        "{qwen:?}"
    );
    assert!(left_out_at(&import, "providers.lab.models[\"elsewhere\"]")[0].contains("one host"));
    assert!(
        left_out_at(&import, "providers.lab.models[\"other-wire\"]")[0].contains("wire format")
    );
    assert!(left_out_at(&import, "providers.lab.models[\"broken\"]")[0].contains("contextWindow"));
    assert_eq!(left_out_at(&import, "providers.lab.models[5]"), ["no `id`"]);
}

#[test]
fn config_values_are_read_as_pi_reads_them() {
    assert_eq!(literal("sk-plain").unwrap(), "sk-plain");
    assert_eq!(literal("a$$b$!c").unwrap(), "a$b!c");
    assert_eq!(literal("cost $5").unwrap(), "cost $5");
    assert_eq!(literal("trailing $").unwrap(), "trailing $");
    assert_eq!(literal("${not a name}").unwrap(), "${not a name}");
    assert!(literal("Bearer $TOKEN").unwrap_err().contains("`TOKEN`"));
    assert!(literal("${KEY}").unwrap_err().contains("`KEY`"));
    assert!(literal("!op read x").unwrap_err().contains("command"));
}

#[test]
fn a_file_pi_cannot_read_is_refused_and_a_missing_one_imports_nothing() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("models.json");
    assert_eq!(import_pi_models(&path).unwrap(), PiImport::default());
    std::fs::write(&path, "{\"providers\": {").unwrap();
    let error = import_pi_models(&path).unwrap_err();
    assert!(error.to_string().contains("line 1"), "{error}");
}

/// QA (2026-12-07): a provider without `api` whose models each set the same one lost every model
/// ("its own `api`"), and its entry had no wire format. Mixed formats are still left out.
#[test]
fn an_api_every_model_sets_is_the_providers() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("models.json");
    std::fs::write(
        &path,
        r#"{"providers": {
            "same": {"baseUrl": "http://h/v1", "models": [
                {"id": "a", "api": "openai-completions"}, {"id": "b", "api": "openai-completions"}]},
            "mixed": {"baseUrl": "http://h2/v1", "models": [
                {"id": "c", "api": "openai-completions"}, {"id": "d", "api": "openai-responses"}]}
        }}"#,
    )
    .unwrap();
    let import = import_pi_models(&path).unwrap();
    assert_eq!(
        import.endpoints[0],
        (
            "same".to_owned(),
            json!({"baseUrl": "http://h/v1", "api": "openai-completions"})
        )
    );
    let ids: Vec<&str> = import
        .models
        .iter()
        .map(|model| model["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(
        import.endpoints[1],
        ("mixed".to_owned(), json!({"baseUrl": "http://h2/v1"}))
    );
    assert!(left_out_at(&import, "providers.mixed.models[\"c\"]")[0].contains("wire format"));
}
