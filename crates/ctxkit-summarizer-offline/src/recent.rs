//! The most recent steps, condensed but verbatim where it matters: what the user said, what the
//! assistant said, each command with its outcome, each file read or changed. The budget left after
//! the sections goes here, newest first, so the summary keeps what the verbatim tail would.

use crate::digest::only_looks;
use crate::sections::{is_trivial, request_line};
use crate::span::{Call, CallKind, Step};
use crate::text::{best_error_line, clip, identifiers, one_line};

fn outcome(call: &Call) -> String {
    let Some(output) = &call.output else {
        return "no result yet".to_owned();
    };
    if call.failed {
        return match best_error_line(output) {
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
        Step::Request(text) => format!("User: {}", request_line(text, 500)),
        Step::Reply(text) => format!("Assistant: {}", clip(&one_line(text), 600)),
        Step::Summary(_) => "An earlier summary (carried above)".to_owned(),
        Step::Call(call) => match call.kind {
            CallKind::Command => format!(
                "`{}` → {}",
                clip(&one_line(&call.target), 200),
                outcome(call)
            ),
            CallKind::Read => format!("Read `{}`", call.target),
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
