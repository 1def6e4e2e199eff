//! The PostgreSQL backend: a pooled async connection (`deadpool-postgres` over `tokio-postgres`),
//! migrations run by ctxkit, one row per entry, and the lease checked in the transaction that
//! inserts (`SELECT … FOR UPDATE` on the session's row), so no two writers ever interleave.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::{NoTls, Row};

use crate::error::{Result, StoreError};
use crate::lines::{
    EntryFacts, SEARCHED_CHARACTERS, SessionLines, check_entries, header_facts, next_checked,
};
use crate::store::{Lease, ListQuery, SessionStore, StoredSession};

/// The migrations, in order; `ctxkit_schema` records which ran.
const MIGRATIONS: &[(i32, &str)] = &[
    (1, include_str!("../migrations/0001_sessions.sql")),
    (2, include_str!("../migrations/0002_text_index_prefix.sql")),
];

/// A key for `pg_advisory_xact_lock`: one migrator at a time across every instance.
const MIGRATION_LOCK: i64 = 0x6374_786b_6974; // "ctxkit"

/// Connections a store keeps at most.
const POOL_SIZE: usize = 16;

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
        let config: tokio_postgres::Config =
            url.parse()
                .map_err(|error: tokio_postgres::Error| StoreError::InvalidUrl {
                    url: crate::url::redact_url(url),
                    reason: error.to_string(),
                })?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(30)))
            .create_timeout(Some(Duration::from_secs(10)))
            .build()
            .map_err(|error| StoreError::Connect {
                reason: error.to_string(),
            })?;
        let store = Self { pool };
        store.migrate().await?;
        Ok(store)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object> {
        self.pool
            .get()
            .await
            .map_err(|error| StoreError::connect(&error))
    }

    /// Runs the migrations not yet recorded, under an advisory lock (instances starting together
    /// migrate once).
    async fn migrate(&self) -> Result<()> {
        let mut client = self.client().await?;
        let transaction = client
            .transaction()
            .await
            .map_err(StoreError::database("begin the migration"))?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(StoreError::database("lock the migration"))?;
        transaction
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS ctxkit_schema (
                     version integer PRIMARY KEY,
                     applied_at timestamptz NOT NULL DEFAULT now())",
            )
            .await
            .map_err(StoreError::database("create the schema table"))?;
        let applied: Option<i32> = transaction
            .query_one("SELECT max(version) FROM ctxkit_schema", &[])
            .await
            .map_err(StoreError::database("read the schema version"))?
            .get(0);
        for (version, sql) in MIGRATIONS {
            if applied.is_some_and(|applied| applied >= *version) {
                continue;
            }
            transaction
                .batch_execute(sql)
                .await
                .map_err(StoreError::database("run a migration"))?;
            transaction
                .execute(
                    "INSERT INTO ctxkit_schema (version) VALUES ($1)",
                    &[version],
                )
                .await
                .map_err(StoreError::database("record a migration"))?;
        }
        transaction
            .commit()
            .await
            .map_err(StoreError::database("commit the migration"))
    }
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
        entries: u64::try_from(row.get::<_, i64>("entry_count")).unwrap_or(0),
        message_count: u64::try_from(row.get::<_, i64>("message_count")).unwrap_or(0),
        first_message: row.get("first_message"),
        location: "postgres".to_owned(),
    }
}

const SESSION_COLUMNS: &str =
    "id, cwd, name, created, modified_ms, entry_count, message_count, first_message";

/// What appending these entries changes in the session's row.
struct RowChanges {
    name: Option<String>,
    first_message: Option<String>,
    messages: i64,
    modified_ms: Option<i64>,
}

fn row_changes(facts: &[EntryFacts]) -> RowChanges {
    // Every message entry, as the file listing (and Pi's) counts them.
    let messages = facts.iter().filter(|facts| facts.kind == "message").count();
    RowChanges {
        name: facts.iter().rev().find_map(|facts| facts.name.clone()),
        first_message: facts.iter().find_map(|facts| facts.user_text.clone()),
        messages: i64::try_from(messages).unwrap_or(i64::MAX),
        modified_ms: facts
            .iter()
            .filter(|facts| facts.role.is_some())
            .filter_map(|facts| facts.timestamp_ms)
            .max(),
    }
}

/// An append in one statement: the session's row locked while it holds the writer's token
/// (`$2`), the entries inserted after its last one, the row's counts and the lease's expiry
/// updated; the new entry count, or no row when the token is not the session's (or the session is
/// gone). The parameters: session id, token, the entries' ids, parent ids, kinds and lines, then
/// the row's changes (`RowChanges`) and the lease's time to live in milliseconds.
const APPEND: &str = "
    WITH locked AS (
        SELECT id, entry_count FROM ctxkit_sessions
        WHERE id = $1 AND lease_token = $2 AND lease_owner IS NOT NULL
        FOR UPDATE
    ), inserted AS (
        INSERT INTO ctxkit_entries (session_id, seq, entry_id, parent_id, kind, line, fence)
        SELECT locked.id, locked.entry_count + t.ordinality, t.entry_id, t.parent_id, t.kind,
               t.line, $2
        FROM locked, unnest($3::text[], $4::text[], $5::text[], $6::text[])
             WITH ORDINALITY AS t(entry_id, parent_id, kind, line, ordinality)
    )
    UPDATE ctxkit_sessions s
    SET entry_count = locked.entry_count + cardinality($6::text[]),
        name = coalesce($7, s.name),
        first_message = coalesce(s.first_message, $8),
        message_count = s.message_count + $9,
        modified_ms = greatest(s.modified_ms, coalesce($10, s.modified_ms)),
        updated_at = now(),
        lease_expires = clock_timestamp() + make_interval(secs => $11::bigint / 1000.0)
    FROM locked WHERE s.id = locked.id
    RETURNING s.entry_count";

/// The entries' ids, parents and kinds as the three array parameters of an insert.
struct EntryColumns<'a> {
    ids: Vec<Option<&'a str>>,
    parent_ids: Vec<Option<&'a str>>,
    kinds: Vec<&'a str>,
}

impl<'a> EntryColumns<'a> {
    fn of(facts: &'a [EntryFacts]) -> Self {
        Self {
            ids: facts.iter().map(|facts| facts.id.as_deref()).collect(),
            parent_ids: facts
                .iter()
                .map(|facts| facts.parent_id.as_deref())
                .collect(),
            kinds: facts.iter().map(|facts| facts.kind.as_str()).collect(),
        }
    }
}

/// Inserts `lines` after `count` entries and updates the session's row, inside `transaction`.
async fn insert_entries(
    transaction: &tokio_postgres::Transaction<'_>,
    id: &str,
    count: i64,
    fence: i64,
    lines: &[String],
    facts: &[EntryFacts],
) -> Result<i64> {
    let statement = transaction
        .prepare(
            "INSERT INTO ctxkit_entries (session_id, seq, entry_id, parent_id, kind, line, fence)
             SELECT $1, $2 + ordinality, entry_id, parent_id, kind, line, $3
             FROM unnest($4::text[], $5::text[], $6::text[], $7::text[])
                  WITH ORDINALITY AS t(entry_id, parent_id, kind, line, ordinality)",
        )
        .await
        .map_err(StoreError::database("prepare the insert"))?;
    let columns = EntryColumns::of(facts);
    transaction
        .execute(
            &statement,
            &[
                &id,
                &count,
                &fence,
                &columns.ids,
                &columns.parent_ids,
                &columns.kinds,
                &lines,
            ],
        )
        .await
        .map_err(StoreError::database("insert the entries"))?;
    let changes = row_changes(facts);
    let total = count + i64::try_from(lines.len()).unwrap_or(i64::MAX);
    transaction
        .execute(
            "UPDATE ctxkit_sessions SET entry_count = $2,
                 name = coalesce($3, name),
                 first_message = coalesce(first_message, $4),
                 message_count = message_count + $5,
                 modified_ms = greatest(modified_ms, coalesce($6, modified_ms)),
                 updated_at = now()
             WHERE id = $1",
            &[
                &id,
                &total,
                &changes.name,
                &changes.first_message,
                &changes.messages,
                &changes.modified_ms,
            ],
        )
        .await
        .map_err(StoreError::database("update the session"))?;
    Ok(total)
}

/// Entries an import inserts in one statement at most…
const IMPORT_BATCH_LINES: usize = 10_000;
/// …and bytes of lines at most: an import holds one batch, not the session.
const IMPORT_BATCH_BYTES: usize = 16 << 20;

impl PostgresStore {
    /// Stores a new session, `header_line` then the entry lines `next_entry` gives (checked by
    /// it, with their facts), in batches inside one transaction: a refused line or a failed insert
    /// stores nothing.
    async fn import_from<S: AsRef<str>>(
        &self,
        header_line: &str,
        mut next_entry: impl FnMut() -> Result<Option<(S, EntryFacts)>> + Send,
    ) -> Result<StoredSession> {
        let header = header_facts(header_line).map_err(|reason| StoreError::InvalidSession {
            what: "the session to import".to_owned(),
            reason,
        })?;
        let created_ms = ctxkit_session::parse_timestamp_ms(&header.timestamp).unwrap_or(0);
        let mut client = self.client().await?;
        let transaction = client
            .transaction()
            .await
            .map_err(StoreError::database("begin the import"))?;
        let inserted = transaction
            .execute(
                "INSERT INTO ctxkit_sessions (id, cwd, created, header, modified_ms)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
                &[
                    &header.id,
                    &header.cwd,
                    &header.timestamp,
                    &header_line,
                    &created_ms,
                ],
            )
            .await
            .map_err(StoreError::database("insert the session"))?;
        if inserted == 0 {
            return Err(StoreError::Exists { id: header.id });
        }
        let mut count = 0i64;
        loop {
            let (batch, facts, more) = import_batch(&mut next_entry)?;
            count = insert_entries(&transaction, &header.id, count, 0, &batch, &facts).await?;
            if !more {
                break;
            }
        }
        let row = transaction
            .query_one(
                &format!("SELECT {SESSION_COLUMNS} FROM ctxkit_sessions WHERE id = $1"),
                &[&header.id],
            )
            .await
            .map_err(StoreError::database("read the session"))?;
        transaction
            .commit()
            .await
            .map_err(StoreError::database("commit the import"))?;
        Ok(session_of(&row))
    }
}

/// The next batch of an import's entries, their facts, and whether more may follow.
fn import_batch<S: AsRef<str>>(
    next_entry: &mut impl FnMut() -> Result<Option<(S, EntryFacts)>>,
) -> Result<(Vec<String>, Vec<EntryFacts>, bool)> {
    let mut batch = Vec::new();
    let mut facts = Vec::new();
    let mut bytes = 0;
    while batch.len() < IMPORT_BATCH_LINES && bytes < IMPORT_BATCH_BYTES {
        let Some((line, line_facts)) = next_entry()? else {
            return Ok((batch, facts, false));
        };
        let line = line.as_ref();
        facts.push(line_facts);
        bytes += line.len();
        batch.push(line.to_owned());
    }
    Ok((batch, facts, true))
}

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

    async fn export(&self, id: &str) -> Result<SessionLines> {
        let mut client = self.client().await?;
        // One snapshot for the header and the entries.
        let transaction = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(StoreError::database("begin the export"))?;
        let header = transaction
            .query_opt("SELECT header FROM ctxkit_sessions WHERE id = $1", &[&id])
            .await
            .map_err(StoreError::database("read the session"))?
            .ok_or_else(|| StoreError::NotFound { id: id.to_owned() })?
            .get(0);
        let entries = transaction
            .query(
                "SELECT line FROM ctxkit_entries WHERE session_id = $1 ORDER BY seq",
                &[&id],
            )
            .await
            .map_err(StoreError::database("read the entries"))?
            .iter()
            .map(|row| row.get(0))
            .collect();
        transaction
            .commit()
            .await
            .map_err(StoreError::database("end the export"))?;
        Ok(SessionLines { header, entries })
    }

    async fn acquire(&self, id: &str, owner: &str, ttl: Duration) -> Result<Lease> {
        let client = self.client().await?;
        let granted = client
            .query_opt(
                "UPDATE ctxkit_sessions
                 SET lease_owner = $2, lease_token = lease_token + 1,
                     lease_expires = clock_timestamp() + make_interval(secs => $3::bigint / 1000.0)
                 WHERE id = $1
                   AND (lease_owner IS NULL OR lease_expires <= clock_timestamp())
                 RETURNING lease_token",
                &[&id, &owner, &millis(ttl)],
            )
            .await
            .map_err(StoreError::database("acquire the lease"))?;
        if let Some(row) = granted {
            return Ok(Lease {
                session_id: id.to_owned(),
                owner: owner.to_owned(),
                token: row.get(0),
            });
        }
        let holder = client
            .query_opt(
                "SELECT lease_owner,
                        (extract(epoch FROM lease_expires - clock_timestamp()) * 1000)::bigint
                 FROM ctxkit_sessions WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(StoreError::database("read the lease"))?
            .ok_or_else(|| StoreError::NotFound { id: id.to_owned() })?;
        Err(StoreError::SessionInUse {
            id: id.to_owned(),
            owner: holder.get::<_, Option<String>>(0).unwrap_or_default(),
            expires_in_ms: holder.get::<_, Option<i64>>(1).unwrap_or(0).max(0),
        })
    }

    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<()> {
        let client = self.client().await?;
        let renewed = client
            .execute(
                "UPDATE ctxkit_sessions
                 SET lease_expires = clock_timestamp() + make_interval(secs => $3::bigint / 1000.0)
                 WHERE id = $1 AND lease_token = $2 AND lease_owner IS NOT NULL",
                &[&lease.session_id, &lease.token, &millis(ttl)],
            )
            .await
            .map_err(StoreError::database("renew the lease"))?;
        fenced_unless(renewed == 1, lease)
    }

    async fn release(&self, lease: &Lease) -> Result<()> {
        let client = self.client().await?;
        let released = client
            .execute(
                "UPDATE ctxkit_sessions SET lease_owner = NULL, lease_expires = NULL
                 WHERE id = $1 AND lease_token = $2 AND lease_owner IS NOT NULL",
                &[&lease.session_id, &lease.token],
            )
            .await
            .map_err(StoreError::database("release the lease"))?;
        fenced_unless(released == 1, lease)
    }

    async fn append(&self, lease: &Lease, lines: &[String], ttl: Duration) -> Result<u64> {
        let facts = check_entries(&lease.session_id, lines)?;
        let client = self.client().await?;
        // One prepared statement, one round trip, its own transaction: the row lock orders this
        // append with any takeover (a takeover waits for the commit, and an append after a
        // takeover sees the new token, as `FOR UPDATE` checks the row's newest version).
        let statement = client
            .prepare_cached(APPEND)
            .await
            .map_err(StoreError::database("prepare the append"))?;
        let columns = EntryColumns::of(&facts);
        let changes = row_changes(&facts);
        let row = client
            .query_opt(
                &statement,
                &[
                    &lease.session_id,
                    &lease.token,
                    &columns.ids,
                    &columns.parent_ids,
                    &columns.kinds,
                    &lines,
                    &changes.name,
                    &changes.first_message,
                    &changes.messages,
                    &changes.modified_ms,
                    &millis(ttl),
                ],
            )
            .await
            .map_err(StoreError::database("append the entries"))?;
        if let Some(row) = row {
            return Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0));
        }
        // Nothing was written: the session is gone, or its lease is another writer's.
        let exists = client
            .query_opt(
                "SELECT 1 FROM ctxkit_sessions WHERE id = $1",
                &[&lease.session_id],
            )
            .await
            .map_err(StoreError::database("read the session"))?;
        match exists {
            Some(_) => Err(StoreError::Fenced {
                id: lease.session_id.clone(),
                token: lease.token,
            }),
            None => Err(StoreError::NotFound {
                id: lease.session_id.clone(),
            }),
        }
    }

    async fn list(&self, query: &ListQuery) -> Result<Vec<StoredSession>> {
        let client = self.client().await?;
        let limit = if query.limit == 0 {
            i64::MAX
        } else {
            i64::try_from(query.limit).unwrap_or(i64::MAX)
        };
        let name_pattern = query.name.as_deref().map(like_pattern);
        let rows = client
            .query(
                &format!(
                    "SELECT {SESSION_COLUMNS} FROM ctxkit_sessions s
                     WHERE ($1::text IS NULL OR s.cwd = $1)
                       AND ($2::text IS NULL OR s.name ILIKE $2 ESCAPE '\\')
                       AND ($3::bigint IS NULL OR s.modified_ms >= $3)
                       AND ($4::bigint IS NULL OR s.modified_ms < $4)
                       AND ($5::text IS NULL OR EXISTS (
                           SELECT 1 FROM ctxkit_entries e WHERE e.session_id = s.id
                             AND to_tsvector('simple', left(e.line, {SEARCHED_CHARACTERS}))
                                 @@ plainto_tsquery('simple', $5)))
                     ORDER BY s.modified_ms DESC, s.id LIMIT $6"
                ),
                &[
                    &query.project,
                    &name_pattern,
                    &query.since_ms,
                    &query.until_ms,
                    &query.text,
                    &limit,
                ],
            )
            .await
            .map_err(StoreError::database("list the sessions"))?;
        Ok(rows.iter().map(session_of).collect())
    }
}

fn fenced_unless(holds: bool, lease: &Lease) -> Result<()> {
    if holds {
        Ok(())
    } else {
        Err(StoreError::Fenced {
            id: lease.session_id.clone(),
            token: lease.token,
        })
    }
}

/// `%text%` for ILIKE, with `%`, `_` and `\` in `text` matched literally.
fn like_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for character in text.chars() {
        if matches!(character, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(character);
    }
    pattern.push('%');
    pattern
}
