//! TLS to PostgreSQL: `.ci/install-postgres` starts the test database with TLS on and a CA made
//! for the run (`CTXKIT_TEST_DATABASE_CA`).

use ctxkit_store::PostgresStore;

/// The test database's URL and its CA file, or `None` to skip outside CI.
fn database_and_ca() -> Option<(String, String)> {
    let url = crate::backends::database_url()?;
    let ca = std::env::var("CTXKIT_TEST_DATABASE_CA").unwrap_or_default();
    assert!(
        !ca.is_empty(),
        "CTXKIT_TEST_DATABASE_CA is not set (.ci/install-postgres prints it beside the URL)"
    );
    Some((url, ca))
}

/// With `sslmode` the connection is encrypted and the server verified against the named CA, by
/// its address and by its name; without it the connection stays plain, as before.
#[tokio::test]
async fn a_verified_connection_is_encrypted_and_a_plain_one_says_so() {
    let Some((url, ca)) = database_and_ca() else {
        return;
    };
    for mode in ["require", "verify-full"] {
        let verified = format!("{url}?sslmode={mode}&sslrootcert={ca}");
        let store = PostgresStore::connect(&verified).await.unwrap();
        assert!(store.encrypted().await.unwrap(), "{mode}");
    }
    let by_name = url.replace("127.0.0.1", "localhost");
    let store = PostgresStore::connect(&format!("{by_name}?sslmode=require&sslrootcert={ca}"))
        .await
        .unwrap();
    assert!(store.encrypted().await.unwrap());
    let plain = PostgresStore::connect(&url).await.unwrap();
    assert!(!plain.encrypted().await.unwrap());
}

/// A server whose certificate chains to no trusted root is refused, with the way out: the
/// built-in roots do not hold the run's CA, and another CA's file does not either.
#[tokio::test]
async fn an_unverified_server_is_refused_with_a_hint() {
    let Some((url, _)) = database_and_ca() else {
        return;
    };
    let error = PostgresStore::connect(&format!("{url}?sslmode=require"))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("over TLS"), "{error}");
    assert!(error.contains("invalid peer certificate"), "{error}");
    let other = tempfile::tempdir().unwrap();
    let stranger = other.path().join("stranger.pem");
    std::fs::write(&stranger, STRANGER_CA).unwrap();
    let error = PostgresStore::connect(&format!(
        "{url}?sslmode=verify-full&sslrootcert={}",
        stranger.display()
    ))
    .await
    .unwrap_err()
    .to_string();
    assert!(error.contains("invalid peer certificate"), "{error}");
}

/// A role the server admits by client certificate only: with `sslcert` and `sslkey` it connects
/// (and stores), without them the server refuses it.
#[tokio::test]
async fn a_client_certificate_logs_in_where_the_server_asks_for_one() {
    let Some((url, ca)) = database_and_ca() else {
        return;
    };
    let folder = std::path::Path::new(&ca).parent().unwrap();
    let as_cert_user = url.replacen("postgres://postgres@", "postgres://ctxkit_cert@", 1);
    let with_certificate = format!(
        "{as_cert_user}?sslmode=verify-full&sslrootcert={ca}&sslcert={}&sslkey={}",
        folder.join("client.crt").display(),
        folder.join("client.key").display()
    );
    let store = PostgresStore::connect(&with_certificate).await.unwrap();
    assert!(store.encrypted().await.unwrap());
    let error = PostgresStore::connect(&format!(
        "{as_cert_user}?sslmode=verify-full&sslrootcert={ca}"
    ))
    .await
    .unwrap_err()
    .to_string();
    assert!(error.contains("client certificate"), "{error}");
}

/// A self-signed CA that signed nothing here (generated once with openssl, P-256, for this test).
const STRANGER_CA: &str = include_str!("../fixtures/stranger-ca.pem");
