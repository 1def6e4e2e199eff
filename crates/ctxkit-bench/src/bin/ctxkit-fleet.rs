//! `ctxkit-fleet`: the fleet load test of issue 43 (`docs/benchmarks.md`). Starts two
//! `ctxkit serve --listen` instances on loopback sharing one PostgreSQL database, runs CLIENTS
//! concurrent WebSocket clients of TURNS turns each (check, append user, view, append assistant,
//! check), SIGKILLs the first instance once half the turns are done, and lets its clients reconnect
//! to the second, which takes their sessions over once their leases expire. Then it checks, per
//! session: every acknowledged entry is in the database, in order, on one chain (no second writer
//! ever appended), the export is `ctxkit check` clean, and reports turns per second and p50/p99 per
//! turn. Bounded in time (`--deadline-seconds`); loopback only.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use clap::Parser;
use ctxkit_store::{AnyStore, SessionStore as _, StoreUrl};
use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// The fleet load test: two `serve --listen` on one PostgreSQL, one killed midway.
#[derive(Debug, Parser)]
struct Args {
    /// The database both instances share (default: `CTXKIT_TEST_DATABASE_URL`).
    #[arg(long)]
    database: Option<String>,
    #[arg(long, default_value_t = 50)]
    clients: usize,
    #[arg(long, default_value_t = 200)]
    turns: usize,
    /// The session lease of the instances (`store.leaseSeconds`): how long a killed instance's
    /// sessions wait before the other takes them over.
    #[arg(long, default_value_t = 5)]
    lease_seconds: u64,
    /// Do not kill an instance (a baseline run).
    #[arg(long)]
    no_kill: bool,
    /// The whole run's limit.
    #[arg(long, default_value_t = 900)]
    deadline_seconds: u64,
    /// The `ctxkit` binary (default: beside this program).
    #[arg(long)]
    ctxkit: Option<PathBuf>,
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One `ctxkit serve --listen` child.
struct Instance {
    child: Child,
    address: String,
    _home: tempfile::TempDir,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_instance(ctxkit: &Path, database: &str, lease_seconds: u64) -> Result<Instance> {
    let home = tempfile::tempdir()?;
    std::fs::write(
        home.path().join("settings.json"),
        json!({"store": {"leaseSeconds": lease_seconds}}).to_string(),
    )?;
    let mut child = Command::new(ctxkit)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("CTXKIT_HOME", home.path())
        .env("CTXKIT_STORE", database)
        .env("CTXKIT_OFFLINE", "1")
        .current_dir(home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start `{}`", ctxkit.display()))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)?;
    // "Listening on ws://127.0.0.1:PORT/rpc (health: …)"
    let address = line
        .split_whitespace()
        .find(|word| word.starts_with("ws://"))
        .with_context(|| format!("unexpected first line: {line}"))?
        .to_owned();
    Ok(Instance {
        child,
        address,
        _home: home,
    })
}

/// What one client saw.
#[derive(Debug, Default)]
struct ClientReport {
    session_id: String,
    /// Entry ids the server acknowledged, in order.
    acknowledged: Vec<String>,
    /// Latencies of the turns that completed, microseconds (a failover is reported apart).
    turns_us: Vec<u64>,
    reconnects: u32,
    /// The longest reconnect (connect + open until the lease was taken over), ms.
    failover_ms: u64,
}

/// A connection to one of the instances, with its request counter.
struct Connection {
    socket: Socket,
    next_id: u64,
}

impl Connection {
    async fn open(address: &str) -> Result<Self> {
        let (socket, _) = tokio_tungstenite::connect_async(address).await?;
        Ok(Self { socket, next_id: 0 })
    }

    /// The result of `method`, or the error object as `Err`. A lost connection is `Err` too.
    async fn call(&mut self, method: &str, params: Value) -> Result<Result<Value, Value>> {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.socket.send(Message::text(request.to_string())).await?;
        loop {
            let message = tokio::time::timeout(Duration::from_secs(60), self.socket.next())
                .await
                .context("no answer within 60 s")?
                .context("the connection closed")??;
            let Message::Text(text) = message else {
                if matches!(message, Message::Close(_)) {
                    bail!("the server closed the connection");
                }
                continue;
            };
            let value: Value = serde_json::from_str(&text)?;
            if value["id"] == json!(id) {
                return Ok(match value.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(value["result"].clone()),
                });
            }
        }
    }
}

fn assistant(turn: usize, input_tokens: u64) -> Value {
    json!({"message": {
        "role": "assistant",
        "content": [{"type": "text", "text": format!("Turn {turn}: changed the parser and ran the tests; all pass.")}],
        "api": "openai-completions", "provider": "mock", "model": "coder",
        "usage": {"input": input_tokens, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input_tokens + 40,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": 1_763_900_000_000_i64 + turn as i64,
    }})
}

fn user(client: usize, turn: usize) -> Value {
    json!({"message": {"role": "user",
        "content": format!("client {client}, turn {turn}: look at src/parser.rs and fix the failing case"),
        "timestamp": 1_763_900_000_000_i64 + turn as i64}})
}

/// One turn: check, append user, view, append assistant, check. Returns the acknowledged ids.
async fn turn(connection: &mut Connection, client: usize, turn: usize) -> Result<Vec<String>> {
    let mut acknowledged = Vec::new();
    let answer = |result: Result<Value, Value>| -> Result<Value> {
        result.map_err(|error| anyhow::anyhow!("error answer: {error}"))
    };
    answer(connection.call("check.before_prompt", Value::Null).await?)?;
    let appended = answer(
        connection
            .call("message.append", user(client, turn))
            .await?,
    )?;
    acknowledged.push(appended["entry_id"].as_str().unwrap_or_default().to_owned());
    answer(connection.call("view.get", Value::Null).await?)?;
    let appended = answer(
        connection
            .call("message.append", assistant(turn, 1_000 + 60 * turn as u64))
            .await?,
    )?;
    acknowledged.push(appended["entry_id"].as_str().unwrap_or_default().to_owned());
    answer(connection.call("check.after_run", Value::Null).await?)?;
    Ok(acknowledged)
}

/// Connects to the first instance that answers, starting at `preferred`, and opens `session_id`,
/// waiting while another writer's lease runs.
async fn reconnect(
    addresses: &[String],
    preferred: usize,
    session_id: &str,
    deadline: Instant,
) -> Result<Connection> {
    let mut attempt = 0;
    loop {
        ensure!(
            Instant::now() < deadline,
            "the deadline passed while reconnecting"
        );
        let address = &addresses[(preferred + attempt) % addresses.len()];
        attempt += 1;
        let Ok(mut connection) = Connection::open(address).await else {
            continue;
        };
        loop {
            match connection
                .call("session.open", json!({"id": session_id}))
                .await
            {
                Ok(Ok(_)) => return Ok(connection),
                Ok(Err(error)) if error["data"]["kind"] == "session_in_use" => {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Ok(Err(error)) => bail!("session.open failed: {error}"),
                Err(_) => break,
            }
        }
    }
}

async fn run_client(
    client: usize,
    addresses: Arc<Vec<String>>,
    turns: usize,
    done: Arc<AtomicU64>,
    deadline: Instant,
) -> Result<ClientReport> {
    let home = client % addresses.len();
    let mut connection = Connection::open(&addresses[home]).await?;
    let created = connection
        .call(
            "session.create",
            json!({"cwd": format!("/fleet/client-{client}")}),
        )
        .await?
        .map_err(|error| anyhow::anyhow!("session.create: {error}"))?;
    let model = json!({"model": {"provider": "mock", "id": "coder", "context_window": 200_000}});
    let _ = connection.call("model.set", model.clone()).await?;
    let mut report = ClientReport {
        session_id: created["session_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        ..ClientReport::default()
    };
    let mut index = 0;
    while index < turns {
        ensure!(Instant::now() < deadline, "the deadline passed");
        let started = Instant::now();
        match turn(&mut connection, client, index).await {
            Ok(ids) => {
                report.acknowledged.extend(ids);
                index += 1;
                done.fetch_add(1, Ordering::Relaxed);
                report.turns_us.push(started.elapsed().as_micros() as u64);
            }
            Err(_) => {
                // The instance died (or the lease was lost): continue on whichever answers, the
                // turn again from its start (what it appended before was acknowledged or not,
                // and the report keeps only what was).
                let failover = Instant::now();
                connection = reconnect(&addresses, home + 1, &report.session_id, deadline).await?;
                let _ = connection.call("model.set", model.clone()).await?;
                report.reconnects += 1;
                report.failover_ms = report
                    .failover_ms
                    .max(failover.elapsed().as_millis() as u64);
            }
        }
    }
    Ok(report)
}

fn say(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout(), "{text}");
}

fn percentile(sorted: &[u64], share: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let index = ((sorted.len() as f64 - 1.0) * share).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// Checks one session in the database against what its client was told; returns its entry count.
async fn verify(
    store: &AnyStore,
    report: &ClientReport,
    ctxkit: &Path,
    work: &Path,
) -> Result<usize> {
    let lines = store.export(&report.session_id).await?;
    let mut ids = Vec::new();
    let mut previous: Option<String> = None;
    for line in &lines.entries {
        let entry: Value = serde_json::from_str(line)?;
        let id = entry["id"].as_str().unwrap_or_default().to_owned();
        let parent = entry["parentId"].as_str().map(str::to_owned);
        // One writer at a time: each entry continues the one before it. Two writers appending
        // from the same leaf would leave two children of one entry.
        ensure!(
            parent == previous,
            "session {}: entry {id} has parent {parent:?}, not the entry before it ({previous:?}): two writers",
            report.session_id
        );
        previous = Some(id.clone());
        ids.push(id);
    }
    let stored: HashSet<&String> = ids.iter().collect();
    let lost: Vec<&String> = report
        .acknowledged
        .iter()
        .filter(|id| !stored.contains(id))
        .collect();
    ensure!(
        lost.is_empty(),
        "session {}: acknowledged entries lost: {lost:?}",
        report.session_id
    );
    let file = work.join(format!("{}.jsonl", report.session_id));
    std::fs::write(&file, lines.to_jsonl())?;
    let check = Command::new(ctxkit)
        .args(["check", "--json"])
        .arg(&file)
        .output()?;
    ensure!(
        check.status.success(),
        "ctxkit check of session {}: {}",
        report.session_id,
        String::from_utf8_lossy(&check.stdout)
    );
    // Entry for entry: the export opens to the same entries the database holds.
    let session = ctxkit_session::Session::open(&file)?;
    ensure!(
        session.entries().len() == ids.len(),
        "the export of {} differs",
        report.session_id
    );
    Ok(ids.len())
}

fn main() -> Result<()> {
    let args = Args::parse();
    let database = args
        .database
        .clone()
        .or_else(|| std::env::var("CTXKIT_TEST_DATABASE_URL").ok())
        .context("pass --database postgres://… (or set CTXKIT_TEST_DATABASE_URL)")?;
    let ctxkit = match &args.ctxkit {
        Some(path) => path.clone(),
        None => std::env::current_exe()?
            .parent()
            .context("no folder")?
            .join("ctxkit"),
    };
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(run(args, database, ctxkit))
}

async fn run(args: Args, database: String, ctxkit: PathBuf) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(args.deadline_seconds);
    let mut first = Some(start_instance(&ctxkit, &database, args.lease_seconds)?);
    let second = start_instance(&ctxkit, &database, args.lease_seconds)?;
    let addresses = Arc::new(vec![
        first
            .as_ref()
            .map(|instance| instance.address.clone())
            .unwrap_or_default(),
        second.address.clone(),
    ]);
    say(&format!(
        "instances: {} and {}; {} clients × {} turns; lease {} s",
        addresses[0], addresses[1], args.clients, args.turns, args.lease_seconds
    ));
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut clients = tokio::task::JoinSet::new();
    for client in 0..args.clients {
        let (addresses, done) = (Arc::clone(&addresses), Arc::clone(&done));
        clients.spawn(run_client(client, addresses, args.turns, done, deadline));
    }
    let total = (args.clients * args.turns) as u64;
    let mut killed_at = None;
    let mut reports = Vec::new();
    while !clients.is_empty() {
        if killed_at.is_none()
            && !args.no_kill
            && done.load(Ordering::Relaxed) >= total / 2
            && let Some(mut instance) = first.take()
        {
            instance.child.kill()?; // SIGKILL
            instance.child.wait()?;
            killed_at = Some(started.elapsed());
            say(&format!(
                "SIGKILL to the first instance after {} turns, {:.1} s",
                done.load(Ordering::Relaxed),
                started.elapsed().as_secs_f64()
            ));
        }
        tokio::select! {
            joined = clients.join_next() => {
                if let Some(joined) = joined {
                    reports.push(joined??);
                }
            }
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    }
    let elapsed = started.elapsed();
    summarize(&reports, elapsed, killed_at, &database, &ctxkit).await
}

async fn summarize(
    reports: &[ClientReport],
    elapsed: Duration,
    killed_at: Option<Duration>,
    database: &str,
    ctxkit: &Path,
) -> Result<()> {
    let mut latencies: Vec<u64> = reports
        .iter()
        .flat_map(|report| report.turns_us.iter().copied())
        .collect();
    latencies.sort_unstable();
    let turns = latencies.len();
    let acknowledged: usize = reports.iter().map(|report| report.acknowledged.len()).sum();
    let reconnects: u32 = reports.iter().map(|report| report.reconnects).sum();
    let failover = reports
        .iter()
        .map(|report| report.failover_ms)
        .max()
        .unwrap_or(0);
    say(&format!(
        "turns: {turns} in {:.1} s = {:.0} turns/s; per turn p50 {:.2} ms, p99 {:.2} ms, max {:.0} ms",
        elapsed.as_secs_f64(),
        turns as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50) as f64 / 1000.0,
        percentile(&latencies, 0.99) as f64 / 1000.0,
        latencies.last().copied().unwrap_or(0) as f64 / 1000.0,
    ));
    if let Some(killed_at) = killed_at {
        say(&format!(
            "kill at {:.1} s: {reconnects} reconnects, longest failover {failover} ms (lease expiry included)",
            killed_at.as_secs_f64()
        ));
    }
    let store = AnyStore::open(&StoreUrl::parse(database)?).await?;
    let work = tempfile::tempdir()?;
    let mut stored = 0;
    for report in reports {
        stored += verify(&store, report, ctxkit, work.path()).await?;
    }
    say(&format!(
        "verified {} sessions: {acknowledged} acknowledged entries, 0 lost ({stored} stored: {} \
         committed whose answer the kill cut off); every session on one chain (one writer at a \
         time); every export `ctxkit check` clean and equal entry for entry",
        reports.len(),
        stored.saturating_sub(acknowledged)
    ));
    Ok(())
}
