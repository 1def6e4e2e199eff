//! Saying so when part of a conversation is not on the branch an imported session continues: the
//! context at the leaf (the file's last entry, as ctxkit and Pi read it) leaves out every message
//! beside its path, so a transcript whose links fork (an edited prompt, an undone turn, two writers,
//! or links an agent wrote wrong) would otherwise import with a report of no issues while the
//! continued session lacks part of it. Only the leaf's own tree counts: subagent runs and records
//! whose parent is missing (reported apart) are trees of their own.

use crate::report::{ImportIssue, IssueKind};
use crate::stored::Stored;

/// Reports the conversation entries of the leaf's tree that are not on the leaf's path: one issue,
/// at the first such entry's source line.
pub(crate) fn report_messages_beside_the_path(planned: &[Stored], issues: &mut Vec<ImportIssue>) {
    let Some(leaf) = planned.len().checked_sub(1) else {
        return;
    };
    let parents = crate::stored::parent_positions(planned);
    let roots = roots_of(&parents);
    let mut on_path = vec![false; planned.len()];
    let mut current = Some(leaf);
    // Parents form no cycle here (`break_parent_cycles` ran), but the walk is bounded all the same.
    for _ in 0..planned.len() {
        let Some(position) = current else {
            break;
        };
        on_path[position] = true;
        current = parents[position];
    }
    let beside: Vec<usize> = (0..planned.len())
        .filter(|&position| {
            !on_path[position]
                && roots[position] == roots[leaf]
                && planned[position].is_conversation()
        })
        .collect();
    if let Some(&first) = beside.first() {
        issues.push(ImportIssue::at(
            planned[first].line,
            IssueKind::MessagesBesideThePath {
                messages: beside.len(),
            },
        ));
    }
}

/// The root each entry descends from, every entry walked once.
fn roots_of(parents: &[Option<usize>]) -> Vec<usize> {
    const UNKNOWN: usize = usize::MAX;
    let mut roots = vec![UNKNOWN; parents.len()];
    let mut walk = Vec::new();
    for start in 0..parents.len() {
        let mut current = start;
        while roots[current] == UNKNOWN && walk.len() <= parents.len() {
            walk.push(current);
            match parents[current] {
                Some(parent) => current = parent,
                None => {
                    roots[current] = current;
                    break;
                }
            }
        }
        let root = roots[current];
        for position in walk.drain(..) {
            roots[position] = root;
        }
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_entry_gets_its_root() {
        let parents = [None, Some(0), Some(1), None, Some(3), Some(1)];
        assert_eq!(roots_of(&parents), [0, 0, 0, 3, 3, 0]);
    }
}
