//! Prompt templates: `/name args` expands a markdown file with `$1`, `$@`, `$ARGUMENTS` and
//! `${@:N[:L]}` placeholders. Substitution is a single left-to-right pass, so text inserted from
//! arguments is never expanded again (the reference re-scans `$ARGUMENTS` values for `$@`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::frontmatter::parse_frontmatter;
use ctxkit_packages::PathMetadata;
use ctxkit_packages::{CollisionKind, ResourceDiagnostic};
use ctxkit_packages::{EntryType, entry_type, sorted_entries};
use ctxkit_settings::{expand_tilde_loose, resolve_against};

/// A loaded prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// File name without `.md` (frontmatter `name` is ignored).
    pub name: String,
    /// Frontmatter `description`, else the first non-blank body line (60 UTF-16 units + `...`).
    pub description: String,
    /// Frontmatter `argument-hint`, shown before the description in autocomplete.
    pub argument_hint: Option<String>,
    /// The body (trimmed when there was frontmatter).
    pub content: String,
    /// The file.
    pub file_path: PathBuf,
    /// Provenance, filled in by the resource loader.
    pub metadata: Option<PathMetadata>,
}

/// Templates and collision diagnostics of one load.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptSet {
    /// Accepted templates, first of each name.
    pub templates: Vec<PromptTemplate>,
    /// Collisions (and errors added by the loader).
    pub diagnostics: Vec<ResourceDiagnostic>,
}

fn text_field(value: Option<&Value>) -> Option<String> {
    match value {
        Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
        Some(Value::Number(number)) => Some(number.to_string()),
        Some(Value::Bool(true)) => Some("true".to_owned()),
        Some(_) | None => None,
    }
}

fn first_line_description(body: &str) -> String {
    let Some(line) = body.lines().find(|line| !line.trim().is_empty()) else {
        return String::new();
    };
    let units: Vec<u16> = line.encode_utf16().collect();
    if units.len() <= 60 {
        return line.to_owned();
    }
    format!("{}...", String::from_utf16_lossy(&units[..60]))
}

/// Loads one template file; `None` when unreadable or its frontmatter is invalid.
pub fn load_prompt_file(path: &Path) -> Option<PromptTemplate> {
    let text = ctxkit_jail::read_in_folder(path, ctxkit_jail::MAX_RESOURCE_BYTES).ok()?;
    let parsed = parse_frontmatter(&text).ok()?;
    let name = path
        .file_name()?
        .to_string_lossy()
        .strip_suffix(".md")?
        .to_owned();
    let description = text_field(parsed.field("description"))
        .unwrap_or_else(|| first_line_description(&parsed.body));
    Some(PromptTemplate {
        name,
        description,
        argument_hint: text_field(parsed.field("argument-hint")),
        content: parsed.body,
        file_path: path.to_path_buf(),
        metadata: None,
    })
}

/// Loads templates from explicit paths: missing paths and non-`.md` files are skipped
/// silently; a directory contributes its direct `.md` files. Name collisions: first wins, later
/// ones are reported.
pub fn load_prompt_templates(paths: &[PathBuf], cwd: &Path, home: &Path) -> PromptSet {
    let mut set = PromptSet::default();
    for raw in paths {
        let path = resolve_against(cwd, &expand_tilde_loose(&raw.to_string_lossy(), home));
        let files: Vec<PathBuf> = match entry_type(&path) {
            Some(EntryType::Directory) => sorted_entries(&path)
                .into_iter()
                .filter(|(name, file)| {
                    name.ends_with(".md") && entry_type(file) == Some(EntryType::File)
                })
                .map(|(_, file)| file)
                .collect(),
            Some(EntryType::File) if path.to_string_lossy().ends_with(".md") => vec![path],
            Some(EntryType::File | EntryType::Other) | None => Vec::new(),
        };
        for file in files {
            let Some(template) = load_prompt_file(&file) else {
                continue;
            };
            match set
                .templates
                .iter()
                .find(|existing| existing.name == template.name)
            {
                Some(winner) => set.diagnostics.push(ResourceDiagnostic::Collision {
                    kind: CollisionKind::Prompt,
                    name: template.name.clone(),
                    winner_path: winner.file_path.clone(),
                    loser_path: template.file_path.clone(),
                }),
                None => set.templates.push(template),
            }
        }
    }
    set
}

/// Splits template arguments: spaces and tabs separate outside quotes; `"` or `'` quote
/// (quotes removed, may abut other text); no escapes; empty tokens dropped.
pub fn parse_command_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for character in text.chars() {
        match quote {
            Some(open) if character == open => quote = None,
            Some(_) => current.push(character),
            None => match character {
                '"' | '\'' => quote = Some(character),
                ' ' | '\t' => {
                    if !current.is_empty() {
                        args.push(std::mem::take(&mut current));
                    }
                }
                other => current.push(other),
            },
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

fn leading_digits(text: &str) -> &str {
    let end = text
        .find(|character: char| !character.is_ascii_digit())
        .unwrap_or(text.len());
    &text[..end]
}

/// `${@:N}` or `${@:N:L}` at the start of `text`: (start, length, consumed bytes).
fn parse_slice(text: &str) -> Option<(usize, Option<usize>, usize)> {
    let rest = text.strip_prefix("${@:")?;
    let start_digits = leading_digits(rest);
    if start_digits.is_empty() {
        return None;
    }
    let start: usize = start_digits.parse().ok()?;
    let after = &rest[start_digits.len()..];
    if after.starts_with('}') {
        return Some((start, None, 4 + start_digits.len() + 1));
    }
    let after = after.strip_prefix(':')?;
    let length_digits = leading_digits(after);
    if length_digits.is_empty() || !after[length_digits.len()..].starts_with('}') {
        return None;
    }
    let length: usize = length_digits.parse().ok()?;
    Some((
        start,
        Some(length),
        4 + start_digits.len() + 1 + length_digits.len() + 1,
    ))
}

/// Substitutes placeholders in one pass: `$<n>` (1-based, out of range → empty),
/// `${@:N}` / `${@:N:L}`, `$ARGUMENTS` and `$@` (all arguments joined by spaces). Inserted text
/// is never re-scanned and is taken literally.
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(index) = rest.find('$') {
        out.push_str(&rest[..index]);
        let tail = &rest[index..];
        let digits = leading_digits(&tail[1..]);
        if !digits.is_empty() {
            let position: usize = digits.parse().unwrap_or(0);
            if position >= 1
                && let Some(arg) = args.get(position - 1)
            {
                out.push_str(arg);
            }
            rest = &tail[1 + digits.len()..];
        } else if let Some((start, length, consumed)) = parse_slice(tail) {
            let from = start.max(1) - 1;
            let selected: Vec<&str> = args
                .iter()
                .skip(from)
                .take(length.unwrap_or(usize::MAX))
                .map(String::as_str)
                .collect();
            out.push_str(&selected.join(" "));
            rest = &tail[consumed..];
        } else if let Some(after) = tail.strip_prefix("$ARGUMENTS") {
            out.push_str(&all);
            rest = after;
        } else if let Some(after) = tail.strip_prefix("$@") {
            out.push_str(&all);
            rest = after;
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Expands `/name args` when a template has exactly that name; `None` otherwise.
pub fn expand_prompt_template(input: &str, templates: &[PromptTemplate]) -> Option<String> {
    let rest = input.strip_prefix('/')?;
    let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
    let template = templates.iter().find(|template| template.name == name)?;
    Some(substitute_args(
        &template.content,
        &parse_command_args(args),
    ))
}
