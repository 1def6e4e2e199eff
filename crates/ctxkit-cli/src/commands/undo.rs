//! `undo-compact`: back to before the last compaction on the current path, with what came after it
//! carried over (`ctxkit_compaction::undo_last_compaction`), and how an undo is told on every
//! surface (the chat's `/undo-compact` says it the same way).

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use ctxkit_compaction::{UndoOutcome, undo_last_compaction};
use ctxkit_session::Session;

use crate::Outcome;
use crate::render::counted;

/// `ctxkit undo-compact`.
pub fn undo_compact(file: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let mut session = Session::open(file)?;
    super::note_rewrite(&session, file)?;
    match undo_last_compaction(&mut session)? {
        Some(undo) => {
            session.flush_pending()?;
            writeln!(
                out,
                "Undid compaction {}: the leaf is back at {} (the summary stays in the tree){}",
                undo.compaction_id,
                undo.restored_leaf_id.as_deref().unwrap_or("the start"),
                carried_note(&undo)
            )?;
            for line in not_carried_lines(&undo) {
                writeln!(out, "{line}")?;
            }
        }
        None => writeln!(out, "No compaction on the current path.")?,
    }
    Ok(Outcome::Success)
}

/// What an undo said about the entries after the compaction it appended again after the marker:
/// how many of each kind, in the order each kind first came.
pub fn carried_note(undo: &UndoOutcome) -> String {
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for entry in &undo.carried {
        match kinds.iter_mut().find(|(kind, _)| *kind == entry.entry_type) {
            Some((_, count)) => *count += 1,
            None => kinds.push((&entry.entry_type, 1)),
        }
    }
    if kinds.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = kinds
        .iter()
        .map(|(kind, count)| counted(*count, &entry_noun(kind)))
        .collect();
    format!(
        "; what came after it was appended again: {}",
        parts.join(", ")
    )
}

/// One line per entry an undo could not carry over.
pub fn not_carried_lines(undo: &UndoOutcome) -> Vec<String> {
    undo.not_carried
        .iter()
        .map(|entry| format!("Not carried over: {entry}"))
        .collect()
}

/// What an entry type is called in a count (`2 context edits`).
fn entry_noun(entry_type: &str) -> String {
    match entry_type {
        "message" => "message".to_owned(),
        "context_edit" => "context edit".to_owned(),
        "model_change" => "model change".to_owned(),
        "thinking_level_change" => "thinking level change".to_owned(),
        "custom_message" => "extension message".to_owned(),
        "custom" => "extension entry".to_owned(),
        "branch_summary" => "branch summary".to_owned(),
        "label" => "label".to_owned(),
        other => format!("`{other}` entry"),
    }
}
