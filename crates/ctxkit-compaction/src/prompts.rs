//! The texts sent to summarizers. ctxkit's own wording, with the fixed section headings and tags;
//! shipped in `templates/` and replaceable file by file from a directory of the user's.

use std::path::Path;

/// Every prompt a summary request uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompts {
    /// The system prompt of every summary request.
    pub system: String,
    /// Instructions for a first summary.
    pub initial: String,
    /// Instructions for updating a previous summary.
    pub update: String,
    /// Instructions for the beginning of a split turn.
    pub turn_prefix: String,
    /// Instructions for summarizing an abandoned branch.
    pub branch: String,
    /// Text placed before a branch summary.
    pub branch_preamble: String,
    /// The opening of a summary instruction that continues the conversation (a cache-prefix
    /// request, `compaction.cachePrefix`), which has no system prompt of its own.
    pub continuation: String,
}

impl Default for Prompts {
    fn default() -> Self {
        Self {
            system: trimmed(include_str!("../templates/system.md")),
            initial: trimmed(include_str!("../templates/initial.md")),
            update: trimmed(include_str!("../templates/update.md")),
            turn_prefix: trimmed(include_str!("../templates/turn-prefix.md")),
            branch: trimmed(include_str!("../templates/branch.md")),
            branch_preamble: include_str!("../templates/branch-preamble.md")
                .trim_start()
                .to_owned(),
            continuation: trimmed(include_str!("../templates/continuation.md")),
        }
    }
}

fn trimmed(text: &str) -> String {
    text.trim().to_owned()
}

/// A prompt file that exists but could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read prompt file `{path}`: {source}")]
pub struct PromptFileError {
    pub path: std::path::PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl Prompts {
    /// The built-in prompts with each one replaced by `<dir>/<name>.md` where that file exists
    /// (`system`, `initial`, `update`, `turn-prefix`, `branch`, `branch-preamble`, `continuation`).
    pub fn with_overrides(dir: &Path) -> Result<Self, PromptFileError> {
        let mut prompts = Self::default();
        let slots: [(&str, &mut String); 7] = [
            ("system", &mut prompts.system),
            ("initial", &mut prompts.initial),
            ("update", &mut prompts.update),
            ("turn-prefix", &mut prompts.turn_prefix),
            ("branch", &mut prompts.branch),
            ("branch-preamble", &mut prompts.branch_preamble),
            ("continuation", &mut prompts.continuation),
        ];
        for (name, slot) in slots {
            let path = dir.join(format!("{name}.md"));
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    *slot = if name == "branch-preamble" {
                        text
                    } else {
                        trimmed(&text)
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(PromptFileError { path, source }),
            }
        }
        Ok(prompts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_prompts_carry_the_fixed_headings() {
        let prompts = Prompts::default();
        for heading in [
            "## Goal",
            "## Constraints & Preferences",
            "## Progress",
            "### Done",
            "### In Progress",
            "### Blocked",
            "## Key Decisions",
            "## Next Steps",
            "## Critical Context",
        ] {
            assert!(prompts.initial.contains(heading), "{heading}");
            assert!(prompts.update.contains(heading), "{heading}");
        }
        assert!(prompts.turn_prefix.contains("## Original Request"));
    }

    #[test]
    fn files_replace_single_prompts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("initial.md"), "  mine  \n").unwrap();
        let prompts = Prompts::with_overrides(dir.path()).unwrap();
        assert_eq!(prompts.initial, "mine");
        assert_eq!(prompts.update, Prompts::default().update);
    }
}
