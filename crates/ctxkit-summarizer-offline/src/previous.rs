//! Earlier summaries (the request's and those the span carries) read back by heading, so their
//! items are carried into the new summary's sections. Any format: ctxkit's and Pi's headings,
//! a model's free headings, Claude Code's numbered sections.

use crate::text::one_line;

/// Where an earlier item goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Goal,
    Constraints,
    Done,
    InProgress,
    Blocked,
    Decisions,
    NextSteps,
    Context,
}

/// One item of an earlier summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierItem {
    pub slot: Slot,
    pub text: String,
}

fn slot_of(heading: &str) -> Slot {
    let lower = heading.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|word| lower.contains(word));
    if has(&["goal", "request", "intent", "task"]) && !has(&["pending"]) {
        Slot::Goal
    } else if has(&["constraint", "preference", "rule"]) {
        Slot::Constraints
    } else if has(&["blocked", "blocker"]) {
        Slot::Blocked
    } else if has(&["in progress", "current work", "pending", "status"]) {
        Slot::InProgress
    } else if has(&["done", "completed", "progress", "errors and fixes"]) {
        Slot::Done
    } else if has(&["decision", "problem solving"]) {
        Slot::Decisions
    } else if has(&["next"]) {
        Slot::NextSteps
    } else {
        Slot::Context
    }
}

/// A heading line: markdown (`## x`, `### x`) or a numbered section (`3. Files and Code Sections:`).
fn heading(line: &str) -> Option<&str> {
    let trimmed = line.trim();
    if let Some(text) = trimmed.strip_prefix('#') {
        return Some(text.trim_start_matches('#').trim());
    }
    let (number, rest) = trimmed.split_once(". ")?;
    let numbered = !number.is_empty() && number.chars().all(|c| c.is_ascii_digit());
    let titled = rest.ends_with(':') && rest.chars().next().is_some_and(char::is_uppercase);
    (numbered && titled && rest.len() <= 60).then(|| rest.trim_end_matches(':'))
}

/// Lines that carry nothing: placeholders, notices, the scratch of Claude Code's summaries, the
/// focus an earlier summary was written for (an instruction of its own request, not a goal).
fn is_filler(text: &str) -> bool {
    let lower = text.to_lowercase();
    text.starts_with('_')
        || text.starts_with('<')
        || ["(none", "none", "n/a", "-", "—", "tbd"].contains(&lower.as_str())
        || lower.starts_with("(none")
        || lower.starts_with("this session is being continued")
        || lower.starts_with("summary:")
        || lower.starts_with("focus for this summary:")
        || lower == "analysis:"
}

/// The tag a line opens when it is a block of its own (`<read-files>`), whose lines up to the
/// closing tag are a list the summary's files are tracked from, not items.
fn opened_block(line: &str) -> Option<&str> {
    let name = line.trim().strip_prefix('<')?.strip_suffix('>')?;
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then_some(name)
}

/// Headings of context sections that are the summary's own context (no label needed).
const CONTEXT_HEADINGS: &[&str] = &["critical context", "context needed to continue"];

/// Headings of an offline summary's closing steps: the last of its own span, earlier ones now.
const STEPS_HEADINGS: &[&str] = &["most recent steps", "last steps in full"];

/// The label a carried item of a context section gets: none for the summary's own context
/// (`## Critical Context`, a split turn's `## Context Needed to Continue`), `Earlier steps` for
/// the steps an offline summary ended with (`Last Steps in Full` carried into a later summary
/// named steps that are no longer the last), else the heading.
fn context_label(title: &str) -> Option<String> {
    let lower = title.to_lowercase();
    if title.is_empty() || CONTEXT_HEADINGS.iter().any(|own| lower.contains(own)) {
        None
    } else if STEPS_HEADINGS.contains(&lower.as_str()) {
        Some("Earlier steps".to_owned())
    } else {
        Some(title.to_owned())
    }
}

/// The mark an offline summary puts on its latest request.
const LATEST_MARK: &str = "**Latest:** ";
/// The label an offline summary puts on the assistant's last report, and the one it carries as.
const LAST_REPORT: &str = "Last report: ";
const EARLIER_REPORT: &str = "Earlier report: ";

/// An earlier item without the marks of what was latest in its own span: the new summary marks
/// its own latest request and last report, and an update that kept the earlier marks showed the
/// model three **Latest:** requests and two last reports.
fn unmarked(slot: Slot, text: String) -> String {
    match slot {
        Slot::Goal => match text.strip_prefix(LATEST_MARK) {
            Some(request) => request.to_owned(),
            None => text,
        },
        Slot::Context => match text.strip_prefix(LAST_REPORT) {
            Some(report) => format!("{EARLIER_REPORT}{report}"),
            None => text,
        },
        Slot::Constraints
        | Slot::Done
        | Slot::InProgress
        | Slot::Blocked
        | Slot::Decisions
        | Slot::NextSteps => text,
    }
}

/// The items of an earlier summary, each with the slot its heading names; text before any
/// heading is context.
pub fn earlier_items(summary: &str) -> Vec<EarlierItem> {
    let mut slot = Slot::Context;
    let mut label: Option<String> = None;
    let mut items = Vec::new();
    let mut in_fence = false;
    let mut scratch = false;
    let mut block: Option<String> = None;
    for line in summary.lines() {
        match line.trim() {
            "Analysis:" => scratch = true,
            "Summary:" => scratch = false,
            _ => {}
        }
        if scratch {
            continue;
        }
        if let Some(name) = &block {
            // A heading ends a block left open.
            let closed = line.trim() == format!("</{name}>");
            if closed || heading(line).is_some() {
                block = None;
            }
            if closed || heading(line).is_none() {
                continue;
            }
        }
        if let Some(name) = opened_block(line) {
            block = Some(name.to_owned());
            continue;
        }
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(title) = heading(line) {
            slot = slot_of(title);
            label = (slot == Slot::Context)
                .then(|| context_label(title))
                .flatten();
            continue;
        }
        let text = one_line(
            line.trim()
                .trim_start_matches(['-', '*', '•'])
                .trim_start()
                .trim_start_matches("[x]")
                .trim_start_matches("[ ]")
                .trim(),
        );
        if text.is_empty() || is_filler(&text) {
            continue;
        }
        let text = match &label {
            Some(label) => format!("{label}: {text}"),
            None => unmarked(slot, text),
        };
        items.push(EarlierItem { slot, text });
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_go_to_the_slot_their_heading_names_in_any_format() {
        let pi = "## Goal\nShip it\n\n## Constraints & Preferences\n- No new deps\n\n## Progress\n### Done\n- [x] Built\n\n### In Progress\n- [ ] Test\n\n### Blocked\n- (none)\n\n## Next Steps\n1. Push\n\n## Critical Context\n- Branch `x`";
        let items = earlier_items(pi);
        let slots: Vec<(Slot, &str)> = items
            .iter()
            .map(|item| (item.slot, item.text.as_str()))
            .collect();
        assert_eq!(
            slots,
            [
                (Slot::Goal, "Ship it"),
                (Slot::Constraints, "No new deps"),
                (Slot::Done, "Built"),
                (Slot::InProgress, "Test"),
                (Slot::NextSteps, "1. Push"),
                (Slot::Context, "Branch `x`"),
            ]
        );
        let claude = "Analysis:\nscratch\n\nSummary:\n1. Primary Request and Intent:\n   Show viewers\n\n2. Key Technical Concepts:\n   - Presence\n\n7. Pending Tasks:\n   - Render avatars\n```\ncode\n```";
        let items = earlier_items(claude);
        assert!(items.contains(&EarlierItem {
            slot: Slot::Goal,
            text: "Show viewers".into()
        }));
        assert!(items.contains(&EarlierItem {
            slot: Slot::Context,
            text: "Key Technical Concepts: Presence".into()
        }));
        assert!(items.contains(&EarlierItem {
            slot: Slot::InProgress,
            text: "Render avatars".into()
        }));
        assert!(!items.iter().any(|item| item.text.contains("code")));
    }

    /// An offline summary read back (a branch summary of a branch summary): its focus line and
    /// its file lists are not items; what its sections say is, and the steps it ended with (a
    /// later compaction keeps their names: leaving them out lost one identifier in eleven in the
    /// simulator's small run and gained none in the default one).
    #[test]
    fn an_offline_summary_s_focus_steps_and_file_lists_are_not_items() {
        let offline = "_Extractive summary written offline by ctxkit (no model was used)._\n\n## Goal\n- Focus for this summary: tests\n- **Latest:** Make the interval configurable.\n\n## Progress\n\n### Done\n- Changed: `src/lib.rs`\n\n## Critical Context\n- Names: `README.md`\n\n### Most Recent Steps\n- `cargo build` → no result yet\n\n### Last Steps in Full\n- $ cargo test → (no result yet)\n\n\n<read-files>\nREADME.md\n</read-files>\n\n<modified-files>\nsrc/lib.rs\n</modified-files>";
        let texts: Vec<(Slot, String)> = earlier_items(offline)
            .into_iter()
            .map(|item| (item.slot, item.text))
            .collect();
        assert_eq!(
            texts,
            [
                (Slot::Goal, "Make the interval configurable.".to_owned()),
                (Slot::Done, "Changed: `src/lib.rs`".to_owned()),
                (Slot::Context, "Names: `README.md`".to_owned()),
                (
                    Slot::Context,
                    "Earlier steps: `cargo build` → no result yet".to_owned()
                ),
                (
                    Slot::Context,
                    "Earlier steps: $ cargo test → (no result yet)".to_owned()
                ),
            ]
        );
        // A block left open ends at the next heading.
        let open = "<notes>\nscratch\n## Next Steps\n- Ship";
        assert_eq!(
            earlier_items(open),
            [EarlierItem {
                slot: Slot::NextSteps,
                text: "Ship".into()
            }]
        );
    }
}
