//! Context-overflow detection: does a provider's error text, or a reply's usage, say that the
//! request did not fit the model's context window? A declarative table of every provider's wording,
//! the exclusions that look alike (rate limits, throttling) and the silent-overflow rules.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::sync::LazyLock;

use ctxkit_protocol::{AssistantMessage, Usage};
use regex::{Regex, RegexBuilder};

/// One provider wording that means "the prompt is larger than the context window".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverflowPattern {
    /// Who writes this text (`anthropic`, `bedrock`, `openai`, …, or `generic`).
    pub provider: &'static str,
    /// A case-insensitive regular expression, searched anywhere unless anchored.
    pub pattern: &'static str,
}

/// Every known overflow wording. Matching is case-insensitive.
pub const OVERFLOW_PATTERNS: &[OverflowPattern] = &[
    // Before Anthropic's wording, which matches it too.
    OverflowPattern {
        provider: "ollama",
        pattern: r"prompt too long; exceeded (?:max )?context length",
    },
    OverflowPattern {
        provider: "anthropic",
        pattern: r"prompt (?:is )?too long",
    },
    OverflowPattern {
        provider: "zai",
        pattern: r"prompt exceeds max length",
    },
    // Anthropic's refusal of a request whose input plus `max_tokens` passes the window.
    OverflowPattern {
        provider: "anthropic",
        pattern: r"input length and `?max_tokens`? exceed context limit",
    },
    OverflowPattern {
        provider: "anthropic",
        pattern: r"request_too_large",
    },
    OverflowPattern {
        provider: "bedrock",
        pattern: r"input is too long for requested model",
    },
    OverflowPattern {
        provider: "openai",
        pattern: r"exceeds the context window",
    },
    OverflowPattern {
        provider: "gemini",
        pattern: r"input token count.*exceeds the maximum",
    },
    OverflowPattern {
        provider: "xai",
        pattern: r"maximum prompt length is \d+",
    },
    OverflowPattern {
        provider: "groq",
        pattern: r"reduce the length of the messages",
    },
    OverflowPattern {
        provider: "openrouter",
        pattern: r"maximum context length is \d+ tokens",
    },
    OverflowPattern {
        provider: "litellm",
        pattern: r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    },
    OverflowPattern {
        provider: "litellm",
        pattern: r"context window exceeded",
    },
    OverflowPattern {
        provider: "vllm",
        pattern: r"context length is only [\d,]+ tokens",
    },
    OverflowPattern {
        provider: "llama-cpp-python",
        pattern: r"requested tokens \(\d+\) exceed context window of \d+",
    },
    OverflowPattern {
        provider: "poolside",
        pattern: r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    },
    OverflowPattern {
        provider: "together",
        pattern: r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
    },
    OverflowPattern {
        provider: "copilot",
        pattern: r"exceeds the limit of \d+",
    },
    OverflowPattern {
        provider: "llama.cpp",
        pattern: r"exceeds the available context size",
    },
    OverflowPattern {
        provider: "lmstudio",
        pattern: r"greater than the context length",
    },
    // LM Studio: `Trying to keep the first 5000 tokens when context the overflows. However, the
    // model is loaded with context length of only 4096 tokens, which is not enough.`
    OverflowPattern {
        provider: "lmstudio",
        pattern: r"trying to keep the first [\d,]+ tokens when context (?:the )?overflows",
    },
    // LM Studio's llama.cpp engine: `Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)`.
    OverflowPattern {
        provider: "lmstudio",
        pattern: r"cannot truncate prompt with n_keep \(\d+\)\s*>=\s*n_ctx \(\d+\)",
    },
    OverflowPattern {
        provider: "minimax",
        pattern: r"context window exceeds limit",
    },
    OverflowPattern {
        provider: "kimi",
        pattern: r"exceeded model token limit",
    },
    OverflowPattern {
        provider: "mistral",
        pattern: r"too large for model with \d+ maximum context length",
    },
    OverflowPattern {
        provider: "zai",
        pattern: r"model_context_window_exceeded",
    },
    OverflowPattern {
        provider: "ds4",
        pattern: r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    },
    OverflowPattern {
        provider: "dashscope",
        pattern: r"range of input length should be",
    },
    OverflowPattern {
        provider: "generic",
        pattern: r"context[_ ]length[_ ]exceeded",
    },
    OverflowPattern {
        provider: "generic",
        pattern: r"too many tokens",
    },
    OverflowPattern {
        provider: "generic",
        pattern: r"token limit exceeded",
    },
    // Pi 1.6: HTTP 413 is a request-size overflow from any provider. Only a text that starts with
    // the status counts (`<provider> API error (413):`, or `413` then a space, a colon or the end),
    // not a 413 mentioned inside a body.
    OverflowPattern {
        provider: "http",
        pattern: r"^(?:[A-Za-z0-9_ -]+ API error \(413\):|413(?:\s|:|$))",
    },
];

/// Wordings that mean an overflow only from the provider named (Pi 0.87: Cerebras answers an
/// oversized prompt with an empty 400; from anyone else that is just a bad request. An empty 413
/// counts from anyone since Pi 1.6).
pub const PROVIDER_OVERFLOW_PATTERNS: &[OverflowPattern] = &[OverflowPattern {
    provider: "cerebras",
    pattern: r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
}];

/// Texts that look like an overflow but are not one: rate limits and throttling. An excluded
/// text is never an overflow, whatever else it says.
///
/// The reference only recognises its own `Throttling error:` prefix; ctxkit also excludes any
/// text naming throttling, so a raw AWS `ThrottlingException: Too many tokens…` is a rate limit.
pub const OVERFLOW_EXCLUSIONS: &[&str] = &[
    r"^throttling error:",
    r"^service unavailable:",
    r"rate limit",
    r"too many requests",
    r"throttl",
];

/// The reasons a reply can stop, as recorded in session files (`stopReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The model finished (`stop`).
    Stop,
    /// The output token limit was reached (`length`).
    Length,
    /// The model called a tool (`toolUse`).
    ToolUse,
    /// The request failed (`error`).
    Error,
    /// The request was cancelled (`aborted`).
    Aborted,
}

impl StopReason {
    /// Reads the session-file spelling; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "stop" => Some(Self::Stop),
            "length" => Some(Self::Length),
            "toolUse" => Some(Self::ToolUse),
            "error" => Some(Self::Error),
            "aborted" => Some(Self::Aborted),
            _ => None,
        }
    }

    /// The session-file spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
            Self::Error => "error",
            Self::Aborted => "aborted",
        }
    }
}

/// What an error text says about overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorTextClass {
    /// An overflow, in the wording of the given pattern.
    Overflow(&'static OverflowPattern),
    /// A rate limit or throttling text (never an overflow).
    Excluded,
    /// Nothing known.
    Unrelated,
}

struct Compiled {
    patterns: Vec<(Regex, &'static OverflowPattern)>,
    provider_patterns: Vec<(Regex, &'static OverflowPattern)>,
    exclusions: Vec<Regex>,
}

fn case_insensitive(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .ok()
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| Compiled {
    // The patterns are constants checked by a test, so `filter_map` drops nothing in practice.
    patterns: OVERFLOW_PATTERNS
        .iter()
        .filter_map(|pattern| case_insensitive(pattern.pattern).map(|regex| (regex, pattern)))
        .collect(),
    provider_patterns: PROVIDER_OVERFLOW_PATTERNS
        .iter()
        .filter_map(|pattern| case_insensitive(pattern.pattern).map(|regex| (regex, pattern)))
        .collect(),
    exclusions: OVERFLOW_EXCLUSIONS
        .iter()
        .filter_map(|pattern| case_insensitive(pattern))
        .collect(),
});

/// Classifies a provider's error text, with the provider-specific wordings of no provider.
pub fn classify_error_text(text: &str) -> ErrorTextClass {
    classify_error_text_from(text, None)
}

/// Classifies an error text written by `provider` (its name as configured, e.g. `cerebras`).
pub fn classify_error_text_from(text: &str, provider: Option<&str>) -> ErrorTextClass {
    let compiled = &*COMPILED;
    if compiled.exclusions.iter().any(|regex| regex.is_match(text)) {
        return ErrorTextClass::Excluded;
    }
    let own = compiled
        .provider_patterns
        .iter()
        .filter(|(_, pattern)| Some(pattern.provider) == provider);
    compiled
        .patterns
        .iter()
        .chain(own)
        .find(|(regex, _)| regex.is_match(text))
        .map_or(ErrorTextClass::Unrelated, |(_, pattern)| {
            ErrorTextClass::Overflow(pattern)
        })
}

/// `true` when a provider's error text says the prompt did not fit the context window.
pub fn is_overflow_error_text(text: &str) -> bool {
    is_overflow_error_text_from(text, None)
}

/// [`is_overflow_error_text`] for a text written by `provider`.
pub fn is_overflow_error_text_from(text: &str, provider: Option<&str>) -> bool {
    match classify_error_text_from(text, provider) {
        ErrorTextClass::Overflow(_) => true,
        ErrorTextClass::Excluded | ErrorTextClass::Unrelated => false,
    }
}

/// `true` when a reply that ended with `stop_reason` and `usage` shows that the context window
/// overflowed: an error whose text is an overflow (for `provider`), a successful reply whose input exceeds the
/// window (providers that truncate silently), or a `length` stop with no output that filled the
/// window. `context_window` of `None` or 0 disables the usage rules.
pub fn is_reply_overflow(
    stop_reason: StopReason,
    error_message: Option<&str>,
    usage: Option<&Usage>,
    context_window: Option<u64>,
    provider: Option<&str>,
) -> bool {
    let window = context_window.filter(|window| *window > 0);
    match stop_reason {
        StopReason::Error => error_message
            .is_some_and(|text| !text.is_empty() && is_overflow_error_text_from(text, provider)),
        StopReason::Stop => match (window, usage) {
            (Some(window), Some(usage)) if error_message.is_none() => {
                usage.input.saturating_add(usage.cache_read) > window
            }
            _ => false,
        },
        StopReason::Length => match (window, usage) {
            // input + cacheRead ≥ 0.99 × window, in integers: 100 × used ≥ 99 × window.
            (Some(window), Some(usage)) => {
                usage.output == 0
                    && (u128::from(usage.input) + u128::from(usage.cache_read)) * 100
                        >= u128::from(window) * 99
            }
            _ => false,
        },
        StopReason::ToolUse | StopReason::Aborted => false,
    }
}

/// `true` when an assistant message from a session shows a context overflow (see
/// [`is_reply_overflow`]). A message with an unknown or missing stop reason is not an overflow.
pub fn is_context_overflow(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    let Some(stop_reason) = message.stop_reason.as_deref().and_then(StopReason::parse) else {
        return false;
    };
    is_reply_overflow(
        stop_reason,
        message.error_message.as_deref(),
        message.usage.as_ref(),
        context_window,
        message.provider.as_deref(),
    )
}

mod limits;

pub use limits::{
    StatedRoom, output_floor, output_margin, output_minimum, output_room, refitted_output,
    stated_count, stated_limit, stated_room,
};

#[cfg(test)]
mod tests;
