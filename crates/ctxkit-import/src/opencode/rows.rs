//! A database session's messages read one at a time, in the order the converter takes them: its
//! `message` rows with their `part` rows (a message's parts at a time; the few `session_message`
//! rows that record switches beside them merged in), or its `session_message` rows, each by SQL
//! `ORDER BY`, never all at once. A million rows read whole took a gigabyte.
//! Only a session with rows of both models that OpenCode shows together (an older version
//! continued it after the upgrade) is read whole (`database::session_rows`): those are merged by
//! creation time.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::Connection;

use super::database::{open_read_only, table_exists, with_ids};
use super::storage::{NextRow, RawMessage, parse_object, str_of};
use super::timeline::{Item, legacy_created};
use crate::error::ImportError;

/// Which rows hold a streamed session's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Model {
    /// `message` and `part` rows, with the session's `session_message` rows merged in by creation
    /// time: streamed this way, a session has no `session_message` row of history, so those are
    /// events recorded beside the messages (model and agent switches), a handful held at a time.
    Legacy,
    /// `session_message` rows.
    Next,
}

/// A session whose rows are read as they are converted.
#[derive(Debug)]
pub(crate) struct StreamedRows {
    connection: super::database::Database,
    session_id: String,
    model: Model,
}

impl StreamedRows {
    pub(crate) fn open(path: &Path, session_id: &str, model: Model) -> Result<Self, ImportError> {
        Ok(Self {
            connection: open_read_only(path)?,
            session_id: session_id.to_owned(),
            model,
        })
    }

    /// Whether a message with this id is among the session's items (a revert's target).
    pub(crate) fn contains(&self, message_id: &str) -> rusqlite::Result<bool> {
        let tables: &[&str] = match self.model {
            Model::Legacy => &["message", "session_message"],
            Model::Next => &["session_message"],
        };
        for table in tables {
            if !table_exists(&self.connection, table)? {
                continue;
            }
            let query =
                format!("SELECT EXISTS (SELECT 1 FROM {table} WHERE session_id = ?1 AND id = ?2)");
            let found: bool = self.connection.query_row(
                &query,
                [self.session_id.as_str(), message_id],
                |row| row.get(0),
            )?;
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The `tail_start_id`s the session's compaction parts name (`message` rows only). Parts whose
    /// text holds neither `compaction` nor an escape cannot be one, and are not parsed.
    pub(crate) fn compaction_tails(&self) -> rusqlite::Result<HashSet<String>> {
        let mut tails = HashSet::new();
        if self.model != Model::Legacy || !table_exists(&self.connection, "message")? {
            return Ok(tails);
        }
        let mut statement = self.connection.prepare(
            "SELECT part.data FROM message JOIN part ON part.message_id = message.id \
             WHERE message.session_id = ?1 \
             AND (instr(part.data, 'compaction') > 0 OR instr(part.data, char(92)) > 0)",
        )?;
        let mut rows = statement.query([self.session_id.as_str()])?;
        while let Some(row) = rows.next()? {
            let part = parse_object(&row.get::<_, String>(0)?);
            if str_of(&part, "type") == Some("compaction")
                && let Some(tail) = str_of(&part, "tail_start_id")
            {
                tails.insert(tail.to_owned());
            }
        }
        Ok(tails)
    }

    /// Gives `each` the session's items in order, one at a time.
    pub(crate) fn for_each(&self, each: &mut dyn FnMut(Item)) -> rusqlite::Result<()> {
        match self.model {
            Model::Legacy => {
                let mut events = Vec::new();
                for_each_next_row(&self.connection, &self.session_id, &mut |row| {
                    events.push(row);
                })?;
                // Creation order, as `timeline` merges them; on a tie the `seq` order stays.
                events.sort_by_key(|event| event.time_created);
                let mut events = events.into_iter().peekable();
                for_each_message(&self.connection, &self.session_id, &mut |message| {
                    // A switch is recorded at the creation time of the prompt that made it: before it.
                    let created = legacy_created(&message.info);
                    while let Some(event) = events.next_if(|event| event.time_created <= created) {
                        each(Item::Next(event));
                    }
                    each(Item::Legacy(message));
                })?;
                events.for_each(|event| each(Item::Next(event)));
                Ok(())
            }
            Model::Next => for_each_next_row(&self.connection, &self.session_id, &mut |row| {
                each(Item::Next(row));
            }),
        }
    }
}

/// Gives `each` the `message` rows of a session in creation order, each with its `part` rows.
pub(crate) fn for_each_message(
    connection: &Connection,
    session_id: &str,
    each: &mut dyn FnMut(RawMessage),
) -> rusqlite::Result<()> {
    if !table_exists(connection, "message")? {
        return Ok(());
    }
    let mut messages_query = connection
        .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")?;
    let mut parts_query =
        connection.prepare("SELECT id, data FROM part WHERE message_id = ?1 ORDER BY id")?;
    let mut rows = messages_query.query([session_id])?;
    while let Some(row) = rows.next()? {
        let message_id: String = row.get(0)?;
        let info = with_ids(&row.get::<_, String>(1)?, &message_id, session_id, None);
        let mut parts = Vec::new();
        let mut part_rows = parts_query.query([&message_id])?;
        while let Some(part) = part_rows.next()? {
            let part_id: String = part.get(0)?;
            let data: String = part.get(1)?;
            parts.push(with_ids(&data, &part_id, session_id, Some(&message_id)));
        }
        each(RawMessage { info, parts });
    }
    Ok(())
}

/// Gives `each` the `session_message` rows of a session in `seq` order; none when the table does
/// not exist.
pub(crate) fn for_each_next_row(
    connection: &Connection,
    session_id: &str,
    each: &mut dyn FnMut(NextRow),
) -> rusqlite::Result<()> {
    if !table_exists(connection, "session_message")? {
        return Ok(());
    }
    // Older versions of the table have no `seq` column; their rows are in creation order.
    let query = if super::database::column_exists(connection, "session_message", "seq")? {
        "SELECT id, type, time_created, data FROM session_message WHERE session_id = ?1 \
         ORDER BY seq, id"
    } else {
        "SELECT id, type, time_created, data FROM session_message WHERE session_id = ?1 \
         ORDER BY time_created, id"
    };
    let mut statement = connection.prepare(query)?;
    let mut rows = statement.query([session_id])?;
    while let Some(row) = rows.next()? {
        let data: String = row.get(3)?;
        each(NextRow {
            id: row.get(0)?,
            kind: row.get(1)?,
            time_created: row.get(2)?,
            data: data.into_boxed_str(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::convert::convert_session;
    use super::super::database::{database_session_ids, read_database};
    use super::super::storage::{RawSession, Rows};
    use super::*;

    /// A fixture database's sessions converted from rows read one at a time give what the same
    /// rows read whole give (reverts inside a reply and between messages, compactions with a kept
    /// tail, both message models), and the streamed ones are streamed.
    #[test]
    fn streamed_rows_convert_as_rows_read_whole() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shapes");
        let dir = tempfile::tempdir().unwrap();
        let mut streamed = 0;
        let mut read_whole = Vec::new();
        for name in [
            "opencode-2x.sql",
            "opencode-next.sql",
            "opencode-switch-events.sql",
        ] {
            let path = dir.path().join(format!("{name}.db"));
            let script = std::fs::read_to_string(fixtures.join(name)).unwrap();
            Connection::open(&path)
                .unwrap()
                .execute_batch(&script)
                .unwrap();
            let connection = open_read_only(&path).unwrap();
            for id in database_session_ids(&path, false).unwrap() {
                for raw in read_database(&path, &id).unwrap() {
                    let Rows::Database { session_id, .. } = &raw.rows else {
                        read_whole.push(id.clone());
                        continue;
                    };
                    streamed += 1;
                    let mut messages = Vec::new();
                    for_each_message(&connection, session_id, &mut |message| {
                        messages.push(message);
                    })
                    .unwrap();
                    let mut next_messages = Vec::new();
                    for_each_next_row(&connection, session_id, &mut |row| {
                        next_messages.push(row);
                    })
                    .unwrap();
                    let whole = RawSession {
                        info: raw.info.clone(),
                        rows: Rows::Loaded {
                            messages,
                            next_messages,
                        },
                        issues: Vec::new(),
                    };
                    let expected = convert_session(whole).unwrap();
                    assert_eq!(convert_session(raw).unwrap(), expected, "{name} {id}");
                }
            }
        }
        assert!(streamed >= 9, "{streamed}");
        // Only the session an older version continued after the upgrade is read whole.
        assert_eq!(read_whole, ["ses_7f0000000004Migrated"]);
    }
}
