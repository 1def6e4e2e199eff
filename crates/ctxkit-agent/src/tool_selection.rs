//! Which tools the model is offered: Pi 1.6's `defaultTools` setting and its command-line flags
//! (`--tools`, `--no-tools`, `--no-builtin-tools`, `--exclude-tools`) over ctxkit's tools. A user
//! who lists `["read", "grep", "find", "ls"]` asks for an agent that cannot change anything, and
//! must get one.
//!
//! Pi's rules (its `resolveDefaultTools` and `createAgentSession`): the plain names of the
//! setting's list form the selection (none: the default selection), then each `+name` adds a tool
//! and each `-name` removes one, in list order. ctxkit's default selection is every coding tool.
//! `recall` is ctxkit's own: the view's markers tell the model to call it and it only reads the
//! session, so it is kept as Pi keeps its extension tools, which a list of plain names in the
//! setting (even `[]`) does not turn off; `-recall` removes it.
//!
//! The flags, as Pi applies them: `--no-tools` and `--no-builtin-tools` start from no built-in
//! tool and leave the setting unread; `--tools` with plain names or `*` patterns is an allowlist
//! (only what it names or matches, `recall` included, is offered), with only `+name`/`-name`
//! entries it changes the starting selection instead; `--no-tools` turns the extension tools off
//! too (so `recall` goes), `--no-builtin-tools` keeps them; `--exclude-tools` removes what it
//! names or matches, last, `recall` included.

use crate::tool::ToolRegistry;

/// The tool that fetches what the view shortened; kept unless a `-recall` entry removes it.
const RECALL: &str = ctxkit_protocol::RECALL_TOOL;

/// Tools Pi 1.6 has and ctxkit does not (`powershell`, and the two its built-in extensions
/// register inactive): named in a warning of their own, so a Pi user knows the name is no typo.
const PI_ONLY_TOOLS: [&str; 3] = ["powershell", "codemode", "tool_search"];

/// The tools a `defaultTools` list and the tool flags select, and the names in them that name no
/// tool of ctxkit.
#[derive(Debug, Clone)]
pub struct ToolSelection {
    /// The selected tools, in the registry's order (the order the model always sees them in).
    pub registry: ToolRegistry,
    /// Each entry that names no tool, once per place that names it, in list order; skipped.
    pub unknown: Vec<UnknownTool>,
}

/// An entry of a tool list that names (or, a `*` pattern, matches) no tool ctxkit has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTool {
    /// The entry as written (`+codemode`, `foo`, `mcp__*`).
    pub entry: String,
    /// Whether it is one of Pi's tools, which ctxkit does not have.
    pub pi_only: bool,
    /// The list that holds it.
    pub named_by: ToolListSource,
}

/// Where a tool list comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolListSource {
    /// The `defaultTools` setting.
    DefaultTools,
    /// `--tools` / `-t`.
    ToolsFlag,
    /// `--exclude-tools` / `-xt`.
    ExcludeToolsFlag,
}

impl ToolListSource {
    /// How the user wrote it: `` `defaultTools` ``, `` `--tools` ``, `` `--exclude-tools` ``.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DefaultTools => "`defaultTools`",
            Self::ToolsFlag => "`--tools`",
            Self::ExcludeToolsFlag => "`--exclude-tools`",
        }
    }
}

/// Which tools `--no-tools` / `--no-builtin-tools` turn off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NoTools {
    /// Neither flag: the `defaultTools` selection.
    #[default]
    Unset,
    /// `--no-builtin-tools`: no built-in tool unless `--tools` names it; `recall` stays.
    Builtin,
    /// `--no-tools`: no tool at all unless `--tools` names it, `recall` included.
    All,
}

/// The tool flags of one run (Pi's `--tools`, `--no-tools`, `--no-builtin-tools`,
/// `--exclude-tools`); the default is none given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFlags {
    /// `--no-tools` or `--no-builtin-tools`.
    pub no_tools: NoTools,
    /// `--tools`: its entries (blank ones are passed over), `None` without the flag.
    pub tools: Option<Vec<String>>,
    /// `--exclude-tools`: names or `*` patterns removed last.
    pub exclude_tools: Vec<String>,
}

/// Why a `--tools` list is refused, as Pi refuses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolListProblem {
    /// Plain names and `+name`/`-name` entries in one list.
    Mixed,
    /// A `+name`/`-name` entry holding `*`.
    PatternModifier(String),
}

impl std::fmt::Display for ToolListProblem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Mixed => {
                formatter.write_str("tool names cannot be mixed with +name or -name entries")
            }
            Self::PatternModifier(entry) => write!(
                formatter,
                "+name and -name entries take exact tool names, not patterns: {entry}"
            ),
        }
    }
}

/// Pi's `getToolListError`: a `--tools` list is either plain names and patterns, or only
/// `+name`/`-name` entries naming exact tools.
pub fn tool_list_problem(entries: &[String]) -> Option<ToolListProblem> {
    let modifiers: Vec<&String> = entries.iter().filter(|entry| is_modifier(entry)).collect();
    if modifiers.is_empty() {
        return None;
    }
    if modifiers.len() < entries.len() {
        return Some(ToolListProblem::Mixed);
    }
    modifiers
        .into_iter()
        .find(|entry| entry.contains('*'))
        .map(|entry| ToolListProblem::PatternModifier(entry.clone()))
}

/// The coding tools `default_tools` (the `defaultTools` setting; `None` when unset) selects.
pub fn select_coding_tools(default_tools: Option<&[String]>) -> ToolSelection {
    select_tools(default_tools, &ToolFlags::default())
}

/// The coding tools `default_tools` and the run's `flags` select (a `--tools` list Pi refuses,
/// [`tool_list_problem`], is taken as its plain entries; check it first).
pub fn select_tools(default_tools: Option<&[String]>, flags: &ToolFlags) -> ToolSelection {
    let all = ToolRegistry::coding();
    let known: Vec<&str> = all.names().collect();
    let tools: Option<Vec<&str>> = flags.tools.as_ref().map(|list| non_blank(list));
    let exclude = non_blank(&flags.exclude_tools);
    let modifiers = tools
        .as_ref()
        .filter(|list| list.iter().any(|entry| is_modifier(entry)));
    let reads_setting =
        flags.no_tools == NoTools::Unset && (tools.is_none() || modifiers.is_some());
    let (mut selected, mut recall_kept) = match default_tools.filter(|_| reads_setting) {
        Some(entries) => from_setting(&known, entries),
        None if flags.no_tools == NoTools::Unset => (builtin(&known), true),
        None => (Vec::new(), flags.no_tools == NoTools::Builtin),
    };
    if let Some(modifiers) = modifiers {
        selected = apply_modifiers(selected, modifiers);
        recall_kept = recall_kept && apply_modifiers(vec![RECALL], modifiers).contains(&RECALL);
    }
    // The allowlist: a plain `--tools` list, or what `--no-tools` leaves (its modifiers' picks).
    let allowed: Option<Vec<&str>> = match (&tools, modifiers) {
        (Some(plain), None) => Some(plain.clone()),
        (_, Some(_)) | (None, None) => (flags.no_tools == NoTools::All).then(|| selected.clone()),
    };
    let offered = |name: &str| {
        let chosen = match &allowed {
            Some(allowed) => matches_any(allowed, name),
            None if name == RECALL => recall_kept,
            None => selected.contains(&name),
        };
        chosen && !matches_any(&exclude, name)
    };
    let mut registry = all.clone();
    for name in &known {
        if !offered(name) {
            registry.remove(name);
        }
    }
    let mut unknown = Vec::new();
    if let Some(entries) = default_tools.filter(|_| reads_setting) {
        unknown.extend(unknown_entries(
            entries,
            &known,
            ToolListSource::DefaultTools,
        ));
    }
    if let Some(entries) = &flags.tools {
        unknown.extend(unknown_entries(entries, &known, ToolListSource::ToolsFlag));
    }
    unknown.extend(unknown_entries(
        &flags.exclude_tools,
        &known,
        ToolListSource::ExcludeToolsFlag,
    ));
    ToolSelection { registry, unknown }
}

/// The entries of a flag's list, trimmed, blank ones left out (as Pi splits `a, ,b`).
fn non_blank(entries: &[String]) -> Vec<&str> {
    entries
        .iter()
        .map(|entry| entry.trim())
        .filter(|entry| !entry.is_empty())
        .collect()
}

/// Every tool but `recall`: the built-in tools, in Pi's words.
fn builtin<'a>(known: &[&'a str]) -> Vec<&'a str> {
    known
        .iter()
        .copied()
        .filter(|name| *name != RECALL)
        .collect()
}

/// The built-in tools the `defaultTools` list selects, and whether it keeps `recall`.
fn from_setting<'a>(known: &[&'a str], entries: &'a [String]) -> (Vec<&'a str>, bool) {
    let entries: Vec<&str> = entries.iter().map(String::as_str).collect();
    let plain: Vec<&str> = entries
        .iter()
        .copied()
        .filter(|entry| !is_modifier(entry))
        .collect();
    let base = if plain.is_empty() && !entries.is_empty() {
        builtin(known)
    } else {
        plain
    };
    let recall_kept = apply_modifiers(vec![RECALL], &entries).contains(&RECALL);
    let selected = apply_modifiers(base, &entries)
        .into_iter()
        .filter(|name| *name != RECALL)
        .collect();
    (selected, recall_kept)
}

/// A `+name` or `-name` entry.
fn is_modifier(entry: &str) -> bool {
    entry.starts_with(['+', '-'])
}

/// Pi's `applyToolModifiers`: `+name` adds a tool not selected yet, `-name` removes one; plain
/// entries are passed over.
fn apply_modifiers<'a>(mut tools: Vec<&'a str>, entries: &[&'a str]) -> Vec<&'a str> {
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

/// Whether `name` is one of `entries` or matches one holding `*` (any characters, Pi's tool
/// patterns).
fn matches_any(entries: &[&str], name: &str) -> bool {
    entries
        .iter()
        .any(|entry| *entry == name || (entry.contains('*') && matches_pattern(entry, name)))
}

/// Whether `name` matches `pattern`, where `*` stands for any characters and all else for itself.
fn matches_pattern(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let middle_and_last: Vec<&str> = parts.collect();
    let Some((last, middle)) = middle_and_last.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

fn unknown_entries(
    entries: &[String],
    known: &[&str],
    named_by: ToolListSource,
) -> Vec<UnknownTool> {
    let mut unknown: Vec<UnknownTool> = Vec::new();
    for entry in entries.iter().map(|entry| entry.trim()) {
        let name = entry.strip_prefix(['+', '-']).unwrap_or(entry);
        let found = if name.contains('*') {
            known.iter().any(|tool| matches_pattern(name, tool))
        } else {
            known.contains(&name)
        };
        if entry.is_empty() || found || unknown.iter().any(|seen| seen.entry == entry) {
            continue;
        }
        unknown.push(UnknownTool {
            entry: entry.to_owned(),
            pi_only: PI_ONLY_TOOLS.contains(&name),
            named_by,
        });
    }
    unknown
}

#[cfg(test)]
#[path = "tool_selection_tests.rs"]
mod tests;
