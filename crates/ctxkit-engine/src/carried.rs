//! Names a compaction would take out of the model's view, carried into its summary.
//!
//! A compaction replaces the tool results of the span it summarizes by the summary, and a summary
//! written within a budget keeps only some of the span's names: on real sessions most of the
//! identifiers a later reply named again and the recommended strategy no longer showed were names
//! of such results (docs/simulator.md, fourth round). So, when the transforms write digests
//! (`transforms.pruneDigestNames`), before a compaction is written the names the current view
//! shows in the tool results the compaction drops (a whole result's, or a cut one's kept head and
//! tail and its marker's digest: `ctxkit_transform::shown_names`), and those the previous summary
//! carried, are appended to the summary when it does not name them already (one line, the most
//! recent kept within [`CARRIED_CHARS`]). The line is part of the summary text, so every surface
//! (chat, serve, `ctxkit compact`) and the next compaction see the same names.

use std::collections::HashSet;

use ctxkit_protocol::{AgentMessage, MessageContent};
use ctxkit_session::ContextMessageKind;

use crate::engine::{State, shared_message, shared_transcript};
use crate::error::Result;

/// The words that start the carried line in a summary.
pub(crate) const CARRIED_LEAD: &str =
    "Named in the tool results this summary replaces (the originals: `recall`): ";

/// The most characters of names one summary carries (about 500 tokens; 4,000 cost more for the same
/// recall on real sessions, docs/simulator.md); the oldest go first.
pub(crate) const CARRIED_CHARS: usize = 2_000;

/// The longest context whose view is built to find the names: reading the names means building
/// the view of the whole context, and a context of a million messages would take gigabytes for a
/// line of at most [`CARRIED_CHARS`] (the compaction then carries no line, as with digests off).
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
    let view = crate::view::build_view(&transcript, &state.model_settings(), window);
    let mut names: Vec<String> = Vec::new();
    for message in &view.messages {
        match message {
            AgentMessage::ToolResult(result) if !kept.contains(&result.tool_call_id) => {
                for text in texts(&result.content) {
                    names.extend(
                        ctxkit_transform::shown_names(text)
                            .into_iter()
                            .map(str::to_owned),
                    );
                }
            }
            AgentMessage::User(user) => {
                // The previous summary, as the view shows it: the names it carried go on.
                for text in texts(&user.content) {
                    names.extend(carried_in(text));
                }
            }
            AgentMessage::ToolResult(_)
            | AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => {}
        }
    }
    Ok(append_line(summary.to_owned(), &names))
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
            && let AgentMessage::ToolResult(result) = shared.as_ref()
        {
            kept.insert(result.tool_call_id.clone());
        }
    }
    Ok(kept)
}

/// The text parts of a message's content.
fn texts(content: &MessageContent) -> Vec<&str> {
    match content {
        MessageContent::Text(text) => vec![text.as_str()],
        MessageContent::Blocks(blocks) => {
            blocks.iter().filter_map(|block| block.as_text()).collect()
        }
    }
}

/// The names a summary's carried line lists.
pub(crate) fn carried_in(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix(CARRIED_LEAD))
        .flat_map(|listed| listed.split(", "))
        .map(|name| name.trim_matches('`'))
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `summary` with one line of the `names` (oldest first) it does not hold yet, the most recent
/// kept within [`CARRIED_CHARS`], before the file blocks the compaction appends (which stay last,
/// as `FileLists::strip_blocks` reads them); a carried line the summarizer copied from the
/// previous summary is replaced by the new one.
pub(crate) fn append_line(summary: String, names: &[String]) -> String {
    let text = ctxkit_compaction::FileLists::strip_blocks(&summary);
    let blocks = summary.get(text.len()..).unwrap_or_default();
    let body: String = text
        .lines()
        .filter(|line| !line.starts_with(CARRIED_LEAD))
        .collect::<Vec<_>>()
        .join("\n");
    let kept = format!("{body}{blocks}");
    let mut seen = HashSet::new();
    let mut fresh: Vec<&str> = Vec::new();
    for name in names.iter().rev() {
        if seen.insert(name.as_str()) && !holds_word(&kept, name) {
            fresh.push(name);
        }
    }
    let mut used = 0;
    let mut listed: Vec<String> = Vec::new();
    for name in fresh {
        let cost = name.len() + 4;
        if used + cost > CARRIED_CHARS {
            break;
        }
        used += cost;
        listed.push(format!("`{name}`"));
    }
    if listed.is_empty() && body.len() == text.len() {
        return summary;
    }
    listed.reverse();
    let line = if listed.is_empty() {
        String::new()
    } else {
        format!("\n\n{CARRIED_LEAD}{}", listed.join(", "))
    };
    format!("{}{line}{blocks}", body.trim_end())
}

/// Whether `text` holds `name` as a whole word (not inside a longer word: letters, digits and `_`
/// around it), as a reader would find it.
fn holds_word(text: &str, name: &str) -> bool {
    let is_word_byte = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let bytes = text.as_bytes();
    text.match_indices(name).any(|(start, _)| {
        let before = start.checked_sub(1).and_then(|index| bytes.get(index));
        let after = bytes.get(start + name.len());
        !before.is_some_and(|&byte| is_word_byte(byte))
            && !after.is_some_and(|&byte| is_word_byte(byte))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| (*name).to_owned()).collect()
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
}
