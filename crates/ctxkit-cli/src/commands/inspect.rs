//! Read-only commands: `info`, `tree`, `context`, `check`. None of them writes to the file.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use ctxkit_session::{
    ContextForm, LeafSelector, Session, SessionError, StoredEntry, read_session_info,
};
use serde_json::json;

use super::print_json;
use crate::Outcome;
use crate::render::{counted, message_text, one_line, role_label};

/// `ctxkit info FILE`; calls of `free` models recorded at $0 are free.
pub fn info(
    file: &Path,
    json: bool,
    free: &ctxkit_session::FreeModels,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let info = read_session_info(file)?;
    // The listing record reads little; damage is found by loading the whole file.
    let opened = Session::open(file);
    match &opened {
        Ok(session) => super::report_damage(session, file)?,
        // The listing reads what Pi's session list reads; the other commands refuse the file.
        Err(error) => writeln!(
            crate::redact::stderr(),
            "warning: {error}; showing what a session list reads of it, run `ctxkit check {}` for \
             every problem",
            file.display()
        )?,
    }
    if json {
        let mut record = serde_json::to_value(&info)?;
        // What the file records as spent (sweep 9: only the text said it); `null` when the file
        // cannot be loaded whole.
        let spend = opened.as_ref().ok().map(|session| {
            super::spend::spend_json(&ctxkit_session::session_spend(session.entries(), free))
        });
        if let Some(object) = record.as_object_mut() {
            object.insert("spend".to_owned(), spend.unwrap_or(serde_json::Value::Null));
        }
        print_json(out, &record)?;
        return Ok(Outcome::Success);
    }
    writeln!(out, "path:     {}", info.path)?;
    writeln!(out, "id:       {}", info.id)?;
    writeln!(out, "cwd:      {}", info.cwd)?;
    if let Some(name) = &info.name {
        writeln!(out, "name:     {}", one_line(name, 200))?;
    }
    if let Some(parent) = &info.parent_session_path {
        writeln!(out, "parent:   {parent}")?;
    }
    writeln!(out, "created:  {}", info.created)?;
    writeln!(out, "modified: {}", info.modified)?;
    writeln!(out, "messages: {}", info.message_count)?;
    writeln!(
        out,
        "first:    {}",
        one_line(super::sessions::shown_first_message(&info), 72)
    )?;
    if let Some(version) = info.format_version {
        writeln!(out, "format:   {}", old_format_note(version))?;
    }
    if let Ok(session) = &opened {
        let spend = ctxkit_session::session_spend(session.entries(), free);
        for (index, line) in super::spend::breakdown_lines(&spend).iter().enumerate() {
            let label = if index == 0 { "spend:    " } else { "" };
            writeln!(out, "{label}{line}")?;
        }
    }
    Ok(Outcome::Success)
}

/// What ctxkit does with a file in an old format.
pub(super) fn old_format_note(version: u64) -> String {
    // A v1 file has no ids: they are made from its lines. A v2 file's are its own.
    let ids = if version < 2 {
        ", ids derived from the file"
    } else {
        ""
    };
    format!("v{version} (older than v3): read migrated{ids}; commands that write rewrite it as v3")
}

pub fn tree(file: &Path, json: bool, out: &mut dyn Write) -> Result<Outcome> {
    let session = super::open_for_reading(file)?;
    if json {
        print_json(out, &session.tree_record())?;
        return Ok(Outcome::Success);
    }
    if session.entries().is_empty() {
        // A header alone printed nothing, which read as a failure.
        writeln!(out, "(empty session: a header and no entries)")?;
        return Ok(Outcome::Success);
    }
    super::tree_text::write_tree(&session, crate::cli::output_columns(), out)?;
    Ok(Outcome::Success)
}

pub fn context(
    file: &Path,
    leaf: Option<&str>,
    llm: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let session = super::open_for_reading(file)?;
    let selector = super::leaf_selector(&session, leaf)?;
    let form = if llm {
        ContextForm::Llm
    } else {
        ContextForm::Session
    };
    // One message at a time: a branch of a million entries is printed without holding it.
    let context = session.context_at(selector);
    if json {
        let leaf_id = match selector {
            LeafSelector::Current => session.leaf_id(),
            LeafSelector::BeforeFirst => None,
            LeafSelector::Entry(id) => Some(id),
        };
        print_json(
            out,
            &LazyContext {
                session: &session,
                context: &context,
                form,
                leaf_id,
            },
        )?;
        return Ok(Outcome::Success);
    }
    let model = context
        .model
        .as_ref()
        .map(|model| {
            format!(
                "{}/{}",
                model.provider.as_deref().unwrap_or("?"),
                model.model_id.as_deref().unwrap_or("?")
            )
        })
        .unwrap_or_else(|| "none".to_owned());
    let leaf_id = match selector {
        LeafSelector::Current => session.leaf_id(),
        LeafSelector::BeforeFirst => None,
        LeafSelector::Entry(id) => Some(id),
    };
    let value_of = |message: &ctxkit_session::ContextMessage| -> Result<Option<serde_json::Value>> {
        let value = session.message_value(message)?;
        Ok(match form {
            ContextForm::Session => Some(value),
            ContextForm::Llm => ctxkit_session::convert_values_to_llm(&[value]).pop(),
        })
    };
    // The count comes first; in the provider's form some messages are left out, so it takes a
    // walk of its own.
    let count = match form {
        ContextForm::Session => context.messages.len(),
        ContextForm::Llm => {
            let mut count = 0;
            for message in &context.messages {
                count += usize::from(value_of(message)?.is_some());
            }
            count
        }
    };
    writeln!(
        out,
        "{} at {} (model {model}, thinking {})",
        counted(count, "message"),
        leaf_id.unwrap_or("the start"),
        context.thinking_level
    )?;
    for message in &context.messages {
        let Some(value) = value_of(message)? else {
            continue;
        };
        // Each message's entry id, for `edit-context` and `--leaf` (QA 2026-12-07: only `tree`
        // showed them).
        let id = session
            .index()
            .get(message.entry)
            .map(|entry| entry.id().to_owned())
            .unwrap_or_default();
        writeln!(out)?;
        match serde_json::from_value(value.clone()) {
            Ok(message) => {
                writeln!(out, "── {} · {id} ──", role_label(&message))?;
                writeln!(out, "{}", message_text(&message))?;
            }
            Err(_) => writeln!(out, "── unreadable message · {id} ──\n{value}")?,
        }
    }
    Ok(Outcome::Success)
}

/// `ContextRecord` (`ctxkit context --json`) written as its messages are read, one at a time:
/// the same fields in the same order, never the whole list in memory.
struct LazyContext<'a> {
    session: &'a Session,
    context: &'a ctxkit_session::SessionContext,
    form: ContextForm,
    leaf_id: Option<&'a str>,
}

impl serde::Serialize for LazyContext<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut record = serializer.serialize_struct("ContextRecord", 4)?;
        record.serialize_field("leafId", &self.leaf_id)?;
        record.serialize_field("thinkingLevel", &self.context.thinking_level)?;
        record.serialize_field("model", &self.context.model)?;
        record.serialize_field("messages", &LazyMessages(self))?;
        record.end()
    }
}

struct LazyMessages<'a, 'b>(&'b LazyContext<'a>);

impl serde::Serialize for LazyMessages<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq as _};
        let LazyContext {
            session,
            context,
            form,
            ..
        } = self.0;
        let mut messages = serializer.serialize_seq(None)?;
        for message in &context.messages {
            let value = session.message_value(message).map_err(S::Error::custom)?;
            let value = match form {
                ContextForm::Session => Some(value),
                ContextForm::Llm => ctxkit_session::convert_values_to_llm(&[value]).pop(),
            };
            if let Some(value) = value {
                messages.serialize_element(&value)?;
            }
        }
        messages.end()
    }
}

fn write_format_note(out: &mut dyn Write, file: &Path, version: Option<u64>) -> Result<()> {
    if let Some(version) = version {
        writeln!(
            out,
            "{}: session format {}",
            file.display(),
            old_format_note(version)
        )?;
    }
    Ok(())
}

/// Warnings are no problems (the file reads, and the exit code says so), but each names its line.
fn write_warnings(
    out: &mut dyn Write,
    file: &Path,
    warnings: &[super::check_warnings::Warning],
) -> Result<()> {
    for warning in warnings {
        match warning.line {
            Some(line) => writeln!(
                out,
                "{}:{line}: warning: {}",
                file.display(),
                warning.message
            )?,
            None => writeln!(out, "{}: warning: {}", file.display(), warning.message)?,
        }
    }
    Ok(())
}

/// More than one root is no problem (Pi starts one when the user edits the first message, imports
/// keep subagent runs as their own chains), but a history cut off before an import looks the same:
/// say so. (With problems, each missing parent or cycle already names the root it made.)
fn write_roots_note(out: &mut dyn Write, file: &Path, roots: usize) -> Result<()> {
    if roots > 1 {
        writeln!(
            out,
            "{}: {roots} roots: the file holds {roots} chains that share no entry (subagent runs, \
             a new start from the first message, or history that was cut off); only the leaf's \
             chain is in the context",
            file.display()
        )?;
    }
    Ok(())
}

/// The chains that share no entry and hold something a context shows (a message, a summary, an
/// extension's message): a chain of bookkeeping alone is no chain left out of the context. A
/// Claude Code import writes the title its transcript starts with as a lone `session_info` root
/// (QA r101: a fresh import was said to hold "history that was cut off"), and its queue and
/// snapshot records without a parent as roots too (QA, 2026-12-07: 26 of 30 imports warned).
fn chains(session: &Session) -> usize {
    const SHOWN: [&str; 4] = ["message", "custom_message", "branch_summary", "compaction"];
    let shown = |node: &ctxkit_session::TreeNode| {
        session
            .index()
            .get(node.index)
            .is_some_and(|entry| SHOWN.contains(&entry.type_name()))
    };
    let tree = session.tree();
    let mut chains = 0;
    let mut start = 0;
    while start < tree.len() {
        // Preorder: a root's chain runs to the next root.
        let end = tree[start + 1..]
            .iter()
            .position(|node| node.depth == 0)
            .map_or(tree.len(), |offset| start + 1 + offset);
        if tree[start..end].iter().any(shown) {
            chains += 1;
        }
        start = end;
    }
    chains
}

/// The problem of an entry that does not parse. The problem line names the file and the line
/// already, so a type error says only what serde found (the error's own path and line would repeat
/// them, and its path is empty for a file held in memory).
fn unreadable_entry(entry: &StoredEntry, error: &SessionError) -> String {
    let id = entry.id();
    if let SessionError::InvalidEntry { source, .. } = error {
        let content = entry
            .raw()
            .ok()
            .and_then(|line| content_of_wrong_type(&line, source));
        return match content {
            Some(problem) => format!("entry `{id}` has a field of the wrong type: {problem}"),
            None => format!("entry `{id}` has a field of the wrong type: {source}"),
        };
    }
    // Its line could not be read back (the file changed under the check): the error says how.
    format!("entry `{id}` cannot be read: {error}")
}

pub fn check(file: &Path, json: bool, out: &mut dyn Write) -> Result<Outcome> {
    // An old format is no problem (the file reads fine), but worth saying.
    let mut format_version = None;
    let mut roots = 0;
    let mut warnings = Vec::new();
    let problems: Vec<(Option<usize>, String)> = match Session::open(file) {
        Ok(session) => {
            roots = chains(&session);
            warnings = super::check_warnings::orphaned_results(&session, file);
            warnings.extend(super::check_warnings::replies_without_usage(&session, file));
            warnings.extend(super::check_warnings::unknown_shapes(&session));
            let mut problems: Vec<(Option<usize>, String)> = session
                .diagnostics()
                .iter()
                .map(|diagnostic| (diagnostic.line, diagnostic.kind.to_string()))
                .collect();
            // Loading reads only each entry's head; commands that read a whole entry fail on
            // fields of the wrong type, so report those here too.
            for entry in session.entries() {
                if let Err(error) = entry.parse() {
                    problems.push((Some(entry.line()), unreadable_entry(entry, &error)));
                }
            }
            problems.sort_by_key(|(line, _)| *line);
            format_version = session.migrated_from();
            problems
        }
        Err(SessionError::NotASession { line, reason, .. }) => {
            let message = match crate::foreign::import_hint(file) {
                Some(hint) => format!("not a session file: {reason}; {hint}"),
                None => format!("not a session file: {reason}"),
            };
            vec![(line, message)]
        }
        Err(error) => return Err(error.into()),
    };
    if json {
        let records: Vec<_> = problems
            .iter()
            .map(|(line, message)| json!({"line": line, "message": message}))
            .collect();
        let warning_records: Vec<_> = warnings
            .iter()
            .map(|warning| json!({"line": warning.line, "message": warning.message}))
            .collect();
        print_json(
            out,
            &json!({"path": file.display().to_string(), "problems": records,
                    "warnings": warning_records,
                    "formatVersion": format_version, "roots": roots}),
        )?;
    } else if problems.is_empty() {
        write_format_note(out, file, format_version)?;
        write_roots_note(out, file, roots)?;
        write_warnings(out, file, &warnings)?;
        // Warnings are no problems (the exit code stays 0), but a bare "no problems found" right
        // under them read as if they did not count.
        match warnings.len() {
            0 => writeln!(out, "{}: no problems found", file.display())?,
            count => writeln!(
                out,
                "{}: {} found, no problems; the file reads as it is",
                file.display(),
                counted(count, "warning")
            )?,
        }
    } else {
        write_format_note(out, file, format_version)?;
        write_warnings(out, file, &warnings)?;
        for (line, message) in &problems {
            match line {
                Some(line) => writeln!(out, "{}:{line}: {message}", file.display())?,
                None => writeln!(out, "{}: {message}", file.display())?,
            }
        }
        let warned = match warnings.len() {
            0 => String::new(),
            count => format!(" and {}", counted(count, "warning")),
        };
        writeln!(
            out,
            "{}{warned} found; the file was not modified",
            counted(problems.len(), "problem")
        )?;
    }
    Ok(if problems.is_empty() {
        Outcome::Success
    } else {
        Outcome::ProblemsFound
    })
}

/// serde says only "data did not match any variant of untagged enum MessageContent" of a message's
/// (or a context edit's replacement's) content that is neither a string, a list nor `null` (which
/// reads as no blocks): the field and
/// what it holds, read from the line, say more. `None` for any other error.
fn content_of_wrong_type(line: &str, source: &serde_json::Error) -> Option<String> {
    if !source
        .to_string()
        .starts_with("data did not match any variant of untagged enum MessageContent")
    {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    ["/message/content", "/content", "/replacement/content"]
        .into_iter()
        .find_map(|pointer| {
            let held = match value.pointer(pointer)? {
                serde_json::Value::Bool(_) => "a boolean",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Object(_) => "an object",
                serde_json::Value::Null
                | serde_json::Value::String(_)
                | serde_json::Value::Array(_) => return None,
            };
            let field = pointer.trim_start_matches('/').replace('/', ".");
            Some(format!(
                "`{field}` is {held}, where a string or a list of content blocks is expected"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::content_of_wrong_type;

    fn problem(line: &str) -> Option<String> {
        let source =
            ctxkit_protocol::from_str_repaired::<ctxkit_protocol::SessionEntry>(line).err()?;
        content_of_wrong_type(line, &source)
    }

    #[test]
    fn a_content_of_the_wrong_type_is_named_with_what_it_holds() {
        // Pi writes `null` for an empty content: read as no blocks, no problem.
        let null = r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-09-01T08:44:09.667Z","message":{"role":"user","content":null,"timestamp":1}}"#;
        assert_eq!(problem(null), None);
        let number = null.replace("\"content\":null", "\"content\":7");
        assert_eq!(
            problem(&number).as_deref(),
            Some(
                "`message.content` is a number, where a string or a list of content blocks is expected"
            )
        );
        // QA r103, defect 4: a context edit's replacement (its target's content is put away).
        let edit = r#"{"type":"context_edit","id":"h1","parentId":"a4","timestamp":"t","targetId":"a3","replacement":{"content":5}}"#;
        assert_eq!(
            problem(edit).as_deref(),
            Some(
                "`replacement.content` is a number, where a string or a list of content blocks is expected"
            )
        );
        // Any other error keeps serde's words.
        let bad_role = null
            .replace("\"content\":null", "\"content\":\"hi\"")
            .replace("\"user\"", "7");
        assert_eq!(problem(&bad_role), None);
    }
}
