use ctxkit_protocol::AgentMessage;
use ctxkit_summarizer::{SummaryPurpose, SummaryRequest, SummarySpan};
use serde_json::{Value, json};

use super::*;

fn messages(values: Value) -> Vec<AgentMessage> {
    serde_json::from_value(values).unwrap()
}

fn request(messages: Vec<AgentMessage>, previous: Option<&str>, max_tokens: u64) -> SummaryRequest {
    SummaryRequest {
        purpose: SummaryPurpose::History,
        system_prompt: String::new(),
        user_text: String::new(),
        max_tokens: Some(max_tokens),
        reasoning: None,
        source: SummarySpan {
            messages,
            omitted_messages: 0,
            previous_summary: previous.map(str::to_owned),
            read_files: Vec::new(),
            modified_files: Vec::new(),
            focus: None,
            room_tokens: None,
            continues_summary: false,
        },
    }
}

fn bash(id: &str, command: &str, output: &str, is_error: bool) -> [Value; 2] {
    [
        json!({"role": "assistant", "stopReason": "toolUse", "content": [{"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": command}}]}),
        json!({"role": "toolResult", "toolCallId": id, "toolName": "bash", "content": [{"type": "text", "text": output}], "isError": is_error}),
    ]
}

/// A session: a request with a constraint, an edit, a failing then passing test, a commit, and
/// `filler` long tool outputs.
fn session(filler: usize) -> Vec<AgentMessage> {
    let mut values = vec![
        json!({"role": "user", "content": "Add retries to `fetch_manifest` in crates/fetch/src/manifest.rs. Don't add new dependencies."}),
        json!({"role": "assistant", "stopReason": "toolUse", "content": [
            {"type": "text", "text": "I'll use a loop with `backoff_ms` instead of a crate."},
            {"type": "toolCall", "id": "e1", "name": "edit", "arguments": {"path": "crates/fetch/src/manifest.rs", "edits": [{"oldText": "a", "newText": "b"}]}}
        ]}),
        json!({"role": "toolResult", "toolCallId": "e1", "toolName": "edit", "content": [{"type": "text", "text": "Successfully replaced text"}], "isError": false}),
    ];
    for index in 0..filler {
        values.extend(bash(
            &format!("f{index}"),
            &format!("cat src/module_{index}.rs"),
            &"fn filler_function_name() { let value = 42; }\n".repeat(200),
            false,
        ));
    }
    values.extend(bash("t1", "cargo test -p fetch", "error[E0308]: mismatched types\n --> crates/fetch/src/manifest.rs:12:5\nCommand exited with code 101", true));
    values.extend(bash(
        "t2",
        "cargo test -p fetch",
        "test result: ok. 12 passed",
        false,
    ));
    values.extend(bash(
        "c1",
        "git commit -am 'Retry manifest fetches'",
        "[feat/retry 1a2b3c4] Retry manifest fetches",
        false,
    ));
    values.push(json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Done: `cargo test -p fetch` passes (12 tests). Should I push `feat/retry`?"}]}));
    messages(Value::Array(values))
}

#[test]
fn the_summary_keeps_what_the_span_provably_holds_in_pis_sections() {
    let summary = summarize_offline(&request(session(0), None, 13_107));
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
        assert!(summary.contains(heading), "{heading}\n{summary}");
    }
    for fact in [
        "Don't add new dependencies",
        "crates/fetch/src/manifest.rs",
        "`fetch_manifest`",
        "passed after 1 failed run(s)",
        "error[E0308]: mismatched types",
        "Committed `1a2b3c4` on `feat/retry`",
        "instead of a crate",
        "Answer: Should I push `feat/retry`?",
    ] {
        assert!(summary.contains(fact), "{fact}\n{summary}");
    }
    assert!(summary.starts_with(OFFLINE_NOTICE));
}

#[test]
fn the_size_follows_the_span_and_never_exceeds_the_request() {
    let small = summarize_offline(&request(session(0), None, 13_107));
    let large_span = session(60);
    let large = summarize_offline(&request(large_span.clone(), None, 13_107));
    let (small_tokens, large_tokens) = (count_tokens(&small), count_tokens(&large));
    assert!(
        small_tokens <= SummarySize::default().min_tokens,
        "{small_tokens}"
    );
    assert!(
        large_tokens > 2 * small_tokens,
        "{small_tokens} {large_tokens}"
    );
    assert!(large_tokens <= SummarySize::default().max_tokens);
    for budget in [0, 1, 5, 40, 150, 700, 2_000] {
        let text = summarize_offline(&request(large_span.clone(), None, budget));
        assert!(count_tokens(&text) <= budget, "{budget}: {text}");
    }
}

/// QA (2026-12-07): `compaction.reserveTokens` 0 (valid) left a compaction no room, and the
/// empty offline summary failed it as if a model had. A room under the floor is the floor.
#[test]
fn a_compaction_without_room_still_gets_a_summary() {
    for room in [0, 1, 100] {
        let mut request = request(session(20), None, 0);
        request.max_tokens = None;
        request.source.room_tokens = Some(room);
        let text = summarize_offline(&request);
        let tokens = count_tokens(&text);
        assert!(
            tokens > 100 && tokens <= crate::layout::SMALLEST_ROOM_TOKENS,
            "{room}: {tokens}"
        );
    }
}

#[test]
fn the_target_is_a_bounded_share_of_the_span() {
    let size = SummarySize {
        ratio: 0.04,
        min_tokens: 300,
        max_tokens: 5_000,
    };
    assert_eq!(size.target(1_000, 0, 13_107), 300);
    assert_eq!(size.target(100_000, 0, 13_107), 4_000);
    assert_eq!(size.target(1_000_000, 0, 13_107), 5_000);
    assert_eq!(size.target(1_000_000, 0, 2_000), 2_000);
}

#[test]
fn a_short_span_may_keep_its_size_and_a_long_one_gets_real_summaries_sizes() {
    let size = SummarySize::default();
    // Real Claude Code summaries: 1,700–5,600 tokens for 5–45k-token spans.
    assert_eq!(size.target(5_000, 0, 13_107), 2_000);
    assert_eq!(size.target(50_000, 0, 13_107), 4_000);
    assert_eq!(size.target(200_000, 0, 13_107), 6_000);
    // Under the minimum: the span's own size, not under 500, whatever its tool output.
    assert_eq!(size.target(1_200, 1_000, 13_107), 1_200);
    assert_eq!(size.target(300, 0, 13_107), 500);
}

#[test]
fn a_span_of_mostly_tool_output_gets_the_minimum_plus_half_the_share_of_its_output() {
    let size = SummarySize::default();
    // 25k tokens read, 20k of them tool output: 8% would be the 2,000 minimum; the real summaries
    // of such spans are 3,000–5,500 tokens (docs/summaries.md, seventh round).
    assert_eq!(size.target(25_000, 20_000, 13_107), 2_800);
    // The span's share when it is more, the maximum above all.
    assert_eq!(size.target(60_000, 10_000, 13_107), 4_800);
    assert_eq!(size.target(200_000, 190_000, 13_107), 6_000);
    // Never more than the request allows.
    assert_eq!(size.target(25_000, 20_000, 2_500), 2_500);
    // Nor, by its output, over a quarter of a short span: the minimum stays.
    assert_eq!(size.target(9_000, 8_000, 13_107), 2_250);
    assert_eq!(size.target(6_000, 5_000, 13_107), 2_000);
}

#[test]
fn names_only_tool_output_printed_fill_the_room_left_last() {
    let listing = "src/ingest/batch_reader.rs\nsrc/ingest/schema_cache.rs\nconfig/pipeline.toml";
    let mut values = vec![
        json!({"role": "user", "content": "Find where the batch size is read.", "timestamp": 1}),
    ];
    values.extend(bash("c1", "ls -R src config", listing, false));
    values.push(
        json!({"role": "assistant", "content": [{"type": "text", "text": "Found it."}],
        "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 4,
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}}),
    );
    let span = messages(Value::Array(values));
    let roomy = summarize_offline(&request(span.clone(), None, 13_107));
    assert!(roomy.contains("Seen in output: "), "{roomy}");
    assert!(roomy.contains("`src/ingest/schema_cache.rs`"), "{roomy}");
    // The names come after everything else: a budget the rest fills leaves them out.
    let without =
        summarize_offline(&request(span.clone(), None, 13_107)).replace("Seen in output", "");
    let tight = count_tokens(&without) as u64 / 2;
    let small = summarize_offline(&request(span, None, tight));
    assert!(!small.contains("Seen in output: "), "{small}");
}

#[test]
fn an_earlier_summary_is_carried_into_its_sections() {
    let previous = "## Goal\nMigrate CI to GitHub Actions (ticket OPS-77)\n\n## Constraints & Preferences\n- Keep the Travis badge until March\n\n## Critical Context\n- Runner label `ubuntu-24.04`";
    let summary = summarize_offline(&request(session(0), Some(previous), 13_107));
    let goal = &summary[summary.find("## Goal").unwrap()..summary.find("## Constraints").unwrap()];
    assert!(goal.contains("OPS-77"), "{summary}");
    let constraints =
        &summary[summary.find("## Constraints").unwrap()..summary.find("## Progress").unwrap()];
    assert!(constraints.contains("Travis badge"), "{summary}");
    assert!(summary.contains("`ubuntu-24.04`"), "{summary}");
}

/// A summary of a span that holds only an earlier offline summary of the same work (a branch
/// summary of a branch summary): the files changed are said once, and the earlier summary's focus
/// and file lists are not read as its items.
#[test]
fn an_earlier_offline_summary_of_the_same_work_is_not_repeated() {
    let mut first = request(session(0), None, 13_107);
    first.source.focus = Some("the retry loop".to_owned());
    let earlier = summarize_offline(&first);
    assert!(earlier.contains("### Most Recent Steps"), "{earlier}");
    // As stored: the compaction adds the file lists after the summary.
    let stored =
        format!("{earlier}\n\n<modified-files>\ncrates/fetch/src/manifest.rs\n</modified-files>");
    let again = summarize_offline(&request(session(0), Some(&stored), 13_107));
    assert_eq!(again.matches("- Changed: ").count(), 1, "{again}");
    assert!(!again.contains("Focus for this summary"), "{again}");
    // The file list `<modified-files>` of the earlier summary, read as items, came out as
    // `Last Steps in Full: crates/fetch/src/manifest.rs`.
    assert!(
        !again.contains(": crates/fetch/src/manifest.rs\n"),
        "{again}"
    );
}

#[test]
fn an_earlier_summarys_prose_that_names_nothing_is_not_carried_but_its_goal_is() {
    let previous = "## Goal\nMake the export faster\n\n## Key Decisions\n- Investigation revealed:\n- Batch rows in `export_batch` (500 at a time)\n\n## Critical Context\n- The work is going well overall\n- Port 5433 for the test database";
    let summary = summarize_offline(&request(session(0), Some(previous), 13_107));
    assert!(summary.contains("Make the export faster"), "{summary}");
    assert!(
        summary.contains("`export_batch` (500 at a time)"),
        "{summary}"
    );
    assert!(summary.contains("Port 5433"), "{summary}");
    assert!(!summary.contains("Investigation revealed"), "{summary}");
    assert!(!summary.contains("going well overall"), "{summary}");
}

#[test]
fn an_earlier_summarys_numbered_plan_keeps_every_step() {
    // Step 2 names nothing, yet a plan without it is another plan (the Pi recording's update lost
    // it); an unnumbered line naming nothing is still left out, and so is a numbered list none of
    // whose items names anything.
    let previous = "## Goal\nSplit the CLI\n\n## Next Steps\n1. Create `src/modes/`\n2. Move files as per structure above\n3. Run `npm run check`\n- Keep going after that\n\n## Critical Context\n1. The mood is good\n2. Nobody is blocked";
    let summary = summarize_offline(&request(session(0), Some(previous), 13_107));
    let steps: Vec<&str> = [
        "1. Create `src/modes/`",
        "2. Move files as per structure above",
        "3. Run `npm run check`",
    ]
    .into_iter()
    .filter(|step| summary.contains(step))
    .collect();
    assert_eq!(steps.len(), 3, "{summary}");
    assert!(!summary.contains("Keep going after that"), "{summary}");
    assert!(!summary.contains("The mood is good"), "{summary}");
    assert!(!summary.contains("Nobody is blocked"), "{summary}");
}

#[test]
fn room_left_after_everything_goes_to_the_last_steps_in_full() {
    let mut values = vec![json!({"role": "user", "content": "Why does the nightly import stop?"})];
    values.extend(bash(
        "j1",
        "journalctl -u importer --since today",
        "Nov 29 02:00:01 host importer[812]: reading /etc/importer/tables.toml\nNov 29 02:00:31 host importer[812]: gave up after 30s waiting for lock on table staging_orders",
        false,
    ));
    values.push(json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "It waits for a lock."}]}));
    let summary = summarize_offline(&request(messages(json!(values)), None, 13_107));
    let full = &summary[summary.find("### Last Steps in Full").expect(&summary)..];
    // The whole output, not only its last line, and within the size of a short span.
    assert!(
        full.contains("reading /etc/importer/tables.toml"),
        "{summary}"
    );
    assert!(count_tokens(&summary) <= 500, "{summary}");
    // A step the summary holds word for word is not repeated there: the question is the goal.
    assert!(!full.contains("User: Why does"), "{summary}");
    assert!(
        full.contains("Assistant: It waits for a lock."),
        "{summary}"
    );
}

#[test]
fn a_step_repeated_with_the_same_outcome_is_in_full_once() {
    let mut values = vec![json!({"role": "user", "content": "List the project folder"})];
    for id in ["r1", "r2", "r3", "r4"] {
        values.extend(bash(
            id,
            "ls -la /srv/app/",
            "permission denied: /srv/app",
            true,
        ));
    }
    let summary = summarize_offline(&request(messages(json!(values)), None, 13_107));
    let repeated = summary.matches("$ ls -la /srv/app/").count();
    assert!(repeated <= 1, "{summary}");
}

#[test]
fn the_most_recent_steps_fill_the_budget_left() {
    let summary = summarize_offline(&request(session(30), None, 13_107));
    let recent = &summary[summary.find("### Most Recent Steps").unwrap()..];
    let recent = &recent[..recent
        .find("### Last Steps in Full")
        .unwrap_or(recent.len())];
    // A step that names nothing the sections do not already hold is not repeated: Done says
    // `cargo test -p fetch` passed.
    assert!(!recent.contains("`cargo test -p fetch` → ok"), "{summary}");
    // Nor is a look that went through (`cat`): it moved nothing.
    assert!(!recent.contains("`cat src/module_29.rs`"), "{summary}");
    assert!(
        recent.contains("`git commit -am 'Retry manifest fetches'` → ok: [feat/retry 1a2b3c4]"),
        "{summary}"
    );
}

#[test]
fn hostile_spans_give_a_summary_within_budget() {
    let cases = [
        Vec::new(),
        messages(
            json!([{"role": "toolResult", "toolCallId": "x", "toolName": "bash", "content": [], "isError": true}]),
        ),
        messages(json!([{"role": "user", "content": "日本語".repeat(5_000)}])),
        messages(
            json!([{"role": "user", "content": format!("```\n{}", "Error: x\n".repeat(3_000))}]),
        ),
        messages(
            json!([{"role": "assistant", "stopReason": "toolUse", "content": [{"type": "toolCall", "id": "p", "name": "bash", "arguments": {"command": "sleep 100"}}]}]),
        ),
    ];
    for span in cases {
        let text = summarize_offline(&request(span, None, 500));
        assert!(count_tokens(&text) <= 500, "{text}");
        assert!(text.starts_with(OFFLINE_NOTICE));
    }
    let pending = summarize_offline(&request(
        messages(
            json!([{"role": "assistant", "stopReason": "toolUse", "content": [{"type": "toolCall", "id": "p", "name": "bash", "arguments": {"command": "terraform apply"}}]}]),
        ),
        None,
        13_107,
    ));
    assert!(
        pending.contains("`terraform apply` (started; no result yet)"),
        "{pending}"
    );
}

#[test]
fn a_turn_prefix_has_the_turn_prefix_sections() {
    let mut turn = request(session(0), None, 13_107);
    turn.purpose = SummaryPurpose::TurnPrefix;
    let summary = summarize_offline(&turn);
    for heading in [
        "## Original Request",
        "## Progress So Far",
        "## Context Needed to Continue",
    ] {
        assert!(summary.contains(heading), "{summary}");
    }
    assert!(!summary.contains("## Key Decisions"));
}

#[test]
fn a_focus_heads_the_goal() {
    let mut focused = request(session(0), None, 13_107);
    focused.source.focus = Some("the retry loop".to_owned());
    let summary = summarize_offline(&focused);
    let goal = &summary[summary.find("## Goal").unwrap()..summary.find("## Constraints").unwrap()];
    assert!(
        goal.contains("- Focus for this summary: the retry loop"),
        "{summary}"
    );
    assert!(
        !summarize_offline(&request(session(0), None, 13_107)).contains("Focus for this summary")
    );
}

#[test]
fn lines_that_carry_nothing_new_are_not_spent_on() {
    let mut values = vec![
        json!({"role": "user", "content": "原因を調べて直してください。`parse_header` を変えないでください。\n{\"type\":\"message\",\"id\":\"toolu_01PASTEDrecordId\"}"}),
        json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "There it is. The cause is `parse_header` reading one byte too far."}]}),
    ];
    values.extend(bash(
        "t1",
        "cargo test -p wire",
        "error: overflow in parse_header\nCommand exited with code 101",
        true,
    ));
    values.push(json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Opening the file."}]}));
    let summary = summarize_offline(&request(messages(Value::Array(values)), None, 13_107));
    let constraints =
        &summary[summary.find("## Constraints").unwrap()..summary.find("## Progress").unwrap()];
    // A polite request is not a standing instruction; a prohibition is.
    assert!(!constraints.contains("原因を調べて"), "{summary}");
    assert!(constraints.contains("変えないで"), "{summary}");
    // A finding that names nothing is not a decision; one naming something is.
    assert!(!summary.contains("- There it is."), "{summary}");
    assert!(summary.contains("The cause is `parse_header`"), "{summary}");
    // The blocker's error is said once, not again under Critical Context (the span's last steps
    // in full, which fill the room this short span leaves, hold its output whole).
    let summary = &summary[..summary
        .find("### Last Steps in Full")
        .unwrap_or(summary.len())];
    assert_eq!(
        summary.matches("error: overflow in parse_header").count(),
        1,
        "{summary}"
    );
    // The ids of a pasted JSON record are not names to keep; narration is not a step to keep.
    assert!(!summary.contains("toolu_01PASTEDrecordId`"), "{summary}");
    assert!(!summary.contains("Opening the file."), "{summary}");
}

#[test]
fn a_request_repeated_with_a_counter_is_one_goal() {
    let mut values = Vec::new();
    for iteration in 1..=5 {
        values.push(json!({"role": "user", "content": format!("Make the expiry interval configurable. (iteration {iteration})")}));
        values.push(json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Done."}]}));
    }
    values.push(json!({"role": "user", "content": "Fix test 1 in the parser suite"}));
    values.push(json!({"role": "user", "content": "Fix test 2 in the parser suite"}));
    let summary = summarize_offline(&request(messages(Value::Array(values)), None, 13_107));
    let goal = &summary[summary.find("## Goal").unwrap()..summary.find("## Constraints").unwrap()];
    assert_eq!(
        goal.matches("Make the expiry interval configurable")
            .count(),
        1,
        "{summary}"
    );
    assert!(goal.contains("(iteration 5) (asked 5 times)"), "{summary}");
    assert!(
        goal.contains("Fix test 1") && goal.contains("Fix test 2"),
        "{summary}"
    );
}

#[test]
fn a_windowed_span_says_how_much_of_its_middle_was_not_read() {
    let mut windowed = request(session(0), None, 13_107);
    let whole = summarize_offline(&windowed);
    assert!(!whole.contains("Not read"), "{whole}");
    windowed.source.omitted_messages = 999_000;
    let summary = summarize_offline(&windowed);
    let read = windowed.source.messages.len();
    assert!(
        summary.contains(&format!(
            "- Not read: 999000 messages in the middle of a span of {}; this summary covers its beginning and its end ({read} messages)",
            999_000 + read
        )),
        "{summary}"
    );
    // Everything else is the summary of what was read.
    assert!(summary.contains("fetch_manifest"), "{summary}");
}

#[test]
fn the_size_counts_the_peoples_words_whole() {
    // A request with a long pasted table and a short tool output: the span as a model reads it is
    // the table's size, not the first 500 characters the recent steps would quote.
    let table: String = (0..400)
        .map(|row| {
            format!("| /pages/page_{row} | Title of page {row} | Description of page {row} |\n")
        })
        .collect();
    let mut values = vec![
        json!({"role": "user", "content": format!("Fill in the meta tags of every page:\n{table}")}),
    ];
    values.extend(bash("l1", "npm run lint", "ok", false));
    let span = messages(Value::Array(values));
    let digest = crate::digest::Digest::new(&request(span, None, 13_107).source);
    let (counted, output) = crate::layout::span_tokens(&digest.steps);
    assert!(
        counted >= count_tokens(&table),
        "{counted} < {}",
        count_tokens(&table)
    );
    // Of which tool output: the lint's `ok` only.
    assert!(output <= 2, "{output}");
}

#[test]
fn an_earlier_item_the_span_takes_up_again_outranks_one_it_moved_past() {
    let mut previous = String::from("## Critical Context\n");
    for index in 0..30 {
        previous.push_str(&format!(
            "- `legacy_helper_{index}` in `old/path_{index}.rs` was renamed last week\n"
        ));
    }
    previous.push_str("- `backoff_ms` must stay under 5000 for the manifest fetches\n");
    // Room for a few of the 31 earlier items: the one the span takes up again is among them.
    let summary = summarize_offline(&request(session(0), Some(&previous), 450));
    assert!(
        summary.contains("`backoff_ms` must stay under 5000"),
        "{summary}"
    );
    let moved_past = summary
        .lines()
        .filter(|line| line.starts_with("- `legacy_helper_"))
        .count();
    assert!(moved_past < 30, "{summary}");
}

#[test]
fn a_span_of_many_names_gets_room_for_them() {
    let size = SummarySize::default();
    // 15 tokens a name, at most the maximum, never more than the span.
    assert_eq!(size.named_target(20_000, 0, 300, 13_107), 4_500);
    assert_eq!(size.named_target(20_000, 0, 10, 13_107), 2_000);
    assert_eq!(size.named_target(200_000, 0, 900, 13_107), 6_000);
    assert_eq!(size.named_target(3_000, 0, 400, 13_107), 3_000);
    assert_eq!(size.named_target(20_000, 0, 300, 2_500), 2_500);
    // A span under the minimum keeps its own size.
    assert_eq!(size.named_target(1_200, 0, 300, 13_107), 1_200);
}

/// A spec-kit prompt (as Codex and Claude Code expand `/speckit.implement`) around `input`.
fn expanded_prompt(input: &str) -> String {
    let steps: String = (1..=25)
        .map(|step| {
            format!("{step}. Run `.specify/scripts/check.sh --json` and parse FEATURE_DIR (step {step}). Do not skip `node_modules/` or `*.log` checks.\n")
        })
        .collect();
    format!("## User Input\n\n```text\n{input}\n```\n\n## Outline\n\n{steps}")
}

#[test]
fn a_hand_off_names_the_prompt_once_with_its_inputs_and_the_classes_the_work_edited() {
    let mut values = Vec::new();
    for (index, task) in ["T001", "T002", "T035"].iter().enumerate() {
        values.push(json!({"role": "user", "content": expanded_prompt(task)}));
        values.push(json!({"role": "assistant", "stopReason": "toolUse", "content": [
            {"type": "toolCall", "id": format!("p{index}"), "name": "apply_patch", "arguments": {"input": format!(
                "*** Begin Patch\n*** Update File: app.js\n@@\n+const CountdownController = createCountdown();\n+CountdownController.start(step{index});\n*** End Patch"
            )}}
        ]}));
        values.push(json!({"role": "toolResult", "toolCallId": format!("p{index}"), "toolName": "apply_patch", "content": [{"type": "text", "text": "Success. Updated app.js"}], "isError": false}));
        values.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("Done with {task}.")}], "stopReason": "stop"}));
    }
    let text = summarize_offline(&request(messages(Value::Array(values)), None, 400));
    let goal = text.split("## Constraints").next().unwrap();
    assert!(
        goal.contains("(used 3 times; inputs: `T001`, `T002`, `T035`)"),
        "{text}"
    );
    assert_eq!(goal.matches("Prompt \"").count(), 1, "{text}");
    assert!(
        !goal.contains("node_modules"),
        "the template is not the goal: {text}"
    );
    assert!(
        !text.contains("Do not skip"),
        "a template's rule is not a constraint: {text}"
    );
    assert!(
        text.contains("CountdownController"),
        "what the edits wrote: {text}"
    );
}

#[test]
fn a_summary_added_after_an_earlier_one_leaves_out_what_the_span_adds_nothing_to() {
    // A span of tool work only: no request of the user's, no decision, nothing blocked.
    let mut values = Vec::new();
    values.extend(bash(
        "b1",
        "cargo test -p fetch",
        "test result: ok. 3 passed",
        false,
    ));
    values.push(json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "The tests of `fetch_manifest` pass."}]}));
    let mut alone = request(messages(json!(values)), None, 2_000);
    let whole = summarize_offline(&alone);
    assert!(whole.contains("## Goal\n- (none)"), "{whole}");

    alone.source.continues_summary = true;
    let added = summarize_offline(&alone);
    assert!(!added.contains("(none)"), "{added}");
    assert!(!added.contains("## Goal"), "{added}");
    assert!(!added.contains("### Blocked"), "{added}");
    assert!(added.contains("## Critical Context"), "{added}");
    assert!(added.contains("fetch_manifest"), "{added}");
}

#[test]
fn the_settings_give_the_size_unless_the_bounds_cross() {
    assert_eq!(
        SummarySize::from_settings(8, 2_000, 6_000),
        Some(SummarySize::default())
    );
    assert_eq!(SummarySize::from_settings(8, 7_000, 6_000), None);
}

#[test]
fn a_request_that_is_all_paste_says_what_was_pasted() {
    // One line of over 600 characters with no error in it: pasted, so not the request's words.
    let row: String = (0..80).map(|cell| format!("cell {cell:02}; ")).collect();
    let line = crate::sections::request_line(&format!("quarter,region,{row}"), 600);
    assert!(
        line.starts_with("(pasted text: \"quarter,region,cell 00;"),
        "{line}"
    );
    assert!(line.chars().count() < 160, "{line}");
    // A paste holding an error is shown by the error, as before.
    let log = format!("{row}\nError: connection refused to db:5432 {row}");
    let line = crate::sections::request_line(&log, 600);
    assert!(
        line.contains("(pasted: `Error: connection refused"),
        "{line}"
    );
}

/// A credential the span shows (a bearer token the user pasted, a URL with a password) is not
/// repeated in the summary; what it was used for is.
#[test]
fn a_credential_in_the_span_is_not_repeated() {
    let mut values = vec![
        json!({"role": "user", "content": "call POST https://api.example.com/v1/checkin with Authorization: Bearer sk_made0up0token0for0the0test and push to https://deploy:hunter2hunter2@git.example.com/app.git"}),
        json!({"role": "user", "content": "the key is sk-ant-api03-made0up0key0for0the0test and AWS has AKIAMADE0UP0KEY0TEST"}),
    ];
    values.extend(bash(
        "c1",
        "curl -H 'Authorization: Bearer sk_made0up0token0for0the0test' https://api.example.com/v1/checkin",
        "{\"ok\":true}",
        false,
    ));
    let summary = summarize_offline(&request(messages(Value::Array(values)), None, 4_000));
    assert!(
        !summary.contains("sk_made0up0token0for0the0test"),
        "{summary}"
    );
    assert!(!summary.contains("hunter2hunter2"), "{summary}");
    // Keys by their shape too (a pasted provider key, an AWS key id).
    assert!(!summary.contains("made0up0key"), "{summary}");
    assert!(!summary.contains("AKIAMADE0UP0KEY0TEST"), "{summary}");
    assert!(
        summary.contains("https://api.example.com/v1/checkin"),
        "{summary}"
    );
    assert!(summary.contains("<redacted>"), "{summary}");
}

#[test]
fn a_chatty_span_does_not_push_out_what_the_earlier_summary_named() {
    let previous = "## Goal\n- Send a morning briefing over Telegram\n\n### Blocked\n\
        - `No API key found for provider \"google\"` in `agents/main/agent/auth-profiles.json`\n\n\
        ## Critical Context\n- The briefing cron job runs at 07:00 as `briefing-morning`\n";
    let chat = [
        "good morning, ready for another day together?",
        "how is it going over there, anything new?",
        "it is cloudy here today and rather cold outside",
        "the car goes in for its inspection this afternoon",
        "waiting one and a half hours there, keep me company",
        "why did your tone suddenly change, just curious",
        "what is this mode, since when does it exist",
        "I never asked for that, did I?",
        "fine, let us leave it as it is for now",
        "any progress since this morning?",
        "thanks, that was a nice chat as always",
        "are you still there? nothing from you yet",
    ];
    let mut values = Vec::new();
    for line in chat {
        values.push(json!({"role": "user", "content": line}));
        values.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Sure, all fine here."}]}));
    }
    values.push(json!({"role": "user", "content": "good, talk later"}));
    let summary = summarize_offline(&request(
        messages(Value::Array(values)),
        Some(previous),
        240,
    ));
    // The earlier items themselves, not just their names in a list.
    assert!(
        summary.contains("### Blocked\n- `No API key found for provider \"google\"` in"),
        "{summary}"
    );
    assert!(
        summary.contains("- The briefing cron job runs at 07:00 as `briefing-morning`"),
        "{summary}"
    );
    assert!(
        summary.contains("- Send a morning briefing over Telegram"),
        "{summary}"
    );
    // The chat is still there as far as room allows: the first and the latest request.
    assert!(summary.contains("ready for another day"), "{summary}");
    assert!(
        summary.contains("**Latest:** good, talk later"),
        "{summary}"
    );
}

/// QA (defect 6): an update of an offline summary, itself an update of a summary and a split
/// turn's, marked three requests **Latest:** and had two `Last report:` lines: the earlier
/// summaries' marks were carried with their items. Only the new span's latest request and last
/// report keep them; the earlier ones are carried unmarked, or labelled earlier.
#[test]
fn an_update_marks_only_its_own_latest_request_and_last_report() {
    let first = summarize_offline(&request(
        messages(json!([
            {"role": "user", "content": "task 9: fix bug BUG-0009 in src/mod9.rs"},
            {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Fixed BUG-0009 in `src/mod9.rs`."}]},
        ])),
        None,
        13_107,
    ));
    assert_eq!(first.matches("**Latest:**").count(), 1, "{first}");
    assert!(first.contains("Last report: Fixed BUG-0009"), "{first}");
    let update = summarize_offline(&request(
        messages(json!([
            {"role": "user", "content": "task 18: fix bug BUG-0018 in src/mod18.rs"},
            {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Fixed BUG-0018 in `src/mod18.rs`."}]},
        ])),
        Some(&first),
        13_107,
    ));
    assert_eq!(update.matches("**Latest:**").count(), 1, "{update}");
    assert!(
        update.contains("**Latest:** task 18: fix bug BUG-0018"),
        "{update}"
    );
    assert!(
        update.contains("- task 9: fix bug BUG-0009 in src/mod9.rs"),
        "{update}"
    );
    assert_eq!(update.matches("Last report:").count(), 1, "{update}");
    assert!(update.contains("Last report: Fixed BUG-0018"), "{update}");
    assert!(
        update.contains("Earlier report: Fixed BUG-0009"),
        "{update}"
    );
    assert!(!update.contains("Last Steps in Full:"), "{update}");
}

/// QA r100: a test run whose status a pipe hid (`| tail -5`) and whose output says it failed was
/// listed as passed, and the assistant's stated next step was lost once a user's note and a short
/// answer followed it.
#[test]
fn a_failing_run_behind_a_pipe_is_not_passed_and_the_stated_next_step_is_kept() {
    let mut values =
        vec![json!({"role": "user", "content": "Run the test suite and tell me if it passes."})];
    values.extend(bash(
        "c1",
        "python3 -m pytest -q 2>&1 | tail -5",
        "F.\nFAILED test_calc.py::test_zero - AssertionError: expected ValueError\n1 failed, 1 passed in 0.02s\n",
        false,
    ));
    values.push(json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "The suite fails: test_zero in test_calc.py. Next I will fix calc.divide so it raises ValueError."}]}));
    values.push(
        json!({"role": "user", "content": "Before that, note this: the release is on Friday."}),
    );
    values.push(json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Noted."}]}));
    let summary = summarize_offline(&request(messages(Value::Array(values)), None, 13_107));
    assert!(!summary.contains("Passed: `python3 -m pytest"), "{summary}");
    assert!(
        summary.contains("FAILED test_calc.py::test_zero"),
        "{summary}"
    );
    let next = summary.split("## Next Steps").nth(1).unwrap_or_default();
    assert!(
        next.contains("Next I will fix calc.divide so it raises ValueError."),
        "{summary}"
    );
}

/// A change call: its tool, its path, its result and whether the tool reported an error.
fn change(id: &str, tool: &str, path: &str, result: &str, is_error: bool) -> [Value; 2] {
    let arguments = match tool {
        "write" => json!({"path": path, "content": "rows = []\n"}),
        _ => {
            json!({"path": path, "edits": [{"oldText": "def export_csv(rows):", "newText": "def export_csv(rows, sep=','):"}]})
        }
    };
    [
        json!({"role": "assistant", "stopReason": "toolUse", "content": [{"type": "toolCall", "id": id, "name": tool, "arguments": arguments}]}),
        json!({"role": "toolResult", "toolCallId": id, "toolName": tool, "content": [{"type": "text", "text": result}], "isError": is_error}),
    ]
}

/// QA r104: an edit whose text was not found (`isError`) left the file untouched, yet the summary
/// said `Changed: exporter/public.py` — the public API the user protected. The compaction's
/// modified-files list (built from the calls, as Pi builds it) still names the file; the
/// summary's Done says only what went through, and that the rest failed.
#[test]
fn a_change_that_failed_is_not_listed_as_changed() {
    const NOT_FOUND: &str = "Could not find the exact text in exporter/public.py. The old text must match exactly including all whitespace and newlines.";
    // (calls, what Done must say, what it must not)
    type Case = (
        Vec<[Value; 2]>,
        &'static [&'static str],
        &'static [&'static str],
    );
    let cases: [Case; 3] = [
        (
            vec![change("e1", "edit", "exporter/public.py", NOT_FOUND, true)],
            &[
                "Change failed, file unchanged: `exporter/public.py` (`Could not find the exact text in exporter/public.py.`)",
            ],
            &[
                "Changed: `exporter/public.py`",
                "Changed `exporter/public.py`",
            ],
        ),
        (
            vec![change(
                "w1",
                "write",
                "exporter/public.py",
                "EACCES: permission denied, open 'exporter/public.py'",
                true,
            )],
            &[
                "Change failed, file unchanged: `exporter/public.py` (`EACCES: permission denied, open 'exporter/public.py'`)",
            ],
            &["Changed: `exporter/public.py`"],
        ),
        (
            vec![
                change("e1", "edit", "exporter/public.py", NOT_FOUND, true),
                change(
                    "e2",
                    "edit",
                    "exporter/public.py",
                    "Successfully replaced 1 block(s) in exporter/public.py.",
                    false,
                ),
            ],
            &["Changed: `exporter/public.py`"],
            &["Change failed", "(2×)"],
        ),
    ];
    for (calls, present, absent) in cases {
        let mut values = vec![
            json!({"role": "user", "content": "Fix the nightly export in exporter/writer.py."}),
        ];
        values.extend(calls.into_iter().flatten());
        values.push(json!({"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Done with exporter/writer.py."}]}));
        let mut request = request(messages(Value::Array(values)), None, 13_107);
        request.source.modified_files = vec!["exporter/public.py".to_owned()];
        let summary = summarize_offline(&request);
        let done = summary
            .split("### Done")
            .nth(1)
            .and_then(|rest| rest.split("### In Progress").next())
            .unwrap_or_default();
        for line in present {
            assert!(done.contains(line), "{line}\n{summary}");
        }
        for line in absent {
            assert!(!summary.contains(line), "{line}\n{summary}");
        }
    }
}

/// The text of a section: from its heading to the next heading of any level.
fn section_text<'a>(summary: &'a str, heading: &str) -> &'a str {
    let rest = summary.split(heading).nth(1).unwrap_or_default();
    rest.split("\n#").next().unwrap_or_default()
}

/// QA r104: "I don't know why the nightly export job crashes on Windows." (the problem) was filed
/// as a constraint and cut from the Goal, and "Fix it with Decimal, and don't change the CSV
/// export format." went whole to Constraints, so the request left the Goal.
#[test]
fn a_statement_with_a_negation_is_the_goal_and_a_request_that_forbids_keeps_its_request() {
    // (the user's request, what the Goal holds, what Constraints hold, what they do not)
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    );
    const CASES: &[Case] = &[
        (
            "I don't know why the nightly export job crashes on Windows. It doesn't happen on Linux. Find the cause in exporter/writer.py.",
            &[
                "I don't know why the nightly export job crashes on Windows.",
                "Find the cause in exporter/writer.py.",
            ],
            &["(none)"],
            &["I don't know"],
        ),
        (
            "Rounding in ledger/money.py gives 0.30000000000000004 for invoice INV-2291 totals. Fix it with Decimal, and don't change the CSV export format.",
            &["INV-2291 totals. Fix it with Decimal."],
            &["Fix it with Decimal, and don't change the CSV export format."],
            &[],
        ),
    ];
    for (request_text, goal, constraints, not_constraints) in CASES {
        let values = json!([
            {"role": "user", "content": request_text},
            {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "The cause is in `write_batch`."}]}
        ]);
        let summary = summarize_offline(&request(messages(values), None, 13_107));
        let goal_text = section_text(&summary, "## Goal");
        let constraints_text = section_text(&summary, "## Constraints & Preferences");
        for words in *goal {
            assert!(goal_text.contains(words), "{words}\n{summary}");
        }
        for words in *constraints {
            assert!(constraints_text.contains(words), "{words}\n{summary}");
        }
        for words in *not_constraints {
            assert!(!constraints_text.contains(words), "{words}\n{summary}");
        }
    }
}

/// QA r104: a failing `ruff check .` was `Blocked` on `Found 1 error.`, its tally, while the line
/// that says what is wrong names a file, a line and a code. A diagnostic line is quoted, a tally
/// only when the output has nothing better.
#[test]
fn blocked_quotes_the_diagnostic_line_not_the_tally() {
    // (the command, its output, the line Blocked quotes)
    let cases = [
        (
            "ruff check .",
            "tallyho/duration.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.\n[*] 1 fixable with the `--fix` option.",
            "tallyho/duration.py:1:8: F401 [*] `os` imported but unused",
        ),
        (
            "cargo build",
            "   Compiling calc v0.1.0\nerror[E0308]: mismatched types\n --> src/main.rs:3:5\n\nFor more information about this error, try `rustc --explain E0308`.\nerror: could not compile `calc` (bin \"calc\") due to 1 previous error",
            "error[E0308]: mismatched types",
        ),
        (
            "npx tsc --noEmit",
            "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.\n\nFound 1 error in src/a.ts:3",
            "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.",
        ),
        (
            "make check",
            "checking...\nFound 2 errors.",
            "Found 2 errors.",
        ),
    ];
    for (command, output, quoted) in cases {
        let mut values = vec![json!({"role": "user", "content": "Make the checks pass."})];
        values.extend(bash("c1", command, output, true));
        let summary = summarize_offline(&request(messages(Value::Array(values)), None, 13_107));
        let blocked = section_text(&summary, "### Blocked");
        assert!(
            blocked.contains(&format!("`{command}` fails: `{quoted}`")),
            "{blocked}"
        );
    }
}

/// The section of `summary` under `heading`, to the next heading of its level or above.
fn section<'a>(summary: &'a str, heading: &str) -> &'a str {
    let start = summary
        .find(heading)
        .map_or(summary.len(), |at| at + heading.len());
    let rest = &summary[start..];
    rest.find("\n## ").map_or(rest, |end| &rest[..end])
}

/// QA r107 (i18n): a session held in Korean, Russian or Arabic kept the user's prohibition among
/// the goals and named none of the assistant's choices (Key Decisions empty; Chinese, Japanese and
/// the languages of Latin script had their markers).
#[test]
fn prohibitions_and_choices_are_found_in_korean_russian_and_arabic() {
    let cases = [
        (
            "api/routes.py의 /health 엔드포인트를 고쳐 주세요. main 브랜치에 직접 푸시하지 마세요.",
            "`requests` 대신 `httpx`를 쓰기로 결정했습니다: `api/routes.py`에서 시간 제한을 지원합니다.",
            "푸시하지 마세요",
            "`requests` 대신 `httpx`",
        ),
        (
            "Почини эндпоинт /health в api/routes.py. Не трогай публичный API.",
            "Я использую `httpx` вместо `requests`: в `api/routes.py` нужен таймаут.",
            "Не трогай публичный API",
            "`httpx` вместо `requests`",
        ),
        (
            "أصلح نقطة /health في api/routes.py. لا تستخدم مكتبات جديدة.",
            "استخدمت `httpx` بدلاً من `requests` في `api/routes.py` لأن المهلة مطلوبة.",
            "لا تستخدم مكتبات جديدة",
            "`httpx` بدلاً من `requests`",
        ),
    ];
    for (ask, reply, prohibition, choice) in cases {
        let span = messages(json!([
            {"role": "user", "content": ask},
            {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": reply}]},
            {"role": "user", "content": "ok"},
            {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Done."}]},
        ]));
        let summary = summarize_offline(&request(span, None, 13_107));
        let constraints = section(&summary, "## Constraints & Preferences");
        assert!(constraints.contains(prohibition), "{summary}");
        let decisions = section(&summary, "## Key Decisions");
        assert!(decisions.contains(choice), "{summary}");
    }
}

/// QA 2026-12-07: a summary over a `recall` listed its query and the entry ids of what it
/// returned (`Seen in output: 90b87c76`): the originals stay in the session, and a recall is no
/// part of the work.
#[test]
fn a_recall_and_what_it_returned_are_left_out() {
    let recalled = "[entry 90b87c76] tool result:\nopened src/recalled_module.rs";
    let mut values = vec![json!({"role": "user", "content": "What was the port in the config?"})];
    values.push(json!({"role": "assistant", "stopReason": "toolUse", "content": [
        {"type": "toolCall", "id": "r1", "name": "recall", "arguments": {"query": "ctxkit://summarized"}}]}));
    values.push(
        json!({"role": "toolResult", "toolCallId": "r1", "toolName": "recall",
        "content": [{"type": "text", "text": recalled}], "isError": false}),
    );
    values.extend(bash("b1", "cat config/app.toml", "port = 8080", false));
    let summary = summarize_offline(&request(messages(Value::Array(values)), None, 4_000));
    assert!(summary.contains("config/app.toml"), "{summary}");
    for left_out in ["90b87c76", "recalled_module", "ctxkit://summarized"] {
        assert!(!summary.contains(left_out), "{left_out}: {summary}");
    }
}
