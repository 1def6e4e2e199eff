//! Sections of the offline summary and their rendering within a hard token budget: items carry a
//! priority, and when the whole does not fit the least important go first, each section saying how
//! many of its items it left out.

use crate::offline::text::{Language, dedup_key};
use crate::tokens::{Encoding, count_text_tokens, estimate_text_tokens, utf16_len};

/// How a section's items are marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Bullet,
    Numbered,
    Done,
    Todo,
    /// A heading with no items of its own (`## Progress`).
    HeadingOnly,
}

/// One item and how much it matters (higher stays longer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    pub(crate) text: String,
    pub(crate) priority: u32,
}

/// One section of the summary.
#[derive(Debug, Clone)]
pub(crate) struct Section {
    pub(crate) heading: &'static str,
    pub(crate) style: Style,
    pub(crate) items: Vec<Item>,
    /// At most this many items are shown, the most important ones.
    pub(crate) max_items: usize,
    /// What an empty section says (`(none)` when unset).
    pub(crate) empty: Option<String>,
}

impl Section {
    pub(crate) fn new(heading: &'static str, style: Style) -> Self {
        Self {
            heading,
            style,
            items: Vec::new(),
            max_items: usize::MAX,
            empty: None,
        }
    }

    /// Adds an item unless it is empty or already said: an item whose letters and digits another
    /// holds is not added again (the higher priority is kept), and one that holds another's replaces
    /// it, so the fuller wording stays.
    pub(crate) fn push(&mut self, text: impl Into<String>, priority: u32) {
        let text = text.into().trim().to_owned();
        let key = dedup_key(&text);
        if key.is_empty() {
            return;
        }
        let contains = |longer: &str, shorter: &str| {
            longer == shorter || (shorter.len() > 12 && longer.contains(shorter))
        };
        for item in &mut self.items {
            let other = dedup_key(&item.text);
            if contains(&other, &key) {
                item.priority = item.priority.max(priority);
                return;
            }
            if contains(&key, &other) {
                item.text = text;
                item.priority = item.priority.max(priority);
                return;
            }
        }
        self.items.push(Item { text, priority });
    }
}

/// The tokens `text` may take: the largest of the chars/4 estimate, ctxkit's estimator and an exact
/// cl100k count, so neither CJK text nor code is undercounted.
pub(crate) fn budget_tokens(text: &str) -> u64 {
    (utf16_len(text) as u64)
        .div_ceil(4)
        .max(estimate_text_tokens(text))
        .max(count_text_tokens(text, Encoding::Cl100kBase))
}

/// `keep[section][item]`: which items a rendering includes.
fn render(sections: &[Section], keep: &[Vec<bool>], notice: &str, language: Language) -> String {
    let mut text = format!("{notice}\n\n");
    for (section, kept) in sections.iter().zip(keep) {
        text.push_str(section.heading);
        text.push('\n');
        if section.style == Style::HeadingOnly {
            continue;
        }
        let shown: Vec<&Item> = section
            .items
            .iter()
            .zip(kept)
            .filter_map(|(item, keep)| keep.then_some(item))
            .collect();
        if shown.is_empty() && section.items.is_empty() {
            let empty = section.empty.clone().unwrap_or_else(|| match language {
                Language::English => "(none)".to_owned(),
                Language::Chinese => "（无）".to_owned(),
            });
            text.push_str(&format!("- {empty}\n\n"));
            continue;
        }
        for (index, item) in shown.iter().enumerate() {
            let line = match section.style {
                Style::Numbered => format!("{}. {}\n", index + 1, item.text),
                Style::Done => format!("- [x] {}\n", item.text),
                Style::Todo => format!("- [ ] {}\n", item.text),
                Style::Bullet | Style::HeadingOnly => format!("- {}\n", item.text),
            };
            text.push_str(&line);
        }
        let left_out = section.items.len() - shown.len();
        if left_out > 0 {
            text.push_str(&match language {
                Language::English => {
                    format!("- ({left_out} more left out to fit the summary budget)\n")
                }
                Language::Chinese => format!("- （另有 {left_out} 项因篇幅省略）\n"),
            });
        }
        text.push('\n');
    }
    text.trim_end().to_owned()
}

/// Renders `sections` within `budget` tokens (see [`budget_tokens`]), dropping the least important
/// items first; each section shows at most its `max_items`.
pub(crate) fn render_within(
    sections: &[Section],
    budget: u64,
    notice: &str,
    language: Language,
) -> String {
    // Candidates in order of importance: priority, then earlier sections, then later items.
    let mut order: Vec<(usize, usize)> = Vec::new();
    for (section_index, section) in sections.iter().enumerate() {
        let mut ranked: Vec<usize> = (0..section.items.len()).collect();
        ranked.sort_by(|first, second| {
            section.items[*second]
                .priority
                .cmp(&section.items[*first].priority)
                .then(second.cmp(first))
        });
        for item_index in ranked.into_iter().take(section.max_items) {
            order.push((section_index, item_index));
        }
    }
    order.sort_by(
        |(first_section, first_item), (second_section, second_item)| {
            let priority = |section: usize, item: usize| sections[section].items[item].priority;
            priority(*second_section, *second_item)
                .cmp(&priority(*first_section, *first_item))
                .then(first_section.cmp(second_section))
                .then(second_item.cmp(first_item))
        },
    );
    let with_first = |count: usize| {
        let mut keep: Vec<Vec<bool>> = sections
            .iter()
            .map(|section| vec![false; section.items.len()])
            .collect();
        for (section, item) in order.iter().take(count) {
            keep[*section][*item] = true;
        }
        render(sections, &keep, notice, language)
    };
    let full = with_first(order.len());
    if budget_tokens(&full) <= budget {
        return full;
    }
    // The largest prefix of `order` that fits.
    let (mut low, mut high) = (0, order.len());
    while low < high {
        let middle = (low + high).div_ceil(2);
        if budget_tokens(&with_first(middle)) <= budget {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    let text = with_first(low);
    if budget_tokens(&text) <= budget {
        return text;
    }
    clip_lines(&text, budget)
}

/// Whole lines from the start while the text fits `budget`.
fn clip_lines(text: &str, budget: u64) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let candidate = format!("{out}{line}\n");
        if budget_tokens(candidate.trim_end()) > budget {
            break;
        }
        out = candidate;
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_the_least_important_items_first_and_says_so() {
        let mut goal = Section::new("## Goal", Style::Bullet);
        goal.push("an old request about the cache layer", 10);
        goal.push("Latest: fix `parse_0` in src/file0.rs", 100);
        let mut critical = Section::new("## Critical Context", Style::Bullet);
        for index in 0..40 {
            critical.push(format!("identifier_number_{index} with some words"), 5);
        }
        let sections = [goal, critical];
        let text = render_within(&sections, 60, "_notice_", Language::English);
        assert!(budget_tokens(&text) <= 60, "{text}");
        assert!(text.contains("Latest: fix `parse_0`"));
        assert!(text.contains("more left out to fit the summary budget"));
        let tiny = render_within(&sections, 5, "_notice_", Language::English);
        assert!(budget_tokens(&tiny) <= 5, "{tiny}");
    }

    #[test]
    fn near_copies_are_merged() {
        let mut section = Section::new("## Goal", Style::Bullet);
        section.push("Run the unit tests.", 1);
        section.push("run the unit tests", 9);
        assert_eq!(section.items.len(), 1);
        assert_eq!(section.items[0].priority, 9);
        section.push("Run the unit tests, then fix what fails.", 2);
        assert_eq!(section.items.len(), 1);
        assert_eq!(
            section.items[0].text,
            "Run the unit tests, then fix what fails."
        );
    }
}
