//! How an update carries an earlier summary (merged, not repeated) and which lines a successor does
//! not need: side commands, a hash already told, an earlier item the span finished, a repeat of
//! the latest request.

use super::tests::{request, section};
use super::*;

#[test]
fn side_commands_are_not_build_commands_and_known_hashes_are_not_repeated() {
    let conversation = "[User]: fix the crash in src/app.rs\n\n\
        [Assistant tool calls]: bash(command=\"xcodebuild -list -project App.xcodeproj\")\n\n\
        [Tool result]: Schemes:\n    App\n\n\
        [Assistant tool calls]: bash(command=\"rm src/old.rs && git status --short\")\n\n\
        [Tool result]: D src/old.rs\n\n\
        [Assistant tool calls]: edit(path=\"src/app.rs\", edits=[{\"oldText\":\"a\",\"newText\":\"b\"}])\n\n\
        [Tool result]: Successfully replaced text in src/app.rs.\n\n\
        [Assistant tool calls]: bash(command=\"cargo test -p app\")\n\n\
        [Tool result]: test result: ok. 4 passed; 0 failed\n\n\
        [Assistant tool calls]: bash(command=\"git commit -am 'Fix the crash'\")\n\n\
        [Tool result]: [main 1a2b3c4] Fix the crash\n 1 file changed\n\n\
        [Assistant tool calls]: bash(command=\"npm version patch\")\n\n\
        [Tool result]: v1.2.4\n\n\
        [Assistant]: Done: fix `1a2b3c4`, and `npm version` made the release commit `9f8e7d6`.";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    assert!(!summary.contains("xcodebuild -list"), "{summary}");
    assert!(!summary.contains("git status --short"), "{summary}");
    assert!(summary.contains("Committed `1a2b3c4`"), "{summary}");
    // The release commit stays in the report that names it, not in a list of the session's commits.
    assert!(summary.contains("`9f8e7d6`"), "{summary}");
    assert!(!summary.contains("Commits: `9f8e7d6`"), "{summary}");
    assert!(
        section(&summary, "## Critical Context").contains("`cargo test -p app`"),
        "{summary}"
    );
}

#[test]
fn an_update_folds_the_earlier_done_items_and_tells_finished_open_items_once() {
    let previous = "_Extractive summary written offline by ctxkit (no model was used)._\n\n\
        ## Goal\n- **Latest:** Add rate limits to `POST /uploads`\n\n\
        ## Progress\n### Done\n\
        - [x] Created `migrations/0042_limits.up.sql` and `.down.sql`\n\
        - [x] `sqlx migrate run` applied it to the test database\n\
        - [x] Last report: The limiter returns 429 with `Retry-After: 7`.\n\n\
        ### In Progress\n- [ ] `Limiter` in `src/limit.rs`: written, not yet wired\n\n\
        ## Next Steps\n1. Wire `Limiter` into `src/routes.rs`\n2. Run `cargo test`\n\n\
        ## Critical Context\n- Branch: `feat/limits`";
    let conversation = "[User]: continue where you left off\n\n\
        [Assistant tool calls]: edit(path=\"src/routes.rs\", edits=[{\"oldText\":\"a\",\"newText\":\"b\"}])\n\n\
        [Tool result]: Successfully replaced text in src/routes.rs.\n\n\
        [Assistant tool calls]: edit(path=\"src/limit.rs\", edits=[{\"oldText\":\"a\",\"newText\":\"b\"}])\n\n\
        [Tool result]: Successfully replaced text in src/limit.rs.\n\n\
        [Assistant tool calls]: bash(command=\"cargo sqlx prepare && cargo test\")\n\n\
        [Tool result]: test result: ok. 12 passed; 0 failed\n\n\
        [Assistant]: The limiter is wired in and the tests pass.";
    let summary = summarize_offline(&request(conversation, Some(previous), 2_000));
    let done = section(&summary, "### Done");
    // The earlier Done items and the earlier report, whole, on one line.
    assert!(
        done.contains(
            "- [x] Done before this span: Created `migrations/0042_limits.up.sql` and `.down.sql`; \
             `sqlx migrate run` applied it to the test database; \
             The limiter returns 429 with `Retry-After: 7`\n"
        ),
        "{summary}"
    );
    // The open items the span finished (`cargo test` ran inside a chain) on one line.
    assert!(
        done.contains(
            "- [x] Finished since the earlier summary: `Limiter` in `src/limit.rs`: written, not \
             yet wired; Wire `Limiter` into `src/routes.rs`; Run `cargo test`\n"
        ),
        "{summary}"
    );
    assert!(
        !section(&summary, "## Next Steps").contains("Run `cargo test`"),
        "{summary}"
    );
    assert!(summary.contains("`feat/limits`"), "{summary}");
}

/// An unanswered latest request is said in Goal and In Progress; Next Steps points at it.
#[test]
fn an_unanswered_latest_request_is_not_repeated_in_next_steps() {
    let conversation = "[User]: fix the overflow in src/sum.rs\n\n\
        [Assistant]: Fixed: `sum` now saturates.\n\n\
        [User]: now add a `--strict` flag to the CLI that fails on overflow";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    assert_eq!(
        summary.matches("add a `--strict` flag").count(),
        2,
        "{summary}"
    );
    assert!(section(&summary, "### In Progress").contains("`--strict`"));
    let next = section(&summary, "## Next Steps");
    assert!(
        next.contains("(none besides answering the latest request") && !next.contains("--strict"),
        "{summary}"
    );
}

#[test]
fn a_left_branch_keeps_more_of_its_last_report() {
    let report = format!(
        "Dropped. Branch `spike/trie` is kept, not merged. Learned: {}the trie is 3.1x slower \
         (1.20 → 3.72 us/op) and adds 0.8 MB.",
        "the wildcard routes need a special case per shape, ".repeat(6)
    );
    let conversation = format!(
        "[User]: try a trie for the router in src/router.rs\n\n\
         [Assistant tool calls]: edit(path=\"src/router.rs\", edits=[{{\"oldText\":\"a\",\"newText\":\"b\"}}])\n\n\
         [Tool result]: Successfully replaced text in src/router.rs.\n\n\
         [User]: drop it, write down what we learned\n\n[Assistant]: {report}"
    );
    let mut branch = request(&conversation, None, 2_000);
    branch.purpose = SummaryPurpose::Branch;
    let summary = summarize_offline(&branch);
    assert!(summary.contains("3.72 us/op"), "{summary}");
    let history = summarize_offline(&request(&conversation, None, 2_000));
    assert!(!history.contains("3.72 us/op"), "{history}");
}
