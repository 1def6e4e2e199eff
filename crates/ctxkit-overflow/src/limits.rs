//! What a window must leave for the reply, and what limit a provider's overflow error states. The
//! request builder (`ctxkit-llm`) and the engine's compaction threshold (`ctxkit-engine`) both plan
//! with these, so a request that passes the threshold check still gets its output room.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

/// The floor when the model's own output limit is unknown.
const DEFAULT_FLOOR: u64 = 4_096;
/// The largest floor: a model allowed 64k of output still gets its reply inside the default reserve
/// (16,384 − the 4,096 margin), so large windows compact where they always did.
const MAX_FLOOR: u64 = 8_192;
/// The largest safety margin (Pi 1.6's fixed margin).
const MAX_MARGIN: u64 = 4_096;
/// The smallest safety margin.
const MIN_MARGIN: u64 = 256;

/// The least output room a request may go out with: the model's own output limit (4,096 when
/// unknown), at most 8,192 and at most an eighth of the window (0: unknown window, no cap): 1,024
/// in an 8k window, 2,048 in 16k, 4,096 in 32k.
pub fn output_floor(context_window: u64, max_output: u64) -> u64 {
    let own = if max_output > 0 {
        max_output
    } else {
        DEFAULT_FLOOR
    };
    let floor = own.min(MAX_FLOOR);
    if context_window == 0 {
        floor
    } else {
        floor.min(context_window / 8).max(1)
    }
}

/// The safety margin kept between a request's estimated input plus its output room and the
/// window, for the estimate's error: a sixteenth of the window, between 256 and 4,096 tokens (Pi
/// 1.6 keeps 4,096 whatever the window, a quarter of a 16k window). 0 for an unknown window.
pub fn output_margin(context_window: u64) -> u64 {
    if context_window == 0 {
        return 0;
    }
    (context_window / 16).clamp(MIN_MARGIN, MAX_MARGIN)
}

/// The least output room a request whose reply cannot get its `floor` may still go out with, as
/// the last resort after compaction and the shortened view (Pi 1.6 sends any room left, down to
/// `max_tokens: 1`): a quarter of the floor, 2,048 tokens for a 64k window.
pub fn output_minimum(floor: u64) -> u64 {
    (floor / 4).max(1)
}

/// What a request needs after its input: the output floor plus the safety margin. The compaction
/// threshold is never above the window minus this.
pub fn output_room(context_window: u64, max_output: u64) -> u64 {
    output_floor(context_window, max_output) + output_margin(context_window)
}

/// Wordings that state the provider's real limit, each with the limit as its first group (real
/// texts are in the tests).
const LIMIT_PATTERNS: &[&str] = &[
    // Anthropic: `prompt is too long: 213462 tokens > 200000 maximum`.
    r"tokens? > ([\d,]+) maximum",
    // Anthropic: `input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000`.
    r"exceed context limit: [\d,]+ \+ [\d,]+ > ([\d,]+)",
    // OpenAI, vLLM, OpenRouter, Groq: `maximum context length is 8192 tokens`.
    r"maximum context length is ([\d,]+) tokens",
    // vLLM (newer): `the model's context length is only 202752 tokens`.
    r"context length is only ([\d,]+) tokens",
    // Gemini: `exceeds the maximum number of tokens allowed (1048575)`.
    r"maximum number of tokens allowed \(([\d,]+)\)",
    // llama.cpp's server: `"type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192`.
    r#""n_ctx"\s*:\s*(\d+)"#,
    // LM Studio: `the model is loaded with context length of only 4096 tokens` (also `with a`).
    r"loaded with (?:a )?context length of (?:only )?([\d,]+)",
    // LM Studio's llama.cpp engine: `n_keep (15028) >= n_ctx (7424)`, `(n_keep: 13055>= n_ctx: 4096)`.
    r"n_ctx(?: \(|: )([\d,]+)",
    // Together: `is longer than the model's context length (8193 tokens)`.
    r"model'?s context length \(([\d,]+) tokens?\)",
    // Mistral: `too large for model with 32768 maximum context length`.
    r"with ([\d,]+) maximum context length",
    // ds4: `but the configured context size is 16384 tokens`.
    r"configured context size is ([\d,]+) tokens",
    // llama-cpp-python: `Requested tokens (2285) exceed context window of 2048`.
    r"exceed context window of ([\d,]+)",
    // xAI: `maximum prompt length is 131072`.
    r"maximum prompt length is ([\d,]+)",
    // LiteLLM, Poolside, Copilot.
    r"maximum context length of ([\d,]+) tokens",
    r"maximum allowed input length of ([\d,]+) tokens",
    r"exceeds the limit of ([\d,]+)",
];

/// Limits below this are not believed (a number that is not the window).
const MIN_BELIEVED_LIMIT: u64 = 256;

static LIMITS: LazyLock<Vec<Regex>> = LazyLock::new(|| compile(LIMIT_PATTERNS));

/// The context limit an overflow error states, in tokens (input plus output), when its wording
/// names one; `None` otherwise (OpenAI Responses' `exceeds the context window`, Ollama's
/// `exceeded max context length by 100 tokens`).
pub fn stated_limit(error_text: &str) -> Option<u64> {
    first_count(&LIMITS, error_text)
}

/// Wordings that state what the provider counted of the refused request, each with the count as
/// its first group (real texts are in the tests).
const COUNT_PATTERNS: &[&str] = &[
    // OpenAI: `However, your messages resulted in 8202 tokens.`
    r"resulted in ([\d,]+) tokens",
    // OpenAI (with a completion): `However, you requested 8202 tokens (7000 in the messages, …`.
    r"you requested ([\d,]+) tokens",
    // Anthropic: `prompt is too long: 213462 tokens > 200000 maximum`.
    r"too long: ([\d,]+) tokens? >",
    // Anthropic: `exceed context limit: 199759 + 8192 > 200000` (the input, then the output).
    r"exceed context limit: ([\d,]+) \+",
    // vLLM: `You passed 202753 input tokens`.
    r"you passed ([\d,]+) input tokens",
    // Gemini: `The input token count (1196265) exceeds …`.
    r"input token count \(([\d,]+)\)",
    // llama.cpp's server: `"n_prompt_tokens":14429`.
    r#""n_prompt_tokens"\s*:\s*(\d+)"#,
    // Mistral: `Prompt contains 40000 tokens`.
    r"prompt contains ([\d,]+) tokens",
    // llama-cpp-python: `Requested tokens (2285) exceed …`.
    r"requested tokens \(([\d,]+)\)",
    // Text Generation Inference: `Given: input (5000 tokens) is longer …`.
    r"input \(([\d,]+) tokens\)",
];

static COUNTS: LazyLock<Vec<Regex>> = LazyLock::new(|| compile(COUNT_PATTERNS));

/// What the provider counted of the request an overflow error refused, in tokens, when its
/// wording says; `None` otherwise. A message about the refusal names it: ctxkit's estimate alone
/// may be far below the limit the provider says the request went over.
pub fn stated_count(error_text: &str) -> Option<u64> {
    first_count(&COUNTS, error_text)
}

/// What a refusal over the reply's room states: the input the provider counted, the output room
/// the request asked for and the limit both must fit (Anthropic's `input length and max_tokens
/// exceed context limit: I + M > L`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatedRoom {
    /// The provider's exact count of the refused request's input.
    pub input: u64,
    /// The output room (`max_tokens`) the request asked for.
    pub output: u64,
    /// The limit input and output room together must stay within.
    pub limit: u64,
}

static ROOM: LazyLock<Option<Regex>> = LazyLock::new(|| {
    RegexBuilder::new(r"exceed context limit: ([\d,]+) \+ ([\d,]+) > ([\d,]+)")
        .case_insensitive(true)
        .build()
        .ok()
});

/// The counts a refusal over the reply's room states, when its wording gives all three.
pub fn stated_room(error_text: &str) -> Option<StatedRoom> {
    let captures = ROOM.as_ref()?.captures(error_text)?;
    let number = |group: usize| -> Option<u64> {
        let digits: String = captures
            .get(group)?
            .as_str()
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    Some(StatedRoom {
        input: number(1)?,
        output: number(2)?,
        limit: number(3)?,
    })
}

/// The output room a request refused as `stated` may go out again with, the same input fitting
/// alone: the limit less the counted input and the margin ([`output_margin`]), when that is at
/// least `floor` and less than the room the refused request asked for; `None` otherwise (only a
/// compaction helps).
pub fn refitted_output(stated: StatedRoom, floor: u64) -> Option<u64> {
    let room = stated
        .limit
        .checked_sub(stated.input)?
        .checked_sub(output_margin(stated.limit))?;
    (room >= floor.max(1) && room < stated.output).then_some(room)
}

fn compile(patterns: &[&str]) -> Vec<Regex> {
    patterns
        .iter()
        .filter_map(|pattern| {
            RegexBuilder::new(pattern)
                .case_insensitive(true)
                .build()
                .ok()
        })
        .collect()
}

/// The number the first matching wording holds, at least `MIN_BELIEVED_LIMIT` (a smaller one is
/// not a context's size).
fn first_count(regexes: &[Regex], error_text: &str) -> Option<u64> {
    regexes.iter().find_map(|regex| {
        let digits: String = regex
            .captures(error_text)?
            .get(1)?
            .as_str()
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        digits
            .parse::<u64>()
            .ok()
            .filter(|count| *count >= MIN_BELIEVED_LIMIT)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_resort_room_is_a_quarter_of_the_floor() {
        assert_eq!(output_minimum(output_floor(65_536, 8_192)), 2_048);
        assert_eq!(output_minimum(output_floor(8_192, 4_096)), 256);
        assert_eq!(output_minimum(1), 1);
    }

    #[test]
    fn every_limit_pattern_compiles() {
        assert_eq!(LIMITS.len(), LIMIT_PATTERNS.len());
        assert_eq!(COUNTS.len(), COUNT_PATTERNS.len());
    }

    #[test]
    fn real_wordings_state_the_count() {
        let cases: &[(&str, Option<u64>)] = &[
            (
                "This model's maximum context length is 12000 tokens. However, your messages resulted in 14000 tokens.",
                Some(14_000),
            ),
            (
                "This model's maximum context length is 8192 tokens. However, you requested 8202 tokens (7000 in the messages, 1202 in the completion).",
                Some(8_202),
            ),
            (
                "prompt is too long: 213462 tokens > 200000 maximum",
                Some(213_462),
            ),
            (
                "input length and `max_tokens` exceed context limit: 14000 + 2048 > 16384",
                Some(14_000),
            ),
            (
                "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
                Some(1_196_265),
            ),
            (
                r#"{"type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}"#,
                Some(14_429),
            ),
            (
                "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
                Some(40_000),
            ),
            ("Your input exceeds the context window of this model", None),
        ];
        for (text, expected) in cases {
            assert_eq!(stated_count(text), *expected, "{text}");
        }
    }

    #[test]
    fn real_wordings_state_their_limit() {
        let cases: &[(&str, Option<u64>)] = &[
            (
                "prompt is too long: 213462 tokens > 200000 maximum",
                Some(200_000),
            ),
            (
                r#"Anthropic API error (400): {"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 14000 + 2048 > 16384, decrease input length or `max_tokens` and try again"}}"#,
                Some(16_384),
            ),
            (
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 8202 tokens. Please reduce the length of the messages.",
                Some(8_192),
            ),
            (
                "You passed 202753 input tokens and requested 0 output tokens. However, the model's context length is only 202752 tokens, resulting in a maximum input length of 202752 tokens.",
                Some(202_752),
            ),
            (
                "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
                Some(1_048_575),
            ),
            (
                r#"{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}"#,
                Some(8_192),
            ),
            (
                "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.",
                Some(4_096),
            ),
            (
                "Trying to keep the first 6547 tokens when context overflows. However, the model is loaded with a context length of only 8192 tokens, which is not enough.",
                Some(8_192),
            ),
            (
                r#"400 {"error":"Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)"}"#,
                Some(7_424),
            ),
            (
                "The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096).",
                Some(4_096),
            ),
            (
                "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: input (5000 tokens) is longer than the model's context length (4096 tokens)",
                Some(4_096),
            ),
            (
                "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
                Some(32_768),
            ),
            (
                "Requested tokens (2285) exceed context window of 2048",
                Some(2_048),
            ),
            ("Your input exceeds the context window of this model", None),
            (
                "prompt too long; exceeded max context length by 100 tokens",
                None,
            ),
            ("maximum context length is 12 tokens", None),
        ];
        for (text, expected) in cases {
            assert_eq!(stated_limit(text), *expected, "{text}");
        }
    }

    /// QA r107: `12021 + 4096 > 16000` leaves 16,000 − 12,021 − 1,000 (the margin) = 2,979 for
    /// the reply, above the 2,000 floor: the request goes again with that room.
    #[test]
    fn a_refusal_over_the_reply_room_states_the_room_left() {
        let text = "input length and `max_tokens` exceed context limit: 12021 + 4096 > 16000, decrease input length or `max_tokens` and try again";
        let stated = stated_room(text).unwrap();
        assert_eq!(
            stated,
            StatedRoom {
                input: 12_021,
                output: 4_096,
                limit: 16_000
            }
        );
        assert_eq!(
            refitted_output(stated, output_floor(16_000, 4_096)),
            Some(2_979)
        );
        // Under the floor, or an input over the limit alone: nothing to refit.
        assert_eq!(refitted_output(stated, 3_000), None);
        let over = stated_room("exceed context limit: 16500 + 4096 > 16000").unwrap();
        assert_eq!(refitted_output(over, 1), None);
        assert_eq!(
            stated_room("prompt is too long: 213462 tokens > 200000 maximum"),
            None
        );
    }

    #[test]
    fn the_floor_is_the_models_limit_within_an_eighth_of_the_window() {
        assert_eq!(output_floor(16_384, 2_048), 2_048);
        assert_eq!(output_floor(8_192, 4_096), 1_024);
        assert_eq!(output_floor(32_768, 0), 4_096);
        assert_eq!(output_floor(16_384, 0), 2_048);
        assert_eq!(output_floor(200_000, 64_000), 8_192);
        assert_eq!(output_floor(0, 0), 4_096);
        assert_eq!(output_margin(16_384), 1_024);
        assert_eq!(output_margin(200_000), 4_096);
        assert_eq!(output_margin(2_048), 256);
        assert_eq!(output_room(16_384, 2_048), 3_072);
        assert_eq!(output_room(8_192, 0), 1_536);
        // Large windows compact where they did: the default reserve covers floor and margin.
        assert!(output_room(200_000, 64_000) <= 16_384);
    }
}
