//! Commands that only inspect (an artifact's sizes, a URL's headers, a read-only query), and
//! whether the assistant reported what such a command showed: an inspection is not work, and its
//! output is worth keeping only as a measurement the assistant told.

/// Programs that only inspect a built artifact or the network (`twiggy top`, `nm`, `dig`).
const INSPECTORS: &[&str] = &[
    "twiggy", "nm", "objdump", "readelf", "otool", "ldd", "bloaty", "strings", "xxd", "hexdump",
    "dig", "nslookup", "ping",
];

/// Statements that only read a database.
const READ_STATEMENTS: &[&str] = &["select ", "show ", "describe ", "desc ", "explain "];

/// Words of a statement that writes.
const WRITE_WORDS: &[&str] = &[
    "insert ",
    "update ",
    "delete ",
    "drop ",
    "create ",
    "alter ",
    "truncate ",
    "merge ",
    "grant ",
];

/// Whether a segment only inspects: an artifact inspector (`twiggy top`), a request for headers
/// only (`curl -sI`, `curl --head`, `wget --spider`), or a database client given a statement that
/// only reads (`snowsql -q "select …"`, `psql -c 'SELECT …'`).
pub(crate) fn is_inspection(segment: &str) -> bool {
    let words: Vec<&str> = segment
        .split_whitespace()
        .skip_while(|word| word.contains('=') && !word.starts_with('-'))
        .collect();
    let first = words.first().copied().unwrap_or_default();
    let program = first.rsplit('/').next().unwrap_or(first);
    let headers_only = matches!(program, "curl" | "wget" | "http")
        && words
            .iter()
            .any(|word| matches!(*word, "--head" | "--spider") || is_short_flag_with(word, 'I'));
    let lower = segment.to_lowercase();
    let reads_only = ['"', '\'']
        .iter()
        .filter_map(|quote| {
            lower
                .split_once(*quote)
                .map(|(_, quoted)| quoted.trim_start())
        })
        .any(|statement| {
            READ_STATEMENTS
                .iter()
                .any(|read| statement.starts_with(read))
        })
        && !WRITE_WORDS.iter().any(|word| lower.contains(word));
    INSPECTORS.contains(&program) || headers_only || reads_only
}

/// Whether a segment installs dependencies or builds with its tests skipped, its output silenced
/// (`pip install -r requirements.txt -q`, `npm ci --silent`, `mvn -q package -DskipTests`): done
/// before a look, it only prepares that look. A segment that runs tests (`cargo test -q`,
/// `pytest -q`) is never one.
pub(crate) fn is_quiet_install(segment: &str) -> bool {
    let words: Vec<&str> = segment.split_whitespace().collect();
    let skips_tests = words.iter().any(|word| {
        let option = word.to_ascii_lowercase();
        option.starts_with('-') && option.contains("skip") && option.contains("test")
    });
    let runs_tests = words
        .iter()
        .any(|word| !word.starts_with('-') && word.to_ascii_lowercase().contains("test"));
    (words
        .iter()
        .take(3)
        .any(|word| matches!(*word, "install" | "ci" | "sync" | "add"))
        || skips_tests)
        && !runs_tests
        && words.iter().any(|word| {
            matches!(*word, "--quiet" | "--silent" | "-qq") || is_short_flag_with(word, 'q')
        })
}

/// Whether `word` is a group of short flags holding `letter` (`-sI`, `-qq`).
fn is_short_flag_with(word: &str, letter: char) -> bool {
    word.starts_with('-')
        && !word.starts_with("--")
        && word.contains(letter)
        && word.chars().skip(1).all(|c| c.is_ascii_alphabetic())
}

/// Whether a later message of the assistant reports a number of `measured` (`740MB` told as
/// "740 MB"): numbers of two digits or more, matched whole.
pub(crate) fn reported(measured: &str, after: usize, reports: &[(usize, String)]) -> bool {
    let numbers = numbers_in(measured);
    reports
        .iter()
        .filter(|(position, _)| *position > after)
        .any(|(_, text)| {
            let told = numbers_in(text);
            numbers.iter().any(|number| told.contains(number))
        })
}

/// The numbers of a text (`1.27`, `740`), of two digits or more.
fn numbers_in(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|word| word.trim_matches('.'))
        .filter(|word| word.chars().filter(char::is_ascii_digit).count() >= 2)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::work::is_side_command;

    #[test]
    fn inspections_are_side_commands() {
        assert!(is_side_command("twiggy top -n 10 pkg/app_bg.wasm"));
        assert!(is_side_command("curl -sI https://cdn.example.com/app.js"));
        assert!(is_side_command(
            "psql -h db -c \"SELECT id, count(*) FROM t GROUP BY 1\""
        ));
        assert!(!is_side_command(
            "curl -s -X POST localhost:8080/api/orders -d '{}'"
        ));
        assert!(!is_side_command("psql -c \"UPDATE t SET a = 1\""));
        assert!(!is_side_command("mysql -e 'select 1' && npm test"));
        assert!(is_side_command(
            "pip install -r requirements.txt --no-deps -q && python --version"
        ));
        assert!(!is_side_command("pip install -r requirements.txt -q"));
        assert!(!is_side_command(
            "pip install -r requirements.txt && python --version"
        ));
        assert!(!is_side_command("npm ci --silent && npm test"));
        assert!(is_side_command(
            "mvn -q package -DskipTests && ls -l target/*.jar"
        ));
        assert!(!is_side_command(
            "mvn package -DskipTests && ls -l target/*.jar"
        ));
        assert!(!is_side_command("mvn -q package && ls -l target/*.jar"));
        assert!(!is_side_command("cargo test -q && ls -l target"));
    }

    #[test]
    fn a_measurement_counts_when_the_assistant_tells_it() {
        let reports = vec![
            (2, "The image is 512 MB.".to_owned()),
            (5, "The image is 740 MB now.".to_owned()),
        ];
        assert!(reported("740MB", 3, &reports));
        assert!(!reported("740MB", 5, &reports));
        assert!(!reported("1882013 100.00% [2990 Total Rows]", 0, &reports));
    }
}
