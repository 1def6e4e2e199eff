//! Resolution of options and environment into a provider configuration.

use super::*;

fn env(pairs: &[(&str, &str)]) -> EnvSettings {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    EnvSettings::from_map(&map)
}

fn options(model: &str) -> LlmOptions {
    LlmOptions {
        model: Some(model.to_owned()),
        ..LlmOptions::default()
    }
}

#[test]
fn model_specs_split_at_the_first_slash() {
    let spec = ModelSpec::parse("openrouter/anthropic/claude-sonnet-4").unwrap();
    assert_eq!(spec.provider.as_deref(), Some("openrouter"));
    assert_eq!(spec.id, "anthropic/claude-sonnet-4");
    assert_eq!(ModelSpec::parse("gpt-4o").unwrap().provider, None);
    assert!(ModelSpec::parse("anthropic/").is_err());
    assert!(ModelSpec::parse("/x").is_err());
    assert!(ModelSpec::parse("").is_err());
}

#[test]
fn no_model_means_no_provider() {
    let resolved = resolve_model(&LlmOptions::default(), &env(&[]), ModelRole::Compaction).unwrap();
    assert!(resolved.is_none());
}

#[test]
fn keys_and_base_url_come_from_the_environment_map() {
    let env = env(&[
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("OPENAI_API_KEY", "sk-oai"),
        ("OPENAI_BASE_URL", "http://proxy.local/v1/"),
        ("GEMINI_API_KEY", "g-key"),
    ]);
    let anthropic = resolve_model(
        &options("anthropic/claude-sonnet-4-5"),
        &env,
        ModelRole::Agent,
    )
    .unwrap()
    .unwrap();
    assert_eq!(anthropic.api, Api::AnthropicMessages);
    assert_eq!(
        anthropic.api_key.as_ref().map(ApiKey::expose_secret),
        Some("sk-ant")
    );
    assert_eq!(
        anthropic.model_info.as_ref().map(|m| m.context_window),
        Some(200_000)
    );

    let openai = resolve_model(&options("gpt-4o"), &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(openai.provider, "openai");
    assert_eq!(openai.api, Api::OpenAiResponses);
    assert_eq!(openai.base_url, "http://proxy.local/v1");

    let gemini = resolve_model(&options("gemini/gemini-2.5-flash"), &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(gemini.provider, "google");
    assert_eq!(
        gemini.api_key.as_ref().map(ApiKey::expose_secret),
        Some("g-key")
    );
}

#[test]
fn a_missing_key_names_the_variable_and_local_servers_need_none() {
    let error = resolve_model(
        &options("anthropic/claude-haiku-4-5"),
        &env(&[]),
        ModelRole::Agent,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "No API key for provider `anthropic`; set `ANTHROPIC_API_KEY` or the `llm.apiKey` setting"
    );
    let ollama = resolve_model(&options("ollama/qwen3:8b"), &env(&[]), ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(ollama.api, Api::OpenAiChat);
    assert_eq!(ollama.base_url, "http://localhost:11434/v1");
    assert!(ollama.api_key.is_none());
}

#[test]
fn the_compaction_model_is_separate_and_options_stay_with_their_provider() {
    let mut headers = BTreeMap::new();
    headers.insert("X-Team".to_owned(), "secret-team".to_owned());
    let options = LlmOptions {
        model: Some("anthropic/claude-sonnet-4-5".into()),
        compaction_model: Some("openai/gpt-5-mini".into()),
        base_url: Some("https://gateway.local".into()),
        api_key: Some(ApiKey::new("sk-explicit")),
        headers,
        ..LlmOptions::default()
    };
    let env = env(&[("OPENAI_API_KEY", "sk-oai")]);
    let agent = resolve_model(&options, &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(agent.base_url, "https://gateway.local");
    assert_eq!(
        agent.api_key.as_ref().map(ApiKey::expose_secret),
        Some("sk-explicit")
    );
    let compaction = resolve_model(&options, &env, ModelRole::Compaction)
        .unwrap()
        .unwrap();
    assert_eq!(compaction.display_name(), "openai/gpt-5-mini");
    assert_eq!(compaction.base_url, "https://api.openai.com/v1");
    assert_eq!(
        compaction.api_key.as_ref().map(ApiKey::expose_secret),
        Some("sk-oai")
    );
    assert!(compaction.headers.is_empty());

    let debug = format!("{agent:?} {options:?}");
    assert!(!debug.contains("sk-explicit"), "{debug}");
    assert!(!debug.contains("secret-team"), "{debug}");
}

#[test]
fn custom_providers_need_an_api_and_a_base_url() {
    let mut custom = options("corp/llama-70b");
    assert!(matches!(
        resolve_model(&custom, &env(&[]), ModelRole::Agent),
        Err(LlmError::UnknownProvider { .. })
    ));
    custom.api = Some(Api::OpenAiChat);
    custom.base_url = Some("https://llm.corp.local/v1".into());
    custom.models.push(ModelLimits {
        provider: "corp".into(),
        id: "llama-70b".into(),
        context_window: 65_536,
        max_output: 4_096,
        reasoning: false,
    });
    let resolved = resolve_model(&custom, &env(&[]), ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(resolved.model_info.map(|m| m.context_window), Some(65_536));
    assert!(resolved.api_key.is_none());
}

#[test]
fn an_undeclared_provider_is_never_sent_to_the_configured_base_url() {
    // `--model nope/x` with `llm.baseUrl` set for another provider of one's own.
    let mut typo = options("nope/x");
    typo.api = Some(Api::OpenAiChat);
    typo.base_url = Some("https://llm.corp.local/v1".into());
    let error = resolve_model(&typo, &env(&[]), ModelRole::Agent).unwrap_err();
    assert!(matches!(&error, LlmError::UnknownProvider { provider } if provider == "nope"));
    assert!(error.to_string().contains("llm.models"), "{error}");
    // Declared as the default provider, it resolves to the base URL.
    typo.provider = Some("nope".into());
    let resolved = resolve_model(&typo, &env(&[]), ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(resolved.base_url, "https://llm.corp.local/v1");
}

/// Issue 41: a gateway model's `cost` and `cacheRetention` (from `llm.models`) price its calls and
/// set its cache lifetime; a built-in model keeps its list price unless its entry gives one.
#[test]
fn a_user_models_prices_and_cache_lifetime_apply() {
    let mut gateway = options("gateway/claude-proxy");
    gateway.api = Some(Api::AnthropicMessages);
    gateway.base_url = Some("https://gateway.local".into());
    gateway.models.push(ModelLimits {
        provider: "gateway".into(),
        id: "claude-proxy".into(),
        context_window: 200_000,
        max_output: 8_192,
        reasoning: false,
    });
    let unpriced = resolve_model(&gateway, &env(&[]), ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(unpriced.prices, None);
    let prices = ModelPrices {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
    };
    gateway.model_costs.push(ModelCost {
        provider: "gateway".into(),
        id: "claude-proxy".into(),
        prices: Some(prices),
        cache_retention: Some(CacheRetention::Long),
    });
    let priced = resolve_model(&gateway, &env(&[]), ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(priced.prices, Some(prices));
    assert_eq!(priced.cache_retention, CacheRetention::Long);
    let builtin = resolve_model(
        &options("anthropic/claude-sonnet-4-5"),
        &env(&[("ANTHROPIC_API_KEY", "k")]),
        ModelRole::Agent,
    )
    .unwrap()
    .unwrap();
    assert_eq!(builtin.prices.map(|prices| prices.input), Some(3.0));
}

#[test]
fn a_bare_id_no_model_has_names_the_model_not_an_empty_provider() {
    let bare = options("garbage");
    let error = resolve_model(&bare, &env(&[]), ModelRole::Agent).unwrap_err();
    assert!(
        matches!(&error, LlmError::InvalidModel { spec } if spec == "garbage"),
        "{error:?}"
    );
}
