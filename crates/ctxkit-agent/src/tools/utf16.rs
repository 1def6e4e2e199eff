//! Text files in UTF-16 with a byte-order mark (what Windows PowerShell's `>` and many Windows
//! tools write). Their every other byte is NUL, so they looked binary and could be neither read
//! nor edited; `read` now shows them as text and `edit` writes them back in their own encoding.

/// The byte order of a UTF-16 file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Utf16 {
    Little,
    Big,
}

impl Utf16 {
    /// The UTF-16 byte order whose mark `bytes` start with.
    pub(super) fn of(bytes: &[u8]) -> Option<Self> {
        match bytes {
            // UTF-32 LE's mark starts as UTF-16 LE's does.
            [0xFF, 0xFE, 0, 0, ..] => None,
            [0xFF, 0xFE, ..] => Some(Self::Little),
            [0xFE, 0xFF, ..] => Some(Self::Big),
            _ => None,
        }
    }

    /// The text of a whole file (its mark first); `None` when it is not well-formed UTF-16
    /// (an odd length or a lone surrogate).
    pub(super) fn decode(self, bytes: &[u8]) -> Option<String> {
        let body = bytes.get(2..)?;
        if body.len() % 2 != 0 {
            return None;
        }
        let units = body.chunks_exact(2).map(|pair| {
            let pair = [pair[0], pair[1]];
            match self {
                Self::Little => u16::from_le_bytes(pair),
                Self::Big => u16::from_be_bytes(pair),
            }
        });
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .ok()
    }

    /// `text` as a file in this byte order, its mark first.
    pub(super) fn encode(self, text: &str) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(2 + text.len() * 2);
        for unit in std::iter::once(0xFEFF).chain(text.encode_utf16()) {
            bytes.extend_from_slice(&match self {
                Self::Little => unit.to_le_bytes(),
                Self::Big => unit.to_be_bytes(),
            });
        }
        bytes
    }

    /// The encoding's name, as a result says it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Little => "UTF-16 LE",
            Self::Big => "UTF-16 BE",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_byte_orders_go_there_and_back() {
        for order in [Utf16::Little, Utf16::Big] {
            let text = "Name: Ünïcode 𝄞\r\nline 2\r\n";
            let bytes = order.encode(text);
            assert_eq!(Utf16::of(&bytes), Some(order));
            assert_eq!(order.decode(&bytes).as_deref(), Some(text));
        }
        assert_eq!(&Utf16::Little.encode("A")[..], [0xFF, 0xFE, b'A', 0]);
    }

    #[test]
    fn what_is_not_utf16_is_not_taken_for_it() {
        assert_eq!(Utf16::of(b"plain text"), None);
        assert_eq!(
            Utf16::of(&[0xFF, 0xFE, 0, 0, b'A', 0, 0, 0]),
            None,
            "UTF-32"
        );
        assert_eq!(Utf16::of(&[0xEF, 0xBB, 0xBF, b'a']), None, "UTF-8's mark");
        assert_eq!(
            Utf16::Little.decode(&[0xFF, 0xFE, b'A']),
            None,
            "odd length"
        );
        let lone_surrogate = [0xFF, 0xFE, 0x00, 0xD8, b'A', 0];
        assert_eq!(Utf16::Little.decode(&lone_surrogate), None);
    }
}
