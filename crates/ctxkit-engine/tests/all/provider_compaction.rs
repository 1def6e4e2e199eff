//! A reply that carries the provider's compaction: a readable one (Anthropic) is recorded as a
//! compaction entry right after the reply, so the context becomes the provider's summary, that
//! reply and what follows; an opaque one (OpenAI) leaves the context whole.

use ctxkit_protocol::AgentMessage;
use serde_json::json;

use crate::support::*;

fn compacting_reply(block: serde_json::Value) -> AgentMessage {
    let mut reply: ctxkit_protocol::AssistantMessage = serde_json::from_value(json!({
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "toolu_9", "name": "bash", "arguments": {"command": "cargo test"}}],
        "provider": PROVIDER, "model": MODEL, "api": "anthropic-messages", "stopReason": "toolUse",
        "usage": {"input": 900, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 930,
                  "iterations": [{"type": "compaction", "input_tokens": 152000, "output_tokens": 1800},
                                 {"type": "message", "input_tokens": 900, "output_tokens": 30}]},
        "timestamp": now_ms(),
    }))
    .unwrap();
    reply.set_provider_compaction(block);
    AgentMessage::Assistant(reply)
}

fn tool_result() -> AgentMessage {
    serde_json::from_value(json!({
        "role": "toolResult", "toolCallId": "toolu_9", "toolName": "bash",
        "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": now_ms(),
    }))
    .unwrap()
}

#[tokio::test]
async fn a_readable_provider_compaction_becomes_a_compaction_entry_after_its_reply() {
    let harness = Harness::new(200_000, 16_384, []);
    let engine = &harness.engine;
    engine.append(user("write the parser")).await.unwrap();
    engine.append(reply("Written.", 5_000)).await.unwrap();
    engine.append(user("now test it")).await.unwrap();
    let block = json!({"type": "compaction", "content": "Parser written in src/parse.rs."});
    let reply_id = engine
        .append(compacting_reply(block.clone()))
        .await
        .unwrap();
    engine.append(tool_result()).await.unwrap();

    let compaction = engine
        .with_session(|session| {
            session
                .entries()
                .iter()
                .find_map(|entry| entry.parse().ok()?.kind.as_compaction().cloned())
        })
        .await
        .unwrap();
    assert_eq!(compaction.summary, "Parser written in src/parse.rs.");
    assert_eq!(compaction.first_kept_entry_id, reply_id);
    assert_eq!(compaction.tokens_before, 152_000);
    let details = compaction.details.unwrap();
    assert_eq!(details["providerCompaction"]["block"], block);
    assert_eq!(details["readFiles"], json!([]));
    assert_eq!(details["summarizer"], "faux/faux-1 (provider-side)");
    assert_eq!(details["usage"]["output_tokens"], 1800);

    // The context is what the provider now reads: its summary, the reply, what came after.
    let transcript = engine.transcript().await.unwrap();
    let roles: Vec<_> = transcript.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["compactionSummary", "assistant", "toolResult"]);
    let view = engine.model_view().await.unwrap();
    let kept = view
        .messages
        .iter()
        .find_map(AgentMessage::as_assistant)
        .unwrap();
    assert_eq!(kept.provider_compaction(), Some(&block));
}

#[tokio::test]
async fn an_opaque_provider_compaction_leaves_the_context_whole() {
    let harness = Harness::new(200_000, 16_384, []);
    let engine = &harness.engine;
    engine.append(user("write the parser")).await.unwrap();
    let item = json!({"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA"});
    engine.append(compacting_reply(item)).await.unwrap();
    engine.append(tool_result()).await.unwrap();
    let transcript = engine.transcript().await.unwrap();
    let roles: Vec<_> = transcript.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult"]);
}
