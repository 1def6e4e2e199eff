//! What ctxkit knows about providers and models: each built-in provider's wire API, base URL and
//! key variable, and a table of well-known models with their context windows and output limits,
//! extendable by the user.

/// A wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// Anthropic Messages (`POST {base}/v1/messages`).
    AnthropicMessages,
    /// OpenAI Chat Completions (`POST {base}/chat/completions`), spoken by most compatible servers.
    OpenAiChat,
    /// OpenAI Responses (`POST {base}/responses`).
    OpenAiResponses,
    /// Google Gemini (`POST {base}/models/{id}:generateContent`).
    Gemini,
}

impl Api {
    /// The reference's name for the API (`anthropic-messages`, …), also used in settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AnthropicMessages => "anthropic-messages",
            Self::OpenAiChat => "openai-completions",
            Self::OpenAiResponses => "openai-responses",
            Self::Gemini => "google-generative-ai",
        }
    }

    /// Reads [`Api::as_str`] names.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::AnthropicMessages,
            Self::OpenAiChat,
            Self::OpenAiResponses,
            Self::Gemini,
        ]
        .into_iter()
        .find(|api| api.as_str() == text)
    }
}

/// Which request field carries the output limit in Chat Completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_completion_tokens` (OpenAI itself; required by its reasoning models).
    MaxCompletionTokens,
    /// `max_tokens` (every compatible server).
    MaxTokens,
}

/// A built-in provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderInfo {
    pub name: &'static str,
    pub api: Api,
    pub base_url: &'static str,
    /// The environment variable holding its key; `None` for local servers that need none.
    pub key_env: Option<&'static str>,
    pub max_tokens_field: MaxTokensField,
}

const fn provider(
    name: &'static str,
    api: Api,
    base_url: &'static str,
    key_env: Option<&'static str>,
) -> ProviderInfo {
    ProviderInfo {
        name,
        api,
        base_url,
        key_env,
        max_tokens_field: MaxTokensField::MaxTokens,
    }
}

/// Every built-in provider.
pub const PROVIDERS: &[ProviderInfo] = &[
    provider(
        "anthropic",
        Api::AnthropicMessages,
        "https://api.anthropic.com",
        Some("ANTHROPIC_API_KEY"),
    ),
    ProviderInfo {
        name: "openai",
        api: Api::OpenAiResponses,
        base_url: "https://api.openai.com/v1",
        key_env: Some("OPENAI_API_KEY"),
        max_tokens_field: MaxTokensField::MaxCompletionTokens,
    },
    provider(
        "google",
        Api::Gemini,
        "https://generativelanguage.googleapis.com/v1beta",
        Some("GEMINI_API_KEY"),
    ),
    provider(
        "openrouter",
        Api::OpenAiChat,
        "https://openrouter.ai/api/v1",
        Some("OPENROUTER_API_KEY"),
    ),
    provider(
        "groq",
        Api::OpenAiChat,
        "https://api.groq.com/openai/v1",
        Some("GROQ_API_KEY"),
    ),
    provider(
        "xai",
        Api::OpenAiChat,
        "https://api.x.ai/v1",
        Some("XAI_API_KEY"),
    ),
    provider(
        "mistral",
        Api::OpenAiChat,
        "https://api.mistral.ai/v1",
        Some("MISTRAL_API_KEY"),
    ),
    provider("ollama", Api::OpenAiChat, "http://localhost:11434/v1", None),
    provider("vllm", Api::OpenAiChat, "http://localhost:8000/v1", None),
    provider(
        "llama.cpp",
        Api::OpenAiChat,
        "http://localhost:8080/v1",
        None,
    ),
    provider(
        "lmstudio",
        Api::OpenAiChat,
        "http://localhost:1234/v1",
        None,
    ),
];

/// The built-in provider called `name` (`gemini` is an alias of `google`).
pub fn find_provider(name: &str) -> Option<&'static ProviderInfo> {
    let name = if name == "gemini" { "google" } else { name };
    PROVIDERS.iter().find(|provider| provider.name == name)
}

/// One model's limits: a row of the [`ModelTable`]. (The engine's `ModelInfo` is the model it is
/// working with now.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelLimits {
    pub provider: String,
    pub id: String,
    /// Tokens of input plus output the model accepts.
    pub context_window: u64,
    /// The largest output the API allows.
    pub max_output: u64,
    /// Whether requests may carry a reasoning level.
    pub reasoning: bool,
}

/// (provider, id, context window, max output, reasoning). Values from each provider's model
/// documentation; users add or override entries through [`ModelTable::insert`].
const BUILTIN_MODELS: &[(&str, &str, u64, u64, bool)] = &[
    ("anthropic", "claude-opus-4-1", 200_000, 32_000, true),
    ("anthropic", "claude-opus-4-0", 200_000, 32_000, true),
    ("anthropic", "claude-sonnet-4-5", 200_000, 64_000, true),
    ("anthropic", "claude-sonnet-4-0", 200_000, 64_000, true),
    ("anthropic", "claude-haiku-4-5", 200_000, 64_000, true),
    (
        "anthropic",
        "claude-3-7-sonnet-latest",
        200_000,
        64_000,
        true,
    ),
    (
        "anthropic",
        "claude-3-5-haiku-latest",
        200_000,
        8_192,
        false,
    ),
    ("openai", "gpt-5", 400_000, 128_000, true),
    ("openai", "gpt-5-mini", 400_000, 128_000, true),
    ("openai", "gpt-5-nano", 400_000, 128_000, true),
    ("openai", "gpt-4.1", 1_047_576, 32_768, false),
    ("openai", "gpt-4.1-mini", 1_047_576, 32_768, false),
    ("openai", "gpt-4o", 128_000, 16_384, false),
    ("openai", "gpt-4o-mini", 128_000, 16_384, false),
    ("openai", "o3", 200_000, 100_000, true),
    ("openai", "o4-mini", 200_000, 100_000, true),
    ("google", "gemini-2.5-pro", 1_048_576, 65_536, true),
    ("google", "gemini-2.5-flash", 1_048_576, 65_536, true),
    ("google", "gemini-2.5-flash-lite", 1_048_576, 65_536, true),
    ("google", "gemini-2.0-flash", 1_048_576, 8_192, false),
    ("xai", "grok-4", 256_000, 64_000, true),
    ("xai", "grok-3", 131_072, 8_192, false),
    ("xai", "grok-3-mini", 131_072, 8_192, true),
    ("groq", "llama-3.3-70b-versatile", 131_072, 32_768, false),
    ("groq", "openai/gpt-oss-120b", 131_072, 65_536, true),
    ("mistral", "mistral-large-latest", 131_072, 131_072, false),
    ("mistral", "devstral-medium-latest", 131_072, 131_072, false),
    ("mistral", "mistral-small-latest", 131_072, 131_072, false),
];

/// A model's list prices, in dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl ModelPrices {
    /// Every price is zero: a free model (a local one, or one the user declared free with a
    /// `cost` of zeros), as against a model whose price is unknown (no prices at all).
    pub fn is_free(&self) -> bool {
        [self.input, self.output, self.cache_read, self.cache_write] == [0.0; 4]
    }
}

/// (provider, id, [input, output, cache read, cache write]) in dollars per million tokens, from the
/// providers' price pages; models not listed cost zero in the `usage.cost` ctxkit writes.
const BUILTIN_PRICES: &[(&str, &str, [f64; 4])] = &[
    ("anthropic", "claude-opus-4-1", [15.0, 75.0, 1.5, 18.75]),
    ("anthropic", "claude-opus-4-0", [15.0, 75.0, 1.5, 18.75]),
    ("anthropic", "claude-sonnet-4-5", [3.0, 15.0, 0.3, 3.75]),
    ("anthropic", "claude-sonnet-4-0", [3.0, 15.0, 0.3, 3.75]),
    ("anthropic", "claude-haiku-4-5", [1.0, 5.0, 0.1, 1.25]),
    (
        "anthropic",
        "claude-3-7-sonnet-latest",
        [3.0, 15.0, 0.3, 3.75],
    ),
    (
        "anthropic",
        "claude-3-5-haiku-latest",
        [0.8, 4.0, 0.08, 1.0],
    ),
    ("openai", "gpt-5", [1.25, 10.0, 0.125, 0.0]),
    ("openai", "gpt-5-mini", [0.25, 2.0, 0.025, 0.0]),
    ("openai", "gpt-5-nano", [0.05, 0.4, 0.005, 0.0]),
    ("openai", "gpt-4.1", [2.0, 8.0, 0.5, 0.0]),
    ("openai", "gpt-4.1-mini", [0.4, 1.6, 0.1, 0.0]),
    ("openai", "gpt-4o", [2.5, 10.0, 1.25, 0.0]),
    ("openai", "gpt-4o-mini", [0.15, 0.6, 0.075, 0.0]),
    ("openai", "o3", [2.0, 8.0, 0.5, 0.0]),
    ("openai", "o4-mini", [1.1, 4.4, 0.275, 0.0]),
    ("google", "gemini-2.5-pro", [1.25, 10.0, 0.31, 0.0]),
    ("google", "gemini-2.5-flash", [0.3, 2.5, 0.075, 0.0]),
    ("google", "gemini-2.5-flash-lite", [0.1, 0.4, 0.025, 0.0]),
    ("google", "gemini-2.0-flash", [0.1, 0.4, 0.025, 0.0]),
    ("xai", "grok-4", [3.0, 15.0, 0.75, 0.0]),
    ("xai", "grok-3", [3.0, 15.0, 0.75, 0.0]),
    ("xai", "grok-3-mini", [0.3, 0.5, 0.075, 0.0]),
];

/// The list prices of a built-in model.
pub fn model_prices(provider: &str, id: &str) -> Option<ModelPrices> {
    let provider = if provider == "gemini" {
        "google"
    } else {
        provider
    };
    BUILTIN_PRICES
        .iter()
        .find(|(known_provider, known_id, _)| *known_provider == provider && *known_id == id)
        .map(
            |&(_, _, [input, output, cache_read, cache_write])| ModelPrices {
                input,
                output,
                cache_read,
                cache_write,
            },
        )
}

/// The usage field (Pi 1.6's `cacheWrite1h`) holding the part of `cacheWrite` written to live an
/// hour, which Anthropic bills at twice the input price instead of the five-minute write price.
pub(crate) const LONG_CACHE_WRITES: &str = "cacheWrite1h";

/// The hour-long part of `usage`'s cache writes (0 when it says none).
fn long_cache_writes(usage: &ctxkit_protocol::Usage) -> u64 {
    usage
        .extra
        .get(LONG_CACHE_WRITES)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
        .min(usage.cache_write)
}

/// What `usage` cost at `prices` (zeros without prices), as Pi computes it: each part is its
/// tokens times its price per million, the total their sum; hour-long cache writes
/// ([`LONG_CACHE_WRITES`]) cost twice the input price, the others the cache-write price.
pub fn usage_cost(
    usage: &ctxkit_protocol::Usage,
    prices: Option<ModelPrices>,
) -> ctxkit_protocol::UsageCost {
    let prices = prices.unwrap_or(ModelPrices {
        input: 0.0,
        output: 0.0,
        cache_read: 0.0,
        cache_write: 0.0,
    });
    let part = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
    let input = part(prices.input, usage.input);
    let output = part(prices.output, usage.output);
    let cache_read = part(prices.cache_read, usage.cache_read);
    let long = long_cache_writes(usage);
    let cache_write =
        part(prices.cache_write, usage.cache_write - long) + part(prices.input * 2.0, long);
    ctxkit_protocol::UsageCost {
        input,
        output,
        cache_read,
        cache_write,
        total: input + output + cache_read + cache_write,
        extra: ctxkit_protocol::JsonObject::new(),
    }
}

/// Known models, built-in first, then the user's (which replace built-ins of the same name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelTable {
    models: Vec<ModelLimits>,
}

impl ModelTable {
    /// The built-in table.
    pub fn builtin() -> Self {
        let models = BUILTIN_MODELS
            .iter()
            .map(
                |(provider, id, context_window, max_output, reasoning)| ModelLimits {
                    provider: (*provider).to_owned(),
                    id: (*id).to_owned(),
                    context_window: *context_window,
                    max_output: *max_output,
                    reasoning: *reasoning,
                },
            )
            .collect();
        Self { models }
    }

    /// Adds a model, replacing one with the same provider and id.
    pub fn insert(&mut self, model: ModelLimits) {
        match self
            .models
            .iter_mut()
            .find(|m| m.provider == model.provider && m.id == model.id)
        {
            Some(existing) => *existing = model,
            None => self.models.push(model),
        }
    }

    /// The model `id` of `provider`.
    pub fn find(&self, provider: &str, id: &str) -> Option<&ModelLimits> {
        let provider = if provider == "gemini" {
            "google"
        } else {
            provider
        };
        self.models
            .iter()
            .find(|model| model.provider == provider && model.id == id)
    }

    /// The first model called `id`, whatever its provider.
    pub fn find_by_id(&self, id: &str) -> Option<&ModelLimits> {
        self.models.iter().find(|model| model.id == id)
    }

    /// Every model, in table order.
    pub fn iter(&self) -> impl Iterator<Item = &ModelLimits> {
        self.models.iter()
    }
}

impl Default for ModelTable {
    fn default() -> Self {
        Self::builtin()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_model_has_a_builtin_provider() {
        for model in ModelTable::builtin().iter() {
            assert!(
                find_provider(&model.provider).is_some(),
                "{}",
                model.provider
            );
            assert!(model.max_output <= model.context_window, "{}", model.id);
        }
        let table = ModelTable::builtin();
        for (provider, id, _) in BUILTIN_PRICES {
            assert!(
                table.find(provider, id).is_some(),
                "{provider}/{id} is priced but unknown"
            );
        }
    }

    #[test]
    fn usage_costs_follow_the_prices_and_are_zero_without() {
        let usage = ctxkit_protocol::Usage {
            input: 1_000_000,
            output: 2_000,
            cache_read: 10_000,
            ..ctxkit_protocol::Usage::default()
        };
        let cost = usage_cost(&usage, model_prices("anthropic", "claude-sonnet-4-5"));
        assert!((cost.input - 3.0).abs() < 1e-9);
        assert!((cost.output - 0.03).abs() < 1e-9);
        assert!((cost.cache_read - 0.003).abs() < 1e-9);
        assert!((cost.total - 3.033).abs() < 1e-9);
        let unknown = usage_cost(&usage, model_prices("ollama", "qwen3:8b"));
        assert_eq!(unknown.total, 0.0);
    }

    #[test]
    fn hour_long_cache_writes_cost_twice_the_input_price() {
        let mut usage = ctxkit_protocol::Usage {
            cache_write: 1_000_000,
            ..ctxkit_protocol::Usage::default()
        };
        let prices = model_prices("anthropic", "claude-sonnet-4-5");
        assert!((usage_cost(&usage, prices).cache_write - 3.75).abs() < 1e-9);
        usage
            .extra
            .insert(LONG_CACHE_WRITES.to_owned(), serde_json::json!(400_000));
        let cost = usage_cost(&usage, prices);
        assert!((cost.cache_write - (0.6 * 3.75 + 0.4 * 6.0)).abs() < 1e-9);
        assert!((cost.total - cost.cache_write).abs() < 1e-9);
    }

    #[test]
    fn user_models_extend_and_replace() {
        let mut table = ModelTable::builtin();
        table.insert(ModelLimits {
            provider: "ollama".into(),
            id: "qwen3:8b".into(),
            context_window: 40_960,
            max_output: 8_192,
            reasoning: false,
        });
        table.insert(ModelLimits {
            provider: "openai".into(),
            id: "gpt-4o".into(),
            context_window: 1,
            max_output: 1,
            reasoning: false,
        });
        assert_eq!(
            table.find("ollama", "qwen3:8b").map(|m| m.context_window),
            Some(40_960)
        );
        assert_eq!(
            table.find("openai", "gpt-4o").map(|m| m.context_window),
            Some(1)
        );
        assert_eq!(
            table.find("gemini", "gemini-2.5-pro").map(|m| m.max_output),
            Some(65_536)
        );
    }

    #[test]
    fn api_names_round_trip() {
        for api in [
            Api::AnthropicMessages,
            Api::OpenAiChat,
            Api::OpenAiResponses,
            Api::Gemini,
        ] {
            assert_eq!(Api::parse(api.as_str()), Some(api));
        }
    }
}
