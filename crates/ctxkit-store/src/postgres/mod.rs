//! The PostgreSQL backend: a pooled async connection (`deadpool-postgres` over `tokio-postgres`),
//! migrations run by ctxkit, one row per entry, and the lease checked in the transaction that
//! inserts (`SELECT … FOR UPDATE` on the session's row), so no two writers ever interleave.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::{NoTls, Row};

use self::tls::Tls;

use self::deadline::Deadline as _;
use crate::error::{Result, StoreError};
use crate::lines::{SessionLines, next_checked};
use crate::store::{Lease, ListQuery, SessionStore, StoredSession};

mod deadline;
mod lease;
mod list;
pub(crate) mod tls;
mod writes;

/// The migrations, in order; `ctxkit_schema` records which ran.
const MIGRATIONS: &[(i32, &str)] = &[
    (1, include_str!("../../migrations/0001_sessions.sql")),
    (
        2,
        include_str!("../../migrations/0002_text_index_prefix.sql"),
    ),
    (
        3,
        include_str!("../../migrations/0003_text_index_words.sql"),
    ),
    (4, include_str!("../../migrations/0004_last_message.sql")),
];

/// A key for `pg_advisory_xact_lock`: one migrator at a time across every instance.
const MIGRATION_LOCK: i64 = 0x6374_786b_6974; // "ctxkit"

/// Connections a store keeps at most.
const POOL_SIZE: usize = 16;

/// How long a request waits for a connection at most: for one of the pool's to be free, or for
/// the database to take one more.
const POOL_WAIT: Duration = Duration::from_secs(30);

/// The pause before asking again for a connection the database refused for having too many.
const CROWDED_RETRY: Duration = Duration::from_millis(50);

/// How long a connection may go unused before the pool closes it: an idle instance of a fleet
/// held its busiest minute's connections for ever, and other instances or the CLI met the
/// role's `CONNECTION LIMIT` (QA r103).
const IDLE_CONNECTION: Duration = Duration::from_secs(60);

/// Closes `pool`'s connections idle for [`IDLE_CONNECTION`], every half of it, while any clone
/// of the pool lives.
fn close_idle_connections_in_turn(pool: &Pool) {
    let weak = pool.weak();
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(IDLE_CONNECTION / 2);
        loop {
            ticks.tick().await;
            let Some(pool) = weak.upgrade() else { return };
            pool.retain(|_, metrics| metrics.last_used() < IDLE_CONNECTION);
        }
    });
}

/// Sessions in PostgreSQL.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PostgresStore")
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to `url` and runs the migrations that have not run.
    pub async fn connect(url: &str) -> Result<Self> {
        let tls::Connection { mut config, tls } = tls::read_url(url)?;
        deadline::bound_socket(&mut config);
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = match &tls {
            Tls::Plain => Manager::from_config(config, NoTls, manager_config),
            Tls::Verified(verified) => {
                Manager::from_config(config, tls::connector(verified)?, manager_config)
            }
        };
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(Duration::from_secs(10)))
            .build()
            .map_err(|error| StoreError::Connect {
                reason: error.to_string(),
            })?;
        close_idle_connections_in_turn(&pool);
        let store = Self { pool };
        store.migrate().await?;
        Ok(store)
    }

    /// Closes the pool's connections unused for `idle` or longer (the pool does so by itself for
    /// a minute's idleness); the next request opens one again.
    pub fn close_idle_connections(&self, idle: Duration) {
        self.pool.retain(|_, metrics| metrics.last_used() < idle);
    }

    /// The connections the pool holds now, busy or idle.
    pub fn open_connections(&self) -> usize {
        self.pool.status().size
    }

    /// A connection from the pool. When the database refuses a new one for having too many
    /// (`max_connections`, a role's or database's `CONNECTION LIMIT`: SQLSTATE 53300) while this
    /// pool holds some, the request waits for one of them to be free (at most [`POOL_WAIT`])
    /// instead of failing: a burst of clients on an instance used to fail their requests with
    /// `sorry, too many clients already` while the pool's connections were free a moment later.
    async fn client(&self) -> Result<deadpool_postgres::Object> {
        let deadline = std::time::Instant::now() + POOL_WAIT;
        loop {
            match self.pool.get().await {
                Ok(client) => return Ok(client),
                Err(error)
                    if too_many_connections(&error)
                        && self.pool.status().size > 0
                        && std::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(CROWDED_RETRY).await;
                }
                Err(error) => return Err(StoreError::connect(&error)),
            }
        }
    }

    /// Whether the database answers now: a connection from the pool runs `SELECT 1`.
    pub async fn check(&self) -> Result<()> {
        self.client()
            .await?
            .simple_query("SELECT 1")
            .within("check the connection")
            .await
            .map(drop)
    }

    /// Whether this store's connections are encrypted (TLS), as the server sees them.
    pub async fn encrypted(&self) -> Result<bool> {
        let row = self
            .client()
            .await?
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .within("read the connection's encryption")
            .await?;
        row.try_get(0).map_err(|error| StoreError::Database {
            context: "read the connection's encryption",
            error,
        })
    }

    /// Runs the migrations not yet recorded, under an advisory lock (instances starting together
    /// migrate once).
    async fn migrate(&self) -> Result<()> {
        let mut client = self.client().await?;
        let transaction = client.transaction().within("begin the migration").await?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .within_bulk("lock the migration")
            .await?;
        transaction
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS ctxkit_schema (
                     version integer PRIMARY KEY,
                     applied_at timestamptz NOT NULL DEFAULT now())",
            )
            .within("create the schema table")
            .await?;
        let applied: Option<i32> = transaction
            .query_one("SELECT max(version) FROM ctxkit_schema", &[])
            .within("read the schema version")
            .await?
            .get(0);
        for (version, sql) in MIGRATIONS {
            if applied.is_some_and(|applied| applied >= *version) {
                continue;
            }
            transaction
                .batch_execute(sql)
                .within_bulk("run a migration")
                .await?;
            transaction
                .execute(
                    "INSERT INTO ctxkit_schema (version) VALUES ($1)",
                    &[version],
                )
                .within("record a migration")
                .await?;
        }
        transaction.commit().within("commit the migration").await
    }
}

/// Whether the database refused a new connection for having too many already.
fn too_many_connections(error: &deadpool_postgres::PoolError) -> bool {
    matches!(error, deadpool_postgres::PoolError::Backend(error)
        if error.code() == Some(&tokio_postgres::error::SqlState::TOO_MANY_CONNECTIONS))
}

fn millis(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}

fn session_of(row: &Row) -> StoredSession {
    StoredSession {
        id: row.get("id"),
        cwd: row.get("cwd"),
        name: row.get("name"),
        created: row.get("created"),
        modified_ms: row.get("modified_ms"),
        last_message_ms: row.get("last_message_ms"),
        entries: u64::try_from(row.get::<_, i64>("entry_count")).unwrap_or(0),
        message_count: u64::try_from(row.get::<_, i64>("message_count")).unwrap_or(0),
        first_message: row.get("first_message"),
        // Read from the stored header (checked when it was stored), as the file store reads it.
        parent_session: crate::lines::header_facts(row.get("header"))
            .ok()
            .and_then(|header| header.parent_session),
        location: "postgres".to_owned(),
    }
}

const SESSION_COLUMNS: &str = "id, cwd, name, created, header, modified_ms, last_message_ms, entry_count, message_count, first_message";

impl SessionStore for PostgresStore {
    async fn import(&self, lines: &SessionLines) -> Result<StoredSession> {
        let mut entries = lines.entries.iter().enumerate();
        self.import_from(&lines.header, || next_checked(&mut entries))
            .await
    }

    async fn import_file(&self, path: &std::path::Path) -> Result<StoredSession> {
        // Read with blocking calls between the batches' inserts: a local file's buffered reads.
        let mut lines = crate::lines::JsonlLines::open(path)?;
        let (header, _) = lines.header()?;
        self.import_from(&header, || lines.next_entry()).await
    }

    async fn create(&self, lines: &SessionLines, owner: &str, ttl: Duration) -> Result<Lease> {
        let mut entries = lines.entries.iter().enumerate();
        let lease = writes::NewLease { owner, ttl };
        let stored = self
            .import_leased(&lines.header, Some(lease), || next_checked(&mut entries))
            .await?;
        Ok(Lease {
            session_id: stored.id,
            owner: owner.to_owned(),
            token: writes::CREATED_LEASE_TOKEN,
        })
    }

    async fn export(&self, id: &str) -> Result<SessionLines> {
        if id.contains('\0') {
            return Err(StoreError::NotFound { id: id.to_owned() });
        }
        let mut client = self.client().await?;
        // One snapshot for the header and the entries.
        let transaction = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .within("begin the export")
            .await?;
        let header = transaction
            .query_opt("SELECT header FROM ctxkit_sessions WHERE id = $1", &[&id])
            .within("read the session")
            .await?
            .ok_or_else(|| StoreError::NotFound { id: id.to_owned() })?
            .get(0);
        let entries = transaction
            .query(
                "SELECT line FROM ctxkit_entries WHERE session_id = $1 ORDER BY seq",
                &[&id],
            )
            .within_bulk("read the entries")
            .await?
            .iter()
            .map(|row| row.get(0))
            .collect();
        transaction.commit().within("end the export").await?;
        Ok(SessionLines { header, entries })
    }

    async fn acquire(&self, id: &str, owner: &str, ttl: Duration) -> Result<Lease> {
        // No stored id holds U+0000 (a text column cannot): not found, not a database error a
        // client would take for an outage and retry (QA 2026-12-07).
        if id.contains('\0') {
            return Err(StoreError::NotFound { id: id.to_owned() });
        }
        self.acquire_lease(id, owner, ttl).await
    }

    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<()> {
        self.renew_lease(lease, ttl).await
    }

    async fn release(&self, lease: &Lease) -> Result<()> {
        self.release_lease(lease).await
    }

    async fn append(&self, lease: &Lease, lines: &[String], ttl: Duration) -> Result<u64> {
        self.append_entries(lease, lines, ttl).await
    }

    async fn resolve(&self, id_or_prefix: &str) -> Result<String> {
        let not_found = || StoreError::NotFound {
            id: id_or_prefix.to_owned(),
        };
        if id_or_prefix.is_empty() || id_or_prefix.contains('\0') {
            return Err(not_found());
        }
        let client = self.client().await?;
        // The session of that very id first, then the others in order; the count is all of them.
        let rows = client
            .query(
                "SELECT id, count(*) OVER () FROM ctxkit_sessions WHERE starts_with(id, $1) \
                 ORDER BY id <> $1, id LIMIT $2",
                &[&id_or_prefix, &(crate::store::AMBIGUOUS_IDS_SHOWN as i64)],
            )
            .within("find the session")
            .await?;
        let ids: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
        let count = rows.first().map_or(0, |row| row.get::<_, i64>(1));
        match ids.first() {
            None => Err(not_found()),
            Some(first) if first == id_or_prefix || count == 1 => Ok(first.clone()),
            Some(_) => Err(StoreError::AmbiguousId {
                prefix: id_or_prefix.to_owned(),
                count: usize::try_from(count).unwrap_or(usize::MAX),
                ids,
            }),
        }
    }

    async fn list(&self, query: &ListQuery) -> Result<Vec<StoredSession>> {
        self.list_sessions(query).await
    }
}
