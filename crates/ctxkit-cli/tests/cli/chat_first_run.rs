//! What a new user meets in `ctxkit chat` with the settings a README example gives: the status line
//! claims no price the model was never given.

use serde_json::json;

use crate::chat::{World, text, tmux_missing};

#[test]
fn the_status_line_shows_no_dollars_for_a_model_declared_without_prices() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(text("PRICELESS-ANSWER", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("hello");
    tmux.wait_for("PRICELESS-ANSWER");
    let screen = tmux.wait_for("[context ");
    assert!(!screen.contains("$0.0000"), "{screen}");
    assert!(!screen.contains(" spent"), "{screen}");
}
