//! The coding tools: `read`, `write`, `edit`, `bash`, `ls`, `grep` and `find`, working in the current
//! directory. Every result is bounded ([`limit`]); a cut result's full text is saved under the
//! output directory and the model is told the path.

mod bash;
mod diff;
mod files;
mod find;
mod leftovers;
pub mod limit;
mod lines;
mod read;
mod read_image;
mod recall;
pub mod recalled;
mod replacement;
mod running;
pub mod saved_output;
mod search;
mod search_file;
mod shell;
mod utf16;
mod walk;

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::tool::{ToolContext, ToolOutcome, ToolRegistry, TypedTool};
use crate::workspace::Access;
pub use bash::{BashEnd, BashRun, execute_bash, run_bash};
use files::{EditArguments, LsArguments, WriteArguments};
use find::FindArguments;
pub use leftovers::remove_leftover_temporaries;
use read::ReadArguments;
use recall::RecallArguments;
pub use running::stop_running_commands;
use search::GrepArguments;
pub use shell::Shell;
pub use walk::read_safe_ignore_files;

/// Adds the six coding tools to `registry`.
pub(crate) fn register_coding_tools(registry: &mut ToolRegistry) {
    registry.register(Arc::new(Read));
    registry.register(Arc::new(Write));
    registry.register(Arc::new(Edit));
    registry.register(Arc::new(Bash));
    registry.register(Arc::new(Ls));
    registry.register(Arc::new(Grep));
    registry.register(Arc::new(Find));
    registry.register(Arc::new(Recall));
}

/// `read`.
#[derive(Debug, Clone, Copy)]
pub struct Read;

impl TypedTool for Read {
    type Arguments = ReadArguments;

    fn name(&self) -> &'static str {
        "read"
    }

    fn description(&self) -> &'static str {
        "Read a text file. Output is limited to 2000 lines or 50 KB; use offset and limit to \
         read long files in parts."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "File path, relative to the working directory or absolute"},
            "offset": {"type": "integer", "description": "First line to read (1-based)"},
            "limit": {"type": "integer", "description": "Most lines to read"}
        }, "required": ["path"]})
    }

    fn paths(&self, arguments: &ReadArguments) -> Vec<(String, Access)> {
        vec![(arguments.path.clone(), Access::Read)]
    }

    fn run(
        &self,
        arguments: ReadArguments,
        _call_id: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String> {
        // The file is the full output: nothing is saved (`read::read`).
        read::read(arguments, context)
    }
}

/// `write`.
#[derive(Debug, Clone, Copy)]
pub struct Write;

impl TypedTool for Write {
    type Arguments = WriteArguments;

    fn name(&self) -> &'static str {
        "write"
    }

    fn description(&self) -> &'static str {
        "Create or overwrite a file with the given content; parent directories are created."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "File path"},
            "content": {"type": "string", "description": "The whole new content"}
        }, "required": ["path", "content"]})
    }

    fn paths(&self, arguments: &WriteArguments) -> Vec<(String, Access)> {
        vec![(arguments.path.clone(), Access::Write)]
    }

    fn run(
        &self,
        arguments: WriteArguments,
        _call_id: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String> {
        files::write(arguments, context)
    }
}

/// `edit`.
#[derive(Debug, Clone, Copy)]
pub struct Edit;

impl TypedTool for Edit {
    type Arguments = EditArguments;

    fn name(&self) -> &'static str {
        "edit"
    }

    fn description(&self) -> &'static str {
        "Replace exact text in a file. Each edits[].oldText must occur once in the file as it \
         is before the call, whitespace included, and edits must not overlap. Batch a file's \
         changes in one call."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "File path"},
            "edits": {"type": "array", "items": {"type": "object", "properties": {
                "oldText": {"type": "string", "description": "Exact text to replace"},
                "newText": {"type": "string", "description": "Replacement text"}
            }, "required": ["oldText", "newText"]}}
        }, "required": ["path", "edits"]})
    }

    fn paths(&self, arguments: &EditArguments) -> Vec<(String, Access)> {
        vec![(arguments.path.clone(), Access::Write)]
    }

    fn run(
        &self,
        arguments: EditArguments,
        _call_id: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String> {
        files::edit(arguments, context)
    }
}

/// The arguments of `bash`.
#[derive(Debug, Deserialize)]
pub struct BashArguments {
    command: String,
    #[serde(default, deserialize_with = "lax::optional_seconds")]
    timeout: Option<u64>,
}

/// `bash`: asks for approval with the command it would run.
#[derive(Debug, Clone, Copy)]
pub struct Bash;

impl TypedTool for Bash {
    type Arguments = BashArguments;

    fn name(&self) -> &'static str {
        "bash"
    }

    fn description(&self) -> &'static str {
        "Run a shell command (bash -c) in the working directory; stdout and stderr together. \
         Output is limited to the last 2000 lines or 50 KB; the full output is saved to a file."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {
            "command": {"type": "string", "description": "The command"},
            "timeout": {"type": "integer", "description": "Time limit in seconds"}
        }, "required": ["command"]})
    }

    fn approval(&self, arguments: &BashArguments) -> Option<String> {
        Some(format!("Run `{}`?", arguments.command.trim()))
    }

    fn run(
        &self,
        arguments: BashArguments,
        call_id: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String> {
        let timeout = arguments.timeout.map(Duration::from_secs);
        Ok(run_bash(&arguments.command, timeout, call_id, context))
    }
}

/// `ls`.
#[derive(Debug, Clone, Copy)]
pub struct Ls;

impl TypedTool for Ls {
    type Arguments = LsArguments;

    fn name(&self) -> &'static str {
        "ls"
    }

    fn description(&self) -> &'static str {
        "List a directory's entries (directories end in /), including hidden ones."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "Directory (default: the working directory)"},
            "limit": {"type": "integer", "description": "Most entries (default 500)"}
        }})
    }

    fn paths(&self, arguments: &LsArguments) -> Vec<(String, Access)> {
        vec![(
            arguments.path.clone().unwrap_or_else(|| ".".to_owned()),
            Access::Read,
        )]
    }

    fn run(
        &self,
        arguments: LsArguments,
        call_id: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String> {
        files::ls(arguments, context, call_id)
    }
}

/// `grep`.
#[derive(Debug, Clone, Copy)]
pub struct Grep;

impl TypedTool for Grep {
    type Arguments = GrepArguments;

    fn name(&self) -> &'static str {
        "grep"
    }

    fn description(&self) -> &'static str {
        "Search file contents for a regular expression, respecting .gitignore. Prints \
         path:line: text for each match (path-line- text for a context line)."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {
            "pattern": {"type": "string", "description": "Regular expression (or literal text with literal: true)"},
            "path": {"type": "string", "description": "Directory or file to search (default: the working directory)"},
            "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.rs"},
            "ignoreCase": {"type": "boolean"},
            "literal": {"type": "boolean"},
            "limit": {"type": "integer", "description": "Most matches (default 100)"},
            "context": {"type": "integer", "description": "Lines to show before and after each match (default 0, at most 100)"}
        }, "required": ["pattern"]})
    }

    fn paths(&self, arguments: &GrepArguments) -> Vec<(String, Access)> {
        vec![(
            arguments.path.clone().unwrap_or_else(|| ".".to_owned()),
            Access::Read,
        )]
    }

    fn run(
        &self,
        arguments: GrepArguments,
        call_id: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String> {
        search::grep(arguments, context, call_id)
    }
}

/// `find`.
#[derive(Debug, Clone, Copy)]
pub struct Find;

impl TypedTool for Find {
    type Arguments = FindArguments;

    fn name(&self) -> &'static str {
        "find"
    }

    fn description(&self) -> &'static str {
        "Find files and folders by glob, respecting .gitignore; paths relative to the folder \
         searched. A pattern without / matches names at any depth (*.rs); with /, paths below \
         the folder (src/**/*.ts)."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {
            "pattern": {"type": "string", "description": "Glob, e.g. *.rs or src/**/*.ts"},
            "path": {"type": "string", "description": "Folder to search (default: the working directory)"},
            "limit": {"type": "integer", "description": "Most paths (default 1000)"}
        }, "required": ["pattern"]})
    }

    fn paths(&self, arguments: &FindArguments) -> Vec<(String, Access)> {
        vec![(
            arguments.path.clone().unwrap_or_else(|| ".".to_owned()),
            Access::Read,
        )]
    }

    fn run(
        &self,
        arguments: FindArguments,
        call_id: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String> {
        find::find(arguments, context, call_id)
    }
}

/// `recall`: the full text behind a pruned tool result's marker, or the messages behind a summary.
#[derive(Debug, Clone, Copy)]
pub struct Recall;

impl TypedTool for Recall {
    type Arguments = RecallArguments;

    fn name(&self) -> &'static str {
        ctxkit_protocol::RECALL_TOOL
    }

    fn description(&self) -> &'static str {
        "Fetch what the context shows shortened: the full text of an earlier tool result (its marker \
         ends with `full output: ctxkit://tool-result/<id>`), the whole arguments of an earlier \
         tool call (`full call: ctxkit://tool-call/<id>`), or, with reference \
         `ctxkit://summarized`, the original messages behind a summary (give a `query` \
         of words to find to get only the parts that hold them). Output is limited like the other tools."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {
            "reference": {"type": "string", "description": "The marker's ctxkit://tool-result/<id> or ctxkit://tool-call/<id>, a result's id, or ctxkit://summarized"},
            "query": {"type": "string", "description": "With ctxkit://summarized: words to find in the summarized messages"}
        }, "required": ["reference"]})
    }

    fn run(
        &self,
        arguments: RecallArguments,
        call_id: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String> {
        recall::recall(arguments, context, call_id)
    }
}

/// Lenient readers for arguments models write loosely: integers as strings, `null` for absent.
mod lax {
    use serde::{Deserialize, Deserializer, de::Error};
    use serde_json::Value;

    pub fn optional_u64<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<u64>, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.is_null() {
            return Ok(None);
        }
        value
            .as_u64()
            .or_else(|| value.as_str().and_then(|text| text.trim().parse().ok()))
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("must be a non-negative integer, got {value}")))
    }

    /// A time limit in seconds: as [`optional_u64`], and never 0, which would stop the command
    /// as it starts (Pi 1.6 refuses it too); refused before the user is asked to run it.
    pub fn optional_seconds<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<u64>, D::Error> {
        match optional_u64(deserializer)? {
            Some(0) => Err(D::Error::custom(
                "must be at least 1 second; leave it out for the default limit",
            )),
            seconds => Ok(seconds),
        }
    }

    pub fn optional_bool<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.is_null() {
            return Ok(false);
        }
        value
            .as_bool()
            .ok_or_else(|| D::Error::custom(format!("must be true or false, got {value}")))
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
    let bound = |text: &str| limit::bound_within(text, keep, context.max_output_bytes);
    outcome_within(text, Saved::Shown, bound, call_id, context, is_error)
}

/// What is saved as the full output when a result is cut.
#[derive(Debug, Clone, Copy)]
enum Saved<'a> {
    /// The text bounded.
    Shown,
    /// This text, of which the one bounded is a trimmed form (a command's output with its
    /// trailing newlines).
    Full(&'a str),
}

/// `text` redacted, then within the limits `bound` keeps, the full text (`saved`, redacted)
/// saved when it cut.
fn outcome_within(
    text: &str,
    saved: Saved<'_>,
    bound: impl Fn(&str) -> limit::Bounded,
    call_id: &str,
    context: &ToolContext,
    is_error: bool,
) -> ToolOutcome {
    // Secrets never reach the model, nor the saved full output.
    let text = &context.workspace.redact(text);
    let bounded = bound(text);
    let Some(cut) = bounded.cut else {
        return ToolOutcome {
            is_error,
            ..ToolOutcome::ok(bounded.text)
        };
    };
    let full = match saved {
        Saved::Shown => None,
        Saved::Full(full) => Some(context.workspace.redact(full)),
    };
    match saved_output::save_full_output(
        &context.output_dir,
        call_id,
        full.as_deref().unwrap_or(text),
    ) {
        Ok(path) => ToolOutcome {
            is_error,
            details: Some(json!({"truncated": true, "fullOutputPath": path.display().to_string()})),
            ..ToolOutcome::ok(format!(
                "{}\n\n{}",
                bounded.text,
                limit::cut_notice(&cut, &path)
            ))
        },
        Err(error) => ToolOutcome {
            is_error,
            details: Some(json!({"truncated": true})),
            ..ToolOutcome::ok(format!(
                "{}\n\n{} to {} of {} lines; the full output could not be saved: {error}]",
                bounded.text,
                limit::CUT_NOTICE_START,
                cut.shown_lines,
                cut.total_lines
            ))
        },
    }
}

/// Runs a coding tool by name (tests).
#[cfg(test)]
pub(crate) fn run_tool(
    name: &str,
    arguments: &Value,
    call_id: &str,
    context: &ToolContext,
) -> ToolOutcome {
    ToolRegistry::coding().run(name, arguments, call_id, context)
}

#[cfg(test)]
pub(crate) mod test_support {
    use std::path::Path;

    use super::*;
    use tokio_util::sync::CancellationToken;

    pub fn context(dir: &Path) -> ToolContext {
        ToolContext {
            cwd: dir.to_owned(),
            output_dir: dir.join(".outputs"),
            bash_timeout: Duration::from_secs(10),
            shell: Default::default(),
            pass_env: Vec::new(),
            cancel: CancellationToken::new(),
            engine: None,
            workspace: Arc::new(crate::workspace::Workspace::new(dir)),
            approved: crate::tool::Approved::default(),
            auto_resize_images: true,
            max_output_bytes: limit::MAX_BYTES,
            progress: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_definition_is_an_object_schema_with_its_required_keys_declared() {
        let definitions = ToolRegistry::coding().definitions();
        let names: Vec<&str> = definitions.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "read", "write", "edit", "bash", "ls", "grep", "find", "recall"
            ]
        );
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
        assert!(outcome.is_error && outcome.text.contains("missing field `path`"));
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
        // QA (2026-12-05): 0 stopped the command as it started ("timed out after 0s").
        let outcome = run_tool(
            "bash",
            &json!({"command": "echo ran", "timeout": 0}),
            "c",
            &context,
        );
        assert!(
            outcome.is_error && outcome.text.contains("at least 1 second"),
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
