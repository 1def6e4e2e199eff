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

    /// The message; a collision names its kind, the name (`/name` for prompts), the resource
    /// dropped and the one kept: ``skill "dup": `<loser>` is hidden by `<winner>` ``.
    pub fn message(&self) -> String {
        match self {
            Self::Warning { message, .. } | Self::Error { message, .. } => message.clone(),
            Self::Collision {
                kind,
                name,
                winner_path,
                loser_path,
            } => {
                let slash = match kind {
                    CollisionKind::Prompt => "/",
                    CollisionKind::Skill | CollisionKind::Theme => "",
                };
                format!(
                    "{} \"{slash}{name}\": `{}` is hidden by `{}`",
                    kind.as_str(),
                    loser_path.display(),
                    winner_path.display()
                )
            }
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

impl std::fmt::Display for ResourceDiagnostic {
    /// One line: ``severity: message (`path`)``; a collision's message names both paths already.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {}", self.severity(), self.message())?;
        match self {
            Self::Warning { path, .. } | Self::Error { path, .. } => {
                write!(formatter, " (`{}`)", path.display())
            }
            Self::Collision { .. } => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA: `collision: name "dup" collision (<loser>)` named neither the kind nor the resource that
    /// won.
    #[test]
    fn a_collision_names_its_kind_and_both_resources() {
        let collision = |kind| ResourceDiagnostic::Collision {
            kind,
            name: "dup".to_owned(),
            winner_path: PathBuf::from("/p/.ctxkit/skills/dup/SKILL.md"),
            loser_path: PathBuf::from("/h/.ctxkit/skills/dup/SKILL.md"),
        };
        assert_eq!(
            collision(CollisionKind::Skill).to_string(),
            "collision: skill \"dup\": `/h/.ctxkit/skills/dup/SKILL.md` is hidden by \
             `/p/.ctxkit/skills/dup/SKILL.md`"
        );
        assert!(
            collision(CollisionKind::Prompt)
                .message()
                .starts_with("prompt \"/dup\": `/h/")
        );
        assert!(
            collision(CollisionKind::Theme)
                .message()
                .starts_with("theme \"dup\"")
        );
        assert_eq!(
            ResourceDiagnostic::warning("Bad", "/x").to_string(),
            "warning: Bad (`/x`)"
        );
    }
}
