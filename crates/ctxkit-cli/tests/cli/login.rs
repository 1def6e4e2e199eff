//! `ctxkit login` and `ctxkit logout`: a key saved in `<home>/auth.json` (Pi's format, readable by
//! the user only) is what a chat with no model configured runs on and what it sends, in place of
//! the provider's variable as in Pi; it is never printed, and a command's output that holds it is
//! redacted. A loopback mock stands for OpenAI's host (`OPENAI_BASE_URL`).

use crate::Run;
use crate::provider_endpoints::{answering_host, requests_at};

const SAVED_KEY: &str = "sk-saved-by-login-SECRET123";
const VARIABLE_KEY: &str = "sk-from-the-variable-SECRET456";

fn bearer_of(requests: &[(String, Vec<(String, String)>)]) -> Vec<String> {
    requests
        .iter()
        .filter_map(|(_, headers)| {
            headers
                .iter()
                .find(|(name, _)| name == "authorization")
                .map(|(_, value)| value.clone())
        })
        .collect()
}

#[test]
fn login_and_logout_say_what_they_take() {
    let run = Run::new();
    let output = run.ctxkit(&["login"]);
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains("error: name the provider whose key to save"),
        "{output}"
    );
    assert!(
        output.contains("`anthropic`, `openai`, `google`"),
        "{output}"
    );
    let output = run.ctxkit(&["login", "myco"]);
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains("`myco` is not a provider ctxkit saves a key for"),
        "{output}"
    );
    assert!(output.contains("`llm.apiKey`"), "{output}");
    let output = run.ctxkit_with_input(&["login", "openai"], &[], "\n");
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains("no key was given; nothing was saved"),
        "{output}"
    );
    assert!(!run.home.path().join("auth.json").exists());
    let output = run.ctxkit(&["models", "sonnet"]);
    assert!(
        output.contains("No provider's key is set: `ctxkit login PROVIDER` saves one"),
        "{output}"
    );
    // QA (2026-12-05): the key of a custom endpoint, in the settings, was not named.
    let output = run.ctxkit(&["config", "set", "llm.apiKey", "sk-custom-endpoint"]);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    let output = run.ctxkit(&["models", "sonnet"]);
    assert!(
        output.contains("Keys: the settings' `llm.apiKey`"),
        "{output}"
    );
    assert!(!output.contains("sk-custom-endpoint"), "{output}");
    let output = run.ctxkit(&["config", "unset", "llm.apiKey"]);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    // A Pi user's file copied over: entries ctxkit does not use are named, never run.
    let pi_file = r#"{"anthropic": {"type": "api_key", "key": "!pass show anthropic"}}"#;
    std::fs::write(run.home.path().join("auth.json"), pi_file).unwrap();
    let output = run.ctxkit(&["models", "sonnet"]);
    assert!(
        output.contains(
            "The saved entry of `anthropic` is not used: a command in place of the key, which ctxkit does not run."
        ),
        "{output}"
    );
    std::fs::remove_file(run.home.path().join("auth.json")).unwrap();
    let output = run.ctxkit(&["logout"]);
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(output.contains("hint: no key is saved"), "{output}");
    let output = run.ctxkit(&["logout", "openai"]);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    assert!(
        output.contains("No key of `openai` was saved; nothing changed."),
        "{output}"
    );
}

#[test]
fn a_broken_credentials_file_stops_a_chat_with_its_name() {
    let run = Run::new();
    std::fs::write(run.home.path().join("auth.json"), "{\"openai\": ").unwrap();
    let output = run.ctxkit_with_input(&["chat", "--no-session"], &[], "hi\n");
    assert!(output.starts_with("exit: 3\n"), "{output}");
    assert!(
        output
            .contains("error: Invalid credentials file `[HOME]/auth.json`: invalid JSON at line 1"),
        "{output}"
    );
    assert!(
        output.contains("hint: fix `[HOME]/auth.json` by hand"),
        "{output}"
    );
    let output = run.ctxkit_with_input(&["login", "openai"], &[], "sk-new\n");
    assert!(output.starts_with("exit: 3\n"), "{output}");
    assert_eq!(
        std::fs::read_to_string(run.home.path().join("auth.json")).unwrap(),
        "{\"openai\": ",
        "never overwritten"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_saved_key_is_sent_in_place_of_the_variable_and_never_shown() {
    let openai = answering_host().await;
    let base = format!("{}/v1", openai.uri());
    let run = Run::new();
    let ctxkit = |args: &[&str], variables: &[(&str, &str)], input: &str| {
        tokio::task::block_in_place(|| run.ctxkit_with_input(args, variables, input))
    };
    let saved = ctxkit(&["login", "OpenAI"], &[], &format!("{SAVED_KEY}\n"));
    assert!(saved.starts_with("exit: 0\n"), "{saved}");
    assert!(
        saved.contains("Saved the key of `openai` in `[HOME]/auth.json` (readable by you only)"),
        "{saved}"
    );
    assert!(!saved.contains(SAVED_KEY), "{saved}");
    let listed = ctxkit(&["models", "gpt-5"], &[("GROQ_API_KEY", VARIABLE_KEY)], "");
    assert!(
        listed.contains(
            "Keys: openai (saved in `[HOME]/auth.json`), groq (`GROQ_API_KEY`); another provider needs"
        ),
        "{listed}"
    );
    assert!(
        !listed.contains(SAVED_KEY) && !listed.contains(VARIABLE_KEY),
        "{listed}"
    );
    let file = run.home.path().join("auth.json");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["openai"]["type"], "api_key");
    assert_eq!(written["openai"]["key"], SAVED_KEY);
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    // No model configured: the chat runs OpenAI's default model on the saved key; a command's
    // output that prints the key shows it redacted.
    std::fs::write(
        run.home.path().join("notes.txt"),
        format!("key: {SAVED_KEY}\n"),
    )
    .unwrap();
    let only_saved = [("OPENAI_BASE_URL", base.as_str())];
    let chat = ctxkit(
        &["chat", "--no-session"],
        &only_saved,
        "hi\n!cat notes.txt\n",
    );
    assert!(chat.contains("openai reply"), "{chat}");
    assert!(
        chat.contains("since `ctxkit login` saved a key of `openai` ("),
        "{chat}"
    );
    assert!(chat.contains("key: "), "{chat}");
    assert!(!chat.contains(SAVED_KEY), "{chat}");
    assert_eq!(
        bearer_of(&requests_at(&openai).await),
        [format!("Bearer {SAVED_KEY}")]
    );

    // The variable set too: the saved key wins, as in Pi, and `login` says so.
    let both = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", VARIABLE_KEY),
    ];
    let again = ctxkit(&["login", "openai"], &both, &format!("{SAVED_KEY}\n"));
    assert!(
        again.contains("`OPENAI_API_KEY` is set too: the saved key wins"),
        "{again}"
    );
    let chat = ctxkit(&["chat", "--no-session"], &both, "hi\n");
    assert!(chat.contains("openai reply"), "{chat}");
    // After `logout` the variable's key is the one sent.
    let removed = ctxkit(&["logout", "openai"], &[], "");
    assert!(
        removed.contains(
            "Removed the saved key of `openai`; `OPENAI_API_KEY` and `llm.apiKey` are unchanged."
        ),
        "{removed}"
    );
    let chat = ctxkit(&["chat", "--no-session"], &both, "hi\n");
    assert!(chat.contains("since `OPENAI_API_KEY` is set"), "{chat}");
    assert_eq!(
        bearer_of(&requests_at(&openai).await),
        [
            format!("Bearer {SAVED_KEY}"),
            format!("Bearer {SAVED_KEY}"),
            format!("Bearer {VARIABLE_KEY}"),
        ]
    );
}

/// `/login` in a chat saves the key and the chat's next request carries it; `/logout` goes back
/// to the variable's key at once.
#[tokio::test(flavor = "multi_thread")]
async fn login_in_a_chat_applies_at_once() {
    let openai = answering_host().await;
    let base = format!("{}/v1", openai.uri());
    let run = Run::new();
    let variables = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", VARIABLE_KEY),
    ];
    let input = format!("hi\n/login openai\n{SAVED_KEY}\nagain\n/logout openai\nthird\n/logout\n");
    let chat = tokio::task::block_in_place(|| {
        run.ctxkit_with_input(&["chat", "--no-session"], &variables, &input)
    });
    assert!(chat.starts_with("exit: 0\n"), "{chat}");
    assert!(chat.contains("Saved the key of `openai`"), "{chat}");
    assert!(chat.contains("Removed the saved key of `openai`"), "{chat}");
    assert!(chat.contains("No key is saved"), "{chat}");
    assert!(!chat.contains(SAVED_KEY), "{chat}");
    assert_eq!(
        bearer_of(&requests_at(&openai).await),
        [
            format!("Bearer {VARIABLE_KEY}"),
            format!("Bearer {SAVED_KEY}"),
            format!("Bearer {VARIABLE_KEY}"),
        ]
    );

    // With no other key, `/logout` says the chat's model keeps the removed one, and it does.
    let only_saved = [("OPENAI_BASE_URL", base.as_str())];
    let saved = tokio::task::block_in_place(|| {
        run.ctxkit_with_input(&["login", "openai"], &only_saved, &format!("{SAVED_KEY}\n"))
    });
    assert!(saved.starts_with("exit: 0\n"), "{saved}");
    let chat = tokio::task::block_in_place(|| {
        run.ctxkit_with_input(
            &["chat", "--no-session"],
            &only_saved,
            "hi\n/logout openai\nagain\n",
        )
    });
    assert!(
        chat.contains("has no other key: it keeps the removed one until `/model` picks another"),
        "{chat}"
    );
    let bearers = bearer_of(&requests_at(&openai).await);
    assert_eq!(
        bearers[3..],
        [format!("Bearer {SAVED_KEY}"), format!("Bearer {SAVED_KEY}")]
    );
}

/// A first chat on a terminal with no model and no key offers to save one, as Pi's first run
/// offers `/login`, and starts on that provider's default model with it; an empty answer leaves
/// with the hint, as before.
#[tokio::test(flavor = "multi_thread")]
async fn a_first_chat_without_a_key_offers_to_save_one_and_starts_on_it() {
    if crate::chat::tmux_missing() {
        return;
    }
    let openai = answering_host().await;
    let base = format!("{}/v1", openai.uri());
    let run = Run::new();
    let project = run.home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let command = crate::chat::chat_command(&project, run.home.path(), "--no-session")
        .replace(" HOME=", &format!(" OPENAI_BASE_URL='{base}' HOME="));
    let tmux = crate::chat::Tmux::start(&command);
    tmux.wait_for("Save a key now, as `ctxkit login` does (empty to leave)?");
    tmux.wait_for("Provider (empty to leave): ");
    tmux.line("opneai");
    tmux.wait_for("`opneai` is not a provider ctxkit saves a key for");
    tmux.wait_for_count("Provider (empty to leave): ", 2);
    tmux.line("openai");
    tmux.wait_for("API key of `openai` (typed without echo; Ctrl-C cancels):");
    tmux.keys(&["-l", SAVED_KEY]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("since `ctxkit login` saved a key of `openai`");
    assert!(!screen.contains(SAVED_KEY), "{screen}");
    tmux.wait_idle(1);
    tmux.line("hi");
    tokio::task::block_in_place(|| tmux.wait_for("openai reply"));
    assert_eq!(
        bearer_of(&requests_at(&openai).await),
        [format!("Bearer {SAVED_KEY}")]
    );
    drop(tmux);

    let other = Run::new();
    let project = other.home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let tmux = crate::chat::Tmux::start(&crate::chat::chat_command(
        &project,
        other.home.path(),
        "--no-session",
    ));
    tmux.wait_for("Provider (empty to leave): ");
    tmux.keys(&["Enter"]);
    tmux.wait_for("hint: save a provider's key with `ctxkit login anthropic`");
    assert!(!other.home.path().join("auth.json").exists());
}

/// A chat whose settings name a model of a provider without a key stopped with the missing key's
/// error. On a terminal it now offers to save that provider's key, as Pi's start says to `/login`,
/// and starts on it; an empty answer leaves with the error, as before.
#[tokio::test(flavor = "multi_thread")]
async fn a_chat_whose_model_has_no_key_offers_to_save_that_providers() {
    if crate::chat::tmux_missing() {
        return;
    }
    let openai = answering_host().await;
    let base = format!("{}/v1", openai.uri());
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"defaultModel": "openai/gpt-5-mini"}"#,
    )
    .unwrap();
    let project = run.home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let command = crate::chat::chat_command(&project, run.home.path(), "--no-session")
        .replace(" HOME=", &format!(" OPENAI_BASE_URL='{base}' HOME="));
    let tmux = crate::chat::Tmux::start(&command);
    tmux.wait_for("No API key for `openai`, the provider of the model to use. Save one now");
    tmux.wait_for("API key of `openai` (typed without echo; Ctrl-C cancels):");
    tmux.keys(&["Enter"]);
    tmux.wait_for("hint: set the key, or pick another model");
    assert!(!run.home.path().join("auth.json").exists());
    drop(tmux);

    let tmux = crate::chat::Tmux::start(&command);
    tmux.wait_for("API key of `openai` (typed without echo; Ctrl-C cancels):");
    tmux.keys(&["-l", SAVED_KEY]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Saved the key of `openai`");
    assert!(!screen.contains(SAVED_KEY), "{screen}");
    tmux.wait_idle(1);
    tmux.line("hi");
    tokio::task::block_in_place(|| tmux.wait_for("openai reply"));
    assert_eq!(
        bearer_of(&requests_at(&openai).await),
        [format!("Bearer {SAVED_KEY}")]
    );
}

/// Attack: a cloned project's settings name the saved key's provider and point its endpoint at
/// the project's host. Untrusted, `llm.baseUrl` is held: the saved key goes only to the
/// provider's own host.
#[tokio::test(flavor = "multi_thread")]
async fn a_projects_endpoint_never_receives_a_saved_key() {
    let openai = answering_host().await;
    let project_host = answering_host().await;
    let base = format!("{}/v1", openai.uri());
    let run = Run::new();
    let project_settings = run.home.path().join(".ctxkit").join("settings.json");
    std::fs::create_dir_all(project_settings.parent().unwrap()).unwrap();
    std::fs::write(
        &project_settings,
        serde_json::json!({
            "defaultModel": "openai/gpt-5-mini",
            "llm": {"baseUrl": format!("{}/v1", project_host.uri()), "api": "openai-completions"},
        })
        .to_string(),
    )
    .unwrap();
    let variables = [("OPENAI_BASE_URL", base.as_str())];
    let chat = tokio::task::block_in_place(|| {
        let saved = run.ctxkit_with_input(&["login", "openai"], &[], &format!("{SAVED_KEY}\n"));
        assert!(saved.starts_with("exit: 0\n"), "{saved}");
        run.ctxkit_with_input(&["chat", "--no-session"], &variables, "hi\n")
    });
    assert!(chat.contains("openai reply"), "{chat}");
    assert!(requests_at(&project_host).await.is_empty(), "{chat}");
    assert_eq!(
        bearer_of(&requests_at(&openai).await),
        [format!("Bearer {SAVED_KEY}")]
    );
}
