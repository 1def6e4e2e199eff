//! Which model to call and how: options from settings and flags, standard environment variables
//! read from a map the caller passes in (never the process environment), resolved into one
//! [`ProviderConfig`] for the agent model or the compaction model.

use ctxkit_models::ModelPrices;
use ctxkit_secrets::ApiKey;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::endpoint::{Endpoint, canonical, endpoint, endpoint_owner, endpoint_share, provider_of};
use crate::error::LlmError;
use crate::http::Timeouts;

use crate::models::{Api, MaxTokensField, ModelLimits, ModelTable, find_provider};
use crate::retry::RetryPolicy;
use crate::wire::anthropic_cache::CacheRetention;
use crate::wire::anthropic_context::AnthropicContextEditing;
use crate::wire::provider_compaction::{AnthropicCompaction, OpenAiCompaction};

/// A model reference `provider/id` (the id may itself contain `/`, as OpenRouter's do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    /// `None` when the reference was a bare id.
    pub provider: Option<String>,
    pub id: String,
}

impl ModelSpec {
    /// Reads `provider/id` or a bare `id`, without the blanks around it (a paste's or an
    /// unquoted variable's trailing blank, which Pi 1.6.0 trims too).
    pub fn parse(spec: &str) -> Result<Self, LlmError> {
        let spec = spec.trim();
        let invalid = || LlmError::InvalidModel {
            spec: spec.to_owned(),
        };
        match spec.split_once('/') {
            Some((provider, id)) if provider.is_empty() || id.is_empty() => Err(invalid()),
            Some((provider, id)) => Ok(Self {
                provider: Some(provider.to_owned()),
                id: id.to_owned(),
            }),
            None if spec.is_empty() => Err(invalid()),
            None => Ok(Self {
                provider: None,
                id: spec.to_owned(),
            }),
        }
    }
}

/// Which configured model to resolve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRole {
    /// The conversation's model.
    Agent,
    /// The model that writes summaries: `compaction_model` when set, else the agent model.
    Compaction,
}

/// Model options as they come from the settings, with the models picked for this run beside them.
///
/// `base_url`, `api`, `api_key` and `headers` are one endpoint, the provider's the settings name:
/// that of `model`, else `provider`, else that of `compaction_model`. Every other provider, a
/// picked model's included, uses its own host, format and key variable and none of them; with no
/// provider named, they go to providers of one's own, `api` alone to a built-in provider, and a
/// built-in provider is refused while a base URL, key or header is set for no one.
#[derive(Clone, Default)]
pub struct LlmOptions {
    /// The default provider for a bare model id (`defaultProvider`).
    pub provider: Option<String>,
    /// The settings' agent model (`defaultModel`), `provider/id` or a bare id.
    pub model: Option<String>,
    /// The settings' model for summaries (`compaction.model`), `provider/id` or a bare id.
    pub compaction_model: Option<String>,
    /// The agent model picked for this run (`--model`, `/model`, a server run's `model`): it runs
    /// in place of `model` but never takes over the endpoint.
    pub picked_model: Option<String>,
    /// The summary model picked for this run (a summary command's `--model`): it runs in place of
    /// `compaction_model` but never takes over the endpoint.
    pub picked_compaction_model: Option<String>,
    /// `llm.baseUrl`.
    pub base_url: Option<String>,
    /// `llm.api`: the wire format, required for providers that are not built in.
    pub api: Option<Api>,
    /// `llm.apiKey`.
    pub api_key: Option<ApiKey>,
    /// `llm.headers`: extra request headers (values may be secrets and are never shown).
    pub headers: BTreeMap<String, String>,
    /// `llm.providers`: other providers' endpoints, by provider name; an entry wins over the
    /// provider's own host. An entry for the provider the endpoint above is for, while that one
    /// is set, is [`crate::LlmError::TwoEndpoints`].
    pub providers: BTreeMap<String, OwnEndpoint>,
    pub retry: RetryPolicy,
    /// A whole (not streamed) answer's time limit; `None` for [`DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
    /// Connect, first-byte and idle limits (`llm.timeouts.*`).
    pub timeouts: Timeouts,
    /// User models, added to the built-in table.
    pub models: Vec<ModelLimits>,
    /// Anthropic's context editing for the agent model's conversation requests (off: `None`).
    pub anthropic_context_editing: Option<AnthropicContextEditing>,
    /// Anthropic's server-side compaction of the agent model's conversation (off: `None`).
    pub anthropic_compaction: Option<AnthropicCompaction>,
    /// OpenAI Responses' server-side compaction of the agent model's conversation (off: `None`).
    pub openai_compaction: Option<OpenAiCompaction>,
    /// Anthropic prompt caching of every Anthropic Messages request (`short` unless set).
    pub anthropic_cache_retention: CacheRetention,
    /// Anthropic message threads for the agent model's conversation
    /// (`llm.anthropic.supportsMessageThreads`); `None`: on for `api.anthropic.com` only, as Pi.
    pub anthropic_message_threads: Option<bool>,
    /// The most bytes one answer may take on the wire (`llm.maxReplyBytes`); `None`:
    /// [`DEFAULT_MAX_REPLY_BYTES`].
    pub max_reply_bytes: Option<u64>,
    /// User models' prices and cache lifetimes (`llm.models[].cost`, `cacheRetention`); they win
    /// over the built-in prices and over `anthropic_cache_retention` for their model.
    pub model_costs: Vec<ModelCost>,
    /// `thinkingBudgets`: reasoning tokens per level, in place of the formats' defaults.
    pub thinking_budgets: ThinkingBudgets,
    /// The proxies the process's HTTP client sends through beside the environment's.
    pub proxies: crate::http::Proxies,
}

/// `thinkingBudgets`: the reasoning tokens asked of Anthropic (`thinking.budget_tokens`) and
/// Gemini (`thinkingBudget`) at each level, in place of their defaults, as Pi's. `xhigh` takes
/// `high`'s, as Pi maps it. OpenAI's formats take an effort, not a budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThinkingBudgets {
    pub minimal: Option<u64>,
    pub low: Option<u64>,
    pub medium: Option<u64>,
    pub high: Option<u64>,
}

impl ThinkingBudgets {
    /// The budget set for `level`, if any.
    pub fn of(&self, level: crate::ReasoningLevel) -> Option<u64> {
        match level {
            crate::ReasoningLevel::Minimal => self.minimal,
            crate::ReasoningLevel::Low => self.low,
            crate::ReasoningLevel::Medium => self.medium,
            crate::ReasoningLevel::High | crate::ReasoningLevel::XHigh => self.high,
        }
    }
}

/// A user model's prices and cache lifetime, as an `llm.models` entry gives them (Pi's
/// `models.json` `cost`, dollars per million tokens).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCost {
    pub provider: String,
    pub id: String,
    /// `cost`, when the entry gives one.
    pub prices: Option<ModelPrices>,
    /// `cacheRetention`, when the entry gives one.
    pub cache_retention: Option<CacheRetention>,
}

impl LlmOptions {
    /// The providers whose `llm.providers` entry carries a key of its own.
    pub fn providers_with_keys(&self) -> impl Iterator<Item = &str> {
        self.providers
            .iter()
            .filter(|(_, endpoint)| endpoint.api_key.is_some())
            .map(|(provider, _)| provider.as_str())
    }
}

impl fmt::Debug for LlmOptions {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("LlmOptions")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("compaction_model", &self.compaction_model)
            .field("picked_model", &self.picked_model)
            .field("picked_compaction_model", &self.picked_compaction_model)
            .field("base_url", &self.base_url)
            .field("api", &self.api)
            .field("api_key", &self.api_key)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("providers", &self.providers)
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .field("timeouts", &self.timeouts)
            .field("models", &self.models)
            .field("anthropic_context_editing", &self.anthropic_context_editing)
            .field("anthropic_compaction", &self.anthropic_compaction)
            .field("openai_compaction", &self.openai_compaction)
            .field("anthropic_cache_retention", &self.anthropic_cache_retention)
            .field("model_costs", &self.model_costs)
            .field("anthropic_message_threads", &self.anthropic_message_threads)
            .finish()
    }
}

/// One `llm.providers` entry: where a provider's requests go, and with what.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OwnEndpoint {
    pub base_url: String,
    /// The wire format; `None` takes the built-in provider's.
    pub api: Option<Api>,
    /// `None` takes the saved key or the provider's variable.
    pub api_key: Option<ApiKey>,
    /// Extra request headers (values may be secrets and are never shown).
    pub headers: BTreeMap<String, String>,
}

impl fmt::Debug for OwnEndpoint {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("OwnEndpoint")
            .field("base_url", &self.base_url)
            .field("api", &self.api)
            .field("api_key", &self.api_key)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The default time limit of a whole (not streamed) answer: summaries of long sessions can take
/// minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The default of `llm.maxReplyBytes`: the bytes of one answer as they arrive (a streamed answer's
/// events included), far above what a model's longest output takes, far below what would strain
/// the process. A provider that sends more is cut there, with an error saying so.
pub const DEFAULT_MAX_REPLY_BYTES: u64 = 64 * 1024 * 1024;

/// What the standard environment variables say, read from a map the caller passes in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvSettings {
    /// Keys by provider name, from each built-in provider's variable (`ANTHROPIC_API_KEY`,
    /// `OPENAI_API_KEY`, `GEMINI_API_KEY`, `OPENROUTER_API_KEY`, …).
    pub api_keys: BTreeMap<String, ApiKey>,
    /// `OPENAI_BASE_URL`, for the `openai` provider.
    pub openai_base_url: Option<String>,
    /// Where the user's Pi sends providers (its `models.json`'s `baseUrl`s), which ctxkit does not
    /// follow: a provider whose host ctxkit was not told is refused when Pi's route goes elsewhere.
    pub foreign_routes: Vec<ForeignRoute>,
    /// The files of routes that exist but cannot be read (a Pi `models.json` that does not parse):
    /// every provider whose host ctxkit was not told is refused while one is here.
    pub unreadable_routes: Vec<UnreadableRoutes>,
}

/// A file of routes that cannot be read, and why (with the line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableRoutes {
    pub file: std::path::PathBuf,
    pub reason: String,
}

/// A provider's endpoint another program of the user's sets (Pi's `models.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignRoute {
    pub provider: String,
    /// The model whose own endpoint this is (Pi: a model's `baseUrl` overrides its provider's);
    /// `None` for the whole provider's.
    pub model: Option<String>,
    pub base_url: String,
    /// The file that sets it, named in the refusal.
    pub file: std::path::PathBuf,
}

impl EnvSettings {
    /// Reads the variables from `vars`; empty values count as unset.
    pub fn from_map(vars: &BTreeMap<String, String>) -> Self {
        let get = |name: &str| vars.get(name).filter(|value| !value.trim().is_empty());
        let mut api_keys = BTreeMap::new();
        for provider in crate::models::PROVIDERS {
            if let Some(value) = provider.key_env.and_then(get) {
                api_keys.insert(provider.name.to_owned(), ApiKey::new(value.trim()));
            }
        }
        if !api_keys.contains_key("google")
            && let Some(value) = get("GOOGLE_API_KEY")
        {
            api_keys.insert("google".to_owned(), ApiKey::new(value.trim()));
        }
        Self {
            api_keys,
            openai_base_url: get("OPENAI_BASE_URL").map(|url| url.trim().to_owned()),
            foreign_routes: Vec::new(),
            unreadable_routes: Vec::new(),
        }
    }

    /// The names of every variable [`EnvSettings::from_map`] reads, for the CLI's documentation.
    pub fn variable_names() -> Vec<&'static str> {
        let mut names: Vec<_> = crate::models::PROVIDERS
            .iter()
            .filter_map(|provider| provider.key_env)
            .collect();
        names.extend(["GOOGLE_API_KEY", "OPENAI_BASE_URL"]);
        names
    }
}

/// Everything needed to call one model.
#[derive(Clone)]
pub struct ProviderConfig {
    pub provider: String,
    pub api: Api,
    pub model: String,
    /// Without a trailing `/`.
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub headers: BTreeMap<String, String>,
    /// From the model table, when the model is known.
    pub model_info: Option<ModelLimits>,
    pub max_tokens_field: MaxTokensField,
    pub retry: RetryPolicy,
    /// A whole (not streamed) answer's time limit (`retry.provider.timeoutMs`).
    pub timeout: Duration,
    /// Connect, first-byte and idle limits (`llm.timeouts.*`).
    pub timeouts: Timeouts,
    /// Anthropic's context editing, sent with conversation requests: set only for the agent model
    /// on the Anthropic Messages format.
    pub context_editing: Option<AnthropicContextEditing>,
    /// Anthropic's server-side compaction: set only for the agent model on Anthropic Messages.
    pub anthropic_compaction: Option<AnthropicCompaction>,
    /// OpenAI Responses' server-side compaction: set only for the agent model on that format.
    pub openai_compaction: Option<OpenAiCompaction>,
    /// Anthropic prompt caching, for every request of the Anthropic Messages format.
    pub cache_retention: CacheRetention,
    /// The model's prices: its `llm.models` entry's `cost`, else the built-in list price; `None`
    /// when neither is known (its calls are recorded at zero cost and its cache is never warmed).
    pub prices: Option<ModelPrices>,
    /// Conversation requests use Anthropic message threads (agent model on Anthropic Messages with
    /// prompt caching on; a client bound to a conversation with `ModelClient::with_message_threads`).
    pub message_threads: bool,
    /// The most bytes one answer may take on the wire (`llm.maxReplyBytes`).
    pub max_reply_bytes: u64,
    /// `thinkingBudgets`.
    pub thinking_budgets: ThinkingBudgets,
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("ProviderConfig")
            .field("provider", &self.provider)
            .field("api", &self.api)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("model_info", &self.model_info)
            .field("max_tokens_field", &self.max_tokens_field)
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .field("timeouts", &self.timeouts)
            .field("context_editing", &self.context_editing)
            .field("anthropic_compaction", &self.anthropic_compaction)
            .field("openai_compaction", &self.openai_compaction)
            .field("cache_retention", &self.cache_retention)
            .field("prices", &self.prices)
            .field("message_threads", &self.message_threads)
            .finish()
    }
}

impl ProviderConfig {
    /// `provider/model`, the name recorded with summaries.
    pub fn display_name(&self) -> String {
        format!("{}/{}", self.provider, self.model)
    }

    /// Whether the model takes images: as the table or `llm.models[].input` says; a model neither
    /// knows takes text only, as Pi 1.6.0 reads a model its `models.json` declares without
    /// `input` (a text-only server, DeepSeek's, refused a whole request for one image).
    pub fn takes_images(&self) -> bool {
        self.model_info.as_ref().is_some_and(|model| model.images)
    }

    /// Whether the model reasons: as the table or `llm.models` says; a Gemini model that takes
    /// thinking levels (Gemini 3 and later, read from its id as Pi reads it) reasons whatever is
    /// known of it, as it cannot turn thinking off: an id the table lacks at `high` was sent
    /// `MINIMAL`, the level of thinking off.
    pub fn reasons(&self) -> bool {
        self.model_info
            .as_ref()
            .is_some_and(|model| model.reasoning)
            || (self.api == crate::models::Api::Gemini
                && crate::wire::gemini_thinking::takes_levels(&self.model))
    }

    /// Whether an image is named in its place rather than sent: over Chat Completions to a model
    /// that takes text only (a text-only server refused the whole request). The other formats
    /// send it as it is.
    pub fn leaves_images_out(&self) -> bool {
        self.api == crate::models::Api::OpenAiChat && !self.takes_images()
    }
}

/// Resolves the model for `role`. `Ok(None)` when no model is configured (the CLI then uses the
/// offline summarizer).
///
/// `base_url`, `api`, `api_key` and `headers` go to the provider the settings name
/// (`endpoint`): a model of another provider uses its own host, format and key variable,
/// and a provider of one's own that is not that provider has no endpoint.
pub fn resolve_model(
    options: &LlmOptions,
    env: &EnvSettings,
    role: ModelRole,
) -> Result<Option<ProviderConfig>, LlmError> {
    let table = model_table(options);
    let Some((provider, spec)) = model_for(options, &table, role)? else {
        return Ok(None);
    };
    let builtin = find_provider(&provider);
    // A provider of one's own must be declared, so a typo is not sent to `llm.baseUrl`.
    let declared = table.iter().any(|model| model.provider == provider)
        || options.provider.as_deref() == Some(provider.as_str())
        || options.providers.contains_key(&provider);
    if builtin.is_none() && !declared {
        return Err(LlmError::UnknownProvider { provider });
    }
    let owner = endpoint_owner(options, &table)?;
    let share = endpoint_share(owner.as_deref(), &provider, builtin.is_some());
    let endpoint = endpoint(options, env, &provider, &spec.id, share, owner.as_deref())?;
    let features = features(options, role, &provider, &spec.id, &endpoint);
    Ok(Some(ProviderConfig {
        message_threads: features.message_threads,
        context_editing: features.context_editing,
        anthropic_compaction: features.anthropic_compaction,
        openai_compaction: features.openai_compaction,
        cache_retention: features.cache_retention,
        prices: features.prices,
        model_info: table.find(&provider, &spec.id).cloned(),
        max_tokens_field: builtin.map_or(MaxTokensField::MaxTokens, |info| info.max_tokens_field),
        provider,
        api: endpoint.api,
        model: spec.id,
        base_url: endpoint.base_url,
        api_key: endpoint.api_key,
        headers: endpoint.headers,
        retry: options.retry,
        timeout: options.timeout.unwrap_or(DEFAULT_TIMEOUT),
        timeouts: options.timeouts,
        max_reply_bytes: options.max_reply_bytes.unwrap_or(DEFAULT_MAX_REPLY_BYTES),
        thinking_budgets: options.thinking_budgets,
    }))
}

/// The limits (window, output) of the model `role` runs, from the built-in table and `llm.models`,
/// without its endpoint or key: what a plan needs of a model it does not call (`compact --dry-run`).
/// `Ok(None)` when no model is configured or the table does not know it.
pub fn model_limits(
    options: &LlmOptions,
    role: ModelRole,
) -> Result<Option<ModelLimits>, LlmError> {
    let table = model_table(options);
    let Some((provider, spec)) = model_for(options, &table, role)? else {
        return Ok(None);
    };
    Ok(table.find(&provider, &spec.id).cloned())
}

/// The built-in models and the user's.
fn model_table(options: &LlmOptions) -> ModelTable {
    let mut table = ModelTable::builtin();
    for model in &options.models {
        table.insert(model.clone());
    }
    table
}

/// The model `role` runs (the picked one before the settings') and its provider. A bare id takes
/// the agent model's provider, else the model table's.
fn model_for(
    options: &LlmOptions,
    table: &ModelTable,
    role: ModelRole,
) -> Result<Option<(String, ModelSpec)>, LlmError> {
    let parse = |text: Option<&String>| text.map(|text| ModelSpec::parse(text)).transpose();
    let agent = parse(options.picked_model.as_ref().or(options.model.as_ref()))?;
    let agent_provider = provider_of(agent.as_ref(), options.provider.as_deref(), table);
    let spec = match role {
        ModelRole::Agent => agent,
        ModelRole::Compaction => parse(
            options
                .picked_compaction_model
                .as_ref()
                .or(options.compaction_model.as_ref()),
        )?
        .or(agent),
    };
    let Some(spec) = spec else { return Ok(None) };
    let provider = spec
        .provider
        .clone()
        .or(agent_provider)
        .or_else(|| {
            table
                .find_by_id(&spec.id)
                .map(|model| model.provider.clone())
        })
        // No provider named or configured, and no model known by this id.
        .ok_or_else(|| LlmError::InvalidModel {
            spec: spec.id.clone(),
        })?;
    Ok(Some((canonical(&provider), spec)))
}

/// The provider-side options a model's requests carry.
struct Features {
    context_editing: Option<AnthropicContextEditing>,
    anthropic_compaction: Option<AnthropicCompaction>,
    openai_compaction: Option<OpenAiCompaction>,
    cache_retention: CacheRetention,
    prices: Option<ModelPrices>,
    message_threads: bool,
}

fn features(
    options: &LlmOptions,
    role: ModelRole,
    provider: &str,
    id: &str,
    endpoint: &Endpoint,
) -> Features {
    let api = endpoint.api;
    let agent_on = |format: Api| role == ModelRole::Agent && api == format;
    let user_cost = options
        .model_costs
        .iter()
        .find(|cost| cost.provider == provider && cost.id == id);
    let cache_retention = user_cost
        .and_then(|cost| cost.cache_retention)
        .unwrap_or(options.anthropic_cache_retention);
    // Gateways that drop unknown fields would turn a continuation into a request without the
    // conversation, so threads are on by default on Anthropic's own endpoint only (Pi 1.6).
    let message_threads = agent_on(Api::AnthropicMessages)
        && cache_retention != CacheRetention::None
        && options
            .anthropic_message_threads
            .unwrap_or_else(|| endpoint.base_url.contains("api.anthropic.com"));
    Features {
        context_editing: options
            .anthropic_context_editing
            .clone()
            .filter(|_| agent_on(Api::AnthropicMessages)),
        anthropic_compaction: options
            .anthropic_compaction
            .clone()
            .filter(|_| agent_on(Api::AnthropicMessages)),
        openai_compaction: options
            .openai_compaction
            .clone()
            .filter(|_| agent_on(Api::OpenAiResponses)),
        cache_retention,
        prices: user_cost
            .and_then(|cost| cost.prices.clone())
            .or_else(|| ctxkit_models::model_prices(provider, id)),
        message_threads,
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
