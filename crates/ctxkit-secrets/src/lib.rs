//! Credentials for ctxkit: API keys wrapped so they cannot leak through `Debug`, `Display` or error
//! messages, redaction of keys a provider echoes back, and which environment variables hold
//! credentials a child process must not inherit.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::fmt;

mod command_passwords;
mod encoded;
mod environment;
mod fragments;
mod scrub;
mod shapes;
mod spelled_out;
mod urls;

pub use environment::{
    ThreadsRunning, environment_variable, keep_process_private, passed_secret_variables,
    secret_environment_values, take_secret_environment,
};
pub use shapes::{assigned_secrets, redact_for_keeping, redact_key_shapes};
pub use urls::{has_credentials, redact_credentials, url_credentials};

/// An API key. `Debug` prints `ApiKey(<redacted>)`; the only way to read it is
/// [`ApiKey::expose_secret`], which providers call when building request headers.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for an `Authorization`-like header. Never log or format it.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("ApiKey(<redacted>)")
    }
}

/// `text` with every occurrence of the given secrets replaced by `<redacted>`: provider bodies may
/// echo the key they were sent ("Incorrect API key provided: sk-…"), also JSON-escaped
/// (`sk\u002d…`, `\/`) or percent-encoded (`sk%2D…`); each character of a secret is matched in any
/// of those forms. Secrets shorter than 8 characters are left alone (they would match ordinary
/// words). Credentials recognised by their shape go too, known or not: `Basic <base64>` and
/// `Bearer <token>` values and the `user:password@` of URLs.
pub fn redact<'a>(text: &str, secrets: impl IntoIterator<Item = &'a str>) -> String {
    redact_known(&scrub::scrub(text), secrets)
}

/// `text` with every occurrence of the given secrets replaced by `<redacted>`, as [`redact`] does,
/// but nothing taken out for its shape: for a model's own writing, where a `Bearer ${TOKEN}` or a
/// `postgres://app:pw@localhost` is code, not a credential.
///
/// A piece of a secret is a secret too: any run of `fragments::FRAGMENT_BYTES` characters or
/// more of one goes, wherever it stands (QA: an `edit` that put a line break after `sk-ant-` in
/// `.env` showed the rest of the key in the diff and every later `read`).
pub fn redact_known<'a>(text: &str, secrets: impl IntoIterator<Item = &'a str>) -> String {
    Redactor::new(secrets).redact_known(text)
}

/// Whether `text` is what [`Redactor::redact_known`] gives for a text that spells a key out (a
/// dump of it, spaced out or reversed): the text was withheld whole.
pub fn is_withheld(text: &str) -> bool {
    text == spelled_out::WITHHELD
}

/// [`redact`] and [`redact_known`] for one set of secrets, prepared once (the automaton that
/// finds pieces of them): for many texts, such as every file a search reads.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
    fragments: fragments::Fragments,
    /// The secrets' letters and digits alone, in lower case (`spelled_out`), and those too short
    /// for a fragment's window.
    skeletons: fragments::Fragments,
    short_skeletons: Vec<String>,
    /// The secrets' own windows, without their encoded spellings: what a dump's numbers, read
    /// back, are searched for (`spelled_out`).
    plain: fragments::Fragments,
}

impl Redactor {
    /// A redactor of `secrets` (those under 8 characters are left alone, as [`redact`] leaves
    /// them).
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let secrets: Vec<&str> = secrets
            .into_iter()
            .map(str::trim)
            .filter(|secret| secret.len() >= 8)
            .collect();
        let skeletons: Vec<String> = secrets
            .iter()
            .map(|secret| {
                secret
                    .chars()
                    .filter(char::is_ascii_alphanumeric)
                    .map(|character| character.to_ascii_lowercase())
                    .collect()
            })
            .collect();
        let short_skeletons = skeletons
            .iter()
            .filter(|skeleton| (8..=fragments::FRAGMENT_BYTES).contains(&skeleton.len()))
            .cloned()
            .collect();
        let skeletons: Vec<&str> = skeletons.iter().map(String::as_str).collect();
        Self {
            fragments: fragments::Fragments::new(&secrets),
            plain: fragments::Fragments::plain(&secrets),
            skeletons: fragments::Fragments::plain(&skeletons),
            short_skeletons,
            secrets: secrets.into_iter().map(str::to_owned).collect(),
        }
    }

    /// As [`redact`].
    pub fn redact(&self, text: &str) -> String {
        self.redact_known(&scrub::scrub(text))
    }

    /// As [`redact_known`].
    pub fn redact_known(&self, text: &str) -> String {
        let mut redacted = text.to_owned();
        for secret in &self.secrets {
            redacted = replace_encoded(&redacted, secret);
        }
        let before = redacted;
        let redacted = self.fragments.redact(&before);
        if self.secrets.is_empty() {
            return redacted;
        }
        // A piece taken out may have been a dump's: the dump is read before it was taken apart.
        let cut_dump = redacted != before && spelled_out::dump_holds_a_key(&before, &self.plain);
        if cut_dump
            || spelled_out::spells_out_a_key(
                &redacted,
                &self.plain,
                &self.skeletons,
                &self.short_skeletons,
            )
        {
            return spelled_out::WITHHELD.to_owned();
        }
        redacted
    }
}

/// `text` with `secret`, in any mix of literal, JSON-escaped and percent-encoded characters,
/// replaced by `<redacted>`. A spelling starts with the secret's first byte, `\` (an escape) or
/// `%`, so only those places are tried (`grep` redacts every file it searches).
fn replace_encoded(text: &str, secret: &str) -> String {
    let Some(&first) = secret.as_bytes().first() else {
        return text.to_owned();
    };
    let bytes = text.as_bytes();
    let mut result = String::with_capacity(text.len());
    let (mut copied, mut searched) = (0, 0);
    // Each place found is a character's first byte: an ASCII byte, or the first byte of the
    // secret's first character, never inside another character.
    while let Some(offset) = memchr::memchr3(first, b'\\', b'%', &bytes[searched..]) {
        let at = searched + offset;
        match text
            .get(at..)
            .and_then(|rest| encoded_match_length(rest, secret))
        {
            Some(length) => {
                result.push_str(&text[copied..at]);
                result.push_str("<redacted>");
                copied = at + length;
                searched = copied;
            }
            None => searched = at + 1,
        }
    }
    result.push_str(&text[copied..]);
    result
}

/// How many bytes at the start of `text` spell `secret`, if they do.
fn encoded_match_length(text: &str, secret: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut position = 0;
    for character in secret.chars() {
        let rest = text.get(position..)?;
        if rest.starts_with(character) {
            position += character.len_utf8();
            continue;
        }
        let code = u32::from(character);
        let escaped = rest
            .strip_prefix("\\u")
            .and_then(|hex| hex.get(..4))
            .and_then(|hex| u32::from_str_radix(hex, 16).ok());
        if escaped == Some(code) {
            position += 6;
        } else if character == '/' && rest.starts_with("\\/") {
            position += 2;
        } else if bytes.get(position) == Some(&b'%')
            && rest
                .get(1..3)
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                == Some(code)
        {
            position += 3;
        } else {
            return None;
        }
    }
    Some(position)
}

/// Whether an environment variable holds a credential a child process (a hook, the agent's
/// `bash` tool) must not see unless passed on purpose: provider keys and well-known tokens.
pub fn is_secret_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AZURE_CLIENT_SECRET",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "DATABASE_URL",
        // ctxkit's own store URL may hold a database password (`postgres://user:password@…`).
        "CTXKIT_STORE",
        "PGPASSWORD",
        "MYSQL_PWD",
        "NPM_CONFIG__AUTH",
        // Unlock a password manager's whole vault (Bitwarden), sign a Rails app's cookies, log in
        // to every registry docker knows (QA r99).
        "BW_SESSION",
        "SECRET_KEY_BASE",
        "DOCKER_AUTH_CONFIG",
        // A credential under a bare name.
        "AUTH",
        "CREDENTIALS",
        "PASSWORD",
        "PASSWD",
        "SECRET",
        "TOKEN",
        "JWT",
        // The bare names of a key, a bearer token, a cookie (QA 2026-12-07: they reached `bash`).
        "APIKEY",
        "API_KEY",
        "KEY",
        "BEARER",
        "BEARER_TOKEN",
        "COOKIE",
        "SESSION",
        // What `sshpass -e` reads, duplicity's and others' passphrase, a bare password, a
        // SonarQube token under its old name (QA 2026-12-07: they reached `bash`).
        "SSHPASS",
        "PASSPHRASE",
        "PASS",
        "SONAR_LOGIN",
    ];
    const SUFFIXES: &[&str] = &[
        "_API_KEY",
        "_APIKEY",
        "_TOKEN",
        "_SECRET",
        "_SECRET_KEY",
        "_ACCESS_KEY",
        "_PASSWORD",
        "_PASSWD",
        "_CREDENTIALS",
        "_AUTH_TOKEN",
        "_AUTHTOKEN",
        // `OPENAI_KEY`, `STRIPE_KEY`, `PRIVATE_KEY`, `SIGNING_KEY`.
        "_KEY",
        "_PASS",
        "_PASSPHRASE",
        "_PWD",
        // `LDAP_BIND_PW`, `SMTP_PW`.
        "_PW",
        // A webhook's URL is its secret (`SLACK_WEBHOOK_URL`); a DSN or a connection string holds
        // a key or a password.
        "_WEBHOOK",
        "_WEBHOOK_URL",
        "_DSN",
        "_CONNECTION_STRING",
        // A personal access token (`GITHUB_PAT`, `GITLAB_PAT`, `AZURE_DEVOPS_EXT_PAT`); a login
        // (`BASIC_AUTH`); a session cookie (`SESSION_COOKIE`).
        "_PAT",
        "_AUTH",
        "_COOKIE",
        "_BEARER",
        // A signed token standing for a login: GitLab's `CI_JOB_JWT`, an OIDC `ID_TOKEN_JWT` (QA r103).
        "_JWT",
        "_JWT_V1",
        "_JWT_V2",
    ];
    // A signed-in session of 1Password's CLI, one per account (`OP_SESSION_myteam`).
    const PREFIXES: &[&str] = &["OP_SESSION_"];
    let upper = name.to_ascii_uppercase();
    EXACT.contains(&upper.as_str())
        || upper.contains("API_KEY")
        || SUFFIXES.iter().any(|suffix| upper.ends_with(suffix))
        || PREFIXES.iter().any(|prefix| upper.starts_with(prefix))
}

/// Whether the environment variable `name` holding `value` is secret: by its name
/// ([`is_secret_variable`]), or because its value is a URL with credentials
/// (`OPENAI_BASE_URL=https://user:password@gateway/v1`).
pub fn is_secret_entry(name: &str, value: &str) -> bool {
    is_secret_variable(name) || has_credentials(value)
}

/// Of the `variables` (a process's environment, names and values), the names to remove from a
/// child's environment: the secret ones ([`is_secret_entry`]), except those `pass` names (a
/// setting that passes them on purpose).
pub fn secret_variables_for_child(
    variables: impl IntoIterator<Item = (String, String)>,
    pass: &[String],
) -> Vec<String> {
    variables
        .into_iter()
        .filter(|(name, value)| {
            is_secret_entry(name, value) && !pass.iter().any(|passed| passed == name)
        })
        .map(|(name, _)| name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_known_takes_out_the_secrets_and_leaves_what_only_looks_like_one() {
        let text = "key sk\\u002dtest-01234567 at https://app:pw@host and Bearer abcDEF123456";
        assert_eq!(
            redact_known(text, ["sk-test-01234567"]),
            "key <redacted> at https://app:pw@host and Bearer abcDEF123456"
        );
        assert_eq!(
            redact(text, ["sk-test-01234567"]),
            "key <redacted> at https://<redacted>@host and Bearer <redacted>"
        );
    }

    #[test]
    fn provider_keys_and_tokens_are_secret_variables() {
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "npm_token",
            // Names a tester's `env` showed to the model's `bash`.
            "DB_PASS",
            "PRIVATE_KEY",
            "OPENAI_KEY",
            "CREDENTIALS",
            "AUTH",
            "SLACK_WEBHOOK_URL",
            "SENTRY_DSN",
            "GPG_PASSPHRASE",
            "DB_PWD",
            // QA r99: reached the model's `bash` through a script it wrote.
            "BW_SESSION",
            "DOCKER_AUTH_CONFIG",
            "GITHUB_PAT",
            "GITLAB_PAT",
            "OP_SESSION_myteam",
            "SECRET_KEY_BASE",
            // QA r103: GitLab's job token reached the model's `bash`.
            "CI_JOB_JWT",
            "CI_JOB_JWT_V2",
            "JWT",
            // QA 2026-12-07: a password tool's and a backup tool's variables reached `bash`.
            "SSHPASS",
            "PASSPHRASE",
            "PASS",
            "LDAP_BIND_PW",
            "SONAR_LOGIN",
            // QA 2026-12-07: bare names reached the model's `bash`.
            "APIKEY",
            "BEARER",
            "COOKIE",
            "MY_BEARER",
        ] {
            assert!(is_secret_variable(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "SSH_AUTH_SOCK",
            "CTXKIT_HOME",
            "PWD",
            "OLDPWD",
            "KEYTIMEOUT",
            "GPG_TTY",
            "XDG_SESSION_TYPE",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            assert!(!is_secret_variable(name), "{name}");
        }
        // QA: a gateway's password in `OPENAI_BASE_URL` reached every `bash` command.
        let variables = [
            ("PATH", "/usr/bin"),
            ("OPENAI_API_KEY", "sk-x"),
            ("GITHUB_TOKEN", "ghp_x"),
            (
                "OPENAI_BASE_URL",
                "https://gwuser:hunter2pass@gw.example.com/v1",
            ),
            ("UPSTREAM", "https://github.com/o/r"),
        ]
        .map(|(name, value)| (name.to_owned(), value.to_owned()));
        assert_eq!(
            secret_variables_for_child(variables, &["GITHUB_TOKEN".to_owned()]),
            ["OPENAI_API_KEY", "OPENAI_BASE_URL"]
        );
    }

    #[test]
    fn echoed_secrets_are_redacted() {
        let text = "Incorrect API key provided: sk-secret-123. Header: token-abcdefgh";
        assert_eq!(
            redact(text, ["sk-secret-123", "token-abcdefgh", "short"]),
            "Incorrect API key provided: <redacted>. Header: <redacted>"
        );
        assert_eq!(redact("a short word", ["short"]), "a short word");
        // Escaped echoes (issue 17): JSON `\u002d`, `\/` and percent-encoding, mixed.
        let escaped =
            r#"{"error":"bad key sk\u002dsecret\u002D123 and sk%2Dsecret-123, a\/b-cdefgh"}"#;
        assert_eq!(
            redact(escaped, ["sk-secret-123", "a/b-cdefgh"]),
            r#"{"error":"bad key <redacted> and <redacted>, <redacted>"}"#
        );
        assert_eq!(redact("naïve text ✓", ["sk-secret-123"]), "naïve text ✓");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(
            format!("{:?}", Some(key.clone())),
            "Some(ApiKey(<redacted>))"
        );
        assert_eq!(key.expose_secret(), "sk-secret-123");
    }
}
