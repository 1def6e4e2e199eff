//! Who `llm.baseUrl`, `llm.api`, `llm.apiKey` and `llm.headers` belong to. They describe one
//! endpoint, that of the provider the settings name; a model picked for one run (`--model`,
//! `/model`, a server run's `model`) or the summary model of another provider never takes them
//! over, so a built-in provider's key never goes to a host of one's own, and a host of one's own
//! never gets a built-in provider's key (`docs/security.md`). A provider named in `llm.providers`
//! has an endpoint of its own, which it alone gets.

use std::collections::BTreeMap;

use ctxkit_secrets::ApiKey;

use crate::config::{EnvSettings, ForeignRoute, LlmOptions, ModelSpec, OwnEndpoint};
use crate::error::LlmError;
use crate::models::{Api, ModelTable, find_provider};

/// What of the configured endpoint a provider gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EndpointShare {
    /// All of it: base URL, wire format, key and headers (the settings' provider; with none named,
    /// a provider of one's own, which has nothing else).
    Whole,
    /// The wire format only (a built-in provider when the settings name no provider: `llm.api
    /// openai-completions` with `--model openai/…`). Its host and its key stay its own; a base URL,
    /// key or header set for no provider is refused rather than skipped, so a proxy the user meant
    /// is never bypassed without a word.
    FormatOnly,
    /// None of it: the provider's own host, format, key variable and no extra headers.
    Nothing,
}

/// The provider the endpoint settings belong to: that of `defaultModel` (a bare id: `defaultProvider`,
/// else the model table's), else `defaultProvider`, else that of `compaction.model`, else the one
/// provider of one's own `llm.models` declares. Read from the settings only, never from a model
/// picked for a run. `None` when the settings name none.
pub(crate) fn endpoint_owner(
    options: &LlmOptions,
    table: &ModelTable,
) -> Result<Option<String>, LlmError> {
    let default_model = parse(options.model.as_deref())?;
    let compaction_model = parse(options.compaction_model.as_deref())?;
    let owner = provider_of(default_model.as_ref(), options.provider.as_deref(), table)
        .or_else(|| provider_of(compaction_model.as_ref(), None, table))
        .or_else(|| only_own_provider(options));
    Ok(owner.map(|provider| canonical(&provider)))
}

/// The provider of one's own `llm.models` declares, when it declares exactly one.
fn only_own_provider(options: &LlmOptions) -> Option<String> {
    let mut own = options
        .models
        .iter()
        .map(|model| canonical(&model.provider))
        .filter(|provider| find_provider(provider).is_none());
    let first = own.next()?;
    own.all(|provider| provider == first).then_some(first)
}

/// What `provider` gets of the endpoint that `owner` was configured for.
pub(crate) fn endpoint_share(owner: Option<&str>, provider: &str, builtin: bool) -> EndpointShare {
    match owner {
        Some(owner) if owner == provider => EndpointShare::Whole,
        Some(_) => EndpointShare::Nothing,
        None if builtin => EndpointShare::FormatOnly,
        None => EndpointShare::Whole,
    }
}

/// Where a provider's requests go and what they carry.
pub(crate) struct Endpoint {
    pub(crate) api: Api,
    /// Without a trailing `/`.
    pub(crate) base_url: String,
    pub(crate) api_key: Option<ApiKey>,
    pub(crate) headers: BTreeMap<String, String>,
}

/// `provider`'s endpoint for its model `model`: the configured one as far as `share` allows, then
/// `OPENAI_BASE_URL` for `openai`, the built-in defaults and the provider's own key variable.
pub(crate) fn endpoint(
    options: &LlmOptions,
    env: &EnvSettings,
    provider: &str,
    model: &str,
    share: EndpointShare,
    owner: Option<&str>,
) -> Result<Endpoint, LlmError> {
    let builtin = find_provider(provider);
    let whole = share == EndpointShare::Whole;
    let unowned =
        options.base_url.is_some() || options.api_key.is_some() || !options.headers.is_empty();
    if let Some(own) = options.providers.get(provider) {
        if whole && unowned {
            return Err(LlmError::TwoEndpoints {
                provider: provider.to_owned(),
            });
        }
        return own_endpoint(own, env, provider);
    }
    if share == EndpointShare::FormatOnly && unowned {
        return Err(LlmError::UnownedEndpoint {
            provider: provider.to_owned(),
        });
    }
    let no_endpoint = || match owner {
        Some(owner) if builtin.is_none() && owner != provider => {
            LlmError::EndpointOfAnotherProvider {
                provider: provider.to_owned(),
                owner: owner.to_owned(),
            }
        }
        _ => LlmError::UnknownProvider {
            provider: provider.to_owned(),
        },
    };
    let api = options
        .api
        .filter(|_| share != EndpointShare::Nothing)
        .or(builtin.map(|info| info.api))
        .ok_or_else(no_endpoint)?;
    let env_base_url = env.openai_base_url.clone().filter(|_| provider == "openai");
    let told = options.base_url.clone().filter(|_| whole).or(env_base_url);
    let base_url = match told {
        Some(base_url) => base_url,
        None => {
            let public = builtin
                .map(|info| info.base_url.to_owned())
                .ok_or_else(no_endpoint)?;
            refuse_route_elsewhere(env, provider, model, &public, whole)?;
            public
        }
    };
    let api_key = key_or_missing(options.api_key.clone().filter(|_| whole), env, provider)?;
    let headers = if whole {
        options.headers.clone()
    } else {
        BTreeMap::new()
    };
    Ok(Endpoint {
        api,
        base_url: base_url.trim_end_matches('/').to_owned(),
        api_key,
        headers,
    })
}

/// `provider`'s endpoint from its `llm.providers` entry: that host, its wire format (else the
/// built-in provider's), its key (else the saved key or the provider's variable, as for
/// `llm.baseUrl`) and its headers. Pi's routes are not consulted: the user said where it goes.
fn own_endpoint(
    own: &OwnEndpoint,
    env: &EnvSettings,
    provider: &str,
) -> Result<Endpoint, LlmError> {
    let builtin = find_provider(provider);
    let api =
        own.api
            .or(builtin.map(|info| info.api))
            .ok_or_else(|| LlmError::UnknownProvider {
                provider: provider.to_owned(),
            })?;
    let api_key = key_or_missing(own.api_key.clone(), env, provider)?;
    Ok(Endpoint {
        api,
        base_url: own.base_url.trim_end_matches('/').to_owned(),
        api_key,
        headers: own.headers.clone(),
    })
}

/// The key `provider`'s requests carry: the `configured` one, else the saved key or the provider's
/// variable; none for a built-in provider that takes one is refused before anything is sent.
fn key_or_missing(
    configured: Option<ApiKey>,
    env: &EnvSettings,
    provider: &str,
) -> Result<Option<ApiKey>, LlmError> {
    let api_key = configured.or_else(|| env.api_keys.get(provider).cloned());
    if api_key.is_none()
        && let Some(key_env) = find_provider(provider).and_then(|info| info.key_env)
    {
        return Err(LlmError::MissingApiKey {
            provider: provider.to_owned(),
            env_var: key_env.to_owned(),
        });
    }
    Ok(api_key)
}

/// Refuses `provider`'s public host `public_url`, which ctxkit was not told to use, for its model
/// `model`, when the user's Pi routes the provider to another host: its key would go where the
/// user's setup says it does not. The provider counts as routed elsewhere when its `baseUrl` or
/// any of its models' own `baseUrl` is another host, unless `model`'s own route is the public host
/// (a model whose id Pi's file spells differently is never taken for the public one). A Pi file
/// that cannot be read refuses every provider: where it routes them is unknown.
fn refuse_route_elsewhere(
    env: &EnvSettings,
    provider: &str,
    model: &str,
    public_url: &str,
    owns_settings: bool,
) -> Result<(), LlmError> {
    if let Some(unreadable) = env.unreadable_routes.first() {
        return Err(LlmError::PiRoutesUnknown {
            provider: provider.to_owned(),
            default_url: public_url.to_owned(),
            file: unreadable.file.clone(),
            reason: unreadable.reason.clone(),
        });
    }
    let routes: Vec<&ForeignRoute> = env
        .foreign_routes
        .iter()
        .filter(|route| canonical(&route.provider) == provider)
        .collect();
    let is_public = |route: &ForeignRoute| origin(&route.base_url) == origin(public_url);
    let own = routes
        .iter()
        .copied()
        .find(|route| route.model.as_deref() == Some(model));
    if own.is_some_and(is_public) {
        return Ok(());
    }
    // The model's own route first, then the provider's, then another model's.
    let elsewhere = own
        .into_iter()
        .chain(routes.iter().copied().filter(|route| route.model.is_none()))
        .chain(routes.iter().copied().filter(|route| route.model.is_some()))
        .find(|route| !is_public(route));
    let Some(route) = elsewhere else {
        return Ok(());
    };
    Err(LlmError::RoutedElsewhere {
        provider: provider.to_owned(),
        default_url: public_url.to_owned(),
        route_url: route.base_url.clone(),
        file: route.file.clone(),
        owns_settings,
    })
}

/// The scheme and host of `url`, lowercase: where a request goes.
fn origin(url: &str) -> String {
    let scheme = url
        .split_once("://")
        .map_or("", |(scheme, _)| scheme)
        .to_ascii_lowercase();
    format!("{scheme}://{}", crate::error::host_of(url))
}

/// The provider of `spec`: its own prefix, else `default_provider`, else the model table's
/// provider of its id. With no spec, `default_provider`.
pub(crate) fn provider_of(
    spec: Option<&ModelSpec>,
    default_provider: Option<&str>,
    table: &ModelTable,
) -> Option<String> {
    spec.and_then(|spec| spec.provider.clone())
        .or_else(|| default_provider.map(str::to_owned))
        .or_else(|| {
            let id = &spec?.id;
            table.find_by_id(id).map(|model| model.provider.clone())
        })
}

/// The provider's one name: `gemini` is `google`.
pub(crate) fn canonical(provider: &str) -> String {
    if provider == "gemini" {
        "google".to_owned()
    } else {
        provider.to_owned()
    }
}

fn parse(spec: Option<&str>) -> Result<Option<ModelSpec>, LlmError> {
    spec.map(ModelSpec::parse).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner_of(options: &LlmOptions) -> Option<String> {
        endpoint_owner(options, &ModelTable::builtin()).unwrap()
    }

    #[test]
    fn the_owner_comes_from_the_settings_model_then_provider_then_summary_model() {
        let mut options = LlmOptions {
            model: Some("myco/coder-large".into()),
            provider: Some("other".into()),
            compaction_model: Some("openai/gpt-5-mini".into()),
            ..LlmOptions::default()
        };
        assert_eq!(owner_of(&options).as_deref(), Some("myco"));
        options.model = Some("coder-large".into());
        assert_eq!(owner_of(&options).as_deref(), Some("other"));
        options.provider = None;
        options.model = Some("claude-sonnet-4-5".into());
        assert_eq!(owner_of(&options).as_deref(), Some("anthropic"));
        options.model = None;
        assert_eq!(owner_of(&options).as_deref(), Some("openai"));
        options.compaction_model = Some("gemini/gemini-2.5-flash".into());
        assert_eq!(owner_of(&options).as_deref(), Some("google"));
        options.compaction_model = None;
        assert_eq!(owner_of(&options), None);
        // The one provider of one's own the models declare; with two, none.
        let model = |provider: &str| crate::models::ModelLimits {
            provider: provider.into(),
            id: "m".into(),
            context_window: 1000,
            max_output: 100,
            reasoning: false,
            images: true,
            adaptive_thinking: false,
            xhigh_effort: None,
            chat_compat: Default::default(),
        };
        options.models = vec![model("openai"), model("myco"), model("myco")];
        assert_eq!(owner_of(&options).as_deref(), Some("myco"));
        options.models.push(model("otherco"));
        assert_eq!(owner_of(&options), None);
    }

    #[test]
    fn a_picked_model_never_becomes_the_owner() {
        let options = LlmOptions {
            model: Some("myco/coder-large".into()),
            picked_model: Some("anthropic/claude-sonnet-4-5".into()),
            picked_compaction_model: Some("openai/gpt-5-mini".into()),
            ..LlmOptions::default()
        };
        assert_eq!(owner_of(&options).as_deref(), Some("myco"));
        let unnamed = LlmOptions {
            picked_model: Some("anthropic/claude-sonnet-4-5".into()),
            ..LlmOptions::default()
        };
        assert_eq!(owner_of(&unnamed), None);
    }

    /// QA r106 (migrate, defect 1): a Pi user's `models.json` routes `anthropic` through their
    /// gateway; ctxkit, not told of it, sent the key to api.anthropic.com. Refused unless told.
    #[test]
    fn a_public_host_is_refused_where_pi_routes_the_provider_elsewhere() {
        let mut env = EnvSettings::from_map(
            &[
                ("ANTHROPIC_API_KEY", "sk-ant-0123456789"),
                ("OPENAI_API_KEY", "sk-0123456789"),
            ]
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect(),
        );
        let route = |provider: &str, base_url: &str| crate::config::ForeignRoute {
            provider: provider.into(),
            model: None,
            base_url: base_url.into(),
            file: "/home/me/.pi/agent/models.json".into(),
        };
        env.foreign_routes = vec![
            route("anthropic", "http://gw.corp:8080/anthropic"),
            route("openai", "HTTPS://API.OPENAI.COM/v1/"),
        ];
        let options = LlmOptions {
            model: Some("anthropic/claude-sonnet-4-5".into()),
            ..LlmOptions::default()
        };
        let resolve = |options: &LlmOptions, env: &EnvSettings, provider: &str| {
            let owner = endpoint_owner(options, &ModelTable::builtin()).unwrap();
            let share = endpoint_share(owner.as_deref(), provider, true);
            endpoint(options, env, provider, "m", share, owner.as_deref())
                .map(|found| found.base_url)
        };
        let refused = resolve(&options, &env, "anthropic").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "Not sending `anthropic` requests to api.anthropic.com: /home/me/.pi/agent/models.json \
             routes `anthropic` through gw.corp:8080 (Pi's models.json, which ctxkit does not \
             read); nothing was sent"
        );
        assert!(matches!(
            refused,
            LlmError::RoutedElsewhere {
                owns_settings: true,
                ..
            }
        ));
        // The same host as Pi's: nothing to refuse.
        assert_eq!(
            resolve(&options, &env, "openai").unwrap(),
            "https://api.openai.com/v1"
        );
        // Told explicitly, either way: that wins.
        let told = LlmOptions {
            base_url: Some("https://api.anthropic.com".into()),
            ..options.clone()
        };
        assert_eq!(
            resolve(&told, &env, "anthropic").unwrap(),
            "https://api.anthropic.com"
        );
        env.foreign_routes = vec![route("openai", "http://gw.corp/openai")];
        assert!(resolve(&options, &env, "openai").is_err());
        env.openai_base_url = Some("http://proxy.corp/v1".into());
        assert_eq!(
            resolve(&options, &env, "openai").unwrap(),
            "http://proxy.corp/v1"
        );
    }

    /// QA r108 (adv3, D3 and D2): a model's own `baseUrl` in Pi's `models.json`, and a
    /// `models.json` that does not parse, let the key go to api.anthropic.com.
    #[test]
    fn a_model_routed_elsewhere_or_an_unreadable_pi_file_refuses_the_public_host() {
        let mut env = EnvSettings::from_map(
            &[("ANTHROPIC_API_KEY", "sk-ant-0123456789")]
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
        );
        let route = |model: Option<&str>, base_url: &str| ForeignRoute {
            provider: "anthropic".into(),
            model: model.map(str::to_owned),
            base_url: base_url.into(),
            file: "/home/me/.pi/agent/models.json".into(),
        };
        let options = LlmOptions {
            model: Some("anthropic/claude-sonnet-4-5".into()),
            ..LlmOptions::default()
        };
        let resolve = |env: &EnvSettings, model: &str| {
            endpoint(
                &options,
                env,
                "anthropic",
                model,
                EndpointShare::Whole,
                None,
            )
            .map(|found| found.base_url)
        };
        env.foreign_routes = vec![route(Some("claude-sonnet-4-5"), "http://127.0.0.1:18630")];
        let refused = resolve(&env, "claude-sonnet-4-5").unwrap_err();
        assert!(
            refused.to_string().contains("through 127.0.0.1:18630"),
            "{refused}"
        );
        // Another model of the provider routed elsewhere: refused too (the safe side).
        assert!(resolve(&env, "claude-opus-4-1").is_err());
        // The model's own route is the public host: that one goes there.
        env.foreign_routes
            .push(route(Some("claude-opus-4-1"), "https://api.anthropic.com/"));
        assert_eq!(
            resolve(&env, "claude-opus-4-1").unwrap(),
            "https://api.anthropic.com"
        );
        // A provider route on the public host does not hide a model's route elsewhere.
        env.foreign_routes = vec![
            route(None, "https://api.anthropic.com"),
            route(Some("claude-haiku-4-5"), "http://gw.corp"),
        ];
        assert!(resolve(&env, "claude-sonnet-4-5").is_err());
        env.foreign_routes = Vec::new();
        assert!(resolve(&env, "claude-sonnet-4-5").is_ok());
        env.unreadable_routes = vec![crate::config::UnreadableRoutes {
            file: "/home/me/.pi/agent/models.json".into(),
            reason: "line 3, column 5: Unexpected token".into(),
        }];
        assert_eq!(
            resolve(&env, "claude-sonnet-4-5").unwrap_err().to_string(),
            "Not sending `anthropic` requests to api.anthropic.com: \
             `/home/me/.pi/agent/models.json` does not parse (line 3, column 5: Unexpected token), \
             so where the user's Pi sends `anthropic` is unknown; nothing was sent"
        );
    }

    #[test]
    fn only_the_owner_gets_the_whole_endpoint() {
        use EndpointShare::{FormatOnly, Nothing, Whole};
        assert_eq!(endpoint_share(Some("myco"), "myco", false), Whole);
        assert_eq!(endpoint_share(Some("anthropic"), "anthropic", true), Whole);
        assert_eq!(endpoint_share(Some("myco"), "anthropic", true), Nothing);
        assert_eq!(endpoint_share(Some("anthropic"), "myco", false), Nothing);
        assert_eq!(endpoint_share(None, "openai", true), FormatOnly);
        assert_eq!(endpoint_share(None, "myco", false), Whole);
    }
}
