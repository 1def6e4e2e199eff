//! `store.url`: a directory of JSONL files, or a PostgreSQL URL. Printed only redacted.

use std::fmt;
use std::path::PathBuf;

use crate::error::{Result, StoreError};

/// Where sessions are stored.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// A sessions root of per-project folders of JSONL files (the default).
    Directory(PathBuf),
    /// A PostgreSQL database (`postgres://` or `postgresql://`). The URL may hold a password:
    /// it is only shown through [`StoreUrl::redacted`] (and `Debug`/`Display`, which redact).
    Postgres(String),
}

impl StoreUrl {
    /// Reads a setting's text: `postgres://…`/`postgresql://…` is a database, `file://PATH` or any
    /// other text without a scheme a directory. Other schemes are refused.
    pub fn parse(text: &str) -> Result<Self> {
        let invalid = |reason: &str| StoreError::InvalidUrl {
            url: redact_url(text),
            reason: reason.to_owned(),
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(invalid("empty"));
        }
        if let Some(path) = trimmed.strip_prefix("file://") {
            return Ok(Self::Directory(PathBuf::from(path)));
        }
        if trimmed.starts_with("postgres://") || trimmed.starts_with("postgresql://") {
            url::Url::parse(trimmed).map_err(|error| invalid(&error.to_string()))?;
            return Ok(Self::Postgres(trimmed.to_owned()));
        }
        if let Some((scheme, _)) = trimmed.split_once("://")
            && !scheme.contains('/')
        {
            return Err(invalid("not a directory or a postgres:// URL"));
        }
        Ok(Self::Directory(PathBuf::from(trimmed)))
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
