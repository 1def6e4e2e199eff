//! The four resource types a package can contribute, always processed in this fixed order.

/// A type of resource contributed by packages and settings arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceKind {
    /// Extension modules (`.ts` / `.js`), loaded by the engine.
    Extensions,
    /// Skills (`SKILL.md` or root-level `.md` files).
    Skills,
    /// Prompt templates (`.md`).
    Prompts,
    /// Themes (`.json`).
    Themes,
}

impl ResourceKind {
    /// All kinds in processing order.
    pub const ALL: [Self; 4] = [Self::Extensions, Self::Skills, Self::Prompts, Self::Themes];

    /// The settings key, manifest key and convention directory name.
    pub fn key(self) -> &'static str {
        match self {
            Self::Extensions => "extensions",
            Self::Skills => "skills",
            Self::Prompts => "prompts",
            Self::Themes => "themes",
        }
    }
}

impl std::fmt::Display for ResourceKind {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.key())
    }
}
