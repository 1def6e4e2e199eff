//! Images for a model. [`sniff`] recognises the four formats every provider takes (PNG, JPEG, GIF,
//! WebP) by their first bytes; [`fit`] turns an image upright (its EXIF orientation) and makes it
//! fit the pixels and bytes a provider takes, as Pi's `images.autoResize` does: at most 2000 × 2000
//! pixels and 4.5 MB once base64-encoded (under Anthropic's 5 MB), the smaller of PNG and JPEG at
//! quality 80, then lower JPEG qualities, then three quarters of the size at a time. An image
//! already within the limits is kept byte for byte. Decoding is bounded ([`MAX_DECODED_BYTES`],
//! [`MAX_SIDE`]), so a small file that claims a huge image cannot take the memory.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder as _, ImageFormat, ImageReader};

/// The most memory a decoded image may take.
pub const MAX_DECODED_BYTES: u64 = 512 * 1024 * 1024;
/// The longest side of an image that is decoded.
pub const MAX_SIDE: u32 = 20_000;

/// A format every provider takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageKind {
    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    fn format(self) -> ImageFormat {
        match self {
            Self::Png => ImageFormat::Png,
            Self::Jpeg => ImageFormat::Jpeg,
            Self::Gif => ImageFormat::Gif,
            Self::Webp => ImageFormat::WebP,
        }
    }
}

/// The format of an image by its first bytes (16 are enough), if it is one of [`ImageKind`].
pub fn sniff(head: &[u8]) -> Option<ImageKind> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageKind::Png)
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some(ImageKind::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(ImageKind::Gif)
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some(ImageKind::Webp)
    } else {
        None
    }
}

/// What an image must fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_width: u32,
    pub max_height: u32,
    /// The most bytes of the image base64-encoded.
    pub max_encoded_bytes: usize,
    /// The JPEG quality tried first.
    pub jpeg_quality: u8,
}

impl Default for Limits {
    /// Pi's: 2000 × 2000 pixels, 4.5 MB base64, JPEG quality 80.
    fn default() -> Self {
        Self {
            max_width: 2000,
            max_height: 2000,
            max_encoded_bytes: 4_718_592,
            jpeg_quality: 80,
        }
    }
}

/// An image that fits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub bytes: Vec<u8>,
    pub kind: ImageKind,
    /// Width and height of the image as it was.
    pub original: (u32, u32),
    /// Width and height of the image as it is now.
    pub size: (u32, u32),
}

impl Fitted {
    /// Whether its pixels changed (it was turned or shrunk, not only re-encoded).
    pub fn resized(&self) -> bool {
        self.original != self.size
    }

    /// What the model is told of a shrunk image, as Pi tells it: the original size and the factor
    /// that maps a point on the image to the original.
    pub fn note(&self) -> Option<String> {
        if !self.resized() {
            return None;
        }
        let scale = f64::from(self.original.0) / f64::from(self.size.0.max(1));
        Some(format!(
            "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {scale:.2} to map \
             to original image.]",
            self.original.0, self.original.1, self.size.0, self.size.1
        ))
    }
}

/// Why an image could not be made to fit.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("not a PNG, JPEG, GIF or WebP image")]
    UnknownFormat,
    #[error("the image cannot be read: {0}")]
    Unreadable(String),
    #[error("the image cannot be made smaller than {limit} bytes (base64)")]
    TooLarge { limit: usize },
}

/// `bytes` made to fit `limits` (see the crate's documentation).
pub fn fit(bytes: &[u8], limits: &Limits) -> Result<Fitted, ImageError> {
    let kind = sniff(bytes).ok_or(ImageError::UnknownFormat)?;
    let (width, height) = reader(bytes, kind)?.into_dimensions().map_err(unreadable)?;
    let within = width <= limits.max_width
        && height <= limits.max_height
        && encoded_size(bytes.len()) < limits.max_encoded_bytes;
    if within {
        return Ok(Fitted {
            bytes: bytes.to_vec(),
            kind,
            original: (width, height),
            size: (width, height),
        });
    }
    let upright = decode_upright(bytes, kind)?;
    let original = (upright.width(), upright.height());
    let mut size = within_sides(original, limits);
    loop {
        if let Some((bytes, kind)) = smallest_fitting(&upright, size, limits) {
            return Ok(Fitted {
                bytes,
                kind,
                original,
                size,
            });
        }
        let smaller = ((size.0 * 3 / 4).max(1), (size.1 * 3 / 4).max(1));
        if smaller == size {
            return Err(ImageError::TooLarge {
                limit: limits.max_encoded_bytes,
            });
        }
        size = smaller;
    }
}

fn unreadable(error: impl std::fmt::Display) -> ImageError {
    ImageError::Unreadable(error.to_string())
}

/// A reader of `bytes` as `kind`, with its decoding bounded.
fn reader(bytes: &[u8], kind: ImageKind) -> Result<ImageReader<Cursor<&[u8]>>, ImageError> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), kind.format());
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    reader.limits(limits);
    Ok(reader)
}

/// The image decoded (a GIF's first frame) and turned as its EXIF orientation says.
fn decode_upright(bytes: &[u8], kind: ImageKind) -> Result<DynamicImage, ImageError> {
    let mut decoder = reader(bytes, kind)?.into_decoder().map_err(unreadable)?;
    let orientation = decoder.orientation().map_err(unreadable)?;
    let mut image = DynamicImage::from_decoder(decoder).map_err(unreadable)?;
    image.apply_orientation(orientation);
    Ok(image)
}

/// `size` shrunk, keeping its proportions, to within the limits' sides.
fn within_sides((mut width, mut height): (u32, u32), limits: &Limits) -> (u32, u32) {
    if width > limits.max_width {
        height = scaled(height, limits.max_width, width);
        width = limits.max_width;
    }
    if height > limits.max_height {
        width = scaled(width, limits.max_height, height);
        height = limits.max_height;
    }
    (width.max(1), height.max(1))
}

/// `value × numerator / denominator`, rounded, at least 1.
fn scaled(value: u32, numerator: u32, denominator: u32) -> u32 {
    let exact = u64::from(value) * u64::from(numerator);
    let rounded = (exact + u64::from(denominator) / 2) / u64::from(denominator.max(1));
    u32::try_from(rounded).unwrap_or(u32::MAX).max(1)
}

/// The image at `size` encoded as the smaller of PNG and JPEG at the first quality, else as JPEG
/// at a lower quality, whichever first fits the byte limit.
fn smallest_fitting(
    image: &DynamicImage,
    (width, height): (u32, u32),
    limits: &Limits,
) -> Option<(Vec<u8>, ImageKind)> {
    let resized = if (width, height) == (image.width(), image.height()) {
        image.clone()
    } else {
        image.resize_exact(width, height, FilterType::Lanczos3)
    };
    let fits = |bytes: &[u8]| encoded_size(bytes.len()) < limits.max_encoded_bytes;
    let mut preferred: Vec<(Vec<u8>, ImageKind)> = [
        encode_png(&resized).map(|bytes| (bytes, ImageKind::Png)),
        encode_jpeg(&resized, limits.jpeg_quality).map(|bytes| (bytes, ImageKind::Jpeg)),
    ]
    .into_iter()
    .flatten()
    .collect();
    // The smaller first; PNG on a tie.
    preferred.sort_by_key(|(bytes, _)| bytes.len());
    if let Some(found) = preferred.into_iter().find(|(bytes, _)| fits(bytes)) {
        return Some(found);
    }
    LOWER_QUALITIES
        .into_iter()
        .filter(|quality| *quality != limits.jpeg_quality)
        .filter_map(|quality| encode_jpeg(&resized, quality))
        .find(|bytes| fits(bytes))
        .map(|bytes| (bytes, ImageKind::Jpeg))
}

/// JPEG qualities tried, in turn, when neither PNG nor JPEG at the first quality fits.
const LOWER_QUALITIES: [u8; 4] = [85, 70, 55, 40];

fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png)
        .ok()?;
    Some(bytes)
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    JpegEncoder::new_with_quality(&mut bytes, quality)
        .encode_image(&image.to_rgb8())
        .ok()?;
    Some(bytes)
}

/// Bytes of `len` bytes base64-encoded.
pub fn encoded_size(len: usize) -> usize {
    len.div_ceil(3).saturating_mul(4)
}

#[cfg(test)]
mod tests;
