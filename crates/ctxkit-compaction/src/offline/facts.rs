//! Critical Context for the offline summary: the exact strings a continuing engineer needs and
//! extractive summaries tend to lose — branch names, commit hashes, PR/issue references, version
//! numbers, the commands that build and test, the last error verbatim — and the few identifiers that
//! recur or were the subject of errors, ranked and bounded.

use std::collections::HashMap;

use foldhash::fast::RandomState;

use crate::extract::{Part, identifier_token};
use crate::offline::git::{Branches, lists_commits};
use crate::offline::text::{clean_request, is_han, strip_injected};
use crate::offline::work::{Work, is_file_operation, is_side_command};

/// At most this many identifiers (paths and symbols) in Critical Context.
pub(crate) const MAX_IDENTIFIERS: usize = 30;

/// The exact strings worth keeping, each list in order of first appearance.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    pub(crate) branches: Vec<String>,
    /// The base branch the session went back to at its end without working on it.
    pub(crate) returned_to: Option<String>,
    pub(crate) commits: Vec<String>,
    pub(crate) references: Vec<String>,
    pub(crate) versions: Vec<String>,
    pub(crate) commands: Vec<String>,
    /// Ranked paths not already listed under Progress.
    pub(crate) paths: Vec<String>,
    /// Ranked code identifiers.
    pub(crate) symbols: Vec<String>,
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !item.is_empty() && !list.iter().any(|existing| existing == item) {
        list.push(item.to_owned());
    }
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|character: char| {
        character.is_whitespace() || "\"'`,;()[]{}<>=".contains(character) || is_han(character)
    })
    .filter(|word| !word.is_empty())
}

/// `#123`, `PR 45`, `.../pull/7`, `.../issues/9`, `ABC-123`.
fn references_in(text: &str, out: &mut Vec<String>) {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    for (index, raw) in tokens.iter().enumerate() {
        let token = raw.trim_matches(|character: char| ",.;:()[]`'\"!?".contains(character));
        let digits = |text: &str| !text.is_empty() && text.chars().all(|c| c.is_ascii_digit());
        if let Some(number) = token.strip_prefix('#')
            && digits(number)
            && (2..=5).contains(&number.len())
        {
            push_unique(out, token);
        } else if let Some((_, number)) = token
            .rsplit_once("/pull/")
            .or_else(|| token.rsplit_once("/issues/"))
            && digits(number.trim_end_matches('/'))
        {
            push_unique(out, token);
        } else if matches!(token, "PR" | "pr" | "issue" | "Issue")
            && let Some(next) = tokens.get(index + 1)
        {
            let number = next.trim_matches(|character: char| !character.is_ascii_alphanumeric());
            if digits(number) && (number.len() >= 2 || next.starts_with('#')) {
                push_unique(out, &format!("{token} {number}"));
            }
        } else if is_ticket(token) {
            push_unique(out, token);
        }
    }
}

/// `ABC-123`, `CORE-E0042`: an upper-case key, a dash, an optional letter and digits.
fn is_ticket(token: &str) -> bool {
    let Some((key, number)) = token.split_once('-') else {
        return false;
    };
    let number = number
        .strip_prefix(|c: char| c.is_ascii_uppercase())
        .unwrap_or(number);
    (2..=10).contains(&key.len())
        && key.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && key
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && !number.is_empty()
        && number.len() <= 6
        && number.chars().all(|c| c.is_ascii_digit())
        && !matches!(key, "UTF" | "ISO" | "SHA" | "RFC" | "HTTP" | "TLS")
}

/// `1.2.3`, `v0.87.1`, `2.0.0-beta.1` (three numeric parts; not dates or addresses).
fn versions_in(text: &str, out: &mut Vec<String>) {
    for word in words(text) {
        let token = word.trim_end_matches(['.', ':', '!', '?']);
        let bare = token.trim_start_matches('v');
        let core = bare.split(['-', '+']).next().unwrap_or(bare);
        let parts: Vec<&str> = core.split('.').collect();
        if parts.len() == 3
            && parts.iter().all(|part| {
                !part.is_empty() && part.len() <= 4 && part.chars().all(|c| c.is_ascii_digit())
            })
            && !token.contains('/')
        {
            push_unique(out, token);
        }
    }
}

/// A commit hash: 7–40 lower-case hex characters with a digit and a letter.
fn is_hash(token: &str) -> bool {
    (7..=40).contains(&token.len())
        && token
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        && token.chars().any(|c| c.is_ascii_digit())
        && token.chars().any(|c| c.is_ascii_alphabetic())
}

/// Hashes in prose (`commit 1a2b3c4`, `` `1a2b3c4` ``) and at the start of `git log` lines.
fn hashes_in(text: &str, from_output: bool, out: &mut Vec<String>) {
    for line in text.lines() {
        let trimmed = line.trim().trim_start_matches("commit ");
        let candidates: Vec<&str> = if from_output {
            trimmed.split_whitespace().take(1).collect()
        } else {
            words(line).collect()
        };
        for candidate in candidates {
            let candidate = candidate.trim_end_matches(['.', ':', ',']);
            if is_hash(candidate) {
                push_unique(out, candidate);
            }
        }
    }
}

/// Commands that build, test, check or run the project (not file moves, git bookkeeping or
/// inline scripts).
fn is_project_command(command: &str) -> bool {
    let first = command.split_whitespace().next().unwrap_or_default();
    !is_file_operation(command)
        && !is_side_command(command)
        && !matches!(first, "git" | "kill" | "pkill")
        && !command.contains("git rebase --continue")
        && !command.contains(" -e ")
        && !command.contains(" -c ")
        && command.chars().count() <= 100
}

/// A provider's id of a tool call or message (`toolu_019tYDrbzifrra2KYzmYqWvk`, `call_Ab3…`):
/// machinery of the transcript, not something the work is about.
fn is_tool_call_id(token: &str) -> bool {
    ["toolu_", "tooluse_", "call_", "fc_", "msg_"]
        .iter()
        .find_map(|prefix| token.strip_prefix(prefix))
        .is_some_and(|rest| {
            rest.len() >= 16
                && rest.chars().all(|c| c.is_ascii_alphanumeric())
                && rest.chars().any(|c| c.is_ascii_digit())
                && rest.chars().any(|c| c.is_ascii_uppercase())
        })
}

/// First segments of paths that name a project's directories.
const KNOWN_DIRECTORIES: &[&str] = &[
    "src",
    "lib",
    "crates",
    "packages",
    "apps",
    "app",
    "internal",
    "cmd",
    "pkg",
    "test",
    "tests",
    "spec",
    "docs",
    "doc",
    "config",
    "scripts",
    "bin",
    "charts",
    "k8s",
    "deploy",
    "infra",
    "services",
    "modules",
    "components",
    "public",
    "static",
    "assets",
    "migrations",
    "db",
    "api",
    "tools",
    "examples",
    "benches",
    "fixtures",
    "node_modules",
    "dist",
    "build",
    "target",
    "vendor",
    "include",
    "terraform",
    "helm",
    "manifests",
    "templates",
    "e2e",
];

/// Names of git remotes and refs: `origin/main` is a branch, not a file.
const REMOTES: &[&str] = &["origin", "upstream", "refs", "remotes", "HEAD", "fork"];

/// Whether a token with a slash is shaped like a path: a file extension, a leading `./`, `/`, `~`
/// or `.`, a trailing `/`, a known first directory, or a path the tools were given. Words like
/// `and/or`, `date/time`, `client/server` and refs like `origin/main` are not.
pub(crate) fn path_shaped(token: &str, seen: &[String]) -> bool {
    let bare = token.trim_start_matches('!');
    if !bare.contains('/') {
        // A bare dot-name is a dotfile (`.env.local`, `.eslintrc`, `.gitignore`), not a method
        // (`.repeat`).
        return !bare.starts_with('.')
            || bare.ends_with("rc")
            || bare.ends_with("ignore")
            || bare.starts_with(".env")
            || bare.matches('.').count() >= 2
            || seen.iter().any(|path| path.ends_with(bare));
    }
    let segments: Vec<&str> = bare.split('/').filter(|part| !part.is_empty()).collect();
    let first = segments.first().copied().unwrap_or_default();
    if REMOTES.contains(&first) {
        return false;
    }
    let last = segments.last().copied().unwrap_or_default();
    let extension = last
        .rsplit_once('.')
        .is_some_and(|(stem, extension)| !stem.is_empty() && (1..=10).contains(&extension.len()));
    let tools_saw = seen.iter().any(|path| {
        path == bare || path.starts_with(&format!("{bare}/")) || path.ends_with(&format!("/{bare}"))
    });
    if is_url_route(bare, extension) && !tools_saw {
        return false;
    }
    extension
        || bare.starts_with(['.', '/', '~'])
        || bare.ends_with('/')
        || KNOWN_DIRECTORIES.contains(&first)
        || seen.iter().any(|path| {
            path == bare
                || path.starts_with(&format!("{bare}/"))
                || path.ends_with(&format!("/{bare}"))
        })
}

/// Whether a token is an HTTP route (`/api/cart`, `/v1/transfers`), not a file: a leading slash,
/// no extension, and a first segment that names an API (`api`, `graphql`) or its version (`v1`).
fn is_url_route(bare: &str, extension: bool) -> bool {
    let Some(route) = bare.strip_prefix('/') else {
        return false;
    };
    let first = route
        .split('/')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let version = first.len() >= 2
        && first.starts_with('v')
        && first[1..].chars().all(|c| c.is_ascii_digit());
    !extension && !bare.ends_with('/') && (matches!(first.as_str(), "api" | "graphql") || version)
}

/// Paths the tools were given (a `path` argument, a word of a command), for `path_shaped`.
fn tool_paths(parts: &[Part]) -> Vec<String> {
    let mut seen = Vec::new();
    for part in parts {
        if let Part::ToolCalls(calls) = part {
            for call in calls {
                for key in ["path", "file_path"] {
                    if let Some(path) = crate::extract::string_argument(call, key) {
                        push_unique(&mut seen, path.trim_end_matches('/'));
                    }
                }
                if let Some(command) = crate::extract::string_argument(call, "command") {
                    for word in command.split_whitespace().filter(|word| word.contains('/')) {
                        push_unique(&mut seen, word.trim_matches(['"', '\'', '/']));
                    }
                }
            }
        }
    }
    seen
}

impl Facts {
    pub(crate) fn collect(parts: &[Part], work: &Work, modified: &[String]) -> Self {
        let mut facts = Self::default();
        let mut branches = Branches::default();
        // Whether the latest tool calls list earlier commits (`git log`): their hashes are not
        // commits of this session.
        let mut listing = false;
        let seen = tool_paths(parts);
        // Token → (order of first appearance, score).
        let mut scores: HashMap<String, (usize, f64), RandomState> = HashMap::default();
        let mut add = |token: &str, weight: f64| {
            let order = scores.len();
            scores.entry(token.to_owned()).or_insert((order, 0.0)).1 += weight;
        };
        // Tool output counts at most 1 per token, whatever the number of occurrences.
        let mut result_weight: HashMap<String, (usize, f64), RandomState> = HashMap::default();
        for part in parts {
            let (text, weight, prose) = match part {
                Part::User(text) if text.starts_with("Ran `") => (text.clone(), 0.25, false),
                Part::User(text) => {
                    // What the user pasted (logs, stack traces, API errors) counts as output; only
                    // their own words weigh as the user's.
                    let own = strip_injected(text);
                    for token in words(&own).filter_map(identifier_token) {
                        let order = result_weight.len();
                        let entry = result_weight
                            .entry(token.to_owned())
                            .or_insert((order, 0.0));
                        entry.1 = (entry.1 + 0.25).min(1.0);
                    }
                    // A pasted stack trace's frames are output too.
                    let words_of_user: Vec<&str> = own
                        .lines()
                        .filter(|line| !crate::offline::errors::is_stack_frame(line))
                        .collect();
                    let words_of_user = words_of_user.join("\n");
                    (
                        clean_request(&words_of_user, 4_000).unwrap_or_default(),
                        3.0,
                        true,
                    )
                }
                Part::Assistant(text) => (text.clone(), 1.0, true),
                Part::Thinking(text) => (text.clone(), 0.5, true),
                Part::ToolResult(text) => (text.clone(), 0.25, false),
                Part::ToolCalls(calls) => {
                    listing = false;
                    for call in calls {
                        if let Some(command) = crate::extract::string_argument(call, "command") {
                            listing |= lists_commits(&command);
                            branches.read_command(&command);
                            versions_in(&command, &mut facts.versions);
                        }
                    }
                    continue;
                }
            };
            if prose {
                references_in(&text, &mut facts.references);
                versions_in(&text, &mut facts.versions);
                hashes_in(&text, false, &mut facts.commits);
            } else {
                // A command the user ran (`Ran \`git log\``) says itself what it listed.
                let listed = match part {
                    Part::User(text) => lists_commits(text.lines().next().unwrap_or_default()),
                    Part::Assistant(_) | Part::Thinking(_) | Part::ToolResult(_) => listing,
                    Part::ToolCalls(_) => false,
                };
                if !listed {
                    hashes_in(&text, true, &mut facts.commits);
                }
                branches.read_output(&text);
            }
            for token in words(&text).filter_map(identifier_token) {
                if prose {
                    add(token, weight);
                } else {
                    let order = result_weight.len();
                    let entry = result_weight
                        .entry(token.to_owned())
                        .or_insert((order, 0.0));
                    entry.1 = (entry.1 + weight).min(1.0);
                }
            }
        }
        let mut from_results: Vec<(String, (usize, f64))> = result_weight.into_iter().collect();
        from_results.sort_by_key(|(_, (order, _))| *order);
        for (token, (_, weight)) in from_results {
            add(&token, weight);
        }
        for (_, source, line) in &work.errors {
            references_in(line, &mut facts.references);
            for token in words(line)
                .chain(words(source))
                .filter_map(identifier_token)
            {
                add(token, 4.0);
            }
        }
        for path in &work.reads {
            add(path, 1.0);
        }
        for (hash, branch, _) in &work.commits {
            push_unique(&mut facts.commits, hash);
            branches.committed_on(branch);
        }
        facts.returned_to = branches.returned_to();
        facts.branches = branches.into_list();
        for run in &work.commands {
            if is_project_command(&run.command) {
                push_unique(&mut facts.commands, &run.command);
            }
        }
        let mut ranked: Vec<(String, (usize, f64))> = scores
            .into_iter()
            .filter(|(token, (_, score))| {
                *score >= 2.5
                    && !modified.contains(token)
                    && !is_tool_call_id(token)
                    && path_shaped(token, &seen)
            })
            .collect();
        ranked.sort_by(|(_, (first_index, first)), (_, (second_index, second))| {
            second.total_cmp(first).then(first_index.cmp(second_index))
        });
        for (token, _) in ranked.into_iter().take(MAX_IDENTIFIERS) {
            if token.contains('/') || token.contains('.') {
                facts.paths.push(token);
            } else {
                facts.symbols.push(token);
            }
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_references_versions_hashes_and_branches() {
        let mut references = Vec::new();
        references_in(
            "Fixes #42 and PR 17, see https://github.com/o/r/pull/9 and CORE-E0042; color #b5bd68",
            &mut references,
        );
        assert_eq!(
            references,
            [
                "#42",
                "PR 17",
                "https://github.com/o/r/pull/9",
                "CORE-E0042"
            ]
        );
        let mut versions = Vec::new();
        versions_in(
            "bump to v0.87.1 then 2.0.0-beta.1, not 10.0.0.1 or 1.2",
            &mut versions,
        );
        assert_eq!(versions, ["v0.87.1", "2.0.0-beta.1"]);
        let mut hashes = Vec::new();
        hashes_in("pushed commit 1a2b3c4d, cafe, 1234567", false, &mut hashes);
        assert_eq!(hashes, ["1a2b3c4d"]);
    }

    #[test]
    fn words_with_a_slash_are_paths_only_when_shaped_like_one() {
        let seen = vec!["services/orders".to_owned()];
        for path in [
            "src/a.rs",
            "./run",
            "reports/",
            "crates/fetch",
            ".github/workflows",
            "services/orders",
            ".eslintrc",
            ".env.local",
        ] {
            assert!(path_shaped(path, &seen), "{path}");
        }
        for word in [
            "origin/main",
            "and/or",
            "date/time",
            "client/server",
            "upstream/dev",
            "/api/cart",
            "/v1/transfers",
        ] {
            assert!(!path_shaped(word, &seen), "{word}");
        }
        let seen = vec!["/api/cart".to_owned()];
        assert!(path_shaped("/api/cart", &seen));
        assert!(path_shaped("/api/openapi.yaml", &[]));
    }
}
