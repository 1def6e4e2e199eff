//! The built-in model table: `data/models.json`, refreshed from the catalog Pi ships by
//! `data/update-models` (context windows, output limits, reasoning, Anthropic's adaptive thinking,
//! list prices and tiers).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

use crate::prices::{ModelPrices, PriceTier};

const CATALOG: &str = include_str!("../data/models.json");

#[derive(Deserialize)]
struct CatalogFile {
    models: Vec<BuiltinModel>,
}

/// One model of the built-in table: its window and output limit in tokens, whether it reasons,
/// whether it takes images (the catalog's `input`; a row kept from before it was recorded: yes).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuiltinModel {
    pub provider: String,
    pub id: String,
    pub context_window: u64,
    pub max_tokens: u64,
    pub reasoning: bool,
    #[serde(default = "takes_images")]
    pub images: bool,
    /// Pi's `compat.forceAdaptiveThinking`: Anthropic requires adaptive thinking with an effort
    /// of the model, not a thinking budget.
    #[serde(default)]
    pub force_adaptive_thinking: bool,
    /// The effort the `xhigh` level asks of an adaptive-thinking model (`xhigh` or `max`, Pi's
    /// `thinkingLevelMap` with its clamping); `None`: `high`.
    #[serde(default)]
    pub xhigh_effort: Option<String>,
    /// The thinking levels a Gemini model takes (`minimal`, `low`, `medium`, `high`, `xhigh`: those
    /// Pi's `thinkingLevelMap` names); empty when the catalog names none.
    #[serde(default)]
    pub thinking_levels: Vec<String>,
    /// The thinking levels a reasoning model supports (Pi's `getSupportedThinkingLevels` over its
    /// `thinkingLevelMap`), when they are not the default five, `off` … `high`
    /// ([`crate::supported_thinking_levels`] reads it); empty: those five.
    #[serde(default)]
    pub supported_thinking_levels: Vec<String>,
    /// Pi's `thinkingLevelMap` of a reasoning model spoken to over Chat Completions: the value the
    /// provider takes for each level (Groq's Qwen3: `off` is `none`, `high` is `default`); a
    /// level mapped to `None` is not supported, a level missing is sent by its own name.
    #[serde(default)]
    pub thinking_level_map: BTreeMap<String, Option<String>>,
    /// Pi's `compat.thinkingFormat`: how a Chat Completions request asks for reasoning
    /// (`openrouter`: a `reasoning` object; `deepseek`: a `thinking` object beside the effort).
    #[serde(default)]
    pub thinking_format: Option<String>,
    /// Pi's `compat.requiresReasoningContentOnAssistantMessages`: every assistant message of a
    /// request carries `reasoning_content` (DeepSeek's thinking mode and the gateways serving it).
    #[serde(default)]
    pub requires_reasoning_content: bool,
    cost: Option<CatalogCost>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogCost {
    input: f64,
    output: f64,
    cache_read: f64,
    cache_write: f64,
    #[serde(default)]
    tiers: Vec<CatalogTier>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogTier {
    input_tokens_above: u64,
    input: f64,
    output: f64,
    cache_read: f64,
    cache_write: f64,
}

impl BuiltinModel {
    /// The model's list prices, when the table has them.
    pub fn prices(&self) -> Option<ModelPrices> {
        let cost = self.cost.as_ref()?;
        Some(ModelPrices {
            input: cost.input,
            output: cost.output,
            cache_read: cost.cache_read,
            cache_write: cost.cache_write,
            tiers: cost
                .tiers
                .iter()
                .map(|tier| PriceTier {
                    input_tokens_above: tier.input_tokens_above,
                    input: tier.input,
                    output: tier.output,
                    cache_read: tier.cache_read,
                    cache_write: tier.cache_write,
                })
                .collect(),
        })
    }
}

/// `gemini` is an alias of `google`.
fn table_provider(provider: &str) -> &str {
    if provider == "gemini" {
        "google"
    } else {
        provider
    }
}

/// The list prices of a built-in model (`gemini` is an alias of `google`).
pub fn model_prices(provider: &str, id: &str) -> Option<ModelPrices> {
    let provider = table_provider(provider);
    builtin_models()
        .iter()
        .find(|model| model.provider == provider && model.id == id)
        .and_then(BuiltinModel::prices)
}

/// The table's row for `id` as `provider` serves it: the provider's own row, else a first-party
/// provider's row of that id (a gateway serving a known model), else a gateway row whose id ends
/// with `/id`. For what follows the model rather than the seller (its cache's rule, a replay's
/// list price); a reply's cost uses [`model_prices`], the provider's own row only.
pub fn model_row(provider: &str, id: &str) -> Option<&'static BuiltinModel> {
    let models = builtin_models();
    let provider = table_provider(provider);
    let exact = models
        .iter()
        .find(|row| row.provider == provider && row.id == id);
    let first_party = || {
        models
            .iter()
            .find(|row| row.provider != "openrouter" && row.id == id)
    };
    let gateway = || {
        let suffix = format!("/{id}");
        models.iter().find(|row| row.id.ends_with(&suffix))
    };
    exact.or_else(first_party).or_else(gateway)
}

/// What a model's prompt cache charges and serves, from the prices of its row in the table
/// ([`model_row`]: a gateway serving GPT-5 caches as OpenAI does).
pub fn model_cache_terms(provider: &str, id: &str) -> Option<crate::CacheTerms> {
    model_row(provider, id)?.prices()?.cache_terms()
}

/// Every built-in model, read once. The file is part of the build and a test reads it, so an
/// empty table here means a broken build, not bad input.
fn takes_images() -> bool {
    true
}

pub fn builtin_models() -> &'static [BuiltinModel] {
    static MODELS: LazyLock<Vec<BuiltinModel>> = LazyLock::new(|| {
        serde_json::from_str::<CatalogFile>(CATALOG)
            .map(|file| file.models)
            .unwrap_or_default()
    });
    &MODELS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_says_which_models_take_images() {
        let images = |provider: &str, id: &str| {
            builtin_models()
                .iter()
                .find(|model| model.provider == provider && model.id == id)
                .map(|model| model.images)
        };
        assert_eq!(images("groq", "llama-3.3-70b-versatile"), Some(false));
        assert_eq!(
            images("anthropic", "claude-3-7-sonnet-20250219"),
            Some(true)
        );
    }

    #[test]
    fn the_table_reads_and_holds_each_providers_current_models() {
        let parsed: CatalogFile = serde_json::from_str(CATALOG).unwrap();
        assert!(parsed.models.len() > 500, "{}", parsed.models.len());
        let find = |provider: &str, id: &str| {
            builtin_models()
                .iter()
                .find(|model| model.provider == provider && model.id == id)
        };
        let opus = find("anthropic", "claude-opus-4-8").unwrap();
        assert_eq!(
            (opus.context_window, opus.max_tokens, opus.reasoning),
            (1_000_000, 128_000, true)
        );
        assert_eq!(opus.prices().unwrap().cache_write, 6.25);
        for (provider, id) in [
            ("openai", "gpt-5"),
            ("google", "gemini-2.5-pro"),
            ("xai", "grok-4"),
            ("groq", "openai/gpt-oss-120b"),
            ("mistral", "mistral-large-latest"),
            ("openrouter", "anthropic/claude-opus-4.8"),
            // Models the catalog no longer lists stay, for older sessions' prices.
            ("anthropic", "claude-opus-4-1"),
            // Codex's models, which the catalog lists only behind OpenRouter, added by hand at
            // OpenAI's list prices.
            ("openai", "gpt-5-codex"),
            ("openai", "gpt-5.1-codex-max"),
        ] {
            assert!(find(provider, id).is_some(), "{provider}/{id}");
        }
        let adaptive = |id: &str| {
            find("anthropic", id).map(|model| {
                (
                    model.force_adaptive_thinking,
                    model.xhigh_effort.as_deref().unwrap_or("high"),
                )
            })
        };
        assert_eq!(adaptive("claude-opus-5-5"), Some((true, "xhigh")));
        assert_eq!(adaptive("claude-sonnet-4-6"), Some((true, "max")));
        assert_eq!(adaptive("claude-sonnet-4-5"), Some((false, "high")));
        // The level values and request formats of Chat Completions models (Pi's catalog).
        let qwen = find("groq", "qwen/qwen3.6-27b").unwrap();
        let value = |level: &str| qwen.thinking_level_map.get(level).cloned().flatten();
        assert_eq!(value("off").as_deref(), Some("none"));
        assert_eq!(value("high").as_deref(), Some("default"));
        let deepseek = find("openrouter", "deepseek/deepseek-v3.2").unwrap();
        assert_eq!(deepseek.thinking_format.as_deref(), Some("openrouter"));
        assert!(
            find("openrouter", "deepseek/deepseek-v4-flash")
                .unwrap()
                .requires_reasoning_content
        );
        assert!(!deepseek.requires_reasoning_content);
        let tiers = find("google", "gemini-2.5-pro").unwrap().prices().unwrap();
        assert_eq!(tiers.tiers[0].input_tokens_above, 200_000);
    }

    #[test]
    fn each_model_appears_once_with_an_output_limit_inside_its_window() {
        let mut seen = std::collections::HashSet::new();
        for model in builtin_models() {
            assert!(
                seen.insert((&model.provider, &model.id)),
                "{}/{} twice",
                model.provider,
                model.id
            );
            assert!(model.max_tokens <= model.context_window, "{}", model.id);
            assert!(model.context_window > 0, "{}", model.id);
        }
    }
}
