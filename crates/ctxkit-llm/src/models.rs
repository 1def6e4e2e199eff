//! What ctxkit knows about providers and models: each built-in provider's wire API, base URL and
//! key variable, and the table of known models with their context windows and output limits
//! (`ctxkit_models::builtin_models`), extendable by the user.

use ctxkit_models::builtin_models;

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

impl MaxTokensField {
    /// Reads Pi's `compat.maxTokensField` values, the field names.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "max_completion_tokens" => Some(Self::MaxCompletionTokens),
            "max_tokens" => Some(Self::MaxTokens),
            _ => None,
        }
    }
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

/// The model Pi 1.6.0 runs for a provider whose key is set when no model is named
/// (`defaultModelPerProvider`), in the order Pi tries them.
pub const DEFAULT_MODELS: &[(&str, &str)] = &[
    ("anthropic", "claude-opus-5-5"),
    ("openai", "gpt-6.2-sol"),
    ("google", "gemini-4-argon"),
    ("openrouter", "moonshotai/kimi-k2.7-code"),
    ("xai", "grok-4.7"),
    ("groq", "openai/gpt-oss-120b"),
    ("mistral", "devstral-medium-latest"),
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
    /// Whether the model takes images (`llm.models[].input` lists `image`; the built-in table's
    /// models do). Over Chat Completions, an image sent to a model that does not is named in its
    /// place: a text-only server refused the whole request, and every later one with it.
    pub images: bool,
    /// Pi's `compat.forceAdaptiveThinking` (the built-in table's newer Claude models, or a user's
    /// `llm.models[].compat`): Anthropic Messages asks it for adaptive thinking at an effort, never
    /// for a thinking budget.
    pub adaptive_thinking: bool,
    /// The effort the `xhigh` level asks of an adaptive-thinking model (`xhigh` or `max`); `None`:
    /// `high`.
    pub xhigh_effort: Option<String>,
    /// What a Chat Completions request of the model needs (Pi's `thinkingLevelMap` and `compat`).
    pub chat_compat: crate::ChatCompat,
}

/// Known models, built-in first, then the user's (which replace built-ins of the same name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelTable {
    models: Vec<ModelLimits>,
}

impl ModelTable {
    /// The built-in table (`ctxkit_models::builtin_models`).
    pub fn builtin() -> Self {
        let models = builtin_models()
            .iter()
            .map(|model| ModelLimits {
                provider: model.provider.clone(),
                id: model.id.clone(),
                context_window: model.context_window,
                max_output: model.max_tokens,
                reasoning: model.reasoning,
                images: model.images,
                adaptive_thinking: model.force_adaptive_thinking,
                xhigh_effort: model.xhigh_effort.clone(),
                chat_compat: crate::ChatCompat::of_builtin(model),
            })
            .collect();
        Self { models }
    }

    /// Adds a model, replacing one with the same provider and id; the Chat Completions flags
    /// the new one leaves unset are the replaced one's ([`crate::ChatCompat::over`]).
    pub fn insert(&mut self, mut model: ModelLimits) {
        match self
            .models
            .iter_mut()
            .find(|m| m.provider == model.provider && m.id == model.id)
        {
            Some(existing) => {
                model.chat_compat = model.chat_compat.over(&existing.chat_compat);
                *existing = model;
            }
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
    }

    #[test]
    fn each_providers_default_model_is_in_the_table() {
        let table = ModelTable::builtin();
        for (provider, id) in DEFAULT_MODELS {
            assert!(find_provider(provider).is_some_and(|info| info.key_env.is_some()));
            assert!(table.find(provider, id).is_some(), "{provider}/{id}");
        }
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
            images: true,
            adaptive_thinking: false,
            xhigh_effort: None,
            chat_compat: Default::default(),
        });
        table.insert(ModelLimits {
            provider: "openai".into(),
            id: "gpt-4o".into(),
            context_window: 1,
            max_output: 1,
            reasoning: false,
            images: true,
            adaptive_thinking: false,
            xhigh_effort: None,
            chat_compat: Default::default(),
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
