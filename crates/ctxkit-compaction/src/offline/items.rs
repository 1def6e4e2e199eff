//! Lines of the summary built from the span's parts: statements of choice (Key Decisions), tool
//! work (Progress), the last report, rules from context files and the exact strings of Critical
//! Context.

use crate::extract::{Part, identifiers, sentences};
use crate::offline::commands::is_step;
use crate::offline::errors::is_generic_banner;
use crate::offline::facts::Facts;
use crate::offline::render::{Item, Section};
use crate::offline::say;
use crate::offline::text::{Language, clip, constraints_in, dedup_key};
use crate::offline::work::{FileChange, Outcome, Work, is_file_operation, is_side_command};

/// Phrases of choice in the assistant's words.
const DECISION_MARKS: &[&str] = &[
    "i'll use",
    "i will use",
    "we'll use",
    "let's use",
    "going with",
    "i'll go with",
    "decided",
    "chose ",
    "opted",
    "switch to",
    "switched to",
    "the approach is",
    "the plan is",
    "我决定",
    "决定",
    "改用",
    "采用",
];
/// Comparisons that are a choice only when someone acts on them (`now uses X instead of Y`).
const COMPARISON_MARKS: &[&str] = &["instead of", "rather than", "而不是"];
/// Words of acting, matched as whole words (`refuses it` does not say `uses`).
const ACTING_MARKS: &[&str] = &["i'll", "i will", "we'll", "let's", "now", "use", "uses"];
const SPECULATION: &[&str] = &["if ", "i bet", "maybe", "perhaps", "it might", "this might"];
/// What a plan's next sentence says when it gives the reason for the choice (`I'll do it in
/// Arrow: … That avoids pulling in pandas.`).
const REASON_MARKS: &[&str] = &["avoids", "avoid ", "instead of", "rather than"];

/// Whether `text` holds `mark` as whole words, not inside a longer word.
fn has_words(text: &str, mark: &str) -> bool {
    text.match_indices(mark).any(|(start, _)| {
        let before = text[..start].chars().next_back();
        let after = text[start + mark.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Statements of choice from the assistant's replies, most recent last.
pub(crate) fn decisions(parts: &[Part]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for part in parts {
        let Part::Assistant(text) = part else {
            continue;
        };
        let all = sentences(text);
        for (index, sentence) in all.iter().enumerate() {
            let lower = sentence.to_lowercase();
            let length = sentence.chars().count();
            // A plan in the first person whose next sentence gives its reason is a choice.
            let reasoned = ["i'll ", "i will ", "we'll "]
                .iter()
                .any(|start| lower.starts_with(start))
                && all.get(index + 1).is_some_and(|next| {
                    let next = next.to_lowercase();
                    REASON_MARKS.iter().any(|mark| next.contains(mark))
                });
            if (20..=320).contains(&length)
                && !sentence.ends_with(['?', '？', ':'])
                && !sentence.starts_with(['`', '|', '#', '-', '{', '/'])
                && !SPECULATION.iter().any(|mark| lower.starts_with(mark))
                && (reasoned
                    || DECISION_MARKS.iter().any(|mark| lower.contains(mark))
                    || (COMPARISON_MARKS.iter().any(|mark| lower.contains(mark))
                        && ACTING_MARKS.iter().any(|mark| has_words(&lower, mark))))
            {
                let item = clip(&sentence.replace("**", ""), 260);
                found.retain(|existing| dedup_key(existing) != dedup_key(&item));
                found.push(item);
            }
        }
    }
    found
}

/// `text` as inline code, with double backticks when it holds one itself.
fn code(text: &str) -> String {
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

/// A request without a trailing parenthetical note (`… (iteration 3)`).
pub(crate) fn without_trailing_note(text: &str) -> &str {
    let trimmed = text.trim_end();
    match (trimmed.ends_with(')'), trimmed.rfind(" (")) {
        (true, Some(start)) => &trimmed[..start],
        _ => trimmed,
    }
}

/// A command that runs a script given inline (`node -e "…"`, `npx tsx -e "…"`, `python3 -c "…"`).
fn is_inline_script(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let interpreter = match words.as_slice() {
        ["npx", runner, ..] => *runner,
        [first, ..] => first,
        [] => "",
    };
    matches!(
        interpreter,
        "node" | "tsx" | "deno" | "bun" | "python" | "python3" | "ruby" | "perl" | "php"
    ) && words
        .iter()
        .take(4)
        .any(|word| matches!(*word, "-e" | "-c" | "--eval"))
}

/// A command that only prints its usage or version (`npx tsx src/cli.ts --help`, `node --version`).
fn is_help_probe(command: &str) -> bool {
    !command.contains(['|', '&', ';'])
        && command
            .split_whitespace()
            .last()
            .is_some_and(|word| matches!(word, "--help" | "-h" | "--version" | "-V"))
}

/// Progress items from tool work: commits, files changed, commands that passed.
pub(crate) fn progress_items(work: &Work, earlier: &[FileChange], language: Language) -> Vec<Item> {
    let mut items = Vec::new();
    for (hash, branch, message) in &work.commits {
        items.push(Item {
            text: format!(
                "{} `{hash}` {} `{branch}`: {message}",
                say(language, "Committed", "已提交"),
                say(language, "on", "于分支")
            ),
            priority: 75,
        });
    }
    let describe = |file: &FileChange| {
        let mut text = format!("`{}`", file.path);
        if file.edits > 1 {
            text.push_str(&format!(" ({}×)", file.edits));
        }
        if file.failed_edits > 0 {
            text.push_str(&match language {
                Language::English => format!(" ({} edit(s) did not apply)", file.failed_edits),
                Language::Chinese => format!("（{} 处修改未生效）", file.failed_edits),
            });
        }
        text
    };
    // The earlier summary's files first, the span's added to them.
    let mut files: Vec<FileChange> = earlier.to_vec();
    for file in &work.files {
        match files.iter_mut().find(|known| known.path == file.path) {
            Some(known) => {
                known.edits += file.edits + usize::from(file.created && !known.created);
                known.failed_edits += file.failed_edits;
            }
            None => files.push(file.clone()),
        }
    }
    let created: Vec<String> = files
        .iter()
        .filter(|file| file.created)
        .map(describe)
        .collect();
    let edited: Vec<String> = files
        .iter()
        .filter(|file| !file.created && (file.edits > 0 || file.failed_edits > 0))
        .map(describe)
        .collect();
    for (verb, list) in [
        (say(language, "Wrote", "写入"), created),
        (say(language, "Edited", "修改"), edited),
    ] {
        for chunk in list.chunks(6) {
            items.push(Item {
                text: format!("{verb} {}", chunk.join(", ")),
                priority: 65,
            });
        }
    }
    let mut operations: Vec<(String, usize)> = Vec::new();
    // Where the first step that simply passed stood, and every such step.
    let mut passed: Option<(usize, Vec<String>)> = None;
    for run in &work.commands {
        if is_file_operation(&run.command) {
            let verb = match run.command.strip_prefix("git ") {
                Some(rest) => format!("git {}", rest.split_whitespace().next().unwrap_or_default()),
                None => run
                    .command
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            };
            match operations
                .iter_mut()
                .find(|(existing, _)| *existing == verb)
            {
                Some((_, count)) => *count += run.runs,
                None => operations.push((verb, run.runs)),
            }
            continue;
        }
        if run.command.contains("git commit") && !work.commits.is_empty() {
            continue;
        }
        // An inline script, a `--help` or an inspection (`twiggy top`, `curl -sI`, a `select`)
        // that ran cleanly was a probe, not work: what it showed counts when the assistant
        // reports it.
        let unreported = is_side_command(&run.command)
            && !run.measured.as_deref().is_some_and(|measured| {
                crate::offline::inspect::reported(measured, run.position, &work.reports)
            });
        if (is_inline_script(&run.command) || is_help_probe(&run.command) || unreported)
            && run.last == Outcome::Passed
            && run.failures == 0
        {
            continue;
        }
        // A command that is not a build, test, check or shipping step is progress only for what
        // its output told: a measurement or the files it created.
        if !is_step(&run.command) && run.last == Outcome::Passed && run.failures == 0 {
            let told = match (&run.measured, run.created.is_empty()) {
                (Some(measured), _) => clip(measured, 160),
                (None, false) => format!(
                    "{} {}",
                    say(language, "created", "创建了"),
                    run.created
                        .iter()
                        .map(|file| format!("`{file}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                (None, true) => continue,
            };
            items.push(Item {
                text: format!("`{}`: {told}", run.command),
                priority: 64,
            });
            continue;
        }
        // Steps that simply passed, with nothing measured, are told together on one line; a
        // listing or a clean-up that passed tells a successor nothing.
        if run.last == Outcome::Passed && run.failures == 0 && run.measured.is_none() {
            if is_side_command(&run.command) {
                continue;
            }
            let mut text = code(&run.command);
            if run.runs > 1 {
                text.push_str(&format!(" ({}×)", run.runs));
            }
            passed.get_or_insert((items.len(), Vec::new())).1.push(text);
            continue;
        }
        let text = match (&run.last, run.failures, &run.first_error) {
            (Outcome::Passed, 0, _) if run.runs > 1 => format!(
                "`{}`: {} ({}×)",
                run.command,
                say(language, "passed", "通过"),
                run.runs
            ),
            (Outcome::Passed, 0, _) => {
                format!("`{}`: {}", run.command, say(language, "passed", "通过"))
            }
            (Outcome::Passed, failures, first) => match language {
                Language::English => format!(
                    "`{}`: passed after {failures} failed run(s) (first error: {})",
                    run.command,
                    first.as_deref().unwrap_or("?")
                ),
                Language::Chinese => format!(
                    "`{}`：失败 {failures} 次后通过（首个错误：{}）",
                    run.command,
                    first.as_deref().unwrap_or("?")
                ),
            },
            (Outcome::Failed(_) | Outcome::Pending | Outcome::Cancelled, _, _) => continue,
        };
        // A step that measured (`time npx vite build && du -sh dist`) keeps what it measured.
        // A side command that failed first (`mix credo`) keeps its plain line.
        let text = match &run.measured {
            Some(measured) if is_step(&run.command) => format!("{text} — {}", clip(measured, 160)),
            Some(_) | None => text,
        };
        items.push(Item { text, priority: 70 });
    }
    if let Some((position, list)) = passed {
        let text = match list.as_slice() {
            [one] => format!("{one}: {}", say(language, "passed", "通过")),
            [..] => format!("{} {}", say(language, "Passed:", "通过："), list.join(", ")),
        };
        items.insert(position, Item { text, priority: 70 });
    }
    if !operations.is_empty() {
        let list: Vec<String> = operations
            .iter()
            .map(|(verb, count)| format!("`{verb}` ×{count}"))
            .collect();
        items.push(Item {
            text: format!(
                "{} {}",
                say(language, "File operations:", "文件操作："),
                list.join(", ")
            ),
            priority: 45,
        });
    }
    items
}

/// The priority of Critical Context's `Files:` lines (`Symbols:` lines rank below).
pub(crate) const FILES_PRIORITY: u32 = 62;

/// Whether `name` is already in one of the `said` lines that outlive a line of `priority` (equal or
/// higher priority), so listing it again would tell the reader nothing.
fn already_said(name: &str, said: &[Item], priority: u32) -> bool {
    said.iter()
        .any(|item| item.priority >= priority && item.text.contains(name))
}

/// Critical Context lines from the facts: exact strings first, then ranked identifiers, leaving
/// out identifiers that `said` (the summary's other lines) already names.
pub(crate) fn fact_items(
    facts: &Facts,
    work: &Work,
    language: Language,
    said: &[Item],
) -> Vec<Item> {
    let mut items = Vec::new();
    let quoted = |list: &[String], limit: usize| {
        let start = list.len().saturating_sub(limit);
        list[start..]
            .iter()
            .map(|item| format!("`{item}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut line = |label: &str, list: &[String], limit: usize, priority: u32| {
        if !list.is_empty() {
            items.push(Item {
                text: format!("{label}: {}", quoted(list, limit)),
                priority,
            });
        }
    };
    // A branch a commit line of Progress names is not repeated.
    let branches: Vec<String> = facts
        .branches
        .iter()
        .filter(|branch| !work.commits.iter().any(|(_, known, _)| known == *branch))
        .cloned()
        .collect();
    line(&say(language, "Branch", "分支"), &branches, 4, 88);
    // The session's own commits (`git commit` output) have their Done lines. When there are
    // such, a hash another line already names (the last report's release commit) is not listed
    // again beside them, where it would read as the session's commit.
    let committed: Vec<String> = facts
        .commits
        .iter()
        .filter(|hash| !work.commits.iter().any(|(known, _, _)| known == *hash))
        .filter(|hash| {
            work.commits.is_empty() || !said.iter().any(|item| item.text.contains(hash.as_str()))
        })
        .cloned()
        .collect();
    line(&say(language, "Commits", "提交"), &committed, 6, 84);
    line(
        &say(language, "References", "引用"),
        &facts.references,
        10,
        84,
    );
    line(&say(language, "Versions", "版本"), &facts.versions, 8, 78);
    line(
        &say(language, "Build/test/run commands", "构建/测试/运行命令"),
        &facts.commands,
        6,
        82,
    );
    if let Some((position, source, error)) = work.last_error() {
        let failing = work.failing();
        let resolved = source.starts_with('`')
            && !failing
                .iter()
                .any(|run| run.position == *position && source.contains(&run.command));
        let note = if resolved {
            say(language, " (later runs passed)", "（之后的运行已通过）")
        } else {
            String::new()
        };
        items.push(Item {
            text: format!(
                "{} ({source}): {}{note}",
                say(language, "Last error", "最近的错误"),
                code(error)
            ),
            priority: 90,
        });
    }
    // Other distinct error lines, most recent last: what went wrong on the way is context too. A
    // failure that a later, longer command fixed has no line of its own, so its error is one of them.
    let failing: Vec<usize> = work.failing().iter().map(|run| run.position).collect();
    let shown: Vec<&str> = work
        .commands
        .iter()
        .filter_map(|run| match &run.last {
            // A fixed failure's banner (`Build failed in 3.12s`) tells nothing on its own.
            Outcome::Failed(line) if failing.contains(&run.position) || is_generic_banner(line) => {
                Some(line.as_str())
            }
            Outcome::Failed(_) => None,
            Outcome::Passed | Outcome::Pending | Outcome::Cancelled => run.first_error.as_deref(),
        })
        .chain(work.last_error().map(|(_, _, line)| line.as_str()))
        .collect();
    let mut earlier: Vec<String> = Vec::new();
    for (_, source, line) in work.errors.iter().rev() {
        if !shown.contains(&line.as_str())
            && !earlier.iter().any(|seen| seen.contains(line.as_str()))
        {
            earlier.insert(0, format!("{source}: {}", code(&clip(line, 140))));
        }
        if earlier.len() == 8 {
            break;
        }
    }
    for item in earlier {
        items.push(Item {
            text: format!("{} {item}", say(language, "Earlier error", "更早的错误")),
            priority: 48,
        });
    }
    for (label, list, priority) in [
        (say(language, "Files", "文件"), &facts.paths, FILES_PRIORITY),
        (say(language, "Symbols", "符号"), &facts.symbols, 58),
    ] {
        // The error lines just listed name their identifiers already.
        let in_errors = |name: &str| items.iter().any(|item| item.text.contains(name));
        let unsaid: Vec<String> = list
            .iter()
            .filter(|name| !already_said(name, said, priority) && !in_errors(name))
            .cloned()
            .collect();
        for chunk in unsaid.chunks(10) {
            items.push(Item {
                text: format!("{label}: {}", quoted(chunk, 10)),
                priority,
            });
        }
    }
    items
}

/// Rules from context files the agent read (`AGENTS.md`, `CLAUDE.md`, …).
pub(crate) fn context_file_rules(parts: &[Part], constraints: &mut Section) {
    let mut reading_rules = false;
    for part in parts {
        match part {
            Part::ToolCalls(calls) => {
                reading_rules = calls.len() == 1
                    && calls.iter().any(|call| {
                        call.starts_with("read(")
                            && ["AGENTS.md", "CLAUDE.md", "CONTRIBUTING.md", ".cursorrules"]
                                .iter()
                                .any(|name| call.contains(name))
                    });
            }
            Part::ToolResult(text) if reading_rules => {
                for rule in constraints_in(text).into_iter().take(6) {
                    constraints.push(rule, 75);
                }
                reading_rules = false;
            }
            Part::ToolResult(_) | Part::User(_) | Part::Assistant(_) | Part::Thinking(_) => {}
        }
    }
}

/// The assistant's last reply when it reports something concrete (a name, a number, a path) rather
/// than a question or a pleasantry, clipped to `limit` characters.
pub(crate) fn last_report(parts: &[Part], limit: usize) -> Option<String> {
    let text = parts.iter().rev().find_map(|part| match part {
        Part::Assistant(text) => Some(text),
        Part::User(_) | Part::Thinking(_) | Part::ToolCalls(_) | Part::ToolResult(_) => None,
    })?;
    let concrete = text.contains('`')
        || text.chars().any(|character| character.is_ascii_digit())
        || !identifiers(text).is_empty();
    (concrete && !text.trim_end().ends_with(['?', '？'])).then(|| clip(text, limit))
}
