//! `edit-context` of a reply that made tool calls, and `check` of the shape an edit of the reply
//! alone leaves: a tool result whose call is gone, which Pi 1.6.0 sends and providers reject.

use crate::Run;

/// good-tool-results.jsonl: the reply `9402520c` calls t1, t2 and t3; their results are
/// `e8dfa2b3`, `58af2c2a` and `acbd604b`.
const REPLY: &str = "9402520c";
const RESULTS: [&str; 3] = ["e8dfa2b3", "58af2c2a", "acbd604b"];

/// The roles of the LLM view at the leaf.
fn llm_roles(run: &Run, path: &str) -> Vec<String> {
    let output = run.ctxkit(&["context", path, "--llm", "--json"]);
    let (_, json) = output.split_once('\n').unwrap();
    let context: serde_json::Value = serde_json::from_str(json).unwrap();
    context["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap().to_owned())
        .collect()
}

/// The `targetId`s of the file's context edits, in file order.
fn edit_targets(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["type"] == "context_edit")
        .map(|entry| entry["targetId"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn editing_a_reply_with_tool_calls_leaves_out_their_results_too() {
    for edit in [vec!["--replace", "I read them."], vec!["--omit"]] {
        let run = Run::new();
        let file = run.copy("good-tool-results.jsonl");
        let path = file.to_str().unwrap();
        let mut args = vec!["edit-context", path, REPLY];
        args.extend(&edit);
        let output = run.ctxkit(&args);
        assert!(output.starts_with("exit: 0"), "{output}");
        assert!(output.contains("3 tool results"), "{output}");
        // One edit per message, the reply's first, as Pi 1.6.0 writes them.
        assert_eq!(
            edit_targets(path),
            [REPLY, RESULTS[0], RESULTS[1], RESULTS[2]]
        );
        assert!(
            !llm_roles(&run, path)
                .iter()
                .any(|role| role == "toolResult"),
            "{edit:?}"
        );
        let check = run.ctxkit(&["check", path]);
        assert!(!check.contains("warning"), "{check}");
    }
}

#[test]
fn check_warns_of_a_tool_result_whose_call_an_edit_took_out() {
    let run = Run::new();
    let file = run.copy("good-tool-results.jsonl");
    let path = file.to_str().unwrap();
    // The shape 0.87.1's recovery left: the reply hidden alone.
    let mut text = std::fs::read_to_string(&file).unwrap();
    let leaf = text.lines().last().unwrap();
    let leaf: serde_json::Value = serde_json::from_str(leaf).unwrap();
    text.push_str(&format!(
        "{{\"type\":\"context_edit\",\"id\":\"e0000001\",\"parentId\":\"{}\",\"timestamp\":\"2030-01-01T00:00:00.000Z\",\"targetId\":\"{REPLY}\",\"replacement\":null}}\n",
        leaf["id"].as_str().unwrap()
    ));
    std::fs::write(&file, &text).unwrap();
    // Pi 1.6.0 keeps the orphans in the context; so does the LLM view.
    assert_eq!(
        llm_roles(&run, path)
            .iter()
            .filter(|role| *role == "toolResult")
            .count(),
        3
    );
    let check = run.ctxkit(&["check", path]);
    assert!(check.starts_with("exit: 0"), "{check}");
    assert!(
        check.contains(&format!(
            "warning: the tool result {} answers the call t1, which no earlier reply in the context holds",
            RESULTS[0]
        )),
        "{check}"
    );
    assert!(
        check.contains(&format!(
            "ctxkit edit-context [HOME]/good-tool-results.jsonl {} --omit",
            RESULTS[2]
        )),
        "{check}"
    );
    // A tester read "no problems found" right under the warnings: the last line counts them.
    assert_eq!(
        check.trim_end().lines().last(),
        Some(
            "[HOME]/good-tool-results.jsonl: 3 warnings found, no problems; the file reads as it is"
        ),
        "{check}"
    );
    let json = run.ctxkit(&["check", path, "--json"]);
    let (_, json) = json.split_once('\n').unwrap();
    let record: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(record["problems"], serde_json::json!([]));
    assert_eq!(record["warnings"].as_array().unwrap().len(), 3, "{record}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        text,
        "check writes nothing"
    );
}

/// QA (session files, defect 1): Pi 1.6.0 fails opening a file with a reply without `usage`
/// (imports before 2026-12 wrote such replies), and `check` said nothing.
#[test]
fn check_warns_of_a_reply_pi_cannot_open_without_usage() {
    let run = Run::new();
    let file = run.copy("good-tool-results.jsonl");
    let path = file.to_str().unwrap();
    let clean = run.ctxkit(&["check", path]);
    assert!(!clean.contains("warning"), "{clean}");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for line in &mut lines {
        if line["message"]["role"] == "assistant" {
            line["message"].as_object_mut().unwrap().remove("usage");
        }
    }
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let check = run.ctxkit(&["check", path]);
    assert!(check.starts_with("exit: 0"), "{check}");
    assert!(
        check.contains("has no `usage` with a `cost`; Pi 1.6.0 cannot open or continue"),
        "{check}"
    );
}

/// QA (Pi interop): an entry of a type, a message of a role and a content block of a type this
/// version does not know passed `check` without a word, and the block was left out of every request.
#[test]
fn check_says_what_it_does_not_know_and_what_becomes_of_it() {
    let run = Run::new();
    let file = run.copy("good-tool-results.jsonl");
    let path = file.to_str().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let leaf = last["id"].as_str().unwrap();
    let entry = |id: &str, parent: &str, body: serde_json::Value| {
        let mut line = serde_json::json!({"id": id, "parentId": parent,
            "timestamp": "2026-01-01T00:00:09.000Z"});
        line.as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        format!("{line}\n")
    };
    let added = [
        entry(
            "f0000001",
            leaf,
            serde_json::json!({"type": "future_entry", "x": 1}),
        ),
        entry(
            "f0000002",
            "f0000001",
            serde_json::json!({"type": "message",
            "message": {"role": "weirdRole", "content": "hi", "timestamp": 1}}),
        ),
        entry(
            "f0000003",
            "f0000002",
            serde_json::json!({"type": "message",
            "message": {"role": "user", "timestamp": 1,
                "content": [{"type": "text", "text": "see"}, {"type": "video", "url": "v.mp4"}]}}),
        ),
        // Pi 1.6.0 writes one into every session: known, sent, not warned of (QA).
        entry(
            "f0000004",
            "f0000003",
            serde_json::json!({"type": "message",
            "message": {"role": "system", "content": "", "sections": [], "timestamp": 1}}),
        ),
    ];
    std::fs::write(&file, format!("{text}{}", added.concat())).unwrap();
    let check = run.ctxkit(&["check", path]);
    assert!(check.starts_with("exit: 0"), "{check}");
    for said in [
        "an entry of type `future_entry`, which this version does not know: kept as it is",
        "a message of role `weirdRole`, which this version does not know",
        "a content block of type `video`, which this version does not know",
    ] {
        assert!(check.contains(said), "{said}: {check}");
    }
    assert!(!check.contains("role `system`"), "{check}");
}

/// QA (2026-12-07): `--replace ""` was written, and the view then sent an empty message, which a
/// provider refuses. An empty replacement is refused with the flag that leaves a message out.
#[test]
fn an_empty_replacement_is_refused_with_the_flag_that_leaves_a_message_out() {
    let run = Run::new();
    let file = run.copy("good-tool-results.jsonl");
    let path = file.to_str().unwrap();
    let before = std::fs::read(path).unwrap();
    for blank in ["", "  "] {
        let output = run.ctxkit(&["edit-context", path, REPLY, "--replace", blank]);
        assert!(output.starts_with("exit: 2"), "{output}");
        assert!(
            output.contains("the replacement is empty") && output.contains("--omit"),
            "{output}"
        );
    }
    assert_eq!(std::fs::read(path).unwrap(), before, "nothing written");
}

/// QA 2026-12-07: after an edit took a reply's calls out (and their results with them), a
/// `--replace` of one of those results brought it back without its call, and `check` warned of the
/// shape the command had just written. It is refused, nothing written; `--omit` of it is no
/// change to refuse, and a result whose call is in the context is replaced as before.
#[test]
fn a_result_whose_call_an_edit_took_out_is_not_brought_back() {
    let run = Run::new();
    let file = run.copy("good-tool-results.jsonl");
    let path = file.to_str().unwrap();
    let replaced = run.ctxkit(&["edit-context", path, RESULTS[1], "--replace", "short"]);
    assert!(replaced.starts_with("exit: 0"), "{replaced}");
    let edited = run.ctxkit(&["edit-context", path, REPLY, "--replace", "I read them."]);
    assert!(edited.starts_with("exit: 0"), "{edited}");
    let before = std::fs::read(&file).unwrap();
    let refused = run.ctxkit(&["edit-context", path, RESULTS[0], "--replace", "x"]);
    assert!(refused.starts_with("exit: 3"), "{refused}");
    assert!(
        refused.contains("an earlier edit took out of the context"),
        "{refused}"
    );
    assert!(
        refused.contains("edit the reply that made the call instead"),
        "{refused}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let check = run.ctxkit(&["check", path]);
    assert!(!check.contains("warning"), "{check}");
    let omitted = run.ctxkit(&["edit-context", path, RESULTS[0], "--omit"]);
    assert!(omitted.starts_with("exit: 0"), "{omitted}");
}

/// The same when a later reply calls the same id (a server naming every reply's call `call_0`):
/// that call is no call the brought-back result could answer where it stands (QA 2026-12-07,
/// second round).
#[test]
fn a_call_of_the_same_id_in_a_later_reply_does_not_let_the_result_back() {
    let run = Run::new();
    let at = "2025-01-01T00:00:00.000Z";
    let usage = serde_json::json!({"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let reply = |id: &str, parent: &str, calls: &[&str]| {
        let calls: Vec<_> = calls
            .iter()
            .map(|call| serde_json::json!({"type": "toolCall", "id": call, "name": "read", "arguments": {"path": "f"}}))
            .collect();
        serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": at,
            "message": {"role": "assistant", "content": calls, "api": "x", "provider": "p", "model": "m",
                "usage": usage, "stopReason": "toolUse", "timestamp": 2}})
    };
    let result = |id: &str, parent: &str, call: &str| {
        serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": at,
            "message": {"role": "toolResult", "toolCallId": call, "toolName": "read",
                "content": [{"type": "text", "text": "data"}], "isError": false, "timestamp": 3}})
    };
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "s", "timestamp": at, "cwd": "/p"}),
        serde_json::json!({"type": "message", "id": "u1", "parentId": null, "timestamp": at,
            "message": {"role": "user", "content": "go", "timestamp": 1}}),
        reply("a1", "u1", &["call_0", "call_1"]),
        result("r1", "a1", "call_0"),
        result("r2", "r1", "call_1"),
        reply("a2", "r2", &["call_0"]),
        result("r3", "a2", "call_0"),
    ];
    let file = run.home.path().join("repeated.jsonl");
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    let edited = run.ctxkit(&["edit-context", path, "a1", "--replace", "I read them."]);
    assert!(edited.starts_with("exit: 0"), "{edited}");
    let before = std::fs::read(&file).unwrap();
    let refused = run.ctxkit(&["edit-context", path, "r1", "--replace", "BACK"]);
    assert!(refused.starts_with("exit: 3"), "{refused}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // The later reply's own result is replaced as before.
    let replaced = run.ctxkit(&["edit-context", path, "r3", "--replace", "short"]);
    assert!(replaced.starts_with("exit: 0"), "{replaced}");
    let check = run.ctxkit(&["check", path]);
    assert!(!check.contains("warning"), "{check}");
}
