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

#[cfg(test)]
mod tests {
    use super::*;

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
