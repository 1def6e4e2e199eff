//! `real-summary-eval`: the offline summarizer on the compactions real agents made. The sessions
//! are listed in `eval/real-sessions.tsv` and gathered by `eval/gather-real-sessions` (never
//! committed). Each session is read as `ctxkit` reads it (a Pi/OpenClaw file as it is, a Claude
//! Code transcript through the importer); at each compaction on the path to its leaf, the span the
//! real agent summarized (from the previous compaction's first kept entry, or the start, to this
//! compaction's first kept entry) is summarized offline with the request's limit set to the real
//! summary's size. The score is the share of the identifiers the real summary kept (and the span
//! holds) that ctxkit's summary also holds, beside the verbatim tail of the serialized span cut to
//! the summary's size.

mod identifiers;
mod junk;
mod points;
mod report;

use std::path::{Path, PathBuf};

use ctxkit_compaction::FileLists;
use ctxkit_summarizer::SummaryPurpose;
use ctxkit_summarizer_offline::summarize_offline;
use ctxkit_tokens::{Encoding, count_text_tokens};
use serde::Serialize;

use crate::summary_eval::{Case, CaseResult, Fact, request, score, span_text};

pub use identifiers::{identifiers, is_identifier};
pub use junk::{Junk, SpanVocabulary, junk};
pub use points::{CompactionPoint, compaction_points, load_session_entries};
pub use report::{SetTotals, render_report};

/// Spans smaller than this (serialized tokens) are not scored: a compaction of almost nothing
/// (an agent compacting an empty conversation in a loop) says nothing about summaries.
pub const MIN_SPAN_TOKENS: u64 = 1_000;
/// The limit of the own-size summary: the room a default compaction leaves for its summary (0.8 ×
/// the default `reserveTokens` of 16,384), as `summary-eval` uses.
const OWN_SIZE_LIMIT: u64 = 13_107;
/// Points whose real summary keeps fewer identifiers of the span than this are not scored.
pub const MIN_IDENTIFIERS: usize = 3;

/// One session of the gathered corpus, as `manifest.tsv` lists it.
#[derive(Debug, Clone)]
pub struct ManifestRow {
    pub repository: String,
    pub path: String,
    pub agent: String,
    pub split: String,
    pub file: PathBuf,
}

/// The rows of `dir/manifest.tsv` (written by `eval/gather-real-sessions`).
pub fn read_manifest(dir: &Path) -> Result<Vec<ManifestRow>, String> {
    let path = dir.join("manifest.tsv");
    let text = std::fs::read_to_string(&path).map_err(|error| {
        format!(
            "{}: {error} (run eval/gather-real-sessions)",
            path.display()
        )
    })?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|column| *column == name)
            .ok_or_else(|| format!("{}: no column {name}", path.display()))
    };
    let (repository, file_path, agent, split, file) = (
        column("repository")?,
        column("path")?,
        column("agent")?,
        column("split")?,
        column("file")?,
    );
    Ok(lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            let cell = |index: usize| cells.get(index).copied().unwrap_or_default().to_owned();
            ManifestRow {
                repository: cell(repository),
                path: cell(file_path),
                agent: cell(agent),
                split: cell(split),
                file: dir.join(cell(file)),
            }
        })
        .collect())
}

/// One scored compaction point.
#[derive(Debug, Clone, Serialize)]
pub struct PointResult {
    pub repository: String,
    pub agent: String,
    pub split: String,
    /// File name and the point's position among the file's compactions.
    pub name: String,
    /// Serialized span tokens (cl100k).
    pub span_tokens: u64,
    /// The real summary's cl100k tokens.
    pub real_tokens: u64,
    /// Tokens of the summary the offline summarizer writes at its own size (no limit from the
    /// real summary): the size a user gets, which the scored summary (cut to the real size) hides.
    pub own_tokens: u64,
    pub result: CaseResult,
    /// Junk lines of ours and of the real summary (`junk.rs`): judged on the span alone.
    pub junk: Junk,
    pub real_junk: Junk,
}

impl PointResult {
    pub fn size_ratio(&self) -> f64 {
        self.result.summary.tokens as f64 / self.real_tokens.max(1) as f64
    }

    /// The summary at its own size against the real summary's.
    pub fn own_ratio(&self) -> f64 {
        self.own_tokens as f64 / self.real_tokens.max(1) as f64
    }
}

/// Why a point was not scored.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedPoint {
    pub name: String,
    pub reason: String,
}

/// The case a point makes: the span, the earlier summary, and the real summary's identifiers that
/// the span (or the earlier summary) holds, each a fact.
pub fn point_case(point: &CompactionPoint, name: &str, group: &str) -> Case {
    let mut source = serde_json::to_string(&point.messages)
        .unwrap_or_default()
        .to_lowercase();
    // JSON escapes a line break inside a string; an identifier never holds one.
    source.push_str(&point.previous.clone().unwrap_or_default().to_lowercase());
    let facts = identifiers(&point.summary)
        .into_iter()
        .filter(|identifier| source.contains(identifier.as_str()))
        .map(|identifier| Fact {
            what: identifier.clone(),
            any_of: vec![identifier],
        })
        .collect();
    Case {
        name: name.to_owned(),
        group: group.to_owned(),
        messages: point.messages.clone(),
        previous: point.previous.clone(),
        reference: Some(point.summary.clone()),
        purpose: SummaryPurpose::History,
        chinese: false,
        facts,
    }
}

/// Scores one point, or says why it is not scored.
pub fn evaluate_point(
    point: &CompactionPoint,
    row: &ManifestRow,
    name: &str,
) -> Result<PointResult, SkippedPoint> {
    let case = point_case(point, name, &row.split);
    let span_tokens = count_text_tokens(&span_text(&case), Encoding::Cl100kBase);
    let skip = |reason: String| SkippedPoint {
        name: name.to_owned(),
        reason,
    };
    if span_tokens == 0 {
        // A transcript that begins with the summary of the session it continues, or a compaction
        // right after another.
        return Err(skip("nothing before it in the file".to_owned()));
    }
    if span_tokens < MIN_SPAN_TOKENS {
        return Err(skip(format!("span of {span_tokens} tokens")));
    }
    if case.facts.len() < MIN_IDENTIFIERS {
        return Err(skip(format!(
            "the real summary keeps {} identifiers of the span",
            case.facts.len()
        )));
    }
    let real_tokens = count_text_tokens(&point.summary, Encoding::Cl100kBase);
    let summary = summarize_offline(&request(&case, real_tokens));
    let mut source = serde_json::to_string(&point.messages).unwrap_or_default();
    source.push_str(&span_text(&case));
    source.push_str(point.previous.as_deref().unwrap_or_default());
    let vocabulary = SpanVocabulary::new(&source);
    // As a compaction asks since Pi 1.6: no limit but the default compaction budget.
    let own = summarize_offline(&request(&case, OWN_SIZE_LIMIT));
    Ok(PointResult {
        repository: row.repository.clone(),
        agent: row.agent.clone(),
        split: row.split.clone(),
        name: name.to_owned(),
        span_tokens,
        real_tokens,
        own_tokens: count_text_tokens(&own, Encoding::Cl100kBase),
        result: score(&case, &summary),
        junk: junk(&summary, &vocabulary),
        real_junk: junk(&point.summary, &vocabulary),
    })
}

/// Every point of every listed session of `split` (all splits but `usage` when `None`). A real
/// summary's `<read-files>`/`<modified-files>` blocks (which Pi's and OpenClaw's compaction append
/// to the model's summary, as ctxkit's does to the summarizer's) are not the summarizer's text and
/// are left out of its facts and its size unless `keep_file_blocks`.
pub fn evaluate_corpus(
    rows: &[ManifestRow],
    split: Option<&str>,
    keep_file_blocks: bool,
) -> (Vec<PointResult>, Vec<SkippedPoint>) {
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for row in rows {
        let wanted = match split {
            Some(split) => row.split == split,
            None => row.split != "usage",
        };
        if !wanted {
            continue;
        }
        let file_name = Path::new(&row.path)
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let points =
            match load_session_entries(&row.file).map(|entries| compaction_points(&entries)) {
                Ok(points) => points,
                Err(error) => {
                    skipped.push(SkippedPoint {
                        name: file_name,
                        reason: error,
                    });
                    continue;
                }
            };
        for (index, point) in points.iter().enumerate() {
            let mut point = point.clone();
            if !keep_file_blocks {
                point.summary = FileLists::strip_blocks(&point.summary).to_owned();
            }
            let point = &point;
            let name = format!("{}#{}", short_name(&file_name), index + 1);
            match evaluate_point(point, row, &name) {
                Ok(result) => results.push(result),
                Err(skip) => skipped.push(skip),
            }
        }
    }
    (results, skipped)
}

#[cfg(test)]
mod tests;

/// A point's file in eight characters: the first eight of the session id a file name holds (Claude
/// Code's and OpenClaw's names start with it, Pi's and Codex's start with a time), else of the name.
fn short_name(file_name: &str) -> String {
    let bytes = file_name.as_bytes();
    let is_uuid = |at: usize| {
        bytes.len() >= at + UUID_LEN
            && bytes[at..at + UUID_LEN]
                .iter()
                .enumerate()
                .all(|(offset, byte)| match offset {
                    8 | 13 | 18 | 23 => *byte == b'-',
                    _ => byte.is_ascii_hexdigit(),
                })
    };
    let start = (0..bytes.len()).find(|at| is_uuid(*at)).unwrap_or(0);
    file_name[start..].chars().take(8).collect()
}

/// `8-4-4-4-12` hex digits.
const UUID_LEN: usize = 36;
