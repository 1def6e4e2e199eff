//! Merging an earlier summary's own lines with the new span's: one list per label (`Files:`,
//! `Build/test/run commands:`), one "Edited"/"Wrote" account of the files, one last error; what the
//! new span superseded (an older last error, a reported failure of a command that passes now) is
//! dropped rather than carried beside its successor.

use crate::extract::{identifier_token, identifiers};
use crate::offline::facts::path_shaped;
use crate::offline::render::Item;
use crate::offline::say;
use crate::offline::text::{Language, dedup_key};
use crate::offline::work::{FileChange, Outcome, Work};

/// Labels of Critical Context's list lines, in both languages.
const LIST_LABELS: &[&str] = &[
    "Branch",
    "Commits",
    "References",
    "Versions",
    "Build/test/run commands",
    "Files",
    "Symbols",
    "分支",
    "提交",
    "引用",
    "版本",
    "构建/测试/运行命令",
    "文件",
    "符号",
];

/// Labels of the last-error line.
const LAST_ERROR_LABELS: &[&str] = &["Last error (", "Last error:", "最近的错误 ("];

/// The backticked entries of a text (`` `a`, `b` `` → `a`, `b`).
fn quoted(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|entry| !entry.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// A list line's label and entries (`Files: `a`, `b`` → (`Files`, [a, b])).
fn list_line(text: &str) -> Option<(&'static str, Vec<String>)> {
    LIST_LABELS.iter().find_map(|label| {
        let rest = text.strip_prefix(label)?.strip_prefix(": ")?;
        // Only a plain list: backticked entries and the commas between them.
        let plain = rest
            .split('`')
            .step_by(2)
            .all(|between| between.is_empty() || between == ", ");
        (rest.starts_with('`') && plain).then(|| (*label, quoted(rest)))
    })
}

/// Whether an entry of an earlier list still reads as what its label says: an earlier summary
/// may have listed a word for a path (`origin/main`).
fn still_valid(label: &str, entry: &str) -> bool {
    match label {
        "Files" | "文件" => identifier_token(entry) == Some(entry) && path_shaped(entry, &[]),
        "Symbols" | "符号" => identifier_token(entry) == Some(entry),
        _ => true,
    }
}

fn list_text(label: &str, entries: &[String]) -> String {
    let joined: Vec<String> = entries.iter().map(|entry| format!("`{entry}`")).collect();
    format!("{label}: {}", joined.join(", "))
}

/// The earlier summary's Critical Context merged with the new span's: an earlier list line joins
/// the new line of its label (earlier entries first, no repeats); an earlier last error is dropped
/// when the span has its own or `settled` says its command passed since.
pub(crate) fn merge_critical(
    earlier: &[&str],
    mut fresh: Vec<Item>,
    settled: impl Fn(&str) -> bool,
) -> Vec<Item> {
    let has_error = fresh.iter().any(|item| {
        LAST_ERROR_LABELS
            .iter()
            .any(|label| item.text.starts_with(label))
    });
    let mut merged = Vec::new();
    for item in earlier {
        if let Some((label, entries)) = list_line(item) {
            let entries: Vec<String> = entries
                .into_iter()
                .filter(|entry| still_valid(label, entry))
                .collect();
            let newer = fresh.iter_mut().find_map(|new| {
                list_line(&new.text)
                    .filter(|(new_label, _)| *new_label == label)
                    .map(|(_, list)| (new, list))
            });
            match newer {
                Some((new, list)) => {
                    let mut all: Vec<String> = entries
                        .into_iter()
                        .filter(|entry| !list.contains(entry))
                        .collect();
                    all.extend(list);
                    new.text = list_text(label, &all);
                }
                None if !entries.is_empty() => merged.push(Item {
                    text: list_text(label, &entries),
                    priority: 70,
                }),
                None => {}
            }
            continue;
        }
        let last_error = LAST_ERROR_LABELS
            .iter()
            .any(|label| item.starts_with(label));
        if last_error && (has_error || settled(item)) {
            continue;
        }
        merged.push(Item {
            text: (*item).to_owned(),
            priority: 70,
        });
    }
    merged.extend(fresh);
    merged
}

/// Whether an earlier open item reports a command's failure (`` `x` fails: … ``, `Make it pass:
/// …`): once the command passes, the new line for it says so and the report is superseded.
pub(crate) fn is_failure_report(item: &str) -> bool {
    [
        " fails",
        " failing",
        "Make it pass:",
        "修复使其通过",
        "失败",
    ]
    .iter()
    .any(|mark| item.contains(mark))
}

/// The files of an earlier summary's "Edited …"/"Wrote …" lines (with their counts), to be merged
/// with the new span's; `None` for any other line.
pub(crate) fn earlier_files(item: &str) -> Option<Vec<FileChange>> {
    let (created, rest) = [
        ("Wrote ", true),
        ("写入 ", true),
        ("Edited ", false),
        ("修改 ", false),
    ]
    .iter()
    .find_map(|(verb, created)| item.strip_prefix(verb).map(|rest| (*created, rest)))?;
    if !rest.starts_with('`') {
        return None;
    }
    let pieces: Vec<&str> = rest.split('`').collect();
    let mut files = Vec::new();
    for pair in pieces[1..].chunks(2) {
        let path = pair[0];
        let note = pair.get(1).copied().unwrap_or_default();
        if path.trim().is_empty() {
            continue;
        }
        let count = note
            .split_once('(')
            .and_then(|(_, inner)| inner.split_once('×'))
            .and_then(|(number, _)| number.trim().parse::<usize>().ok())
            .unwrap_or(1);
        files.push(FileChange {
            path: path.to_owned(),
            created,
            edits: if created {
                count.saturating_sub(1)
            } else {
                count
            },
            failed_edits: 0,
        });
    }
    Some(files)
}

/// Whether an earlier open item is finished by the new span's work: it names a file changed or a
/// command that passed, or a technical word of it (`/healthz`, `Retry-After`) is in a commit
/// message of the span.
pub(crate) fn finished(item: &str, done_tokens: &[String], commit_messages: &[String]) -> bool {
    told_by_own_line(item, done_tokens, commit_messages)
        || names_finished_work(item, done_tokens, commit_messages)
}

/// Whether an item is finished by work that has its own Done line in the span: a commit whose
/// message tells it, or a pull request it asked for that a command opened. An earlier planned step
/// finished so would only repeat that line.
pub(crate) fn told_by_own_line(
    item: &str,
    done_tokens: &[String],
    commit_messages: &[String],
) -> bool {
    opened_request(item, done_tokens)
        || commit_messages
            .iter()
            .any(|message| told_by_commit(item, message))
}

/// Whether an item asks to open a pull or merge request and a command of the span opened one.
fn opened_request(item: &str, done_tokens: &[String]) -> bool {
    let lower = item.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    let asks = ["open", "create", "raise", "submit", "file"]
        .iter()
        .any(|verb| words.contains(verb))
        && (words.contains(&"pr")
            || words.contains(&"mr")
            || lower.contains("pull request")
            || lower.contains("merge request"));
    asks && done_tokens.iter().any(|done| {
        [
            "gh pr create",
            "glab mr create",
            "hub pull-request",
            "az repos pr create",
        ]
        .iter()
        .any(|command| done.contains(command))
    })
}

/// Words too common to tie an item to a commit.
const COMMON_WORDS: &[&str] = &[
    "with", "from", "into", "then", "that", "this", "them", "when", "also", "after", "before",
    "make", "need", "needs", "should", "must", "will", "the", "and", "for",
];

/// Whether a commit message of the span tells that an item was done: it shares two of the item's
/// words and every version the item names (`Release notes for 2.3.4` and a commit `2.3.4 release
/// notes and version`), or, when the item names no version, three words and half of them.
fn told_by_commit(item: &str, message: &str) -> bool {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| c.is_whitespace() || ",;:()`'\"!?".contains(c))
            .map(|word| word.trim_matches(['.', '-', '/']).to_lowercase())
            .filter(|word| word.len() >= 4 && !COMMON_WORDS.contains(&word.as_str()))
            .collect()
    };
    let is_version = |word: &str| {
        word.split('.').count() >= 2
            && word
                .trim_start_matches('v')
                .split('.')
                .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
    };
    let item_words = words(item);
    let message_words = words(message);
    let shared = item_words
        .iter()
        .filter(|word| message_words.contains(word))
        .count();
    let versions: Vec<&String> = item_words.iter().filter(|word| is_version(word)).collect();
    if versions.is_empty() {
        shared >= 3 && 2 * shared >= item_words.len()
    } else {
        shared >= 2
            && versions
                .iter()
                .all(|version| message_words.contains(version))
    }
}

/// Whether an item names a file changed or a command that passed, or a technical word of it is in
/// a commit message of the span.
fn names_finished_work(item: &str, done_tokens: &[String], commit_messages: &[String]) -> bool {
    let technical = item
        .split(|character: char| character.is_whitespace() || "`,;()".contains(character))
        .map(|word| word.trim_matches(['.', ':', '"', '\'']))
        .filter(|word| word.len() >= 4 && word.contains(['/', '-', '_']))
        .map(str::to_owned);
    let named: Vec<String> = identifiers(item)
        .into_iter()
        .chain(item.split('`').skip(1).step_by(2).map(str::to_owned))
        .chain(technical)
        .collect();
    named.iter().any(|name| {
        // A path's last two segments (`interactive/components`) name it well enough in a command
        // or a commit message written from another directory.
        let segments: Vec<&str> = name.split('/').filter(|part| !part.is_empty()).collect();
        let tail = segments[segments.len().saturating_sub(2)..].join("/");
        let tail_done = segments.len() >= 2
            && tail.len() >= 8
            && done_tokens
                .iter()
                .chain(commit_messages)
                .any(|done| done.contains(&tail));
        tail_done
            || done_tokens
                .iter()
                .any(|done| done == name || done.ends_with(&format!("/{name}")))
            || (name.len() >= 4
                && commit_messages
                    .iter()
                    .any(|message| message.to_lowercase().contains(&name.to_lowercase())))
    })
}

/// Tokens of the work a span finished, for telling which earlier open items it finished: the
/// files changed, the commands that passed and each part of a chain of them (`cargo sqlx prepare
/// && cargo test` ran `cargo test`), the commits made, and the files a passing command named
/// (`git rm .travis.yml`).
pub(crate) fn done_tokens(work: &Work, modified: &[String]) -> Vec<String> {
    let mut tokens: Vec<String> = modified.to_vec();
    let passed = work
        .commands
        .iter()
        .filter(|run| run.last == Outcome::Passed);
    for run in passed.clone() {
        tokens.push(run.command.clone());
        if run.command.contains("&&") {
            tokens.extend(
                run.command
                    .split("&&")
                    .map(str::trim)
                    .filter(|part| !part.is_empty())
                    .map(str::to_owned),
            );
        }
    }
    tokens.extend(work.commits.iter().map(|(hash, _, _)| hash.clone()));
    for run in passed {
        for word in run.command.split_whitespace() {
            let word = word.trim_matches(['"', '\'']);
            if word.contains(['.', '/']) && !word.starts_with('-') && word.len() > 3 {
                tokens.push(word.to_owned());
            }
        }
    }
    tokens
}

/// The longest line that an earlier summary's Done items are folded into before a second begins.
const FOLDED_DONE_CHARS: usize = 600;

/// The label of an item (`Passed`, `Measured`), if it starts with a short one and a colon.
fn item_label(item: &str) -> Option<&str> {
    let (label, _) = item.split_once(": ").or_else(|| item.split_once('：'))?;
    (!label.is_empty() && !label.contains('`') && label.split_whitespace().count() <= 3)
        .then_some(label)
}

/// Joins items into lines of at most `FOLDED_DONE_CHARS` characters after `head` (each item whole).
fn fold_into(head: &str, items: &[&str], lines: &mut Vec<String>) {
    let mut line = String::new();
    for item in items {
        let item = item.trim_end_matches(['.', ':', '：']);
        if !line.is_empty() && line.chars().count() + item.chars().count() > FOLDED_DONE_CHARS {
            lines.push(std::mem::take(&mut line));
        }
        if line.is_empty() {
            line = format!("{head} {item}");
        } else {
            line.push_str("; ");
            line.push_str(item);
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
}

/// An earlier summary's Done items folded: one line per kind (the items of one label, `Passed:`,
/// `Measured:`, together; the unlabelled ones on a line of their own), each item whole so its
/// identifiers, numbers and hashes stay. An item one of the span's lines (`fresh`) already holds is
/// left out; the earlier last report is no longer the last, so it joins the unlabelled items.
pub(crate) fn fold_earlier_done(
    earlier: &[&str],
    fresh: &[Item],
    language: Language,
) -> Vec<String> {
    let report_labels = ["Last report", "最后的汇报"];
    let kept: Vec<&str> = earlier
        .iter()
        .copied()
        .filter(|item| {
            let key = dedup_key(item);
            !fresh.iter().any(|new| {
                let other = dedup_key(&new.text);
                other == key || (key.len() > 12 && other.contains(&key))
            })
        })
        .map(|item| match item_label(item) {
            Some(label) if report_labels.contains(&label) => {
                item[label.len()..].trim_start_matches([':', '：']).trim()
            }
            Some(_) | None => item,
        })
        .collect();
    let mut kinds: Vec<Option<&str>> = Vec::new();
    for item in &kept {
        let label = item_label(item);
        if !kinds.contains(&label) {
            kinds.push(label);
        }
    }
    let mut lines = Vec::new();
    for kind in kinds {
        let items: Vec<&str> = kept
            .iter()
            .copied()
            .filter(|item| item_label(item) == kind)
            .collect();
        match (kind, items.as_slice()) {
            (Some(_), [one]) => lines.push((*one).to_owned()),
            (Some(label), _) => {
                let rests: Vec<&str> = items
                    .iter()
                    .map(|item| item[label.len()..].trim_start_matches([':', '：']).trim())
                    .collect();
                fold_into(&format!("{label}:"), &rests, &mut lines);
            }
            (None, _) => fold_into(
                &say(language, "Done before this span:", "此前已完成："),
                &items,
                &mut lines,
            ),
        }
    }
    lines
}

/// One line for an earlier summary's open items that the span finished.
pub(crate) fn finished_line(items: &[&str], language: Language) -> Option<String> {
    (!items.is_empty()).then(|| {
        format!(
            "{} {}",
            say(
                language,
                "Finished since the earlier summary:",
                "先前摘要中的待办已完成："
            ),
            items
                .iter()
                .map(|item| item.trim_end_matches(['.', ':', '：']))
                .collect::<Vec<_>>()
                .join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_lists_and_drops_a_superseded_last_error() {
        let earlier = [
            "Build/test/run commands: `cargo test`, `cargo clippy`",
            "Last error (`cargo clippy`): `error: x`",
            "Files: `config/a.toml`, `origin/main`",
            "Note: keep the cache",
        ];
        let fresh = vec![
            Item {
                text: "Build/test/run commands: `cargo clippy`, `cargo bench`".into(),
                priority: 82,
            },
            Item {
                text: "Last error (`git pull`): `error: y`".into(),
                priority: 90,
            },
        ];
        let merged: Vec<String> = merge_critical(&earlier, fresh, |_| false)
            .into_iter()
            .map(|item| item.text)
            .collect();
        assert_eq!(
            merged,
            [
                "Files: `config/a.toml`",
                "Note: keep the cache",
                "Build/test/run commands: `cargo test`, `cargo clippy`, `cargo bench`",
                "Last error (`git pull`): `error: y`",
            ]
        );
    }

    #[test]
    fn reads_earlier_file_lines() {
        let files = earlier_files("Edited `src/a.rs` (3×), `b.md`").unwrap_or_default();
        let summary: Vec<(&str, usize)> = files
            .iter()
            .map(|file| (file.path.as_str(), file.edits))
            .collect();
        assert_eq!(summary, [("src/a.rs", 3), ("b.md", 1)]);
        assert!(earlier_files("Edited the parser").is_none());
        assert!(list_line("Branch: `chore/x` (PR #58)").is_none());
        assert!(is_failure_report("`cargo clippy` fails: error: x"));
    }
}
