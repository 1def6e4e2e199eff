//! Billing a real session as it was billed: the model most of its replies name, at that model's
//! list prices from ctxkit's model table, under its provider's prompt-cache rule.

use std::borrow::Cow;
use std::collections::HashMap;

use ctxkit_models::ModelPrices;
use ctxkit_protocol::AgentMessage;
use serde::Serialize;

use crate::cost::{PriceTable, Provider};

/// Where a simulation's prices come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Billing {
    /// Every session at [`SimulateOptions::provider`](crate::SimulateOptions)'s table.
    #[default]
    Provider,
    /// Each real session at the model most of its replies name, under that model's provider's
    /// cache rule (a provider named without a model: its table); a session naming no provider, and
    /// the generated one, at the provider's table.
    SessionModel,
}

/// The model a real session was billed as, and how sure that is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BilledModel {
    /// As the replies name it (`openai`, `anthropic`, or a gateway's own name).
    pub provider: String,
    /// `None` when no reply names its model (some 2025 Codex rollouts): the provider's cache rule
    /// and its table bill it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Replies naming this model (or this provider, when none names a model), of the replies
    /// naming any.
    pub replies: usize,
    pub of_replies: usize,
    /// The table row its prices came from (`provider/id`); `None` when the table does not know the
    /// model and the cache rule's own table prices it.
    pub priced_as: Option<String>,
}

/// A session's billing: the cache rule's provider, the prices, and the model they came from.
pub(crate) struct SessionBilling {
    pub provider: Provider,
    pub prices: PriceTable,
    pub model: BilledModel,
}

/// The model most of `messages`' replies name, priced from the model table (a provider named
/// without a model: its cache rule's table); `None` when no reply names a provider.
pub(crate) fn session_billing(
    messages: &[AgentMessage],
    fallback: Provider,
) -> Option<SessionBilling> {
    let (provider, model, api, replies, of_replies) = most_named_model(messages)?;
    let family = cache_family(api.as_deref(), &provider).unwrap_or(fallback);
    let row = model
        .as_deref()
        .and_then(|model| table_row(&provider, model));
    let prices = match &row {
        Some((name, prices)) => priced_table(family, name, prices),
        None => family.prices(),
    };
    Some(SessionBilling {
        provider: family,
        prices,
        model: BilledModel {
            provider,
            model,
            replies,
            of_replies,
            priced_as: row.map(|(name, _)| name),
        },
    })
}

type Named = (String, Option<String>, Option<String>, usize, usize);

/// The (provider, model, api) most replies name, with its count and the count of replies naming
/// any; a model named by any reply wins over a provider named alone, and ties go to the one named
/// first.
fn most_named_model(messages: &[AgentMessage]) -> Option<Named> {
    // (provider, model) → (replies naming it, the first one's index, its api)
    type Counts<'a> = HashMap<(&'a str, Option<&'a str>), (usize, usize, Option<&'a str>)>;
    let mut counts = Counts::new();
    let mut named = 0;
    for (index, message) in messages.iter().enumerate() {
        let AgentMessage::Assistant(reply) = message else {
            continue;
        };
        let Some(provider) = reply.provider.as_deref() else {
            continue;
        };
        named += 1;
        let count = counts.entry((provider, reply.model.as_deref())).or_insert((
            0,
            index,
            reply.api.as_deref(),
        ));
        count.0 += 1;
    }
    let ((provider, model), (replies, _, api)) =
        counts
            .into_iter()
            .max_by_key(|((_, model), (replies, first, _))| {
                (model.is_some(), *replies, std::cmp::Reverse(*first))
            })?;
    Some((
        provider.to_owned(),
        model.map(str::to_owned),
        api.map(str::to_owned),
        replies,
        named,
    ))
}

/// Whose cache rule bills a reply of `api` (Pi's api names), else of `provider`.
fn cache_family(api: Option<&str>, provider: &str) -> Option<Provider> {
    let by_api = match api? {
        "anthropic-messages" | "bedrock-converse-stream" => Some(Provider::Anthropic5m),
        api if api.starts_with("openai") || api.starts_with("azure-openai") => {
            Some(Provider::Openai)
        }
        api if api.starts_with("google") => Some(Provider::Gemini),
        _ => None,
    };
    by_api.or(match provider {
        "anthropic" => Some(Provider::Anthropic5m),
        "openai" | "openai-codex" => Some(Provider::Openai),
        "google" | "gemini" => Some(Provider::Gemini),
        _ => None,
    })
}

/// The priced table row for `model` ([`ctxkit_models::model_row`]) and its name.
fn table_row(provider: &str, model: &str) -> Option<(String, ModelPrices)> {
    let row = ctxkit_models::model_row(provider, model)?;
    let prices = row.prices().filter(|prices| prices.input > 0.0)?;
    Some((format!("{}/{}", row.provider, row.id), prices))
}

/// `family`'s table (its cache rule, lifetime and shortest cached prefix) at `prices`: a cache
/// write costs the table's write price where the provider charges one (Anthropic), else input; a
/// read the table's, or a tenth of input when it names none; the first tier is the long-context
/// rate.
fn priced_table(family: Provider, name: &str, prices: &ModelPrices) -> PriceTable {
    let base = family.prices();
    let cache_write = match family {
        Provider::Anthropic5m | Provider::Anthropic1h if prices.cache_write > 0.0 => {
            prices.cache_write
        }
        Provider::Anthropic5m | Provider::Anthropic1h => {
            prices.input * base.cache_write_per_mtok / base.input_per_mtok
        }
        Provider::Openai | Provider::Gemini => prices.input,
    };
    let cache_read = if prices.cache_read > 0.0 {
        prices.cache_read
    } else {
        prices.input / 10.0
    };
    let tier = prices
        .tiers
        .iter()
        .min_by_key(|tier| tier.input_tokens_above);
    PriceTable {
        model: Cow::Owned(format!("{name}, {}", family.cache_name())),
        source: Cow::Borrowed(
            "ctxkit's model table (crates/ctxkit-models, from the catalog Pi 1.6.0 ships): the \
             session's model's list prices",
        ),
        input_per_mtok: prices.input,
        cache_write_per_mtok: cache_write,
        cache_read_per_mtok: cache_read,
        output_per_mtok: prices.output,
        long_context_above: tier.map(|tier| tier.input_tokens_above),
        long_context_input_factor: tier.map_or(1.0, |tier| tier.input / prices.input),
        long_context_output_factor: tier
            .filter(|_| prices.output > 0.0)
            .map_or(1.0, |tier| tier.output / prices.output),
        ..base
    }
}

#[cfg(test)]
mod tests;
