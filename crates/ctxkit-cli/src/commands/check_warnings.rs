//! Warnings of `ctxkit check`: shapes that read fine, and that ctxkit's own requests repair, but
//! that Pi sends as they are and providers reject.

use std::path::Path;

use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;

/// One warning: the file line it is about and what it says (without the `warning: ` lead).
pub(super) struct Warning {
    pub line: Option<usize>,
    pub message: String,
}

/// A tool result at the leaf whose call no earlier reply holds: the shape an edit of a reply alone
/// (Pi 0.87.1's recovery, ctxkit's `edit-context` before 1.6.0's rule) left. Pi 1.6.0 keeps it in
/// the context and sends it; a message that cannot be read is a problem `check` reports already.
pub(super) fn orphaned_results(session: &Session, file: &Path) -> Vec<Warning> {
    let orphans = session.orphaned_tool_results().unwrap_or_default();
    orphans
        .into_iter()
        .map(|orphan| Warning {
            line: Some(orphan.line),
            message: format!(
                "the tool result {entry} answers the call {call}, which no earlier reply in the \
                 context holds (an edit that left the reply out or took its calls away, or an entry \
                 whose parent is missing, leaves this shape); Pi sends it as \
                 it is and providers reject the request; leave it out with `ctxkit edit-context {file} \
                 {entry} --omit`",
                entry = orphan.entry_id,
                call = orphan.tool_call_id,
                file = file.display(),
            ),
        })
        .collect()
}

/// Assistant messages without a complete `usage` (the four counts and a `cost`): Pi 1.6.0 adds up
/// every reply's usage when it opens a session (its footer, `pi -p`) and fails on the first
/// without one (`Cannot read properties of undefined`), on any branch. ctxkit's own replies always
/// carry one; imports before 2026-12 left it out of all but a response's last reply. One warning
/// for the file, at the first such reply, with how many there are.
pub(super) fn replies_without_usage(session: &Session, file: &Path) -> Vec<Warning> {
    let mut first = None;
    let mut count = 0_usize;
    for entry in session.entries() {
        if entry.role() != Some("assistant") {
            continue;
        }
        // An entry that does not parse is a problem `check` reports already.
        let Some(Ok(AgentMessage::Assistant(reply))) = entry.parse_message() else {
            continue;
        };
        if reply
            .usage
            .as_ref()
            .is_none_or(|usage| usage.cost.is_none())
        {
            count += 1;
            first.get_or_insert_with(|| (entry.line(), entry.id().to_owned()));
        }
    }
    let Some((line, entry)) = first else {
        return Vec::new();
    };
    let others = match count {
        1 => String::new(),
        _ => format!(" (and {} more)", count - 1),
    };
    vec![Warning {
        line: Some(line),
        message: format!(
            "the assistant message {entry}{others} has no `usage` with a `cost`; Pi 1.6.0 cannot \
             open or continue `{file}` (it adds up every reply's usage); if the session was \
             imported, import its source again with this ctxkit",
            file = file.display(),
        ),
    }]
}
