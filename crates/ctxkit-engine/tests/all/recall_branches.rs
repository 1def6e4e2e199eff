//! `recall` of a branch summary's originals: the branch it left behind is read back, as that
//! branch's context showed it; an abandoned branch nothing summarized stays unread.

use ctxkit_engine::Recalled;

use crate::support::*;

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

fn user(id: &str, parent: &str, second: u32, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:{second:02}.000Z","message":{{"role":"user","content":"{text}","timestamp":{second}}}}}"#
    )
}

fn reply(id: &str, parent: &str, second: u32, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:{second:02}.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"x","provider":"x","model":"x","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":{second}}}}}"#
    )
}

/// u1 → a1, then a branch u2 → a2 → u3 (a pasted key, edited out of that branch's context) → e3,
/// left for u4 under a1; `summary` decides whether a branch summary (of the branch left at e3)
/// sits between a1 and u4.
fn session_with_a_branch_left(dir: &std::path::Path, summary: bool) -> ctxkit_session::Session {
    let mut lines = vec![
        HEADER.to_owned(),
        user("u1", "null", 1, "find the bird"),
        reply("a1", "u1", 2, "looking"),
        user("u2", "\"a1\"", 3, "try the east shore"),
        reply("a2", "u2", 4, "found a PELICAN at port 4471"),
        user("u3", "\"a2\"", 5, "my key is sk-LEFT-0007"),
        r#"{"type":"context_edit","id":"e3","parentId":"u3","timestamp":"2025-01-01T00:00:06.000Z","targetId":"u3","replacement":null}"#.to_owned(),
    ];
    let parent = if summary {
        lines.push(r#"{"type":"branch_summary","id":"b1","parentId":"a1","timestamp":"2025-01-01T00:00:07.000Z","fromId":"e3","summary":"The east shore was searched."}"#.to_owned());
        "\"b1\""
    } else {
        "\"a1\""
    };
    lines.push(user("u4", parent, 8, "now the west shore"));
    let path = dir.join("branches.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    ctxkit_session::Session::open(&path).unwrap()
}

#[tokio::test]
async fn a_branch_summary_s_originals_come_back_through_recall() {
    let dir = tempfile::tempdir().unwrap();
    let harness = Harness::with_session(session_with_a_branch_left(dir.path(), true));
    let engine = &harness.engine;

    let Recalled::Found(found) = engine.recall("ctxkit://summarized", Some("pelican")).await else {
        panic!("nothing recalled");
    };
    assert_eq!(
        found,
        "[entry a2 (on the branch left behind)] assistant:\nfound a PELICAN at port 4471"
    );
    // Everything the branch held past where the two part, and nothing before it (u1 and a1 are
    // still in the context) nor what that branch's context had edited out.
    let whole = engine.fetch_summarized(None).await.unwrap().unwrap();
    assert!(whole.contains("[entry u2 (on the branch left behind)] user:\ntry the east shore"));
    assert!(!whole.contains("find the bird"), "{whole}");
    assert!(!whole.contains("sk-LEFT-0007"), "{whole}");
    // The view tells the model so.
    let view = serde_json::to_string(&engine.model_view().await.unwrap().messages).unwrap();
    assert!(view.contains("The east shore was searched."), "{view}");
    assert!(view.contains("ctxkit://summarized"), "{view}");
}

#[tokio::test]
async fn a_branch_left_without_a_summary_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let harness = Harness::with_session(session_with_a_branch_left(dir.path(), false));
    assert_eq!(
        harness
            .engine
            .recall("ctxkit://summarized", Some("pelican"))
            .await,
        Recalled::Missing("Nothing on this branch was summarized".to_owned())
    );
}

/// u1 (ten lines, one naming the port) → a1 → u2, compacted up to u2.
fn compacted_session(dir: &std::path::Path) -> ctxkit_session::Session {
    let notes =
        "notes:\\nalpha\\nbeta\\ngamma\\ndelta\\nthe PORT is 8431\\nepsilon\\nzeta\\neta\\ntheta";
    let lines = [
        HEADER.to_owned(),
        user("u1", "null", 1, notes),
        reply("a1", "u1", 2, "noted"),
        user("u2", "\"a1\"", 3, "carry on"),
        r#"{"type":"compaction","id":"k1","parentId":"u2","timestamp":"2025-01-01T00:00:04.000Z","summary":"notes were taken","firstKeptEntryId":"u2","tokensBefore":100}"#.to_owned(),
    ];
    let path = dir.join("compacted.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    ctxkit_session::Session::open(&path).unwrap()
}

#[tokio::test]
async fn a_summarized_message_comes_back_whole_by_its_entry_id_or_in_a_range() {
    let dir = tempfile::tempdir().unwrap();
    let harness = Harness::with_session(compacted_session(dir.path()));
    let engine = &harness.engine;
    let recall = |reference: &'static str, query: Option<&'static str>| async move {
        engine.recall(reference, query).await
    };

    // A query shows the lines around its words, and says how to read the message whole.
    let Recalled::Found(found) = recall("ctxkit://summarized", Some("port")).await else {
        panic!("nothing recalled");
    };
    assert!(
        found.starts_with("[entry u1] user:\n…\ngamma\ndelta\nthe PORT is 8431\nepsilon\nzeta\n…"),
        "{found}"
    );
    assert!(
        found.contains("`ctxkit://summarized/<entry id>`"),
        "{found}"
    );
    // By its id, whole (no hint: nothing was left out).
    let Recalled::Found(whole) = recall("ctxkit://summarized/u1", None).await else {
        panic!("u1 not recalled");
    };
    assert!(
        whole.starts_with("[entry u1] user:\nnotes:\nalpha\n"),
        "{whole}"
    );
    assert!(whole.ends_with("eta\ntheta"), "{whole}");
    // A range, either way round; the kept message u2 is not summarized.
    let Recalled::Found(range) = recall("ctxkit://summarized/a1..u1", None).await else {
        panic!("range not recalled");
    };
    assert!(range.starts_with("[entry u1] user:"), "{range}");
    assert!(range.ends_with("[entry a1] assistant:\nnoted"), "{range}");
    let Recalled::Missing(missing) = recall("ctxkit://summarized/u2", None).await else {
        panic!("a kept message was recalled as summarized");
    };
    assert!(
        missing.starts_with("`u2` is not one of the summarized messages"),
        "{missing}"
    );
    let Recalled::Missing(none) = recall("ctxkit://summarized/a1", Some("port")).await else {
        panic!("a1 does not name the port");
    };
    assert!(
        none.starts_with("No message of that range holds any of `port`"),
        "{none}"
    );
}

#[tokio::test]
async fn a_forgotten_span_stays_forgotten() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("keep this", 100).await;
    let (detour, detour_end) = harness.turn("a detour about SECRET-TOPIC", 100).await;
    harness.turn("after the detour", 100).await;
    harness
        .engine
        .forget(&detour, Some(&detour_end), Some("a detour".to_owned()))
        .await
        .unwrap();
    let recalled = harness
        .engine
        .recall("ctxkit://summarized", Some("SECRET-TOPIC"))
        .await;
    assert_eq!(
        recalled,
        Recalled::Missing("Nothing on this branch was summarized".to_owned())
    );
    // Its summary does not point the model at originals it cannot have.
    let view = serde_json::to_string(&harness.engine.model_view().await.unwrap().messages).unwrap();
    assert!(view.contains("a detour"), "{view}");
    assert!(!view.contains("ctxkit://summarized"), "{view}");
}

/// u1 → a1, then a branch u2 → c2 (a `bash` call) → r2 (its result), left for u4 under a1;
/// `summary` decides whether a branch summary of the branch left at r2 sits between a1 and u4.
fn session_with_a_tool_result_left(
    dir: &std::path::Path,
    summary: bool,
) -> ctxkit_session::Session {
    let mut lines = vec![
        HEADER.to_owned(),
        user("u1", "null", 1, "find the bird"),
        reply("a1", "u1", 2, "looking"),
        user("u2", "\"a1\"", 3, "try the east shore"),
        r#"{"type":"message","id":"c2","parentId":"u2","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"toolu_46","name":"bash","arguments":{"command":"cat shore.log"}}],"api":"x","provider":"x","model":"x","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":4}}"#.to_owned(),
        r#"{"type":"message","id":"r2","parentId":"c2","timestamp":"2025-01-01T00:00:05.000Z","message":{"role":"toolResult","toolCallId":"toolu_46","toolName":"bash","content":[{"type":"text","text":"a PELICAN at dawn"}],"isError":false,"timestamp":5}}"#.to_owned(),
    ];
    let parent = if summary {
        lines.push(r#"{"type":"branch_summary","id":"b1","parentId":"a1","timestamp":"2025-01-01T00:00:07.000Z","fromId":"r2","summary":"The east shore was searched."}"#.to_owned());
        "\"b1\""
    } else {
        "\"a1\""
    };
    lines.push(user("u4", parent, 8, "now the west shore"));
    let path = dir.join("tool-branches.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    ctxkit_session::Session::open(&path).unwrap()
}

/// QA r101 S3: a result on the branch a branch summary left behind was answered "No tool result
/// … in this session" by its reference, though `ctxkit://summarized` read it.
#[tokio::test]
async fn a_tool_result_on_the_branch_left_behind_comes_back_by_its_reference() {
    let dir = tempfile::tempdir().unwrap();
    let harness = Harness::with_session(session_with_a_tool_result_left(dir.path(), true));
    let engine = &harness.engine;
    let Recalled::Found(found) = engine.recall("ctxkit://tool-result/toolu_46", None).await else {
        panic!("the result on the branch left behind was not recalled");
    };
    assert_eq!(
        found,
        "(This tool result is on a branch left behind, which a branch summary on the current \
         branch stands for.)\n\na PELICAN at dawn"
    );
    let Recalled::Found(call) = engine.recall("ctxkit://tool-call/toolu_46", None).await else {
        panic!("the call on the branch left behind was not recalled");
    };
    assert!(
        call.ends_with("bash (call toolu_46)\ncommand: cat shore.log\n"),
        "{call}"
    );
}

/// Without a summary the branch stays unread, and the answer says which branches were read
/// rather than that the session has no such result.
#[tokio::test]
async fn a_tool_result_on_a_branch_left_without_a_summary_is_said_not_to_be_on_this_branch() {
    let dir = tempfile::tempdir().unwrap();
    let harness = Harness::with_session(session_with_a_tool_result_left(dir.path(), false));
    assert_eq!(
        harness.engine.recall("toolu_46", None).await,
        Recalled::Missing(
            "No tool result `toolu_46` on the current branch, nor on a branch its summaries left \
             behind: recall reads no other branch"
                .to_owned()
        )
    );
}
