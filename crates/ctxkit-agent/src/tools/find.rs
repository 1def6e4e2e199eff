//! `find`: files and folders whose path matches a glob, respecting `.gitignore`, as Pi 1.6's
//! `find` (which runs `fd`) finds them: hidden ones too, `.git` never; a pattern without `/`
//! matches a name at any depth, one with `/` the path below the folder searched; an all-lowercase
//! pattern ignores case. Paths are shown relative to the folder searched, sorted, folders with a
//! trailing `/`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;

use super::limit::Keep;
use super::search::{Unread, jailed_walker, refused, skipped_notice};
use super::{ToolContext, ToolOutcome, bounded_outcome, lax};
use crate::workspace::Access;

/// The default number of paths.
const RESULT_LIMIT: u64 = 1000;

/// The arguments of `find`.
#[derive(Debug, Deserialize)]
pub struct FindArguments {
    pattern: String,
    #[serde(default)]
    pub(super) path: Option<String>,
    #[serde(default, deserialize_with = "lax::optional_u64")]
    limit: Option<u64>,
}

/// What a pattern is matched against.
struct Pattern {
    matcher: GlobMatcher,
    /// Matched against the path below the folder searched, not the name.
    whole_path: bool,
}

impl Pattern {
    fn new(pattern: &str) -> Result<Self, String> {
        let mut pattern = pattern.trim();
        while let Some(rest) = pattern.strip_prefix("./") {
            pattern = rest;
        }
        let pattern = pattern.trim_end_matches('/');
        if pattern.is_empty() {
            return Err(
                "`pattern` is empty; give a glob such as `*.rs` or `src/**/*.ts`".to_owned(),
            );
        }
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .case_insensitive(pattern == pattern.to_lowercase())
            .build()
            .map_err(|error| format!("Invalid glob `{pattern}`: {error}"))?
            .compile_matcher();
        Ok(Self {
            matcher,
            whole_path: pattern.contains('/'),
        })
    }

    fn matches(&self, below: &std::path::Path) -> bool {
        if self.whole_path {
            self.matcher.is_match(below)
        } else {
            below
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        }
    }
}

/// `find {pattern, path?, limit?}`.
pub fn find(
    arguments: FindArguments,
    context: &ToolContext,
    call_id: &str,
) -> Result<ToolOutcome, String> {
    let shown = arguments.path.as_deref().unwrap_or(".");
    let pattern = Pattern::new(&arguments.pattern)?;
    let limit = arguments.limit.unwrap_or(RESULT_LIMIT);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX).max(1);
    let target = context.target("find", shown, Access::Read)?;
    let root = target.path.clone();
    if target.jail.is_denied(&root) {
        return Err(refused("find", shown, &root));
    }
    if !target.jail.is_dir(&root) {
        return Err(format!("`{shown}` is not a folder"));
    }
    let jail = Arc::new(target.jail);
    let skipped = Arc::new(AtomicUsize::new(0));
    let walker = jailed_walker(&root, &jail, &skipped);
    let mut found = Vec::new();
    let mut limited = false;
    let mut unread = Unread::default();
    for entry in walker.build() {
        // A folder it could not list is said, as `grep` says it (QA 2026-12-07).
        let Some(entry) = unread.walked(entry, &root) else {
            continue;
        };
        if context.cancel.is_cancelled() {
            return Err("Search cancelled".to_owned());
        }
        let Ok(below) = entry.path().strip_prefix(&root) else {
            continue;
        };
        if entry.depth() == 0 || !pattern.matches(below) {
            continue;
        }
        if found.len() == limit {
            limited = true;
            break;
        }
        let mut path = crate::names::shown(below.as_os_str());
        if entry.file_type().is_some_and(|kind| kind.is_dir()) {
            path.push('/');
        }
        found.push(path);
    }
    let skipped = skipped_notice(skipped.load(Ordering::Relaxed)) + &unread.notice();
    if found.is_empty() {
        return Ok(ToolOutcome::ok(format!(
            "No files found matching `{}`{skipped}",
            arguments.pattern
        )));
    }
    found.sort();
    let mut text = found.join("\n");
    if limited {
        text.push_str(&format!(
            "\n\n[{limit} results limit reached. Use limit={} for more, or refine the pattern.]",
            limit.saturating_mul(2)
        ));
    }
    text.push_str(&skipped);
    Ok(bounded_outcome(&text, Keep::Head, call_id, context, false))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::run_tool;
    use super::super::test_support::context;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "src/main.rs",
            "src/lib/Mod.rs",
            "pkg/src/other.rs",
            ".hidden/conf.toml",
            "target/debug/out.rs",
            "README.md",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".git/objects")).unwrap();
        std::fs::write(dir.path().join(".git/objects/a.rs"), "x").unwrap();
        dir
    }

    fn found(dir: &tempfile::TempDir, arguments: serde_json::Value) -> String {
        let outcome = run_tool("find", &arguments, "f", &context(dir.path()));
        assert!(!outcome.is_error, "{}", outcome.text);
        outcome.text
    }

    #[test]
    fn a_name_pattern_matches_at_any_depth_and_a_path_pattern_below_the_folder() {
        let dir = project();
        assert_eq!(
            found(&dir, json!({"pattern": "*.rs"})),
            "pkg/src/other.rs\nsrc/lib/Mod.rs\nsrc/main.rs",
            "ignored by .gitignore: target; never: .git"
        );
        assert_eq!(found(&dir, json!({"pattern": "src/*.rs"})), "src/main.rs");
        assert_eq!(
            found(&dir, json!({"pattern": "**/src/*.rs"})),
            "pkg/src/other.rs\nsrc/main.rs"
        );
        assert_eq!(
            found(&dir, json!({"pattern": "./src/**"})),
            "src/lib/\nsrc/lib/Mod.rs\nsrc/main.rs"
        );
        assert_eq!(
            found(&dir, json!({"pattern": "*.toml"})),
            ".hidden/conf.toml"
        );
        assert_eq!(
            found(&dir, json!({"pattern": "*.rs", "path": "src"})),
            "lib/Mod.rs\nmain.rs"
        );
    }

    #[test]
    fn a_lowercase_pattern_ignores_case_and_a_mixed_one_does_not() {
        let dir = project();
        assert_eq!(found(&dir, json!({"pattern": "mod.rs"})), "src/lib/Mod.rs");
        assert_eq!(
            found(&dir, json!({"pattern": "MOD.rs"})),
            "No files found matching `MOD.rs`"
        );
        assert_eq!(found(&dir, json!({"pattern": "readme.md"})), "README.md");
    }

    #[test]
    fn the_limit_is_said_and_bad_patterns_and_places_are_refused() {
        let dir = project();
        let text = found(&dir, json!({"pattern": "*.rs", "limit": "2"}));
        assert!(
            text.ends_with(
                "[2 results limit reached. Use limit=4 for more, or refine the pattern.]"
            ),
            "{text}"
        );
        let context = context(dir.path());
        for (arguments, message) in [
            (json!({"pattern": "a[b"}), "Invalid glob"),
            (json!({"pattern": " "}), "is empty"),
            (
                json!({"pattern": "*", "path": "README.md"}),
                "is not a folder",
            ),
            (
                json!({"pattern": "*", "path": "nowhere"}),
                "is not a folder",
            ),
        ] {
            let outcome = run_tool("find", &arguments, "f", &context);
            assert!(outcome.is_error, "{arguments}");
            assert!(
                outcome.text.contains(message),
                "{arguments}: {}",
                outcome.text
            );
        }
    }
}
