//! The page's URL fragment names the selected entry; a malformed one (`#%E0%A4%A`, a percent
//! escape cut short) threw a URIError as the page started: the exported page stayed blank and the
//! view never started following the session. Now a bad fragment is ignored.

use serde_json::json;

use super::{
    KillOnDrop, StdioServer, browser_tools, check_in_browser, export, follow_in_browser,
    screenshot_dir, start_view, write_demo,
};

const BAD_FRAGMENT: &str = "#%E0%A4%A";

#[test]
fn an_exported_page_ignores_a_malformed_fragment() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, demo) = write_demo(home.path());
    export(home.path(), &file, &[]);
    let shots = screenshot_dir(home.path());
    let url = format!(
        "file://{}{BAD_FRAGMENT}",
        home.path().join("page.html").display()
    );
    let expect = json!({"leaf": demo.leaf, "other": demo.before_second});
    check_in_browser(&tools, "fragment", &url, &shots, expect);
}

#[test]
fn the_view_follows_the_session_with_a_malformed_fragment() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, _) = write_demo(home.path());
    let (view, url) = start_view(home.path(), file.to_str().unwrap(), None);
    let _view = KillOnDrop(view);
    let shots = screenshot_dir(home.path());
    follow_in_browser(&tools, &format!("{url}{BAD_FRAGMENT}"), &shots, || {
        let mut serve = StdioServer::start(home.path(), None);
        serve.call("session.open", json!({"path": file}));
        serve.turn(
            "appended-live-marker",
            "appended-live-reply",
            1_800_000_000_000,
        );
    });
}
