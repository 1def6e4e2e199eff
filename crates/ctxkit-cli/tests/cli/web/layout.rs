//! The page on a phone's screen, in headless Chromium.

use serde_json::json;

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
