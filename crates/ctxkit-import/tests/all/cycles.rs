//! A file whose records' parents form cycles (no agent writes one; a damaged or hand-edited file
//! can): the import cuts one link per cycle, reports it, and writes a tree that opens without a
//! problem, every record kept.

use ctxkit_import::{IssueKind, import_file};
use ctxkit_session::Session;

use crate::shapes::shape;

#[test]
fn parent_cycles_are_cut_once_each_and_the_written_file_is_a_tree() {
    let session = import_file(&shape("claude-parent-cycles.jsonl"), None).unwrap();
    assert_eq!(session.entry_count(), 7, "every record is kept");
    let cycles: Vec<(Option<usize>, &IssueKind)> = session
        .report
        .issues
        .iter()
        .filter(|issue| matches!(issue.kind, IssueKind::ParentCycle { .. }))
        .map(|issue| (issue.line, &issue.kind))
        .collect();
    // One cut per cycle, at its earliest record: the pair's first line, the ring's first line, and
    // the record that is its own parent.
    assert_eq!(
        cycles.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
        [Some(1), Some(3), Some(6)],
        "{cycles:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cycles.jsonl");
    std::fs::write(&file, session.to_jsonl().unwrap()).unwrap();
    let reopened = Session::open(&file).unwrap();
    assert!(
        reopened.diagnostics().is_empty(),
        "{:?}",
        reopened.diagnostics()
    );
    assert_eq!(reopened.entries().len(), 7);
    // The leaf (the ring's child) reaches the ring's first record, now a root.
    let path: Vec<String> = reopened
        .branch_path(None)
        .iter()
        .map(|entry| entry.id().to_owned())
        .collect();
    assert_eq!(path.len(), 4, "{path:?}");
}
