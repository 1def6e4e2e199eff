//! `grep`: a regular-expression search over files, respecting `.gitignore` (the `ignore` crate's
//! walker, as ripgrep's).

use std::path::Path;

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use regex::RegexBuilder;

use serde::Deserialize;

use super::files::MAX_READ_BYTES;
use super::limit::Keep;
use super::{ToolContext, ToolOutcome, bounded_outcome, lax};
use crate::workspace::Access;

/// The default number of matches.
const MATCH_LIMIT: u64 = 100;
/// Longer matching lines are cut.
const LINE_CHARS: usize = 500;

/// The arguments of `grep`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepArguments {
    pattern: String,
    #[serde(default)]
    pub(super) path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default, deserialize_with = "lax::optional_bool")]
    ignore_case: bool,
    #[serde(default, deserialize_with = "lax::optional_bool")]
    literal: bool,
    #[serde(default, deserialize_with = "lax::optional_u64")]
    limit: Option<u64>,
}

/// `grep {pattern, path?, glob?, ignoreCase?, literal?, limit?}`.
pub fn grep(
    arguments: GrepArguments,
    context: &ToolContext,
    call_id: &str,
) -> Result<ToolOutcome, String> {
    let pattern = arguments.pattern.as_str();
    let shown = arguments.path.as_deref().unwrap_or(".");
    let glob = arguments.glob.as_deref();
    let ignore_case = arguments.ignore_case;
    let literal = arguments.literal;
    let limit = arguments.limit.unwrap_or(MATCH_LIMIT);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX).max(1);
    let source = if literal {
        regex::escape(pattern)
    } else {
        pattern.to_owned()
    };
    let regex = RegexBuilder::new(&source)
        .case_insensitive(ignore_case)
        .build()
        .map_err(|error| format!("Invalid pattern: {error}"))?;
    let target = context.target(shown, Access::Read)?;
    let root = target.path.clone();
    if !root.exists() {
        return Err(format!("`{shown}` does not exist"));
    }
    let jail = std::sync::Arc::new(target.jail);
    let mut walker = WalkBuilder::new(&root);
    walker.hidden(false).git_ignore(true).require_git(false);
    // ctxkit's home and the user's credentials are never walked into (a project at `~`).
    let walk_jail = std::sync::Arc::clone(&jail);
    walker.filter_entry(move |entry| {
        entry.file_name() != ".git" && !walk_jail.is_denied(entry.path())
    });
    if let Some(glob) = glob {
        let mut overrides = OverrideBuilder::new(&root);
        overrides
            .add(glob)
            .map_err(|error| format!("Invalid glob `{glob}`: {error}"))?;
        let overrides = overrides
            .build()
            .map_err(|error| format!("Invalid glob `{glob}`: {error}"))?;
        walker.overrides(overrides);
    }
    // Paths are shown relative to the working directory as the system names it.
    let base = crate::workspace::resolve(&context.cwd);
    let mut lines = Vec::new();
    let mut limited = false;
    'files: for entry in walker.build().filter_map(Result::ok) {
        if context.cancel.is_cancelled() {
            return Err("Search cancelled".to_owned());
        }
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        // Opened beneath the jail: a folder swapped for a symlink mid-walk leads nowhere.
        let Ok((bytes, _)) = jail.read(entry.path(), MAX_READ_BYTES) else {
            continue;
        };
        if bytes.iter().take(8192).any(|&byte| byte == 0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let name = display_path(entry.path(), &base);
        for (number, line) in text.lines().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            if lines.len() == limit {
                limited = true;
                break 'files;
            }
            lines.push(format!("{name}:{}: {}", number + 1, cut(line)));
        }
    }
    if lines.is_empty() {
        return Ok(ToolOutcome::ok("No matches found"));
    }
    let mut text = lines.join("\n");
    if limited {
        text.push_str(&format!(
            "\n\n[{limit} matches limit reached. Use limit={} for more, or refine the pattern.]",
            limit.saturating_mul(2)
        ));
    }
    Ok(bounded_outcome(&text, Keep::Head, call_id, context, false))
}

/// A path relative to the working directory when it is inside it.
fn display_path(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

fn cut(line: &str) -> String {
    if line.chars().count() <= LINE_CHARS {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(LINE_CHARS).collect();
    cut.push_str("… [line cut]");
    cut
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::run_tool;
    use super::super::test_support::context;

    #[test]
    fn finds_matches_respecting_gitignore_globs_and_case() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "fn main() {}\n// TODO: x\n").unwrap();
        std::fs::write(dir.path().join("notes.md"), "todo later\n").unwrap();
        std::fs::write(dir.path().join("target/gen.rs"), "TODO generated\n").unwrap();
        let context = context(dir.path());
        let outcome = run_tool("grep", &json!({"pattern": "TODO"}), "c", &context);
        assert_eq!(outcome.text, "src/a.rs:2: // TODO: x");
        let outcome = run_tool(
            "grep",
            &json!({"pattern": "todo", "ignoreCase": true, "glob": "*.md"}),
            "c",
            &context,
        );
        assert_eq!(outcome.text, "notes.md:1: todo later");
        let outcome = run_tool(
            "grep",
            &json!({"pattern": "main()", "literal": true}),
            "c",
            &context,
        );
        assert_eq!(outcome.text, "src/a.rs:1: fn main() {}");
        let outcome = run_tool("grep", &json!({"pattern": "nowhere"}), "c", &context);
        assert_eq!(outcome.text, "No matches found");
        let outcome = run_tool("grep", &json!({"pattern": "("}), "c", &context);
        assert!(outcome.is_error && outcome.text.starts_with("Invalid pattern"));
    }

    #[test]
    fn the_match_limit_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("many.txt"), "hit\n".repeat(10)).unwrap();
        let context = context(dir.path());
        let outcome = run_tool(
            "grep",
            &json!({"pattern": "hit", "limit": 3}),
            "c",
            &context,
        );
        assert_eq!(
            outcome.text.lines().filter(|l| l.contains(": hit")).count(),
            3
        );
        assert!(
            outcome.text.contains("3 matches limit reached"),
            "{}",
            outcome.text
        );
    }
}
