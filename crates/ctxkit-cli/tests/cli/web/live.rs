//! `ctxkit view` following a session as it changes, in headless Chromium: how many requests the
//! page keeps in flight while answers are slow, and the page coming back after the file was
//! gone or emptied for a while.

use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;
use std::process::Stdio;

use serde_json::json;

use super::{KillOnDrop, browser_tools, node_checker, screenshot_dir, start_view, write_demo};

/// Runs the browser checks of `mode` on `url`, handing each line they print to `on_line` as it
/// comes (the checks say when they are ready for the next change of the file); fails the test
/// with what they printed unless they pass.
pub(super) fn drive_in_browser(
    tools: &Path,
    mode: &str,
    url: &str,
    shots: &Path,
    expect: serde_json::Value,
    mut on_line: impl FnMut(&str),
) {
    let mut checker = node_checker(tools, mode, url, shots, expect)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    for line in BufReader::new(checker.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        on_line(&line);
        seen.push_str(&line);
        seen.push('\n');
    }
    let status = checker.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut checker.stderr.take().unwrap(), &mut stderr).unwrap();
    println!("{seen}");
    assert!(status.success(), "{seen}\n{stderr}");
    assert!(seen.contains("OK"), "{seen}");
}

/// Appends a question whose text is `marker` and its reply under `parent`, as an agent appends
/// them; returns the reply's id (the new leaf).
pub(super) fn append_turn(file: &Path, parent: &str, marker: &str) -> String {
    let at = "2026-01-02T00:00:00.000Z";
    let question = format!("{marker}-q");
    let reply = format!("{marker}-a");
    let lines = [
        json!({"type": "message", "id": question, "parentId": parent, "timestamp": at,
               "message": {"role": "user", "content": marker, "timestamp": 1}}),
        json!({"type": "message", "id": reply, "parentId": question, "timestamp": at,
               "message": {"role": "assistant", "content": [{"type": "text", "text": format!("{marker} reply")}],
                           "stopReason": "stop", "timestamp": 2}}),
    ];
    let mut opened = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    for line in lines {
        writeln!(opened, "{line}").unwrap();
    }
    reply
}

/// On a large session every rebuild of the data took seconds while the page asked for it every
/// second: eight requests of 55 MB were in flight and the server built each. The page now asks
/// again only once the last answer came, whatever the delay.
#[test]
fn the_view_keeps_one_request_of_each_kind_in_flight_however_slow_the_answers() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, demo) = write_demo(home.path());
    let (view, url) = start_view(home.path(), file.to_str().unwrap(), None);
    let _view = KillOnDrop(view);
    let shots = screenshot_dir(home.path());
    drive_in_browser(&tools, "inflight", &url, &shots, json!({}), |line| {
        if line == "READY" {
            append_turn(&file, &demo.leaf, "appended-live-marker");
        }
    });
}

/// With the page open, the file removed and put back with a turn appended (then emptied to 0
/// bytes and put back alike): the page said "the server is not answering" for good and never
/// showed the turn. It now keeps its data, says what the server says while the file is gone or
/// empty, and shows the turn once the file is back.
#[test]
fn the_view_says_the_file_is_gone_or_empty_and_recovers_when_it_is_back() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, demo) = write_demo(home.path());
    let (view, url) = start_view(home.path(), file.to_str().unwrap(), None);
    let _view = KillOnDrop(view);
    let shots = screenshot_dir(home.path());
    // The server answers 500 while it cannot read the file, which Chromium logs.
    let expect = json!({"failedResponses": "status of 500", "steps": [
        {"says": "No such file or directory", "marker": "back-after-removal"},
        {"says": "holds no readable records", "marker": "back-after-emptying"},
    ]});
    let mut kept = Vec::new();
    let mut leaf = demo.leaf.clone();
    drive_in_browser(&tools, "recover", &url, &shots, expect, |line| match line {
        "BREAK 0" => {
            kept = std::fs::read(&file).unwrap();
            std::fs::remove_file(&file).unwrap();
        }
        "BREAK 1" => {
            kept = std::fs::read(&file).unwrap();
            std::fs::write(&file, b"").unwrap();
        }
        "RESTORE 0" | "RESTORE 1" => {
            std::fs::write(&file, &kept).unwrap();
            let marker = if line == "RESTORE 0" {
                "back-after-removal"
            } else {
                "back-after-emptying"
            };
            leaf = append_turn(&file, &leaf, marker);
        }
        _ => {}
    });
}

/// A reader of an older entry, not following the leaf, lost their place on every append: both
/// panels jumped back, every opened block closed, and the entry's context was fetched again. Now
/// the panels stay as they were and the context is not asked again; a reader who follows the leaf
/// still follows it.
#[test]
fn a_reader_of_an_older_entry_keeps_their_place_while_the_agent_appends() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, demo) = write_demo(home.path());
    let (view, url) = start_view(home.path(), file.to_str().unwrap(), None);
    let _view = KillOnDrop(view);
    let shots = screenshot_dir(home.path());
    let expect = json!({"older": demo.before_second});
    let mut leaf = demo.leaf.clone();
    drive_in_browser(&tools, "keepplace", &url, &shots, expect, |line| {
        if let Some(marker) = line.strip_prefix("APPEND ") {
            leaf = append_turn(&file, &leaf, marker);
        }
    });
}

/// Stepping through 16 entries of a large imported session had the server build 16 contexts: the
/// page now cancels the context it no longer shows.
#[test]
fn stepping_through_entries_cancels_the_contexts_left_behind() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, _) = write_demo(home.path());
    let (view, url) = start_view(home.path(), file.to_str().unwrap(), None);
    let _view = KillOnDrop(view);
    let shots = screenshot_dir(home.path());
    drive_in_browser(&tools, "stepping", &url, &shots, json!({}), |_| {});
}

/// An agent's append read half written: the page said "This session file is damaged" at every
/// such moment. A cut-off last line alone is now shown only when it stays, and goes once whole.
#[test]
fn a_line_being_written_is_not_called_damage_unless_it_stays_cut_off() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, demo) = write_demo(home.path());
    let (view, url) = start_view(home.path(), file.to_str().unwrap(), None);
    let _view = KillOnDrop(view);
    let shots = screenshot_dir(home.path());
    let half = r#"{"type":"message","id":"mend-q","parentId":""#;
    drive_in_browser(&tools, "torn", &url, &shots, json!({}), |line| match line {
        "TEAR" => {
            let mut opened = std::fs::OpenOptions::new()
                .append(true)
                .open(&file)
                .unwrap();
            write!(opened, "{half}").unwrap();
        }
        "MEND" => {
            let whole = std::fs::read_to_string(&file).unwrap();
            let before = whole.strip_suffix(half).unwrap().to_owned();
            std::fs::write(&file, before).unwrap();
            append_turn(&file, &demo.leaf, "mended-marker");
        }
        _ => {}
    });
}
