//! The corpus as data: one JSON file per session under `eval/summaries/`, the folder saying whether
//! the session was developed on or held out.

use std::path::{Path, PathBuf};

use ctxkit_protocol::AgentMessage;
use ctxkit_summarizer::SummaryPurpose;
use serde::Deserialize;

/// One fact a continuing model must know, found when any of its spellings is in the text.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fact {
    pub what: String,
    /// Case-insensitive substrings; any one counts.
    pub any_of: Vec<String>,
}

impl Fact {
    /// Whether any spelling is in `lowercase_text` (already lowercased).
    pub fn found_in(&self, lowercase_text: &str) -> bool {
        self.any_of
            .iter()
            .any(|needle| lowercase_text.contains(&needle.to_lowercase()))
    }
}

/// Which summary a case asks for, as its file spells it.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
enum PurposeName {
    History,
    Branch,
    TurnPrefix,
}

/// A case file as written.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CaseFile {
    name: String,
    purpose: PurposeName,
    #[serde(default)]
    chinese: bool,
    #[serde(default)]
    previous: Option<String>,
    #[serde(default)]
    reference: Option<String>,
    facts: Vec<Fact>,
    messages: Vec<AgentMessage>,
}

/// One session of the corpus.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    /// The folder under the corpus root (`developed`, `held-out`, `held-out/…`).
    pub group: String,
    /// The span being summarized.
    pub messages: Vec<AgentMessage>,
    /// The earlier summary, for an update.
    pub previous: Option<String>,
    /// A hand-written summary of the span, as a good model would write it: the size the summary is
    /// compared with, and the source of the facts.
    pub reference: Option<String>,
    pub purpose: SummaryPurpose,
    /// Whether the session is held in Chinese (the summary's contents should be too).
    pub chinese: bool,
    pub facts: Vec<Fact>,
}

impl Case {
    /// Written after the summarizer was settled, and not used to change it.
    pub fn held_out(&self) -> bool {
        self.group.starts_with("held-out")
    }
}

/// Why the corpus could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    /// A folder or file could not be read.
    #[error("cannot read `{path}`: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A case file is not a case.
    #[error("`{path}` is not a summary case: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// The corpus root in the source tree.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("eval/summaries")
}

/// Every case under the source tree's corpus root.
pub fn corpus() -> Result<Vec<Case>, CorpusError> {
    load_corpus(&corpus_dir())
}

/// Every `*.json` case under `root`, ordered by path.
pub fn load_corpus(root: &Path) -> Result<Vec<Case>, CorpusError> {
    let mut paths = Vec::new();
    collect_json(root, &mut paths)?;
    paths.sort();
    paths.iter().map(|path| load_case(root, path)).collect()
}

fn collect_json(dir: &Path, paths: &mut Vec<PathBuf>) -> Result<(), CorpusError> {
    let read_error = |source| CorpusError::Read {
        path: dir.to_owned(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let path = entry.map_err(read_error)?.path();
        if path.is_dir() {
            collect_json(&path, paths)?;
        } else if path
            .extension()
            .is_some_and(|extension| extension == "json")
        {
            paths.push(path);
        }
    }
    Ok(())
}

fn load_case(root: &Path, path: &Path) -> Result<Case, CorpusError> {
    let text = std::fs::read_to_string(path).map_err(|source| CorpusError::Read {
        path: path.to_owned(),
        source,
    })?;
    let file: CaseFile = serde_json::from_str(&text).map_err(|source| CorpusError::Parse {
        path: path.to_owned(),
        source,
    })?;
    let group = path
        .parent()
        .and_then(|parent| parent.strip_prefix(root).ok())
        .map(|relative| relative.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    Ok(Case {
        name: file.name,
        group,
        messages: file.messages,
        previous: file.previous,
        reference: file.reference,
        purpose: match file.purpose {
            PurposeName::History => SummaryPurpose::History,
            PurposeName::Branch => SummaryPurpose::Branch,
            PurposeName::TurnPrefix => SummaryPurpose::TurnPrefix,
        },
        chinese: file.chinese,
        facts: file.facts,
    })
}
