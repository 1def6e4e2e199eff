//! An earlier summary read back into the offline format's sections, whatever format it was written
//! in: ctxkit's own headings, a model's free headings (`## Branch`, `## Key Files`), or Claude
//! Code's numbered sections (`1. Primary Request and Intent:`). Every item lands in some section;
//! headings it does not know go to Critical Context with the heading as a label.

use crate::extract::{Conversation, Part, identifiers, sentences};
use crate::offline::measures::stated_values;
use crate::offline::text::{clip, strip_prefix_ignoring_case};

/// Where an earlier summary's items go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    Goal,
    Constraints,
    Done,
    InProgress,
    Blocked,
    Decisions,
    Next,
    Critical,
}

/// An earlier summary's items by slot, in their order.
#[derive(Debug, Default, Clone)]
pub(crate) struct Previous {
    pub(crate) items: Vec<(Slot, String)>,
}

impl Previous {
    pub(crate) fn of(&self, slot: Slot) -> impl Iterator<Item = &str> {
        self.items
            .iter()
            .filter(move |(item_slot, _)| *item_slot == slot)
            .map(|(_, item)| item.as_str())
    }
}

/// The slot of a heading, and whether its items need the heading as a label.
fn slot_of(heading: &str) -> (Slot, bool) {
    let lower = heading.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|word| lower.contains(word));
    if has(&[
        "pending",
        "in progress",
        "current work",
        "current task",
        "current state",
    ]) {
        (Slot::InProgress, false)
    } else if has(&["next step", "next", "todo", "remaining"]) {
        (Slot::Next, false)
    } else if has(&["blocked", "blocker", "open issue", "problem"]) && !has(&["solving"]) {
        (Slot::Blocked, false)
    } else if has(&[
        "done",
        "completed",
        "accomplished",
        "early progress",
        "progress",
        "fixes",
        "status",
    ]) {
        (Slot::Done, false)
    } else if has(&["decision", "problem solving", "approach"]) {
        (Slot::Decisions, false)
    } else if has(&["constraint", "preference", "requirement", "rules"]) {
        (Slot::Constraints, false)
    } else if has(&[
        "goal",
        "request",
        "intent",
        "objective",
        "user messages",
        "task",
    ]) {
        (Slot::Goal, false)
    } else if has(&["critical context", "context for suffix"]) {
        (Slot::Critical, false)
    } else {
        (Slot::Critical, true)
    }
}

/// The heading text of a line, if it is one: `#…`, `1. Title:` at column 0, or `**Title:**` alone.
fn heading_of(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix('#') {
        return Some(rest.trim_start_matches('#').trim());
    }
    let numbered = line
        .split_once(". ")
        .filter(|(number, _)| !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
        .map(|(_, rest)| rest.trim());
    if let Some(title) = numbered
        && title.ends_with(':')
        && title.chars().next().is_some_and(char::is_uppercase)
        && title.split_whitespace().count() <= 8
    {
        return Some(title.trim_end_matches(':'));
    }
    let bold = line.trim();
    (bold.starts_with("**") && bold.ends_with(":**") && bold.len() > 5)
        .then(|| bold.trim_matches('*').trim_end_matches(':'))
}

/// Whether an item only says a section is empty (`n/a`, `None.`, `-`, `—`, `TBD`, `...`).
fn is_placeholder(item: &str) -> bool {
    let bare = item
        .trim_matches(|c: char| c.is_whitespace() || "()[]*_.:".contains(c))
        .to_lowercase();
    matches!(
        bare.as_str(),
        "" | "n/a"
            | "na"
            | "none"
            | "none yet"
            | "none so far"
            | "nothing"
            | "nothing yet"
            | "tbd"
            | "-"
            | "—"
            | "–"
            | "无"
            | "暂无"
    )
}

/// The longest line that the items of one labelled section of context are folded into.
const FOLDED_LINE_CHARS: usize = 480;

/// The most sentences of an earlier free-prose summary carried as context.
const PROSE_SENTENCES: usize = 10;

/// Whether a sentence of prose holds something exact: code, an identifier or a number with its
/// unit (`512 MB`; a bare count is not enough).
fn holds_specifics(sentence: &str) -> bool {
    sentence.contains('`') || stated_values(sentence) > 0 || !identifiers(sentence).is_empty()
}

/// Reads an earlier summary (without ctxkit's file blocks or notices).
pub(crate) fn parse_previous(text: &str) -> Previous {
    // Claude Code writes its scratch analysis before a `Summary:` line; only what follows counts.
    let text = match text.find("\nSummary:\n") {
        Some(start) if text[..start].contains("Analysis:") => &text[start + "\nSummary:\n".len()..],
        _ => text,
    };
    let mut previous = Previous::default();
    let mut last_indent: Option<usize> = None;
    let mut slot = (Slot::Goal, false);
    let mut label = String::new();
    let mut fence: Option<usize> = None;
    let mut in_file_block = false;
    // Whether the last item was a labelled item of the current heading.
    let mut labelled_run = false;
    let mut seen_heading = false;
    let mut carried_prose = 0;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("<read-files>") || trimmed.starts_with("<modified-files>") {
            in_file_block = true;
            continue;
        }
        if trimmed.starts_with("</read-files>") || trimmed.starts_with("</modified-files>") {
            in_file_block = false;
            continue;
        }
        if trimmed.starts_with("```") {
            match fence.take() {
                Some(lines) if lines > 0 => previous.items.push((
                    Slot::Critical,
                    format!("{label}: a {lines}-line block in the earlier summary (not repeated)")
                        .trim_start_matches(": ")
                        .to_owned(),
                )),
                Some(_) => {}
                None => fence = Some(0),
            }
            continue;
        }
        if let Some(lines) = fence.as_mut() {
            *lines += 1;
            continue;
        }
        if in_file_block
            || trimmed.is_empty()
            || trimmed == "---"
            || (trimmed.starts_with('_') && trimmed.ends_with('_'))
            || trimmed.starts_with('<')
        {
            continue;
        }
        if let Some(heading) = heading_of(line) {
            seen_heading = true;
            last_indent = None;
            let (new_slot, labelled) = slot_of(heading);
            // A subheading inside a known section keeps that section (`### Agreed Structure`).
            if !(labelled && line.starts_with("###") && !slot.1) {
                slot = (new_slot, labelled);
            }
            label = heading.trim_matches(['*', ':', ' ']).to_owned();
            labelled_run = false;
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let is_bullet = trimmed.starts_with(['-', '*', '•']);
        // A sub-bullet belongs to the item above it.
        if is_bullet
            && last_indent.is_some_and(|above| indent > above)
            && let Some((_, above)) = previous.items.last_mut()
        {
            let sub = trimmed.trim_start_matches(['-', '*', '•']).trim();
            // A folded line of context has room for its items' sub-bullets.
            let limit = if labelled_run {
                FOLDED_LINE_CHARS + 160
            } else {
                400
            };
            *above = clip(&format!("{above} — {sub}"), limit);
            continue;
        }
        last_indent = is_bullet.then_some(indent);
        let item = trimmed
            .trim_start_matches(['-', '*', '•'])
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches(". ")
            .trim_start_matches("[x]")
            .trim_start_matches("[X]")
            .trim_start_matches("[ ]")
            .trim();
        let lower = item.to_lowercase();
        if item.is_empty() || lower.starts_with("(none") || is_placeholder(item) {
            continue;
        }
        // Free prose before any heading: its first sentence is the goal, and the sentences that
        // hold identifiers or numbers are carried whole, not cut off with the paragraph.
        if !seen_heading && !is_bullet && slot.0 == Slot::Goal {
            let all = sentences(item);
            if all.len() > 1 {
                let mut rest = all.into_iter();
                if !previous.items.iter().any(|(slot, _)| *slot == Slot::Goal)
                    && let Some(first) = rest.next()
                {
                    previous.items.push((Slot::Goal, clip(&first, 300)));
                }
                for sentence in rest {
                    if carried_prose < PROSE_SENTENCES && holds_specifics(&sentence) {
                        carried_prose += 1;
                        previous.items.push((Slot::Critical, clip(&sentence, 300)));
                    }
                }
                continue;
            }
        }
        let item = clip(item, 300);
        // An item that says what it is (`Pending: …`) goes where it says.
        let stated = [
            ("pending:", Slot::InProgress),
            ("in progress:", Slot::InProgress),
            ("next:", Slot::Next),
            ("todo:", Slot::Next),
            ("blocked:", Slot::Blocked),
            ("done:", Slot::Done),
            ("note:", Slot::Critical),
        ]
        .into_iter()
        .find_map(|(prefix, stated_slot)| {
            strip_prefix_ignoring_case(&item, prefix).map(|rest| (prefix, stated_slot, rest.trim()))
        });
        let (item_slot, item) = match stated {
            Some(("note:", stated_slot, _)) => (stated_slot, item.clone()),
            Some((_, stated_slot, rest)) => (stated_slot, rest.to_owned()),
            None if slot.1 && !label.is_empty() => {
                // The items of a section of context share one line of its label, bounded.
                let head = format!("{label}: ");
                if let Some((last_slot, line)) = previous.items.last_mut()
                    && labelled_run
                    && *last_slot == slot.0
                    && line.starts_with(&head)
                    && line.chars().count() + item.chars().count() <= FOLDED_LINE_CHARS
                {
                    line.push_str("; ");
                    line.push_str(&item);
                    continue;
                }
                labelled_run = true;
                (slot.0, format!("{head}{item}"))
            }
            None => (slot.0, item.clone()),
        };
        previous.items.push((item_slot, item));
    }
    previous
}

/// The inner text of a branch or compaction summary that reached the model as a user message, and
/// whether it was a branch summary.
pub(crate) fn carried(text: &str) -> Option<(&str, bool)> {
    for (prefix, branch) in [
        (ctxkit_session::BRANCH_SUMMARY_PREFIX, true),
        (ctxkit_session::COMPACTION_SUMMARY_PREFIX, false),
    ] {
        if let Some(inner) = text.strip_prefix(prefix) {
            return Some((
                inner.trim_end().trim_end_matches("</summary>").trim(),
                branch,
            ));
        }
    }
    None
}

/// The earlier summaries: the `<previous-summary>` and compaction summaries inside the span; branch
/// summaries come back separately.
pub(crate) fn earlier(conversation: &Conversation) -> (Previous, Vec<String>) {
    let mut previous = conversation
        .previous_summary
        .as_deref()
        .map(parse_previous)
        .unwrap_or_default();
    let mut branches = Vec::new();
    for part in &conversation.parts {
        if let Part::User(text) = part
            && let Some((inner, branch)) = carried(text)
        {
            let parsed = parse_previous(inner);
            if branch {
                branches.extend(parsed.items.into_iter().map(|(_, item)| item).take(4));
            } else {
                previous.items.extend(parsed.items);
            }
        }
    }
    (previous, branches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ctxkit_free_and_numbered_formats() {
        let ours = "_Extractive summary…_\n\n## Goal\n- Fix `parse_0`\n\n## Progress\n### Done\n- [x] Edited `src/a.rs`\n\n### In Progress\n- [ ] Run tests\n\n## Critical Context\n- Branch: `fix`\n\n<read-files>\nsrc/a.rs\n</read-files>";
        let previous = parse_previous(ours);
        assert_eq!(
            previous.of(Slot::Goal).collect::<Vec<_>>(),
            ["Fix `parse_0`"]
        );
        assert_eq!(
            previous.of(Slot::Done).collect::<Vec<_>>(),
            ["Edited `src/a.rs`"]
        );
        assert_eq!(
            previous.of(Slot::InProgress).collect::<Vec<_>>(),
            ["Run tests"]
        );
        assert_eq!(
            previous.of(Slot::Critical).collect::<Vec<_>>(),
            ["Branch: `fix`"]
        );

        let free = "# Checkpoint\n\n## Branch\n`refactor` in `/w/pi`\n\n## Current Task: Moves\nMove files.\n\n### Agreed Structure\n```\nsrc/\n```\n\n## User Preferences\n- **E2E tests only** - no unit tests";
        let previous = parse_previous(free);
        assert_eq!(
            previous.of(Slot::Critical).collect::<Vec<_>>(),
            [
                "Branch: `refactor` in `/w/pi`",
                "Agreed Structure: a 1-line block in the earlier summary (not repeated)"
            ]
        );
        assert_eq!(
            previous.of(Slot::InProgress).collect::<Vec<_>>(),
            ["Move files."]
        );
        assert_eq!(
            previous.of(Slot::Constraints).collect::<Vec<_>>(),
            ["**E2E tests only** - no unit tests"]
        );

        let prose = "The user moves the `resize` job to a function in `infra/fn/`. State is kept in `tf-state`. We talked it over at length.\n\nThe provider stays at `aws ~> 5.31`. Memory is 512 MB. What remains is 1 queue.";
        let previous = parse_previous(prose);
        assert_eq!(
            previous.of(Slot::Goal).collect::<Vec<_>>(),
            ["The user moves the `resize` job to a function in `infra/fn/`."]
        );
        assert_eq!(
            previous.of(Slot::Critical).collect::<Vec<_>>(),
            [
                "State is kept in `tf-state`.",
                "The provider stays at `aws ~> 5.31`.",
                "Memory is 512 MB."
            ]
        );

        let claude = "1. Primary Request and Intent:\n   The user wants X fixed.\n\n2. Key Technical Concepts:\n   - Tokio\n   - `axum` 0.7 router\n\n3. Files and Code Sections:\n   - src/a.rs — new `Limiter`\n      - keyed by tenant\n   - src/b.rs — wired in\n\n7. Pending Tasks:\n   - Write docs\n\n9. Optional Next Step:\n   Run `cargo test`.";
        let previous = parse_previous(claude);
        assert_eq!(
            previous.of(Slot::Goal).collect::<Vec<_>>(),
            ["The user wants X fixed."]
        );
        assert_eq!(
            previous.of(Slot::Critical).collect::<Vec<_>>(),
            // One line per section of context, its items folded.
            [
                "Key Technical Concepts: Tokio; `axum` 0.7 router",
                "Files and Code Sections: src/a.rs — new `Limiter` — keyed by tenant; src/b.rs — wired in"
            ]
        );
        assert_eq!(
            previous.of(Slot::InProgress).collect::<Vec<_>>(),
            ["Write docs"]
        );
        assert_eq!(
            previous.of(Slot::Next).collect::<Vec<_>>(),
            ["Run `cargo test`."]
        );
    }
}
