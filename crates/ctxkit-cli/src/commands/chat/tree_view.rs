//! `/tree` at a terminal: the session tree as a list to walk (each entry's kind, text, label and
//! tokens; its whole text below the list), Enter to go to an entry with or without a summary of
//! the branch left behind (a focus for it typed on the spot), `l` to label an entry, `f` to step
//! through the filters (`treeFilterMode`, as Pi's), Esc to leave with nothing changed. Going to an
//! entry never deletes anything: the leaf moves and the next prompt starts a new branch there.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use anyhow::Result;
use ctxkit_engine::NavigateOptions;
use ctxkit_session::{Session, StoredEntry};
use ctxkit_tokens::estimate_tokens;

use super::Chat;
use super::agent::Ask;
use super::picker::{List, Picked, pick, pick_scrolled};
use super::slash::Action;
use crate::commands::tree_text::{Family, Placement, connector_prefixes, family};
use crate::render::{entry_summary, one_line};

/// One entry of the tree; its text is rendered when its row is shown.
#[derive(Debug, Clone)]
struct TreeRow {
    entry: StoredEntry,
    /// The entry's place in the session's index.
    node: usize,
    depth: usize,
    /// The indentation and connector before the entry's kind (`│ ├ `).
    prefix: String,
    mark: &'static str,
    is_leaf: bool,
    label: Option<String>,
}

/// A row as shown: the list's line, the text below the list, and the kind and text for the
/// question after Enter.
#[derive(Debug, Clone, Default)]
struct Rendered {
    line: String,
    detail: String,
    short: String,
}

impl TreeRow {
    fn render(&self) -> Rendered {
        let entry = &self.entry;
        let (kind, text) = entry_summary(entry);
        let tokens = match entry.parse_message() {
            Some(Ok(message)) => estimate_tokens(&message),
            Some(Err(_)) | None => (text.len() as u64).div_ceil(4),
        };
        let label = self
            .label
            .as_ref()
            .map(|label| format!(" [{label}]"))
            .unwrap_or_default();
        let leaf = if self.is_leaf { "  ← leaf" } else { "" };
        Rendered {
            // Tokens in a column before the text, so a long row is cut in its text.
            line: format!(
                "{}{} {:>10}  {}{kind}: {}{label}{leaf}",
                self.mark,
                entry.id(),
                format!("~{tokens} tok"),
                indent(&self.prefix, self.depth),
                one_line(&text, 70)
            ),
            detail: format!(
                "{} · {kind} · {} · ~{tokens} tokens{label}\n{}",
                entry.id(),
                entry.timestamp(),
                text.trim()
            ),
            short: format!("{kind}: {}", one_line(&text, 50)),
        }
    }
}

/// Deepest indentation shown; deeper entries say their depth instead.
const MAX_INDENT: usize = 8;

/// The indentation of an entry `depth` branches deep, its connectors `prefix` (two columns a step).
fn indent(prefix: &str, depth: usize) -> String {
    if depth <= MAX_INDENT {
        prefix.to_owned()
    } else {
        let shown: String = prefix.chars().take(2 * MAX_INDENT).collect();
        format!("{shown}»{depth} ")
    }
}

/// Rows rendered once each, when first shown.
struct Rows {
    rows: Vec<TreeRow>,
    rendered: RefCell<HashMap<usize, Rendered>>,
}

impl Rows {
    fn get(&self, index: usize) -> Rendered {
        if let Some(done) = self.rendered.borrow().get(&index) {
            return done.clone();
        }
        let done = self
            .rows
            .get(index)
            .map(TreeRow::render)
            .unwrap_or_default();
        self.rendered.borrow_mut().insert(index, done.clone());
        done
    }
}

const HELP: &str = "↑/↓ j/k move · PgUp/PgDn · Enter go to the entry · l label it · f filter · \
                    Esc leave unchanged";

/// Which entries the tree lists (`treeFilterMode`, Pi's filters; `f` steps through them). The
/// leaf is always listed, so the list shows where the session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TreeFilter {
    /// Every entry but the bookkeeping ones (labels, model and thinking changes, custom entries,
    /// session info, context edits).
    Default,
    /// The default's, without tool results.
    NoTools,
    /// The user's messages.
    UserOnly,
    /// The labelled entries.
    LabeledOnly,
    /// Every entry.
    All,
}

impl TreeFilter {
    const ORDER: [Self; 5] = [
        Self::Default,
        Self::NoTools,
        Self::UserOnly,
        Self::LabeledOnly,
        Self::All,
    ];

    fn from_setting(name: &str) -> Self {
        Self::ORDER
            .into_iter()
            .find(|filter| filter.name() == name)
            .unwrap_or(Self::Default)
    }

    fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::NoTools => "no-tools",
            Self::UserOnly => "user-only",
            Self::LabeledOnly => "labeled-only",
            Self::All => "all",
        }
    }

    fn next(self) -> Self {
        let at = Self::ORDER.iter().position(|filter| *filter == self);
        Self::ORDER[at.map_or(0, |at| (at + 1) % Self::ORDER.len())]
    }

    fn shows(self, row: &TreeRow) -> bool {
        let kind = row.entry.type_name();
        let bookkeeping = matches!(
            kind,
            "label"
                | "context_edit"
                | "custom"
                | "model_change"
                | "thinking_level_change"
                | "session_info"
        );
        let role = row.entry.role();
        row.is_leaf
            || match self {
                Self::Default => !bookkeeping,
                Self::NoTools => !bookkeeping && role != Some("toolResult"),
                Self::UserOnly => kind == "message" && role == Some("user"),
                Self::LabeledOnly => row.label.is_some(),
                Self::All => true,
            }
    }
}

/// The rows `filter` shows, laid out as a tree of their own, and where `row` (of every row) is
/// among them, or the nearest before.
fn filtered(tree: &Tree, filter: TreeFilter, row: usize) -> (Vec<TreeRow>, usize) {
    let mut start = 0;
    let mut kept = Vec::new();
    for (index, candidate) in tree.rows.iter().enumerate() {
        if filter.shows(candidate) {
            if index <= row {
                start = kept.len();
            }
            kept.push(candidate.clone());
        }
    }
    lay_out(&mut kept, &tree.parents);
    (kept, start)
}

/// Every row of the tree, in display order, and what lays out a part of them.
struct Tree {
    rows: Vec<TreeRow>,
    /// The leaf's row.
    leaf: usize,
    /// Each entry's parent (by place in the session's index), shown or not.
    parents: HashMap<usize, usize>,
}

/// Each row's depth and connectors among `rows` alone, as Pi lays out a filtered tree: a row hangs
/// from its nearest ancestor that is shown (a `/tree` move's marker, hidden by the default filter,
/// left the branch it started without its `└`). Children of an entry with several are one step
/// right, with a connector; a single child keeps its parent's column.
fn lay_out(rows: &mut [TreeRow], parents: &HashMap<usize, usize>) {
    let shown: HashSet<usize> = rows.iter().map(|row| row.node).collect();
    let shown_parent = |node: usize| {
        let mut at = parents.get(&node).copied();
        while let Some(parent) = at {
            if shown.contains(&parent) {
                return Some(parent);
            }
            at = parents.get(&parent).copied();
        }
        None
    };
    let parent_of: Vec<Option<usize>> = rows.iter().map(|row| shown_parent(row.node)).collect();
    let mut children: HashMap<usize, usize> = HashMap::new();
    for parent in parent_of.iter().flatten() {
        *children.entry(*parent).or_default() += 1;
    }
    let mut depth_of: HashMap<usize, usize> = HashMap::new();
    let mut seen: HashMap<usize, usize> = HashMap::new();
    let mut placements = Vec::with_capacity(rows.len());
    for (row, parent) in rows.iter_mut().zip(&parent_of) {
        let placement = match parent {
            Some(parent) => {
                let siblings = children.get(parent).copied().unwrap_or(0);
                let before = seen.entry(*parent).or_default();
                *before += 1;
                Placement {
                    depth: depth_of.get(parent).copied().unwrap_or(0) + usize::from(siblings > 1),
                    side: siblings > 1,
                    last: *before == siblings,
                }
            }
            None => Placement {
                depth: 0,
                side: false,
                last: false,
            },
        };
        depth_of.insert(row.node, placement.depth);
        row.depth = placement.depth;
        placements.push(placement);
    }
    for (row, prefix) in rows.iter_mut().zip(connector_prefixes(placements)) {
        row.prefix = prefix;
    }
}

/// The rows of the tree in display order (usage records hidden) and the leaf's row; only ids
/// and labels are read here, no entry's text.
fn tree_rows(session: &Session) -> Tree {
    let index = session.index();
    let leaf = session.leaf_id();
    let on_branch: HashSet<&str> = session
        .branch_path(None)
        .into_iter()
        .map(StoredEntry::id)
        .collect();
    let mut tree = Tree {
        rows: Vec::new(),
        leaf: 0,
        parents: HashMap::new(),
    };
    for node in walk_order(session, &on_branch) {
        let Some(entry) = index.get(node) else {
            continue;
        };
        if let Some(parent) = index.parent(node) {
            tree.parents.insert(node, parent);
        }
        // Usage records (Pi 0.87) are bookkeeping, hidden as in Pi's tree view, unless the leaf.
        if entry.type_name() == "usage" && Some(entry.id()) != leaf {
            continue;
        }
        let is_leaf = Some(entry.id()) == leaf;
        if is_leaf {
            tree.leaf = tree.rows.len();
        }
        let mark = if is_leaf {
            "◆ "
        } else if on_branch.contains(entry.id()) {
            "• "
        } else {
            "  "
        };
        tree.rows.push(TreeRow {
            entry: entry.clone(),
            node,
            depth: 0,
            prefix: String::new(),
            mark,
            is_leaf,
            label: index.label(entry.id()).map(str::to_owned),
        });
    }
    tree
}

/// The entries in the order the tree lists them, as Pi's: depth first, and among the children of
/// an entry (and the roots) the one toward the leaf first, the others by time.
fn walk_order(session: &Session, on_branch: &HashSet<&str>) -> Vec<usize> {
    let index = session.index();
    let Family {
        mut children,
        mut roots,
        count,
    } = family(session);
    let toward_leaf_first = |list: &mut Vec<usize>| {
        list.sort_by_key(|&node| {
            !index
                .get(node)
                .is_some_and(|entry| on_branch.contains(entry.id()))
        });
    };
    toward_leaf_first(&mut roots);
    let mut order = Vec::with_capacity(count);
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(node) = stack.pop() {
        order.push(node);
        if let Some(list) = children.get_mut(&node) {
            toward_leaf_first(list);
            stack.extend(list.iter().rev());
        }
    }
    order
}

impl Chat {
    /// Walks the tree at a terminal; `None` when the input is not a terminal (the caller prints
    /// the tree instead).
    pub(super) async fn walk_tree(&mut self, ask: &mut dyn Ask) -> Result<Option<Action>> {
        let every = self.engine.with_session(tree_rows).await;
        if every.rows.is_empty() {
            return Ok(None);
        }
        let settings = crate::commands::settings::settings_of_project(&self.environment);
        let setting = settings.settings().tree_filter_mode.clone();
        // `branchSummary.skipPrompt` (Pi's): move without the summary question, and without a
        // summary.
        let skip_prompt = settings.settings().branch_summary.skip_prompt;
        let mut filter = TreeFilter::from_setting(&setting);
        let (shown, mut start) = filtered(&every, filter, every.leaf);
        let mut rows = Rows {
            rows: shown,
            rendered: RefCell::default(),
        };
        // The first row shown, kept when the tree is shown again after `l` or `f`.
        let mut top = None;
        loop {
            let line = |index: usize| rows.get(index).line;
            let detail = |index: usize| rows.get(index).detail;
            let title = format!(
                "Session tree  (◆ leaf · • the current branch)  filter: {}",
                filter.name()
            );
            let list = List {
                title: &title,
                help: HELP,
                count: rows.rows.len(),
                row: &line,
                detail: &detail,
                keys: "lf",
            };
            let picked = match pick_scrolled(&list, start, &mut top) {
                Ok(picked) => picked,
                Err(error) => {
                    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                        self.ui
                            .info(&format!("(cannot draw the tree: {error}; printed instead)"));
                    }
                    return Ok(None);
                }
            };
            let id = |row: usize| rows.rows.get(row).map(|row| row.entry.id().to_owned());
            // The entry under the cursor, to find again in the rows built anew below.
            let kept = match picked {
                Picked::Key('l', row) => {
                    let Some(id) = id(row) else { continue };
                    self.label_from_tree(&id, ask).await?;
                    Some(id)
                }
                Picked::Key('f', row) => {
                    filter = filter.next();
                    top = None;
                    id(row)
                }
                Picked::Key(_, _) | Picked::Left => {
                    self.ui.say("Left the tree; nothing changed");
                    return Ok(Some(Action::Continue));
                }
                Picked::Chosen(row) => {
                    let Some(id) = id(row) else { continue };
                    // As Pi: Enter on the leaf moves nothing and asks nothing.
                    if rows.rows.get(row).is_some_and(|row| row.is_leaf) {
                        self.ui.say("Already at this point");
                        return Ok(Some(Action::Continue));
                    }
                    let short = rows.get(row).short;
                    let options = if skip_prompt {
                        Some(NavigateOptions::default())
                    } else {
                        choose_summary(&id, &short, ask)
                    };
                    // Esc at the summary question, or during the summary, comes back here.
                    match options {
                        Some(options) => match self.move_to(&id, options).await? {
                            Some(action) => return Ok(Some(action)),
                            None => Some(id),
                        },
                        None => Some(id),
                    }
                }
            };
            let every = self.engine.with_session(tree_rows).await;
            let at = kept
                .and_then(|id| every.rows.iter().position(|row| row.entry.id() == id))
                .unwrap_or(every.leaf);
            let (shown, at) = filtered(&every, filter, at);
            start = at;
            rows = Rows {
                rows: shown,
                rendered: RefCell::default(),
            };
        }
    }

    async fn label_from_tree(&mut self, id: &str, ask: &mut dyn Ask) -> Result<()> {
        let Some(text) = ask.ask(&format!("Label for {id} (empty removes it): ")) else {
            return Ok(());
        };
        let text = text.trim().to_owned();
        let label = (!text.is_empty()).then_some(text.as_str());
        self.engine.set_label(id, label).await?;
        match label {
            Some(label) => self.ui.say(&format!("Labelled {id} “{label}”")),
            None => self.ui.say(&format!("Removed the label of {id}")),
        }
        Ok(())
    }
}

/// After Enter: go without a summary, with one, or with one with a focus; `None` goes back to
/// the tree. A focus question left (Esc, Ctrl-C) comes back to these choices, as Pi's.
fn choose_summary(id: &str, short: &str, ask: &mut dyn Ask) -> Option<NavigateOptions> {
    loop {
        let choice = pick_summary_choice(id, short)?;
        let custom_instructions = if choice == 2 {
            let Some(focus) = ask.ask("Focus for the summary: ") else {
                continue;
            };
            Some(focus.trim().to_owned()).filter(|focus| !focus.is_empty())
        } else {
            None
        };
        return Some(NavigateOptions {
            summarize: choice >= 1,
            custom_instructions,
            ..NavigateOptions::default()
        });
    }
}

/// The summary question's list: the choice's number, `None` when left.
fn pick_summary_choice(id: &str, short: &str) -> Option<usize> {
    let choices = [
        "No summary: move there".to_owned(),
        "Summarize the branch left behind".to_owned(),
        "Summarize it with a focus (typed next)".to_owned(),
    ];
    let detail = |index: usize| {
        match index {
        0 => "The leaf moves to this entry; the branch left behind stays in the tree as it is.",
        1 => "The branch left behind is summarized and the summary is attached where the leaf goes, so the model keeps what was learnt there.",
        _ => "As the summary, with a focus you type: what the summary should keep.",
    }
    .to_owned()
    };
    let title = format!("Go to {id} {short}");
    let list = List {
        title: &title,
        help: "↑/↓ choose · Enter go · Esc back to the tree",
        count: choices.len(),
        row: &|index: usize| choices.get(index).cloned().unwrap_or_default(),
        detail: &detail,
        keys: "",
    };
    match pick(&list, 0).ok()? {
        Picked::Chosen(choice) => Some(choice),
        Picked::Key(_, _) | Picked::Left => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_step_in_pis_order_and_a_name_they_do_not_know_is_the_default() {
        let mut filter = TreeFilter::from_setting("user-only");
        assert_eq!(filter, TreeFilter::UserOnly);
        let mut names = Vec::new();
        for _ in 0..5 {
            filter = filter.next();
            names.push(filter.name());
        }
        assert_eq!(
            names,
            ["labeled-only", "all", "default", "no-tools", "user-only"]
        );
        assert_eq!(TreeFilter::from_setting("nope"), TreeFilter::Default);
    }
}
