//! The coding tools `ctxkit chat` gives the model: `read`, `write`, `edit`, `bash`, `ls` and
//! `grep`, working in the current directory. Every result is bounded ([`limit`]); a cut result's
//! full text is saved under the session directory and the model is told the path.

mod bash;
mod files;
pub mod limit;
mod search;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ctxkit_llm::ToolDefinition;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub use bash::run_bash;

/// Where and how tools run.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Relative paths are resolved against it; `bash` runs in it.
    pub cwd: PathBuf,
    /// Where full outputs of cut results are saved.
    pub output_dir: PathBuf,
    /// The default `bash` time limit.
    pub bash_timeout: Duration,
    /// Fires when the user interrupts the turn.
    pub cancel: CancellationToken,
}

/// A tool's result, as the model will see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub text: String,
    pub is_error: bool,
    /// `{truncated, fullOutputPath}` when the output was cut.
    pub details: Option<Value>,
}

impl ToolOutcome {
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            details: None,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            details: None,
        }
    }
}

/// The tool definitions sent with every request.
pub fn definitions() -> Vec<ToolDefinition> {
    let tool = |name: &str, description: &str, parameters: Value| ToolDefinition {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    };
    vec![
        tool(
            "read",
            "Read a text file. Output is limited to 2000 lines or 50 KB; use offset and limit to \
             read long files in parts.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "File path, relative to the working directory or absolute"},
                "offset": {"type": "integer", "description": "First line to read (1-based)"},
                "limit": {"type": "integer", "description": "Most lines to read"}
            }, "required": ["path"]}),
        ),
        tool(
            "write",
            "Create or overwrite a file with the given content; parent directories are created.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "File path"},
                "content": {"type": "string", "description": "The whole new content"}
            }, "required": ["path", "content"]}),
        ),
        tool(
            "edit",
            "Replace one exact occurrence of oldText in a file with newText. oldText must match \
             exactly once, whitespace included; add surrounding lines to make it unique.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "File path"},
                "oldText": {"type": "string", "description": "Exact text to replace"},
                "newText": {"type": "string", "description": "Replacement text"}
            }, "required": ["path", "oldText", "newText"]}),
        ),
        tool(
            "bash",
            "Run a shell command (sh -c) in the working directory; stdout and stderr together. \
             Output is limited to the last 2000 lines or 50 KB; the full output is saved to a file.",
            json!({"type": "object", "properties": {
                "command": {"type": "string", "description": "The command"},
                "timeout": {"type": "integer", "description": "Time limit in seconds"}
            }, "required": ["command"]}),
        ),
        tool(
            "ls",
            "List a directory's entries (directories end in /), including hidden ones.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Directory (default: the working directory)"},
                "limit": {"type": "integer", "description": "Most entries (default 500)"}
            }}),
        ),
        tool(
            "grep",
            "Search file contents for a regular expression, respecting .gitignore. Prints \
             path:line: text for each match.",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string", "description": "Regular expression (or literal text with literal: true)"},
                "path": {"type": "string", "description": "Directory or file to search (default: the working directory)"},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.rs"},
                "ignoreCase": {"type": "boolean"},
                "literal": {"type": "boolean"},
                "limit": {"type": "integer", "description": "Most matches (default 100)"}
            }, "required": ["pattern"]}),
        ),
    ]
}

/// Runs a tool call (blocking; `bash` waits for its command). Unknown tools and bad arguments are
/// error results the model can read, never failures of the loop.
pub fn run_tool(
    name: &str,
    arguments: &Value,
    call_id: &str,
    context: &ToolContext,
) -> ToolOutcome {
    let Some(arguments) = arguments.as_object() else {
        return ToolOutcome::error(format!(
            "Invalid arguments for `{name}`: expected a JSON object, got {arguments}"
        ));
    };
    let result = match name {
        "read" => files::read(arguments, context, call_id),
        "write" => files::write(arguments, context),
        "edit" => files::edit(arguments, context),
        "ls" => files::ls(arguments, context, call_id),
        "grep" => search::grep(arguments, context, call_id),
        "bash" => match string_arg(arguments, "command") {
            Ok(command) => {
                let timeout = optional_u64(arguments, "timeout")
                    .map(|seconds| seconds.map(Duration::from_secs));
                match timeout {
                    Ok(timeout) => Ok(run_bash(command, timeout, call_id, context)),
                    Err(error) => Err(error),
                }
            }
            Err(error) => Err(error),
        },
        other => Err(format!(
            "Unknown tool `{other}`; the tools are read, write, edit, bash, ls and grep"
        )),
    };
    result.unwrap_or_else(ToolOutcome::error)
}

type Arguments = serde_json::Map<String, Value>;

fn string_arg<'a>(arguments: &'a Arguments, key: &str) -> Result<&'a str, String> {
    match arguments.get(key) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(format!("`{key}` must be a string, got {other}")),
        None => Err(format!("missing required argument `{key}`")),
    }
}

fn optional_string<'a>(arguments: &'a Arguments, key: &str) -> Result<Option<&'a str>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(format!("`{key}` must be a string, got {other}")),
    }
}

fn optional_u64(arguments: &Arguments, key: &str) -> Result<Option<u64>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .or_else(|| value.as_str().and_then(|text| text.trim().parse().ok()))
            .map(Some)
            .ok_or_else(|| format!("`{key}` must be a non-negative integer, got {value}")),
    }
}

fn optional_bool(arguments: &Arguments, key: &str) -> Result<bool, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(other) => Err(format!("`{key}` must be true or false, got {other}")),
    }
}

/// A path argument resolved against the working directory (a leading `@`, as models sometimes
/// write, is dropped).
fn resolve(context: &ToolContext, path: &str) -> PathBuf {
    let path = path.strip_prefix('@').unwrap_or(path);
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_owned()
    } else {
        context.cwd.join(path)
    }
}

/// A bounded output, with the full text saved and its path named when it was cut.
fn bounded_outcome(
    text: &str,
    keep: limit::Keep,
    call_id: &str,
    context: &ToolContext,
    is_error: bool,
) -> ToolOutcome {
    let bounded = limit::bound(text, keep);
    let Some(cut) = bounded.cut else {
        return ToolOutcome {
            text: bounded.text,
            is_error,
            details: None,
        };
    };
    match limit::save_full_output(&context.output_dir, call_id, text) {
        Ok(path) => ToolOutcome {
            text: format!("{}\n\n{}", bounded.text, limit::cut_notice(&cut, &path)),
            is_error,
            details: Some(json!({"truncated": true, "fullOutputPath": path.display().to_string()})),
        },
        Err(error) => ToolOutcome {
            text: format!(
                "{}\n\n[Output truncated to {} of {} lines; the full output could not be saved: {error}]",
                bounded.text, cut.shown_lines, cut.total_lines
            ),
            is_error,
            details: Some(json!({"truncated": true})),
        },
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    pub fn context(dir: &Path) -> ToolContext {
        ToolContext {
            cwd: dir.to_owned(),
            output_dir: dir.join(".outputs"),
            bash_timeout: Duration::from_secs(10),
            cancel: CancellationToken::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_definition_is_an_object_schema_with_its_required_keys_declared() {
        let definitions = definitions();
        let names: Vec<&str> = definitions.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(names, ["read", "write", "edit", "bash", "ls", "grep"]);
        for tool in &definitions {
            assert_eq!(tool.parameters["type"], "object", "{}", tool.name);
            for key in tool.parameters["required"].as_array().into_iter().flatten() {
                let key = key.as_str().unwrap();
                assert!(
                    tool.parameters["properties"].get(key).is_some(),
                    "{}: {key}",
                    tool.name
                );
            }
        }
    }

    #[test]
    fn bad_calls_are_error_results() {
        let dir = tempfile::tempdir().unwrap();
        let context = test_support::context(dir.path());
        let outcome = run_tool("nope", &json!({}), "c", &context);
        assert!(outcome.is_error && outcome.text.contains("Unknown tool `nope`"));
        let outcome = run_tool("read", &json!("main.rs"), "c", &context);
        assert!(outcome.is_error && outcome.text.contains("expected a JSON object"));
        let outcome = run_tool("read", &json!({}), "c", &context);
        assert!(outcome.is_error && outcome.text.contains("missing required argument `path`"));
        let outcome = run_tool(
            "bash",
            &json!({"command": "true", "timeout": "x"}),
            "c",
            &context,
        );
        assert!(
            outcome.is_error && outcome.text.contains("`timeout`"),
            "{}",
            outcome.text
        );
    }

    #[test]
    fn a_cut_output_names_the_saved_file() {
        let dir = tempfile::tempdir().unwrap();
        let context = test_support::context(dir.path());
        let text: String = (0..2500).map(|n| format!("{n}\n")).collect();
        let outcome = bounded_outcome(&text, limit::Keep::Head, "call_7", &context, false);
        let saved = dir.path().join(".outputs/call_7.txt");
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), text);
        assert!(outcome.text.contains(&saved.display().to_string()));
        assert_eq!(outcome.details.unwrap()["truncated"], true);
    }
}
