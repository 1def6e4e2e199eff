//! `read` of an image (PNG, JPEG, GIF, WebP, known by its first bytes), as Pi's `read` returns
//! one: the line `Read image file [<type>]` and the image, fitted to 2000 × 2000 pixels and 4.5 MB
//! unless `images.autoResize` is off, with a note of its original size when it was shrunk. An image
//! that cannot be fitted is named and left out.

use base64::Engine as _;
use ctxkit_images::{ImageKind, Limits, fit};
use ctxkit_protocol::{ImageContent, JsonObject};

use super::{ToolContext, ToolOutcome};

/// The outcome of reading the image `bytes` (all of the file's) of `kind`.
pub(super) fn image_outcome(bytes: &[u8], kind: ImageKind, context: &ToolContext) -> ToolOutcome {
    let (data, kind, note) = if context.auto_resize_images {
        match fit(bytes, &Limits::default()) {
            Ok(fitted) => {
                let note = fitted.note();
                (fitted.bytes, fitted.kind, note)
            }
            Err(error) => {
                return ToolOutcome::ok(format!(
                    "Read image file [{}]\n[Image omitted: {error}.]",
                    kind.mime_type()
                ));
            }
        }
    } else {
        (bytes.to_vec(), kind, None)
    };
    let mut text = format!("Read image file [{}]", kind.mime_type());
    if let Some(note) = note {
        text.push('\n');
        text.push_str(&note);
    }
    let mut outcome = ToolOutcome::ok(text);
    outcome.images.push(ImageContent {
        data: base64::engine::general_purpose::STANDARD.encode(&data),
        mime_type: kind.mime_type().to_owned(),
        extra: JsonObject::new(),
    });
    outcome
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use base64::Engine as _;
    use image::{DynamicImage, ImageFormat, RgbImage};
    use serde_json::json;

    use super::super::read::read;
    use super::super::test_support::context;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, _| {
            image::Rgb([(x % 256) as u8, 40, 90])
        }));
        let mut bytes = Vec::new();
        image
            .write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png)
            .unwrap();
        bytes
    }

    fn read_file(context: &super::ToolContext, path: &str) -> super::ToolOutcome {
        read(
            serde_json::from_value(json!({"path": path})).unwrap(),
            context,
        )
        .unwrap()
    }

    fn shown_size(outcome: &super::ToolOutcome) -> (u32, u32) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&outcome.images[0].data)
            .unwrap();
        let image = image::load_from_memory(&bytes).unwrap();
        (image.width(), image.height())
    }

    #[test]
    fn an_image_is_read_as_an_image_fitted_to_the_limits() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("wide.png"), png(3000, 100)).unwrap();
        std::fs::write(dir.path().join("icon.png"), png(32, 32)).unwrap();
        let context = context(dir.path());
        let wide = read_file(&context, "wide.png");
        assert!(!wide.is_error);
        assert_eq!(
            wide.text,
            "Read image file [image/png]\n[Image: original 3000x100, displayed at 2000x67. \
             Multiply coordinates by 1.50 to map to original image.]"
        );
        assert_eq!(wide.images.len(), 1);
        assert_eq!(shown_size(&wide), (2000, 67));
        let icon = read_file(&context, "icon.png");
        assert_eq!(icon.text, "Read image file [image/png]");
        assert_eq!(icon.images[0].mime_type, "image/png");
        assert_eq!(
            icon.images[0].data,
            base64::engine::general_purpose::STANDARD.encode(png(32, 32))
        );
    }

    #[test]
    fn without_auto_resize_the_image_goes_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("wide.png"), png(3000, 100)).unwrap();
        let mut context = context(dir.path());
        context.auto_resize_images = false;
        let wide = read_file(&context, "wide.png");
        assert_eq!(wide.text, "Read image file [image/png]");
        assert_eq!(shown_size(&wide), (3000, 100));
    }

    #[test]
    fn an_image_that_cannot_be_read_is_named_and_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let mut broken = png(3000, 100);
        broken.truncate(200);
        std::fs::write(dir.path().join("broken.png"), broken).unwrap();
        let outcome = read_file(&context(dir.path()), "broken.png");
        assert!(outcome.images.is_empty());
        assert!(
            outcome.text.starts_with(
                "Read image file [image/png]\n[Image omitted: the image cannot be read"
            ),
            "{}",
            outcome.text
        );
    }
}
