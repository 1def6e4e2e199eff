//! `ctxkit chat` in tmux: Esc during an automatic compaction cancels only the compaction (the run
//! goes on uncompacted, and Esc again interrupts it, as Pi 1.6 does), and lines typed with Enter
//! while `/compact` runs are sent as prompts of their own, as they are during a reply.

use std::time::Duration;

use serde_json::json;

use crate::chat::{World, completion, count_type, last_user_text, long, text, tmux_missing};

/// QA: Esc during the compaction between two tool calls stopped the whole run (the model never got
/// the tool result it asked for), and Esc during the compaction before a prompt's request left the
/// prompt stored, unanswered and unsent, without a word.
#[test]
fn esc_during_an_automatic_compaction_cancels_only_the_compaction() {
    if tmux_missing() {
        return;
    }
    // Threshold 10,384 tokens; the read's reply reports 9,000, so its result crosses it.
    let world = World::new(
        16_384,
        json!({"reserveTokens": 6000, "keepRecentTokens": 100}),
    );
    std::fs::write(
        world.project.join("big.txt"),
        "big file line with filler text 0123456789\n".repeat(380),
    )
    .unwrap();
    world.answer(text("Hello.", 300));
    world.answer(completion(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_big", "type": "function",
            "function": {"name": "read", "arguments": json!({"path": "big.txt"}).to_string()}}]}),
        "tool_calls",
        9000,
    ));
    // The reply after the cancel is slow: Esc again interrupts it.
    world.answer(text("Too late.", 9500).set_delay(Duration::from_secs(30)));
    world.answer(text("Answered uncompacted.", 9600));
    world.summary_delay(Duration::from_secs(30));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("hello");
    tmux.wait_idle(2);

    // Between the read and the next model call.
    tmux.line("Please read big.txt");
    tmux.wait_for("Compacting… (context near the window)");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Compaction cancelled (nothing was written)");
    tmux.wait_for("(the run goes on without compacting; Esc or Ctrl-C again interrupts it)");
    tmux.wait_for("Thinking…");
    // The spinner shows before the request reaches the mock.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while world.chat_requests().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 3, "the request after the read was sent");
    let sent = requests[2]["messages"].to_string();
    assert!(
        sent.contains("big file line"),
        "with the read's result: {sent}"
    );
    // A second Esc interrupts the run, as Esc does when no compaction runs.
    tmux.keys(&["Escape"]);
    tmux.wait_for("Interrupted");
    tmux.wait_idle(3);

    // Before the prompt's request (its reply would get too little room).
    tmux.line("go on");
    tmux.wait_for_count("Compacting…", 1);
    tmux.keys(&["Escape"]);
    tmux.wait_for_count("Compaction cancelled (nothing was written)", 2);
    let screen = tmux.wait_for("Answered uncompacted.");
    assert_eq!(
        screen
            .matches("(the run goes on without compacting; Esc or Ctrl-C again interrupts it)")
            .count(),
        2,
        "{screen}"
    );
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 4, "the prompt was sent");
    assert!(last_user_text(&requests[3]).contains("go on"));
    let file = world.session_files().remove(0);
    assert_eq!(count_type(&world.entries(&file), "compaction"), 0);
}

/// QA: `four` Enter `five` Enter typed while `/compact` ran were sent as one prompt, "four five";
/// during a reply the same keys are two prompts.
#[test]
fn lines_typed_during_compact_are_separate_prompts() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({"keepRecentTokens": 60}));
    for label in ["Answer one", "Answer two", "Answer three"] {
        world.answer(long(label, 3000));
    }
    world.answer(text("Reply to four.", 3100));
    world.answer(text("Reply to five.", 3200));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    for (number, prompt) in ["first task", "second task", "third task"]
        .iter()
        .enumerate()
    {
        tmux.line(prompt);
        tmux.wait_idle(number + 2);
    }
    world.summary_delay(Duration::from_secs(3));
    tmux.line("/compact");
    tmux.wait_for("Compacting…");
    tmux.line("four");
    tmux.line("five");
    tmux.wait_for("› four ⏎ five ⏎");
    tmux.wait_for("Reply to five.");
    let requests = world.chat_requests();
    let users: Vec<String> = requests[3..].iter().map(last_user_text).collect();
    assert_eq!(users.len(), 2, "{users:?}");
    assert!(
        users[0].contains("four") && !users[0].contains("five"),
        "{users:?}"
    );
    assert!(users[1].contains("five"), "{users:?}");
    // Each with its own reply, as during a reply.
    let screen = tmux.screen();
    let four = screen.find("Reply to four.").unwrap();
    assert!(screen[four..].contains("> five"), "{screen}");
}
