//! What the span provably holds, gathered once from its steps: requests, replies, commands with
//! their outcomes, files changed, commits, the earlier summaries' items, and the
//! identifiers ranked by who named them.

use std::collections::{HashMap, HashSet};

use ctxkit_summarizer::SummarySpan;

use crate::error_line::{best_error_line, failed_output_line};
use crate::previous::{EarlierItem, earlier_items};
use crate::prompt::prompt;
use crate::sections::request_prose;
use crate::span::{Call, CallKind, Step, steps};
use crate::text::{clip, identifiers, one_line};

/// One distinct command and how its runs went.
#[derive(Debug, Clone)]
pub struct CommandRecord {
    pub command: String,
    /// The step of the last run.
    pub last_step: usize,
    pub runs: usize,
    pub failures: usize,
    pub first_error: Option<String>,
    pub last_failed: bool,
    pub last_error: Option<String>,
}

/// The span, gathered.
#[derive(Debug, Default)]
pub struct Digest {
    pub steps: Vec<Step>,
    pub requests: Vec<String>,
    pub replies: Vec<String>,
    pub commands: Vec<CommandRecord>,
    /// Changed files with how many changes each: only changes whose result said they went through.
    pub changed: Vec<(String, usize)>,
    /// Files every change of which failed (an edit whose text was not found, a write refused), with
    /// the first failure's reason: not changed, whatever the calls asked for.
    pub failed_changes: Vec<(String, String)>,
    /// Calls still waiting for their result.
    pub pending: Vec<(usize, String)>,
    /// `hash` on `branch`: message, as `git commit` printed them.
    pub commits: Vec<String>,
    pub earlier: Vec<EarlierItem>,
    /// Identifiers, best first.
    pub ranked: Vec<String>,
    /// How many of `ranked` (its first) someone named outright, at a score of at least
    /// [`NAMED_SCORE`]: what the summary's size grows with (`SummarySize::named_target`).
    pub named: usize,
    /// Identifiers only tool output printed, most often and latest first: what fills the room the
    /// people's and calls' names and the recent steps leave.
    pub printed: Vec<String>,
    /// Every name the span's own steps hold (`carried::mentioned_names`).
    pub mentioned: std::collections::HashSet<String>,
    /// What the user asked the summary to focus on.
    pub focus: Option<String>,
    /// The span's messages read (its beginning and its latest), and those left out between them
    /// (`SummarySpan::omitted_messages`).
    pub read_messages: usize,
    pub omitted_messages: usize,
}

impl Digest {
    pub fn new(source: &SummarySpan) -> Self {
        let steps = steps(&source.messages);
        let mut digest = Self::default();
        if let Some(previous) = &source.previous_summary {
            digest.earlier.extend(earlier_items(previous));
        }
        let mut last_words = None;
        for (index, step) in steps.iter().enumerate() {
            match step {
                Step::Request(text) => {
                    digest.requests.push(text.clone());
                    last_words = Some(index);
                }
                Step::Reply(text) => {
                    digest.replies.push(text.clone());
                    last_words = Some(index);
                }
                Step::Summary(text) => digest.earlier.extend(earlier_items(text)),
                Step::Call(call) => digest.add_call(index, call),
            }
        }
        // A call without a result before later words was abandoned, not pending.
        digest
            .pending
            .retain(|(index, _)| last_words.is_none_or(|words| *index > words));
        // A file one of the span's changes went through is changed; the failures are only said for
        // files no change went through.
        let changed = std::mem::take(&mut digest.changed);
        digest
            .failed_changes
            .retain(|(path, _)| !changed.iter().any(|(known, _)| known == path));
        digest.changed = changed;
        // The modified files the compaction lists (from the calls, whatever their result, as Pi
        // lists them) except those the span shows every change of failing.
        for path in &source.modified_files {
            let known = digest.changed.iter().any(|(known, _)| known == path)
                || digest.failed_changes.iter().any(|(known, _)| known == path);
            if !known {
                digest.changed.push((path.clone(), 1));
            }
        }
        (digest.ranked, digest.named) = rank_identifiers(&steps, &digest.earlier);
        digest.printed = printed_identifiers(&steps, &digest.ranked);
        digest.mentioned = crate::carried::mentioned_names(&steps);
        digest.steps = steps;
        digest.focus.clone_from(&source.focus);
        digest.read_messages = source.messages.len();
        digest.omitted_messages = source.omitted_messages;
        digest
    }

    fn add_call(&mut self, index: usize, call: &Call) {
        let Some(output) = &call.output else {
            self.pending.push((index, call.target.clone()));
            return;
        };
        // A search that found nothing exits non-zero without anything going wrong.
        let looking = call.kind == CallKind::Command && only_looks(&call.target);
        let error = (call.failed && !looking)
            .then(|| failed_output_line(output))
            .flatten();
        match call.kind {
            CallKind::Change if call.failed => {
                if !self
                    .failed_changes
                    .iter()
                    .any(|(path, _)| *path == call.target)
                {
                    self.failed_changes
                        .push((call.target.clone(), failure_reason(output)));
                }
            }
            CallKind::Change => match self
                .changed
                .iter_mut()
                .find(|(path, _)| *path == call.target)
            {
                Some((_, count)) => *count += 1,
                None => self.changed.push((call.target.clone(), 1)),
            },
            CallKind::Command if !looking => {
                self.commits.extend(output.lines().filter_map(commit_line));
                self.add_command(index, call, error);
            }
            // Files read are listed after the summary (`<read-files>`, by the compaction).
            CallKind::Command | CallKind::Read | CallKind::Other => {}
        }
    }

    fn add_command(&mut self, step: usize, call: &Call, error: Option<String>) {
        let command = clip(&core_command(&call.target), 160);
        let index = match self
            .commands
            .iter()
            .position(|known| known.command == command)
        {
            Some(index) => index,
            None => {
                self.commands.push(CommandRecord {
                    command,
                    last_step: step,
                    runs: 0,
                    failures: 0,
                    first_error: None,
                    last_failed: false,
                    last_error: None,
                });
                self.commands.len() - 1
            }
        };
        let record = &mut self.commands[index];
        record.runs += 1;
        record.last_step = step;
        record.last_failed = call.failed;
        if call.failed {
            record.failures += 1;
            if record.first_error.is_none() {
                record.first_error.clone_from(&error);
            }
            record.last_error = error;
        }
    }

    /// Whether the span ends with the assistant's words (not a request or a tool call).
    pub fn ends_with_reply(&self) -> bool {
        matches!(self.steps.last(), Some(Step::Reply(_)))
    }
}

/// Characters of a failed change's reason kept.
const FAILURE_REASON_CHARS: usize = 160;

/// Why a change failed, as its tool said: the line that says most about the failure, else the
/// output's first line, to its first sentence.
pub fn failure_reason(output: &str) -> String {
    let line = failed_output_line(output).unwrap_or_else(|| {
        output
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .map(one_line)
            .unwrap_or_default()
    });
    let first = match line.find(". ") {
        Some(end) => &line[..=end],
        None => line.as_str(),
    };
    clip(first.trim(), FAILURE_REASON_CHARS)
}

/// Programs whose runs only look (listings, reads, searches, status): not progress.
const LOOKING: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "grep",
    "rg",
    "find",
    "sed -n",
    "awk",
    "pwd",
    "echo",
    "wc",
    "which",
    "tree",
    "file",
    "stat",
    "less",
    "Get-ChildItem",
    "Get-Content",
    "Select-String",
    "type",
    "dir",
];

/// Whether a command only looks at things.
pub fn only_looks(command: &str) -> bool {
    let core = core_command(command);
    let mut words = core.split_whitespace();
    let program = words.next().unwrap_or("");
    let sub = words.find(|word| !word.starts_with('-')).unwrap_or("");
    LOOKING
        .iter()
        .any(|looking| core == *looking || core.starts_with(&format!("{looking} ")))
        || (program == "git" && ["status", "log", "diff", "show", "branch", "blame"].contains(&sub))
}

/// A command as a step of work: its first line, without a leading `cd DIR &&`, output filters
/// (`| tail -20`) and redirections of stderr (`2>&1`).
pub fn core_command(command: &str) -> String {
    let first = command
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("");
    let mut core = first.trim();
    while let Some((head, rest)) = core.split_once("&&") {
        if head.trim_start().starts_with("cd ") {
            core = rest.trim();
        } else {
            break;
        }
    }
    let core = core.split(" | ").next().unwrap_or(core);
    one_line(&core.replace("2>&1", ""))
}

/// `[branch abc1234] message` as `git commit` prints it.
fn commit_line(line: &str) -> Option<String> {
    let inside = line.trim().strip_prefix('[')?;
    let (head, message) = inside.split_once("] ")?;
    let mut words = head.split_whitespace();
    let branch = words.next()?;
    let hash = words.last()?;
    let is_hash = (7..=12).contains(&hash.len()) && hash.chars().all(|c| c.is_ascii_hexdigit());
    is_hash.then(|| format!("Committed `{hash}` on `{branch}`: {}", clip(message, 160)))
}

/// Outputs that must print a name before it fills a summary: a name printed once (one listing, one
/// log) is rarely what the work turned on.
const PRINTED_MIN_OUTPUTS: usize = 1;

/// Names that tool output printed and nobody else named, by how many outputs printed them, the
/// later first among equals.
fn printed_identifiers(steps: &[Step], ranked: &[String]) -> Vec<String> {
    let mut counts: HashMap<String, (usize, usize)> = HashMap::new();
    for (position, step) in steps.iter().enumerate() {
        let Step::Call(call) = step else {
            continue;
        };
        let Some(output) = call.output.as_deref() else {
            continue;
        };
        let mut seen: Vec<String> = identifiers(output)
            .into_iter()
            .filter(|name| !is_quantity(name))
            .collect();
        seen.sort();
        seen.dedup();
        for name in seen {
            let entry = counts.entry(name).or_insert((0, 0));
            *entry = (entry.0 + 1, position);
        }
    }
    let ranked: HashSet<&str> = ranked.iter().map(String::as_str).collect();
    let mut printed: Vec<(String, (usize, usize))> = counts
        .into_iter()
        .filter(|(name, (outputs, _))| {
            *outputs >= PRINTED_MIN_OUTPUTS && !ranked.contains(name.as_str())
        })
        .collect();
    printed.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    printed.into_iter().map(|(name, _)| name).collect()
}

/// Units a tool's output prints after a number: times, sizes, shares.
const UNITS: &[&str] = &[
    "ns", "us", "µs", "ms", "s", "m", "h", "B", "kB", "KB", "MB", "GB", "KiB", "MiB", "GiB", "Ki",
    "Mi", "Gi", "%",
];

/// A number with a unit (`0.014s`, `12.4ms`, `512MiB`): a run's timing or a size, which a tool
/// prints on every run and which names nothing the work turned on.
fn is_quantity(name: &str) -> bool {
    let digits = name
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(name.len());
    let (number, unit) = name.split_at(digits);
    number.starts_with(|c: char| c.is_ascii_digit()) && UNITS.contains(&unit)
}

/// The weight of a name an edit wrote (an edit's new text, a file written, a patch's added lines):
/// what the work touched, a quarter of a call's argument for each edit, so a class or function
/// edited again and again rises while a file written once with many names does not crowd out
/// what people named (docs/summaries.md, "Seventh round: hand-off summaries and size").
const WRITTEN_WEIGHT: f64 = 0.25;

/// Names in one message above which it counts as pasted.
const PASTE_NAMES: f64 = 25.0;

/// The score from which a ranked name counts as named outright: once by a call's argument, or by
/// anyone weighing more; below it, names only an edit wrote or a long paste held.
const NAMED_SCORE: f64 = 1.0;

/// Identifiers weighted by who named them: the user 3, the assistant and the errors 2, the
/// earlier summaries 1.5, the arguments of calls 1, what edits wrote a quarter (tool output not at
/// all: on the corpus, its names only crowded out the ones people named). Every name so weighted
/// is ranked, however low: a name an edit wrote once or a long paste named still comes before the
/// names only tool output printed (a floor of [`NAMED_SCORE`] left them out; docs/summaries.md,
/// ninth round). Also returns how many reach that floor.
fn rank_identifiers(steps: &[Step], earlier: &[EarlierItem]) -> (Vec<String>, usize) {
    // A message naming many things is mostly pasted (a log, a JSON record): its names weigh less.
    let spread = |names: Vec<String>, weight: f64| {
        let scale = (PASTE_NAMES / names.len().max(1) as f64).min(1.0);
        names.into_iter().map(move |name| (weight * scale, name))
    };
    let mut named: Vec<(f64, String)> = earlier
        .iter()
        .flat_map(|item| identifiers(&item.text))
        .map(|name| (1.5, name))
        .collect();
    let mut templates: HashSet<String> = HashSet::new();
    for step in steps {
        match step {
            Step::Request(text) => match prompt(text) {
                // An expanded prompt: its input is the user's; its template's names are the
                // prompt's, counted once however often it is used.
                Some(prompt) => {
                    for input in &prompt.inputs {
                        named.extend(spread(input_names(input), 3.0));
                    }
                    if !templates.contains(&prompt.template) {
                        named.extend(spread(identifiers(&prompt.template), 1.0));
                        templates.insert(prompt.template);
                    }
                }
                // What the user pasted (fenced blocks, long lines) is output, not the user's words.
                None => {
                    named.extend(spread(identifiers(&request_prose(text)), 3.0));
                }
            },
            Step::Reply(text) => named.extend(spread(identifiers(text), 2.0)),
            Step::Summary(_) => {}
            Step::Call(call) => {
                named.extend(
                    identifiers(&call.target)
                        .into_iter()
                        .filter(|name| !is_command_word(name))
                        .map(|name| (1.0, name)),
                );
                // What the work wrote: the classes, functions and names an edit put in a file.
                // Code's backticks (template literals) quote text, not names.
                if let Some(written) = call.written.as_deref() {
                    let words = written.replace('`', " ");
                    named.extend(spread(identifiers(&words), WRITTEN_WEIGHT));
                }
                if let Some(error) = call
                    .output
                    .as_deref()
                    .filter(|_| call.failed)
                    // Weighed by the line a failure word marks (a paste's reading): a run's
                    // diagnostic line is quoted, but its names do not crowd the ranking.
                    .and_then(best_error_line)
                {
                    named.extend(identifiers(&error).into_iter().map(|name| (2.0, name)));
                }
            }
        }
    }
    // Each name's weights summed, and its last mention's position: a later name weighs up to twice.
    let mut scores: HashMap<String, (f64, usize)> = HashMap::new();
    for (position, (weight, name)) in named.iter().enumerate() {
        let entry = scores.entry(name.clone()).or_insert((0.0, 0));
        *entry = (entry.0 + weight, position + 1);
    }
    let total = named.len().max(1) as f64;
    let mut ranked: Vec<(String, f64)> = scores
        .into_iter()
        .map(|(name, (score, last))| (name, score * (1.0 + last as f64 / total)))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let named = ranked
        .iter()
        .take_while(|(_, score)| *score >= NAMED_SCORE)
        .count();
    (ranked.into_iter().map(|(name, _)| name).collect(), named)
}

/// The names of a prompt's input: a short one is a name as a whole (`T035`), a longer one holds
/// names.
fn input_names(input: &str) -> Vec<String> {
    if input.chars().count() <= 40 {
        identifiers(&format!("`{input}`"))
    } else {
        identifiers(input)
    }
}

/// A word of a command line that names no thing of the work: an option (`-Encoding`, `--force`)
/// or a PowerShell cmdlet (`Get-Content`, `Set-Content`: the `cat` and `>` of Windows sessions,
/// which a command names in nearly every call and a continuing agent never needs).
fn is_command_word(name: &str) -> bool {
    if name.starts_with('-') {
        return true;
    }
    let Some((verb, noun)) = name.split_once('-') else {
        return false;
    };
    const VERBS: &[&str] = &[
        "Add",
        "Clear",
        "Compare",
        "ConvertFrom",
        "ConvertTo",
        "Copy",
        "Export",
        "ForEach",
        "Format",
        "Get",
        "Import",
        "Invoke",
        "Join",
        "Measure",
        "Move",
        "New",
        "Out",
        "Remove",
        "Rename",
        "Resolve",
        "Select",
        "Set",
        "Sort",
        "Split",
        "Start",
        "Stop",
        "Test",
        "Where",
        "Write",
    ];
    VERBS.contains(&verb)
        && noun
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_uppercase())
        && noun
            .chars()
            .all(|character| character.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_cmdlets_are_command_words_and_names_are_not() {
        for word in [
            "-Encoding",
            "--force",
            "Get-Content",
            "Set-Content",
            "Select-String",
        ] {
            assert!(is_command_word(word), "{word}");
        }
        for word in [
            "caddie_recommend.py",
            "Get-Started.md",
            "x-request-id",
            "Set-Cookie:x",
        ] {
            assert!(!is_command_word(word), "{word}");
        }
    }

    #[test]
    fn a_commit_line_is_read_and_a_log_line_is_not() {
        assert_eq!(
            commit_line("[feat/x 8c3d2f1] Rate-limit exports").unwrap(),
            "Committed `8c3d2f1` on `feat/x`: Rate-limit exports"
        );
        assert_eq!(commit_line("4f1a9e2 (HEAD -> feat/x) wip"), None);
        assert_eq!(commit_line("[chromium] › a.spec.ts"), None);
    }

    #[test]
    fn a_timing_or_a_size_is_not_a_name_printed() {
        for quantity in ["0.014s", "12.4ms", "214.3s", "512MiB", "0Mi", "98%", "3h"] {
            assert!(is_quantity(quantity), "{quantity}");
        }
        for name in [
            "cache_test.go:58",
            "v0.1.40",
            "TestXY109",
            "s3",
            "1.2.3",
            "abc12s",
            "sha256",
        ] {
            assert!(!is_quantity(name), "{name}");
        }
    }
}
