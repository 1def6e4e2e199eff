//! `ctxkit config import-pi`, as a Pi user moving over: their `models.json` routes a provider to a
//! host of their own (a loopback mock here); after the import the chat asks that host, with the
//! file's key, and nothing the file names is run.

use serde_json::json;

use crate::Run;
use crate::provider_endpoints::{answering_host, requests_at};

const LAB_KEY: &str = "sk-lab-test-SECRET321";

fn write_models(run: &Run, base_url: &str, marker: &std::path::Path) {
    let models = json!({
        "providers": {
            "lab": {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": LAB_KEY,
                "models": [{"id": "qwen3-32b", "contextWindow": 32768, "maxTokens": 4096}],
            },
            // An attack: a key whose value is a command's output. Nothing may run it.
            "anthropic": {
                "baseUrl": base_url,
                "headers": {"X-Sneak": format!("!touch {}", marker.display())},
                "apiKey": format!("!touch {}", marker.display()),
            },
        },
    });
    // Pi's own syntax: a comment and a trailing comma.
    let pretty = serde_json::to_string_pretty(&models).unwrap();
    let body = pretty.strip_suffix("\n}").unwrap();
    let text = format!("// mine\n{body},\n}}\n");
    std::fs::write(run.home.path().join("models.json"), text).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pi_models_file_carried_over_routes_the_chat_to_its_host() {
    let host = answering_host().await;
    let run = Run::new();
    let marker = run.home.path().join("ran");
    write_models(&run, &format!("{}/v1", host.uri()), &marker);
    let home = run.home.path().display().to_string();
    let variables = [("HOME", home.as_str())];

    let dry = run.ctxkit_piped(&["config", "import-pi", "--dry-run"], &variables, "");
    assert!(
        dry.starts_with("exit: 0\n") && dry.contains("Nothing written"),
        "{dry}"
    );
    assert!(!run.home.path().join("settings.json").exists(), "{dry}");

    let output = run.ctxkit_piped(&["config", "import-pi"], &variables, "");
    assert!(output.starts_with("exit: 0\n"), "{output}");
    assert!(
        output.contains("llm.providers.lab: ") && output.contains("(openai-completions, its key)"),
        "{output}"
    );
    assert!(
        output.contains("llm.models: lab/qwen3-32b (window 32768)"),
        "{output}"
    );
    assert!(
        output.contains("left out providers.anthropic.apiKey: runs a command"),
        "{output}"
    );
    assert!(!output.contains(LAB_KEY), "{output}");
    assert!(!marker.exists(), "a command the file names ran");

    let chat = run.ctxkit_piped(
        &[
            "chat",
            "--no-session",
            "--model",
            "lab/qwen3-32b",
            "-p",
            "hi",
        ],
        &variables,
        "",
    );
    assert!(
        chat.starts_with("exit: 0\n") && chat.contains("custom host reply"),
        "{chat}"
    );
    let requests = requests_at(&host).await;
    assert_eq!(requests.len(), 1, "{requests:?}");
    let (path, headers) = &requests[0];
    assert_eq!(path, "/v1/chat/completions");
    assert!(
        headers.contains(&("authorization".to_owned(), format!("Bearer {LAB_KEY}"))),
        "{headers:?}"
    );
    assert!(!marker.exists(), "a command the file names ran");

    // Run again: what the settings hold is kept, nothing is written twice.
    let again = run.ctxkit_piped(&["config", "import-pi"], &variables, "");
    assert!(
        again.contains("kept llm.providers.lab") && again.contains("Nothing to write."),
        "{again}"
    );
}

#[test]
fn without_a_pi_models_file_the_import_says_where_it_looked() {
    let run = Run::new();
    let home = run.home.path().display().to_string();
    let output = run.ctxkit_piped(&["config", "import-pi"], &[("HOME", home.as_str())], "");
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains(
            "no Pi `models.json` at `[HOME]/models.json` or `[HOME]/.pi/agent/models.json`"
        ) && output.contains("--from FILE"),
        "{output}"
    );
}

/// A settings file that does not parse is never written, and the import says so before any plan.
#[test]
fn a_settings_file_that_does_not_load_is_left_alone() {
    let run = Run::new();
    let marker = run.home.path().join("ran");
    write_models(&run, "http://127.0.0.1:9/v1", &marker);
    std::fs::write(run.home.path().join("settings.json"), "{ \"theme\": ").unwrap();
    let home = run.home.path().display().to_string();
    let output = run.ctxkit_piped(&["config", "import-pi"], &[("HOME", home.as_str())], "");
    assert!(output.starts_with("exit: 3\n"), "{output}");
    assert!(!output.contains("Writing into"), "{output}");
    assert!(
        output.contains("never overwrites a file it cannot read"),
        "{output}"
    );
    let kept = std::fs::read_to_string(run.home.path().join("settings.json")).unwrap();
    assert_eq!(kept, "{ \"theme\": ");
}

/// A provider ctxkit does not build in, with no `api` in Pi's file, would answer every request
/// with "unknown provider": it is left out with its models, and says why.
#[test]
fn a_provider_of_ones_own_without_a_wire_format_is_left_out() {
    let run = Run::new();
    std::fs::write(
        run.home.path().join("models.json"),
        r#"{"providers": {"gw3": {"baseUrl": "http://127.0.0.1:9/v1", "models": [{"id": "c1"}]}}}"#,
    )
    .unwrap();
    let home = run.home.path().display().to_string();
    let output = run.ctxkit_piped(&["config", "import-pi"], &[("HOME", home.as_str())], "");
    assert!(output.starts_with("exit: 0\n"), "{output}");
    assert!(
        output.contains("left out providers.gw3 (and its model): no `api`")
            && output.contains("Nothing to write."),
        "{output}"
    );
}
