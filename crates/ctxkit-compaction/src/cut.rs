//! Where to cut a projected path (Pi 0.87's `findProjectedCutPoint`) so that roughly
//! `keep_recent_tokens` of recent messages stay verbatim: never at a tool result, stepping back over
//! entries that project nothing, past an omitted recovery attempt at the end, and noticing when the
//! cut splits a turn.

/// What the cut-point walk needs to know of each entry of the projected path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CutEntry<'a> {
    /// The entry's id.
    pub id: &'a str,
    /// The estimate of every message the entry projects (0 when it projects none).
    pub tokens: u64,
    /// A `compaction` entry: never a cut point, never walked over.
    pub is_compaction: bool,
    /// It projects a user-side or assistant message (not only tool results or system messages).
    pub is_cut_point: bool,
    /// It projects a message that starts a turn: user, shell run, extension message, summary.
    pub starts_turn: bool,
    /// It projects at least one message after edits.
    pub visible: bool,
    /// It would project a message without edits.
    pub intrinsically_visible: bool,
    /// A `message` entry holding an assistant reply.
    pub is_assistant_message: bool,
    /// For a `context_edit` with a replacement (not an omission): its target.
    pub replaces: Option<&'a str>,
}

impl CutEntry<'_> {
    /// Projected nothing although it would without edits: an omitted entry.
    fn is_omitted(&self) -> bool {
        self.intrinsically_visible && !self.visible
    }
}

/// The result of [`find_cut_point`]; positions index the entries given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// The first entry kept verbatim.
    pub first_kept: usize,
    /// The start of the turn the cut falls in, when the cut does not start a turn.
    pub turn_start: Option<usize>,
    /// The cut falls inside a turn (the turn's start is before it).
    pub is_split_turn: bool,
}

/// Whether an entry may start the kept segment.
pub fn is_valid_cut_point(entry: &CutEntry<'_>) -> bool {
    !entry.is_compaction && entry.is_cut_point
}

fn starts_turn(entry: &CutEntry<'_>) -> bool {
    !entry.is_compaction && entry.starts_turn
}

/// The nearest turn start at or before `position`, not before `start`.
pub fn find_turn_start(entries: &[CutEntry<'_>], position: usize, start: usize) -> Option<usize> {
    (start..=position)
        .rev()
        .find(|&index| entries.get(index).is_some_and(starts_turn))
}

/// Pi 0.87's cut over `entries[start..end]`.
pub fn find_cut_point(
    entries: &[CutEntry<'_>],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let end = end.min(entries.len());
    let cut_points: Vec<usize> = (start..end)
        .filter(|&index| is_valid_cut_point(&entries[index]))
        .collect();
    let (Some(&first_cut_point), Some(&last_cut_point)) = (cut_points.first(), cut_points.last())
    else {
        return CutPoint {
            first_kept: start,
            turn_start: None,
            is_split_turn: false,
        };
    };
    let mut cut = first_cut_point;
    let mut accumulated: u64 = 0;
    let mut exceeded_budget = false;
    for index in (start..end).rev() {
        if entries[index].tokens == 0 {
            continue;
        }
        accumulated = accumulated.saturating_add(entries[index].tokens);
        if accumulated >= keep_recent_tokens {
            exceeded_budget = true;
            // The closest cut point at or after the crossing; trailing tool results over budget
            // keep the reply that called them.
            cut = cut_points
                .iter()
                .copied()
                .find(|&point| point >= index)
                .unwrap_or(last_cut_point);
            break;
        }
    }
    if exceeded_budget && is_recovery_omission(&entries[(cut + 1).min(end)..end]) {
        cut += 1;
    }
    // The session's first message larger than the whole keep budget (an imported agent's
    // instructions, a pasted document) would be kept with nothing before it to summarize, and the
    // context could never shrink (Pi compacts nothing there). It is summarized: the cut moves past
    // it. (After a compaction the first kept message is left to Pi's rule and the escalation.)
    let nothing_before = entries[..cut].iter().all(|entry| entry.tokens == 0);
    let oversized = entries
        .get(cut)
        .is_some_and(|entry| entry.tokens >= keep_recent_tokens);
    // The cut moves to the next turn's start only: a turn in progress (the prompt being
    // answered) is never summarized for it.
    if exceeded_budget && nothing_before && oversized {
        let next_turn = cut_points
            .iter()
            .copied()
            .find(|&point| point > cut && starts_turn(&entries[point]));
        if let Some(next) = next_turn {
            cut = next;
        }
    }
    // Keep the entries that project nothing (settings, labels, edits…) leading up to the cut.
    while cut > start {
        let previous = &entries[cut - 1];
        if previous.is_compaction || previous.visible {
            break;
        }
        cut -= 1;
    }
    let cut_starts_turn = entries.get(cut).is_some_and(starts_turn);
    let turn_start = if cut_starts_turn {
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

/// After the cut only an omitted assistant attempt (a recovery retry), omissions and invisible
/// entries: nothing of it would reach the model, so the cut moves past the attempt.
fn is_recovery_omission(suffix: &[CutEntry<'_>]) -> bool {
    let omitted: Vec<&str> = suffix
        .iter()
        .filter(|entry| entry.is_omitted())
        .map(|entry| entry.id)
        .collect();
    let replaces_something_else = suffix.iter().any(|entry| {
        entry
            .replaces
            .is_some_and(|target| !omitted.contains(&target))
    });
    !replaces_something_else
        && suffix
            .iter()
            .any(|entry| entry.is_assistant_message && entry.is_omitted())
        && suffix.iter().all(|entry| {
            !entry.is_compaction && (!entry.intrinsically_visible || entry.is_omitted())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str, tokens: u64, turn: bool) -> CutEntry<'_> {
        CutEntry {
            id,
            tokens,
            is_cut_point: true,
            starts_turn: turn,
            visible: true,
            intrinsically_visible: true,
            is_assistant_message: !turn,
            ..CutEntry::default()
        }
    }

    #[test]
    fn an_omitted_retry_at_the_end_is_cut_past() {
        let mut omitted = message("a2", 0, false);
        omitted.visible = false;
        omitted.is_cut_point = false;
        let edit = CutEntry {
            id: "e",
            ..CutEntry::default()
        };
        let entries = [
            message("u1", 100, true),
            message("a1", 100, false),
            message("u2", 100, true),
            omitted,
            edit,
        ];
        let cut = find_cut_point(&entries, 0, entries.len(), 50);
        // The budget is crossed at u2; everything after it is the omitted attempt and its edit.
        assert_eq!(cut.first_kept, 3);
        assert!(cut.is_split_turn);
        assert_eq!(cut.turn_start, Some(2));
        let replaced = CutEntry {
            id: "r",
            replaces: Some("u1"),
            ..CutEntry::default()
        };
        let entries = [entries[0], entries[1], entries[2], omitted, replaced];
        assert_eq!(find_cut_point(&entries, 0, entries.len(), 50).first_kept, 2);
    }

    /// QA (2026-12-07): an imported Codex session opens with a 14k-token message of the agent's
    /// instructions and holds 3k after it; with a keep budget of 10k the cut fell at that first
    /// message, nothing was before it, and the session could not be compacted under its window.
    #[test]
    fn a_first_message_larger_than_the_keep_budget_is_summarized() {
        let entries = [
            message("instructions", 14_000, true),
            message("u1", 1_000, true),
            message("a1", 1_000, false),
            message("u2", 1_000, true),
        ];
        assert_eq!(
            find_cut_point(&entries, 0, entries.len(), 10_000).first_kept,
            1
        );
        // One that fits the budget is kept, as Pi keeps it: the rest is what is summarized.
        let entries = [
            message("u0", 9_000, true),
            message("u1", 1_000, true),
            message("a1", 1_000, false),
        ];
        assert_eq!(
            find_cut_point(&entries, 0, entries.len(), 10_000).first_kept,
            0
        );
    }

    #[test]
    fn summaries_and_extension_messages_start_turns() {
        let entries = [message("u1", 100, true), message("c", 100, true)];
        let cut = find_cut_point(&entries, 0, entries.len(), 50);
        assert_eq!(cut.first_kept, 1);
        assert!(!cut.is_split_turn);
    }
}
