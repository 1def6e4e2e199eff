//! `ctxkit auth …`, Pi 1.6.0's `pi auth` commands: a Pi user's scripts that check a provider or
//! hand its key to another program ran into "unrecognized subcommand".

use crate::Run;

/// `ctxkit ARGS` with the user's home in the test's folder and `variables` set.
fn auth(run: &Run, args: &[&str], variables: &[(&str, &str)], input: &str) -> String {
    let home = run.home.path().display().to_string();
    let mut all = vec![("HOME", home.as_str())];
    all.extend_from_slice(variables);
    run.ctxkit_piped(args, &all, input)
}

#[test]
fn check_says_ready_not_ready_or_invalid_and_exits_0_1_or_2() {
    let run = Run::new();
    let check = |args: &[&str], variables: &[(&str, &str)]| {
        let mut all = vec!["auth", "check"];
        all.extend_from_slice(args);
        auth(&run, &all, variables, "")
    };
    assert_eq!(
        check(&["--provider", "openai"], &[]),
        "exit: 1\nnot_ready\n"
    );
    let key = [("OPENAI_API_KEY", "sk-test-AUTHCHECK42")];
    assert_eq!(check(&["--provider", "openai"], &key), "exit: 0\nready\n");
    assert_eq!(
        check(&["--model", "openai/gpt-4o-mini", "--json"], &key),
        "exit: 0\n{\"status\":\"ready\",\"provider\":\"openai\",\"authType\":\"api_key\"}\n"
    );
    assert_eq!(
        check(
            &[
                "--provider",
                "openai",
                "--model",
                "gpt-4o-mini",
                "--credentials"
            ],
            &key
        ),
        "exit: 0\nsk-test-AUTHCHECK42\n"
    );
    // Not ready: the key is never printed, whatever is asked.
    assert_eq!(
        check(
            &["--provider", "anthropic", "--json", "--credentials"],
            &key
        ),
        "exit: 1\n{\"status\":\"not_ready\",\"provider\":\"anthropic\",\"reason\":\"credentials_not_configured\"}\n"
    );
    // A bare id is found in the table, and the provider named is the model's.
    assert_eq!(
        check(&["--model", "gpt-4o-mini", "--json"], &[]),
        "exit: 1\n{\"status\":\"not_ready\",\"provider\":\"openai\",\"reason\":\"credentials_not_configured\"}\n"
    );
    assert_eq!(
        check(&["--provider", "nosuch", "--json"], &[]),
        "exit: 1\n{\"status\":\"not_ready\",\"provider\":\"nosuch\",\"reason\":\"provider_not_found\"}\n"
    );
    // A local server takes no key.
    assert_eq!(
        check(&["--provider", "ollama", "--json"], &[]),
        "exit: 0\n{\"status\":\"ready\",\"provider\":\"ollama\",\"authType\":\"none\"}\n"
    );
    // A Pi `models.json` routes `openai` to a gateway ctxkit was not told of: no request can go.
    std::fs::write(
        run.home.path().join("models.json"),
        r#"{"providers": {"openai": {"baseUrl": "https://gateway.corp.example/v1"}}}"#,
    )
    .unwrap();
    assert_eq!(
        check(&["--provider", "openai", "--json"], &key),
        "exit: 2\n{\"status\":\"invalid\",\"provider\":\"openai\",\"reason\":\"invalid_state\"}\n"
    );
    let refused = check(&[], &[]);
    assert!(refused.starts_with("exit: 2\n"), "{refused}");
}

/// QA (2026-12-07): a Pi `auth.json` whose key is a `!command` or a `$VAR` reference got "No API
/// key … run `ctxkit login`", as if none were saved. The chat's error and `auth check` say the
/// saved entry is not used, and why; nothing runs.
#[test]
fn a_saved_entry_ctxkit_passes_over_is_named_where_the_key_is_missing() {
    let run = Run::new();
    let marker = run.home.path().join("RAN");
    let entries = serde_json::json!({
        "openai": {"type": "api_key", "key": format!("!touch {}; echo sk-x", marker.display())},
        "anthropic": {"type": "api_key", "key": "$MY_ANTHROPIC_KEY"},
    });
    std::fs::write(run.home.path().join("auth.json"), entries.to_string()).unwrap();
    let chat = auth(
        &run,
        &[
            "chat",
            "--no-session",
            "--model",
            "openai/gpt-5-mini",
            "-p",
            "hi",
        ],
        &[],
        "",
    );
    assert!(chat.starts_with("exit: 3\n"), "{chat}");
    assert!(
        chat.contains("the saved entry of `openai` is not used: a command in place of the key"),
        "{chat}"
    );
    let check = auth(&run, &["auth", "check", "--provider", "anthropic"], &[], "");
    assert!(check.starts_with("exit: 1\nnot_ready\n"), "{check}");
    assert!(
        check.contains("the saved entry of `anthropic` is not used: an environment reference"),
        "{check}"
    );
    assert!(!marker.exists(), "a command in auth.json ran");
}

#[test]
fn print_api_key_prints_the_key_ctxkit_would_send_and_login_logout_are_ctxkits() {
    let run = Run::new();
    let variable = [("ANTHROPIC_API_KEY", "sk-ant-from-the-VARIABLE-1")];
    let print = |variables: &[(&str, &str)]| {
        auth(
            &run,
            &["auth", "print-api-key", "--provider", "anthropic"],
            variables,
            "",
        )
    };
    assert_eq!(print(&variable), "exit: 0\nsk-ant-from-the-VARIABLE-1\n");
    let saved = auth(
        &run,
        &["auth", "login", "anthropic", "--api-key"],
        &[],
        "sk-ant-SAVED-by-login-2\n",
    );
    assert!(
        saved.starts_with("exit: 0\nSaved the key of `anthropic`"),
        "{saved}"
    );
    // The saved key wins over the variable, as every command sends it.
    assert_eq!(print(&variable), "exit: 0\nsk-ant-SAVED-by-login-2\n");
    let removed = auth(&run, &["auth", "logout", "anthropic"], &[], "");
    assert!(
        removed.starts_with("exit: 0\nRemoved the saved key"),
        "{removed}"
    );
    let missing = print(&[]);
    assert!(
        missing.starts_with("exit: 3\n--- stderr\nerror: No API key for provider `anthropic`"),
        "{missing}"
    );
    let bearer = auth(
        &run,
        &["auth", "print-bearer-token", "--provider", "openai"],
        &[],
        "",
    );
    assert!(
        bearer.starts_with("exit: 2\n") && bearer.contains("print-api-key"),
        "{bearer}"
    );
}

/// Attack: the model has `bash` run `ctxkit auth print-api-key` (allowed here by `--yes`). The
/// child prints the key `ctxkit login` saved, and the tool result the model is sent, and the
/// session, hold `<redacted>` in its place.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_printed_by_a_tool_call_never_reaches_the_model() {
    let run = Run::new();
    let saved = "sk-ant-SAVED-never-sent-77";
    let login = auth(&run, &["login", "anthropic"], &[], &format!("{saved}\n"));
    assert!(login.starts_with("exit: 0\n"), "{login}");
    let command = format!(
        "CTXKIT_HOME='{}' '{}' auth print-api-key --provider anthropic",
        run.home.path().display(),
        env!("CARGO_BIN_EXE_ctxkit")
    );
    let server = crate::chat_print::server(Some(&command)).await;
    let output = crate::chat_print::print_chat(&run, &server, &["--yes", "-p", "go"], "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let requests = server.received_requests().await.unwrap();
    let sent: String = requests
        .iter()
        .map(|request| String::from_utf8_lossy(&request.body).into_owned())
        .collect();
    assert!(requests.len() >= 2, "the tool result went back: {sent}");
    assert!(!sent.contains(saved), "{sent}");
    // The child printed the key, and the result the model read is its redaction.
    let second: serde_json::Value = serde_json::from_slice(&requests[1].body).unwrap();
    let result = second["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .unwrap();
    assert_eq!(result["output"], "<redacted>", "{sent}");
    let stored = std::fs::read_dir(run.home.path().join("sessions"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|folder| {
            std::fs::read_dir(folder.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|file| std::fs::read_to_string(file.path()).unwrap_or_default())
        .collect::<String>();
    assert!(
        stored.contains("print-api-key"),
        "the session was read: {stored}"
    );
    assert!(!stored.contains(saved), "{stored}");
}
