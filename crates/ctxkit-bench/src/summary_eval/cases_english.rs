//! English sessions of the corpus: a Rust CLI over several tasks, a TypeScript session recorded by
//! Claude Code (wrapper text, a pasted stack trace, an outburst), a Python session with an earlier
//! compaction inside the span.

use ctxkit_compaction::SummaryPurpose;

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![
        rust_cli(),
        typescript_claude_code(),
        python_with_compaction(),
    ]
}

/// Three tasks on a Rust CLI, a constraint stated once at the start, a failing test fixed after
/// rework, a commit on a branch, a decision, a last request not yet answered.
fn rust_cli() -> Case {
    let messages = SessionBuilder::new()
        .user("We're working on the `tally` CLI in this repo. Never use unwrap() in library code, and keep the public API of crates/tally-core unchanged. First: `tally parse` crashes on an empty input file, fix it.")
        .assistant("Let me look at the parser first.")
        .bash("rg -n \"fn parse_file\" crates", "crates/tally-core/src/parser.rs:41:pub fn parse_file(path: &Path) -> Result<Ledger, ParseError> {")
        .read("crates/tally-core/src/parser.rs", "// crates/tally-core/src/parser.rs\npub fn parse_file(path: &Path) -> Result<Ledger, ParseError> {\n    let text = std::fs::read_to_string(path)?;\n    let first = text.lines().next().unwrap();\n    parse_header(first)?;\n}")
        .thinking("The crash is the unwrap on the first line; an empty file has no lines. I should return ParseError::Empty instead.")
        .assistant("The crash comes from `text.lines().next().unwrap()` in `parse_file`: an empty file has no first line. I'll return a new `ParseError::Empty` variant instead of panicking.")
        .edit("crates/tally-core/src/parser.rs", "let first = text.lines().next().unwrap();", "let Some(first) = text.lines().next() else { return Err(ParseError::Empty) };")
        .edit("crates/tally-core/src/error.rs", "pub enum ParseError {", "pub enum ParseError {\n    Empty,")
        .bash("cargo test -p tally-core", "error[E0004]: non-exhaustive patterns: `ParseError::Empty` not covered\n --> crates/tally-core/src/error.rs:28:15\n\nCommand exited with code 101")
        .assistant("The `Display` impl needs a message for the new variant.")
        .failed_edit("crates/tally-core/src/error.rs", "ParseError::Io(e) => write!(f, \"{e}\"),")
        .read("crates/tally-core/src/error.rs", "impl fmt::Display for ParseError {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        match self {\n            Self::Io(error) => write!(f, \"{error}\"),\n        }\n    }\n}")
        .edit("crates/tally-core/src/error.rs", "Self::Io(error) => write!(f, \"{error}\"),", "Self::Io(error) => write!(f, \"{error}\"),\n            Self::Empty => f.write_str(\"the file is empty\"),")
        .bash("cargo test -p tally-core", "running 48 tests\n........................................\ntest result: ok. 48 passed; 0 failed")
        .write("crates/tally-core/tests/empty.rs", "#[test]\nfn empty_file_is_an_error() {}\n")
        .bash("git checkout -b fix/empty-input && git commit -am \"Empty input is an error, not a panic\"", "Switched to a new branch 'fix/empty-input'\n[fix/empty-input 4e1f2a9c] Empty input is an error, not a panic\n 3 files changed, 21 insertions(+), 2 deletions(-)")
        .assistant("Fixed and committed as 4e1f2a9c on `fix/empty-input`: an empty file now gives `ParseError::Empty`.")
        .user("good. next: add a --json flag to `tally report` that prints the totals as JSON")
        .read("crates/tally-cli/src/report.rs", "pub fn run(args: &ReportArgs) -> anyhow::Result<()> {\n    let totals = compute_totals(&ledger);\n    println!(\"{totals}\");\n}")
        .assistant("I'll use serde_json with a `#[derive(Serialize)]` on `Totals` rather than formatting JSON by hand, because the totals contain user-provided account names that need escaping.")
        .edit("crates/tally-cli/src/report.rs", "println!(\"{totals}\");", "if args.json { println!(\"{}\", serde_json::to_string_pretty(&totals)?); } else { println!(\"{totals}\"); }")
        .edit("crates/tally-cli/Cargo.toml", "[dependencies]", "[dependencies]\nserde_json = \"1\"")
        .bash("cargo test -p tally-cli", "running 12 tests\n............\ntest result: ok. 12 passed; 0 failed")
        .bash("cargo clippy --all-targets -- -D warnings", "    Checking tally-cli v0.4.1\n    Finished `dev` profile")
        .assistant("`tally report --json` now prints the totals as JSON; tests and clippy pass.")
        .user("ok. bump the version to 0.4.2, update CHANGELOG.md and open a PR against main")
        .build();
    Case {
        name: "rust-cli (3 tasks)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("latest request: bump to 0.4.2 and open a PR", &["0.4.2"]),
            fact(
                "first task: empty input crash",
                &["empty input", "empty file", "ParseError::Empty"],
            ),
            fact("second task: --json for tally report", &["--json"]),
            fact(
                "constraint: no unwrap in library code",
                &["Never use unwrap"],
            ),
            fact("constraint: keep public API of tally-core", &["public API"]),
            fact("edited parser.rs", &["crates/tally-core/src/parser.rs"]),
            fact("edited error.rs", &["crates/tally-core/src/error.rs"]),
            fact("edited report.rs", &["crates/tally-cli/src/report.rs"]),
            fact("test command for core", &["cargo test -p tally-core"]),
            fact("test command for cli", &["cargo test -p tally-cli"]),
            fact(
                "the earlier failure (non-exhaustive ParseError::Empty)",
                &["E0004"],
            ),
            fact("commit hash", &["4e1f2a9c"]),
            fact("branch", &["fix/empty-input"]),
            fact("decision: serde_json with derive", &["serde_json"]),
            fact("added test file", &["crates/tally-core/tests/empty.rs"]),
            fact("current version", &["0.4.1"]),
            fact(
                "clippy command",
                &["cargo clippy --all-targets -- -D warnings"],
            ),
        ],
    }
}

/// A session as Claude Code records it: wrapper text around slash commands, a pasted stack trace,
/// an outburst, rework, a failing test at the end.
fn typescript_claude_code() -> Case {
    let messages = SessionBuilder::new()
        .user("<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>")
        .user("<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>")
        .user("<local-command-stdout>Set model to opus</local-command-stdout>")
        .user("The deploy preview for PR #482 fails. Fix the config loader in web/src/config/load.ts so it finds the config when started from a subdirectory. Always use pnpm, never npm.")
        .user("Error: ENOENT: no such file or directory, open '/app/web/ctxconfig.json'\n    at Object.openSync (node:fs:573:18)\n    at loadConfig (/app/web/src/config/load.ts:14:22)\n    at main (/app/web/src/index.ts:9:3)")
        .read("web/src/config/load.ts", "export function loadConfig() {\n  const text = fs.readFileSync(path.join(process.cwd(), 'ctxconfig.json'), 'utf8');\n  return JSON.parse(text);\n}")
        .assistant("`loadConfig` reads `ctxconfig.json` from `process.cwd()`. I'll walk up from the working directory to the nearest `ctxconfig.json` instead of assuming the repository root.")
        .edit("web/src/config/load.ts", "path.join(process.cwd(), 'ctxconfig.json')", "findUp('ctxconfig.json', process.cwd())")
        .bash("pnpm vitest run src/config", " FAIL  src/config/load.test.ts > loadConfig > finds the config from a subdirectory\nTypeError: findUp is not a function\n ❯ loadConfig src/config/load.ts:3:20\n\nCommand exited with code 1")
        .user("what the fuck, are you stupid? findUp is async. just write the loop yourself")
        .assistant("Right, `find-up` is async. I'll write a small synchronous `findConfigUp` loop instead of the package.")
        .write("web/src/config/find.ts", "export function findConfigUp(name: string, from: string): string | undefined {}\n")
        .edit("web/src/config/load.ts", "findUp('ctxconfig.json', process.cwd())", "findConfigUp('ctxconfig.json', process.cwd())")
        .bash("pnpm vitest run src/config", " ✓ src/config/load.test.ts (4 tests) 12ms\n Test Files  1 passed (1)")
        .user("also the CI workflow .github/workflows/preview.yml should ignore !dist changes, and bump node to 20.11.1")
        .read(".github/workflows/preview.yml", "on:\n  pull_request:\n    paths:\n      - 'web/**'\njobs:\n  preview:\n    steps:\n      - uses: actions/setup-node@v4\n        with:\n          node-version: 18.19.0")
        .edit(".github/workflows/preview.yml", "node-version: 18.19.0", "node-version: 20.11.1")
        .edit(".github/workflows/preview.yml", "      - 'web/**'", "      - 'web/**'\n      - '!web/dist/**'")
        .bash("pnpm test", " FAIL  src/routes/preview.test.ts > preview route > renders the banner\nAssertionError: expected 'Preview: undefined' to be 'Preview: pr-482'\n ❯ src/routes/preview.test.ts:31:18\n\n Test Files  1 failed | 23 passed (24)\n\nCommand exited with code 1")
        .assistant("The config fix passes, but `pnpm test` now fails in `src/routes/preview.test.ts`: the banner reads `Preview: undefined`. The preview name probably came from the old config path.")
        .build();
    Case {
        name: "typescript (Claude Code wrappers, paste, outburst)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("PR reference", &["#482"]),
            fact("task: config loader from a subdirectory", &["subdirectory"]),
            fact("file: load.ts", &["web/src/config/load.ts"]),
            fact("constraint: pnpm, never npm", &["never npm"]),
            fact("the original error", &["ENOENT", "ctxconfig.json"]),
            fact(
                "decision: own synchronous loop, findUp is async",
                &["findConfigUp"],
            ),
            fact("new file find.ts", &["web/src/config/find.ts"]),
            fact("test command for config", &["pnpm vitest run src/config"]),
            fact(
                "second task: workflow file with leading dot",
                &[".github/workflows/preview.yml"],
            ),
            fact("node version", &["20.11.1"]),
            fact("ignore !dist", &["!dist", "!web/dist"]),
            fact("current failure: pnpm test", &["pnpm test"]),
            fact(
                "the failing assertion verbatim",
                &["expected 'Preview: undefined' to be 'Preview: pr-482'"],
            ),
            fact("failing test file", &["src/routes/preview.test.ts"]),
        ],
    }
}

/// A Python pipeline session whose span begins with an earlier compaction summary; a Traceback,
/// a rule from the user, a version bump, an issue reference, a question back to the user.
fn python_with_compaction() -> Case {
    let messages = SessionBuilder::new()
        .compaction("## Goal\n- Make the nightly ETL in `etl/` idempotent (issue #77)\n\n## Constraints & Preferences\n- Always run `ruff check .` before committing\n\n## Progress\n### Done\n- [x] Added `run_id` column to `etl/schema.sql`\n\n### In Progress\n- [ ] Deduplicate rows in `etl/load.py`\n\n## Key Decisions\n- **Upsert on (run_id, row_key)**: cheaper than deleting first\n\n## Next Steps\n1. Make `load_rows` use the upsert\n\n## Critical Context\n- Tests: `pytest tests/etl -q`")
        .user("continue with the dedup in etl/load.py")
        .read("etl/load.py", "def load_rows(conn, rows):\n    for row in rows:\n        conn.execute(INSERT, row)\n")
        .edit("etl/load.py", "conn.execute(INSERT, row)", "conn.execute(UPSERT, row)")
        .bash("pytest tests/etl -q", "F..\n=================================== FAILURES ===================================\nTraceback (most recent call last):\n  File \"tests/etl/test_load.py\", line 22, in test_rerun_is_idempotent\nsqlite3.OperationalError: ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint\n1 failed, 2 passed in 0.41s\n\nCommand exited with code 1")
        .assistant("The upsert needs a unique index on `(run_id, row_key)`; I'll add it in `etl/schema.sql` rather than changing the primary key.")
        .edit("etl/schema.sql", "CREATE TABLE rows (", "CREATE UNIQUE INDEX rows_run_key ON rows (run_id, row_key);\nCREATE TABLE rows (")
        .bash("pytest tests/etl -q", "...\n3 passed in 0.38s")
        .bash("ruff check .", "All checks passed!")
        .bash("git commit -am \"ETL: upsert on (run_id, row_key), closes #77\"", "[main 9c0ffee1] ETL: upsert on (run_id, row_key), closes #77\n 2 files changed, 6 insertions(+), 1 deletion(-)")
        .user("nice. bump the package to 2.3.0 in pyproject.toml")
        .edit("pyproject.toml", "version = \"2.2.4\"", "version = \"2.3.0\"")
        .bash("grep -rn \"2.2.4\" .", "CHANGELOG.md:3:## 2.2.4")
        .assistant("Bumped to 2.3.0 in `pyproject.toml`. `CHANGELOG.md` still ends at 2.2.4 — should I add a 2.3.0 entry for the idempotent ETL?")
        .build();
    Case {
        name: "python (earlier compaction in the span)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("earlier goal: idempotent nightly ETL", &["idempotent"]),
            fact("issue reference", &["#77"]),
            fact(
                "earlier constraint: ruff before committing",
                &["ruff check ."],
            ),
            fact("earlier done: run_id column", &["run_id"]),
            fact("earlier decision: upsert", &["upsert"]),
            fact("load.py changed", &["etl/load.py"]),
            fact("schema.sql unique index", &["etl/schema.sql"]),
            fact("test command", &["pytest tests/etl -q"]),
            fact(
                "the failure that was fixed",
                &["ON CONFLICT clause does not match"],
            ),
            fact("commit hash", &["9c0ffee1"]),
            fact("new version", &["2.3.0"]),
            fact("pyproject.toml edited", &["pyproject.toml"]),
            fact("open question: CHANGELOG entry", &["CHANGELOG"]),
        ],
    }
}
