//! The most recent steps, condensed but verbatim where it matters: what the user said, what the
//! assistant said, each command with its outcome, each file read or changed. The budget left after
//! the sections goes here, newest first, so the summary keeps what the verbatim tail would.

use crate::digest::only_looks;
use crate::error_line::failed_output_line;
use crate::prompt::{prompt, prompt_line};
use crate::sections::{is_trivial, request_line};
use crate::span::{Call, CallKind, Step};
use crate::text::{clip, identifiers, one_line};

fn outcome(call: &Call) -> String {
    let Some(output) = &call.output else {
        return "no result yet".to_owned();
    };
    if call.failed {
        return match failed_output_line(output) {
            Some(error) => format!("failed: `{error}`"),
            None => "failed".to_owned(),
        };
    }
    let last = output
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    if last.is_empty() {
        "ok".to_owned()
    } else {
        format!("ok: {}", clip(&one_line(last), 160))
    }
}

/// One step as one line.
pub fn step_line(step: &Step) -> String {
    match step {
        Step::Request(text) => match prompt(text) {
            Some(prompt) => format!("User: {}", prompt_line(&prompt, 1, &prompt.inputs)),
            None => format!("User: {}", request_line(text, 500)),
        },
        Step::Reply(text) => format!("Assistant: {}", clip(&one_line(text), 600)),
        Step::Summary(_) => "An earlier summary (carried above)".to_owned(),
        Step::Call(call) => match call.kind {
            CallKind::Command => format!(
                "`{}` → {}",
                clip(&one_line(&call.target), 200),
                outcome(call)
            ),
            CallKind::Read => format!("Read `{}`", call.target),
            CallKind::Change if call.failed => {
                format!("Change of `{}` → {}", call.target, outcome(call))
            }
            CallKind::Change => format!("Changed `{}`", call.target),
            CallKind::Other => {
                format!("{} → {}", clip(&one_line(&call.target), 160), outcome(call))
            }
        },
    }
}

/// What a line says without its speaker.
fn body(line: &str) -> &str {
    line.strip_prefix("User: ")
        .or_else(|| line.strip_prefix("Assistant: "))
        .unwrap_or(line)
}

/// The newest step lines that fit in `budget` tokens by `count`, oldest first. A line the
/// sections already hold (`known`) is not repeated, and a line other than the user's that names
/// nothing new (no identifier the sections or a newer line do not name) is left out.
pub fn recent_lines(
    steps: &[Step],
    budget: u64,
    count: impl Fn(&str) -> u64,
    known: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0;
    for step in steps.iter().rev() {
        if matches!(step, Step::Request(text) if is_trivial(text)) {
            continue;
        }
        // A look that went through (`ls`, `git status`) moved nothing.
        if matches!(step, Step::Call(call) if call.kind == CallKind::Command && !call.failed && only_looks(&call.target))
        {
            continue;
        }
        let line = step_line(step);
        if known(body(&line)) {
            continue;
        }
        // A prompt the goal already names (with its inputs) is not repeated.
        if let Step::Request(text) = step
            && prompt(text).is_some_and(|prompt| known(&format!("Prompt \"{}\"", prompt.gist)))
        {
            continue;
        }
        let new = identifiers(&line)
            .iter()
            .any(|name| !known(name) && !lines.iter().any(|newer| newer.contains(name.as_str())));
        if !new && !matches!(step, Step::Request(_)) {
            continue;
        }
        // Files read or changed in a row share a line.
        let file_step = |line: &str| line.starts_with("Read `") || line.starts_with("Changed `");
        if file_step(&line)
            && let Some(newer) = lines.last_mut()
            && newer.split("; ").all(file_step)
        {
            let joined = format!("{line}; {newer}");
            let cost = count(&joined).saturating_sub(count(newer));
            if used + cost > budget {
                break;
            }
            used += cost;
            *newer = joined;
            continue;
        }
        // "  - " and the newline.
        let cost = count(&line) + 2;
        if used + cost > budget {
            break;
        }
        used += cost;
        lines.push(line);
    }
    lines.reverse();
    lines
}

/// Characters of one step kept by the verbatim fill (a tool's output is cut here).
const VERBATIM_STEP_CHARS: usize = 1_000;

/// One step in full, on one line: the user's and the assistant's words whole, a command or another
/// call with its output (cut to `VERBATIM_STEP_CHARS`), a file read or changed by its path only
/// (the file can be read again).
fn verbatim_line(step: &Step) -> Option<String> {
    let line = match step {
        Step::Request(text) => match prompt(text) {
            Some(prompt) => format!("User: {}", prompt_line(&prompt, 1, &prompt.inputs)),
            None => format!("User: {}", one_line(text)),
        },
        Step::Reply(text) => format!("Assistant: {}", one_line(text)),
        Step::Summary(_) => return None,
        Step::Call(call) => match call.kind {
            CallKind::Read | CallKind::Change => return None,
            // A look that went through (`cat`, `ls`) is a read.
            CallKind::Command if !call.failed && only_looks(&call.target) => return None,
            // Not in backticks: the command is not one name, its words are.
            CallKind::Command | CallKind::Other => format!(
                "$ {} → {}",
                clip(&one_line(&call.target), 200),
                one_line(call.output.as_deref().unwrap_or("(no result yet)"))
            ),
        },
    };
    Some(clip(&line, VERBATIM_STEP_CHARS))
}

/// When everything else is said and room is left (a span that holds little, or one shorter than the
/// summary's size), the span's last steps in full, newest first until `budget` tokens by `count`,
/// returned oldest first. The words are the span's own, whole where the sections and the recent
/// steps condensed them; a step `text` already holds word for word, or one the same as a newer
/// step listed (a command run again with the same outcome), is skipped.
pub fn verbatim_lines(
    steps: &[Step],
    budget: u64,
    count: impl Fn(&str) -> u64,
    text: &str,
) -> Vec<String> {
    let mut lines = Vec::new();
    let mut used = 0;
    for line in steps.iter().rev().filter_map(verbatim_line) {
        if text.contains(body(&line)) || lines.contains(&line) {
            continue;
        }
        let cost = count(&line) + 2;
        if used + cost > budget {
            break;
        }
        used += cost;
        lines.push(line);
    }
    lines.reverse();
    lines
}
