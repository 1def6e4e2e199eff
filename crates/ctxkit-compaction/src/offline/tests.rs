//! The offline summary end to end on small hand-built requests.

use super::*;
use render::budget_tokens;

pub(super) fn request(
    conversation: &str,
    previous: Option<&str>,
    max_tokens: u64,
) -> SummaryRequest {
    let mut text = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(previous) = previous {
        text.push_str(&format!(
            "<previous-summary>\n{previous}\n</previous-summary>\n\n"
        ));
    }
    text.push_str("Instructions.");
    SummaryRequest {
        purpose: SummaryPurpose::History,
        system_prompt: String::new(),
        user_text: text,
        max_tokens: Some(max_tokens),
        reasoning: None,
    }
}

pub(super) fn section<'a>(summary: &'a str, heading: &str) -> &'a str {
    let start = summary
        .find(heading)
        .map_or(0, |start| start + heading.len());
    let rest = &summary[start..];
    let end = rest[1..].find("\n#").map_or(rest.len(), |end| end + 1);
    &rest[..end]
}

const WORK: &str = "[User]: <local-command-caveat>Caveat: DO NOT respond to these messages</local-command-caveat>\n\n\
[User]: <command-name>/model</command-name>\n\n\
[User]: Please fix the bug in `parse_0` in src/file0.rs. Never use unwrap in library code.\n\n\
[Assistant]: I'll use a `match` instead of `unwrap` because the input may be empty.\n\n\
[Assistant tool calls]: edit(path=\"src/file0.rs\", edits=[{\"oldText\":\"a\",\"newText\":\"b\"}])\n\n\
[Tool result]: Successfully replaced text in src/file0.rs.\n\n\
[Assistant tool calls]: bash(command=\"cargo test -p parser\")\n\n\
[Tool result]: error[E0425]: cannot find value `line` in this scope\n\nCommand exited with code 101";

#[test]
fn a_history_summary_reads_like_a_handover() {
    let summary = summarize_offline(&request(WORK, None, 2_000));
    let goal = section(&summary, "## Goal");
    assert!(
        goal.contains("**Latest:** Please fix the bug in `parse_0`"),
        "{summary}"
    );
    assert!(
        !summary.contains("DO NOT respond") && !summary.contains("/model"),
        "{summary}"
    );
    assert!(section(&summary, "## Constraints").contains("Never use unwrap in library code."));
    assert!(section(&summary, "### Done").contains("Edited `src/file0.rs`"));
    assert!(
        section(&summary, "### Blocked").contains(
            "`cargo test -p parser` fails: error[E0425]: cannot find value `line` in this scope"
        ),
        "{summary}"
    );
    assert!(section(&summary, "### In Progress").contains("Please fix the bug"));
    assert!(section(&summary, "## Next Steps").contains("Make it pass: `cargo test -p parser`"));
    assert!(section(&summary, "## Key Decisions").contains("I'll use a `match` instead"));
    assert!(section(&summary, "## Critical Context").contains("Last error"));
}

#[test]
fn updates_carry_every_section_of_a_numbered_summary_and_close_finished_items() {
    let previous = "1. Primary Request and Intent:\n   Add a retry to the HTTP client.\n\n\
        2. Key Technical Concepts:\n   - Exponential backoff\n\n\
        5. Problem Solving:\n   Chose `backoff` crate over a hand-written loop.\n\n\
        7. Pending Tasks:\n   - Edit src/file0.rs to handle empty input\n   - Document the retry policy\n\n\
        9. Optional Next Step:\n   Run `cargo test -p parser`.";
    let conversation = "[User]: continue\n\n\
        [Assistant tool calls]: edit(path=\"src/file0.rs\", edits=[])\n\n\
        [Tool result]: Successfully replaced text in src/file0.rs.\n\n\
        [Assistant tool calls]: bash(command=\"cargo test -p parser\")\n\n\
        [Tool result]: test result: ok. 3 passed\n\n[Assistant]: Done.";
    let summary = summarize_offline(&request(conversation, Some(previous), 2_000));
    assert!(section(&summary, "## Goal").contains("Add a retry to the HTTP client."));
    assert!(section(&summary, "## Key Decisions").contains("Chose `backoff` crate"));
    assert!(section(&summary, "## Critical Context").contains("Exponential backoff"));
    let done = section(&summary, "### Done");
    assert!(
        done.contains("Edit src/file0.rs to handle empty input"),
        "{summary}"
    );
    // Both finished items are told on one line.
    assert!(
        done.contains(
            "Finished since the earlier summary: Edit src/file0.rs to handle empty input; Run `cargo test -p parser`\n"
        ),
        "{summary}"
    );
    assert!(section(&summary, "### In Progress").contains("Document the retry policy"));
}

#[test]
fn a_chinese_session_gets_chinese_contents_under_the_format_headings() {
    let conversation = "[User]: 请修复 src/lexer.rs 里 `next_token` 的越界错误。不要修改公共接口。\n\n\
        [Assistant tool calls]: edit(path=\"src/lexer.rs\", edits=[])\n\n\
        [Tool result]: Successfully replaced text in src/lexer.rs.\n\n\
        [Assistant]: 已修复。";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    assert!(summary.contains("## Goal") && summary.contains("### Done"));
    assert!(
        section(&summary, "## Goal").contains("**最新：** 请修复 src/lexer.rs"),
        "{summary}"
    );
    assert!(section(&summary, "## Constraints").contains("不要修改公共接口。"));
    assert!(
        section(&summary, "### Done").contains("修改 `src/lexer.rs`"),
        "{summary}"
    );
    assert!(section(&summary, "### In Progress").contains("（无）"));
}

#[test]
fn the_budget_is_hard_and_a_small_span_gives_a_small_summary() {
    let small = summarize_offline(&request(
        "[User]: Rename `foo` to `bar` in src/a.rs.",
        None,
        13_000,
    ));
    assert!(budget_tokens(&small) < 250, "{small}");
    let mut long = String::new();
    for index in 0..200 {
        long.push_str(&format!(
            "[User]: Task {index}: fix `handler_{index}` in src/mod_{index}.rs and keep it fast.\n\n\
             [Assistant tool calls]: edit(path=\"src/mod_{index}.rs\", edits=[])\n\n\
             [Tool result]: Successfully replaced text in src/mod_{index}.rs.\n\n"
        ));
    }
    for budget in [50, 300, 1_000] {
        let summary = summarize_offline(&request(&long, None, budget));
        assert!(budget_tokens(&summary) <= budget, "{budget}: {summary}");
    }
    let summary = summarize_offline(&request(&long, None, 1_000));
    assert!(summary.contains("**Latest:** Task 199"), "{summary}");
}

#[test]
fn a_pending_call_is_the_next_step() {
    let conversation = "[User]: Run the benchmarks and report.\n\n\
        [Assistant tool calls]: bash(command=\"cargo bench\")";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    assert!(
        section(&summary, "## Next Steps").contains("Check the result of the pending call"),
        "{summary}"
    );
    assert!(section(&summary, "### In Progress").contains("Run the benchmarks"));
}

proptest::proptest! {
    /// Any text in any part (wrappers, backticks, CJK, odd case) gives a summary within budget and
    /// never a panic.
    #[test]
    fn any_conversation_gives_a_bounded_summary(
        parts in proptest::collection::vec(
            (0usize..5, "(\\PC|\n|`|ǰ|K|Ⅰ|<system-reminder>|Ran `|error: |Command exited with code 1){0,80}"),
            0..12,
        ),
        previous in proptest::option::of("(\\PC|\n|## |1\\. [A-Z]a:|- |Pending: ){0,120}"),
        budget in 1u64..400,
    ) {
        let tags = ["[User]: ", "[Assistant]: ", "[Assistant thinking]: ", "[Assistant tool calls]: ", "[Tool result]: "];
        let conversation = parts
            .iter()
            .map(|(tag, body)| format!("{}{body}", tags[*tag]))
            .collect::<Vec<_>>()
            .join("\n\n");
        let summary = summarize_offline(&request(&conversation, previous.as_deref(), budget));
        proptest::prop_assert!(budget_tokens(&summary) <= budget, "{summary}");
    }
}

#[test]
fn repeated_compactions_keep_the_goal() {
    let first = summarize_offline(&request(
        "[User]: please read src/file0.rs and fix the bug in parse_0\n\n\
         [Assistant tool calls]: read(path=\"src/file0.rs\")\n\n[Tool result]: fn parse_0() {}",
        None,
        2_000,
    ));
    let mut summary = first;
    for round in 0..3 {
        let span = format!(
            "[Assistant tool calls]: edit(path=\"src/file{round}.rs\", edits=[])\n\n\
             [Tool result]: Successfully replaced text in src/file{round}.rs."
        );
        summary = summarize_offline(&request(&span, Some(&summary), 2_000));
    }
    assert!(
        section(&summary, "## Goal")
            .contains("**Latest:** please read src/file0.rs and fix the bug in parse_0"),
        "{summary}"
    );
    let later = summarize_offline(&request(
        "[User]: now add a test for parse_1",
        Some(&summary),
        2_000,
    ));
    assert_eq!(later.matches("**Latest:**").count(), 1, "{later}");
    assert!(
        later.contains("**Latest:** now add a test for parse_1"),
        "{later}"
    );
    assert!(
        section(&summary, "### Done").contains("src/file2.rs"),
        "{summary}"
    );
}

/// Lines of a section's items, without their markers.
fn item_lines(section_text: &str) -> Vec<&str> {
    section_text
        .lines()
        .map(|line| {
            line.trim_start_matches("- [x] ")
                .trim_start_matches("- [ ] ")
                .trim_start_matches("- ")
        })
        .filter(|line| !line.trim().is_empty() && !line.starts_with("(none"))
        .collect()
}

/// The faults the issue found in the old summaries, each on a small span: greps listed as work,
/// fragments taken for accomplishments, pasted errors taken for constraints, tool-argument names,
/// the last sentence taken for what is in progress, the summary's own notice and turn context
/// carried back as bullets, one line under both Done and In Progress.
#[test]
fn the_faults_of_the_old_summaries_stay_fixed() {
    let previous = "_Extractive summary written offline by ctxkit (no model was used)._\n\n\
        ## Goal\n- **Latest:** Remove the console logs from src/theme.ts\n\n\
        ## Progress\n### Done\n- [x] Edited `src/theme.ts`\n\n### In Progress\n- [ ] Remove the console logs from src/theme.ts\n\n\
        ---\n\n**Turn Context (split turn):**\n\n_Extractive summary written offline by ctxkit (no model was used)._\n\n\
        ## Original Request\n- yeah, do it all";
    let conversation = "[User]: Error: 400 {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long\"}}\n\n\
        [User]: check the other theme files too\n\n\
        [Assistant tool calls]: bash(command=\"grep -rn console.log src\")\n\n[Tool result]: src/theme.ts:12: console.log(x)\n\n\
        [Assistant tool calls]: bash(command=\"grep -rn console.error src\")\n\n[Tool result]: Command exited with code 1\n\n\
        [Assistant tool calls]: read(path=\"src/types.ts\")\n\n[Tool result]: Seen: isError: boolean;\n\n\
        [Assistant tool calls]: edit(path=\"src/theme.ts\", edits=[{\"oldText\":\"console.log(x)\",\"newText\":\"\"}])\n\n\
        [Tool result]: Successfully replaced text in src/theme.ts.\n\n\
        [Assistant]: Hmm, looks like the console logs were already removed.\n\n\
        [Assistant]: Perfect! Everything should be working smoothly now";
    let summary = summarize_offline(&request(conversation, Some(previous), 2_000));
    for absent in [
        "Ran `grep",
        "grep -rn",
        "oldText",
        "newText",
        "invalid_request_error",
        "isError",
        "Hmm, looks like",
        "working smoothly",
        "- _Extractive",
        "Turn Context",
    ] {
        assert!(!summary.contains(absent), "{absent} in\n{summary}");
    }
    assert_eq!(summary.matches(OFFLINE_NOTICE).count(), 1, "{summary}");
    assert!(
        section(&summary, "## Goal").contains("**Latest:** check the other theme files too"),
        "{summary}"
    );
    assert!(
        section(&summary, "## Goal").contains("Remove the console logs from src/theme.ts"),
        "{summary}"
    );
    assert!(
        section(&summary, "## Constraints").contains("(none)"),
        "{summary}"
    );
    assert!(
        section(&summary, "### Blocked").contains("(none)"),
        "{summary}"
    );
    // The earlier open item is finished by the edit of its file: Done, not both.
    let done = item_lines(section(&summary, "### Done"));
    let in_progress = item_lines(section(&summary, "### In Progress"));
    assert!(
        in_progress.iter().all(|line| !done.contains(line)),
        "{summary}"
    );
    assert!(
        done.iter()
            .any(|line| line.ends_with("Remove the console logs from src/theme.ts")),
        "{summary}"
    );
}

/// A branch summary meets the same bar: wrappers and greps left out, the failure kept, nothing
/// left "to answer" on a branch the user left, identifiers bounded.
#[test]
fn a_branch_summary_meets_the_same_bar() {
    let mut conversation = String::from(
        "[User]: <system-reminder>Be concise.</system-reminder>try a trie for the router in src/router.rs\n\n\
         [Assistant]: I'll use a radix trie instead of the linear scan in `match_route`.\n\n\
         [Assistant tool calls]: bash(command=\"grep -rn match_route src\")\n\n[Tool result]: src/router.rs:40:fn match_route\n\n\
         [Assistant tool calls]: edit(path=\"src/router.rs\", edits=[{\"oldText\":\"a\",\"newText\":\"b\"}])\n\n\
         [Tool result]: Successfully replaced text in src/router.rs.\n\n",
    );
    for index in 0..60 {
        conversation.push_str(&format!(
            "[Assistant]: `helper_{index}` and `Route{index}::build` look related.\n\n"
        ));
    }
    conversation.push_str(
        "[Assistant tool calls]: bash(command=\"cargo test -p router\")\n\n\
         [Tool result]: thread 'wildcards' panicked at src/router.rs:88:9\n\nCommand exited with code 101\n\n\
         [User]: never mind, go back",
    );
    let mut branch = request(&conversation, None, 2_000);
    branch.purpose = SummaryPurpose::Branch;
    let summary = summarize_offline(&branch);
    assert!(
        !summary.contains("Be concise") && !summary.contains("grep"),
        "{summary}"
    );
    assert!(!summary.contains("oldText"), "{summary}");
    assert!(
        section(&summary, "## Goal").contains("try a trie for the router in src/router.rs"),
        "{summary}"
    );
    assert!(
        section(&summary, "### Blocked").contains("thread 'wildcards' panicked"),
        "{summary}"
    );
    assert!(
        section(&summary, "## Key Decisions").contains("radix trie"),
        "{summary}"
    );
    assert!(
        section(&summary, "## Next Steps").contains("the user left this branch"),
        "{summary}"
    );
    assert!(!summary.contains("Answer the latest request"), "{summary}");
    let identifiers: usize = section(&summary, "## Critical Context")
        .lines()
        .filter(|line| line.starts_with("- Files:") || line.starts_with("- Symbols:"))
        .map(|line| line.matches("`, `").count() + 1)
        .sum();
    assert!(identifiers <= facts::MAX_IDENTIFIERS, "{summary}");
}

/// Critical Context lists identifiers the rest of the summary does not already name, and never a
/// provider's tool-call id.
#[test]
fn identifiers_named_elsewhere_or_tool_ids_are_not_listed() {
    let conversation = "[User]: fix `parse_header` in src/parser.rs; `Ledger` must stay as is\n\n\
        [Assistant]: `parse_header` reads the first line; `Ledger` and `header_error` are involved. \
        The call toolu_019tYDrbzifrra2KYzmYqWvk failed, toolu_019tYDrbzifrra2KYzmYqWvk again.\n\n\
        [Assistant]: `header_error` needs a variant, so `header_error` changes; toolu_019tYDrbzifrra2KYzmYqWvk.\n\n\
        [Assistant]: Next I will read the tests.";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    let critical = section(&summary, "## Critical Context");
    assert!(critical.contains("`header_error`"), "{summary}");
    assert!(!critical.contains("`parse_header`"), "{summary}");
    assert!(!critical.contains("`src/parser.rs`"), "{summary}");
    assert!(!summary.contains("toolu_"), "{summary}");
}

/// Probes that ran cleanly (an inline script, a `--help`) are not progress; the test run is.
#[test]
fn probes_are_not_progress() {
    let conversation = "[User]: make the CLI print its version\n\n\
        [Assistant tool calls]: bash(command=\"node -e \\\"console.log(require('./package.json').version)\\\"\")\n\n[Tool result]: 1.4.0\n\n\
        [Assistant tool calls]: bash(command=\"npx tsx src/cli.ts --help\")\n\n[Tool result]: Usage: cli [options]\n\n\
        [Assistant tool calls]: bash(command=\"npm test\")\n\n[Tool result]: Tests: 12 passed, 12 total";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    let done = section(&summary, "### Done");
    assert!(done.contains("`npm test`: passed"), "{summary}");
    assert!(
        !done.contains("node -e") && !done.contains("--help"),
        "{summary}"
    );
}

#[test]
fn zero_counts_are_not_failures_and_pipes_into_programs_stay() {
    assert!(!errors::is_error_line(
        "1 chart(s) linted, 0 chart(s) failed"
    ));
    assert!(!errors::is_error_line(
        "test result: ok. 3 passed; 0 failed"
    ));
    assert!(!errors::is_error_line("Found 0 errors in 12 files"));
    assert!(errors::is_error_line(
        "1 chart(s) linted, 1 chart(s) failed"
    ));
    assert!(errors::is_error_line("Tests: 1 failed, 18 passed"));
    assert_eq!(
        work::command_core("cargo test 2>&1 | tail -20"),
        "cargo test"
    );
    assert_eq!(
        work::command_core("helm template charts/api | kubeconform -strict"),
        "helm template charts/api | kubeconform -strict"
    );
}

#[test]
fn a_reasoned_plan_is_a_decision_and_a_report_is_not() {
    let conversation = "[User]: make the merge step fast\n\n\
        [Assistant]: I'll do it with a hash join on `order_id`, then drop the nested loop. That avoids loading both tables into memory twice.\n\n\
        [Assistant tool calls]: bash(command=\"pytest -q\")\n\n\
        [Tool result]: 4 passed in 0.2s\n\n\
        [Assistant]: The import stopped at batch 7: its file has `amount` as text instead of a number, so the loader refuses it.";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    let decisions = section(&summary, "## Key Decisions");
    assert!(
        decisions.contains("I'll do it with a hash join"),
        "{summary}"
    );
    assert!(!decisions.contains("The import stopped"), "{summary}");
}

/// A finished workflow follow-up ("rebase on main and push") leaves the Goal: its command is in
/// Progress. A follow-up that names a target stays.
#[test]
fn finished_workflow_follow_ups_leave_the_goal() {
    let conversation = "[User]: Add retries to the upload client in src/upload.rs\n\n\
        [Assistant tool calls]: edit(path=\"src/upload.rs\", edits=[])\n\n\
        [Tool result]: Successfully replaced text in src/upload.rs.\n\n\
        [Assistant]: Added retries.\n\n\
        [User]: ok. rebase on main and push\n\n\
        [Assistant tool calls]: bash(command=\"git rebase main && git push\")\n\n\
        [Tool result]: Successfully rebased and updated refs/heads/retries.\n\n\
        [Assistant]: Rebased and pushed.\n\n\
        [User]: now document the retry policy in docs/upload.md";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    let goal = section(&summary, "## Goal");
    assert!(!goal.contains("rebase on main"), "{summary}");
    assert!(
        goal.contains("Add retries to the upload client"),
        "{summary}"
    );
    assert!(
        goal.contains("**Latest:** now document the retry policy"),
        "{summary}"
    );
    assert!(
        section(&summary, "### Done").contains("git rebase main && git push"),
        "{summary}"
    );
}

/// The latest request, a workflow follow-up the span finished ("push and open a draft PR"), leaves
/// the Goal; one still failing stays.
#[test]
fn a_finished_latest_follow_up_leaves_the_goal() {
    let start = "[User]: Add retries to the upload client in src/upload.rs\n\n\
        [Assistant]: Added retries.\n\n\
        [User]: push and open a draft PR\n\n\
        [Assistant tool calls]: bash(command=\"git push -u origin retries && gh pr create --draft\")\n\n";
    let finished =
        format!("{start}[Tool result]: https://example.com/pr/9\n\n[Assistant]: Opened PR 9.");
    let summary = summarize_offline(&request(&finished, None, 2_000));
    assert!(
        !section(&summary, "## Goal").contains("draft PR"),
        "{summary}"
    );
    let failed = format!(
        "{start}[Tool result]: error: failed to push some refs\nCommand exited with code 1\n\n\
         [Assistant]: The push was rejected."
    );
    let summary = summarize_offline(&request(&failed, None, 2_000));
    assert!(
        section(&summary, "## Goal").contains("**Latest:** push and open a draft PR"),
        "{summary}"
    );
}

/// A path that a request in Goal names is not listed again under Files, whatever the request's rank.
#[test]
fn a_path_a_request_names_is_not_listed_again() {
    let conversation = "[User]: Add an LRU cache to the resolver service\n\n\
        [Assistant]: Added the cache.\n\n\
        [User]: compare the hit rate with the numbers in bench/hit-rate-1.9.json\n\n\
        [Assistant tool calls]: read(path=\"bench/hit-rate-1.9.json\")\n\n\
        [Tool result]: {\"hit_rate\": 0.88}\n\n\
        [Assistant]: The hit rate is 0.91 against 0.88 before.\n\n\
        [User]: now document the eviction policy";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    assert!(
        section(&summary, "## Goal").contains("bench/hit-rate-1.9.json"),
        "{summary}"
    );
    assert!(
        !section(&summary, "## Critical Context").contains("bench/hit-rate-1.9.json"),
        "{summary}"
    );
}
