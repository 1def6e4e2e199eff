//! A secret as other tools store it: base64 (a Kubernetes Secret's value, docker's `auth`,
//! `.npmrc`'s `_auth`, each often of `user:<key>`) and hex. Redaction that knew only the plain,
//! JSON-escaped and percent-encoded spellings sent such a key to the provider (QA r99).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};

/// The spellings of `secret` to find besides its own: in base64, standard and URL-safe, the part
/// that is the same wherever in an encoded text the secret stands (for each of its three places
/// in a 3-byte group), and in hex, lower and upper case.
pub(crate) fn encoded_forms(secret: &str) -> Vec<String> {
    let mut forms = Vec::new();
    for place in 0..3 {
        let core = base64_core(secret.as_bytes(), place);
        if !core.is_empty() {
            forms.push(URL_SAFE_NO_PAD.encode(core));
            forms.push(STANDARD_NO_PAD.encode(core));
        }
    }
    let hex: String = secret.bytes().map(|byte| format!("{byte:02x}")).collect();
    forms.push(hex.to_ascii_uppercase());
    forms.push(hex);
    forms.sort_unstable();
    forms.dedup();
    forms
}

/// The bytes of `secret` whose base64 characters do not depend on what stands around it, when
/// `before` bytes of another text come first in its 3-byte group: the whole groups it fills.
fn base64_core(secret: &[u8], before: usize) -> &[u8] {
    // Whole groups start `3 - before` bytes into the secret (none when `before` is 0).
    let skip = (3 - before) % 3;
    let Some(rest) = secret.get(skip..) else {
        return &[];
    };
    &rest[..rest.len() / 3 * 3]
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD;

    const KEY: &str = "sk-proj-FAKEkks8w14KmEEUVxekVVnC9AVWZ69zWQf5zyqQoj3q";

    /// Every form is found in the encoding of the key with any text before and after it.
    #[test]
    fn a_form_stands_in_every_encoding_of_the_key() {
        let forms = encoded_forms(KEY);
        for before in ["", "u", "user:", "ab"] {
            let encoded = STANDARD.encode(format!("{before}{KEY}\n"));
            assert!(
                forms.iter().any(|form| encoded.contains(form.as_str())),
                "{before:?}: {encoded}"
            );
            let url_safe = URL_SAFE_NO_PAD.encode(format!("{before}{KEY}"));
            assert!(forms.iter().any(|form| url_safe.contains(form.as_str())));
        }
        let hex: String = KEY.bytes().map(|byte| format!("{byte:02X}")).collect();
        assert!(forms.contains(&hex));
    }
}
