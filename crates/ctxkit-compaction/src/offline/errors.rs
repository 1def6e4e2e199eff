//! What an output line is when a run fails: an error line (a message, a failing test, a coded
//! compiler error), and whether it is the error itself or a build driver's generic banner.

/// Marks of an error line (case-sensitive, so `isError: boolean` in code does not count).
const ERROR_MARKS: &[&str] = &[
    "error[",
    "error:",
    "Error:",
    "ERROR",
    "FAILED",
    "FAIL ",
    "failed",
    "panicked",
    "Traceback",
    "npm ERR!",
    "fatal:",
    "Exception",
    "No such file",
    "not found",
    "Could not find",
    "cannot find",
    "Cannot find",
    "--- FAIL",
    "FAIL:",
    " is invalid",
    "Failure:",
    "Failed ",
];

/// Whether a line is a frame of a pasted stack trace: it opens like one (`at …`, `(app 0.1.0) …`,
/// `File "…"`, `from …`) and names a `file:line` location. Its versions and names are the trace's,
/// not the user's words.
pub(crate) fn is_stack_frame(line: &str) -> bool {
    let trimmed = line.trim_start();
    let opens_like_frame = ["at ", "(", "File \"", "from "]
        .iter()
        .any(|opening| trimmed.starts_with(opening));
    let located = trimmed.split_whitespace().any(|word| {
        word.split(':')
            .nth(1)
            .is_some_and(|number| !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
            && word
                .split(':')
                .next()
                .is_some_and(|file| file.contains('.'))
    });
    opens_like_frame && (located || (trimmed.starts_with("File \"") && trimmed.contains(", line ")))
}

/// Whether a result line reads as an error message rather than code that mentions errors or a
/// summary line that reports none (`test result: ok. 3 passed; 0 failed`).
pub(crate) fn is_error_line(line: &str) -> bool {
    let trimmed = line.trim();
    let cleared = crate::offline::text::without_zero_counts(trimmed);
    !trimmed.is_empty()
        && utf16_short(trimmed)
        && (!trimmed.starts_with(['?', '|', '}', '{', '(', ')', '*', '#', '/', '-', '+', '@'])
            || trimmed.starts_with("--- FAIL")
            || starts_with_location(trimmed))
        && !trimmed.starts_with("//")
        && !trimmed.contains("=>")
        && !trimmed.starts_with("Command exited with code")
        && !trimmed.ends_with([';', '{', ','])
        && !trimmed.to_lowercase().contains("test result: ok")
        && !is_located_warning(trimmed)
        && (ERROR_MARKS.iter().any(|mark| cleared.contains(mark))
            || has_coded_error(trimmed)
            || is_located_diagnostic(trimmed))
}

/// Whether a line is a compiler's error at a location in the short form of Kotlin's compiler
/// (`e: file:///src/Config.kt:12:9 Unresolved reference 'X'.`, `e: /src/A.kt: (3, 2): …`): the
/// error itself, which outranks the build tool's banners around it.
pub(crate) fn is_located_diagnostic(line: &str) -> bool {
    line.trim().strip_prefix("e: ").is_some_and(|rest| {
        rest.starts_with("file://") || starts_with_location(rest) || {
            let first = rest.split_whitespace().next().unwrap_or_default();
            first.ends_with(':') && first.contains('.') && first.contains('/')
        }
    })
}

/// Whether a line starts with a `file:line` location (`/src/a.cpp:48:8: error: …`) or a
/// compiler's `file(line,col):` one (`/src/Api/Export.cs(48,31): error CS1061: …`), which an
/// absolute path also does.
fn starts_with_location(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or_default();
    let numbers =
        |text: &str| !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || c == ',');
    let parenthesized = first
        .strip_suffix("):")
        .and_then(|head| head.rsplit_once('('))
        .is_some_and(|(file, place)| file.contains('.') && numbers(place));
    let mut pieces = first.split(':');
    parenthesized
        || pieces.next().is_some_and(|file| file.contains('.'))
            && pieces.next().is_some_and(|number| {
                !number.is_empty() && number.chars().all(|c| c.is_ascii_digit())
            })
}

/// Whether a line is a compiler's warning at a location (`src/a.cs(3,5): warning CS0168: …`),
/// which is not an error whatever its message says.
fn is_located_warning(line: &str) -> bool {
    let mut words = line.split_whitespace();
    starts_with_location(line)
        && words
            .nth(1)
            .is_some_and(|word| word.trim_end_matches(':').eq_ignore_ascii_case("warning"))
}

/// The exception line of the last Python traceback in an output: the first line after the
/// `Traceback (most recent call last):` block's indented frames that names an exception
/// (`pyarrow.lib.ArrowInvalid: Schema at index 3 was different:`, `KeyError: 'id'`).
pub(crate) fn traceback_exception(output: &str) -> Option<&str> {
    let lines: Vec<&str> = output.lines().collect();
    let start = lines.iter().rposition(|line| {
        line.trim_start()
            .starts_with("Traceback (most recent call last)")
    })?;
    let indent = lines[start].len() - lines[start].trim_start().len();
    let line = lines[start + 1..].iter().find(|line| {
        let depth = line.len() - line.trim_start().len();
        !line.trim().is_empty() && depth <= indent
    })?;
    let name = line.trim().split(':').next().unwrap_or_default();
    let is_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    is_name.then_some(*line)
}

/// Whether a line reports a compiler's or analyzer's coded error (`error CS0246:`, `error
/// TS2322:`, `fatal error C1083:`): the word `error` followed by a code of capitals and digits.
pub(crate) fn has_coded_error(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.windows(2).any(|pair| {
        let code = pair[1].trim_end_matches(':');
        let letters = code.chars().take_while(char::is_ascii_uppercase).count();
        pair[0].eq_ignore_ascii_case("error")
            && pair[1].ends_with(':')
            && (1..=4).contains(&letters)
            && code.len() > letters + 1
            && code[letters..].chars().all(|c| c.is_ascii_digit())
    })
}

/// Whether an edit tool's failure only says the text to replace was not found or not unique
/// (`Could not find the exact text in a.rs. The old text must match exactly…`, `String to replace
/// not found in file.`, `Found 2 matches of the string to replace`): the agent reads and retries,
/// and the work has no error to hand over.
pub(crate) fn is_edit_mismatch(result: &str) -> bool {
    let lower = result.to_lowercase();
    [
        "could not find the exact text",
        "old text must match",
        "string to replace not found",
        "old_string not found",
        "matches of the string to replace",
        "old_string is not unique",
        "must be unique",
        "found multiple occurrences",
    ]
    .iter()
    .any(|mark| lower.contains(mark))
}

fn utf16_short(line: &str) -> bool {
    line.len() < 400
}

/// Whether a word is a duration (`3.12s`, `850ms`): a bundler's banner says how long it failed in.
fn is_duration(word: &str) -> bool {
    let number = word.trim_end_matches(['m', 's']);
    number.len() < word.len()
        && word.ends_with('s')
        && number.starts_with(|c: char| c.is_ascii_digit())
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// Whether an error line is a build driver's generic banner rather than the error itself: a line
/// of `make`, `ninja` or npm (`make: *** [all] Error 1`, `npm ERR! code 1`), or one whose words
/// are only failure marks, numbers and the target that failed (`Build FAILED.`, `FAILED:
/// src/CMakeFiles/x.dir/a.cpp.o`).
pub(crate) fn is_generic_banner(line: &str) -> bool {
    let trimmed = line.trim();
    let traceback = trimmed.starts_with("Traceback (most recent call last)");
    // Gradle's banners: `> Task :api:compileKotlin FAILED`, `BUILD FAILED in 14s`, `FAILURE: Build
    // failed with an exception.`, `Execution failed for task ':api:test'.`
    let gradle = trimmed.starts_with("> Task ") && trimmed.ends_with("FAILED")
        || trimmed.starts_with("BUILD FAILED")
        || trimmed.starts_with("FAILURE: Build failed")
        || trimmed.starts_with("Execution failed for task ");
    let driver = [
        "make:",
        "make[",
        "gmake:",
        "ninja:",
        "npm error",
        "npm ERR!",
    ]
    .iter()
    .any(|prefix| trimmed.starts_with(prefix));
    let artifact = |word: &str| {
        word.rsplit_once('.').is_some_and(|(_, extension)| {
            ["o", "obj", "a", "so", "lib", "dll", "exe", "dylib"].contains(&extension)
        })
    };
    let mute = trimmed.split_whitespace().all(|word| {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        bare.is_empty()
            || bare.chars().all(|c| c.is_ascii_digit())
            || ["build", "failed", "error", "errors", "fail", "in", "x"]
                .contains(&bare.to_lowercase().as_str())
            || is_duration(bare)
            || artifact(bare)
    });
    traceback || gradle || driver || mute
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_frames_are_told_from_the_user_words() {
        for line in [
            "    (app 0.1.0) lib/app_web/live/index.ex:91: AppWeb.Index.low?/1",
            "    at Object.<anonymous> (src/load.ts:12:5)",
            "  File \"app/main.py\", line 12, in handler",
        ] {
            assert!(is_stack_frame(line), "{line}");
        }
        for line in [
            "bump the version to 0.4.2 in Cargo.toml",
            "(see src/load.ts for the loader)",
            "at least keep the 2.1.0 API",
        ] {
            assert!(!is_stack_frame(line), "{line}");
        }
    }
}
