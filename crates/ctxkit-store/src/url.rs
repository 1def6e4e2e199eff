//! `store.url`: a directory of JSONL files, or a PostgreSQL URL. Printed only redacted.

use std::fmt;
use std::path::PathBuf;

use crate::error::{Result, StoreError};

/// Where sessions are stored.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// A sessions root of per-project folders of JSONL files (the default).
    Directory(PathBuf),
    /// A PostgreSQL database (`postgres://` or `postgresql://`, its scheme in lower case). The URL
    /// may hold a password: it is only shown through [`StoreUrl::redacted`] (and
    /// `Debug`/`Display`, which redact).
    Postgres(String),
}

/// What a database URL looks like, for messages.
pub const DATABASE_URL_FORM: &str = "postgres://USER@HOST:PORT/DB";

impl StoreUrl {
    /// Reads a setting's text: `postgres://…`/`postgresql://…` (the scheme in any case) is a
    /// database, `file://PATH` or a path a directory. Any other text that starts like a URL's
    /// scheme (`word:`) is refused, never taken for a directory named like a URL: a mistyped
    /// `postgres:/user:pw@host/db` would otherwise put sessions, and the password, into the
    /// folder's name. A directory whose name has a colon is written `./NAME`.
    pub fn parse(text: &str) -> Result<Self> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(StoreError::InvalidUrl {
                url: String::new(),
                reason: "empty".to_owned(),
            });
        }
        let Some(scheme) = scheme_of(trimmed) else {
            return Ok(Self::Directory(PathBuf::from(trimmed)));
        };
        let rest = &trimmed[scheme.len() + 1..];
        let lower = scheme.to_ascii_lowercase();
        let refused = |reason: &str| StoreError::InvalidUrl {
            url: format!("{scheme}:…"),
            reason: reason.to_owned(),
        };
        match (lower.as_str(), rest.strip_prefix("//")) {
            ("file", Some(path)) => Ok(Self::Directory(PathBuf::from(path))),
            ("file", None) => Err(refused("a directory is a path, or `file:///PATH`")),
            ("postgres" | "postgresql", Some(_)) => {
                let url = format!("{lower}:{rest}");
                check_database_url(&url)?;
                Ok(Self::Postgres(url))
            }
            ("postgres" | "postgresql", None) => Err(refused(&format!(
                "a database URL starts with `{lower}://` (two slashes)"
            ))),
            _ => Err(refused("not a directory or a `postgres://` URL")),
        }
    }

    /// The URL with any password (and user) replaced, for messages and logs.
    pub fn redacted(&self) -> String {
        match self {
            Self::Directory(path) => path.display().to_string(),
            Self::Postgres(url) => redact_url(url),
        }
    }

    /// Is this a database store?
    pub fn is_database(&self) -> bool {
        matches!(self, Self::Postgres(_))
    }

    /// Does the URL hold a password (in its user information or a `password=` parameter)?
    pub fn has_password(&self) -> bool {
        let Self::Postgres(url) = self else {
            return false;
        };
        url::Url::parse(url).is_ok_and(|parsed| {
            parsed.password().is_some()
                || parsed
                    .query_pairs()
                    .any(|(key, _)| key.eq_ignore_ascii_case("password"))
        })
    }
}

/// The scheme `text` starts with (RFC 3986: a letter, then letters, digits, `+`, `-` or `.`,
/// ending at a `:`), if it does.
fn scheme_of(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once(':')?;
    let mut characters = scheme.chars();
    let starts = characters
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic());
    let continues = characters
        .all(|character| character.is_ascii_alphanumeric() || matches!(character, '+' | '-' | '.'));
    (starts && continues).then_some(scheme)
}

/// Refuses a `postgres://` URL the database driver could not connect with (a bad port, an
/// unknown parameter), before anything connects.
fn check_database_url(url: &str) -> Result<()> {
    crate::postgres::tls::read_url(url).map(drop)
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Directory(path) => formatter.debug_tuple("Directory").field(path).finish(),
            Self::Postgres(_) => formatter
                .debug_tuple("Postgres")
                .field(&self.redacted())
                .finish(),
        }
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.redacted())
    }
}

/// How `text`, given as a store, may be shown: a store URL redacted ([`StoreUrl::redacted`]), a
/// directory as it is, and text that is neither only up to its scheme (`postgres:…`), since the
/// rest may hold a password the URL's syntax no longer marks.
pub fn shown_store_text(text: &str) -> String {
    match StoreUrl::parse(text) {
        Ok(url) => url.redacted(),
        Err(_) => match scheme_of(text.trim()) {
            Some(scheme) => format!("{scheme}:…"),
            None => text.to_owned(),
        },
    }
}

/// `text` with the userinfo of a URL replaced by `***` and a `password=` query value hidden;
/// text that is not a URL is returned as it is when it holds no `@`, else hidden whole.
pub fn redact_url(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(mut parsed) => {
            let had_user = !parsed.username().is_empty() || parsed.password().is_some();
            if had_user {
                let _ = parsed.set_password(None);
                let _ = parsed.set_username("***");
            }
            let pairs: Vec<(String, String)> = parsed
                .query_pairs()
                .map(|(key, value)| {
                    if key.eq_ignore_ascii_case("password") {
                        (key.into_owned(), "***".to_owned())
                    } else {
                        (key.into_owned(), value.into_owned())
                    }
                })
                .collect();
            if !pairs.is_empty() {
                parsed.query_pairs_mut().clear().extend_pairs(pairs);
            }
            parsed.to_string()
        }
        Err(_) if text.contains('@') => "(a URL that could not be read; hidden)".to_owned(),
        Err(_) => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store text that is not a store URL is shown only up to its scheme: its password may sit
    /// where the URL's syntax no longer says so (`config list`).
    #[test]
    fn a_store_text_is_shown_without_its_password() {
        for (text, shown) in [
            ("postgres://bob:s3cret@db/x", "postgres://***@db/x"),
            (
                "postgres://db/x?password=s3cret",
                "postgres://db/x?password=***",
            ),
            ("postgres://bob:s3cret", "postgres:…"),
            ("postgres:bob:s3cret@db/x", "postgres:…"),
            (
                "postgres://db/x?sslmode=require&PassWord=s3cret",
                "postgres:…",
            ),
            ("postgres://bob:s3c@ret@[::1", "postgres:…"),
            ("/srv/sessions", "/srv/sessions"),
        ] {
            assert_eq!(shown_store_text(text), shown, "{text}");
        }
    }

    #[test]
    fn parses_both_kinds() {
        assert_eq!(
            StoreUrl::parse("/srv/sessions").unwrap(),
            StoreUrl::Directory("/srv/sessions".into())
        );
        assert_eq!(
            StoreUrl::parse("file:///srv/s").unwrap(),
            StoreUrl::Directory("/srv/s".into())
        );
        assert!(
            StoreUrl::parse("postgres://u:p@db:5432/ctxkit")
                .unwrap()
                .is_database()
        );
        assert!(StoreUrl::parse("mysql://db/x").is_err());
        assert!(StoreUrl::parse("  ").is_err());
        assert_eq!(
            StoreUrl::parse("./postgres:x").unwrap(),
            StoreUrl::Directory("./postgres:x".into())
        );
    }

    /// Schemes are case-insensitive: `POSTGRES://` is a database, kept with its scheme in lower
    /// case (the driver reads only that).
    #[test]
    fn a_scheme_in_any_case_is_a_database() {
        for text in [
            "POSTGRES://u@db:5432/ctxkit",
            "PostgreSQL://u@db/ctxkit",
            "postgresql://u@db/ctxkit",
        ] {
            let url = StoreUrl::parse(text).unwrap();
            let StoreUrl::Postgres(kept) = &url else {
                panic!("{text} is not a database: {url:?}");
            };
            assert!(kept.starts_with("postgres"), "{kept}");
            assert!(kept.parse::<tokio_postgres::Config>().is_ok(), "{kept}");
        }
        assert!(matches!(
            StoreUrl::parse("FILE:///srv/s").unwrap(),
            StoreUrl::Directory(_)
        ));
    }

    /// A mistyped database URL is an error naming the form, never a directory named like the
    /// URL (with the password in a folder's name), and the error never shows the password.
    #[test]
    fn a_mistyped_url_is_refused_without_its_password() {
        for text in [
            "postgres:/user:PW-s3cret@127.0.0.1:55439/ctxkit",
            "postgresql:user:PW-s3cret@host/db",
            "postgres:user:PW-s3cret@host/db",
            "Postgres:/user:PW-s3cret@host/db",
            "postgress://user:PW-s3cret@host/db",
            "file:relative/PW-s3cret",
            "pg:user:PW-s3cret@host",
            "postgres://user:PW-s3cret@host:port/db",
            "postgres://user:PW-s3cret@host/db?nonsense=1",
        ] {
            let error = StoreUrl::parse(text).unwrap_err();
            assert!(
                matches!(error, StoreError::InvalidUrl { .. }),
                "{text}: {error:?}"
            );
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains("PW-s3cret"), "{shown}");
        }
        let error = StoreUrl::parse("postgres:/user:pw@host/db")
            .unwrap_err()
            .to_string();
        assert!(error.contains("`postgres://`"), "{error}");
        let error = StoreUrl::parse("postgres://u@host/db?nonsense=1")
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown option `nonsense`"), "{error}");
    }

    #[test]
    fn never_shows_a_password() {
        let url = StoreUrl::parse("postgres://alice:s3cret@db.internal:5432/ctxkit?password=other")
            .unwrap();
        for shown in [url.redacted(), format!("{url}"), format!("{url:?}")] {
            assert!(!shown.contains("s3cret"), "{shown}");
            assert!(!shown.contains("other"), "{shown}");
            assert!(!shown.contains("alice"), "{shown}");
            assert!(shown.contains("db.internal"), "{shown}");
        }
        let error = StoreUrl::parse("mysql://bob:hunter2@db/x")
            .unwrap_err()
            .to_string();
        assert!(!error.contains("hunter2"), "{error}");
    }
}
