//! Issue 41's acceptance check: over `ctxkit serve --stdio` `agent.run`, a 16-call tool run with
//! 5–10 KB results against a mock Anthropic server that bills the prompt cache as Anthropic does —
//! a prefix is written only at a `cache_control` breakpoint (from 1,024 tokens, Opus 4.1's
//! minimum) and read from a breakpoint or a block boundary up to 20 blocks before one — costs, with
//! default settings, no more input than with `transforms.pruneEnabled: false`.
//!
//! Tokens are the block's JSON length / 4 (the same for every configuration); the input cost is in
//! base-input-token units at Anthropic's rates: plain 1, cache write 1.25, cache read 0.1.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::serve::Server;

const MODEL: &str = "claude-opus-4-1";
const CALLS: usize = 16;
const MIN_CACHEABLE: u64 = 1_024;
const LOOKBACK_BLOCKS: usize = 20;

/// What one request was billed: read, written, plain input tokens.
#[derive(Debug, Clone, Copy, Default)]
struct Bill {
    read: u64,
    write: u64,
    plain: u64,
}

impl Bill {
    fn cost(self) -> f64 {
        self.plain as f64 + 1.25 * self.write as f64 + 0.1 * self.read as f64
    }
}

#[derive(Default)]
struct State {
    written: HashSet<u64>,
    bills: Vec<Bill>,
}

/// The mock: bills each conversation request, answers the first 16 with a `read` call and the
/// next one with text.
#[derive(Clone, Default)]
struct Billing(Arc<Mutex<State>>);

/// The request's blocks in cache order (tools, system, messages), each as (its JSON without
/// `cache_control`, whether it carries one).
fn blocks(body: &Value) -> Vec<(String, bool)> {
    let mut blocks = Vec::new();
    let mut push = |role: &Value, block: &Value| {
        let mut plain = block.clone();
        let marked = plain
            .as_object_mut()
            .and_then(|object| object.remove("cache_control"))
            .is_some();
        blocks.push((json!({"role": role, "block": plain}).to_string(), marked));
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(&json!("tool"), tool);
    }
    if let Some(system) = body["system"].as_array() {
        system
            .iter()
            .for_each(|block| push(&json!("system"), block));
    } else {
        push(&json!("system"), &body["system"]);
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        if let Some(content) = message["content"].as_array() {
            content
                .iter()
                .for_each(|block| push(&message["role"], block));
        } else {
            push(&message["role"], &message["content"]);
        }
    }
    blocks
}

fn chain(previous: u64, text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    previous.hash(&mut hasher);
    text.hash(&mut hasher);
    hasher.finish()
}

impl State {
    fn bill(&mut self, body: &Value) -> Bill {
        let blocks = blocks(body);
        let mut hashes = Vec::with_capacity(blocks.len());
        let mut ends = Vec::with_capacity(blocks.len());
        let (mut hash, mut tokens) = (0u64, 0u64);
        for (text, _) in &blocks {
            hash = chain(hash, text);
            tokens += text.len().div_ceil(4) as u64;
            hashes.push(hash);
            ends.push(tokens);
        }
        let breakpoints: Vec<usize> = (0..blocks.len()).filter(|&at| blocks[at].1).collect();
        let mut read = 0;
        for &breakpoint in &breakpoints {
            let earliest = breakpoint.saturating_sub(LOOKBACK_BLOCKS);
            if let Some(hit) = (earliest..=breakpoint)
                .rev()
                .find(|&at| self.written.contains(&hashes[at]))
            {
                read = read.max(ends[hit]);
            }
        }
        let mut cached_end = read;
        for &breakpoint in &breakpoints {
            if ends[breakpoint] >= MIN_CACHEABLE {
                self.written.insert(hashes[breakpoint]);
                cached_end = cached_end.max(ends[breakpoint]);
            }
        }
        let bill = Bill {
            read,
            write: cached_end - read,
            plain: tokens - cached_end,
        };
        self.bills.push(bill);
        bill
    }
}

fn event(data: &Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

impl Respond for Billing {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let (number, bill) = {
            let mut state = self.0.lock().unwrap();
            let bill = state.bill(&body);
            (state.bills.len(), bill)
        };
        let usage = json!({"input_tokens": bill.plain, "cache_read_input_tokens": bill.read,
            "cache_creation_input_tokens": bill.write, "output_tokens": 1});
        let start = json!({"type": "message_start", "message": {"id": format!("msg_{number}"),
            "type": "message", "role": "assistant", "content": [], "model": MODEL,
            "stop_reason": null, "usage": usage}});
        let (block, delta, stop) = if number <= CALLS {
            let input = json!({"path": format!("data/file{number:02}.txt")}).to_string();
            (
                json!({"type": "tool_use", "id": format!("toolu_{number:02}"), "name": "read", "input": {}}),
                json!({"type": "input_json_delta", "partial_json": input}),
                "tool_use",
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": "All files read."}),
                "end_turn",
            )
        };
        let events = [
            start,
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": 20}}),
            json!({"type": "message_stop"}),
        ];
        let stream: String = events.iter().map(event).collect();
        ResponseTemplate::new(200).set_body_raw(stream, "text/event-stream")
    }
}

/// 16 files of 5–10 KB: numbered log lines, as a tool would print them.
fn write_files(project: &Path) {
    let data = project.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for number in 1..=CALLS {
        let target = 5_000 + (number * 331) % 5_000;
        let mut text = String::new();
        let mut line = 0;
        while text.len() < target {
            text.push_str(&format!(
                "file{number:02} line {line:04}: step {line} of the build finished in {} ms\n",
                (line * 37 + number) % 997
            ));
            line += 1;
        }
        std::fs::write(data.join(format!("file{number:02}.txt")), text).unwrap();
    }
}

/// Runs the task with `extra` merged into the settings; the bills of its conversation requests.
fn run(extra: Value) -> Vec<Bill> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(MockServer::start());
    let billing = Billing::default();
    runtime.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(billing.clone())
            .mount(&server),
    );
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    write_files(&project);
    let mut settings = json!({
        "defaultModel": format!("anthropic/{MODEL}"),
        "llm": {"baseUrl": server.uri(), "apiKey": "sk-ant-test"},
    });
    if let (Some(base), Some(extra)) = (settings.as_object_mut(), extra.as_object()) {
        base.extend(extra.clone());
    }
    std::fs::write(home.path().join("settings.json"), settings.to_string()).unwrap();
    let mut serve = Server::start_with(home.path(), &project, &[]);
    let created = serve.call(
        "session.create",
        json!({"cwd": project.display().to_string()}),
    );
    assert!(created["result"]["session_id"].is_string(), "{created}");
    let ran = serve.call(
        "agent.run",
        json!({"text": "Read the 16 files under data/ one by one."}),
    );
    assert_eq!(ran["result"]["outcome"], "answered", "{ran}");
    serve.child.kill().unwrap();
    serve.child.wait().unwrap();
    let bills = billing.0.lock().unwrap().bills.clone();
    assert_eq!(bills.len(), CALLS + 1, "{bills:?}");
    bills
}

fn total(bills: &[Bill]) -> f64 {
    bills.iter().map(|bill| bill.cost()).sum()
}

#[test]
#[expect(
    clippy::print_stderr,
    reason = "the numbers are the report of the check"
)]
fn default_settings_cost_no_more_input_than_no_pruning_on_a_sixteen_call_run() {
    // An empty settings file is the recommended strategy; the others start from the reference.
    let defaults = run(json!({}));
    let reference = run(json!({"contextStrategy": "reference"}));
    let no_pruning = run(json!({"contextStrategy": "reference",
        "transforms": {"pruneEnabled": false}}));
    let every_call = run(json!({"contextStrategy": "reference",
        "transforms": {"pruneWhenItPays": false}}));
    let report = |name: &str, bills: &[Bill]| {
        let read: u64 = bills.iter().map(|bill| bill.read).sum();
        let input: u64 = bills
            .iter()
            .map(|bill| bill.read + bill.write + bill.plain)
            .sum();
        eprintln!(
            "{name}: input cost {:.0} base tokens, {input} input tokens, {:.1}% read from the cache",
            total(bills),
            100.0 * read as f64 / input as f64
        );
    };
    report("defaults (recommended)", &defaults);
    report("reference", &reference);
    report("no pruning", &no_pruning);
    report(
        "prune at every call (the reference's defaults before)",
        &every_call,
    );
    for (name, bills) in [("defaults", &defaults), ("reference", &reference)] {
        assert!(
            total(bills) <= total(&no_pruning),
            "{name} {:.0} > no pruning {:.0}",
            total(bills),
            total(&no_pruning)
        );
    }
    // From the second request on, each request reads what the previous one wrote.
    for (index, bill) in defaults.iter().enumerate().skip(1) {
        assert!(bill.read >= defaults[index - 1].read, "{defaults:?}");
    }
    // The check can fail: pruning at every call rewrites the cache and costs more.
    assert!(total(&every_call) > total(&no_pruning));
}
