//! The default summarizer when no model is configured: deterministic and extractive. It reads the
//! serialized conversation of a request and fills the structured format from it — goals and
//! constraints from user messages, completed tool work, errors seen, decisions stated by the assistant,
//! exact paths and identifiers, the last request as the next step — within the request's token budget.

use std::collections::BTreeSet;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::extract::{Conversation, Part, identifiers, sentences};
use crate::summarizer::{
    Summarizer, SummarizerError, SummaryPurpose, SummaryRequest, SummaryResponse,
};
use crate::tokens::utf16_len;

/// The first line of every offline summary.
pub const OFFLINE_NOTICE: &str = "_Extractive summary written offline by ctxkit from the conversation itself (no model was used)._";

/// The offline, extractive summarizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineSummarizer;

impl Summarizer for OfflineSummarizer {
    fn name(&self) -> String {
        "offline".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn summarize(
        &self,
        request: SummaryRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        let text = summarize_offline(&request);
        Box::pin(async move { Ok(SummaryResponse { text, usage: None }) })
    }
}

/// One section of the summary: a heading and its items, most important first.
struct Section {
    heading: &'static str,
    items: Vec<String>,
    /// Numbered list (`1.`) instead of bullets.
    numbered: bool,
    /// Checkbox prefix for progress items.
    checkbox: Option<&'static str>,
}

impl Section {
    fn new(heading: &'static str) -> Self {
        Self {
            heading,
            items: Vec::new(),
            numbered: false,
            checkbox: None,
        }
    }

    fn push(&mut self, item: String) {
        let item = item.trim().to_owned();
        if !item.is_empty() && !self.items.contains(&item) {
            self.items.push(item);
        }
    }

    fn render(&self, limit: usize) -> String {
        let mut text = format!("{}\n", self.heading);
        if self.items.is_empty() {
            text.push_str("- (none)\n");
            return text;
        }
        for (index, item) in self.items.iter().take(limit).enumerate() {
            match (self.numbered, self.checkbox) {
                (true, _) => text.push_str(&format!("{}. {item}\n", index + 1)),
                (false, Some(checkbox)) => text.push_str(&format!("- {checkbox} {item}\n")),
                (false, None) => text.push_str(&format!("- {item}\n")),
            }
        }
        text
    }
}

/// At most `limit` UTF-16 units of `text` on one line, with `…` when cut.
fn clip(text: &str, limit: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if utf16_len(&flat) <= limit {
        return flat;
    }
    let mut out = String::new();
    for character in flat.chars() {
        if utf16_len(&out) + character.len_utf16() >= limit {
            break;
        }
        out.push(character);
    }
    out.push('…');
    out
}

const CONSTRAINT_WORDS: &[&str] = &[
    "must",
    "don't",
    "do not",
    "never",
    "always",
    "prefer",
    "should",
    "without",
    "avoid",
    "make sure",
    "instead of",
    "only use",
    "keep the",
    "no more than",
    "at most",
    "at least",
];
const DECISION_WORDS: &[&str] = &[
    "decided",
    "i'll use",
    "i will use",
    "we'll use",
    "instead of",
    "because",
    "going with",
    "chose",
    "choose",
    "plan:",
    "approach",
    "rather than",
    "switch to",
];
const DONE_WORDS: &[&str] = &[
    "fixed",
    "added",
    "implemented",
    "created",
    "updated",
    "removed",
    "renamed",
    "replaced",
    "refactored",
    "all tests pass",
    "tests pass",
    "now passes",
    "completed",
    "finished",
];
/// Sentences that announce work rather than report it.
const ANNOUNCEMENTS: &[&str] = &[
    "let me",
    "let's",
    "now let",
    "i'll",
    "i will",
    "i'm going",
    "next,",
    "first,",
];

/// Whether a sentence is worth keeping as a statement: not a shell prompt, command echo, code line or
/// announcement, and more than two words.
fn is_statement(sentence: &str) -> bool {
    let trimmed = sentence.trim();
    let lower = trimmed.to_lowercase();
    let words = trimmed.split_whitespace().count();
    words > 2
        && !trimmed.starts_with(['$', '>', '/', '#', '`', '{', '}', '(', '|', '-'])
        && !trimmed.ends_with(':')
        && !trimmed.contains('➜')
        && !lower.starts_with("error:")
        && !lower.starts_with("throw ")
        && !lower.starts_with("this.")
        && !ANNOUNCEMENTS.iter().any(|prefix| lower.starts_with(prefix))
}

/// Marks of an error message (case-sensitive, so `isError: boolean` in code does not count).
const ERROR_WORDS: &[&str] = &[
    "error:",
    "Error:",
    "ERROR",
    "error[",
    "failed",
    "FAILED",
    "panicked",
    "Traceback",
    "Exception",
    "not found",
    "No such file",
    "cannot ",
    "Cannot ",
];

/// Whether a tool-output line reads as an error message rather than code that mentions errors.
fn is_error_line(line: &str) -> bool {
    let trimmed = line.trim();
    !trimmed.is_empty()
        && !trimmed.starts_with(['?', '|', '.', '}', '{', '(', ')', '/', '*', '#'])
        && !trimmed.contains("=>")
        && ERROR_WORDS.iter().any(|word| trimmed.contains(word))
}

fn contains_any(text: &str, words: &[&str]) -> bool {
    let lower = text.to_lowercase();
    words.iter().any(|word| lower.contains(word))
}

/// Builds the summary text for a request.
pub fn summarize_offline(request: &SummaryRequest) -> String {
    let conversation = Conversation::from_request(&request.user_text);
    let budget_units = usize::try_from(request.max_tokens)
        .unwrap_or(usize::MAX)
        .saturating_mul(4);
    let sections = match request.purpose {
        SummaryPurpose::TurnPrefix => turn_prefix_sections(&conversation),
        SummaryPurpose::History | SummaryPurpose::Branch => history_sections(&conversation),
    };
    render_within(&sections, budget_units)
}

fn history_sections(conversation: &Conversation) -> Vec<Section> {
    let previous = conversation.previous_sections();
    let carried = |heading: &str| {
        previous
            .iter()
            .find(|(name, _)| name == heading)
            .map(|(_, items)| items.clone())
            .unwrap_or_default()
    };

    let mut goal = Section::new("## Goal");
    let mut constraints = Section::new("## Constraints & Preferences");
    let mut done = Section {
        checkbox: Some("[x]"),
        ..Section::new("### Done")
    };
    let mut in_progress = Section {
        checkbox: Some("[ ]"),
        ..Section::new("### In Progress")
    };
    let mut blocked = Section::new("### Blocked");
    let mut decisions = Section::new("## Key Decisions");
    let mut next = Section {
        numbered: true,
        ..Section::new("## Next Steps")
    };
    let mut critical = Section::new("## Critical Context");

    for item in carried("## Goal") {
        goal.push(item);
    }
    for item in carried("## Constraints & Preferences") {
        constraints.push(item);
    }
    for item in carried("### Done")
        .into_iter()
        .chain(carried("### In Progress"))
    {
        done.push(item);
    }
    for item in carried("## Key Decisions") {
        decisions.push(item);
    }
    for item in carried("## Critical Context") {
        critical.push(item);
    }

    // Shell runs reach the model as user text (`Ran \`cmd\``); they are work, not requests.
    let users: Vec<&str> = conversation
        .parts
        .iter()
        .filter_map(|part| match part {
            // Slash commands (`/mode`) are interface actions, not requests.
            Part::User(text)
                if !is_shell_run(text)
                    && carried_summary(text).is_none()
                    && !text.trim_start().starts_with('/') =>
            {
                Some(text.as_str())
            }
            Part::User(_)
            | Part::Assistant(_)
            | Part::Thinking(_)
            | Part::ToolCalls(_)
            | Part::ToolResult(_) => None,
        })
        .collect();
    for text in users.iter().take(3) {
        goal.push(clip(text, 300));
    }
    if let Some(focus) = &conversation.focus {
        goal.push(format!("Focus for this summary: {}", clip(focus, 200)));
    }
    for text in &users {
        for sentence in sentences(text) {
            if is_statement(&sentence) && contains_any(&sentence, CONSTRAINT_WORDS) {
                constraints.push(clip(&sentence, 200));
            }
        }
    }

    let mut errors = Vec::new();
    let mut work = ToolWork::default();
    for part in &conversation.parts {
        match part {
            Part::ToolCalls(calls) => {
                for call in calls {
                    work.add(call);
                }
            }
            Part::User(text) if carried_summary(text).is_some() => {
                if let Some(inner) = carried_summary(text) {
                    critical.push(format!("From an earlier summary: {}", clip(inner, 400)));
                }
            }
            Part::User(text) if is_shell_run(text) => {
                if let Some(command) = text
                    .strip_prefix("Ran `")
                    .and_then(|rest| rest.split('`').next())
                {
                    work.add_shell(command);
                }
                for line in text.lines().skip(1) {
                    if is_error_line(line) {
                        errors.push(clip(line.trim(), 200));
                    }
                }
            }
            Part::Assistant(text) => {
                for sentence in sentences(text)
                    .into_iter()
                    .filter(|sentence| is_statement(sentence))
                {
                    if contains_any(&sentence, DECISION_WORDS) {
                        decisions.push(clip(&sentence, 220));
                    } else if contains_any(&sentence, DONE_WORDS) {
                        done.push(clip(&sentence, 200));
                    }
                }
            }
            Part::ToolResult(text) => {
                for line in text.lines() {
                    if is_error_line(line) {
                        errors.push(clip(line.trim(), 200));
                    }
                }
            }
            Part::User(_) | Part::Thinking(_) => {}
        }
    }
    for item in work.items() {
        done.push(item);
    }
    for error in errors.iter().rev().take(5).rev() {
        blocked.push(format!("Seen: {error}"));
    }
    if let Some(Part::Assistant(text)) = conversation
        .parts
        .iter()
        .rev()
        .find(|part| matches!(part, Part::Assistant(_)))
    {
        in_progress.push(format!("Last assistant reply: {}", clip(text, 240)));
    }
    match users.last() {
        Some(last) => next.push(format!(
            "Continue with the latest request: {}",
            clip(last, 240)
        )),
        None => {
            for item in carried("## Next Steps") {
                next.push(item);
            }
        }
    }

    let mut seen = BTreeSet::new();
    for item in &critical.items {
        seen.insert(item.clone());
    }
    for identifier in identifiers(&conversation.text) {
        let item = format!("`{identifier}`");
        if seen.insert(item.clone()) {
            critical.push(item);
        }
    }
    for error in &errors {
        critical.push(format!("Error text: {error}"));
    }
    vec![
        goal,
        constraints,
        Section::new("## Progress"),
        done,
        in_progress,
        blocked,
        decisions,
        next,
        critical,
    ]
}

fn turn_prefix_sections(conversation: &Conversation) -> Vec<Section> {
    let mut request = Section::new("## Original Request");
    let mut early = Section::new("## Early Progress");
    let mut context = Section::new("## Context for Suffix");
    for part in &conversation.parts {
        match part {
            Part::User(text) => request.push(clip(text, 400)),
            Part::ToolCalls(calls) => {
                let mut work = ToolWork::default();
                for call in calls {
                    work.add(call);
                }
                for item in work.items() {
                    early.push(item);
                }
            }
            Part::Assistant(text) => early.push(clip(text, 240)),
            Part::Thinking(_) | Part::ToolResult(_) => {}
        }
    }
    for identifier in identifiers(&conversation.text) {
        context.push(format!("`{identifier}`"));
    }
    vec![request, early, context]
}

fn is_shell_run(text: &str) -> bool {
    text.starts_with("Ran `")
}

/// The inner text of a branch or compaction summary that reached the model as a user message.
fn carried_summary(text: &str) -> Option<&str> {
    let prefixes = [
        ctxkit_session::BRANCH_SUMMARY_PREFIX,
        ctxkit_session::COMPACTION_SUMMARY_PREFIX,
    ];
    let inner = prefixes
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))?;
    Some(inner.trim_end().trim_end_matches("</summary>").trim())
}

/// Tool calls grouped by what they did: `Edited \`path\` (3×)`, `Ran \`cargo test\``, in first-seen order.
#[derive(Debug, Default)]
struct ToolWork {
    items: Vec<(String, usize)>,
}

impl ToolWork {
    fn bump(&mut self, item: String) {
        match self
            .items
            .iter_mut()
            .find(|(existing, _)| *existing == item)
        {
            Some((_, count)) => *count += 1,
            None => self.items.push((item, 1)),
        }
    }

    /// Adds one serialized call, `name(key=JSON, …)`.
    fn add(&mut self, call: &str) {
        let name = call.split('(').next().unwrap_or(call);
        let path = string_argument(call, "path");
        let item = match (name, path) {
            ("read", Some(path)) => format!("Read `{path}`"),
            ("write", Some(path)) => format!("Wrote `{path}`"),
            ("edit", Some(path)) => format!("Edited `{path}`"),
            ("bash", _) => match string_argument(call, "command") {
                Some(command) => format!("Ran `{}`", clip(&command, 120)),
                None => format!("Called `{}`", clip(call, 120)),
            },
            (_, Some(path)) => format!("Called `{name}` on `{path}`"),
            (_, None) => format!("Called `{}`", clip(call, 120)),
        };
        self.bump(item);
    }

    fn add_shell(&mut self, command: &str) {
        self.bump(format!("Ran `{}` (user shell)", clip(command, 120)));
    }

    fn items(&self) -> Vec<String> {
        self.items
            .iter()
            .map(|(item, count)| {
                if *count > 1 {
                    format!("{item} ({count}×)")
                } else {
                    item.clone()
                }
            })
            .collect()
    }
}

/// The string value of `key="…"` in a serialized call.
fn string_argument(call: &str, key: &str) -> Option<String> {
    let pattern = format!("{key}=\"");
    let start = call.find(&pattern)? + pattern.len() - 1;
    let mut deserializer = serde_json::Deserializer::from_str(&call[start..]).into_iter::<String>();
    deserializer.next()?.ok()
}

/// Renders the sections, shrinking every list until the text fits `budget_units` (chars/4 tokens).
fn render_within(sections: &[Section], budget_units: usize) -> String {
    let longest = sections
        .iter()
        .map(|section| section.items.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut limit = longest;
    loop {
        let mut text = format!("{OFFLINE_NOTICE}\n\n");
        for section in sections {
            if section.heading == "## Progress" {
                text.push_str("## Progress\n");
                continue;
            }
            text.push_str(&section.render(limit));
            text.push('\n');
        }
        let text = text.trim_end().to_owned();
        if utf16_len(&text) <= budget_units || limit == 1 {
            return if utf16_len(&text) <= budget_units {
                text
            } else {
                clip_lines(&text, budget_units)
            };
        }
        limit = (limit * 3 / 4).max(1);
    }
}

/// Cuts whole lines from the end until `text` fits.
fn clip_lines(text: &str, budget_units: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if utf16_len(&out) + utf16_len(line) + 1 > budget_units {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_owned()
}
