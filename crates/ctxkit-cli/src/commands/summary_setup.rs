//! Resolving what compaction and branch summaries run with: flags, then the settings files, then
//! defaults adapted to the model's context window; prompt overrides from `<home>/prompts/compaction/`;
//! and the optional file context read from the session's working directory.

use anyhow::{Context as _, Result};
use ctxkit_compaction::Prompts;
use ctxkit_summarizer::Summarizer;
use ctxkit_summarizer_offline::OfflineSummarizer;

use super::settings::ProcessSettings;

/// Everything a summary run needs besides the session.
pub struct SummarySetup {
    /// The engine's settings: the settings files with the flags applied (budgets nobody set follow
    /// the model's window, in the engine).
    pub engine_settings: ctxkit_engine::EngineSettings,
    pub prompts: Prompts,
    /// The configured model, or the offline summarizer when none is configured.
    pub summarizer: Box<dyn Summarizer>,
    /// The summarizing model's context window, when known.
    pub model_context_window: Option<u64>,
    /// Under [`SummaryUse::Serves`], the provider of the configured model when its key was not
    /// found at start (its summaries look for it again).
    pub key_missing_for: Option<String>,
}

impl std::fmt::Debug for SummarySetup {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SummarySetup")
            .field("engine_settings", &self.engine_settings)
            .field("summarizer", &self.summarizer.name())
            .finish_non_exhaustive()
    }
}

/// Flags given on the command line (`None`: not given).
#[derive(Debug, Clone, Copy, Default)]
pub struct SummaryFlags<'a> {
    pub keep_recent_tokens: Option<u64>,
    pub reserve_tokens: Option<u64>,
    pub file_context: bool,
    /// `--model provider/id`.
    pub model: Option<&'a str>,
    /// Whether the command summarizes, or only plans or moves.
    pub summary_use: SummaryUse,
}

/// What a command does with the summarizer it asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SummaryUse {
    /// It may summarize (`compact`, `branch --summarize`, `chat`, `serve`): the configured model
    /// must be usable, its key and the settings its client reads included.
    #[default]
    Summarizes,
    /// It summarizes for clients while it runs (`serve`): a configured model without a key
    /// does not stop it from starting; each summary looks for the key again.
    Serves,
    /// It never summarizes (`compact --dry-run`, `branch` without `--summarize`, a page's
    /// transforms): the model is looked up for its window only, so neither its key nor a setting
    /// only a model's client reads (`llm.*`, `retry.*`, …) stops it.
    PlansOnly,
}

impl SummaryUse {
    /// [`SummaryUse::PlansOnly`] when the command only plans or moves (`compact --dry-run`,
    /// `branch` without `--summarize`), else [`SummaryUse::Summarizes`].
    pub fn plans_only_if(plans_only: bool) -> Self {
        if plans_only {
            Self::PlansOnly
        } else {
            Self::Summarizes
        }
    }
}

/// Model options from the settings: `defaultProvider`/`defaultModel` as the agent model,
/// `compaction.model`, `llm.*` (with `llm.anthropic.contextManagement`, `llm.anthropic.compaction`,
/// `llm.openaiResponses.compaction` and `llm.timeouts`) and `retry.*`.
pub fn llm_options(settings: &ctxkit_settings::SettingsManager) -> Result<ctxkit_llm::LlmOptions> {
    refuse_invalid_settings(settings)?;
    let typed = settings.settings();
    let llm = &typed.llm;
    let retry = &typed.retry;
    // One retry loop: the provider client's retries (Pi's SDK retries a request itself before
    // its agent retries the turn) add to it, and stay when `retry.enabled` is off, as in Pi (QA
    // 2026-12-07: `retry.provider.maxRetries` was accepted and never read).
    let agent_retries = if retry.enabled { retry.max_retries } else { 0 };
    let provider_retries = retry.provider.max_retries.unwrap_or(0);
    let max_retries =
        u32::try_from(agent_retries.saturating_add(provider_retries)).unwrap_or(u32::MAX);
    let models = llm.models.as_deref().unwrap_or_default();
    let api = match llm.api.as_deref() {
        Some(name) => Some(
            ctxkit_llm::Api::parse(name)
                .with_context(|| format!("setting `llm.api`: unknown wire format `{name}`"))?,
        ),
        None => None,
    };
    let anthropic = &llm.anthropic;
    let editing = &anthropic.context_management;
    let compaction = &anthropic.compaction;
    Ok(ctxkit_llm::LlmOptions {
        provider: typed.default_provider.clone(),
        model: typed.default_model.clone(),
        compaction_model: typed.compaction.model.clone(),
        // Picked per run (`model_client`, `choose_summarizer`), never read from the settings.
        picked_model: None,
        picked_compaction_model: None,
        base_url: llm.base_url.clone(),
        api,
        api_key: llm.api_key.clone().map(ctxkit_secrets::ApiKey::new),
        headers: llm.headers.clone().unwrap_or_default(),
        providers: own_endpoints(&llm.providers)?,
        retry: ctxkit_llm::RetryPolicy {
            max_retries,
            base_delay: std::time::Duration::from_millis(retry.base_delay_ms),
            max_agent_delay: std::time::Duration::from_millis(retry.max_agent_delay_ms),
            max_delay: (retry.provider.max_retry_delay_ms != 0)
                .then(|| std::time::Duration::from_millis(retry.provider.max_retry_delay_ms)),
            // A reply broken off after it began is Pi's agent retry of the turn, which
            // `retry.enabled: false` turns off (the provider client never resends a stream that
            // began).
            restart_broken_replies: agent_retries > 0,
        },
        timeout: retry
            .provider
            .timeout_ms
            .map(std::time::Duration::from_millis),
        timeouts: ctxkit_llm::Timeouts {
            connect: std::time::Duration::from_secs(llm.timeouts.connect_seconds),
            first_byte: std::time::Duration::from_secs(llm.timeouts.first_byte_seconds),
            idle: std::time::Duration::from_secs(llm.timeouts.idle_seconds),
        },
        models: user_models(models),
        anthropic_cache_retention: ctxkit_llm::CacheRetention::parse(&anthropic.cache_retention)
            .unwrap_or_default(),
        anthropic_message_threads: anthropic.supports_message_threads,
        max_reply_bytes: Some(llm.max_reply_bytes),
        model_costs: super::spend::configured_model_costs(settings),
        proxies: crate::cli::proxies_with_setting(typed.http_proxy.as_deref()),
        thinking_budgets: ctxkit_llm::ThinkingBudgets {
            minimal: typed.thinking_budgets.minimal,
            low: typed.thinking_budgets.low,
            medium: typed.thinking_budgets.medium,
            high: typed.thinking_budgets.high,
        },
        anthropic_context_editing: editing
            .enabled
            .then(|| ctxkit_llm::AnthropicContextEditing {
                trigger_input_tokens: editing.trigger_input_tokens,
                keep_tool_uses: editing.keep_tool_uses,
                clear_at_least_input_tokens: editing.clear_at_least_input_tokens,
                exclude_tools: editing.exclude_tools.clone().unwrap_or_default(),
                clear_tool_inputs: editing.clear_tool_inputs,
                clear_thinking: editing.clear_thinking,
                keep_thinking_turns: editing.keep_thinking_turns,
            }),
        anthropic_compaction: compaction.enabled.then(|| ctxkit_llm::AnthropicCompaction {
            trigger_input_tokens: compaction.trigger_input_tokens,
            pause_after_compaction: compaction.pause_after_compaction,
            instructions: compaction.instructions.clone(),
        }),
        openai_compaction: llm.openai_responses.compaction.enabled.then_some(
            ctxkit_llm::OpenAiCompaction {
                compact_threshold: llm.openai_responses.compaction.compact_threshold,
            },
        ),
    })
}

/// The cache warmer of a chat or a server: `cacheWarming` from the global settings (Pi reads it
/// there only: each refresh spends the user's money), the test hook's delay.
pub fn cache_warmer(
    process: &crate::commands::settings::ProcessSettings<'_>,
) -> Result<std::sync::Arc<ctxkit_agent::CacheWarmer>> {
    let mode = ctxkit_agent::CacheWarming::parse(&process.settings()?.settings().cache_warming)
        .unwrap_or_default();
    let delay = process
        .args()
        .cache_warming_delay_ms
        .map(std::time::Duration::from_millis);
    Ok(std::sync::Arc::new(ctxkit_agent::CacheWarmer::new(
        mode, delay,
    )))
}

/// `llm.providers`, each provider's endpoint under its canonical name (`gemini` is `google`).
fn own_endpoints(
    providers: &std::collections::BTreeMap<String, ctxkit_settings::ProviderEndpoint>,
) -> Result<std::collections::BTreeMap<String, ctxkit_llm::OwnEndpoint>> {
    let mut endpoints = std::collections::BTreeMap::new();
    for (name, entry) in providers {
        let api = match entry.api.as_deref() {
            Some(api) => Some(ctxkit_llm::Api::parse(api).with_context(|| {
                format!("setting `llm.providers.{name}.api`: unknown wire format `{api}`")
            })?),
            None => None,
        };
        let name = name.trim().to_lowercase();
        let name = ctxkit_llm::find_provider(&name).map_or(name, |info| info.name.to_owned());
        endpoints.insert(
            name,
            ctxkit_llm::OwnEndpoint {
                base_url: entry.base_url.trim().to_owned(),
                api,
                api_key: entry.api_key.clone().map(ctxkit_secrets::ApiKey::new),
                headers: entry.headers.clone().unwrap_or_default(),
            },
        );
    }
    Ok(endpoints)
}

/// The providers' keys and `OPENAI_BASE_URL`: the process's standard environment variables,
/// then the keys `ctxkit login` saved (`<home>/auth.json`), which win over a variable as in Pi;
/// and where a Pi `models.json` (in ctxkit's home or `~/.pi/agent`) routes providers and their
/// models, or that one cannot be read, which a model client refuses to contradict. A saved-keys file that cannot be read is an error naming it.
pub fn llm_environment() -> Result<ctxkit_llm::EnvSettings> {
    let mut environment = variables_environment();
    for (provider, key) in saved_keys()?.keys {
        environment
            .api_keys
            .insert(provider, ctxkit_secrets::ApiKey::new(key.trim()));
    }
    let pi = ctxkit_settings::pi_routes(super::settings::process_pi_models_paths());
    environment.foreign_routes = pi
        .routes
        .into_iter()
        .map(|route| ctxkit_llm::ForeignRoute {
            provider: route.provider,
            model: route.model,
            base_url: route.base_url,
            file: route.file,
        })
        .collect();
    environment.unreadable_routes = pi
        .unreadable
        .into_iter()
        .map(|unreadable| ctxkit_llm::UnreadableRoutes {
            file: unreadable.file,
            reason: unreadable.reason,
        })
        .collect();
    Ok(environment)
}

/// [`llm_environment`] without the saved keys: the environment variables alone.
pub fn variables_environment() -> ctxkit_llm::EnvSettings {
    let variables: std::collections::BTreeMap<String, String> =
        ctxkit_llm::EnvSettings::variable_names()
            .into_iter()
            .filter_map(|name| {
                // Keys were taken out of the process environment at start-up (`main`).
                ctxkit_secrets::environment_variable(name).map(|value| (name.to_owned(), value))
            })
            .collect();
    ctxkit_llm::EnvSettings::from_map(&variables)
}

/// The keys `ctxkit login` saved in this process's ctxkit home (`--home` included); none before
/// the process read its environment, which a command does before it asks a model.
pub fn saved_keys() -> Result<ctxkit_settings::SavedKeys> {
    match super::settings::process_credentials_path() {
        Some(path) => Ok(ctxkit_settings::saved_keys(path)?),
        None => Ok(ctxkit_settings::SavedKeys::default()),
    }
}

/// The process's one HTTP client: every model client of this process (the conversation's,
/// summaries', branch summaries') sends through it, so they share one connection pool and a
/// summary reuses the conversation's keep-alive connection (`docs/decisions.md`, "One HTTP client
/// per process"). Built at first use, with that use's connect limit.
fn shared_http(options: &ctxkit_llm::LlmOptions) -> Result<ctxkit_llm::HttpClient> {
    static SHARED: std::sync::OnceLock<ctxkit_llm::HttpClient> = std::sync::OnceLock::new();
    if let Some(http) = SHARED.get() {
        return Ok(http.clone());
    }
    let http = ctxkit_llm::HttpClient::with_proxies(options.timeouts.connect, &options.proxies)?;
    Ok(SHARED.get_or_init(|| http).clone())
}

/// A summarizer and its model's context window, when known.
type ChosenSummarizer = (Box<dyn Summarizer>, Option<u64>);

/// The `--model` that names the offline summarizer.
pub(crate) const OFFLINE_MODEL: &str = "offline";

/// The summarizer: `--model`, else `compaction.model`, else the agent's `defaultProvider`/`defaultModel`;
/// the offline summarizer when `--model` is [`OFFLINE_MODEL`] or no model is configured. A
/// configured model that cannot be used (no API key, unknown provider) is an error, not a silent
/// fallback. The offline summarizer's size is the settings' (`offline_size`).
pub(crate) fn choose_summarizer(
    settings: &ctxkit_settings::SettingsManager,
    model_flag: Option<&str>,
) -> Result<ChosenSummarizer> {
    // Checked whichever summarizer runs: a bad value is a mistake to report, not to skip.
    let size = super::offline_size::offline_summary_size(settings)?;
    // `--model offline`: nothing is sent whatever the settings name (QA: it was taken for a
    // model id of the default provider, and the session went to it).
    if model_flag == Some(OFFLINE_MODEL) {
        return Ok((Box::new(OfflineSummarizer::new(size)), None));
    }
    let mut options = llm_options(settings)?;
    // Picked, not configured: the endpoint settings stay with the provider the settings name.
    if let Some(model) = model_flag {
        options.picked_compaction_model = Some(model.to_owned());
    }
    let environment = llm_environment()?;
    match ctxkit_llm::resolve_model(&options, &environment, ctxkit_llm::ModelRole::Compaction)? {
        Some(config) => {
            let client = ctxkit_llm::ModelClient::with_http(config, shared_http(&options)?)?;
            let window = client.context_window();
            Ok((Box::new(client), window))
        }
        None => Ok((Box::new(OfflineSummarizer::new(size)), None)),
    }
}

/// The client of the model `options` name for summaries, its key read now (`ctxkit serve`'s
/// summarizer made at its first summary, [`super::awaiting_key::AwaitingKey`]).
pub(crate) fn compaction_client(
    options: &ctxkit_llm::LlmOptions,
) -> Result<ctxkit_llm::ModelClient> {
    let environment = llm_environment()?;
    let config =
        ctxkit_llm::resolve_model(options, &environment, ctxkit_llm::ModelRole::Compaction)?
            .context("no model is configured for summaries")?;
    Ok(ctxkit_llm::ModelClient::with_http(
        config,
        shared_http(options)?,
    )?)
}

/// [`choose_summarizer`] for a server: a configured model without a key is not an error at start
/// but a summarizer that looks for the key at each summary, and the provider is returned to be
/// named in a warning.
fn choose_serving_summarizer(
    settings: &ctxkit_settings::SettingsManager,
    model_flag: Option<&str>,
) -> Result<(ChosenSummarizer, Option<String>)> {
    match choose_summarizer(settings, model_flag) {
        Ok(chosen) => Ok((chosen, None)),
        Err(error) => match error.downcast_ref::<ctxkit_llm::LlmError>() {
            Some(ctxkit_llm::LlmError::MissingApiKey { provider, .. }) => {
                let provider = provider.clone();
                let mut options = llm_options(settings)?;
                options.picked_compaction_model = model_flag.map(str::to_owned);
                let awaiting = super::awaiting_key::AwaitingKey::new(options, &provider);
                Ok(((Box::new(awaiting), None), Some(provider)))
            }
            _ => Err(error),
        },
    }
}

pub fn resolve(process: &ProcessSettings<'_>, flags: SummaryFlags<'_>) -> Result<SummarySetup> {
    let environment = process.environment()?;
    let settings = process.settings()?;
    let mut key_missing_for = None;
    let (summarizer, model_context_window) = match flags.summary_use {
        SummaryUse::Summarizes => {
            let chosen = choose_summarizer(settings, flags.model)?;
            // A project's hooks are someone else's commands until the user trusts them: the
            // settings leave them out (and reading them said so).
            refuse_invalid_settings(settings)?;
            chosen
        }
        SummaryUse::Serves => {
            let (chosen, missing) = choose_serving_summarizer(settings, flags.model)?;
            refuse_invalid_settings(settings)?;
            key_missing_for = missing;
            chosen
        }
        SummaryUse::PlansOnly => {
            refuse_invalid_values(settings, |key| !read_by_the_model_client_only(key))?;
            let size = super::offline_size::offline_summary_size(settings)?;
            let summarizer: Box<dyn Summarizer> = Box::new(OfflineSummarizer::new(size));
            (summarizer, planning_window(settings, flags.model))
        }
    };
    let mut engine_settings = ctxkit_engine::EngineSettings::from_settings(settings.settings());
    // A flag wins over the settings, every model's `compaction.modelOverrides` entry included.
    let compaction = &mut engine_settings.compaction;
    if let Some(keep) = flags.keep_recent_tokens {
        compaction.set_keep_recent_tokens_everywhere(keep);
    }
    if let Some(reserve) = flags.reserve_tokens {
        compaction.set_reserve_tokens_everywhere(reserve);
    }
    compaction.file_context |= flags.file_context;
    let prompts_dir = environment.agent_dir().join("prompts").join("compaction");
    let prompts = Prompts::with_overrides(&prompts_dir)?;
    Ok(SummarySetup {
        engine_settings,
        prompts,
        summarizer,
        model_context_window,
        key_missing_for,
    })
}

/// A settings file that could not be loaded, or its invalid values (of any key), as an error
/// naming the first one's file (and line and column, or key) and where the others are: the typed
/// readers would quietly use defaults (or fail naming neither), without the user's hooks, budgets
/// or retries.
pub(crate) fn refuse_invalid_settings(settings: &ctxkit_settings::SettingsManager) -> Result<()> {
    refuse_invalid_values(settings, |_| true)
}

/// Whether only a model's client reads `key` (the model, its endpoint, key, retries, thinking):
/// a command that calls no model goes on past a wrong value of it.
fn read_by_the_model_client_only(key: &str) -> bool {
    const KEYS: [&str; 6] = [
        "defaultProvider",
        "defaultModel",
        "defaultThinkingLevel",
        "compaction.model",
        "httpProxy",
        "cacheWarming",
    ];
    const SECTIONS: [&str; 3] = ["llm.", "retry.", "thinkingBudgets."];
    KEYS.contains(&key) || SECTIONS.iter().any(|section| key.starts_with(section))
}

/// The window a plan follows: the configured (or `--model`) summarizing model's, from the model
/// table and `llm.models`, without its key; `None` when no model is configured or it is unknown.
fn planning_window(
    settings: &ctxkit_settings::SettingsManager,
    model_flag: Option<&str>,
) -> Option<u64> {
    if model_flag == Some(OFFLINE_MODEL) {
        return None;
    }
    let typed = settings.settings();
    let options = ctxkit_llm::LlmOptions {
        provider: typed.default_provider.clone(),
        model: typed.default_model.clone(),
        compaction_model: typed.compaction.model.clone(),
        picked_compaction_model: model_flag.map(str::to_owned),
        models: user_models(typed.llm.models.as_deref().unwrap_or_default()),
        ..ctxkit_llm::LlmOptions::default()
    };
    ctxkit_llm::model_limits(&options, ctxkit_llm::ModelRole::Compaction)
        .ok()
        .flatten()
        .map(|limits| limits.context_window)
}

/// [`refuse_invalid_settings`] over the keys `checked` accepts.
fn refuse_invalid_values(
    settings: &ctxkit_settings::SettingsManager,
    checked: impl Fn(&str) -> bool,
) -> Result<()> {
    settings.check_loaded()?;
    let mut invalid = settings.diagnostics().into_iter().filter_map(|diagnostic| {
        let ctxkit_settings::SettingsDiagnostic::InvalidValue {
            scope,
            path,
            line,
            key,
            expected,
            found,
        } = diagnostic
        else {
            return None;
        };
        // A project's value of a key read from the user's settings alone never applies (it is
        // warned about as ignored): it stops nothing (QA 2026-12-07: `{"sessionDir": 5}` in a
        // cloned project stopped `chat`, `serve` and `compact`).
        let segments: Vec<&str> = key.split('.').collect();
        if scope == ctxkit_settings::SettingsScope::Project && ctxkit_settings::user_only(&segments)
        {
            return None;
        }
        checked(&key).then_some((path, line, key, expected, found))
    });
    let Some((path, line, key, expected, found)) = invalid.next() else {
        return Ok(());
    };
    let first = ctxkit_settings::SettingsError::InvalidValue {
        path,
        line,
        key,
        expected,
        found,
    };
    // Each other one as `key` in `file` at line N.
    let others: Vec<String> = invalid
        .map(|(path, line, key, ..)| {
            let line = line
                .map(|line| format!(" at line {line}"))
                .unwrap_or_default();
            format!("`{key}` in `{}`{line}", path.display())
        })
        .collect();
    if others.is_empty() {
        return Err(first.into());
    }
    Err(ctxkit_settings::SettingsError::InvalidValues {
        first: Box::new(first),
        others,
    }
    .into())
}

/// An `llm.models` entry's `cost`: a price left out is 0, a tier's rate left out the base one.
fn user_prices(cost: &ctxkit_settings::ModelPrices) -> ctxkit_models::ModelPrices {
    let base = |price: Option<f64>| price.unwrap_or(0.0);
    let (input, output) = (base(cost.input), base(cost.output));
    let (cache_read, cache_write) = (base(cost.cache_read), base(cost.cache_write));
    let tiers = cost
        .tiers
        .iter()
        .flatten()
        .map(|tier| ctxkit_models::PriceTier {
            input_tokens_above: tier.input_tokens_above,
            input: tier.input.unwrap_or(input),
            output: tier.output.unwrap_or(output),
            cache_read: tier.cache_read.unwrap_or(cache_read),
            cache_write: tier.cache_write.unwrap_or(cache_write),
        });
    ctxkit_models::ModelPrices {
        input,
        output,
        cache_read,
        cache_write,
        tiers: tiers.collect(),
    }
}

/// The prices and cache lifetimes `llm.models` entries give (`cost`, `cacheRetention`).
pub fn user_model_costs(models: &[ctxkit_settings::UserModel]) -> Vec<ctxkit_llm::ModelCost> {
    models
        .iter()
        .map(|model| ctxkit_llm::ModelCost {
            provider: model.provider.clone(),
            id: model.id.clone(),
            prices: model.cost.as_ref().map(user_prices),
            cache_retention: model
                .cache_retention
                .as_deref()
                .and_then(ctxkit_llm::CacheRetention::parse),
        })
        .collect()
}

/// A model's output limit when its `llm.models` entry gives no `maxOutput`: Pi's 16,384 tokens, but
/// never more than a quarter of the window (so a small window keeps room for the prompt).
pub fn default_max_output(context_window: u64) -> u64 {
    const PI_DEFAULT_MAX_OUTPUT: u64 = 16_384;
    PI_DEFAULT_MAX_OUTPUT.min(context_window / 4)
}

/// The models the user added in `llm.models` (`maxOutput` may be left out:
/// [`default_max_output`]).
pub fn user_models(models: &[ctxkit_settings::UserModel]) -> Vec<ctxkit_llm::ModelLimits> {
    models
        .iter()
        .map(|model| ctxkit_llm::ModelLimits {
            provider: model.provider.clone(),
            id: model.id.clone(),
            context_window: model.context_window,
            max_output: model
                .max_output
                .unwrap_or_else(|| default_max_output(model.context_window)),
            reasoning: model.reasoning.unwrap_or(false),
            images: accepts_images(model.input.as_deref()),
            adaptive_thinking: model
                .compat
                .as_ref()
                .and_then(|compat| compat.force_adaptive_thinking)
                .unwrap_or(false),
            xhigh_effort: None,
            chat_compat: model.compat.as_ref().map(chat_compat).unwrap_or_default(),
        })
        .collect()
}

/// The Chat Completions flags of a user's `compat` (Pi 1.6.0's); a `thinkingFormat` ctxkit does
/// not speak is left unset, so the detected format is used.
fn chat_compat(compat: &ctxkit_settings::ModelCompat) -> ctxkit_llm::ChatCompat {
    ctxkit_llm::ChatCompat {
        thinking_level_map: Default::default(),
        thinking_format: compat
            .thinking_format
            .as_deref()
            .and_then(ctxkit_llm::ThinkingFormat::parse),
        requires_reasoning_content: compat.requires_reasoning_content_on_assistant_messages,
        supports_developer_role: compat.supports_developer_role,
        supports_usage_in_streaming: compat.supports_usage_in_streaming,
        supports_store: compat.supports_store,
        supports_reasoning_effort: compat.supports_reasoning_effort,
        max_tokens_field: compat
            .max_tokens_field
            .as_deref()
            .and_then(ctxkit_llm::MaxTokensField::parse),
        requires_tool_result_name: compat.requires_tool_result_name,
        requires_assistant_after_tool_result: compat.requires_assistant_after_tool_result,
        requires_thinking_as_text: compat.requires_thinking_as_text,
    }
}

/// Whether a model's `input` (Pi's `llm.models[].input`) takes images; without one, text only, as
/// Pi's default for a model the user adds.
fn accepts_images(input: Option<&[String]>) -> bool {
    input.is_some_and(|kinds| kinds.iter().any(|kind| kind == "image"))
}

/// No model named and no `defaultModel` set; each surface says how to name one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoModelConfigured;

impl std::fmt::Display for NoModelConfigured {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(
            "No model configured; pass `--model provider/id` or run `ctxkit config set defaultModel provider/id`",
        )
    }
}

impl std::error::Error for NoModelConfigured {}

impl NoModelConfigured {
    /// What a new user does next: a model of the provider whose key is already set, or which
    /// keys to set. Only variable names are shown, never a value.
    pub fn hint() -> String {
        match model_for_a_set_key() {
            Some(KeyedModel { source, model }) => format!(
                "{source}: `--model {model}` uses it (`ctxkit config set defaultModel {model}` makes it the default; `ctxkit models` lists the others)"
            ),
            None => "save a provider's key with `ctxkit login anthropic` (or `openai`, `google`, …) or set its variable (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, …), then name one of its models, e.g. `--model anthropic/claude-sonnet-4-5`, or start a local server (`--model ollama/<model>`); `ctxkit models` lists them".to_owned(),
        }
    }
}

/// A provider's default model, taken because its key is set (Pi 1.6.0's `defaultModelPerProvider`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedModel {
    /// Where the key was found, as the user is told (a variable's name or the saved keys, never a
    /// value): "`ANTHROPIC_API_KEY` is set".
    pub source: String,
    /// `provider/id`.
    pub model: String,
}

/// The default model of the first provider, in Pi's order, with a key: saved by `ctxkit login`
/// or in its environment variable.
pub fn model_for_a_set_key() -> Option<KeyedModel> {
    let saved = saved_keys().map(|saved| saved.keys).unwrap_or_default();
    ctxkit_llm::DEFAULT_MODELS
        .iter()
        .find_map(|(provider, id)| {
            let source = match key_source(provider, &saved)? {
                KeySource::Saved => format!("`ctxkit login` saved a key of `{provider}`"),
                KeySource::Variable(variable) => format!("`{variable}` is set"),
            };
            let model = format!("{provider}/{id}");
            Some(KeyedModel { source, model })
        })
}

/// Where a built-in provider's key comes from now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// Saved by `ctxkit login` (it wins over the variable, as in Pi).
    Saved,
    /// The provider's environment variable, set and not empty.
    Variable(&'static str),
}

/// Where `provider`'s key comes from, given the keys `ctxkit login` saved (`None`: it has none,
/// or it is not a built-in provider that takes one).
pub fn key_source(
    provider: &str,
    saved: &std::collections::BTreeMap<String, String>,
) -> Option<KeySource> {
    if saved.contains_key(provider) {
        return Some(KeySource::Saved);
    }
    let variable = ctxkit_llm::find_provider(provider)?.key_env?;
    ctxkit_secrets::environment_variable(variable)
        .filter(|value| !value.trim().is_empty())
        .map(|_| KeySource::Variable(variable))
}

/// The model client for the configured model, or, with none configured and no `spec`, for the
/// default model of a provider whose key is set, as Pi runs it (the compaction commands keep the
/// offline summarizer: this is for surfaces that cannot work without a model).
pub fn agent_model_client(
    options: &ctxkit_llm::LlmOptions,
    spec: Option<&str>,
) -> Result<(ctxkit_llm::ModelClient, Option<KeyedModel>)> {
    match model_client(options, spec) {
        Err(error) if spec.is_none() && error.is::<NoModelConfigured>() => {
            let Some(keyed) = model_for_a_set_key() else {
                return Err(error);
            };
            Ok((model_client(options, Some(&keyed.model))?, Some(keyed)))
        }
        other => other.map(|client| (client, None)),
    }
}

/// The model client for `spec` (`provider/id`, picked for this run), or the configured default
/// model.
pub fn model_client(
    options: &ctxkit_llm::LlmOptions,
    spec: Option<&str>,
) -> Result<ctxkit_llm::ModelClient> {
    // Picked, not configured: the endpoint settings stay with the provider the settings name.
    let mut options = options.clone();
    if let Some(spec) = spec {
        options.picked_model = Some(spec.to_owned());
    }
    let environment = llm_environment()?;
    let Some(config) =
        ctxkit_llm::resolve_model(&options, &environment, ctxkit_llm::ModelRole::Agent)?
    else {
        return Err(NoModelConfigured.into());
    };
    Ok(ctxkit_llm::ModelClient::with_http(
        config,
        shared_http(&options)?,
    )?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use ctxkit_settings::SettingsManager;

    /// A Pi user's `compat` reaches the model's Chat Completions flags; a `thinkingFormat` ctxkit
    /// does not speak is left to detection.
    #[test]
    fn a_users_chat_completions_flags_reach_the_model() {
        let model: ctxkit_settings::UserModel = serde_json::from_value(serde_json::json!({
            "provider": "local", "id": "qwen3", "contextWindow": 32768,
            "compat": {"supportsDeveloperRole": true, "supportsUsageInStreaming": false,
                "supportsStore": true, "supportsReasoningEffort": false,
                "maxTokensField": "max_completion_tokens", "thinkingFormat": "qwen",
                "requiresToolResultName": true, "requiresAssistantAfterToolResult": true,
                "requiresThinkingAsText": true, "requiresReasoningContentOnAssistantMessages": true}
        }))
        .unwrap();
        let compat = &super::user_models(std::slice::from_ref(&model))[0].chat_compat;
        let expected = ctxkit_llm::ChatCompat {
            thinking_level_map: Default::default(),
            thinking_format: Some(ctxkit_llm::ThinkingFormat::Qwen),
            requires_reasoning_content: Some(true),
            supports_developer_role: Some(true),
            supports_usage_in_streaming: Some(false),
            supports_store: Some(true),
            supports_reasoning_effort: Some(false),
            max_tokens_field: Some(ctxkit_llm::MaxTokensField::MaxCompletionTokens),
            requires_tool_result_name: Some(true),
            requires_assistant_after_tool_result: Some(true),
            requires_thinking_as_text: Some(true),
        };
        assert_eq!(compat, &expected);
        let mut baseten = model;
        baseten.compat = Some(ctxkit_settings::ModelCompat {
            thinking_format: Some("baseten".to_owned()),
            ..Default::default()
        });
        let compat = &super::user_models(&[baseten])[0].chat_compat;
        assert_eq!(compat, &ctxkit_llm::ChatCompat::default());
    }

    #[test]
    fn a_users_price_tiers_keep_the_base_rate_they_leave_out() {
        let cost: ctxkit_settings::ModelPrices = serde_json::from_value(serde_json::json!({
            "input": 2, "output": 8, "cacheRead": 0.2,
            "tiers": [{"inputTokensAbove": 128000, "input": 4}]}))
        .unwrap();
        let prices = super::user_prices(&cost);
        assert_eq!((prices.input, prices.cache_write), (2.0, 0.0));
        let tier = prices.tiers[0];
        assert_eq!(tier.input_tokens_above, 128_000);
        assert_eq!((tier.input, tier.output, tier.cache_read), (4.0, 8.0, 0.2));
        let usage = ctxkit_protocol::Usage {
            input: 200_000,
            output: 1_000_000,
            ..Default::default()
        };
        let cost = ctxkit_models::usage_cost(&usage, Some(&prices));
        assert!((cost.total - (0.8 + 8.0)).abs() < 1e-9, "{cost:?}");
    }

    #[test]
    fn provider_compaction_is_off_by_default_and_read_when_enabled() {
        let off = super::llm_options(&SettingsManager::in_memory(Default::default())).unwrap();
        assert!(off.anthropic_compaction.is_none());
        assert!(off.openai_compaction.is_none());
        let document = serde_json::json!({"llm": {
            "anthropic": {"compaction": {"enabled": true, "triggerInputTokens": 80000,
                "pauseAfterCompaction": true, "instructions": "Keep paths."}},
            "openaiResponses": {"compaction": {"enabled": true, "compactThreshold": 120000}}}});
        let settings = SettingsManager::in_memory(document.as_object().unwrap().clone());
        let on = super::llm_options(&settings).unwrap();
        assert_eq!(
            on.anthropic_compaction,
            Some(ctxkit_llm::AnthropicCompaction {
                trigger_input_tokens: Some(80_000),
                pause_after_compaction: true,
                instructions: Some("Keep paths.".into()),
            })
        );
        assert_eq!(
            on.openai_compaction,
            Some(ctxkit_llm::OpenAiCompaction {
                compact_threshold: Some(120_000),
            })
        );
    }

    #[test]
    fn request_timeouts_default_to_the_clients_and_are_read_when_set() {
        use std::time::Duration;
        let default = super::llm_options(&SettingsManager::in_memory(Default::default())).unwrap();
        assert_eq!(default.timeouts, ctxkit_llm::Timeouts::default());
        let document = serde_json::json!({"llm": {"timeouts":
            {"connectSeconds": 3, "firstByteSeconds": 40, "idleSeconds": 7}}});
        let settings = SettingsManager::in_memory(document.as_object().unwrap().clone());
        let options = super::llm_options(&settings).unwrap();
        assert_eq!(
            options.timeouts,
            ctxkit_llm::Timeouts {
                connect: Duration::from_secs(3),
                first_byte: Duration::from_secs(40),
                idle: Duration::from_secs(7),
            }
        );
        // Out of range (at least 1 s): refused, naming the key, rather than run with the default.
        let document = serde_json::json!({"llm": {"timeouts": {"idleSeconds": 0}}});
        let settings = SettingsManager::in_memory(document.as_object().unwrap().clone());
        let refused = super::llm_options(&settings).unwrap_err().to_string();
        assert!(
            refused.starts_with("Invalid value for `llm.timeouts.idleSeconds`"),
            "{refused}"
        );
    }

    /// A loopback HTTP/1.1 server that answers every request with a 400 on a kept-alive
    /// connection; returns its address and the number of connections it accepted so far.
    fn counting_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{BufRead as _, Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}/v1", listener.local_addr().unwrap());
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut writer = stream.try_clone().unwrap();
                    let mut reader = std::io::BufReader::new(stream);
                    loop {
                        let mut length = 0;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            let lower = line.to_ascii_lowercase();
                            if let Some(value) = lower.strip_prefix("content-length:") {
                                length = value.trim().parse().unwrap_or(0);
                            }
                            if line == "\r\n" {
                                break;
                            }
                        }
                        let mut body = vec![0; length];
                        reader.read_exact(&mut body).unwrap();
                        let answer = r#"{"error":{"message":"no"}}"#;
                        let response = format!(
                            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n\
                             content-length: {}\r\n\r\n{answer}",
                            answer.len()
                        );
                        writer.write_all(response.as_bytes()).unwrap();
                    }
                });
            }
        });
        (address, accepted)
    }

    /// Every model client of the process sends through one connection pool: the chat's, `/model`'s
    /// and the summarizer's (all built by `model_client` or with `shared_http`): three requests,
    /// one after the other, open one connection; a client of its own opens another.
    #[tokio::test]
    async fn every_model_client_of_the_process_shares_one_pool() {
        let (address, accepted) = counting_server();
        let document = serde_json::json!({"defaultModel": "ollama/qwen3:8b",
            "llm": {"baseUrl": address}});
        let settings = SettingsManager::in_memory(document.as_object().unwrap().clone());
        let options = super::llm_options(&settings).unwrap();
        let chat = super::model_client(&options, None).unwrap();
        let other = super::model_client(&options, Some("ollama/qwen3-coder")).unwrap();
        let summaries = ctxkit_llm::ModelClient::with_http(
            chat.config().clone(),
            super::shared_http(&options).unwrap(),
        )
        .unwrap();
        let request = ctxkit_llm::CompletionRequest {
            system_prompt: "s".to_owned(),
            user_text: "u".to_owned(),
            max_tokens: 16,
            reasoning: None,
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        for client in [&chat, &other, &summaries] {
            assert!(client.complete(&request, &cancel).await.is_err());
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
        let own = ctxkit_llm::ModelClient::new(chat.config().clone()).unwrap();
        assert!(own.complete(&request, &cancel).await.is_err());
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn anthropic_cache_retention_is_short_by_default_and_read_when_set() {
        let default = super::llm_options(&SettingsManager::in_memory(Default::default())).unwrap();
        assert_eq!(
            default.anthropic_cache_retention,
            ctxkit_llm::CacheRetention::Short
        );
        for (name, retention) in [
            ("none", ctxkit_llm::CacheRetention::None),
            ("long", ctxkit_llm::CacheRetention::Long),
        ] {
            let document = serde_json::json!({"llm": {"anthropic": {"cacheRetention": name}}});
            let settings = SettingsManager::in_memory(document.as_object().unwrap().clone());
            let options = super::llm_options(&settings).unwrap();
            assert_eq!(options.anthropic_cache_retention, retention);
        }
    }
}
