//! `@path` in a prompt attaches the file (as Claude Code does; Pi's `@` only completes the path
//! and its CLI's `@file` arguments attach): read through the tools' boundary and jail (never
//! outside the project, never ctxkit's own files), redacted of every configured key, a long text
//! cut to its first 2000 lines / 50 KB with a marker, an image as an image block (fitted to 2000 ×
//! 2000 pixels and 4.5 MB unless `images.autoResize` is off, its original size then said in its
//! `<file>` line, as Pi's CLI says it). The files go before the typed text in Pi's `<file
//! name="…">` form, the images after it.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use ctxkit_agent::tools::limit::{self, Keep};
use ctxkit_agent::{Access, Place, Workspace};
use ctxkit_protocol::{ContentBlock, ImageContent, JsonObject};

/// The most of a text file read: what the model may see, and a little more to tell it was cut.
const MAX_TEXT_READ: u64 = limit::MAX_BYTES as u64 * 4;
/// The largest image attached as it is (the providers' own limit is about 5 MB).
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// The largest image read to be fitted.
const MAX_FITTED_IMAGE_BYTES: u64 = 64 * 1024 * 1024;

/// A prompt with its attachments, and one line per file for the screen.
#[derive(Debug, Default)]
pub struct Attached {
    pub content: Vec<ContentBlock>,
    pub notes: Vec<String>,
}

/// The `@path` words of `text` (after a blank or at the start), each once, trailing punctuation
/// left out; `@"a path with blanks"` names a path with blanks (as Tab completes one).
pub fn mentions(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let starts_word = rest[..at]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace);
        let after = &rest[at + 1..];
        rest = after;
        if !starts_word {
            continue;
        }
        let path = match after
            .strip_prefix('"')
            .and_then(|quoted| quoted.split_once('"'))
        {
            Some((path, tail)) => {
                rest = tail;
                path
            }
            None => {
                let word = after.split(char::is_whitespace).next().unwrap_or_default();
                word.trim_end_matches([',', '.', ';', ':', '!', '?', ')', ']', '"', '\''])
            }
        };
        if !path.is_empty() && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// A sent prompt split into the files attached before it (their names) and the typed text.
pub fn split_attached(text: &str) -> (Vec<&str>, &str) {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(after) = rest.strip_prefix("<file name=\"") {
        let Some((name, body)) = after.split_once("\">") else {
            break;
        };
        let Some(end) = body.find("</file>\n") else {
            break;
        };
        names.push(name);
        rest = &body[end + "</file>\n".len()..];
    }
    (names, rest)
}

/// `text` as prompt content with the files it mentions attached; `fit_images`: `images.autoResize`.
pub fn attach(text: &str, workspace: &Workspace, cwd: &Path, fit_images: bool) -> Attached {
    let mentioned = mentions(text);
    let (attached, _) = attach_files(&mentioned, ("", text), workspace, cwd, fit_images);
    attached
}

/// `files` attached between the two texts of `around` (print mode's piped input before them, the
/// first message after them, as Pi joins them), and the files that could not be attached, each
/// with why (no such file, or one no tool reads without asking).
pub fn attach_files(
    files: &[&str],
    around: (&str, &str),
    workspace: &Workspace,
    cwd: &Path,
    fit_images: bool,
) -> (Attached, Vec<String>) {
    let (before, text) = around;
    let mut attached_text = String::new();
    let files_text = &mut attached_text;
    let mut images = Vec::new();
    let mut notes = Vec::new();
    let mut refused = Vec::new();
    for mention in files.iter().copied() {
        match attachment(mention, workspace, cwd, fit_images) {
            Ok(None) => refused.push(format!("`@{mention}` names no file")),
            Ok(Some(File::Text { text, note })) => {
                files_text.push_str(&text);
                notes.push(note);
            }
            Ok(Some(File::Image { block, hint, note })) => {
                files_text.push_str(&format!("<file name=\"{mention}\">{hint}</file>\n"));
                images.push(block);
                notes.push(note);
            }
            Err(refusal) => {
                notes.push(format!("Not attached: {refusal}"));
                refused.push(refusal);
            }
        }
    }
    let mut content = vec![ContentBlock::text(format!("{before}{attached_text}{text}"))];
    content.extend(images);
    (Attached { content, notes }, refused)
}

enum File {
    Text {
        text: String,
        note: String,
    },
    Image {
        block: ContentBlock,
        /// What the model is told of it in its `<file>` line (a shrunk image's original size).
        hint: String,
        note: String,
    },
}

/// The attachment for one mention: `None` when it names no file (a word like `@someone`, a
/// folder), the refusal when it names one no tool may read without asking.
fn attachment(
    mention: &str,
    workspace: &Workspace,
    cwd: &Path,
    fit_images: bool,
) -> Result<Option<File>, String> {
    let place = workspace
        .locate(cwd, mention, Access::Read)
        .map_err(|refusal| refusal.of(&format!("@{mention}")))?;
    let path: PathBuf = match place {
        Place::Allowed(path) | Place::Guarded(path) => path,
        Place::Outside(path) => {
            return if path.is_file() {
                Err(format!(
                    "`@{mention}` is outside the project (ask the model to read it)"
                ))
            } else {
                Ok(None)
            };
        }
    };
    let jail = workspace.jail_for(&path)?;
    if !jail.is_file(&path) {
        return Ok(None);
    }
    let (head, size) = jail
        .read(&path, 16)
        .map_err(|error| format!("`@{mention}`: {error}"))?;
    if let Some(kind) = ctxkit_images::sniff(&head) {
        let most = if fit_images {
            MAX_FITTED_IMAGE_BYTES
        } else {
            MAX_IMAGE_BYTES
        };
        if size > most {
            return Err(format!(
                "`@{mention}` is an image of {} KB, over the {} KB attached",
                size / 1024,
                most / 1024
            ));
        }
        let (bytes, _) = jail
            .read(&path, most)
            .map_err(|error| format!("`@{mention}`: {error}"))?;
        return image_attachment(mention, bytes, kind, fit_images).map(Some);
    }
    let (bytes, size) = jail
        .read(&path, MAX_TEXT_READ)
        .map_err(|error| format!("`@{mention}`: {error}"))?;
    if bytes.contains(&0) {
        return Err(format!("`@{mention}` is a binary file"));
    }
    let text = workspace.redact(&String::from_utf8_lossy(&bytes));
    let bounded = limit::bound(&text, Keep::Head);
    let lines = bounded.text.lines().count();
    let cut = bounded.cut.is_some() || size > u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    let marker = if cut {
        format!(
            "\n[File truncated: the first {lines} lines ({} of {size} bytes) are shown; read the file for the rest]",
            bounded.text.len()
        )
    } else {
        String::new()
    };
    let note = if cut {
        format!("Attached {mention} (its first {lines} lines: the file is longer)")
    } else {
        format!(
            "Attached {mention} ({lines} line{})",
            if lines == 1 { "" } else { "s" }
        )
    };
    Ok(Some(File::Text {
        text: format!(
            "<file name=\"{mention}\">\n{}{marker}\n</file>\n",
            bounded.text.trim_end_matches('\n')
        ),
        note,
    }))
}

/// The image `bytes` of `kind` attached: fitted when `fit`, else as they are.
fn image_attachment(
    mention: &str,
    bytes: Vec<u8>,
    kind: ctxkit_images::ImageKind,
    fit: bool,
) -> Result<File, String> {
    let (bytes, mime_type, hint, shrunk) = if fit {
        let fitted = ctxkit_images::fit(&bytes, &ctxkit_images::Limits::default())
            .map_err(|error| format!("`@{mention}`: {error}"))?;
        let shrunk = fitted.resized().then(|| {
            let ((width, height), (shown_width, shown_height)) = (fitted.original, fitted.size);
            format!(" {width}x{height} sent at {shown_width}x{shown_height}")
        });
        let hint = fitted.note().unwrap_or_default();
        (fitted.bytes, fitted.kind.mime_type(), hint, shrunk)
    } else {
        (bytes, kind.mime_type(), String::new(), None)
    };
    let note = format!(
        "Attached {mention} (image{}, {})",
        shrunk.unwrap_or_default(),
        shown_size(bytes.len())
    );
    let block = ContentBlock::Image(ImageContent {
        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
        mime_type: mime_type.to_owned(),
        extra: JsonObject::new(),
    });
    Ok(File::Image { block, hint, note })
}

/// A size as a note shows it: bytes under a KB (a 75-byte image read "1 KB"), else KB.
fn shown_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(attached: &Attached) -> &str {
        attached.content[0].as_text().unwrap()
    }

    #[test]
    fn a_sent_prompt_splits_into_its_files_and_the_typed_text() {
        let sent =
            "<file name=\"a.rs\">\nfn a() {}\n</file>\n<file name=\"b.png\"></file>\nlook at @a.rs";
        assert_eq!(
            split_attached(sent),
            (vec!["a.rs", "b.png"], "look at @a.rs")
        );
        assert_eq!(split_attached("plain"), (vec![], "plain"));
    }

    #[test]
    fn mentions_are_words_that_start_with_an_at_sign() {
        assert_eq!(
            mentions("look at @src/main.rs, and @a.txt. mail me@example.com @src/main.rs"),
            ["src/main.rs", "a.txt"]
        );
        assert_eq!(
            mentions("@\"my notes.txt\" and @b.txt, @\"unclosed"),
            ["my notes.txt", "b.txt", "\"unclosed"]
        );
    }

    #[test]
    fn files_in_the_project_are_attached_and_the_rest_is_left_as_typed() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("a.txt"), "alpha\nbeta\n").unwrap();
        std::fs::write(outside.path().join("secret.txt"), "nope").unwrap();
        let workspace = Workspace::new(project.path());
        let line = format!(
            "read @a.txt and @{} and @nobody",
            outside.path().join("secret.txt").display()
        );
        let attached = attach(&line, &workspace, project.path(), true);
        assert_eq!(
            text_of(&attached),
            format!("<file name=\"a.txt\">\nalpha\nbeta\n</file>\n{line}")
        );
        assert_eq!(attached.notes[0], "Attached a.txt (2 lines)");
        assert!(
            attached.notes[1].contains("outside the project"),
            "{:?}",
            attached.notes
        );
        assert_eq!(attached.notes.len(), 2);
    }

    #[test]
    fn ctxkit_files_are_refused_and_keys_redacted() {
        let project = tempfile::tempdir().unwrap();
        let home = project.path().join(".ctxkit-home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("auth.json"), "{}").unwrap();
        std::fs::write(project.path().join("env.txt"), "KEY=sk-test-123456789").unwrap();
        let mut workspace = Workspace::new(project.path());
        workspace.protect(&home);
        workspace.add_secret("sk-test-123456789");
        let attached = attach(
            "@.ctxkit-home/auth.json @env.txt",
            &workspace,
            project.path(),
            true,
        );
        assert!(
            attached.notes[0].starts_with("Not attached"),
            "{:?}",
            attached.notes
        );
        assert!(!text_of(&attached).contains("sk-test-123456789"));
        assert!(
            text_of(&attached).contains("KEY=<redacted>"),
            "{}",
            text_of(&attached)
        );
    }

    #[test]
    fn a_symlink_out_of_the_project_attaches_nothing() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("private.txt"), "private-words").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("private.txt"),
            project.path().join("innocent.txt"),
        )
        .unwrap();
        let workspace = Workspace::new(project.path());
        let attached = attach("see @innocent.txt", &workspace, project.path(), true);
        assert_eq!(text_of(&attached), "see @innocent.txt");
        assert!(
            attached.notes[0].contains("outside the project"),
            "{:?}",
            attached.notes
        );
    }

    #[test]
    fn long_files_are_cut_with_a_marker_and_images_become_image_blocks() {
        let project = tempfile::tempdir().unwrap();
        let long: String = (1..=5000).map(|n| format!("line {n}\n")).collect();
        std::fs::write(project.path().join("long.txt"), long).unwrap();
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend_from_slice(&[0; 32]);
        std::fs::write(project.path().join("logo.png"), &png).unwrap();
        let workspace = Workspace::new(project.path());
        // As it is: the bytes are sent unread (`images.autoResize` off).
        let attached = attach("@long.txt @logo.png", &workspace, project.path(), false);
        let text = text_of(&attached);
        assert!(
            text.contains("line 2000\n[File truncated: the first 2000 lines"),
            "{text}"
        );
        assert!(!text.contains("line 2001"));
        assert!(text.contains("<file name=\"logo.png\"></file>"));
        let ContentBlock::Image(image) = &attached.content[1] else {
            panic!("an image block: {:?}", attached.content[1]);
        };
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(&image.data)
                .unwrap(),
            png
        );
        // QA (2026-12-05): a 40-byte image was "1 KB".
        assert!(
            attached
                .notes
                .iter()
                .any(|note| note == "Attached logo.png (image, 40 bytes)"),
            "{:?}",
            attached.notes
        );
    }

    #[test]
    fn a_large_image_is_shrunk_and_its_original_size_told_and_a_broken_one_not_attached() {
        use std::io::Cursor;
        let project = tempfile::tempdir().unwrap();
        let image = image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(4000, 1000, |x, _| {
            image::Rgb([(x % 256) as u8, 0, 0])
        }));
        let mut png = Vec::new();
        image
            .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        std::fs::write(project.path().join("wide.png"), &png).unwrap();
        let mut broken = b"\x89PNG\r\n\x1a\n".to_vec();
        broken.extend_from_slice(&[0; 32]);
        std::fs::write(project.path().join("broken.png"), &broken).unwrap();
        let workspace = Workspace::new(project.path());
        let attached = attach("@wide.png @broken.png", &workspace, project.path(), true);
        assert!(
            text_of(&attached).starts_with(
                "<file name=\"wide.png\">[Image: original 4000x1000, displayed at 2000x500. \
                 Multiply coordinates by 2.00 to map to original image.]</file>\n"
            ),
            "{}",
            text_of(&attached)
        );
        assert!(
            attached.notes[0].starts_with("Attached wide.png (image 4000x1000 sent at 2000x500, "),
            "{:?}",
            attached.notes
        );
        assert!(
            attached.notes[1].starts_with("Not attached: `@broken.png`: the image cannot be read"),
            "{:?}",
            attached.notes
        );
        let ContentBlock::Image(image) = &attached.content[1] else {
            panic!("an image block: {:?}", attached.content[1]);
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .unwrap();
        let sent = image::load_from_memory(&bytes).unwrap();
        assert_eq!((sent.width(), sent.height()), (2000, 500));
        assert_eq!(attached.content.len(), 2);
    }
}
