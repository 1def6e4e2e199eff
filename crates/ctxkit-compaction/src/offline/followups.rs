//! Workflow follow-ups: a request that only asks to run, commit, push, rebase or retry what is
//! already there ("rebase on main and push", "ok, run the whole suite too") adds no task. Once later
//! work answered it, its command is in Progress, and the Goal keeps the tasks.

use crate::extract::{Part, identifiers};
use crate::offline::text::constraints_in;
use crate::offline::work::Work;

/// Words before the verb that carry nothing ("ok.", "good,", "then"), also in the other languages
/// sessions are held in ("Top.", "Parfait,", "Super, danke.", "Vale,").
const LEAD_WORDS: &[&str] = &[
    "ok", "okay", "good", "great", "nice", "cool", "thanks", "yes", "yeah", "yep", "alright",
    "perfect", "then", "now", "so", "and", "please", "pls", "also", "top", "super", "parfait",
    "merci", "bien", "alors", "danke", "gut", "prima", "bitte", "vale", "perfecto", "genial",
    "gracias", "bueno", "perfeito", "ótimo", "otimo", "beleza", "valeu", "obrigado", "então",
    "agora", "certo", "pronto",
];

/// Verbs of the workflow around a task, not of a task.
const WORKFLOW_VERBS: &[&str] = &[
    "run", "rerun", "re-run", "retry", "redo", "commit", "push", "rebase", "merge", "tag", "bump",
    "squash", "amend", "commita", "commite", "pousse", "pushea",
];

/// Verbs that open a branch or a pull request ("create a branch and commit", "cria uma branch e
/// commita", "open a draft PR"): workflow when a branch or PR word follows within two words.
const OPENING_VERBS: &[&str] = &[
    "create", "open", "cria", "crie", "abre", "abra", "crea", "crée", "cree", "ouvre", "erstelle",
];

/// What such a verb opens.
const BRANCH_WORDS: &[&str] = &["branch", "branche", "rama", "pr", "mr", "draft"];

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

/// The words of a lowercased text, without their punctuation (hyphens kept).
fn words_of(lower: &str) -> Vec<&str> {
    lower
        .split_whitespace()
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-'))
        .filter(|word| !word.is_empty())
        .collect()
}

/// How many filler words ("ok", "thanks", "perfeito") open `words`.
fn filler_words(words: &[&str]) -> usize {
    words
        .iter()
        .take_while(|word| LEAD_WORDS.contains(word))
        .count()
}

/// Whether `request` only asks for a step of the workflow: it opens (after filler) with a workflow
/// verb — or with "try" and a number, a retry with another value ("try a 14 day lookback") — names
/// no path, symbol or version, asks for no task, states no rule, asks nothing, and is short.
pub(crate) fn is_workflow_follow_up(request: &str) -> bool {
    let lower = request.to_lowercase();
    let words = words_of(&lower);
    let lead = filler_words(&words);
    let Some(verb) = words.get(lead) else {
        return false;
    };
    let retry_with_value =
        *verb == "try" && request.chars().any(|character| character.is_ascii_digit());
    let opens_branch = OPENING_VERBS.contains(verb)
        && words
            .iter()
            .skip(lead + 1)
            .take(2)
            .any(|word| BRANCH_WORDS.contains(word));
    (WORKFLOW_VERBS.contains(verb) || retry_with_value || opens_branch)
        && words.len() <= 16
        && !words.iter().enumerate().any(|(position, word)| {
            TASK_VERBS.contains(word) && !(opens_branch && position == lead)
        })
        && !request.contains(['`', '?', '？', '/'])
        && identifiers(request).is_empty()
        && constraints_in(request).is_empty()
        && !has_version(request)
}

/// Whether the work after the request at `index` finished it: nothing pending, no command after it
/// failing at the end, and the assistant spoke after it.
pub(crate) fn finished_at_end(parts: &[Part], work: &Work, index: usize) -> bool {
    work.pending.is_empty()
        && !work.failing().iter().any(|run| run.position > index)
        && parts
            .iter()
            .skip(index + 1)
            .any(|part| matches!(part, Part::Assistant(_)))
}

/// Words a question opens with, in the languages sessions are held in.
const QUESTION_WORDS: &[&str] = &[
    "what", "which", "who", "where", "when", "why", "how", "does", "do", "is", "are", "can",
    "could", "did", "was", "qual", "quais", "como", "onde", "quando", "qué", "que", "cuál", "cómo",
    "dónde", "quel", "quelle", "comment", "où", "pourquoi", "welche", "welcher", "wie", "wo",
    "warum",
];

/// Whether `request` only asks a question ("what python does prod run? I think the base image is
/// old too"): after filler it opens with a question word, holds a question mark, and asks for no
/// task or workflow step and states no rule. Once answered it is not a goal.
pub(crate) fn is_question(request: &str) -> bool {
    let lower = request.to_lowercase();
    let words = words_of(&lower);
    let lead = filler_words(&words);
    // A label before the question ("unrelated question:", "quick q:") is filler too.
    let label = lower
        .split_once(':')
        .map(|(before, _)| before.split_whitespace().collect::<Vec<_>>())
        .filter(|before| {
            before.len() > lead
                && before.len() <= lead + 3
                && before.last().is_some_and(|word| {
                    matches!(
                        word.trim_matches(|c: char| !c.is_alphanumeric()),
                        "question" | "q" | "pergunta" | "pregunta" | "domanda" | "frage"
                    )
                })
        })
        .map_or(0, |before| before.len() - lead);
    words
        .get(lead + label)
        .is_some_and(|word| QUESTION_WORDS.contains(word))
        && request.contains(['?', '？'])
        && !words
            .windows(2)
            .any(|pair| pair[1] == "about" && matches!(pair[0], "what" | "how"))
        && words.len() <= 30
        && !words.iter().any(|word| TASK_VERBS.contains(word))
        && !asks_a_step_after_the_question(&lower)
        && constraints_in(request).is_empty()
}

/// Whether what follows the first question mark asks for a workflow step ("are we all committed?
/// if not, commit first").
fn asks_a_step_after_the_question(lower: &str) -> bool {
    lower.split_once(['?', '？']).is_some_and(|(_, rest)| {
        rest.split(|c: char| !c.is_alphanumeric() && c != '-')
            .any(|word| WORKFLOW_VERBS.contains(&word))
    })
}

/// Marks of a request changing an earlier rule or plan ("change of plan", "no more .bak files",
/// "instead").
const CHANGE_MARKS: &[&str] = &[
    "change of plan",
    "instead",
    "no more",
    "no longer",
    "anymore",
    "any more",
    "from now on",
];

/// The code-like words of a text (`.bak`, `saves/legacy/`, `v2`, `snake_case`): with a dot, a
/// slash, an underscore or a digit.
fn code_words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || ",;:()`'\"".contains(c))
        .map(|word| word.trim_end_matches(['.', '!', '?']).to_lowercase())
        .filter(|word| {
            word.chars().any(char::is_alphabetic)
                && word
                    .chars()
                    .any(|c| matches!(c, '.' | '/' | '_') || c.is_ascii_digit())
        })
        .collect()
}

/// Whether `request` changes the earlier `rule`: it says it changes something ("change of plan",
/// "no more", "instead") and names a code-like word of the rule (`.bak`).
pub(crate) fn changes_rule(request: &str, rule: &str) -> bool {
    let lower = request.to_lowercase();
    let rule_words = code_words(rule);
    CHANGE_MARKS.iter().any(|mark| lower.contains(mark))
        && code_words(request)
            .iter()
            .any(|word| rule_words.contains(word))
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
            "hmm"
                | "hm"
                | "ah"
                | "oh"
                | "wait"
                | "espera"
                | "attends"
                | "attendez"
                | "warte"
                | "moment"
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

/// Words a sentence that only takes the request before it back ends with: it points back ("don't
/// skip it") and names nothing of its own.
const BACK_REFERENCES: &[&str] = &["it", "that", "this", "them"];

/// A correction without its opening sentence when that sentence only takes the request before it
/// back ("ok no, you're right, don't skip it. find the actual cause" → "find the actual cause"):
/// the sentence is short, ends with a word pointing back, and a task of three words or more
/// follows. Otherwise the whole request.
pub(crate) fn correction_task(request: &str) -> &str {
    if !is_correction(request) {
        return request;
    }
    let Some(end) = request.find(['.', '!', ';']) else {
        return request;
    };
    let (cancel, rest) = (&request[..end], request[end + 1..].trim_start());
    let cancel_lower = cancel.to_lowercase();
    let cancel_words = words_of(&cancel_lower);
    let only_takes_back = cancel_words.len() <= 8
        && cancel_words
            .last()
            .is_some_and(|word| BACK_REFERENCES.contains(word))
        && identifiers(cancel).is_empty();
    if only_takes_back && rest.split_whitespace().count() >= 3 {
        rest
    } else {
        request
    }
}

/// Words that report something working ("everything works now"): a message made of such a report
/// tells the assistant how it went, it asks for nothing.
const WORKING_WORDS: &[&str] = &[
    "works",
    "working",
    "worked",
    "funciona",
    "fonctionne",
    "funktioniert",
];

/// Whether `request` asks for nothing once answered: a short message that names nothing (no
/// identifier, number or path), holds no task or workflow verb and no rule, and is either a check-in
/// or question ("you still there?", "any other such issues possibly?") or a report that something
/// works ("jesus, everything works, you are a monster"). Not a goal.
pub(crate) fn asks_nothing(request: &str) -> bool {
    if request
        .chars()
        .any(|c| c.is_ascii_digit() || c == '`' || crate::offline::text::is_han(c))
        || !identifiers(request).is_empty()
        || !constraints_in(request).is_empty()
    {
        return false;
    }
    let lower = request.to_lowercase();
    let words = words_of(&lower);
    let asks_work = words
        .iter()
        .any(|word| TASK_VERBS.contains(word) || WORKFLOW_VERBS.contains(word));
    let checks_in = request.trim_end().ends_with(['?', '？']);
    let reports_working = words.iter().any(|word| WORKING_WORDS.contains(word));
    words.len() <= 12 && !asks_work && (checks_in || reports_working)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_in_or_a_report_that_it_works_asks_nothing() {
        for request in [
            "i'm now in the new implementation, you still there?",
            "any other such pathing issues possibly?",
            "jesus, everything works, you are a monster",
            "nice, it works now!",
        ] {
            assert!(asks_nothing(request), "{request}");
        }
        for request in [
            "yes need to be fully clean",
            "now the same for the admin page",
            "it works locally but fails on CI, can you fix it?",
            "does `cargo test` pass?",
            "works on 1.74 too?",
            "Añade la validación en el formulario",
            "为什么这样做？",
            "never push to main, ok?",
        ] {
            assert!(!asks_nothing(request), "{request}");
        }
    }

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
            "perfeito, cria uma branch e commita",
            "create a branch and commit",
            "push and open a draft PR",
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
            "create a settings page and commit it",
            "open the export dialog from the toolbar",
        ] {
            assert!(!is_workflow_follow_up(request), "{request}");
        }
    }

    #[test]
    fn questions_are_told_from_requests() {
        for request in [
            "what python does prod run? I think the base image is old too",
            "ok, which queue does the worker read from?",
            "Qual versão do Postgres roda em produção?",
            "thanks. unrelated question: why is the build so slow on CI? it takes 6 minutes",
            "quick question: which queue does the worker read from?",
        ] {
            assert!(is_question(request), "{request}");
        }
        for request in [
            "how do I fix the failing build?",
            "what about adding a cache to the resolver?",
            "is it safe? never push to main directly",
            "are we all committed? if not, commit first",
            "run the tests again",
            "quick question: can you fix the failing build?",
            "the question: keep it or not?",
        ] {
            assert!(!is_question(request), "{request}");
        }
    }

    #[test]
    fn a_changed_rule_is_told() {
        let rule = "Keep a `.bak` copy next to every migrated v1 save";
        assert!(changes_rule(
            "change of plan: no more .bak files, move the originals into old/ instead",
            rule
        ));
        assert!(!changes_rule("also write a .bak for the config", rule));
        assert!(!changes_rule("no more logging in the hot loop", rule));
    }

    #[test]
    fn a_correction_keeps_its_task_not_its_taking_back() {
        assert_eq!(
            correction_task("ok no, you're right, don't skip it. find the actual cause, no hiding"),
            "find the actual cause, no hiding"
        );
        for request in [
            "forget Redis. we're not adding go-redis, Postgres is fast enough",
            "no wait — that crate is unmaintained. Don't use it.",
            "No, return a 422 instead",
            "no, drop that. ok",
            "add a toggle. then skip it. and more words here",
        ] {
            assert_eq!(correction_task(request), request);
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
            "Ah no, allora lasciamo perdere: restiamo sulla versione attuale.",
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
