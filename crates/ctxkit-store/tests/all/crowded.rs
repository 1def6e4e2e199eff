//! A database that takes fewer connections than the pool would open (`max_connections`, a role's
//! `CONNECTION LIMIT`): a burst of requests waits for the pool's connections instead of failing
//! with `sorry, too many clients already` / `too many connections for role`. PostgreSQL from
//! `CTXKIT_TEST_DATABASE_URL`, whose user may create roles (CI's `postgres`).

use ctxkit_store::PostgresStore;

use crate::backends::database_url;

/// A role that may hold two connections at once, and `url` with it as the user.
async fn limited_role(url: &str) -> String {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(
            "DO $$ BEGIN
                 CREATE ROLE ctxkit_crowded LOGIN CONNECTION LIMIT 2;
             EXCEPTION WHEN duplicate_object THEN NULL;
             END $$;
             GRANT ALL ON SCHEMA public TO ctxkit_crowded;
             GRANT ALL ON ALL TABLES IN SCHEMA public TO ctxkit_crowded;",
        )
        .await
        .unwrap();
    let (scheme, rest) = url.split_once("://").unwrap();
    let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    format!("{scheme}://ctxkit_crowded@{host}")
}

#[tokio::test]
async fn a_burst_over_the_databases_connection_limit_waits_instead_of_failing() {
    let Some(url) = database_url() else { return };
    // The tables exist (the owner migrates), then the limited role connects.
    PostgresStore::connect(&url).await.unwrap();
    let store = PostgresStore::connect(&limited_role(&url).await)
        .await
        .unwrap();
    let checks = (0..40).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.check().await })
    });
    for check in futures_join(checks).await {
        check
            .unwrap()
            .expect("every request gets a connection in time");
    }
}

/// QA r103 (fleet): an idle instance never closed its connections, so other instances or the CLI
/// met the role's connection limit. Connections unused for the idle limit are closed, and the
/// next request opens one again.
#[tokio::test]
async fn connections_left_unused_are_closed_and_opened_again_on_use() {
    let Some(url) = database_url() else { return };
    let store = PostgresStore::connect(&url).await.unwrap();
    store.check().await.unwrap();
    assert_eq!(store.open_connections(), 1);
    store.close_idle_connections(std::time::Duration::from_secs(60));
    assert_eq!(store.open_connections(), 1, "a connection just used stays");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    store.close_idle_connections(std::time::Duration::from_millis(10));
    assert_eq!(store.open_connections(), 0);
    store.check().await.unwrap();
    assert_eq!(store.open_connections(), 1);
}

/// Awaits every task (the crate has no `futures` dependency).
async fn futures_join<T>(
    tasks: impl Iterator<Item = tokio::task::JoinHandle<T>>,
) -> Vec<Result<T, tokio::task::JoinError>> {
    let mut results = Vec::new();
    for task in tasks.collect::<Vec<_>>() {
        results.push(task.await);
    }
    results
}

/// QA r103 (fleet): a team's URL naming another team's schema failed with "no schema has been
/// selected to create in", which read like ctxkit's bug. The error is known for what it is, so
/// the CLI can say the role may not use that schema.
#[tokio::test]
async fn a_schema_the_role_may_not_use_is_told_apart() {
    let Some(url) = database_url() else { return };
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(
            "DO $$ BEGIN
                 CREATE ROLE ctxkit_other_team LOGIN;
             EXCEPTION WHEN duplicate_object THEN NULL;
             END $$;
             CREATE SCHEMA IF NOT EXISTS ctxkit_team_a;
             REVOKE ALL ON SCHEMA ctxkit_team_a FROM ctxkit_other_team;",
        )
        .await
        .unwrap();
    let (scheme, rest) = url.split_once("://").unwrap();
    let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    let separator = if host.contains('?') { '&' } else { '?' };
    let other = format!(
        "{scheme}://ctxkit_other_team@{host}{separator}options=-c%20search_path%3Dctxkit_team_a"
    );
    let error = PostgresStore::connect(&other).await.unwrap_err();
    assert!(error.is_schema_unusable(), "{error}");
    // A database that is down is no schema's fault.
    let refused = PostgresStore::connect("postgres://nobody@127.0.0.1:1/none")
        .await
        .unwrap_err();
    assert!(!refused.is_schema_unusable(), "{refused}");
}
