//! Attacks on the directory store's file names: a stored session's header names its file, so a
//! header must never place it outside the store, and one id must never be taken for another.

use ctxkit_store::{DirectoryStore, SessionLines, SessionStore, StoreError};
use serde_json::json;

fn lines(id: &str, timestamp: &str) -> SessionLines {
    SessionLines {
        header: json!({"type": "session", "version": 3, "id": id,
                       "timestamp": timestamp, "cwd": "/w"})
        .to_string(),
        entries: Vec::new(),
    }
}

/// Every file under `folder`, in its subfolders too.
fn files_under(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn a_header_cannot_place_its_file_outside_the_store() {
    let outside = tempfile::tempdir().unwrap();
    let root = outside.path().join("store");
    let store = DirectoryStore::new(&root);
    let aimed = outside.path().join("victim");
    let timestamp = aimed.to_str().unwrap();
    store.import(&lines("abc", timestamp)).await.unwrap();
    let written = files_under(outside.path());
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].starts_with(&root), "{written:?}");
    assert_eq!(store.resolve("abc").await.unwrap(), "abc");
    for id in ["../x", "a/b", "a\\b", ".hidden", ""] {
        assert!(
            matches!(
                store.import(&lines(id, "2026-01-01T00:00:00.000Z")).await,
                Err(StoreError::InvalidSession { .. })
            ),
            "{id:?}"
        );
    }
    assert_eq!(files_under(outside.path()).len(), 1);
}

#[tokio::test]
async fn an_id_is_never_taken_for_the_end_of_another() {
    let root = tempfile::tempdir().unwrap();
    let store = DirectoryStore::new(root.path());
    store
        .import(&lines("abc_def", "2026-01-01T00:00:00.000Z"))
        .await
        .unwrap();
    assert!(matches!(
        store.resolve("def").await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.export("def").await,
        Err(StoreError::NotFound { .. })
    ));
    // `def` is a session of its own.
    store
        .import(&lines("def", "2026-01-02T00:00:00.000Z"))
        .await
        .unwrap();
    assert_eq!(store.resolve("def").await.unwrap(), "def");
    assert_eq!(store.resolve("abc").await.unwrap(), "abc_def");
    let exported = store.export("def").await.unwrap();
    assert!(
        exported.header.contains(r#""id":"def""#),
        "{}",
        exported.header
    );
}

/// A lease file is rewritten in place: a link planted in its place is not written through.
#[tokio::test]
async fn a_linked_lease_file_is_not_written_through() {
    let root = tempfile::tempdir().unwrap();
    let store = DirectoryStore::new(root.path());
    store
        .import(&lines("s1", "2026-01-01T00:00:00.000Z"))
        .await
        .unwrap();
    let session_file = store.find("s1").unwrap();
    let victim = root.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let mut lease = session_file.into_os_string();
    lease.push(".lease");
    std::os::unix::fs::symlink(&victim, &lease).unwrap();
    let ttl = std::time::Duration::from_secs(60);
    assert!(store.acquire("s1", "w", ttl).await.is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}
