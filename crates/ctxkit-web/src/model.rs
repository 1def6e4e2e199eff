//! The page's data: one JSON document built from a session (entries as the page shows them, the
//! tree in display order, compactions, the timeline, totals, and contexts at chosen entries).

use std::cell::Cell;

use ctxkit_session::{EntryIndex, Session};
use ctxkit_settings::TransformSettings;
use serde_json::{Map, Value, json};

use crate::blocks::Renderer;
use crate::contexts::context_record_within;
use crate::error::WebError;
use crate::history::tips;
use crate::parsed::ParsedMessages;
use crate::redact::Redactor;

/// Which contexts the page carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextPolicy {
    /// Every entry's context when the session has at most `all_up_to` entries; else the context
    /// at each branch tip, at each compaction and before it, and at `sampled_requests` requests of
    /// the current path, evenly spread (an exported page); within
    /// [`MAX_PRECOMPUTED_CONTEXT_RECORDS`] context messages in all either way.
    Precompute {
        all_up_to: usize,
        sampled_requests: usize,
    },
    /// None: the page asks the server for each (`ctxkit view`).
    OnDemand,
}

/// How a page is built.
#[derive(Debug, Clone)]
pub struct PageOptions {
    /// Shown as the page's title (the session's name or file name).
    pub title: String,
    /// Leave every thinking block out (`--no-thinking`).
    pub no_thinking: bool,
    /// What is redacted (`--redact` patterns, known secrets).
    pub redactor: Redactor,
    /// The transforms applied to the model's view (the engine's defaults unless set).
    pub transform: TransformSettings,
    /// The model's context window in tokens (0: unknown, the sliding window stays off).
    pub context_window: u64,
    pub contexts: ContextPolicy,
    /// Bytes of views (the contexts' JSON) an exported page may carry; the leaf's is carried
    /// whatever its size ([`crate::MAX_PRECOMPUTED_CONTEXT_BYTES`] by default).
    pub context_bytes: usize,
    /// Characters of text the page may hold in all; each block gets its share (at least
    /// [`MIN_CLIP_CHARS`], at most [`MAX_CLIP_CHARS`]).
    pub text_budget: usize,
    /// Bytes of base64 images the page may embed.
    pub image_budget: usize,
    /// Models declared free (`llm.models[].cost` all zero): their replies at $0 show as $0, not
    /// as of unknown price.
    pub free_models: ctxkit_session::FreeModels,
}

/// Fewest characters a text block keeps, however large the session.
pub const MIN_CLIP_CHARS: usize = 200;
/// Most characters a text block keeps.
pub const MAX_CLIP_CHARS: usize = 50_000;

impl PageOptions {
    /// The defaults: 12 M characters of text, 16 MB of images, every context up to 3000 entries
    /// and [`MAX_PRECOMPUTED_CONTEXT_RECORDS`] context messages in all, else 60 requests'
    /// contexts and the tips' and compactions' (see `precomputed`), in at most
    /// [`crate::MAX_PRECOMPUTED_CONTEXT_BYTES`].
    pub fn new(title: impl Into<String>, redactor: Redactor) -> Self {
        Self {
            title: title.into(),
            no_thinking: false,
            redactor,
            transform: TransformSettings::default(),
            context_window: 0,
            contexts: ContextPolicy::Precompute {
                all_up_to: 3000,
                sampled_requests: 60,
            },
            context_bytes: crate::stream::MAX_PRECOMPUTED_CONTEXT_BYTES,
            text_budget: 12_000_000,
            image_budget: 16_000_000,
            free_models: ctxkit_session::FreeModels::default(),
        }
    }

    /// These options for a page of `session`: the values its entries give to a secret's name
    /// (`DB_PASSWORD=…`, redacted there by shape) are redacted as known secrets wherever else
    /// they appear (a digest of a cut output, a reply repeating one; QA of the page).
    pub(crate) fn for_session(&self, session: &Session) -> Self {
        let mut values = Vec::new();
        for entry in session.entries() {
            if let Ok(raw) = entry.raw() {
                for value in ctxkit_secrets::assigned_secrets(&raw) {
                    if !values.contains(&value) {
                        values.push(value);
                    }
                }
            }
        }
        let mut options = self.clone();
        options.redactor = self.redactor.with_values(&values);
        options
    }

    /// The renderer of a session of `entries` entries.
    pub(crate) fn renderer(&self, entries: usize) -> Renderer<'_> {
        let share = self.text_budget / entries.max(1);
        Renderer {
            redactor: &self.redactor,
            clip_chars: share.clamp(MIN_CLIP_CHARS, MAX_CLIP_CHARS),
            no_thinking: self.no_thinking,
            image_budget: Cell::new(self.image_budget),
            free_models: &self.free_models,
            read_languages: std::cell::RefCell::default(),
            sent_shown: std::cell::RefCell::default(),
        }
    }
}

/// One entry as the page shows it.
pub(crate) fn entry_record(
    session: &Session,
    position: EntryIndex,
    renderer: &Renderer<'_>,
) -> Value {
    let index = session.index();
    let Some(entry) = index.get(position) else {
        return Value::Null;
    };
    let mut record = Map::new();
    // Ids are ctxkit's own (or an import's), not content: the page and the view look entries up
    // by them, so they are never redacted nor cut.
    record.insert("id".to_owned(), json!(entry.id()));
    record.insert("p".to_owned(), json!(index.parent(position)));
    record.insert("ty".to_owned(), json!(renderer.short(entry.type_name())));
    record.insert("ts".to_owned(), json!(renderer.short(entry.timestamp())));
    if let Some(label) = index.label(entry.id()) {
        record.insert("label".to_owned(), json!(renderer.short(label)));
    }
    let value = match entry.raw() {
        Ok(raw) => ctxkit_protocol::from_str_repaired::<Value>(&raw).unwrap_or(Value::Null),
        Err(error) => json!({"unreadable": error.to_string()}),
    };
    match entry.type_name() {
        "message" => {
            let message = value.get("message").cloned().unwrap_or(Value::Null);
            record.extend(renderer.message(&message));
        }
        "custom_message" => {
            record.extend(renderer.message(&value));
            if let Some(Value::Array(blocks)) = record.get_mut("blocks") {
                renderer.markdown(blocks);
            }
            record.insert("role".to_owned(), json!("custom"));
        }
        "compaction" | "branch_summary" => {
            let summary = value.get("summary").and_then(Value::as_str).unwrap_or("");
            let (text, full) = renderer
                .redactor
                .clip_markdown(summary, renderer.clip_chars.max(20_000));
            let mut blocks = [json!({"k": "summary", "t": text, "n": full})];
            renderer.markdown(&mut blocks);
            record.insert("blocks".to_owned(), json!(blocks));
            // A compaction that replays the system state (Pi 0.87): later system messages on
            // its branch are updates of that prompt.
            if value
                .get("systemMessage")
                .is_some_and(|system| !system.is_null())
            {
                record.insert("sys".to_owned(), json!(true));
            }
            for field in ["tokensBefore", "firstKeptEntryId", "fromId", "fromHook"] {
                if let Some(field_value) = value.get(field) {
                    let shown = match field_value {
                        // The entry ids a compaction names, as the entries' own are shown.
                        Value::String(text) if field.ends_with("Id") => json!(text),
                        Value::String(text) => json!(renderer.short(text)),
                        other @ (Value::Null
                        | Value::Bool(_)
                        | Value::Number(_)
                        | Value::Array(_)
                        | Value::Object(_)) => renderer.redactor.clean_value(other),
                    };
                    record.insert(field.to_owned(), shown);
                }
            }
        }
        _ => {
            let mut rest = value.as_object().cloned().unwrap_or_default();
            for field in ["type", "id", "parentId", "timestamp"] {
                rest.remove(field);
            }
            let text = renderer.redactor.clean_json(&Value::Object(rest), false);
            let mut blocks = Vec::new();
            if let Some(headline) = headline(entry.type_name(), &value) {
                blocks.push(json!({"k": "text", "t": renderer.redactor.clip(&headline, 200).0}));
            }
            blocks.push(json!({"k": "json", "t": renderer.redactor.clip(&text, 2000).0}));
            record.insert("blocks".to_owned(), Value::Array(blocks));
        }
    }
    Value::Object(record)
}

/// What the tree line and the card of an entry that is not a message say first, in the words of
/// `ctxkit tree`: a custom entry's `customType`, the model or thinking level chosen, the name given,
/// the label set, the usage's kind and model. `None` when the entry has none of these fields.
fn headline(type_name: &str, value: &Value) -> Option<String> {
    let field = |name: &str| value.get(name).and_then(Value::as_str);
    let text = match type_name {
        "custom" => field("customType")?.to_owned(),
        "model_change" => format!("{}/{}", field("provider")?, field("modelId")?),
        "thinking_level_change" => field("thinkingLevel")?.to_owned(),
        "session_info" => field("name")?.to_owned(),
        "label" => match field("label") {
            Some(label) if !label.is_empty() => format!("{} = {label}", field("targetId")?),
            Some(_) | None => format!("{} cleared", field("targetId")?),
        },
        "context_edit" => format!("edits {}", field("targetId")?),
        "usage" => format!(
            "{} {}/{}",
            field("kind")?,
            field("provider").unwrap_or("?"),
            field("model").unwrap_or("?")
        ),
        _ => return None,
    };
    Some(text)
}

/// The tree in display order: `[entry, indent]` pairs. A branch's side paths come first, indented
/// under its entry; the child that continues at the same indent, after them, is the one on the
/// path to the leaf, else the latest. A long conversation with many abandoned branches stays flat
/// (as in Pi's tree view), and the leaf's path reads straight down: an import whose bookkeeping
/// entries branched off later (Claude Code's queue operations) had the whole conversation indented
/// under them and drawn before them, 480 rows from their entry (QA 2026-12-07). Indents stop
/// growing at 20.
pub(crate) fn display_order(session: &Session) -> Vec<[usize; 2]> {
    let nodes = session.tree();
    let count = session.entries().len();
    // Children in the tree's order (by time), the roots likewise.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); count];
    let mut roots = Vec::new();
    for node in &nodes {
        match session.index().parent(node.index) {
            Some(parent) => children[parent].push(node.index),
            None => roots.push(node.index),
        }
    }
    let mut on_leaf_path = vec![false; count];
    let mut at = session
        .leaf_id()
        .and_then(|leaf| session.index().position(leaf));
    while let Some(index) = at.filter(|&index| !on_leaf_path[index]) {
        on_leaf_path[index] = true;
        at = session.index().parent(index);
    }
    for list in &mut children {
        if let Some(continuing) = list.iter().position(|&child| on_leaf_path[child]) {
            let child = list.remove(continuing);
            list.push(child);
        }
    }
    let mut order = Vec::with_capacity(nodes.len());
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&root| (root, 0)).collect();
    while let Some((index, indent)) = stack.pop() {
        order.push([index, indent.min(20)]);
        if let Some((&continuing, sides)) = children[index].split_last() {
            stack.push((continuing, indent));
            stack.extend(sides.iter().rev().map(|&side| (side, indent + 1)));
        }
    }
    order
}

/// Branch tips whose contexts a large session's page carries.
const MAX_SAMPLED_TIPS: usize = 20;
/// Compactions (the latest) whose contexts, and their parents', a large session's page carries.
const MAX_SAMPLED_COMPACTIONS: usize = 40;
/// Most context messages, summed over the contexts, an exported page carries (about 190 bytes
/// each with the default transforms: some 40 MB). Every entry's context repeats the ones before
/// it, so a 1,918-entry session never compacted took 347 MB when every context was carried. This
/// bounds the views built (estimated before any is); `PageOptions::context_bytes` bounds the bytes
/// of those written.
pub const MAX_PRECOMPUTED_CONTEXT_RECORDS: usize = 200_000;

/// Per entry, about how many messages its context holds: the messages on its path since the
/// latest compaction (an entry written before its parent counts from nothing).
fn context_sizes(session: &Session) -> Vec<usize> {
    let count = session.entries().len();
    let mut sizes = vec![0usize; count];
    for (position, entry) in session.entries().iter().enumerate() {
        let before = session
            .index()
            .parent(position)
            .filter(|&parent| parent < position)
            .map_or(0, |parent| sizes[parent]);
        sizes[position] = if entry.type_name() == "compaction" {
            1
        } else {
            before + usize::from(entry.role().is_some())
        };
    }
    sizes
}

/// The entries whose contexts an exported page carries, in the order they are offered to its
/// bytes (`PageOptions::context_bytes`): every entry's (the leaf's first, then the newest) when
/// the session has at most `all_up_to` entries and their contexts hold at most
/// [`MAX_PRECOMPUTED_CONTEXT_RECORDS`] messages in all; else, within that sum, the leaf's, the
/// latest tips', the latest compactions' (and their parents'), and `sampled_requests` requests'
/// of the current path, in that order.
pub(crate) fn precomputed(
    session: &Session,
    all_up_to: usize,
    sampled_requests: usize,
    path: &[EntryIndex],
) -> Vec<EntryIndex> {
    let count = session.entries().len();
    let sizes = context_sizes(session);
    if count <= all_up_to && sizes.iter().sum::<usize>() <= MAX_PRECOMPUTED_CONTEXT_RECORDS {
        // The leaf's first, then the newest: what is written while the page's bytes last.
        let leaf = path.last().copied();
        return leaf
            .into_iter()
            .chain((0..count).rev().filter(|&position| Some(position) != leaf))
            .collect();
    }
    // The current leaf, the latest tips, and the latest compactions: what a reader opens first.
    let mut wanted: Vec<EntryIndex> = path.last().copied().into_iter().collect();
    let mut tips = tips(session);
    tips.reverse();
    tips.truncate(MAX_SAMPLED_TIPS);
    wanted.extend(tips);
    let compactions: Vec<EntryIndex> = session
        .entries()
        .iter()
        .enumerate()
        .filter(|(_, entry)| entry.type_name() == "compaction")
        .map(|(position, _)| position)
        .collect();
    for &position in compactions.iter().rev().take(MAX_SAMPLED_COMPACTIONS) {
        wanted.push(position);
        wanted.extend(session.index().parent(position));
    }
    let requests: Vec<EntryIndex> = path
        .iter()
        .copied()
        .filter(|&position| {
            session.index().get(position).and_then(|entry| entry.role()) == Some("assistant")
        })
        .collect();
    let step = (requests.len() / sampled_requests.max(1)).max(1);
    wanted.extend(requests.iter().rev().step_by(step));
    let mut chosen = Vec::new();
    let mut left = MAX_PRECOMPUTED_CONTEXT_RECORDS;
    for position in wanted {
        let size = sizes.get(position).copied().unwrap_or_default();
        // A context over the page's per-context limit is not carried (`write_contexts`).
        let too_long = size > crate::stream::MAX_PRECOMPUTED_CONTEXT_MESSAGES;
        if too_long || chosen.contains(&position) || (size > left && !chosen.is_empty()) {
            continue;
        }
        left = left.saturating_sub(size);
        chosen.push(position);
    }
    chosen
}

/// The page data of `session` (what [`crate::export_page`] writes into the page, read back).
pub fn build_page_data(session: &Session, options: &PageOptions) -> Result<Value, WebError> {
    let mut bytes = Vec::new();
    crate::stream::write_page_data(session, options, &mut bytes)?;
    serde_json::from_slice(&bytes).map_err(|error| WebError::Write {
        source: error.into(),
    })
}

/// The context at one entry (by id) as page data: what `ctxkit view` serves on demand.
pub fn context_data(session: &Session, id: &str, options: &PageOptions) -> Result<Value, WebError> {
    context_data_within(session, id, options, usize::MAX)
}

/// [`context_data`], refused with [`WebError::ContextTooLong`] when the context holds more than
/// `max_messages` messages (its messages are not read then).
pub fn context_data_within(
    session: &Session,
    id: &str,
    options: &PageOptions,
    max_messages: usize,
) -> Result<Value, WebError> {
    let parsed = ParsedMessages::default();
    let options = options.for_session(session);
    context_data_sharing(session, &parsed, id, &options, max_messages)
}

/// [`context_data_within`], taking the messages other views parsed from `parsed` and leaving
/// those it parses there for them, with `options` already learned from `session`
/// ([`PageOptions::for_session`]).
pub(crate) fn context_data_sharing(
    session: &Session,
    parsed: &ParsedMessages,
    id: &str,
    options: &PageOptions,
    max_messages: usize,
) -> Result<Value, WebError> {
    let position = session
        .index()
        .position(id)
        .ok_or_else(|| WebError::UnknownEntry { id: id.to_owned() })?;
    let renderer = options.renderer(session.entries().len());
    context_record_within(
        session,
        parsed,
        position,
        &options.transform,
        options.context_window,
        &renderer,
        max_messages,
    )?
    .ok_or_else(|| WebError::ContextTooLong {
        id: id.to_owned(),
        messages: ctxkit_session::build_context(session.index(), Some(position))
            .messages
            .len(),
    })
}

#[cfg(test)]
mod tests {
    use ctxkit_session::Session;
    use serde_json::json;

    use super::display_order;

    fn session(lines: &[serde_json::Value]) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(&file, text).unwrap();
        Session::open(&file).unwrap()
    }

    fn entry(id: &str, parent: Option<&str>, time: &str) -> serde_json::Value {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": time,
               "message": {"role": "user", "content": id, "timestamp": 1}})
    }

    /// QA (web): `DB_PASSWORD=Tr0ub4dor&3x` in a tool's output was redacted there, and the reply
    /// repeating the password showed it; a value given to a secret's name is redacted wherever
    /// the page shows it.
    #[test]
    fn a_value_given_to_a_secret_name_is_redacted_everywhere_on_the_page() {
        let header = json!({"type": "session", "version": 3, "id": "s",
                            "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"});
        let said = |id: &str, parent: Option<&str>, text: &str| {
            json!({"type": "message", "id": id, "parentId": parent,
                   "timestamp": "2026-01-01T00:00:01.000Z",
                   "message": {"role": "user", "content": text, "timestamp": 1}})
        };
        let session = session(&[
            header,
            said(
                "a",
                None,
                "cat .env gave DB_PASSWORD=Tr0ub4dor&3x MY_PASS=hunt3r7 secret: release2024 \
                 token: 2024-01-01 and PORT=8080",
            ),
            said(
                "b",
                Some("a"),
                "so the password is Tr0ub4dor&3x, or hunt3r7? The release 2024 plan ships \
                 2024-01-01.",
            ),
        ]);
        let redactor = crate::Redactor::new(Vec::new(), &[]).unwrap();
        let options = super::PageOptions::new("t", redactor);
        let page = super::build_page_data(&session, &options)
            .unwrap()
            .to_string();
        assert!(
            !page.contains("Tr0ub4dor") && !page.contains("hunt3r7"),
            "{page}"
        );
        assert!(page.contains("PORT=8080"), "{page}");
        // Exact values only (QA: whole replies spelling `release 2024` were withheld), and a
        // date given to `token:` is no value to look for elsewhere.
        assert!(
            page.contains("The release 2024 plan ships 2024-01-01."),
            "{page}"
        );
    }

    /// A bookkeeping branch written after the conversation went on (Claude Code's queue
    /// operations, imported) comes right after its entry, indented; the leaf's path stays flat.
    #[test]
    fn the_leafs_path_continues_at_its_indent_after_the_side_paths() {
        let header = json!({"type": "session", "version": 3, "id": "s",
                            "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"});
        let lines = [
            header,
            entry("a", None, "2026-01-01T00:00:01.000Z"),
            entry("b", Some("a"), "2026-01-01T00:00:02.000Z"),
            entry("c", Some("b"), "2026-01-01T00:00:03.000Z"),
            entry("side", Some("a"), "2026-01-01T00:00:09.000Z"),
            // The leaf is the file's last entry: `c`'s child.
            entry("d", Some("c"), "2026-01-01T00:00:04.000Z"),
        ];
        let session = session(&lines);
        let ids: Vec<(String, usize)> = display_order(&session)
            .into_iter()
            .map(|[index, indent]| (session.entries()[index].id().to_owned(), indent))
            .collect();
        let expected = [("a", 0), ("side", 1), ("b", 0), ("c", 0), ("d", 0)];
        let expected: Vec<(String, usize)> = expected
            .iter()
            .map(|(id, indent)| ((*id).to_owned(), *indent))
            .collect();
        assert_eq!(ids, expected);
    }
}
