//! Passwords given to a command on its command line, which have no shape and no name of their
//! own: `mysql -pSECRET` (and `mysqldump`, `mysqladmin`, `mariadb`), `sshpass -p SECRET`,
//! `redis-cli -a SECRET`, `docker login -p SECRET` (or `--password`), `curl -u user:SECRET` (or
//! `--user`), and any `--password SECRET`. A shared page and a summary showed them whole (QA
//! 2026-12-07); `--password=SECRET` is a value given to a secret's name, which `shapes` takes.

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

/// The words one of which a text holds, in any case, before [`COMMAND_PASSWORD`] is searched for:
/// most texts hold none, and are let go after one pass of an automaton.
const COMMAND_WORDS: &[&str] = &[
    "mysql",
    "mariadb",
    "sshpass",
    "redis-cli",
    "docker",
    "curl",
    "--password",
];

static WORDS: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(COMMAND_WORDS)
        .ok()
});

/// The commands and flags; the password is the one group of [`VALUE_GROUPS`] that matched, after
/// an opening quote if any (`-p'…'`, `-a "…"`, JSON's `\"…\"`). A command's name and `--password`
/// are read in any case, a one-letter flag as it is (`mysql -P` is the port). A command's flags are
/// read up to the end of its command (a line end, `|`, `;`, `&`). ASCII word boundaries keep the
/// search on the regex engine's fast automaton whatever the text.
const COMMAND_PASSWORD: &str = concat!(
    r#"(?-u:\b)(?i:mysql|mysqldump|mysqladmin|mariadb)(?-u:\b)[^\n|;&]*?\s-p"#,
    r#"(?:\\?["'])?(?P<v0>[^\s'"\\]+)"#,
    r#"|(?-u:\b)(?i:sshpass)\s+-p\s*(?:\\?["'])?(?P<v1>[^\s'"\\]+)"#,
    r#"|(?-u:\b)(?i:redis-cli)(?-u:\b)[^\n|;&]*?\s-a\s+(?:\\?["'])?(?P<v2>[^\s'"\\]+)"#,
    r#"|(?-u:\b)(?i:docker\s+login)(?-u:\b)[^\n|;&]*?\s(?:-p|(?i:--password))[\s=]+"#,
    r#"(?:\\?["'])?(?P<v3>[^\s'"\\]+)"#,
    r#"|(?-u:\b)(?i:curl)(?-u:\b)[^\n|;&]*?\s(?:-u|-U|(?i:--user|--proxy-user))[\s=]*"#,
    r#"(?:\\?["'])?[^\s:'"\\]+:(?P<v4>[^\s'"\\]+)"#,
    // `--password PW`, and an argument list's `"--password", "PW"`.
    r#"|(?i:--password)(?:\\?["'])?(?:\s*,\s*|\s+)(?:\\?["'])?(?P<v5>[^\s'"\\\-][^\s'"\\]*)"#,
);

/// The password's group in each alternative of [`COMMAND_PASSWORD`].
const VALUE_GROUPS: [&str; 6] = ["v0", "v1", "v2", "v3", "v4", "v5"];

static PASSWORD: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(COMMAND_PASSWORD).ok());

/// The shortest password taken for one: `mysql -pdb` is a database named `db` on some setups.
const MINIMUM_CHARACTERS: usize = 4;

/// Whether `value` is a password rather than what stands for one: a variable (`$MYSQL_PWD`,
/// `${PASS}`), a command's output (`$(cat f)`), a placeholder (`<password>`, `***`).
fn is_password(value: &str) -> bool {
    value.chars().count() >= MINIMUM_CHARACTERS
        && !value.starts_with(['$', '<', '*', '`'])
        && !value
            .chars()
            .all(|character| character == '*' || character == 'x')
}

/// `text` with every command-line password replaced by `<redacted>`.
pub(crate) fn redact_command_passwords(text: Cow<'_, str>) -> Cow<'_, str> {
    let (Some(pattern), Some(words)) = (PASSWORD.as_ref(), WORDS.as_ref()) else {
        return text;
    };
    if !words.is_match(text.as_ref()) || !pattern.is_match(&text) {
        return text;
    }
    let redacted = pattern.replace_all(&text, |found: &regex::Captures<'_>| {
        let whole = &found[0];
        match VALUE_GROUPS.iter().find_map(|group| found.name(group)) {
            Some(value) if is_password(value.as_str()) => {
                let start = value.start() - found.get(0).map_or(0, |whole| whole.start());
                format!(
                    "{}<redacted>{}",
                    &whole[..start],
                    &whole[start + value.len()..]
                )
            }
            Some(_) | None => whole.to_owned(),
        }
    });
    Cow::Owned(redacted.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(text: &str) -> String {
        redact_command_passwords(Cow::Borrowed(text)).into_owned()
    }

    #[test]
    fn the_pattern_compiles() {
        assert!(PASSWORD.is_some());
    }

    /// QA (2026-12-07): each reached a shared page whole.
    #[test]
    fn passwords_on_a_command_line_are_redacted() {
        for (text, shown) in [
            (
                "mysql -u root -pPwAlpha11xx db",
                "mysql -u root -p<redacted> db",
            ),
            (
                "mysqldump -h h -pS3cret! app > a.sql",
                "mysqldump -h h -p<redacted> app > a.sql",
            ),
            (
                "sshpass -p PwDelta44xx ssh host",
                "sshpass -p <redacted> ssh host",
            ),
            (
                "redis-cli -h r -a PwEcho55xx ping",
                "redis-cli -h r -a <redacted> ping",
            ),
            (
                "docker login -u me -p PwCharlie33 reg",
                "docker login -u me -p <redacted> reg",
            ),
            (
                "docker login --password PwC33x reg",
                "docker login --password <redacted> reg",
            ),
            (
                "curl -u admin:PwBravo22xx https://x",
                "curl -u admin:<redacted> https://x",
            ),
            (
                "curl --user 'admin:PwB22' https://x",
                "curl --user 'admin:<redacted>' https://x",
            ),
            (
                "psql --password hunter22 db",
                "psql --password <redacted> db",
            ),
            // QA (2026-12-07): quoted, upper case, attached, JSON-escaped, an argument list.
            ("mysql -p'PwQ1x' db", "mysql -p'<redacted>' db"),
            ("mysql -p\"PwQ1x\" db", "mysql -p\"<redacted>\" db"),
            ("sshpass -p 'PwQ1x' ssh h", "sshpass -p '<redacted>' ssh h"),
            (
                "redis-cli -a \"PwQ1x\" ping",
                "redis-cli -a \"<redacted>\" ping",
            ),
            ("tool --password 'PwQ1x'", "tool --password '<redacted>'"),
            (
                "curl -uadmin:PwQ1x https://x",
                "curl -uadmin:<redacted> https://x",
            ),
            (
                r#"{"c": "sshpass -p \"PwQ1x\" ssh"}"#,
                r#"{"c": "sshpass -p \"<redacted>\" ssh"}"#,
            ),
            (
                r#"["mysql", "--password", "PwQ1x"]"#,
                r#"["mysql", "--password", "<redacted>"]"#,
            ),
            ("tool --PASSWORD PwQ1x", "tool --PASSWORD <redacted>"),
            ("MYSQL -pPwQ1x", "MYSQL -p<redacted>"),
            (
                "CURL -U admin:PwQ1x https://x",
                "CURL -U admin:<redacted> https://x",
            ),
        ] {
            assert_eq!(redacted(text), shown, "{text}");
        }
    }

    #[test]
    fn what_stands_for_a_password_and_other_flags_are_kept() {
        for text in [
            "mysql -u root -p db",
            "mysql -u root -p$MYSQL_PWD db",
            "sshpass -p \"$PASS\" ssh host",
            "docker login --password-stdin reg",
            "curl -u admin https://x",
            "curl -o out.txt -s https://x",
            "cargo test -p ctxkit-cli",
            "redis-cli ping; ls -a /tmp",
            "the mysql docs say -p prompts",
            "mysql -P 3306 -h db",
            "docker login -p ${TOKEN} reg",
            r#"["mysql", "--password", "$MYSQL_PWD"]"#,
            "curl -u \"$USER:$PASS\" https://x",
        ] {
            assert_eq!(redacted(text), text);
        }
    }
}
