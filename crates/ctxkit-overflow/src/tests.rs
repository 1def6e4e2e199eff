//! The reference's verified truth table (window 100000) as data, plus ctxkit's throttling fix.

use super::*;

/// (error text, expected overflow, provider of the matching pattern when it is one).
const ERROR_TEXTS: &[(&str, bool, Option<&str>)] = &[
    (
        "prompt is too long: 213462 tokens > 200000 maximum",
        true,
        Some("anthropic"),
    ),
    (
        r#"413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
        true,
        Some("anthropic"),
    ),
    (
        "Input is too long for requested model.",
        true,
        Some("bedrock"),
    ),
    (
        "Your input exceeds the context window of this model",
        true,
        Some("openai"),
    ),
    (
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
        true,
        Some("gemini"),
    ),
    (
        "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
        true,
        Some("xai"),
    ),
    (
        "Please reduce the length of the messages or completion",
        true,
        Some("groq"),
    ),
    (
        "This endpoint's maximum context length is 128000 tokens. However, you requested about 200000 tokens",
        true,
        Some("openrouter"),
    ),
    (
        "prompt token count of 130000 exceeds the limit of 128000",
        true,
        Some("copilot"),
    ),
    (
        "the request exceeds the available context size, try increasing it",
        true,
        Some("llama.cpp"),
    ),
    (
        "tokens to keep from the initial prompt is greater than the context length",
        true,
        Some("lmstudio"),
    ),
    (
        r#"{"error":"The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input."}"#,
        true,
        Some("lmstudio"),
    ),
    (
        r#"400 {"error":"Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#,
        true,
        Some("lmstudio"),
    ),
    (
        "Trying to keep the first 6547 tokens when context overflows. However, the model is loaded with a context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input. Error Data: n/a, Additional Data: n/a.",
        true,
        Some("lmstudio"),
    ),
    (
        r#"400 {"error":"Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)"}"#,
        true,
        Some("lmstudio"),
    ),
    (
        "invalid params, context window exceeds limit",
        true,
        Some("minimax"),
    ),
    (
        "Your request exceeded model token limit: 262144 (requested: 300000)",
        true,
        Some("kimi"),
    ),
    (
        "Prompt contains 300000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
        true,
        Some("mistral"),
    ),
    ("model_context_window_exceeded", true, Some("zai")),
    ("context_length_exceeded", true, Some("generic")),
    ("context length exceeded", true, Some("generic")),
    (
        "prompt too long; exceeded max context length by 1234 tokens",
        true,
        Some("ollama"),
    ),
    (
        "prompt too long; exceeded context length by 1234 tokens",
        true,
        Some("ollama"),
    ),
    ("Too many tokens in request", true, Some("generic")),
    ("token limit exceeded", true, Some("generic")),
    ("PROMPT IS TOO LONG", true, Some("anthropic")),
    ("Prompt too long", true, Some("anthropic")),
    (
        "Input length 300000 exceeds the model's maximum context length of 262,144 tokens",
        true,
        Some("litellm"),
    ),
    (
        "This request exceeds the maximum context length (131072)",
        true,
        Some("litellm"),
    ),
    (
        "Input length 300000 exceeds the maximum allowed input length of 256000 tokens.",
        true,
        Some("poolside"),
    ),
    (
        "The input (300000 tokens) is longer than the model's context length (131072 tokens).",
        true,
        Some("together"),
    ),
    (
        "Prompt has 300,000 tokens, but the configured context size is 131,072 tokens",
        true,
        Some("ds4"),
    ),
    (
        "Range of input length should be [1, 129024]",
        true,
        Some("dashscope"),
    ),
    // Pi 0.87: a body-less 400 is an overflow only from Cerebras (see below).
    ("400 status code (no body)", false, None),
    // Pi 1.6: any HTTP 413, from any provider, when the text starts with the status.
    ("413 (no body)", true, Some("http")),
    ("413", true, Some("http")),
    ("413: Payload Too Large", true, Some("http")),
    (
        r#"github-copilot API error (413): {"message":"failed to parse request","code":""}"#,
        true,
        Some("http"),
    ),
    // …but not a 413 inside a body, nor a number that merely starts with 413.
    (
        r#"400 {"detail":"upstream said 413: too big"}"#,
        false,
        None,
    ),
    ("4130 items rejected", false, None),
    ("Error: 413 Payload Too Large", false, None),
    (
        r#"{"code":"1261","message":"Prompt exceeds max length"}"#,
        true,
        Some("zai"),
    ),
    (
        "litellm.ContextWindowExceededError: Context Window Exceeded for model gpt-4",
        true,
        Some("litellm"),
    ),
    (
        "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again",
        true,
        Some("anthropic"),
    ),
    (
        "You passed 202753 input tokens and requested 0 output tokens. However, the model's context length is only 202752 tokens, resulting in a maximum input length of 202752 tokens.",
        true,
        Some("vllm"),
    ),
    (
        "Requested tokens (2285) exceed context window of 2048",
        true,
        Some("llama-cpp-python"),
    ),
    // Not overflows.
    ("429 status code (no body)", false, None),
    ("Error: 400 status code (no body)", false, None),
    // The reference says true here; ctxkit excludes throttling (see docs/pi-compatibility.md).
    (
        "ThrottlingException: Too many tokens, please wait before trying again.",
        false,
        None,
    ),
    (
        "Throttling error: Too many tokens, please wait before trying again.",
        false,
        None,
    ),
    ("Service unavailable: prompt is too long", false, None),
    ("rate limit exceeded: too many tokens", false, None),
    ("429 Too Many Requests: token limit exceeded", false, None),
    ("529 overloaded_error: Overloaded", false, None),
    ("This model's maximum context length", false, None),
    ("", false, None),
];

#[test]
fn every_pattern_compiles() {
    assert_eq!(COMPILED.patterns.len(), OVERFLOW_PATTERNS.len());
    assert_eq!(
        COMPILED.provider_patterns.len(),
        PROVIDER_OVERFLOW_PATTERNS.len()
    );
    assert_eq!(COMPILED.exclusions.len(), OVERFLOW_EXCLUSIONS.len());
}

#[test]
fn error_texts_match_the_table() {
    for (text, expected, provider) in ERROR_TEXTS {
        assert_eq!(is_overflow_error_text(text), *expected, "{text:?}");
        let matched = match classify_error_text(text) {
            ErrorTextClass::Overflow(pattern) => Some(pattern.provider),
            ErrorTextClass::Excluded | ErrorTextClass::Unrelated => None,
        };
        assert_eq!(matched, *provider, "{text:?}");
    }
}

#[test]
fn every_pattern_has_a_table_row() {
    for pattern in OVERFLOW_PATTERNS {
        let covered = ERROR_TEXTS.iter().any(|(text, expected, _)| {
            *expected
                && matches!(classify_error_text(text), ErrorTextClass::Overflow(p) if p == pattern)
        });
        assert!(covered, "no test row for {}", pattern.pattern);
    }
}

#[test]
fn body_less_400s_are_overflows_from_cerebras_only() {
    for text in ["400 status code (no body)", "400 (no body)"] {
        assert!(
            is_overflow_error_text_from(text, Some("cerebras")),
            "{text}"
        );
        assert!(
            !is_overflow_error_text_from(text, Some("openrouter")),
            "{text}"
        );
        assert!(!is_overflow_error_text(text), "{text}");
    }
    assert!(!is_overflow_error_text_from(
        "429 status code (no body)",
        Some("cerebras")
    ));
    // An empty 413 is an overflow from anyone (Pi 1.6).
    for provider in [None, Some("openrouter"), Some("cerebras")] {
        assert!(is_overflow_error_text_from(
            "413 status code (no body)",
            provider
        ));
    }
    let provider_pattern = &PROVIDER_OVERFLOW_PATTERNS[0];
    assert_eq!(
        classify_error_text_from("400 status code (no body)", Some("cerebras")),
        ErrorTextClass::Overflow(provider_pattern)
    );
}

#[test]
fn throttling_texts_are_excluded() {
    assert_eq!(
        classify_error_text("ThrottlingException: Too many tokens"),
        ErrorTextClass::Excluded
    );
    assert_eq!(
        classify_error_text("Request was throttled"),
        ErrorTextClass::Excluded
    );
}

fn usage(input: u64, cache_read: u64, output: u64) -> Usage {
    Usage {
        input,
        cache_read,
        output,
        ..Usage::default()
    }
}

/// (stop reason, error text, input, cache read, output, window, expected).
#[expect(clippy::type_complexity, reason = "a test table")]
const REPLIES: &[(StopReason, Option<&str>, u64, u64, u64, Option<u64>, bool)] = &[
    (
        StopReason::Error,
        Some("prompt is too long"),
        0,
        0,
        0,
        Some(100_000),
        true,
    ),
    (StopReason::Error, Some(""), 0, 0, 0, Some(100_000), false),
    (StopReason::Error, None, 200_000, 0, 0, Some(100_000), false),
    (
        StopReason::Error,
        Some("rate limit exceeded: too many tokens"),
        200_000,
        0,
        0,
        Some(100_000),
        false,
    ),
    (StopReason::Stop, None, 100_001, 0, 10, Some(100_000), true),
    (
        StopReason::Stop,
        None,
        60_000,
        40_001,
        10,
        Some(100_000),
        true,
    ),
    (StopReason::Stop, None, 100_000, 0, 10, Some(100_000), false),
    (StopReason::Stop, None, 200_000, 0, 10, None, false),
    (StopReason::Stop, None, 200_000, 0, 10, Some(0), false),
    (
        StopReason::Stop,
        Some("prompt is too long"),
        200_000,
        0,
        10,
        Some(100_000),
        false,
    ),
    (
        StopReason::ToolUse,
        None,
        200_000,
        0,
        10,
        Some(100_000),
        false,
    ),
    (StopReason::Length, None, 99_000, 0, 0, Some(100_000), true),
    (
        StopReason::Length,
        None,
        50_000,
        49_000,
        0,
        Some(100_000),
        true,
    ),
    (StopReason::Length, None, 98_999, 0, 0, Some(100_000), false),
    (StopReason::Length, None, 99_000, 0, 1, Some(100_000), false),
    (
        StopReason::Aborted,
        Some("prompt is too long"),
        200_000,
        0,
        0,
        Some(100_000),
        false,
    ),
];

#[test]
fn replies_match_the_table() {
    for (index, (stop, error, input, cache_read, output, window, expected)) in
        REPLIES.iter().enumerate()
    {
        let usage = usage(*input, *cache_read, *output);
        assert_eq!(
            is_reply_overflow(*stop, *error, Some(&usage), *window, None),
            *expected,
            "row {index}"
        );
    }
}

#[test]
fn assistant_messages_are_read_from_session_fields() {
    let message: AssistantMessage = serde_json::from_str(
        r#"{"content":[],"stopReason":"error","errorMessage":"prompt is too long: 5 > 4"}"#,
    )
    .unwrap();
    assert!(is_context_overflow(&message, Some(100_000)));
    let silent: AssistantMessage = serde_json::from_str(
        r#"{"content":[],"stopReason":"stop","usage":{"input":100001,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":100006}}"#,
    )
    .unwrap();
    assert!(is_context_overflow(&silent, Some(100_000)));
    assert!(!is_context_overflow(&silent, None));
    let unknown: AssistantMessage = serde_json::from_str(
        r#"{"content":[],"stopReason":"weird","errorMessage":"prompt is too long"}"#,
    )
    .unwrap();
    assert!(!is_context_overflow(&unknown, Some(100_000)));
}

#[test]
fn stop_reasons_round_trip() {
    for reason in [
        StopReason::Stop,
        StopReason::Length,
        StopReason::ToolUse,
        StopReason::Error,
        StopReason::Aborted,
    ] {
        assert_eq!(StopReason::parse(reason.as_str()), Some(reason));
    }
}
