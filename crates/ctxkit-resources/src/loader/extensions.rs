//! Extension registration conflicts: the engine loads extension code and reports
//! what each registered; this decides tool/flag owners and the exposed command names.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use ctxkit_packages::ResourceDiagnostic;

/// What one loaded extension registered, in load order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtensionRegistration {
    /// The extension's path (or `<inline:N>`).
    pub path: PathBuf,
    /// Tool names.
    pub tools: Vec<String>,
    /// Flag names (without `--`).
    pub flags: Vec<String>,
    /// Command base names (without `/`).
    pub commands: Vec<String>,
}

/// The outcome of conflict resolution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtensionConflicts {
    /// One error per later registration of an owned tool or flag, on the later extension's path.
    pub diagnostics: Vec<ResourceDiagnostic>,
    /// Tool name → owning extension (the first to register it).
    pub tool_owners: HashMap<String, PathBuf>,
    /// Flag name → owning extension.
    pub flag_owners: HashMap<String, PathBuf>,
    /// Per extension (load order), its commands as `(base name, invocation name)`.
    pub commands: Vec<(PathBuf, Vec<(String, String)>)>,
}

/// First registration of a tool or flag wins; later ones get `Tool "<name>" conflicts with
/// <owner>` / `Flag "--<name>" conflicts with <owner>`. Command base names registered more than
/// once are all exposed as `<name>:1`, `<name>:2`, … in load order (skipping taken names).
pub fn resolve_extension_conflicts(registrations: &[ExtensionRegistration]) -> ExtensionConflicts {
    let mut result = ExtensionConflicts::default();
    for registration in registrations {
        for tool in &registration.tools {
            match result.tool_owners.get(tool) {
                Some(owner) => result.diagnostics.push(ResourceDiagnostic::error(
                    format!("Tool \"{tool}\" conflicts with {}", owner.display()),
                    &registration.path,
                )),
                None => {
                    result
                        .tool_owners
                        .insert(tool.clone(), registration.path.clone());
                }
            }
        }
        for flag in &registration.flags {
            match result.flag_owners.get(flag) {
                Some(owner) => result.diagnostics.push(ResourceDiagnostic::error(
                    format!("Flag \"--{flag}\" conflicts with {}", owner.display()),
                    &registration.path,
                )),
                None => {
                    result
                        .flag_owners
                        .insert(flag.clone(), registration.path.clone());
                }
            }
        }
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for registration in registrations {
        for command in &registration.commands {
            *counts.entry(command.as_str()).or_default() += 1;
        }
    }
    let mut taken: HashSet<String> = counts
        .iter()
        .filter(|(_, count)| **count == 1)
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let mut next_index: HashMap<String, usize> = HashMap::new();
    for registration in registrations {
        let mut names = Vec::new();
        for command in &registration.commands {
            let invocation = if counts.get(command.as_str()).copied().unwrap_or(0) > 1 {
                let index = next_index.entry(command.clone()).or_insert(1);
                loop {
                    let candidate = format!("{command}:{index}");
                    *index += 1;
                    if taken.insert(candidate.clone()) {
                        break candidate;
                    }
                }
            } else {
                command.clone()
            };
            names.push((command.clone(), invocation));
        }
        result.commands.push((registration.path.clone(), names));
    }
    result
}
