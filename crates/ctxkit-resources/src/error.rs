//! Error types of the crate.

/// Error parsing YAML frontmatter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line}, column {column}")]
pub struct FrontmatterError {
    /// The YAML parser's description of the problem.
    pub message: String,
    /// 1-based line within the frontmatter.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}
