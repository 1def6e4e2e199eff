//! The one test suite every backend passes.

use std::path::Path;
use std::time::Duration;

use ctxkit_protocol::AgentMessage;
use ctxkit_session::{NewCompaction, Session, SummarySource};
use ctxkit_store::{ListQuery, SessionLines, SessionStore, StoreError};
use serde_json::json;

const LONG: Duration = Duration::from_secs(60);

fn message(role: &str, text: &str, timestamp_ms: i64) -> AgentMessage {
    let value = match role {
        "user" => json!({"role": "user", "content": text, "timestamp": timestamp_ms}),
        _ => json!({
            "role": "assistant", "content": [{"type": "text", "text": text}],
            "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
            "timestamp": timestamp_ms
        }),
    };
    serde_json::from_value(value).unwrap()
}

/// A real session file written by the session library: two branches, a label, a name and a
/// compaction, in a fresh project folder. Returns its path.
fn realistic_session(dir: &Path, project: &str) -> std::path::PathBuf {
    let mut session = Session::create(project, dir);
    let ids = session
        .append_messages(vec![
            message("user", "fix the tokenizer in parser.rs", 1_763_900_000_000),
            message(
                "assistant",
                "The tokenizer skipped the last line.",
                1_763_900_001_000,
            ),
            message("user", "now add a test", 1_763_900_002_000),
            message(
                "assistant",
                "Added tokenizer_keeps_last_line.",
                1_763_900_003_000,
            ),
        ])
        .unwrap();
    session
        .append_label_change(&ids[1], Some("diagnosis"))
        .unwrap();
    session.append_session_info("Parser fixes").unwrap();
    session
        .append_compaction(NewCompaction {
            summary: "## Goal\nFix the tokenizer".to_owned(),
            first_kept_entry_id: ids[2].clone(),
            tokens_before: 1234,
            details: None,
            source: SummarySource::Ctxkit,
        })
        .unwrap();
    session
        .append_messages(vec![message("user", "and the lexer?", 1_763_900_004_000)])
        .unwrap();
    // A second branch off the first reply.
    session.branch(&ids[1]).unwrap();
    session
        .append_messages(vec![
            message("user", "explain instead", 1_763_900_005_000),
            message(
                "assistant",
                "It dropped the final newline.",
                1_763_900_006_000,
            ),
        ])
        .unwrap();
    session.path().unwrap().to_owned()
}

pub fn project() -> String {
    format!("/work/project-{}", uuid::Uuid::new_v4())
}

pub fn entry_line(id: &str, parent: Option<&str>, text: &str) -> String {
    json!({
        "type": "message", "id": id, "parentId": parent,
        "timestamp": "2025-11-20T10:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1_763_632_800_000_i64}
    })
    .to_string()
}

/// Imports a small session of `entries` user messages in a chain; returns its id.
pub async fn small_session(store: &impl SessionStore, project: &str, entries: usize) -> String {
    session_with_id(store, project, entries, uuid::Uuid::new_v4().to_string()).await
}

async fn session_with_id(
    store: &impl SessionStore,
    project: &str,
    entries: usize,
    id: String,
) -> String {
    let header = json!({
        "type": "session", "version": 3, "id": id,
        "timestamp": "2025-11-20T10:00:00.000Z", "cwd": project
    })
    .to_string();
    let mut lines = Vec::new();
    for index in 0..entries {
        let parent = (index > 0).then(|| format!("e{}", index - 1));
        lines.push(entry_line(&format!("e{index}"), parent.as_deref(), "hello"));
    }
    store
        .import(&SessionLines {
            header,
            entries: lines,
        })
        .await
        .unwrap();
    id
}

pub async fn import_then_export_is_byte_exact(store: &impl SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let path = realistic_session(dir.path(), &project());
    let bytes = std::fs::read(&path).unwrap();
    let imported = store
        .import(&SessionLines::parse("fixture", &bytes).unwrap())
        .await
        .unwrap();
    assert_eq!(imported.entries, 10);
    assert_eq!(imported.name.as_deref(), Some("Parser fixes"));
    let exported = store.export(&imported.id).await.unwrap();
    assert_eq!(exported.to_jsonl(), bytes, "the round trip changed bytes");
}

pub async fn a_file_imported_a_line_at_a_time_is_stored_as_its_lines(store: &impl SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let path = realistic_session(dir.path(), &project());
    let imported = store.import_file(&path).await.unwrap();
    assert_eq!(imported.entries, 10);
    assert_eq!(imported.name.as_deref(), Some("Parser fixes"));
    let exported = store.export(&imported.id).await.unwrap();
    assert_eq!(exported.to_jsonl(), std::fs::read(&path).unwrap());
    assert!(matches!(
        store.import_file(&path).await,
        Err(StoreError::Exists { .. })
    ));

    // What `SessionLines::parse` drops is dropped (a byte order mark, blank lines), and what
    // it keeps is kept byte for byte, in batches larger than one insert.
    let id = uuid::Uuid::new_v4().to_string();
    let mut text = format!(
        "\u{feff}{}\n\n",
        json!({"type": "session", "version": 3, "id": id,
               "timestamp": "2025-11-20T10:00:00.000Z", "cwd": project()})
    );
    for index in 0..25_000 {
        let parent = (index > 0).then(|| format!("e{}", index - 1));
        text.push_str(&entry_line(&format!("e{index}"), parent.as_deref(), "word"));
        text.push_str(if index % 1000 == 0 { "\r\n \n" } else { "\n" });
    }
    let odd = dir.path().join("odd.jsonl");
    std::fs::write(&odd, &text).unwrap();
    let stored = store.import_file(&odd).await.unwrap();
    assert_eq!(stored.entries, 25_000);
    assert_eq!(
        store.export(&id).await.unwrap(),
        SessionLines::parse("odd", text.as_bytes()).unwrap()
    );

    // A bad line anywhere stores nothing.
    let id = uuid::Uuid::new_v4().to_string();
    let mut bad = format!(
        "{}\n",
        json!({"type": "session", "version": 3, "id": id,
               "timestamp": "2025-11-20T10:00:00.000Z", "cwd": project()})
    );
    for index in 0..15_000 {
        bad.push_str(&entry_line(&format!("e{index}"), None, "word"));
        bad.push('\n');
    }
    bad.push_str("not json\n");
    let torn = dir.path().join("torn.jsonl");
    std::fs::write(&torn, &bad).unwrap();
    let error = store.import_file(&torn).await.unwrap_err();
    assert!(
        matches!(error, StoreError::DamagedLine { line: 15002, .. }),
        "{error:?}"
    );
    assert!(matches!(
        store.export(&id).await,
        Err(StoreError::NotFound { .. })
    ));
}

/// A session the session reader reads imports byte for byte: Pi writes a lone surrogate
/// (`\ud83d`) when it cuts a string inside an emoji, which strict JSON refuses. What it cannot
/// take is refused with the file's line number: a damaged line, bytes that are not UTF-8.
pub async fn what_the_session_reader_reads_is_imported(store: &impl SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus/session_loader/good-lone-surrogate.jsonl");
    let id = uuid::Uuid::new_v4().to_string();
    let text = std::fs::read_to_string(&fixture)
        .unwrap()
        .replace("3eb2decb-435b-7b94-a3f9-d0b9fcb9c967", &id);
    let path = dir.path().join("surrogate.jsonl");
    std::fs::write(&path, &text).unwrap();
    assert!(Session::open(&path).unwrap().diagnostics().is_empty());
    let stored = store.import_file(&path).await.unwrap();
    assert_eq!(stored.entries, 2);
    assert_eq!(store.export(&id).await.unwrap().to_jsonl(), text.as_bytes());
    let other = text.replace(&id, &uuid::Uuid::new_v4().to_string());
    let lines = SessionLines::parse("surrogate", other.as_bytes()).unwrap();
    assert_eq!(store.import(&lines).await.unwrap().entries, 2);

    let header = json!({"type": "session", "version": 3, "id": uuid::Uuid::new_v4().to_string(),
                        "timestamp": "2025-11-20T10:00:00.000Z", "cwd": project()});
    let mut not_utf8 = format!("{header}\n{}\n", entry_line("a", None, "fine")).into_bytes();
    not_utf8.extend_from_slice(b"{\"type\":\"custom\",\"x\":\"\xff\"}\n");
    let path = dir.path().join("not-utf8.jsonl");
    std::fs::write(&path, &not_utf8).unwrap();
    let error = store.import_file(&path).await.unwrap_err();
    assert!(
        matches!(error, StoreError::NotUtf8 { line: 3, .. }),
        "{error:?}"
    );
}

pub async fn the_tree_labels_leaf_and_compactions_are_the_files(store: &impl SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let path = realistic_session(dir.path(), &project());
    let original = Session::open(&path).unwrap();
    let lines = SessionLines::parse("fixture", &std::fs::read(&path).unwrap()).unwrap();
    store.import(&lines).await.unwrap();
    let out = dir.path().join("exported.jsonl");
    std::fs::write(&out, store.export(original.id()).await.unwrap().to_jsonl()).unwrap();
    let reopened = Session::open(&out).unwrap();
    assert!(reopened.diagnostics().is_empty());
    assert_eq!(reopened.leaf_id(), original.leaf_id());
    assert_eq!(reopened.session_name(), original.session_name());
    let labelled: Vec<_> = original
        .entries()
        .iter()
        .map(|entry| original.label(entry.id()))
        .collect();
    let relabelled: Vec<_> = reopened
        .entries()
        .iter()
        .map(|entry| reopened.label(entry.id()))
        .collect();
    assert_eq!(labelled, relabelled);
    assert!(labelled.contains(&Some("diagnosis")));
    let tree = |session: &Session| format!("{:?}", session.tree());
    assert_eq!(tree(&reopened), tree(&original));
    let context = |session: &Session| {
        let built = session.build_context();
        serde_json::to_string(&session.message_values(&built.messages).unwrap()).unwrap()
    };
    assert_eq!(context(&reopened), context(&original));
    // And on the other branch, across the compaction.
    let compaction = original
        .entries()
        .iter()
        .find(|entry| entry.type_name() == "compaction")
        .unwrap();
    let at = |session: &Session| {
        let built = session.context_at(ctxkit_session::LeafSelector::Entry(compaction.id()));
        serde_json::to_string(&session.message_values(&built.messages).unwrap()).unwrap()
    };
    assert_eq!(at(&reopened), at(&original));
    assert!(at(&original).contains("Fix the tokenizer"));
}

pub async fn appends_land_in_order_and_are_acknowledged(store: &impl SessionStore) {
    let id = small_session(store, &project(), 1).await;
    let lease = store.acquire(&id, "writer-a", LONG).await.unwrap();
    let mut parent = "e0".to_owned();
    for batch in 0..5 {
        let lines: Vec<String> = (0..3)
            .map(|index| {
                let entry = format!("b{batch}-{index}");
                let line = entry_line(&entry, Some(&parent), &format!("turn {batch} {index}"));
                parent = entry;
                line
            })
            .collect();
        let count = store.append(&lease, &lines, LONG).await.unwrap();
        assert_eq!(count, 1 + 3 * (batch + 1));
    }
    let exported = store.export(&id).await.unwrap();
    let ids: Vec<String> = exported
        .entries
        .iter()
        .map(|line| ctxkit_store::entry_facts(line).unwrap().id.unwrap())
        .collect();
    let mut expected = vec!["e0".to_owned()];
    for batch in 0..5 {
        for index in 0..3 {
            expected.push(format!("b{batch}-{index}"));
        }
    }
    assert_eq!(ids, expected);
    // The leaf, as a file reader sees it, is the last acknowledged entry.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, exported.to_jsonl()).unwrap();
    assert_eq!(Session::open(&file).unwrap().leaf_id(), Some("b4-2"));
}

/// A writer that never heard the answer to an append (the database froze after committing it)
/// sends it again: the entries are stored once, and the next append follows them.
pub async fn a_retried_append_is_stored_once(store: &impl SessionStore) {
    let id = small_session(store, &project(), 1).await;
    let lease = store.acquire(&id, "writer-a", LONG).await.unwrap();
    let turn = vec![
        entry_line("r1", Some("e0"), "the turn"),
        entry_line("r2", Some("r1"), "its reply"),
    ];
    assert_eq!(store.append(&lease, &turn, LONG).await.unwrap(), 3);
    assert_eq!(store.append(&lease, &turn, LONG).await.unwrap(), 3);
    let next = vec![entry_line("r3", Some("r2"), "the next turn")];
    assert_eq!(store.append(&lease, &next, LONG).await.unwrap(), 4);
    let ids: Vec<String> = store
        .export(&id)
        .await
        .unwrap()
        .entries
        .iter()
        .map(|line| ctxkit_store::entry_facts(line).unwrap().id.unwrap())
        .collect();
    assert_eq!(ids, ["e0", "r1", "r2", "r3"]);
    let listed = store.list(&ListQuery::default()).await.unwrap();
    let listed = listed.iter().find(|session| session.id == id).unwrap();
    assert_eq!(listed.entries, 4);
}

pub async fn a_second_writer_is_refused(store: &impl SessionStore) {
    let id = small_session(store, &project(), 1).await;
    let first = store.acquire(&id, "instance-1", LONG).await.unwrap();
    let refused = store.acquire(&id, "instance-2", LONG).await.unwrap_err();
    match refused {
        StoreError::SessionInUse {
            owner,
            expires_in_ms,
            ..
        } => {
            assert_eq!(owner, "instance-1");
            assert!(expires_in_ms > 0);
        }
        other @ (StoreError::InvalidUrl { .. }
        | StoreError::NotFound { .. }
        | StoreError::AmbiguousId { .. }
        | StoreError::Exists { .. }
        | StoreError::Fenced { .. }
        | StoreError::InvalidSession { .. }
        | StoreError::NotUtf8 { .. }
        | StoreError::DamagedLine { .. }
        | StoreError::Io { .. }
        | StoreError::Session(_)
        | StoreError::Database { .. }
        | StoreError::Unresponsive { .. }
        | StoreError::Connect { .. }
        | StoreError::Tls { .. }
        | StoreError::TlsFile { .. }) => panic!("expected session_in_use, got {other:?}"),
    }
    // The holder still writes.
    store
        .append(&first, &[entry_line("x", Some("e0"), "still mine")], LONG)
        .await
        .unwrap();
}

/// A created session is its creator's from the start, in the same step as it is stored: serve's
/// `session.create` stored the header, then took the lease; a failure between the two (or another
/// instance's `session.open` by id) left an empty session behind, or leased to someone else.
pub async fn a_created_session_is_its_creators_from_the_start(store: &impl SessionStore) {
    let id = uuid::Uuid::new_v4().to_string();
    let header = json!({
        "type": "session", "version": 3, "id": id,
        "timestamp": "2025-11-20T10:00:00.000Z", "cwd": project()
    })
    .to_string();
    let lines = SessionLines {
        header,
        entries: Vec::new(),
    };
    let lease = store.create(&lines, "instance-1", LONG).await.unwrap();
    assert_eq!(lease.session_id, id);
    assert!(matches!(
        store.acquire(&id, "instance-2", LONG).await,
        Err(StoreError::SessionInUse { .. })
    ));
    store
        .append(&lease, &[entry_line("x", None, "first")], LONG)
        .await
        .unwrap();
    assert_eq!(store.export(&id).await.unwrap().entries.len(), 1);
    // An id taken stores nothing and leases nothing.
    assert!(matches!(
        store.create(&lines, "instance-3", LONG).await,
        Err(StoreError::Exists { .. })
    ));
    store.release(&lease).await.unwrap();
    // A bad line stores nothing: the id is free for a good creation.
    let bad = SessionLines {
        header: lines.header.replace(&id, &uuid::Uuid::new_v4().to_string()),
        entries: vec!["not json".to_owned()],
    };
    let bad_id = serde_json::from_str::<serde_json::Value>(&bad.header).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(store.create(&bad, "instance-1", LONG).await.is_err());
    assert!(matches!(
        store.resolve(&bad_id).await,
        Err(StoreError::NotFound { .. })
    ));
}

pub async fn a_dead_writer_is_taken_over_and_fenced(store: &impl SessionStore) {
    let id = small_session(store, &project(), 1).await;
    let dead = store
        .acquire(&id, "died", Duration::from_millis(200))
        .await
        .unwrap();
    store
        .append(
            &dead,
            &[entry_line("d1", Some("e0"), "before dying")],
            Duration::from_millis(200),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let next = store.acquire(&id, "successor", LONG).await.unwrap();
    assert!(next.token > dead.token, "the fencing token grows");
    store
        .append(&next, &[entry_line("n1", Some("d1"), "taken over")], LONG)
        .await
        .unwrap();
    // The old writer wakes up and tries again: refused, nothing written.
    let late = store
        .append(&dead, &[entry_line("d2", Some("d1"), "late")], LONG)
        .await
        .unwrap_err();
    assert!(matches!(late, StoreError::Fenced { .. }), "{late:?}");
    assert!(matches!(
        store.renew(&dead, LONG).await,
        Err(StoreError::Fenced { .. })
    ));
    assert!(matches!(
        store.release(&dead).await,
        Err(StoreError::Fenced { .. })
    ));
    let exported = store.export(&id).await.unwrap();
    let ids: Vec<_> = exported
        .entries
        .iter()
        .map(|line| ctxkit_store::entry_facts(line).unwrap().id.unwrap())
        .collect();
    assert_eq!(ids, ["e0", "d1", "n1"]);
}

/// A writer that could not release its lease (the database went away under it) takes it again at
/// once, rather than being refused by itself until it expires; the earlier lease is fenced, and
/// another writer is still refused.
pub async fn a_writer_takes_its_own_lease_again(store: &impl SessionStore) {
    let id = small_session(store, &project(), 1).await;
    let first = store.acquire(&id, "client 3", LONG).await.unwrap();
    let again = store.acquire(&id, "client 3", LONG).await.unwrap();
    assert!(again.token > first.token, "{first:?} {again:?}");
    let line = entry_line("late", Some("e0"), "late");
    assert!(matches!(
        store.append(&first, &[line], LONG).await,
        Err(StoreError::Fenced { .. })
    ));
    let line = entry_line("now", Some("e0"), "now");
    assert_eq!(store.append(&again, &[line], LONG).await.unwrap(), 2);
    assert!(matches!(
        store.acquire(&id, "client 4", LONG).await,
        Err(StoreError::SessionInUse { .. })
    ));
}

pub async fn a_released_lease_is_free_at_once(store: &impl SessionStore) {
    let id = small_session(store, &project(), 1).await;
    let first = store.acquire(&id, "a", LONG).await.unwrap();
    store.renew(&first, LONG).await.unwrap();
    store.release(&first).await.unwrap();
    let second = store.acquire(&id, "b", LONG).await.unwrap();
    assert!(second.token > first.token);
    assert!(matches!(
        store
            .append(&first, &[entry_line("z", None, "gone")], LONG)
            .await,
        Err(StoreError::Fenced { .. })
    ));
}

pub async fn racing_takeovers_leave_one_writer(store: &impl SessionStore) {
    let id = small_session(store, &project(), 1).await;
    let attempts = (0..8).map(|index| {
        let owner = format!("racer-{index}");
        let id = id.clone();
        async move { store.acquire(&id, &owner, LONG).await }
    });
    let results = futures_join_all(attempts).await;
    let winners: Vec<_> = results.iter().filter(|result| result.is_ok()).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for result in &results {
        if let Err(error) = result {
            assert!(
                matches!(error, StoreError::SessionInUse { .. }),
                "{error:?}"
            );
        }
    }
}

/// Runs futures concurrently on this task (no extra dependency).
async fn futures_join_all<F: std::future::Future>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output> {
    let mut pinned: Vec<_> = futures.map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|context| {
        let mut pending = false;
        for (future, output) in pinned.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(context) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

pub async fn a_bad_line_writes_nothing(store: &impl SessionStore) {
    let id = small_session(store, &project(), 1).await;
    let lease = store.acquire(&id, "w", LONG).await.unwrap();
    let lines = [entry_line("ok", Some("e0"), "fine"), "not json".to_owned()];
    let error = store.append(&lease, &lines, LONG).await.unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidSession { .. }),
        "{error:?}"
    );
    let two_lines = format!(
        "{}\n{}",
        entry_line("a", None, "x"),
        entry_line("b", None, "y")
    );
    assert!(store.append(&lease, &[two_lines], LONG).await.is_err());
    assert_eq!(store.export(&id).await.unwrap().entries.len(), 1);
}

/// QA 2026-12-07: on PostgreSQL a prompt or a name holding U+0000 failed its append (a `text`
/// column cannot hold one), the turn lost and every retry failing alike; an id holding one was a
/// database error, which a client takes for an outage. Stored as the file store stores them;
/// such an id is not found.
pub async fn a_nul_in_a_prompt_or_a_name_is_stored(store: &impl SessionStore) {
    let id = small_session(store, &project(), 1).await;
    let lease = store.acquire(&id, "writer-a", LONG).await.unwrap();
    let name = json!({"type": "session_info", "id": "n1", "parentId": "p1",
                      "timestamp": "2025-11-20T10:00:01.000Z", "name": "my\u{0}name"})
    .to_string();
    let lines = [entry_line("p1", Some("e0"), "second \u{0} prompt"), name];
    assert_eq!(store.append(&lease, &lines, LONG).await.unwrap(), 3);
    let exported = store.export(&id).await.unwrap();
    assert_eq!(exported.entries[1..], lines);
    for odd in ["x\u{0}y", "\u{0}"] {
        assert!(matches!(
            store.acquire(odd, "w", LONG).await,
            Err(StoreError::NotFound { .. })
        ));
        assert!(matches!(
            store.export(odd).await,
            Err(StoreError::NotFound { .. })
        ));
    }
}

pub async fn unknown_and_duplicate_sessions(store: &impl SessionStore) {
    let missing = uuid::Uuid::new_v4().to_string();
    assert!(matches!(
        store.export(&missing).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.acquire(&missing, "w", LONG).await,
        Err(StoreError::NotFound { .. })
    ));
    let id = small_session(store, &project(), 2).await;
    let again = store.export(&id).await.unwrap();
    assert!(matches!(
        store.import(&again).await,
        Err(StoreError::Exists { .. })
    ));
    assert_eq!(store.export(&id).await.unwrap(), again);
}

/// A session is named by its id or by the start of one id only; `%` and `_` are plain characters.
pub async fn a_session_is_named_by_the_start_of_its_id(store: &impl SessionStore) {
    let stem = uuid::Uuid::new_v4().simple().to_string();
    let project = project();
    let alone = session_with_id(store, &project, 1, format!("{stem}-alone")).await;
    let pair = format!("{stem}-pair");
    let first = session_with_id(store, &project, 1, pair.clone()).await;
    let second = session_with_id(store, &project, 1, format!("{pair}-2")).await;
    assert_eq!(store.resolve(&format!("{stem}-al")).await.unwrap(), alone);
    // An id that is also the start of another names its own session.
    assert_eq!(store.resolve(&pair).await.unwrap(), first);
    assert_eq!(store.resolve(&second).await.unwrap(), second);
    match store.resolve(&format!("{stem}-p")).await {
        Err(StoreError::AmbiguousId { count, ids, .. }) => {
            assert_eq!((count, ids), (2, vec![first.clone(), second.clone()]));
        }
        other => panic!("{other:?}"),
    }
    for missing in [
        format!("{stem}-x"),
        format!("{stem}%"),
        format!("{stem}_"),
        String::new(),
    ] {
        assert!(
            matches!(
                store.resolve(&missing).await,
                Err(StoreError::NotFound { .. })
            ),
            "{missing:?}"
        );
    }
}

pub async fn listing_by_project_name_time_and_text(store: &impl SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let here = project();
    let named = realistic_session(dir.path(), &here);
    let named = store
        .import(&SessionLines::parse("f", &std::fs::read(&named).unwrap()).unwrap())
        .await
        .unwrap();
    let plain = small_session(store, &here, 2).await;
    let elsewhere = small_session(store, &project(), 1).await;

    let ids = |sessions: Vec<ctxkit_store::StoredSession>| -> Vec<String> {
        sessions.into_iter().map(|session| session.id).collect()
    };
    let in_project = ListQuery {
        project: Some(here.clone()),
        ..ListQuery::default()
    };
    let found = store.list(&in_project).await.unwrap();
    // Newest first: the realistic session's last message is from 2025-11-23, the small one's 11-20.
    assert_eq!(ids(found.clone()), [named.id.clone(), plain.clone()]);
    assert_eq!(found[0].message_count, 7);
    assert_eq!(
        found[0].first_message.as_deref(),
        Some("fix the tokenizer in parser.rs")
    );
    assert_eq!(found[0].cwd, here);
    assert!(!ids(found).contains(&elsewhere));

    let by_name = ListQuery {
        name: Some("fixes parser".to_owned()),
        ..in_project.clone()
    };
    assert!(store.list(&by_name).await.unwrap().is_empty());
    let by_name = ListQuery {
        name: Some("PARSER".to_owned()),
        ..in_project.clone()
    };
    assert_eq!(
        ids(store.list(&by_name).await.unwrap()),
        [named.id.as_str()]
    );

    let by_text = ListQuery {
        text: Some("final NEWLINE".to_owned()),
        ..in_project.clone()
    };
    assert_eq!(
        ids(store.list(&by_text).await.unwrap()),
        [named.id.as_str()]
    );
    let by_absent_text = ListQuery {
        text: Some("kubernetes".to_owned()),
        ..in_project.clone()
    };
    assert!(store.list(&by_absent_text).await.unwrap().is_empty());

    let since = ctxkit_session::parse_timestamp_ms("2025-11-22T00:00:00.000Z");
    let recent = ListQuery {
        since_ms: since,
        ..in_project.clone()
    };
    assert_eq!(ids(store.list(&recent).await.unwrap()), [named.id.as_str()]);
    let older = ListQuery {
        until_ms: since,
        ..in_project.clone()
    };
    assert_eq!(ids(store.list(&older).await.unwrap()), [plain.as_str()]);
    let one = ListQuery {
        limit: 1,
        ..in_project
    };
    assert_eq!(store.list(&one).await.unwrap().len(), 1);
}

/// A stored session is listed as its file is: every message entry counted (tool results too),
/// and the first message the first words the user typed, not what the agent injected before
/// them (an OpenClaw gateway's event and a chat channel's envelope here).
/// Both backends find the same sessions for the same words: each word of the query (letters and
/// digits, any case) a whole word of one entry line, wherever it stands: in a URL, a host, a
/// path, a hyphenated or underscored token. PostgreSQL's text search kept `db.example.com` and
/// `sk-ant-…` as single tokens, so `example` and `sk-ant` were found in files only.
pub async fn a_text_search_finds_the_words_of_urls_hosts_and_tokens(store: &impl SessionStore) {
    let here = project();
    let id = uuid::Uuid::new_v4().to_string();
    let header = json!({"type": "session", "version": 3, "id": id,
                        "timestamp": "2025-11-20T10:00:00.000Z", "cwd": here})
    .to_string();
    let texts = [
        "fetch https://db.example.com:5432/v2/items?page=3 now",
        "the key sk-ant-api03-AbCdEf was revoked; see snake_case_name and Café—Crème",
        "résumé \\nescaped and <tag>x</tag> user@mail.example.org",
        "请把 parse模块改成支持多币种，不要修改公共接口",
    ];
    let entries = texts
        .iter()
        .enumerate()
        .map(|(index, text)| entry_line(&format!("t{index}"), None, text))
        .collect();
    store
        .import(&SessionLines { header, entries })
        .await
        .unwrap();
    let found = |text: &str| {
        let query = ListQuery {
            project: Some(here.clone()),
            text: Some(text.to_owned()),
            ..ListQuery::default()
        };
        async move { store.list(&query).await.unwrap().len() == 1 }
    };
    for words in [
        "example",
        "db.example.com",
        "EXAMPLE com",
        "sk-ant",
        "api03",
        "SK ANT abcdef",
        "v2 items",
        "page=3",
        "snake_case_name",
        "case",
        "café crème",
        "CAFÉ",
        "nescaped",
        "tag",
        "mail example org",
        "https",
        "   ",
        // QA r107: a word of a script written without spaces is found inside its clause (an
        // ASCII word glued to one, `parse模块`, is a word of its own in files only:
        // docs/deployment.md).
        "多币种",
        "币种 模块",
    ] {
        assert!(found(words).await, "{words:?} is not found");
    }
    for words in [
        "exampl",
        "sk-antx",
        "db.example.net",
        "api",
        "caf",
        "fetch revoked",
        "汇率转换",
    ] {
        assert!(!found(words).await, "{words:?} is found");
    }
}

pub async fn a_stored_session_is_listed_as_its_file(store: &impl SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let id = uuid::Uuid::new_v4().to_string();
    let at = "2026-02-07T08:00:00.000Z";
    let lines = [
        json!({"type": "session", "version": 3, "id": id, "timestamp": at, "cwd": project()}),
        json!({"type": "message", "id": "a1", "parentId": null, "timestamp": at, "message": {
            "role": "user", "timestamp": 1_770_451_200_000_i64,
            "content": "System: [2026-02-07 13:30:01 GMT+5:30] WhatsApp gateway connected."}}),
        json!({"type": "message", "id": "a2", "parentId": "a1", "timestamp": at, "message": {
            "role": "user", "timestamp": 1_770_451_201_000_i64,
            "content": [{"type": "text", "text": "[WhatsApp +15550100123 +1m 2026-02-07 13:31 GMT+5:30] fix the parser"}]}}),
        json!({"type": "message", "id": "a3", "parentId": "a2", "timestamp": at, "message": {
            "role": "assistant", "timestamp": 1_770_451_202_000_i64, "stopReason": "toolUse",
            "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "parser.rs"}}]}}),
        json!({"type": "message", "id": "a4", "parentId": "a3", "timestamp": at, "message": {
            "role": "toolResult", "toolCallId": "c1", "toolName": "read", "isError": false,
            "timestamp": 1_770_451_203_000_i64, "content": [{"type": "text", "text": "fn parse() {}"}]}}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let file = dir.path().join("session.jsonl");
    std::fs::write(&file, &text).unwrap();
    let listed = ctxkit_session::read_session_info(&file).unwrap();
    assert_eq!(listed.first_message, "fix the parser");
    assert_eq!(listed.message_count, 4);
    store
        .import(&SessionLines::parse("f", text.as_bytes()).unwrap())
        .await
        .unwrap();
    let found = store
        .list(&ListQuery {
            text: Some("gateway".to_owned()),
            ..ListQuery::default()
        })
        .await
        .unwrap();
    let stored = found.iter().find(|session| session.id == id).unwrap();
    assert_eq!(stored.first_message.as_deref(), Some("fix the parser"));
    assert_eq!(stored.message_count, listed.message_count);
    assert_eq!(stored.parent_session, None);
    // QA r101 serve D2: a fork's listing named no parent on the database though its header did.
    let fork_id = uuid::Uuid::new_v4().to_string();
    let fork_header = json!({"type": "session", "version": 3, "id": fork_id, "timestamp": at,
        "cwd": project(), "parentSession": id});
    let fork_text = format!("{fork_header}\n{}\n", lines[1]);
    let fork_file = dir.path().join("fork.jsonl");
    std::fs::write(&fork_file, &fork_text).unwrap();
    let listed_fork = ctxkit_session::read_session_info(&fork_file).unwrap();
    assert_eq!(
        listed_fork.parent_session_path.as_deref(),
        Some(id.as_str())
    );
    store
        .import(&SessionLines::parse("f", fork_text.as_bytes()).unwrap())
        .await
        .unwrap();
    let found = store.list(&ListQuery::default()).await.unwrap();
    let fork = found.iter().find(|session| session.id == fork_id).unwrap();
    assert_eq!(fork.parent_session.as_deref(), Some(id.as_str()));
}

/// A tool output of megabytes in distinct words is stored and found by a word near its start
/// (PostgreSQL refuses to index a tsvector over 1 MiB: the full-text index reads each line's
/// first 100,000 characters).
pub async fn a_huge_entry_is_stored_and_found(store: &impl SessionStore) {
    let here = project();
    let id = uuid::Uuid::new_v4().to_string();
    let header = json!({
        "type": "session", "version": 3, "id": id,
        "timestamp": "2025-11-20T10:00:00.000Z", "cwd": here
    })
    .to_string();
    let words: Vec<String> = (0..200_000).map(|index| format!("w{index}")).collect();
    let huge = entry_line("e0", None, &words.join(" "));
    assert!(huge.len() > 1_400_000);
    let lines = SessionLines {
        header,
        entries: vec![huge, entry_line("e1", Some("e0"), "after the huge one")],
    };
    let imported = store.import(&lines).await.unwrap();
    assert_eq!(imported.entries, 2);
    assert_eq!(
        store.export(&id).await.unwrap().to_jsonl(),
        lines.to_jsonl()
    );
    let by_text = ListQuery {
        text: Some("w1234".to_owned()),
        project: Some(here),
        ..ListQuery::default()
    };
    let found: Vec<String> = store
        .list(&by_text)
        .await
        .unwrap()
        .into_iter()
        .map(|session| session.id)
        .collect();
    assert_eq!(found, [id.as_str()]);
}

/// A copy of older messages (a fork made today of an old session: a new header, old messages) is
/// listed by its creation but shows its messages' time, as its file is shown; a later message
/// moves that time on.
pub async fn a_copy_of_older_messages_shows_their_time_as_its_file_does(store: &impl SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let id = uuid::Uuid::new_v4().to_string();
    let lines = [
        json!({"type": "session", "version": 3, "id": id, "timestamp": "2026-01-02T00:00:00.000Z",
               "cwd": project()}),
        json!({"type": "message", "id": "e0", "parentId": null,
               "timestamp": "2025-03-17T09:00:00.000Z",
               "message": {"role": "user", "content": "an old question",
                           "timestamp": 1_742_202_000_000_i64}}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let file = dir.path().join("fork.jsonl");
    std::fs::write(&file, &text).unwrap();
    let as_file = ctxkit_session::read_session_info(&file).unwrap();
    let stored = store
        .import(&SessionLines::parse("f", text.as_bytes()).unwrap())
        .await
        .unwrap();
    let created = ctxkit_session::parse_timestamp_ms("2026-01-02T00:00:00.000Z").unwrap();
    let listed = |sessions: Vec<ctxkit_store::StoredSession>| {
        sessions
            .into_iter()
            .find(|session| session.id == id)
            .unwrap()
    };
    let found = listed(store.list(&ListQuery::default()).await.unwrap());
    for session in [&stored, &found] {
        assert_eq!(session.modified_ms, created, "listed by its creation");
        assert_eq!(
            ctxkit_session::iso_from_ms(session.shown_modified_ms()),
            as_file.modified,
            "shown as its file is"
        );
    }
    let lease = store.acquire(&id, "writer", LONG).await.unwrap();
    store
        .append(&lease, &[entry_line("e1", Some("e0"), "later")], LONG)
        .await
        .unwrap();
    let found = listed(store.list(&ListQuery::default()).await.unwrap());
    assert_eq!(found.last_message_ms, Some(1_763_632_800_000));
    assert_eq!(found.modified_ms, created);
}
