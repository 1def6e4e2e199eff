//! Which tools the model is offered: Pi 1.6's `defaultTools` setting over ctxkit's tools. A user
//! who lists `["read", "grep", "find", "ls"]` asks for an agent that cannot change anything, and
//! must get one.
//!
//! Pi's rules (its `resolveDefaultTools`): the plain names of the list form the selection (none:
//! the default selection), then each `+name` adds a tool and each `-name` removes one, in list
//! order. ctxkit's default selection is every coding tool. `recall` is ctxkit's own: the view's
//! markers tell the model to call it and it only reads the session, so it is kept as Pi keeps its
//! extension tools, which a list of plain names (even `[]`) does not turn off; `-recall` removes it.

use crate::tool::ToolRegistry;

/// The tool that fetches what the view shortened; kept unless a `-recall` entry removes it.
const RECALL: &str = "recall";

/// Tools Pi 1.6 has and ctxkit does not (`powershell`, and the two its built-in extensions
/// register inactive): named in a warning of their own, so a Pi user knows the name is no typo.
const PI_ONLY_TOOLS: [&str; 3] = ["powershell", "codemode", "tool_search"];

/// The tools a `defaultTools` list selects, and the names in it that name no tool of ctxkit.
#[derive(Debug, Clone)]
pub struct ToolSelection {
    /// The selected tools, in the registry's order (the order the model always sees them in).
    pub registry: ToolRegistry,
    /// Each entry that names no tool, once, in list order; skipped.
    pub unknown: Vec<UnknownTool>,
}

/// A `defaultTools` entry that names no tool ctxkit has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTool {
    /// The entry as written (`+codemode`, `foo`).
    pub entry: String,
    /// Whether it is one of Pi's tools, which ctxkit does not have.
    pub pi_only: bool,
}

/// The coding tools `default_tools` (the `defaultTools` setting; `None` when unset) selects.
pub fn select_coding_tools(default_tools: Option<&[String]>) -> ToolSelection {
    let all = ToolRegistry::coding();
    let Some(entries) = default_tools else {
        return ToolSelection {
            registry: all,
            unknown: Vec::new(),
        };
    };
    let known: Vec<&str> = all.names().collect();
    let builtin: Vec<&str> = known.iter().copied().filter(|n| *n != RECALL).collect();
    let plain: Vec<&str> = entries
        .iter()
        .map(String::as_str)
        .filter(|entry| !is_modifier(entry))
        .collect();
    let base = if plain.is_empty() && !entries.is_empty() {
        builtin
    } else {
        plain
    };
    let mut selected = apply_modifiers(base, entries);
    if apply_modifiers(vec![RECALL], entries).contains(&RECALL) {
        selected.push(RECALL);
    }
    let mut registry = all.clone();
    for name in &known {
        if !selected.contains(name) {
            registry.remove(name);
        }
    }
    ToolSelection {
        registry,
        unknown: unknown_entries(entries, &known),
    }
}

/// A `+name` or `-name` entry.
fn is_modifier(entry: &str) -> bool {
    entry.starts_with(['+', '-'])
}

/// Pi's `applyToolModifiers`: `+name` adds a tool not selected yet, `-name` removes one; plain
/// entries are passed over.
fn apply_modifiers<'a>(mut tools: Vec<&'a str>, entries: &'a [String]) -> Vec<&'a str> {
    for entry in entries {
        if let Some(name) = entry.strip_prefix('+') {
            if !name.is_empty() && !tools.contains(&name) {
                tools.push(name);
            }
        } else if let Some(name) = entry.strip_prefix('-') {
            tools.retain(|tool| *tool != name);
        }
    }
    tools
}

fn unknown_entries(entries: &[String], known: &[&str]) -> Vec<UnknownTool> {
    let mut unknown: Vec<UnknownTool> = Vec::new();
    for entry in entries {
        let name = entry.strip_prefix(['+', '-']).unwrap_or(entry);
        if known.contains(&name) || unknown.iter().any(|seen| seen.entry == *entry) {
            continue;
        }
        unknown.push(UnknownTool {
            entry: entry.clone(),
            pi_only: PI_ONLY_TOOLS.contains(&name),
        });
    }
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selected(entries: Option<&[&str]>) -> Vec<String> {
        let owned: Option<Vec<String>> =
            entries.map(|list| list.iter().map(|entry| (*entry).to_owned()).collect());
        select_coding_tools(owned.as_deref())
            .registry
            .names()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn unset_offers_every_tool() {
        assert_eq!(
            selected(None),
            [
                "read", "write", "edit", "bash", "ls", "grep", "find", "recall"
            ]
        );
    }

    #[test]
    fn plain_names_replace_the_selection_and_recall_stays() {
        assert_eq!(
            selected(Some(&["read", "grep", "find", "ls"])),
            ["read", "ls", "grep", "find", "recall"]
        );
        assert_eq!(selected(Some(&[])), ["recall"]);
    }

    #[test]
    fn modifiers_change_the_default_selection_in_order() {
        assert_eq!(
            selected(Some(&["-bash", "-write", "+write"])),
            ["read", "write", "edit", "ls", "grep", "find", "recall"]
        );
        assert_eq!(
            selected(Some(&["read", "+bash", "-recall"])),
            ["read", "bash"]
        );
    }

    #[test]
    fn names_ctxkit_has_no_tool_for_are_reported_once() {
        let entries: Vec<String> = ["read", "+codemode", "powershell", "fetch", "fetch"]
            .map(str::to_owned)
            .to_vec();
        let selection = select_coding_tools(Some(&entries));
        assert_eq!(
            selection.unknown,
            [
                UnknownTool {
                    entry: "+codemode".to_owned(),
                    pi_only: true
                },
                UnknownTool {
                    entry: "powershell".to_owned(),
                    pi_only: true
                },
                UnknownTool {
                    entry: "fetch".to_owned(),
                    pi_only: false
                },
            ]
        );
        let names: Vec<&str> = selection.registry.names().collect();
        assert_eq!(names, ["read", "recall"]);
    }
}
