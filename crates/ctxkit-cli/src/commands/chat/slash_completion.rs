//! Tab after `/` at the start of the input line completes a command's name, as Pi's editor does:
//! the chat's own commands, then `/skill:<name>` for each skill (unless `enableSkillCommands` is
//! false) and `/<template>` for each prompt template, each listed with what it does. Names that
//! start with what was typed come first, in that order; when none does, the names that match it
//! fuzzily (`/cmpct` finds `/compact`).

use std::sync::{Arc, Mutex};

use ctxkit_resources::LoadedResources;
use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

/// The chat's commands and what each does, in the order they are offered.
const BUILT_IN: [(&str, &str); 34] = [
    ("compact", "summarize older messages now (optional focus)"),
    ("context", "context usage and what a compaction would keep"),
    ("cost", "what this session spent"),
    ("compactions", "the compactions on this branch"),
    ("undo-compact", "undo the last compaction"),
    (
        "tree",
        "walk the session tree, go to an entry, label entries",
    ),
    ("fork", "a new session from before a message you pick"),
    ("clone", "a new session holding this branch up to here"),
    ("new", "a new session"),
    ("resume", "open another session of this directory"),
    ("save", "write the session afresh to a new file"),
    ("import", "go on in a Pi, Claude Code or Codex session"),
    ("session", "the session's file, id, messages, tokens, cost"),
    ("copy", "copy the last reply to the clipboard"),
    ("export", "the session as a web page (or .jsonl: a copy)"),
    ("share", "the session as a web page in a secret GitHub gist"),
    ("name", "show or set the session's name"),
    ("label", "label an entry"),
    ("model", "switch the model"),
    ("scoped-models", "pick the models Ctrl-P steps through"),
    ("settings", "the chat's settings in a list"),
    ("thinking", "show or set the thinking level"),
    ("pin", "keep text verbatim past every compaction"),
    ("unpin", "remove a pin (/pin lists their ids)"),
    ("edit", "write the prompt in $EDITOR"),
    (
        "reload",
        "read settings, context files, skills, templates again",
    ),
    ("trust", "trust this project's settings that need it"),
    ("login", "save a provider's API key (typed without echo)"),
    ("logout", "remove a key /login saved"),
    ("hotkeys", "the keys of the input line"),
    ("help", "every command"),
    ("quit", "leave"),
    ("c", "the same as /compact"),
    ("exit", "the same as /quit"),
];

/// Whether `/name` runs one of the chat's own commands, which win over a prompt template of the
/// same name (`ctxkit resources` and the chat's start warn of such a template).
pub(crate) fn is_chat_command(name: &str) -> bool {
    BUILT_IN.iter().any(|(command, _)| *command == name) || matches!(name, "?" | "q")
}

/// Candidates offered at once.
const MAX_CANDIDATES: usize = 40;

/// One command name offered, without its `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    pub name: String,
    pub description: String,
}

/// The names Tab offers after `/`, shared by the chat (which sets them again on `/reload`) and its
/// input line.
#[derive(Debug, Clone, Default)]
pub struct SlashCommands(Arc<Mutex<Vec<SlashCommand>>>);

impl SlashCommands {
    /// The names for `resources` ([`SlashCommands::set`]).
    pub fn of(resources: &LoadedResources, skill_commands: bool) -> Self {
        let commands = Self::default();
        commands.set(resources, skill_commands);
        commands
    }

    /// The chat's commands, then the skills' (when `skill_commands`) and the prompt templates'.
    pub fn set(&self, resources: &LoadedResources, skill_commands: bool) {
        let mut commands: Vec<SlashCommand> = BUILT_IN
            .iter()
            .map(|(name, description)| command(name, description))
            .collect();
        if skill_commands {
            commands.extend(
                resources
                    .skills
                    .skills
                    .iter()
                    .map(|skill| command(&format!("skill:{}", skill.name), &skill.description)),
            );
        }
        commands.extend(resources.prompts.templates.iter().map(|template| {
            let description = match &template.argument_hint {
                Some(hint) => format!("{hint} {}", template.description),
                None => template.description.clone(),
            };
            command(&template.name, &description)
        }));
        if let Ok(mut shared) = self.0.lock() {
            *shared = commands;
        }
    }

    /// The commands whose names `typed` (what follows the `/`) starts, else those it matches
    /// fuzzily, best first.
    pub fn matching(&self, typed: &str) -> Vec<SlashCommand> {
        let Ok(commands) = self.0.lock() else {
            return Vec::new();
        };
        matching(&commands, typed)
    }
}

fn command(name: &str, description: &str) -> SlashCommand {
    SlashCommand {
        name: name.to_owned(),
        description: crate::render::one_line(description, 70),
    }
}

fn matching(commands: &[SlashCommand], typed: &str) -> Vec<SlashCommand> {
    let lower = typed.to_lowercase();
    let starting: Vec<SlashCommand> = commands
        .iter()
        .filter(|command| command.name.to_lowercase().starts_with(&lower))
        .take(MAX_CANDIDATES)
        .cloned()
        .collect();
    if !starting.is_empty() || typed.is_empty() {
        return starting;
    }
    let pattern = Pattern::new(
        typed,
        CaseMatching::Ignore,
        Normalization::Smart,
        AtomKind::Fuzzy,
    );
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut scored = pattern.match_list(
        commands.iter().map(|command| command.name.as_str()),
        &mut matcher,
    );
    // Best score first; among equals the order commands are offered in.
    scored.sort_by(|(_, a), (_, b)| b.cmp(a));
    scored
        .into_iter()
        .take(MAX_CANDIDATES)
        .filter_map(|(name, _)| commands.iter().find(|command| command.name == name))
        .cloned()
        .collect()
}

/// What `/` at the start of `line`, up to `pos`, asks to complete: the name typed so far, when the
/// cursor is still in the command's name.
pub fn typed_command(line: &str, pos: usize) -> Option<&str> {
    let typed = line.get(..pos)?.strip_prefix('/')?;
    (!typed.contains(char::is_whitespace)).then_some(typed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(commands: &[SlashCommand]) -> Vec<&str> {
        commands
            .iter()
            .map(|command| command.name.as_str())
            .collect()
    }

    fn offered() -> Vec<SlashCommand> {
        let mut commands: Vec<SlashCommand> = BUILT_IN
            .iter()
            .map(|(name, description)| command(name, description))
            .collect();
        commands.push(command("skill:pdf-tools", "read PDFs"));
        commands.push(command("review", "review the diff"));
        commands
    }

    #[test]
    fn names_starting_with_what_was_typed_come_in_the_order_offered() {
        let commands = offered();
        assert_eq!(
            names(&matching(&commands, "comp")),
            ["compact", "compactions"]
        );
        assert_eq!(names(&matching(&commands, "SCO")), ["scoped-models"]);
        assert_eq!(names(&matching(&commands, "skill:")), ["skill:pdf-tools"]);
        assert_eq!(names(&matching(&commands, "rev")), ["review"]);
        assert_eq!(matching(&commands, "").len(), commands.len());
    }

    #[test]
    fn without_a_name_starting_so_the_fuzzy_matches_are_offered() {
        let commands = offered();
        assert_eq!(matching(&commands, "cmpct")[0].name, "compact");
        assert_eq!(names(&matching(&commands, "pdf")), ["skill:pdf-tools"]);
        assert!(matching(&commands, "zzzz").is_empty());
    }

    #[test]
    fn only_a_slash_at_the_start_and_a_cursor_in_the_name_complete() {
        assert_eq!(typed_command("/comp", 5), Some("comp"));
        assert_eq!(typed_command("/", 1), Some(""));
        assert_eq!(typed_command("/compact now", 12), None);
        assert_eq!(typed_command("say /comp", 9), None);
        assert_eq!(typed_command("/compact now", 4), Some("com"));
    }

    #[test]
    fn every_command_the_chat_runs_is_offered() {
        // The commands `run_command` matches by name (besides those the resources add).
        let source = include_str!("slash.rs");
        for (name, _) in BUILT_IN {
            let quoted = format!("\"{name}\"");
            assert!(
                source.contains(&quoted) || name == "edit",
                "/{name} is offered but not run"
            );
        }
    }
}
