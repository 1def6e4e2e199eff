//! `summary-eval`: how much of what a continuing model must know an offline summary keeps. A corpus
//! of hand-built sessions (`corpus`), each with a hand-written list of facts, is summarized the way
//! a compaction would summarize it; the report gives per session the recall of those facts, the
//! summary's size (exact cl100k tokens) and its noise rate (content lines carrying none of the facts).

mod builder;
mod cases_developed_more;
mod cases_developed_third;
mod cases_english;
mod cases_held_out;
mod cases_held_out_eighth;
mod cases_held_out_eleventh;
mod cases_held_out_fifth;
mod cases_held_out_fourth;
mod cases_held_out_ninth;
mod cases_held_out_seventh;
mod cases_held_out_sixth;
mod cases_held_out_tenth;
mod cases_held_out_third;
mod cases_held_out_thirteenth;
mod cases_held_out_twelfth;
mod cases_other;

use ctxkit_compaction::{
    Encoding, Prompts, SummaryPurpose, SummaryRequest, count_text_tokens, serialize_conversation,
    summarize_offline,
};
use ctxkit_protocol::AgentMessage;
use serde::Serialize;

pub use builder::{SessionBuilder, parallel_turn};

/// One fact a continuing model must know, found when any of its spellings is in the summary.
#[derive(Debug, Clone, Copy)]
pub struct Fact {
    pub what: &'static str,
    /// Case-insensitive substrings; any one counts.
    pub any_of: &'static [&'static str],
}

pub(crate) const fn fact(what: &'static str, any_of: &'static [&'static str]) -> Fact {
    Fact { what, any_of }
}

/// One session of the corpus.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: &'static str,
    /// The span being summarized.
    pub messages: Vec<AgentMessage>,
    /// The earlier summary, for an update.
    pub previous: Option<String>,
    pub purpose: SummaryPurpose,
    /// Whether the session is held in Chinese (the summary's contents should be too).
    pub chinese: bool,
    /// Written after the summarizer's rules were settled, and not used to change them.
    pub held_out: bool,
    pub facts: Vec<Fact>,
}

/// The corpus: every case, in a fixed order.
pub fn corpus() -> Vec<Case> {
    let mut cases = cases_english::cases();
    cases.extend(cases_other::cases());
    cases.extend(cases_developed_more::cases());
    cases.extend(cases_developed_more::second_batch());
    cases.extend(cases_developed_third::cases());
    cases.extend(cases_held_out::cases());
    cases.extend(cases_held_out_third::cases());
    cases.extend(cases_held_out_fourth::cases());
    cases.extend(cases_held_out_fifth::cases());
    cases.extend(cases_held_out_sixth::cases());
    cases.extend(cases_held_out_seventh::cases());
    cases.extend(cases_held_out_eighth::cases());
    cases.extend(cases_held_out_ninth::cases());
    cases.extend(cases_held_out_tenth::cases());
    cases.extend(cases_held_out_eleventh::cases());
    cases.extend(cases_held_out_twelfth::cases());
    cases.extend(cases_held_out_thirteenth::cases());
    cases
}

/// The request a compaction (or branch summary) would send for a case.
pub fn request(case: &Case, max_tokens: u64) -> SummaryRequest {
    let prompts = Prompts::default();
    let conversation = serialize_conversation(&ctxkit_session::convert_to_llm(&case.messages));
    let mut text = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    let instructions = match (&case.previous, case.purpose) {
        (_, SummaryPurpose::Branch) => &prompts.branch,
        (Some(previous), SummaryPurpose::History | SummaryPurpose::TurnPrefix) => {
            text.push_str(&format!(
                "<previous-summary>\n{previous}\n</previous-summary>\n\n"
            ));
            &prompts.update
        }
        (None, SummaryPurpose::History | SummaryPurpose::TurnPrefix) => &prompts.initial,
    };
    text.push_str(instructions);
    SummaryRequest {
        purpose: case.purpose,
        system_prompt: prompts.system,
        user_text: text,
        max_tokens: Some(max_tokens),
        reasoning: None,
    }
}

/// The measured summary of one case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub name: &'static str,
    pub held_out: bool,
    pub facts: usize,
    pub recalled: usize,
    /// Exact cl100k tokens of the summary.
    pub tokens: u64,
    pub content_lines: usize,
    pub noise_lines: usize,
    /// For a Chinese session: the share of content lines holding Chinese text.
    pub chinese_lines: Option<f64>,
    pub missed: Vec<&'static str>,
    pub noise: Vec<String>,
    pub summary: String,
}

/// Lines that are structure rather than content: headings, the notice, placeholders, notes of what
/// the budget left out.
fn is_content(line: &str) -> bool {
    let trimmed = line.trim();
    let bare = trimmed.trim_start_matches(['-', ' ']);
    !(trimmed.is_empty()
        || trimmed.starts_with('#')
        || trimmed.starts_with('_')
        || trimmed == "---"
        || trimmed.starts_with("**Turn Context")
        || bare.starts_with("(none")
        || bare.starts_with("（无")
        || bare.contains("left out to fit the summary budget")
        || bare.contains("因篇幅省略")
        || bare.contains("not repeated)")
        || bare.contains("未列出）"))
}

fn has_han(text: &str) -> bool {
    text.chars().any(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c))
}

/// Scores a summary against a case's facts.
pub fn score(case: &Case, summary: &str) -> CaseResult {
    let lower = summary.to_lowercase();
    let found = |fact: &Fact| {
        fact.any_of
            .iter()
            .any(|needle| lower.contains(&needle.to_lowercase()))
    };
    let missed: Vec<&'static str> = case
        .facts
        .iter()
        .filter(|fact| !found(fact))
        .map(|fact| fact.what)
        .collect();
    let content: Vec<&str> = summary.lines().filter(|line| is_content(line)).collect();
    let noise: Vec<String> = content
        .iter()
        .filter(|line| {
            let line = line.to_lowercase();
            !case.facts.iter().any(|fact| {
                fact.any_of
                    .iter()
                    .any(|needle| line.contains(&needle.to_lowercase()))
            })
        })
        .map(|line| (*line).to_owned())
        .collect();
    let chinese_lines = case.chinese.then(|| {
        content.iter().filter(|line| has_han(line)).count() as f64 / content.len().max(1) as f64
    });
    CaseResult {
        name: case.name,
        held_out: case.held_out,
        facts: case.facts.len(),
        recalled: case.facts.len() - missed.len(),
        tokens: count_text_tokens(summary, Encoding::Cl100kBase),
        content_lines: content.len(),
        noise_lines: noise.len(),
        chinese_lines,
        missed,
        noise,
        summary: summary.to_owned(),
    }
}

/// Summarizes and scores every case at one budget.
pub fn evaluate(cases: &[Case], max_tokens: u64) -> Vec<CaseResult> {
    cases
        .iter()
        .map(|case| score(case, &summarize_offline(&request(case, max_tokens))))
        .collect()
}

/// Totals over a run: recall and noise pooled over all facts and lines.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Totals {
    pub recall: f64,
    pub noise: f64,
    pub mean_tokens: f64,
    pub max_tokens: u64,
}

pub fn totals(results: &[CaseResult]) -> Totals {
    let facts: usize = results.iter().map(|result| result.facts).sum();
    let recalled: usize = results.iter().map(|result| result.recalled).sum();
    let lines: usize = results.iter().map(|result| result.content_lines).sum();
    let noise: usize = results.iter().map(|result| result.noise_lines).sum();
    Totals {
        recall: recalled as f64 / facts.max(1) as f64,
        noise: noise as f64 / lines.max(1) as f64,
        mean_tokens: results
            .iter()
            .map(|result| result.tokens as f64)
            .sum::<f64>()
            / results.len().max(1) as f64,
        max_tokens: results
            .iter()
            .map(|result| result.tokens)
            .max()
            .unwrap_or(0),
    }
}

/// The report as a markdown table.
pub fn render_markdown(budget: u64, results: &[CaseResult]) -> String {
    let mut text = format!(
        "Budget {budget} tokens.\n\n| Session | Facts recalled | Recall | Tokens (cl100k) | Content lines | Noise lines | Noise |\n|---|---:|---:|---:|---:|---:|---:|\n"
    );
    for result in results {
        let language = result
            .chinese_lines
            .map(|share| format!(" (Chinese lines {:.0}%)", share * 100.0))
            .unwrap_or_default();
        text.push_str(&format!(
            "| {}{language} | {}/{} | {:.0}% | {} | {} | {} | {:.0}% |\n",
            result.name,
            result.recalled,
            result.facts,
            result.recalled as f64 * 100.0 / result.facts.max(1) as f64,
            result.tokens,
            result.content_lines,
            result.noise_lines,
            result.noise_lines as f64 * 100.0 / result.content_lines.max(1) as f64
        ));
    }
    let (held_out, developed): (Vec<CaseResult>, Vec<CaseResult>) =
        results.iter().cloned().partition(|result| result.held_out);
    for (label, group) in [
        ("all", results.to_vec()),
        ("developed on", developed),
        ("held out", held_out),
    ] {
        let totals = totals(&group);
        text.push_str(&format!(
            "| **{label}** | | **{:.1}%** | mean {:.0}, max {} | | | **{:.1}%** |\n",
            totals.recall * 100.0,
            totals.mean_tokens,
            totals.max_tokens,
            totals.noise * 100.0
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoring_counts_facts_and_noise_lines() {
        let case = Case {
            name: "t",
            messages: Vec::new(),
            previous: None,
            purpose: SummaryPurpose::History,
            chinese: false,
            held_out: false,
            facts: vec![
                Fact {
                    what: "the file",
                    any_of: &["src/a.rs"],
                },
                Fact {
                    what: "the hash",
                    any_of: &["1a2b3c4"],
                },
            ],
        };
        let result = score(
            &case,
            "_notice_\n\n## Goal\n- Fix SRC/A.RS\n- something else\n\n## Blocked\n- (none)",
        );
        assert_eq!((result.recalled, result.facts), (1, 2));
        assert_eq!((result.noise_lines, result.content_lines), (1, 2));
        assert_eq!(result.missed, ["the hash"]);
    }

    #[test]
    fn the_offline_summarizer_meets_the_targets_on_the_corpus() {
        let results = evaluate(&corpus(), 2_000);
        let totals = totals(&results);
        assert!(totals.recall >= 0.8, "{}", render_markdown(2_000, &results));
        assert!(totals.noise <= 0.10, "{}", render_markdown(2_000, &results));
        assert!(totals.max_tokens <= 2_000);
        for result in &results {
            if let Some(share) = result.chinese_lines {
                assert!(share >= 0.8, "{}", result.summary);
            }
        }
    }

    #[test]
    fn every_case_has_facts_and_messages() {
        let cases = corpus();
        assert!(cases.len() >= 6);
        assert!(cases.iter().any(|case| case.chinese));
        assert!(cases.iter().any(|case| case.previous.is_some()));
        for case in &cases {
            assert!(case.facts.len() >= 8, "{}", case.name);
            assert!(case.messages.len() >= 10, "{}", case.name);
        }
    }
}
