//! Runs every test of the shared suite on the directory backend and on PostgreSQL.
//!
//! PostgreSQL comes from `CTXKIT_TEST_DATABASE_URL` (`.ci/install-postgres` starts one). Without it
//! the database half is skipped with a message, except under CI (`CI=true`), where it fails: a
//! test that skips has not run.

use ctxkit_store::{DirectoryStore, PostgresStore};

/// The test database, or `None` to skip outside CI.
pub async fn database() -> Option<PostgresStore> {
    let url = match std::env::var("CTXKIT_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CTXKIT_TEST_DATABASE_URL is not set: under CI the PostgreSQL tests must run \
                 (.ci/install-postgres starts the database)"
            );
            eprintln!("skipped: CTXKIT_TEST_DATABASE_URL is not set (run .ci/install-postgres)");
            return None;
        }
    };
    Some(
        PostgresStore::connect(&url)
            .await
            .expect("the test database answers"),
    )
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
    a_second_writer_is_refused,
    a_dead_writer_is_taken_over_and_fenced,
    a_released_lease_is_free_at_once,
    racing_takeovers_leave_one_writer,
    a_bad_line_writes_nothing,
    unknown_and_duplicate_sessions,
    listing_by_project_name_time_and_text,
    a_huge_entry_is_stored_and_found,
    a_stored_session_is_listed_as_its_file,
);
