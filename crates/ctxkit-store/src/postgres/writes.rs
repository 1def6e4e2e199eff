//! Writing to the PostgreSQL backend: an import in batches inside one transaction, and an
//! append in one statement that checks the writer's token under the session row's lock.

use std::time::Duration;

use super::deadline::Deadline as _;
use super::{PostgresStore, SESSION_COLUMNS, millis, session_of};
use crate::error::{Result, StoreError};
use crate::lines::{EntryFacts, check_entries, header_facts};
use crate::store::{Lease, StoredSession};

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
        name: facts
            .iter()
            .rev()
            .find_map(|facts| facts.name.as_deref().map(storable_text)),
        first_message: facts
            .iter()
            .find_map(|facts| facts.user_text.as_deref().map(storable_text)),
        messages: i64::try_from(messages).unwrap_or(i64::MAX),
        modified_ms: facts
            .iter()
            .filter(|facts| facts.role.is_some())
            .filter_map(|facts| facts.timestamp_ms)
            .max(),
    }
}

/// `text` as a `text` column holds it: PostgreSQL's text cannot hold U+0000, which a prompt or
/// a name may (QA 2026-12-07: a prompt holding one failed every append of its turn, the model
/// already paid, and each retry failed alike). The entry's line keeps it, JSON-escaped; the
/// listing's copy shows U+FFFD in its place.
pub(super) fn storable_text(text: &str) -> String {
    text.replace('\0', "\u{fffd}")
}

/// Refuses `value` when it holds U+0000, which a `text` column cannot: where the store keys on a
/// value (an id, a parent, a kind, the cwd), replacing the character would change what it names.
/// Said before anything is written, naming the field (QA 2026-12-07: a raw "invalid byte
/// sequence" from the database, exit 4, as if the database had failed).
fn refuse_nul(what: String, value: &str) -> Result<()> {
    if value.contains('\0') {
        return Err(StoreError::InvalidSession {
            what,
            reason: "it holds U+0000, which a database's text cannot store; replace the \
                     character in a copy of the file and import the copy"
                .to_owned(),
        });
    }
    Ok(())
}

/// [`refuse_nul`] for the keys of entries appended to session `id`.
fn refuse_nul_keys(id: &str, facts: &[EntryFacts]) -> Result<()> {
    for (position, facts) in facts.iter().enumerate() {
        let keys = [
            facts.id.as_deref(),
            facts.parent_id.as_deref(),
            Some(facts.kind.as_str()),
        ];
        for key in keys.into_iter().flatten() {
            refuse_nul(format!("entry {} of session `{id}`", position + 1), key)?;
        }
    }
    Ok(())
}

/// An append in one statement: the session's row locked while it holds the writer's token
/// (`$2`), the entries inserted after its last one, the row's counts and the lease's expiry
/// updated; the new entry count, or no row when the token is not the session's (or the session is
/// gone). When the session's last lines are these very lines (an append retried after its answer
/// was lost: the first attempt committed), nothing is inserted again and the lease is renewed. The parameters: session id, token, the entries' ids, parent ids, kinds and lines, then
/// the row's changes (`RowChanges`) and the lease's time to live in milliseconds.
const APPEND: &str = "
    WITH locked AS (
        SELECT id, entry_count FROM ctxkit_sessions
        WHERE id = $1 AND lease_token = $2 AND lease_owner IS NOT NULL
        FOR UPDATE
    ), already AS (
        SELECT coalesce((SELECT array_agg(e.line ORDER BY e.seq) FROM ctxkit_entries e
                         WHERE e.session_id = locked.id
                           AND e.seq > locked.entry_count - cardinality($6::text[])),
                        '{}') = $6::text[] AS stored
        FROM locked
    ), inserted AS (
        INSERT INTO ctxkit_entries (session_id, seq, entry_id, parent_id, kind, line, fence)
        SELECT locked.id, locked.entry_count + t.ordinality, t.entry_id, t.parent_id, t.kind,
               t.line, $2
        FROM locked, already, unnest($3::text[], $4::text[], $5::text[], $6::text[])
             WITH ORDINALITY AS t(entry_id, parent_id, kind, line, ordinality)
        WHERE NOT already.stored
    )
    UPDATE ctxkit_sessions s
    SET entry_count = locked.entry_count
            + CASE WHEN already.stored THEN 0 ELSE cardinality($6::text[]) END,
        name = coalesce($7, s.name),
        first_message = coalesce(s.first_message, $8),
        message_count = s.message_count + CASE WHEN already.stored THEN 0 ELSE $9::bigint END,
        modified_ms = greatest(s.modified_ms, coalesce($10, s.modified_ms)),
        last_message_ms = greatest(s.last_message_ms, $10),
        updated_at = now(),
        lease_expires = clock_timestamp() + make_interval(secs => $11::bigint / 1000.0)
    FROM locked, already WHERE s.id = locked.id
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
    refuse_nul_keys(id, facts)?;
    let statement = transaction
        .prepare(
            "INSERT INTO ctxkit_entries (session_id, seq, entry_id, parent_id, kind, line, fence)
             SELECT $1, $2 + ordinality, entry_id, parent_id, kind, line, $3
             FROM unnest($4::text[], $5::text[], $6::text[], $7::text[])
                  WITH ORDINALITY AS t(entry_id, parent_id, kind, line, ordinality)",
        )
        .within_bulk("prepare the insert")
        .await?;
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
        .within_bulk("insert the entries")
        .await?;
    let changes = row_changes(facts);
    let total = count + i64::try_from(lines.len()).unwrap_or(i64::MAX);
    transaction
        .execute(
            "UPDATE ctxkit_sessions SET entry_count = $2,
                 name = coalesce($3, name),
                 first_message = coalesce(first_message, $4),
                 message_count = message_count + $5,
                 modified_ms = greatest(modified_ms, coalesce($6, modified_ms)),
                 last_message_ms = greatest(last_message_ms, $6),
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
        .within_bulk("update the session")
        .await?;
    Ok(total)
}

/// Entries an import inserts in one statement at most…
const IMPORT_BATCH_LINES: usize = 10_000;
/// …and bytes of lines at most: an import holds one batch, not the session.
const IMPORT_BATCH_BYTES: usize = 16 << 20;

/// The lease a session is created with ([`crate::SessionStore::create`]).
pub(super) struct NewLease<'a> {
    pub owner: &'a str,
    pub ttl: Duration,
}

/// The token of a lease a session was created with: the first one granted (the column starts
/// at 0, and each grant adds one).
pub(super) const CREATED_LEASE_TOKEN: i64 = 1;

impl PostgresStore {
    /// Stores a new session, `header_line` then the entry lines `next_entry` gives (checked by
    /// it, with their facts), in batches inside one transaction: a refused line or a failed insert
    /// stores nothing.
    pub(super) async fn import_from<S: AsRef<str>>(
        &self,
        header_line: &str,
        next_entry: impl FnMut() -> Result<Option<(S, EntryFacts)>> + Send,
    ) -> Result<StoredSession> {
        self.import_leased(header_line, None, next_entry).await
    }

    /// [`Self::import_from`], the session's row written with `lease` when there is one: in the
    /// same transaction, so a session is never stored without its creator's lease.
    pub(super) async fn import_leased<S: AsRef<str>>(
        &self,
        header_line: &str,
        lease: Option<NewLease<'_>>,
        mut next_entry: impl FnMut() -> Result<Option<(S, EntryFacts)>> + Send,
    ) -> Result<StoredSession> {
        let header = header_facts(header_line).map_err(|reason| StoreError::InvalidSession {
            what: "the session to import".to_owned(),
            reason,
        })?;
        for (what, value) in [("id", &header.id), ("cwd", &header.cwd)] {
            refuse_nul(format!("the session's {what}"), value)?;
        }
        let created_ms = ctxkit_session::parse_timestamp_ms(&header.timestamp).unwrap_or(0);
        let mut client = self.client().await?;
        let transaction = client.transaction().within_bulk("begin the import").await?;
        let (owner, token, ttl) = match &lease {
            Some(lease) => (Some(lease.owner), CREATED_LEASE_TOKEN, millis(lease.ttl)),
            None => (None, 0, 0),
        };
        let inserted = transaction
            .execute(
                "INSERT INTO ctxkit_sessions
                     (id, cwd, created, header, modified_ms, lease_owner, lease_token, lease_expires)
                 VALUES ($1, $2, $3, $4, $5, $6, $7,
                         CASE WHEN $6::text IS NULL THEN NULL
                              ELSE clock_timestamp() + make_interval(secs => $8::bigint / 1000.0)
                         END)
                 ON CONFLICT (id) DO NOTHING",
                &[
                    &header.id,
                    &header.cwd,
                    &header.timestamp,
                    &header_line,
                    &created_ms,
                    &owner,
                    &token,
                    &ttl,
                ],
            )
            .within_bulk("insert the session")
            .await?;
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
            .within("read the session")
            .await?;
        transaction
            .commit()
            .within_bulk("commit the import")
            .await?;
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

impl PostgresStore {
    pub(super) async fn append_entries(
        &self,
        lease: &Lease,
        lines: &[String],
        ttl: Duration,
    ) -> Result<u64> {
        let facts = check_entries(&lease.session_id, lines)?;
        refuse_nul_keys(&lease.session_id, &facts)?;
        let client = self.client().await?;
        // One prepared statement, one round trip, its own transaction: the row lock orders this
        // append with any takeover (a takeover waits for the commit, and an append after a
        // takeover sees the new token, as `FOR UPDATE` checks the row's newest version).
        let statement = client
            .prepare_cached(APPEND)
            .within("prepare the append")
            .await?;
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
            .within("append the entries")
            .await?;
        if let Some(row) = row {
            return Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0));
        }
        // Nothing was written: the session is gone, or its lease is another writer's.
        let exists = client
            .query_opt(
                "SELECT 1 FROM ctxkit_sessions WHERE id = $1",
                &[&lease.session_id],
            )
            .within("read the session")
            .await?;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nul_in_a_key_is_refused_naming_the_entry() {
        let facts = [
            EntryFacts {
                id: Some("e1".to_owned()),
                kind: "message".to_owned(),
                ..EntryFacts::default()
            },
            EntryFacts {
                id: Some("e\u{0}2".to_owned()),
                kind: "message".to_owned(),
                ..EntryFacts::default()
            },
        ];
        let refused = refuse_nul_keys("s1", &facts).unwrap_err().to_string();
        assert!(
            refused.starts_with("entry 2 of session `s1`: it holds U+0000"),
            "{refused}"
        );
        assert!(refuse_nul_keys("s1", &facts[..1]).is_ok());
    }

    #[test]
    fn a_nul_in_a_name_or_a_prompt_is_stored_as_a_replacement_character() {
        let facts = [
            EntryFacts {
                kind: "message".to_owned(),
                user_text: Some("second \0 prompt".to_owned()),
                ..EntryFacts::default()
            },
            EntryFacts {
                kind: "session_info".to_owned(),
                name: Some("my\0name".to_owned()),
                ..EntryFacts::default()
            },
        ];
        let changes = row_changes(&facts);
        assert_eq!(
            changes.first_message.as_deref(),
            Some("second \u{fffd} prompt")
        );
        assert_eq!(changes.name.as_deref(), Some("my\u{fffd}name"));
    }
}
