//! API keys wrapped so they cannot leak through `Debug`, `Display` or error messages.

use std::fmt;

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

/// `text` with every occurrence of the given secrets replaced by `<redacted>`: provider error
/// bodies may echo the key they were sent ("Incorrect API key provided: sk-…"). Secrets shorter
/// than 8 characters are left alone (they would match ordinary words).
pub(crate) fn redact<'a>(text: &str, secrets: impl IntoIterator<Item = &'a str>) -> String {
    let mut redacted = text.to_owned();
    for secret in secrets {
        let secret = secret.trim();
        if secret.len() >= 8 && redacted.contains(secret) {
            redacted = redacted.replace(secret, "<redacted>");
        }
    }
    redacted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoed_secrets_are_redacted() {
        let text = "Incorrect API key provided: sk-secret-123. Header: token-abcdefgh";
        assert_eq!(
            redact(text, ["sk-secret-123", "token-abcdefgh", "short"]),
            "Incorrect API key provided: <redacted>. Header: <redacted>"
        );
        assert_eq!(redact("a short word", ["short"]), "a short word");
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
