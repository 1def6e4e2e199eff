//! `recall` with [`SUMMARIZED_REFERENCE`](crate::recall::SUMMARIZED_REFERENCE): the original
//! messages behind the summaries on the current branch, read back from the session. A compaction
//! stands for the entries it covered; a branch summary for the branch it left behind, from where
//! the two branches part to the leaf that was left (`fromId`), read as that branch's context showed
//! it. Both kinds of summary say so in the model's view (`summary_pointer`), so what a summary left
//! out is not lost to the model.

use std::collections::HashSet;

use ctxkit_compaction::list_compactions;
use ctxkit_protocol::{AgentMessage, EntryKind};
use ctxkit_session::{EntryIndex, Session};

use crate::engine::Engine;
use crate::error::Result;
use crate::forget::is_forgotten;
use crate::recall::{Branch, matching_lines, message_text, query_words};

/// How deep branch summaries on a branch left behind are followed (each such branch summary stands
/// for a branch of its own).
const MAX_NESTING: usize = 8;

/// Which of the summarized messages `recall` reads: all of them, one entry's, or those from one
/// entry through another (in the branch's order; either end may come first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummarizedRange<'a> {
    All,
    Entry(&'a str),
    Between(&'a str, &'a str),
}

impl<'a> SummarizedRange<'a> {
    /// The range a reference's tail names: nothing (all), `<id>`, or `<id>..<id>`.
    pub fn parse(tail: &'a str) -> Self {
        let tail = tail
            .trim()
            .trim_start_matches('/')
            .trim_end_matches(']')
            .trim();
        if tail.is_empty() {
            return Self::All;
        }
        match tail.split_once("..") {
            Some((first, last)) => Self::Between(first.trim(), last.trim().trim_start_matches('.')),
            None => Self::Entry(tail),
        }
    }
}

/// What `recall` finds behind the summaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Originals {
    /// No summary on the branch stands for anything.
    NoSummary,
    /// The range names an id that is not one of the summarized messages.
    NotSummarized(String),
    /// The messages read (empty when the query matched none); `cut` when some show only the
    /// lines around the query's words.
    Found { text: String, cut: bool },
}

impl Engine {
    /// The messages the summaries on the current branch stand for, in the order of the branch
    /// (a branch left behind where its summary sits), each headed by its entry id and role. With
    /// `query`, only the messages holding one of its words (any case), and of those only the lines
    /// around the words. `None` when no summary on the branch stands for anything; an empty string
    /// when nothing matches.
    pub async fn fetch_summarized(&self, query: Option<&str>) -> Result<Option<String>> {
        Ok(
            match self.fetch_originals(SummarizedRange::All, query).await? {
                Originals::Found { text, .. } => Some(text),
                Originals::NoSummary | Originals::NotSummarized(_) => None,
            },
        )
    }

    /// The summarized messages `range` selects, as [`fetch_summarized`](Self::fetch_summarized)
    /// reads them.
    pub async fn fetch_originals(
        &self,
        range: SummarizedRange<'_>,
        query: Option<&str>,
    ) -> Result<Originals> {
        let state = self.lock().await;
        let session = &state.session;
        let compactions = list_compactions(session, None)?;
        let covered: HashSet<&str> = compactions
            .iter()
            .flat_map(|record| &record.covered_entry_ids)
            .map(String::as_str)
            .collect();
        let mut reader = Reader {
            session,
            branches: vec![Branch::of(session)],
            originals: Vec::new(),
            summaries: usize::from(!covered.is_empty()),
        };
        let path = reader.branches[0].path.clone();
        reader.read(0, &path, &covered, 0);
        if reader.summaries == 0 {
            return Ok(Originals::NoSummary);
        }
        let selected = match reader.select(range) {
            Ok(selected) => selected,
            Err(id) => return Ok(Originals::NotSummarized(id.to_owned())),
        };
        // Only the messages selected are read, one at a time: the summarized part of a long
        // session can be far larger than what one recall returns.
        let words = query_words(query.unwrap_or_default());
        let mut cut = false;
        let mut parts = Vec::new();
        for original in selected {
            if let Some((part, part_cut)) = reader.shown(original, &words) {
                cut |= part_cut;
                parts.push(part);
            }
        }
        Ok(Originals::Found {
            text: parts.join("\n\n"),
            cut,
        })
    }
}

/// One message behind a summary: where it is, not yet read.
#[derive(Clone, Copy)]
struct Original {
    /// Which of the reader's branches reads it (its context edits apply).
    branch: usize,
    position: EntryIndex,
    left_behind: bool,
}

/// What `fetch_originals` gathers as it walks a branch: the branches it reads (the current one
/// first, then each one a branch summary left behind) and the messages behind the summaries.
struct Reader<'s> {
    session: &'s Session,
    branches: Vec<Branch<'s>>,
    originals: Vec<Original>,
    /// Summaries found that stand for something.
    summaries: usize,
}

impl<'s> Reader<'s> {
    fn id(&self, original: &Original) -> Option<&'s str> {
        self.session
            .index()
            .get(original.position)
            .map(|entry| entry.id())
    }

    /// The originals `range` selects; `Err` with an id that is none of theirs.
    fn select<'r>(&self, range: SummarizedRange<'r>) -> std::result::Result<&[Original], &'r str> {
        let find = |id: &'r str| {
            self.originals
                .iter()
                .position(|original| self.id(original) == Some(id))
                .ok_or(id)
        };
        Ok(match range {
            SummarizedRange::All => &self.originals,
            SummarizedRange::Entry(id) => {
                let at = find(id)?;
                &self.originals[at..=at]
            }
            SummarizedRange::Between(first, last) => {
                let (first, last) = (find(first)?, find(last)?);
                &self.originals[first.min(last)..=first.max(last)]
            }
        })
    }

    /// The message headed by its id and role: whole, or the lines around `words`' (`None` when it
    /// cannot be read, has no text, or holds none of them), and whether lines were left out.
    fn shown(&self, original: &Original, words: &[String]) -> Option<(String, bool)> {
        let id = self.id(original)?;
        let Some(Ok(message)) = self
            .branches
            .get(original.branch)?
            .message(original.position)
        else {
            return None;
        };
        let (role, text) = message_text(&message)?;
        let (text, cut) = if words.is_empty() {
            (text, false)
        } else {
            let lines = matching_lines(&text, words)?;
            let cut = lines != text.lines().collect::<Vec<_>>().join("\n");
            (lines, cut)
        };
        let place = if original.left_behind {
            " (on the branch left behind)"
        } else {
            ""
        };
        Some((format!("[entry {id}{place}] {role}:\n{text}"), cut))
    }

    /// Reads `positions` (entries of branch `branch`, in order): each message `covered` names, and
    /// at each branch summary the branch it left behind.
    fn read(
        &mut self,
        branch: usize,
        positions: &[EntryIndex],
        covered: &HashSet<&str>,
        nesting: usize,
    ) {
        let left_behind = branch > 0;
        for &position in positions {
            let Some(entry) = self.session.index().get(position) else {
                continue;
            };
            if entry.type_name() == "branch_summary" {
                if nesting < MAX_NESTING {
                    self.read_left_behind(branch, position, nesting);
                }
            } else if entry.type_name() == "message"
                && (left_behind || covered.contains(entry.id()))
            {
                self.originals.push(Original {
                    branch,
                    position,
                    left_behind,
                });
            }
        }
    }

    /// The branch the summary at `position` (on branch `branch`) left behind: the entries on the
    /// path to its `fromId` that are not on that branch before the summary. Every message of it,
    /// compacted there or not: the summary stood for all of it.
    fn read_left_behind(&mut self, branch: usize, position: EntryIndex, nesting: usize) {
        let Some(from) = left_leaf(self.session, position) else {
            return;
        };
        let before: HashSet<EntryIndex> = self.branches[branch]
            .path
            .iter()
            .copied()
            .take_while(|&p| p != position)
            .collect();
        let left_path = self.session.index().path_to(from);
        let segment: Vec<EntryIndex> = left_path
            .iter()
            .copied()
            .filter(|entry| !before.contains(entry))
            .collect();
        if segment.is_empty() {
            return;
        }
        self.summaries += 1;
        self.branches.push(Branch::along(self.session, left_path));
        let left = self.branches.len() - 1;
        self.read(left, &segment, &HashSet::new(), nesting + 1);
    }
}

/// What `read` finds in the newest message of `role` on the branches the branch summaries on the
/// current branch left behind (those `recall` reads: see the module), each message as its branch's
/// context showed it. A damaged line of another message is passed over, as on the current branch.
pub(crate) fn newest_left_behind<T>(
    session: &Session,
    role: &str,
    read: impl Fn(&AgentMessage) -> Option<T>,
) -> Result<Option<T>> {
    let mut reader = Reader {
        session,
        branches: vec![Branch::of(session)],
        originals: Vec::new(),
        summaries: 0,
    };
    let path = reader.branches[0].path.clone();
    // No compaction's entries: only the branches left behind are read.
    reader.read(0, &path, &HashSet::new(), 0);
    for original in reader.originals.iter().rev() {
        let Some(entry) = session.index().get(original.position) else {
            continue;
        };
        if entry.role() != Some(role) {
            continue;
        }
        let Some(branch) = reader.branches.get(original.branch) else {
            continue;
        };
        let Some(message) = branch.readable_message(original.position)? else {
            continue;
        };
        if let Some(found) = read(&message) {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// The leaf the branch summary at `position` left (`fromId`), when it is an entry of the session.
/// `None` for the summary of a span the user had forgotten (`Engine::forget`): the user took it out
/// of the model's reach, and a recall must not bring it back.
fn left_leaf(session: &Session, position: EntryIndex) -> Option<EntryIndex> {
    let entry = session.index().get(position)?.parse().ok()?;
    let EntryKind::BranchSummary(summary) = entry.kind else {
        return None;
    };
    if is_forgotten(&summary.summary) {
        return None;
    }
    session.index().position(&summary.from_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_s_tail_names_all_one_entry_or_a_range() {
        assert_eq!(SummarizedRange::parse(""), SummarizedRange::All);
        assert_eq!(SummarizedRange::parse("/"), SummarizedRange::All);
        assert_eq!(
            SummarizedRange::parse("/5b1c0a2e]"),
            SummarizedRange::Entry("5b1c0a2e")
        );
        assert_eq!(
            SummarizedRange::parse("/5b1c0a2e..9f55f9b9"),
            SummarizedRange::Between("5b1c0a2e", "9f55f9b9")
        );
        assert_eq!(
            SummarizedRange::parse("/ a .. b "),
            SummarizedRange::Between("a", "b")
        );
    }
}
