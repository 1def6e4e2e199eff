//! `ctxkit chat` in tmux against a provider whose real limit is below the configured window and
//! whose overflow error states it (round 97): the turn is compacted within that limit and retried,
//! and the status line and `/context` read the context against it.

use serde_json::json;

use crate::chat::{World, overflow_of, tmux_missing, tool_call};

#[test]
fn a_stated_limit_is_recovered_within_and_shown_as_the_window() {
    if tmux_missing() {
        return;
    }
    let world = World::new(16_000, json!({}));
    for name in ["a", "b", "c"] {
        std::fs::write(
            world.project.join(format!("{name}.txt")),
            format!("line {name} of a file the agent reads through\n").repeat(230),
        )
        .unwrap();
    }
    // Three reads in one turn, then the provider refuses the fourth request, stating 5,000.
    for name in ["a", "b", "c"] {
        world.answer(tool_call(
            &format!("call_{name}"),
            "read",
            json!({"path": format!("{name}.txt")}),
        ));
    }
    world.answer(overflow_of(5_000));
    world.answer(crate::chat::text(
        "Recovered within the stated limit.",
        3_000,
    ));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("Read a.txt, b.txt and c.txt");
    let screen = tmux.wait_for("Recovered within the stated limit.");
    assert!(
        screen.contains("(context overflow; retrying)"),
        "the turn is compacted and retried: {screen}"
    );
    assert!(!screen.contains("recovery failed"), "{screen}");
    let screen = tmux.wait_for("[context ");
    let status = screen
        .lines()
        .rfind(|line| line.starts_with("[context "))
        .unwrap();
    assert!(
        status.contains("/5000 tokens")
            && status.contains("of the provider's limit (16000 configured)"),
        "{status}"
    );
    tmux.wait_idle(2);
    tmux.line("/context");
    let screen = tmux.wait_for("Context [");
    let gauge = screen
        .lines()
        .rfind(|line| line.starts_with("Context ["))
        .unwrap();
    assert!(
        gauge.contains("/ 5000 tokens (")
            && gauge.contains("of the provider's limit, 16000 configured)"),
        "{gauge}"
    );
    tmux.wait_idle(3);
    tmux.line("/session");
    let screen = tmux.wait_for("Context: ");
    let line = screen
        .lines()
        .rfind(|line| line.starts_with("Context: "))
        .unwrap();
    assert!(
        line.contains("/ 5000 tokens")
            && line.contains("of the provider's limit (16000 configured)"),
        "{line}"
    );
}
