//! Skills: markdown files with frontmatter that the model may read on demand. Loading validates
//! them against the Agent Skills conventions (diagnostics, not failures), resolves name
//! collisions (first wins), and renders the system-prompt block and `/skill:` expansion.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::frontmatter::{parse_frontmatter, strip_frontmatter};
use ctxkit_packages::PathMetadata;
use ctxkit_packages::{CollisionKind, ResourceDiagnostic};
use ctxkit_packages::{EntryType, SkillScanMode, collect_skill_entries, entry_type};
use ctxkit_settings::{canonical_or_raw, expand_tilde_loose, resolve_against};

const MAX_NAME_LENGTH: usize = 64;
const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// A loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Frontmatter `name`, else the parent directory's name.
    pub name: String,
    /// Frontmatter `description` (required), verbatim.
    pub description: String,
    /// The skill file.
    pub file_path: PathBuf,
    /// Its directory (relative references in the skill resolve against it).
    pub base_dir: PathBuf,
    /// `disable-model-invocation: true` (the YAML boolean): hidden from the system prompt.
    pub disable_model_invocation: bool,
    /// Provenance, filled in by the resource loader.
    pub metadata: Option<PathMetadata>,
}

/// Skills and diagnostics of one load.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSet {
    /// Accepted skills, in precedence order.
    pub skills: Vec<Skill>,
    /// File diagnostics in encounter order, then collisions.
    pub diagnostics: Vec<ResourceDiagnostic>,
}

/// Length in UTF-16 code units, as the reference counts.
fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The Agent Skills rules Pi 1.6 checks. A name that differs from its folder's is not among them:
/// Pi "neither requires nor warns" about it, and a standalone `skills/x.md` has no folder of its own.
fn validate_name(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let length = utf16_len(name);
    if length > MAX_NAME_LENGTH {
        errors.push(format!(
            "name exceeds {MAX_NAME_LENGTH} characters ({length})"
        ));
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
    {
        errors.push(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
                .to_owned(),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("name must not start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        errors.push("name must not contain consecutive hyphens".to_owned());
    }
    errors
}

fn is_truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Number(number)) => number.as_f64().is_some_and(|number| number != 0.0),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

/// Loads one skill file: `(skill, diagnostics)`; the skill is `None` when its description is
/// missing, a field has the wrong type, or the file cannot be read or parsed.
pub fn load_skill_file(path: &Path) -> (Option<Skill>, Vec<ResourceDiagnostic>) {
    let mut diagnostics = Vec::new();
    let text = match ctxkit_jail::read_in_folder(path, ctxkit_jail::MAX_RESOURCE_BYTES) {
        Ok(text) => text,
        Err(error) => {
            diagnostics.push(ResourceDiagnostic::warning(error.to_string(), path));
            return (None, diagnostics);
        }
    };
    let parsed = match parse_frontmatter(&text) {
        Ok(parsed) => parsed,
        Err(error) => {
            diagnostics.push(ResourceDiagnostic::warning(error.to_string(), path));
            return (None, diagnostics);
        }
    };
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let parent_name = base_dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let description = match parsed.field("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) if !is_truthy(Some(other)) => None,
        Some(_) => {
            diagnostics.push(ResourceDiagnostic::warning(
                "description must be a string",
                path,
            ));
            return (None, diagnostics);
        }
    };
    match description.as_deref() {
        None => diagnostics.push(ResourceDiagnostic::warning("description is required", path)),
        Some(text) if text.trim().is_empty() => {
            diagnostics.push(ResourceDiagnostic::warning("description is required", path));
        }
        Some(text) if utf16_len(text) > MAX_DESCRIPTION_LENGTH => {
            diagnostics.push(ResourceDiagnostic::warning(
                format!(
                    "description exceeds {MAX_DESCRIPTION_LENGTH} characters ({})",
                    utf16_len(text)
                ),
                path,
            ))
        }
        Some(_) => {}
    }
    // As Pi 1.6: a name that is not a non-empty string (`name: 123`) gives way to the folder's.
    let name = match parsed.field("name") {
        Some(Value::String(text)) if !text.is_empty() => text.clone(),
        _ => parent_name,
    };
    for message in validate_name(&name) {
        diagnostics.push(ResourceDiagnostic::warning(message, path));
    }
    let Some(description) = description.filter(|text| !text.trim().is_empty()) else {
        return (None, diagnostics);
    };
    let skill = Skill {
        name,
        description,
        file_path: path.to_path_buf(),
        base_dir,
        disable_model_invocation: parsed.field("disable-model-invocation")
            == Some(&Value::Bool(true)),
        metadata: None,
    };
    (Some(skill), diagnostics)
}

/// Loads skills from explicit paths: each path tilde-expanded and resolved against `cwd`;
/// a directory is scanned, a `.md` file loaded, anything else or a missing path is a
/// warning. Collisions: the first skill of a name wins; the same file reached twice
/// (e.g. through a symlink) is skipped silently.
pub fn load_skills(paths: &[PathBuf], cwd: &Path, home: &Path) -> SkillSet {
    let mut set = SkillSet::default();
    let mut collisions = Vec::new();
    let mut seen_files = HashSet::new();
    for raw in paths {
        let path = resolve_against(cwd, &expand_tilde_loose(&raw.to_string_lossy(), home));
        let files = match entry_type(&path) {
            None => {
                set.diagnostics.push(ResourceDiagnostic::warning(
                    "skill path does not exist",
                    &path,
                ));
                continue;
            }
            Some(EntryType::Directory) => collect_skill_entries(&path, SkillScanMode::Pi),
            Some(EntryType::File)
                if path.extension().is_some_and(|extension| extension == "md") =>
            {
                vec![path.clone()]
            }
            Some(EntryType::File | EntryType::Other) => {
                set.diagnostics.push(ResourceDiagnostic::warning(
                    "skill path is not a markdown file",
                    &path,
                ));
                continue;
            }
        };
        for file in files {
            let (skill, diagnostics) = load_skill_file(&file);
            set.diagnostics.extend(diagnostics);
            let Some(skill) = skill else {
                continue;
            };
            if !seen_files.insert(canonical_or_raw(&file)) {
                continue;
            }
            match set
                .skills
                .iter()
                .find(|existing| existing.name == skill.name)
            {
                Some(winner) => collisions.push(ResourceDiagnostic::Collision {
                    kind: CollisionKind::Skill,
                    name: skill.name.clone(),
                    winner_path: winner.file_path.clone(),
                    loser_path: skill.file_path.clone(),
                }),
                None => set.skills.push(skill),
            }
        }
    }
    set.diagnostics.extend(collisions);
    set
}

fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The system-prompt block listing the skills the model may use; empty when every skill
/// is hidden.
pub fn format_skills_for_prompt(skills: &[Skill]) -> String {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|skill| !skill.disable_model_invocation)
        .collect();
    if visible.is_empty() {
        return String::new();
    }
    let mut lines = vec![
        "\n\nThe following skills provide specialized instructions for specific tasks.".to_owned(),
        "Use the read tool to load a skill's file when the task matches its description.".to_owned(),
        "Resolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls.".to_owned(),
        String::new(),
        "<available_skills>".to_owned(),
    ];
    for skill in visible {
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&skill.description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&skill.file_path.to_string_lossy())
        ));
        lines.push("  </skill>".to_owned());
    }
    lines.push("</available_skills>".to_owned());
    lines.join("\n")
}

/// Expands `/skill:<name> [args]`. `Ok(None)` when the input is not a skill command or
/// names no loaded skill; an error when the skill file cannot be read.
pub fn expand_skill_command(input: &str, skills: &[Skill]) -> std::io::Result<Option<String>> {
    let Some(rest) = input.strip_prefix("/skill:") else {
        return Ok(None);
    };
    let (name, args) = match rest.split_once(' ') {
        Some((name, args)) => (name, args.trim()),
        None => (rest, ""),
    };
    let Some(skill) = skills.iter().find(|skill| skill.name == name) else {
        return Ok(None);
    };
    let body = strip_frontmatter(
        &ctxkit_jail::read_in_folder(&skill.file_path, ctxkit_jail::MAX_RESOURCE_BYTES)
            .map_err(std::io::Error::other)?,
    );
    let mut expanded = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    if !args.is_empty() {
        expanded.push_str("\n\n");
        expanded.push_str(args);
    }
    Ok(Some(expanded))
}
