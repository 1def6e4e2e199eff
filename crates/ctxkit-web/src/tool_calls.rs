//! A call to a tool the page knows, drawn as Pi's export draws it: a bash command as `$ command`,
//! a read as its path and lines, a write as its path and its content coloured in the file's
//! language, an edit as its path and each replacement as removed and added lines. Pi's names and
//! Claude Code's (`Bash`, `Read`, `Write`, `Edit`) are known. A call whose arguments hold anything
//! else, or a value of another type, is shown as its JSON: nothing the model sent is left out.

use serde_json::{Map, Value};

/// How the page draws a known call: a headline and a body (`lang`: the body's language).
#[derive(Debug, PartialEq)]
pub(crate) struct ShownCall {
    pub head: String,
    pub body: String,
    pub language: Option<String>,
}

/// The arguments of a known tool's call as the page draws them, or `None` (shown as JSON).
pub(crate) fn shown_call(name: &str, arguments: &Value) -> Option<ShownCall> {
    let arguments = Arguments(arguments.as_object()?);
    match name {
        "bash" | "Bash" => bash(arguments),
        "read" | "Read" => read(arguments),
        "write" | "Write" => write(arguments),
        "edit" | "Edit" => edit(arguments),
        _ => None,
    }
}

#[derive(Clone, Copy)]
struct Arguments<'a>(&'a Map<String, Value>);

impl<'a> Arguments<'a> {
    /// Whether every argument is one of `known`.
    fn only(self, known: &[&str]) -> bool {
        self.0.keys().all(|key| known.contains(&key.as_str()))
    }

    /// A string argument: `Some(None)` when absent, `None` when of another type.
    fn text(self, name: &str) -> Option<Option<&'a str>> {
        match self.0.get(name) {
            None => Some(None),
            Some(Value::String(text)) => Some(Some(text)),
            Some(_) => None,
        }
    }

    /// A whole-number argument, by the same rule.
    fn number(self, name: &str) -> Option<Option<u64>> {
        match self.0.get(name) {
            None => Some(None),
            Some(value) => value.as_u64().map(Some),
        }
    }

    /// The file's path: Pi's `path` or Claude Code's `file_path`, one of them.
    fn path(self) -> Option<&'a str> {
        match (self.text("path")?, self.text("file_path")?) {
            (Some(path), None) | (None, Some(path)) => Some(path),
            (Some(_), Some(_)) | (None, None) => None,
        }
    }
}

fn bash(arguments: Arguments<'_>) -> Option<ShownCall> {
    if !arguments.only(&["command", "timeout", "description", "run_in_background"]) {
        return None;
    }
    let command = arguments.text("command")??;
    let mut notes = Vec::new();
    if let Some(description) = arguments.text("description")? {
        notes.push(description.to_owned());
    }
    if let Some(timeout) = arguments.number("timeout")? {
        notes.push(format!("timeout {timeout}"));
    }
    match arguments.0.get("run_in_background") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => notes.push("in the background".to_owned()),
        Some(_) => return None,
    }
    Some(ShownCall {
        head: notes.join(" · "),
        body: command.to_owned(),
        language: Some("sh".to_owned()),
    })
}

fn read(arguments: Arguments<'_>) -> Option<ShownCall> {
    if !arguments.only(&["path", "file_path", "offset", "limit"]) {
        return None;
    }
    let path = arguments.path()?;
    let offset = arguments.number("offset")?;
    let limit = arguments.number("limit")?;
    let first = offset.unwrap_or(1).max(1);
    let lines = match limit {
        Some(limit) => format!(":{first}-{}", first.saturating_add(limit).saturating_sub(1)),
        None if offset.is_some() => format!(":{first}-"),
        None => String::new(),
    };
    Some(ShownCall {
        head: format!("{path}{lines}"),
        body: String::new(),
        language: None,
    })
}

fn write(arguments: Arguments<'_>) -> Option<ShownCall> {
    if !arguments.only(&["path", "file_path", "content"]) {
        return None;
    }
    let path = arguments.path()?;
    let content = arguments.text("content")??;
    let lines = content.lines().count();
    Some(ShownCall {
        head: format!(
            "{path} ({lines} {})",
            if lines == 1 { "line" } else { "lines" }
        ),
        body: content.to_owned(),
        language: ctxkit_highlight::language_of_path(path),
    })
}

/// An edit's replacements: Pi 1.6's `edits` list, Pi's older `oldText`/`newText`, or Claude
/// Code's `old_string`/`new_string` (with `replace_all`).
fn edit(arguments: Arguments<'_>) -> Option<ShownCall> {
    let known = [
        "path",
        "file_path",
        "edits",
        "oldText",
        "newText",
        "old_string",
        "new_string",
        "replace_all",
    ];
    if !arguments.only(&known) {
        return None;
    }
    let path = arguments.path()?;
    let mut pairs = Vec::new();
    if let Some(edits) = arguments.0.get("edits") {
        for each in edits.as_array()? {
            let each = Arguments(each.as_object()?);
            if !each.only(&["oldText", "newText"]) {
                return None;
            }
            pairs.push((each.text("oldText")??, each.text("newText")??));
        }
    }
    for (old, new) in [("oldText", "newText"), ("old_string", "new_string")] {
        match (arguments.text(old)?, arguments.text(new)?) {
            (Some(old), Some(new)) => pairs.push((old, new)),
            (None, None) => {}
            (Some(_), None) | (None, Some(_)) => return None,
        }
    }
    let every = match arguments.0.get("replace_all") {
        None | Some(Value::Bool(false)) => "",
        Some(Value::Bool(true)) => ", every occurrence",
        Some(_) => return None,
    };
    if pairs.is_empty() {
        return None;
    }
    let count = pairs.len();
    let body = pairs
        .iter()
        .map(|(old, new)| replacement(old, new))
        .collect::<Vec<_>>()
        .join("\n");
    Some(ShownCall {
        head: format!(
            "{path} ({count} {}{every})",
            if count == 1 {
                "replacement"
            } else {
                "replacements"
            }
        ),
        body,
        language: Some("diff".to_owned()),
    })
}

/// One replacement as removed and added lines.
fn replacement(old: &str, new: &str) -> String {
    let removed = old.split('\n').map(|line| format!("-{line}"));
    let added = new.split('\n').map(|line| format!("+{line}"));
    removed.chain(added).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shown(name: &str, arguments: Value) -> Option<(String, String, Option<String>)> {
        shown_call(name, &arguments).map(|call| (call.head, call.body, call.language))
    }

    #[test]
    fn known_calls_are_drawn_as_pi_draws_them() {
        assert_eq!(
            shown("bash", json!({"command": "cargo test", "timeout": 30})),
            Some(("timeout 30".into(), "cargo test".into(), Some("sh".into())))
        );
        assert_eq!(
            shown(
                "Read",
                json!({"file_path": "src/a.rs", "offset": 10, "limit": 50})
            ),
            Some(("src/a.rs:10-59".into(), String::new(), None))
        );
        assert_eq!(
            shown(
                "write",
                json!({"path": "a.py", "content": "x = 1\ny = 2\n"})
            ),
            Some((
                "a.py (2 lines)".into(),
                "x = 1\ny = 2\n".into(),
                Some("py".into())
            ))
        );
        assert_eq!(
            shown(
                "edit",
                json!({"path": "a.rs", "edits": [{"oldText": "a\nb", "newText": "c"}]})
            ),
            Some((
                "a.rs (1 replacement)".into(),
                "-a\n-b\n+c".into(),
                Some("diff".into())
            ))
        );
        assert_eq!(
            shown(
                "Edit",
                json!({"file_path": "a.rs", "old_string": "x", "new_string": "y", "replace_all": true})
            ),
            Some((
                "a.rs (1 replacement, every occurrence)".into(),
                "-x\n+y".into(),
                Some("diff".into())
            ))
        );
    }

    /// Anything the page would not show (an unknown argument, another type, a path given twice,
    /// half a replacement) keeps the call as its JSON.
    #[test]
    fn a_call_with_anything_else_stays_json() {
        for (name, arguments) in [
            ("bash", json!({"command": "ls", "env": {"A": "1"}})),
            ("bash", json!({"command": ["ls", "-l"]})),
            ("read", json!({"path": "a", "file_path": "b"})),
            ("read", json!({"path": "a", "offset": -1})),
            ("write", json!({"path": "a"})),
            ("edit", json!({"path": "a", "oldText": "x"})),
            (
                "edit",
                json!({"path": "a", "edits": [{"oldText": "x", "newText": "y", "all": true}]}),
            ),
            ("edit", json!({"path": "a", "edits": []})),
            ("glob", json!({"pattern": "*"})),
            ("bash", json!("ls")),
        ] {
            assert_eq!(shown(name, arguments.clone()), None, "{name} {arguments}");
        }
    }
}
