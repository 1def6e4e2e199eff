//! OpenAI's `prompt_cache_key` on conversation requests, as Pi 1.6.0 sends it: the session's id
//! (at most 64 characters, the API's limit), which keeps a session's requests on the same cache
//! machines so each finds the prefix the one before it wrote. Responses sends it whenever the
//! model caches (`cacheRetention` not `none`); Chat Completions only to OpenAI's own endpoint
//! (`api.openai.com`), since other servers speaking the format may refuse a field they do not
//! know. Pure.

use serde_json::{Value, json};

use crate::CacheRetention;
use crate::chat::ChatRequest;
use crate::config::ProviderConfig;
use crate::models::Api;

/// The most characters a `prompt_cache_key` may have; a longer key is cut to its first 64.
pub(crate) const MAX_KEY_CHARS: usize = 64;

/// Sets `prompt_cache_key` in `body` when `request` has a key and the endpoint takes one.
pub(crate) fn add_key(config: &ProviderConfig, request: &ChatRequest, body: &mut Value) {
    if let Some(key) = key_for(config, request) {
        body["prompt_cache_key"] = json!(key);
    }
}

/// The key `request` goes out with, clamped; `None` when none is sent.
fn key_for<'a>(config: &ProviderConfig, request: &'a ChatRequest) -> Option<&'a str> {
    let key = request.cache.key.as_deref().filter(|key| !key.is_empty())?;
    if config.cache_retention == CacheRetention::None {
        return None;
    }
    let takes_key = match config.api {
        Api::OpenAiResponses => true,
        Api::OpenAiChat => config.base_url.contains("api.openai.com"),
        Api::AnthropicMessages | Api::Gemini => false,
    };
    takes_key.then(|| clamp(key))
}

/// The first [`MAX_KEY_CHARS`] characters of `key`.
fn clamp(key: &str) -> &str {
    match key.char_indices().nth(MAX_KEY_CHARS) {
        Some((end, _)) => &key[..end],
        None => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::test_support::{config, message};
    use crate::wire::{openai_chat_tools, openai_responses_tools};

    fn request(key: Option<&str>) -> ChatRequest {
        ChatRequest {
            system_prompt: "system".into(),
            messages: vec![message(
                serde_json::json!({"role": "user", "content": "hi", "timestamp": 1}),
            )],
            tools: Vec::new(),
            max_tokens: None,
            reasoning: None,
            cache_retention: None,
            cache: ctxkit_summarizer::CacheHints {
                key: key.map(str::to_owned),
                stable_prefix_end: None,
            },
            projected_input_tokens: None,
        }
    }

    fn sent_key(config: &ProviderConfig, request: &ChatRequest) -> Option<Value> {
        let wire = match config.api {
            Api::OpenAiChat => openai_chat_tools::build(config, request),
            Api::OpenAiResponses => openai_responses_tools::build(config, request),
            Api::AnthropicMessages | Api::Gemini => unreachable!("OpenAI formats only"),
        };
        wire.body.get("prompt_cache_key").cloned()
    }

    #[test]
    fn responses_sends_the_session_id_clamped_wherever_it_goes() {
        let mut responses = config("openai/gpt-5-mini");
        assert_eq!(responses.api, Api::OpenAiResponses);
        let session = "019a24d8-5a97-76f1-a05f-02e4fb4ee2e6";
        assert_eq!(
            sent_key(&responses, &request(Some(session))),
            Some(serde_json::json!(session))
        );
        let long = "s".repeat(80);
        assert_eq!(
            sent_key(&responses, &request(Some(&long))),
            Some(serde_json::json!("s".repeat(64)))
        );
        // Any Responses endpoint takes it, as Pi sends it (`promptCacheKeyMode` auto).
        responses.base_url = "http://127.0.0.1:9/v1".into();
        assert!(sent_key(&responses, &request(Some(session))).is_some());
        // No session, or a model set to cache nothing: no key.
        assert_eq!(sent_key(&responses, &request(None)), None);
        responses.cache_retention = CacheRetention::None;
        assert_eq!(sent_key(&responses, &request(Some(session))), None);
    }

    #[test]
    fn chat_completions_sends_it_to_openai_only() {
        let mut openai = config("openai/gpt-5-mini");
        openai.api = Api::OpenAiChat;
        assert!(
            openai.base_url.contains("api.openai.com"),
            "{}",
            openai.base_url
        );
        assert_eq!(
            sent_key(&openai, &request(Some("session-1"))),
            Some(serde_json::json!("session-1"))
        );
        let mut local = config("vllm/qwen3-coder");
        local.api = Api::OpenAiChat;
        assert!(!local.base_url.contains("api.openai.com"));
        assert_eq!(sent_key(&local, &request(Some("session-1"))), None);
    }

    #[test]
    fn a_key_is_cut_to_sixty_four_characters_on_a_character_boundary() {
        assert_eq!(clamp("019a-session"), "019a-session");
        let long: String = "é".repeat(70);
        assert_eq!(clamp(&long).chars().count(), MAX_KEY_CHARS);
        assert_eq!(clamp(&long), "é".repeat(64));
        let exact = "k".repeat(64);
        assert_eq!(clamp(&exact), exact);
    }
}
