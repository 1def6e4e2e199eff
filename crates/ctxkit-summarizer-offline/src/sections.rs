//! The sections, one function each, from the digest. Every item carries a priority; the budget
//! keeps the highest first (see `fit`).

use std::collections::HashMap;

use crate::carried::carried_priority;
use crate::digest::Digest;
use crate::error_line::best_error_line;
use crate::previous::Slot;
use crate::prohibition::{is_instruction, request_part};
use crate::prompt::{Prompt, prompt, prompt_line};
use crate::text::{clip, identifiers, one_line, sentences, split_fences};

/// One line of a section.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub text: String,
    /// 0–100; higher is kept first.
    pub priority: u8,
}

/// Characters of one item at most.
const ITEM_MAX_CHARS: usize = 600;

fn item(text: impl Into<String>, priority: u8) -> Item {
    Item {
        text: clip(&text.into(), ITEM_MAX_CHARS),
        priority,
    }
}

/// Passing commands listed, the most recent ones.
const PASSED_MAX: usize = 10;

/// The earlier summaries' items of one slot, earlier ones first.
fn earlier(digest: &Digest, slot: Slot, priority: u8) -> Vec<Item> {
    let plans = plans_naming_something(&digest.earlier);
    digest
        .earlier
        .iter()
        .zip(plans)
        .filter(|(earlier, _)| earlier.slot == slot)
        // Prose that names nothing (`Investigation revealed:`) is left to the earlier summary's
        // own goal and constraints, which stay whole. A numbered step stays with its list when
        // the list is carried: a plan that skips `2. Move files as per structure above` reads as
        // another plan.
        .filter(|(earlier, in_plan)| {
            matches!(slot, Slot::Goal | Slot::Constraints)
                || names_something(&earlier.text)
                || *in_plan
        })
        .map(|(earlier, _)| earlier)
        .map(|earlier| {
            let priority = carried_priority(digest, slot, &earlier.text, priority);
            item(clip(&earlier.text, 400), priority)
        })
        .collect()
}

/// Per earlier item: whether it is a step of a numbered list (consecutive numbered items of one
/// slot) of which some step names something.
fn plans_naming_something(items: &[crate::previous::EarlierItem]) -> Vec<bool> {
    let mut in_plan = vec![false; items.len()];
    let mut start = 0;
    while start < items.len() {
        let mut end = start;
        while end < items.len()
            && items[end].slot == items[start].slot
            && is_numbered_step(&items[end].text)
        {
            end += 1;
        }
        if end == start {
            start += 1;
            continue;
        }
        if items[start..end]
            .iter()
            .any(|item| names_something(&item.text))
        {
            in_plan[start..end].fill(true);
        }
        start = end;
    }
    in_plan
}

/// Whether a line is an item of a numbered list (`2. Move files`, `3) Test`).
fn is_numbered_step(text: &str) -> bool {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    (1..=3).contains(&digits)
        && text[digits..].starts_with(['.', ')'])
        && text[digits + 1..].starts_with(' ')
}

/// Whether a line names something a continuing agent could look up or use exactly: an identifier
/// or a number of three or more digits (an id, a port, an amount, a year).
fn names_something(text: &str) -> bool {
    !identifiers(text).is_empty()
        || text
            .split(|c: char| !c.is_ascii_digit())
            .any(|digits| digits.len() >= 3)
}

/// Characters above which a line of a request is pasted output (a log line), not prose.
const PASTE_LINE_CHARS: usize = 600;

/// Whether a line of a request was pasted: a long line, or a JSON record.
fn is_pasted(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.chars().count() > PASTE_LINE_CHARS
        || (trimmed.starts_with('{') && trimmed.ends_with('}') && trimmed.contains("\":"))
}

/// A request's own words: no fenced blocks, no pasted lines.
pub fn request_prose(text: &str) -> String {
    let (prose, _) = split_fences(text);
    prose
        .lines()
        .filter(|line| !is_pasted(line))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn request_line(text: &str, max_chars: usize) -> String {
    let (prose, blocks) = split_fences(text);
    let (long, lines): (Vec<&str>, Vec<&str>) = prose
        .lines()
        .filter(|line| !line.trim().is_empty())
        .partition(|line| is_pasted(line));
    let long = long.join("\n");
    let kept = lines.join("\n");
    // Standing instructions are under Constraints & Preferences; the request keeps the rest.
    // A sentence that both asks and forbids keeps its request here.
    let task: Vec<String> = sentences(&kept)
        .into_iter()
        .filter_map(|sentence| {
            if !is_instruction(&sentence) {
                return Some(sentence);
            }
            request_part(&sentence)
        })
        .collect();
    let task = if task.is_empty() {
        kept
    } else {
        task.join(" ")
    };
    let mut line = clip(&one_line(&task), max_chars);
    for paste in blocks.iter().map(String::as_str).chain(Some(long.as_str())) {
        if let Some(error) = best_error_line(paste) {
            line.push_str(&format!(" (pasted: `{error}`)"));
        }
    }
    if line.trim().is_empty() {
        // All paste and no error in it: what was pasted, by its first line, rather than nothing.
        let pasted = blocks.iter().map(String::as_str).chain(Some(long.as_str()));
        if let Some(first) = pasted
            .flat_map(str::lines)
            .map(str::trim)
            .find(|line| !line.is_empty())
        {
            line = format!(
                "(pasted text: \"{}\")",
                clip(&one_line(first), PASTE_OPENING_CHARS)
            );
        }
    }
    line
}

/// Priority a middle request that names nothing loses: below an earlier summary's items that
/// name something (50 and up), so a chatty span (`どーですか？`, `any progress?`) does not push out
/// the blocker and the exact error the earlier summary carried (docs/summaries.md, nineteenth
/// round).
const NAMELESS_REQUEST_PENALTY: u8 = 30;

/// Characters of a request that is all paste shown in its place (its first line's).
const PASTE_OPENING_CHARS: usize = 120;

/// Whether a request carries nothing to do (`ok`, `continue`).
pub fn is_trivial(text: &str) -> bool {
    let line = one_line(text);
    let words = line.split_whitespace().count();
    let cjk = line.chars().filter(|c| !c.is_ascii()).count();
    words < 3 && cjk < 6 && identifiers(&line).is_empty()
}

pub fn goal(digest: &Digest) -> Vec<Item> {
    let mut items: Vec<Item> = digest
        .focus
        .iter()
        .map(|focus| item(format!("Focus for this summary: {}", one_line(focus)), 99))
        .collect();
    items.extend(earlier(digest, Slot::Goal, 70));
    let requests = distinct_requests(digest);
    let count = requests.len();
    for (index, (request, times, inputs)) in requests.into_iter().enumerate() {
        let latest = index + 1 == count;
        let line = match prompt(request) {
            Some(prompt) => prompt_line(&prompt, times, &inputs),
            None => {
                let mut line = request_line(request, if latest { 600 } else { 400 });
                if times > 1 {
                    line.push_str(&format!(" (asked {times} times)"));
                }
                line
            }
        };
        if latest {
            items.push(item(format!("**Latest:** {line}"), 100));
        } else {
            // The first request sets the task; later ones are weighed by recency, and one that
            // names nothing is conversation, which yields to every item that names something.
            let priority = if index == 0 {
                90
            } else {
                let by_recency = 60 + (20 * index / count.max(1)) as u8;
                if names_something(&line) {
                    by_recency
                } else {
                    by_recency - NAMELESS_REQUEST_PENALTY
                }
            };
            items.push(item(line, priority));
        }
    }
    items
}

/// The non-trivial requests, each with how often it was asked and, for an expanded prompt, the
/// inputs of every use: a request repeated with only a counter changed (`… (iteration 1)`, `…
/// (iteration 2)`), or a prompt template used again with another input, is one goal, placed where
/// it was last asked and worded as it was then.
fn distinct_requests(digest: &Digest) -> Vec<(&String, usize, Vec<String>)> {
    let requests: Vec<&String> = digest
        .requests
        .iter()
        .filter(|text| !is_trivial(text))
        .collect();
    let prompts: Vec<Option<Prompt>> = requests.iter().map(|text| prompt(text)).collect();
    let keys: Vec<String> = requests
        .iter()
        .zip(&prompts)
        .map(|(text, prompt)| match prompt {
            Some(prompt) => format!("\u{0}{}", prompt.template),
            None => counter_free(text),
        })
        .collect();
    // Every use of a key, in order (one pass: a span may hold thousands of requests).
    let mut uses: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, key) in keys.iter().enumerate() {
        uses.entry(key.as_str()).or_default().push(index);
    }
    requests
        .iter()
        .enumerate()
        .filter_map(|(index, request)| {
            let uses = uses.get(keys[index].as_str())?;
            // The key's last use stands for all of them.
            (uses.last() == Some(&index)).then_some((request, uses))
        })
        .map(|(request, uses)| {
            let inputs = uses
                .iter()
                .filter_map(|other| prompts[*other].as_ref())
                .flat_map(|prompt| prompt.inputs.iter().cloned())
                .collect();
            (*request, uses.len(), inputs)
        })
        .collect()
}

/// A request's text without a trailing counter in brackets (`(iteration 3)`, `[2/5]`), lower-cased
/// with runs of spaces closed: two requests with the same key differ only by that counter. A
/// number elsewhere (`fix test 1`, `fix test 2`) keeps the requests apart.
fn counter_free(text: &str) -> String {
    let line = one_line(text).to_lowercase();
    let trimmed = line.trim_end();
    let without_counter = trimmed
        .strip_suffix(')')
        .and_then(|rest| rest.rfind('(').map(|open| (rest, open)))
        .or_else(|| {
            trimmed
                .strip_suffix(']')
                .and_then(|rest| rest.rfind('[').map(|open| (rest, open)))
        })
        .and_then(|(rest, open)| {
            let group = rest.get(open + 1..)?;
            (group.len() <= 24 && group.chars().any(|character| character.is_ascii_digit()))
                .then(|| rest.get(..open))
                .flatten()
        })
        .unwrap_or(trimmed);
    without_counter
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn constraints(digest: &Digest) -> Vec<Item> {
    let mut items = earlier(digest, Slot::Constraints, 85);
    // An expanded prompt's rules are its template's, which the agent can read again.
    for request in digest.requests.iter().filter(|text| prompt(text).is_none()) {
        for sentence in sentences(&request_prose(request)) {
            if is_instruction(&sentence) && !items.iter().any(|known| known.text == sentence) {
                items.push(item(sentence, 88));
            }
        }
    }
    items
}

fn code_list(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn done(digest: &Digest) -> Vec<Item> {
    let mut items = earlier(digest, Slot::Done, 55);
    items.extend(digest.commits.iter().map(|commit| item(commit.clone(), 92)));
    if !digest.changed.is_empty() {
        let files: Vec<String> = digest
            .changed
            .iter()
            .map(|(path, count)| match count {
                1 => format!("`{path}`"),
                _ => format!("`{path}` ({count}×)"),
            })
            .collect();
        items.push(item(format!("Changed: {}", files.join(", ")), 90));
    }
    // A file the calls asked to change but no change went through is not changed: a continuing
    // model must not read it as done (QA r104: a failed edit of the public API file was listed
    // as changed).
    for (path, reason) in &digest.failed_changes {
        items.push(item(
            format!("Change failed, file unchanged: `{path}` (`{reason}`)"),
            89,
        ));
    }
    let mut passed = Vec::new();
    // A commit has its own line; staging is part of it.
    let routine =
        |command: &str| command.starts_with("git add") || command.starts_with("git commit");
    for record in digest
        .commands
        .iter()
        .filter(|record| !record.last_failed && !routine(&record.command))
    {
        match (&record.first_error, record.failures) {
            (Some(error), failures) if failures > 0 => items.push(item(
                format!(
                    "`{}`: passed after {failures} failed run(s) (first error: `{error}`)",
                    record.command
                ),
                84,
            )),
            (Some(_) | None, _) => passed.push(record.command.clone()),
        }
    }
    let skip = passed.len().saturating_sub(PASSED_MAX);
    passed.drain(..skip);
    if !passed.is_empty() {
        items.push(item(format!("Passed: {}", code_list(&passed)), 80));
    }
    items
}

pub fn in_progress(digest: &Digest) -> Vec<Item> {
    let mut items = earlier(digest, Slot::InProgress, 50);
    for (_, call) in &digest.pending {
        items.push(item(
            format!("`{}` (started; no result yet)", clip(&one_line(call), 160)),
            96,
        ));
    }
    items
}

pub fn blocked(digest: &Digest) -> Vec<Item> {
    let mut items = earlier(digest, Slot::Blocked, 50);
    // A failure in the last fifth of the span blocks; an older one is only an error seen.
    let recent = digest.steps.len() * 4 / 5;
    for record in digest
        .commands
        .iter()
        .filter(|record| record.last_failed && record.last_step >= recent)
    {
        let error = record.last_error.as_deref().unwrap_or("failed");
        items.push(item(format!("`{}` fails: `{error}`", record.command), 97));
    }
    items
}

/// Words of a sentence that states a choice or a finding ("because" holds "cause"), in the
/// languages sessions are held in: a reply in another language named its choices in none.
const DECISION_MARKERS: &[&str] = &[
    "i'll ",
    "rather than",
    "instead of",
    "decided",
    "cause",
    "原因",
    // Chinese and Japanese: instead of, switch to, decide, because; Japanese "decided to".
    "而不是",
    "改用",
    "决定",
    "因为",
    "代わりに",
    "ことにし",
    // Korean: instead, decision, cause, because.
    "대신",
    "결정",
    "원인",
    "때문",
    // Russian: instead of, decided, cause or reason, because.
    "вместо",
    "решил",
    "причин",
    "потому что",
    // Arabic: instead of, I decided, the cause, because.
    "بدلا من",
    "بدلاً من",
    "قررت",
    "السبب",
    "لأن",
];

pub fn decisions(digest: &Digest) -> Vec<Item> {
    let mut items = earlier(digest, Slot::Decisions, 60);
    let count = digest.replies.len();
    for (index, reply) in digest.replies.iter().enumerate() {
        let (prose, _) = split_fences(reply);
        for sentence in sentences(&prose) {
            let lower = sentence.to_lowercase();
            let names = identifiers(&sentence).len();
            let decision = DECISION_MARKERS.iter().any(|marker| lower.contains(marker));
            // A choice that names nothing ("There it is.") tells a continuing model nothing.
            if decision
                && names > 0
                && !sentence.ends_with('?')
                && !items.iter().any(|known| known.text == sentence)
            {
                let recency = (15 * (index + 1) / count.max(1)) as u8;
                items.push(item(
                    clip(&sentence, 400),
                    58 + recency + (names.min(4) as u8) * 3,
                ));
            }
        }
    }
    items
}

pub fn next_steps(digest: &Digest) -> Vec<Item> {
    let mut items = earlier(digest, Slot::NextSteps, 52);
    for sentence in crate::plan::stated_plan(digest) {
        items.push(item(clip(&sentence, 300), 93));
    }
    if let Some(last) = digest.replies.last().filter(|_| digest.ends_with_reply()) {
        let (prose, _) = split_fences(last);
        for sentence in sentences(&prose)
            .into_iter()
            .filter(|sentence| sentence.ends_with('?') || sentence.ends_with('？'))
        {
            items.push(item(format!("Answer: {}", clip(&sentence, 300)), 95));
        }
    }
    items
}

/// The earlier summaries' context; the names and the most recent steps follow (`layout`). An
/// error is where it belongs (a blocker, a command's first failure, a recent step), not repeated.
pub fn critical_context(digest: &Digest) -> Vec<Item> {
    earlier(digest, Slot::Context, 55)
}

/// What the summary did not read of a span too long for its window: said first in Critical
/// Context, so a reader knows the middle of the span is not in it.
pub fn omitted(digest: &Digest) -> Option<Item> {
    (digest.omitted_messages > 0).then(|| {
        item(
            format!(
                "Not read: {} messages in the middle of a span of {}; this summary covers its beginning and its end ({} messages)",
                digest.omitted_messages,
                digest.omitted_messages + digest.read_messages,
                digest.read_messages
            ),
            99,
        )
    })
}

/// The assistant's last words, when they report something concrete: a name, a number, a path.
pub fn last_report(digest: &Digest) -> Option<Item> {
    let last = digest.replies.last()?;
    let (prose, _) = split_fences(last);
    let line = clip(&one_line(&prose), 500);
    (!identifiers(&line).is_empty()).then(|| item(format!("Last report: {line}"), 86))
}
