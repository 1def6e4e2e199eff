//! Requests that are a prompt file expanded rather than the user's own words: a slash command, a
//! skill or a workflow step (spec-kit's `/speckit.implement`, a Claude Code command) arrives as a
//! long document of headings and steps around a short input (`T035`, `$ARGUMENTS`). The goal says
//! what such a prompt asks and its input in one line, uses of one template are one goal, and the
//! template's names weigh as the prompt's, not as names the user chose.

use crate::text::{clip, one_line, sentences, split_fences};

/// Characters a request must have to be read as an expanded prompt.
const PROMPT_MIN_CHARS: usize = 1_000;
/// Markdown headings (`## Outline`) it must have: a document, not a message.
const PROMPT_MIN_HEADINGS: usize = 2;
/// Characters of one input at most (a longer block is part of the template).
const INPUT_MAX_CHARS: usize = 300;
/// Characters of the prompt's gist.
const GIST_MAX_CHARS: usize = 200;
/// Words the gist's sentence must have (a heading's leftovers are not what a prompt asks).
const GIST_MIN_WORDS: usize = 6;

/// An expanded prompt: what it asks, the input it was given, and its template.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// What the prompt asks: its `description:` line, or its first sentence of prose.
    pub gist: String,
    /// The user's input to it: short blocks under a heading naming the input, `ARGUMENTS:` lines.
    pub inputs: Vec<String>,
    /// The template without its inputs, whitespace closed: two uses of one prompt share it.
    pub template: String,
    /// The prompt's length in characters.
    pub chars: usize,
}

fn heading(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let title = trimmed.trim_start_matches('#');
    (trimmed.starts_with('#') && title.starts_with(' ')).then(|| title.trim())
}

fn names_input(title: &str) -> bool {
    let lower = title.to_lowercase();
    lower.contains("input") || lower.contains("argument")
}

/// The request as an expanded prompt, when it is one: at least `PROMPT_MIN_CHARS` characters with
/// `PROMPT_MIN_HEADINGS` markdown headings outside fenced blocks.
pub fn prompt(text: &str) -> Option<Prompt> {
    let chars = text.chars().count();
    if chars < PROMPT_MIN_CHARS {
        return None;
    }
    let (prose, _) = split_fences(text);
    if !has_input_slot(&prose) {
        return None;
    }
    let mut inputs = Vec::new();
    let mut template = String::new();
    let mut under_input = false;
    let mut block: Option<String> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            match block.take() {
                Some(done) => {
                    let done = done.trim().to_owned();
                    if under_input && !done.is_empty() && done.chars().count() <= INPUT_MAX_CHARS {
                        inputs.push(one_line(&done));
                    } else {
                        template.push_str(&done);
                    }
                }
                None => block = Some(String::new()),
            }
            continue;
        }
        if let Some(open) = block.as_mut() {
            open.push_str(line);
            open.push('\n');
            continue;
        }
        if let Some(title) = heading(line) {
            under_input = names_input(title);
        }
        match line.trim().strip_prefix("ARGUMENTS:") {
            Some(arguments) if !arguments.trim().is_empty() => {
                inputs.push(clip(&one_line(arguments), INPUT_MAX_CHARS));
            }
            Some(_) | None => {
                template.push_str(line);
                template.push('\n');
            }
        }
    }
    Some(Prompt {
        gist: gist(&prose),
        inputs,
        template: one_line(&template),
        chars,
    })
}

/// Whether a long text is a prompt file with a place for the user's input: a `description:` line
/// in front matter, the `$ARGUMENTS` placeholder or an `ARGUMENTS:` line, or a heading naming the
/// input among `PROMPT_MIN_HEADINGS` headings. A long message with headings but no such place (a
/// task written for a subagent, a pasted plan) is the sender's own words.
fn has_input_slot(prose: &str) -> bool {
    let front_matter = prose.trim_start().starts_with("---") && description(prose).is_some();
    let headings: Vec<&str> = prose.lines().filter_map(heading).collect();
    front_matter
        || prose.contains("$ARGUMENTS")
        || prose
            .lines()
            .any(|line| line.trim_start().starts_with("ARGUMENTS:"))
        || (headings.len() >= PROMPT_MIN_HEADINGS
            && headings.iter().any(|title| names_input(title)))
}

/// A `description:` line near the top.
fn description(prose: &str) -> Option<String> {
    prose.lines().take(12).find_map(|line| {
        line.trim()
            .strip_prefix("description:")
            .map(|value| value.trim().trim_matches(['"', '\'']).to_owned())
            .filter(|value| !value.is_empty())
    })
}

/// What a prompt asks: a `description:` line near its top, or its first sentence of prose (not a
/// heading, not under a heading naming the input) of `GIST_MIN_WORDS` words.
fn gist(prose: &str) -> String {
    if let Some(description) = description(prose) {
        return clip(&one_line(&description), GIST_MAX_CHARS);
    }
    let mut under_input = false;
    for line in prose.lines() {
        if let Some(title) = heading(line) {
            under_input = names_input(title);
            continue;
        }
        if under_input {
            continue;
        }
        if let Some(sentence) = sentences(line)
            .into_iter()
            .find(|sentence| sentence.split_whitespace().count() >= GIST_MIN_WORDS)
        {
            return clip(&one_line(&sentence), GIST_MAX_CHARS);
        }
    }
    String::new()
}

/// Inputs shown in a goal line at most: the first and the latest ones.
const INPUTS_SHOWN: usize = 10;

/// A prompt as one goal line: `Prompt "…" (7,283 characters; input: `T035`)`, or for a template
/// used `times` times with `inputs` over its uses, `(used 30 times; inputs: `T001`, …, `T035`)`.
pub fn prompt_line(prompt: &Prompt, times: usize, inputs: &[String]) -> String {
    let quoted: Vec<String> = inputs
        .iter()
        .map(|input| format!("`{}`", input.replace('`', "'")))
        .collect();
    let shown = if quoted.len() > INPUTS_SHOWN {
        let mut shown = vec![quoted[0].clone(), "…".to_owned()];
        shown.extend_from_slice(&quoted[quoted.len() - (INPUTS_SHOWN - 1)..]);
        shown
    } else {
        quoted
    };
    let uses = if times > 1 {
        format!("used {times} times")
    } else {
        format!("{} characters", prompt.chars)
    };
    let input = match shown.len() {
        0 => String::new(),
        1 => format!("; input: {}", shown[0]),
        _ => format!("; inputs: {}", shown.join(", ")),
    };
    format!("Prompt \"{}\" ({uses}{input})", prompt.gist)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_prompt(input: &str) -> String {
        let steps: String = (1..=30)
            .map(|step| format!("{step}. Run `.specify/scripts/check.sh --json` and parse FEATURE_DIR for step {step}.\n"))
            .collect();
        format!(
            "\n## User Input\n\n```text\n{input}\n```\n\nYou **MUST** consider the user input before proceeding (if not empty).\n\n## Outline\n\n{steps}"
        )
    }

    #[test]
    fn an_expanded_prompt_gives_its_input_and_what_it_asks() {
        let found = prompt(&spec_prompt("T035")).unwrap();
        assert_eq!(found.inputs, ["T035"]);
        // The sentence under the input's heading is the template's, not what it asks.
        assert_eq!(
            found.gist,
            "Run `.specify/scripts/check.sh --json` and parse FEATURE_DIR for step 1."
        );
        let other = prompt(&spec_prompt("T001, T002")).unwrap();
        assert_eq!(found.template, other.template, "one template, two uses");
        let line = prompt_line(&found, 2, &["T001, T002".to_owned(), "T035".to_owned()]);
        assert_eq!(
            line,
            "Prompt \"Run `.specify/scripts/check.sh --json` and parse FEATURE_DIR for step 1.\" (used 2 times; inputs: `T001, T002`, `T035`)"
        );
    }

    #[test]
    fn a_description_line_is_the_gist_and_arguments_are_the_input() {
        let body: String = (1..=40)
            .map(|step| {
                format!("{step}. Load and analyze the implementation context of part {step}.\n")
            })
            .collect();
        let text = format!(
            "---\ndescription: Execute the implementation plan by processing all tasks\n---\n## Outline\n{body}\n## Rules\nARGUMENTS: add the caddie endpoint\n"
        );
        let found = prompt(&text).unwrap();
        assert_eq!(
            found.gist,
            "Execute the implementation plan by processing all tasks"
        );
        assert_eq!(found.inputs, ["add the caddie endpoint"]);
    }

    #[test]
    fn a_message_is_not_a_prompt() {
        assert_eq!(prompt("## Bug\nfix `src/a.rs`\n## Repro\nrun it"), None);
        let task: String = (1..=40)
            .map(|part| format!("- fix module {part} in src/components/modules/\n"))
            .collect();
        let subagent = format!(
            "You are fixing 13 components.\n## Project\n{task}\n## Critical context\nDO NOT edit api.ts\n"
        );
        assert_eq!(prompt(&subagent), None, "a task with headings but no input");
        let long = "Please look at the failing test in src/lib.rs and fix it. ".repeat(40);
        assert_eq!(prompt(&long), None, "long but no headings");
    }
}
