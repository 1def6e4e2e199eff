//! What an import could not map one-to-one, line by line.

use std::fmt;

/// Everything worth telling the user about one import.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportReport {
    /// Readable records in the source.
    pub records: usize,
    /// Entries of the imported session (the header not counted).
    pub entries: usize,
    pub issues: Vec<ImportIssue>,
}

/// One problem, at a source line when it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportIssue {
    pub line: Option<usize>,
    pub kind: IssueKind,
}

impl ImportIssue {
    pub(crate) fn at(line: usize, kind: IssueKind) -> Self {
        Self {
            line: Some(line),
            kind,
        }
    }
}

/// The kinds of problems an import reports. None of them stops the import.
#[derive(Debug, Clone, PartialEq)]
pub enum IssueKind {
    /// The line is not a JSON object; it was skipped.
    MalformedLine { reason: String },
    /// A record type the importer does not map; kept as a `custom` entry.
    UnknownRecord { record_type: String },
    /// A content block of a type v3 has no block for (an Anthropic `document`, a `tool_reference`,
    /// a block type added later); kept as it is, which only a model of its own API can read.
    UnmappedBlock { block_type: String },
    /// An Anthropic content block v3 has no block for (a `document`, a `tool_reference`, a block
    /// type added later): the message holds a text naming it, the block kept beside the text as
    /// `anthropicBlock` (an Anthropic model gets a `document` back from there).
    BlockBesideText { block_type: String },
    /// A tool result Claude Code (≥ 2.1.8x) stored as a `<persisted-output>` preview: the full
    /// output is in the file it names (`<session>/tool-results/*.txt`), which the import leaves
    /// behind.
    OutputLeftBehind { file: String },
    /// A part of an OpenCode message whose type the importer does not map; kept with its message
    /// (`opencodeParts`), shown in no block.
    UnknownPart { part_type: String },
    /// The record's parent is not in the file; the entry became a root.
    MissingParent { parent: String },
    /// The record's parent chain leads back to it (a cycle no agent writes, but a damaged or edited
    /// file can hold); its parent was cut, so the entry is a root, as the loader would take it.
    ParentCycle { parent: String },
    /// A compaction boundary's logical parent is not in the file; the compaction continues from
    /// the record written before it, so the history before it stays on the path.
    BoundaryParentMissing { parent: String },
    /// Two records share one id; the later one got a derived id.
    DuplicateId { source_id: String },
    /// A tool result whose call is in no imported message; kept as a user message (providers refuse
    /// a result without its call).
    OrphanToolResult { tool_call_id: String },
    /// A tool call without a result although the conversation went on; an error result saying so
    /// was added after the call.
    MissingToolResultAdded { tool_call_id: String },
    /// A tool call without a result at the end of a branch (the agent stopped there); left as it is.
    ToolCallWithoutResult { tool_call_id: String },
    /// Tool arguments that are not a JSON object; kept as `{"input": <text>}`.
    UnparsedToolArguments { tool_call_id: String },
    /// A compaction marker without its summary; the compaction entry has an empty summary.
    CompactionWithoutSummary,
    /// A compaction without a token count; `tokensBefore` is 0.
    CompactionWithoutTokenCount,
    /// An image the v3 format cannot hold inline (a URL or a file path); kept as a text placeholder.
    ImageNotInline,
    /// The file holds no conversation (only metadata records); the session has no messages.
    NoConversation,
    /// Bytes of the line (or of the record file `file` of an OpenCode 1.x store) that are not
    /// UTF-8 were read as U+FFFD (`�`): the text around them is kept, the bytes themselves are not.
    InvalidUtf8 {
        /// The record file, relative to the store's `storage` folder; `None` for a line.
        file: Option<String>,
    },
    /// A record file of an OpenCode 1.x store (a message or a part) that could not be read (empty,
    /// cut short, not JSON): left out, the rest of the session imported.
    UnreadableRecordFile {
        /// The file, relative to the store's `storage` folder.
        file: String,
        /// Why it could not be read.
        reason: String,
    },
    /// Messages of the conversation are on branches beside the one the session continues (an
    /// edited prompt, an undone turn, links the agent wrote forked): the context at the leaf leaves
    /// them out; `ctxkit tree` shows them.
    MessagesBesideThePath { messages: usize },
    /// The source's session id cannot name a file (a path separator, a dots-only name, a control
    /// character, too long): the session is stored under a hash of it; `importedFrom.sessionId`
    /// keeps the original.
    SessionIdReplaced {
        /// The source's id, escaped and cut to 80 characters.
        original: String,
        /// The id the session is stored under.
        replacement: String,
    },
}

impl fmt::Display for IssueKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MalformedLine { reason } => {
                write!(formatter, "skipped a malformed line: {reason}")
            }
            Self::UnknownRecord { record_type } => {
                write!(
                    formatter,
                    "kept an unknown `{record_type}` record as a custom entry"
                )
            }
            Self::UnmappedBlock { block_type } => {
                write!(
                    formatter,
                    "kept a content block of type `{block_type}` as it is; v3 has no such block"
                )
            }
            Self::BlockBesideText { block_type } => {
                write!(
                    formatter,
                    "a content block of type `{block_type}` is a text naming it, the block kept \
                     beside it as `anthropicBlock`; v3 has no such block"
                )
            }
            Self::OutputLeftBehind { file } => {
                write!(
                    formatter,
                    "a tool result is Claude Code's preview of a larger output; the full output \
                     stays in `{file}` (not imported)"
                )
            }
            Self::UnknownPart { part_type } => {
                write!(
                    formatter,
                    "kept a part of unknown type `{part_type}` with its message; no block shows it"
                )
            }
            Self::MissingParent { parent } => {
                write!(
                    formatter,
                    "parent `{parent}` is not in the file; imported as a root"
                )
            }
            Self::ParentCycle { parent } => write!(
                formatter,
                "its parent `{parent}` descends from it (a cycle); imported as a root"
            ),
            Self::BoundaryParentMissing { parent } => write!(
                formatter,
                "compaction's parent `{parent}` is not in the file; continued from the record before it"
            ),
            Self::DuplicateId { source_id } => {
                write!(
                    formatter,
                    "id `{source_id}` appears twice; the later record got a new id"
                )
            }
            Self::OrphanToolResult { tool_call_id } => write!(
                formatter,
                "tool result `{tool_call_id}` has no matching call; kept as a user message"
            ),
            Self::MissingToolResultAdded { tool_call_id } => write!(
                formatter,
                "tool call `{tool_call_id}` has no result; added an error result"
            ),
            Self::ToolCallWithoutResult { tool_call_id } => {
                write!(
                    formatter,
                    "tool call `{tool_call_id}` has no result (end of a branch)"
                )
            }
            Self::UnparsedToolArguments { tool_call_id } => write!(
                formatter,
                "arguments of tool call `{tool_call_id}` are not a JSON object; kept as text"
            ),
            Self::CompactionWithoutSummary => {
                write!(formatter, "compaction has no summary record")
            }
            Self::CompactionWithoutTokenCount => {
                write!(
                    formatter,
                    "compaction has no token count; `tokensBefore` is 0"
                )
            }
            Self::SessionIdReplaced {
                original,
                replacement,
            } => write!(
                formatter,
                "session id `{original}` cannot name a file; stored as `{replacement}` (the original is kept in `importedFrom.sessionId`)"
            ),
            Self::MessagesBesideThePath { messages } => write!(
                formatter,
                "{messages} {} of the conversation {} beside the one the session continues; its \
                 context leaves {} out (`ctxkit tree` shows {})",
                if *messages == 1 {
                    "message"
                } else {
                    "messages"
                },
                if *messages == 1 {
                    "is on a branch"
                } else {
                    "are on branches"
                },
                if *messages == 1 { "it" } else { "them" },
                if *messages == 1 { "it" } else { "them" },
            ),
            Self::NoConversation => {
                write!(
                    formatter,
                    "the file holds no conversation; imported an empty session"
                )
            }
            Self::InvalidUtf8 { file } => {
                let place = file
                    .as_deref()
                    .map(|file| format!(" in `{file}`"))
                    .unwrap_or_default();
                write!(
                    formatter,
                    "bytes that are not UTF-8{place} were read as U+FFFD (`\u{fffd}`); the text \
                     around them is kept"
                )
            }
            Self::UnreadableRecordFile { file, reason } => write!(
                formatter,
                "left out the record file `{file}`, which could not be read ({reason}); the rest \
                 of the session is imported"
            ),
            Self::ImageNotInline => {
                write!(
                    formatter,
                    "image is not inline data; kept as a text placeholder"
                )
            }
        }
    }
}

impl fmt::Display for ImportIssue {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(formatter, "line {line}: {}", self.kind),
            None => write!(formatter, "{}", self.kind),
        }
    }
}

/// How many warnings of one kind are said one by one; the rest are counted in one line.
const SAID_PER_KIND: usize = 3;

/// One kind of issue as [`ImportReport::warning_lines`] meets it: how many, and the first and last
/// source line of those not said one by one.
type KindSeen = (
    std::mem::Discriminant<IssueKind>,
    usize,
    Option<(usize, usize)>,
);

impl ImportReport {
    /// The issues as lines to show a user, in order: the first few of each kind one by one, then
    /// one line per kind counting the rest, naming the kind by its first issue's text and the lines
    /// the rest are on (a damaged file of thousands of bad lines is a handful of lines, not
    /// thousands; QA: bare "97 more like these" lines did not say which kind they counted).
    pub fn warning_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        // Per kind, in the order first seen: how many, and the first and last source line.
        let mut kinds: Vec<KindSeen> = Vec::new();
        for issue in &self.issues {
            let kind = std::mem::discriminant(&issue.kind);
            let index = match kinds.iter().position(|(seen, ..)| *seen == kind) {
                Some(index) => index,
                None => {
                    kinds.push((kind, 0, None));
                    kinds.len() - 1
                }
            };
            let (_, count, span) = &mut kinds[index];
            *count += 1;
            if *count <= SAID_PER_KIND {
                lines.push(issue.to_string());
            } else if let Some(line) = issue.line {
                *span = Some(span.map_or((line, line), |(first, last)| {
                    (first.min(line), last.max(line))
                }));
            }
        }
        for (kind, count, span) in kinds {
            let more = count.saturating_sub(SAID_PER_KIND);
            if more == 0 {
                continue;
            }
            // The kind named by its first warning said above: its line, or its text.
            let like = self
                .issues
                .iter()
                .find(|issue| std::mem::discriminant(&issue.kind) == kind)
                .map(|issue| match issue.line {
                    Some(line) => format!("line {line}'s"),
                    None => format!("\"{}\"", issue.kind),
                })
                .unwrap_or_default();
            lines.push(match span {
                Some((from, to)) if from == to => {
                    format!("{more} more like {like}, at line {from}")
                }
                Some((from, to)) => format!("{more} more like {like}, lines {from}–{to}"),
                None => format!("{more} more like {like}"),
            });
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn malformed(line: usize) -> ImportIssue {
        ImportIssue::at(
            line,
            IssueKind::MalformedLine {
                reason: "EOF while parsing".to_owned(),
            },
        )
    }

    #[test]
    fn many_issues_of_one_kind_are_counted_in_one_line() {
        let mut issues: Vec<ImportIssue> = (10..=900).map(malformed).collect();
        issues.insert(
            1,
            ImportIssue::at(
                12,
                IssueKind::UnknownRecord {
                    record_type: "future".to_owned(),
                },
            ),
        );
        let report = ImportReport {
            issues,
            ..ImportReport::default()
        };
        let lines = report.warning_lines();
        assert_eq!(lines.len(), 5, "{lines:#?}");
        assert!(lines[0].starts_with("line 10: "), "{lines:#?}");
        assert!(lines[1].starts_with("line 12: "), "{lines:#?}");
        assert!(lines[3].starts_with("line 12: "), "{lines:#?}");
        assert_eq!(lines[4], "888 more like line 10's, lines 13–900");
    }

    #[test]
    fn a_few_issues_are_each_said() {
        let report = ImportReport {
            issues: (1..=3).map(malformed).collect(),
            ..ImportReport::default()
        };
        assert_eq!(report.warning_lines().len(), 3);
    }
}
