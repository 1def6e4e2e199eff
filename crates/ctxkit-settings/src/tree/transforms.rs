//! `transforms.*`: the context transforms' settings (`ctxkit-transform` reads them): one switch per
//! layer and every number the layers use, with defaults tuned for 100k–200k token windows.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the model's view is trimmed before each call. Absent keys take their defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct TransformSettings {
    /// Layer (a): cut old tool results down to a head, a tail and a reference to the full text.
    pub prune_enabled: bool,
    /// Tool results counted from the end that are always kept whole.
    pub keep_recent_tool_results: usize,
    /// Tool results whose text is at most this many characters are never cut.
    pub prune_min_chars: usize,
    /// Lines kept from the start of a cut tool result.
    pub head_lines: usize,
    /// Lines kept from the end of a cut tool result.
    pub tail_lines: usize,
    /// Characters kept from the start when a result is cut by characters (too few lines, or lines
    /// too long for a line cut to bring the text under `pruneMinChars`).
    pub head_chars: usize,
    /// Characters kept from the end when a result is cut by characters.
    pub tail_chars: usize,
    /// Names (file paths, symbols, error codes, ids, URLs) of the omitted text a cut result's marker
    /// lists after `mentions:`, ranked (see `digest.rs`); 0 (the default) writes no digest.
    pub prune_digest_names: usize,
    /// The most characters the digest's names take together for an omitted text up to 4,000
    /// characters; a longer one's digest gets 4% of its characters, up to 1,000 (or this value
    /// when higher), and `pruneDigestNames` grows in proportion.
    pub prune_digest_chars: usize,
    /// Layer (a) also cuts the long string arguments (a file written, a patch, a long command) of
    /// the tool calls whose results it may cut: each string longer than `pruneMinChars` is cut as a
    /// result's text is, with a marker naming `ctxkit://tool-call/<id>`, which `recall` reads back.
    /// Off by default (the reference never changes a call), on in the recommended strategy
    /// (docs/simulator.md, eleventh round).
    pub prune_tool_calls: bool,
    /// Layer (b): remove thinking blocks from the replies of earlier turns; the replies since the
    /// last user message (the turn in progress, a tool loop included) always keep theirs, as
    /// Anthropic, DeepSeek, Kimi and MiMo require. With `pruneWhenItPays` (the default) or
    /// `cacheAware`, only the replies before the prune boundary (the last of the old tool results
    /// layer (a) may cut) lose their thinking, so while no cut pays (a short run) none is removed;
    /// with both off, every earlier turn's reply loses it. A provider that wants the reasoning
    /// field on every reply (DeepSeek's thinking mode) gets it empty on those.
    pub drop_old_thinking: bool,
    /// Layer (c): drop the oldest messages while the view is above the threshold.
    pub window_enabled: bool,
    /// The sliding window acts when the estimated view exceeds this percentage of the context window.
    /// With compaction on, the window is the last resort: a lower value is read as the midpoint
    /// between the compaction threshold and the window, so that compaction still runs.
    #[schemars(range(min = 1, max = 100))]
    pub window_threshold_percent: u64,
    /// Messages at the end of the view the sliding window never drops.
    pub keep_last_messages: usize,
    /// Keep the request prefix byte-identical across calls for provider prompt caches: prune and drop
    /// thinking in blocks of `cacheBlockSize` tool results instead of moving the boundary every call.
    /// (The sliding window, once it acts, still changes the prefix on every call.)
    pub cache_aware: bool,
    /// Tool results per block in cache-aware mode.
    #[schemars(range(min = 1))]
    pub cache_block_size: usize,
    /// Move the prune boundary only when the move pays for itself under the prompt cache's prices
    /// (see `pays.rs`): the tokens it saves over the expected rest of the run outweigh the cache it
    /// rewrites; `cacheAware` is not used. A result deep in the cached prefix rewrites everything
    /// after it, so such results are cut in batches, and not at all in a short run; but the result
    /// the model has just read ends the cached prefix, and cutting it at the next request rewrites
    /// only its reply and its kept lines while it is no longer read: when it is large that pays at
    /// once. With `keepRecentToolResults` 1 (the recommended strategy) a large result is therefore
    /// cut at the request after the one that first sent it whole, one result per request.
    pub prune_when_it_pays: bool,
    /// The price of input read from the provider's prompt cache, in percent of the base input price.
    /// Absent (the default): the current model's own prices (Anthropic and OpenAI: 10); 10 when
    /// they are unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read_percent: Option<u64>,
    /// The price of input written to the prompt cache, in percent of the base input price. Absent
    /// (the default): the current model's own prices (Anthropic's 5-minute cache: 125; OpenAI and
    /// Gemini, which have no write fee: 100); 125 when they are unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_percent: Option<u64>,
    /// Whether the provider's cache serves the longest prefix a request shares with an earlier one
    /// (OpenAI, Gemini: automatic caching) rather than only prefixes written at `cache_control`
    /// breakpoints and found within 20 content blocks of one (Anthropic). Absent (the default):
    /// from the current model's prices (a cache without a write fee serves any prefix); Anthropic's
    /// rule when they are unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_reads_any_prefix: Option<bool>,
    /// How long after a request its prefix may still be in the provider's prompt cache, in seconds.
    /// A request sent longer than this after the previous one finds the cache expired and is
    /// written whole, so pruning at that request rewrites nothing extra (see `pays.rs`). Absent (the
    /// default): from the current model's cache, 2100 for a cache of breakpoints (Anthropic's
    /// 5 minutes plus the 30 minutes `cacheWarming: idle` keeps it; set 300 with warming off) and
    /// 300 for a cache that serves any prefix (OpenAI's and Gemini's 5 minutes, which ctxkit does not
    /// warm); 2100 when the model's prices are unknown. 0: the cache never expires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_lifetime_seconds: Option<u64>,
    /// Ask the provider's prompt cache for an hour instead of five minutes (Anthropic's
    /// `"ttl": "1h"`) on the requests where the session's own pauses say it pays: the share of
    /// its requests so far that a pause between five minutes and an hour followed (begun from a
    /// prior of one in a hundred), times 1.15× the context (what such a pause makes the
    /// five-minute cache write again), exceeds 0.75× what the request writes (the hour's dearer
    /// writes: 2× the input price instead of 1.25×); see `lifetime.rs` in `ctxkit-transform`. Off
    /// by default, on in the recommended strategy (docs/simulator.md, fifth and tenth rounds).
    /// Only Anthropic lets a request choose.
    pub long_cache_when_it_pays: bool,
    /// Tell the model how full its context is (a note at the end of the view, so request prefixes
    /// stay cacheable) once the view is over `budget_note_percent` of the window.
    pub budget_note: bool,
    /// The share of the window from which the budget note is added.
    #[schemars(range(min = 1, max = 100))]
    pub budget_note_percent: u64,
}

/// A five-minute cache entry that `cacheWarming: idle` refreshes for up to 30 minutes, in seconds.
const WARMED_CACHE_SECONDS: u64 = 35 * 60;

/// A five-minute cache entry nothing refreshes, in seconds.
const UNWARMED_CACHE_SECONDS: u64 = 5 * 60;

impl Default for TransformSettings {
    /// Every layer enabled; old results cut only when it pays under the model's cache prices.
    fn default() -> Self {
        Self {
            prune_enabled: true,
            keep_recent_tool_results: 6,
            prune_min_chars: 500,
            head_lines: 3,
            tail_lines: 2,
            head_chars: 200,
            tail_chars: 100,
            prune_digest_names: 0,
            prune_digest_chars: 160,
            prune_tool_calls: false,
            drop_old_thinking: true,
            window_enabled: true,
            window_threshold_percent: 75,
            keep_last_messages: 20,
            cache_aware: false,
            cache_block_size: 8,
            prune_when_it_pays: true,
            cache_read_percent: None,
            cache_write_percent: None,
            cache_reads_any_prefix: None,
            cache_lifetime_seconds: None,
            long_cache_when_it_pays: false,
            budget_note: false,
            budget_note_percent: 50,
        }
    }
}

impl TransformSettings {
    /// Settings with every layer switched off: the view passes through (orphan repair still runs).
    pub fn disabled() -> Self {
        Self {
            prune_enabled: false,
            drop_old_thinking: false,
            window_enabled: false,
            ..Self::default()
        }
    }

    /// These settings with the cache terms they leave out taken from `terms` (the current
    /// model's); borrowed when nothing changes.
    pub fn with_cache_terms(&self, terms: Option<&ctxkit_models::CacheTerms>) -> Cow<'_, Self> {
        let Some(terms) = terms else {
            return Cow::Borrowed(self);
        };
        let filled = Self {
            cache_read_percent: self.cache_read_percent.or(Some(terms.read_percent)),
            cache_write_percent: self.cache_write_percent.or(Some(terms.write_percent)),
            cache_reads_any_prefix: self.cache_reads_any_prefix.or(Some(terms.reads_any_prefix)),
            // ctxkit warms only a cache of breakpoints (Anthropic's); the automatic ones live
            // their own five minutes.
            cache_lifetime_seconds: self.cache_lifetime_seconds.or(Some(
                if self
                    .cache_reads_any_prefix
                    .unwrap_or(terms.reads_any_prefix)
                {
                    UNWARMED_CACHE_SECONDS
                } else {
                    WARMED_CACHE_SECONDS
                },
            )),
            ..self.clone()
        };
        if filled == *self {
            Cow::Borrowed(self)
        } else {
            Cow::Owned(filled)
        }
    }

    /// The read price the pruning rule weighs: the setting, else Anthropic's 10.
    pub fn cache_read_percent_or_default(&self) -> u64 {
        self.cache_read_percent.unwrap_or(10)
    }

    /// The write price the pruning rule weighs: the setting, else Anthropic's 125.
    pub fn cache_write_percent_or_default(&self) -> u64 {
        self.cache_write_percent.unwrap_or(125)
    }

    /// How long the pruning rule takes a cache entry to live: the setting, else Anthropic's cache
    /// kept warm (2100 seconds).
    pub fn cache_lifetime_seconds_or_default(&self) -> u64 {
        self.cache_lifetime_seconds.unwrap_or(WARMED_CACHE_SECONDS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_match_the_documented_numbers() {
        let settings = TransformSettings::default();
        assert_eq!(settings.keep_recent_tool_results, 6);
        assert_eq!(settings.prune_min_chars, 500);
        assert_eq!((settings.head_lines, settings.tail_lines), (3, 2));
        assert!(settings.drop_old_thinking);
        assert_eq!(settings.window_threshold_percent, 75);
        assert_eq!(settings.keep_last_messages, 20);
        assert!(!settings.cache_aware);
        assert_eq!(settings.cache_block_size, 8);
        assert!(settings.prune_enabled && settings.window_enabled);
    }

    #[test]
    fn reads_camel_case_keys_and_defaults_the_rest() {
        let settings: TransformSettings = serde_json::from_value(json!({
            "keepRecentToolResults": 2,
            "cacheAware": true,
            "windowEnabled": false,
        }))
        .unwrap();
        assert_eq!(settings.keep_recent_tool_results, 2);
        assert!(settings.cache_aware);
        assert!(!settings.window_enabled);
        assert_eq!(settings.prune_min_chars, 500);
        let round_trip: TransformSettings =
            serde_json::from_value(serde_json::to_value(&settings).unwrap()).unwrap();
        assert_eq!(round_trip, settings);
        let text = serde_json::to_string(&TransformSettings::default()).unwrap();
        assert!(text.contains("\"windowThresholdPercent\":75"), "{text}");
    }

    #[test]
    fn disabled_switches_off_every_layer() {
        let settings = TransformSettings::disabled();
        assert!(!settings.prune_enabled && !settings.drop_old_thinking && !settings.window_enabled);
    }

    #[test]
    fn the_model_s_cache_terms_fill_only_what_the_settings_leave_out() {
        let openai = ctxkit_models::CacheTerms {
            read_percent: 10,
            write_percent: 100,
            reads_any_prefix: true,
        };
        let default = TransformSettings::default();
        assert!(matches!(default.with_cache_terms(None), Cow::Borrowed(_)));
        assert_eq!(
            (
                default.cache_read_percent_or_default(),
                default.cache_write_percent_or_default()
            ),
            (10, 125)
        );
        let filled = default.with_cache_terms(Some(&openai));
        assert_eq!(filled.cache_write_percent, Some(100));
        assert_eq!(filled.cache_reads_any_prefix, Some(true));
        // Nothing warms OpenAI's cache: it lives its five minutes; Claude's is kept warm.
        assert_eq!(filled.cache_lifetime_seconds, Some(300));
        assert_eq!(default.cache_lifetime_seconds_or_default(), 2100);
        let chosen: TransformSettings =
            serde_json::from_value(json!({"cacheWritePercent": 200, "cacheReadsAnyPrefix": false}))
                .unwrap();
        let filled = chosen.with_cache_terms(Some(&openai));
        assert_eq!(filled.cache_write_percent, Some(200));
        assert_eq!(filled.cache_reads_any_prefix, Some(false));
        assert_eq!(filled.cache_read_percent, Some(10));
        assert_eq!(filled.cache_lifetime_seconds, Some(2100));
        // Left out, the terms are not written back into a settings file.
        let text = serde_json::to_string(&default).unwrap();
        assert!(!text.contains("cacheReadPercent"), "{text}");
    }
}
