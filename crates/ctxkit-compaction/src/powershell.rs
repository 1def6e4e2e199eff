//! The files a PowerShell script reads or writes plainly, for shell calls of agents run on Windows
//! (Codex's `["powershell.exe", "-Command", SCRIPT]`).
//!
//! The idiom of such sessions names a file once and uses it through a variable:
//! `$path = 'src/a.py'; $content = Get-Content -Raw $path; …; Set-Content $path $content`. So a
//! script's `$name = 'literal'` assignments are followed, in order, and a cmdlet's path argument is
//! its `-Path`/`-LiteralPath`/`-FilePath` value or its first positional word, a literal or a
//! variable assigned one. Anything computed (`(Join-Path …)`, `"$dir/a.py"`, `$item.FullName`)
//! names no file plainly and is skipped. Words are split as PowerShell quotes them (a backslash is
//! a path separator, not an escape).

use std::collections::HashMap;

use crate::tool_paths::{FileAccess, is_plain_path};

/// Whether `program` (a path or a name, any case) starts Windows PowerShell or PowerShell 7.
pub(crate) fn is_powershell(program: &str) -> bool {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "powershell" | "powershell.exe" | "pwsh" | "pwsh.exe"
    )
}

/// The flag the script follows on a PowerShell command line, any case.
fn is_command_flag(word: &str) -> bool {
    matches!(word.to_ascii_lowercase().as_str(), "-command" | "-c" | "/c")
}

/// The script of a PowerShell command line's words: what follows `-Command` (or `-c`).
pub(crate) fn script_of(words: &[&str]) -> Option<String> {
    let position = words.iter().position(|word| is_command_flag(word))?;
    let script = words[position + 1..].join(" ");
    (!script.trim().is_empty()).then_some(script)
}

/// The script of a PowerShell command line written as one string (`pwsh -Command "…"`): the text
/// after `-Command` as written, without the quotes around it when it is quoted whole.
pub(crate) fn script_of_line(line: &str) -> Option<String> {
    let mut rest = line;
    loop {
        let trimmed = rest.trim_start();
        let word_end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
        let (word, after) = trimmed.split_at(word_end);
        if word.is_empty() {
            return None;
        }
        rest = after;
        if is_command_flag(word) {
            break;
        }
    }
    let script = rest.trim();
    let unquoted = ['"', '\'']
        .into_iter()
        .find_map(|quote| {
            script
                .strip_prefix(quote)
                .and_then(|inner| inner.strip_suffix(quote))
        })
        .unwrap_or(script);
    (!unquoted.trim().is_empty()).then(|| unquoted.to_owned())
}

/// The files a PowerShell script reads or writes, in order.
pub(crate) fn accesses(script: &str) -> Vec<(FileAccess, String)> {
    let mut variables: HashMap<String, String> = HashMap::new();
    let mut found = Vec::new();
    for statement in statements(&without_here_strings(script)) {
        let words = words(&statement);
        if let Some((name, value)) = assignment(&words) {
            match value {
                Some(literal) => variables.insert(name, literal),
                None => variables.remove(&name),
            };
            // The right side may itself run a cmdlet: `$c = Get-Content -Raw $path`.
            found.extend(cmdlet_access(&words[2..], &variables));
            continue;
        }
        found.extend(cmdlet_access(&words, &variables));
    }
    found
}

/// The script with each here-string (a line ending in `@'` or `@"`, up to a line starting with `'@`
/// or `"@`: a file's whole text, often) in place of one computed word, so its lines are not read as
/// statements. One pass over the lines.
fn without_here_strings(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let mut closing: Option<&str> = None;
    for line in script.split_inclusive('\n') {
        if let Some(close) = closing {
            if let Some(after) = line.strip_prefix(close) {
                closing = None;
                out.push_str(after);
            }
            continue;
        }
        let trimmed = line.trim_end();
        match ["@'", "@\""]
            .into_iter()
            .find(|opening| trimmed.ends_with(opening))
        {
            Some(opening) => {
                out.push_str(&trimmed[..trimmed.len() - opening.len()]);
                out.push_str("\"$here\"");
                closing = Some(if opening == "@'" { "'@" } else { "\"@" });
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Statements: split at `;`, new lines and pipes outside quotes.
fn statements(script: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for character in script.chars() {
        match (quote, character) {
            (Some(open), _) if character == open => {
                quote = None;
                current.push(character);
            }
            (Some(_), _) => current.push(character),
            (None, '\'' | '"') => {
                quote = Some(character);
                current.push(character);
            }
            (None, ';' | '\n' | '\r' | '|') => statements.push(std::mem::take(&mut current)),
            (None, _) => current.push(character),
        }
    }
    statements.push(current);
    statements
        .into_iter()
        .filter(|statement| !statement.trim().is_empty())
        .collect()
}

/// A word and whether any part of it was quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    quoted: bool,
}

/// Words as PowerShell splits them: white space outside quotes; `'…'` literal (`''` is a quote),
/// `"…"` with backtick escapes; parentheses and `=` stand alone.
fn words(statement: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut characters = statement.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '\'' => {
                quoted = true;
                while let Some(inner) = characters.next() {
                    if inner == '\'' {
                        if characters.peek() == Some(&'\'') {
                            characters.next();
                            current.push('\'');
                            continue;
                        }
                        break;
                    }
                    current.push(inner);
                }
            }
            '"' => {
                quoted = true;
                while let Some(inner) = characters.next() {
                    match inner {
                        '"' => break,
                        '`' => {
                            if let Some(escaped) = characters.next() {
                                current.push(escaped);
                            }
                        }
                        other => current.push(other),
                    }
                }
            }
            '(' | ')' | '=' => {
                flush(&mut current, &mut quoted, &mut words);
                words.push(Word {
                    text: character.to_string(),
                    quoted: false,
                });
            }
            white if white.is_whitespace() => flush(&mut current, &mut quoted, &mut words),
            other => current.push(other),
        }
    }
    flush(&mut current, &mut quoted, &mut words);
    words
}

/// Ends the word being read, if any.
fn flush(current: &mut String, quoted: &mut bool, words: &mut Vec<Word>) {
    if !current.is_empty() || *quoted {
        words.push(Word {
            text: std::mem::take(current),
            quoted: *quoted,
        });
    }
    *quoted = false;
}

/// `$name = VALUE`: the variable (lower case: PowerShell's names ignore case) and the literal it
/// now holds, or `None` when the value is computed.
fn assignment(words: &[Word]) -> Option<(String, Option<String>)> {
    let [variable, equals, rest @ ..] = words else {
        return None;
    };
    let name = variable.text.strip_prefix('$')?;
    if variable.quoted || equals.text != "=" || equals.quoted || name.is_empty() {
        return None;
    }
    let literal = match rest {
        [value] if value.quoted && !value.text.contains('$') => Some(value.text.clone()),
        _ => None,
    };
    Some((name.to_ascii_lowercase(), literal))
}

/// What a cmdlet statement does to a file, when its first word is one of the file cmdlets.
fn cmdlet_access(
    words: &[Word],
    variables: &HashMap<String, String>,
) -> Option<(FileAccess, String)> {
    let start = words.iter().position(|word| word.text != "(")?;
    let command = words[start].text.to_ascii_lowercase();
    let access = match command.as_str() {
        "get-content" | "gc" | "type" | "cat" => FileAccess::Read,
        "set-content" | "sc" | "new-item" | "ni" => FileAccess::Written,
        "add-content" | "ac" | "remove-item" | "del" | "rm" => FileAccess::Edited,
        "out-file" => {
            if has_switch(&words[start + 1..], "-append") {
                FileAccess::Edited
            } else {
                FileAccess::Written
            }
        }
        _ => return None,
    };
    let arguments = &words[start + 1..];
    if matches!(command.as_str(), "new-item" | "ni") && creates_directory(arguments) {
        return None;
    }
    let path = path_argument(arguments)?;
    let path = resolve(path, variables)?;
    is_plain_path(&path).then_some((access, path))
}

/// `-Path X`, `-LiteralPath X`, `-FilePath X`, or the first word that is no parameter or a
/// parameter's value.
fn path_argument(arguments: &[Word]) -> Option<&Word> {
    let mut index = 0;
    let mut positional = None;
    while index < arguments.len() {
        let word = &arguments[index];
        if word.text == "(" || word.text == ")" {
            break;
        }
        let lower = word.text.to_ascii_lowercase();
        if !word.quoted && lower.starts_with('-') && lower.len() > 1 {
            if matches!(lower.as_str(), "-path" | "-literalpath" | "-filepath") {
                return arguments.get(index + 1);
            }
            if TAKES_VALUE.contains(&lower.as_str()) {
                index += 1;
            }
        } else if positional.is_none() {
            positional = Some(word);
        }
        index += 1;
    }
    positional
}

/// Parameters of the file cmdlets that take a value (the rest are switches).
const TAKES_VALUE: &[&str] = &[
    "-encoding",
    "-value",
    "-itemtype",
    "-type",
    "-totalcount",
    "-head",
    "-first",
    "-tail",
    "-last",
    "-delimiter",
    "-readcount",
    "-width",
    "-inputobject",
    "-filter",
    "-include",
    "-exclude",
    "-name",
    "-stream",
];

fn has_switch(arguments: &[Word], switch: &str) -> bool {
    arguments
        .iter()
        .any(|word| !word.quoted && word.text.eq_ignore_ascii_case(switch))
}

/// `New-Item -ItemType Directory …` makes a folder, not a file.
fn creates_directory(arguments: &[Word]) -> bool {
    arguments.windows(2).any(|pair| {
        matches!(
            pair[0].text.to_ascii_lowercase().as_str(),
            "-itemtype" | "-type"
        ) && pair[1].text.eq_ignore_ascii_case("directory")
    })
}

/// A literal word as it is, a `$variable` as the literal it was assigned; else nothing.
fn resolve(word: &Word, variables: &HashMap<String, String>) -> Option<String> {
    match word.text.strip_prefix('$') {
        Some(name) if !word.quoted => variables.get(&name.to_ascii_lowercase()).cloned(),
        Some(_) => None,
        None if word.quoted && word.text.contains('$') => None,
        None => Some(word.text.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str) -> (FileAccess, String) {
        (FileAccess::Read, path.to_owned())
    }

    #[test]
    fn a_file_named_once_and_used_through_a_variable_is_followed() {
        let script = "$path = 'server/routes/recommend.py'; $content = Get-Content -Raw $path; \
                      $content = $content.Replace('a','b'); Set-Content $path $content";
        assert_eq!(
            accesses(script),
            [
                read("server/routes/recommend.py"),
                (FileAccess::Written, "server/routes/recommend.py".to_owned()),
            ]
        );
    }

    #[test]
    fn cmdlets_name_their_path_by_parameter_or_position_in_any_case() {
        assert_eq!(
            accesses("Get-Content -Path 'C:\\work\\a.ts' -TotalCount 40"),
            [read("C:\\work\\a.ts")]
        );
        assert_eq!(
            accesses("type README.md | Select-String TODO"),
            [read("README.md")]
        );
        assert_eq!(
            accesses("set-content -Encoding utf8 -Value 'x' notes.txt"),
            [(FileAccess::Written, "notes.txt".to_owned())]
        );
        assert_eq!(
            accesses("'line' | Out-File -FilePath log.txt -Append"),
            [(FileAccess::Edited, "log.txt".to_owned())]
        );
        assert_eq!(
            accesses("Add-Content $f 'more'"),
            [],
            "a variable never assigned a literal names nothing"
        );
    }

    #[test]
    fn folders_computed_paths_and_reassigned_variables_name_nothing() {
        assert_eq!(accesses("New-Item -ItemType Directory -Force src/api"), []);
        assert_eq!(
            accesses("Set-Content (Join-Path $root 'a.py') $text; Get-Content \"$dir/b.py\""),
            []
        );
        assert_eq!(
            accesses("$p = 'a.py'; $p = Get-Item x; Set-Content $p 'y'"),
            [],
            "after `$p = Get-Item …` the variable holds no literal"
        );
        assert_eq!(
            accesses("New-Item -ItemType File tests/__init__.py"),
            [(FileAccess::Written, "tests/__init__.py".to_owned())]
        );
    }

    #[test]
    fn quotes_split_as_powershell_splits_them() {
        assert_eq!(
            accesses("Get-Content 'it''s here.md'; Get-Content \"a`\"b.md\""),
            [read("it's here.md"), read("a\"b.md")]
        );
        assert_eq!(
            accesses("$x = 'a;b.md'; Get-Content $x"),
            [read("a;b.md")],
            "a `;` inside quotes does not end the statement"
        );
    }

    #[test]
    fn a_here_string_is_one_value_and_its_lines_are_not_statements() {
        let script = "$path = 'docs/plan.md'\n$text = @\"\nGet-Content secret.txt; it's \"quoted\"\n\"@\n\
                      Set-Content -Path $path -Value $text\n$more = @'\nSet-Content x.md\n'@\n\
                      Add-Content $path $more";
        assert_eq!(
            accesses(script),
            [
                (FileAccess::Written, "docs/plan.md".to_owned()),
                (FileAccess::Edited, "docs/plan.md".to_owned()),
            ]
        );
    }

    #[test]
    fn hostile_scripts_are_read_in_one_pass() {
        // Each `@'` could open a here-string: a scan per opening would take hours on this.
        let openings = "@'".repeat(500_000);
        assert_eq!(accesses(&openings), []);
        let statements = "Get-Content a.md;".repeat(100_000);
        assert_eq!(accesses(&statements).len(), 100_000);
    }

    #[test]
    fn a_command_line_gives_its_script() {
        assert!(is_powershell("powershell.exe"));
        assert!(is_powershell(
            "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"
        ));
        assert!(is_powershell("pwsh"));
        assert!(!is_powershell("bash"));
        assert_eq!(
            script_of(&[
                "powershell.exe",
                "-NoLogo",
                "-NoProfile",
                "-Command",
                "Get-Content a.md"
            ]),
            Some("Get-Content a.md".to_owned())
        );
        assert_eq!(script_of(&["pwsh", "-NoLogo"]), None);
        assert_eq!(
            script_of_line("pwsh -NoProfile -Command \"Get-Content 'a  b.md'\""),
            Some("Get-Content 'a  b.md'".to_owned())
        );
        assert_eq!(script_of_line("pwsh -NoProfile"), None);
    }
}
