//! The problems an index finds once every entry is in: parent cycles (broken) and entries naming
//! one that is not there (reported).

use super::{NO_PARENT, SessionIndex};
use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::entry::EntryMeta;

impl SessionIndex {
    /// Detaches the first entry (in file order) of every parent cycle, which makes it a root.
    pub(super) fn break_cycles(&mut self, diagnostics: &mut Vec<Diagnostic>) {
        const UNSEEN: u8 = 0;
        const ON_WALK: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![UNSEEN; self.entries.len()];
        let mut walk = Vec::new();
        for start in 0..self.entries.len() {
            let mut current = start as u32;
            walk.clear();
            while current != NO_PARENT && state[current as usize] == UNSEEN {
                state[current as usize] = ON_WALK;
                walk.push(current);
                current = self.parents[current as usize];
            }
            if current != NO_PARENT && state[current as usize] == ON_WALK {
                let cycle_start = walk
                    .iter()
                    .position(|&member| member == current)
                    .unwrap_or(0);
                let first = walk[cycle_start..].iter().copied().min().unwrap_or(current);
                self.parents[first as usize] = NO_PARENT;
                let entry = &self.entries[first as usize];
                diagnostics.push(Diagnostic {
                    line: Some(entry.line()),
                    kind: DiagnosticKind::ParentCycle {
                        id: entry.id().to_owned(),
                    },
                });
            }
            for &member in &walk {
                state[member as usize] = DONE;
            }
        }
    }

    pub(super) fn report_dangling(&self, diagnostics: &mut Vec<Diagnostic>) {
        // A resolved parent is indexed and is not the entry itself: only the entries without one
        // and those naming others are looked at (reading every entry cost a cache miss each).
        let mut candidates: Vec<u32> = (0..self.parents.len())
            .filter(|&position| self.parents.get(position) == Some(&NO_PARENT))
            .filter_map(|position| u32::try_from(position).ok())
            .chain(self.naming_others.iter().copied())
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        for position in candidates {
            let position = position as usize;
            let (Some(entry), Some(&resolved)) =
                (self.entries.get(position), self.parents.get(position))
            else {
                continue;
            };
            let line = Some(entry.line());
            let unresolved = resolved == NO_PARENT;
            if unresolved && entry.parent_id() == Some(entry.id()) {
                diagnostics.push(Diagnostic {
                    line,
                    kind: DiagnosticKind::ParentCycle {
                        id: entry.id().to_owned(),
                    },
                });
            } else if unresolved
                && let Some(parent) = entry.parent_id()
                && self.by_id.get(&self.entries, parent).is_none()
            {
                diagnostics.push(Diagnostic {
                    line,
                    kind: DiagnosticKind::MissingParent {
                        id: entry.id().to_owned(),
                        parent_id: parent.to_owned(),
                    },
                });
            }
            match &entry.meta {
                EntryMeta::Compaction {
                    first_kept_entry_id: Some(target),
                } if self.by_id.get(&self.entries, target).is_none() => {
                    diagnostics.push(Diagnostic {
                        line,
                        kind: DiagnosticKind::DanglingFirstKept {
                            id: entry.id().to_owned(),
                            target: target.to_string(),
                        },
                    });
                }
                EntryMeta::Label {
                    target_id: Some(target),
                    ..
                } if self.by_id.get(&self.entries, target).is_none() => {
                    diagnostics.push(Diagnostic {
                        line,
                        kind: DiagnosticKind::DanglingLabelTarget {
                            id: entry.id().to_owned(),
                            target: target.to_string(),
                        },
                    });
                }
                EntryMeta::Compaction { .. }
                | EntryMeta::Label { .. }
                | EntryMeta::Message { .. }
                | EntryMeta::ThinkingLevelChange { .. }
                | EntryMeta::ModelChange { .. }
                | EntryMeta::BranchSummary { .. }
                | EntryMeta::Custom
                | EntryMeta::CustomMessage
                | EntryMeta::SessionInfo { .. }
                | EntryMeta::ContextEdit { .. }
                | EntryMeta::Usage
                | EntryMeta::Unknown { .. } => {}
            }
        }
    }
}
