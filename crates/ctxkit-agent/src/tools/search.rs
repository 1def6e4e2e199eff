//! `grep`: a regular-expression search over files, respecting `.gitignore` (the `ignore` crate's
//! walker, as ripgrep's), in their text as `read` shows it (secrets redacted).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use regex::RegexBuilder;

use serde::Deserialize;

use super::limit::Keep;
use super::search_file::{MAX_CONTEXT_LINES, Matches, Searched, long_lines_notice, search_file};
use super::{ToolContext, ToolOutcome, bounded_outcome, lax};
use crate::workspace::Access;

/// The default number of matches.
const MATCH_LIMIT: u64 = 100;

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
    /// Lines shown before and after each match (Pi's `context`).
    #[serde(default, deserialize_with = "lax::optional_u64")]
    context: Option<u64>,
}

/// `grep {pattern, path?, glob?, ignoreCase?, literal?, limit?, context?}`.
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
    let target = context.target("grep", shown, Access::Read)?;
    let root = target.path.clone();
    if !root.exists() {
        return Err(format!("`{shown}` does not exist"));
    }
    // The place named is judged as `read` and `ls` judge it: a denied one is refused, never
    // searched as if it held nothing.
    if target.jail.is_denied(&root) {
        return Err(refused("grep", shown, &root));
    }
    let jail = Arc::new(target.jail);
    let skipped = Arc::new(AtomicUsize::new(0));
    let mut walker = jailed_walker(&root, &jail, &skipped);
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
    let context_lines = arguments.context.unwrap_or(0).min(MAX_CONTEXT_LINES);
    let mut found = Matches::new(limit, usize::try_from(context_lines).unwrap_or(0));
    let mut limited = false;
    let mut unread = Unread::default();
    for entry in walker.build() {
        let Some(entry) = unread.walked(entry, &base) else {
            continue;
        };
        if context.cancel.is_cancelled() {
            return Err("Search cancelled".to_owned());
        }
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        // Opened beneath the jail: a folder swapped for a symlink mid-walk leads nowhere.
        let file = match jail.open_file(entry.path()) {
            Ok(file) => file,
            // Where it really is was denied (a link to a credential, a renamed folder).
            Err(error) if error.is_denied_place() && entry.depth() == 0 => {
                return Err(refused("grep", shown, &root));
            }
            Err(error) if error.is_denied_place() => {
                skipped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            Err(error) => {
                let name = display_path(entry.path(), &base);
                unread.add(name, super::files::jail_reason(&error));
                continue;
            }
        };
        let name = display_path(entry.path(), &base);
        match search_file(file, &regex, &name, context, &mut found) {
            // A binary file named itself is said to be one: "No matches found" read as
            // searched (QA 2026-12-07). A walk leaves binary files out without a word.
            Ok(Searched::Binary) if entry.depth() == 0 => {
                return Ok(ToolOutcome::ok(format!(
                    "`{name}` is a binary file (a NUL byte among its first bytes): not searched"
                )));
            }
            Ok(Searched::Whole | Searched::Binary) => {}
            Ok(Searched::PartWithheld) => unread.add(
                name,
                "part of it spells out a key ctxkit keeps from the model (a dump of it, spaced \
                 out or reversed), withheld and not searched"
                    .to_owned(),
            ),
            Err(error) => unread.add(name, error.to_string()),
            Ok(Searched::LimitReached) => {
                limited = true;
                break;
            }
            Ok(Searched::Cancelled) => return Err("Search cancelled".to_owned()),
        }
    }
    let long_lines = long_lines_notice(&found);
    let lines = found.lines;
    let skipped = skipped_notice(skipped.load(Ordering::Relaxed)) + &unread.notice();
    if lines.is_empty() {
        return Ok(ToolOutcome::ok(format!(
            "No matches found{long_lines}{skipped}"
        )));
    }
    let mut text = lines.join("\n");
    if limited {
        text.push_str(&format!(
            "\n\n[{limit} matches limit reached. Use limit={} for more, or refine the pattern.]",
            limit.saturating_mul(2)
        ));
    }
    text.push_str(&long_lines);
    text.push_str(&skipped);
    Ok(bounded_outcome(&text, Keep::Head, call_id, context, false))
}

/// The places a search could not open or read to the end (a file nested past the jail's depth,
/// a file or a folder without permission, a file failing mid-read): said after the result, with
/// the first of them and why, so that "No matches found" is never read as "searched everywhere"
/// (QA 2026-12-07). `grep` and `find` share it.
#[derive(Default)]
pub(super) struct Unread {
    count: usize,
    first: Option<String>,
}

impl Unread {
    /// The file `name` could not be searched, for `reason`.
    pub(super) fn add(&mut self, name: String, reason: String) {
        self.count += 1;
        self.first
            .get_or_insert_with(|| format!("`{name}`: {reason}"));
    }

    /// The entry the walk yielded, or `None` after noting the place it could not list.
    pub(super) fn walked(
        &mut self,
        entry: Result<ignore::DirEntry, ignore::Error>,
        base: &Path,
    ) -> Option<ignore::DirEntry> {
        match entry {
            Ok(entry) => Some(entry),
            Err(error) => {
                self.count += 1;
                let text = error.to_string();
                let prefix = format!("{}/", base.display());
                self.first
                    .get_or_insert_with(|| text.strip_prefix(&prefix).unwrap_or(&text).to_owned());
                None
            }
        }
    }

    pub(super) fn notice(&self) -> String {
        let Some(first) = &self.first else {
            return String::new();
        };
        match self.count {
            1 => format!("\n\n[1 place could not be searched: {first}]"),
            many => format!("\n\n[{many} places could not be searched, among them {first}]"),
        }
    }
}

/// A walk of `root` as the search tools walk: hidden files included, `.gitignore` respected in
/// or out of a repository, `.git` left out, and nothing `jail` denies walked into (ctxkit's home
/// and the user's credentials, for a project at `~`); `skipped` counts what was left out, to be
/// said with the result.
pub(super) fn jailed_walker(
    root: &Path,
    jail: &Arc<ctxkit_jail::Jail>,
    skipped: &Arc<AtomicUsize>,
) -> WalkBuilder {
    let (jail, skipped) = (Arc::clone(jail), Arc::clone(skipped));
    let mut walker = WalkBuilder::new(root);
    walker.hidden(false).git_ignore(true).require_git(false);
    super::walk::read_safe_ignore_files(&mut walker, root, move |entry| {
        if entry.file_name() == ".git" {
            return false;
        }
        if jail.is_denied(entry.path()) {
            skipped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    });
    walker
}

/// The refusal of a search (`tool`) whose named place is denied.
pub(super) fn refused(tool: &str, shown: &str, root: &Path) -> String {
    crate::workspace::refused(
        &format!("{tool} {shown}"),
        &format!(
            "`{}` lies in ctxkit's own settings and sessions or the user's credentials, which \
             are never opened by tools",
            root.display()
        ),
    )
}

/// What a search says after its result when it left denied places out (none: nothing).
pub(super) fn skipped_notice(count: usize) -> String {
    match count {
        0 => String::new(),
        1 => "\n\n[1 place was not searched: ctxkit's own files and the user's credentials are \
              never opened by tools]"
            .to_owned(),
        many => format!(
            "\n\n[{many} places were not searched: ctxkit's own files and the user's credentials \
             are never opened by tools]"
        ),
    }
}

/// A path relative to the working directory when it is inside it.
fn display_path(path: &Path, cwd: &Path) -> String {
    crate::names::shown(path.strip_prefix(cwd).unwrap_or(path).as_os_str())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::super::run_tool;
    use super::super::test_support::context;

    /// QA 2026-12-07: a binary file named itself answered "No matches found", read as searched;
    /// a sparse image is judged at its first bytes, not read to its end. A walk passes binary
    /// files over without a word.
    #[test]
    fn a_binary_file_named_itself_is_said_to_be_one() {
        let dir = tempfile::tempdir().unwrap();
        let image = std::fs::File::create(dir.path().join("disk.img")).unwrap();
        image.set_len(1 << 40).unwrap();
        std::fs::write(dir.path().join("t.bin"), b"hello\0world\n").unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
        let context = context(dir.path());
        for name in ["disk.img", "t.bin"] {
            let outcome = run_tool(
                "grep",
                &json!({"pattern": "hello", "path": name}),
                "c",
                &context,
            );
            assert_eq!(
                outcome.text,
                format!(
                    "`{name}` is a binary file (a NUL byte among its first bytes): not searched"
                )
            );
        }
        let outcome = run_tool("grep", &json!({"pattern": "hello"}), "c", &context);
        assert_eq!(outcome.text, "a.txt:1: hello");
    }

    /// QA (jail): a text head and a sparse hole after it (`truncate -s 40G`) made one line as long
    /// as the hole, read to its end (39 s for 40 GB). The search of such a file ends at the first
    /// NUL past a long line's start; a long line of text is still passed over to the next one.
    #[test]
    fn a_hole_after_a_text_head_ends_the_files_search() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.txt");
        std::fs::write(&path, "hello world line\n".repeat(2000)).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(1 << 40)
            .unwrap();
        let long = "x".repeat(17 * 1024 * 1024) + "\nzzz after\n";
        std::fs::write(dir.path().join("long.txt"), long).unwrap();
        let context = context(dir.path());
        let started = std::time::Instant::now();
        let outcome = run_tool("grep", &json!({"pattern": "zzz"}), "c", &context);
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        assert!(
            outcome.text.starts_with("long.txt:2: zzz after"),
            "{}",
            outcome.text
        );
        assert!(
            outcome.text.contains("[2 line(s) longer than 16 MiB")
                && outcome
                    .text
                    .contains("1 file(s) turned binary within such a line"),
            "{}",
            outcome.text
        );
    }

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

    /// A tester's attack: `grep "^OPENAI_API_KEY=.{N}[A-M]" .env`, position by position, answered
    /// "No matches found" or a (redacted) line: one bit of the configured key per call, the key
    /// spelled out in 400 calls. Patterns are matched against the text as `read` shows it.
    #[test]
    fn a_pattern_cannot_probe_a_known_key() {
        let probes = [
            "^OPENAI_API_KEY=sk-p",
            "^OPENAI_API_KEY=zz",
            "^OPENAI_API_KEY=.{3}[p-q]",
            "^OPENAI_API_KEY=.{8}[A-Za-z]",
            "KEY=.{40}",
            "PORT",
        ];
        let answers = |key: &str| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(
                dir.path().join(".env"),
                format!("OPENAI_API_KEY={key}\nPORT=1\n"),
            )
            .unwrap();
            let mut context = context(dir.path());
            let mut workspace = crate::workspace::Workspace::new(dir.path());
            workspace.add_secret(key);
            context.workspace = std::sync::Arc::new(workspace);
            probes.map(|pattern| {
                run_tool(
                    "grep",
                    &json!({"pattern": pattern, "path": ".env"}),
                    "c",
                    &context,
                )
                .text
            })
        };
        let first = answers("sk-proj-pJE1auGBHZvjyKszCpYqItFEzzzzzzzzzzzz");
        // Every probe answers the same whatever the key is.
        assert_eq!(first, answers("zz-9999-0000000000000000000000"));
        assert_eq!(first[0], "No matches found");
        assert_eq!(first[5], ".env:2: PORT=1");
    }

    /// QA: a file withheld whole for spelling out the configured key (its hex dump here)
    /// answered "No matches found", read as searched and absent; it is said to be withheld.
    #[test]
    fn a_file_withheld_for_spelling_a_key_is_not_said_to_be_searched() {
        let key = "sk-proj-pJE1auGBHZvjyKszCpYqItFEzzzzzzzzzzzz";
        let dir = tempfile::tempdir().unwrap();
        let dump: String = key.bytes().map(|byte| format!("{byte:02x} ")).collect();
        std::fs::write(dir.path().join("dump.txt"), format!("lorem\n{dump}\n")).unwrap();
        let mut context = context(dir.path());
        let mut workspace = crate::workspace::Workspace::new(dir.path());
        workspace.add_secret(key);
        context.workspace = std::sync::Arc::new(workspace);
        let outcome = run_tool(
            "grep",
            &json!({"pattern": "lorem", "path": "dump.txt"}),
            "c",
            &context,
        );
        assert!(
            outcome.text.starts_with("No matches found\n\n[1 place could not be searched: `dump.txt`: part of it spells out a key"),
            "{}",
            outcome.text
        );
    }

    /// QA (third round): a match in a file whose name holds a newline was shown on two lines, and
    /// one whose name is not UTF-8 under a lossy name: both are shown quoted as `$'…'`, as `ls`
    /// shows them, which `read` takes back.
    #[test]
    fn matches_in_odd_names_are_shown_quoted() {
        use std::os::unix::ffi::OsStrExt as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a\nb.txt"), "needle one\n").unwrap();
        let invalid = std::ffi::OsStr::from_bytes(b"c\xff.txt");
        std::fs::write(dir.path().join(invalid), "needle two\n").unwrap();
        let context = context(dir.path());
        let outcome = run_tool("grep", &json!({"pattern": "needle"}), "c", &context);
        let mut lines: Vec<&str> = outcome.text.lines().collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            ["$'a\\nb.txt':1: needle one", "$'c\\xff.txt':1: needle two"]
        );
        let outcome = run_tool("read", &json!({"path": "$'c\\xff.txt'"}), "c", &context);
        assert!(outcome.text.contains("needle two"), "{}", outcome.text);
    }

    /// QA 2026-12-07: a file nested past the jail's depth was left out without a word, and
    /// "No matches found" read as searched everywhere.
    #[test]
    fn a_file_that_could_not_be_opened_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let deep =
            (0..ctxkit_jail::MAX_DEPTH).fold(dir.path().to_path_buf(), |path, _| path.join("d"));
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("deep.txt"), "needle\n").unwrap();
        let context = context(dir.path());
        let outcome = run_tool("grep", &json!({"pattern": "needle"}), "c", &context);
        assert!(
            outcome
                .text
                .starts_with("No matches found\n\n[1 place could not be searched: `d/d/"),
            "{}",
            outcome.text
        );
        assert!(
            outcome.text.ends_with("more than the 256 allowed]"),
            "{}",
            outcome.text
        );
        std::fs::write(dir.path().join("top.txt"), "needle\n").unwrap();
        let outcome = run_tool("grep", &json!({"pattern": "needle"}), "c", &context);
        assert!(
            outcome
                .text
                .starts_with("top.txt:1: needle\n\n[1 place could not"),
            "{}",
            outcome.text
        );
    }

    /// Set by the parent test when it runs this binary again as a user who may not list a folder.
    const UNLISTABLE_CHILD: &str = "CTXKIT_TEST_UNLISTABLE_CHILD";

    /// QA 2026-12-07: `grep` and `find` answered "No matches found" when the match lay in a folder
    /// they could not list. Run as root, the test runs itself again as `nobody` (65534), for whom
    /// the folder is truly closed.
    #[test]
    fn a_folder_that_could_not_be_listed_is_said() {
        if let Ok(dir) = std::env::var(UNLISTABLE_CHILD) {
            let context = context(Path::new(&dir));
            let grep = run_tool("grep", &json!({"pattern": "needle"}), "c", &context);
            let find = run_tool("find", &json!({"pattern": "**/s.txt"}), "c", &context);
            let report = json!([grep.text, find.text]);
            std::fs::write(Path::new(&dir).with_extension("report"), report.to_string()).unwrap();
            return;
        }
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        use std::os::unix::process::CommandExt as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/s.txt"), "needle\n").unwrap();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "tools::search::tests::a_folder_that_could_not_be_listed_is_said",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(UNLISTABLE_CHILD, dir.path());
        if std::fs::metadata(dir.path()).unwrap().uid() == 0 {
            const NOBODY: u32 = 65_534;
            for name in ["", "sub", "sub/s.txt"] {
                std::os::unix::fs::chown(dir.path().join(name), Some(NOBODY), Some(NOBODY))
                    .unwrap();
            }
            child.uid(NOBODY).gid(NOBODY);
        }
        std::fs::set_permissions(
            dir.path().join("sub"),
            std::fs::Permissions::from_mode(0o000),
        )
        .unwrap();
        let output = child.output().unwrap();
        std::fs::set_permissions(
            dir.path().join("sub"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let report = std::fs::read_to_string(dir.path().with_extension("report"))
            .unwrap_or_else(|_| panic!("no report from the child: {output:?}"));
        let _ = std::fs::remove_file(dir.path().with_extension("report"));
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        for text in report.as_array().unwrap() {
            let text = text.as_str().unwrap();
            assert!(text.contains("[1 place could not be searched: "), "{text}");
            assert!(
                text.contains("sub") && text.contains("Permission denied"),
                "{text}"
            );
        }
    }

    /// QA: with the project at `~`, `grep SECRET .aws` and `grep SECRET .aws/credentials`
    /// answered "No matches found" while `ls .aws` said the place is never opened. A search of a
    /// refused place is refused; a wider one says how many places it left out.
    #[test]
    fn a_refused_place_is_refused_by_name_and_counted_when_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(project.join(".aws")).unwrap();
        std::fs::write(project.join(".aws/credentials"), "SECRET=1\n").unwrap();
        std::fs::create_dir_all(project.join(".ctxkit")).unwrap();
        std::fs::write(project.join(".ctxkit/settings.json"), "SECRET=2\n").unwrap();
        std::fs::write(project.join("notes.md"), "no secret here\n").unwrap();
        let mut context = context(&project);
        let mut workspace = crate::workspace::Workspace::new(&project);
        workspace.set_home(&project.join(".ctxkit"));
        workspace.add_credential_place(&project.join(".aws"));
        context.workspace = std::sync::Arc::new(workspace);
        for path in [
            ".aws",
            ".aws/credentials",
            ".ctxkit",
            ".ctxkit/settings.json",
        ] {
            let outcome = run_tool(
                "grep",
                &json!({"pattern": "SECRET", "path": path}),
                "c",
                &context,
            );
            assert!(
                outcome.is_error
                    && outcome
                        .text
                        .starts_with(&format!("`grep {path}` refused: "))
                    && outcome.text.contains("never"),
                "{path}: {}",
                outcome.text
            );
        }
        let outcome = run_tool("grep", &json!({"pattern": "SECRET"}), "c", &context);
        assert_eq!(
            outcome.text,
            "No matches found\n\n[2 places were not searched: ctxkit's own files and the \
             user's credentials are never opened by tools]"
        );
        let outcome = run_tool("grep", &json!({"pattern": "secret"}), "c", &context);
        assert!(
            outcome
                .text
                .starts_with("notes.md:1: no secret here\n\n[2 places were not searched"),
            "{}",
            outcome.text
        );
    }

    /// QA r105: in a 23 MB dump, a match on line 250001 (past the first 16 MiB) was "No matches
    /// found", with nothing said of the part left unsearched. The whole file is searched, and
    /// line numbers run on across the pieces it is read in.
    #[test]
    fn a_match_past_16_mib_is_found_with_its_line_number() {
        let dir = tempfile::tempdir().unwrap();
        let row = format!("INSERT INTO t VALUES ('{}');\n", "x".repeat(60));
        let mut dump = row.repeat(250_000);
        dump.push_str("INSERT INTO users VALUES (1, 'needle@example.com');\n");
        dump.push_str(&row.repeat(10));
        assert!(dump.len() > 17 * 1024 * 1024);
        std::fs::write(dir.path().join("dump.sql"), dump).unwrap();
        std::fs::write(dir.path().join("small.txt"), "a\nneedle@example\n").unwrap();
        let context = context(dir.path());
        let outcome = run_tool(
            "grep",
            &json!({"pattern": "needle@example", "path": "dump.sql"}),
            "c",
            &context,
        );
        assert_eq!(
            outcome.text,
            "dump.sql:250001: INSERT INTO users VALUES (1, 'needle@example.com');"
        );
        let outcome = run_tool("grep", &json!({"pattern": "needle@"}), "c", &context);
        let mut lines: Vec<&str> = outcome.text.lines().collect();
        lines.sort_unstable();
        assert_eq!(lines.len(), 2, "{}", outcome.text);
        assert_eq!(lines[1], "small.txt:2: needle@example");
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
