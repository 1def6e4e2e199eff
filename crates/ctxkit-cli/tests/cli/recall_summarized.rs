//! Lossless compaction in the chat (issue 45): after a compaction whose summary dropped a detail,
//! the model reads it back from the summarized messages with `recall` and a query, and the view's
//! summary says where its originals are.

use serde_json::json;

use crate::chat::{World, text, tool_call};

#[test]
fn after_a_compaction_the_model_recalls_a_detail_only_the_summarized_span_held() {
    // A terminal test that skipped would pass without having run: `.ci/run` installs tmux.
    assert!(
        crate::chat::Tmux::available(),
        "tmux is needed: apt-get install -y tmux"
    );
    let world = World::new(100_000, json!({"keepRecentTokens": 60}));
    std::fs::create_dir_all(world.project.join("config")).unwrap();
    let config: String = (0..40)
        .map(|line| format!("setting_{line} = {line}\n"))
        .collect::<String>()
        .replace("setting_17 = 17", "staging_port = 48213");
    std::fs::write(world.project.join("config/staging.toml"), config).unwrap();
    world.answer(tool_call(
        "call_read",
        "read",
        json!({"path": "config/staging.toml"}),
    ));
    world.answer(text("I read the staging configuration.", 900));
    world.answer(text("The parser reads tokens and builds the tree.", 1000));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("read config/staging.toml");
    tmux.wait_for("I read the staging configuration.");
    tmux.wait_idle(2);
    tmux.line("now explain the parser");
    tmux.wait_for("builds the tree.");
    tmux.wait_idle(3);
    tmux.line("/compact");
    tmux.wait_for("Compacted: ");
    tmux.wait_for("The replaced messages stay in the session");
    tmux.wait_idle(4);

    world.answer(tool_call(
        "call_recall",
        "recall",
        json!({"reference": "ctxkit://summarized", "query": "staging_port"}),
    ));
    world.answer(text("The staging port was 48213.", 1100));
    tmux.line("which port did the staging config set?");
    let screen = tmux.wait_for("The staging port was 48213.");
    assert!(screen.contains("recall"), "{screen}");

    let requests = world.chat_requests();
    let recall_request =
        requests.iter().find(|body| {
            body["messages"].as_array().unwrap().iter().any(|message| {
                message["role"] == "tool" && message["tool_call_id"] == "call_recall"
            })
        });
    let recall_request = recall_request.expect("the recall result reached the model");
    let messages = recall_request["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .find(|message| message["tool_call_id"] == "call_recall")
        .unwrap()
        .to_string();
    assert!(result.contains("staging_port = 48213"), "{result}");
    // Only the lines around the query's word, not the whole file.
    assert!(!result.contains("setting_30"), "{result}");
    // The summary the model saw names where its originals are, and it did not hold the port.
    let summary = messages
        .iter()
        .map(ToString::to_string)
        .find(|message| message.contains("SUMMARY-FROM-MOCK"))
        .unwrap();
    assert!(summary.contains("ctxkit://summarized"), "{summary}");
    assert!(!summary.contains("48213"), "{summary}");
}
