//! `ctxkit chat` in tmux: the status line's context figure where no reply's usage tells it (after
//! a failed request, after `/compact`, on a resumed session that ends in a compaction) is
//! ctxkit's estimate, marked `~`, with the model's window, until a reply's usage replaces it; a
//! `/tree` move shows the figure of the branch moved to.

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

use crate::chat::{World, text, tmux_missing};

/// The last status line on the screen.
fn last_status(screen: &str) -> String {
    screen
        .lines()
        .rfind(|line| line.starts_with("[context "))
        .unwrap_or_else(|| panic!("no status line:\n{screen}"))
        .to_owned()
}

/// The estimated tokens of a status line `[context ~N/W tokens, P%…]`.
fn estimated_tokens(status: &str) -> u64 {
    let figure = status
        .strip_prefix("[context ~")
        .unwrap_or_else(|| panic!("not an estimate: {status}"));
    figure.split('/').next().unwrap().parse().unwrap()
}

fn server_error() -> ResponseTemplate {
    ResponseTemplate::new(500)
        .set_body_json(json!({"error": {"message": "internal boom", "type": "server_error"}}))
}

/// The id of the first entry whose message is a reply saying `text`.
fn reply_id(entries: &[Value], text: &str) -> String {
    entries
        .iter()
        .find(|entry| {
            entry["message"]["role"] == "assistant"
                && entry["message"]["content"].to_string().contains(text)
        })
        .and_then(|entry| entry["id"].as_str())
        .unwrap_or_else(|| panic!("no reply {text:?}"))
        .to_owned()
}

#[test]
fn the_status_line_estimates_the_context_where_no_usage_tells_it() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({"keepRecentTokens": 60}));
    world.answer(server_error());
    let tmux = world.start("");
    tmux.wait_idle(1);
    // A failed first request: no reply reports usage; the system prompt and tools were sent.
    tmux.line("hello there, please help");
    tmux.wait_for("internal boom");
    let screen = tmux.wait_for("[context ");
    let status = last_status(&screen);
    assert!(status.contains("/100000 tokens"), "{status}");
    assert!(
        estimated_tokens(&status) > 300,
        "the estimate holds the system prompt and tools: {status}"
    );
    // A reply's usage replaces the estimate.
    let filler = " The parser reads tokens, builds the tree and reports errors.".repeat(6);
    world.answer(text(&format!("First answer.{filler}"), 20_000));
    tmux.line("second try");
    tmux.wait_for("[context 20020/100000 tokens, 20%");
    world.answer(text(&format!("Second answer.{filler}"), 25_000));
    tmux.line("third");
    tmux.wait_for("[context 25020/100000 tokens, 25%");
    // Right after a compaction: the estimate of the compacted context.
    tmux.line("/compact");
    tmux.wait_for("Compacted: ");
    let screen = tmux.wait_for_count("[context ~", 2);
    let after_compaction = estimated_tokens(&last_status(&screen));
    assert!(
        after_compaction > 300 && after_compaction < 25_020,
        "{screen}"
    );
    // QA: the compaction's line counted the messages alone (`25020 → 180`) while the status line
    // under it added the system prompt and tools: one context, two numbers. Now they agree.
    assert!(
        screen.contains(&format!("Compacted: 25020 → {after_compaction} tokens")),
        "{screen}"
    );
    tmux.wait_idle(5);
    tmux.line("/context");
    let screen = tmux.wait_for("estimated until a reply reports usage");
    assert!(
        screen.contains(&format!(" ~{after_compaction} / 100000 tokens")),
        "{screen}"
    );
    tmux.wait_idle(6);
    // The session reopened, ending in that compaction: the same estimate.
    let file = world.session_files().remove(0);
    tmux.line("/quit");
    drop(tmux);
    let tmux = world.start(&format!("--session '{}'", file.display()));
    let screen = tmux.wait_for("[context ~");
    assert_eq!(estimated_tokens(&last_status(&screen)), after_compaction);
    tmux.wait_idle(1);
    world.answer(text("After the reopen.", 30_000));
    tmux.line("fourth");
    tmux.wait_for("[context 30020/100000 tokens, 30%");
    tmux.wait_idle(2);
    // A move to an older entry: the figure of that branch.
    let first = reply_id(&world.entries(&file), "First answer");
    tmux.line(&format!("/tree {first}"));
    tmux.wait_for("Moved to");
    let screen = tmux.wait_for("[context 20020/100000 tokens, 20%");
    assert!(
        last_status(&screen).starts_with("[context 20020/100000 tokens, 20%"),
        "{screen}"
    );
}
