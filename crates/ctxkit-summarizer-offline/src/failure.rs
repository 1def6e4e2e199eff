//! Whether a result's text reports a failure. A tool's error flag says only how the last command
//! of a pipe exited: agents run tests as `pytest -q 2>&1 | tail -5` or `make; echo EXIT=$?`, so a
//! failing run comes back as a success and only its output says it failed (QA r100: such a run was
//! listed as `Passed:`). Every result is read for a non-zero exit code; a command's output also for
//! the lines test runners, compilers and shells print when something failed: a failure verdict
//! (`FAILED`, `FAIL`), a count of failures (`1 failed`, `Failures: 2`), an error line (`error:`,
//! `Error:`, `fatal:`, `npm ERR!`), a Python traceback or a Rust panic, an exit status printed by
//! the command itself (`EXIT=1`, `exit status 2`).

/// Whether `output` reports a non-zero exit (`Command exited with code 2`, `Exit code: 1`, `EXIT=1`,
/// `exit status 2`).
pub fn reports_exit_failure(output: &str) -> bool {
    let lower = output.to_lowercase();
    [
        "exited with code ",
        "exit code: ",
        "exit code ",
        "exit code=",
        "exit=",
        "exit status ",
        "exit_code=",
        "status=",
    ]
    .iter()
    .any(|marker| {
        lower.match_indices(marker).any(|(index, _)| {
            // `status=` alone is too common a word ending; only as `exit status=`-like fields.
            let field = *marker != "status=" || lower[..index].ends_with("exit ");
            field
                && lower[index + marker.len()..]
                    .chars()
                    .next()
                    .is_some_and(|digit| digit.is_ascii_digit() && digit != '0')
        })
    })
}

/// Whether a command's `output` reports that it failed: its exit (above) or one of its lines.
pub fn reports_command_failure(output: &str) -> bool {
    reports_exit_failure(output) || output.lines().any(line_reports_failure)
}

/// Words that, as a whole uppercase word, are a test runner's or a build's verdict.
const VERDICTS: &[&str] = &["FAILED", "FAIL", "FAILURE", "FAILURES", "ERRORS"];

/// Lines starting with these report an error (compilers, git, Node, package managers).
const ERROR_STARTS: &[&str] = &[
    "error:",
    "error[",
    "Error:",
    "ERROR:",
    "fatal:",
    "fatal error:",
    "npm ERR!",
    "FAIL ",
    "--- FAIL",
    "Traceback (most recent call last)",
];

/// Anywhere in a line: a panic, a crash, a shell that could not run the command.
const ERROR_PARTS: &[&str] = &[
    "' panicked at ",
    "Traceback (most recent call last)",
    "Segmentation fault",
    ": command not found",
    "returned non-zero exit status",
];

/// Words after a count of failures (`1 failed`, `2 failing`, `3 errors`).
const FAILURE_COUNTS: &[&str] = &[
    "failed", "failing", "failures", "failure", "errors", "error",
];

/// Field names before a count of failures (`Failures: 1`, `failed=2`).
const FAILURE_FIELDS: &[&str] = &["failures", "failed", "errors"];

fn line_reports_failure(line: &str) -> bool {
    // Runners frame their summaries: `==== 1 failed in 0.02s ====`, `--- FAIL: TestX`.
    let trimmed = line.trim();
    let framed = trimmed.trim_start_matches(['=', '*', '#', ' ', '>']);
    if ERROR_STARTS
        .iter()
        .any(|start| trimmed.starts_with(start) || framed.starts_with(start))
        || ERROR_PARTS.iter().any(|part| line.contains(part))
    {
        return true;
    }
    let words: Vec<&str> = trimmed
        .split(|character: char| {
            !(character.is_alphanumeric() || character == '_' || character == '=')
        })
        .filter(|word| !word.is_empty())
        .collect();
    if words.iter().any(|word| VERDICTS.contains(word)) {
        return true;
    }
    words.windows(2).any(|pair| {
        let lower = pair[1].to_lowercase();
        // `1 failed`, not `Tests run: 5, Failures: 0`.
        let count_then_word = is_positive(pair[0])
            && FAILURE_COUNTS.contains(&lower.as_str())
            && trimmed.contains(&format!("{} {}", pair[0], pair[1]));
        let field_then_count =
            FAILURE_FIELDS.contains(&pair[0].to_lowercase().as_str()) && is_positive(pair[1]);
        count_then_word || field_then_count
    }) || words.iter().any(|word| {
        // `failed=2`, `errors=1` (unittest's `FAILED (failures=1)`, TAP-like summaries).
        word.split_once('=').is_some_and(|(field, count)| {
            FAILURE_FIELDS.contains(&field.to_lowercase().as_str()) && is_positive(count)
        })
    })
}

/// A whole number above zero.
pub fn is_positive(word: &str) -> bool {
    !word.is_empty()
        && word.chars().all(|character| character.is_ascii_digit())
        && word.chars().any(|character| character != '0')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What runners and shells print when something failed, each as a command's output.
    const FAILING: &[&str] = &[
        "F.\nFAILED test_calc.py::test_zero - AssertionError: expected ValueError\n1 failed, 1 passed in 0.02s",
        "=========== 1 failed, 3 passed in 0.10s ===========",
        "Traceback (most recent call last):\n  File \"calc.py\", line 3\nZeroDivisionError: division by zero\nEXIT=1",
        "   Compiling calc v0.1.0\nerror[E0308]: mismatched types\nerror: could not compile `calc`",
        "test result: FAILED. 2 passed; 1 failed; 0 ignored",
        "Tests:       1 failed, 4 passed, 5 total",
        "FAIL src/calc.test.js\n  ● divide › by zero",
        "--- FAIL: TestDivide (0.00s)\nFAIL\nexit status 1",
        "Ran 3 tests in 0.001s\n\nFAILED (failures=1)",
        "Tests run: 5, Failures: 1, Errors: 0, Skipped: 0",
        "thread 'main' panicked at src/main.rs:3:5:\nattempt to divide by zero",
        "npm ERR! Test failed.  See above for more details.",
        "bash: pytets: command not found",
        "  3 failing\n",
        "fatal: not a git repository (or any of the parent directories): .git",
        "Found 2 errors in 1 file.",
        "BUILD FAILED in 3s",
    ];

    /// Outputs of runs that went well, and of commands that only mention failures.
    const PASSING: &[&str] = &[
        "..\n2 passed in 0.01s",
        "test result: ok. 3 passed; 0 failed; 0 ignored",
        "Tests:       5 passed, 5 total",
        "ok  \texample.com/calc\t0.002s\nEXIT=0",
        "Ran 3 tests in 0.001s\n\nOK",
        "Tests run: 5, Failures: 0, Errors: 0, Skipped: 0",
        "src/lib.rs:12:    return Err(Error::NotFound); // error: handled by caller",
        "a1b2c3d fix the failed login redirect",
        "Found 0 errors.",
        "errors: 0 warnings: 2",
    ];

    #[test]
    fn failure_reports_of_runners_and_shells_are_read() {
        for output in FAILING {
            assert!(
                reports_command_failure(output),
                "not read as failed: {output}"
            );
        }
        for output in PASSING {
            assert!(!reports_command_failure(output), "read as failed: {output}");
        }
    }

    #[test]
    fn an_exit_code_of_zero_is_not_a_failure() {
        assert!(!reports_exit_failure("ok\nExit code: 0"));
        assert!(reports_exit_failure("Exit code: 2"));
        assert!(reports_exit_failure("make: done; EXIT=2"));
        assert!(!reports_exit_failure("retry_status=3"));
    }
}
