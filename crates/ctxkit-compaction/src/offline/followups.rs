//! Workflow follow-ups: a request that only asks to run, commit, push, rebase or retry what is
//! already there ("rebase on main and push", "ok, run the whole suite too") adds no task. Once later
//! work answered it, its command is in Progress, and the Goal keeps the tasks.

use crate::extract::identifiers;
use crate::offline::text::constraints_in;

/// Words before the verb that carry nothing ("ok.", "good,", "then"), also in the other languages
/// sessions are held in ("Top.", "Parfait,", "Super, danke.", "Vale,").
const LEAD_WORDS: &[&str] = &[
    "ok", "okay", "good", "great", "nice", "cool", "thanks", "yes", "yeah", "yep", "alright",
    "perfect", "then", "now", "so", "and", "please", "pls", "also", "top", "super", "parfait",
    "merci", "bien", "alors", "danke", "gut", "prima", "bitte", "vale", "perfecto", "genial",
    "gracias", "bueno",
];

/// Verbs of the workflow around a task, not of a task.
const WORKFLOW_VERBS: &[&str] = &[
    "run", "rerun", "re-run", "retry", "redo", "commit", "push", "rebase", "merge", "tag", "bump",
    "squash", "amend",
];

/// Verbs of a task: a request holding one asks for work, whatever it opens with ("run clippy and
/// fix the warnings").
const TASK_VERBS: &[&str] = &[
    "fix",
    "add",
    "implement",
    "write",
    "refactor",
    "remove",
    "delete",
    "change",
    "update",
    "make",
    "create",
    "rename",
    "move",
    "replace",
    "document",
    "support",
    "handle",
    "migrate",
    "convert",
    "extract",
    "split",
    "rewrite",
    "investigate",
    "debug",
    "port",
    "drop",
    "revert",
];

/// Whether `request` only asks for a step of the workflow: it opens (after filler) with a workflow
/// verb — or with "try" and a number, a retry with another value ("try a 14 day lookback") — names
/// no path, symbol or version, asks for no task, states no rule, asks nothing, and is short.
pub(crate) fn is_workflow_follow_up(request: &str) -> bool {
    let lower = request.to_lowercase();
    let words: Vec<&str> = lower
        .split_whitespace()
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-'))
        .filter(|word| !word.is_empty())
        .collect();
    let mut rest = words.iter().skip_while(|word| LEAD_WORDS.contains(word));
    let Some(verb) = rest.next() else {
        return false;
    };
    let retry_with_value =
        *verb == "try" && request.chars().any(|character| character.is_ascii_digit());
    (WORKFLOW_VERBS.contains(verb) || retry_with_value)
        && words.len() <= 16
        && !words.iter().any(|word| TASK_VERBS.contains(word))
        && !request.contains(['`', '?', '？', '/'])
        && identifiers(request).is_empty()
        && constraints_in(request).is_empty()
        && !has_version(request)
}

/// How a request that takes back or corrects the one before it opens ("actually scrap the
/// toggle", "no, return a 422 instead", "Finalement non, …").
const CORRECTION_OPENINGS: &[&str] = &[
    "actually",
    "scrap",
    "forget",
    "never mind",
    "nevermind",
    "on second thought",
    "instead",
    "no,",
    "no.",
    "no wait",
    "no —",
    "no -",
    "no!",
    "nein,",
    "non,",
    "finalement",
    "en fait",
    "eigentlich",
    "doch",
    "en realidad",
    "mejor",
];

/// Whether `request` takes back or corrects the request before it: after filler ("hmm,", "ok"),
/// it opens with "actually", "scrap", "never mind", "no," or the like.
pub(crate) fn is_correction(request: &str) -> bool {
    let lower = request.to_lowercase();
    let mut rest = lower.trim();
    loop {
        let word = rest
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .trim_matches(|c: char| !c.is_alphanumeric());
        // "Wait", "espera", "attends", "warte" hold the request before it back.
        let holding = matches!(
            word,
            "hmm" | "hm" | "wait" | "espera" | "attends" | "attendez" | "warte" | "moment"
        );
        if word.is_empty() || !(LEAD_WORDS.contains(&word) || holding) {
            break;
        }
        rest = rest[rest.find(char::is_whitespace).unwrap_or(rest.len())..].trim_start();
    }
    CORRECTION_OPENINGS
        .iter()
        .any(|opening| rest.starts_with(opening))
}

/// Whether `text` names a dotted version (`2.4.0`, `v1.2`).
fn has_version(text: &str) -> bool {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .map(|word| word.trim_start_matches('v').trim_end_matches(['.', ')']))
        .any(|word| {
            word.contains('.')
                && word
                    .split('.')
                    .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_steps_are_follow_ups_and_tasks_are_not() {
        for request in [
            "rebase on main and push",
            "ok. run the whole suite and the linter too",
            "good, commit on a branch and bump the version, this is a minor release",
            "try a 30 minute window then",
            "Rerun the migration",
            "Parfait. Commit sur la branche puis pousse.",
            "Vale, commit y push.",
        ] {
            assert!(is_workflow_follow_up(request), "{request}");
        }
        for request in [
            // A task, a target or a rule comes with it.
            "add a --json flag to the report command",
            "run the ingest benchmark and compare with 2.4.0",
            "run `make bench` on the release build",
            "try a trie for the router in src/router.rs",
            "try a radix tree instead",
            "commit it, but never push to main directly",
            "run the tests on the API 24 emulator, why do they fail?",
            "fix the flaky retry in the upload client and then run the whole suite again",
            "Run clippy and fix the warnings.",
            "run the formatter, then update the changelog",
        ] {
            assert!(!is_workflow_follow_up(request), "{request}");
        }
    }

    #[test]
    fn corrections_of_the_request_before_are_told() {
        for request in [
            "hmm, actually scrap the toggle. follow the locale",
            "No, return a 422 instead",
            "ok never mind the cache, profile it first",
            "Finalement non, renvoie plutôt une 422.",
            "no wait — that crate is unmaintained. Don't use it.",
            "Espera, mejor no. Deja el mensaje en español.",
            "wait, no, keep the old endpoint",
        ] {
            assert!(is_correction(request), "{request}");
        }
        for request in [
            "add a toggle in Settings",
            "nothing actually changed, look again",
            "now bump the version",
            "no tests may hit the network",
        ] {
            assert!(!is_correction(request), "{request}");
        }
    }
}
