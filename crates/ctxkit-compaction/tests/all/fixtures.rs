//! Sessions built for tests.

use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;
use serde_json::json;

pub fn message(value: serde_json::Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

pub fn user(text: &str) -> AgentMessage {
    message(json!({"role": "user", "content": text, "timestamp": 1}))
}

pub fn assistant_text(text: &str) -> AgentMessage {
    message(
        json!({"role": "assistant", "content": [{"type": "text", "text": text}], "provider": "p", "model": "m",
        "stopReason": "stop", "timestamp": 2}),
    )
}

pub fn tool_call(name: &str, path: &str) -> AgentMessage {
    message(
        json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("call-{path}"), "name": name,
        "arguments": {"path": path}}], "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 3}),
    )
}

pub fn tool_result(path: &str, text: &str) -> AgentMessage {
    message(
        json!({"role": "toolResult", "toolCallId": format!("call-{path}"), "toolName": "read",
        "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 4}),
    )
}

/// Two turns; the second is one long turn of tool use, so a small keep budget splits it.
pub fn split_turn_session() -> Session {
    let mut session = Session::in_memory("/project");
    session
        .append_message(user(
            "Add a cache to src/store.rs; keep the public API unchanged",
        ))
        .unwrap();
    session
        .append_message(tool_call("read", "src/store.rs"))
        .unwrap();
    session
        .append_message(tool_result("src/store.rs", &"fn get() {}\n".repeat(50)))
        .unwrap();
    session
        .append_message(assistant_text("Added the cache in `Store::get`."))
        .unwrap();
    session
        .append_message(user("Now make the tests pass"))
        .unwrap();
    for index in 0..6 {
        let path = format!("tests/case{index}.rs");
        session.append_message(tool_call("edit", &path)).unwrap();
        session
            .append_message(tool_result(&path, &"ok ".repeat(200)))
            .unwrap();
    }
    session
        .append_message(assistant_text("All tests pass."))
        .unwrap();
    session
}
