//! An image block as the page may draw it: what it is comes from its bytes, never its label (a
//! tool writes `image/jpg` or `image/PNG`), so the `data:` URL the page builds names one of four
//! raster types and nothing else (an `image/svg+xml` could carry script).

use base64::Engine;
use serde_json::{Value, json};

/// How an image block is shown: drawn, with the type its bytes say, or a note saying why not.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ImageShown {
    /// Its base64 without blanks and the type its first bytes name.
    Drawn { mime: &'static str, data: String },
    /// Not an image the page draws, and why.
    Refused(&'static str),
}

/// The raster types a page draws, by their magic numbers.
fn sniffed_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// What the page draws of an image block's `data`: base64, blanks and line breaks allowed (they
/// are taken out), whose first bytes are a PNG, JPEG, GIF or WebP image.
pub(crate) fn shown_image(data: &str) -> ImageShown {
    let data: String = data
        .chars()
        .filter(|character| !character.is_ascii_whitespace())
        .collect();
    let plain_base64 = data
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'='));
    if data.is_empty() || !plain_base64 {
        return ImageShown::Refused("not shown: its data is not base64");
    }
    // 16 characters are 12 bytes, enough for every magic number (WebP's is the longest).
    let head: String = data.chars().take(16).collect();
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let Ok(bytes) = engine.decode(head.trim_end_matches('=')) else {
        return ImageShown::Refused("not shown: its data is not base64");
    };
    match sniffed_type(&bytes) {
        Some(mime) => ImageShown::Drawn { mime, data },
        None => ImageShown::Refused("not shown: its bytes are not a PNG, JPEG, GIF or WebP image"),
    }
}

/// The note of an image the page leaves out: its label as written (shortened), its size, why.
pub(crate) fn image_note(mime: String, bytes: usize, reason: &str) -> Value {
    json!({"k": "image", "mime": mime, "bytes": bytes, "t": reason})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA r104: `image/PNG`, `image/jpg` and base64 with line breaks were refused, the note
    /// saying the data was not an image. Each row: the data, what the page makes of it.
    #[test]
    fn the_bytes_say_what_an_image_is() {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
        let cases: &[(&str, ImageShown)] = &[
            (png, drawn("image/png", png)),
            (
                "iVBORw0KGgoAAAAN\nSUhEUgAA\r\n",
                drawn("image/png", "iVBORw0KGgoAAAANSUhEUgAA"),
            ),
            (
                "/9j/4AAQSkZJRgABAQ==",
                drawn("image/jpeg", "/9j/4AAQSkZJRgABAQ=="),
            ),
            (
                "R0lGODlhAQABAAAAACw=",
                drawn("image/gif", "R0lGODlhAQABAAAAACw="),
            ),
            (
                "UklGRiQAAABXRUJQVlA4",
                drawn("image/webp", "UklGRiQAAABXRUJQVlA4"),
            ),
            ("iVBORw0KGgo=", drawn("image/png", "iVBORw0KGgo=")),
            ("PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+", refused_bytes()),
            (
                "x\"><script>",
                ImageShown::Refused("not shown: its data is not base64"),
            ),
            ("", ImageShown::Refused("not shown: its data is not base64")),
            ("iVB", refused_bytes()),
        ];
        for (data, shown) in cases {
            assert_eq!(shown_image(data), *shown, "{data:?}");
        }
    }

    fn drawn(mime: &'static str, data: &str) -> ImageShown {
        ImageShown::Drawn {
            mime,
            data: data.to_owned(),
        }
    }

    fn refused_bytes() -> ImageShown {
        ImageShown::Refused("not shown: its bytes are not a PNG, JPEG, GIF or WebP image")
    }
}
