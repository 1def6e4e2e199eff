//! Several tenants on one database: a role and a schema each (the role's `search_path` its schema),
//! as docs/deployment.md sets them up. The database keeps them apart: a tenant's store sees its own
//! sessions only and cannot reach another's schema even when its URL asks for it.

use ctxkit_store::{ListQuery, PostgresStore, SessionLines, SessionStore as _};

/// Creates role and schema `name` (owned by the role, its `search_path`), as a superuser.
async fn tenant(admin: &tokio_postgres::Client, name: &str) {
    let setup = format!(
        "DROP SCHEMA IF EXISTS {name} CASCADE; DROP ROLE IF EXISTS {name}; \
         CREATE ROLE {name} LOGIN; CREATE SCHEMA {name} AUTHORIZATION {name}; \
         ALTER ROLE {name} SET search_path = {name}; \
         REVOKE ALL ON SCHEMA public FROM {name}; REVOKE CREATE ON SCHEMA public FROM PUBLIC;"
    );
    admin.batch_execute(&setup).await.unwrap();
}

fn session(id: &str) -> SessionLines {
    let header = format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}}"#
    );
    SessionLines::parse("test", format!("{header}\n").as_bytes()).unwrap()
}

#[tokio::test]
async fn each_tenant_sees_its_own_sessions_and_cannot_reach_another() {
    let Some(url) = crate::backends::database_url() else {
        return;
    };
    let (admin, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    // Each run its own tenants: tests of other runs on the same database are left alone.
    let suffix = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
    let (first, second) = (format!("tenant_a_{suffix}"), format!("tenant_b_{suffix}"));
    tenant(&admin, &first).await;
    tenant(&admin, &second).await;
    let as_role =
        |role: &str| url.replacen("postgres://postgres@", &format!("postgres://{role}@"), 1);
    let store_a = PostgresStore::connect(&as_role(&first)).await.unwrap();
    let store_b = PostgresStore::connect(&as_role(&second)).await.unwrap();
    store_a.import(&session("kept-by-a")).await.unwrap();
    let listed = |store: PostgresStore| async move {
        let sessions = store.list(&ListQuery::default()).await.unwrap();
        sessions
            .into_iter()
            .map(|stored| stored.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(listed(store_a.clone()).await, ["kept-by-a"]);
    assert!(listed(store_b.clone()).await.is_empty());
    assert!(store_b.export("kept-by-a").await.is_err());
    // B's URL asking for A's schema: the database does not let B use it (a schema its role may
    // not use is no schema for it), so nothing opens.
    let reaching = format!("{}?options=-c%20search_path%3D{first}", as_role(&second));
    let error = PostgresStore::connect(&reaching)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("no schema has been selected"), "{error}");
    admin
        .batch_execute(&format!(
            "DROP SCHEMA {first} CASCADE; DROP SCHEMA {second} CASCADE; \
             DROP ROLE {first}; DROP ROLE {second};"
        ))
        .await
        .unwrap();
}
