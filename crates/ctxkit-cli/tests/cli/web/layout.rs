//! The page on a phone's screen, in headless Chromium.

use serde_json::json;

use super::fixture::jsonl;
use super::{browser_tools, check_in_browser, export, screenshot_dir, write_demo};

/// At 375 px the three columns stayed side by side (240, 68 and 68 px, words broken letter by
/// letter) and the header ran to 505 px. Now nothing is wider than the screen, and the columns
/// are panes shown one at a time.
#[test]
fn a_phone_shows_the_page_within_its_width() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, _) = write_demo(home.path());
    export(home.path(), &file, &[]);
    let shots = screenshot_dir(home.path());
    let url = format!("file://{}", home.path().join("page.html").display());
    let stdout = check_in_browser(&tools, "narrow", &url, &shots, json!({}));
    assert!(stdout.contains("OK"));
}

/// QA: a message of one 50,000-character word took 31 s to lay out (the page's font kerns "AA",
/// and Chromium shaped the rest of the word again at each line it wrapped). The word is drawn
/// unkerned, laid out at once, and still wraps inside its pane; so does a tool call's header.
#[test]
fn a_long_unbroken_word_is_laid_out_at_once_and_wraps() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("word.jsonl");
    let word = "A".repeat(50_000);
    std::fs::write(
        &file,
        jsonl(&[
            json!({"type": "session", "version": 3, "id": "word",
                   "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/word"}),
            json!({"type": "message", "id": "00000001", "parentId": null,
                   "timestamp": "2026-01-01T00:00:01.000Z",
                   "message": {"role": "user", "content": format!("look: {word} end"),
                               "timestamp": 1}}),
            // A tool call naming a 5,000-character path: its header wraps too (QA: the column
            // scrolled sideways, 39,204 px wide).
            json!({"type": "message", "id": "00000002", "parentId": "00000001",
                   "timestamp": "2026-01-01T00:00:02.000Z",
                   "message": {"role": "assistant", "stopReason": "toolUse", "timestamp": 2,
                               "content": [{"type": "toolCall", "id": "c1", "name": "read",
                                            "arguments": {"path": "dir/".repeat(1250)}}]}}),
        ]),
    )
    .unwrap();
    export(home.path(), &file, &[]);
    let shots = screenshot_dir(home.path());
    let url = format!("file://{}", home.path().join("page.html").display());
    let stdout = check_in_browser(&tools, "longword", &url, &shots, json!({}));
    assert!(stdout.contains("OK"), "{stdout}");
}
