//! API keys never leave the request header: runs with a fake key (from the environment and from
//! settings) through compactions against a local mock provider, successful and failing (a provider
//! that echoes the key in its error), then scans stdout, stderr and every file the runs left for the
//! key. Settings files holding a key are created readable by their owner only.

use std::path::Path;

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::Run;

const KEY: &str = "sk-ctxkit-fake-7f3a9c2e1d5b4a6f8e0c";

fn reply(text: &str) -> serde_json::Value {
    json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4o-mini",
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": 1200, "output_tokens": 80, "total_tokens": 1280}
    })
}

/// Every file below `root` that holds `needle` (settings files excepted when `settings_may_hold`).
fn files_holding(root: &Path, needle: &str, settings_may_hold: bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                pending.push(path);
                continue;
            }
            let is_settings = path.file_name().is_some_and(|name| name == "settings.json");
            let bytes = std::fs::read(&path).unwrap_or_default();
            if String::from_utf8_lossy(&bytes).contains(needle)
                && !(is_settings && settings_may_hold)
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_never_reaches_outputs_files_or_errors() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/ok/v1/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply("## Goal\n- summarized")))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/echo/v1/responses"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": {"message": format!("Incorrect API key provided: {KEY}."),
                      "type": "invalid_request_error", "code": "invalid_api_key"}
        })))
        .mount(&server)
        .await;

    let run = Run::new();
    let home = run.home.path().to_owned();
    let file = run.copy("good-large-realistic.jsonl");
    let file = file.to_str().unwrap();
    let compactions_before = std::fs::read_to_string(file)
        .unwrap()
        .matches("\"type\":\"compaction\"")
        .count();
    let second = home.join("second.jsonl");
    std::fs::copy(file, &second).unwrap();
    let mut outputs = Vec::new();

    // The key from the environment.
    for (case, expected_exit) in [("echo", "exit: 7"), ("ok", "exit: 0")] {
        let base = format!("{}/{case}/v1", server.uri());
        let output = tokio::task::block_in_place(|| {
            run.ctxkit_with_env(
                &[
                    "compact",
                    file,
                    "--keep-recent-tokens",
                    "2000",
                    "--model",
                    "openai/gpt-4o-mini",
                ],
                &[("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", base.as_str())],
            )
        });
        assert!(output.starts_with(expected_exit), "{case}: {output}");
        outputs.push(output);
    }

    // The key from settings, for the provider the settings name (the endpoint settings are that
    // provider's only): the file is created 0600.
    let set = run.ctxkit(&["config", "set", "defaultProvider", "openai"]);
    assert!(set.starts_with("exit: 0"), "{set}");
    let set = run.ctxkit(&["config", "set", "llm.apiKey", KEY]);
    assert!(set.starts_with("exit: 0"), "{set}");
    #[cfg(unix)]
    assert_eq!(
        mode(&home.join("settings.json")),
        0o600,
        "settings holding a key"
    );
    std::fs::create_dir_all(home.join(".ctxkit")).unwrap();
    // Project settings are usually committed: ctxkit refuses to write a key there (issue 17)...
    let set = run.ctxkit(&["config", "set", "--project", "llm.apiKey", KEY]);
    assert!(set.starts_with("exit: 3"), "{set}");
    assert!(!set.contains(KEY), "{set}");
    // The same for a key inside `llm.providers`, by its path or in the object set whole.
    let inside = serde_json::json!({"gw": {"baseUrl": "http://gw.example/v1", "apiKey": KEY}});
    for (key, value) in [
        ("llm.providers.gw.apiKey", KEY.to_owned()),
        ("llm.providers", inside.to_string()),
    ] {
        let set = run.ctxkit(&["config", "set", "--project", key, &value]);
        assert!(
            set.starts_with("exit: 3") && set.contains("usually committed"),
            "{key}: {set}"
        );
        assert!(!set.contains(KEY), "{set}");
    }
    assert!(!home.join(".ctxkit/settings.json").exists());
    // ...but reads one a user wrote there by hand, once the user trusts the project (issue 33).
    std::fs::write(
        home.join(".ctxkit/settings.json"),
        serde_json::json!({"llm": {"apiKey": KEY}}).to_string(),
    )
    .unwrap();
    let trusted = run.ctxkit(&["trust", "--yes"]);
    assert!(
        trusted.contains("  llm.apiKey = \"<redacted>\"\n"),
        "{trusted}"
    );
    let file = second.to_str().unwrap();
    for (case, expected_exit) in [("echo", "exit: 7"), ("ok", "exit: 0")] {
        let base = format!("{}/{case}/v1", server.uri());
        let set = run.ctxkit(&["config", "set", "llm.baseUrl", &base]);
        assert!(set.starts_with("exit: 0"), "{set}");
        let output = tokio::task::block_in_place(|| {
            run.ctxkit(&[
                "compact",
                file,
                "--keep-recent-tokens",
                "2000",
                "--model",
                "openai/gpt-4o-mini",
            ])
        });
        assert!(
            output.starts_with(expected_exit),
            "settings, {case}: {output}"
        );
        outputs.push(output);
    }
    outputs.push(run.ctxkit(&["config", "list"]));
    outputs.push(run.ctxkit(&["config", "list", "--json"]));
    outputs.push(run.ctxkit(&["compactions", file]));
    outputs.push(run.ctxkit(&["context", file, "--json"]));

    // The key went to the provider, in the header only.
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        assert_eq!(
            request.headers.get("authorization").unwrap(),
            &format!("Bearer {KEY}")
        );
        assert!(
            !String::from_utf8_lossy(&request.body).contains(KEY),
            "the key is in a body"
        );
    }
    for output in &outputs {
        assert!(!output.contains(KEY), "the key reached an output: {output}");
    }
    let leaked = files_holding(&home, KEY, true);
    assert!(leaked.is_empty(), "the key reached files: {leaked:?}");
    for compacted in [home.join("good-large-realistic.jsonl"), second.clone()] {
        let text = std::fs::read_to_string(compacted).unwrap();
        let count = text.matches("\"type\":\"compaction\"").count();
        assert_eq!(count, compactions_before + 1, "one compaction in each file");
    }
}

/// A summary model that repeats a key it read (a `.env` in a tool's output keeps its keys, an edit
/// must match them): `compact` and `branch --summarize` keep the summary without it, in the file,
/// in what they print and in what the context sends again.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_a_summary_model_repeats_is_not_kept() {
    const SHAPED: &str = "ghp_Zx81mQ2vR7pL0sK4tY6uW9aB3cD5eF7gH1jK";
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply(&format!(
            "## Goal\n- push with GITHUB_TOKEN={SHAPED}"
        ))))
        .mount(&server)
        .await;
    let run = Run::new();
    let compacted = run.copy("good-large-realistic.jsonl");
    let branched = run.copy("good-branches.jsonl");
    let base = format!("{}/v1", server.uri());
    let environment = [("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", base.as_str())];
    let model = ["--model", "openai/gpt-4o-mini"];
    let mut outputs = Vec::new();
    for args in [
        vec![
            "compact",
            compacted.to_str().unwrap(),
            "--keep-recent-tokens",
            "2000",
        ],
        vec![
            "branch",
            branched.to_str().unwrap(),
            "--to",
            "2b904d50",
            "--summarize",
        ],
    ] {
        let args: Vec<&str> = args.into_iter().chain(model).collect();
        let output = tokio::task::block_in_place(|| run.ctxkit_with_env(&args, &environment));
        assert!(output.starts_with("exit: 0"), "{args:?}: {output}");
        outputs.push(output);
    }
    for file in [&compacted, &branched] {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            !text.contains(SHAPED),
            "the key was kept in {}",
            file.display()
        );
        assert!(
            text.contains("GITHUB_TOKEN=<redacted>"),
            "{}",
            file.display()
        );
        outputs.push(run.ctxkit(&["context", file.to_str().unwrap(), "--llm", "--json"]));
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
    for output in &outputs {
        assert!(
            !output.contains(SHAPED),
            "the key reached an output: {output}"
        );
    }
}

/// QA (2026-12-05): with the user's settings not parsing (a trailing comma), `export` and `view`
/// went on with the settings read as empty, so the page showed the settings' key in full.
#[test]
fn export_and_view_refuse_settings_that_do_not_load() {
    let run = Run::new();
    let home = run.home.path();
    std::fs::write(
        home.join("settings.json"),
        format!(r#"{{"llm": {{"apiKey": "{KEY}"}},}}"#),
    )
    .unwrap();
    let session = home.join("s.jsonl");
    std::fs::write(
        &session,
        format!(
            "{}\n{}\n",
            json!({"type": "session", "version": 3, "id": "s1",
                   "timestamp": "2026-01-01T00:00:00Z", "cwd": "/tmp"}),
            json!({"type": "message", "id": "a1", "parentId": null,
                   "timestamp": "2026-01-01T00:00:01Z",
                   "message": {"role": "user", "content": format!("my key {KEY}"), "timestamp": 1}})
        ),
    )
    .unwrap();
    let page = home.join("page.html");
    let file = session.to_str().unwrap();
    let exported = run.ctxkit(&["export", file, "-o", page.to_str().unwrap()]);
    assert!(exported.starts_with("exit: 3"), "{exported}");
    assert!(exported.contains("trailing comma"), "{exported}");
    assert!(!page.exists());
    let viewed = run.ctxkit(&["view", file, "--port", "0"]);
    assert!(viewed.starts_with("exit: 3"), "{viewed}");
    assert!(!viewed.contains(KEY), "{viewed}");
}
