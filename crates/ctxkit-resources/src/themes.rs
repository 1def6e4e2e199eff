//! Themes: JSON colour schemes, validated against the reference's schema so a broken theme is
//! reported precisely and skipped while the others load.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use ctxkit_packages::PathMetadata;
use ctxkit_packages::{CollisionKind, ResourceDiagnostic};
use ctxkit_packages::{EntryType, entry_type, sorted_entries};
use ctxkit_settings::resolve_against;

/// Colour tokens every theme must define.
pub const REQUIRED_COLOR_TOKENS: &[&str] = &[
    "accent",
    "border",
    "borderAccent",
    "borderMuted",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "text",
    "thinkingText",
    "selectedBg",
    "userMessageBg",
    "userMessageText",
    "customMessageBg",
    "customMessageText",
    "customMessageLabel",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "toolTitle",
    "toolOutput",
    "mdHeading",
    "mdLink",
    "mdLinkUrl",
    "mdCode",
    "mdCodeBlock",
    "mdCodeBlockBorder",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdListBullet",
    "toolDiffAdded",
    "toolDiffRemoved",
    "toolDiffContext",
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
    "thinkingOff",
    "thinkingMinimal",
    "thinkingLow",
    "thinkingMedium",
    "thinkingHigh",
    "thinkingXhigh",
    "bashMode",
];

/// A loaded, valid theme.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// The theme's `name`.
    pub name: String,
    /// The file.
    pub file_path: PathBuf,
    /// The whole JSON document.
    pub json: Value,
    /// Provenance, filled in by the resource loader.
    pub metadata: Option<PathMetadata>,
}

/// Themes and diagnostics of one load.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThemeSet {
    /// Accepted themes, first of each name.
    pub themes: Vec<Theme>,
    /// Load failures and collisions.
    pub diagnostics: Vec<ResourceDiagnostic>,
}

fn is_color_value(value: &Value) -> bool {
    value.is_string() || value.as_u64().is_some_and(|index| index <= 255)
}

/// Validates a theme document; the error text lists missing colour tokens (sorted) and other
/// problems on one line.
pub fn validate_theme(label: &str, json: &Value) -> Result<(), String> {
    let mut problems = Vec::new();
    let Some(object) = json.as_object() else {
        return Err(format!("Invalid theme \"{label}\": must be an object"));
    };
    let missing: Vec<&str> = ["name", "colors"]
        .into_iter()
        .filter(|key| !object.contains_key(*key))
        .collect();
    if !missing.is_empty() {
        problems.push(format!(
            "must have required properties {}",
            missing.join(", ")
        ));
    }
    if object.get("name").is_some_and(|name| !name.is_string()) {
        problems.push("/name: must be string".to_owned());
    }
    if let Some(schema) = object.get("$schema").filter(|schema| !schema.is_string()) {
        problems.push(format!("/$schema: must be string, found {schema}"));
    }
    match object.get("colors") {
        Some(Value::Object(colors)) => {
            let mut missing_tokens: Vec<&str> = REQUIRED_COLOR_TOKENS
                .iter()
                .copied()
                .filter(|token| !colors.contains_key(*token))
                .collect();
            missing_tokens.sort_unstable();
            if !missing_tokens.is_empty() {
                problems.push(format!(
                    "missing required color tokens: {}",
                    missing_tokens.join(", ")
                ));
            }
            for (key, value) in colors {
                if !is_color_value(value) {
                    problems.push(format!(
                        "/colors/{key}: must be a string or an integer 0-255"
                    ));
                }
            }
        }
        Some(_) => problems.push("/colors: must be object".to_owned()),
        None => {}
    }
    for (key, nested) in [
        ("vars", object.get("vars")),
        ("export", object.get("export")),
    ] {
        match nested {
            Some(Value::Object(map)) => check_color_map(key, map, &mut problems),
            Some(_) => problems.push(format!("/{key}: must be object")),
            None => {}
        }
    }
    if problems.is_empty()
        && let Err(problem) = crate::theme_colors::theme_colors(json)
    {
        problems.push(problem);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "Invalid theme \"{label}\": {}",
            problems.join("; ")
        ))
    }
}

fn check_color_map(key: &str, map: &Map<String, Value>, problems: &mut Vec<String>) {
    for (name, value) in map {
        if !is_color_value(value) {
            problems.push(format!(
                "/{key}/{name}: must be a string or an integer 0-255"
            ));
        }
    }
}

/// Loads one theme file.
pub fn load_theme_file(path: &Path) -> Result<Theme, String> {
    let label = path.display().to_string();
    let text = ctxkit_jail::read_in_folder(path, ctxkit_jail::MAX_RESOURCE_BYTES)
        .map_err(|error| format!("Failed to read theme {label}: {error}"))?;
    let json: Value = serde_json::from_str(&text)
        .map_err(|error| format!("Failed to parse theme {label}: {error}"))?;
    validate_theme(&label, &json)?;
    let name = json
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("unnamed")
        .to_owned();
    Ok(Theme {
        name,
        file_path: path.to_path_buf(),
        json,
        metadata: None,
    })
}

/// Loads themes from explicit paths and de-duplicates them by name (first wins).
pub fn load_themes(paths: &[PathBuf], cwd: &Path) -> ThemeSet {
    let mut set = ThemeSet::default();
    for raw in paths {
        let path = resolve_against(cwd, raw);
        let files: Vec<PathBuf> = match entry_type(&path) {
            None => {
                set.diagnostics.push(ResourceDiagnostic::warning(
                    "theme path does not exist",
                    &path,
                ));
                continue;
            }
            Some(EntryType::Directory) => sorted_entries(&path)
                .into_iter()
                .filter(|(name, file)| {
                    name.ends_with(".json") && entry_type(file) == Some(EntryType::File)
                })
                .map(|(_, file)| file)
                .collect(),
            Some(EntryType::File) if path.to_string_lossy().ends_with(".json") => vec![path],
            Some(EntryType::File | EntryType::Other) => {
                set.diagnostics.push(ResourceDiagnostic::warning(
                    "theme path is not a json file",
                    &path,
                ));
                continue;
            }
        };
        for file in files {
            match load_theme_file(&file) {
                Ok(theme) => match set
                    .themes
                    .iter()
                    .find(|existing| existing.name == theme.name)
                {
                    Some(winner) => set.diagnostics.push(ResourceDiagnostic::Collision {
                        kind: CollisionKind::Theme,
                        name: theme.name.clone(),
                        winner_path: winner.file_path.clone(),
                        loser_path: theme.file_path.clone(),
                    }),
                    None => set.themes.push(theme),
                },
                Err(message) => set
                    .diagnostics
                    .push(ResourceDiagnostic::warning(message, &file)),
            }
        }
    }
    set
}
