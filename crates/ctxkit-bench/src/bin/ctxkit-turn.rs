//! `ctxkit-turn`: the cost of one agent turn over `ctxkit serve --stdio` on a long session (issue 43,
//! `docs/benchmarks.md`). Opens a copy of SESSION (or, with `--store postgres://…`, imports it into
//! the database and opens it by id), then runs TURNS turns as an agent keeping its own loop does:
//! `check.before_prompt`, `message.append` (user), `view.get`, `message.append` (assistant),
//! `check.after_run`, each awaited before the next. Prints p50/p99 per turn and per step, the first
//! turns apart (they read the context's messages for the first time). Loopback only; the session
//! given is never written (the copy is, or the database's copy).

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use clap::Parser;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

/// The cost of an agent's turn over `ctxkit serve --stdio`.
#[derive(Debug, Parser)]
struct Args {
    /// The session to run the turns on (`ctxkit-gen session --entries 100000 --seed 1`).
    session: PathBuf,
    /// Turns measured.
    #[arg(long, default_value_t = 200)]
    turns: usize,
    /// Turns run first and reported apart (the first view reads the context's messages).
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// A database store (`postgres://…`): the session is imported into it and opened by id.
    #[arg(long)]
    store: Option<String>,
    /// The `ctxkit` binary (default: beside this program).
    #[arg(long)]
    ctxkit: Option<PathBuf>,
    /// The model's context window (`model.set`).
    #[arg(long, default_value_t = 200_000)]
    context_window: u64,
}

/// The steps of a turn, in order.
const STEPS: [&str; 5] = [
    "check.before_prompt",
    "message.append user",
    "view.get",
    "message.append assistant",
    "check.after_run",
];

/// A response line: only what the client checks is read (the view's messages are skipped).
#[derive(Deserialize)]
struct Response {
    id: Option<u64>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    result: Option<IgnoredAny>,
}

/// `ctxkit serve --stdio` and its pipes.
struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(ctxkit: &Path, home: &Path, store: Option<&str>) -> Result<Self> {
        let mut command = Command::new(ctxkit);
        command
            .args(["serve", "--stdio"])
            .env("CTXKIT_HOME", home)
            .env("CTXKIT_OFFLINE", "1")
            .env_remove("CTXKIT_STORE")
            .current_dir(home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(store) = store {
            command.env("CTXKIT_STORE", store);
        }
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start `{}`", ctxkit.display()))?;
        let input = child.stdin.take().context("no stdin")?;
        let output = BufReader::with_capacity(1 << 20, child.stdout.take().context("no stdout")?);
        Ok(Self {
            child,
            input,
            output,
            next_id: 0,
            line: String::new(),
        })
    }

    /// Sends one request and waits for its response (notifications are skipped); returns the
    /// response line's length. An error response fails.
    fn call(&mut self, method: &str, params: &Value) -> Result<usize> {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.input, "{request}")?;
        self.input.flush()?;
        loop {
            self.line.clear();
            let read = self.output.read_line(&mut self.line)?;
            ensure!(read > 0, "the server closed its output during `{method}`");
            if !self.line.contains("\"id\"") {
                continue; // a notification
            }
            let response: Response = serde_json::from_str(&self.line)
                .with_context(|| format!("unreadable response to `{method}`"))?;
            if response.id != Some(id) {
                continue;
            }
            if let Some(error) = response.error {
                bail!("`{method}` failed: {error}");
            }
            ensure!(response.result.is_some(), "`{method}`: no result");
            return Ok(self.line.len());
        }
    }

    /// Like [`Server::call`], returning the result as JSON (small responses only).
    fn call_value(&mut self, method: &str, params: &Value) -> Result<Value> {
        self.call(method, params)?;
        let value: Value = serde_json::from_str(&self.line)?;
        Ok(value["result"].clone())
    }
}

fn user(turn: usize) -> Value {
    json!({"message": {"role": "user",
        "content": format!("turn {turn}: look at src/parser.rs and fix the failing case"),
        "timestamp": 1_900_000_000_000_i64 + 2 * turn as i64}})
}

fn assistant(turn: usize) -> Value {
    let input = 20_000 + 60 * turn as u64;
    json!({"message": {
        "role": "assistant",
        "content": [{"type": "text", "text": format!("Turn {turn}: changed the parser and ran the tests; all pass.")}],
        "api": "openai-completions", "provider": "mock", "model": "coder",
        "usage": {"input": input, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + 40,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": 1_900_000_000_001_i64 + 2 * turn as i64,
    }})
}

/// One turn's step durations, and the view's size in bytes.
fn turn(server: &mut Server, index: usize) -> Result<([Duration; 5], usize)> {
    let mut times = [Duration::ZERO; 5];
    let mut view_bytes = 0;
    for (step, time) in times.iter_mut().enumerate() {
        let started = Instant::now();
        let bytes = match step {
            0 => server.call("check.before_prompt", &Value::Null)?,
            1 => server.call("message.append", &user(index))?,
            2 => server.call("view.get", &Value::Null)?,
            3 => server.call("message.append", &assistant(index))?,
            _ => server.call("check.after_run", &Value::Null)?,
        };
        *time = started.elapsed();
        if step == 2 {
            view_bytes = bytes;
        }
    }
    Ok((times, view_bytes))
}

fn percentile(sorted: &[Duration], share: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * share).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn milliseconds(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

fn say(text: &str) {
    let _ = writeln!(std::io::stdout(), "{text}");
}

/// Imports `session` into the database `store`; returns its id.
fn import(ctxkit: &Path, home: &Path, store: &str, session: &Path) -> Result<String> {
    let output = Command::new(ctxkit)
        .args(["store", "import"])
        .arg(session)
        .env("CTXKIT_HOME", home)
        .env("CTXKIT_STORE", store)
        .output()
        .with_context(|| format!("cannot start `{}`", ctxkit.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    ensure!(
        output.status.success(),
        "`ctxkit store import` failed: {text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // "Imported ID (N entries) from FILE"
    text.split_whitespace()
        .nth(1)
        .map(str::to_owned)
        .with_context(|| format!("unexpected output of `ctxkit store import`: {text}"))
}

fn main() -> Result<()> {
    let args = Args::parse();
    let ctxkit = match &args.ctxkit {
        Some(path) => path.clone(),
        None => std::env::current_exe()?
            .parent()
            .context("no folder")?
            .join("ctxkit"),
    };
    let home = tempfile::tempdir()?;
    let open_params = match &args.store {
        Some(store) => {
            let started = Instant::now();
            let id = import(&ctxkit, home.path(), store, &args.session)?;
            say(&format!(
                "imported {} into the database as {id} in {:.1} s",
                args.session.display(),
                started.elapsed().as_secs_f64()
            ));
            json!({"id": id})
        }
        None => {
            let copy = home.path().join("session.jsonl");
            std::fs::copy(&args.session, &copy)
                .with_context(|| format!("cannot copy `{}`", args.session.display()))?;
            json!({"path": copy})
        }
    };
    let mut server = Server::start(&ctxkit, home.path(), args.store.as_deref())?;
    let started = Instant::now();
    let info = server.call_value("session.open", &open_params)?;
    say(&format!(
        "session.open: {} ({} entries)",
        milliseconds(started.elapsed()),
        info["entries"]
    ));
    let model = json!({"model": {"provider": "mock", "id": "coder", "context_window": args.context_window}});
    server.call("model.set", &model)?;
    for index in 0..args.warmup {
        let (times, view_bytes) = turn(&mut server, index)?;
        let total: Duration = times.iter().sum();
        say(&format!(
            "warm-up turn {}: {} (view.get {}, {view_bytes} bytes)",
            index + 1,
            milliseconds(total),
            milliseconds(times[2])
        ));
    }
    let mut steps: [Vec<Duration>; 5] = Default::default();
    let mut turns = Vec::with_capacity(args.turns);
    let mut view_bytes = 0;
    for index in args.warmup..args.warmup + args.turns {
        let (times, bytes) = turn(&mut server, index)?;
        view_bytes = bytes;
        turns.push(times.iter().sum());
        for (step, time) in times.into_iter().enumerate() {
            steps[step].push(time);
        }
    }
    server.call("shutdown", &Value::Null)?;
    report(&args, &mut turns, &mut steps, view_bytes);
    Ok(())
}

fn report(args: &Args, turns: &mut [Duration], steps: &mut [Vec<Duration>; 5], view_bytes: usize) {
    let backend = if args.store.is_some() {
        "PostgreSQL"
    } else {
        "files"
    };
    say(&format!(
        "{} turns on {} ({backend}); the last view {view_bytes} bytes",
        turns.len(),
        args.session.display()
    ));
    say("| step | p50 | p99 |");
    say("|---|---:|---:|");
    turns.sort_unstable();
    say(&format!(
        "| turn | {} | {} |",
        milliseconds(percentile(turns, 0.5)),
        milliseconds(percentile(turns, 0.99))
    ));
    for (name, times) in STEPS.iter().zip(steps.iter_mut()) {
        times.sort_unstable();
        say(&format!(
            "| {name} | {} | {} |",
            milliseconds(percentile(times, 0.5)),
            milliseconds(percentile(times, 0.99))
        ));
    }
}
