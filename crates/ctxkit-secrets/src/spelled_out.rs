//! A key spelled out by a dump. `xxd`, `hexdump -C`, `od -c`, `od -tx1` and `sed 's/./& /g'` put
//! spaces, offsets and line breaks between its bytes, and `rev` turns it round: no spelling of
//! the key stands in such a text, yet anyone (a model too) reads the key off it at a glance (QA
//! 2026-12-07: `xxd .env` sent a configured key to the session and the provider). Such a text is
//! looked at twice more, its white space taken out and its characters reversed, and withheld
//! whole when either view holds a key or a piece of one.

use crate::fragments::Fragments;

/// What stands for a text that spells a key out.
pub(crate) const WITHHELD: &str = "<redacted: this text spells out a key ctxkit keeps from the \
     model (in a hex or character dump, reversed or spaced out), so none of it is shown>";

/// Whether `text` (already redacted of every plain spelling) spells one of `secrets` out.
pub(crate) fn spells_out_a_key(text: &str, secrets: &[String], fragments: &Fragments) -> bool {
    if secrets.is_empty() {
        return false;
    }
    let squeezed: String = text
        .chars()
        .filter(|character| !character.is_whitespace())
        .collect();
    // Nothing was taken out and nothing reads backwards unless the text holds a key's characters.
    let holds = |view: &str| {
        fragments.finds(view) || secrets.iter().any(|secret| view.contains(secret.as_str()))
    };
    if squeezed.len() < text.len() && holds(&squeezed) {
        return true;
    }
    let reversed: String = text.chars().rev().collect();
    holds(&reversed)
}

#[cfg(test)]
mod tests {
    use crate::Redactor;

    const KEY: &str = "sk-test-SECRETKEYVALUE0123456789abcdef";

    fn dump(bytes: &[u8], group: usize) -> String {
        bytes
            .chunks(16)
            .enumerate()
            .map(|(line, chunk)| {
                let hex: Vec<String> = chunk
                    .chunks(group)
                    .map(|pair| pair.iter().map(|byte| format!("{byte:02x}")).collect())
                    .collect();
                format!("{:08x}: {}\n", line * 16, hex.join(" "))
            })
            .collect()
    }

    /// The dumps a tester's model ran on `.env`: each spelled the key out to the provider.
    #[test]
    fn a_key_in_a_dump_or_spelled_backwards_is_withheld() {
        let redactor = Redactor::new([KEY]);
        let file = format!("OPENAI_API_KEY={KEY}\n");
        let spaced: String = KEY.chars().flat_map(|character| [character, ' ']).collect();
        let od_c: String = file
            .as_bytes()
            .chunks(16)
            .enumerate()
            .map(|(line, chunk)| {
                let characters: String = chunk
                    .iter()
                    .map(|byte| format!("   {}", *byte as char))
                    .collect();
                format!("{:07o}{characters}\n", line * 16)
            })
            .collect();
        let reversed: String = KEY.chars().rev().collect();
        for (name, text) in [
            ("xxd", dump(file.as_bytes(), 2)),
            ("od -tx1", dump(file.as_bytes(), 1)),
            ("od -c", od_c),
            ("spaced", spaced),
            ("rev", reversed),
        ] {
            let shown = redactor.redact_known(&text);
            assert_eq!(shown, super::WITHHELD, "{name}: {text}");
        }
    }

    #[test]
    fn a_dump_without_a_key_is_shown_as_it_is() {
        let redactor = Redactor::new([KEY]);
        let text = dump(b"just some ordinary bytes of a file, nothing secret", 2);
        assert_eq!(redactor.redact_known(&text), text);
        let plain = format!("key={KEY} and the rest");
        assert_eq!(redactor.redact_known(&plain), "key=<redacted> and the rest");
    }
}
