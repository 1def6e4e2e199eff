//! The session tree as text (`ctxkit tree`, the chat's `/tree --list`): one line per entry, a
//! line indented only where the tree branches, with connectors as Pi's tree draws them: `├ ` for
//! a branch that another follows, `└ ` for the last, and `│ ` down the side of a branch until
//! the next one (or the line that goes on) is reached.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use anyhow::Result;
use ctxkit_session::Session;

use crate::render::{entry_summary, one_line};

/// The fewest characters of an entry's text a tree line shows, however deep or narrow.
const TREE_TEXT_MIN: usize = 20;
/// An entry's text on a tree line when the width is not known (output to a file or a pipe).
const TREE_TEXT_DEFAULT: usize = 70;

/// The entry tree, one line per entry (usage records left out unless one is the leaf): id, kind,
/// text, label, the leaf marked. Each line fits `columns` when given (a terminal's width), its
/// text cut to the room the rest leaves (a tester's 80-column terminal wrapped 531 of 913 lines).
pub(crate) fn write_tree(
    session: &Session,
    columns: Option<usize>,
    out: &mut dyn Write,
) -> Result<()> {
    let index = session.index();
    let leaf = session.leaf_id();
    let rows = tree_rows(session);
    for (row, prefix) in rows.iter().zip(prefixes(&rows)) {
        let Some(entry) = index.get(row.index) else {
            continue;
        };
        // Usage records (Pi 0.87) are bookkeeping, hidden as in Pi's tree view; `--json` lists them.
        if entry.type_name() == "usage" && Some(entry.id()) != leaf {
            continue;
        }
        let (kind, text) = entry_summary(entry);
        let label = index
            .label(entry.id())
            .map(|label| format!(" [{}]", one_line(label, 40)))
            .unwrap_or_default();
        let marker = if Some(entry.id()) == leaf {
            "  ← leaf"
        } else {
            ""
        };
        let head = format!("{prefix}{} {kind}: ", entry.id());
        let room = columns.map_or(TREE_TEXT_DEFAULT, |columns| {
            let taken = [head.as_str(), label.as_str(), marker]
                .iter()
                .map(|part| unicode_width::UnicodeWidthStr::width(*part))
                .sum::<usize>();
            columns.saturating_sub(taken).max(TREE_TEXT_MIN)
        });
        writeln!(out, "{head}{}{label}{marker}", one_line(&text, room))?;
    }
    Ok(())
}

/// Where one entry goes in the text tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TreeRow {
    index: usize,
    /// Indentation, in steps of two columns.
    depth: usize,
    /// Drawn with a connector: one of several children, beside the line that goes on.
    side: bool,
    /// A side row no sibling follows (`└ `); its branch needs no line down its side.
    last: bool,
}

/// Where a row of a drawn tree stands (the text tree's, the chat's `/tree`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Indentation, in steps of two columns.
    pub depth: usize,
    /// One of several children, drawn with a connector in the step before its depth.
    pub side: bool,
    /// A side row no sibling follows (`└ `).
    pub last: bool,
}

fn prefixes(rows: &[TreeRow]) -> Vec<String> {
    connector_prefixes(rows.iter().map(|row| Placement {
        depth: row.depth,
        side: row.side,
        last: row.last,
    }))
}

/// Each row's indentation and connector, in drawing order. A side row at depth `d` has its
/// connector in step `d − 1`; its branch is every row after it that is deeper, or as deep and not
/// a side row (the branch's own line), and while it lasts, step `d − 1` shows `│` unless the row
/// was the last.
pub(crate) fn connector_prefixes(rows: impl IntoIterator<Item = Placement>) -> Vec<String> {
    // The side rows whose branch is being drawn: their depth, and whether a line runs down it.
    let mut open: Vec<(usize, bool)> = Vec::new();
    rows.into_iter()
        .map(|row| {
            open.retain(|&(depth, _)| depth < row.depth || (depth == row.depth && !row.side));
            let steps = row.depth.saturating_sub(usize::from(row.side));
            let mut prefix = String::with_capacity(2 * row.depth + 2);
            for step in 0..steps {
                let line = open
                    .iter()
                    .any(|&(depth, shown)| shown && depth == step + 1);
                prefix.push_str(if line { "│ " } else { "  " });
            }
            if row.side {
                prefix.push_str(if row.last { "└ " } else { "├ " });
                open.push((row.depth, !row.last));
            }
            prefix
        })
        .collect()
}

/// The entries in the order the text tree draws them. A line is indented only where the tree
/// branches, so a long linear session stays at the left. Where a branch point has a child that goes
/// on — the one toward the leaf, else the only one with children of its own — that child keeps its
/// parent's column and its siblings are drawn before it, one step right with a connector, as
/// `git log --graph` keeps the checked-out line straight: an imported Claude Code session hangs a
/// `progress` entry beside nearly every step, and each such fork pushed the rest of the
/// conversation two columns right. Other branch points indent every child one step.
fn tree_rows(session: &Session) -> Vec<TreeRow> {
    let index = session.index();
    let leaf_path: HashSet<usize> = session
        .leaf_id()
        .and_then(|id| index.position(id))
        .map(|leaf| index.path_to(leaf).into_iter().collect())
        .unwrap_or_default();
    let Family {
        children,
        roots,
        count,
    } = family(session);
    let has_children = |entry: usize| children.get(&entry).is_some_and(|list| !list.is_empty());
    let mut rows = Vec::with_capacity(count);
    let mut stack: Vec<TreeRow> = roots
        .iter()
        .rev()
        .map(|&root| TreeRow {
            index: root,
            depth: 0,
            side: false,
            last: false,
        })
        .collect();
    while let Some(row) = stack.pop() {
        rows.push(row);
        let list = children.get(&row.index).map_or(&[][..], Vec::as_slice);
        let placed = place_children(list, row.depth, has_children, |entry| {
            leaf_path.contains(&entry)
        });
        stack.extend(placed.into_iter().rev());
    }
    rows
}

/// Each entry's children and the roots, by place in the session's index, in the order the
/// session's tree visits them (by time).
pub(crate) struct Family {
    pub children: HashMap<usize, Vec<usize>>,
    pub roots: Vec<usize>,
    /// How many entries there are.
    pub count: usize,
}

/// The session's [`Family`].
pub(crate) fn family(session: &Session) -> Family {
    let index = session.index();
    let nodes = session.tree();
    let mut family = Family {
        children: HashMap::new(),
        roots: Vec::new(),
        count: nodes.len(),
    };
    for node in &nodes {
        match index.parent(node.index) {
            Some(parent) => family.children.entry(parent).or_default().push(node.index),
            None => family.roots.push(node.index),
        }
    }
    family
}

/// The rows of one entry's children (at `depth`, the parent's), in drawing order (see
/// [`tree_rows`]).
fn place_children(
    children: &[usize],
    depth: usize,
    has_children: impl Fn(usize) -> bool,
    on_leaf_path: impl Fn(usize) -> bool,
) -> Vec<TreeRow> {
    let row = |index, depth, side| TreeRow {
        index,
        depth,
        side,
        last: false,
    };
    if let [only] = children {
        return vec![row(*only, depth, false)];
    }
    let going_on = children
        .iter()
        .copied()
        .find(|&child| on_leaf_path(child))
        .or_else(|| {
            let mut parents = children
                .iter()
                .copied()
                .filter(|&child| has_children(child));
            match (parents.next(), parents.next()) {
                (Some(one), None) => Some(one),
                (Some(_), Some(_)) | (None, _) => None,
            }
        });
    let mut placed: Vec<TreeRow> = children
        .iter()
        .filter(|&&child| Some(child) != going_on)
        .map(|&child| row(child, depth + 1, true))
        .collect();
    match going_on {
        Some(child) => placed.push(row(child, depth, false)),
        None => {
            if let Some(final_side) = placed.last_mut() {
                final_side.last = true;
            }
        }
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(depth: usize, side: bool, last: bool) -> TreeRow {
        TreeRow {
            index: 0,
            depth,
            side,
            last,
        }
    }

    /// A branch beside the line that goes on has a line down its side to where the line goes on;
    /// the last of several branches with none going on has none.
    #[test]
    fn connectors_run_down_a_branch_until_the_next_one() {
        let rows = [
            row(0, false, false), // root
            row(1, true, false),  // ├ a side branch
            row(1, false, false), //   its line
            row(2, true, false),  //   ├ a branch of it
            row(2, true, true),   //   └ its last branch
            row(2, false, false), //     that one's line
            row(0, false, false), // the root's line going on
        ];
        assert_eq!(
            prefixes(&rows),
            ["", "├ ", "│ ", "│ ├ ", "│ └ ", "│   ", ""]
        );
    }

    #[test]
    fn a_branch_point_without_a_line_going_on_ends_in_its_last_branch() {
        let rows = [
            row(0, false, false),
            row(1, true, false),
            row(1, false, false),
            row(1, true, true),
            row(1, false, false),
        ];
        assert_eq!(prefixes(&rows), ["", "├ ", "│ ", "└ ", "  "]);
    }
}
