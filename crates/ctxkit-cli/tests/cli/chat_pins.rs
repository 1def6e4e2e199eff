//! `ctxkit chat`'s pins fed from a pipe: `/pin` lists them with their ids and `/unpin <id>` removes
//! one, as serve's `pin.remove` does (a tester found a pin could be added and never removed;
//! `/pin remove` pinned the word "remove").

use crate::Run;

/// A session holding a prompt, its reply and the pin `a1b2c3d4` ("always use tabs").
const PINNED_SESSION: &str = concat!(
    r#"{"type":"session","version":3,"id":"5d1c0a00","timestamp":"2025-03-14T09:19:00.000Z","cwd":"/p"}"#,
    "\n",
    r#"{"type":"message","id":"u0000001","parentId":null,"timestamp":"2025-03-14T09:19:01.000Z","message":{"role":"user","content":"hello","timestamp":1741943941000}}"#,
    "\n",
    r#"{"type":"message","id":"r0000001","parentId":"u0000001","timestamp":"2025-03-14T09:19:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"openai","model":"gpt-5-mini","api":"openai-responses","usage":{"input":9,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":11},"stopReason":"stop","timestamp":1741943942000}}"#,
    "\n",
    r#"{"type":"custom","id":"a1b2c3d4","parentId":"r0000001","timestamp":"2025-03-14T09:19:03.000Z","customType":"ctxkit.pin","data":{"action":"pin","text":"always use tabs"}}"#,
    "\n",
);

#[test]
fn unpin_removes_a_pin_that_pin_lists() {
    let run = Run::new();
    let file = run.home.path().join("pinned.jsonl");
    std::fs::write(&file, PINNED_SESSION).unwrap();
    let variables = [
        ("OPENAI_API_KEY", "sk-never-sent"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
    ];
    let args = [
        "chat",
        "--model",
        "openai/gpt-5-mini",
        "--session",
        file.to_str().unwrap(),
    ];
    let input = "/pin\n/unpin\n/unpin ffffffff\n/unpin a1b2c3d4\n/pin\n/quit\n";
    let output = run.ctxkit_with_input(&args, &variables, input);
    assert!(output.contains("a1b2c3d4  always use tabs"), "{output}");
    assert!(
        output.contains("Usage: /unpin <id> (/pin lists the pins and their ids)"),
        "{output}"
    );
    assert!(
        output.contains("No pin `ffffffff` on this branch; /pin lists the pins and their ids"),
        "{output}"
    );
    assert!(
        output.contains("Unpinned a1b2c3d4: no compaction adds its text back"),
        "{output}"
    );
    assert!(output.contains("No pins."), "{output}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains(r#""data":{"action":"unpin","pinId":"a1b2c3d4"}"#),
        "{text}"
    );
}
