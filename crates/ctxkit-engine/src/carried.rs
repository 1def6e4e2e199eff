//! Names a compaction would take out of the model's view, carried into its summary.
//!
//! A compaction replaces the tool results of the span it summarizes by the summary, and a summary
//! written within a budget keeps only some of the span's names: on real sessions most of the
//! identifiers a later reply named again and the recommended strategy no longer showed were names
//! of such results (docs/simulator.md, fourth round). So, when the transforms write digests
//! (`transforms.pruneDigestNames`), before a compaction is written the names the current view
//! shows in the tool results the compaction drops (a whole result's, or a cut one's kept head and
//! tail and its marker's digest: `ctxkit_transform::shown_names`), and those the previous summary
//! carried, are appended to the summary when it does not name them already (one line within a
//! budget that grows with what the compaction drops, [`carried_budget`]: every dropped result's
//! last [`CARRIED_EACH`] names first, newest result first, so one listing of hundreds of names
//! cannot fill it; then the most recent of the rest). Before those, within a budget of their own,
//! go the names of the dropped results the model's later messages named from (`crate::hot`), all
//! of their stored text's, not only what the cut shows. The line is part of the summary text, so
//! every surface (chat, serve, `ctxkit compact`) and the next compaction see the same names.

use std::collections::{HashMap, HashSet};

use ctxkit_protocol::{AgentMessage, MessageContent};
use ctxkit_session::ContextMessageKind;

use crate::error::Result;
use crate::hot::Hot;
use crate::messages::{shared_message, shared_transcript};
use crate::state::State;
use crate::words::words_held;

/// The words that start the carried line in a summary. They name no tool: the summary is stored,
/// and Pi, or an agent offered no `recall`, sends it as written (the request's own pointer to
/// `recall`, `crate::recall::summary_pointer`, is added only where the tool is offered).
pub(crate) const CARRIED_LEAD: &str = "Named in the tool results this summary replaces: ";

/// The lead summaries written before 2026-12-06 stored, naming `recall`: still read as a carried
/// line, and shown as [`CARRIED_LEAD`] to a model offered no `recall`.
pub(crate) const CARRIED_LEAD_NAMING_RECALL: &str =
    "Named in the tool results this summary replaces (the originals: `recall`): ";

/// The names listed after a carried line's lead, `None` for any other line.
fn carried_listing(line: &str) -> Option<&str> {
    line.strip_prefix(CARRIED_LEAD)
        .or_else(|| line.strip_prefix(CARRIED_LEAD_NAMING_RECALL))
}

/// The fewest characters of names one summary may carry (about 500 tokens; a fixed 4,000 cost more
/// for the same recall on real sessions, docs/simulator.md).
pub(crate) const CARRIED_CHARS: usize = 2_000;

/// The line's share of the characters of the tool results the compaction drops (their stored
/// text), per mille, once that is more than [`CARRIED_CHARS`].
const CARRIED_SHARE_PER_MILLE: usize = 20;

/// The most characters of names one summary carries (about 2,000 tokens).
pub(crate) const CARRIED_MAX_CHARS: usize = 8_000;

/// How many names of each dropped result (its last ones) are offered before the rest.
pub(crate) const CARRIED_EACH: usize = 2;

/// The characters of names a compaction dropping `dropped_chars` characters of tool results
/// carries: 2% of them, within [`CARRIED_CHARS`] and [`CARRIED_MAX_CHARS`].
pub(crate) fn carried_budget(dropped_chars: usize) -> usize {
    (dropped_chars.saturating_mul(CARRIED_SHARE_PER_MILLE) / 1000)
        .clamp(CARRIED_CHARS, CARRIED_MAX_CHARS)
}

/// The longest context whose view is built to find the names: reading the names means building
/// the view of the whole context, and a context of a million messages would take gigabytes for a
/// line of at most [`CARRIED_MAX_CHARS`] (the compaction then carries no line, as with digests
/// off).
pub(crate) const MAX_CARRYING_CONTEXT_MESSAGES: usize = 100_000;

/// The summary of a compaction ctxkit wrote (not a hook's), with the carried line appended when the
/// transforms write digests; a view that cannot be read leaves the summary as it is.
pub(crate) fn carry_names(state: &mut State, compaction: &mut ctxkit_session::NewCompaction) {
    if compaction.source == ctxkit_session::SummarySource::Hook
        || state.settings.transforms.prune_digest_names == 0
    {
        return;
    }
    let length = state.session.leaf_context().messages.len();
    if length > MAX_CARRYING_CONTEXT_MESSAGES {
        tracing::debug!(
            length,
            "names of tool results not carried: the context is too long to build its view"
        );
        return;
    }
    let summary = std::mem::take(&mut compaction.summary);
    compaction.summary = match with_carried_names(state, &summary, &compaction.first_kept_entry_id)
    {
        Ok(carried) => carried,
        Err(error) => {
            tracing::warn!(%error, "names of cut tool results not carried into the summary");
            summary
        }
    };
}

/// `summary` with the carried line appended, or unchanged when the view's markers list no name.
/// `first_kept_entry_id` is the new compaction's.
fn with_carried_names(
    state: &mut State,
    summary: &str,
    first_kept_entry_id: &str,
) -> Result<String> {
    let kept = kept_tool_results(state, first_kept_entry_id)?;
    let transcript = shared_transcript(state)?;
    let window = state.context_window();
    let view = crate::view::build_measured_view(&transcript, &state.model_settings(), window);
    // The stored text of each result: the budget is sized by what is dropped, not by its cut, and
    // a name is carried only when the stored text, as a summary keeps it, holds it.
    let stored: HashMap<&str, Vec<&str>> = transcript
        .iter()
        .filter_map(|message| message.as_tool_result())
        .map(|result| (result.tool_call_id.as_str(), texts(&result.content)))
        .collect();
    let mut groups: Vec<Vec<String>> = Vec::new();
    let mut dropped_chars = 0_usize;
    for message in &view.messages {
        let names: Vec<String> = match message {
            // A `recall`'s result is the originals behind an earlier summary, still there to be
            // recalled again: its names were carried when they were summarized, and its own
            // headers (`[entry 966b0d3e] tool result:`) are no names a model needs (QA
            // 2026-12-07: a summary's line listed the entry ids of recalled messages).
            AgentMessage::ToolResult(result)
                if !kept.contains(&result.tool_call_id)
                    && result.tool_name != ctxkit_protocol::RECALL_TOOL =>
            {
                let original = stored.get(result.tool_call_id.as_str());
                dropped_chars +=
                    original.map_or(0, |texts| texts.iter().map(|text| text.len()).sum());
                // The names the view shows (a cut result's in its digest), those its stored text
                // still holds as a summary keeps it.
                let kept: Option<Vec<_>> =
                    original.map(|texts| texts.iter().map(|text| kept_text(text)).collect());
                texts(&result.content)
                    .into_iter()
                    .flat_map(ctxkit_transform::shown_names)
                    .filter(|name| !is_image_type(name))
                    .filter(|name| {
                        kept.as_ref()
                            .is_none_or(|kept| kept.iter().any(|text| text.contains(name)))
                    })
                    .map(str::to_owned)
                    .collect()
            }
            // The previous summary, as the view shows it: the names it carried go on.
            AgentMessage::User(user) => texts(&user.content)
                .into_iter()
                .flat_map(carried_in)
                .collect(),
            AgentMessage::ToolResult(_)
            | AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => Vec::new(),
        };
        if !names.is_empty() {
            groups.push(names);
        }
    }
    let hot = crate::hot::hot_results(&transcript, &view.messages, &kept);
    Ok(append_groups(
        summary.to_owned(),
        &groups,
        carried_budget(dropped_chars),
        &hot,
    ))
}

/// The tool call ids of the results a compaction keeping from `first_kept_entry_id` leaves in the
/// context.
fn kept_tool_results(state: &mut State, first_kept_entry_id: &str) -> Result<HashSet<String>> {
    let context = state.session.leaf_context().messages.clone();
    let start = context.iter().position(|message| {
        state
            .session
            .index()
            .get(message.entry)
            .is_some_and(|entry| entry.id() == first_kept_entry_id)
    });
    let mut kept = HashSet::new();
    let Some(start) = start else {
        return Ok(kept);
    };
    for message in &context[start..] {
        let is_result = message.kind == ContextMessageKind::Stored
            && state
                .session
                .index()
                .get(message.entry)
                .is_some_and(|entry| entry.role() == Some("toolResult"));
        if !is_result {
            continue;
        }
        if let Some(shared) = shared_message(state, message)?
            && let AgentMessage::ToolResult(result) = shared.message()
        {
            kept.insert(result.tool_call_id.clone());
        }
    }
    Ok(kept)
}

/// The text parts of a message's content.
pub(crate) fn texts(content: &MessageContent) -> Vec<&str> {
    match content {
        MessageContent::Text(text) => vec![text.as_str()],
        MessageContent::Blocks(blocks) => {
            blocks.iter().filter_map(|block| block.as_text()).collect()
        }
    }
}

/// The characters of `summary` ctxkit appended after the summarizer's text: the carried line (with
/// the blank line before it) and the compaction's file blocks. A summarizer is billed for the rest.
pub fn appended_chars(summary: &str) -> usize {
    let text = ctxkit_compaction::FileLists::strip_blocks(summary);
    let blocks = summary.chars().count() - text.chars().count();
    let carried: usize = text
        .lines()
        .filter(|line| carried_listing(line).is_some())
        .map(|line| line.chars().count() + 2)
        .sum();
    blocks + carried
}

/// The names a summary's carried line lists.
pub(crate) fn carried_in(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(carried_listing)
        .flat_map(|listed| listed.split(", "))
        .map(|name| name.trim_matches('`'))
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `summary` with one line of the `names` (oldest first) it does not hold yet, the most recent
/// kept within [`CARRIED_CHARS`] (one group: [`append_groups`]).
#[cfg(test)]
pub(crate) fn append_line(summary: String, names: &[String]) -> String {
    append_groups(summary, &[names.to_vec()], CARRIED_CHARS, &Hot::default())
}

/// `summary` with one line of the names of `groups` (one per dropped result or previous carried
/// line, oldest first; each in the order it showed them) that it does not hold yet, within `budget`
/// characters: each group's last [`CARRIED_EACH`] names first (newest group first), then the
/// most recent of the rest; listed oldest first. Before them, the names of the `hot` results
/// (`crate::hot::hot_names`, within a budget of their own), in the order they were offered. The
/// line goes before the file blocks the compaction appends (which stay last, as
/// `FileLists::strip_blocks` reads them); a carried line the summarizer copied from the previous
/// summary is replaced by the new one.
pub(crate) fn append_groups(
    summary: String,
    groups: &[Vec<String>],
    budget: usize,
    hot: &Hot,
) -> String {
    let text = ctxkit_compaction::FileLists::strip_blocks(&summary);
    let blocks = summary.get(text.len()..).unwrap_or_default();
    let body: String = text
        .lines()
        .filter(|line| carried_listing(line).is_none())
        .collect::<Vec<_>>()
        .join("\n");
    let hot_names = crate::hot::hot_names(&body, hot);
    let kept = format!("{body}{blocks}\n`{}`", hot_names.join("`, `"));
    let fresh = fresh_names(&kept, groups);
    let mut used = 0;
    let mut chosen: Vec<(usize, usize)> = Vec::new();
    for (group, position) in offer_order(&fresh) {
        let cost = fresh[group][position].len() + 4;
        if used + cost > budget {
            continue;
        }
        used += cost;
        chosen.push((group, position));
    }
    if chosen.is_empty() && hot_names.is_empty() && body.len() == text.len() {
        return summary;
    }
    // Oldest group first, each in the order it showed its names (both lists are newest first).
    chosen.sort_by(|left, right| right.cmp(left));
    let chosen_names = chosen
        .iter()
        .map(|&(group, position)| fresh[group][position]);
    let listed: Vec<String> = hot_names
        .iter()
        .map(String::as_str)
        .chain(chosen_names)
        .filter(|name| shows_no_credential(name))
        .map(|name| format!("`{name}`"))
        .collect();
    let line = if listed.is_empty() {
        String::new()
    } else {
        format!("\n\n{CARRIED_LEAD}{}", listed.join(", "))
    };
    format!("{}{line}{blocks}", body.trim_end())
}

/// `text`, a tool result's, as a summary keeps it (`ctxkit_compaction::kept_summary`): a name is
/// carried only when this text still holds it, so a value the redaction takes out by its context
/// (a password given to its name, on a command line: `SECRET_KEY_BASE=…`, `mysql -p…`), which has
/// no shape of its own, is not carried as a name (QA 2026-12-07: a summary listed 35 test secrets
/// the digests had named, and the page showed them).
pub(crate) fn kept_text(text: &str) -> String {
    ctxkit_compaction::kept_summary(text)
}

/// Whether `name` is an image's media type (`image/png`): the label of a `read` of an image
/// ("Read image file [image/png]"), no name the model needs (QA: a summary's line listed it).
fn is_image_type(name: &str) -> bool {
    name.strip_prefix("image/").is_some_and(|subtype| {
        !subtype.is_empty()
            && subtype
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'+' | b'-'))
    })
}

/// Whether `name` holds no credential of a known shape. Tool output keeps keys (an edit must match
/// the file), so a name read from it may be one; the summary it would join is sent with every later
/// request, exported and shared (`ctxkit_compaction::kept_summary`, which the summarizer's own text
/// passed before the line was appended).
fn shows_no_credential(name: &str) -> bool {
    ctxkit_compaction::kept_summary(name) == name
}

/// Per group, newest group first, the names `kept` does not hold, newest first; a name named by
/// several groups belongs to the newest.
fn fresh_names<'a>(kept: &str, groups: &'a [Vec<String>]) -> Vec<Vec<&'a str>> {
    let mut distinct = HashSet::new();
    let names: Vec<&str> = groups
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|name| distinct.insert(*name))
        .collect();
    let held = words_held(kept, &names);
    let mut seen = HashSet::new();
    groups
        .iter()
        .rev()
        .map(|group| {
            group
                .iter()
                .rev()
                .filter(|name| seen.insert(name.as_str()) && !held.contains(name.as_str()))
                .map(String::as_str)
                .collect()
        })
        .collect()
}

/// The order names are offered to the budget in: every group's first [`CARRIED_EACH`] (its last
/// names), then the rest, newest first.
fn offer_order(fresh: &[Vec<&str>]) -> Vec<(usize, usize)> {
    let each = |group: &Vec<&str>| CARRIED_EACH.min(group.len());
    let firsts = fresh
        .iter()
        .enumerate()
        .flat_map(|(index, group)| (0..each(group)).map(move |position| (index, position)));
    let rest = fresh.iter().enumerate().flat_map(|(index, group)| {
        (each(group)..group.len()).map(move |position| (index, position))
    });
    firsts.chain(rest).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_type_is_no_name() {
        assert!(is_image_type("image/png") && is_image_type("image/svg+xml"));
        assert!(!is_image_type("image/") && !is_image_type("src/image/png.rs"));
        assert!(!is_image_type("image/logo/main.png"));
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn the_appended_characters_are_the_carried_line_and_the_file_blocks() {
        let written = "## Goal\n- fix `src/a.rs`";
        assert_eq!(appended_chars(written), 0);
        let carried = append_line(written.to_owned(), &names(&["b_c", "E0308"]));
        let blocks = format!("{carried}\n\n<read-files>\nsrc/a.rs\n</read-files>");
        assert_eq!(
            appended_chars(&blocks),
            blocks.chars().count() - written.chars().count()
        );
    }

    #[test]
    fn names_the_summary_lacks_are_appended_once_in_order() {
        let summary = "## Goal\n- fix `src/a.rs`".to_owned();
        let text = append_line(
            summary,
            &names(&["src/a.rs", "E0308", "b_c", "E0308", "src/a.rs.bak"]),
        );
        assert_eq!(
            text,
            format!("## Goal\n- fix `src/a.rs`\n\n{CARRIED_LEAD}`b_c`, `E0308`, `src/a.rs.bak`")
        );
        assert_eq!(carried_in(&text), ["b_c", "E0308", "src/a.rs.bak"]);
    }

    #[test]
    fn the_budget_grows_with_what_is_dropped() {
        assert_eq!(carried_budget(0), CARRIED_CHARS);
        assert_eq!(carried_budget(100_000), CARRIED_CHARS);
        assert_eq!(carried_budget(250_000), 5_000);
        assert_eq!(carried_budget(usize::MAX), CARRIED_MAX_CHARS);
    }

    #[test]
    fn one_long_listing_does_not_crowd_out_the_results_before_it() {
        let small = names(&["vault.json", "old_a", "old_b"]);
        let listing: Vec<String> = (0..1_000)
            .map(|index| format!("note_{index:04}.md"))
            .collect();
        let text = append_groups(
            "body".to_owned(),
            &[small, listing],
            CARRIED_CHARS,
            &Hot::default(),
        );
        let carried = carried_in(&text);
        // The older result's last two names are offered before the listing's rest.
        assert!(carried.contains(&"old_a".to_owned()) && carried.contains(&"old_b".to_owned()));
        // Then the listing's most recent names fill the budget; listed oldest first.
        assert_eq!(carried.last().map(String::as_str), Some("note_0999.md"));
        assert!(!carried.contains(&"note_0000.md".to_owned()));
        let at = |name: &str| carried.iter().position(|carried| carried == name);
        assert!(at("old_a") < at("old_b") && at("old_b") < at("note_0999.md"));
        let length: usize = carried.iter().map(|name| name.len() + 4).sum();
        assert!(
            length <= CARRIED_CHARS && length > CARRIED_CHARS - 20,
            "{length}"
        );
    }

    #[test]
    fn a_key_a_dropped_result_showed_is_not_carried() {
        // A `.env` the model read: its key is a name of the result, hot or not.
        let key = "sk_live_51Habcdefghijklmnopqrstuvwxyz0123456789";
        let hot = Hot {
            results: vec![crate::hot::HotResult {
                hotness: 2,
                names: names(&["ghp_abcdefghijklmnopqrstuvwxyz0123456789", "DEPLOY_PORT"]),
            }],
            visible: Default::default(),
        };
        let text = append_groups(
            "## Goal\nDeploy with STRIPE_KEY=<redacted>".to_owned(),
            &[names(&["STRIPE_KEY", key, "deploy.sh"])],
            CARRIED_CHARS,
            &hot,
        );
        assert_eq!(carried_in(&text), ["DEPLOY_PORT", "deploy.sh"], "{text}");
        assert!(
            !text.contains("sk_live_") && !text.contains("ghp_"),
            "{text}"
        );
    }

    #[test]
    fn the_names_of_hot_results_come_first_and_once() {
        let hot = Hot {
            results: vec![crate::hot::HotResult {
                hotness: 2,
                names: names(&["T005", "T006", "b_c"]),
            }],
            visible: Default::default(),
        };
        let text = append_groups(
            "body".to_owned(),
            &[names(&["b_c", "E0308"])],
            CARRIED_CHARS,
            &hot,
        );
        assert_eq!(
            carried_in(&text),
            ["T005", "T006", "b_c", "E0308"],
            "{text}"
        );
    }

    #[test]
    fn a_copied_line_is_replaced_and_the_oldest_names_go_past_the_cap() {
        let copied = format!("body\n{CARRIED_LEAD}`old_name`");
        let text = append_line(copied, &names(&["old_name", "new_name"]));
        assert_eq!(
            text,
            format!("body\n\n{CARRIED_LEAD}`old_name`, `new_name`")
        );
        let many: Vec<String> = (0..2_000).map(|index| format!("name_{index}")).collect();
        let text = append_line("body".to_owned(), &many);
        let carried = carried_in(&text);
        assert!(carried.len() * 8 < CARRIED_CHARS + 100 && carried.len() > 100);
        assert_eq!(carried.last().map(String::as_str), Some("name_1999"));
        assert!(!carried.contains(&"name_0".to_owned()));
        assert_eq!(append_line("body".to_owned(), &[]), "body");
        // The compaction's file blocks stay last.
        let text = append_line(
            "body\n\n<read-files>\nsrc/a.rs\n</read-files>".to_owned(),
            &names(&["b_c"]),
        );
        assert_eq!(
            text,
            format!("body\n\n{CARRIED_LEAD}`b_c`\n\n<read-files>\nsrc/a.rs\n</read-files>")
        );
    }

    /// A summary written before the lead stopped naming `recall` keeps its names: its line is
    /// read, counted as appended and replaced by one in today's words, which name no tool.
    #[test]
    fn a_line_in_the_old_words_is_read_and_rewritten() {
        let old = format!("body\n\n{CARRIED_LEAD_NAMING_RECALL}`old_name`");
        assert_eq!(carried_in(&old), ["old_name"]);
        assert_eq!(appended_chars(&old), old.chars().count() - "body".len());
        let text = append_line(old, &names(&["old_name", "new_name"]));
        assert_eq!(
            text,
            format!("body\n\n{CARRIED_LEAD}`old_name`, `new_name`")
        );
        assert!(!CARRIED_LEAD.contains("recall"));
    }
}
