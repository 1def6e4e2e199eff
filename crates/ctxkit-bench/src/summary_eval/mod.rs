//! `summary-eval`: how much of what a continuing model must know an offline summary keeps, beside
//! the verbatim tail of the span at the same size. The corpus is data: one JSON file per session
//! under `crates/ctxkit-bench/eval/summaries/` (`developed/…`, `held-out/…`), each with the span's
//! messages, the earlier summary of an update and a hand-written list of facts. Each session is
//! summarized the way a compaction would summarize it; the report gives the recall of those facts,
//! the summary's size (exact cl100k tokens) and its noise rate (content lines carrying none of the
//! facts), and the same recall and noise for the last part of the serialized span cut to the
//! summary's size.

mod corpus;
mod report;

use ctxkit_compaction::{FileOperations, Prompts, serialize_conversation};
use ctxkit_summarizer::SummarySpan;
use ctxkit_summarizer::{SummaryPurpose, SummaryRequest};
use ctxkit_summarizer_offline::summarize_offline;
use ctxkit_tokens::{Encoding, count_text_tokens};
use serde::Serialize;

pub use corpus::{Case, Fact, corpus, corpus_dir, load_corpus};
pub use report::{ReferenceTotals, Totals, render_markdown, size_ratio, totals};

/// The request a compaction (or branch summary) would send for a case.
pub fn request(case: &Case, max_tokens: u64) -> SummaryRequest {
    let prompts = Prompts::default();
    let mut text = format!("<conversation>\n{}\n</conversation>\n\n", span_text(case));
    let instructions = match (&case.previous, case.purpose) {
        (_, SummaryPurpose::Branch) => &prompts.branch,
        (_, SummaryPurpose::TurnPrefix) => &prompts.turn_prefix,
        (Some(previous), SummaryPurpose::History) => {
            text.push_str(&format!(
                "<previous-summary>\n{previous}\n</previous-summary>\n\n"
            ));
            &prompts.update
        }
        (None, SummaryPurpose::History) => &prompts.initial,
    };
    text.push_str(instructions);
    let mut files = FileOperations::default();
    for message in &case.messages {
        files.add_from_message(message);
    }
    let lists = files.lists();
    SummaryRequest {
        purpose: case.purpose,
        system_prompt: prompts.system,
        user_text: text,
        max_tokens: Some(max_tokens),
        reasoning: None,
        source: SummarySpan {
            messages: case.messages.clone(),
            omitted_messages: 0,
            previous_summary: case.previous.clone(),
            read_files: lists.read_files,
            modified_files: lists.modified_files,
            focus: None,
            room_tokens: None,
            continues_summary: false,
        },
    }
}

/// The span as a compaction serializes it for a model.
pub fn span_text(case: &Case) -> String {
    serialize_conversation(&ctxkit_session::convert_to_llm(&case.messages))
}

/// The last part of `text` holding at most `tokens` cl100k tokens, starting at a line when one
/// fits: the verbatim-tail baseline.
pub fn verbatim_tail(text: &str, tokens: u64) -> &str {
    let fits = |start: usize| count_text_tokens(&text[start..], Encoding::Cl100kBase) <= tokens;
    // The smallest char boundary whose suffix fits (suffixes shrink as the start moves right).
    let boundaries: Vec<usize> = text.char_indices().map(|(index, _)| index).collect();
    let (mut low, mut high) = (0, boundaries.len());
    while low < high {
        let middle = (low + high) / 2;
        if fits(boundaries[middle]) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    let start = boundaries.get(low).copied().unwrap_or(text.len());
    // Start at the next line when the cut falls inside one and a line follows soon; inside a long
    // line (a real session's tool output or reply), at the next word, so the tail keeps its size.
    if start == 0 || text[..start].ends_with('\n') {
        return &text[start..];
    }
    let next = |pattern: char| text[start..].find(pattern).map(|offset| start + offset + 1);
    let line_start = next('\n').filter(|line| line - start <= TAIL_LINE_SLACK);
    let word_start = next(' ').filter(|word| word - start <= TAIL_LINE_SLACK);
    &text[line_start.or(word_start).unwrap_or(start).min(text.len())..]
}

/// How far (bytes) the verbatim tail may move its start to begin at a line or a word.
const TAIL_LINE_SLACK: usize = 200;

/// One text measured against a case's facts.
#[derive(Debug, Clone, Serialize)]
pub struct Measure {
    pub recalled: usize,
    /// Exact cl100k tokens.
    pub tokens: u64,
    pub content_lines: usize,
    pub noise_lines: usize,
    pub missed: Vec<String>,
    pub noise: Vec<String>,
}

impl Measure {
    pub fn noise_rate(&self) -> f64 {
        self.noise_lines as f64 / self.content_lines.max(1) as f64
    }
}

/// The measured summary of one case and its verbatim-tail baseline at the same size.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub name: String,
    /// The case's folder under the corpus (`developed`, `held-out`, …).
    pub group: String,
    pub facts: usize,
    /// Tokens of the serialized span.
    pub span_tokens: u64,
    pub summary: Measure,
    pub tail: Measure,
    /// The case's hand-written reference summary, measured the same way.
    pub reference: Option<Measure>,
    /// For a Chinese session: the share of the summary's content lines holding Chinese text.
    pub chinese_lines: Option<f64>,
    pub summary_text: String,
}

/// Lines that are structure rather than content: headings, the notice, placeholders, notes of what
/// the budget left out.
pub(crate) fn is_content(line: &str) -> bool {
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

/// Measures a text against a case's facts.
pub fn measure(case: &Case, text: &str) -> Measure {
    let lower = text.to_lowercase();
    let missed: Vec<String> = case
        .facts
        .iter()
        .filter(|fact| !fact.found_in(&lower))
        .map(|fact| fact.what.clone())
        .collect();
    let content: Vec<&str> = text.lines().filter(|line| is_content(line)).collect();
    let noise: Vec<String> = content
        .iter()
        .filter(|line| {
            let line = line.to_lowercase();
            !case.facts.iter().any(|fact| fact.found_in(&line))
        })
        .map(|line| (*line).to_owned())
        .collect();
    Measure {
        recalled: case.facts.len() - missed.len(),
        tokens: count_text_tokens(text, Encoding::Cl100kBase),
        content_lines: content.len(),
        noise_lines: noise.len(),
        missed,
        noise,
    }
}

/// Scores a summary and the verbatim tail of the same size against a case's facts.
pub fn score(case: &Case, summary: &str) -> CaseResult {
    let span = span_text(case);
    let summary_measure = measure(case, summary);
    let tail = measure(case, verbatim_tail(&span, summary_measure.tokens));
    let chinese_lines = case.chinese.then(|| {
        let content: Vec<&str> = summary.lines().filter(|line| is_content(line)).collect();
        content.iter().filter(|line| has_han(line)).count() as f64 / content.len().max(1) as f64
    });
    CaseResult {
        name: case.name.clone(),
        group: case.group.clone(),
        facts: case.facts.len(),
        span_tokens: count_text_tokens(&span, Encoding::Cl100kBase),
        summary: summary_measure,
        tail,
        reference: case.reference.as_deref().map(|text| measure(case, text)),
        chinese_lines,
        summary_text: summary.to_owned(),
    }
}

/// Summarizes and scores every case at one budget.
pub fn evaluate(cases: &[Case], max_tokens: u64) -> Vec<CaseResult> {
    cases
        .iter()
        .map(|case| score(case, &summarize_offline(&request(case, max_tokens))))
        .collect()
}

#[cfg(test)]
mod tests;
