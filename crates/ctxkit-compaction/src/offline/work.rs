//! What the tools did, grouped the way an engineer reports it: files created or edited (with counts),
//! commands run with their outcome (passed, or failed with the error line), commits made, and tool
//! calls still waiting for a result. Exploration (reads, greps, listings) is not progress.

use crate::extract::{Part, string_argument};
use crate::offline::commands::{
    created_files, failure_line, is_step, measurement, telling_line, unframed,
};
use crate::offline::errors::{is_edit_mismatch, is_error_line};
use crate::offline::measures::{measured_values, measures};
use crate::offline::text::clip;

/// How a command's last run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Passed,
    /// Failed, with the error line.
    Failed(String),
    /// No result was seen.
    Pending,
    /// Cancelled or timed out before it finished.
    Cancelled,
}

/// One distinct command (as written, after its `cd … &&` prefix).
#[derive(Debug, Clone)]
pub(crate) struct CommandRun {
    pub(crate) command: String,
    pub(crate) runs: usize,
    pub(crate) failures: usize,
    /// The first error line seen, kept when a later run passed.
    pub(crate) first_error: Option<String>,
    pub(crate) last: Outcome,
    /// Index of the part of its last run.
    pub(crate) position: usize,
    /// What the last passing run's output measured (`p95 84ms`), if anything.
    pub(crate) measured: Option<String>,
    /// Files the command's output says it created.
    pub(crate) created: Vec<String>,
}

/// Changes to one file.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileChange {
    pub(crate) path: String,
    pub(crate) created: bool,
    pub(crate) edits: usize,
    pub(crate) failed_edits: usize,
}

/// Everything the tool calls of a span did.
#[derive(Debug, Default)]
pub(crate) struct Work {
    pub(crate) files: Vec<FileChange>,
    pub(crate) commands: Vec<CommandRun>,
    /// `(hash, branch, message)` of commits seen in command output.
    pub(crate) commits: Vec<(String, String, String)>,
    /// Error lines in the order seen, with the part index and what produced them.
    pub(crate) errors: Vec<(usize, String, String)>,
    /// Calls still waiting for their result at the end of the span.
    pub(crate) pending: Vec<String>,
    /// Paths read (for ranking), with how often.
    pub(crate) reads: Vec<String>,
    /// The assistant's messages, with their part index.
    pub(crate) reports: Vec<(usize, String)>,
}

/// First words of commands that only look around.
const EXPLORE: &[&str] = &[
    "grep", "rg", "ag", "find", "fd", "ls", "cat", "head", "tail", "wc", "echo", "pwd", "tree",
    "which", "file", "stat", "awk", "sort", "uniq", "less", "diff", "sleep", "cd", "nl", "du",
    "type", "jq", "open", "code", "date", "whoami", "env", "printenv",
];
const GIT_LOOK: &[&str] = &["status", "diff", "log", "show", "branch", "remote", "blame"];

/// The command without `cd dir &&` prefixes, output plumbing (`2>&1 | tail -20`) or a trailing
/// `; echo done`: runs of one command through different filters count as one.
pub(crate) fn command_core(command: &str) -> String {
    let mut rest = command.trim();
    while let Some(stripped) = rest.strip_prefix("cd ") {
        match stripped.find("&&") {
            Some(end) => rest = stripped[end + 2..].trim_start(),
            None => break,
        }
    }
    // A pipe into an output filter (`| tail -20`, `| grep FAIL`) is the same command; a pipe into
    // another program (`helm template x | kubeconform`) is part of it.
    let rest = match rest.split_once(" | ") {
        Some((head, tail))
            if tail
                .split_whitespace()
                .next()
                .is_some_and(|program| OUTPUT_FILTERS.contains(&program)) =>
        {
            head
        }
        Some(_) | None => rest,
    };
    let rest = rest.split("; echo").next().unwrap_or(rest);
    rest.replace(" 2>&1", "")
        .replace(" 2>/dev/null", "")
        .trim()
        .to_owned()
}

/// Programs that only trim or search what a command prints.
const OUTPUT_FILTERS: &[&str] = &[
    "tail", "head", "grep", "rg", "less", "more", "cat", "tee", "sort", "uniq", "wc", "cut", "awk",
    "sed", "tr", "column", "jq",
];

/// First words of commands that move files around: counted, not listed.
const FILE_OPERATIONS: &[&str] = &[
    "mv", "cp", "rm", "mkdir", "rmdir", "touch", "chmod", "ln", "for", "sed", "git add",
];

/// Whether a command only moves, copies, removes or rewrites files in place.
pub(crate) fn is_file_operation(command: &str) -> bool {
    let first = command.split_whitespace().next().unwrap_or_default();
    (FILE_OPERATIONS.contains(&first) && !command.contains("&& git"))
        || (command.starts_with("git add") && !command.contains("&&"))
}

/// Whether a command only reads (greps, listings, `git status`, `sed -n`).
pub(crate) fn is_exploration(command: &str) -> bool {
    let core = command_core(command);
    let mut words = core
        .split_whitespace()
        .skip_while(|word| word.contains('=') && !word.starts_with('-'));
    let first = words.next().unwrap_or_default();
    let second = words.next().unwrap_or_default();
    EXPLORE.contains(&first)
        || (first == "sed" && core.contains(" -n"))
        || (first == "git" && GIT_LOOK.contains(&second) && !core.contains("&&"))
}

/// Options that make a program only list what exists (`xcodebuild -list`, `node --version`); a
/// `--help` of the project's own program shows how it is run, so it is not one of them.
const LISTING_OPTIONS: &[&str] = &["list", "version", "showsdks", "showbuildsettings"];

/// Whether a command only looks around or tidies up: every part of it (`rm x && git status`) is a
/// file operation, a look (`ls`, `git status`, `sed -n`), a listing subcommand (`kubectl describe`)
/// or a listing option (`xcodebuild -list`). Such a command builds, tests, runs or ships nothing.
pub(crate) fn is_side_command(command: &str) -> bool {
    let core = command_core(command);
    let segments: Vec<&str> = core
        .split("&&")
        .flat_map(|part| part.split(';'))
        .flat_map(|part| part.split("||"))
        .map(str::trim)
        .filter(|segment| !segment.is_empty())
        .collect();
    let side = |segment: &&str| {
        let listing_option = segment.split_whitespace().any(|word| {
            word.starts_with('-')
                && LISTING_OPTIONS.contains(&word.trim_start_matches('-').to_lowercase().as_str())
        });
        is_file_operation(segment)
            || is_exploration(segment)
            || crate::offline::inspect::is_inspection(segment)
            || listing_option
            || crate::offline::commands::is_query(segment)
    };
    // A quiet install that only prepares a look (`pip install -q … && python --version`) is part
    // of the look.
    let looks_at_end = segments.last().is_some_and(side);
    !segments.is_empty()
        && segments.iter().all(|segment| {
            side(segment) || (looks_at_end && crate::offline::inspect::is_quiet_install(segment))
        })
}

/// The non-zero exit code a Pi bash result ends with.
fn exit_code(result: &str) -> Option<i64> {
    let line = result
        .lines()
        .rev()
        .find(|line| line.trim().starts_with("Command exited with code"))?;
    line.trim()
        .trim_start_matches("Command exited with code")
        .trim()
        .parse()
        .ok()
        .filter(|code| *code != 0)
}

/// The outcome of a command from its output.
fn command_outcome(result: &str) -> Outcome {
    let tail = result.trim_end();
    let start = tail
        .char_indices()
        .rev()
        .nth(79)
        .map_or(0, |(index, _)| index);
    let lower_tail = tail[start..].to_lowercase();
    if ["command cancelled", "command aborted", "timed out"]
        .iter()
        .any(|mark| lower_tail.contains(mark))
    {
        return Outcome::Cancelled;
    }
    match (exit_code(result), failure_line(result)) {
        (Some(_), Some(line)) | (None, Some(line)) => Outcome::Failed(line),
        (Some(code), None) => Outcome::Failed(
            telling_line(result).map_or_else(|| format!("exit code {code}"), unframed),
        ),
        (None, None) => Outcome::Passed,
    }
}

/// `[branch hash] message` lines of `git commit` output.
fn commits_in(result: &str) -> Vec<(String, String, String)> {
    result
        .lines()
        .filter_map(|line| {
            let inner = line.trim().strip_prefix('[')?;
            let (head, message) = inner.split_once(']')?;
            let words: Vec<&str> = head.split_whitespace().collect();
            let hash = words.last()?;
            let is_hash = hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit());
            (is_hash && words.len() >= 2).then(|| {
                (
                    (*hash).to_owned(),
                    words[0].to_owned(),
                    clip(message.trim(), 120),
                )
            })
        })
        .collect()
}

/// The commands that finish what a stopped git command left (`git rebase --continue` for `git
/// pull --rebase`); none for other commands.
fn resumed_by(command: &str) -> Vec<String> {
    let last = command.split("&&").last().unwrap_or(command);
    let words: Vec<&str> = last.split_whitespace().collect();
    let verb = match words.as_slice() {
        ["git", "pull", rest @ ..] if rest.iter().any(|word| word.starts_with("--rebase")) => {
            "rebase"
        }
        ["git", "pull", ..] => "merge",
        ["git", verb, ..] => verb,
        _ => return Vec::new(),
    };
    ["--continue", "--skip"]
        .iter()
        .map(|option| format!("{verb} {option}"))
        .collect()
}

/// One call waiting for its result.
struct Call {
    name: String,
    path: Option<String>,
    command: Option<String>,
    text: String,
}

impl Work {
    pub(crate) fn from_parts(parts: &[Part]) -> Self {
        let mut work = Self::default();
        let mut queue: std::collections::VecDeque<Call> = std::collections::VecDeque::new();
        for (position, part) in parts.iter().enumerate() {
            match part {
                Part::ToolCalls(calls) => {
                    queue.clear();
                    for call in calls {
                        let name = call.split('(').next().unwrap_or(call).to_owned();
                        queue.push_back(Call {
                            path: string_argument(call, "path")
                                .or_else(|| string_argument(call, "file_path")),
                            command: string_argument(call, "command"),
                            text: clip(call, 160),
                            name,
                        });
                    }
                }
                Part::ToolResult(result) => {
                    if let Some(call) = queue.pop_front() {
                        work.record(position, &call, result);
                    }
                }
                Part::User(text) => {
                    if let Some(rest) = text.strip_prefix("Ran `")
                        && let Some((command, output)) = rest.split_once('`')
                    {
                        work.record_command(position, command, output);
                    }
                }
                Part::Assistant(text) => work.reports.push((position, text.clone())),
                Part::Thinking(_) => {}
            }
        }
        for call in &queue {
            if let Some(command) = &call.command
                && !is_exploration(command)
            {
                work.record_pending(parts.len(), command);
            }
        }
        work.pending = queue.into_iter().map(|call| call.text).collect();
        work
    }

    fn file(&mut self, path: &str) -> &mut FileChange {
        let index = match self.files.iter().position(|file| file.path == path) {
            Some(index) => index,
            None => {
                self.files.push(FileChange {
                    path: path.to_owned(),
                    ..FileChange::default()
                });
                self.files.len() - 1
            }
        };
        &mut self.files[index]
    }

    fn record(&mut self, position: usize, call: &Call, result: &str) {
        let failed = result.lines().take(3).find(|line| is_error_line(line));
        match (call.name.as_str(), &call.path, &call.command) {
            ("write", Some(path), _) => {
                let created = !self.files.iter().any(|file| file.path == *path);
                let file = self.file(path);
                file.created |= created;
                if !created {
                    file.edits += 1;
                }
            }
            ("edit" | "multi_edit" | "str_replace", Some(path), _) => {
                let path = path.clone();
                match failed {
                    // A mismatch of the text to replace is retried, not an error of the work.
                    Some(_) if is_edit_mismatch(result) => self.file(&path).failed_edits += 1,
                    Some(line) => {
                        self.file(&path).failed_edits += 1;
                        self.errors.push((
                            position,
                            format!("edit `{path}`"),
                            clip(line.trim(), 240),
                        ));
                    }
                    None => self.file(&path).edits += 1,
                }
            }
            ("read" | "view" | "cat", Some(path), _) => {
                if let Some(line) = failed {
                    self.errors
                        .push((position, format!("read `{path}`"), clip(line.trim(), 240)));
                }
                self.reads.push(path.clone());
            }
            (_, _, Some(command)) => self.record_command(position, command, result),
            _ => {}
        }
    }

    fn record_command(&mut self, position: usize, command: &str, output: &str) {
        self.commits.extend(commits_in(output));
        if is_exploration(command) {
            return;
        }
        let outcome = command_outcome(output);
        let core = clip(&command_core(command), 160);
        let (measured, created) = match outcome {
            // A command that measures (`time`, `du`, `wc -l`, a dev server's start) keeps what it
            // measured; any other keeps a benchmark's or a report's measurement.
            // A count piped from the output (`npm run check | wc -l`) measures the output, not the work.
            Outcome::Passed if measures(&core, output) => (
                measured_values(&core, output).or_else(|| measurement(output)),
                created_files(output),
            ),
            // A step's other numbers (a test run's `in 0.4s`) are not what it did.
            Outcome::Passed if is_step(&core) => (None, created_files(output)),
            Outcome::Passed => (measurement(output), created_files(output)),
            Outcome::Failed(_) | Outcome::Pending | Outcome::Cancelled => (None, Vec::new()),
        };
        if let Outcome::Failed(line) = &outcome {
            self.errors
                .push((position, format!("`{core}`"), line.clone()));
        }
        match self.commands.iter_mut().find(|run| run.command == core) {
            Some(run) => {
                run.runs += 1;
                run.position = position;
                if let Outcome::Failed(line) = &outcome {
                    run.failures += 1;
                    run.first_error.get_or_insert_with(|| line.clone());
                }
                run.last = outcome;
                if measured.is_some() {
                    run.measured = measured;
                }
                for file in created {
                    if !run.created.contains(&file) {
                        run.created.push(file);
                    }
                }
            }
            None => self.commands.push(CommandRun {
                command: core,
                runs: 1,
                failures: usize::from(matches!(outcome, Outcome::Failed(_))),
                first_error: match &outcome {
                    Outcome::Failed(line) => Some(line.clone()),
                    Outcome::Passed | Outcome::Pending | Outcome::Cancelled => None,
                },
                last: outcome,
                position,
                measured,
                created,
            }),
        }
    }

    fn record_pending(&mut self, position: usize, command: &str) {
        let core = clip(&command_core(command), 160);
        match self.commands.iter_mut().find(|run| run.command == core) {
            Some(run) => {
                run.runs += 1;
                run.position = position;
                run.last = Outcome::Pending;
            }
            None => self.commands.push(CommandRun {
                command: core,
                runs: 1,
                failures: 0,
                first_error: None,
                last: Outcome::Pending,
                position,
                measured: None,
                created: Vec::new(),
            }),
        }
    }

    /// Commands whose last run failed and that no later passing command containing them (or
    /// contained in them) fixed.
    pub(crate) fn failing(&self) -> Vec<&CommandRun> {
        self.commands
            .iter()
            .filter(|run| matches!(run.last, Outcome::Failed(_)))
            .filter(|run| {
                // `git rebase --continue` finishes a rebase (or `git pull --rebase`) that stopped
                // on a conflict; likewise a merge, a cherry-pick, a revert.
                let resumed = resumed_by(&run.command);
                !self.commands.iter().any(|other| {
                    other.last == Outcome::Passed
                        && other.position > run.position
                        && (other.command.contains(&run.command)
                            || run.command.contains(&other.command)
                            || resumed
                                .iter()
                                .any(|resuming| other.command.contains(resuming.as_str())))
                })
            })
            .collect()
    }

    /// The last error line seen and what produced it.
    pub(crate) fn last_error(&self) -> Option<&(usize, String, String)> {
        self.errors.last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Conversation;

    #[test]
    fn groups_tool_work_by_file_and_outcome() {
        let request = "<conversation>\n[Assistant tool calls]: write(path=\"src/a.rs\", content=\"x\"); edit(path=\"src/a.rs\", edits=[])\n\n\
            [Tool result]: Successfully wrote 1 bytes to src/a.rs\n\n[Tool result]: Successfully replaced text in src/a.rs.\n\n\
            [Assistant tool calls]: bash(command=\"cd /repo && cargo test -p core\")\n\n[Tool result]: error[E0308]: mismatched types\n --> src/a.rs:3:5\n\nCommand exited with code 101\n\n\
            [Assistant tool calls]: bash(command=\"grep -n foo src\")\n\n[Tool result]: Command exited with code 1\n\n\
            [Assistant tool calls]: bash(command=\"git commit -am fix\")\n\n[Tool result]: [main 1a2b3c4d] Fix the parser\n 1 file changed\n\n\
            [Assistant tool calls]: bash(command=\"cargo test -p core\")\n</conversation>";
        let conversation = Conversation::from_request(request);
        let work = Work::from_parts(&conversation.parts);
        assert_eq!(work.files.len(), 1);
        assert!(work.files[0].created);
        assert_eq!(work.files[0].edits, 1);
        let test = &work.commands[0];
        assert_eq!(test.command, "cargo test -p core");
        assert_eq!(test.failures, 1);
        assert_eq!(test.last, Outcome::Pending);
        assert_eq!(work.commands.len(), 2, "{:?}", work.commands);
        assert_eq!(
            work.commits,
            [("1a2b3c4d".into(), "main".into(), "Fix the parser".into())]
        );
        assert_eq!(work.pending, ["bash(command=\"cargo test -p core\")"]);
        assert_eq!(
            work.last_error().map(|error| error.2.as_str()),
            Some("error[E0308]: mismatched types")
        );
    }

    #[test]
    fn exploration_is_not_progress() {
        assert!(is_exploration("cd /x && grep -rn foo ."));
        assert!(is_exploration("git status --short"));
        assert!(is_exploration("sed -n 1,20p src/a.rs"));
        assert!(!is_exploration("cargo test"));
        assert!(!is_exploration("git commit -m x"));
        assert!(!is_exploration("sed -i s/a/b/ x"));
    }

    #[test]
    fn side_commands_build_nothing() {
        assert!(is_side_command("xcodebuild -list -project App.xcodeproj"));
        assert!(is_side_command("rm src/old.swift && git status --short"));
        assert!(is_side_command("kubectl -n staging describe pod api-1"));
        assert!(is_side_command("node --version; ls dist"));
        assert!(!is_side_command("xcodebuild test -scheme App"));
        assert!(!is_side_command("rm -rf build && cargo build"));
        assert!(!is_side_command("npm version patch"));
        assert!(!is_side_command("k6 run load/quote.js"));
    }
}
