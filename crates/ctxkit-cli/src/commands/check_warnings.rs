//! Warnings of `ctxkit check`: shapes that read fine, and that ctxkit's own requests repair, but
//! that Pi sends as they are and providers reject.

use std::path::Path;

use ctxkit_protocol::{AgentMessage, ContentBlock, EntryKind, MessageContent};
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

/// What this version reads but does not know: an entry of another type, a message of another
/// role, a content block of another type. Each is kept in the file as it is; `check` says what
/// becomes of it, once per kind at its first line (QA: a `video` block was left out of every
/// request without a word, where Pi sends it as a broken image).
pub(super) fn unknown_shapes(session: &Session) -> Vec<Warning> {
    let mut said = std::collections::HashSet::new();
    let mut warnings = Vec::new();
    let mut say = |line: usize, kind: String, what: &str| {
        if said.insert(kind.clone()) {
            warnings.push(Warning {
                line: Some(line),
                message: format!("{kind}, which this version does not know: {what}"),
            });
        }
    };
    for entry in session.entries() {
        let Ok(parsed) = entry.parse() else { continue };
        let blocks = match &parsed.kind {
            EntryKind::Unknown { type_name, .. } => {
                say(
                    entry.line(),
                    format!("an entry of type `{type_name}`"),
                    "kept as it is, in no context",
                );
                continue;
            }
            EntryKind::Message(message) => match message.as_ref() {
                // Pi 1.6.0's system messages (prompt state in the transcript) are known: they
                // reach the model (`ctxkit_session::reaches_model`), and Pi writes one into every
                // session (QA: each one was warned of as unknown and "left out").
                AgentMessage::Unknown(_) if ctxkit_session::reaches_model(message) => continue,
                AgentMessage::Unknown(fields) => {
                    let role = fields.get("role").and_then(|role| role.as_str());
                    say(
                        entry.line(),
                        format!("a message of role `{}`", role.unwrap_or("?")),
                        "kept as it is, left out of every request",
                    );
                    continue;
                }
                AgentMessage::User(user) => content_blocks(&user.content),
                AgentMessage::ToolResult(result) => content_blocks(&result.content),
                AgentMessage::Assistant(reply) => reply.content.iter().collect(),
                AgentMessage::BashExecution(_)
                | AgentMessage::Custom(_)
                | AgentMessage::BranchSummary(_)
                | AgentMessage::CompactionSummary(_) => Vec::new(),
            },
            EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::Compaction(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_) => continue,
        };
        for block in blocks {
            if let ContentBlock::Unknown(fields) = block {
                let kind = fields.get("type").and_then(|kind| kind.as_str());
                say(
                    entry.line(),
                    format!("a content block of type `{}`", kind.unwrap_or("?")),
                    "kept in the file, left out of ctxkit's requests (Pi sends it as an image)",
                );
            }
        }
    }
    warnings
}

fn content_blocks(content: &MessageContent) -> Vec<&ContentBlock> {
    match content {
        MessageContent::Text(_) => Vec::new(),
        MessageContent::Blocks(blocks) => blocks.iter().collect(),
    }
}
