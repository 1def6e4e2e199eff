//! How long an acknowledged append takes: one turn (a user and an assistant entry) appended under
//! the lease, `TURNS` times, on the directory backend and on PostgreSQL (when a URL is given).
//!
//! `cargo run --release -p ctxkit-store --example append_latency -- [postgres://…] [TURNS]`

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use ctxkit_store::{DirectoryStore, PostgresStore, SessionLines, SessionStore};

fn line(id: &str, parent: &str, role: &str) -> String {
    serde_json::json!({
        "type": "message", "id": id, "parentId": parent, "timestamp": "2025-11-20T10:00:00.000Z",
        "message": {"role": role, "content": "a message of a few words, as a turn has", "timestamp": 1_763_632_800_000_i64}
    })
    .to_string()
}

async fn measure(store: &impl SessionStore, turns: usize) -> Vec<Duration> {
    let id = uuid::Uuid::new_v4().to_string();
    let header = serde_json::json!({"type": "session", "version": 3, "id": id,
        "timestamp": "2025-11-20T10:00:00.000Z", "cwd": "/bench"})
    .to_string();
    store
        .import(&SessionLines {
            header,
            entries: vec![line("e0", "", "user")],
        })
        .await
        .unwrap();
    let lease = store
        .acquire(&id, "bench", ctxkit_store::DEFAULT_LEASE)
        .await
        .unwrap();
    let mut times = Vec::with_capacity(turns);
    let mut parent = "e0".to_owned();
    for turn in 0..turns {
        let (user, reply) = (format!("u{turn}"), format!("a{turn}"));
        let lines = [
            line(&user, &parent, "user"),
            line(&reply, &user, "assistant"),
        ];
        let started = Instant::now();
        store
            .append(&lease, &lines, ctxkit_store::DEFAULT_LEASE)
            .await
            .unwrap();
        times.push(started.elapsed());
        parent = reply;
    }
    times
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let at = |fraction: f64| times[((times.len() as f64 - 1.0) * fraction) as usize];
    println!(
        "{name:<10} {} turns: p50 {:.2} ms, p99 {:.2} ms",
        times.len(),
        at(0.5).as_secs_f64() * 1000.0,
        at(0.99).as_secs_f64() * 1000.0
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut arguments = std::env::args().skip(1);
    let url = arguments
        .next()
        .filter(|argument| argument.starts_with("postgres"));
    let turns = arguments
        .next()
        .and_then(|text| text.parse().ok())
        .unwrap_or(500);
    let root = tempfile::tempdir().unwrap();
    report(
        "directory",
        measure(&DirectoryStore::new(root.path()), turns).await,
    );
    if let Some(url) = url {
        let store = PostgresStore::connect(&url).await.unwrap();
        report("postgres", measure(&store, turns).await);
    }
}
