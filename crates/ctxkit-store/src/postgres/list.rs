//! Listing the sessions of the PostgreSQL backend: by project, name, time and text.

use super::deadline::Deadline as _;
use super::{PostgresStore, SESSION_COLUMNS, session_of};
use crate::error::Result;
use crate::search::{is_unspaced_word, words_of};
use crate::store::{ListQuery, StoredSession};

/// The words of an entry line as the text index holds them (`migrations/0003_text_index_words.sql`
/// creates the index on this expression, which the search must repeat to use it): the line's first
/// `SEARCHED_CHARACTERS` with every ASCII character but a letter or a digit a space, split and
/// lowercased by the `simple` configuration. The words `words_of` makes of a line, as the file
/// store reads them (non-ASCII letters lowercased as the database's locale does).
const SEARCHED_WORDS: &str = "to_tsvector('simple', regexp_replace(left(line, 100000), \
    '[\\x01-\\x2F\\x3A-\\x40\\x5B-\\x60\\x7B-\\x7F]+', ' ', 'g'))";

impl PostgresStore {
    pub(super) async fn list_sessions(&self, query: &ListQuery) -> Result<Vec<StoredSession>> {
        let client = self.client().await?;
        let limit = if query.limit == 0 {
            i64::MAX
        } else {
            i64::try_from(query.limit).unwrap_or(i64::MAX)
        };
        let name_pattern = query.name.as_deref().map(like_pattern);
        // The query's words as the file store splits them; none (only punctuation) matches a
        // session with any entry, as there.
        // A word in a script written without spaces is looked for inside the line's text, as
        // the file store looks for it inside a word (the index holds a Chinese clause as one
        // word).
        let (inside, whole): (Vec<String>, Vec<String>) = query
            .text
            .as_deref()
            .map(words_of)
            .unwrap_or_default()
            .into_iter()
            .partition(|word| is_unspaced_word(word));
        let words = query.text.as_ref().map(|_| whole.join(" "));
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
                             AND ($5 = '' OR {SEARCHED_WORDS} @@ plainto_tsquery('simple', $5))
                             AND NOT EXISTS (SELECT 1 FROM unnest($7::text[]) AS inside(word)
                                 WHERE strpos(lower(left(e.line, 100000)), inside.word) = 0)))
                     ORDER BY s.modified_ms DESC, s.id LIMIT $6"
                ),
                &[
                    &query.project,
                    &name_pattern,
                    &query.since_ms,
                    &query.until_ms,
                    &words,
                    &limit,
                    &inside,
                ],
            )
            .within("list the sessions")
            .await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The search repeats the index's expression exactly (else PostgreSQL reads every line).
    #[test]
    fn the_search_reads_the_words_the_index_holds() {
        let migration = include_str!("../../migrations/0003_text_index_words.sql");
        let one_line = SEARCHED_WORDS
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            migration.contains(&format!("USING gin ({one_line});")),
            "{one_line}"
        );
        assert!(one_line.contains(&crate::search::SEARCHED_CHARACTERS.to_string()));
    }
}
