//! `ctxkit chat` end to end in a real terminal: the binary runs inside tmux (`send-keys`,
//! `capture-pane`) against a local mock OpenAI-compatible server that scripts the model's answers
//! (text, tool calls, an overflow error) and answers summary requests. Hermetic: a temp home and
//! project, no network, provider keys of the real environment removed. Skipped, with a message,
//! when tmux is not installed.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const MODEL_ID: &str = "test-model";

/// The scripted model: chat requests (they carry tools) take the next scripted answer; summary
/// requests (no tools) get a summary after `summary_delay`.
#[derive(Clone)]
struct Script {
    answers: Arc<Mutex<VecDeque<Answer>>>,
    summary_delay: Arc<Mutex<Duration>>,
    /// Summary requests are refused (a 400 that is not an overflow) while set.
    refuse_summaries: Arc<std::sync::atomic::AtomicBool>,
}

/// The first words of the instruction a summary request continuing the conversation ends with
/// (`compaction.cachePrefix`, on in the recommended strategy): such a request carries the tools.
const CONTINUATION: &str = "Pause the task here: this message is not a new request";

/// Whether a request asks for a summary: a fresh summary prompt (no tools), or the conversation
/// continued by the summary instruction (which is never stored, so no later request holds it).
pub(crate) fn is_summary(body: &Value) -> bool {
    body.get("tools").is_none() || body.to_string().contains(CONTINUATION)
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if is_summary(&body) {
            if self
                .refuse_summaries
                .load(std::sync::atomic::Ordering::SeqCst)
            {
                return ResponseTemplate::new(400).set_body_json(json!({"error": {
                    "message": "summaries are not allowed on this key",
                    "type": "invalid_request_error"}}));
            }
            let delay = *self.summary_delay.lock().unwrap();
            return completion(
                json!({"role": "assistant", "content": "## Goal\nSUMMARY-FROM-MOCK of the earlier work"}),
                "stop",
                300,
            )
            .set_delay(delay);
        }
        match self.answers.lock().unwrap().pop_front() {
            Some(Answer::Fixed(template)) => template,
            // The usage the provider would count for this very request, whatever the system
            // prompt and the tools' descriptions weigh.
            Some(Answer::Measured(content)) => text(&content, request_tokens(&body)),
            None => text("(the script has no more answers)", 100),
        }
    }
}

/// One scripted answer to a chat request.
enum Answer {
    Fixed(ResponseTemplate),
    /// A text reply whose usage is the size of the request it answers ([`request_tokens`]).
    Measured(String),
}

/// A request's size in tokens as a provider would roughly count it: its JSON body, four
/// characters a token (ctxkit's estimate counts the same way, so the over-count it learns from
/// such usage stays near 1).
fn request_tokens(body: &Value) -> u64 {
    body.to_string().len() as u64 / 4
}

pub(crate) fn completion(message: Value, finish: &str, prompt_tokens: u64) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-mock", "object": "chat.completion", "created": 1, "model": MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 20,
                  "total_tokens": prompt_tokens + 20}
    }))
}

pub(crate) fn text(content: &str, prompt_tokens: u64) -> ResponseTemplate {
    completion(
        json!({"role": "assistant", "content": content}),
        "stop",
        prompt_tokens,
    )
}

pub(crate) fn tool_call(id: &str, name: &str, arguments: Value) -> ResponseTemplate {
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": id, "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}}]}),
        "tool_calls",
        200,
    )
}

fn overflow() -> ResponseTemplate {
    overflow_of(8192)
}

/// A provider's refusal of a request as too long for its `window`.
pub(crate) fn overflow_of(window: u64) -> ResponseTemplate {
    let message = format!(
        "This model's maximum context length is {window} tokens. However, your messages resulted in {} tokens. Please reduce the length of the messages.",
        window + 928
    );
    ResponseTemplate::new(400).set_body_json(json!({"error": {
        "message": message,
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}))
}

/// A mock provider, a temp home and project, and the settings pointing `ctxkit` at the mock.
pub(crate) struct World {
    runtime: tokio::runtime::Runtime,
    server: MockServer,
    script: Script,
    pub(crate) home: tempfile::TempDir,
    pub(crate) project: PathBuf,
}

impl World {
    pub(crate) fn new(context_window: u64, compaction: Value) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(MockServer::start());
        let script = Script {
            answers: Arc::default(),
            summary_delay: Arc::new(Mutex::new(Duration::ZERO)),
            refuse_summaries: Arc::default(),
        };
        runtime.block_on(
            Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .respond_with(script.clone())
                .mount(&server),
        );
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        let settings = json!({
            "defaultProvider": "mock",
            "defaultModel": format!("mock/{MODEL_ID}"),
            "llm": {
                "api": "openai-completions",
                "baseUrl": format!("{}/v1", server.uri()),
                "models": [{"provider": "mock", "id": MODEL_ID, "contextWindow": context_window,
                            "maxOutput": 2048}]
            },
            "retry": {"enabled": false},
            "compaction": compaction,
        });
        std::fs::write(
            home.path().join("settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
        Self {
            runtime,
            server,
            script,
            home,
            project,
        }
    }

    pub(crate) fn answer(&self, template: ResponseTemplate) {
        self.script
            .answers
            .lock()
            .unwrap()
            .push_back(Answer::Fixed(template));
    }

    /// Queues a text reply whose usage is the size of the request it answers.
    fn answer_measured(&self, content: String) {
        self.script
            .answers
            .lock()
            .unwrap()
            .push_back(Answer::Measured(content));
    }

    pub(crate) fn summary_delay(&self, delay: Duration) {
        *self.script.summary_delay.lock().unwrap() = delay;
    }

    pub(crate) fn refuse_summaries(&self, refuse: bool) {
        self.script
            .refuse_summaries
            .store(refuse, std::sync::atomic::Ordering::SeqCst);
    }

    /// Every request body the mock received, in order.
    fn requests(&self) -> Vec<Value> {
        self.runtime
            .block_on(self.server.received_requests())
            .unwrap()
            .iter()
            .map(|request| serde_json::from_slice(&request.body).unwrap())
            .collect()
    }

    pub(crate) fn chat_requests(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|body| !is_summary(body))
            .collect()
    }

    /// Writes the project's own settings file (`.ctxkit/settings.json`), untrusted until the user
    /// trusts it.
    pub(crate) fn write_project_settings(&self, settings: &Value) {
        let folder = self.project.join(".ctxkit");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("settings.json"), settings.to_string()).unwrap();
    }

    /// Trusts the project as it is now (`ctxkit trust --yes`): its skills, prompt templates and
    /// `SYSTEM.md` load only then.
    pub(crate) fn trust_project(&self) {
        let output = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
            .args(["trust", "--yes"])
            .current_dir(&self.project)
            .env("CTXKIT_HOME", self.home.path())
            .env("HOME", self.home.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
    }

    /// Changes the user's settings file with `edit` (over the JSON the world wrote).
    pub(crate) fn edit_settings(&self, edit: impl FnOnce(&mut Value)) {
        let file = self.home.path().join("settings.json");
        let mut settings: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        edit(&mut settings);
        std::fs::write(&file, settings.to_string()).unwrap();
    }

    pub(crate) fn summary_requests(&self) -> Vec<Value> {
        self.requests().into_iter().filter(is_summary).collect()
    }

    /// The session files of the project, newest first.
    pub(crate) fn session_files(&self) -> Vec<PathBuf> {
        let root = self.home.path().join("sessions");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|dir| {
                std::fs::read_dir(dir.path())
                    .into_iter()
                    .flatten()
                    .flatten()
            })
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .collect();
        files.sort_by_key(|path| {
            std::cmp::Reverse(std::fs::metadata(path).unwrap().modified().unwrap())
        });
        files
    }

    pub(crate) fn entries(&self, file: &Path) -> Vec<Value> {
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .skip(1)
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// Starts `ctxkit chat ARGS` in a fresh tmux server.
    pub(crate) fn start(&self, args: &str) -> Tmux {
        start_chat(&self.project, self.home.path(), args)
    }
}

/// Starts `ctxkit chat ARGS` in `project` with `home` as its home, in a fresh tmux server, without
/// the provider variables of the environment the tests run in.
pub(crate) fn start_chat(project: &Path, home: &Path, args: &str) -> Tmux {
    Tmux::start(&chat_command(project, home, args))
}

/// The shell command [`start_chat`] runs: `ctxkit chat ARGS` in `project`, `home` its home, the
/// provider variables of the environment the tests run in removed.
pub(crate) fn chat_command(project: &Path, home: &Path, args: &str) -> String {
    chat_command_homes(project, home, home, args)
}

/// [`chat_command`] with ctxkit's home (`CTXKIT_HOME`) and the user's (`HOME`) apart.
pub(crate) fn chat_command_homes(
    project: &Path,
    ctxkit_home: &Path,
    user_home: &Path,
    args: &str,
) -> String {
    let mut command = format!("cd '{}' && exec env", project.display());
    for name in crate::PROVIDER_VARIABLES
        .into_iter()
        .chain(["CTXKIT_SESSIONS_DIR", "CTXKIT_OFFLINE"])
        // No desktop and no remote login: `/copy` takes the terminal's route wherever tests run.
        .chain(["DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_CLIENT"])
        .chain(["MOSH_CONNECTION", "CTXKIT_CLIPBOARD_OSC52"])
    {
        command.push_str(&format!(" -u {name}"));
    }
    command.push_str(&format!(
        " HOME='{user_home}' CTXKIT_HOME='{ctxkit_home}' '{bin}' chat {args}",
        user_home = user_home.display(),
        ctxkit_home = ctxkit_home.display(),
        bin = env!("CARGO_BIN_EXE_ctxkit"),
    ));
    command
}

static SOCKETS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One tmux server (its own socket) running one window.
pub(crate) struct Tmux {
    socket: String,
}

impl Tmux {
    pub(crate) fn available() -> bool {
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|output| output.status.success())
    }

    pub(crate) fn start(command: &str) -> Self {
        let socket = format!(
            "ctxkit-chat-test-{}-{}",
            std::process::id(),
            SOCKETS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let tmux = Self { socket };
        let status = tmux
            .command()
            .args(["new-session", "-d", "-s", "chat", "-x", "160", "-y", "50"])
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        // Keep the pane after the program exits, so its last screen can be read.
        let _ = tmux
            .command()
            .args(["set-option", "-t", "chat", "remain-on-exit", "on"])
            .status();
        tmux
    }

    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.args(["-L", &self.socket, "-f", "/dev/null"]);
        command
    }

    /// Lets the program set tmux's clipboard (OSC 52 makes a paste buffer), as a terminal that
    /// takes OSC 52 does.
    pub(crate) fn accept_clipboard(&self) {
        let status = self
            .command()
            .args(["set-option", "-g", "set-clipboard", "on"])
            .status()
            .unwrap();
        assert!(status.success(), "tmux set-option set-clipboard failed");
    }

    /// The newest paste buffer: what the program last copied; `None` when there is none.
    pub(crate) fn clipboard(&self) -> Option<String> {
        let output = self.command().arg("show-buffer").output().unwrap();
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// The pane's title: what the program last set with OSC 0 or 2 (tmux's default is the host
    /// name).
    pub(crate) fn pane_title(&self) -> String {
        let output = self
            .command()
            .args(["display-message", "-p", "-t", "chat", "#{pane_title}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// Resizes the window (a small terminal).
    pub(crate) fn resize(&self, width: u16, height: u16) {
        let status = self
            .command()
            .args(["resize-window", "-t", "chat", "-x", &width.to_string()])
            .args(["-y", &height.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "tmux resize-window failed");
    }

    /// Types `text` literally, then Enter.
    pub(crate) fn line(&self, text: &str) {
        self.keys(&["-l", text]);
        self.keys(&["Enter"]);
    }

    /// Esc twice, as a person presses it: the second after the editor's escape timeout (10 ms)
    /// and within the double-Esc window (500 ms). Sent in one write, two Esc are one key.
    pub(crate) fn double_escape(&self) {
        self.keys(&["Escape"]);
        std::thread::sleep(std::time::Duration::from_millis(120));
        self.keys(&["Escape"]);
    }

    /// `/resume`'s full-screen list, once shown: the screen and the number of the first row whose
    /// line `matches`.
    pub(crate) fn resume_list(&self, matches: impl Fn(&str) -> bool) -> (String, usize) {
        let screen = self.wait_for("Resume which session?");
        let number = screen
            .lines()
            .filter(|line| matches(line))
            .find_map(|line| {
                let line = line.trim_start_matches(['›', ' ']);
                line.split('.').next()?.parse::<usize>().ok()
            })
            .unwrap_or_else(|| panic!("no such row in the list:\n{screen}"));
        (screen, number)
    }

    /// Picks row `number` (from 1) of a full-screen list whose cursor is on the first row.
    pub(crate) fn pick_row(&self, number: usize) {
        for _ in 1..number {
            self.keys(&["Down"]);
        }
        self.keys(&["Enter"]);
    }

    /// Answers a one-key question as a person does, once it has been read: a key sooner than
    /// 250 ms after the question appeared is typing that went on, not an answer.
    pub(crate) fn answer(&self, key: &str) {
        std::thread::sleep(std::time::Duration::from_millis(300));
        self.keys(&[key]);
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        let status = self
            .command()
            .args(["send-keys", "-t", "chat"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Pastes `text` as a terminal does (bracketed, when the program asked for it).
    pub(crate) fn paste(&self, text: &str) {
        let mut load = self
            .command()
            .args(["load-buffer", "-"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut load.stdin.take().unwrap(), text.as_bytes()).unwrap();
        assert!(load.wait().unwrap().success(), "tmux load-buffer failed");
        let status = self
            .command()
            .args(["paste-buffer", "-p", "-t", "chat"])
            .status()
            .unwrap();
        assert!(status.success(), "tmux paste-buffer failed");
    }

    /// The screen and its scrollback.
    pub(crate) fn screen(&self) -> String {
        self.capture(&[])
    }

    /// The screen and its scrollback with the colours as escape sequences (`capture-pane -e`).
    pub(crate) fn styled_screen(&self) -> String {
        self.capture(&["-e"])
    }

    fn capture(&self, options: &[&str]) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-J", "-S", "-2000", "-t", "chat"])
            .args(options)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Whether the program still runs, or how it ended.
    fn pane_state(&self) -> String {
        let output = self
            .command()
            .args([
                "display-message",
                "-p",
                "-t",
                "chat",
                "pane_dead=#{pane_dead} status=#{pane_dead_status} signal=#{pane_dead_signal}",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// Waits until the screen (with its scrollback) satisfies `done`, and returns it; panics with
    /// the screen and `waited_for` on timeout. The limit only costs time when a test fails; CI
    /// runs the reverse and reliability checks beside the tests, so a loaded machine must not fail
    /// a screen that is merely late.
    fn wait_until(&self, waited_for: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {waited_for}; {}; the screen:\n{screen}",
                self.pane_state()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until `needle` is on the screen `count` times.
    pub(crate) fn wait_for_count(&self, needle: &str, count: usize) -> String {
        self.wait_until(&format!("{needle:?} ×{count}"), |screen| {
            screen.matches(needle).count() >= count
        })
    }

    pub(crate) fn wait_for(&self, needle: &str) -> String {
        self.wait_for_count(needle, 1)
    }

    /// Waits until the last input line on the screen is `expected` (`> text`). The same prompt
    /// typed earlier stays in the scrollback, so waiting for its text alone can return before the
    /// editor is drawn again.
    pub(crate) fn wait_input_line(&self, expected: &str) -> String {
        self.wait_until(&format!("the input line {expected:?}"), |screen| {
            last_input_line(screen) == expected
        })
    }

    /// Waits for the input prompt after the given number of prompts have been shown.
    pub(crate) fn wait_idle(&self, prompts: usize) -> String {
        self.wait_for_count("\n> ", prompts)
    }
}

impl Tmux {
    /// The process running in the pane (the chat: the pane's shell `exec`s it).
    pub(crate) fn pane_process(&self) -> Option<u32> {
        let output = self
            .command()
            .args(["display-message", "-p", "-t", "chat", "#{pane_pid}"])
            .output()
            .ok()?;
        String::from_utf8_lossy(&output.stdout).trim().parse().ok()
    }
}

/// The last input line on the screen (`> text`), or an empty string.
pub(crate) fn last_input_line(screen: &str) -> String {
    screen
        .lines()
        .rfind(|line| line.starts_with("> "))
        .unwrap_or("")
        .to_owned()
}

/// Whether process `pid` has ended (gone, or a zombie waiting to be reaped).
pub(crate) fn process_ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

impl Drop for Tmux {
    /// Ends the tmux server and waits until the chat in it has ended too, so that the next chat a
    /// test starts on the same session never finds its file still locked by this one.
    fn drop(&mut self) {
        let pane = self.pane_process();
        let _ = self.command().arg("kill-server").status();
        let Some(pid) = pane else { return };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !process_ended(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The screen's words one space apart: a message the chat broke between words to fit the
/// terminal reads whole, wherever the break fell.
pub(crate) fn words(screen: &str) -> String {
    screen.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether tmux is missing: the test is then skipped, and says so on stderr. In CI a skipped
/// terminal test would pass without having run, so there it fails instead.
pub(crate) fn tmux_missing() -> bool {
    if Tmux::available() {
        return false;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tmux is missing in CI; `.ci/run` installs it"
    );
    #[allow(clippy::print_stderr, reason = "the skip must be visible")]
    {
        eprintln!(
            "SKIPPED: tmux is not installed; install it (`apt-get install -y tmux`) to run the chat terminal tests"
        );
    }
    true
}

macro_rules! require_tmux {
    () => {
        if tmux_missing() {
            return;
        }
    };
}

pub(crate) fn count_type(entries: &[Value], kind: &str) -> usize {
    entries.iter().filter(|entry| entry["type"] == kind).count()
}

#[test]
fn chat_reads_the_settings_files_once() {
    // The model, the engine's settings, the summarizer, the tools' limits and the resources all come
    // from one reading of the settings files.
    require_tmux!();
    let world = World::new(100_000, json!({}));
    let log = world.home.path().join("chat.log");
    let tmux = world.start(&format!(
        "--log ctxkit_settings=debug --log-file '{}'",
        log.display()
    ));
    tmux.wait_for("ctxkit chat · mock/test-model (100000-token window)");
    tmux.wait_idle(1);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text.matches("reading the settings files").count(),
        1,
        "{text}"
    );
}

#[test]
fn chat_runs_tools_persists_and_continues() {
    require_tmux!();
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "echo hello-from-tool > out.txt && cat out.txt"}),
    ));
    world.answer(text("Done: the file says hello.", 400));
    let tmux = world.start("");
    tmux.wait_for("ctxkit chat · mock/test-model (100000-token window)");
    tmux.wait_idle(1);
    tmux.line("make a file");
    tmux.wait_for("Run `echo hello-from-tool > out.txt && cat out.txt`? [y]es / [n]o / [a]lways:");
    // One key answers, without Enter.
    tmux.answer("y");
    let screen = tmux.wait_for("Done: the file says hello.");
    assert!(
        screen.contains("[a]lways: yes"),
        "the answer is echoed: {screen}"
    );
    assert!(screen.contains("→ bash echo hello-from-tool"), "{screen}");
    assert!(screen.contains("  hello-from-tool"), "{screen}");
    tmux.wait_for("[context ");
    // The engine's plan says why a compaction now would write nothing (the whole context is kept).
    tmux.line("/context");
    // When a compaction runs by itself (QA: a new user saw one at 45% with nothing saying why).
    tmux.wait_for("Compacts by itself past ~");
    tmux.wait_for("settings `compaction.thresholdTokens`, `compaction.reserveTokens`)");
    tmux.wait_for("Nothing to compact yet: the messages (~");
    tmux.wait_for("fit in keepRecentTokens (10000)");
    assert_eq!(
        std::fs::read_to_string(world.project.join("out.txt")).unwrap(),
        "hello-from-tool\n"
    );
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["tools"].as_array().unwrap().len(), 8);
    assert_eq!(requests[0]["messages"][1]["content"], "make a file");
    assert_eq!(
        requests[1]["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "hello-from-tool"})
    );
    tmux.line("/quit");
    drop(tmux);

    let files = world.session_files();
    assert_eq!(files.len(), 1, "one session written");
    let entries = world.entries(&files[0]);
    // The model and thinking level the chat started with come first, as Pi 1.6.0 records them,
    // so Pi continues the session with both (QA r102).
    assert_eq!(entries[0]["type"], "model_change");
    assert_eq!(
        (&entries[0]["provider"], &entries[0]["modelId"]),
        (&json!("mock"), &json!("test-model"))
    );
    assert_eq!(entries[1]["type"], "thinking_level_change");
    assert_eq!(entries[1]["thinkingLevel"], "off");
    let roles: Vec<&str> = entries
        .iter()
        .filter_map(|entry| entry["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    assert_eq!(entries[3]["message"]["provider"], "mock");
    assert_eq!(entries[3]["message"]["stopReason"], "toolUse");

    world.answer(text("Still here, with the earlier context.", 500));
    let tmux = world.start("--continue");
    tmux.wait_for("Continuing session (6 entries)");
    // The conversation so far is shown again: the prompt, the tool call and its result, the answer.
    // The banner's last line follows the replay; the replayed prompt alone would match `wait_idle`.
    let screen = tmux.wait_for("/help lists commands");
    let prompt = screen
        .find("> make a file")
        .unwrap_or_else(|| panic!("{screen}"));
    let answer = screen
        .find("Done: the file says hello.")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(prompt < answer, "{screen}");
    assert!(screen.contains("→ bash echo hello-from-tool"), "{screen}");
    tmux.line("anything else?");
    tmux.wait_for("Still here, with the earlier context.");
    let requests = world.chat_requests();
    let last = requests.last().unwrap();
    assert_eq!(last["messages"][1]["content"], "make a file");
    assert_eq!(last["messages"][5]["content"], "anything else?");
    assert_eq!(
        world.session_files().len(),
        1,
        "--continue appends to the same file"
    );
}

/// A reply long enough (~130 tokens) that compaction has something to summarize.
pub(crate) fn long(label: &str, prompt_tokens: u64) -> ResponseTemplate {
    let filler = "The parser reads tokens, builds the tree and reports errors with their spans. ";
    text(&format!("{label}. {}", filler.repeat(6)), prompt_tokens)
}

#[test]
fn chat_compacts_with_focus_cancels_a_compaction_and_summarizes_a_branch() {
    require_tmux!();
    let world = World::new(100_000, json!({"keepRecentTokens": 60}));
    // The provider counts the tools' definitions (about 1,000 tokens) and the system prompt too.
    for label in ["Answer one", "Answer two", "Answer three"] {
        world.answer(long(label, 3000));
    }
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    for (number, prompt) in ["first task", "second task", "third task"]
        .iter()
        .enumerate()
    {
        tmux.line(prompt);
        tmux.wait_idle(number + 2);
    }

    // A manual compaction with focus text.
    tmux.line("/compact the parser work");
    let screen = tmux.wait_for("Compacted: ");
    let line = screen
        .lines()
        .find(|line| line.starts_with("Compacted: "))
        .unwrap();
    assert!(
        regex::Regex::new(r"^Compacted: \d+ → \d+ tokens \(\d+% saved\)$")
            .unwrap()
            .is_match(line.trim_end()),
        "{line}"
    );
    let summaries = world.summary_requests();
    assert!(
        summaries.iter().any(|body| body
            .to_string()
            .contains("Additional focus: the parser work")),
        "{summaries:?}"
    );
    let file = world.session_files().remove(0);
    assert_eq!(count_type(&world.entries(&file), "compaction"), 1);
    tmux.wait_idle(5);

    // A compaction cancelled with Ctrl-C writes nothing, and the chat goes on.
    world.answer(long("Answer four", 1200));
    tmux.line("fourth task");
    tmux.wait_for("Answer four.");
    tmux.wait_idle(6);
    world.summary_delay(Duration::from_secs(30));
    tmux.line("/compact");
    tmux.wait_for("Compacting…");
    tmux.keys(&["C-c"]);
    tmux.wait_for("Compaction cancelled (nothing was written)");
    assert_eq!(count_type(&world.entries(&file), "compaction"), 1);
    tmux.wait_idle(7);
    world.summary_delay(Duration::ZERO);
    world.answer(text("Answer five, after the cancel.", 1300));
    tmux.line("fifth task");
    tmux.wait_for("Answer five, after the cancel.");
    tmux.wait_idle(8);

    // Back to the fourth prompt with a summary of the branch left behind.
    let entries = world.entries(&file);
    let fourth = entries
        .iter()
        .find(|entry| entry["message"]["content"][0]["text"] == "fourth task")
        .unwrap();
    let id = fourth["id"].as_str().unwrap();
    tmux.line(&format!("/tree {id} --summarize"));
    let screen = tmux.wait_for("the branch left behind is summarized in");
    assert!(screen.contains("Moved back"), "{screen}");
    // The user message is back on the input line for editing.
    tmux.wait_input_line("> fourth task");
    tmux.keys(&["C-u"]);
    tmux.line("/tree --list");
    let screen = tmux.wait_for("branch summary: ");
    assert!(
        screen.contains(&format!("├ {id} user: fourth task")),
        "{screen}"
    );
    let entries = world.entries(&file);
    assert_eq!(count_type(&entries, "branch_summary"), 1);
    let summary = entries
        .iter()
        .find(|entry| entry["type"] == "branch_summary")
        .unwrap();
    assert!(
        summary["summary"]
            .as_str()
            .unwrap()
            .contains("SUMMARY-FROM-MOCK"),
        "{summary}"
    );
    assert_eq!(
        summary["parentId"], fourth["parentId"],
        "attached where the branch starts"
    );
    let last = world.summary_requests().pop().unwrap().to_string();
    assert!(
        last.contains("fifth task"),
        "the branch summary reads the branch left: {last}"
    );

    // Esc cancels a compaction as Ctrl-C does, and keys typed while the agent works come back on
    // the input line instead of being lost.
    world.answer(long("Answer six", 1000));
    tmux.line("sixth task");
    tmux.wait_for("Answer six.");
    world.summary_delay(Duration::from_secs(30));
    tmux.line("/compact");
    tmux.wait_for("Compacting…  Esc or Ctrl-C to cancel");
    tmux.keys(&["-l", "next idea"]);
    // The keys are shown as typed ahead before the Escape goes (waited for, not slept on).
    tmux.wait_for("next idea");
    tmux.keys(&["Escape"]);
    tmux.wait_for_count("Compaction cancelled (nothing was written)", 2);
    tmux.wait_input_line("> next idea");
    assert_eq!(count_type(&world.entries(&file), "compaction"), 1);
}

/// Text of about `tokens` tokens (four characters a token), starting with `label`.
fn filler(label: &str, tokens: u64) -> String {
    let sentence = "The parser reads tokens, builds the tree and reports errors with their spans. ";
    let repeats = (tokens * 4).div_ceil(sentence.len() as u64);
    format!("{label}. {}", sentence.repeat(repeats as usize))
}

/// Compaction at window − reserve, then recovery from an overflow. The numbers are measured from
/// the requests the chat sends (the system prompt and the tools' descriptions weigh what they
/// weigh) and each usage is the size of the request answered, so a tool description that grows or
/// shrinks changes nothing here. The window leaves room: the threshold is crossed by hundreds of
/// tokens, and the request that crosses it is still well under what may be sent.
#[test]
fn chat_compacts_at_the_threshold_and_recovers_an_overflow() {
    require_tmux!();
    const WINDOW: u64 = 16_384;
    const RESERVE: u64 = 6_000;
    let threshold = WINDOW - RESERVE;
    let world = World::new(
        WINDOW,
        json!({"reserveTokens": RESERVE, "keepRecentTokens": 100}),
    );
    world.answer_measured("Answer one.".to_owned());
    let tmux = world.start("--yes");
    tmux.wait_for("(16384-token window)");
    tmux.wait_idle(1);
    tmux.line("one");
    tmux.wait_idle(2);
    // The first request is the system prompt, the tools and a word: what every request carries.
    let first = request_tokens(&world.chat_requests()[0]);
    assert!(
        first + 3_000 < threshold,
        "the system prompt and tools ({first} tokens) leave too little of the window: raise WINDOW"
    );
    // The second answer is long: the request after it is some 800 tokens over the threshold, its
    // usage under it (no compaction yet).
    world.answer_measured(filler("Answer two", threshold + 800 - first - 60));
    tmux.line("two");
    tmux.wait_idle(3);
    let second = request_tokens(&world.chat_requests()[1]);
    assert!(second + 300 < threshold, "under the threshold: {second}");
    let file = world.session_files().remove(0);
    assert_eq!(count_type(&world.entries(&file), "compaction"), 0);

    // The third reply's usage is over window − reserve: the engine compacts after the run, with a
    // spinner.
    world.summary_delay(Duration::from_millis(1500));
    world.answer_measured("Answer three.".to_owned());
    tmux.line("three");
    let screen = tmux.wait_for("Compacting… (context near the window)");
    assert!(screen.contains("Answer three."), "{screen}");
    let third = request_tokens(&world.chat_requests()[2]);
    assert!(third > threshold + 300, "over the threshold: {third}");
    let screen = tmux.wait_for("Compacted: ");
    assert!(
        !screen.contains("Compacting…"),
        "the spinner line is cleared: {screen}"
    );
    assert!(
        screen.contains("Answer three."),
        "the screen is not cleared: {screen}"
    );
    tmux.wait_idle(4);
    world.summary_delay(Duration::ZERO);
    assert_eq!(count_type(&world.entries(&file), "compaction"), 1);

    // The provider rejects the next request as too long: compact, then retry by itself.
    world.answer_measured("Answer three-b.".to_owned());
    tmux.line("three-b");
    tmux.wait_idle(5);
    world.answer(overflow_of(WINDOW));
    world.answer_measured("Recovered after the overflow.".to_owned());
    tmux.line("four");
    let screen = tmux.wait_for("Recovered after the overflow.");
    assert!(
        screen.contains("The request did not fit the model's context window"),
        "{screen}"
    );
    let retried = screen
        .lines()
        .find(|line| line.contains("(context overflow; retrying)"))
        .unwrap_or_else(|| panic!("no overflow compaction line:\n{screen}"));
    assert!(retried.starts_with("Compacted: "), "{retried}");
    let entries = world.entries(&file);
    assert_eq!(count_type(&entries, "compaction"), 2);
    let requests = world.chat_requests();
    let retry = requests.last().unwrap();
    let sent = retry["messages"].to_string();
    assert!(
        sent.contains("SUMMARY-FROM-MOCK"),
        "the retry carries the summary"
    );
    assert!(sent.contains("\"four\""), "and the prompt: {sent}");
    assert!(
        !sent.contains("maximum context length"),
        "never the error reply"
    );
}

/// `compaction_failed` on the chat's status line: a `/compact` whose summary the provider refuses
/// says so and that nothing was written; an overflow whose summary is refused drops the oldest
/// messages without one (the `truncate` fallback) and says the turn is retried, which it is.
#[test]
fn chat_says_when_a_compaction_failed_and_whether_the_turn_is_retried() {
    require_tmux!();
    let world = World::new(8192, json!({"keepRecentTokens": 60}));
    for label in ["Answer one", "Answer two", "Answer three"] {
        world.answer(long(label, 1000));
    }
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    for (number, prompt) in ["first task", "second task", "third task"]
        .iter()
        .enumerate()
    {
        tmux.line(prompt);
        tmux.wait_idle(number + 2);
    }
    world.refuse_summaries(true);
    tmux.line("/compact");
    let screen = tmux.wait_for("(nothing was written)");
    let line = screen
        .lines()
        .find(|line| line.contains("(nothing was written)"))
        .unwrap();
    assert!(
        line.starts_with("Compaction failed: Summarization failed: ")
            && line.contains("summaries are not allowed on this key"),
        "{line}"
    );
    let file = world.session_files().remove(0);
    assert_eq!(count_type(&world.entries(&file), "compaction"), 0);
    tmux.wait_idle(5);

    // The provider rejects the next request as too long and refuses the summary.
    world.answer(overflow());
    world.answer(text("Answered after dropping the oldest messages.", 900));
    tmux.line("fourth task");
    let screen = tmux.wait_for("Answered after dropping the oldest messages.");
    assert!(
        screen.contains("The summary failed, so the oldest messages were dropped without one; retrying the turn: Summarization failed: "),
        "{screen}"
    );
    assert_eq!(count_type(&world.entries(&file), "compaction"), 1);
}

#[test]
fn chat_recovers_an_overflow_after_a_tool_result_and_holds_its_session() {
    require_tmux!();
    let world = World::new(8192, json!({}));
    std::fs::write(
        world.project.join("big.txt"),
        "big file line with filler text 0123456789\n".repeat(800),
    )
    .unwrap();
    world.answer(text("Hello.", 300));
    world.answer(tool_call("call_big", "read", json!({"path": "big.txt"})));
    world.answer(overflow());
    world.answer(text("Read it after the compaction.", 900));
    let tmux = world.start("--yes");
    tmux.wait_for("(8192-token window)");
    tmux.wait_idle(1);
    tmux.line("hello");
    tmux.wait_idle(2);
    tmux.line("Please read big.txt");
    let screen = tmux.wait_for("Read it after the compaction.");
    assert!(
        screen.contains("(context overflow; retrying)"),
        "the overflow after the tool result is compacted and retried: {screen}"
    );
    tmux.wait_idle(3);
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 4, "the retry reached the server");
    let retry = requests.last().unwrap()["messages"].to_string();
    assert!(retry.contains("SUMMARY-FROM-MOCK"), "{retry}");
    assert!(!retry.contains("maximum context length"), "{retry}");

    // Another process may not write the session while the chat has it open.
    let file = world.session_files().remove(0);
    let output = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["name", file.to_str().unwrap(), "elsewhere"])
        .env("CTXKIT_HOME", world.home.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(5), "{output:?}");
    world.answer(text("Still here.", 900));
    tmux.line("still there?");
    tmux.wait_for("Still here.");
    let names = world
        .entries(&file)
        .iter()
        .filter(|entry| entry["type"] == "session_info")
        .count();
    assert_eq!(names, 0, "the refused write left nothing");
}

/// The text of the last user message of a chat request.
pub(crate) fn last_user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .map(|message| message["content"].to_string())
        .unwrap_or_default()
}

#[test]
fn chat_slash_commands_reach_resources_the_tree_and_sessions() {
    require_tmux!();
    let world = World::new(100_000, json!({"keepRecentTokens": 60}));
    let ctxkit_dir = world.project.join(".ctxkit");
    std::fs::create_dir_all(ctxkit_dir.join("prompts")).unwrap();
    std::fs::create_dir_all(ctxkit_dir.join("skills/greet")).unwrap();
    std::fs::write(
        ctxkit_dir.join("prompts/review.md"),
        "---\ndescription: Review a file\n---\nReview $1 carefully.\n",
    )
    .unwrap();
    std::fs::write(
        ctxkit_dir.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greets people\n---\nSay hello warmly.\n",
    )
    .unwrap();
    world.answer(tool_call(
        "call_rm",
        "bash",
        json!({"command": "rm -rf build"}),
    ));
    world.answer(long("Fine, not running it", 800));
    world.trust_project();
    let tmux = world.start("");
    tmux.wait_idle(1);

    // A declined command is reported to the model as an error result.
    tmux.line("clean up");
    tmux.wait_for("Run `rm -rf build`? [y]es / [n]o / [a]lways:");
    tmux.answer("n");
    tmux.wait_for("Fine, not running it.");
    let requests = world.chat_requests();
    assert_eq!(
        requests[1]["messages"][3]["content"],
        "The user declined to run this call"
    );

    // Prompt templates and skills from the resource loader.
    world.answer(text("Reviewed.", 900));
    tmux.line("/review src/lib.rs");
    tmux.wait_for("Reviewed.");
    assert_eq!(
        last_user_text(world.chat_requests().last().unwrap()),
        "\"Review src/lib.rs carefully.\""
    );
    world.answer(text("Hello Bob.", 950));
    tmux.line("/skill:greet Bob");
    tmux.wait_for("Hello Bob.");
    let sent = last_user_text(world.chat_requests().last().unwrap());
    assert!(
        sent.contains("<skill name=\\\"greet\\\"")
            && sent.contains("Say hello warmly.")
            && sent.ends_with("Bob\""),
        "{sent}"
    );

    // Name, label, pin, context, help, unknown commands.
    let file = world.session_files().remove(0);
    let first = world
        .entries(&file)
        .into_iter()
        .find(|entry| entry["message"]["role"] == "user")
        .unwrap();
    let first_id = first["id"].as_str().unwrap().to_owned();
    tmux.line("/name Feature X");
    tmux.wait_for("Named the session “Feature X”");
    tmux.line(&format!("/label {first_id} the start"));
    tmux.wait_for(&format!("Labelled {first_id} “the start”"));
    tmux.line("/tree --list");
    tmux.wait_for(&format!("{first_id} user: clean up [the start]"));
    tmux.line("/pin Always use tabs");
    tmux.wait_for("kept verbatim past every compaction");
    tmux.line("/context");
    tmux.wait_for("Context [");
    tmux.wait_for("A compaction now would summarize");
    tmux.line("/help");
    tmux.wait_for("/undo-compact");
    tmux.line("/nope");
    tmux.wait_for("Unknown command `/nope`");
    tmux.line("/model");
    tmux.wait_for("Switch to which model?");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Model: mock/test-model (context window 100000)");

    // Compaction history and undo.
    tmux.line("/compact");
    tmux.wait_for("Compacted: ");
    tmux.line("/compactions");
    tmux.wait_for("by mock/test-model");
    tmux.line("/undo-compact");
    tmux.wait_for("Undid compaction");
    world.answer(text("Pinned text seen.", 990));
    tmux.line("still tabs?");
    tmux.wait_for("Pinned text seen.");
    assert!(
        world.chat_requests().last().unwrap()["messages"]
            .to_string()
            .contains("Always use tabs"),
        "the pin reaches the model"
    );

    // Ctrl-C interrupts a model call; the reply is stored as aborted.
    world.answer(text("too late", 999).set_delay(Duration::from_secs(30)));
    let sent = world.chat_requests().len();
    tmux.line("slow one");
    tmux.wait_for("Thinking…");
    // The spinner shows before the request reaches the mock: interrupt only once the mock holds
    // it, or the slow answer stays queued for the next prompt.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while world.chat_requests().len() == sent {
        assert!(
            std::time::Instant::now() < deadline,
            "the slow request never arrived"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    tmux.keys(&["C-c"]);
    tmux.wait_for("Interrupted");
    // The aborted reply is recorded as the turn ends, which a loaded machine may show after the
    // notice: waited for, not read at once.
    let aborted = || {
        world
            .entries(&file)
            .into_iter()
            .filter(|entry| entry["message"]["stopReason"] == "aborted")
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while aborted() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(aborted(), 1);

    // Fork, new session, resume by number.
    tmux.line(&format!("/fork {first_id}"));
    tmux.wait_for("Forked into a new session:");
    tmux.wait_input_line("> clean up");
    tmux.keys(&["C-u"]);
    tmux.line("/new");
    tmux.wait_for("New session");
    world.answer(text("Fresh start.", 100));
    tmux.line("hello again");
    tmux.wait_for("Fresh start.");
    tmux.line("/resume");
    let (_, number) = tmux.resume_list(|line| line.contains("Feature X"));
    tmux.pick_row(number);
    tmux.wait_for("Continuing session “Feature X”");
    assert!(world.session_files().len() >= 2);
}

/// Issue 33, item 9: a cloned project's `chat.confirmBash: false` switched off the question, and
/// the model's `bash touch MARKER` ran without asking.
#[test]
fn an_untrusted_project_cannot_switch_off_the_bash_question() {
    require_tmux!();
    let world = World::new(100_000, json!({}));
    world.write_project_settings(&json!({"chat": {"confirmBash": false}}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "touch MARKER"}),
    ));
    world.answer(text("Declined, as asked.", 300));
    let tmux = world.start("");
    let screen = tmux.wait_for("ctxkit chat · mock/test-model");
    assert!(
        screen.contains("warning: ignored `chat.confirmBash`"),
        "{screen}"
    );
    tmux.wait_idle(1);
    tmux.line("touch the marker");
    tmux.wait_for("Run `touch MARKER`? [y]es / [n]o / [a]lways:");
    tmux.answer("n");
    tmux.wait_for("Declined, as asked.");
    assert!(!world.project.join("MARKER").exists());
    tmux.line("/quit");
}

/// Issue 33, as a new user meets it: a cloned project links to the user's ctxkit settings, and a
/// model reads the link, looks for keys in ctxkit's own environment, and writes outside the project.
/// Nothing leaves, nothing is written unasked, and the screen says why.
#[test]
fn chat_keeps_the_agent_in_the_project_and_keys_out_of_the_conversation() {
    require_tmux!();
    let world = World::new(100_000, json!({}));
    let settings_key = "sk-settings-chat-0123456789";
    let env_key = "sk-environment-chat-0123456789";
    let settings_path = world.home.path().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).unwrap()).unwrap();
    settings["llm"]["apiKey"] = json!(settings_key);
    std::fs::write(&settings_path, settings.to_string()).unwrap();
    std::fs::create_dir_all(world.project.join("docs")).unwrap();
    std::os::unix::fs::symlink(&settings_path, world.project.join("docs/setup.md")).unwrap();
    world.answer(tool_call(
        "call_1",
        "read",
        json!({"path": "docs/setup.md"}),
    ));
    world.answer(tool_call(
        "call_2",
        "bash",
        json!({"command": "tr '\\0' '\\n' < /proc/$PPID/environ | grep API_KEY; echo scanned"}),
    ));
    // Outside the project and outside ctxkit's home (the test's project lies in the home).
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("outside.txt");
    world.answer(tool_call(
        "call_3",
        "write",
        json!({"path": outside.display().to_string(), "content": "pwned"}),
    ));
    world.answer(text("Nothing to see.", 400));
    let mut command = format!("cd '{}' && exec env", world.project.display());
    for name in crate::PROVIDER_VARIABLES {
        command.push_str(&format!(" -u {name}"));
    }
    command.push_str(&format!(
        " HOME='{home}' CTXKIT_HOME='{home}' MOCK_API_KEY='{env_key}' '{bin}' chat",
        home = world.home.path().display(),
        bin = env!("CARGO_BIN_EXE_ctxkit"),
    ));
    let tmux = Tmux::start(&command);
    tmux.wait_idle(1);
    tmux.line("set up the project");
    tmux.wait_for("? [y]es / [n]o / [a]lways:");
    tmux.answer("y");
    let screen = tmux.wait_for("outside the project? (always: anything under");
    assert!(
        screen.contains("`write`: Write `") && screen.contains("outside.txt`"),
        "{screen}"
    );
    tmux.answer("n");
    let screen = tmux.wait_for("Nothing to see.");
    assert!(
        screen.contains(
            "`read docs/setup.md` refused: ctxkit's own settings, credentials, trust list and \
             sessions are never readable by tools"
        ),
        "{screen}"
    );
    assert!(screen.contains("was not approved"), "{screen}");
    tmux.line("/quit");
    drop(tmux);
    assert!(!outside.exists());
    let requests = world.chat_requests();
    assert_eq!(requests.len(), 4);
    let environ = &requests[2]["messages"];
    let result = environ.as_array().unwrap().last().unwrap();
    assert_eq!(result["content"], "scanned", "{result}");
    let files = world.session_files();
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    for secret in [settings_key, env_key] {
        assert!(!stored.contains(secret), "{secret} in the session file");
        for request in &requests {
            assert!(!request.to_string().contains(secret), "{secret} sent");
        }
    }
}

/// Issue 43: `ctxkit chat --store postgres://… --session ID` continues a session an agent wrote
/// through `serve` (which gave the lease up when it ended); what the chat appends is in the
/// database afterwards, after the serve's entries, on one chain.
#[test]
fn chat_continues_a_database_session_that_serve_wrote() {
    require_tmux!();
    let Some(database) = super::store::database() else {
        return;
    };
    let world = World::new(100_000, json!({}));
    let mut serve = super::web::StdioServer::start(world.home.path(), Some(&database));
    let created = serve.call(
        "session.create",
        json!({"cwd": world.project.display().to_string()}),
    );
    let id = created["session_id"].as_str().unwrap().to_owned();
    serve.turn(
        "question-from-serve",
        "answer-from-serve",
        1_800_000_000_000,
    );
    serve.call("shutdown", json!({}));
    drop(serve);

    world.answer(text("Continuing with what serve wrote.", 300));
    let tmux = world.start(&format!("--store '{database}' --session {id}"));
    let screen = tmux.wait_idle(1);
    assert!(screen.contains("question-from-serve"), "{screen}");
    // The session is named by its id and store, not by the private copy the chat works on.
    let shown = format!("): {id} in postgres://");
    assert!(screen.contains(&shown), "{screen}");
    assert!(!screen.contains("ctxkit-session-"), "{screen}");
    tmux.line("and now from chat");
    tmux.wait_for("Continuing with what serve wrote.");
    let requests = world.chat_requests();
    let last = requests.last().unwrap();
    assert_eq!(
        last["messages"][1]["content"], "question-from-serve",
        "{last}"
    );
    tmux.line("/quit");
    // The chat commits as it goes (every second) and once more as it ends.
    let out = world.home.path().join("exported.jsonl");
    let mut entries = Vec::new();
    for _ in 0..50 {
        let _ = std::fs::remove_file(&out);
        let exported = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
            .args(["--store", &database, "store", "export", &id, "-o"])
            .arg(&out)
            .env("CTXKIT_HOME", world.home.path())
            .output()
            .unwrap();
        assert!(exported.status.success(), "{exported:?}");
        entries = world.entries(&out);
        if entries.len() >= 4 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(tmux);
    let texts: Vec<String> = entries
        .iter()
        .filter(|entry| entry["type"] == "message")
        .map(|entry| entry["message"]["content"].to_string())
        .collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(texts[2].contains("and now from chat"), "{texts:?}");
    assert!(
        texts[3].contains("Continuing with what serve wrote."),
        "{texts:?}"
    );
    for pair in entries.windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"], "one chain: {pair:?}");
    }
}
