//! The tools the chat and `serve`'s agent offer the model: what Pi 1.6's `defaultTools` selects
//! (`ctxkit_agent::select_coding_tools`), with a warning on stderr for each name that names no
//! tool of ctxkit, so a restriction the user meant is never lost without a word.

use std::io::Write as _;

use anyhow::Result;
use ctxkit_agent::{Settings, ToolRegistry, UnknownTool, select_coding_tools};

/// The selected tools; each skipped name is said once, before the chat or server starts.
pub(super) fn coding_tools(settings: &Settings) -> Result<ToolRegistry> {
    let selection = select_coding_tools(settings.default_tools.as_deref());
    let mut stderr = crate::redact::stderr();
    for unknown in &selection.unknown {
        writeln!(stderr, "warning: {}", skipped(unknown))?;
    }
    Ok(selection.registry)
}

fn skipped(unknown: &UnknownTool) -> String {
    let entry = &unknown.entry;
    if unknown.pi_only {
        return format!(
            "`defaultTools` names `{entry}`: Pi's tool, which ctxkit does not have; skipped"
        );
    }
    let registry = ToolRegistry::coding();
    let tools: Vec<&str> = registry.names().collect();
    format!(
        "`defaultTools` names `{entry}`, which is no tool of ctxkit; skipped (the tools are {})",
        tools.join(", ")
    )
}
