//! `ctxkit models [SEARCH]`: the known models (built-in, then the user's `llm.models`), with
//! their context windows, output limits and prices.

use std::io::Write;

use anyhow::Result;
use ctxkit_llm::{ModelLimits, ModelTable};
use ctxkit_models::ModelPrices;
use serde_json::{Value, json};

use super::print_json;
use super::settings::ProcessSettings;
use super::summary_setup::{KeySource, user_models};
use crate::Outcome;

/// Lists the models whose `provider/id` holds every word of `search` (any case).
pub fn models(
    process: &ProcessSettings<'_>,
    search: &[String],
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let manager = process.settings()?;
    let settings = manager.settings();
    let declared = settings.llm.models.as_deref().unwrap_or_default();
    let mut table = ModelTable::builtin();
    for model in user_models(declared) {
        table.insert(model);
    }
    let costs = super::spend::configured_model_costs(manager);
    let price = |model: &ModelLimits| price_of(&costs, model);
    let mut models: Vec<&ModelLimits> = table
        .iter()
        .filter(|model| matches(model, search))
        .collect();
    models.sort_by(|a, b| (&a.provider, &a.id).cmp(&(&b.provider, &b.id)));
    let local = local_servers(search);
    if json {
        let values: Vec<Value> = models
            .iter()
            .map(|model| json_record(model, price(model).as_ref()))
            .chain(local.iter().map(|server| local_record(server)))
            .collect();
        print_json(out, &values)?;
        return Ok(Outcome::Success);
    }
    if models.is_empty() && local.is_empty() {
        writeln!(
            out,
            "No known model matches `{}`; `ctxkit models` lists them all, and `llm.models` adds your own.",
            search.join(" ")
        )?;
        return Ok(Outcome::Success);
    }
    for model in models {
        writeln!(out, "{}", text_line(model, price(model).as_ref()))?;
    }
    write_local_servers(&local, out)?;
    writeln!(out, "{}", keys_line(settings.llm.api_key.is_some())?)?;
    Ok(Outcome::Success)
}

/// The built-in local servers (no key) whose `provider/` holds every word of `search`.
fn local_servers(search: &[String]) -> Vec<&'static ctxkit_llm::ProviderInfo> {
    ctxkit_llm::PROVIDERS
        .iter()
        .filter(|provider| provider.key_env.is_none())
        .filter(|provider| {
            let name = format!("{}/", provider.name);
            search
                .iter()
                .all(|word| name.contains(word.to_lowercase().as_str()))
        })
        .collect()
}

/// The local servers, each with its address: they take any model id the server runs, so the
/// model table holds none of theirs.
fn write_local_servers(servers: &[&ctxkit_llm::ProviderInfo], out: &mut dyn Write) -> Result<()> {
    let Some(first) = servers.first() else {
        return Ok(());
    };
    writeln!(
        out,
        "Local servers, no key needed, any model id the server runs (`{}/MODEL`; \
         `llm.baseUrl` for another address):",
        first.name
    )?;
    for server in servers {
        writeln!(out, "  {:<10} {}", server.name, server.base_url)?;
    }
    Ok(())
}

/// The built-in providers `name` (unknown) most likely meant: the same letters and digits
/// (`lm-studio`, `llamacpp`), or a letter or two off (`anthropc`).
pub(crate) fn providers_meant(name: &str) -> Vec<&'static str> {
    let letters = |text: &str| -> String {
        text.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_lowercase()
    };
    let wanted = letters(name);
    let names = ctxkit_llm::PROVIDERS
        .iter()
        .map(|provider| provider.name)
        .chain(["gemini"]);
    let mut close: Vec<(usize, &'static str)> = names
        .map(|known| (strsim::damerau_levenshtein(&wanted, &letters(known)), known))
        .filter(|(distance, _)| *distance <= 2 && *distance < wanted.len() / 2 + 1)
        .collect();
    close.sort();
    let best = close.first().map(|(distance, _)| *distance);
    close
        .into_iter()
        .filter(|(distance, _)| Some(*distance) == best)
        .map(|(_, known)| known)
        .collect()
}

/// Which built-in providers have a key now, and where it comes from (never its value); and
/// whether the settings give `llm.apiKey` (the key of `llm.baseUrl`'s endpoint).
fn keys_line(settings_key: bool) -> Result<String> {
    let saved_keys = super::summary_setup::saved_keys()?;
    let not_used: Vec<String> = saved_keys
        .skipped
        .iter()
        .map(|(provider, why)| format!(" The saved entry of `{provider}` is not used: {why}."))
        .collect();
    let saved = saved_keys.keys;
    // Who saved a key is not known (`ctxkit login`, Pi's `/login`, a copied file): where it is.
    let saved_in = super::settings::process_credentials_path().map_or_else(
        || "saved in `<home>/auth.json`".to_owned(),
        |path| format!("saved in `{}`", path.display()),
    );
    let mut found: Vec<String> = super::login::keyed_providers()
        .into_iter()
        .filter_map(|(provider, _)| {
            Some(match super::summary_setup::key_source(provider, &saved)? {
                KeySource::Saved => format!("{provider} ({saved_in})"),
                KeySource::Variable(variable) => format!("{provider} (`{variable}`)"),
            })
        })
        .collect();
    if settings_key {
        found.push("the settings' `llm.apiKey`".to_owned());
    }
    let line = if found.is_empty() {
        "No provider's key is set: `ctxkit login PROVIDER` saves one (or set its variable); a local \
         server needs none."
            .to_owned()
    } else {
        format!(
            "Keys: {}; another provider needs `ctxkit login PROVIDER` or its variable (a \
             local server none).",
            found.join(", ")
        )
    };
    Ok(line + &not_used.concat())
}

fn matches(model: &ModelLimits, words: &[String]) -> bool {
    let name = format!("{}/{}", model.provider, model.id).to_lowercase();
    words
        .iter()
        .all(|word| name.contains(word.to_lowercase().as_str()))
}

/// A local server's record: any model id, so no id, window or limit of its own.
fn local_record(server: &ctxkit_llm::ProviderInfo) -> Value {
    json!({"provider": server.name, "id": null, "contextWindow": null, "maxOutput": null,
        "reasoning": null, "local": true, "baseUrl": server.base_url})
}

fn json_record(model: &ModelLimits, prices: Option<&ModelPrices>) -> Value {
    let mut record = json!({"provider": model.provider, "id": model.id,
        "contextWindow": model.context_window, "maxOutput": model.max_output,
        "reasoning": model.reasoning});
    if let Some(prices) = prices {
        let tiers: Vec<Value> = prices
            .tiers
            .iter()
            .map(|tier| {
                json!({"inputTokensAbove": tier.input_tokens_above, "input": tier.input,
                    "output": tier.output, "cacheRead": tier.cache_read, "cacheWrite": tier.cache_write})
            })
            .collect();
        record["cost"] = json!({"input": prices.input, "output": prices.output,
            "cacheRead": prices.cache_read, "cacheWrite": prices.cache_write, "tiers": tiers});
    }
    record
}

/// `provider/id  window context  limit output  [reasoning]  $in/$out per million tokens`.
/// `model`'s prices: the user's `llm.models[].cost`, else the built-in table's.
pub(super) fn price_of(
    costs: &[ctxkit_llm::ModelCost],
    model: &ModelLimits,
) -> Option<ModelPrices> {
    costs
        .iter()
        .find(|cost| cost.provider == model.provider && cost.id == model.id)
        .and_then(|cost| cost.prices.clone())
        .or_else(|| ctxkit_models::model_prices(&model.provider, &model.id))
}

/// One model's line, as `ctxkit models` and the chat's `/model` picker show it.
pub(super) fn text_line(model: &ModelLimits, prices: Option<&ModelPrices>) -> String {
    let price = match prices {
        None => "price unknown".to_owned(),
        Some(prices) if prices.is_free() => "free".to_owned(),
        Some(prices) => {
            let longer = if prices.tiers.is_empty() {
                ""
            } else {
                " (more for long prompts)"
            };
            format!(
                "${} in / ${} out per M{longer}",
                dollars(prices.input),
                dollars(prices.output)
            )
        }
    };
    format!(
        "{:<48} {:>9} context {:>7} output  {:<9}  {price}",
        format!("{}/{}", model.provider, model.id),
        model.context_window,
        model.max_output,
        if model.reasoning { "reasoning" } else { "" },
    )
}

/// A price without trailing zeros: `5`, `0.25`, `1.2345`.
fn dollars(price: f64) -> String {
    let text = format!("{price:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, id: &str) -> ModelLimits {
        ModelLimits {
            provider: provider.into(),
            id: id.into(),
            context_window: 200_000,
            max_output: 64_000,
            reasoning: true,
            images: true,
            adaptive_thinking: false,
            xhigh_effort: None,
            chat_compat: Default::default(),
        }
    }

    #[test]
    fn a_provider_misspelt_is_matched_to_the_one_meant() {
        for (typed, meant) in [
            ("lm-studio", vec!["lmstudio"]),
            ("LMStudio", vec!["lmstudio"]),
            ("llamacpp", vec!["llama.cpp"]),
            ("llama-cpp", vec!["llama.cpp"]),
            ("olama", vec!["ollama"]),
            ("vllm ", vec!["vllm"]),
            ("anthropc", vec!["anthropic"]),
            ("myco", vec![]),
            ("x", vec![]),
        ] {
            assert_eq!(providers_meant(typed), meant, "{typed}");
        }
    }

    #[test]
    fn the_local_servers_are_found_by_name() {
        let names = |words: &[&str]| -> Vec<&str> {
            let words: Vec<String> = words.iter().map(|word| (*word).to_owned()).collect();
            local_servers(&words)
                .iter()
                .map(|server| server.name)
                .collect()
        };
        assert_eq!(names(&[]), ["ollama", "vllm", "llama.cpp", "lmstudio"]);
        assert_eq!(names(&["Ollama"]), ["ollama"]);
        assert_eq!(names(&["ollama/"]), ["ollama"]);
        assert!(names(&["claude"]).is_empty());
    }

    #[test]
    fn every_word_must_be_in_the_name_in_any_case() {
        let opus = model("anthropic", "claude-opus-4-8");
        let words = |text: &str| -> Vec<String> { text.split(' ').map(str::to_owned).collect() };
        assert!(matches(&opus, &words("anthropic/claude")));
        assert!(matches(&opus, &words("opus 4-8")));
        assert!(matches(&opus, &[]));
        assert!(!matches(&opus, &words("opus sonnet")));
        assert!(matches(&opus, &words("OPUS")));
    }

    #[test]
    fn a_line_says_the_price_or_that_it_is_unknown_or_free() {
        let opus = model("anthropic", "claude-opus-4-8");
        let prices = ctxkit_models::model_prices("anthropic", "claude-opus-4-8");
        assert!(text_line(&opus, prices.as_ref()).ends_with("$5 in / $25 out per M"));
        assert!(text_line(&opus, None).ends_with("price unknown"));
        assert!(text_line(&opus, Some(&ModelPrices::default())).ends_with("free"));
        let tiered = ctxkit_models::model_prices("google", "gemini-2.5-pro");
        assert!(
            text_line(&opus, tiered.as_ref())
                .ends_with("$1.25 in / $10 out per M (more for long prompts)")
        );
    }
}
