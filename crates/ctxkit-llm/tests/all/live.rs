//! Live tests against the real providers, for the keys present in the environment. Ignored by
//! default (`cargo test` needs no network and no key); run them with
//! `cargo test -p ctxkit-llm -- --ignored live --nocapture`. A provider without a key is skipped and named.

#![allow(
    clippy::print_stderr,
    reason = "the live suite reports which providers it skipped"
)]

use std::collections::BTreeMap;

use ctxkit_llm::{
    CompletionRequest, EnvSettings, LlmOptions, ModelClient, ModelRole, resolve_model,
};
use tokio_util::sync::CancellationToken;

const LIVE_MODELS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "anthropic/claude-haiku-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-5-mini"),
    ("GEMINI_API_KEY", "google/gemini-2.5-flash"),
];

#[tokio::test]
#[ignore = "talks to real providers; needs API keys"]
async fn live_providers_answer_a_tiny_request() {
    let variables: BTreeMap<String, String> = EnvSettings::variable_names()
        .into_iter()
        .filter_map(|name| {
            std::env::var(name)
                .ok()
                .map(|value| (name.to_owned(), value))
        })
        .collect();
    let environment = EnvSettings::from_map(&variables);
    let mut tried = 0;
    for (key, model) in LIVE_MODELS {
        if !variables.contains_key(*key) {
            eprintln!("skipping {model}: {key} is not set");
            continue;
        }
        let options = LlmOptions {
            model: Some((*model).to_owned()),
            ..LlmOptions::default()
        };
        let config = resolve_model(&options, &environment, ModelRole::Agent)
            .unwrap()
            .unwrap();
        let client = ModelClient::new(config).unwrap();
        let request = CompletionRequest {
            system_prompt: "Answer with one word.".into(),
            user_text: "Say OK.".into(),
            max_tokens: 64,
            reasoning: None,
        };
        let completion = client
            .complete(&request, &CancellationToken::new())
            .await
            .unwrap();
        assert!(
            !completion.text.trim().is_empty(),
            "{model} answered nothing"
        );
        assert!(completion.usage.input > 0, "{model} reported no usage");
        tried += 1;
    }
    eprintln!("{tried} live provider(s) checked");
}
