//! Hook `progress` records as no part of the conversation. Claude Code up to 2.1.82 wrote the
//! `progress` records of its hooks (`PreToolUse`, `PostToolUse`) as a chain of their own hanging off
//! a tool call, often flushed after the turn's later records, and hung the user's next prompt under
//! the last of them (anthropics/claude-code#35024, fixed in 2.1.83). Followed as written, the
//! prompt continues from the tool call: the call's result and every reply after it up to the prompt
//! end up on a dead branch, and the call goes to the model without its result.
//!
//! A record whose parent is a `progress` record continues, as Claude Code wrote it in memory, from
//! the record written last before it (on its own side: main line or sidechain) when that record
//! descends from the nearest ancestor of the progress chain that is not progress; else from that
//! ancestor itself. Facts and sources: `docs/import-formats.md`.

use super::{Record, Sym};

const NONE: u32 = u32::MAX;

/// Re-links every record whose parent is a `progress` record; `uuid_count`: how many uuids the
/// transcript has.
pub(super) fn relink_past_progress(records: &mut [Record], uuid_count: usize) {
    if !records.iter().any(|record| record.progress) {
        return;
    }
    // uuid → its first record.
    let mut index_of: Vec<u32> = vec![NONE; uuid_count];
    for (index, record) in records.iter().enumerate().rev() {
        if let Some(slot) = record.uuid.and_then(|uuid| index_of.get_mut(uuid.index())) {
            *slot = u32::try_from(index).unwrap_or(NONE);
        }
    }
    let record_of = |sym: Sym| -> Option<usize> {
        match index_of.get(sym.index()) {
            Some(&NONE) | None => None,
            Some(&index) => usize::try_from(index).ok(),
        }
    };
    // The last record with a uuid written so far that is not progress, per side (main, sidechain).
    let mut last_written: [Option<usize>; 2] = [None, None];
    for index in 0..records.len() {
        if records[index].progress {
            continue;
        }
        let side = usize::from(records[index].sidechain);
        let progress_parent = records[index]
            .parent_uuid
            .and_then(record_of)
            .filter(|&parent| records[parent].progress);
        if let Some(parent) = progress_parent
            && let Some(anchor) = past_progress(records, &record_of, parent)
        {
            let continued = last_written[side]
                .filter(|&last| descends_from(records, &record_of, last, anchor))
                .unwrap_or(anchor);
            records[index].parent_uuid = records[continued].uuid;
        }
        if records[index].uuid.is_some() {
            last_written[side] = Some(index);
        }
    }
}

/// The nearest ancestor of the progress record at `index` that is not progress.
fn past_progress(
    records: &[Record],
    record_of: &impl Fn(Sym) -> Option<usize>,
    mut index: usize,
) -> Option<usize> {
    for _ in 0..records.len() {
        if !records[index].progress {
            return Some(index);
        }
        index = records[index].parent_uuid.and_then(record_of)?;
    }
    None
}

/// Whether the record at `index` is the record at `ancestor` or under it, following parents (a
/// parent written before `ancestor` ends the walk).
fn descends_from(
    records: &[Record],
    record_of: &impl Fn(Sym) -> Option<usize>,
    mut index: usize,
    ancestor: usize,
) -> bool {
    for _ in 0..records.len() {
        if index == ancestor {
            return true;
        }
        if index < ancestor {
            return false;
        }
        match records[index].parent_uuid.and_then(record_of) {
            Some(parent) => index = parent,
            None => return false,
        }
    }
    false
}
