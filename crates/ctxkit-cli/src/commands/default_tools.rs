//! The tools the chat and `serve`'s agent offer the model: what Pi 1.6's `defaultTools` and the
//! chat's tool flags select (`ctxkit_agent::select_tools`), with a warning on stderr for each name
//! that names no tool of ctxkit, so a restriction the user meant is never lost without a word.

use std::io::Write as _;

use anyhow::Result;
use ctxkit_agent::{NoTools, Settings, ToolFlags, ToolRegistry, UnknownTool, select_tools};

use crate::cli::ChatArgs;

/// The tools the settings select (`serve`); each skipped name is said once, before it starts.
pub(super) fn coding_tools(settings: &Settings) -> Result<ToolRegistry> {
    chat_tools(settings, &ToolFlags::default())
}

/// The tools the settings and the chat's `flags` select; each skipped name is said once, naming
/// the setting or flag that holds it, before the chat starts.
pub(super) fn chat_tools(settings: &Settings, flags: &ToolFlags) -> Result<ToolRegistry> {
    let selection = select_tools(settings.default_tools.as_deref(), flags);
    let mut stderr = crate::redact::stderr();
    for unknown in &selection.unknown {
        writeln!(stderr, "warning: {}", skipped(unknown))?;
    }
    Ok(selection.registry)
}

/// The tool flags of `ctxkit chat` (Pi's `--tools`, `--no-tools`, `--no-builtin-tools`,
/// `--exclude-tools`); `--no-tools` wins over `--no-builtin-tools`, as in Pi.
pub(super) fn tool_flags(args: &ChatArgs) -> ToolFlags {
    let no_tools = if args.no_tools {
        NoTools::All
    } else if args.no_builtin_tools {
        NoTools::Builtin
    } else {
        NoTools::Unset
    };
    ToolFlags {
        no_tools,
        tools: args.tools.as_ref().map(|list| list.0.clone()),
        exclude_tools: args
            .exclude_tools
            .as_ref()
            .map(|list| list.0.clone())
            .unwrap_or_default(),
    }
}

fn skipped(unknown: &UnknownTool) -> String {
    let entry = &unknown.entry;
    let list = unknown.named_by.as_str();
    if unknown.pi_only {
        return format!("{list} names `{entry}`: Pi's tool, which ctxkit does not have; skipped");
    }
    let registry = ToolRegistry::coding();
    let tools: Vec<&str> = registry.names().collect();
    let what = if entry.contains('*') {
        format!("{list} pattern `{entry}` matches no tool of ctxkit")
    } else {
        format!("{list} names `{entry}`, which is no tool of ctxkit")
    };
    format!("{what}; skipped (the tools are {})", tools.join(", "))
}
