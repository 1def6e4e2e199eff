//! Warnings of `ctxkit check`: shapes that read fine, and that ctxkit's own requests repair, but
//! that Pi sends as they are and providers reject.

use std::path::Path;

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
