//! The names of the tool results the model is working from ("hot" results), offered to the
//! carried line (`carried.rs`) before the rest, within a budget of their own.
//!
//! The carried line lists what the view still shows of the results a compaction drops: a cut
//! result's head, tail and digest. A result the model keeps coming back to (a task list whose ids
//! it names one by one, a subagent's report whose functions it names for hundreds of calls) loses
//! most of its names that way: on real sessions most of the names a later reply named again and
//! the recommended strategy no longer held came from a few such results (docs/simulator.md,
//! seventh round). A dropped result is *hot* when the model's own messages after it (text and
//! tool-call arguments, up to the compaction) named names its stored text holds (the digest's
//! rule of a name, `ctxkit_transform::names_in`); its hotness is how many. Of the hot results,
//! hottest first (ties: the newer first), the names of the stored text are offered, those the
//! model named first and then the rest in the text's order, leaving out the names the summary or
//! the kept messages already show, within [`HOT_EACH_CHARS`] per result and [`HOT_CHARS`] in all.
//! The previous summary's carried line is offered again as one result, so its names stay while
//! the model still names them. Deterministic: the same context gives the same bytes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ctxkit_protocol::{AgentMessage, ContentBlock};

/// The most characters of names of hot results one summary carries (about 750 tokens), besides
/// the carried line's own budget.
pub(crate) const HOT_CHARS: usize = 3_000;

/// The most characters of names carried from one hot result.
pub(crate) const HOT_EACH_CHARS: usize = 1_000;

/// One hot result (or a previous carried line): how many of its names the model named since, and
/// its names, those first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HotResult {
    pub(crate) hotness: usize,
    pub(crate) names: Vec<String>,
}

/// The hot results of a compaction, oldest first, and the names its kept messages show.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hot {
    pub(crate) results: Vec<HotResult>,
    pub(crate) visible: HashSet<String>,
}

/// The hot results of the `view` a compaction keeping the results `kept` is written from: those of
/// the results it drops (their stored text, from `transcript`) and the previous summaries' carried
/// lines; and the names the messages after the last dropped result show.
pub(crate) fn hot_results(
    transcript: &[Arc<ctxkit_transform::MeasuredMessage>],
    view: &[AgentMessage],
    kept: &HashSet<String>,
) -> Hot {
    let stored: HashMap<&str, &ctxkit_protocol::ToolResultMessage> = transcript
        .iter()
        .filter_map(|message| message.as_tool_result())
        .map(|result| (result.tool_call_id.as_str(), result))
        .collect();
    let mut named = HashSet::new();
    let mut visible = HashSet::new();
    let mut results = Vec::new();
    let mut dropping = false;
    for message in view.iter().rev() {
        let dropped = message
            .as_tool_result()
            .map(|result| result.tool_call_id.as_str())
            .filter(|id| !kept.contains(*id));
        dropping |= dropped.is_some();
        if !dropping {
            note_shown_names(message, &mut visible);
        }
        note_model_names(message, &mut named);
        if let Some(stored) = dropped.and_then(|id| stored.get(id)) {
            let text = crate::carried::texts(&stored.content).join("\n");
            results.extend(hot_result(&text, &named));
        }
    }
    for message in transcript.iter().rev() {
        if let AgentMessage::CompactionSummary(summary) = message.message() {
            let carried = crate::carried::carried_in(&summary.summary).join("\n");
            results.extend(hot_result(&carried, &named));
        }
    }
    results.reverse();
    Hot {
        results,
        visible: visible.into_iter().map(str::to_owned).collect(),
    }
}

/// The names the model wrote in `message` (text and tool-call arguments; not thinking) into
/// `named`; nothing for other messages.
fn note_model_names<'a>(message: &'a AgentMessage, named: &mut HashSet<&'a str>) {
    let AgentMessage::Assistant(reply) = message else {
        return;
    };
    for block in &reply.content {
        match block {
            ContentBlock::Text(text) => named.extend(ctxkit_transform::names_in(&text.text)),
            ContentBlock::ToolCall(call) => {
                named.extend(ctxkit_transform::names_in_json(&call.arguments));
            }
            ContentBlock::Image(_) | ContentBlock::Thinking(_) | ContentBlock::Unknown(_) => {}
        }
    }
}

/// The names `message` shows the model as the view has it (a reply's, a user's, a result's).
fn note_shown_names<'a>(message: &'a AgentMessage, shown: &mut HashSet<&'a str>) {
    note_model_names(message, shown);
    let content = match message {
        AgentMessage::ToolResult(result) => &result.content,
        AgentMessage::User(user) => &user.content,
        AgentMessage::Assistant(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => return,
    };
    for text in crate::carried::texts(content) {
        shown.extend(ctxkit_transform::shown_names(text));
    }
}

/// `text` as a hot result when the model named some of its names (`named`: those it wrote after
/// it); `None` when it named none.
pub(crate) fn hot_result(text: &str, named: &HashSet<&str>) -> Option<HotResult> {
    // Read from the text as a summary keeps it (`crate::carried::kept_text`).
    let kept = crate::carried::kept_text(text);
    let mut names = ctxkit_transform::names_in(&kept);
    let hotness = names.iter().filter(|name| named.contains(*name)).count();
    if hotness == 0 {
        return None;
    }
    // Those the model named first, each part in the text's order.
    names.sort_by_key(|name| !named.contains(*name));
    Some(HotResult {
        hotness,
        names: names.into_iter().map(str::to_owned).collect(),
    })
}

/// The names of `hot`'s results to carry, in the order they are offered: the hottest result's
/// first (ties: the newer), within [`HOT_EACH_CHARS`] per result and [`HOT_CHARS`] in all (a
/// name costs its length and 4, as in the carried line); a name `summary` or the kept messages
/// show, or offered already, is left out.
pub(crate) fn hot_names(summary: &str, hot: &Hot) -> Vec<String> {
    let results = &hot.results;
    let mut order: Vec<usize> = (0..results.len()).collect();
    order.sort_by(|&left, &right| {
        results[right]
            .hotness
            .cmp(&results[left].hotness)
            .then(right.cmp(&left))
    });
    let mut seen: HashSet<&str> = HashSet::new();
    let mut chosen = Vec::new();
    let mut used = 0;
    for index in order {
        let mut used_here = 0;
        for name in &results[index].names {
            let cost = name.len() + 4;
            if used + cost > HOT_CHARS || used_here + cost > HOT_EACH_CHARS {
                continue;
            }
            if hot.visible.contains(name)
                || !seen.insert(name)
                || crate::words::holds_word(summary, name)
            {
                continue;
            }
            used += cost;
            used_here += cost;
            chosen.push(name.clone());
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hot(hotness: usize, names: &[&str]) -> HotResult {
        HotResult {
            hotness,
            names: names.iter().map(|name| (*name).to_owned()).collect(),
        }
    }

    #[test]
    fn a_result_is_hot_by_the_names_the_model_named_since_and_offers_those_first() {
        let text = "- [x] T004 write parse_header\n- [ ] T005 add tests\n- [ ] T006 docs\nplain";
        let named: HashSet<&str> = ["T005", "other_name"].into_iter().collect();
        assert_eq!(
            hot_result(text, &named),
            Some(hot(1, &["T005", "T004", "parse_header", "T006"]))
        );
        assert_eq!(hot_result(text, &HashSet::new()), None);
    }

    #[test]
    fn the_hottest_results_names_come_first_within_each_cap() {
        let listing: Vec<String> = (0..500).map(|index| format!("task_{index:03}")).collect();
        let listing: Vec<&str> = listing.iter().map(String::as_str).collect();
        let results = Hot {
            // Oldest first: a cooler result, then a hotter one.
            results: vec![hot(1, &["old_name", "shown_name"]), hot(9, &listing)],
            visible: ["shown_name".to_owned()].into_iter().collect(),
        };
        let names = hot_names("## Goal\n- finish `task_000`", &results);
        // The hot listing first, without what the summary holds; capped per result.
        assert_eq!(names.first().map(String::as_str), Some("task_001"));
        let listed: usize = names
            .iter()
            .filter(|name| name.starts_with("task_"))
            .map(|name| name.len() + 4)
            .sum();
        assert!(
            listed <= HOT_EACH_CHARS && listed > HOT_EACH_CHARS - 20,
            "{listed}"
        );
        // Then the cooler result's, without what the kept messages show.
        assert_eq!(names.last().map(String::as_str), Some("old_name"));
        assert!(!names.contains(&"shown_name".to_owned()));
        assert!(hot_names("body", &Hot::default()).is_empty());
    }
}
