//! Which model bills a real session, and at which prices.

use ctxkit_protocol::{AgentMessage, AssistantMessage, ContentBlock, JsonObject};

use super::*;
use crate::cache_rule::CacheRule;

fn reply(api: Option<&str>, provider: Option<&str>, model: Option<&str>) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![ContentBlock::text("done")],
        api: api.map(str::to_owned),
        provider: provider.map(str::to_owned),
        model: model.map(str::to_owned),
        usage: None,
        stop_reason: Some("stop".to_owned()),
        error_message: None,
        timestamp: None,
        extra: JsonObject::new(),
    })
}

/// A Codex rollout's reply as `ctxkit import` writes it.
fn codex(model: &str) -> AgentMessage {
    reply(Some("openai-responses"), Some("openai"), Some(model))
}

#[test]
fn the_model_most_replies_name_bills_at_its_list_prices_under_its_providers_cache() {
    let messages = [
        reply(
            Some("anthropic-messages"),
            Some("anthropic"),
            Some("claude-sonnet-4-5"),
        ),
        codex("gpt-5.4"),
        codex("gpt-5.4"),
        reply(None, None, None),
    ];
    let billing = session_billing(&messages, Provider::Anthropic5m).unwrap();
    assert_eq!(billing.provider, Provider::Openai);
    assert_eq!(
        billing.model,
        BilledModel {
            provider: "openai".into(),
            model: Some("gpt-5.4".into()),
            replies: 2,
            of_replies: 3,
            priced_as: Some("openai/gpt-5.4".into()),
        }
    );
    let prices = &billing.prices;
    assert_eq!(prices.input_per_mtok, 2.5);
    assert_eq!(prices.output_per_mtok, 15.0);
    assert_eq!(prices.cache_read_per_mtok, 0.25);
    // OpenAI charges no write fee: a prefix written is billed as input.
    assert_eq!(prices.cache_write_per_mtok, 2.5);
    assert!(matches!(prices.cache_rule, CacheRule::Prefix { .. }));
    // Its request-wide tier (long prompts) is the long-context rate.
    assert_eq!(prices.long_context_above, Some(272_000));
    assert_eq!(prices.long_context_input_factor, 2.0);
    assert!(
        prices
            .model
            .starts_with("openai/gpt-5.4, automatic caching")
    );
}

#[test]
fn an_anthropic_model_pays_its_cache_write_price_at_breakpoints() {
    let messages = [reply(
        Some("anthropic-messages"),
        Some("anthropic"),
        Some("claude-opus-4-5"),
    )];
    let billing = session_billing(&messages, Provider::Openai).unwrap();
    assert_eq!(billing.provider, Provider::Anthropic5m);
    assert_eq!(billing.prices.input_per_mtok, 5.0);
    assert_eq!(billing.prices.cache_write_per_mtok, 6.25);
    assert_eq!(billing.prices.cache_read_per_mtok, 0.5);
    assert!(matches!(
        billing.prices.cache_rule,
        CacheRule::Breakpoints { .. }
    ));
}

#[test]
fn a_gateway_serving_a_known_model_is_priced_as_the_model() {
    // OpenClaw's own provider names in front of OpenAI's model; a model spelled as only a
    // gateway row of the table spells it.
    let gateway = [reply(
        Some("openai-responses"),
        Some("gmn"),
        Some("gpt-5.4"),
    )];
    let billing = session_billing(&gateway, Provider::Anthropic5m).unwrap();
    assert_eq!(billing.model.priced_as.as_deref(), Some("openai/gpt-5.4"));
    assert_eq!(billing.provider, Provider::Openai);
    let dotted = [reply(
        Some("anthropic-messages"),
        Some("my-gateway"),
        Some("claude-opus-4.8"),
    )];
    let billing = session_billing(&dotted, Provider::Openai).unwrap();
    assert_eq!(
        billing.model.priced_as.as_deref(),
        Some("openrouter/anthropic/claude-opus-4.8")
    );
    assert_eq!(billing.provider, Provider::Anthropic5m);
    assert_eq!(billing.prices.input_per_mtok, 5.0);
}

#[test]
fn an_unknown_model_is_billed_by_its_providers_table_and_says_so() {
    let messages = [reply(
        Some("anthropic-messages"),
        Some("minimax-portal"),
        Some("no-such-model-7"),
    )];
    let billing = session_billing(&messages, Provider::Openai).unwrap();
    assert_eq!(billing.provider, Provider::Anthropic5m);
    assert_eq!(billing.model.priced_as, None);
    assert_eq!(billing.prices, Provider::Anthropic5m.prices());
    // Neither the api nor the provider tells the cache: the fallback's.
    let unknown = [reply(Some("custom-api"), Some("local"), Some("llama"))];
    let billing = session_billing(&unknown, Provider::Gemini).unwrap();
    assert_eq!(billing.provider, Provider::Gemini);
}

#[test]
fn a_session_whose_replies_name_no_provider_has_no_billing_of_its_own() {
    let messages = [reply(None, None, None), reply(None, None, Some("gpt-5"))];
    assert!(session_billing(&messages, Provider::Anthropic5m).is_none());
}

#[test]
fn a_provider_named_without_a_model_bills_at_its_cache_rules_table() {
    // A 2025 Codex rollout: every reply says `openai-responses` and `openai`, none its model.
    let unnamed = || reply(Some("openai-responses"), Some("openai"), None);
    let messages = [unnamed(), unnamed(), unnamed()];
    let billing = session_billing(&messages, Provider::Anthropic5m).unwrap();
    assert_eq!(billing.provider, Provider::Openai);
    assert_eq!(billing.prices, Provider::Openai.prices());
    assert_eq!(
        (
            billing.model.model,
            billing.model.replies,
            billing.model.priced_as
        ),
        (None, 3, None)
    );
    // One reply naming its model wins over many naming the provider alone.
    let mixed = [unnamed(), unnamed(), codex("gpt-5.4")];
    let billing = session_billing(&mixed, Provider::Anthropic5m).unwrap();
    assert_eq!(billing.model.model.as_deref(), Some("gpt-5.4"));
    assert_eq!((billing.model.replies, billing.model.of_replies), (1, 3));
}
