//! Lines the chat adds to the conversation: the compaction's result (the share of the context it
//! saved, the files its summary tracks), the hints after a compaction that failed, and `custom_message` entries whose `display` flag asks
//! for them (Pi's rule: shown when `display` is true, never sent differently for it).

use ctxkit_engine::CompactionEnd;
use ctxkit_protocol::MessageContent;

use super::ui::Ui;
use crate::render::content_text;

/// Lines of a custom message shown.
const CUSTOM_LINES: usize = 12;

/// Said under each compaction: a compaction hides messages from the model, it deletes nothing.
pub const ORIGINALS_KEPT: &str =
    "The replaced messages stay in the session: the model can `recall` them, and /tree shows them.";

/// After the `truncate` fallback dropped messages: they are still in the session, and a summary can
/// still be written once the model answers.
pub const FALLBACK_HINT: &str = "hint: the dropped messages are still in the session: `/undo-compact` \
     brings them back, then `/compact` summarizes them once the model answers";

/// [`FALLBACK_HINT`] in print mode, which has no chat commands: the commands that do the same
/// on the session file.
pub const FALLBACK_HINT_PRINTED: &str = "hint: the dropped messages are still in the session: \
     `ctxkit undo-compact FILE` brings them back (`ctxkit sessions` names the file)";

/// After an overflow recovery gave up: the error says which compactions it wrote before (they
/// stay), and the cause is often the model's window.
pub const OVERFLOW_HINT: &str = "hint: the provider still refuses the request as too long; check the \
     model's contextWindow (`ctxkit models`) or switch models with /model; /compactions lists the \
     branch's compactions, /undo-compact undoes the last";

/// [`OVERFLOW_HINT`] in print mode, which has no chat commands.
pub const OVERFLOW_HINT_PRINTED: &str = "hint: the provider still refuses the request as too long; \
     check the model's contextWindow (`ctxkit models`) or pick another model with `--model`; \
     `ctxkit compactions FILE` lists the branch's compactions, `ctxkit undo-compact FILE` undoes \
     the last";

/// After a summary failed and nothing was written (`compaction.fallback` is `error`, the default).
pub const FAILED_SUMMARY_HINT: &str = "hint: run `/compact` to try again, or `/model` to switch models; \
     with `compaction.fallback` set to `truncate` a failed summary drops the oldest messages instead";

/// [`FAILED_SUMMARY_HINT`] in print mode, which has no chat commands.
pub const FAILED_SUMMARY_HINT_PRINTED: &str = "hint: run the command again, or pick another model \
     with `--model` (`compaction.model` summarizes with another); with `compaction.fallback` set \
     to `truncate` a failed summary drops the oldest messages instead";

/// `Compacted: 52000 → 9000 tokens (83% saved) · files tracked: 4 read, 2 modified`; both numbers
/// on the status line's scale (`CompactionEnd::tokens_before`), so the status line under it shows
/// the number after.
pub fn compaction_line(before: u64, after: u64, end: &CompactionEnd) -> String {
    let mut line = format!("Compacted: {before} → {after} tokens");
    if before > 0 && after <= before {
        let saved = (before - after) as f64 * 100.0 / before as f64;
        line.push_str(&format!(" ({saved:.0}% saved)"));
    } else if after > before {
        // A summary of a few short messages (a tiny threshold) can be longer than they were: the
        // line must not read as room made.
        line.push_str(&format!(
            " (the context grew by {}: the summary is longer than what it replaced)",
            after - before
        ));
    }
    if end.files_read + end.files_modified > 0 {
        line.push_str(&format!(
            " · files tracked: {} read, {} modified",
            end.files_read, end.files_modified
        ));
    }
    line
}

/// A `custom_message` (an extension's or a hook's message) when its `display` flag is set:
/// `[type]` and its text; nothing otherwise.
pub fn show_custom(ui: &Ui, custom_type: &str, content: &MessageContent, display: bool) {
    if !display {
        return;
    }
    let text = content_text(content);
    let lines: Vec<&str> = text.lines().collect();
    let mut shown: Vec<String> = lines
        .iter()
        .take(CUSTOM_LINES)
        .map(|line| format!("  {line}"))
        .collect();
    if lines.len() > CUSTOM_LINES {
        shown.push(format!("  … ({} more lines)", lines.len() - CUSTOM_LINES));
    }
    ui.notice(&format!("[{custom_type}]"));
    if !shown.is_empty() {
        ui.line(&shown.join("\n"));
    }
}

#[cfg(test)]
mod tests {
    use ctxkit_engine::CompactionReason;

    use super::*;

    #[test]
    fn the_compaction_line_says_the_share_saved_and_the_files_tracked() {
        let mut end: CompactionEnd = serde_json::from_value(serde_json::json!({
            "reason": "manual", "aborted": false, "will_retry": false, "tokens_before": 52000,
            "tokens_after": 9000, "first_kept_entry_id": null, "entry_id": "e1",
            "from_hook": false, "fallback": false, "error": null, "advice": null,
            "files_read": 4, "files_modified": 2
        }))
        .unwrap();
        assert_eq!(end.reason, CompactionReason::Manual);
        assert_eq!(
            compaction_line(52000, 9000, &end),
            "Compacted: 52000 → 9000 tokens (83% saved) · files tracked: 4 read, 2 modified"
        );
        end.files_read = 0;
        end.files_modified = 0;
        assert_eq!(
            compaction_line(100, 100, &end),
            "Compacted: 100 → 100 tokens (0% saved)"
        );
    }

    /// QA r97 (sec): a compaction under a 1-token threshold and `keepRecentTokens: 0` grew the
    /// context, and the line said `Compacted: 112 → 908 tokens` as if it had made room.
    #[test]
    fn a_compaction_that_grew_the_context_says_so() {
        let end: CompactionEnd = serde_json::from_value(serde_json::json!({
            "reason": "threshold", "aborted": false, "will_retry": false, "tokens_before": 112,
            "tokens_after": 908, "first_kept_entry_id": null, "entry_id": "e1",
            "from_hook": false, "fallback": false, "error": null, "advice": null,
            "files_read": 0, "files_modified": 0
        }))
        .unwrap();
        assert_eq!(
            compaction_line(112, 908, &end),
            "Compacted: 112 → 908 tokens (the context grew by 796: the summary is longer than \
             what it replaced)"
        );
    }
}
