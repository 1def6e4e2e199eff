use super::*;

fn encoded(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut bytes = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut bytes), format)
        .unwrap();
    bytes
}

/// A gradient: compresses well.
fn smooth(width: u32, height: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
    }))
}

/// Pixels no encoder can compress much (a fixed pseudo-random sequence).
fn noisy(width: u32, height: u32) -> DynamicImage {
    let mut state: u32 = 0x2545_f491;
    DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |_, _| {
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state & 0xff) as u8
        };
        image::Rgb([next(), next(), next()])
    }))
}

fn dimensions(bytes: &[u8]) -> (u32, u32) {
    image::load_from_memory(bytes)
        .unwrap()
        .into_rgb8()
        .dimensions()
}

#[test]
fn the_four_formats_are_known_by_their_first_bytes() {
    let image = smooth(4, 4);
    assert_eq!(
        sniff(&encoded(&image, ImageFormat::Png)),
        Some(ImageKind::Png)
    );
    assert_eq!(
        sniff(&encoded(&image, ImageFormat::Jpeg)),
        Some(ImageKind::Jpeg)
    );
    assert_eq!(
        sniff(&encoded(&image, ImageFormat::Gif)),
        Some(ImageKind::Gif)
    );
    assert_eq!(
        sniff(&encoded(&image, ImageFormat::WebP)),
        Some(ImageKind::Webp)
    );
    assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
    assert_eq!(sniff(b"fn main() {}"), None);
    assert_eq!(sniff(b""), None);
}

#[test]
fn an_image_within_the_limits_is_kept_byte_for_byte() {
    let bytes = encoded(&smooth(300, 200), ImageFormat::Png);
    let fitted = fit(&bytes, &Limits::default()).unwrap();
    assert_eq!(fitted.bytes, bytes);
    assert_eq!((fitted.kind, fitted.size), (ImageKind::Png, (300, 200)));
    assert_eq!(fitted.note(), None);
}

#[test]
fn a_wide_image_is_shrunk_to_the_sides_and_says_how_to_map_back() {
    let bytes = encoded(&smooth(4000, 1000), ImageFormat::Png);
    let fitted = fit(&bytes, &Limits::default()).unwrap();
    assert_eq!(fitted.original, (4000, 1000));
    assert_eq!(fitted.size, (2000, 500));
    assert_eq!(dimensions(&fitted.bytes), (2000, 500));
    assert_eq!(sniff(&fitted.bytes), Some(fitted.kind));
    assert_eq!(
        fitted.note().unwrap(),
        "[Image: original 4000x1000, displayed at 2000x500. Multiply coordinates by 2.00 to map \
         to original image.]"
    );
}

#[test]
fn an_image_over_the_byte_limit_is_encoded_smaller_then_shrunk() {
    let bytes = encoded(&noisy(600, 600), ImageFormat::Png);
    let limits = Limits {
        max_encoded_bytes: 120_000,
        ..Limits::default()
    };
    assert!(encoded_size(bytes.len()) > limits.max_encoded_bytes);
    let fitted = fit(&bytes, &limits).unwrap();
    assert!(encoded_size(fitted.bytes.len()) < limits.max_encoded_bytes);
    // Noise does not compress: JPEG, and at 600 × 600 not even at quality 40.
    assert_eq!(fitted.kind, ImageKind::Jpeg);
    assert!(
        fitted.size.0 < 600 && fitted.size.0 == fitted.size.1,
        "{:?}",
        fitted.size
    );
    assert_eq!(dimensions(&fitted.bytes), fitted.size);
}

#[test]
fn a_limit_nothing_fits_under_is_an_error() {
    let bytes = encoded(&noisy(64, 64), ImageFormat::Png);
    let limits = Limits {
        max_encoded_bytes: 10,
        ..Limits::default()
    };
    assert!(matches!(
        fit(&bytes, &limits),
        Err(ImageError::TooLarge { limit: 10 })
    ));
}

/// A JPEG whose EXIF says to turn it 90° clockwise (orientation 6).
fn turned_jpeg(image: &DynamicImage) -> Vec<u8> {
    let jpeg = encoded(image, ImageFormat::Jpeg);
    // TIFF little-endian, one IFD entry: 0x0112 (orientation), SHORT, count 1, value 6.
    let mut tiff = b"II*\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0\x06\0\0\0".to_vec();
    tiff.extend_from_slice(&[0, 0, 0, 0]);
    let mut exif = b"Exif\0\0".to_vec();
    exif.extend_from_slice(&tiff);
    let length = u16::try_from(exif.len() + 2).unwrap().to_be_bytes();
    let mut bytes = jpeg[..2].to_vec();
    bytes.extend_from_slice(&[0xff, 0xe1, length[0], length[1]]);
    bytes.extend_from_slice(&exif);
    bytes.extend_from_slice(&jpeg[2..]);
    bytes
}

#[test]
fn an_image_is_turned_upright_before_it_is_shrunk() {
    let bytes = turned_jpeg(&smooth(40, 20));
    let limits = Limits {
        max_width: 30,
        max_height: 30,
        ..Limits::default()
    };
    let fitted = fit(&bytes, &limits).unwrap();
    assert_eq!(fitted.original, (20, 40));
    assert_eq!(fitted.size, (15, 30));
    assert_eq!(dimensions(&fitted.bytes), (15, 30));
}

/// CRC-32 (PNG's), for the chunk patched below.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffff_u32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn a_small_file_claiming_a_huge_image_is_refused_before_it_is_decoded() {
    let mut bytes = encoded(&smooth(8, 8), ImageFormat::Png);
    // IHDR's width and height (after the signature, length and type) claim 60000 × 60000.
    bytes[16..20].copy_from_slice(&60_000_u32.to_be_bytes());
    bytes[20..24].copy_from_slice(&60_000_u32.to_be_bytes());
    let crc = crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    assert!(matches!(
        fit(&bytes, &Limits::default()),
        Err(ImageError::Unreadable(_))
    ));
    let mut garbage = b"\x89PNG\r\n\x1a\n".to_vec();
    garbage.extend_from_slice(b"not a png at all");
    assert!(matches!(
        fit(&garbage, &Limits::default()),
        Err(ImageError::Unreadable(_))
    ));
}
