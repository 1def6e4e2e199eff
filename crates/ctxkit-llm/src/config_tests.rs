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
fn model_specs_are_read_without_surrounding_blanks() {
    let spec = ModelSpec::parse(" anthropic/claude-sonnet-4-5 \n").unwrap();
    assert_eq!(spec.provider.as_deref(), Some("anthropic"));
    assert_eq!(spec.id, "claude-sonnet-4-5");
    assert_eq!(ModelSpec::parse("gpt-4o ").unwrap().id, "gpt-4o");
    assert!(ModelSpec::parse("   ").is_err());
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
        "No API key for provider `anthropic`; run `ctxkit login anthropic` or set `ANTHROPIC_API_KEY` (or `llm.apiKey`, with `defaultModel` a model of `anthropic`)"
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
        images: true,
        adaptive_thinking: false,
        xhigh_effort: None,
        chat_compat: Default::default(),
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
        images: true,
        adaptive_thinking: false,
        xhigh_effort: None,
        chat_compat: Default::default(),
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
        tiers: Vec::new(),
    };
    gateway.model_costs.push(ModelCost {
        provider: "gateway".into(),
        id: "claude-proxy".into(),
        prices: Some(prices.clone()),
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

/// The settings of the README's "any other endpoint": `myco` at its own host, with its key and an
/// auth header.
fn myco_endpoint() -> LlmOptions {
    let mut headers = BTreeMap::new();
    headers.insert("x-myco-auth".to_owned(), "myco-token-SECRET789".to_owned());
    LlmOptions {
        model: Some("myco/coder-large".into()),
        api: Some(Api::OpenAiChat),
        base_url: Some("http://myco.local/v1".into()),
        api_key: Some(ApiKey::new("myco-key-SECRET")),
        headers,
        models: vec![ModelLimits {
            provider: "myco".into(),
            id: "coder-large".into(),
            context_window: 131_072,
            max_output: 8_192,
            reasoning: false,
            images: true,
            adaptive_thinking: false,
            xhigh_effort: None,
            chat_compat: Default::default(),
        }],
        ..LlmOptions::default()
    }
}

/// A distinct key in every built-in provider's variable.
fn every_key() -> EnvSettings {
    let pairs: Vec<(String, String)> = crate::models::PROVIDERS
        .iter()
        .filter_map(|provider| provider.key_env)
        .map(|name| (name.to_owned(), format!("key-of-{name}")))
        .collect();
    EnvSettings::from_map(&pairs.into_iter().collect())
}

/// QA F1: a built-in model picked for a run (`--model`, `/model`) or for summaries goes to its own
/// host, in its own format, with its own key and none of the settings' provider's headers.
#[test]
fn a_picked_built_in_model_never_takes_the_settings_endpoint() {
    let env = every_key();
    for provider in crate::models::PROVIDERS {
        let model = format!("{}/some-model", provider.name);
        let mut agent = myco_endpoint();
        agent.picked_model = Some(model.clone());
        let mut summaries = myco_endpoint();
        summaries.picked_compaction_model = Some(model.clone());
        let resolved = [
            resolve_model(&agent, &env, ModelRole::Agent),
            resolve_model(&agent, &env, ModelRole::Compaction),
            resolve_model(&summaries, &env, ModelRole::Compaction),
        ];
        for config in resolved {
            let config = config.unwrap().unwrap();
            assert_eq!(config.provider, provider.name);
            assert_eq!(config.base_url, provider.base_url.trim_end_matches('/'));
            assert_eq!(config.api, provider.api, "{model}");
            assert!(config.headers.is_empty(), "{model}: {:?}", config.headers);
            let expected = provider.key_env.map(|name| format!("key-of-{name}"));
            let key = config
                .api_key
                .as_ref()
                .map(|key| key.expose_secret().to_owned());
            assert_eq!(key, expected, "{model}");
        }
    }
    // The settings' own model keeps its endpoint.
    let own = resolve_model(&myco_endpoint(), &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(own.base_url, "http://myco.local/v1");
    assert_eq!(
        own.api_key.map(|key| key.expose_secret().to_owned()),
        Some("myco-key-SECRET".into())
    );
    assert!(own.headers.contains_key("x-myco-auth"));
}

/// A base URL set for a built-in provider (a gateway in front of Anthropic) serves that provider's
/// picked models and summaries; another provider's model never goes there.
#[test]
fn a_built_in_providers_gateway_serves_that_provider_only() {
    let options = LlmOptions {
        model: Some("anthropic/claude-sonnet-4-5".into()),
        picked_model: Some("anthropic/claude-haiku-4-5".into()),
        base_url: Some("https://gateway.local".into()),
        api_key: Some(ApiKey::new("gateway-key")),
        ..LlmOptions::default()
    };
    let env = every_key();
    let haiku = resolve_model(&options, &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(haiku.base_url, "https://gateway.local");
    assert_eq!(
        haiku.api_key.map(|key| key.expose_secret().to_owned()),
        Some("gateway-key".into())
    );
    let mut other = options.clone();
    other.picked_model = Some("openai/gpt-5-mini".into());
    let openai = resolve_model(&other, &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(openai.base_url, "https://api.openai.com/v1");
    assert_eq!(
        openai.api_key.map(|key| key.expose_secret().to_owned()),
        Some("key-of-OPENAI_API_KEY".into())
    );
}

/// With no provider named in the settings, `llm.api` alone sets a built-in provider's format
/// (README: `llm.api openai-completions` with `--model openai/…`); a base URL, key or header set
/// for no provider is refused for it, neither sent its key nor skipped; providers of one's own get
/// the endpoint.
#[test]
fn with_no_provider_named_a_built_in_provider_takes_the_format_only() {
    let env = every_key();
    let format_only = LlmOptions {
        picked_model: Some("openai/gpt-5-mini".into()),
        api: Some(Api::OpenAiChat),
        ..LlmOptions::default()
    };
    let openai = resolve_model(&format_only, &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(openai.api, Api::OpenAiChat);
    assert_eq!(openai.base_url, "https://api.openai.com/v1");
    assert_eq!(
        openai.api_key.map(|key| key.expose_secret().to_owned()),
        Some("key-of-OPENAI_API_KEY".into())
    );
    let mut unowned = myco_endpoint();
    unowned.model = None;
    unowned.models.push(ModelLimits {
        provider: "otherco".into(),
        ..unowned.models[0].clone()
    });
    unowned.picked_model = Some("anthropic/claude-sonnet-4-5".into());
    let error = resolve_model(&unowned, &env, ModelRole::Agent).unwrap_err();
    assert!(
        matches!(&error, LlmError::UnownedEndpoint { provider } if provider == "anthropic"),
        "{error:?}"
    );
    unowned.picked_model = Some("myco/coder-large".into());
    let myco = resolve_model(&unowned, &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(myco.base_url, "http://myco.local/v1");
    assert!(myco.headers.contains_key("x-myco-auth"));
    // One provider of one's own in `llm.models` owns the endpoint: built-in providers go home.
    let mut declared = myco_endpoint();
    declared.model = None;
    declared.picked_model = Some("anthropic/claude-sonnet-4-5".into());
    let anthropic = resolve_model(&declared, &env, ModelRole::Agent)
        .unwrap()
        .unwrap();
    assert_eq!(anthropic.base_url, "https://api.anthropic.com");
    assert!(anthropic.headers.is_empty());
}

/// A second provider of one's own has no endpoint while the settings name the first: it is refused
/// with a message saying whose the endpoint is, instead of being sent to the first one's host.
#[test]
fn another_own_provider_is_refused_not_sent_to_the_settings_host() {
    let mut options = myco_endpoint();
    options.models.push(ModelLimits {
        provider: "otherco".into(),
        id: "big".into(),
        context_window: 65_536,
        max_output: 4_096,
        reasoning: false,
        images: true,
        adaptive_thinking: false,
        xhigh_effort: None,
        chat_compat: Default::default(),
    });
    options.picked_model = Some("otherco/big".into());
    let error = resolve_model(&options, &every_key(), ModelRole::Agent).unwrap_err();
    assert!(
        matches!(&error, LlmError::EndpointOfAnotherProvider { provider, owner }
            if provider == "otherco" && owner == "myco"),
        "{error:?}"
    );
    assert!(!error.to_string().contains("SECRET"), "{error}");
}

#[test]
fn a_model_s_limits_need_no_key() {
    // No key anywhere: resolving the model to call it fails, its window is still known.
    let options = options("anthropic/claude-sonnet-4-5");
    assert!(resolve_model(&options, &env(&[]), ModelRole::Compaction).is_err());
    let limits = model_limits(&options, ModelRole::Compaction).unwrap();
    assert_eq!(limits.map(|limits| limits.context_window), Some(200_000));
    assert!(
        model_limits(&LlmOptions::default(), ModelRole::Compaction)
            .unwrap()
            .is_none()
    );
}

/// QA r105: `google/gemini-3-pro-preview` (an id the table lacks) at `high` was sent
/// `thinkingLevel: "MINIMAL"`: the chat took it for a model that does not reason and asked no
/// level, and a Gemini 3 model with no level gets its lowest. It reasons by its id.
#[test]
fn a_gemini_model_that_takes_levels_reasons_whatever_the_table_knows() {
    let keys = env(&[("GEMINI_API_KEY", "g"), ("OPENAI_API_KEY", "o")]);
    let reasons = |model: &str| {
        resolve_model(&options(model), &keys, ModelRole::Agent)
            .unwrap()
            .unwrap()
            .reasons()
    };
    assert!(reasons("google/gemini-3-pro-preview"));
    assert!(reasons("google/gemini-3.1-pro-preview"));
    assert!(reasons("openai/gpt-5-mini"));
    assert!(!reasons("google/gemini-2.0-flash-lite-unknown"));
    assert!(!reasons("openai/gpt-4.1"));
    let config = resolve_model(
        &options("google/gemini-3-pro-preview"),
        &keys,
        ModelRole::Agent,
    )
    .unwrap()
    .unwrap();
    let generation = crate::wire::gemini::generation(
        &config,
        Some(1000),
        Some(crate::ReasoningLevel::High),
        true,
    );
    assert_eq!(generation["thinkingConfig"]["thinkingLevel"], "HIGH");
}

/// `llm.providers`: each provider named there is asked at its own host with its own key and
/// headers, whoever the settings' provider is; the others keep theirs.
#[test]
fn each_provider_of_llm_providers_goes_to_its_own_endpoint() {
    let mut options = options("anthropic/claude-sonnet-4-5");
    options.base_url = Some("https://anthropic-gateway.corp/v1".to_owned());
    options.providers.insert(
        "openai".to_owned(),
        OwnEndpoint {
            base_url: "https://openai-gateway.corp/v1/".to_owned(),
            api_key: Some(ApiKey::new("sk-gateway")),
            headers: BTreeMap::from([("X-Team".to_owned(), "core".to_owned())]),
            ..OwnEndpoint::default()
        },
    );
    options.providers.insert(
        "lab".to_owned(),
        OwnEndpoint {
            base_url: "http://gpu-box:8000/v1".to_owned(),
            api: Some(Api::OpenAiChat),
            ..OwnEndpoint::default()
        },
    );
    let env = env(&[
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("OPENAI_API_KEY", "sk-oai"),
    ]);
    let resolve = |options: &LlmOptions, spec: &str| {
        let mut picked = options.clone();
        picked.picked_model = Some(spec.to_owned());
        resolve_model(&picked, &env, ModelRole::Agent)
    };
    let anthropic = resolve(&options, "anthropic/claude-sonnet-4-5")
        .unwrap()
        .unwrap();
    assert_eq!(anthropic.base_url, "https://anthropic-gateway.corp/v1");
    let openai = resolve(&options, "openai/gpt-4o-mini").unwrap().unwrap();
    assert_eq!(openai.base_url, "https://openai-gateway.corp/v1");
    assert_eq!(openai.api, Api::OpenAiResponses);
    assert_eq!(openai.api_key.unwrap().expose_secret(), "sk-gateway");
    assert_eq!(
        openai.headers.get("X-Team").map(String::as_str),
        Some("core")
    );
    // A provider of one's own, declared by its entry alone, takes no key.
    let lab = resolve(&options, "lab/qwen3-coder").unwrap().unwrap();
    assert_eq!(lab.base_url, "http://gpu-box:8000/v1");
    assert_eq!(lab.api, Api::OpenAiChat);
    assert!(lab.api_key.is_none() && lab.headers.is_empty());
    // An entry without a key takes the provider's variable, as `llm.baseUrl` does, and a built-in
    // provider with neither is refused before anything is sent.
    options.providers.get_mut("openai").unwrap().api_key = None;
    let openai = resolve(&options, "openai/gpt-4o-mini").unwrap().unwrap();
    assert_eq!(openai.api_key.unwrap().expose_secret(), "sk-oai");
    let missing = resolve_model(
        &LlmOptions {
            picked_model: Some("openai/gpt-4o-mini".to_owned()),
            ..options.clone()
        },
        &EnvSettings::default(),
        ModelRole::Agent,
    );
    assert!(
        matches!(missing, Err(LlmError::MissingApiKey { .. })),
        "{missing:?}"
    );
    // A provider of one's own with no format is refused.
    options.providers.get_mut("lab").unwrap().api = None;
    assert!(matches!(
        resolve(&options, "lab/qwen3-coder"),
        Err(LlmError::UnknownProvider { .. })
    ));
}
