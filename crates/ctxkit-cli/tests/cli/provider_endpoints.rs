//! Where `ctxkit chat` sends keys, as attacks (QA F1): the README's "any other endpoint" settings
//! (`defaultModel myco/…`, `llm.baseUrl`, `llm.api`, `llm.headers`) with the built-in providers'
//! keys in the environment. Loopback mocks stand for the custom host and for OpenAI's own
//! (`OPENAI_BASE_URL`) and record every request; a model picked with `--model` or `/model` must
//! never bring its key to the custom host, nor the custom host's header to its own.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::Run;

const ANTHROPIC_KEY: &str = "sk-ant-test-SECRET123";
const OPENAI_KEY: &str = "sk-oai-test-SECRET456";
const MYCO_HEADER: &str = "myco-token-SECRET789";

/// A host answering Chat Completions and Responses requests with one short text reply.
pub(crate) async fn answering_host() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "custom host reply"}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "m",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "openai reply",
                                     "annotations": []}]}],
            "usage": {"input_tokens": 9, "output_tokens": 2, "total_tokens": 11}})))
        .mount(&server)
        .await;
    server
}

/// `(path, headers)` of every request `server` received, header names lower-case.
pub(crate) async fn requests_at(server: &MockServer) -> Vec<(String, Vec<(String, String)>)> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests
        .iter()
        .map(|request| {
            let headers = request
                .headers
                .iter()
                .map(|(name, value)| {
                    let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                    (name.as_str().to_lowercase(), value)
                })
                .collect();
            (request.url.path().to_owned(), headers)
        })
        .collect()
}

fn holds_any(headers: &[(String, String)], secrets: &[&str]) -> bool {
    headers
        .iter()
        .any(|(_, value)| secrets.iter().any(|secret| value.contains(secret)))
}

/// The README's "any other endpoint", at `custom`.
fn configure_myco(run: &Run, custom: &MockServer) {
    let base = format!("{}/v1", custom.uri());
    let header = json!({"x-myco-auth": MYCO_HEADER}).to_string();
    let models = r#"[{"provider": "myco", "id": "coder-large", "contextWindow": 131072}]"#;
    for (key, value) in [
        ("defaultModel", "myco/coder-large"),
        ("llm.api", "openai-completions"),
        ("llm.baseUrl", base.as_str()),
        ("llm.headers", header.as_str()),
        ("llm.models", models),
        ("retry.enabled", "false"),
    ] {
        let output = run.ctxkit(&["config", "set", key, value]);
        assert!(output.starts_with("exit: 0"), "{key}: {output}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_built_in_model_picked_in_a_chat_never_reaches_the_custom_host() {
    let custom = answering_host().await;
    let openai = answering_host().await;
    let run = Run::new();
    configure_myco(&run, &custom);
    let openai_base = format!("{}/v1", openai.uri());
    let variables = [
        ("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", openai_base.as_str()),
    ];
    let chat = |args: &[&str], input: &str| {
        let mut all = vec!["chat", "--no-session"];
        all.extend_from_slice(args);
        tokio::task::block_in_place(|| run.ctxkit_with_input(&all, &variables, input))
    };
    // `--model`: the whole chat runs at OpenAI's host, in its format, with its key.
    let picked = chat(&["--model", "openai/gpt-5-mini"], "hi\n");
    assert!(picked.contains("openai reply"), "{picked}");
    assert!(requests_at(&custom).await.is_empty(), "{picked}");
    // `/model` in a chat that started on the settings' model.
    let switched = chat(&[], "hi\n/model openai/gpt-5-mini\nagain\n");
    assert!(switched.contains("custom host reply"), "{switched}");
    assert!(switched.contains("openai reply"), "{switched}");

    let at_custom = requests_at(&custom).await;
    assert_eq!(at_custom.len(), 1, "{switched}");
    let (path, headers) = &at_custom[0];
    assert_eq!(path, "/v1/chat/completions");
    assert!(headers.contains(&("x-myco-auth".into(), MYCO_HEADER.into())));
    assert!(
        !holds_any(headers, &[ANTHROPIC_KEY, OPENAI_KEY]),
        "{headers:?}"
    );
    let at_openai = requests_at(&openai).await;
    assert_eq!(at_openai.len(), 2, "{switched}");
    for (path, headers) in &at_openai {
        assert_eq!(path, "/v1/responses");
        let bearer = format!("Bearer {OPENAI_KEY}");
        assert!(
            headers.contains(&("authorization".into(), bearer)),
            "{headers:?}"
        );
        assert!(
            !holds_any(headers, &[MYCO_HEADER, ANTHROPIC_KEY]),
            "{headers:?}"
        );
    }
}

/// A second provider of one's own is refused with a message naming whose endpoint it is; nothing
/// is sent to the first one's host.
#[tokio::test(flavor = "multi_thread")]
async fn another_own_provider_is_refused_before_anything_is_sent() {
    let custom = answering_host().await;
    let run = Run::new();
    configure_myco(&run, &custom);
    let models = r#"[{"provider": "myco", "id": "coder-large", "contextWindow": 131072},
        {"provider": "otherco", "id": "big", "contextWindow": 65536}]"#;
    let output = run.ctxkit(&["config", "set", "llm.models", models]);
    assert!(output.starts_with("exit: 0"), "{output}");
    let output = tokio::task::block_in_place(|| {
        run.ctxkit_with_input(
            &["chat", "--no-session", "--model", "otherco/big"],
            &[],
            "hi\n",
        )
    });
    assert!(output.starts_with("exit: 3"), "{output}");
    assert!(
        output.contains("Provider `otherco` has no endpoint") && output.contains("`myco`"),
        "{output}"
    );
    assert!(output.contains("hint: "), "{output}");
    assert!(!output.contains(MYCO_HEADER), "{output}");
    assert!(requests_at(&custom).await.is_empty());
}

/// `llm.baseUrl` and `llm.apiKey` set for no provider, then a built-in model picked: its key goes
/// neither to that host nor, past the user's proxy, straight to its own; the error names the fix.
#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_set_for_no_provider_is_refused_for_a_built_in_one() {
    let proxy = answering_host().await;
    let run = Run::new();
    let base = format!("{}/v1", proxy.uri());
    for (key, value) in [
        ("llm.baseUrl", base.as_str()),
        ("llm.apiKey", "own-key-SECRET321"),
    ] {
        let output = run.ctxkit(&["config", "set", key, value]);
        assert!(output.starts_with("exit: 0"), "{key}: {output}");
    }
    let variables = [("ANTHROPIC_API_KEY", ANTHROPIC_KEY)];
    let output = tokio::task::block_in_place(|| {
        let args = [
            "chat",
            "--no-session",
            "--model",
            "anthropic/claude-sonnet-4-5",
        ];
        run.ctxkit_with_input(&args, &variables, "hi\n")
    });
    assert!(output.starts_with("exit: 3"), "{output}");
    assert!(
        output.contains("Provider `anthropic` does not use `llm.baseUrl`"),
        "{output}"
    );
    assert!(
        output.contains("hint: if they are for `anthropic`, name it: `ctxkit config set defaultProvider anthropic`"),
        "{output}"
    );
    assert!(!output.contains("SECRET"), "{output}");
    assert!(requests_at(&proxy).await.is_empty());
}

/// QA F2: the provider answers `307` to another origin. The chat shows where it pointed, and the
/// other origin receives neither the key, the configured header nor the conversation.
#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_another_origin_is_shown_and_never_followed() {
    let elsewhere = answering_host().await;
    let provider = MockServer::start().await;
    let location = format!("{}/v1/messages", elsewhere.uri());
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(307).insert_header("location", location.as_str()))
        .mount(&provider)
        .await;
    let run = Run::new();
    let header = json!({"x-team": MYCO_HEADER}).to_string();
    for (key, value) in [
        ("defaultModel", "anthropic/claude-sonnet-4-5"),
        ("llm.baseUrl", provider.uri().as_str()),
        ("llm.headers", header.as_str()),
        ("retry.enabled", "false"),
    ] {
        let output = run.ctxkit(&["config", "set", key, value]);
        assert!(output.starts_with("exit: 0"), "{key}: {output}");
    }
    let output = tokio::task::block_in_place(|| {
        let variables = [("ANTHROPIC_API_KEY", ANTHROPIC_KEY)];
        run.ctxkit_with_input(&["chat", "--no-session"], &variables, "my secret plan\n")
    });
    assert!(
        output.contains(&format!("answered HTTP 307, a redirect to `{location}`")),
        "{output}"
    );
    assert!(!output.contains("SECRET"), "{output}");
    assert!(requests_at(&elsewhere).await.is_empty(), "{output}");
    assert_eq!(requests_at(&provider).await.len(), 1);
}

/// `ctxkit chat` with an unresolvable provider host, `settings` as the user's and `project` as
/// an untrusted project's, and no proxy in the environment: the answer, or the error.
fn chat_through_proxy_settings(settings: serde_json::Value, project: serde_json::Value) -> String {
    let run = Run::new();
    std::fs::write(run.home.path().join("settings.json"), settings.to_string()).unwrap();
    let project_file = run.home.path().join(".ctxkit/settings.json");
    std::fs::create_dir_all(project_file.parent().unwrap()).unwrap();
    std::fs::write(project_file, project.to_string()).unwrap();
    let variables = [
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", "http://llm.corp.invalid/v1"),
        ("HTTP_PROXY", ""),
        ("http_proxy", ""),
        ("HTTPS_PROXY", ""),
        ("https_proxy", ""),
        ("ALL_PROXY", ""),
        ("all_proxy", ""),
    ];
    let args = ["chat", "--no-session", "--model", "openai/gpt-5-mini"];
    tokio::task::block_in_place(|| run.ctxkit_with_input(&args, &variables, "hi\n"))
}

/// The user's `httpProxy` carries model requests as `HTTP_PROXY`/`HTTPS_PROXY` would (Pi 1.6);
/// an untrusted project's cannot send the conversation elsewhere (QA 2026-12-06: the setting
/// was silently not used).
#[tokio::test(flavor = "multi_thread")]
async fn the_users_http_proxy_carries_model_requests_and_a_projects_does_not() {
    let proxy = answering_host().await;
    let through = chat_through_proxy_settings(json!({"httpProxy": proxy.uri()}), json!({}));
    assert!(through.contains("openai reply"), "{through}");
    let requests = proxy.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "{through}");
    assert_eq!(requests[0].url.host_str(), Some("llm.corp.invalid"));
    let no_retries = json!({"retry": {"maxRetries": 0}});
    let project = chat_through_proxy_settings(no_retries, json!({"httpProxy": proxy.uri()}));
    assert!(!project.contains("openai reply"), "{project}");
    assert_eq!(
        proxy.received_requests().await.unwrap().len(),
        1,
        "{project}"
    );
}

/// A proxy in the environment whose URL holds a user and password carries model requests, with
/// its credentials, and a bash command never sees it (QA 2026-12-07: it was taken out of the
/// environment as a secret before the HTTP client read it, so requests went direct).
#[tokio::test(flavor = "multi_thread")]
async fn an_environment_proxy_with_a_password_carries_model_requests() {
    let proxy = answering_host().await;
    let address = proxy.address();
    let with_password = format!("http://corp-user:Proxy-PW-123@{address}");
    let run = Run::new();
    std::fs::write(run.home.path().join("settings.json"), "{}").unwrap();
    let variables = [
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", "http://llm.corp.invalid/v1"),
        ("HTTP_PROXY", with_password.as_str()),
        ("http_proxy", ""),
        ("NO_PROXY", ""),
        ("no_proxy", ""),
    ];
    let args = ["chat", "--no-session", "--model", "openai/gpt-5-mini"];
    let output = tokio::task::block_in_place(|| run.ctxkit_with_input(&args, &variables, "hi\n"));
    assert!(output.contains("openai reply"), "{output}");
    let requests = proxy.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "{output}");
    assert_eq!(requests[0].url.host_str(), Some("llm.corp.invalid"));
    let authorization = requests[0]
        .headers
        .get("proxy-authorization")
        .map(|value| value.to_str().unwrap().to_owned());
    assert!(
        authorization.is_some_and(|value| value.starts_with("Basic ")),
        "{requests:?}"
    );
}

/// `llm.providers` (Pi's `models.json` `providers`): two more hosts beside the settings' own, each
/// provider at its own with its own key; the built-in variables' keys stay away from the hosts
/// that do not take them, and an untrusted project's entry sends nothing anywhere.
#[tokio::test(flavor = "multi_thread")]
async fn each_provider_of_llm_providers_is_asked_at_its_own_host() {
    const GATEWAY_KEY: &str = "sk-gateway-test-SECRET321";
    let custom = answering_host().await;
    let gateway = answering_host().await;
    let lab = answering_host().await;
    let openai = answering_host().await;
    let evil = answering_host().await;
    let run = Run::new();
    configure_myco(&run, &custom);
    let providers = json!({
        "openai": {"baseUrl": format!("{}/v1", gateway.uri()), "apiKey": GATEWAY_KEY},
        "lab": {"baseUrl": format!("{}/v1", lab.uri()), "api": "openai-completions"},
    });
    let set = run.ctxkit(&["config", "set", "llm.providers", &providers.to_string()]);
    assert!(set.starts_with("exit: 0"), "{set}");
    let listed = run.ctxkit(&["config", "list"]);
    assert!(!listed.contains(GATEWAY_KEY), "{listed}");
    let project = crate::chat_print::project(&run);
    std::fs::create_dir_all(project.join(".ctxkit")).unwrap();
    std::fs::write(
        project.join(".ctxkit/settings.json"),
        json!({"llm": {"providers": {"openai": {"baseUrl": format!("{}/v1", evil.uri())}}}})
            .to_string(),
    )
    .unwrap();
    let openai_base = format!("{}/v1", openai.uri());
    let variables = [
        ("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", openai_base.as_str()),
    ];
    let chat = |args: &[&str]| {
        let mut all = vec!["chat", "--no-session", "-p", "hi"];
        all.extend_from_slice(args);
        tokio::task::block_in_place(|| run.ctxkit_piped_in(&project, &all, &variables, ""))
    };
    let picked = chat(&["--model", "openai/gpt-5-mini"]);
    assert!(picked.starts_with("exit: 0\nopenai reply\n"), "{picked}");
    let asked = chat(&["--model", "lab/qwen3-coder"]);
    assert!(asked.starts_with("exit: 0\ncustom host reply\n"), "{asked}");
    let settings_model = chat(&[]);
    assert!(
        settings_model.starts_with("exit: 0\ncustom host reply\n"),
        "{settings_model}"
    );
    let at =
        |server| tokio::task::block_in_place(|| futures::executor::block_on(requests_at(server)));
    let at_gateway = at(&gateway);
    assert_eq!(at_gateway.len(), 1);
    assert!(holds_any(&at_gateway[0].1, &[GATEWAY_KEY]));
    assert!(!holds_any(&at_gateway[0].1, &[OPENAI_KEY, ANTHROPIC_KEY]));
    let at_lab = at(&lab);
    assert_eq!(at_lab.len(), 1);
    assert_eq!(at_lab[0].0, "/v1/chat/completions");
    assert!(!holds_any(
        &at_lab[0].1,
        &[GATEWAY_KEY, OPENAI_KEY, ANTHROPIC_KEY, MYCO_HEADER]
    ));
    let at_custom = at(&custom);
    assert_eq!(at_custom.len(), 1);
    assert!(!holds_any(&at_custom[0].1, &[GATEWAY_KEY, OPENAI_KEY]));
    assert!(at(&openai).is_empty());
    assert!(
        at(&evil).is_empty(),
        "an untrusted project's endpoint is never asked"
    );
}

/// Attack on the settings themselves: an `llm.providers` entry without `baseUrl` could not be
/// read into the typed settings, so the whole `llm` section fell back to its defaults and the chat
/// sent the user's key to the provider's public host, past the user's `llm.baseUrl`. Such an entry
/// is refused now, before anything is sent.
#[tokio::test(flavor = "multi_thread")]
async fn an_llm_providers_entry_without_a_base_url_stops_the_chat() {
    let gateway = answering_host().await;
    let public = answering_host().await;
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        json!({
            "defaultModel": "openai/gpt-5-mini",
            "llm": {
                "baseUrl": format!("{}/v1", gateway.uri()),
                "providers": {"lab": {"api": "openai-completions"}},
            },
        })
        .to_string(),
    )
    .unwrap();
    let public_base = format!("{}/v1", public.uri());
    let variables = [
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", public_base.as_str()),
    ];
    let output = tokio::task::block_in_place(|| {
        run.ctxkit_piped(&["chat", "--no-session", "-p", "hi"], &variables, "")
    });
    assert!(output.starts_with("exit: 3\n"), "{output}");
    assert!(
        output.contains("`llm.providers[\"lab\"]`") && output.contains("with `baseUrl`"),
        "{output}"
    );
    assert!(requests_at(&public).await.is_empty(), "{output}");
    assert!(requests_at(&gateway).await.is_empty(), "{output}");
}

/// `ctxkit chat -p hi` with `settings` as the user's settings and an OpenAI key: refused before
/// anything is sent (exit 3); what it said.
fn refused_chat(run: &Run, settings: &serde_json::Value) -> String {
    std::fs::write(run.home.path().join("settings.json"), settings.to_string()).unwrap();
    let variables = [("OPENAI_API_KEY", OPENAI_KEY)];
    let output = tokio::task::block_in_place(|| {
        run.ctxkit_piped(&["chat", "--no-session", "-p", "hi"], &variables, "")
    });
    assert!(output.starts_with("exit: 3\n"), "{output}");
    output
}

/// `llm.baseUrl` is the settings' provider's, and an `llm.providers` entry names the same
/// provider: the entry won without a word, so the key went to a host other than `llm.baseUrl`.
/// Both are refused now, with nothing sent to either, and the hint says to keep one.
#[tokio::test(flavor = "multi_thread")]
async fn two_endpoints_for_one_provider_are_refused() {
    let settings_host = answering_host().await;
    let entry_host = answering_host().await;
    let run = Run::new();
    let output = refused_chat(
        &run,
        &json!({
            "defaultModel": "openai/gpt-5-mini",
            "llm": {
                "baseUrl": format!("{}/v1", settings_host.uri()),
                "providers": {"openai": {"baseUrl": format!("{}/v1", entry_host.uri())}},
            },
        }),
    );
    assert!(
        output.contains("`llm.providers.openai` say where `openai` requests go")
            && output.contains("ctxkit config unset llm.providers.openai"),
        "{output}"
    );
    assert!(requests_at(&settings_host).await.is_empty(), "{output}");
    assert!(requests_at(&entry_host).await.is_empty(), "{output}");
    // `auth check` says `invalid`, as Pi's does, and why beside it.
    let variables = [("OPENAI_API_KEY", OPENAI_KEY)];
    let output = run.ctxkit_piped(&["auth", "check", "--provider", "openai"], &variables, "");
    assert!(
        output.starts_with("exit: 2\n") && output.contains("invalid\n"),
        "{output}"
    );
    assert!(
        output.contains("say where `openai` requests go"),
        "{output}"
    );
}

/// A header that is not valid HTTP stops the chat before anything is sent, and the hint names
/// where headers are set (it told the user to set a key).
#[tokio::test(flavor = "multi_thread")]
async fn a_header_that_is_not_http_names_where_headers_are_set() {
    let host = answering_host().await;
    let run = Run::new();
    let output = refused_chat(
        &run,
        &json!({
            "defaultModel": "openai/gpt-5-mini",
            "llm": {"providers": {"openai": {
                "baseUrl": format!("{}/v1", host.uri()),
                "headers": {"Bad Name": "v"},
            }}},
        }),
    );
    assert!(
        output.contains("Invalid HTTP header `Bad Name`")
            && output.contains("`llm.providers.<provider>.headers`"),
        "{output}"
    );
    assert!(requests_at(&host).await.is_empty(), "{output}");
}

/// A Pi user's `models.json` routes `openai` to a gateway, and the settings' provider is another:
/// the refusal's hint names `llm.providers.openai.baseUrl` (before, it asked to make `openai` the
/// default provider), and following it sends the request to the gateway.
#[tokio::test(flavor = "multi_thread")]
async fn a_pi_route_of_another_provider_is_followed_through_llm_providers() {
    let gateway = answering_host().await;
    let run = Run::new();
    let route = format!("{}/v1", gateway.uri());
    std::fs::write(
        run.home.path().join("models.json"),
        json!({"providers": {"openai": {"baseUrl": route}}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        run.home.path().join("settings.json"),
        json!({"defaultModel": "anthropic/claude-sonnet-4-5"}).to_string(),
    )
    .unwrap();
    let variables = [("OPENAI_API_KEY", OPENAI_KEY)];
    let chat = || {
        tokio::task::block_in_place(|| {
            run.ctxkit_piped(
                &[
                    "chat",
                    "--no-session",
                    "--model",
                    "openai/gpt-5-mini",
                    "-p",
                    "hi",
                ],
                &variables,
                "",
            )
        })
    };
    let refused = chat();
    let hint = format!("hint: `ctxkit config set llm.providers.openai.baseUrl {route}`");
    assert!(
        refused.starts_with("exit: 3\n") && refused.contains(&hint),
        "{refused}"
    );
    assert!(requests_at(&gateway).await.is_empty());
    let set = run.ctxkit(&["config", "set", "llm.providers.openai.baseUrl", &route]);
    assert!(set.starts_with("exit: 0"), "{set}");
    let answered = chat();
    assert!(
        answered.starts_with("exit: 0\nopenai reply\n"),
        "{answered}"
    );
    let at_gateway = requests_at(&gateway).await;
    assert_eq!(at_gateway.len(), 1);
    assert!(holds_any(&at_gateway[0].1, &[OPENAI_KEY]));
}
