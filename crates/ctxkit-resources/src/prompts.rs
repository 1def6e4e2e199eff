//! Prompt templates: loading the markdown files, and `/name args` expanded with the arguments
//! (`template_args`: their quoting and the placeholders they fill).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::frontmatter::parse_frontmatter;
use crate::template_args::{parse_command_args, split_command, substitute_args};
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
    read_prompt_file(path).ok().flatten()
}

/// [`load_prompt_file`], with why a file that could not be read was not (a hard link into
/// ctxkit's home, a file too large: the jail's refusal); `Ok(None)` for invalid frontmatter or a
/// name without `.md`, as Pi skips them.
fn read_prompt_file(path: &Path) -> Result<Option<PromptTemplate>, String> {
    let text = ctxkit_jail::read_in_folder(path, ctxkit_jail::MAX_RESOURCE_BYTES)
        .map_err(|error| error.to_string())?;
    Ok(parse_prompt(path, &text))
}

fn parse_prompt(path: &Path, text: &str) -> Option<PromptTemplate> {
    let parsed = parse_frontmatter(text).ok()?;
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
                    if !name.ends_with(".md") {
                        return false;
                    }
                    let regular = entry_type(file) == Some(EntryType::File);
                    if !regular {
                        // A FIFO or a device named as a template was dropped unsaid (QA 2026-12-07).
                        set.diagnostics.push(ResourceDiagnostic::warning(
                            "Prompt template skipped: not a regular file".to_owned(),
                            file,
                        ));
                    }
                    regular
                })
                .map(|(_, file)| file)
                .collect(),
            Some(EntryType::File) if path.to_string_lossy().ends_with(".md") => vec![path],
            Some(EntryType::File | EntryType::Other) | None => Vec::new(),
        };
        for file in files {
            let template = match read_prompt_file(&file) {
                Ok(Some(template)) => template,
                Ok(None) => continue,
                // Refused by the jail (a hard link into ctxkit's home, too large): said, as a
                // skill's is, not dropped unsaid (QA 2026-12-07).
                Err(reason) => {
                    set.diagnostics.push(ResourceDiagnostic::warning(
                        format!("Prompt template skipped: {reason}"),
                        &file,
                    ));
                    continue;
                }
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

/// Expands `/name args` when a template has exactly that name (the name ends at the first
/// whitespace, as in Pi 1.6.0); `None` otherwise.
pub fn expand_prompt_template(input: &str, templates: &[PromptTemplate]) -> Option<String> {
    let (name, args) = split_command(input)?;
    let template = templates.iter().find(|template| template.name == name)?;
    Some(substitute_args(
        &template.content,
        &parse_command_args(args),
    ))
}
