//! Listing the sessions of the PostgreSQL backend: by project, name, time and text.

use super::{PostgresStore, SESSION_COLUMNS, session_of};
use crate::error::{Result, StoreError};
use crate::lines::SEARCHED_CHARACTERS;
use crate::store::{ListQuery, StoredSession};

impl PostgresStore {
    pub(super) async fn list_sessions(&self, query: &ListQuery) -> Result<Vec<StoredSession>> {
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
