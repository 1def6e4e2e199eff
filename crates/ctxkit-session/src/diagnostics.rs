//! Problems found in a session file. Loading tolerates them (as Pi does) and records them here;
//! `ctxkit check` prints them and fails.

use std::fmt;

/// One problem, located by file line where it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line in the file.
    pub line: Option<usize>,
    pub kind: DiagnosticKind,
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// The line is not JSON; it is skipped (and kept in the file).
    InvalidJson { message: String },
    /// The last line is cut off (no newline, not JSON): an append was interrupted. Skipped; the next
    /// append starts on a new line.
    TornLastLine { message: String },
    /// The line is JSON but not an object.
    NotAnObject,
    /// The entry has no string `type`.
    NoType,
    /// The entry has no string `id`, so it cannot take part in the tree.
    NoId,
    /// Bytes that are not UTF-8 were replaced by U+FFFD when reading.
    InvalidUtf8,
    /// A second `session` header; ignored.
    ExtraHeader,
    /// The header names a format version newer than ctxkit writes; the file is read as v3 and
    /// never written.
    NewerVersion { version: u64 },
    /// Two entries share an id; lookups find the later one.
    DuplicateId { id: String },
    /// The parent id names no entry; the entry is treated as a root.
    MissingParent { id: String, parent_id: String },
    /// Following parents from this entry comes back to it; ctxkit treats it as a root.
    ParentCycle { id: String },
    /// A compaction keeps entries from an id that does not exist.
    DanglingFirstKept { id: String, target: String },
    /// A label names an entry that does not exist.
    DanglingLabelTarget { id: String, target: String },
}

impl DiagnosticKind {
    /// Whether the file lost something a reader would miss: a line skipped, a chain cut, bytes
    /// replaced. A label naming a missing entry loses nothing (Pi ignores it), and a newer format
    /// version is not damage (it is said in its own words).
    pub fn is_damage(&self) -> bool {
        match self {
            Self::DanglingLabelTarget { .. } | Self::NewerVersion { .. } => false,
            Self::InvalidJson { .. }
            | Self::TornLastLine { .. }
            | Self::NotAnObject
            | Self::NoType
            | Self::NoId
            | Self::InvalidUtf8
            | Self::ExtraHeader
            | Self::DuplicateId { .. }
            | Self::MissingParent { .. }
            | Self::ParentCycle { .. }
            | Self::DanglingFirstKept { .. } => true,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(formatter, "line {line}: ")?;
        }
        write!(formatter, "{}", self.kind)
    }
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidJson { message } => {
                write!(formatter, "not valid JSON ({message}); line skipped")
            }
            Self::TornLastLine { message } => {
                write!(
                    formatter,
                    "last line is cut off ({message}); an append was interrupted"
                )
            }
            Self::NotAnObject => write!(formatter, "not a JSON object; line skipped"),
            Self::NoType => write!(formatter, "entry has no string `type`; line skipped"),
            Self::NoId => write!(formatter, "entry has no string `id`; line skipped"),
            Self::InvalidUtf8 => write!(formatter, "invalid UTF-8 replaced by U+FFFD"),
            Self::ExtraHeader => write!(formatter, "a second session header; ignored"),
            Self::NewerVersion { version } => write!(
                formatter,
                "written by a newer version (session format v{version}; this ctxkit writes v3); read as v3, never written"
            ),
            Self::DuplicateId { id } => {
                write!(formatter, "duplicate entry id `{id}`; the later entry wins")
            }
            Self::MissingParent { id, parent_id } => {
                write!(
                    formatter,
                    "entry `{id}` has a missing parent `{parent_id}`; treated as a root"
                )
            }
            Self::ParentCycle { id } => {
                write!(
                    formatter,
                    "entry `{id}` is its own ancestor (parent cycle); treated as a root"
                )
            }
            Self::DanglingFirstKept { id, target } => {
                write!(
                    formatter,
                    "compaction `{id}` keeps from a missing entry `{target}`"
                )
            }
            Self::DanglingLabelTarget { id, target } => {
                write!(formatter, "label `{id}` targets a missing entry `{target}`")
            }
        }
    }
}
