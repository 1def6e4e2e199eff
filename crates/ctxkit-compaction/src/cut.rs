//! Where to cut a path so that roughly `keep_recent_tokens` of recent messages stay verbatim: never at a
//! tool result, stepping back over settings entries, and noticing when the cut splits a turn.

use ctxkit_session::StoredEntry;

/// What the cut-point walk needs to know of each path entry.
#[derive(Debug, Clone, Copy)]
pub struct CutEntry<'a> {
    pub entry: &'a StoredEntry,
    /// The reference estimate of a `message` entry's message (0 for other entries).
    pub tokens: u64,
}

/// The result of [`find_cut_point`]; positions index the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// The first entry kept verbatim.
    pub first_kept: usize,
    /// The start of the turn the cut falls in, when the cut is not at a user message.
    pub turn_start: Option<usize>,
    /// The cut falls inside a turn (the turn's start is before it).
    pub is_split_turn: bool,
}

fn is_message(entry: &StoredEntry) -> bool {
    entry.type_name() == "message"
}

/// Entries a kept segment may start at: user-side and assistant messages, branch summaries and
/// extension messages; never a tool result.
pub fn is_valid_cut_point(entry: &StoredEntry) -> bool {
    match entry.type_name() {
        "message" => matches!(
            entry.role(),
            Some(
                "user"
                    | "assistant"
                    | "bashExecution"
                    | "custom"
                    | "branchSummary"
                    | "compactionSummary"
            )
        ),
        "branch_summary" | "custom_message" => true,
        _ => false,
    }
}

/// Entries that start a turn: user messages, shell runs, branch summaries, extension messages.
fn starts_turn(entry: &StoredEntry) -> bool {
    match entry.type_name() {
        "message" => matches!(entry.role(), Some("user" | "bashExecution")),
        "branch_summary" | "custom_message" => true,
        _ => false,
    }
}

/// The nearest turn start at or before `position`, not before `start`.
pub fn find_turn_start(entries: &[CutEntry<'_>], position: usize, start: usize) -> Option<usize> {
    (start..=position)
        .rev()
        .find(|&index| entries.get(index).is_some_and(|cut| starts_turn(cut.entry)))
}

/// The reference's `findCutPoint` over `entries[start..end]`.
pub fn find_cut_point(
    entries: &[CutEntry<'_>],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let end = end.min(entries.len());
    let cut_points: Vec<usize> = (start..end)
        .filter(|&index| is_valid_cut_point(entries[index].entry))
        .collect();
    let Some(&first_cut_point) = cut_points.first() else {
        return CutPoint {
            first_kept: start,
            turn_start: None,
            is_split_turn: false,
        };
    };
    let mut cut = first_cut_point;
    let mut accumulated = 0;
    for index in (start..end).rev() {
        if !is_message(entries[index].entry) {
            continue;
        }
        accumulated += entries[index].tokens;
        if accumulated >= keep_recent_tokens {
            if let Some(&point) = cut_points.iter().find(|&&point| point >= index) {
                cut = point;
            }
            break;
        }
    }
    // Keep the settings entries (model or thinking changes, labels…) that lead up to the cut.
    while cut > start {
        let previous = entries[cut - 1].entry;
        if previous.type_name() == "compaction" || is_message(previous) {
            break;
        }
        cut -= 1;
    }
    let at_user = entries
        .get(cut)
        .is_some_and(|cut| is_message(cut.entry) && cut.entry.role() == Some("user"));
    let turn_start = if at_user {
        None
    } else {
        find_turn_start(entries, cut, start)
    };
    CutPoint {
        first_kept: cut,
        turn_start,
        is_split_turn: turn_start.is_some(),
    }
}
