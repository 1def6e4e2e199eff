//! The context-size chart's y axis, in headless Chromium.

use serde_json::json;

use super::{browser_tools, check_in_browser, export, fixture::jsonl, page_data, screenshot_dir};

/// A session whose context passed a million tokens: the y-axis labels lost their first digit
/// ("1,000,010" clipped at the chart's left edge) and the ticks fell on 500,005 and 1,000,010.
/// Now the ticks are round values and the axis is as wide as its widest label.
#[test]
fn the_chart_s_y_axis_has_round_ticks_and_room_for_a_million() {
    let home = tempfile::tempdir().unwrap();
    let at = "2026-01-01T00:00:00.000Z";
    let mut lines = vec![
        json!({"type": "session", "version": 3, "id": "big", "timestamp": at, "cwd": "/tmp/big"}),
    ];
    let mut parent = serde_json::Value::Null;
    for (turn, context) in [400_000u64, 820_000, 1_000_010].into_iter().enumerate() {
        let question = format!("q{turn}");
        let reply = format!("a{turn}");
        lines.push(
            json!({"type": "message", "id": question, "parentId": parent, "timestamp": at,
            "message": {"role": "user", "content": "go on", "timestamp": 1}}),
        );
        lines.push(json!({"type": "message", "id": reply, "parentId": question, "timestamp": at,
            "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}],
                        "usage": {"input": context, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": context},
                        "stopReason": "stop", "timestamp": 2}}));
        parent = json!(reply);
    }
    let file = home.path().join("big.jsonl");
    std::fs::write(&file, jsonl(&lines)).unwrap();
    let page = export(home.path(), &file, &[]);
    let points = page_data(&page)["timeline"]["points"].clone();
    let largest = points
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|point| point["usage"].as_u64())
        .max();
    assert_eq!(largest, Some(1_000_010), "{points}");
    let Some(tools) = browser_tools() else { return };
    let shots = screenshot_dir(home.path());
    let url = format!("file://{}", home.path().join("page.html").display());
    check_in_browser(&tools, "chart", &url, &shots, json!({"largest": 1_000_010}));
}
