//! What kind of work a shell command is, and what of its output is worth keeping: a build, test,
//! check, dependency, deploy or git step is progress when it passes; any other command (a migration
//! applied, a benchmark, a health check, a script, `git rebase --continue`) is progress only for
//! what its output tells: a measurement (`p95 84ms`, `482113 ns/op`) or the files it created.

use crate::extract::identifiers;
use crate::offline::errors::{
    has_coded_error, is_error_line, is_generic_banner, is_located_diagnostic, traceback_exception,
};
use crate::offline::text::clip;

/// Words that make a command a step of the project's work, as a program or its subcommand
/// (`cargo test`, `npm run lint`, `bundle exec rspec`, `terraform validate`).
const STEP_WORDS: &[&str] = &[
    // Build and test.
    "build",
    "compile",
    "test",
    "tests",
    "pytest",
    "jest",
    "vitest",
    "mocha",
    "rspec",
    "phpunit",
    "ctest",
    "tox",
    "nox",
    "nextest",
    "tsc",
    "tsgo",
    "esbuild",
    "webpack",
    "vite",
    "rollup",
    "check",
    "verify",
    "e2e",
    "cypress",
    "playwright",
    // Lint and format.
    "lint",
    "clippy",
    "vet",
    "fmt",
    "format",
    "typecheck",
    "mypy",
    "pyright",
    "ruff",
    "eslint",
    "prettier",
    "black",
    "flake8",
    "pylint",
    "rubocop",
    "golangci-lint",
    "shellcheck",
    "stylelint",
    "biome",
    "validate",
    "kubeconform",
    "kubeval",
    "hadolint",
    "tflint",
    "audit",
    // Dependencies.
    "install",
    "add",
    "ci",
    "tidy",
    "upgrade",
    "update",
    "uninstall",
    "remove",
    // Shipping.
    "deploy",
    "apply",
    "publish",
    "release",
    "push",
    "merge",
    "rollout",
    "tag",
    "cherry-pick",
    "revert",
    "pr",
    "version",
];

/// Git subcommands that only move within a rebase, merge or cherry-pick already counted.
const RESUMING: &[&str] = &["--continue", "--abort", "--skip", "--quit"];

/// The words a segment of a command is known by: its program and first few subcommands, without
/// options, paths' directories, `npm run` script suffixes (`test:unit` is `test`) or arguments.
fn segment_words(segment: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut skip_value = false;
    for word in segment
        .split_whitespace()
        .skip_while(|word| word.contains('=') && !word.starts_with('-'))
    {
        if word.starts_with('-') {
            // The value of a one-letter option (`-c Release`, `-p core`) is not a subcommand;
            // `python -m pytest` names its module.
            skip_value = word.len() == 2 && word != "-m";
            continue;
        }
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let name = word.rsplit('/').next().unwrap_or(word);
        // A script is known by its name (`./scripts/test.sh` is `test`); an npm script or a Gradle
        // task by any part (`test:unit`, `:payments:test`).
        for part in name.split(':').filter(|part| !part.is_empty()) {
            let part = part
                .strip_suffix(".sh")
                .or_else(|| part.strip_suffix(".py"))
                .unwrap_or(part);
            words.push(part.trim_matches(['"', '\'']).to_lowercase());
        }
        if words.len() >= 4 {
            break;
        }
    }
    words
}

/// Subcommands that only list or show what exists (`docker image ls`, `gh run list`, `nix
/// path-info`, `kubectl describe`): a query, not a step, whatever its other words say.
const QUERY_WORDS: &[&str] = &[
    "ls",
    "list",
    "show",
    "view",
    "inspect",
    "info",
    "path-info",
    "describe",
    "status",
];

/// Whether a segment of a command is a query: a listing or showing subcommand among its first
/// words (not a path such as `tests/view`).
pub(crate) fn is_query(segment: &str) -> bool {
    segment
        .split_whitespace()
        .filter(|word| !word.starts_with('-') && !word.contains('='))
        .take(3)
        .any(|word| !word.contains('/') && QUERY_WORDS.contains(&word))
}

/// Whether a command builds, tests, checks, changes dependencies, ships, or moves git history
/// (`git push`, `git merge`, `git rebase main`; not `git rebase --continue`).
pub(crate) fn is_step(command: &str) -> bool {
    command
        .split(['&', ';', '|'])
        .map(str::trim)
        .filter(|segment| !segment.is_empty() && !is_query(segment))
        .any(|segment| {
            let words = segment_words(segment);
            let resuming = segment
                .split_whitespace()
                .any(|word| RESUMING.contains(&word));
            let first = words.first().map(String::as_str).unwrap_or_default();
            if first == "git" {
                // Only what moves history others see; `git add`, `git checkout`, `git stash` and
                // `git rebase --continue` are bookkeeping.
                return !resuming
                    && words.get(1).is_some_and(|verb| {
                        matches!(
                            verb.as_str(),
                            "push"
                                | "merge"
                                | "rebase"
                                | "pull"
                                | "tag"
                                | "cherry-pick"
                                | "revert"
                                | "am"
                        )
                    });
            }
            // `make`, `just`, `./gradlew` with no target build the project.
            let bare_build =
                matches!(first, "make" | "just" | "gradlew" | "mvn" | "ninja") && words.len() == 1;
            !resuming
                && (bare_build
                    || words.iter().enumerate().any(|(index, word)| {
                        // `update`/`upgrade` are a package manager's subcommand (`cargo update`,
                        // `helm upgrade`), not `dotnet ef database update`, a migration applied.
                        let positional = matches!(word.as_str(), "update" | "upgrade");
                        (STEP_WORDS.contains(&word.as_str()) && (!positional || index == 1))
                            || word.starts_with("test")
                    }))
        })
}

/// Units a measured value is given in.
const UNITS: &[&str] = &[
    "ms", "s", "µs", "us", "ns", "ns/op", "b/op", "%", "kb", "mb", "gb", "req/s", "rps", "ops/s",
    "qps", "x",
];

/// Whether a word is a number with a unit (`84ms`, `1.2s`, `99.9%`) or a unit follows it; not the
/// time the command itself took (`in 4s`, `took 3.1s`).
fn is_measure(previous: Option<&str>, word: &str, next: Option<&str>) -> bool {
    if previous.is_some_and(|previous| matches!(previous, "in" | "took" | "after" | "elapsed")) {
        return false;
    }
    let trimmed = word.trim_matches(|c: char| "()[],;:".contains(c));
    let digits = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(trimmed.len());
    if digits == 0 || !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let unit = trimmed[digits..].to_lowercase();
    let unit = unit.trim_end_matches(['.', ',', ')']);
    if unit.is_empty() {
        next.is_some_and(|next| {
            UNITS.contains(&next.trim_matches([',', ')', ']']).to_lowercase().as_str())
        })
    } else {
        UNITS.contains(&unit)
    }
}

/// A short markdown table of numbers in an output (a benchmark's `| stage | before (s) | after
/// (s) |`), on one line: its header, then each row's cells, rows apart by `; `.
fn measured_table(output: &str) -> Option<String> {
    let rows: Vec<Vec<&str>> = output
        .lines()
        .map(str::trim)
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect::<Vec<_>>()
        })
        // The rule under the header (`|---|--:|`) is not a row.
        .filter(|cells| {
            !cells
                .iter()
                .all(|cell| cell.chars().all(|c| matches!(c, '-' | ':' | ' ')))
        })
        .collect();
    let numeric = |cell: &&str| {
        cell.starts_with(|c: char| c.is_ascii_digit())
            && cell
                .chars()
                .all(|c| c.is_ascii_digit() || ".,%x ".contains(c) || c.is_alphabetic())
    };
    let measured = rows.len() >= 2 && rows.iter().skip(1).all(|cells| cells.iter().any(numeric));
    let text = rows
        .iter()
        .map(|cells| cells.join(" "))
        .collect::<Vec<_>>()
        .join("; ");
    (measured && text.chars().count() <= 160).then_some(text)
}

/// The measurement an output reports: a short markdown table of numbers, or else its last line
/// with a measured value (`orders_list: p50 38ms p95 84ms`, `BenchmarkX-2  2481  482113 ns/op`),
/// not a log line's timestamp.
pub(crate) fn measurement(output: &str) -> Option<String> {
    if let Some(table) = measured_table(output) {
        return Some(table);
    }
    output
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            // A log line's timestamp (`2026/11/26 13:20:01 OK …`) is not a result.
            let logged = words.first().is_some_and(|first| {
                first.starts_with(|c: char| c.is_ascii_digit()) && first.contains(['/', '-'])
            });
            // A spread of repeated runs (`BM_Push_stddev 6.1 ns`, `cv`, `variance`) is not the
            // measurement; its mean or median line is.
            let spread = words.first().is_some_and(|name| {
                let lower = name.to_lowercase();
                ["stddev", "std_dev", "variance", "_cv", "stdev"]
                    .iter()
                    .any(|mark| lower.contains(mark))
            });
            !logged
                && !spread
                && line.len() <= 200
                && words.iter().enumerate().any(|(index, word)| {
                    let previous = index.checked_sub(1).and_then(|before| words.get(before));
                    is_measure(previous.copied(), word, words.get(index + 1).copied())
                })
                && words
                    .iter()
                    .any(|word| word.chars().any(char::is_alphabetic))
        })
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Files a command's output says it created (`Migrations for 'orders':` then the new file,
/// `Created src/x.ts`, `create mode 100644 a.sql`).
pub(crate) fn created_files(output: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut announced = false;
    for line in output.lines() {
        let lower = line.to_lowercase();
        let creates = ["creat", "generat", "wrote", "new file", "migrations for"]
            .iter()
            .any(|mark| lower.contains(mark));
        let names: Vec<String> = identifiers(line)
            .into_iter()
            .filter(|name| name.contains('.') && !name.contains("://"))
            .filter(|name| {
                name.rsplit_once('.')
                    .is_some_and(|(_, extension)| extension.len() <= 5)
            })
            .collect();
        if creates || announced {
            for name in names {
                if !found.contains(&name) {
                    found.push(name);
                }
            }
        }
        // A heading line (`Migrations for 'orders':`) announces the indented lines below it.
        announced = creates && line.trim_end().ends_with(':')
            || announced && line.starts_with(char::is_whitespace);
    }
    found
}

/// How much an error line names: identifiers (a test, a field, a path), a `file:line`, a quoted
/// field path (`'/spec/minAvailable'`), an error code; count-only summary lines name nothing.
pub(crate) fn naming_score(line: &str) -> i32 {
    let trimmed = line.trim();
    let lower = trimmed.to_lowercase();
    let summary = ["summary:", "totals:", "ran ", "tests:", "test suites:"]
        .iter()
        .any(|start| lower.starts_with(start))
        || trimmed.matches(": ").count() >= 3
            && trimmed
                .split(": ")
                .skip(1)
                .all(|part| part.trim_start().starts_with(|c: char| c.is_ascii_digit()));
    if summary {
        return -3;
    }
    // A qualified name (`Inventory.Tests.RepoTests.GetBySku_IsCaseInsensitive`) names its last part.
    let qualified = trimmed
        .split(|c: char| c.is_whitespace() || "()[]".contains(c))
        .filter(|word| word.contains('.') && !word.contains('/'))
        .filter_map(|word| word.rsplit('.').next())
        .filter(|last| !identifiers(last).is_empty())
        .count();
    let named = (identifiers(trimmed).len() + qualified).min(3) as i32;
    let file_line = trimmed.split_whitespace().any(|word| {
        let mut pieces = word.trim_matches(['(', ')', ',']).split(':');
        pieces.next().is_some_and(|file| file.contains('.'))
            && pieces.next().is_some_and(|number| {
                !number.is_empty() && number.chars().all(|c| c.is_ascii_digit())
            })
    });
    let field = trimmed.contains("'/") || trimmed.contains("\"/");
    let code = trimmed
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| {
            let letters = word.chars().take_while(char::is_ascii_uppercase).count();
            (1..=4).contains(&letters)
                && word.len() > letters + 2
                && word[letters..].chars().all(|c| c.is_ascii_digit())
        });
    2 * named + 2 * i32::from(file_line) + 2 * i32::from(field) + i32::from(code)
}

/// Error marks by how much they tell: a message naming the problem first, then a failing test or a
/// missing file, then anything else (a generic `npm error command failed`).
const ERROR_TIERS: &[&[&str]] = &[
    &[
        "error[",
        "error TS",
        "Error:",
        "error:",
        "panicked",
        "fatal:",
        "Exception:",
        "Failure:",
    ],
    &[
        "--- FAIL",
        "FAIL ",
        "FAIL:",
        "FAILED",
        "Failed ",
        "No such file",
        "Cannot find",
        "cannot find",
        "not found",
    ],
];

/// The most telling error line of an output: a message naming the problem first, then a failing
/// test or a missing file, and within those the line that names the most (a test, a field, a
/// `file:line`, a code); a message naming nothing (`AssertionError: 3 != 2`) comes after the
/// failing test's line; the first of equals. A generic `npm error command failed`
/// comes last, a count-only summary line (`Summary: … Invalid: 1`) names nothing.
pub(crate) fn error_line(result: &str) -> Option<&str> {
    // A Python traceback's exception line is the error; its `Traceback …` heading is a banner.
    let exception = traceback_exception(result);
    let score = |line: &str| {
        let tier =
            if has_coded_error(line) || is_located_diagnostic(line) || Some(line) == exception {
                Some(0)
            } else {
                ERROR_TIERS
                    .iter()
                    .position(|tier| tier.iter().any(|mark| line.contains(mark)))
            };
        let tier = tier.map_or(0, |index| 6 - 3 * index as i32);
        // A message whose text names nothing (`AssertionError: 3 != 2`) tells less than the line
        // naming the failing test.
        let mute = line
            .split_once(": ")
            .is_some_and(|(_, message)| !message.chars().any(char::is_alphabetic));
        let tier = if mute { tier - 3 } else { tier };
        let penalty = if is_generic_banner(line) { 20 } else { 0 };
        tier + naming_score(line) - penalty
    };
    let mut best: Option<(&str, i32)> = None;
    for line in result
        .lines()
        .filter(|line| is_error_line(line) || Some(*line) == exception)
    {
        let value = score(line);
        if best.is_none_or(|(_, top)| value > top) {
            best = Some((line, value));
        }
    }
    best.map(|(line, _)| line)
}

/// The failure of a run: its most telling error line, joined with its partner when a test runner
/// prints the failing test and the message apart (`FAIL src/a.test.ts > renders` and
/// `AssertionError: expected …`): the test first, then the message.
pub(crate) fn failure_line(result: &str) -> Option<String> {
    let best = error_line(result)?;
    let is_test = |line: &str| {
        ["--- FAIL", "FAIL ", "FAIL:", "FAILED", "Failed "]
            .iter()
            .any(|mark| line.contains(mark))
    };
    let exception = traceback_exception(result);
    let is_message = |line: &str| {
        ERROR_TIERS[0].iter().any(|mark| line.contains(mark)) || Some(line) == exception
    };
    let candidates = || {
        result
            .lines()
            .filter(|line| is_error_line(line) && *line != best)
    };
    let (test, message) = match (is_test(best), is_message(best)) {
        (true, false) => (
            best,
            candidates().find(|line| is_message(line) && !is_test(line)),
        ),
        (false, true) => {
            let test = candidates()
                .filter(|line| is_test(line) && !is_message(line) && naming_score(line) > 0)
                .max_by_key(|line| naming_score(line));
            match test {
                Some(test) => (test, Some(best)),
                None => return Some(unframed(best)),
            }
        }
        (true, true) | (false, false) => return Some(unframed(best)),
    };
    Some(match message {
        Some(message) => format!(
            "{} — {}",
            clip(&unframed(test), 120),
            clip(&unframed(message), 200)
        ),
        None => unframed(test),
    })
}

/// For a failed run with no error line: the line naming the most, the last of equals.
pub(crate) fn telling_line(result: &str) -> Option<&str> {
    let mut best: Option<(&str, i32)> = None;
    for line in result.lines().map(str::trim).filter(|line| {
        !line.is_empty() && !line.starts_with("Command exited") && !line.starts_with("at ")
    }) {
        let value = naming_score(line);
        if best.is_none_or(|(_, top)| value >= top) {
            best = Some((line, value));
        }
    }
    best.map(|(line, _)| line)
}

/// An error line without the box-drawing frame some tools print around it (`│ Error: …`).
pub(crate) fn unframed(line: &str) -> String {
    clip(line.trim().trim_start_matches(['│', '╷', '╵']).trim(), 240)
}
