//! Runs every test of the shared suite on the directory backend and on PostgreSQL.
//!
//! PostgreSQL comes from `CTXKIT_TEST_DATABASE_URL` (`.ci/install-postgres` starts one). Without it
//! the database half is skipped with a message, except under CI (`CI=true`), where it fails: a
//! test that skips has not run.

use ctxkit_store::{DirectoryStore, PostgresStore};

/// The test database, or `None` to skip outside CI.
pub async fn database() -> Option<PostgresStore> {
    let url = database_url()?;
    Some(
        PostgresStore::connect(&url)
            .await
            .expect("the test database answers"),
    )
}

/// The test database's URL, or `None` to skip outside CI.
pub fn database_url() -> Option<String> {
    match std::env::var("CTXKIT_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CTXKIT_TEST_DATABASE_URL is not set: under CI the PostgreSQL tests must run \
                 (.ci/install-postgres starts the database)"
            );
            eprintln!("skipped: CTXKIT_TEST_DATABASE_URL is not set (run .ci/install-postgres)");
            None
        }
    }
}

/// A connection the server refuses says why, in the server's words: "db error" alone left a
/// user guessing between a wrong password and a missing database.
#[tokio::test]
async fn a_refused_connection_says_why() {
    let Some(url) = database_url() else { return };
    let (server, _) = url.rsplit_once('/').unwrap();
    let missing = format!("{server}/ctxkit_no_such_database");
    let error = PostgresStore::connect(&missing).await.unwrap_err();
    let shown = error.to_string();
    assert!(
        matches!(error, ctxkit_store::StoreError::Connect { .. }),
        "{error:?}"
    );
    assert!(
        shown.contains(r#"database "ctxkit_no_such_database" does not exist"#),
        "{shown}"
    );
    assert!(!shown.contains("db error"), "{shown}");
    // Nothing listens on port 1: the driver's reason, with its cause.
    let error = PostgresStore::connect("postgres://nobody@127.0.0.1:1/x")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("Connection refused"), "{error}");
}

macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod directory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let root = tempfile::tempdir().unwrap();
                    let store = super::DirectoryStore::new(root.path());
                    crate::suite::$name(&store).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if let Some(store) = super::database().await {
                        crate::suite::$name(&store).await;
                    }
                }
            )*
        }
    };
}

on_both_backends!(
    import_then_export_is_byte_exact,
    a_file_imported_a_line_at_a_time_is_stored_as_its_lines,
    the_tree_labels_leaf_and_compactions_are_the_files,
    appends_land_in_order_and_are_acknowledged,
    a_retried_append_is_stored_once,
    a_second_writer_is_refused,
    a_created_session_is_its_creators_from_the_start,
    a_dead_writer_is_taken_over_and_fenced,
    a_released_lease_is_free_at_once,
    a_writer_takes_its_own_lease_again,
    racing_takeovers_leave_one_writer,
    a_bad_line_writes_nothing,
    what_the_session_reader_reads_is_imported,
    unknown_and_duplicate_sessions,
    a_nul_in_a_prompt_or_a_name_is_stored,
    a_session_is_named_by_the_start_of_its_id,
    listing_by_project_name_time_and_text,
    a_text_search_finds_the_words_of_urls_hosts_and_tokens,
    a_huge_entry_is_stored_and_found,
    a_stored_session_is_listed_as_its_file,
    a_copy_of_older_messages_shows_their_time_as_its_file_does,
);
