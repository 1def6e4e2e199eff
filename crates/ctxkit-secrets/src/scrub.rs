//! Credentials recognised by their shape, whoever's they are: an `Authorization: Basic <base64>`
//! or `Bearer <token>` value a provider echoes back, and the `user:password@` part of a URL.
//! [`crate::redact`] applies these before the known secrets, so a base-URL password reaches no
//! session, log or error, neither as written nor base64-encoded.

/// The schemes whose following token is a credential.
const SCHEMES: &[&str] = &["Basic ", "Bearer "];

/// `text` with every `Basic …`/`Bearer …` token and every URL userinfo replaced by `<redacted>`.
pub(crate) fn scrub(text: &str) -> String {
    crate::redact_credentials(&scrub_schemes(text)).into_owned()
}

fn scrub_schemes(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut result = String::with_capacity(text.len());
    let (mut copied, mut searched) = (0, 0);
    // Both schemes start with a `B`, in either case: only those places are tried (ASCII, so
    // always a character's first byte).
    while let Some(offset) = memchr::memchr2(b'B', b'b', &bytes[searched..]) {
        let at = searched + offset;
        searched = at + 1;
        let rest = &text[at..];
        for scheme in SCHEMES {
            let starts = rest
                .get(..scheme.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(scheme));
            if !starts {
                continue;
            }
            let after = rest[scheme.len()..].trim_start_matches(' ');
            let length = after
                .bytes()
                .take_while(|byte| is_token_byte(*byte))
                .count();
            if looks_like_credential(&after[..length]) {
                let token_start = text.len() - after.len();
                result.push_str(&text[copied..at + scheme.len()]);
                result.push_str("<redacted>");
                copied = token_start + length;
                searched = copied;
                break;
            }
        }
    }
    result.push_str(&text[copied..]);
    result
}

/// Base64 and token characters.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=' | b'-' | b'_' | b'.' | b'~')
}

/// A token of 8 characters or more that is not an ordinary word: a digit or a base64 symbol in
/// it, or capitals after its first letter ("Basic authentication" is left alone).
fn looks_like_credential(token: &str) -> bool {
    token.len() >= 8
        && (token
            .bytes()
            .any(|byte| byte.is_ascii_digit() || matches!(byte, b'+' | b'/' | b'=' | b'_'))
            || token.bytes().skip(1).any(|byte| byte.is_ascii_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_and_bearer_values_and_url_passwords_are_hidden() {
        let echoed = r#"{"error":"bad header Authorization: Basic dXNlcjpodW50ZXIy"}"#;
        assert_eq!(
            scrub(echoed),
            r#"{"error":"bad header Authorization: Basic <redacted>"}"#
        );
        assert_eq!(
            scrub("authorization: bearer sk-ant-abc123XYZ"),
            "authorization: bearer <redacted>"
        );
        assert_eq!(
            scrub("calling https://alice:hunter2@llm.example/v1 failed"),
            "calling https://<redacted>@llm.example/v1 failed"
        );
        // Ordinary words and URLs stay as they are.
        for plain in [
            "Basic authentication is off",
            "Bearer tokens expire",
            "see https://example.com/a@b and mailto:x@y",
        ] {
            assert_eq!(scrub(plain), plain);
        }
    }
}
