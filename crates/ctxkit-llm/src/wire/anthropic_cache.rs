//! Anthropic prompt caching (`llm.anthropic.cacheRetention`) of conversation requests, placed as Pi
//! places it: a `cache_control` breakpoint on the system prompt, on the last tool definition and on
//! the last block of the request's last message when that message is the user's (text, image or
//! tool result); never on thinking or empty blocks. The fourth, which Pi leaves unused, marks the
//! end of the stable part of the conversation: the last tool result the prune layer cut before the
//! last message, as the view names it (`ChatRequest::cache`, `CacheHints::stable_prefix_end`; a
//! result's text is never read for it, since a file may quote a marker). Cut results change only when
//! the prune boundary moves (`transforms.pruneWhenItPays`), so between moves that position is the
//! same request after request and stays cached (each read refreshes it) whatever happens after it;
//! when the boundary moves, the API finds it again by its lookback of about 20 blocks from the new
//! one. A
//! cache-prefix summary request carries the breakpoints of the conversation request it continues
//! (the last one on that request's last user block), none of its own; fresh summaries none at all,
//! as Pi sends them. Pure.

use ctxkit_protocol::Usage;
use serde_json::{Value, json};

/// How long Anthropic keeps what a request writes to its prompt cache. Pi's names and default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheRetention {
    /// No breakpoints: nothing is cached.
    None,
    /// The API's default lifetime, five minutes (`{"type": "ephemeral"}`).
    #[default]
    Short,
    /// One hour (`"ttl": "1h"`; writes cost more than short ones).
    Long,
}

impl CacheRetention {
    /// `none`, `short` or `long`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "none" => Some(Self::None),
            "short" => Some(Self::Short),
            "long" => Some(Self::Long),
            _ => None,
        }
    }

    /// The lifetime a request writes with: the one it asks for (`ChatRequest::cache_retention`),
    /// else the configured one; a model configured to cache nothing caches nothing.
    pub(crate) fn for_request(configured: Self, asked: Option<Self>) -> Self {
        match (configured, asked) {
            (Self::None, _) | (_, None) => configured,
            (Self::Short | Self::Long, Some(asked)) => asked,
        }
    }

    /// The `cache_control` value of a breakpoint, `None` when nothing is cached.
    fn cache_control(self) -> Option<Value> {
        match self {
            Self::None => None,
            Self::Short => Some(json!({"type": "ephemeral"})),
            Self::Long => Some(json!({"type": "ephemeral", "ttl": "1h"})),
        }
    }
}

/// The cache writes of a reply to a request written with `retention`, by lifetime: when the API
/// did not split them (`usage.cache_creation`), a `long` request's are all hour-long (each of its
/// breakpoints has `ttl: "1h"`), so they are priced as such (`ctxkit_models::usage_cost`).
pub(crate) fn attribute_cache_writes(usage: &mut Usage, retention: CacheRetention) {
    let reported = usage.extra.contains_key(ctxkit_models::LONG_CACHE_WRITES);
    if retention == CacheRetention::Long && usage.cache_write > 0 && !reported {
        usage.extra.insert(
            ctxkit_models::LONG_CACHE_WRITES.to_owned(),
            json!(usage.cache_write),
        );
    }
}

/// The `system` field: the prompt as one text block with a breakpoint, or the plain string when
/// nothing is cached or the prompt is empty (an empty block cannot carry a breakpoint).
pub(crate) fn system(prompt: &str, retention: CacheRetention) -> Value {
    match retention.cache_control() {
        Some(control) if !prompt.is_empty() => {
            json!([{"type": "text", "text": prompt, "cache_control": control}])
        }
        Some(_) | None => json!(prompt),
    }
}

/// Marks the last of the `tools` definitions.
pub(crate) fn mark_tools(tools: &mut [Value], retention: CacheRetention) {
    if let (Some(control), Some(last)) = (retention.cache_control(), tools.last_mut()) {
        last["cache_control"] = control;
    }
}

/// Marks the last block of `messages[index]` when it is a user message whose last block can
/// carry a breakpoint; whether it was marked.
pub(crate) fn mark_user_message(
    messages: &mut [Value],
    index: usize,
    retention: CacheRetention,
) -> bool {
    let Some(control) = retention.cache_control() else {
        return false;
    };
    let Some(message) = messages
        .get_mut(index)
        .filter(|message| message["role"] == "user")
    else {
        return false;
    };
    let Some(block) = message["content"]
        .as_array_mut()
        .and_then(|blocks| blocks.last_mut())
    else {
        return false;
    };
    let cacheable = match block["type"].as_str() {
        Some("text") => block["text"].as_str().is_some_and(|text| !text.is_empty()),
        Some("image" | "tool_result") => true,
        Some(_) | None => false,
    };
    if cacheable {
        block["cache_control"] = control;
    }
    cacheable
}

/// Marks the `tool_result` block answering the call `tool_call_id` (the last result the prune
/// layer cut, as the view says: `ChatRequest::cache`) when it is in `messages[..before]`; whether
/// it was marked. What a result's text says is never read: a file may quote a marker.
pub(crate) fn mark_stable_prefix(
    messages: &mut [Value],
    before: usize,
    tool_call_id: &str,
    retention: CacheRetention,
) -> bool {
    let Some(control) = retention.cache_control() else {
        return false;
    };
    let end = before.min(messages.len());
    for message in messages[..end].iter_mut().rev() {
        if message["role"] != "user" {
            continue;
        }
        let Some(blocks) = message["content"].as_array_mut() else {
            continue;
        };
        let found = blocks
            .iter_mut()
            .rev()
            .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == tool_call_id);
        if let Some(block) = found {
            block["cache_control"] = control;
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_breakpoints_follow_pi() {
        assert_eq!(CacheRetention::default(), CacheRetention::Short);
        assert_eq!(CacheRetention::parse("long"), Some(CacheRetention::Long));
        assert_eq!(CacheRetention::parse("1h"), None);
        assert_eq!(
            system("Be brief.", CacheRetention::Long),
            json!([{"type": "text", "text": "Be brief.",
                    "cache_control": {"type": "ephemeral", "ttl": "1h"}}])
        );
        assert_eq!(
            system("Be brief.", CacheRetention::None),
            json!("Be brief.")
        );
        assert_eq!(system("", CacheRetention::Short), json!(""));
    }

    #[test]
    fn only_a_user_message_with_a_cacheable_last_block_is_marked() {
        let mut messages = vec![
            json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "hello"}]}),
            json!({"role": "user", "content": [{"type": "thinking", "thinking": "x"}]}),
        ];
        assert!(!mark_user_message(&mut messages, 2, CacheRetention::Short));
        assert!(messages[2]["content"][0].get("cache_control").is_none());
        assert!(!mark_user_message(&mut messages, 1, CacheRetention::Short));
        assert!(mark_user_message(&mut messages, 0, CacheRetention::Short));
        assert_eq!(
            messages[0]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(!mark_user_message(&mut messages, 9, CacheRetention::Short));
        let mut tools = vec![json!({"name": "a"}), json!({"name": "b"})];
        mark_tools(&mut tools, CacheRetention::None);
        assert!(tools[1].get("cache_control").is_none());
        mark_tools(&mut tools, CacheRetention::Short);
        assert!(tools[0].get("cache_control").is_none());
        assert!(tools[1].get("cache_control").is_some());
    }

    #[test]
    fn the_result_the_view_names_before_the_tail_marks_the_stable_prefix() {
        let cut = |id: &str| {
            json!({"type": "tool_result", "tool_use_id": id, "content":
                format!("head\n[... 9 lines (400 chars) omitted; full output: ctxkit://tool-result/{id}]")})
        };
        let whole = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": "all"});
        let mut messages = vec![
            json!({"role": "user", "content": [{"type": "text", "text": "task"}]}),
            json!({"role": "user", "content": [cut("a"), cut("b")]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}]}),
            json!({"role": "user", "content": [whole("c")]}),
            json!({"role": "user", "content": [cut("d")]}),
        ];
        // The tail (index 4) is not looked at: the anchor is before it.
        assert!(mark_stable_prefix(
            &mut messages,
            4,
            "b",
            CacheRetention::Short
        ));
        assert!(messages[1]["content"][1].get("cache_control").is_some());
        assert!(messages[1]["content"][0].get("cache_control").is_none());
        assert!(messages[4]["content"][0].get("cache_control").is_none());
        let mut none = messages.clone();
        assert!(!mark_stable_prefix(
            &mut none,
            1,
            "b",
            CacheRetention::Short
        ));
        assert!(!mark_stable_prefix(
            &mut none,
            4,
            "d",
            CacheRetention::Short
        ));
        assert!(!mark_stable_prefix(&mut none, 4, "b", CacheRetention::None));
    }

    #[test]
    fn a_result_quoting_a_marker_is_not_a_cut_one() {
        // A file read whose text quotes a marker, even one naming its own call: the view named no
        // cut result, so nothing in the text can place the breakpoint.
        let quoted = json!({"type": "tool_result", "tool_use_id": "r1", "content":
            "see [... 9 lines (400 chars) omitted; full output: ctxkit://tool-result/r1]"});
        let mut messages = vec![
            json!({"role": "user", "content": [{"type": "text", "text": "task"}]}),
            json!({"role": "user", "content": [quoted]}),
            json!({"role": "user", "content": [{"type": "text", "text": "go on"}]}),
        ];
        assert!(!mark_stable_prefix(
            &mut messages,
            2,
            "c9",
            CacheRetention::Short
        ));
        assert!(messages[1]["content"][0].get("cache_control").is_none());
    }
}
