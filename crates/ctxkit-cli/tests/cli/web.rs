//! `ctxkit export --html` and `ctxkit view`: the page's contents and escaping, checked on the
//! file, and what a person sees, checked in headless Chromium (`web/browser.cjs`, playwright-core
//! installed by `.ci/install-chromium`). Under CI (`CI` set) a missing browser fails the tests.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the browser tests print the screenshots' paths, and why they skipped"
)]

#[path = "web/chart.rs"]
mod chart;
#[path = "web/damage.rs"]
mod damage;
#[path = "web/fixture.rs"]
mod fixture;
#[path = "web/fragment.rs"]
mod fragment;
#[path = "web/layout.rs"]
mod layout;
#[path = "web/live.rs"]
mod live;
#[path = "web/markdown.rs"]
mod markdown;
#[path = "web/refusals.rs"]
mod refusals;
#[path = "web/system_and_keys.rs"]
mod system_and_keys;
#[path = "web/terminal.rs"]
mod terminal;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fixture::{DemoSession, FAKE_KEY, HOSTILE, demo_session, jsonl};
use serde_json::{Value, json};

fn write_demo(dir: &Path) -> (PathBuf, DemoSession) {
    let demo = demo_session();
    let file = dir.join("demo.jsonl");
    std::fs::write(&file, jsonl(&demo.lines)).unwrap();
    // The page shows the model's view under the user's settings. The default prunes only when the
    // cache it rewrites pays, which a 59-entry session never reaches; this user prunes at every
    // call, so the page has pruned results to show.
    std::fs::write(
        dir.join("settings.json"),
        r#"{"transforms": {"pruneWhenItPays": false}}"#,
    )
    .unwrap();
    (file, demo)
}

fn ctxkit(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(args)
        .env("CTXKIT_HOME", home)
        .env("HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap()
}

fn export(home: &Path, file: &Path, extra: &[&str]) -> String {
    let page = home.join("page.html");
    let mut args = vec![
        "export",
        "--html",
        file.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = ctxkit(home, &args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(page).unwrap()
}

/// The JSON data of a page.
fn page_data(page: &str) -> serde_json::Value {
    let start = page.find("id=\"session-data\">").unwrap() + "id=\"session-data\">".len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

#[test]
fn the_exported_page_is_self_contained_escaped_and_redacted() {
    let home = tempfile::tempdir().unwrap();
    let (file, demo) = write_demo(home.path());
    let page = export(home.path(), &file, &["--redact", "needle-w[a-z]+"]);
    // Only the page's own two script elements; no external resource; a strict policy.
    assert_eq!(page.matches("</script>").count(), 2);
    assert_eq!(page.matches("<script").count(), 2);
    for external in ["src=\"http", "href=\"http", "<link", "@import", "url("] {
        assert!(!page.contains(external), "{external}");
    }
    assert!(page.contains(
        "Content-Security-Policy\" content=\"default-src &#39;none&#39;; script-src &#39;sha256-"
    ));
    assert!(!page.contains(FAKE_KEY), "the key is redacted");
    assert!(!page.contains("needle-word"), "--redact applies");
    let data = page_data(&page);
    let compactions = data["compactions"].as_array().unwrap();
    assert_eq!(compactions.len(), 2);
    assert_eq!(
        compactions[0]["covered"].as_array().unwrap().len(),
        demo.covered_by_first
    );
    assert_eq!(compactions[0]["tokensBefore"], json!(30_000));
    let first = data["entries"]
        .as_array()
        .unwrap()
        .iter()
        .position(|entry| entry["id"] == json!(demo.first_compaction));
    assert_eq!(compactions[0]["e"], json!(first.unwrap()));
    assert!(
        page.contains("I should run step c01"),
        "thinking is kept by default"
    );
    // The leaf's context went through the transforms: older results pruned, the summary first.
    let leaf = data["leaf"].as_u64().unwrap();
    assert_eq!(data["entries"][leaf as usize]["id"], json!(demo.leaf));
    let context = &data["contexts"][leaf.to_string()];
    assert_eq!(context["messages"][0]["kind"], json!("compactionSummary"));
    // What a view sent in place of an entry (the summary here) is kept once in the page, and
    // every view that sent it names it.
    let summary = context["messages"][0]["msgRef"].as_u64().unwrap() as usize;
    assert!(
        data["sentMessages"][summary]
            .to_string()
            .contains("c08..c12 green"),
        "{}",
        data["sentMessages"]
    );
    let naming = data["contexts"]
        .as_object()
        .unwrap()
        .values()
        .filter(|view| view["messages"][0]["msgRef"] == json!(summary))
        .count();
    assert!(
        naming > 1,
        "the views after the compaction share it: {naming}"
    );
    // Each record holds the summary's text and its markdown (`t`, `md`).
    let copies = page.matches("c08..c12 green").count();
    assert!(copies <= 6, "{copies} copies of the summary in the page");
    assert!(
        context["report"]["toolResultsPruned"].as_u64().unwrap() >= 1,
        "{context}"
    );

    let without = export(home.path(), &file, &["--no-thinking"]);
    assert!(!without.contains("I should run step c01"));
    let _ = demo.second_compaction;
}

/// One branch of `count` one-word messages (a user message and a reply in turn).
fn write_tiny(dir: &Path, count: usize) -> PathBuf {
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"tiny","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/tiny"}"#,
    );
    for index in 0..count {
        let parent = if index == 0 {
            "null".to_owned()
        } else {
            format!("\"{index:08x}\"")
        };
        let message = if index % 2 == 0 {
            format!(r#"{{"role":"user","content":"word {index}","timestamp":{index}}}"#)
        } else {
            format!(
                r#"{{"role":"assistant","content":[{{"type":"text","text":"word"}}],"stopReason":"stop","timestamp":{index}}}"#
            )
        };
        text.push_str(&format!(
            "\n{{\"type\":\"message\",\"id\":\"{:08x}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{message}}}",
            index + 1
        ));
    }
    text.push('\n');
    let file = dir.join("tiny.jsonl");
    std::fs::write(&file, text).unwrap();
    file
}

/// Every entry's context repeats the ones before it: a session of 2,000 entries never compacted
/// holds 2 million context messages in all, so the page carries a sample within its sum (the
/// leaf's first), not every one (a real 1,918-entry session's page was 347 MB).
#[test]
fn a_page_carries_contexts_within_a_sum_of_messages() {
    let home = tempfile::tempdir().unwrap();
    let count = 2_000;
    let file = write_tiny(home.path(), count);
    let page = export(home.path(), &file, &[]);
    let data = page_data(&page);
    assert_eq!(data["entries"].as_array().unwrap().len(), count);
    let contexts = data["contexts"].as_object().unwrap();
    assert!(
        contexts.contains_key(&(count - 1).to_string()),
        "the leaf's"
    );
    assert!(contexts.len() < count / 10, "{} contexts", contexts.len());
    let carried: usize = contexts
        .values()
        .map(|context| context["messages"].as_array().unwrap().len())
        .sum();
    assert!(
        carried <= ctxkit_web::MAX_PRECOMPUTED_CONTEXT_RECORDS,
        "{carried}"
    );
    assert!(page.len() < 64_000_000, "{} bytes", page.len());
}

#[test]
fn a_page_leaves_out_contexts_longer_than_its_limit_and_keeps_every_entry() {
    let home = tempfile::tempdir().unwrap();
    let limit = ctxkit_web::MAX_PRECOMPUTED_CONTEXT_MESSAGES;
    let count = limit + 10;
    let file = write_tiny(home.path(), count);
    let page = export(home.path(), &file, &[]);
    let data = page_data(&page);
    let entries = data["entries"].as_array().unwrap();
    assert_eq!(entries.len(), count);
    assert_eq!(
        entries[count - 2]["blocks"][0]["t"],
        json!(format!("word {}", count - 2))
    );
    assert_eq!(data["contextsMaxMessages"], json!(limit));
    // The contexts of the path's first requests are carried; none longer than the limit.
    let contexts = data["contexts"].as_object().unwrap();
    assert!(!contexts.is_empty());
    assert!(
        !contexts.contains_key(&(count - 1).to_string()),
        "the leaf's is too long"
    );
    for context in contexts.values() {
        assert!(context["messages"].as_array().unwrap().len() <= limit);
    }
    assert_eq!(
        data["timeline"]["points"].as_array().unwrap().len(),
        count / 2
    );
    assert_eq!(
        data["timeline"]["turns"].as_array().unwrap().len(),
        count / 2
    );
}

/// HTML is the only format: `--html` may be left out, and the page is the same.
#[test]
fn export_writes_the_page_without_the_html_flag() {
    let home = tempfile::tempdir().unwrap();
    let file = write_tiny(home.path(), 3);
    let with_flag = export(home.path(), &file, &[]);
    let page = home.path().join("plain.html");
    let output = ctxkit(
        home.path(),
        &[
            "export",
            file.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read_to_string(&page).unwrap(), with_flag);
    // As private as the session file (QA: pages were `0644`, sessions `0600`).
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&page).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        regex::Regex::new(r"^Exported \d+ entries, 0 compactions \(\d+ bytes\) to `")
            .unwrap()
            .is_match(&said),
        "{said}"
    );
}

/// An entry that is not a message reads in the tree and on its card as `ctxkit tree` says it: an
/// imported Claude Code session has hundreds of `custom` entries, which showed only as
/// `{"data":{"pare…` (the JSON's first key), the model chosen as `{"modelId":…`.
#[test]
fn the_page_names_custom_entries_and_model_changes_in_words() {
    let home = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"type":"session","version":3,"id":"words","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/words"}"#,
        r#"{"type":"model_change","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}"#,
        r#"{"type":"thinking_level_change","id":"00000002","parentId":"00000001","timestamp":"2026-01-01T00:00:00.000Z","thinkingLevel":"high"}"#,
        r#"{"type":"custom","id":"00000003","parentId":"00000002","timestamp":"2026-01-01T00:00:00.000Z","customType":"import.claude-code.attachment","data":{"parentUuid":"x"}}"#,
        r#"{"type":"session_info","id":"00000004","parentId":"00000003","timestamp":"2026-01-01T00:00:00.000Z","name":"Fix the parser"}"#,
        r#"{"type":"label","id":"00000005","parentId":"00000004","timestamp":"2026-01-01T00:00:00.000Z","targetId":"00000003","label":"here"}"#,
    ];
    let file = home.path().join("words.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let data = page_data(&export(home.path(), &file, &[]));
    let first_blocks: Vec<(String, Value)> = data["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["ty"].as_str().unwrap().to_owned(),
                entry["blocks"][0].clone(),
            )
        })
        .collect();
    let text = |words: &str| json!({"k": "text", "t": words});
    assert_eq!(
        first_blocks,
        vec![
            (
                "model_change".to_owned(),
                text("anthropic/claude-sonnet-4-5")
            ),
            ("thinking_level_change".to_owned(), text("high")),
            ("custom".to_owned(), text("import.claude-code.attachment")),
            ("session_info".to_owned(), text("Fix the parser")),
            ("label".to_owned(), text("00000003 = here")),
        ]
    );
    // The whole entry still follows, as JSON.
    assert_eq!(data["entries"][2]["blocks"][1]["k"], json!("json"));
}

#[test]
fn a_bad_redact_pattern_is_one_line_naming_it() {
    let home = tempfile::tempdir().unwrap();
    let (file, _) = write_demo(home.path());
    let output = ctxkit(
        home.path(),
        &[
            "export",
            "--html",
            file.to_str().unwrap(),
            "-o",
            "x.html",
            "--redact",
            "(",
        ],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.contains("`--redact (` is not a valid regular expression: unclosed group"),
        "{stderr}"
    );
    assert!(
        stderr.lines().skip(1).all(|line| line.starts_with("hint:")),
        "{stderr}"
    );
}

/// playwright-core's folder and Chromium, or `None` (outside CI) when they are not installed.
fn browser_tools() -> Option<PathBuf> {
    let tools = std::env::var_os("CTXKIT_BROWSER_TOOLS")
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|home| home.join(".cache/ctxkit-browser-tools")))?;
    let ready = tools.join("node_modules/playwright-core").is_dir()
        && Path::new("/usr/bin/chromium").exists();
    if ready {
        return Some(tools);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "headless Chromium or playwright-core is missing under CI: run `.ci/install-chromium`"
    );
    eprintln!("skipped: no Chromium/playwright-core (run `.ci/install-chromium`)");
    None
}

/// Where screenshots go: `CTXKIT_ARTIFACTS` (CI keeps it) or a temp folder.
fn screenshot_dir(fallback: &Path) -> PathBuf {
    let dir = std::env::var_os("CTXKIT_ARTIFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| fallback.to_owned());
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn node_checker(
    tools: &Path,
    mode: &str,
    url: &str,
    shots: &Path,
    expect: serde_json::Value,
) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/web/browser.cjs");
    let mut command = Command::new("node");
    command
        .arg(script)
        .args([mode, url, shots.to_str().unwrap()])
        .env("CTXKIT_BROWSER_TOOLS", tools)
        .env("EXPECT", expect.to_string());
    command
}

/// Runs the browser checks of `mode` on `url`, failing the test with what they printed unless
/// they pass; returns what they printed.
fn check_in_browser(
    tools: &Path,
    mode: &str,
    url: &str,
    shots: &Path,
    expect: serde_json::Value,
) -> String {
    let output = node_checker(tools, mode, url, shots, expect)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{url}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn a_browser_shows_the_exported_page() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, demo) = write_demo(home.path());
    export(home.path(), &file, &[]);
    let shots = screenshot_dir(home.path());
    let url = format!("file://{}", home.path().join("page.html").display());
    let expect = json!({"coveredByFirst": demo.covered_by_first, "beforeSecond": demo.before_second,
            "branchSummary": demo.branch_summary});
    let stdout = check_in_browser(&tools, "export", &url, &shots, expect);
    assert!(stdout.contains("OK"));
}

#[test]
fn a_browser_follows_the_session_in_view() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let (file, _) = write_demo(home.path());
    let mut server = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["view", file.to_str().unwrap()])
        .env("CTXKIT_HOME", home.path())
        .env("HOME", home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
        "{url}"
    );
    // Without the token, or from another host name, nothing is served.
    let base = url.split("/?").next().unwrap().to_owned();
    assert_eq!(http_status(&base, "/api/data", "127.0.0.1"), 403);
    let with_token = format!("/api/data?{}", url.split('?').nth(1).unwrap());
    assert_eq!(http_status(&base, &with_token, "evil.example"), 403);
    assert_eq!(
        http_status(&base, &with_token, &base["http://".len()..]),
        200
    );

    let shots = screenshot_dir(home.path());
    let mut checker = node_checker(&tools, "view", &url, &shots, json!({"compacts": true}))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(checker.stdout.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("READY") {
            break;
        }
    }
    // An agent appends a turn through `ctxkit serve` (issue 44: view follows what serve appends).
    let mut serve = StdioServer::start(home.path(), None);
    serve.call("session.open", json!({"path": file}));
    serve.turn(
        "appended-live-marker",
        "appended-live-reply",
        1_800_000_000_000,
    );
    drop(serve);
    // And a compaction by hand: the tab's count follows it (it stayed at the count the page
    // opened with).
    let compacted = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args([
            "compact",
            file.to_str().unwrap(),
            "--keep-recent-tokens",
            "1",
        ])
        .env("CTXKIT_HOME", home.path())
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(compacted.status.success(), "{compacted:?}");
    for line in lines {
        seen.push_str(&line.unwrap());
        seen.push('\n');
    }
    let status = checker.wait().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut checker.stderr.take().unwrap(), &mut stderr).unwrap();
    println!("{seen}");
    assert!(status.success(), "{seen}\n{stderr}");
    assert!(seen.contains("OK"));
}

/// The status code of a GET with the given `Host` header.
fn http_status(base: &str, path: &str, host: &str) -> u16 {
    http_answer(base, "GET", path, host)
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

/// The whole answer (status line, headers, body) to one request of `method` with `host`.
fn http_answer(base: &str, method: &str, path: &str, host: &str) -> String {
    use std::io::{Read, Write};
    let address = &base["http://".len()..];
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// `ctxkit serve --stdio` as a child: one request line in, its answer out (events skipped).
pub(super) struct StdioServer {
    child: std::process::Child,
    input: Option<std::process::ChildStdin>,
    output: std::io::Lines<BufReader<std::process::ChildStdout>>,
    next_id: u64,
}

impl StdioServer {
    pub(super) fn start(home: &Path, store: Option<&str>) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
        command
            .args(["serve", "--stdio"])
            .env("CTXKIT_HOME", home)
            .env("HOME", home)
            .env("CTXKIT_OFFLINE", "1")
            .current_dir(home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(store) = store {
            command.env("CTXKIT_STORE", store);
        }
        let mut child = command.spawn().unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            input: Some(input),
            output,
            next_id: 0,
        }
    }

    pub(super) fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        use std::io::Write;
        self.next_id += 1;
        let request =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        writeln!(self.input.as_mut().unwrap(), "{request}").unwrap();
        for line in self.output.by_ref() {
            let message: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            if message["id"] == json!(self.next_id) {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
        panic!("the server ended before answering {method}");
    }

    pub(super) fn turn(&mut self, user: &str, reply: &str, at: i64) {
        self.call(
            "message.append",
            json!({"message": {"role": "user", "content": user, "timestamp": at}}),
        );
        self.call("message.append", json!({"message": {"role": "assistant", "content": [{"type": "text", "text": reply}], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": {"input": 1200, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1230, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "stop", "timestamp": at + 1000}}));
    }
}

impl Drop for StdioServer {
    /// Closes the input as a client would, so the server closes its session (a database
    /// session's private copy is removed); killed only if it has not ended within ten seconds.
    fn drop(&mut self) {
        drop(self.input.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `ctxkit view SESSION` and returns it with its URL.
fn start_view(home: &Path, session: &str, store: Option<&str>) -> (std::process::Child, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
    command
        .args(["view", session])
        .env("CTXKIT_HOME", home)
        .env("HOME", home)
        .current_dir(home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(store) = store {
        command.env("CTXKIT_STORE", store);
    }
    let mut server = command.spawn().unwrap();
    let mut url = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    (server, url)
}

/// Runs the browser's `view` check while `append` adds a turn once the page is up.
fn follow_in_browser(tools: &Path, url: &str, shots: &Path, append: impl FnOnce()) {
    let mut checker = node_checker(tools, "view", url, shots, json!({}))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(checker.stdout.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("READY") {
            break;
        }
    }
    append();
    for line in lines {
        seen.push_str(&line.unwrap());
        seen.push('\n');
    }
    let status = checker.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut checker.stderr.take().unwrap(), &mut stderr).unwrap();
    println!("{seen}");
    assert!(status.success(), "{seen}\n{stderr}");
    assert!(seen.contains("OK"));
}

/// Issue 44 with the session in PostgreSQL: `ctxkit view ID` follows what `serve` commits.
#[test]
fn a_browser_follows_a_database_session_that_serve_appends() {
    let Some(tools) = browser_tools() else { return };
    let Some(database) = super::store::database() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let mut serve = StdioServer::start(home.path(), Some(&database));
    let created = serve.call(
        "session.create",
        json!({"cwd": home.path().display().to_string()}),
    );
    let id = created["session_id"].as_str().unwrap().to_owned();
    serve.turn("the first question", "the first answer", 1_800_000_000_000);
    let (view, url) = start_view(home.path(), &id, Some(&database));
    // Stopped even when an assertion fails.
    let _view = KillOnDrop(view);
    let shots = screenshot_dir(home.path());
    follow_in_browser(&tools, &url, &shots, || {
        serve.turn(
            "appended-live-marker",
            "appended-live-reply",
            1_800_000_010_000,
        );
    });
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn export_never_replaces_its_session_or_a_file_that_is_not_a_page() {
    let home = tempfile::tempdir().unwrap();
    let file = write_tiny(home.path(), 3);
    let session_bytes = std::fs::read(&file).unwrap();
    let notes = home.path().join("notes.txt");
    std::fs::write(&notes, "keep me\n").unwrap();
    for target in [&file, &notes, &home.path().to_path_buf()] {
        let output = ctxkit(
            home.path(),
            &[
                "export",
                file.to_str().unwrap(),
                "-o",
                target.to_str().unwrap(),
            ],
        );
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{said}");
        assert_eq!(
            said.lines()
                .filter(|line| line.starts_with("error:"))
                .count(),
            1,
            "{said}"
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), session_bytes);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "keep me\n");
    // A page of the user's own is not ctxkit's to replace (QA 2026-12-07: it was, being HTML).
    let mine = home.path().join("mine.html");
    std::fs::write(&mine, "<!DOCTYPE html>\n<p>my important page</p>\n").unwrap();
    let export_to = |page: &Path| {
        ctxkit(
            home.path(),
            &[
                "export",
                file.to_str().unwrap(),
                "-o",
                page.to_str().unwrap(),
            ],
        )
    };
    let refused = export_to(&mine);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && said.contains("is not a page ctxkit wrote"),
        "{said}"
    );
    assert!(
        std::fs::read_to_string(&mine)
            .unwrap()
            .contains("my important page")
    );
    // An earlier page is replaced: one of today's, and one written before its head named ctxkit.
    let page = home.path().join("page.html");
    for earlier in [
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<meta name=\"generator\" content=\"ctxkit\">\n<p>old</p>\n",
        "<!DOCTYPE html>\n<html><head><title>s.jsonl — ctxkit</title>\n<p>old</p>\n",
    ] {
        std::fs::write(&page, earlier).unwrap();
        let output = export_to(&page);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let written = std::fs::read_to_string(&page).unwrap();
        assert!(!written.contains("<p>old</p>"));
        // What it wrote is an earlier page for the next export.
        assert!(export_to(&page).status.success());
    }
    // A link, even to an earlier page or to `/dev/null`, and a FIFO are not replaced (QA
    // 2026-12-07: `-o /dev/stdout` replaced the system's link with the page).
    let fifo = home.path().join("fifo.html");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let to_page = home.path().join("to-page.html");
    std::os::unix::fs::symlink(&page, &to_page).unwrap();
    let to_null = home.path().join("null.html");
    std::os::unix::fs::symlink("/dev/null", &to_null).unwrap();
    let dangling = home.path().join("dangling.html");
    std::os::unix::fs::symlink(home.path().join("missing.html"), &dangling).unwrap();
    for (output, said) in [
        (&fifo, "is not a file"),
        (&to_page, "is a link"),
        (&to_null, "is a link"),
        (&dangling, "is a link"),
    ] {
        let refused = export_to(output);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            !refused.status.success() && stderr.contains(said),
            "{stderr}"
        );
        let kind = std::fs::symlink_metadata(output).unwrap().file_type();
        assert!(kind.is_symlink() || !kind.is_file(), "{}", output.display());
    }
}

/// A page redacts what tool output redacts: the value of every secret variable of the
/// environment (`ctxkit_secrets::is_secret_variable`), not only the providers' keys.
#[test]
fn a_page_redacts_every_secret_variable_tool_output_hides() {
    let home = tempfile::tempdir().unwrap();
    // Values no credential shape matches: only knowing the variables hides them.
    let secrets = [
        ("AWS_SECRET_ACCESS_KEY", "aws-value-0123456789abcdef"),
        ("GITHUB_TOKEN", "gh-value-0123456789abcdef"),
        ("PGPASSWORD", "pg-password-0123456789"),
        ("CTXKIT_SERVER_TOKEN", "server-token-0123456789"),
        ("ANTHROPIC_API_KEY", "anthropic-value-0123456789"),
    ];
    let said: Vec<String> = secrets
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    let file = home.path().join("env.jsonl");
    let lines = [
        json!({"type": "session", "version": 3, "id": "env", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/env"}),
        json!({"type": "message", "id": "00000001", "parentId": null, "timestamp": "2026-01-01T00:00:00.000Z",
               "message": {"role": "user", "content": said.join("\n"), "timestamp": 1}}),
    ];
    std::fs::write(&file, jsonl(&lines)).unwrap();
    let page = home.path().join("env.html");
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
    command
        .args([
            "export",
            file.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ])
        .env("CTXKIT_HOME", home.path())
        .env("HOME", home.path())
        .env_remove("OPENAI_API_KEY");
    for (name, value) in secrets {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let page = std::fs::read_to_string(page).unwrap();
    let shown = page_data(&page)["entries"][0]["blocks"][0]["t"].clone();
    for (name, value) in secrets {
        assert!(!page.contains(value), "{name}'s value is in the page");
        let redacted = format!("{name}=<redacted>");
        assert!(shown.as_str().unwrap().contains(&redacted), "{shown}");
    }
}

/// A key written with markdown escapes is redacted in the text the tree and the search show, not
/// only in the drawn card; a secret holding `"` or `\\` is redacted in JSON the page shows (an
/// unknown tool's arguments, a custom entry's data); a thinking level is redacted too (QA
/// 2026-12-07: each stayed on the page).
#[test]
fn a_page_redacts_escaped_keys_json_strings_and_the_thinking_level() {
    let home = tempfile::tempdir().unwrap();
    let at = "2026-01-01T00:00:00.000Z";
    let password = "Pa\\ss\"Word9-0123456789";
    let usage = json!({"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                       "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let lines = [
        json!({"type": "session", "version": 3, "id": "esc", "timestamp": at, "cwd": "/tmp/esc"}),
        json!({"type": "thinking_level_change", "id": "e000", "parentId": null, "timestamp": at, "thinkingLevel": "highTOPSECRET39"}),
        json!({"type": "message", "id": "e001", "parentId": "e000", "timestamp": at,
               "message": {"role": "user", "content": "pw hunter\\_2\\_secret and ghp\\_abcdefghijklmnopqrstuvwxyz0123456789", "timestamp": 1}}),
        json!({"type": "message", "id": "e002", "parentId": "e001", "timestamp": at,
               "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "mcp_login",
                   "arguments": {"pw": password}}], "provider": "anthropic", "model": "m",
                   "usage": usage, "stopReason": "toolUse", "timestamp": 2}}),
        json!({"type": "custom", "customType": "x", "data": {"pw": password}, "id": "e003", "parentId": "e002", "timestamp": at}),
        json!({"type": "compaction", "id": "e004", "parentId": "e003", "timestamp": at,
               "summary": "token ghp\\_abcdefghijklmnopqrstuvwxyz0123456789", "firstKeptEntryId": "e003", "tokensBefore": 10}),
        // A session's name and a label too (the verifier's second round).
        json!({"type": "session_info", "id": "e005", "parentId": "e004", "timestamp": at,
               "name": "name ghp\\_abcdefghijklmnopqrstuvwxyz0123456789"}),
        json!({"type": "label", "id": "e006", "parentId": "e005", "timestamp": at, "targetId": "e001",
               "label": "ghp&#95;abcdefghijklmnopqrstuvwxyz0123456789"}),
        // Shown as plain text: a tool result, an extension's message; and a key formatting splits
        // (the verifier's third round).
        json!({"type": "message", "id": "e007", "parentId": "e006", "timestamp": at,
               "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "mcp_login",
                   "content": [{"type": "text", "text": "T ghp\\_abcdefghijklmnopqrstuvwxyz0123456789"}],
                   "isError": false, "timestamp": 4}}),
        json!({"type": "custom_message", "id": "e008", "parentId": "e007", "timestamp": at, "customType": "c",
               "content": "CM ghp\\_abcdefghijklmnopqrstuvwxyz0123456789", "display": true}),
        json!({"type": "message", "id": "e009", "parentId": "e008", "timestamp": at,
               "message": {"role": "assistant", "content": [{"type": "text",
                   "text": "split ghp_**abcdefghijklmnopqrstuvwxyz0123456789** and [a link](https://example.com/x)"}],
                   "provider": "anthropic", "model": "m", "usage": usage, "stopReason": "stop", "timestamp": 5}}),
    ];
    let file = home.path().join("esc.jsonl");
    std::fs::write(&file, jsonl(&lines)).unwrap();
    let page = home.path().join("esc.html");
    let output = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args([
            "export",
            file.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ])
        .args(["--redact", "hunter_2_secret", "--redact", "TOPSECRET[0-9]+"])
        .env("CTXKIT_HOME", home.path())
        .env("HOME", home.path())
        .env("DB_PASSWORD", password)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let page = std::fs::read_to_string(page).unwrap();
    for secret in ["hunter", "abcdefghijklmnopqrstuvwxyz", "Word9", "TOPSECRET"] {
        assert!(!page.contains(secret), "`{secret}` is in the page");
    }
    let user = &page_data(&page)["entries"][1]["blocks"][0]["t"];
    assert!(
        user.as_str().unwrap().starts_with("pw <redacted> and "),
        "{user}"
    );
    // A decoded string gains no line end.
    assert!(
        !page.contains("<redacted>\\n\""),
        "a decoded string ends in a line break"
    );
}

/// Bidirectional overrides and isolates and C1 controls in a session's name, a model id, a label
/// and a message: the page shows each as `\uXXXX` (the CLI's list, `is_unsafe_to_show`), in its
/// title too, so none reorders what a reader sees. An edit's diff shows its removed and added
/// lines as text, markup in them too.
#[test]
fn a_browser_shows_bidi_overrides_and_c1_controls_visibly() {
    let home = tempfile::tempdir().unwrap();
    let at = "2026-01-01T00:00:00.000Z";
    let lines = [
        json!({"type": "session", "version": 3, "id": "spoof", "timestamp": at, "cwd": "/tmp/spoof"}),
        json!({"type": "session_info", "id": "e001", "parentId": null, "timestamp": at, "name": "report\u{202e}txt.exe"}),
        json!({"type": "model_change", "id": "e002", "parentId": "e001", "timestamp": at, "provider": "anthropic", "modelId": "claude\u{2066}-evil"}),
        json!({"type": "message", "id": "e003", "parentId": "e002", "timestamp": at,
               "message": {"role": "user", "content": "hello \u{9b}31m world \u{200f}!", "timestamp": 1}}),
        json!({"type": "label", "id": "e004", "parentId": "e003", "timestamp": at, "targetId": "e003", "label": "ok\u{202e}Ko"}),
        json!({"type": "message", "id": "e005", "parentId": "e004", "timestamp": at,
               "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "t1", "name": "edit",
                   "arguments": {"path": "a.html", "edits": [{"oldText": "x", "newText": "y"}]}}],
                   "provider": "anthropic", "model": "m", "stopReason": "toolUse", "timestamp": 2}}),
        json!({"type": "message", "id": "e006", "parentId": "e005", "timestamp": at,
               "message": {"role": "toolResult", "toolCallId": "t1", "toolName": "edit", "isError": false,
                   "content": [{"type": "text", "text": "Edited a.html"}], "timestamp": 3,
                   "details": {"diff": " 1 <p>\n-2 <img src=x onerror=alert(1)>\n+2 </script>\u{202e}\n 3 </p>",
                               "firstChangedLine": 2}}}),
        json!({"type": "custom_message", "id": "e007", "parentId": "e006", "timestamp": at,
               "customType": "note", "content": "crlf one\r\ncrlf two\rback", "display": true}),
    ];
    let file = home.path().join("spoof.jsonl");
    std::fs::write(&file, jsonl(&lines)).unwrap();
    let page = export(home.path(), &file, &[]);
    let data = page_data(&page);
    let listed: Vec<[u32; 2]> = ctxkit_protocol::UNSAFE_TO_SHOW
        .iter()
        .map(|&(first, last)| [u32::from(first), u32::from(last)])
        .collect();
    assert_eq!(data["unsafeCharacters"], json!(listed));
    let Some(tools) = browser_tools() else { return };
    let shots = screenshot_dir(home.path());
    let url = format!("file://{}", home.path().join("page.html").display());
    check_in_browser(&tools, "spoof", &url, &shots, json!({}));
}

/// A session whose third line was cut off (its reply lost, the next question's parent with it):
/// the page carries the problems `ctxkit check` reports (lines and kinds, none of the line's
/// text) and says so at the top, on the entry whose parent was lost and in what the model saw
/// through it; `view` the same.
#[test]
fn a_damaged_session_s_page_says_so_where_it_matters() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("damaged.jsonl");
    let at = "2026-01-01T00:00:00.000Z";
    let mut text = jsonl(&[
        json!({"type": "session", "version": 3, "id": "dmg", "timestamp": at, "cwd": "/tmp/dmg"}),
        json!({"type": "message", "id": "u1", "parentId": null, "timestamp": at,
               "message": {"role": "user", "content": "first question", "timestamp": 1}}),
    ]);
    text.push_str(r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"LOST ANSWER cut her"#);
    text.push('\n');
    text.push_str(&jsonl(&[
        json!({"type": "message", "id": "u2", "parentId": "a1", "timestamp": at,
               "message": {"role": "user", "content": "second question", "timestamp": 3}}),
        json!({"type": "message", "id": "a2", "parentId": "u2", "timestamp": at,
               "message": {"role": "assistant", "content": [{"type": "text", "text": "second answer"}],
                           "stopReason": "stop", "timestamp": 4}}),
    ]));
    std::fs::write(&file, text).unwrap();
    let page = export(home.path(), &file, &[]);
    let data = page_data(&page);
    assert_eq!(data["problemCount"], json!(2));
    assert_eq!(data["problems"][0]["line"], json!(3));
    assert_eq!(data["problems"][0]["kind"], json!("invalidJson"));
    assert_eq!(data["problems"][1]["kind"], json!("missingParent"));
    assert!(!data["problems"].to_string().contains("LOST"));
    let Some(tools) = browser_tools() else { return };
    let shots = screenshot_dir(home.path());
    let expect = json!({"cut": "u2", "secret": "LOST ANSWER"});
    let exported = format!("file://{}", home.path().join("page.html").display());
    let (server, live) = start_view(home.path(), file.to_str().unwrap(), None);
    let _server = KillOnDrop(server);
    for url in [exported, live] {
        check_in_browser(&tools, "damaged", &url, &shots, expect.clone());
    }
}

/// The page's words about one request whose reply has tokens and no price (QA: "total $0.0000"
/// for an imported Claude Code session, "52,777 of 36,000,014" characters, "PATH TO 8430BBE8",
/// "1 requests", one request drawn as a vertical line).
#[test]
fn a_browser_shows_counts_costs_and_ids_as_they_are() {
    let home = tempfile::tempdir().unwrap();
    let at = "2026-01-01T00:00:00.000Z";
    let long = "\u{1f600}".repeat(60_000);
    let lines = [
        json!({"type": "session", "version": 3, "id": "looks", "timestamp": at, "cwd": "/tmp/looks"}),
        json!({"type": "message", "id": "8430bbe8", "parentId": null, "timestamp": at,
               "message": {"role": "user", "content": "hello", "timestamp": 1}}),
        json!({"type": "message", "id": "9a1fcc02", "parentId": "8430bbe8", "timestamp": at,
               "message": {"role": "assistant", "content": [{"type": "text", "text": long}],
                           "usage": {"input": 1200, "output": 300, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1500},
                           "stopReason": "stop", "timestamp": 2}}),
    ];
    let file = home.path().join("looks.jsonl");
    std::fs::write(&file, jsonl(&lines)).unwrap();
    let page = export(home.path(), &file, &[]);
    let data = page_data(&page);
    assert_eq!(data["totals"]["costUnknown"], json!(1));
    let Some(tools) = browser_tools() else { return };
    let shots = screenshot_dir(home.path());
    let url = format!("file://{}", home.path().join("page.html").display());
    check_in_browser(
        &tools,
        "cosmetics",
        &url,
        &shots,
        json!({"leaf": "9a1fcc02"}),
    );
}

/// Attack: what a view sent in place of an entry is kept once in the page's `sentMessages`; a
/// summary holding markup and a key goes there escaped and redacted like everything else.
#[test]
fn the_shared_sent_messages_are_escaped_and_redacted() {
    let home = tempfile::tempdir().unwrap();
    let summary = format!("## Goal\nSHARED-SUMMARY {HOSTILE} token {FAKE_KEY}");
    let message = |id: &str, parent: &str, role: &str, text: &str| {
        let content = if role == "user" {
            json!(text)
        } else {
            json!([{"type": "text", "text": text}])
        };
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": role, "content": content, "timestamp": 1}})
    };
    let lines = [
        json!({"type": "session", "version": 3, "id": "shared", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/shared"}),
        json!({"type": "message", "id": "u1", "parentId": null, "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": "user", "content": "first", "timestamp": 1}}),
        message("a1", "u1", "assistant", "first answer"),
        json!({"type": "compaction", "id": "c1", "parentId": "a1", "timestamp": "2026-01-01T00:00:02.000Z",
               "summary": summary, "firstKeptEntryId": "a1", "tokensBefore": 100}),
        message("u2", "c1", "user", "second"),
        message("a2", "u2", "assistant", "second answer"),
        message("u3", "a2", "user", "third"),
        message("a3", "u3", "assistant", "third answer"),
    ];
    let file = home.path().join("shared.jsonl");
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&file, text.join("\n") + "\n").unwrap();
    let page = export(home.path(), &file, &[]);
    assert_eq!(page.matches("</script>").count(), 2);
    assert_eq!(page.matches("<script").count(), 2);
    assert!(
        !page.contains(FAKE_KEY),
        "the key is redacted in the table too"
    );
    let data = page_data(&page);
    let shared = data["sentMessages"].as_array().unwrap();
    let held = shared
        .iter()
        .filter(|message| message.to_string().contains("SHARED-SUMMARY"))
        .count();
    assert_eq!(held, 1, "kept once: {shared:?}");
    assert!(
        shared[0].to_string().contains("<script>alert(1)</script>"),
        "the markup is data, escaped only in the page's text: {shared:?}"
    );
    let views = data["contexts"].as_object().unwrap();
    let naming = views
        .values()
        .filter(|view| {
            view["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|message| message.get("msgRef").is_some())
        })
        .count();
    assert!(naming >= 2, "{views:?}");
}

/// The context panel of an imported session showed ctxkit's transforms ("39 results pruned") under
/// "What the model saw", beside a chart of what the agent sent whole: it now says whose view it is.
#[test]
fn an_imported_sessions_context_says_it_is_ctxkits_view() {
    let home = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctxkit-import/tests/fixtures/claude-code-session.jsonl");
    let file = home.path().join("claude.jsonl");
    std::fs::copy(&source, &file).unwrap();
    export(home.path(), &file, &[]);
    let Some(tools) = browser_tools() else { return };
    let shots = screenshot_dir(home.path());
    let url = format!("file://{}", home.path().join("page.html").display());
    check_in_browser(&tools, "imported", &url, &shots, json!({}));
}
