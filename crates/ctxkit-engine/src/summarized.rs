//! `recall` with [`SUMMARIZED_REFERENCE`](crate::recall::SUMMARIZED_REFERENCE): the original
//! messages behind the summaries on the current branch, read back from the session. A compaction
//! stands for the entries it covered; a branch summary for the branch it left behind, from where
//! the two branches part to the leaf that was left (`fromId`), read as that branch's context showed
//! it. Both kinds of summary say so in the model's view (`summary_pointer`), so what a summary left
//! out is not lost to the model.

use std::collections::HashSet;

use ctxkit_compaction::list_compactions;
use ctxkit_protocol::EntryKind;
use ctxkit_session::{EntryIndex, Session};

use crate::engine::Engine;
use crate::error::Result;
use crate::recall::{Branch, matching_lines, message_text, query_words};

/// How deep branch summaries on a branch left behind are followed (each such branch summary stands
/// for a branch of its own).
const MAX_NESTING: usize = 8;

impl Engine {
    /// The messages the summaries on the current branch stand for, in the order of the branch
    /// (a branch left behind where its summary sits), each headed by its entry id and role. With
    /// `query`, only the messages holding one of its words (any case), and of those only the lines
    /// around the words. `None` when no summary on the branch stands for anything; an empty string
    /// when nothing matches.
    pub async fn fetch_summarized(&self, query: Option<&str>) -> Result<Option<String>> {
        let state = self.lock().await;
        let session = &state.session;
        let compactions = list_compactions(session, None)?;
        let covered: HashSet<&str> = compactions
            .iter()
            .flat_map(|record| &record.covered_entry_ids)
            .map(String::as_str)
            .collect();
        let mut reader = Reader {
            words: query_words(query.unwrap_or_default()),
            parts: Vec::new(),
            summaries: 0,
        };
        let branch = Branch::of(session);
        reader.summaries += usize::from(!covered.is_empty());
        reader.read(&branch, &branch.path, &covered, 0);
        Ok((reader.summaries > 0).then(|| reader.parts.join("\n\n")))
    }
}

/// What `fetch_summarized` gathers as it walks a branch.
struct Reader {
    words: Vec<String>,
    parts: Vec<String>,
    /// Summaries found that stand for something.
    summaries: usize,
}

impl Reader {
    /// Reads `positions` (entries of `branch`, in order): each one `covered` names, and at each
    /// branch summary the branch it left behind.
    fn read(
        &mut self,
        branch: &Branch<'_>,
        positions: &[EntryIndex],
        covered: &HashSet<&str>,
        nesting: usize,
    ) {
        let session = branch.session;
        for &position in positions {
            let Some(entry) = session.index().get(position) else {
                continue;
            };
            if entry.type_name() == "branch_summary" && nesting < MAX_NESTING {
                self.read_left_behind(session, &branch.path, position, nesting);
                continue;
            }
            if covered.contains(entry.id()) {
                self.push(branch, position, "");
            }
        }
    }

    /// The branch the summary at `position` (on `path`) left behind: the entries on the path to
    /// its `fromId` that are not on `path` before the summary.
    fn read_left_behind(
        &mut self,
        session: &Session,
        path: &[EntryIndex],
        position: EntryIndex,
        nesting: usize,
    ) {
        let Some(from) = left_leaf(session, position) else {
            return;
        };
        let before: HashSet<EntryIndex> = path
            .iter()
            .copied()
            .take_while(|&p| p != position)
            .collect();
        let left_path = session.index().path_to(from);
        let segment: Vec<EntryIndex> = left_path
            .iter()
            .copied()
            .filter(|entry| !before.contains(entry))
            .collect();
        if segment.is_empty() {
            return;
        }
        self.summaries += 1;
        // Every message of the branch left behind, compacted there or not: the summary stood for
        // all of it.
        let left = Branch::along(session, left_path);
        for &entry in &segment {
            let Some(stored) = session.index().get(entry) else {
                continue;
            };
            if stored.type_name() == "branch_summary" && nesting + 1 < MAX_NESTING {
                self.read_left_behind(session, &left.path, entry, nesting + 1);
            } else if stored.type_name() == "message" {
                self.push(&left, entry, " (on the branch left behind)");
            }
        }
    }

    /// Adds the message at `position` of `branch` (the lines around the query's words, when there
    /// is a query).
    fn push(&mut self, branch: &Branch<'_>, position: EntryIndex, where_: &str) {
        let Some(id) = branch.session.index().get(position).map(|entry| entry.id()) else {
            return;
        };
        let Some(Ok(message)) = branch.message(position) else {
            return;
        };
        let Some((role, text)) = message_text(&message) else {
            return;
        };
        let text = if self.words.is_empty() {
            text
        } else {
            match matching_lines(&text, &self.words) {
                Some(lines) => lines,
                None => return,
            }
        };
        self.parts
            .push(format!("[entry {id}{where_}] {role}:\n{text}"));
    }
}

/// The leaf the branch summary at `position` left (`fromId`), when it is an entry of the session.
fn left_leaf(session: &Session, position: EntryIndex) -> Option<EntryIndex> {
    let entry = session.index().get(position)?.parse().ok()?;
    let EntryKind::BranchSummary(summary) = entry.kind else {
        return None;
    };
    session.index().position(&summary.from_id)
}
