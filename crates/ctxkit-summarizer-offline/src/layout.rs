//! The summary's layout per purpose, the budget (items kept by priority, then identifiers, then the
//! most recent steps), and rendering.

use ctxkit_summarizer::{SummaryPurpose, SummaryRequest};

use crate::digest::Digest;
use crate::recent::{recent_lines, step_line, verbatim_lines};
use crate::sections::{self, Item};
use crate::span::Step;
use crate::text::clip;
use crate::{OFFLINE_NOTICE, SummarySize, count_tokens};

/// Share of the budget the sections may take before the recent steps.
const SECTIONS_SHARE: f64 = 0.8;
/// Identifiers listed per line.
const NAMES_PER_LINE: usize = 8;

/// One heading with its items.
struct Section {
    heading: &'static str,
    items: Vec<Item>,
    /// Print `- (none)` when empty (a heading with sub-headings prints nothing).
    placeholder: bool,
    /// Leave the heading out when nothing is under it (a summary added after an earlier one,
    /// `SummarySpan::continues_summary`: the earlier one already says there is nothing).
    omit_empty: bool,
}

fn section(heading: &'static str, items: Vec<Item>) -> Section {
    Section {
        heading,
        items: distinct(items),
        placeholder: true,
        omit_empty: false,
    }
}

/// Each text once, at the highest priority it came with: an earlier summary's line that the span
/// says again (the files changed, a command) is not printed twice.
fn distinct(items: Vec<Item>) -> Vec<Item> {
    let mut kept: Vec<Item> = Vec::with_capacity(items.len());
    let mut positions: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for item in items {
        match positions.get(&item.text) {
            Some(&position) => kept[position].priority = kept[position].priority.max(item.priority),
            None => {
                positions.insert(item.text.clone(), kept.len());
                kept.push(item);
            }
        }
    }
    kept
}

/// A summary added after an earlier one says only what the span adds: its empty sections are
/// left out instead of saying `(none)`.
fn omit_empty_sections(sections: &mut [Section]) {
    for section in sections {
        section.placeholder = false;
        section.omit_empty = true;
    }
}

/// Whether `sections[index]` prints nothing: an empty section that may be left out, and, for a
/// heading with sub-headings, every sub-heading under it as well.
fn prints_nothing(sections: &[Section], index: usize, tail: bool) -> bool {
    let section = &sections[index];
    if !section.omit_empty || !section.items.is_empty() || tail {
        return false;
    }
    let level = section.heading.chars().take_while(|c| *c == '#').count();
    sections[index + 1..]
        .iter()
        .take_while(|next| next.heading.chars().take_while(|c| *c == '#').count() > level)
        .all(|next| next.items.is_empty())
}

fn layout(purpose: SummaryPurpose, digest: &Digest) -> Vec<Section> {
    let mut context: Vec<Item> = sections::omitted(digest).into_iter().collect();
    context.extend(sections::critical_context(digest));
    context.extend(sections::last_report(digest));
    match purpose {
        SummaryPurpose::History | SummaryPurpose::Branch => vec![
            section("## Goal", sections::goal(digest)),
            section(
                "## Constraints & Preferences",
                sections::constraints(digest),
            ),
            Section {
                placeholder: false,
                ..section("## Progress", Vec::new())
            },
            section("### Done", sections::done(digest)),
            section("### In Progress", sections::in_progress(digest)),
            section("### Blocked", sections::blocked(digest)),
            section("## Key Decisions", sections::decisions(digest)),
            section("## Next Steps", sections::next_steps(digest)),
            section("## Critical Context", context),
        ],
        SummaryPurpose::TurnPrefix => {
            let mut progress = sections::done(digest);
            progress.extend(sections::decisions(digest));
            let mut needed = sections::blocked(digest);
            needed.extend(context);
            vec![
                section("## Original Request", sections::goal(digest)),
                section("## Progress So Far", progress),
                section("## Context Needed to Continue", needed),
            ]
        }
    }
}

/// The heading of the verbatim fill (`verbatim_lines`).
const VERBATIM_HEADING: &str = "### Last Steps in Full";

fn render(sections: &[Section], recent: &[String]) -> String {
    render_with(sections, recent, &[])
}

fn render_with(sections: &[Section], recent: &[String], verbatim: &[String]) -> String {
    let mut text = format!("{OFFLINE_NOTICE}\n");
    let last = sections.len().saturating_sub(1);
    for (index, section) in sections.iter().enumerate() {
        let tail = index == last && !(recent.is_empty() && verbatim.is_empty());
        if prints_nothing(sections, index, tail) {
            continue;
        }
        text.push('\n');
        text.push_str(section.heading);
        text.push('\n');
        for item in &section.items {
            text.push_str(&format!("- {}\n", item.text));
        }
        if section.items.is_empty() && section.placeholder {
            text.push_str("- (none)\n");
        }
        if index == last && !recent.is_empty() {
            text.push_str("\n### Most Recent Steps\n");
            for line in recent {
                text.push_str(&format!("- {line}\n"));
            }
        }
        if index == last && !verbatim.is_empty() {
            text.push_str(&format!("\n{VERBATIM_HEADING}\n"));
            for line in verbatim {
                text.push_str(&format!("- {line}\n"));
            }
        }
    }
    text
}

/// Keeps the items of highest priority that fit in `budget` tokens (earlier items first among
/// equals).
fn select(sections: &mut [Section], budget: u64) {
    let skeleton: u64 = sections
        .iter()
        .map(|section| count_tokens(section.heading) + 4)
        .sum::<u64>()
        + count_tokens(OFFLINE_NOTICE);
    let mut order: Vec<(u8, usize, usize, u64)> = Vec::new();
    for (section_index, section) in sections.iter().enumerate() {
        for (item_index, item) in section.items.iter().enumerate() {
            order.push((
                item.priority,
                section_index,
                item_index,
                count_tokens(&item.text) + 2,
            ));
        }
    }
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut used = skeleton;
    let mut keep = std::collections::HashSet::new();
    for (_, section_index, item_index, cost) in order {
        if used + cost <= budget {
            used += cost;
            keep.insert((section_index, item_index));
        }
    }
    for (section_index, section) in sections.iter_mut().enumerate() {
        let mut index = 0;
        section.items.retain(|_| {
            index += 1;
            keep.contains(&(section_index, index - 1))
        });
    }
}

fn kept_text(sections: &[Section]) -> String {
    sections
        .iter()
        .flat_map(|section| section.items.iter().map(|item| item.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Identifiers the kept text does not name yet, best first, as lines for Critical Context.
fn name_lines(digest: &Digest, sections: &[Section], budget: u64) -> Vec<Item> {
    let kept = kept_text(sections);
    name_chunks(&digest.ranked, &kept, "Names", 40, budget)
}

/// Lines of names tool output printed that `text` does not hold yet, within `budget` tokens.
fn printed_lines(printed: &[String], text: &str, budget: u64) -> Vec<Item> {
    name_chunks(printed, text, "Seen in output", 10, budget)
}

/// `label: `a`, `b`, …` lines of the `names` that `text` does not hold yet, in order, as many as
/// fit `budget` tokens.
fn name_chunks(names: &[String], text: &str, label: &str, priority: u8, budget: u64) -> Vec<Item> {
    let fresh: Vec<&String> = names
        .iter()
        .filter(|name| !text.contains(name.as_str()))
        .collect();
    let mut lines = Vec::new();
    let mut used = 0;
    for chunk in fresh.chunks(NAMES_PER_LINE) {
        let names: Vec<String> = chunk.iter().map(|name| format!("`{name}`")).collect();
        let line = format!("{label}: {}", names.join(", "));
        let cost = count_tokens(&line) + 2;
        if used + cost > budget {
            break;
        }
        used += cost;
        lines.push(Item {
            text: line,
            priority,
        });
    }
    lines
}

/// Tokens of room below which the verbatim fill is not worth its heading.
const VERBATIM_MIN_ROOM: u64 = 100;

/// Characters of a tool's output a compaction shows a model (Pi's serialization cuts each result
/// to 2,000 UTF-16 units): what the summary's size follows.
const OUTPUT_READ_CHARS: usize = 2_000;

/// The tokens of the span as a compaction shows it to a model — the user's and the assistant's words
/// whole, each tool output cut to `OUTPUT_READ_CHARS` —, and of those the tool output's.
pub(crate) fn span_tokens(steps: &[Step]) -> (u64, u64) {
    steps.iter().fold((0, 0), |(all, output), step| match step {
        Step::Call(call) => {
            let printed = call
                .output
                .as_deref()
                .map_or(0, |text| count_tokens(&clip(text, OUTPUT_READ_CHARS)));
            (all + count_tokens(&call.target) + printed, output + printed)
        }
        // The people's words are read whole (only tool output is cut).
        Step::Request(text) | Step::Reply(text) => (all + count_tokens(text), output),
        Step::Summary(_) => (all + count_tokens(&step_line(step)), output),
    })
}

/// The least room a compaction's summary gets: a reserve of 0 (`compaction.reserveTokens`, valid)
/// left none, and the empty summary failed the compaction as if a model had.
pub(crate) const SMALLEST_ROOM_TOKENS: u64 = 1_024;

/// The summary of a request at a size: never more than `request.max_tokens`; for a request without
/// one (every compaction and branch request since Pi 1.6), never more than the room the compaction
/// leaves for its summary, nor twice the size's maximum (an update carries the earlier summary, but
/// may not grow without end).
pub fn summarize_sized(request: &SummaryRequest, size: SummarySize) -> String {
    let request_max = request.max_tokens.unwrap_or_else(|| {
        let most = size.max_tokens.saturating_mul(2);
        request
            .source
            .room_tokens
            .map_or(most, |room| room.max(SMALLEST_ROOM_TOKENS).min(most))
    });
    let digest = Digest::new(&request.source);
    let previous_tokens = request
        .source
        .previous_summary
        .as_deref()
        .map_or(0, count_tokens);
    // An update keeps room for the earlier summary it carries, as a model's update does.
    let (read_tokens, output_tokens) = span_tokens(&digest.steps);
    // The names the span itself holds: an earlier summary's own names are in `previous_tokens`.
    let span_names = digest
        .ranked
        .iter()
        .take(digest.named)
        .filter(|name| digest.mentioned.contains(*name))
        .count();
    // An update's size already carries the earlier summary: it is not raised by the names.
    let own = if previous_tokens == 0 {
        size.named_target(read_tokens, output_tokens, span_names, request_max)
    } else {
        size.target(read_tokens, output_tokens, request_max)
    };
    let target = own.saturating_add(previous_tokens).min(request_max);
    let mut sections = layout(request.purpose, &digest);
    if request.source.continues_summary {
        omit_empty_sections(&mut sections);
    }
    select(&mut sections, (target as f64 * SECTIONS_SHARE) as u64);
    let mut text = render(&sections, &[]);
    let names_budget = (target as f64 * (SECTIONS_SHARE + 0.1)) as u64;
    let names = name_lines(
        &digest,
        &sections,
        names_budget.saturating_sub(count_tokens(&text)),
    );
    if let Some(context) = sections.last_mut() {
        context.items.extend(names);
    }
    text = render(&sections, &[]);
    let left = target.saturating_sub(count_tokens(&text) + 12);
    let kept = kept_text(&sections);
    let mut recent = recent_lines(&digest.steps, left, count_tokens, |line| {
        kept.contains(line)
    });
    text = render(&sections, &recent);
    while count_tokens(&text) > target && !recent.is_empty() {
        recent.remove(0);
        text = render(&sections, &recent);
    }
    // Room left after everything people and calls named: the names tool output printed.
    let room = target.saturating_sub(count_tokens(&text) + 12);
    let printed = printed_lines(&digest.printed, &text, room);
    if !printed.is_empty() {
        if let Some(context) = sections.last_mut() {
            context.items.extend(printed);
        }
        text = render(&sections, &recent);
    }
    // Room still left: the span's last steps in full rather than nothing.
    let room = target.saturating_sub(count_tokens(&text) + 12 + count_tokens(VERBATIM_HEADING));
    if room >= VERBATIM_MIN_ROOM {
        let verbatim = verbatim_lines(&digest.steps, room, count_tokens, &text);
        if !verbatim.is_empty() {
            text = render_with(&sections, &recent, &verbatim);
        }
    }
    // A credential the span shows (`Authorization: Bearer …`, a URL's `user:password@`, a
    // provider's key) is not repeated: a summary is kept, printed and sent again long after;
    // `recall` still reads the original.
    text = ctxkit_secrets::redact_for_keeping(&text);
    // A budget below the skeleton: cut the text itself.
    let full = text.clone();
    let mut chars = full.chars().count();
    while count_tokens(&text) > request_max {
        chars = chars * 3 / 4;
        if chars == 0 {
            return String::new();
        }
        text = clip(&full, chars);
    }
    text
}
