//! Diagnostics of resource loading: problems that skip one resource but let the rest load,
//! returned as values (the library never prints).

use std::path::{Path, PathBuf};

/// The type of resource a name collision happened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollisionKind {
    /// Two skills with the same `name`.
    Skill,
    /// Two prompt templates with the same file name.
    Prompt,
    /// Two themes with the same `name`.
    Theme,
}

impl CollisionKind {
    /// `skill`, `prompt` or `theme`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skill => "skill",
            Self::Prompt => "prompt",
            Self::Theme => "theme",
        }
    }
}

/// A diagnostic about one resource file or path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceDiagnostic {
    /// The resource was skipped or loaded with a caveat (invalid name, missing path, …).
    Warning {
        /// What is wrong.
        message: String,
        /// The file or path concerned.
        path: PathBuf,
    },
    /// The resource could not be used at all (missing CLI path, broken package, …).
    Error {
        /// What is wrong.
        message: String,
        /// The file or path concerned.
        path: PathBuf,
    },
    /// A later resource had the same name as an earlier one and was dropped (first wins).
    Collision {
        /// The resource type.
        kind: CollisionKind,
        /// The contested name.
        name: String,
        /// The resource that was kept.
        winner_path: PathBuf,
        /// The resource that was dropped.
        loser_path: PathBuf,
    },
}

impl ResourceDiagnostic {
    /// A warning about `path`: the resource was skipped or loaded with a caveat.
    pub fn warning(message: impl Into<String>, path: impl AsRef<Path>) -> Self {
        Self::Warning {
            message: message.into(),
            path: path.as_ref().to_path_buf(),
        }
    }

    /// An error about `path`: the resource could not be used.
    pub fn error(message: impl Into<String>, path: impl AsRef<Path>) -> Self {
        Self::Error {
            message: message.into(),
            path: path.as_ref().to_path_buf(),
        }
    }

    /// `warning`, `error` or `collision` (the reference's `type`).
    pub fn severity(&self) -> &'static str {
        match self {
            Self::Warning { .. } => "warning",
            Self::Error { .. } => "error",
            Self::Collision { .. } => "collision",
        }
    }

    /// The message; collisions read `name "<name>" collision` (`"/<name>"` for prompts).
    pub fn message(&self) -> String {
        match self {
            Self::Warning { message, .. } | Self::Error { message, .. } => message.clone(),
            Self::Collision { kind, name, .. } => match kind {
                CollisionKind::Prompt => format!("name \"/{name}\" collision"),
                CollisionKind::Skill | CollisionKind::Theme => format!("name \"{name}\" collision"),
            },
        }
    }

    /// The path concerned (the loser for collisions).
    pub fn path(&self) -> &Path {
        match self {
            Self::Warning { path, .. } | Self::Error { path, .. } => path,
            Self::Collision { loser_path, .. } => loser_path,
        }
    }
}
